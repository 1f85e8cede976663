//! The vdbench-style interval table and the summary block.

use iorig_result::live::IntervalSample;
use iorig_spec::FsOp;
use iorig_stats::{CpuUsage, IntervalStats};

pub use iorig_spec::format_bytes as human_bytes;

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

pub const HEADER: [&str; 2] = [
    "    time  interval       IOPS     MB/s  bytes/io  read%   mean ms    max ms stddev ms    p99 ms  cpu%  cpu%",
    "                                                                                                   u+s   sys",
];

/// One row: `label` is the interval number or "avg".
pub fn row(
    clock: &str,
    label: &str,
    stats: &IntervalStats,
    duration_s: f64,
    cpu: CpuUsage,
) -> String {
    let total = stats.total();
    let ops = total.ops;
    let iops = if duration_s > 0.0 {
        ops as f64 / duration_s
    } else {
        0.0
    };
    let mbs = if duration_s > 0.0 {
        total.bytes as f64 / duration_s / 1e6
    } else {
        0.0
    };
    let bytes_io = total.bytes.checked_div(ops).unwrap_or(0);
    let read_pct = if ops > 0 {
        stats.read.ops as f64 * 100.0 / ops as f64
    } else {
        0.0
    };
    let lat = total.lat.summary();
    format!(
        "{clock:>8} {label:>9} {iops:>10.1} {mbs:>8.2} {bytes_io:>9} {read_pct:>6.1} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>5.1} {:>5.1}",
        ms(lat.mean),
        ms(lat.max),
        ms(lat.stddev),
        ms(lat.p99),
        cpu.usr_pct + cpu.sys_pct,
        cpu.sys_pct
    )
}

/// `planned_s`: the interval's planned length; a row that lasted less (the
/// step stopped inside it, or warmup ended there) is marked `*`, see
/// [`partial_note`].
pub fn interval_row(sample: &IntervalSample, clock: &str, planned_s: f64) -> String {
    let label = format!(
        "{}{}{}",
        if sample.warmup { "w" } else { "" },
        sample.index + 1,
        if is_partial(sample, planned_s) {
            "*"
        } else {
            ""
        }
    );
    row(clock, &label, &sample.stats, sample.duration_s, sample.cpu)
}

/// Whether `sample` lasted less than its planned length (by more than the
/// clock's jitter: 1 %).
pub fn is_partial(sample: &IntervalSample, planned_s: f64) -> bool {
    planned_s > 0.0 && sample.duration_s < planned_s * 0.99
}

/// The line under a table that had a partial row: what `*` means.
pub fn partial_note(label: &str, duration_s: f64, planned_s: f64) -> String {
    format!(
        "  * interval {label} lasted {duration_s:.2}s of {planned_s:.0}s: the step ended inside it; its rates are over its own {duration_s:.2}s, and the avg counts it for that long"
    )
}

/// A file-system workload's rows of one interval (or of the average), one
/// per operation kind counted, in the table's columns: the kind in the
/// interval column, no read share. Empty for a block workload.
pub fn op_rows(stats: &IntervalStats, duration_s: f64) -> Vec<String> {
    if stats.meta.is_empty() {
        return Vec::new();
    }
    let per_s = |v: u64| {
        if duration_s > 0.0 {
            v as f64 / duration_s
        } else {
            0.0
        }
    };
    FsOp::ALL
        .iter()
        .filter_map(|op| stats.fs_op(*op).map(|s| (op, s)))
        .map(|(op, s)| {
            let lat = s.lat.summary();
            format!(
                "{:>8} {:>9} {:>10.1} {:>8.2} {:>9} {:>6} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
                "",
                op.as_str(),
                per_s(s.ops),
                per_s(s.bytes) / 1e6,
                s.bytes.checked_div(s.ops).unwrap_or(0),
                "-",
                ms(lat.mean),
                ms(lat.max),
                ms(lat.stddev),
                ms(lat.p99),
            )
        })
        .collect()
}

/// The live status line.
pub fn live_line(sample: &IntervalSample, total_s: f64) -> String {
    let t = sample.stats.total();
    let lat = t.lat.summary();
    format!(
        "[{:>6.1}s/{:.0}s]{} IOPS {:>10.0}  MB/s {:>8.1}  mean {:.3} ms  p99 {:.3} ms",
        sample.t_s,
        total_s,
        if sample.warmup { " warmup" } else { "" },
        t.ops as f64 / sample.duration_s.max(1e-9),
        t.bytes as f64 / sample.duration_s.max(1e-9) / 1e6,
        ms(lat.mean),
        ms(lat.p99)
    )
}

/// The summary block: per op, from merged histograms.
pub fn summary_lines(
    stats: &IntervalStats,
    duration_s: f64,
    cpu: CpuUsage,
    errors: u64,
) -> Vec<String> {
    let mut out = Vec::new();
    out.push(format!(
        "summary over {} measured: cpu usr {:.1}% sys {:.1}%, errors {errors}",
        human_secs(duration_s),
        cpu.usr_pct,
        cpu.sys_pct
    ));
    let total = stats.total();
    let mut kinds: Vec<(&str, &iorig_stats::OpStats)> = vec![
        ("read", &stats.read),
        ("write", &stats.write),
        ("trim", &stats.trim),
    ];
    // A file-system workload lists every kind of operation it counted.
    let fs = !stats.meta.is_empty();
    if fs {
        kinds.extend(
            FsOp::ALL
                .iter()
                .filter(|op| !matches!(op, FsOp::Read | FsOp::Write))
                .filter_map(|op| stats.fs_op(*op).map(|s| (op.as_str(), s))),
        );
    }
    kinds.push(("total", &total));
    // A block workload's periodic syncs, apart from the total they are
    // not part of.
    if !fs && stats.sync.ops > 0 {
        kinds.push(("sync", &stats.sync));
    }
    let (width, rate) = if fs { (7, "ops/s") } else { (5, "IOPS") };
    for (name, op) in kinds {
        if op.ops == 0 && name != "total" {
            continue;
        }
        let s = op.summary(duration_s);
        let l = s.lat_ns;
        out.push(format!(
            "  {name:<width$} {rate} {:>10.1}  MB/s {:>8.2}  lat ms: mean {:.3} p50 {:.3} p90 {:.3} p99 {:.3} p99.9 {:.3} p99.99 {:.3} max {:.3}",
            s.iops,
            s.bw_bytes_per_s / 1e6,
            ms(l.mean),
            ms(l.p50),
            ms(l.p90),
            ms(l.p99),
            ms(l.p99_9),
            ms(l.p99_99),
            ms(l.max)
        ));
        if let Some(sv) = s.service_lat_ns {
            out.push(format!(
                "        service (from submission) ms: mean {:.3} p50 {:.3} p99 {:.3} max {:.3}",
                ms(sv.mean),
                ms(sv.p50),
                ms(sv.p99),
                ms(sv.max)
            ));
        }
    }
    if !stats.issue_lag.is_empty() {
        out.push(issue_lag_line(&stats.issue_lag.summary()));
    }
    out
}

/// How late a paced step's I/Os went out: iorig's own share of the latency
/// above, which counts from the schedule.
pub fn issue_lag_line(l: &iorig_stats::LatSummary) -> String {
    let us = |ns: u64| ns as f64 / 1000.0;
    format!(
        "  issue lag (issued after their time) µs: p50 {:.1} p99 {:.1} p99.9 {:.1} max {:.1}",
        us(l.p50),
        us(l.p99),
        us(l.p99_9),
        us(l.max)
    )
}

/// IOPS, MB/s, mean and p99 latency (ms) of a stored step summary (the
/// `summary` object of iorig.result/1), or dashes for a step that has none.
pub fn summary_cells(summary: Option<&iorig_result::Summary>) -> [String; 4] {
    match summary {
        Some(s) => {
            let t = &s.total;
            [
                format!("{:.1}", t.iops),
                format!("{:.2}", t.bw_bytes_per_s / 1e6),
                format!("{:.3}", t.lat_ns.mean as f64 / 1e6),
                format!("{:.3}", t.lat_ns.p99 as f64 / 1e6),
            ]
        }
        None => ["-".into(), "-".into(), "-".into(), "-".into()],
    }
}

/// The block devices under the step's targets over its measured intervals,
/// as fio's "Disk stats" closes its output: the busiest device's
/// utilisation, the mean completion time of reads and writes and the
/// queue size (summed over the devices), each weighted by interval length.
/// None when no target is on a block device iorig could read.
pub fn device_line(names: &[String], usage: &[(f64, iorig_stats::DeviceUsage)]) -> Option<String> {
    let total_s: f64 = usage.iter().map(|(s, _)| s).sum();
    if names.is_empty() || usage.is_empty() || total_s <= 0.0 {
        return None;
    }
    let mean = |f: &dyn Fn(&iorig_stats::DeviceUsage) -> f64| {
        usage.iter().map(|(s, u)| s * f(u)).sum::<f64>() / total_s
    };
    // An await is the mean over the intervals that had such I/O.
    let await_ms = |f: &dyn Fn(&iorig_stats::DeviceUsage) -> u64| {
        let with: Vec<_> = usage.iter().filter(|(_, u)| f(u) > 0).collect();
        let s: f64 = with.iter().map(|(s, _)| s).sum();
        (s > 0.0).then(|| with.iter().map(|(d, u)| d * f(u) as f64).sum::<f64>() / s / 1e6)
    };
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3} ms"));
    Some(format!(
        "  device {}: util {:.1} %, await read {} write {}, queue {:.1} (mean of {} measured interval(s))",
        names.join("+"),
        mean(&|u| u.util_pct),
        ms(await_ms(&|u| u.read_await_ns)),
        ms(await_ms(&|u| u.write_await_ns)),
        mean(&|u| u.queue_depth),
        usage.len()
    ))
}

/// A length of time as read at a glance, precise where it is short: a
/// fast fill's 32 ms is not "0.0 s".
pub fn human_secs(s: f64) -> String {
    if s < 0.01 {
        format!("{:.1} ms", s * 1e3)
    } else if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else if s < 10.0 {
        format!("{s:.2} s")
    } else {
        format!("{s:.1} s")
    }
}

/// HH:MM:SS in UTC, enough to line up with other logs.
pub fn wall_clock() -> String {
    let t = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    t.get(11..19).unwrap_or("").to_string()
}
