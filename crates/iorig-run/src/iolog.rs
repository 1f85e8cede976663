//! The per-I/O outputs of a run, written by a thread of their own from the
//! records the workers hand over ([`iorig_engine::iolog`]):
//!
//! - `--lat-log FILE`: every counted I/O as one CSV row, in the order the
//!   workers completed them;
//! - `--trace-out FILE`: the same I/Os as an iorig block trace
//!   ([`iorig_trace::own`]): issue time, latency from issue to completion,
//!   offset, size, op and target, sorted into issue order in bounded memory,
//!   so `iorig trace analyse` reads what iorig itself asked of the storage;
//! - a trace replay's issue timing ([`IssueTiming`]): how late after its
//!   scheduled time each I/O was handed to the kernel.
//!
//! The files are written beside their destinations and put in place when the
//! run ends, also when it failed or was interrupted, so what was recorded is
//! kept.

use crate::RunError;
use crossbeam_channel::RecvTimeoutError;
use iorig_engine::iolog::{IoRecord, IoRecordSender, CHANNEL_CHUNKS};
use iorig_engine::OpKind;
use iorig_outfile::AtomicFile;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The CSV header: the columns of every row.
pub const HEADER: &str =
    "start_ns,submit_ns,complete_ns,lat_ns,op,target,offset_bytes,size_bytes,worker,warmup\n";

/// Bytes a row takes, about (for the size warning): ~60 with nanosecond
/// times of a run of minutes.
pub const ROW_BYTES_ABOUT: u64 = 64;

/// What the log holds once written.
#[derive(Debug, Clone)]
pub struct IoLogTotals {
    pub records: u64,
    pub bytes: u64,
    /// When asked for ([`IoLogPaths::timing`]).
    pub timing: Option<IssueTiming>,
}

/// How late after their scheduled time the I/Os were issued (submission
/// minus scheduled start; an I/O is never issued early).
#[derive(Debug, Clone, Default)]
pub struct IssueTiming {
    pub hist: iorig_stats::LatencyHistogram,
    pub over_20us: u64,
    pub over_1ms: u64,
}

impl IssueTiming {
    fn record(&mut self, r: &IoRecord) {
        let late = r.submit_ns.saturating_sub(r.start_ns);
        self.hist.record(late);
        self.over_20us += u64::from(late > 20_000);
        self.over_1ms += u64::from(late > 1_000_000);
    }
}

/// Where a run's per-I/O records go.
#[derive(Debug, Default, Clone)]
pub struct IoLogPaths {
    /// `--lat-log`: CSV rows.
    pub csv: Option<PathBuf>,
    /// `--trace-out`: an iorig block trace.
    pub trace: Option<PathBuf>,
    /// A trace replay's issue timing. The writer then yields the CPU to the
    /// replay's worker, whose timing it measures.
    pub timing: bool,
}

impl IoLogPaths {
    pub fn any(&self) -> bool {
        self.csv.is_some() || self.trace.is_some() || self.timing
    }
}

/// Lowers the calling thread's priority: a replay's helper threads yield
/// to its worker, which a preemption on a small machine makes issue late.
pub(crate) fn lower_priority() {
    // On Linux PRIO_PROCESS of "this process" (no pid) names the calling
    // thread only. Failing leaves the thread as it was, which is harmless.
    let _ = rustix::process::setpriority_process(None, 10);
}

/// Records the trace writer sorts in memory before it spills a sorted run
/// to disk (~48 bytes each).
const TRACE_RUN_RECORDS: usize = 1 << 20;

/// The writer thread and the files it writes.
pub struct IoLogWriter {
    paths: IoLogPaths,
    handle: JoinHandle<Result<IoLogTotals, String>>,
    /// Set when the run has ended: the writer takes what is queued and
    /// stops, without waiting for a worker the run abandoned (stuck in a
    /// system call on a hung device), which still holds a sender.
    closing: Arc<AtomicBool>,
}

/// Creates the outputs' files and starts their writer; the returned sender
/// goes to the engine ([`iorig_engine::run::Prepared::io_records`]). I/Os
/// that completed before `warmup_ns` are marked `warmup` in the CSV; the
/// trace names the targets `targets` (by index).
pub fn start(
    paths: &IoLogPaths,
    warmup_ns: u64,
    targets: Vec<String>,
) -> Result<(IoRecordSender, IoLogWriter), RunError> {
    let csv = match &paths.csv {
        Some(path) => Some(AtomicFile::create("--lat-log", path).map_err(|e| {
            if e.is_usage() {
                RunError::usage(e.to_string())
            } else {
                RunError::runtime(format!("--lat-log: {e}"))
            }
        })?),
        None => None,
    };
    let trace = paths
        .trace
        .as_ref()
        .map(|p| iorig_trace::own::SortingWriter::new(p, targets, TRACE_RUN_RECORDS));
    let (tx, rx) = crossbeam_channel::bounded::<Vec<IoRecord>>(CHANNEL_CHUNKS);
    let closing = Arc::new(AtomicBool::new(false));
    let seen = closing.clone();
    let timing = paths.timing.then(IssueTiming::default);
    let handle = std::thread::Builder::new()
        .name("iorig-iolog".into())
        .spawn(move || {
            if timing.is_some() {
                lower_priority();
            }
            write_all(csv, trace, timing, rx, warmup_ns, &seen)
        })
        .map_err(|e| RunError::runtime(format!("starting the per-I/O writer: {e}")))?;
    Ok((
        tx,
        IoLogWriter {
            paths: paths.clone(),
            handle,
            closing,
        },
    ))
}

impl IoLogWriter {
    /// Waits for the last records (once every sender is dropped: the run
    /// ended) and puts the files in place.
    pub fn finish(self) -> Result<IoLogTotals, RunError> {
        self.closing.store(true, Ordering::Release);
        let names: Vec<String> = [
            self.paths
                .csv
                .as_ref()
                .map(|p| format!("--lat-log {}", p.display())),
            self.paths
                .trace
                .as_ref()
                .map(|p| format!("--trace-out {}", p.display())),
            self.paths.timing.then(|| "replay timing".to_string()),
        ]
        .into_iter()
        .flatten()
        .collect();
        let p = names.join(", ");
        match self.handle.join() {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(e)) => Err(RunError::runtime(format!("{p}: {e}"))),
            Err(_) => Err(RunError::runtime(format!(
                "{p}: the writer thread panicked"
            ))),
        }
    }
}

/// How often the writer looks whether the run has ended.
const CLOSING_POLL: Duration = Duration::from_millis(50);

fn write_all(
    csv: Option<AtomicFile>,
    mut trace: Option<iorig_trace::own::SortingWriter>,
    timing: Option<IssueTiming>,
    rx: crossbeam_channel::Receiver<Vec<IoRecord>>,
    warmup_ns: u64,
    closing: &AtomicBool,
) -> Result<IoLogTotals, String> {
    let mut out = csv.map(|f| BufWriter::with_capacity(1 << 20, f));
    let mut totals = IoLogTotals {
        records: 0,
        bytes: if out.is_some() {
            HEADER.len() as u64
        } else {
            0
        },
        timing,
    };
    let mut first_error = match out.as_mut() {
        Some(o) => o.write_all(HEADER.as_bytes()).err(),
        None => None,
    };
    let mut line = Vec::with_capacity(128);
    // Drain every chunk even after a write error, so no worker waits on a
    // full channel for a reader that stopped. The workers that finished
    // dropped their senders before `closing` is set, so what they logged
    // is queued by then.
    loop {
        let chunk = match rx.recv_timeout(CLOSING_POLL) {
            Ok(c) => c,
            Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) if closing.load(Ordering::Acquire) => {
                match rx.try_recv() {
                    Ok(c) => c,
                    Err(_) => break,
                }
            }
            Err(RecvTimeoutError::Timeout) => continue,
        };
        if first_error.is_some() {
            continue;
        }
        for r in &chunk {
            if let Some(t) = totals.timing.as_mut() {
                t.record(r);
            }
            if let Some(o) = out.as_mut() {
                line.clear();
                row(&mut line, r, warmup_ns);
                totals.bytes += line.len() as u64;
                if let Err(e) = o.write_all(&line) {
                    first_error = Some(e);
                    break;
                }
            }
            if let Some(t) = trace.as_mut() {
                if let Err(e) = t.push(trace_record(r)) {
                    first_error = Some(e);
                    break;
                }
            }
        }
        totals.records += chunk.len() as u64;
    }
    if let Some(e) = first_error {
        return Err(e.to_string());
    }
    if let Some(t) = trace {
        t.finish().map_err(|e| e.to_string())?;
    }
    if let Some(out) = out {
        let file = out.into_inner().map_err(|e| e.error().to_string())?;
        file.commit().map_err(|e| e.to_string())?;
    }
    Ok(totals)
}

/// An I/O as a trace record: issued when first handed to the kernel, its
/// latency the device's (to completion), not the schedule's.
fn trace_record(r: &IoRecord) -> iorig_trace::Record {
    iorig_trace::Record {
        t_ns: r.submit_ns,
        op: match r.op {
            OpKind::Read => iorig_trace::Op::Read,
            OpKind::Write => iorig_trace::Op::Write,
            OpKind::Trim => iorig_trace::Op::Trim,
        },
        device: r.target,
        offset_bytes: r.offset_bytes,
        size_bytes: u64::from(r.size_bytes),
        latency_ns: Some(r.complete_ns.saturating_sub(r.submit_ns)),
    }
}

/// One CSV row; integers through `itoa`, since a run logs millions of them.
fn row(line: &mut Vec<u8>, r: &IoRecord, warmup_ns: u64) {
    let mut b = itoa::Buffer::new();
    for v in [r.start_ns, r.submit_ns, r.complete_ns, r.lat_ns()] {
        line.extend_from_slice(b.format(v).as_bytes());
        line.push(b',');
    }
    line.extend_from_slice(match r.op {
        OpKind::Read => b"read,",
        OpKind::Write => b"write,",
        OpKind::Trim => b"trim,",
    });
    line.extend_from_slice(b.format(r.target).as_bytes());
    line.push(b',');
    line.extend_from_slice(b.format(r.offset_bytes).as_bytes());
    line.push(b',');
    line.extend_from_slice(b.format(r.size_bytes).as_bytes());
    line.push(b',');
    line.extend_from_slice(b.format(r.worker).as_bytes());
    line.extend_from_slice(if r.complete_ns < warmup_ns {
        b",1\n"
    } else {
        b",0\n"
    });
}

/// Runs longer than this get a warning about the per-I/O log's size.
const LAT_LOG_SHORT_S: u64 = 60;

/// The size warning for `--lat-log` on a run that is not short: how fast
/// the file grows at a rate a fast device reaches.
pub fn size_warning(w: &iorig_spec::Workload) -> Option<String> {
    let secs = (w.time + w.warmup).as_secs();
    if secs <= LAT_LOG_SHORT_S {
        return None;
    }
    let iops: u64 = match w.rate {
        iorig_spec::Rate::Iops(r) => r as u64,
        iorig_spec::Rate::Max => 100_000,
    };
    let per_min = iops * 60 * ROW_BYTES_ABOUT;
    Some(format!(
        "--lat-log writes a row per I/O (~{} bytes): at {} IOPS that is {} a minute, {} for this {} s run; it is meant for short runs (a minute or less)",
        ROW_BYTES_ABOUT,
        iops,
        iorig_spec::format_bytes(per_min),
        iorig_spec::format_bytes(per_min / 60 * secs),
        secs
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_has_every_column_of_the_header() {
        let r = IoRecord {
            start_ns: 10,
            submit_ns: 12,
            complete_ns: 110,
            offset_bytes: 1 << 20,
            size_bytes: 4096,
            target: 1,
            worker: 3,
            op: OpKind::Write,
        };
        let mut line = Vec::new();
        row(&mut line, &r, 100);
        assert_eq!(
            String::from_utf8(line.clone()).ok().as_deref(),
            Some("10,12,110,100,write,1,1048576,4096,3,0\n")
        );
        line.clear();
        row(&mut line, &r, 200);
        assert!(line.ends_with(b",1\n"));
        assert_eq!(
            HEADER.trim_end().split(',').count(),
            String::from_utf8_lossy(&line).trim_end().split(',').count()
        );
    }
}
