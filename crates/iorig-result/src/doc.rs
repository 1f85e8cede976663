//! The result document of one run, schema `iorig.result/1`
//! (docs/json-schema.md): what `iorig run --json` writes, and the shape of
//! every step's intervals and summary in the store and the exports.

use crate::names::TargetKind;
use crate::status::RunStatus;
use crate::validation::Validation;
use iorig_spec::{FsOp, WorkloadRecord};
use iorig_stats::{CpuUsage, DeviceUsage, LatSummary, OpSummary, ThreadUsage};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The schema name of [`ResultDoc`].
pub const SCHEMA: &str = "iorig.result/1";

/// One run's result document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResultDoc {
    /// Always [`SCHEMA`].
    pub schema: String,
    pub tool: ToolInfo,
    pub run: RunInfo,
    pub workload: WorkloadRecord,
    pub targets: Vec<TargetEntry>,
    /// Every interval, warmup included, in time order. With several
    /// hosts, the totals: interval `k` of every host merged (histograms
    /// merged, ops and bytes summed).
    pub intervals: Vec<Interval>,
    pub summary: Summary,
    /// A run on several hosts (`--hosts`): each host's own part.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostResult>,
    /// A step of several workloads at once (a plan step's `jobs`, a fio
    /// job file's concurrent jobs): each one's own part; `summary` and
    /// `intervals` are their totals.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jobs: Vec<JobResult>,
    /// A trace replay (`iorig trace replay`): what was replayed and how
    /// close to the trace's times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayReport>,
}

/// A trace replay: the trace, how it was mapped onto the targets, and how
/// close to their times its I/Os were issued.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReplayReport {
    pub trace: String,
    pub format: String,
    /// I/Os the trace holds, and those issued from it (fewer when the run
    /// was stopped or hit its time limit).
    pub records: u64,
    pub issued: u64,
    /// The trace's times divided by this; `None`: as fast as possible.
    pub speed: Option<f64>,
    /// I/Os in flight at most.
    pub qd: u32,
    /// How offsets were placed in the targets: modulo, scale or exact.
    pub map: String,
    pub align_bytes: u64,
    /// I/Os whose offset or size was moved to a multiple of `align_bytes`.
    pub realigned: u64,
    /// Actual issue minus scheduled issue, over the counted I/Os of a timed
    /// replay (an I/O is never issued early).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timing_error_ns: Option<LatSummary>,
    /// Counted I/Os issued more than 20 µs, and more than 1 ms, late.
    pub late_over_20us: u64,
    pub late_over_1ms: u64,
}

/// One of several workloads run at once in one step, with its own workers
/// and figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JobResult {
    /// Its name in the plan (the fio job's section name).
    pub name: String,
    pub workload: WorkloadRecord,
    pub engine: String,
    pub targets: Vec<TargetEntry>,
    /// Its own measured intervals merged.
    pub summary: Summary,
    /// Its own intervals, warmup included (the store keeps only the
    /// summary; the totals' intervals are the step's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<Interval>,
}

/// How a host's part of a multi-host run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HostStatus {
    /// It ran to the end with the others.
    Ok,
    /// It stopped answering (or its connection broke) mid-step; the
    /// others went on.
    Lost,
}

/// One host of a multi-host run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostResult {
    /// The name given in the host list (its address unless named).
    pub name: String,
    /// The agent's address as the controller reached it.
    pub address: String,
    /// The agent machine's own host name.
    pub hostname: String,
    pub tool_version: String,
    /// The agent machine's facts (OS, kernel, CPU, memory) as it gave them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<iorig_stats::sampler::system::SystemFacts>,
    pub status: HostStatus,
    /// The first interval the host did not deliver, when lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_at_interval: Option<usize>,
    /// When it was lost, seconds from the start of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_at_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_reason: Option<String>,
    /// The agent's clock minus the controller's, as measured (ns), and the
    /// round trip of the measurement it came from (its error is at most
    /// half that).
    pub clock_offset_ns: i64,
    pub clock_rtt_ns: u64,
    /// How late the host's I/O started against the common start time
    /// (ns; negative: early), and whether that exceeded the limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_ns: Option<i64>,
    #[serde(default)]
    pub start_skew_flagged: bool,
    pub engine: String,
    pub targets: Vec<TargetEntry>,
    /// The host's own figures (its measured intervals merged).
    pub summary: Summary,
    pub intervals: Vec<Interval>,
    /// What the host's own analysis found (the generator-bound check
    /// against its own workers, its rate, its outages).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<crate::Finding>,
}

/// The program that wrote a document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolInfo {
    pub name: String,
    pub version: String,
}

impl ToolInfo {
    /// This build of iorig.
    pub fn this() -> ToolInfo {
        ToolInfo {
            name: "iorig".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// Identity and outcome of a run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunInfo {
    /// The store's run id, or `YYYYMMDD-HHMMSS-xxxxxx` without a store.
    pub id: String,
    /// RFC 3339, UTC, to the second.
    pub started: String,
    pub host: String,
    pub labels: BTreeMap<String, String>,
    /// The engine that ran (io_uring may have fallen back to psync).
    pub engine: String,
    pub status: RunStatus,
}

/// One target as the run used it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetEntry {
    pub path: String,
    pub kind: TargetKind,
    /// Usable size before `--range`.
    pub size_bytes: u64,
    /// Kernel name of the block device under the target, if any.
    pub device: Option<String>,
}

/// One reporting interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Interval {
    /// End of the interval, seconds from the start of the run (warmup included).
    pub t_s: f64,
    pub duration_s: f64,
    pub warmup: bool,
    pub read: OpSummary,
    pub write: OpSummary,
    /// Trims (discards), when the interval has any (`--trim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<OpSummary>,
    pub total: OpSummary,
    /// A file-system workload's operations by kind (reads and writes
    /// included), each kind counted in the interval; absent for block
    /// workloads.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fs_ops: BTreeMap<FsOp, OpSummary>,
    pub cpu: CpuUsage,
    pub device: Option<DeviceUsage>,
    pub errors: u64,
    /// Longest time in the interval without any completed I/O, measured
    /// from the completions themselves.
    pub longest_gap_ns: u64,
    /// iorig's busiest worker thread, percent of the interval on or waiting
    /// for a CPU.
    pub worker_busy_max_pct: f64,
}

/// The measured part of a step or run as a whole (warmup excluded).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub duration_s: f64,
    pub read: OpSummary,
    pub write: OpSummary,
    /// Trims (discards), when the step has any (`--trim`); `total` counts
    /// them too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<OpSummary>,
    pub total: OpSummary,
    /// A file-system workload's operations by kind, as in [`Interval`].
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fs_ops: BTreeMap<FsOp, OpSummary>,
    /// A paced step's issue lag: how late iorig itself issued its scheduled
    /// I/Os (actual issue minus the time each could first go out; see
    /// `IntervalStats::issue_lag`). Latency under a rate counts from the
    /// schedule, so this much of `total.lat_ns` is the tool's. Absent for
    /// unpaced steps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_lag_ns: Option<LatSummary>,
    pub cpu: CpuUsage,
    /// The workers' own CPU time, context switches and page faults over
    /// the measured time (absent from results stored before it was
    /// measured); `cpu` is the whole host's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers_cpu: Option<ThreadUsage>,
    pub errors: u64,
    #[serde(default)]
    pub error_messages: Vec<String>,
    /// Data validation (`--verify`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validation: Option<Validation>,
    /// How a file-system workload's tree was made ready before the
    /// operations (the format phase, measured on its own); absent for block
    /// workloads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<FormatSummary>,
}

/// The format phase of a file-system workload: what it found, removed and
/// created, and how fast.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatSummary {
    /// The `format` mode asked for (no, yes, once, restart, dirs).
    pub mode: String,
    /// Files already in place and kept.
    pub files_kept: u64,
    pub files_removed: u64,
    pub dirs_created: u64,
    pub files_created: u64,
    /// Data written into the created files.
    pub bytes_written: u64,
    pub duration_s: f64,
    /// Created files per second of the phase.
    pub files_per_s: f64,
    pub bw_bytes_per_s: f64,
    /// Stopped by an interrupt before the tree was complete.
    #[serde(default)]
    pub interrupted: bool,
    /// The phase's operations by kind (mkdir, create, write, delete).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub ops: BTreeMap<FsOp, OpSummary>,
}

/// What a stored step's summary holds: the I/O summary of a step that ran
/// a workload, or the observation summary of a profile.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StepSummary {
    Io(Box<Summary>),
    Profile(crate::profile::ProfileSummary),
}

impl StepSummary {
    /// The I/O summary, for a step that ran a workload.
    pub fn io(&self) -> Option<&Summary> {
        match self {
            StepSummary::Io(s) => Some(s.as_ref()),
            StepSummary::Profile(_) => None,
        }
    }
}
