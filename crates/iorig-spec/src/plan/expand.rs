//! Blocks → concrete steps: cartesian sweeps, curve and queue-depth expansion,
//! validation of every step's workload, and the duration estimate.

use super::parse::{
    kind_owns, plan_error, scalar_text, size_text, sweeps, Block, HotRef, KindParams, Place,
};
use super::{HostSizing, HotSize, Pause, Plan, PlanJob, PlanStep, PreconditionSpec, StepRole};
use crate::units::format_size;
use crate::{
    key, EngineKind, OneOrMany, Role, SpecError, StrOrNum, WorkloadFile, DEFAULT_SIZE_BYTES,
};
use std::time::Duration;
use toml::{Table, Value};

/// More expanded steps than this is a typo in a sweep, not a test anyone can run
/// (even at 1 s each it would take days).
const MAX_EXPANDED_STEPS: usize = 1_000_000;

/// A precondition's queue depth unless it sets one: enough to keep a device busy
/// with one worker.
const PRECONDITION_QD: u32 = 32;

/// One sweep axis: its key, its values, and whether it came from `[defaults]`.
struct Axis {
    key: String,
    values: Vec<Value>,
    from_defaults: bool,
}

/// Whether a block decides `key` itself: it gives the key, or the other key
/// of its pair (a layer that gives either decides both, as
/// `WorkloadFile::overlay` does, so the other key from `[defaults]` must not
/// become an axis the step cannot see), or its kind sets the key.
fn covered_by(block: &Block, key: &str) -> bool {
    block.has(key)
        || crate::partner(key).is_some_and(|p| block.has(p))
        || kind_owns(block.kind.name(), key).is_some()
}

fn is_axis(key: &str, value: &Value) -> bool {
    matches!(value, Value::Array(_)) && sweeps(key)
}

/// Every combination of axis value indices, the first axis outermost.
fn combinations(lens: &[usize]) -> Vec<Vec<usize>> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new()];
    for &n in lens {
        out = out
            .into_iter()
            .flat_map(|prefix| {
                (0..n).map(move |i| {
                    let mut c = prefix.clone();
                    c.push(i);
                    c
                })
            })
            .collect();
    }
    out
}

fn to_workload(table: Table) -> Result<WorkloadFile, String> {
    Value::Table(table)
        .try_into::<WorkloadFile>()
        .map_err(|e| e.message().trim().to_string())
}

fn scale(d: Duration, factor: f64, cap: Duration) -> Duration {
    Duration::try_from_secs_f64(d.as_secs_f64() * factor)
        .unwrap_or(cap)
        .min(cap)
}

struct Expander<'a> {
    plan: &'a Plan,
    out: Vec<PlanStep>,
    next_group: u32,
}

pub(super) fn expand(plan: &Plan) -> Result<Vec<PlanStep>, SpecError> {
    let mut x = Expander {
        plan,
        out: Vec::new(),
        next_group: 0,
    };
    for block in &plan.steps {
        match &block.kind {
            KindParams::Precondition {
                passes,
                random,
                bs_bytes,
                data,
                trim,
            } => x.precondition(
                block,
                PreconditionSpec {
                    passes: *passes,
                    random: *random,
                    bs_bytes: *bs_bytes,
                    data: data.clone(),
                    trim: *trim,
                },
            )?,
            _ => x.sweep(block)?,
        }
    }
    Ok(x.out)
}

impl Expander<'_> {
    fn err(&self, block: &Block, label: Option<&str>, why: impl ToString) -> SpecError {
        let place = Place::Step(block.number).to_string();
        let place = match label {
            // An unnamed step without axes is labelled "step N" already.
            Some(l) if l != place.trim() => format!("{place} ({l})"),
            _ => place,
        };
        plan_error(&self.plan.path, place, why)
    }

    /// Run, curve and qd_cycle blocks: the cartesian product of the axes, then
    /// the kind's own expansion of each combination.
    fn sweep(&mut self, block: &Block) -> Result<(), SpecError> {
        let defaults = &self.plan.defaults;
        let inherited: Vec<&(String, Value)> = defaults
            .workload
            .iter()
            .filter(|(k, _)| !covered_by(block, k))
            .collect();
        let mut axes: Vec<Axis> = Vec::new();
        for ((key, value), from_defaults) in inherited
            .iter()
            .map(|e| (*e, true))
            .chain(block.workload.iter().map(|e| (e, false)))
        {
            if let (true, Value::Array(values)) = (is_axis(key, value), value) {
                axes.push(Axis {
                    key: key.clone(),
                    values: values.clone(),
                    from_defaults,
                });
            }
        }
        let combos = combinations(&axes.iter().map(|a| a.values.len()).collect::<Vec<_>>());
        let per_combo = match &block.kind {
            KindParams::Curve {
                rates_pct, refine, ..
            } => 1 + rates_pct.len() + *refine as usize,
            KindParams::QdCycle { qds } => qds.len(),
            _ => 1,
        };
        let total = combos.len().saturating_mul(per_combo);
        if self.out.len().saturating_add(total) > MAX_EXPANDED_STEPS {
            return Err(self.err(
                block,
                None,
                format!(
                    "the sweep expands to {total} steps, more than {MAX_EXPANDED_STEPS}; shorten its lists"
                ),
            ));
        }

        for combo in combos {
            let mut low = Table::new();
            let mut high = Table::new();
            for (k, v) in &inherited {
                if !is_axis(k, v) {
                    low.insert(k.clone(), v.clone());
                }
            }
            for (k, v) in &block.workload {
                if !is_axis(k, v) {
                    high.insert(k.clone(), v.clone());
                }
            }
            let mut swept = Vec::new();
            for (axis, &i) in axes.iter().zip(&combo) {
                let v = axis.values[i].clone();
                swept.push((axis.key.clone(), scalar_text(&v).unwrap_or_default()));
                let layer = if axis.from_defaults {
                    &mut low
                } else {
                    &mut high
                };
                layer.insert(axis.key.clone(), v);
            }
            let low = to_workload(low).map_err(|w| self.err(block, None, w))?;
            let high = to_workload(high).map_err(|w| self.err(block, None, w))?;
            let workload = low.overlay(high);

            match &block.kind {
                KindParams::Curve {
                    rates_pct,
                    stop_latency_ms,
                    threshold_ms,
                    threshold_percentile,
                    refine,
                } => {
                    let group = self.group();
                    let mut max = workload.clone();
                    max.rate = Some(StrOrNum::Str("max".into()));
                    let mut steps = vec![(max, StepRole::CurveMax { group })];
                    for &pct in rates_pct {
                        // The runner sets the rate from the measured max.
                        let mut w = workload.clone();
                        w.rate = None;
                        steps.push((w, StepRole::CurveRate { group, pct }));
                    }
                    for round in 1..=*refine {
                        let mut w = workload.clone();
                        w.rate = None;
                        steps.push((w, StepRole::CurveRefine { group, round }));
                    }
                    for (w, role) in steps {
                        let mut step = self.finish(block, w, role, swept.clone())?;
                        step.stop_latency_ms = *stop_latency_ms;
                        step.threshold_ms = Some(*threshold_ms);
                        step.threshold_percentile = *threshold_percentile;
                        self.out.push(step);
                    }
                }
                KindParams::QdCycle { qds } => {
                    let group = self.group();
                    for &qd in qds {
                        let mut w = workload.clone();
                        w.qd = Some(StrOrNum::Int(i64::from(qd)));
                        let mut axes = swept.clone();
                        axes.push((key::qd.into(), qd.to_string()));
                        let step = self.finish(block, w, StepRole::QdCycle { group }, axes)?;
                        self.out.push(step);
                    }
                }
                _ => {
                    let step = self.finish(block, workload, StepRole::Run, swept)?;
                    self.out.push(step);
                }
            }
        }
        Ok(())
    }

    fn group(&mut self) -> u32 {
        let g = self.next_group;
        self.next_group += 1;
        g
    }

    /// Plan-level targets and size under everything a step says.
    fn plan_level(&self, mut w: WorkloadFile) -> WorkloadFile {
        if let Some(t) = &self.plan.targets {
            w.target = Some(OneOrMany::Many(t.clone()));
        }
        if let Some(a) = &self.plan.anchor {
            w.anchor = Some(a.clone());
            w.target = None;
            if let Some(f) = &self.plan.files {
                w.files = Some(StrOrNum::Str(f.clone()));
            }
            if let Some(f) = &self.plan.file_size {
                w.file_size = Some(StrOrNum::Str(f.clone()));
            }
        }
        if let Some(s) = self.plan.size_bytes {
            w.size = Some(StrOrNum::Str(size_text(s)));
        }
        w
    }

    /// The block's sizing from the cache and target count: its own
    /// `threads_per_target` (else `[defaults]`'s) and the plan's cache.
    fn sizing(&self, block: &Block) -> HostSizing {
        HostSizing {
            cache_pct: None,
            cache_bytes: self.plan.cache_size_bytes,
            threads_per_target: block
                .threads_per_target
                .or(self.plan.defaults.threads_per_target),
        }
    }

    /// Applies step control (hot size, steady state, pause, `with_step_time`),
    /// resolves the workload and builds the step.
    fn finish(
        &self,
        block: &Block,
        workload: WorkloadFile,
        role: StepRole,
        axes: Vec<(String, String)>,
    ) -> Result<PlanStep, SpecError> {
        let defaults = &self.plan.defaults;
        let label = label(block, &role, &axes);
        let err = |why: String| self.err(block, Some(&label), why);
        let mut w = self.plan_level(workload);

        let hot = block.hot.or(defaults.hot).flatten().map(|h| match h {
            HotRef::Plan => self.plan.hot_size,
            HotRef::Given(h) => h,
        });
        let mut hot_size_bytes = None;
        let mut sizing = self.sizing(block);
        match hot {
            Some(_) if w.range.is_some() => return Err(err(
                "hot_size and range both set the working set (one comes from [defaults]); keep one"
                    .into(),
            )),
            Some(HotSize::Pct(p)) => w.range = Some(format!("0%-{p}%")),
            Some(HotSize::Bytes(b)) => hot_size_bytes = Some(b),
            Some(HotSize::OfCache(p)) => sizing.cache_pct = Some(p),
            None => {}
        }
        if !block.jobs.is_empty() && !sizing.is_empty() {
            return Err(err(
                "a step with jobs takes no threads_per_target or share of the cache; give each job its own threads and range".into(),
            ));
        }

        let mut steady_state = block.steady_state.or(defaults.steady_state).flatten();
        let mut pause = block.pause.or(defaults.pause).unwrap_or(Pause::None);
        if let Some(s) = steady_state {
            // Each round is one measured run of `round`.
            w.time = Some(StrOrNum::Str(crate::format_duration_exact(s.round)));
        }
        if let Some(step_time) = self.plan.step_time {
            let r = w.resolve(0).map_err(|e| err(e.to_string()))?;
            let factor = step_time.as_secs_f64() / r.time.as_secs_f64();
            w.time = Some(StrOrNum::Str(crate::format_duration_exact(step_time)));
            w.warmup = Some(StrOrNum::Str(crate::format_duration_exact(scale(
                r.warmup, factor, step_time,
            ))));
            if let Some(s) = steady_state.as_mut() {
                s.round = step_time;
            }
            if let Pause::Fixed(p) = pause {
                pause = Pause::Fixed(scale(p, factor, step_time));
            }
        }
        let mut r = w.resolve(0).map_err(|e| err(e.to_string()))?;
        let mut jobs = Vec::new();
        if !block.jobs.is_empty() {
            if hot.is_some() {
                return Err(err(
                    "a step with jobs takes no hot/hot_size; give each job its own range".into(),
                ));
            }
            // Rounds judge one workload's rate; a single job is that.
            if steady_state.is_some() && block.jobs.len() > 1 {
                return Err(err(
                    "a step of several jobs takes no steady_state (rounds judge one workload's rate); give each job its own step".into(),
                ));
            }
            // The step's longest job sets its time (for estimates).
            let mut longest = Duration::ZERO;
            let mut first: Option<(Duration, Duration)> = None;
            let mut anchors: Vec<String> = Vec::new();
            for job in &block.jobs {
                let mut t = Table::new();
                for (k, v) in &job.workload {
                    t.insert(k.clone(), v.clone());
                }
                let jerr = |why: String| err(format!("job '{}': {why}", job.name));
                let own = to_workload(t).map_err(jerr)?;
                let jw = w.clone().overlay(own);
                let jr = jw.resolve(0).map_err(|e| jerr(e.to_string()))?;
                // One clock for the step: its jobs' intervals and warmups
                // are the first job's.
                if let Some(first) = &first {
                    let (interval, warmup): &(Duration, Duration) = first;
                    if jr.interval != *interval || jr.warmup != *warmup {
                        return Err(jerr(
                            "its interval or warmup differs from the step's first job's; jobs of one step report on one clock, so give interval and warmup in the step".into(),
                        ));
                    }
                } else {
                    first = Some((jr.interval, jr.warmup));
                }
                // Each tree's workers own its files one at a time: two jobs
                // in one tree would pull files from under each other.
                if let Some(f) = &jr.fs {
                    if anchors.iter().any(|a| same_dir(a, &f.anchor)) {
                        return Err(jerr(format!(
                            "its tree ({}) is another job's too; jobs of one step work trees of their own, so give it its own anchor, or mix the operations in one job",
                            f.anchor
                        )));
                    }
                    anchors.push(f.anchor.clone());
                }
                longest = longest.max(jr.warmup + jr.time);
                jobs.push(PlanJob {
                    name: job.name.clone(),
                    workload: jw,
                    exitall: job.exitall,
                });
            }
            r.warmup = Duration::ZERO;
            r.time = longest;
        }
        Ok(PlanStep {
            index: self.out.len(),
            block: block.number,
            name: block.name.clone(),
            label,
            role,
            workload: w,
            warmup: r.warmup,
            time: Some(r.time),
            pause,
            steady_state,
            hot_size_bytes,
            sizing,
            stop_latency_ms: None,
            threshold_ms: None,
            threshold_percentile: None,
            axes,
            jobs,
        })
    }

    fn precondition(&mut self, block: &Block, spec: PreconditionSpec) -> Result<(), SpecError> {
        let defaults = &self.plan.defaults;
        let role = StepRole::Precondition(spec.clone());
        let label = label(block, &role, &[]);
        let err = |why: String| self.err(block, Some(&label), why);
        // Only a share of the cache reaches a precondition (the parser
        // refuses the rest): it fills that working set on every host.
        let sizing = HostSizing {
            cache_pct: match block.hot {
                Some(Some(HotRef::Given(HotSize::OfCache(p)))) => Some(p),
                _ => None,
            },
            cache_bytes: self.plan.cache_size_bytes,
            threads_per_target: None,
        };

        let mut low = Table::new();
        for (k, v) in &defaults.workload {
            // A list in [defaults] sweeps the steps that can sweep; a
            // precondition cannot, so it keeps its own default for that key.
            let inherit =
                WorkloadFile::has_role(k, Role::Inherit) && !covered_by(block, k) && !is_axis(k, v);
            if inherit {
                low.insert(k.clone(), v.clone());
            }
        }
        let mut high = Table::new();
        for (k, v) in &block.workload {
            high.insert(k.clone(), v.clone());
        }
        high.insert("read".into(), Value::Integer(0));
        high.insert(
            "random".into(),
            Value::Integer(if spec.random { 100 } else { 0 }),
        );
        high.insert("bs".into(), Value::String(format_size(spec.bs_bytes)));
        high.insert("data".into(), Value::String(spec.data.to_string()));
        let mut w = to_workload(low)
            .and_then(|low| Ok(low.overlay(to_workload(high)?)))
            .map_err(&err)?;
        if w.qd.is_none() {
            // psync holds one I/O per worker; anything else gets a deep queue.
            let psync = w.engine == Some(EngineKind::Psync);
            let qd = if psync { 1 } else { PRECONDITION_QD };
            w.qd = Some(StrOrNum::Int(i64::from(qd)));
        }
        let w = self.plan_level(w);
        w.resolve(0).map_err(|e| err(e.to_string()))?;
        let mut pause = block.pause.or(defaults.pause).unwrap_or(Pause::None);
        if let (Some(step_time), Pause::Fixed(p)) = (self.plan.step_time, pause) {
            // No measured time to scale by: the pause is only capped.
            pause = Pause::Fixed(p.min(step_time));
        }
        self.out.push(PlanStep {
            index: self.out.len(),
            block: block.number,
            name: block.name.clone(),
            label,
            role,
            workload: w,
            warmup: Duration::ZERO,
            time: None,
            pause,
            steady_state: None,
            hot_size_bytes: None,
            sizing,
            stop_latency_ms: None,
            threshold_ms: None,
            threshold_percentile: None,
            axes: Vec::new(),
            jobs: Vec::new(),
        });
        Ok(())
    }
}

/// `[name] [role] key=value ...`, or `step N` when there is nothing to say.
fn label(block: &Block, role: &StepRole, axes: &[(String, String)]) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(n) = &block.name {
        parts.push(n.clone());
    }
    let unnamed = block.name.is_none();
    match role {
        StepRole::Precondition(p) if unnamed => parts.push(format!(
            "precondition {}{}x {} {}",
            if p.trim { "trim + " } else { "" },
            p.passes,
            if p.random { "random" } else { "seq" },
            format_size(p.bs_bytes)
        )),
        StepRole::CurveMax { .. } => {
            if unnamed {
                parts.push("curve".into());
            }
            parts.push("max".into());
        }
        StepRole::CurveRate { pct, .. } => {
            if unnamed {
                parts.push("curve".into());
            }
            parts.push(format!("rate={pct}%"));
        }
        StepRole::CurveRefine { round, .. } => {
            if unnamed {
                parts.push("curve".into());
            }
            parts.push(format!("refine={round}"));
        }
        _ => {}
    }
    parts.extend(axes.iter().map(|(k, v)| format!("{k}={v}")));
    if parts.is_empty() {
        format!("step {}", block.number)
    } else {
        parts.join(" ")
    }
}

/// Expected wall time of `steps`: warmup + measured time (max_rounds × round under
/// steady state) + fixed pause per step; a precondition takes passes × size ÷
/// `assumed_precondition_mb_per_s` (decimal MB/s). `target_size_bytes` is the
/// total size of all targets; without it the step's `size` (per target) or the
/// 1 GiB default is used. Pauses that follow from bytes written count as 0.
pub fn estimate_duration(
    steps: &[PlanStep],
    target_size_bytes: Option<u64>,
    assumed_precondition_mb_per_s: f64,
) -> Duration {
    let mut total_s = 0.0f64;
    for step in steps {
        if let Pause::Fixed(p) = step.pause {
            total_s += p.as_secs_f64();
        }
        match (&step.role, step.steady_state) {
            (StepRole::Precondition(p), _) => {
                let resolved = step.workload.resolve(0).ok();
                let size_bytes = target_size_bytes.unwrap_or_else(|| {
                    resolved.as_ref().map_or(DEFAULT_SIZE_BYTES, |w| {
                        w.size_bytes
                            .unwrap_or(DEFAULT_SIZE_BYTES)
                            .saturating_mul(w.targets.len() as u64)
                    })
                });
                let share = resolved.map_or(1.0, |w| (w.range.end_pct - w.range.start_pct) / 100.0);
                let rate_bytes_per_s = assumed_precondition_mb_per_s * 1e6;
                if rate_bytes_per_s.is_finite() && rate_bytes_per_s > 0.0 {
                    total_s += f64::from(p.passes) * size_bytes as f64 * share / rate_bytes_per_s;
                }
            }
            (_, Some(s)) => {
                total_s +=
                    step.warmup.as_secs_f64() + s.round.as_secs_f64() * f64::from(s.max_rounds)
            }
            (_, None) => {
                total_s += step.warmup.as_secs_f64() + step.time.map_or(0.0, |t| t.as_secs_f64());
            }
        }
    }
    Duration::try_from_secs_f64(total_s).unwrap_or(Duration::MAX)
}

/// Two anchors name one directory: the same text once trailing slashes
/// and `.` parts are left out (the run's own checks resolve links).
fn same_dir(a: &str, b: &str) -> bool {
    let parts = |p: &str| -> Vec<String> {
        std::path::Path::new(p)
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect()
    };
    parts(a) == parts(b)
}
