//! Counters and histograms of one interval, per operation.

use crate::{LatSummary, LatencyHistogram};
use iorig_spec::FsOp;
use serde::{Deserialize, Serialize};

/// Operations of one kind (read or write) in one interval or run.
#[derive(Clone, Debug, Default)]
pub struct OpStats {
    pub ops: u64,
    pub bytes: u64,
    /// Latency of completed I/Os: from the scheduled start under a rate limit,
    /// from the moment the worker issued the I/O otherwise.
    pub lat: LatencyHistogram,
    /// From actual submission; only recorded under a rate limit.
    pub service_lat: LatencyHistogram,
    /// Sum over completed I/Os of the time from actual submission to
    /// completion, always kept (one addition per I/O): its mean is the time
    /// an I/O really spent outside the generator, which Little's law needs.
    pub service_sum_ns: u64,
}

impl OpStats {
    pub fn merge(&mut self, other: &OpStats) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.lat.merge(&other.lat);
        self.service_lat.merge(&other.service_lat);
        self.service_sum_ns += other.service_sum_ns;
    }

    pub fn reset(&mut self) {
        self.ops = 0;
        self.bytes = 0;
        self.lat.reset();
        self.service_lat.reset();
        self.service_sum_ns = 0;
    }

    /// Mean time from actual submission to completion, ns (0 without I/O).
    pub fn service_mean_ns(&self) -> f64 {
        if self.ops == 0 {
            0.0
        } else {
            self.service_sum_ns as f64 / self.ops as f64
        }
    }

    /// Figures over `duration_s` seconds.
    pub fn summary(&self, duration_s: f64) -> OpSummary {
        let per_s = |v: u64| {
            if duration_s > 0.0 {
                v as f64 / duration_s
            } else {
                0.0
            }
        };
        OpSummary {
            ops: self.ops,
            bytes: self.bytes,
            iops: per_s(self.ops),
            bw_bytes_per_s: per_s(self.bytes),
            lat_ns: self.lat.summary(),
            service_lat_ns: if self.service_lat.is_empty() {
                None
            } else {
                Some(self.service_lat.summary())
            },
        }
    }
}

/// The JSON form of an [`OpStats`] (schema iorig.result/1).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpSummary {
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_ns: LatSummary,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_lat_ns: Option<LatSummary>,
}

/// Reads and writes of one interval (or of a whole run, when merged).
#[derive(Clone, Debug, Default)]
pub struct IntervalStats {
    pub read: OpStats,
    pub write: OpStats,
    /// Trims (discards); empty for a workload without them.
    pub trim: OpStats,
    /// I/Os that failed (counted, not timed).
    pub errors: u64,
    /// A file-system workload's other operations, by [`FsOp::index`]
    /// (reads and writes are `read` and `write`); empty for block
    /// workloads.
    pub meta: Vec<OpStats>,
    /// A file-system workload's requested operations: those of its mix
    /// (each transfer of a read or write, each create, stat, …), not the
    /// opens and closes around transfers nor the writes inside a create,
    /// which count only in their own kinds. Its total.
    pub requested: OpStats,
    /// A block workload's fsync/fdatasync calls (`fsync_every`,
    /// `fdatasync_every`): timed, not in the total. A file-system
    /// workload's are in `meta`.
    pub sync: OpStats,
    /// Issue lag of scheduled I/Os (under a rate, or a replay at the
    /// trace's times): actual submission minus the time the I/O could first
    /// go out (its scheduled time, or later when every slot was busy then,
    /// which is the storage's backlog and not lateness). The tool's own
    /// delay, counted in `lat` because latency runs from the schedule. Empty
    /// for unpaced work.
    pub issue_lag: LatencyHistogram,
}

impl IntervalStats {
    pub fn merge(&mut self, other: &IntervalStats) {
        self.read.merge(&other.read);
        self.write.merge(&other.write);
        self.trim.merge(&other.trim);
        self.errors += other.errors;
        if self.meta.len() < other.meta.len() {
            self.meta.resize_with(other.meta.len(), OpStats::default);
        }
        for (m, o) in self.meta.iter_mut().zip(&other.meta) {
            m.merge(o);
        }
        self.requested.merge(&other.requested);
        self.sync.merge(&other.sync);
        self.issue_lag.merge(&other.issue_lag);
    }

    pub fn reset(&mut self) {
        self.read.reset();
        self.write.reset();
        self.trim.reset();
        self.errors = 0;
        self.meta.iter_mut().for_each(OpStats::reset);
        self.requested.reset();
        self.sync.reset();
        self.issue_lag.reset();
    }

    /// Every operation together, from merged histograms: reads, writes and
    /// trims of a block workload; a file-system workload's requested
    /// operations.
    pub fn total(&self) -> OpStats {
        if !self.meta.is_empty() {
            return self.requested.clone();
        }
        let mut t = self.read.clone();
        t.merge(&self.write);
        t.merge(&self.trim);
        t
    }

    /// The operations [`IntervalStats::total`] counts.
    pub fn ops(&self) -> u64 {
        if !self.meta.is_empty() {
            return self.requested.ops;
        }
        self.read.ops + self.write.ops + self.trim.ops
    }

    /// One kind of file-system operation (None when none was counted).
    pub fn fs_op(&self, op: FsOp) -> Option<&OpStats> {
        match op {
            FsOp::Read => Some(&self.read),
            FsOp::Write => Some(&self.write),
            FsOp::Fsync if self.meta.is_empty() => Some(&self.sync),
            _ => self.meta.get(op.index()),
        }
        .filter(|s| s.ops > 0)
    }
}
