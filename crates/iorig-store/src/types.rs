//! What goes into the store and what comes out of it.

use iorig_result::{
    Finding, FsOp, IntervalCpu, IntervalDoc, StepDoc, StepSummary, TargetDoc, WorkloadRecord,
};
use iorig_stats::sampler::system::TargetFacts;
use iorig_stats::{
    CpuUsage, DeviceUsage, IntervalStats, LatSummary, LatencyHistogram, OpStats, OpSummary,
    StatsError,
};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;

/// The id of a run (its `runs.id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct RunId(pub i64);

/// The id of a step (its `steps.id`, unique over all runs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct StepId(pub i64);

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl fmt::Display for StepId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

pub use iorig_result::{HistKind, Op, RunKind, RunStatus, StepRole, StepStatus};

/// A run about to start.
#[derive(Clone, Debug, PartialEq)]
pub struct NewRun {
    pub kind: RunKind,
    /// The plan as given (for `plan resume`); `None` for single runs.
    pub plan_json: Option<String>,
    pub host: String,
    pub tool_version: String,
    pub command_line: String,
    pub labels: BTreeMap<String, String>,
    /// RFC 3339.
    pub started: String,
}

/// A block-trace analysis to store (`iorig trace analyse`).
#[derive(Clone, Debug)]
pub struct NewTraceAnalysis {
    /// RFC 3339.
    pub created: String,
    pub host: String,
    pub tool_version: String,
    pub command_line: String,
    pub file: String,
    pub format: String,
    pub records: u64,
    pub labels: BTreeMap<String, String>,
    /// The analysis (schema iorig.trace/1) as JSON.
    pub analysis_json: String,
}

/// A stored trace analysis, without the analysis itself.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TraceAnalysisRow {
    pub id: i64,
    pub created: String,
    pub host: String,
    pub tool_version: String,
    pub command_line: String,
    pub file: String,
    pub format: String,
    pub records: u64,
    pub labels: BTreeMap<String, String>,
}

/// A step of a run.
#[derive(Clone, Copy, Debug)]
pub struct NewStep<'a> {
    /// Position in the plan, from 0; unique within the run.
    pub index: i64,
    pub name: &'a str,
    /// What the step is for in its method.
    pub role: StepRole,
    /// Every resolved parameter; `None` for a step not planned yet (a plan
    /// stores all its steps as pending first) or one that was skipped. The
    /// searchable columns are NULL then.
    pub params: Option<&'a WorkloadRecord>,
}

/// A run as listed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunRow {
    pub id: RunId,
    pub kind: RunKind,
    pub status: RunStatus,
    pub started: String,
    pub ended: Option<String>,
    pub host: String,
    pub tool_version: String,
    pub labels: BTreeMap<String, String>,
}

/// A run with everything needed to show or resume it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RunDetail {
    #[serde(flatten)]
    pub run: RunRow,
    pub plan_json: Option<String>,
    pub command_line: String,
}

/// A stored step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StepRow {
    pub id: StepId,
    pub run_id: RunId,
    pub index: i64,
    pub name: String,
    pub role: StepRole,
    pub status: StepStatus,
    /// `None` for a step stored before it was planned, or skipped.
    pub params: Option<WorkloadRecord>,
    pub summary: Option<StepSummary>,
    pub started: Option<String>,
    pub ended: Option<String>,
}

/// A stored finding, of a run (`step_id` None) or of one of its steps.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AnalysisRow {
    pub id: i64,
    pub run_id: RunId,
    pub step_id: Option<StepId>,
    pub finding: Finding,
}

/// A stored target's facts.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TargetFactsRow {
    pub path: String,
    pub kind: Option<String>,
    pub size_bytes: Option<u64>,
    pub facts: TargetFacts,
}

/// One operation kind of one interval of a step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IntervalRow {
    /// Position of the interval in its step, from 0, warmup included.
    pub seq: u64,
    /// Seconds from the start of the step to the end of this interval.
    pub t_s: f64,
    pub duration_s: f64,
    pub warmup: bool,
    pub op: Op,
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_ns: LatSummary,
    pub errors: u64,
    pub cpu_usr_pct: f64,
    pub cpu_sys_pct: f64,
    /// `None` when the target has no block device to sample.
    pub device: Option<DeviceUsage>,
    /// This operation's latency histogram over the interval (HDR V2
    /// encoding), so percentiles of any span of intervals, hosts or runs
    /// come from exact merges; `None` for intervals stored before version 3.
    /// [`IntervalRow::histogram`] reads it.
    #[serde(skip)]
    pub lat_hist: Option<Vec<u8>>,
}

impl IntervalRow {
    /// The row of one operation's figures, with no CPU, device or error
    /// figures yet (see [`IntervalRow::with_host`], [`IntervalRow::with_errors`]).
    pub fn from_op(
        seq: u64,
        t_s: f64,
        duration_s: f64,
        warmup: bool,
        op: Op,
        summary: &OpSummary,
    ) -> IntervalRow {
        IntervalRow {
            seq,
            t_s,
            duration_s,
            warmup,
            op,
            ops: summary.ops,
            bytes: summary.bytes,
            iops: summary.iops,
            bw_bytes_per_s: summary.bw_bytes_per_s,
            lat_ns: summary.lat_ns,
            errors: 0,
            cpu_usr_pct: 0.0,
            cpu_sys_pct: 0.0,
            device: None,
            lat_hist: None,
        }
    }

    /// Adds the interval's latency histogram of this operation.
    pub fn with_histogram(mut self, hist: &LatencyHistogram) -> IntervalRow {
        self.lat_hist = Some(hist.to_bytes());
        self
    }

    /// The interval's latency histogram, when stored.
    pub fn histogram(&self) -> Option<Result<LatencyHistogram, StatsError>> {
        self.lat_hist.as_deref().map(LatencyHistogram::from_bytes)
    }

    /// Adds the host CPU and device figures of the interval.
    pub fn with_host(mut self, cpu: CpuUsage, device: Option<DeviceUsage>) -> IntervalRow {
        self.cpu_usr_pct = cpu.usr_pct;
        self.cpu_sys_pct = cpu.sys_pct;
        self.device = device;
        self
    }

    pub fn with_errors(mut self, errors: u64) -> IntervalRow {
        self.errors = errors;
        self
    }

    /// The read, write and total rows of one interval (and a trim row when
    /// it has trims), for [`crate::Store::add_intervals`]. Errors are not
    /// attributed to an operation by the engine, so they go on the total
    /// row only.
    pub fn rows_of(
        seq: u64,
        t_s: f64,
        duration_s: f64,
        warmup: bool,
        stats: &IntervalStats,
        cpu: CpuUsage,
        device: Option<DeviceUsage>,
    ) -> Vec<IntervalRow> {
        let row = |op, s: &OpStats| {
            IntervalRow::from_op(seq, t_s, duration_s, warmup, op, &s.summary(duration_s))
                .with_host(cpu, device)
                .with_histogram(&s.lat)
        };
        let mut rows: Vec<IntervalRow> = op_parts(stats)
            .into_iter()
            .map(|(op, s)| row(op, s))
            .collect();
        rows.push(row(Op::Total, &stats.total()).with_errors(stats.errors));
        rows
    }

    /// The figures as the result JSON's per-operation object (without
    /// service latency, which intervals do not store).
    pub fn op_summary(&self) -> OpSummary {
        OpSummary {
            ops: self.ops,
            bytes: self.bytes,
            iops: self.iops,
            bw_bytes_per_s: self.bw_bytes_per_s,
            lat_ns: self.lat_ns,
            service_lat_ns: None,
        }
    }
}

impl StepRow {
    /// The step as the run document shows it, with the findings stored
    /// under it (`analysis` may hold other steps' rows: they are skipped)
    /// and, for the export, its intervals.
    pub fn doc(&self, analysis: &[AnalysisRow], intervals: Option<&[IntervalRow]>) -> StepDoc {
        StepDoc {
            params: self.params.clone(),
            index: self.index,
            name: self.name.clone(),
            role: self.role,
            status: self.status,
            started: self.started.clone(),
            ended: self.ended.clone(),
            summary: self.summary.clone(),
            analysis: analysis
                .iter()
                .filter(|a| a.step_id == Some(self.id))
                .map(|a| a.finding.clone())
                .collect(),
            intervals: intervals.map(|rows| {
                interval_docs(rows, self.params.as_ref().is_some_and(|p| p.fs.is_some()))
            }),
            hosts: Vec::new(),
            jobs: Vec::new(),
        }
    }
}

impl TargetFactsRow {
    /// The target as the run document shows it: path, kind and size as
    /// recorded, then the facts beside them.
    pub fn doc(&self) -> TargetDoc {
        let f = &self.facts;
        TargetDoc {
            path: self.path.clone(),
            kind: self.kind.clone(),
            size_bytes: self.size_bytes,
            device: f.device.clone(),
            model: f.model.clone(),
            rotational: f.rotational,
            scheduler: f.scheduler.clone(),
            logical_block_bytes: f.logical_block_bytes,
            physical_block_bytes: f.physical_block_bytes,
            filesystem: f.filesystem.clone(),
        }
    }
}

/// The stored rows (read, write, total per interval) regrouped into one
/// document per interval; `fs` for a file-system step's, whose reads and
/// writes are operation kinds of its own.
pub fn interval_docs(rows: &[IntervalRow], fs: bool) -> Vec<IntervalDoc> {
    rows.chunk_by(|a, b| a.seq == b.seq)
        .filter_map(|group| {
            let first = group.first()?;
            let op = |op: Op| {
                group
                    .iter()
                    .find(|r| r.op == op)
                    .map(IntervalRow::op_summary)
            };
            Some(IntervalDoc {
                seq: first.seq,
                t_s: first.t_s,
                duration_s: first.duration_s,
                warmup: first.warmup,
                read: op(Op::Read),
                write: op(Op::Write),
                trim: op(Op::Trim),
                total: op(Op::Total),
                fs_ops: if fs {
                    fs_ops_of(group)
                } else {
                    // A block step's sync calls.
                    fs_ops_of(group)
                        .into_iter()
                        .filter(|(op, _)| *op == FsOp::Fsync)
                        .collect()
                },
                cpu: IntervalCpu {
                    usr_pct: first.cpu_usr_pct,
                    sys_pct: first.cpu_sys_pct,
                },
                device: first.device,
                // Errors are stored on the total row only.
                errors: group
                    .iter()
                    .find(|r| r.op == Op::Total)
                    .map_or(0, |r| r.errors),
            })
        })
        .collect()
}

/// The file-system operations of one interval's rows: every kind counted.
fn fs_ops_of(group: &[IntervalRow]) -> BTreeMap<FsOp, OpSummary> {
    group
        .iter()
        .filter(|r| r.ops > 0)
        .filter_map(|r| r.op.fs().map(|f| (f, r.op_summary())))
        .collect()
}

/// The operations an interval is split into, each with its figures, in the
/// order the store keeps them: reads and writes always; trims, a block
/// workload's fsync/fdatasync calls and a file-system workload's other
/// kinds when there were any. The total is not among them.
pub fn op_parts(stats: &IntervalStats) -> Vec<(Op, &OpStats)> {
    let mut parts = vec![(Op::Read, &stats.read), (Op::Write, &stats.write)];
    if stats.trim.ops > 0 {
        parts.push((Op::Trim, &stats.trim));
    }
    if stats.meta.is_empty() && stats.sync.ops > 0 {
        parts.push((Op::of_fs(FsOp::Fsync), &stats.sync));
    }
    for op in FsOp::ALL {
        if matches!(op, FsOp::Read | FsOp::Write) {
            continue;
        }
        if let Some(s) = stats.meta.get(op.index()).filter(|s| s.ops > 0) {
            parts.push((Op::of_fs(op), s));
        }
    }
    parts
}

/// One stored storage-side figure of an interval (`--collect`), or a
/// source's failure for it (`name` empty, `value` None, `error` set).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ExternalRow {
    pub seq: u64,
    pub source: String,
    pub name: String,
    pub value: Option<f64>,
    pub error: Option<String>,
}
