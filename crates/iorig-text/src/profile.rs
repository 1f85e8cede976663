//! The profile tables: per interval and device, the summary (mean, p95,
//! peak) and the rule sets' verdicts.

use iorig_profile::rules::Evaluation;
use iorig_profile::{Figure, Figures, IntervalFigures, Profile};
use iorig_result::ProfileSummary;
use serde::Serialize;

pub fn mb(v: Option<f64>) -> String {
    v.map_or("-".into(), |b| format!("{:.2}", b / 1e6))
}
fn kib(v: Option<f64>) -> String {
    v.map_or("-".into(), |b| format!("{:.1}", b / 1024.0))
}
fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

pub fn header_line() -> String {
    format!(
        "{:>8} {:<12} {:>9} {:>9} {:>8} {:>8} {:>7} {:>7} {:>6} {:>6} {:>8} {:>8} {:>6}",
        "time",
        "device",
        "r/s",
        "w/s",
        "rMB/s",
        "wMB/s",
        "rKiB/io",
        "wKiB/io",
        "read%",
        "aqu",
        "r_await",
        "w_await",
        "%util"
    )
}

fn row_line(t: &str, device: &str, f: &Figures) -> String {
    format!(
        "{:>8} {:<12} {:>9} {:>9} {:>8} {:>8} {:>7} {:>7} {:>6} {:>6} {:>8} {:>8} {:>6}",
        t,
        device,
        num(f.read_iops, 1),
        num(f.write_iops, 1),
        mb(f.read_bw_bytes_per_s),
        mb(f.write_bw_bytes_per_s),
        kib(f.read_avg_size_bytes),
        kib(f.write_avg_size_bytes),
        num(f.read_pct_ops, 1),
        num(f.queue_depth, 2),
        num(f.read_await_ms, 2),
        num(f.write_await_ms, 2),
        num(f.util_pct, 1)
    )
}

/// The rows of one interval: per device when there are several, then the
/// total.
pub fn interval_lines(i: &IntervalFigures, t_s: f64, many: bool) -> Vec<String> {
    let t = format!("{t_s:.1}");
    let mut out = Vec::new();
    if many {
        for (name, f) in &i.devices {
            out.push(row_line(&t, name, f));
        }
    }
    out.push(row_line(&t, "total", &i.total));
    out
}

/// How a figure is shown in the summary: label, divisor, decimals.
fn shown(figure: Figure) -> (&'static str, f64, usize) {
    use Figure as F;
    match figure {
        F::ReadIops => ("read IOPS", 1.0, 1),
        F::WriteIops => ("write IOPS", 1.0, 1),
        F::TotalIops => ("total IOPS", 1.0, 1),
        F::ReadBwBytesPerS => ("read MB/s", 1e6, 2),
        F::WriteBwBytesPerS => ("write MB/s", 1e6, 2),
        F::TotalBwBytesPerS => ("total MB/s", 1e6, 2),
        F::ReadAvgSizeBytes => ("avg read KiB", 1024.0, 1),
        F::WriteAvgSizeBytes => ("avg write KiB", 1024.0, 1),
        F::ReadPctOps => ("read % (ops)", 1.0, 1),
        F::ReadPctBytes => ("read % (bytes)", 1.0, 1),
        F::QueueDepth => ("queue depth", 1.0, 2),
        F::ReadAwaitMs => ("read await ms", 1.0, 2),
        F::WriteAwaitMs => ("write await ms", 1.0, 2),
        F::UtilPct => ("util %", 1.0, 1),
        F::DiscardIops => ("discard IOPS", 1.0, 1),
        F::DiscardBwBytesPerS => ("discard MB/s", 1e6, 2),
        F::FlushIops => ("flush IOPS", 1.0, 1),
    }
}

fn stat_line(name: Figure, mean: Option<f64>, p95: Option<f64>, peak: Option<f64>) -> String {
    let (label, div, d) = shown(name);
    let f = |v: Option<f64>| v.map_or("-".into(), |x| format!("{:.d$}", x / div));
    format!(
        "  {:<16} {:>12} {:>12} {:>12}",
        label,
        f(mean),
        f(p95),
        f(peak)
    )
}

fn stats_header() -> String {
    format!("  {:<16} {:>12} {:>12} {:>12}", "", "mean", "p95", "peak")
}

/// The summary of a profile just measured.
pub fn summary_lines(p: &Profile) -> Vec<String> {
    let mut out = vec![
        format!(
            "profile over {:.1}s, {} interval(s); total over {}:",
            p.duration_s(),
            p.intervals.len(),
            p.devices
                .iter()
                .filter(|d| d.in_total)
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        stats_header(),
    ];
    for (&figure, stat) in Figure::ALL.iter().zip(&p.total.stats) {
        if stat.mean.is_none() && stat.peak.is_none() {
            continue; // not reported by this kernel, or no I/O of that kind
        }
        out.push(stat_line(figure, stat.mean, stat.p95, stat.peak));
    }
    for d in p.devices.iter().filter(|d| !d.in_total) {
        if let Some(why) = &d.why_not_in_total {
            out.push(format!("  {} is not added to the total: {why}", d.name));
        }
    }
    out
}

/// The summary of a stored profile (`iorig runs show`).
pub fn stored_lines(summary: &ProfileSummary) -> Vec<String> {
    let mut out = vec![
        format!(
            "profile over {:.1}s, {} interval(s); total over the covered devices:",
            summary.duration_s, summary.intervals
        ),
        stats_header(),
    ];
    for &figure in Figure::ALL {
        let Some(stat) = summary.total.get(figure.name()) else {
            continue;
        };
        if stat.mean.is_none() && stat.peak.is_none() {
            continue;
        }
        out.push(stat_line(figure, stat.mean, stat.p95, stat.peak));
    }
    out
}

fn level_name<T: Serialize>(level: &T) -> String {
    serde_json::to_value(level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_uppercase))
        .unwrap_or_default()
}

/// Each rule set's overall verdict and its rules'.
pub fn verdict_lines(evals: &[Evaluation]) -> Vec<String> {
    let mut out = Vec::new();
    for e in evals {
        let overall = e
            .overall
            .as_ref()
            .map(level_name)
            .unwrap_or("NO DATA".into());
        out.push(format!("rules {}: {overall}", e.rule_set));
        for v in &e.verdicts {
            let level = v.level.as_ref().map(level_name).unwrap_or("NO DATA".into());
            out.push(format!(
                "  {:<7} {}: {} ({})",
                level, v.rule, v.says, v.shown
            ));
        }
    }
    out
}
/// The line that opens a profile: what is sampled, how often, how long.
pub fn source_line(source: &iorig_run::profile::Source) -> String {
    use iorig_run::profile::Source;
    match source {
        Source::Live {
            interval,
            time,
            record,
        } => format!(
            "iorig profile: /proc/diskstats every {:?} for {:?}{}; Ctrl-C ends it early",
            interval,
            time,
            record
                .as_ref()
                .map(|d| format!(", recording to {}", d.display()))
                .unwrap_or_default()
        ),
        Source::Recorded { dir, snaps } => format!(
            "iorig profile: recording {} ({} snapshots)",
            dir.display(),
            snaps.len()
        ),
    }
}
