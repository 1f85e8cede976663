//! Building the result document (`iorig.result/1`, the types of
//! `iorig-result`) from what the engine reports, and writing it.

use iorig_engine::run::{IntervalSample, TargetInfo};
use iorig_result::{Interval, Summary, TargetEntry};
use iorig_stats::{CpuUsage, IntervalStats};
use serde::Serialize;

pub fn target_entry(t: &TargetInfo) -> TargetEntry {
    TargetEntry {
        path: t.path.clone(),
        kind: t.kind,
        size_bytes: t.size_bytes,
        device: t.device.clone(),
    }
}

pub fn interval_of(s: &IntervalSample) -> Interval {
    Interval {
        t_s: s.t_s,
        duration_s: s.duration_s,
        warmup: s.warmup,
        read: s.stats.read.summary(s.duration_s),
        write: s.stats.write.summary(s.duration_s),
        total: s.stats.total().summary(s.duration_s),
        cpu: s.cpu,
        device: s.device,
        errors: s.stats.errors,
        longest_gap_ns: s.longest_gap_ns,
        worker_busy_max_pct: s.worker_busy_max_pct,
    }
}

pub fn summary_of(
    stats: &IntervalStats,
    duration_s: f64,
    cpu: CpuUsage,
    errors: u64,
    messages: &[String],
) -> Summary {
    Summary {
        duration_s,
        read: stats.read.summary(duration_s),
        write: stats.write.summary(duration_s),
        total: stats.total().summary(duration_s),
        cpu,
        errors,
        error_messages: messages.to_vec(),
        validation: None,
    }
}

/// The summary of a finished step, with its validation results.
pub fn step_summary(outcome: &iorig_engine::run::RunOutcome, targets: &[TargetInfo]) -> Summary {
    let mut s = summary_of(
        &outcome.summary,
        outcome.measured_s,
        outcome.cpu,
        outcome.summary.errors,
        &outcome.error_messages,
    );
    let names: Vec<String> = targets.iter().map(|t| t.path.clone()).collect();
    s.validation = outcome
        .validation
        .as_ref()
        .map(|v| crate::verify_cmd::validation_of(v, &names));
    s
}

/// Writes a `--json` document: pretty-printed to FILE, or alone on stdout for `-`.
pub fn write_json_doc<T: Serialize>(
    printer: &super::Printer,
    dest: &str,
    doc: &T,
) -> Result<(), crate::Failure> {
    let text = serde_json::to_string_pretty(doc)
        .map_err(|e| crate::Failure::runtime(format!("encoding JSON: {e}")))?;
    if dest == "-" {
        printer.json_stdout(&text);
        Ok(())
    } else {
        crate::record::write_output(
            "--json",
            std::path::Path::new(dest),
            (text + "\n").as_bytes(),
        )
    }
}
