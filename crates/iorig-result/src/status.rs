//! The closed sets of names a result uses: what made a run, where a run or
//! a step stands, a step's role, which I/Os a figure covers and which
//! latency a histogram holds. Each is spelled the same way in the JSON, the
//! store's TEXT columns (whose CHECKs hold the same sets) and the reports.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

names!(
    /// What made a run.
    RunKind {
        /// `iorig run`: one workload.
        Run,
        /// `iorig plan run`: a sequence of steps.
        Plan,
        /// `iorig quick`.
        Quick,
        /// `iorig profile`: observation of a device, no I/O of our own.
        Profile,
    }
);

names!(
    /// Where a run stands.
    RunStatus {
        Running,
        Ok,
        /// I/O errors or validation errors.
        Failed,
        /// Stopped by a signal or killed; a plan may be resumed.
        Interrupted,
    }
);

names!(
    /// Where a step stands.
    StepStatus {
        Pending,
        Running,
        Ok,
        Failed,
        Interrupted,
        Skipped,
    }
);

names!(
    /// Which I/Os a figure covers.
    Op {
        Read,
        Write,
        /// Trims (discards), `--trim`.
        Trim,
        /// Every operation together (merged histograms).
        Total,
        /// The metadata operations of a file-system workload (its reads
        /// and writes are `Read` and `Write`).
        Create,
        Delete,
        Mkdir,
        Rmdir,
        Open,
        Close,
        Stat,
        Setattr,
        Rename,
        Fsync,
        Readdir,
    }
);

impl Op {
    /// The stored operation of a file-system operation kind.
    pub fn of_fs(op: iorig_spec::FsOp) -> Op {
        use iorig_spec::FsOp as F;
        match op {
            F::Read => Op::Read,
            F::Write => Op::Write,
            F::Create => Op::Create,
            F::Delete => Op::Delete,
            F::Mkdir => Op::Mkdir,
            F::Rmdir => Op::Rmdir,
            F::Open => Op::Open,
            F::Close => Op::Close,
            F::Stat => Op::Stat,
            F::Setattr => Op::Setattr,
            F::Rename => Op::Rename,
            F::Fsync => Op::Fsync,
            F::Readdir => Op::Readdir,
        }
    }

    /// The file-system operation kind a stored operation is, if any.
    pub fn fs(self) -> Option<iorig_spec::FsOp> {
        iorig_spec::FsOp::ALL
            .into_iter()
            .find(|f| Op::of_fs(*f) == self)
    }
}

names!(
    /// Which latency a histogram holds.
    HistKind {
        /// From the scheduled start under a rate limit, else from submission.
        Lat,
        /// From actual submission; only recorded under a rate limit.
        ServiceLat,
    }
);

impl StepStatus {
    /// Done for the purpose of resuming: a resumed plan goes on after it.
    pub fn is_complete(self) -> bool {
        matches!(self, StepStatus::Ok | StepStatus::Skipped)
    }
}

impl From<StepStatus> for RunStatus {
    /// The status a single-step run takes from its step.
    fn from(s: StepStatus) -> RunStatus {
        match s {
            StepStatus::Pending | StepStatus::Running => RunStatus::Running,
            StepStatus::Ok | StepStatus::Skipped => RunStatus::Ok,
            StepStatus::Failed => RunStatus::Failed,
            StepStatus::Interrupted => RunStatus::Interrupted,
        }
    }
}

/// What a step is for, as stored and shown: `run`, `precondition`,
/// `curve-max`, `curve-50%`, `qd-cycle`, `skipped`, `profile`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StepRole {
    /// A plain measured step.
    Run,
    /// Writes the working set a number of times; ends by bytes.
    Precondition,
    /// The uncontrolled run that opens an IOPS–latency curve.
    CurveMax,
    /// A curve step at `pct` % of the curve's max IOPS.
    CurveRate { pct: f64 },
    /// A curve's bisection step, at a rate between two of its steps.
    CurveRefine,
    /// One queue depth of a queue-depth cycle.
    QdCycle,
    /// A step the plan skipped (its reason is a finding).
    Skipped,
    /// `iorig profile`: observation without I/O of our own.
    Profile,
}

impl From<&iorig_spec::plan::StepRole> for StepRole {
    fn from(r: &iorig_spec::plan::StepRole) -> StepRole {
        use iorig_spec::plan::StepRole as P;
        match r {
            P::Run => StepRole::Run,
            P::Precondition(_) => StepRole::Precondition,
            P::CurveMax { .. } => StepRole::CurveMax,
            P::CurveRate { pct, .. } => StepRole::CurveRate { pct: *pct },
            P::CurveRefine { .. } => StepRole::CurveRefine,
            P::QdCycle { .. } => StepRole::QdCycle,
        }
    }
}

impl fmt::Display for StepRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StepRole::Run => f.write_str("run"),
            StepRole::Precondition => f.write_str("precondition"),
            StepRole::CurveMax => f.write_str("curve-max"),
            StepRole::CurveRate { pct } => write!(f, "curve-{pct}%"),
            StepRole::CurveRefine => f.write_str("curve-refine"),
            StepRole::QdCycle => f.write_str("qd-cycle"),
            StepRole::Skipped => f.write_str("skipped"),
            StepRole::Profile => f.write_str("profile"),
        }
    }
}

/// A stored role that is none of the known ones.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown step role '{0}'")]
pub struct UnknownRole(pub String);

impl FromStr for StepRole {
    type Err = UnknownRole;

    fn from_str(s: &str) -> Result<StepRole, UnknownRole> {
        Ok(match s {
            "run" => StepRole::Run,
            "precondition" => StepRole::Precondition,
            "curve-max" => StepRole::CurveMax,
            "curve-refine" => StepRole::CurveRefine,
            "qd-cycle" => StepRole::QdCycle,
            "skipped" => StepRole::Skipped,
            "profile" => StepRole::Profile,
            other => {
                let pct = other
                    .strip_prefix("curve-")
                    .and_then(|p| p.strip_suffix('%'))
                    .and_then(|p| p.parse::<f64>().ok())
                    .filter(|p| p.is_finite() && *p > 0.0)
                    .ok_or_else(|| UnknownRole(other.to_owned()))?;
                StepRole::CurveRate { pct }
            }
        })
    }
}

impl Serialize for StepRole {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for StepRole {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<StepRole, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::VariantArray;

    #[test]
    fn every_name_reads_back() {
        for s in StepStatus::VARIANTS {
            assert_eq!(s.as_str().parse::<StepStatus>().ok(), Some(*s));
            assert_eq!(
                serde_json::to_string(s).ok(),
                Some(format!("\"{}\"", s.as_str()))
            );
        }
        assert_eq!(HistKind::ServiceLat.as_str(), "service_lat");
        assert_eq!(
            "interrupted".parse::<RunStatus>().ok(),
            Some(RunStatus::Interrupted)
        );
        assert!("paused".parse::<RunStatus>().is_err());
    }

    #[test]
    fn roles_read_back_with_their_share() {
        for r in [
            StepRole::Run,
            StepRole::Precondition,
            StepRole::CurveMax,
            StepRole::CurveRate { pct: 50.0 },
            StepRole::CurveRate { pct: 12.5 },
            StepRole::QdCycle,
            StepRole::Skipped,
            StepRole::Profile,
        ] {
            assert_eq!(r.to_string().parse::<StepRole>(), Ok(r));
        }
        assert_eq!(StepRole::CurveRate { pct: 50.0 }.to_string(), "curve-50%");
        assert!("curve-%".parse::<StepRole>().is_err());
        assert!("measure".parse::<StepRole>().is_err());
    }
}
