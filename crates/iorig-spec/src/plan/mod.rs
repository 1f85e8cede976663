//! Test plans: an ordered list of steps (plain runs, preconditioning, IOPS–latency
//! curves, queue-depth cycles), any of which may sweep workload parameters.
//!
//! A plan is parsed from TOML ([`Plan::from_toml`]) into blocks that still hold
//! lists, then [`Plan::expand`] turns every block into concrete [`PlanStep`]s, one
//! per combination of swept values, each carrying a scalar [`WorkloadFile`] that is
//! checked with [`WorkloadFile::resolve`] before anything runs. What only the runner
//! can know (the target's size, the measured max IOPS, the bytes a step wrote) is
//! left as data on the step: [`Pause::WrittenBytesAt`], [`StepRole::CurveRate`],
//! [`PlanStep::hot_size_bytes`]. The format is documented in `docs/plans.md`.

mod builtin;
mod expand;
mod parse;
#[cfg(test)]
mod tests;

pub use builtin::{builtin, builtin_text, builtins};
pub use expand::estimate_duration;
pub use parse::kind_owns;

use crate::units::parse_size;
use crate::{DataPattern, SpecError, WorkloadFile};
use std::time::Duration;

/// The working set of a hot-data step: the first `Bytes` of each target, or the
/// first `Pct` percent of it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum HotSize {
    Bytes(u64),
    Pct(f64),
    /// `"75% of cache"`: a share of each host's cache, split evenly over
    /// that host's targets (sized where the targets are known; see
    /// [`HostSizing`]).
    OfCache(f64),
}

impl HotSize {
    /// The default hot size of a plan: a tenth of the target, small enough to fit
    /// a typical cache tier yet large enough not to live in a controller's RAM.
    pub const DEFAULT: HotSize = HotSize::Pct(10.0);

    /// Parses `8g`, `512m` (a size above 0), `10%` (above 0, at most 100)
    /// or `75% of cache` (above 0, at most 10000).
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let t = text.trim();
        if let Some(p) = t.strip_suffix("of cache") {
            let pct = p
                .trim()
                .strip_suffix('%')
                .and_then(|p| p.trim().parse::<f64>().ok())
                .ok_or_else(|| {
                    SpecError::bad(
                        "hot_size",
                        text,
                        "write a share of the cache as e.g. 75% of cache",
                    )
                })?;
            if !(pct > 0.0 && pct <= 10_000.0) {
                return Err(SpecError::bad(
                    "hot_size",
                    text,
                    "a share of the cache must be above 0 and at most 10000%",
                ));
            }
            return Ok(HotSize::OfCache(pct));
        }
        if let Some(p) = t.strip_suffix('%') {
            let pct: f64 = p.trim().parse().map_err(|_| {
                SpecError::bad("hot_size", text, "not a percentage; write e.g. 10% or 8g")
            })?;
            if !(pct > 0.0 && pct <= 100.0) {
                return Err(SpecError::bad(
                    "hot_size",
                    text,
                    "a percentage must be above 0 and at most 100",
                ));
            }
            return Ok(HotSize::Pct(pct));
        }
        let bytes = parse_size(t)?;
        if bytes == 0 {
            return Err(SpecError::bad(
                "hot_size",
                text,
                "size 0; give e.g. 8g or 10%",
            ));
        }
        Ok(HotSize::Bytes(bytes))
    }
}

/// What a step sizes from each host's own targets and cache once they are
/// known (on that host: its targets' count and sizes, its cache): the
/// rules of an HCIBench-style easy run (`docs/plans.md`, "Sizing from the
/// cache"). Empty: the workload is run as written.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct HostSizing {
    /// The working set as this share (%) of the host's cache, split evenly
    /// over its targets, from the start of each.
    pub cache_pct: Option<f64>,
    /// The cache of each host (`cache_size`, `--cache-size`); `None`: found
    /// on the host where the system exposes it, else assumed.
    pub cache_bytes: Option<u64>,
    /// Workers per target: a host runs this × its target count.
    pub threads_per_target: Option<u32>,
}

impl HostSizing {
    pub fn is_empty(&self) -> bool {
        self.cache_pct.is_none() && self.threads_per_target.is_none()
    }
}

/// What to do after a step before the next one starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Pause {
    None,
    Fixed(Duration),
    /// Rest for (bytes the step wrote) ÷ `bytes_per_s`: lets a flash array's
    /// garbage collection catch up before the next step (`pause_mb_per_s`).
    WrittenBytesAt {
        bytes_per_s: f64,
    },
}

/// Measure in rounds until the rate is steady or `max_rounds` have run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SteadyStateSpec {
    /// Length of one measured round.
    pub round: Duration,
    pub max_rounds: u32,
    /// Number of most recent rounds judged together for steadiness.
    pub window: u32,
    /// What "steady" means over the window.
    pub rule: SteadyRule,
    /// Rounds before this time are measured but not judged (fio's
    /// `ss_ramp`).
    pub ramp: Duration,
}

/// How the rounds of a window are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SteadyRule {
    /// SNIA PTS: range within 20 % of the mean and the fitted line's
    /// excursion within 10 %.
    Pts,
    /// Every round within this many thousandths of a percent of the mean
    /// (fio's `ss=iops:X%`).
    DeviationMilliPct(u32),
    /// The fitted line's slope per round within this many thousandths of a
    /// percent of the mean (fio's `ss=iops_slope:X%`).
    SlopeMilliPct(u32),
}

impl SteadyRule {
    /// `pts`, `deviation:10%` or `slope:0.5%`.
    pub fn parse(text: &str) -> Result<Self, String> {
        let t = text.trim();
        if t == "pts" {
            return Ok(SteadyRule::Pts);
        }
        let bad = || {
            format!("steady_state.rule '{text}': give pts, deviation:PCT% or slope:PCT% (e.g. deviation:10%)")
        };
        let (kind, pct) = t.split_once(':').ok_or_else(bad)?;
        let v: f64 = pct
            .trim()
            .strip_suffix('%')
            .ok_or_else(bad)?
            .trim()
            .parse()
            .map_err(|_| bad())?;
        if !(v.is_finite() && v > 0.0 && v <= 1000.0) {
            return Err(bad());
        }
        let milli = (v * 1000.0).round().max(1.0) as u32;
        match kind.trim() {
            "deviation" => Ok(SteadyRule::DeviationMilliPct(milli)),
            "slope" => Ok(SteadyRule::SlopeMilliPct(milli)),
            _ => Err(bad()),
        }
    }
}

impl std::fmt::Display for SteadyRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = |m: u32| m as f64 / 1000.0;
        match self {
            SteadyRule::Pts => write!(f, "pts"),
            SteadyRule::DeviationMilliPct(m) => write!(f, "deviation:{}%", pct(*m)),
            SteadyRule::SlopeMilliPct(m) => write!(f, "slope:{}%", pct(*m)),
        }
    }
}

impl SteadyStateSpec {
    /// One-minute rounds, judged over the last 5 (as SNIA PTS does), for at
    /// most 10 rounds.
    pub const DEFAULT: SteadyStateSpec = SteadyStateSpec {
        round: Duration::from_secs(60),
        max_rounds: 10,
        window: 5,
        rule: SteadyRule::Pts,
        ramp: Duration::ZERO,
    };

    /// Rounds at the start that are not judged (those starting before
    /// `ramp`).
    pub fn ramp_rounds(&self) -> usize {
        let r = self.round.as_secs_f64();
        if r <= 0.0 {
            return 0;
        }
        (self.ramp.as_secs_f64() / r - 1e-9).ceil().max(0.0) as usize
    }
}

/// Fill each target `passes` times before measuring anything.
#[derive(Debug, Clone, PartialEq)]
pub struct PreconditionSpec {
    pub passes: u32,
    /// Random offsets (each pass writes as many bytes as the target holds, so some
    /// blocks are written twice and some not at all) instead of a sequential sweep.
    pub random: bool,
    pub bs_bytes: u64,
    pub data: DataPattern,
    /// Discard the whole working set first (SNIA PTS's purge of flash).
    pub trim: bool,
}

/// Why a step exists and what the runner must fill in before running it.
#[derive(Debug, Clone, PartialEq)]
pub enum StepRole {
    Run,
    /// Write the whole target; `time` is `None` because the step ends by bytes.
    Precondition(PreconditionSpec),
    /// The uncontrolled run (rate = max) that opens curve `group`.
    CurveMax {
        group: u32,
    },
    /// A run at `pct` % of the max IOPS measured by the `CurveMax` step of the same
    /// group; the runner sets the workload's `rate`.
    CurveRate {
        group: u32,
        pct: f64,
    },
    /// Round `round` (from 1) of a curve's refinement: the runner sets the
    /// rate halfway between the highest rate that held the latency target
    /// and the lowest one above it that did not, as measured by the group's
    /// steps so far (a bisection on the curve's answer).
    CurveRefine {
        group: u32,
        round: u32,
    },
    /// One queue depth of queue-depth cycle `group` (the depth is the workload's `qd`).
    QdCycle {
        group: u32,
    },
}

impl StepRole {
    /// A curve step the runner paces at a rate it sets (a share of the max,
    /// or a refinement's bisection).
    pub fn paced_by_curve(&self) -> bool {
        matches!(
            self,
            StepRole::CurveRate { .. } | StepRole::CurveRefine { .. }
        )
    }

    /// The curve group of a curve step.
    pub fn curve_group(&self) -> Option<u32> {
        match self {
            StepRole::CurveMax { group }
            | StepRole::CurveRate { group, .. }
            | StepRole::CurveRefine { group, .. } => Some(*group),
            _ => None,
        }
    }
}

/// One of the workloads a step runs at once (the plan's `jobs`, a fio job,
/// a vdbench workload definition).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanJob {
    /// Unique within the step.
    pub name: String,
    /// The step's keys with the job's own over them; resolves without error.
    pub workload: WorkloadFile,
    /// When this job ends, the step's other jobs end too (fio's `exitall`).
    pub exitall: bool,
}

/// The latency percentiles every step's summary keeps (`p50` … `p99_99`,
/// and 100 for the maximum): the ones a curve's `threshold_percentile` can
/// judge exactly, on a resumed plan too.
pub const THRESHOLD_PERCENTILES: [f64; 6] = [50.0, 90.0, 99.0, 99.9, 99.99, 100.0];

/// One concrete step of an expanded plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanStep {
    /// Position in the expanded list, from 0 (stable, so a run can be resumed).
    pub index: usize,
    /// The `[[steps]]` block it came from, counted from 1.
    pub block: usize,
    /// The block's `name`, if it has one.
    pub name: Option<String>,
    /// Human-readable and unique within a block: the name, the role and the
    /// swept values, e.g. `read=70 bs=8k threads=4`.
    pub label: String,
    pub role: StepRole,
    /// Every parameter as a scalar, `[defaults]` under the block's own values,
    /// targets and size from the plan; resolves without error.
    pub workload: WorkloadFile,
    pub warmup: Duration,
    /// Measured time, or the length of one round under `steady_state`; `None`
    /// for a precondition, which ends when its bytes are written.
    pub time: Option<Duration>,
    pub pause: Pause,
    pub steady_state: Option<SteadyStateSpec>,
    /// Limit the working set to the first this many bytes of each target (the
    /// runner turns it into a range once it knows the target's size). A hot size
    /// given in percent is already a `range` in the workload.
    pub hot_size_bytes: Option<u64>,
    /// What is sized from each host's own targets and cache when the step
    /// runs (a working set of `N% of cache`, `threads_per_target`).
    pub sizing: HostSizing,
    /// Curve steps: stop stepping up once latency exceeds this.
    pub stop_latency_ms: Option<f64>,
    /// Curve steps: the latency target of the sweet-spot answer.
    pub threshold_ms: Option<f64>,
    /// Curve steps: the percentile of latency also judged against
    /// `threshold_ms` (one of [`THRESHOLD_PERCENTILES`]; fio's
    /// `latency_percentile`).
    pub threshold_percentile: Option<f64>,
    /// The swept values that make this step, outermost axis first, as written
    /// (`("bs", "8k")`).
    pub axes: Vec<(String, String)>,
    /// Workloads run at once in this step, each with its own workers (empty:
    /// the step runs `workload` alone). `workload` is then what they share.
    pub jobs: Vec<PlanJob>,
}

/// A parsed test plan; see `docs/plans.md` for the format.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Where the plan came from, for messages (`builtin:matrix` for built-ins).
    pub path: String,
    /// `name`, or the file name without `.toml`.
    pub name: String,
    pub description: Option<String>,
    /// `targets`; the command line's `--target` replaces them.
    pub targets: Option<Vec<String>>,
    /// `size` for scratch files iorig creates.
    pub size_bytes: Option<u64>,
    /// What `hot = true` in a step means.
    pub hot_size: HotSize,
    /// `cache_size`: each host's cache, for working sets given as a share
    /// of it (`--cache-size` replaces it).
    pub cache_size_bytes: Option<u64>,
    /// The directory of the file-system steps (set by the runner when the
    /// plan's one target is a directory); it replaces every step's targets.
    pub anchor: Option<String>,
    /// Every file-system step's `files` and `file_size` (`plan run --files`,
    /// `--file-size`).
    pub files: Option<String>,
    pub file_size: Option<String>,
    /// `[hosts]`: the agents every step runs on (the command line's
    /// `--hosts`/`--hosts-file` replace them).
    pub hosts: Option<PlanHosts>,
    defaults: parse::Block,
    steps: Vec<parse::Block>,
    step_time: Option<Duration>,
}

/// A plan's `[hosts]` table: `list` (`HOST[:PORT]` entries) or `file` (a
/// hosts file, relative to the plan), and optionally `token_file`, `lease`
/// and `skew_limit` as the command line's flags of the same names.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct PlanHosts {
    pub list: Option<Vec<String>>,
    pub file: Option<String>,
    pub token_file: Option<String>,
    pub lease: Option<String>,
    pub skew_limit: Option<String>,
}

impl Plan {
    /// Parses a plan's text; `path` is used in messages and for the default name.
    /// Unknown keys and wrongly typed values are rejected here, naming the key and
    /// the step; values are fully checked by [`Plan::expand`].
    pub fn from_toml(path: &str, text: &str) -> Result<Plan, SpecError> {
        parse::parse_plan(path, text)
    }

    /// Expands every block into concrete steps and resolves each step's workload.
    pub fn expand(&self) -> Result<Vec<PlanStep>, SpecError> {
        expand::expand(self)
    }

    /// Sets every measured step's time (and steady-state round) to `step_time`,
    /// so that a long plan can be tried in minutes. Warmup and fixed pauses shrink
    /// by the same factor (`step_time` ÷ the step's time or round), each capped at
    /// `step_time`; a precondition's fixed pause is only capped. Preconditions
    /// themselves and `pause_mb_per_s` are unchanged: both follow from bytes written.
    pub fn with_step_time(mut self, step_time: Duration) -> Plan {
        self.step_time = Some(step_time);
        self
    }

    /// Number of `[[steps]]` blocks as written (before expansion).
    pub fn block_count(&self) -> usize {
        self.steps.len()
    }
}
