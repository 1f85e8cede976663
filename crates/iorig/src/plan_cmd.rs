//! `iorig plan run|resume|builtins` and the plan runner that `iorig quick` uses.
//!
//! The runner walks the expanded steps in order. For each: fill in what only it
//! can know (a curve's rates from its measured max, a hot range from the target
//! size), run the step through the shared step executor while writing every
//! interval to the store, end it early when the step says so (steady state
//! reached, precondition bytes written), analyse it, and pause. The plan as
//! invoked is stored with the run, so `plan resume` can rebuild the same steps
//! and continue at the first one not completed.

use crate::analyse;
use crate::output::{table, Printer};
use crate::record::{db_path, open_existing, Recorder};
use crate::signals::Signals;
use crate::step::{describe, run_step, Control, StepObserver};
use crate::{exit, Failure};
use iorig_engine::run::{self as engine_run, IntervalSample, Prepared, TargetInfo};
use iorig_engine::verify::VerifySetup;
use iorig_result::{Finding, Interval, PreconditionFinding, SkippedFinding, Summary};
use iorig_spec::plan::{estimate_duration, HotSize, Pause, Plan, PlanStep, StepRole};
use iorig_spec::{parse_duration, StrOrNum, Workload};
use iorig_stats::analysis::steady_state::SteadyStateDetector;
use iorig_store::{RunId, RunKind, RunStatus, StepStatus};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A precondition's time bound: it ends by bytes long before this.
const PRECONDITION_TIME: &str = "1000h";
/// Precondition speed assumed for estimates before anything was measured.
const ASSUMED_FILL_MB_PER_S: f64 = 500.0;
/// A plan longer than this asks for --yes.
const LONG_PLAN: Duration = Duration::from_secs(24 * 3600);

/// How a plan was invoked: enough to rebuild the same steps on resume.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Invocation {
    /// `builtin:NAME` or the file path.
    pub source: String,
    pub text: String,
    pub targets: Option<Vec<String>>,
    pub size: Option<String>,
    pub hot_size: Option<String>,
    pub step_time: Option<String>,
    /// Permission to destroy is given per invocation and never stored: a
    /// resume re-checks every target and needs `--allow-destroy` again.
    #[serde(skip)]
    pub allow_destroy: bool,
}

impl Invocation {
    pub fn from_builtin(name: &str) -> Result<Self, Failure> {
        let text = iorig_spec::plan::builtin_text(name).ok_or_else(|| {
            let names: Vec<&str> = iorig_spec::plan::builtins()
                .iter()
                .map(|(n, _)| *n)
                .collect();
            Failure::usage(format!(
                "no built-in plan '{name}'; choose one of {} (iorig plan builtins)",
                names.join(", ")
            ))
        })?;
        Ok(Invocation {
            source: format!("builtin:{name}"),
            text: text.to_string(),
            targets: None,
            size: None,
            hot_size: None,
            step_time: None,
            allow_destroy: false,
        })
    }

    pub fn from_file(path: &Path) -> Result<Self, Failure> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::usage(format!("plan file {}: {e}", path.display())))?;
        Ok(Invocation {
            source: path.display().to_string(),
            text,
            targets: None,
            size: None,
            hot_size: None,
            step_time: None,
            allow_destroy: false,
        })
    }

    /// The plan with the command line's overrides applied.
    pub fn plan(&self) -> Result<Plan, Failure> {
        let usage = |e: iorig_spec::SpecError| Failure::usage(e.to_string());
        let mut plan = Plan::from_toml(&self.source, &self.text).map_err(usage)?;
        if let Some(t) = &self.targets {
            plan.targets = Some(t.clone());
        }
        if let Some(s) = &self.size {
            let bytes = iorig_spec::parse_size(s).map_err(usage)?;
            if bytes == 0 {
                return Err(Failure::usage("--size 0: give a size above 0, e.g. 1g"));
            }
            plan.size_bytes = Some(bytes);
        }
        if let Some(h) = &self.hot_size {
            plan.hot_size = HotSize::parse(h).map_err(usage)?;
        }
        if let Some(t) = &self.step_time {
            let d = parse_duration(t).map_err(usage)?;
            if d.is_zero() {
                return Err(Failure::usage(
                    "--step-time 0: give a time above 0, e.g. 10s",
                ));
            }
            plan = plan.with_step_time(d);
        }
        Ok(plan)
    }
}

/// Options of one plan execution.
pub struct RunOptions {
    pub kind: RunKind,
    pub db: Option<PathBuf>,
    pub no_db: bool,
    pub labels: BTreeMap<String, String>,
    pub dry_run: bool,
    pub yes: bool,
    pub quiet: bool,
}

/// A finished step, as the runner and its summaries see it.
#[derive(Debug, Clone)]
pub struct StepResult {
    pub step: PlanStep,
    pub status: StepStatus,
    pub summary: Option<Summary>,
    pub analysis: Vec<Finding>,
}

pub fn parse_labels(labels: &[String]) -> Result<BTreeMap<String, String>, Failure> {
    let mut out = BTreeMap::new();
    for l in labels {
        let (k, v) = l.split_once('=').ok_or_else(|| {
            Failure::usage(format!(
                "bad --label '{l}': write KEY=VALUE, e.g. --label array=A"
            ))
        })?;
        if k.trim().is_empty() {
            return Err(Failure::usage(format!(
                "bad --label '{l}': the key is empty"
            )));
        }
        out.insert(k.trim().to_string(), v.to_string());
    }
    Ok(out)
}

fn text_of(v: &Option<StrOrNum>) -> String {
    match v {
        None => "-".into(),
        Some(StrOrNum::Str(s)) => s.clone(),
        Some(StrOrNum::Int(i)) => i.to_string(),
        Some(StrOrNum::Float(f)) => f.to_string(),
    }
}

fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m{:02}s", s / 3600, s % 3600 / 60, s % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

/// The `--dry-run` listing.
fn print_dry_run(printer: &Printer, plan: &Plan, steps: &[PlanStep], estimate: Duration) {
    printer.line(&format!(
        "plan {} ({}): {} step(s), estimated {}",
        plan.name,
        plan.path,
        steps.len(),
        fmt_duration(estimate)
    ));
    printer.line(&format!(
        "{:>5}  {:<14} {:<40} {:>6} {:>5} {:>6} {:>5} {:>7} {:>8} {:>8}",
        "step", "role", "label", "bs", "read", "random", "qd", "threads", "rate", "time"
    ));
    for s in steps {
        let w = &s.workload;
        let time = match (&s.role, s.time, s.steady_state) {
            (StepRole::Precondition(p), _, _) => format!("{}x fill", p.passes),
            (_, _, Some(ss)) => format!("{}x{}", ss.max_rounds, fmt_duration(ss.round)),
            (_, Some(t), None) => fmt_duration(t),
            (_, None, None) => "-".into(),
        };
        let rate = match s.role {
            StepRole::CurveRate { pct, .. } => format!("{pct}%max"),
            _ => text_of(&w.rate),
        };
        printer.line(&format!(
            "{:>5}  {:<14} {:<40} {:>6} {:>5} {:>6} {:>5} {:>7} {:>8} {:>8}",
            s.index + 1,
            iorig_result::StepRole::from(&s.role),
            s.label,
            text_of(&w.bs),
            text_of(&w.read),
            text_of(&w.random),
            text_of(&w.qd),
            text_of(&w.threads),
            rate,
            time
        ));
    }
}

/// `iorig plan run` and `iorig quick`: expand, check, then run every step.
pub fn run_plan(inv: Invocation, opts: RunOptions) -> Result<(u8, Vec<StepResult>), Failure> {
    let plan = inv.plan()?;
    let steps = plan.expand().map_err(|e| Failure::usage(e.to_string()))?;
    if steps.is_empty() {
        return Err(Failure::usage(format!(
            "plan {} has no steps; add at least one [[steps]] block",
            plan.path
        )));
    }
    let estimate = estimate_duration(&steps, None, ASSUMED_FILL_MB_PER_S);
    let printer = Printer::new(false, opts.quiet);
    if !opts.no_db {
        crate::record::check_store(&db_path(opts.db.as_deref()))?;
    }
    // Every step's workload and targets are checked before anything runs or
    // is written; a dry run finds exactly the errors a real run would.
    validate_steps(&steps, inv.allow_destroy)?;
    if opts.dry_run {
        print_dry_run(&printer, &plan, &steps, estimate);
        printer.line("every step and target checked: ok (nothing was run or written)");
        return Ok((exit::OK, Vec::new()));
    }
    if estimate > LONG_PLAN && !opts.yes {
        return Err(Failure::usage(format!(
            "plan {} would take about {} ({} steps); check it with --dry-run, shorten it with --step-time, or pass --yes",
            plan.name,
            fmt_duration(estimate),
            steps.len()
        )));
    }
    let mut recorder = if opts.no_db {
        Recorder::none()
    } else {
        Recorder::at(&db_path(opts.db.as_deref()))?
    };
    let plan_json = serde_json::to_string(&inv).ok();
    recorder.begin_run(opts.kind, plan_json, &opts.labels)?;
    // Store every step as pending now, so a resume knows the whole plan.
    for s in &steps {
        recorder.pending_step(&printer, s.index, &s.label, (&s.role).into());
    }
    let runner = Runner {
        inv,
        plan,
        steps,
        recorder,
        done: HashMap::new(),
        quiet: opts.quiet,
    };
    runner.run()
}

/// `iorig plan resume ID`.
pub fn resume(
    id: i64,
    db: Option<&Path>,
    quiet: bool,
    allow_destroy: bool,
) -> Result<(u8, Vec<StepResult>), Failure> {
    let store = open_existing(&db_path(db))?;
    let run = store
        .get_run(RunId(id))
        .map_err(|e| Failure::runtime(format!("result store: {e}")))?
        .ok_or_else(|| {
            Failure::usage(format!(
                "no run {id} in the result store; iorig runs list shows the runs"
            ))
        })?;
    let Some(plan_json) = &run.plan_json else {
        return Err(Failure::usage(format!(
            "run {id} is a single {} run, not a plan; only plans can be resumed",
            run.run.kind
        )));
    };
    if run.run.status == RunStatus::Ok {
        return Err(Failure::usage(format!(
            "run {id} finished already; nothing to resume"
        )));
    }
    let mut inv: Invocation = serde_json::from_str(plan_json)
        .map_err(|e| Failure::runtime(format!("run {id}: the stored plan cannot be read ({e})")))?;
    // Runs stored by older versions carry `allow_destroy`; it is ignored.
    inv.allow_destroy = allow_destroy;
    let plan = inv.plan()?;
    let steps = plan.expand().map_err(|e| Failure::usage(e.to_string()))?;
    let stored = store
        .steps(RunId(id))
        .map_err(|e| Failure::runtime(format!("result store: {e}")))?;
    let mut done = HashMap::new();
    for row in stored {
        if row.status.is_complete() {
            let summary = row.summary.as_ref().and_then(|s| s.io()).cloned();
            done.insert(row.index as usize, (row.status, summary));
        }
    }
    // Every step and target is checked again before the run is reopened:
    // whatever the targets hold now decides, not what they held then.
    validate_steps(&steps, inv.allow_destroy)?;
    store
        .reopen_run(RunId(id))
        .map_err(|e| Failure::runtime(format!("result store: {e}")))?;
    let printer = Printer::new(false, quiet);
    printer.notice(&format!(
        "resuming run {id} ({}): {} of {} steps already done",
        plan.name,
        done.len(),
        steps.len()
    ));
    let runner = Runner {
        inv,
        plan,
        steps,
        recorder: Recorder::resume(store, RunId(id)),
        done,
        quiet,
    };
    runner.run()
}

struct Runner {
    inv: Invocation,
    plan: Plan,
    steps: Vec<PlanStep>,
    recorder: Recorder,
    /// Steps completed in an earlier session (resume): status and summary.
    done: HashMap<usize, (StepStatus, Option<Summary>)>,
    quiet: bool,
}

impl Runner {
    fn run(mut self) -> Result<(u8, Vec<StepResult>), Failure> {
        let mut printer = Printer::new(false, self.quiet);
        let signals = Signals::install();
        let mut results: Vec<StepResult> = Vec::new();
        let mut curve_max: HashMap<u32, f64> = HashMap::new();
        let mut curve_stopped: HashMap<u32, String> = HashMap::new();
        let mut seen_targets = Vec::new();
        let mut failed = false;
        let mut validation_failed = false;
        // Validation keys carry over from step to step on the same targets,
        // so a write step followed by a read step checks what was written.
        let mut kept_verify: Option<(Vec<String>, Arc<VerifySetup>)> = None;
        let total = self.steps.len();
        let plan_start = Instant::now();
        let steps = self.steps.clone();
        for (k, step) in steps.iter().enumerate() {
            // Completed earlier (resume).
            if let Some((status, summary)) = self.done.get(&step.index).cloned() {
                if let (StepRole::CurveMax { group }, Some(s)) = (&step.role, &summary) {
                    curve_max.insert(*group, s.total.iops);
                }
                results.push(StepResult {
                    step: step.clone(),
                    status,
                    summary,
                    analysis: Vec::new(),
                });
                continue;
            }
            if signals.interrupted() || failed {
                break;
            }
            // Fill in what only the runner knows.
            let rate = match step.role {
                StepRole::CurveRate { group, pct } => {
                    if let Some(why) = curve_stopped.get(&group) {
                        self.skip(&printer, step, &mut results, why.clone());
                        continue;
                    }
                    match curve_max.get(&group) {
                        Some(max) if *max > 0.0 => Some((max * pct / 100.0).max(1.0).round()),
                        _ => {
                            self.skip(
                                &printer,
                                step,
                                &mut results,
                                "the curve's max run measured no IOPS".into(),
                            );
                            continue;
                        }
                    }
                }
                _ => None,
            };
            let w = match step_workload(step, rate, self.inv.allow_destroy) {
                Ok(w) => w,
                Err(f) => {
                    self.recorder.finish_run(&printer, RunStatus::Failed);
                    return Err(f);
                }
            };
            // A write without validation changes blocks behind the key map's
            // back: the kept keys no longer say what the targets hold, and a
            // later verifying read would call every such block a lost write.
            if w.writes() && !w.verify {
                let overlaps = kept_verify.as_ref().is_some_and(|(paths, _)| {
                    w.targets
                        .iter()
                        .any(|t| paths.iter().any(|p| same_path(p, t)))
                });
                if overlaps {
                    kept_verify = None;
                }
            }
            let step_id = self.recorder.begin_step(
                &printer,
                step.index,
                &step.label,
                (&step.role).into(),
                Some(&w.record()),
            );
            let remaining_after: Duration =
                estimate_duration(&steps[k + 1..], None, ASSUMED_FILL_MB_PER_S);
            let mut obs = PlanObserver {
                recorder: &mut self.recorder,
                step_id,
                step,
                w: &w,
                k,
                total,
                plan_start,
                remaining_after,
                seen_targets: &mut seen_targets,
                kept_verify: &mut kept_verify,
                step_start: None,
                precondition_bytes: None,
                written_bytes: 0,
                rounds: Vec::new(),
                round_ops: 0,
                round_s: 0.0,
                steady_at_round: None,
            };
            signals.rearm();
            let out = match run_step(&w, self.inv.allow_destroy, &mut printer, &signals, &mut obs) {
                Ok(o) => o,
                Err(f) => {
                    // The step never started (its target vanished, say).
                    let rec = obs.recorder;
                    rec.finish_step_without_output(&printer, step_id, StepStatus::Failed);
                    rec.finish_run(&printer, RunStatus::Failed);
                    return Err(f);
                }
            };
            let rounds = std::mem::take(&mut obs.rounds);
            let steady_at_round = obs.steady_at_round;
            let written_bytes = obs.written_bytes;
            // A step that changed a target's size (a scratch file truncated
            // or grown) changed blocks behind the kept keys: drop them.
            if let Some((paths, kept)) = &kept_verify {
                let unit = u64::from(kept.keys.unit_bytes()).max(1);
                let changed = out.targets.iter().zip(&out.extents_bytes).any(|(t, e)| {
                    paths
                        .iter()
                        .position(|p| same_path(p, &t.path))
                        .is_some_and(|i| kept.keys.units(i as u32) != e / unit)
                });
                if changed {
                    kept_verify = None;
                }
            }
            let outcome = &out.outcome;
            let interrupted = signals.interrupted();
            let validation_errors = outcome.validation.as_ref().map_or(0, |v| v.errors);
            let status = if interrupted {
                StepStatus::Interrupted
            } else if outcome.errors > 0 || validation_errors > 0 {
                StepStatus::Failed
            } else {
                StepStatus::Ok
            };
            let summary = crate::output::json::step_summary(outcome, &out.targets);
            if self.quiet {
                printer.line(&format!("step {}/{} {}:", k + 1, total, step.label));
            }
            for l in table::summary_lines(
                &outcome.summary,
                outcome.measured_s,
                outcome.cpu,
                outcome.summary.errors,
            ) {
                printer.line(&l);
            }
            if let Some(v) = &outcome.validation {
                for l in crate::verify_cmd::summary_lines(v) {
                    printer.line(&l);
                }
            }
            let mut analysis = analyse::analyse_step(&w, &out, &printer);
            if let Some(ss) = step.steady_state {
                let v = analyse::steady_state_verdict(&rounds, ss, steady_at_round);
                printer.notice(&analyse::steady_state_line(&step.label, &v));
                analysis.push(Finding::SteadyState(v));
            }
            if let StepRole::Precondition(p) = step.role {
                let mb_s = if outcome.measured_s > 0.0 {
                    written_bytes as f64 / outcome.measured_s / 1e6
                } else {
                    0.0
                };
                printer.line(&format!(
                    "precondition: wrote {} in {:.1} s ({mb_s:.1} MB/s)",
                    table::human_bytes(written_bytes),
                    outcome.measured_s
                ));
                analysis.push(Finding::Precondition(PreconditionFinding {
                    passes: p.passes,
                    written_bytes,
                    duration_s: outcome.measured_s,
                    bw_bytes_per_s: mb_s * 1e6,
                }));
            }
            self.recorder
                .finish_step(&printer, step_id, status, outcome, &summary);
            for f in &analysis {
                self.recorder.analysis(&printer, step_id, f);
            }
            match step.role {
                StepRole::CurveMax { group } => {
                    curve_max.insert(
                        group,
                        outcome.summary.total().summary(outcome.measured_s).iops,
                    );
                }
                StepRole::CurveRate { group, .. } => {
                    if let Some(limit_ms) = step.stop_latency_ms {
                        let mean_ms = summary.total.lat_ns.mean as f64 / 1e6;
                        if mean_ms > limit_ms {
                            curve_stopped.insert(
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
            results.push(StepResult {
                step: step.clone(),
                status,
                summary: Some(summary),
                analysis,
            });
            if interrupted {
                break;
            }
            if status == StepStatus::Failed && validation_errors > 0 {
                printer.notice(&format!(
                    "step {} found {validation_errors} validation error(s); the plan stops here",
                    step.index + 1
                ));
                failed = true;
                validation_failed = true;
                break;
            }
            if status == StepStatus::Failed {
                printer.notice(&format!(
                    "step {} failed with I/O errors; the plan stops here (iorig plan resume {} retries it)",
                    step.index + 1,
                    self.recorder.run.map(|r| r.to_string()).unwrap_or_else(|| "-".into())
                ));
                failed = true;
                break;
            }
            // Pause before the next step.
            let pause = match step.pause {
                Pause::None => Duration::ZERO,
                Pause::Fixed(d) => d,
                Pause::WrittenBytesAt { bytes_per_s } => {
                    let written = outcome.summary.write.bytes as f64;
                    Duration::from_secs_f64((written / bytes_per_s.max(1.0)).min(86_400.0))
                }
            };
            if !pause.is_zero() && k + 1 < total {
                printer.notice(&format!(
                    "pausing {} after step {}",
                    fmt_duration(pause),
                    step.index + 1
                ));
                if !signals.sleep(pause) {
                    break;
                }
            }
        }

        // Plan-level analysis: curves.
        for c in analyse::curves(&results) {
            for l in analyse::curve_lines(&c) {
                printer.line(&l);
            }
            self.recorder.analysis(&printer, None, &Finding::Curve(c));
        }
        let interrupted = signals.interrupted();
        let status = if interrupted {
            RunStatus::Interrupted
        } else if failed {
            RunStatus::Failed
        } else {
            RunStatus::Ok
        };
        self.recorder.finish_run(&printer, status);
        print_plan_table(&printer, &self.plan, &results, self.recorder.run);
        if interrupted {
            if let Some(r) = self.recorder.run {
                printer.notice(&format!(
                    "interrupted: completed steps are kept; continue with: iorig plan resume {r}"
                ));
            }
        }
        let code = if interrupted {
            exit::INTERRUPTED
        } else if validation_failed {
            exit::VALIDATION
        } else if failed {
            exit::RUNTIME
        } else {
            exit::OK
        };
        Ok((code, results))
    }

    fn skip(
        &mut self,
        printer: &Printer,
        step: &PlanStep,
        results: &mut Vec<StepResult>,
        why: String,
    ) {
        printer.notice(&format!(
            "step {} ({}) skipped: {why}",
            step.index + 1,
            step.label
        ));
        let finding = Finding::Skipped(SkippedFinding { why });
        self.recorder
            .skip_step(printer, step.index, &step.label, &finding);
        results.push(StepResult {
            step: step.clone(),
            status: StepStatus::Skipped,
            summary: None,
            analysis: vec![finding],
        });
    }
}

/// The workload a step runs, with what only the runner fills in: a
/// precondition's open-ended time, a curve step's `rate` (from the measured
/// max), a steady-state step's longest time, the seed, and a hot range from
/// the target's size. Validation calls it for every step before anything
/// runs (with a stand-in rate), so a bad step 5 stops the plan before step 1.
fn step_workload(
    step: &PlanStep,
    rate: Option<f64>,
    allow_destroy: bool,
) -> Result<Workload, Failure> {
    let mut wf = step.workload.clone();
    if let StepRole::Precondition(_) = step.role {
        wf.time = Some(StrOrNum::Str(PRECONDITION_TIME.into()));
        wf.warmup = Some(StrOrNum::Str("0s".into()));
    }
    if let Some(r) = rate {
        wf.rate = Some(StrOrNum::Float(r));
    }
    if let Some(ss) = step.steady_state {
        let t = ss.round * ss.max_rounds;
        wf.time = Some(StrOrNum::Str(format!("{}ms", t.as_millis())));
    }
    let in_step =
        |e: String| Failure::usage(format!("step {} ({}): {e}", step.index + 1, step.label));
    let mut w = wf
        .resolve(seed_for(step.index))
        .map_err(|e| in_step(e.to_string()))?;
    if let Some(hot) = step.hot_size_bytes {
        w = with_hot_range(w, hot, allow_destroy).map_err(|f| in_step(f.message))?;
    }
    Ok(w)
}

/// Checks every step before the first I/O: its workload resolves and
/// validates (hot range included), and its targets pass every safety check
/// (read-only looks, nothing written). `plan run`, `--dry-run`, `quick` and
/// `plan resume` all call it.
fn validate_steps(steps: &[PlanStep], allow_destroy: bool) -> Result<(), Failure> {
    // Every step is planned: what a target check finds depends on the
    // step's block size, range, size, engine, qd and flags, not only on its
    // targets (the checks only look; a device costs one probe per step).
    for s in steps {
        let rate = matches!(s.role, StepRole::CurveRate { .. }).then_some(1.0);
        let w = step_workload(s, rate, allow_destroy)?;
        engine_run::plan(&w, allow_destroy).map_err(|e| {
            let f = crate::step::engine_failure(e);
            Failure {
                code: f.code,
                message: format!("step {} ({}): {}", s.index + 1, s.label, f.message),
            }
        })?;
    }
    Ok(())
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
fn with_hot_range(
    mut w: Workload,
    hot_bytes: u64,
    allow_destroy: bool,
) -> Result<Workload, Failure> {
    let planned = engine_run::plan(&w, allow_destroy).map_err(crate::step::engine_failure)?;
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
    w.validate().map_err(|e| Failure::usage(e.to_string()))?;
    Ok(w)
}

struct PlanObserver<'a> {
    recorder: &'a mut Recorder,
    step_id: Option<iorig_store::StepId>,
    step: &'a PlanStep,
    w: &'a Workload,
    k: usize,
    total: usize,
    plan_start: Instant,
    remaining_after: Duration,
    seen_targets: &'a mut Vec<String>,
    /// The validation state of the last `verify` step and its targets.
    kept_verify: &'a mut Option<(Vec<String>, Arc<VerifySetup>)>,
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

impl StepObserver for PlanObserver<'_> {
    fn verify_setup(&mut self, prepared: &Prepared) -> Result<Option<Arc<VerifySetup>>, Failure> {
        let paths: Vec<String> = prepared.info.iter().map(|t| t.path.clone()).collect();
        let unit = self.w.verify_unit_bytes() as u32;
        let setup = match self.kept_verify.as_ref() {
            Some((kept_paths, kept))
                if *kept_paths == paths
                    && kept.keys.unit_bytes() == unit
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
                }
            }
            _ => VerifySetup::fresh(
                unit,
                &prepared.extents_bytes,
                self.w.verify_after,
                self.w.seed,
            )
            .map_err(crate::step::engine_failure)?,
        };
        let setup = Arc::new(setup);
        *self.kept_verify = Some((paths, setup.clone()));
        Ok(Some(setup))
    }

    fn byte_limit(&mut self, working_set_bytes: u64) -> Option<u64> {
        // A precondition writes its passes over the working set exactly: the
        // workers stop issuing once these bytes are out.
        if let StepRole::Precondition(p) = self.step.role {
            self.precondition_bytes = Some(working_set_bytes.saturating_mul(u64::from(p.passes)));
        }
        self.precondition_bytes
    }

    fn prepared(
        &mut self,
        printer: &Printer,
        targets: &[TargetInfo],
        engine_name: &str,
    ) -> Result<String, Failure> {
        self.recorder.targets(printer, targets, self.seen_targets);
        self.step_start = Some(Instant::now());
        let what = match self.step.role {
            StepRole::Precondition(p) => format!(
                "precondition: write {} {} time(s) over ({})",
                if p.random { "randomly" } else { "sequentially" },
                p.passes,
                table::human_bytes(self.precondition_bytes.unwrap_or(0))
            ),
            _ => describe(self.w, engine_name, targets),
        };
        Ok(format!(
            "step {}/{} {}: {what}",
            self.k + 1,
            self.total,
            self.step.label
        ))
    }

    fn interval(
        &mut self,
        printer: &Printer,
        sample: &IntervalSample,
        _interval: &Interval,
    ) -> Control {
        self.recorder.interval(printer, self.step_id, sample);
        self.written_bytes += sample.stats.write.bytes;
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
                let detector = SteadyStateDetector::new(ss.window as usize, 20.0, 10.0);
                if detector.check(&self.rounds).reached {
                    self.steady_at_round = Some(self.rounds.len());
                    return Control::Stop;
                }
            }
        }
        Control::Continue
    }

    fn live_prefix(&self) -> String {
        let elapsed = self.plan_start.elapsed();
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
        let bar_w = 20usize;
        let filled = (self.k * bar_w) / self.total.max(1);
        let mut progress = String::new();
        if let Some(limit) = self.precondition_bytes {
            progress = format!(
                " fill {:.0}%",
                (self.written_bytes as f64 / limit.max(1) as f64 * 100.0).min(100.0)
            );
        }
        format!(
            "plan [{}{}] step {}/{} {}{} | elapsed {} | ETA {}\n",
            "=".repeat(filled),
            " ".repeat(bar_w - filled),
            self.k + 1,
            self.total,
            self.step.label,
            progress,
            fmt_duration(elapsed),
            fmt_duration(self.remaining_after + step_left)
        )
    }
}

/// The closing table of a plan: one line per step.
fn print_plan_table(printer: &Printer, plan: &Plan, results: &[StepResult], run: Option<RunId>) {
    printer.line("");
    printer.line(&format!(
        "plan {}{}: {} step(s)",
        plan.name,
        run.map(|r| format!(" (run {r})")).unwrap_or_default(),
        results.len()
    ));
    printer.line(&format!(
        "{:>5}  {:<40} {:<11} {:>10} {:>9} {:>9} {:>9}",
        "step", "label", "status", "IOPS", "MB/s", "mean ms", "p99 ms"
    ));
    let mut off_rate = false;
    for r in results {
        let [iops, mbs, mean, p99] = table::summary_cells(r.summary.as_ref());
        // A paced step more than 3 % off its rate is marked: its latency is
        // for another load than the one asked.
        let missed = r
            .analysis
            .iter()
            .any(|f| matches!(f, Finding::Rate(rate) if !rate.met));
        off_rate |= missed;
        printer.line(&format!(
            "{:>5}  {:<40} {:<11} {:>10} {:>9} {:>9} {:>9}",
            r.step.index + 1,
            r.step.label,
            r.status.as_str(),
            if missed { format!("{iops}*") } else { iops },
            mbs,
            mean,
            p99
        ));
    }
    if off_rate {
        printer.line("    * rate not met: more than 3 % off the step's requested IOPS");
    }
}

/// `iorig plan builtins`.
pub fn list_builtins(printer: &Printer) {
    for (name, line) in iorig_spec::plan::builtins() {
        printer.line(&format!("{name:<14} {line}"));
    }
}
