//! The CSV sinks: one row per interval of a run (docs/csv.md), and one row
//! per interval and device of a profile. Each writes rows as they complete
//! to a temp file beside its destination, put in place when the run closes
//! (`Event::Closing`); a write that fails is reported once as the sink's
//! fault.

use crate::event::{Event, Sink};
use crate::RunError;
use iorig_outfile::AtomicFile;
use iorig_profile::Figure;
use iorig_result::Interval;
use iorig_stats::OpSummary;
use std::path::{Path, PathBuf};

const OPS: [&str; 3] = ["read", "write", "total"];
const OP_FIELDS: [&str; 13] = [
    "ops",
    "bytes",
    "iops",
    "bw_bytes_per_s",
    "lat_min_ns",
    "lat_mean_ns",
    "lat_stddev_ns",
    "lat_max_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_p99_99_ns",
];

pub fn header() -> Vec<String> {
    let mut cols = vec!["t_s".to_string(), "duration_s".into(), "warmup".into()];
    for op in OPS {
        for f in OP_FIELDS {
            cols.push(format!("{op}_{f}"));
        }
    }
    for c in [
        "cpu_usr_pct",
        "cpu_sys_pct",
        "device_util_pct",
        "device_queue_depth",
        "device_read_await_ns",
        "device_write_await_ns",
        "errors",
    ] {
        cols.push(c.into());
    }
    cols
}

fn op_cells(s: &OpSummary, out: &mut Vec<String>) {
    let l = &s.lat_ns;
    out.push(s.ops.to_string());
    out.push(s.bytes.to_string());
    out.push(format!("{:.3}", s.iops));
    out.push(format!("{:.1}", s.bw_bytes_per_s));
    for v in [
        l.min, l.mean, l.stddev, l.max, l.p50, l.p90, l.p99, l.p99_9, l.p99_99,
    ] {
        out.push(v.to_string());
    }
}

pub fn row(i: &Interval) -> Vec<String> {
    let mut out = vec![
        format!("{:.3}", i.t_s),
        format!("{:.3}", i.duration_s),
        i.warmup.to_string(),
    ];
    for s in [&i.read, &i.write, &i.total] {
        op_cells(s, &mut out);
    }
    out.push(format!("{:.2}", i.cpu.usr_pct));
    out.push(format!("{:.2}", i.cpu.sys_pct));
    match &i.device {
        Some(d) => {
            out.push(format!("{:.2}", d.util_pct));
            out.push(format!("{:.3}", d.queue_depth));
            out.push(d.read_await_ns.to_string());
            out.push(d.write_await_ns.to_string());
        }
        None => out.extend(std::iter::repeat_n(String::new(), 4)),
    }
    out.push(i.errors.to_string());
    out
}

/// A `--csv` file being written: rows go to a temp file beside it, flushed
/// as they come, and the file is put in place by [`CsvFile::commit`]. The
/// first write that fails stops the file and is kept as its fault.
struct CsvFile {
    out: Option<csv::Writer<AtomicFile>>,
    path: PathBuf,
    /// Said after a fault (where the data can still be found).
    after_fault: &'static str,
    fault: Option<String>,
}

impl CsvFile {
    fn create<I, T>(path: &Path, header: I, after_fault: &'static str) -> Result<Self, RunError>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        let mut file = CsvFile {
            out: Some(csv::Writer::from_writer(AtomicFile::create("--csv", path)?)),
            path: path.to_path_buf(),
            after_fault,
            fault: None,
        };
        file.write(header);
        Ok(file)
    }

    fn write<I, T>(&mut self, record: I)
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        let Some(w) = self.out.as_mut() else { return };
        if let Err(e) = w
            .write_record(record)
            .and_then(|_| w.flush().map_err(Into::into))
        {
            self.fault = Some(format!(
                "--csv {}: {e}{}",
                self.path.display(),
                self.after_fault
            ));
            self.out = None;
        }
    }

    /// Puts the file in place (once; a file stopped by a fault is not).
    fn commit(&mut self) {
        let Some(w) = self.out.take() else { return };
        let done = w
            .into_inner()
            .map_err(|e| format!("--csv {}: {}", self.path.display(), e.error()))
            .and_then(|f| f.commit().map_err(|e| format!("--csv: {e}")));
        if let Err(e) = done {
            self.fault = Some(format!("{e}{}", self.after_fault));
        }
    }
}

/// Writes `--csv` as intervals complete.
pub struct IntervalCsv(CsvFile);

impl IntervalCsv {
    /// Creates the temp file now (the path was checked already).
    pub fn create(path: &Path) -> Result<Self, RunError> {
        CsvFile::create(path, header(), "; the intervals are in the result store").map(IntervalCsv)
    }
}

impl Sink for IntervalCsv {
    fn event(&mut self, ev: &Event<'_>) {
        match ev {
            Event::Interval { interval, .. } => self.0.write(row(interval)),
            Event::Closing => self.0.commit(),
            _ => {}
        }
    }

    fn take_fault(&mut self) -> Option<String> {
        self.0.fault.take()
    }
}

/// A profile's `--csv`: one row per interval for the total and each device.
pub struct ProfileCsv(CsvFile);

impl ProfileCsv {
    pub fn create(path: &Path) -> Result<ProfileCsv, RunError> {
        let header = ["t_s", "duration_s", "device"]
            .into_iter()
            .chain(Figure::ALL.iter().map(|f| f.name()));
        CsvFile::create(path, header, "").map(ProfileCsv)
    }
}

impl Sink for ProfileCsv {
    fn event(&mut self, ev: &Event<'_>) {
        match ev {
            Event::ProfileInterval {
                figures: i, t_s, ..
            } => {
                let rows = std::iter::once(("total", &i.total))
                    .chain(i.devices.iter().map(|(n, f)| (n.as_str(), f)));
                let duration_s = i.duration_s().to_string();
                let t = t_s.to_string();
                for (device, f) in rows {
                    let cells = Figure::ALL
                        .iter()
                        .map(|&n| f.get(n).map(|v| format!("{v}")).unwrap_or_default());
                    self.0.write(
                        [t.clone(), duration_s.clone(), device.to_owned()]
                            .into_iter()
                            .chain(cells),
                    );
                }
            }
            Event::Closing => self.0.commit(),
            _ => {}
        }
    }

    fn take_fault(&mut self) -> Option<String> {
        self.0.fault.take()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn header_has_every_column_once() {
        let cols = super::header();
        let unique: std::collections::HashSet<_> = cols.iter().collect();
        assert_eq!(cols.len(), unique.len());
        assert_eq!(cols.len(), 3 + 3 * 13 + 7);
    }
}
