//! What goes into the store and what comes out of it.

use crate::StoreError;
use iorig_stats::{CpuUsage, DeviceUsage, IntervalStats, LatSummary, OpSummary};
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

/// Declares a closed set of names stored as TEXT (the schema CHECKs the same
/// set), with its SQL/JSON spelling both ways.
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident, $column:literal { $($(#[$vmeta:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The stored spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// The value of a stored spelling.
            pub fn parse(text: &str) -> Result<$name, StoreError> {
                match text {
                    $($text => Ok($name::$variant),)+
                    other => Err(StoreError::BadValue {
                        column: $column,
                        value: other.to_owned(),
                    }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

text_enum!(
    /// What made a run.
    RunKind, "runs.kind" {
        /// `iorig run`: one workload.
        Run = "run",
        /// `iorig plan run`: a sequence of steps.
        Plan = "plan",
        /// `iorig quick`.
        Quick = "quick",
        /// `iorig profile`: observation of a device, no I/O of our own.
        Profile = "profile",
    }
);

text_enum!(
    /// Where a run stands.
    RunStatus, "runs.status" {
        Running = "running",
        Ok = "ok",
        Failed = "failed",
        /// Stopped by Ctrl-C or killed; a plan may be resumed.
        Interrupted = "interrupted",
    }
);

text_enum!(
    /// Where a step stands.
    StepStatus, "steps.status" {
        Pending = "pending",
        Running = "running",
        Ok = "ok",
        Failed = "failed",
        Interrupted = "interrupted",
        Skipped = "skipped",
    }
);

text_enum!(
    /// Which I/Os a figure covers.
    Op, "op" {
        Read = "read",
        Write = "write",
        /// Reads and writes together (merged histograms).
        Total = "total",
    }
);

text_enum!(
    /// Which latency a histogram holds.
    HistKind, "histograms.kind" {
        /// From the scheduled start under a rate limit, else from submission.
        Lat = "lat",
        /// From actual submission; only recorded under a rate limit.
        ServiceLat = "service_lat",
    }
);

impl StepStatus {
    /// Done for the purpose of resuming: a resumed plan goes on after it.
    pub fn is_complete(self) -> bool {
        matches!(self, StepStatus::Ok | StepStatus::Skipped)
    }
}

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

/// A step of a run; `params` is a serialized `WorkloadRecord` (any JSON
/// object is accepted; fields it lacks leave the searchable columns NULL).
#[derive(Clone, Copy, Debug)]
pub struct NewStep<'a> {
    /// Position in the plan, from 0; unique within the run.
    pub index: i64,
    pub name: &'a str,
    /// What the step is for in its method (`precondition`, `measure`, ...).
    pub role: &'a str,
    pub params: &'a serde_json::Value,
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
    pub role: String,
    pub status: StepStatus,
    pub params: serde_json::Value,
    pub summary: Option<serde_json::Value>,
    pub started: Option<String>,
    pub ended: Option<String>,
}

/// A stored analysis result.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AnalysisRow {
    pub id: i64,
    pub run_id: RunId,
    pub step_id: Option<StepId>,
    pub kind: String,
    pub json: serde_json::Value,
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
        }
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

    /// The read, write and total rows of one interval, for
    /// [`crate::Store::add_intervals`]. Errors are not attributed to an
    /// operation by the engine, so they go on the total row only.
    pub fn rows_of(
        seq: u64,
        t_s: f64,
        duration_s: f64,
        warmup: bool,
        stats: &IntervalStats,
        cpu: CpuUsage,
        device: Option<DeviceUsage>,
    ) -> [IntervalRow; 3] {
        let row = |op, s: &OpSummary| {
            IntervalRow::from_op(seq, t_s, duration_s, warmup, op, s).with_host(cpu, device)
        };
        [
            row(Op::Read, &stats.read.summary(duration_s)),
            row(Op::Write, &stats.write.summary(duration_s)),
            row(Op::Total, &stats.total().summary(duration_s)).with_errors(stats.errors),
        ]
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
