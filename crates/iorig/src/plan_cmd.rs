//! `iorig plan run|resume|builtins`, and the plan wiring `iorig quick` uses:
//! check, list (`--dry-run`), run through `iorig-run` with the terminal and
//! the store as sinks, and print the closing table.

use crate::output::term::TermSink;
use crate::output::Printer;
use crate::store::{check_store, open_existing, writer, StoreChoice};
use crate::{exit, Failure};
use iorig_result::{RunKind, RunStatus};
use iorig_run::plan::{fmt_duration, Invocation, PlanOutcome, PlanRun, StepResult};
use iorig_run::StoreWriter;
use iorig_store::RunId;
use iorig_text::run as text;
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
        for l in text::dry_run_lines(&run.plan, &run.steps, estimate) {
            printer.line(&l);
        }
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
    for l in text::plan_table_lines(&name, &outcome.results, outcome.run.map(|r| r.0)) {
        printer.line(&l);
    }
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

/// `iorig plan builtins`.
pub fn list_builtins(printer: &Printer) {
    for (name, line) in iorig_spec::plan::builtins() {
        printer.line(&format!("{name:<14} {line}"));
    }
}
