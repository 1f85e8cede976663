//! What the analysis of a step or a plan found: one typed value per kind,
//! stored in the store's `analysis` table (its `kind` column and JSON) and
//! shown by `runs show`, the reports and the exports.

use iorig_stats::analysis::{
    CurveAnalysis, CurvePoint, GeneratorDip, LittleVerdict, OutageReport, SteadyStateVerdict,
    WriteCliff,
};
use serde::{Deserialize, Serialize};

/// One finding. Serialised externally tagged, `{"outages": {...}}`, which is
/// how a step's findings appear keyed by kind in `runs show --json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Finding {
    /// Little's law: were the I/Os really in flight, or did the generator
    /// set the pace?
    GeneratorBound(LittleVerdict),
    /// A paced step's achieved rate against the requested one.
    Rate(RateCheck),
    /// Intervals without a completed I/O, and the longest gap.
    Outages(OutageReport),
    /// A sustained drop of write IOPS.
    WriteCliff(WriteCliffFinding),
    /// Whether a step measured in rounds reached steady state.
    SteadyState(SteadyStateFinding),
    /// What a precondition wrote.
    Precondition(PreconditionFinding),
    /// Why a plan skipped a step.
    Skipped(SkippedFinding),
    /// A plan's IOPS–latency curve: max, best under the latency threshold,
    /// knee.
    Curve(Box<CurveFinding>),
    /// `iorig profile`: the devices covered and the per-interval figures,
    /// as the profile crate writes them (shown whole, never read by field).
    ProfileDevices(serde_json::Value),
    ProfileIntervals(serde_json::Value),
    /// `iorig profile`: the verdicts of each rule set.
    Rules(Vec<iorig_profile::rules::Evaluation>),
    /// `iorig trace replay`: the trace and how close to its times it ran.
    Replay(crate::ReplayReport),
}

names!(
    /// The kind of a [`Finding`]: the store's `analysis.kind`.
    FindingKind {
        GeneratorBound,
        Rate,
        Outages,
        WriteCliff,
        SteadyState,
        Precondition,
        Skipped,
        Curve,
        ProfileDevices,
        ProfileIntervals,
        Rules,
        Replay,
    }
);

/// A stored finding that cannot be read back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FindingError {
    #[error("unknown finding kind '{0}'")]
    UnknownKind(String),
    #[error("finding '{kind}': {source}")]
    Json {
        kind: FindingKind,
        #[source]
        source: serde_json::Error,
    },
}

impl Finding {
    pub fn kind(&self) -> FindingKind {
        match self {
            Finding::GeneratorBound(_) => FindingKind::GeneratorBound,
            Finding::Rate(_) => FindingKind::Rate,
            Finding::Outages(_) => FindingKind::Outages,
            Finding::WriteCliff(_) => FindingKind::WriteCliff,
            Finding::SteadyState(_) => FindingKind::SteadyState,
            Finding::Precondition(_) => FindingKind::Precondition,
            Finding::Skipped(_) => FindingKind::Skipped,
            Finding::Curve(_) => FindingKind::Curve,
            Finding::ProfileDevices(_) => FindingKind::ProfileDevices,
            Finding::ProfileIntervals(_) => FindingKind::ProfileIntervals,
            Finding::Rules(_) => FindingKind::Rules,
            Finding::Replay(_) => FindingKind::Replay,
        }
    }

    /// The finding's own JSON (without its kind), as the store keeps it.
    pub fn body_json(&self) -> Result<String, serde_json::Error> {
        match self {
            Finding::GeneratorBound(v) => serde_json::to_string(v),
            Finding::Rate(v) => serde_json::to_string(v),
            Finding::Outages(v) => serde_json::to_string(v),
            Finding::WriteCliff(v) => serde_json::to_string(v),
            Finding::SteadyState(v) => serde_json::to_string(v),
            Finding::Precondition(v) => serde_json::to_string(v),
            Finding::Skipped(v) => serde_json::to_string(v),
            Finding::Curve(v) => serde_json::to_string(v),
            Finding::ProfileDevices(v) | Finding::ProfileIntervals(v) => serde_json::to_string(v),
            Finding::Rules(v) => serde_json::to_string(v),
            Finding::Replay(v) => serde_json::to_string(v),
        }
    }

    /// The finding's own JSON value (without its kind), for documents that
    /// key findings by kind.
    pub fn body_value(&self) -> Result<serde_json::Value, serde_json::Error> {
        serde_json::from_str(&self.body_json()?)
    }

    /// A finding from its stored kind and JSON.
    pub fn from_stored(kind: &str, json: &str) -> Result<Finding, FindingError> {
        let kind: FindingKind = kind
            .parse()
            .map_err(|_| FindingError::UnknownKind(kind.to_owned()))?;
        let err = |source| FindingError::Json { kind, source };
        Ok(match kind {
            FindingKind::GeneratorBound => {
                Finding::GeneratorBound(serde_json::from_str(json).map_err(err)?)
            }
            FindingKind::Rate => Finding::Rate(serde_json::from_str(json).map_err(err)?),
            FindingKind::Outages => Finding::Outages(serde_json::from_str(json).map_err(err)?),
            FindingKind::WriteCliff => {
                Finding::WriteCliff(serde_json::from_str(json).map_err(err)?)
            }
            FindingKind::SteadyState => {
                Finding::SteadyState(serde_json::from_str(json).map_err(err)?)
            }
            FindingKind::Precondition => {
                Finding::Precondition(serde_json::from_str(json).map_err(err)?)
            }
            FindingKind::Skipped => Finding::Skipped(serde_json::from_str(json).map_err(err)?),
            FindingKind::Replay => Finding::Replay(serde_json::from_str(json).map_err(err)?),
            FindingKind::Curve => Finding::Curve(serde_json::from_str(json).map_err(err)?),
            FindingKind::ProfileDevices => {
                Finding::ProfileDevices(serde_json::from_str(json).map_err(err)?)
            }
            FindingKind::ProfileIntervals => {
                Finding::ProfileIntervals(serde_json::from_str(json).map_err(err)?)
            }
            FindingKind::Rules => Finding::Rules(serde_json::from_str(json).map_err(err)?),
        })
    }
}

/// A paced step's rate: met when within `tolerance_pct`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateCheck {
    pub requested_iops: f64,
    pub achieved_iops: f64,
    pub error_pct: f64,
    pub met: bool,
    pub tolerance_pct: f64,
}

/// Whether a write cliff was looked for and found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteCliffFinding {
    pub found: bool,
    pub cliff: Option<WriteCliff>,
    /// When the step was shorter than twice the baseline: the time it needs
    /// for a verdict (nothing was judged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub needs_s: Option<f64>,
    /// A lasting drop while the host CPU or a worker was the limit: the
    /// generator's, reported as that and never as a cliff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator_dip: Option<GeneratorDip>,
}

/// The steady-state verdict of a step measured in rounds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SteadyStateFinding {
    pub reached: bool,
    /// Rounds measured.
    pub rounds: u64,
    pub round_s: f64,
    pub max_rounds: u64,
    /// Rounds the verdict judges together.
    pub window: u64,
    /// The round at which steady state was reached.
    pub rounds_needed: Option<u64>,
    pub time_needed_s: Option<f64>,
    pub round_iops: Vec<f64>,
    pub verdict: SteadyStateVerdict,
    /// The rule judged by, when not SNIA PTS (`deviation:10%`, `slope:1%`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Rounds at the start that were measured but not judged.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ramp_rounds: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl SteadyStateFinding {
    /// The judged window (the last `window` rounds up to the verdict), in
    /// seconds from `measured_start_s`; `None` with fewer rounds than
    /// `window`.
    pub fn window_s(&self, measured_start_s: f64) -> Option<(f64, f64)> {
        let end_round = match (self.reached, self.rounds_needed) {
            (true, Some(r)) => r,
            _ => self.rounds,
        };
        (self.window > 0 && end_round >= self.window && self.round_s > 0.0).then(|| {
            (
                measured_start_s + (end_round - self.window) as f64 * self.round_s,
                measured_start_s + end_round as f64 * self.round_s,
            )
        })
    }
}

/// What a precondition wrote.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreconditionFinding {
    pub passes: u32,
    pub written_bytes: u64,
    pub duration_s: f64,
    pub bw_bytes_per_s: f64,
    /// With `trim = true`: the bytes the trim pass discarded first, and
    /// its time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trimmed_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_s: Option<f64>,
}

/// Why a step was skipped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkippedFinding {
    pub why: String,
}

/// One IOPS–latency curve of a plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveFinding {
    /// The curve's group in the plan, from 0.
    pub group: u32,
    /// What sets it apart from the plan's other curves ("bs=64k"); absent
    /// for a lone curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    pub threshold_ms: f64,
    /// Plan indexes (from 0) of its steps, in load order.
    pub steps: Vec<usize>,
    pub points: Vec<CurvePoint>,
    pub analysis: CurveAnalysis,
    /// Step numbers (from 1) of the best points.
    pub best_under_mean_step: Option<usize>,
    pub best_under_p99_step: Option<usize>,
    /// The percentile also judged against the threshold (a curve step's
    /// `threshold_percentile`, fio's `latency_percentile`), and the step
    /// number of its best point.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_percentile: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_under_pct_step: Option<usize>,
    /// Step numbers of the points past the threshold the bests were
    /// interpolated toward: a best with one lies between its step and this
    /// one, and is no step's measured IOPS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_under_mean_toward_step: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_under_p99_toward_step: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_under_pct_toward_step: Option<usize>,
    /// Steps that ran off their rate (not counted for the best).
    #[serde(default)]
    pub off_rate: Vec<OffRatePoint>,
    /// Step numbers of paced steps slower than the next higher-rate step
    /// beyond their spread ([`CurveAnalysis::non_monotone_points`]): the
    /// answer stands on a curve with a disturbance in it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub non_monotone_steps: Vec<usize>,
}

/// A curve step that missed its requested rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OffRatePoint {
    /// Step number, from 1.
    pub step: Option<usize>,
    pub requested_iops: Option<f64>,
    pub achieved_iops: f64,
    pub error_pct: Option<f64>,
}
