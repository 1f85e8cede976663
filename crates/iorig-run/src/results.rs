//! The typed results (`iorig-result`) built from what the engine reports:
//! the one place engine figures become the schema the JSON, the store and
//! the reports share.

use iorig_engine::fs::FormatOutcome;
use iorig_engine::run::{IntervalSample, TargetInfo};
use iorig_engine::verify::{ValidationError, ValidationSummary};
use iorig_result::{
    FormatSummary, FsOp, Interval, Summary, TargetEntry, Validation, ValidationErrorEntry,
};
use iorig_spec::FormatMode;
use iorig_stats::{CpuUsage, IntervalStats, OpSummary};
use iorig_verify::Expected;
use std::collections::BTreeMap;

/// Validation errors a summary lists (the rest are counted).
pub const LISTED_ERRORS: usize = 100;

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
        trim: (s.stats.trim.ops > 0).then(|| s.stats.trim.summary(s.duration_s)),
        total: s.stats.total().summary(s.duration_s),
        fs_ops: fs_ops_of(&s.stats, s.duration_s),
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
        trim: (stats.trim.ops > 0).then(|| stats.trim.summary(duration_s)),
        total: stats.total().summary(duration_s),
        fs_ops: fs_ops_of(stats, duration_s),
        issue_lag_ns: (!stats.issue_lag.is_empty()).then(|| stats.issue_lag.summary()),
        cpu,
        workers_cpu: None,
        errors,
        error_messages: messages.to_vec(),
        validation: None,
        format: None,
    }
}

/// A file-system workload's operations by kind, each kind that was
/// counted. Its workers count opens and closes around every data
/// operation, so only a file-system run has `meta` entries; a block run
/// gets none.
pub fn fs_ops_of(stats: &IntervalStats, duration_s: f64) -> BTreeMap<FsOp, OpSummary> {
    if stats.meta.is_empty() {
        // A block run's only other kind: its fsync/fdatasync calls.
        return stats
            .fs_op(FsOp::Fsync)
            .map(|s| (FsOp::Fsync, s.summary(duration_s)))
            .into_iter()
            .collect();
    }
    FsOp::ALL
        .iter()
        .filter_map(|op| stats.fs_op(*op).map(|s| (*op, s.summary(duration_s))))
        .collect()
}

/// The format phase of a file-system workload, as the result schema has it.
pub fn format_summary(f: &FormatOutcome) -> FormatSummary {
    let secs = f.duration.as_secs_f64();
    let per_s = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
    FormatSummary {
        mode: f.mode.map_or("", FormatMode::name).to_string(),
        files_kept: f.files_kept,
        files_removed: f.files_removed,
        dirs_created: f.dirs_created,
        files_created: f.files_created,
        bytes_written: f.bytes_written,
        duration_s: secs,
        files_per_s: per_s(f.files_created),
        bw_bytes_per_s: per_s(f.bytes_written),
        interrupted: f.interrupted,
        ops: fs_ops_of(&f.stats, secs),
    }
}

/// `summary.validation` of the result document.
pub fn validation_of(v: &ValidationSummary, target_names: &[String]) -> Validation {
    Validation {
        unit_bytes: v.unit_bytes,
        units_checked: v.units_checked,
        blocks_checked: v.blocks_checked,
        pre_reads: v.pre_reads,
        after_reads: v.after_reads,
        errors: v.errors,
        errors_by_kind: v.errors_by_kind.clone(),
        stopped_at_max_errors: v.stopped_at_max_errors,
        journal_ns: (v.journal_batches > 0).then_some(v.journal_ns),
        journal_batches: (v.journal_batches > 0).then_some(v.journal_batches),
        error_list: v
            .first_errors
            .iter()
            .take(LISTED_ERRORS)
            .map(|e| error_entry(e, target_names))
            .collect(),
    }
}

/// The expected key and, for a write that was in flight, the other one.
pub fn expected_keys(e: Expected) -> (Option<u8>, Option<u8>) {
    match e {
        Expected::Unwritten => (Some(0), None),
        Expected::Key(k) => (Some(k), None),
        Expected::Either { old, new } => (Some(new), Some(old)),
        Expected::Any | Expected::Pattern => (None, None),
    }
}

/// One validation error of the result document.
pub fn error_entry(e: &ValidationError, target_names: &[String]) -> ValidationErrorEntry {
    let u = &e.error;
    let (expected_key, expected_alt_key) = expected_keys(u.expected);
    ValidationErrorEntry {
        kind: u.kind.name().to_string(),
        t_s: e.t_s,
        target: e.target_path.clone(),
        offset_bytes: u.offset_bytes,
        expected_key,
        expected_alt_key,
        found_key: u.found_key,
        found_target: u.found_target.map(|t| {
            target_names
                .get(t as usize)
                .cloned()
                .unwrap_or_else(|| format!("#{t}"))
        }),
        found_offset_bytes: u.found_offset_bytes,
        found_written_unix_ns: u.found_time_ns,
        detail: u.detail.clone(),
    }
}
/// What one job of a finished step measured, beside its typed result: the
/// merged statistics of its measured intervals (histograms whole, for
/// exporters that want percentiles of their own choosing).
#[derive(Debug, Clone)]
pub struct JobPart {
    pub result: iorig_result::JobResult,
    pub stats: iorig_stats::IntervalStats,
}

/// A finished (or skipped) step.
#[derive(Debug, Clone)]
pub struct StepResult {
    pub step: iorig_spec::plan::PlanStep,
    pub status: iorig_result::StepStatus,
    pub summary: Option<iorig_result::Summary>,
    pub analysis: Vec<iorig_result::Finding>,
    /// A step of several jobs: each job's part.
    pub jobs: Vec<JobPart>,
    /// Standard errors of its mean and p99 latency over its measured
    /// intervals (the curve's sanity check); None when not known (fewer
    /// than two intervals, or not run here now).
    pub lat_se_ns: (Option<f64>, Option<f64>),
}
