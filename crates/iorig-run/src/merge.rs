//! Merging parts of one step measured apart (the hosts of a multi-host
//! step, the jobs of a step of several workloads) into their totals.

use crate::results::summary_of;
use iorig_engine::run::IntervalSample;
use iorig_result::Summary;
use iorig_stats::{CpuUsage, IntervalStats};

/// Merges interval `k` of every part (host or job) that has it:
/// statistics merged (histograms exactly), CPU averaged (the parts of a
/// step here sample the same CPUs; hosts each their own), the smallest
/// longest gap (the whole went without completions at most as long as its
/// best part did).
pub fn merge_interval(parts: &[&IntervalSample]) -> Option<IntervalSample> {
    let first = parts.first()?;
    let mut stats = IntervalStats::default();
    let mut cpu = CpuUsage::default();
    let mut gap: Option<(u64, u64)> = None;
    let mut busy: f64 = 0.0;
    let mut duration_s: f64 = 0.0;
    let mut t_s: f64 = 0.0;
    for p in parts {
        stats.merge(&p.stats);
        cpu.usr_pct += p.cpu.usr_pct;
        cpu.sys_pct += p.cpu.sys_pct;
        cpu.steal_pct += p.cpu.steal_pct;
        // The cluster went without completions at most as long as its
        // best host did.
        if gap.is_none_or(|(g, _)| p.longest_gap_ns < g) {
            gap = Some((p.longest_gap_ns, p.gap_start_ns));
        }
        busy = busy.max(p.worker_busy_max_pct);
        duration_s = duration_s.max(p.duration_s);
        t_s = t_s.max(p.t_s);
    }
    let n = parts.len() as f64;
    cpu.usr_pct /= n;
    cpu.sys_pct /= n;
    cpu.steal_pct /= n;
    let (longest_gap_ns, gap_start_ns) = gap.unwrap_or((0, 0));
    Some(IntervalSample {
        index: first.index,
        t_s,
        duration_s,
        warmup: first.warmup,
        stats,
        cpu,
        // Devices are each host's (or job's) own, not the total's.
        device: if parts.len() == 1 { first.device } else { None },
        longest_gap_ns,
        gap_start_ns,
        worker_busy_max_pct: busy,
    })
}

/// The measured figures of a series of intervals: the summary, the merged
/// statistics, the measured seconds and the time-weighted CPU.
pub fn summary_of_samples(
    samples: &[IntervalSample],
    messages: &[String],
) -> (Summary, IntervalStats, f64, CpuUsage) {
    let mut stats = IntervalStats::default();
    let mut secs = 0.0;
    let mut cpu = CpuUsage::default();
    for s in samples.iter().filter(|s| !s.warmup) {
        stats.merge(&s.stats);
        secs += s.duration_s;
        cpu.usr_pct += s.cpu.usr_pct * s.duration_s;
        cpu.sys_pct += s.cpu.sys_pct * s.duration_s;
        cpu.steal_pct += s.cpu.steal_pct * s.duration_s;
    }
    if secs > 0.0 {
        cpu.usr_pct /= secs;
        cpu.sys_pct /= secs;
        cpu.steal_pct /= secs;
    }
    let errors = stats.errors;
    (
        summary_of(&stats, secs, cpu, errors, messages),
        stats,
        secs,
        cpu,
    )
}
