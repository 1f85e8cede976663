//! What a run reports while it runs: the typed values its events carry to
//! every sink (the terminal, the store, an agent's stream, a test's
//! collector). The engine makes them; nothing here depends on the engine,
//! so a sink needs only this crate.

use iorig_stats::{CpuUsage, DeviceUsage, IntervalStats, ThreadUsage};
use iorig_verify::UnitError;
use std::collections::BTreeMap;

/// How many validation errors a run keeps in full (the rest are counted).
pub const KEPT_ERRORS: usize = 1000;

/// The header iorig writes at the start of a scratch file it creates
/// (before the data area the workload uses).
pub const FILE_HEADER_BYTES: u64 = 1 << 20;

/// One interval of the run, all workers merged.
#[derive(Debug)]
pub struct IntervalSample {
    pub index: usize,
    /// Seconds from the start of the run to the end of this interval.
    pub t_s: f64,
    pub duration_s: f64,
    pub warmup: bool,
    pub stats: IntervalStats,
    pub cpu: CpuUsage,
    pub device: Option<DeviceUsage>,
    /// Longest time in this interval without any completion, from the
    /// completions' own timestamps (a gap that started earlier counts up to
    /// its end here; one still open counts up to the interval's end).
    pub longest_gap_ns: u64,
    /// Where that gap began, ns from the start of the run.
    pub gap_start_ns: u64,
    /// iorig's busiest worker thread over the interval: time on a CPU or
    /// waiting for one, percent of the interval (100 = it never waited for
    /// the storage).
    pub worker_busy_max_pct: f64,
}

/// The end of a run.
#[derive(Debug)]
pub struct RunOutcome {
    /// Merged statistics of the measured (non-warmup) intervals.
    pub summary: IntervalStats,
    /// Seconds covered by the measured intervals.
    pub measured_s: f64,
    /// Mean CPU use over the measured intervals (time-weighted).
    pub cpu: CpuUsage,
    /// Every I/O error, warmup included (`summary.errors` counts the measured
    /// time only).
    pub errors: u64,
    pub error_messages: Vec<String>,
    /// Ended before the planned time (stop request or every worker failed).
    pub ended_early: bool,
    pub intervals: usize,
    /// Data validation results (`verify` workloads).
    pub validation: Option<ValidationSummary>,
    /// Per worker, its thread's time on a CPU or waiting for one over the
    /// measured time, percent: 100 means it never waited for the storage,
    /// so the generator set the pace.
    pub worker_busy_pct: Vec<f64>,
    /// The workers' own rusage over the measured intervals, summed (fio's
    /// per-job CPU, context switches and page faults).
    pub thread_usage: ThreadUsage,
    /// Longest time without any completion in the measured time, and where
    /// it began (seconds from the start of the run).
    pub longest_gap_ns: u64,
    pub longest_gap_start_s: f64,
    /// Bytes issued against `byte_limit`, when there is one.
    pub limited_bytes: Option<u64>,
    /// Time workers spent writing and syncing journal records, and how many
    /// batches they synced (not part of any I/O's latency).
    pub journal_ns: u64,
    pub journal_batches: u64,
    /// One line each for the user about how the run went (a file-system
    /// mix that ran out of work).
    pub notices: Vec<String>,
}

/// Facts about one target, for output.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetInfo {
    pub path: String,
    pub kind: crate::TargetKind,
    /// Usable bytes of the target (its data area).
    pub size_bytes: u64,
    pub device: Option<String>,
    /// What became of its cached pages before the step.
    pub cache: CacheState,
}

/// What became of a target's cached pages before the step
/// (iorig-engine's `target::cache`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheState {
    /// Not a file or device of this host's (the null engine, a tree, an
    /// agent's target), or not yet opened.
    #[default]
    Untouched,
    /// Written back and dropped.
    Dropped,
    /// The kernel would not drop them (a device without CAP_SYS_ADMIN).
    NotDropped,
    /// Left as they were (`keep_cache`).
    Kept,
}

/// A validation error as the run reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct ValidationError {
    /// Seconds from the start of the run.
    pub t_s: f64,
    pub target_path: String,
    pub error: UnitError,
}

/// Validation results of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ValidationSummary {
    pub unit_bytes: u64,
    /// Units whose content was checked against a known key.
    pub units_checked: u64,
    /// Reads (of any kind) whose data was checked.
    pub blocks_checked: u64,
    /// Reads made before writing over known data.
    pub pre_reads: u64,
    /// Reads made right after writes (`--verify-after`).
    pub after_reads: u64,
    pub errors: u64,
    /// Time workers spent writing and syncing journal records (`--journal`),
    /// and the batches synced; not part of any I/O's reported latency.
    pub journal_ns: u64,
    pub journal_batches: u64,
    /// Errors by kind name (`corrupted`, `lost_write`, ...).
    pub errors_by_kind: BTreeMap<String, u64>,
    /// The first errors in full (up to [`KEPT_ERRORS`]).
    pub first_errors: Vec<ValidationError>,
    /// The run stopped because it reached `max_errors`.
    pub stopped_at_max_errors: bool,
}

impl ValidationSummary {
    pub fn new(unit_bytes: u64) -> Self {
        ValidationSummary {
            unit_bytes,
            ..Default::default()
        }
    }

    pub fn add_error(&mut self, e: ValidationError) {
        self.errors += 1;
        *self
            .errors_by_kind
            .entry(e.error.kind.name().to_string())
            .or_default() += 1;
        if self.first_errors.len() < KEPT_ERRORS {
            self.first_errors.push(e);
        }
    }
}
/// Where the format phase stands, for a progress display.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FormatProgress {
    pub files_done: u64,
    pub files_total: u64,
    pub bytes_done: u64,
    pub bytes_total: u64,
}
