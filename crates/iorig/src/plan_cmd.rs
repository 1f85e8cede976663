//! `iorig plan run|resume|builtins`, and the plan wiring `iorig quick` uses:
//! check, list (`--dry-run`), run through `iorig-run` with the terminal and
//! the store as sinks, and print the closing table.

use crate::output::term::TermSink;
use crate::output::{table, Printer};
use crate::store::{check_store, open_existing, writer, StoreChoice};
use crate::{exit, Failure};
use iorig_result::{Finding, RunKind, RunStatus};
use iorig_run::plan::{fmt_duration, Invocation, PlanOutcome, PlanRun, StepResult};
use iorig_run::StoreWriter;
use iorig_spec::plan::{Plan, PlanStep, StepRole};
use iorig_spec::StrOrNum;
use iorig_store::RunId;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A plan longer than this asks for --yes.
const LONG_PLAN: Duration = Duration::from_secs(24 * 3600);

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

fn text_of(v: &Option<StrOrNum>) -> String {
    match v {
        None => "-".into(),
        Some(StrOrNum::Str(s)) => s.clone(),
        Some(StrOrNum::Int(i)) => i.to_string(),
        Some(StrOrNum::Float(f)) => f.to_string(),
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
    let printer = Printer::new(false, opts.quiet);
    if !opts.no_db {
        check_store(opts.db.as_deref())?;
    }
    // Every step's workload and targets are checked before anything runs or
    // is written; a dry run finds exactly the errors a real run would.
    let run = PlanRun::new(inv)?;
    let estimate = run.estimate();
    if opts.dry_run {
        print_dry_run(&printer, &run.plan, &run.steps, estimate);
        printer.line("every step and target checked: ok (nothing was run or written)");
        return Ok((exit::OK, Vec::new()));
    }
    if estimate > LONG_PLAN && !opts.yes {
        return Err(Failure::usage(format!(
            "plan {} would take about {} ({} steps); check it with --dry-run, shorten it with --step-time, or pass --yes",
            run.plan.name,
            fmt_duration(estimate),
            run.steps.len()
        )));
    }
    let mut store = writer(StoreChoice {
        db: opts.db.as_deref(),
        no_db: opts.no_db,
    })?;
    execute(run, opts.kind, &opts.labels, &mut store, printer)
}

/// `iorig plan resume ID`.
pub fn resume(
    id: i64,
    db: Option<&Path>,
    quiet: bool,
    allow_destroy: bool,
) -> Result<(u8, Vec<StepResult>), Failure> {
    let store = open_existing(db)?;
    let run = PlanRun::resume(&store, RunId(id), allow_destroy)?;
    let printer = Printer::new(false, quiet);
    printer.notice(&format!(
        "resuming run {id} ({}): {} of {} steps already done",
        run.plan.name,
        run.done_count(),
        run.steps.len()
    ));
    let mut store = StoreWriter::resume(store, RunId(id))?;
    execute(run, RunKind::Plan, &BTreeMap::new(), &mut store, printer)
}

fn execute(
    run: PlanRun,
    kind: RunKind,
    labels: &BTreeMap<String, String>,
    store: &mut StoreWriter,
    printer: Printer,
) -> Result<(u8, Vec<StepResult>), Failure> {
    let stop = crate::signals::install();
    let name = run.plan.name.clone();
    let mut term = TermSink::new(printer);
    let outcome = run.run(kind, labels, store, &mut term, &stop)?;
    let printer = &term.printer;
    print_plan_table(printer, &name, &outcome.results, outcome.run);
    let PlanOutcome {
        run,
        status,
        validation_failed,
        results,
    } = outcome;
    if status == RunStatus::Interrupted {
        if let Some(r) = run {
            printer.notice(&format!(
                "interrupted: completed steps are kept; continue with: iorig plan resume {r}"
            ));
        }
    }
    let code = match status {
        RunStatus::Interrupted => exit::INTERRUPTED,
        _ if validation_failed => exit::VALIDATION,
        RunStatus::Failed => exit::RUNTIME,
        _ => exit::OK,
    };
    Ok((code, results))
}

/// The closing table of a plan: one line per step.
fn print_plan_table(printer: &Printer, name: &str, results: &[StepResult], run: Option<RunId>) {
    printer.line("");
    printer.line(&format!(
        "plan {name}{}: {} step(s)",
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
