//! A stored run as vdbench writes its results: `flatfile.html` (despite
//! the name, text: `*` comment lines, one line of column names, one row per
//! measured interval) and `summary.html` (each run's intervals and its
//! average, in vdbench's columns), so vdbench parsers and dashboards keep
//! working. Response times are in ms and MB/sec in 1024² bytes, as vdbench
//! writes them.

use super::RunData;
use crate::ReportError;
use iorig_result::Op;
use iorig_store::{IntervalRow, RunId, Store};
use std::fmt::Write as _;

/// The columns of the flatfile, in vdbench's names.
pub const FLAT_COLUMNS: [&str; 22] = [
    "tod",
    "Run",
    "Interval",
    "reqrate",
    "rate",
    "MB/sec",
    "bytes/io",
    "read%",
    "resp",
    "read_resp",
    "write_resp",
    "resp_max",
    "read_max",
    "write_max",
    "resp_std",
    "xfersize",
    "threads",
    "rdpct",
    "seekpct",
    "queue_depth",
    "cpu_used",
    "cpu_user",
];

/// `flatfile.html` and `summary.html` of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VdbenchExport {
    pub flatfile: String,
    pub summary: String,
}

/// One interval's figures in vdbench's terms.
struct Row {
    tod: String,
    interval: String,
    reqrate: f64,
    rate: f64,
    mb: f64,
    bytes_io: f64,
    read_pct: f64,
    resp: f64,
    read_resp: f64,
    write_resp: f64,
    resp_max: f64,
    read_max: f64,
    write_max: f64,
    resp_std: f64,
    queue_depth: f64,
    cpu_used: f64,
    cpu_user: f64,
    cpu_sys: f64,
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// A wall-clock time `t_s` after an RFC 3339 start, as vdbench's
/// `HH:MM:SS.mmm`.
fn tod(started: Option<&str>, t_s: f64) -> String {
    let base = started
        .and_then(|s| humantime::parse_rfc3339_weak(s).ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64());
    let t = base + t_s;
    let day = t.rem_euclid(86_400.0);
    let h = (day / 3600.0) as u64;
    let m = ((day % 3600.0) / 60.0) as u64;
    let s = day % 60.0;
    format!("{h:02}:{m:02}:{s:06.3}")
}

/// Groups a step's interval rows by interval: (read, write, total).
fn by_interval(
    rows: &[IntervalRow],
) -> Vec<(Option<&IntervalRow>, Option<&IntervalRow>, &IntervalRow)> {
    let mut out = Vec::new();
    for t in rows.iter().filter(|r| r.op == Op::Total) {
        let find = |op: Op| rows.iter().find(|r| r.seq == t.seq && r.op == op);
        out.push((find(Op::Read), find(Op::Write), t));
    }
    out
}

/// What one row is made from.
struct RowIn<'a> {
    started: Option<&'a str>,
    interval: String,
    reqrate: Option<f64>,
    read: Option<&'a iorig_result::OpSummary>,
    write: Option<&'a iorig_result::OpSummary>,
    total: &'a iorig_result::OpSummary,
    t_s: f64,
    queue_depth: Option<f64>,
    /// User and system CPU %.
    cpu: (f64, f64),
}

fn row_of(i: RowIn<'_>) -> Row {
    let total = i.total;
    let ops = total.ops.max(1) as f64;
    let read_ops = i.read.map_or(0, |r| r.ops) as f64;
    let rate = total.iops;
    let resp = ms(total.lat_ns.mean);
    Row {
        tod: tod(i.started, i.t_s),
        interval: i.interval,
        reqrate: i.reqrate.unwrap_or(rate),
        rate,
        mb: total.bw_bytes_per_s / 1_048_576.0,
        bytes_io: total.bytes as f64 / ops,
        read_pct: read_ops * 100.0 / ops,
        resp,
        read_resp: i.read.map_or(0.0, |r| ms(r.lat_ns.mean)),
        write_resp: i.write.map_or(0.0, |w| ms(w.lat_ns.mean)),
        resp_max: ms(total.lat_ns.max),
        read_max: i.read.map_or(0.0, |r| ms(r.lat_ns.max)),
        write_max: i.write.map_or(0.0, |w| ms(w.lat_ns.max)),
        resp_std: ms(total.lat_ns.stddev),
        // The device's own queue when sampled; else Little's law.
        queue_depth: i.queue_depth.unwrap_or(rate * resp / 1e3),
        cpu_used: i.cpu.0 + i.cpu.1,
        cpu_user: i.cpu.0,
        cpu_sys: i.cpu.1,
    }
}

/// The run's two vdbench files.
pub fn export_vdbench(store: &Store, run: RunId) -> Result<VdbenchExport, ReportError> {
    let data = RunData::load(store, run)?;
    let mut flat = String::new();
    let _ = writeln!(
        flat,
        "* vdbench-style flatfile written by iorig {} for run {} ({})",
        env!("CARGO_PKG_VERSION"),
        run.0,
        data.detail.run.kind
    );
    let _ = writeln!(
        flat,
        "* One row per measured interval; resp in ms; MB/sec in 1024**2 bytes."
    );
    let _ = writeln!(flat, "{}", FLAT_COLUMNS.join(" "));
    let mut sum = String::new();
    let _ = writeln!(
        sum,
        "<html><head><title>iorig run {}: vdbench-style summary</title></head><body><pre>",
        run.0
    );
    for s in &data.steps {
        let rows = &store.interval_range_figures(s.step.id, "", 0..u64::MAX)?;
        let p = s.step.params.as_ref();
        let name = s.step.name.replace(char::is_whitespace, "_");
        let started = s.step.started.as_deref();
        let reqrate = p.and_then(|p| p.rate_iops);
        // A step of several jobs: their shared keys say little; its
        // measured mix says what ran.
        let measured_mix = s
            .step
            .summary
            .as_ref()
            .and_then(|x| x.io())
            .filter(|_| !s.jobs.is_empty())
            .map(|io| {
                let ops = io.total.ops.max(1) as f64;
                (
                    io.total.bytes as f64 / ops,
                    io.read.ops as f64 * 100.0 / ops,
                )
            });
        let xfer = measured_mix.map(|m| m.0).unwrap_or_else(|| {
            p.map_or(0.0, |p| {
                let total: u64 = p.bs_bytes.iter().map(|b| u64::from(b.weight)).sum();
                p.bs_bytes
                    .iter()
                    .map(|b| b.size_bytes as f64 * f64::from(b.weight))
                    .sum::<f64>()
                    / total.max(1) as f64
            })
        });
        let threads: u32 = if s.jobs.is_empty() {
            p.map_or(0, |p| p.threads)
        } else {
            s.jobs.iter().map(|j| j.workload.threads).sum()
        };
        let rdpct = measured_mix.map_or_else(
            || p.map_or(0.0, |p| p.read_pct),
            |m| (m.1 * 100.0).round() / 100.0,
        );
        let seekpct = s.jobs.first().map_or_else(
            || p.map_or(0.0, |p| p.random_pct),
            |j| j.workload.random_pct,
        );
        let _ = writeln!(
            sum,
            "\n<b>Run {name} (step {}): {}</b>",
            s.step.index + 1,
            s.step.status
        );
        let _ = writeln!(
            sum,
            "{:>12} {:>9} {:>10} {:>8} {:>7} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6} {:>5} {:>5}",
            "",
            "interval",
            "i/o",
            "MB/sec",
            "bytes",
            "read",
            "resp",
            "read",
            "write",
            "resp",
            "resp",
            "queue",
            "cpu%",
            "cpu%"
        );
        let _ = writeln!(
            sum,
            "{:>12} {:>9} {:>10} {:>8} {:>7} {:>6} {:>8} {:>8} {:>8} {:>8} {:>8} {:>6} {:>5} {:>5}",
            "",
            "",
            "rate",
            "1024**2",
            "i/o",
            "pct",
            "time",
            "resp",
            "resp",
            "max",
            "stddev",
            "depth",
            "sys+u",
            "sys"
        );
        let mut measured = 0usize;
        let mut first = None;
        // The average row's queue depth is the average of the rows' (each
        // the device's own when sampled, else Little's law), weighted by
        // their lengths: one definition for both.
        let (mut depth_sum, mut depth_s) = (0.0, 0.0);
        for (k, (r, w, t)) in by_interval(rows).into_iter().enumerate() {
            if t.warmup {
                continue;
            }
            measured += 1;
            first.get_or_insert(k + 1);
            let rs = r.map(IntervalRow::op_summary);
            let ws = w.map(IntervalRow::op_summary);
            let total = t.op_summary();
            let row = row_of(RowIn {
                started,
                interval: (k + 1).to_string(),
                reqrate,
                read: rs.as_ref(),
                write: ws.as_ref(),
                total: &total,
                t_s: t.t_s,
                queue_depth: t.device.map(|d| d.queue_depth),
                cpu: (t.cpu_usr_pct, t.cpu_sys_pct),
            });
            let _ = writeln!(
                flat,
                "{} {name} {} {:.2} {:.2} {:.2} {:.0} {:.2} {:.3} {:.3} {:.3} {:.3} {:.3} {:.3} {:.3} {xfer:.0} {threads} {rdpct} {seekpct} {:.2} {:.1} {:.1}",
                row.tod, row.interval, row.reqrate, row.rate, row.mb, row.bytes_io, row.read_pct,
                row.resp, row.read_resp, row.write_resp, row.resp_max, row.read_max, row.write_max,
                row.resp_std, row.queue_depth, row.cpu_used, row.cpu_user
            );
            depth_sum += row.queue_depth * t.duration_s;
            depth_s += t.duration_s;
            summary_line(&mut sum, &row);
        }
        // The step's measured average, from its stored summary.
        if let Some(io) = s.step.summary.as_ref().and_then(|x| x.io()) {
            let last = rows.iter().filter(|r| r.op == Op::Total).count();
            let end_t = rows
                .iter()
                .filter(|r| r.op == Op::Total)
                .map(|r| r.t_s)
                .fold(0.0, f64::max);
            let row = row_of(RowIn {
                started,
                interval: format!("avg_{}-{last}", first.unwrap_or(1)),
                reqrate,
                read: Some(&io.read),
                write: Some(&io.write),
                total: &io.total,
                t_s: end_t,
                queue_depth: (depth_s > 0.0).then(|| depth_sum / depth_s),
                cpu: (io.cpu.usr_pct, io.cpu.sys_pct),
            });
            if measured > 0 {
                summary_line(&mut sum, &row);
            }
        }
    }
    let _ = writeln!(sum, "</pre></body></html>");
    Ok(VdbenchExport {
        flatfile: flat,
        summary: sum,
    })
}

fn summary_line(out: &mut String, r: &Row) {
    let _ = writeln!(
        out,
        "{:>12} {:>9} {:>10.2} {:>8.2} {:>7.0} {:>6.2} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>8.3} {:>6.1} {:>5.1} {:>5.1}",
        r.tod, r.interval, r.rate, r.mb, r.bytes_io, r.read_pct, r.resp, r.read_resp, r.write_resp,
        r.resp_max, r.resp_std, r.queue_depth, r.cpu_used, r.cpu_sys
    );
}
