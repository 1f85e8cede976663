//! Running a plan: the expanded steps in order. For each: fill in what only
//! the runner can know (a curve's rates from its measured max, a hot range
//! from the target size), run the step while every interval goes to the
//! store, end it early when the step says so (steady state reached,
//! precondition bytes written), analyse it, and pause. The plan as invoked
//! is stored with the run, so a resume rebuilds the same steps and continues
//! at the first one not completed.

use crate::analyse;
use crate::event::{Event, PlanProgress, Sink};
use crate::step::{Control, Out, StepCall, StepExecutor, StepHooks};
use crate::store::StoreWriter;
use crate::{RunError, Stop};
use iorig_engine::run::{self as engine_run, IntervalSample, Prepared, TargetInfo};
use iorig_engine::verify::{UnitContent, VerifySetup};
use iorig_result::{
    Finding, PreconditionFinding, RunKind, RunStatus, SkippedFinding, StepStatus, Summary,
};
use iorig_spec::plan::{estimate_duration, HotSize, Pause, Plan, PlanStep, StepRole};
use iorig_spec::{parse_duration, FormatMode, StrOrNum, Workload, WorkloadFile};
use iorig_store::{RunId, Store};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A precondition's time bound: it ends by bytes long before this.
const PRECONDITION_TIME: &str = "1000h";
/// Precondition speed assumed for estimates before anything was measured.
pub const ASSUMED_FILL_MB_PER_S: f64 = 500.0;

/// How a plan was invoked: enough to rebuild the same steps on resume.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Invocation {
    /// `builtin:NAME` or the file path.
    pub source: String,
    pub text: String,
    pub targets: Option<Vec<String>>,
    pub size: Option<String>,
    pub hot_size: Option<String>,
    /// Each host's cache (`--cache-size`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_size: Option<String>,
    pub step_time: Option<String>,
    /// File slots per leaf directory of every file-system step.
    #[serde(default)]
    pub files: Option<String>,
    /// File sizes of every file-system step.
    #[serde(default)]
    pub file_size: Option<String>,
    /// The hosts the plan ran on (`--hosts`, a hosts file, `[hosts]`):
    /// their addresses. A resume must not run their steps here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<String>>,
    /// Every validating step journals its writes here (vdbench's `-j`):
    /// one key map carried from step to step, so `iorig verify --journal`
    /// checks the targets after the plan (or a crash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<std::path::PathBuf>,
    /// Permission to destroy is given per invocation and never stored: a
    /// resume re-checks every target and needs it again.
    #[serde(skip)]
    pub allow_destroy: bool,
}

impl Invocation {
    fn of(source: String, text: String) -> Self {
        Invocation {
            source,
            text,
            targets: None,
            size: None,
            hot_size: None,
            cache_size: None,
            step_time: None,
            files: None,
            file_size: None,
            hosts: None,
            journal: None,
            allow_destroy: false,
        }
    }

    pub fn from_builtin(name: &str) -> Result<Self, RunError> {
        let text = iorig_spec::plan::builtin_text(name).ok_or_else(|| {
            let names: Vec<&str> = iorig_spec::plan::builtins()
                .iter()
                .map(|(n, _)| *n)
                .collect();
            RunError::usage(format!(
                "no built-in plan '{name}'; choose one of {} (iorig plan builtins)",
                names.join(", ")
            ))
        })?;
        Ok(Invocation::of(format!("builtin:{name}"), text.to_string()))
    }

    /// A plan made from another tool's file (a fio job file): `source`
    /// says where from, `text` is the plan TOML it became.
    pub fn from_text(source: String, text: String) -> Self {
        Invocation::of(source, text)
    }

    pub fn from_file(path: &Path) -> Result<Self, RunError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| RunError::usage(format!("plan file {}: {e}", path.display())))?;
        Ok(Invocation::of(path.display().to_string(), text))
    }

    /// The plan with the invocation's overrides applied.
    pub fn plan(&self) -> Result<Plan, RunError> {
        let usage = |e: iorig_spec::SpecError| RunError::usage(e.to_string());
        let mut plan = Plan::from_toml(&self.source, &self.text).map_err(usage)?;
        if let Some(t) = &self.targets {
            plan.targets = Some(t.clone());
        }
        // A lone directory as the target is the anchor of the plan's
        // file-system steps.
        if let Some([one]) = plan.targets.as_deref() {
            if Path::new(one).is_dir() {
                plan.anchor = Some(one.clone());
                plan.targets = None;
            }
        }
        if (self.files.is_some() || self.file_size.is_some()) && plan.anchor.is_none() {
            return Err(RunError::usage(
                "--files and --file-size set the trees of file-system steps, whose anchor is an existing directory given as the one --target; give one (mkdir it first), or drop them",
            ));
        }
        if let Some(f) = &self.files {
            plan.files = Some(f.clone());
        }
        if let Some(f) = &self.file_size {
            plan.file_size = Some(f.clone());
        }
        if let Some(s) = &self.size {
            let bytes = iorig_spec::parse_size(s).map_err(usage)?;
            if bytes == 0 {
                return Err(RunError::usage("--size 0: give a size above 0, e.g. 1g"));
            }
            plan.size_bytes = Some(bytes);
        }
        if let Some(h) = &self.hot_size {
            plan.hot_size = HotSize::parse(h).map_err(usage)?;
        }
        if let Some(c) = &self.cache_size {
            let bytes = iorig_spec::parse_size(c).map_err(usage)?;
            if bytes == 0 {
                return Err(RunError::usage(
                    "--cache-size 0: give each host's cache tier, e.g. 400g",
                ));
            }
            plan.cache_size_bytes = Some(bytes);
        }
        if let Some(t) = &self.step_time {
            let d = parse_duration(t).map_err(usage)?;
            if d.is_zero() {
                return Err(RunError::usage(
                    "--step-time 0: give a time above 0, e.g. 10s",
                ));
            }
            plan = plan.with_step_time(d);
        }
        Ok(plan)
    }
}

pub use crate::results::StepResult;

/// The curve analyses of steps just run (what the plan reports at its end).
pub fn curve_findings(results: &[StepResult]) -> Vec<iorig_result::CurveFinding> {
    analyse::curves(results)
}

/// The five figures of steps just run (a quick run's); the store gives the
/// same from its rows ([`iorig_result::step_figures`]).
pub fn five_figures(results: &[StepResult]) -> Vec<iorig_result::Figure> {
    let steps: Vec<iorig_result::FigureStep<'_>> = results
        .iter()
        .map(|r| iorig_result::FigureStep {
            name: r.step.name.as_deref().unwrap_or(""),
            status: r.status,
            summary: r.summary.as_ref(),
            findings: r.analysis.iter().collect(),
        })
        .collect();
    iorig_result::five_figures(&steps)
}

/// The plan of `inv` and its steps (at least one).
fn expand(inv: &Invocation) -> Result<(Plan, Vec<PlanStep>), RunError> {
    let plan = inv.plan()?;
    let steps = plan.expand().map_err(|e| RunError::usage(e.to_string()))?;
    if inv.cache_size.is_some() && steps.iter().all(|s| s.sizing.cache_pct.is_none()) {
        return Err(RunError::usage(format!(
            "--cache-size sizes working sets given as a share of the cache (hot_size = \"75% of cache\"), and plan {} has none; drop it, or try --builtin cluster",
            plan.path
        )));
    }
    if steps.is_empty() {
        return Err(RunError::usage(format!(
            "plan {} has no steps; add at least one [[steps]] block",
            plan.path
        )));
    }
    Ok((plan, steps))
}

/// How a plan ended.
#[derive(Debug)]
pub struct PlanOutcome {
    pub run: Option<RunId>,
    pub status: RunStatus,
    /// A step found validation errors (the plan stopped there).
    pub validation_failed: bool,
    pub results: Vec<StepResult>,
}

/// A plan expanded and checked, ready to run (or resume).
pub struct PlanRun {
    pub inv: Invocation,
    pub plan: Plan,
    pub steps: Vec<PlanStep>,
    /// Every step's targets were checked on this machine ([`PlanRun::new`]);
    /// else the executor checks them when the plan runs.
    checked: bool,
    /// Steps completed in an earlier session (resume): status and summary.
    done: HashMap<usize, (StepStatus, Option<Summary>)>,
    resume_of: Option<RunId>,
    /// Storage-side sources asked at every interval (`--collect`).
    pub collect: Vec<crate::collect::CollectSource>,
}

/// A plan longer than this asks for `--yes`.
pub const LONG_PLAN: Duration = Duration::from_secs(24 * 3600);

impl PlanRun {
    /// Expands the plan and checks every step and target before anything
    /// runs or is written: a dry run finds exactly the errors a real run
    /// would, and a bad step 5 stops the plan before step 1.
    pub fn new(inv: Invocation) -> Result<Self, RunError> {
        let (plan, steps) = expand(&inv)?;
        validate_steps(&steps, inv.allow_destroy)?;
        if let Some(j) = &inv.journal {
            check_journal(j, &steps, inv.allow_destroy)?;
        }
        Ok(PlanRun {
            inv,
            plan,
            steps,
            checked: true,
            done: HashMap::new(),
            resume_of: None,
            collect: Vec::new(),
        })
    }

    /// Expands the plan for another executor (many hosts): every step's
    /// workload resolves now; its targets are checked where they are, by
    /// the executor, before the plan's first step runs ([`PlanRun::run_on`]).
    pub fn for_executor(inv: Invocation) -> Result<Self, RunError> {
        if inv.journal.is_some() {
            return Err(RunError::usage(
                "--journal keeps one journal on this machine; each host would need its own: run without --hosts, or drop --journal",
            ));
        }
        let (plan, steps) = expand(&inv)?;
        for s in &steps {
            let rate = s.role.paced_by_curve().then_some(1.0);
            step_workload_on(s, rate, inv.allow_destroy, false)?;
        }
        Ok(PlanRun {
            inv,
            plan,
            steps,
            checked: false,
            done: HashMap::new(),
            resume_of: None,
            collect: Vec::new(),
        })
    }

    /// Rebuilds run `id` of `store` as it was invoked, with the steps it
    /// completed; every step and target is checked again (whatever the
    /// targets hold now decides, not what they held then).
    pub fn resume(store: &Store, id: RunId, allow_destroy: bool) -> Result<Self, RunError> {
        let stored = |e| RunError::runtime(format!("result store: {e}"));
        let run = store.get_run(id).map_err(stored)?.ok_or_else(|| {
            RunError::usage(format!(
                "no run {id} in the result store; iorig runs list shows the runs"
            ))
        })?;
        let Some(plan_json) = &run.plan_json else {
            return Err(RunError::usage(format!(
                "run {id} is a single {} run, not a plan; only plans can be resumed",
                run.run.kind
            )));
        };
        if run.run.status == RunStatus::Ok {
            return Err(RunError::usage(format!(
                "run {id} finished already; nothing to resume"
            )));
        }
        let mut inv: Invocation = serde_json::from_str(plan_json).map_err(|e| {
            RunError::runtime(format!("run {id}: the stored plan cannot be read ({e})"))
        })?;
        // Runs stored by older versions carry `allow_destroy`; it is ignored.
        inv.allow_destroy = allow_destroy;
        let on_hosts = inv.hosts.clone().or_else(|| {
            inv.plan()
                .ok()
                .and_then(|p| p.hosts.map(|h| h.list.unwrap_or_default()))
        });
        if let Some(hosts) = on_hosts {
            return Err(RunError::usage(format!(
                "run {id} ran on several hosts ({}); resuming it on them is not available yet (this machine would run their steps): run the plan again with --hosts",
                hosts.join(", ")
            )));
        }
        let mut me = PlanRun::new(inv)?;
        for row in store.steps(id).map_err(stored)? {
            if row.status.is_complete() {
                let summary = row.summary.as_ref().and_then(|s| s.io()).cloned();
                me.done.insert(row.index as usize, (row.status, summary));
            }
        }
        me.resume_of = Some(id);
        Ok(me)
    }

    /// Steps completed before (a resume).
    pub fn done_count(&self) -> usize {
        self.done.len()
    }

    /// Refuses a plan that would take longer than [`LONG_PLAN`] unless the
    /// user said yes to it.
    pub fn check_length(&self, yes: bool) -> Result<(), RunError> {
        let estimate = self.estimate();
        if estimate > LONG_PLAN && !yes {
            return Err(RunError::usage(format!(
                "plan {} would take about {} ({} steps); check it with --dry-run, shorten it with --step-time, or pass --yes",
                self.plan.name,
                iorig_spec::format_duration(estimate),
                self.steps.len()
            )));
        }
        Ok(())
    }

    /// The time the plan should take, before anything is measured.
    pub fn estimate(&self) -> Duration {
        estimate_duration(&self.steps, None, ASSUMED_FILL_MB_PER_S)
    }

    /// Runs every step not done yet. A new run enters `store` as `kind` with
    /// `labels`; a resumed one continues there (`store` must be the
    /// [`StoreWriter::resume`] of it).
    pub fn run(
        self,
        kind: RunKind,
        labels: &BTreeMap<String, String>,
        store: &mut StoreWriter,
        sink: &mut dyn Sink,
        stop: &Stop,
    ) -> Result<PlanOutcome, RunError> {
        self.run_on(&mut crate::Local, kind, labels, store, sink, stop)
    }

    /// Checks every step where `executor` runs it (each host its own
    /// targets), writing nothing anywhere: a plan's dry run on many hosts.
    pub fn check_on(&self, executor: &mut dyn StepExecutor) -> Result<(), RunError> {
        let mut built = HashSet::new();
        let local = executor.is_local();
        for s in &self.steps {
            let rate = s.role.paced_by_curve().then_some(1.0);
            let (mut w, mut layer) = step_workload_on(s, rate, self.inv.allow_destroy, local)?;
            tree_format(&mut w, &mut built, true);
            tree_layer(&w, &mut layer);
            let jobs = prepared_jobs(s, &w, &JobRates::stand_in(s))?;
            let call = StepCall {
                w: &w,
                layer: &layer,
                index: s.index,
                allow_destroy: self.inv.allow_destroy,
                hot_size_bytes: if local { None } else { s.hot_size_bytes },
                sizing: if local { Default::default() } else { s.sizing },
                jobs: &jobs,
            };
            executor
                .check(&call)
                .map_err(|e| e.context(&format!("step {} ({}): ", s.index + 1, s.label)))?;
        }
        Ok(())
    }

    /// What each step sized from this machine's targets and cache
    /// (`--dry-run` shows them; steps on agents are sized there and say so
    /// in their checks).
    pub fn sized_steps(&self) -> Result<Vec<crate::sizing::SizedStep>, RunError> {
        let mut out = Vec::new();
        for s in self.steps.iter().filter(|s| !s.sizing.is_empty()) {
            let rate = s.role.paced_by_curve().then_some(1.0);
            let (w, _) = step_workload_on(s, rate, self.inv.allow_destroy, false)?;
            if let (_, Some(sized)) = crate::sizing::apply(w, &s.sizing, self.inv.allow_destroy)? {
                out.push(crate::sizing::SizedStep {
                    step: s.index + 1,
                    host: None,
                    text: sized.line(s.sizing.cache_pct, s.sizing.threads_per_target),
                });
            }
        }
        Ok(out)
    }

    /// [`PlanRun::run`] with every step's I/O on `executor`. A plan made
    /// with [`PlanRun::for_executor`] has every step checked there first,
    /// before anything runs or is stored.
    pub fn run_on(
        self,
        executor: &mut dyn StepExecutor,
        kind: RunKind,
        labels: &BTreeMap<String, String>,
        store: &mut StoreWriter,
        sink: &mut dyn Sink,
        stop: &Stop,
    ) -> Result<PlanOutcome, RunError> {
        if !self.checked {
            self.check_on(executor)?;
        }
        let mut collector =
            (!self.collect.is_empty()).then(|| crate::collect::Collector::start(&self.collect));
        let mut out = Out::new(store, sink);
        out.collect = collector.as_mut();
        if self.resume_of.is_none() {
            let plan_json = serde_json::to_string(&self.inv).ok();
            out.store.begin_run(kind, plan_json, labels)?;
        }
        let run = out.store.run().map(|r| r.0);
        out.send(Event::PlanBegun {
            name: &self.plan.name,
            steps: self.steps.len(),
            done: self.done.len(),
            run,
        });
        if self.resume_of.is_none() {
            // Every step is stored as pending now, so a resume knows them all.
            for s in &self.steps {
                out.send(Event::StepPending {
                    index: s.index,
                    label: &s.label,
                    role: (&s.role).into(),
                });
            }
        }
        Runner {
            run: &self,
            executor,
            out,
            stop,
            results: Vec::new(),
            curve_max: HashMap::new(),
            curve_job_max: HashMap::new(),
            curve_stopped: HashMap::new(),
            kept_verify: None,
            built_trees: HashSet::new(),
        }
        .run()
    }
}

struct Runner<'a> {
    run: &'a PlanRun,
    executor: &'a mut dyn StepExecutor,
    out: Out<'a>,
    stop: &'a Stop,
    results: Vec<StepResult>,
    curve_max: HashMap<u32, f64>,
    /// A curve of several jobs: each job's IOPS in its max step, which
    /// splits every rate of the curve among them.
    curve_job_max: HashMap<u32, Vec<f64>>,
    curve_stopped: HashMap<u32, String>,
    /// Validation keys carry over from step to step on the same targets,
    /// so a write step followed by a read step checks what was written.
    kept_verify: Option<(Vec<String>, Arc<VerifySetup>)>,
    /// Anchors whose tree a step of this run has built: `format = once`
    /// rebuilds a tree the first time only.
    built_trees: HashSet<String>,
}

/// How one step ended, for the loop.
enum Next {
    Go,
    /// Stop the plan (interrupted, or a failed step).
    Halt,
}

impl Runner<'_> {
    fn run(mut self) -> Result<PlanOutcome, RunError> {
        let plan_start = Instant::now();
        let mut failed = false;
        let mut validation_failed = false;
        let steps = &self.run.steps;
        for (k, step) in steps.iter().enumerate() {
            // Completed earlier (resume).
            if let Some((status, summary)) = self.run.done.get(&step.index).cloned() {
                if let (StepRole::CurveMax { group }, Some(s)) = (&step.role, &summary) {
                    self.curve_max.insert(*group, s.total.iops);
                }
                // A tree it built (or found) counts as built for the
                // steps after it: a resumed `once` does not rebuild it.
                if let Ok(mut w) = step_workload(step, None, self.run.inv.allow_destroy) {
                    tree_format(&mut w, &mut self.built_trees, false);
                }
                self.results.push(StepResult {
                    step: step.clone(),
                    status,
                    summary,
                    analysis: Vec::new(),
                    jobs: Vec::new(),
                    lat_se_ns: (None, None),
                });
                continue;
            }
            if self.stop.interrupted() {
                break;
            }
            let (rate, job_rates) = match self
                .curve_pct(step)
                .and_then(|p| Ok((curve_rate(p), self.curve_job_rates(step, p)?)))
            {
                Ok(rates) => rates,
                Err(why) => {
                    self.skip(step, why);
                    continue;
                }
            };
            let local = self.executor.is_local();
            let (w, layer) = match step_workload_on(step, rate, self.run.inv.allow_destroy, local) {
                Ok((mut w, mut layer)) => {
                    tree_format(&mut w, &mut self.built_trees, false);
                    tree_layer(&w, &mut layer);
                    (w, layer)
                }
                Err(e) => {
                    self.out.send(Event::RunEnded {
                        status: RunStatus::Failed,
                    });
                    return Err(e);
                }
            };
            match self.step(k, step, &w, &layer, &job_rates, plan_start)? {
                (Next::Go, _) => {}
                (Next::Halt, validation) => {
                    failed = !self.stop.interrupted();
                    validation_failed = validation;
                    break;
                }
            }
        }

        // Plan-level analysis: curves.
        for c in analyse::curves(&self.results) {
            self.out.send(Event::Finding {
                index: None,
                finding: &Finding::Curve(Box::new(c)),
            });
        }
        let status = if self.stop.interrupted() {
            RunStatus::Interrupted
        } else if failed {
            RunStatus::Failed
        } else {
            RunStatus::Ok
        };
        self.out.send(Event::RunEnded { status });
        Ok(PlanOutcome {
            run: self.out.store.run(),
            status,
            validation_failed,
            results: self.results,
        })
    }

    /// A paced curve step's max and its share of it, percent: a rate
    /// step's own, a refinement's from the group's steps so far; or why
    /// the step is skipped.
    fn curve_pct(&self, step: &PlanStep) -> Result<Option<(f64, f64)>, String> {
        let Some(group) = step
            .role
            .curve_group()
            .filter(|_| step.role.paced_by_curve())
        else {
            return Ok(None);
        };
        if let Some(why) = self.curve_stopped.get(&group) {
            return Err(why.clone());
        }
        let max = match self.curve_max.get(&group) {
            Some(max) if *max > 0.0 => *max,
            _ => return Err("the curve's max run measured no IOPS".into()),
        };
        match step.role {
            StepRole::CurveRate { pct, .. } => Ok(Some((max, pct))),
            _ => {
                let rate = crate::analyse::refine_rate(&self.results, group)?;
                Ok(Some((max, 100.0 * rate / max)))
            }
        }
    }

    /// A curve step of several jobs: each job's rate, pct % of what that
    /// job reached in the curve's max step (so the jobs keep the shares
    /// they had at max, and the rates add up to pct % of the max).
    /// `paced` is the step's [`Runner::curve_pct`].
    fn curve_job_rates(
        &self,
        step: &PlanStep,
        paced: Option<(f64, f64)>,
    ) -> Result<JobRates, String> {
        if step.jobs.len() < 2 {
            return Ok(JobRates::AsPlanned);
        }
        let paced = paced.and_then(|(_, pct)| step.role.curve_group().map(|g| (g, pct)));
        match (&step.role, paced) {
            (StepRole::CurveMax { .. }, _) => Ok(JobRates::Unpaced),
            (_, Some((group, pct))) => match self.curve_job_max.get(&group) {
                Some(max) if max.len() == step.jobs.len() && max.iter().all(|m| *m > 0.0) => {
                    Ok(JobRates::Each(
                        max.iter()
                            .map(|m| crate::analyse::curve_step_rate(*m, pct))
                            .collect(),
                    ))
                }
                Some(_) => Err("a job of the curve's max run measured no IOPS".into()),
                None => Err("the curve's max run left no IOPS per job (a resumed run keeps only the step's); rerun the curve".into()),
            },
            _ => Ok(JobRates::AsPlanned),
        }
    }

    /// Runs one step, analyses it, and pauses after it.
    fn step(
        &mut self,
        k: usize,
        step: &PlanStep,
        w: &Workload,
        layer: &WorkloadFile,
        job_rates: &JobRates,
        plan_start: Instant,
    ) -> Result<(Next, bool), RunError> {
        // A write without validation changes blocks behind the key map's
        // back: the kept keys no longer say what the targets hold, and a
        // later verifying read would call every such block a lost write.
        // A tree's format may rewrite or remove files whatever the step's
        // operations are.
        let formats = w.fs.as_ref().is_some_and(|f| f.format != FormatMode::No);
        if (w.writes() || formats) && !w.verify {
            let anchor = w.fs.as_ref().map(|f| &f.anchor);
            let overlaps = self.kept_verify.as_ref().is_some_and(|(paths, _)| {
                w.targets
                    .iter()
                    .chain(anchor)
                    .any(|t| paths.iter().any(|p| same_path(p, t)))
            });
            if overlaps {
                self.kept_verify = None;
            }
        }
        self.out.send(Event::StepBegun {
            index: step.index,
            label: &step.label,
            role: (&step.role).into(),
            workload: Some(w),
            plan_step: Some(step),
        });
        let steps = &self.run.steps;
        let mut hooks = PlanHooks {
            step,
            w,
            k,
            total: steps.len(),
            plan_start,
            remaining_after: estimate_duration(&steps[k + 1..], None, ASSUMED_FILL_MB_PER_S),
            kept_verify: &mut self.kept_verify,
            journal: self.run.inv.journal.as_deref(),
            step_start: None,
            precondition_bytes: None,
            written_bytes: 0,
            rounds: Vec::new(),
            round_ops: 0,
            round_s: 0.0,
            steady_at_round: None,
        };
        self.stop.rearm();
        let jobs = prepared_jobs(step, w, job_rates)?;
        let call = StepCall {
            w,
            layer,
            index: step.index,
            allow_destroy: self.run.inv.allow_destroy,
            hot_size_bytes: if self.executor.is_local() {
                None
            } else {
                step.hot_size_bytes
            },
            sizing: if self.executor.is_local() {
                Default::default()
            } else {
                step.sizing
            },
            jobs: &jobs,
        };
        let out = match self
            .executor
            .run_step(&call, &mut self.out, self.stop, &mut hooks)
        {
            Ok(o) => o,
            Err(e) => {
                // The step never started (its target vanished, say).
                self.out.send(Event::StepAborted { index: step.index });
                self.out.send(Event::RunEnded {
                    status: RunStatus::Failed,
                });
                return Err(e);
            }
        };
        let rounds = std::mem::take(&mut hooks.rounds);
        let steady_at_round = hooks.steady_at_round;
        let written_bytes = hooks.written_bytes;
        // A step that changed a target's size (a scratch file truncated or
        // grown) changed blocks behind the kept keys: drop them.
        if let Some((paths, kept)) = &self.kept_verify {
            let unit = u64::from(kept.keys.unit_bytes()).max(1);
            let changed = out.targets.iter().zip(&out.extents_bytes).any(|(t, e)| {
                paths
                    .iter()
                    .position(|p| same_path(p, &t.path))
                    .is_some_and(|i| kept.keys.units(i as u32) != e / unit)
            });
            if changed {
                self.kept_verify = None;
            }
        }
        if out.trim_pass.is_some() {
            // The trim pass discarded what kept keys say the blocks hold.
            self.kept_verify = None;
        }
        let outcome = &out.outcome;
        let interrupted = self.stop.interrupted();
        let (status, validation_errors) = out.status(interrupted);
        let summary = out.summary();
        self.out.send(Event::StepEnded {
            index: step.index,
            status,
            outcome,
            summary: &summary,
        });
        if let (Some(_), Some(setup)) = (&self.run.inv.journal, &out.verify) {
            crate::journal::close(setup, outcome.errors, &mut self.out);
        }
        let mut analysis = analyse::analyse_step(w, &out, false);
        if let Some(ss) = step.steady_state {
            analysis.push(Finding::SteadyState(analyse::steady_state_verdict(
                &rounds,
                ss,
                steady_at_round,
            )));
        }
        if let StepRole::Precondition(p) = &step.role {
            let bw = if outcome.measured_s > 0.0 {
                written_bytes as f64 / outcome.measured_s
            } else {
                0.0
            };
            analysis.push(Finding::Precondition(PreconditionFinding {
                passes: p.passes,
                written_bytes,
                duration_s: outcome.measured_s,
                bw_bytes_per_s: bw,
                trimmed_bytes: out.trim_pass.map(|t| t.bytes),
                trim_s: out.trim_pass.map(|t| t.duration.as_secs_f64()),
            }));
        }
        for f in &analysis {
            self.out.send(Event::Finding {
                index: Some(step.index),
                finding: f,
            });
        }
        match step.role {
            StepRole::CurveMax { group } => {
                self.curve_max.insert(group, summary.total.iops);
                if !out.jobs.is_empty() {
                    let each = out.jobs.iter().map(|j| j.result.summary.total.iops);
                    self.curve_job_max.insert(group, each.collect());
                }
            }
            StepRole::CurveRate { group, .. } | StepRole::CurveRefine { group, .. } => {
                if let Some(limit_ms) = step.stop_latency_ms {
                    let mean_ms = summary.total.lat_ns.mean as f64 / 1e6;
                    if mean_ms > limit_ms {
                        self.curve_stopped.insert(
                            group,
                            format!(
                                "mean latency {mean_ms:.3} ms passed stop_latency_ms {limit_ms}"
                            ),
                        );
                    }
                }
            }
            _ => {}
        }
        let write_bytes = outcome.summary.write.bytes;
        let measured: Vec<&iorig_result::Interval> =
            out.intervals.iter().filter(|i| !i.warmup).collect();
        let se = |f: fn(&iorig_result::Interval) -> u64| {
            let v: Vec<f64> = measured.iter().map(|i| f(i) as f64).collect();
            iorig_stats::analysis::curve::standard_error(&v)
        };
        self.results.push(StepResult {
            step: step.clone(),
            status,
            summary: Some(summary),
            analysis,
            jobs: out.jobs.clone(),
            lat_se_ns: (se(|i| i.total.lat_ns.mean), se(|i| i.total.lat_ns.p99)),
        });
        if interrupted {
            return Ok((Next::Halt, false));
        }
        if status == StepStatus::Failed && validation_errors > 0 {
            self.out.notice(&format!(
                "step {} found {validation_errors} validation error(s); the plan stops here",
                step.index + 1
            ));
            return Ok((Next::Halt, true));
        }
        if status == StepStatus::Failed {
            let run = self.out.store.run();
            let first = out
                .outcome
                .error_messages
                .first()
                .map(|m| format!(" (first: {m})"))
                .unwrap_or_default();
            self.out.notice(&format!(
                "step {} failed with I/O errors{first}; the plan stops here (iorig plan resume {} retries it)",
                step.index + 1,
                run.map(|r| r.to_string()).unwrap_or_else(|| "-".into())
            ));
            return Ok((Next::Halt, false));
        }
        // Pause before the next step.
        let pause = match step.pause {
            Pause::None => Duration::ZERO,
            Pause::Fixed(d) => d,
            Pause::WrittenBytesAt { bytes_per_s } => {
                Duration::from_secs_f64((write_bytes as f64 / bytes_per_s.max(1.0)).min(86_400.0))
            }
        };
        if !pause.is_zero() && k + 1 < self.run.steps.len() {
            self.out.notice(&format!(
                "pausing {} after step {}",
                iorig_spec::format_duration(pause),
                step.index + 1
            ));
            if !self.stop.sleep(pause) {
                return Ok((Next::Halt, false));
            }
        }
        Ok((Next::Go, false))
    }

    fn skip(&mut self, step: &PlanStep, why: String) {
        let finding = Finding::Skipped(SkippedFinding { why });
        self.out.send(Event::StepSkipped {
            index: step.index,
            label: &step.label,
            finding: &finding,
        });
        self.results.push(StepResult {
            step: step.clone(),
            status: StepStatus::Skipped,
            summary: None,
            analysis: vec![finding],
            jobs: Vec::new(),
            lat_se_ns: (None, None),
        });
    }
}

/// The workload a step runs, with what only the runner fills in: a
/// precondition's open-ended time, a curve step's `rate` (from the measured
/// max), a steady-state step's longest time, the seed, and a hot range from
/// the target's size.
fn step_workload(
    step: &PlanStep,
    rate: Option<f64>,
    allow_destroy: bool,
) -> Result<Workload, RunError> {
    step_workload_on(step, rate, allow_destroy, true).map(|(w, _)| w)
}

/// The step's workload and the keys it was resolved from; `local`: the
/// hot range is computed here from the target (else each host does it).
fn step_workload_on(
    step: &PlanStep,
    rate: Option<f64>,
    allow_destroy: bool,
    local: bool,
) -> Result<(Workload, WorkloadFile), RunError> {
    // A step of one job is that job (its targets, sizes, validation).
    let mut wf = match step.jobs.as_slice() {
        [one] => one.workload.clone(),
        _ => step.workload.clone(),
    };
    if let StepRole::Precondition(_) = step.role {
        wf.time = Some(StrOrNum::Str(PRECONDITION_TIME.into()));
        wf.warmup = Some(StrOrNum::Str("0s".into()));
    }
    if let Some(r) = rate {
        wf.rate = Some(StrOrNum::Float(r));
    }
    // Arrivals shape a paced rate: a curve's max step and a swept `max`
    // have none to shape.
    let unpaced = matches!(step.role, StepRole::CurveMax { .. })
        || wf
            .rate
            .as_ref()
            .is_some_and(|r| matches!(r, StrOrNum::Str(t) if t.trim() == "max"));
    if unpaced {
        wf.arrivals = None;
    }
    if let Some(ss) = step.steady_state {
        let t = ss.round * ss.max_rounds;
        wf.time = Some(StrOrNum::Str(format!("{}ms", t.as_millis())));
    }
    let prefix = format!("step {} ({}): ", step.index + 1, step.label);
    let mut w = wf
        .resolve(seed_for(step.index))
        .map_err(|e| RunError::usage(format!("{prefix}{e}")))?;
    if let (Some(hot), true) = (step.hot_size_bytes, local) {
        w = with_hot_range(w, hot, allow_destroy).map_err(|e| e.context(&prefix))?;
    }
    if local && !step.sizing.is_empty() {
        w = crate::sizing::apply(w, &step.sizing, allow_destroy)
            .map_err(|e| e.context(&prefix))?
            .0;
    }
    wf.seed = Some(w.seed);
    Ok((w, wf))
}

/// A curve step's rate from its max and share ([`Runner::curve_pct`]).
fn curve_rate(paced: Option<(f64, f64)>) -> Option<f64> {
    paced.map(|(max, pct)| crate::analyse::curve_step_rate(max, pct))
}

/// How the runner paces the jobs of a step of several.
enum JobRates {
    /// As the plan gives them.
    AsPlanned,
    /// A curve's max step: none paced (and so no arrival process).
    Unpaced,
    /// A curve's rate step: each job's own rate, in order.
    Each(Vec<f64>),
}

impl JobRates {
    /// For a check before anything runs: a curve's rates are not known
    /// yet, so each job gets a stand-in.
    fn stand_in(step: &PlanStep) -> JobRates {
        match step.role {
            StepRole::CurveMax { .. } if step.jobs.len() > 1 => JobRates::Unpaced,
            _ if step.role.paced_by_curve() && step.jobs.len() > 1 => {
                JobRates::Each(vec![1.0; step.jobs.len()])
            }
            _ => JobRates::AsPlanned,
        }
    }
}

/// The jobs of `step` as they are checked and run: a step of one job is
/// that job as the step prepared it in `w` (a curve's rate, a steady
/// state's rounds, a tree's format); a step of several takes `rates`.
fn prepared_jobs(
    step: &PlanStep,
    w: &Workload,
    rates: &JobRates,
) -> Result<Vec<crate::JobCall>, RunError> {
    let mut jobs = step_jobs(step, rates)?;
    if let [one] = jobs.as_mut_slice() {
        one.w = w.clone();
    }
    Ok(jobs)
}

/// The jobs of a step of several, resolved (each its own seed).
fn step_jobs(step: &PlanStep, rates: &JobRates) -> Result<Vec<crate::JobCall>, RunError> {
    step.jobs
        .iter()
        .enumerate()
        .map(|(i, j)| {
            let mut wf = j.workload.clone();
            match rates {
                JobRates::AsPlanned => {}
                JobRates::Unpaced => wf.arrivals = None,
                JobRates::Each(r) => {
                    wf.rate = r.get(i).map(|r| StrOrNum::Float(*r));
                }
            }
            // One job has the step's seed (it is the step).
            let seed = if step.jobs.len() == 1 {
                seed_for(step.index)
            } else {
                seed_for(step.index).wrapping_add(i as u64 + 1)
            };
            let w = wf.resolve(seed).map_err(|e| {
                RunError::usage(format!(
                    "step {} ({}), job '{}': {e}",
                    step.index + 1,
                    step.label,
                    j.name
                ))
            })?;
            Ok(crate::JobCall {
                name: j.name.clone(),
                w,
                exitall: j.exitall,
            })
        })
        .collect()
}

/// Checks every step before the first I/O: its workload resolves and
/// validates (hot range included), and its targets pass every safety check
/// (read-only looks, nothing written).
fn validate_steps(steps: &[PlanStep], allow_destroy: bool) -> Result<(), RunError> {
    // Every step is planned: what a target check finds depends on the
    // step's block size, range, size, engine, qd and flags, not only on its
    // targets (the checks only look; a device costs one probe per step).
    let mut built = HashSet::new();
    for s in steps {
        let rate = s.role.paced_by_curve().then_some(1.0);
        let mut w = step_workload(s, rate, allow_destroy)?;
        tree_format(&mut w, &mut built, true);
        let ctx = |e: RunError| e.context(&format!("step {} ({}): ", s.index + 1, s.label));
        let jobs = prepared_jobs(s, &w, &JobRates::stand_in(s))?;
        if jobs.is_empty() {
            engine_run::plan(&w, allow_destroy).map_err(|e| ctx(e.into()))?;
        } else {
            crate::group::check_jobs(&jobs, allow_destroy).map_err(ctx)?;
        }
    }
    Ok(())
}

/// A plan's journal: its validating steps are all on the same targets
/// (the journal's key map is theirs), none is a tree or a step of several
/// jobs, and the journal itself passes the single run's checks.
fn check_journal(
    path: &std::path::Path,
    steps: &[PlanStep],
    allow_destroy: bool,
) -> Result<(), RunError> {
    let mut verifying = 0;
    let mut first: Option<Vec<String>> = None;
    let mut unit: Option<u64> = None;
    for s in steps {
        let rate = s.role.paced_by_curve().then_some(1.0);
        let w = step_workload(s, rate, allow_destroy)?;
        let ctx = |why: String| {
            RunError::usage(format!(
                "--journal: step {} ({}): {why}",
                s.index + 1,
                s.label
            ))
        };
        if s.jobs.len() > 1 {
            return Err(ctx(
                "a step of several jobs is not journaled yet; give each job its own step, or drop --journal".into(),
            ));
        }
        if !w.verify {
            if w.writes() {
                return Err(ctx(
                    "it writes without validation, so the journal would not know its writes; validate every writing step, or drop --journal".into(),
                ));
            }
            continue;
        }
        if w.fs.is_some() {
            return Err(ctx(
                "a journal follows block targets; a tree is not journaled yet".into(),
            ));
        }
        if w.min_iops.is_some() {
            return Err(ctx(
                "min_iops stops a step as a failure, which leaves the journal unsettled; drop min_iops or --journal".into(),
            ));
        }
        // One journal keeps keys in one unit: the first validating step's
        // smallest block size; a later step's blocks must be whole units.
        match unit {
            None => unit = Some(w.verify_unit_bytes()),
            Some(u) => crate::journal::unit_fits(path, u, &w).map_err(|e| {
                e.context(&format!(
                    "step {} ({}): an earlier step made the journal's unit {u} bytes: ",
                    s.index + 1,
                    s.label
                ))
            })?,
        }
        match &first {
            None => first = Some(w.targets.clone()),
            Some(t) if *t != w.targets => {
                return Err(ctx(format!(
                    "its targets ({}) are not the journaled ones ({}); one journal keeps one set of targets",
                    w.targets.join(", "),
                    t.join(", ")
                )))
            }
            Some(_) => {}
        }
        crate::journal::precheck(path, &w)
            .map_err(|e| e.context(&format!("step {} ({}): ", s.index + 1, s.label)))?;
        verifying += 1;
    }
    if verifying == 0 {
        return Err(RunError::usage(
            "--journal records validated writes, and no step validates; add validation (verify = true, vdbench validate=yes) or drop --journal",
        ));
    }
    Ok(())
}

/// What a file-system step's format does within its plan: `once` builds
/// the tree the first time a step of the run uses its anchor and keeps it
/// after (`restart`). When `checking` (the plan's checks before any step
/// runs), a step that uses a tree as it is (`no`) after a step that builds
/// it is checked as the builder leaves it, since the tree is not there yet.
fn tree_format(w: &mut Workload, built: &mut HashSet<String>, checking: bool) {
    let Some(f) = w.fs.as_mut() else { return };
    let seen = built.contains(&f.anchor);
    f.format = match f.format {
        FormatMode::Once if seen => FormatMode::Restart,
        FormatMode::Once => FormatMode::Yes,
        FormatMode::No if checking && seen => FormatMode::Restart,
        other => other,
    };
    if f.format != FormatMode::No {
        built.insert(f.anchor.clone());
    }
}

/// The keys a host resolves the step from carry the format the plan chose
/// for it (`once` is the first time `yes`, then `restart`).
fn tree_layer(w: &Workload, layer: &mut WorkloadFile) {
    if let Some(f) = &w.fs {
        layer.format = Some(f.format);
    }
}

/// Whether two target paths name the same file or device.
fn same_path(a: &str, b: &str) -> bool {
    iorig_engine::target::same_target(Path::new(a), Path::new(b))
}

/// Each step its own seed, fixed by its position, so a resumed or repeated
/// plan issues the same offsets (a seed in the plan overrides it).
fn seed_for(index: usize) -> u64 {
    0x696f_7269_6700_0000 ^ (index as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Limits `w` to the first `hot_bytes` of its (smallest) target.
pub fn with_hot_range(
    mut w: Workload,
    hot_bytes: u64,
    allow_destroy: bool,
) -> Result<Workload, RunError> {
    let planned = engine_run::plan(&w, allow_destroy)?;
    let size = planned
        .targets
        .iter()
        .map(|t| t.size_bytes)
        .min()
        .unwrap_or(0);
    if size == 0 {
        return Ok(w);
    }
    let pct = (hot_bytes as f64 / size as f64 * 100.0).min(100.0);
    w.range = iorig_spec::RangePct {
        start_pct: 0.0,
        end_pct: pct,
    };
    w.validate().map_err(|e| RunError::usage(e.to_string()))?;
    Ok(w)
}

/// What the plan runner does between intervals of a step.
struct PlanHooks<'a> {
    step: &'a PlanStep,
    w: &'a Workload,
    k: usize,
    total: usize,
    plan_start: Instant,
    remaining_after: Duration,
    /// The validation state of the last `verify` step and its targets.
    kept_verify: &'a mut Option<(Vec<String>, Arc<VerifySetup>)>,
    /// The plan's journal: each validating step attaches to it.
    journal: Option<&'a Path>,
    /// When the step's I/O started (targets open).
    step_start: Option<Instant>,
    /// Bytes a precondition must write (known once targets are open).
    precondition_bytes: Option<u64>,
    written_bytes: u64,
    /// Steady state: IOPS of each completed round.
    rounds: Vec<f64>,
    round_ops: u64,
    round_s: f64,
    steady_at_round: Option<usize>,
}

impl StepHooks for PlanHooks<'_> {
    fn verify_setup(&mut self, prepared: &Prepared) -> Result<Option<Arc<VerifySetup>>, RunError> {
        if let Some(path) = self.journal {
            // The journal carries the key map from step to step.
            return crate::journal::attach(path, self.w, prepared).map(Some);
        }
        let paths: Vec<String> = prepared.info.iter().map(|t| t.path.clone()).collect();
        let unit = self.w.verify_unit_bytes() as u32;
        let setup = match self.kept_verify.as_ref() {
            Some((kept_paths, kept))
                if *kept_paths == paths
                    && kept.keys.unit_bytes() == unit
                    && kept.content == UnitContent::of(self.w)
                    && prepared
                        .extents_bytes
                        .iter()
                        .enumerate()
                        .all(|(t, e)| kept.keys.units(t as u32) == e / unit as u64) =>
            {
                VerifySetup {
                    keys: kept.keys.clone(),
                    journal: None,
                    target_ids: kept.target_ids.clone(),
                    after_write: self.w.verify_after,
                    content: UnitContent::of(self.w),
                    // The plan knows what its steps wrote here: a check
                    // reads those units, not blocks it never wrote.
                    every_unit: false,
                }
            }
            _ => VerifySetup::fresh(unit, &prepared.extents_bytes, self.w)?,
        };
        let setup = Arc::new(setup);
        *self.kept_verify = Some((paths, setup.clone()));
        Ok(Some(setup))
    }

    fn byte_limit(&mut self, working_set_bytes: u64) -> Option<u64> {
        // A precondition writes its passes over the working set exactly: the
        // workers stop issuing once these bytes are out.
        if let StepRole::Precondition(p) = &self.step.role {
            self.precondition_bytes = Some(working_set_bytes.saturating_mul(u64::from(p.passes)));
        }
        self.precondition_bytes
    }

    fn opened(&mut self, _out: &mut Out<'_>, _targets: &[TargetInfo]) -> Result<(), RunError> {
        self.step_start = Some(Instant::now());
        Ok(())
    }

    fn trim_first(&self) -> bool {
        matches!(&self.step.role, StepRole::Precondition(p) if p.trim)
    }

    fn byte_passes(&self) -> Option<u32> {
        match &self.step.role {
            StepRole::Precondition(p) => Some(p.passes),
            _ => None,
        }
    }

    fn interval(&mut self, sample: &IntervalSample) -> (Control, Option<PlanProgress>) {
        self.written_bytes += sample.stats.write.bytes;
        let mut control = Control::Continue;
        if let (Some(ss), false) = (self.step.steady_state, sample.warmup) {
            self.round_ops += sample.stats.ops();
            self.round_s += sample.duration_s;
            // A round closes at its length (within half an interval).
            let round_s = ss.round.as_secs_f64();
            if self.round_s + self.w.interval.as_secs_f64() / 2.0 >= round_s {
                self.rounds
                    .push(self.round_ops as f64 / self.round_s.max(1e-9));
                self.round_ops = 0;
                self.round_s = 0.0;
                let judged = &self.rounds[ss.ramp_rounds().min(self.rounds.len())..];
                if crate::analyse::detector(&ss).check(judged).reached {
                    self.steady_at_round = Some(self.rounds.len());
                    control = Control::Stop;
                }
            }
        }
        (control, Some(self.progress()))
    }
}

impl PlanHooks<'_> {
    fn progress(&self) -> PlanProgress {
        let in_step = self.step_start.map(|t| t.elapsed()).unwrap_or_default();
        let step_left = match self.precondition_bytes {
            // Bytes left at the rate so far.
            Some(limit) if self.written_bytes > 0 => {
                let rate = self.written_bytes as f64 / in_step.as_secs_f64().max(1e-3);
                Duration::from_secs_f64(
                    (limit.saturating_sub(self.written_bytes) as f64 / rate).min(1e7),
                )
            }
            Some(_) => Duration::ZERO,
            None => (self.w.warmup + self.w.time).saturating_sub(in_step),
        };
        PlanProgress {
            position: self.k,
            steps: self.total,
            label: self.step.label.clone(),
            elapsed: self.plan_start.elapsed(),
            eta: self.remaining_after + step_left,
            fill_pct: self
                .precondition_bytes
                .map(|limit| (self.written_bytes as f64 / limit.max(1) as f64 * 100.0).min(100.0)),
        }
    }
}
