//! `iorig plan run|resume|builtins`, and the plan wiring `iorig quick` uses:
//! check, list (`--dry-run`), run through `iorig-run` with the terminal and
//! the store as sinks, and print the closing table.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::store::{check_store, open_existing, writer, StoreChoice};
use crate::{exit, Failure};
use iorig_agent::controller::{Cluster, ControllerOptions};
use iorig_cli::HostArgs;
use iorig_result::{RunKind, RunStatus};
use iorig_run::plan::{Invocation, PlanOutcome, PlanRun, StepResult};
use iorig_run::StoreWriter;
use iorig_store::Location;
use iorig_store::RunId;
use iorig_text::run as text;
use iorig_text::term::TermSink;
use std::collections::BTreeMap;

/// Options of one plan execution.
pub struct RunOptions {
    pub kind: RunKind,
    pub db: Option<Location>,
    pub no_db: bool,
    pub labels: BTreeMap<String, String>,
    pub dry_run: bool,
    pub yes: bool,
    pub quiet: bool,
    /// `--hosts` and its options (the plan's `[hosts]` otherwise).
    pub hosts: HostArgs,
    /// The text goes to stderr (a machine-readable result takes stdout).
    pub text_to_stderr: bool,
    /// `--metrics-listen` and its token.
    pub metrics: iorig_cli::MetricsArgs,
    /// `--collect` sources.
    pub collect: Vec<iorig_run::collect::CollectSource>,
    /// `--json FILE|-`: the run as stored (iorig.run/1), once it ends.
    pub json: Option<String>,
}

/// How a plan run ended: its exit code, its steps, and its id in the store.
pub type PlanDone = (u8, Vec<StepResult>, Option<RunId>);

/// The agents a plan runs on: the command line's, else the plan's
/// `[hosts]`, else none.
fn cluster_options(
    h: &HostArgs,
    plan: &iorig_spec::Plan,
) -> Result<Option<ControllerOptions>, Failure> {
    if plan.hosts.is_none() && h.hosts.is_none() && h.hosts_file.is_none() {
        if let Some(flag) = h.given_without_hosts() {
            return Err(Failure::usage(format!(
                "{flag} is for runs on several hosts: give --hosts or --hosts-file too (or a [hosts] table in the plan)"
            )));
        }
    }
    let o = iorig_agent::options::plan_options(&crate::host_flags(h)?, plan);
    Ok(o?)
}

/// `iorig plan run` and `iorig quick`: expand, check, then run every step.
pub fn run_plan(inv: Invocation, opts: RunOptions) -> Result<PlanDone, Failure> {
    let printer = Printer::new(opts.text_to_stderr, opts.quiet);
    if !opts.no_db {
        check_store(opts.db.as_ref())?;
    }
    crate::store::check_json(opts.json.as_deref())?;
    crate::metrics::check(&opts.metrics)?;
    let cluster_opts = cluster_options(&opts.hosts, &inv.plan()?)?;
    // Every step's workload and targets are checked before anything runs or
    // is written, here or on every host; a dry run finds exactly the errors
    // a real run would.
    let (run, mut cluster) = match cluster_opts {
        Some(o) => {
            let mut inv = inv;
            inv.hosts = Some(o.hosts.iter().map(|h| h.address.clone()).collect());
            let run = PlanRun::for_executor(inv)?;
            let mut cluster = Cluster::connect(o)?;
            run.check_on(&mut cluster)?;
            (run, Some(cluster))
        }
        None => (PlanRun::new(inv)?, None),
    };
    let mut run = run;
    run.collect = opts.collect.clone();
    if opts.dry_run {
        let hosts = cluster.as_ref().map(|c| c.options().hosts.len());
        printer.lines(text::dry_run_lines(
            &run.plan,
            &run.steps,
            run.estimate(),
            hosts,
        ));
        // What each host sized from its own targets and cache.
        let sized = match &cluster {
            Some(c) => c.sized.clone(),
            None => run.sized_steps()?,
        };
        printer.lines(text::sizing_lines(&sized));
        return Ok((exit::OK, Vec::new(), None));
    }
    run.check_length(opts.yes)?;
    let served = crate::metrics::start(&opts.metrics, &opts.labels)?;
    let mut store = writer(StoreChoice {
        db: opts.db.as_ref(),
        no_db: opts.no_db,
    })?;
    if let Some(s) = &served {
        printer.notice(&s.where_line());
    }
    let metrics = served.as_ref().map(|s| &s.metrics);
    let executor: &mut dyn iorig_run::StepExecutor = match cluster.as_mut() {
        Some(c) => {
            printer.notice(&format!(
                "{} hosts; each step's rate is the total of all hosts",
                c.options().hosts.len()
            ));
            c
        }
        None => &mut iorig_run::Local,
    };
    let labels = &opts.labels;
    let done = execute(
        run, executor, opts.kind, labels, &mut store, printer, metrics,
    )?;
    if let (Some(dest), Some(id)) = (&opts.json, done.2) {
        drop(store);
        let stored = crate::store::open_read_only(opts.db.as_ref())?;
        let doc = iorig_report::export::export_json(&stored, id)
            .map_err(|e| Failure::runtime(format!("reading run {} back for --json: {e}", id.0)))?;
        let printer = Printer::new(opts.text_to_stderr, opts.quiet);
        crate::output::json::write_json_doc(&printer, dest, &doc)?;
    }
    Ok(done)
}

/// `iorig plan resume ID`.
pub fn resume(
    id: i64,
    db: Option<&Location>,
    quiet: bool,
    allow_destroy: bool,
) -> Result<PlanDone, Failure> {
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
    execute(
        run,
        &mut iorig_run::Local,
        RunKind::Plan,
        &BTreeMap::new(),
        &mut store,
        printer,
        None,
    )
}

fn execute(
    run: PlanRun,
    executor: &mut dyn iorig_run::StepExecutor,
    kind: RunKind,
    labels: &BTreeMap<String, String>,
    store: &mut StoreWriter,
    printer: Printer,
    metrics: Option<&iorig_run::metrics::Metrics>,
) -> Result<PlanDone, Failure> {
    let stop = crate::signals::install();
    let name = run.plan.name.clone();
    let mut term = TermSink::new(printer);
    let mut metrics = metrics.map(|m| m.sink());
    let outcome = match metrics.as_mut() {
        Some(m) => {
            let mut sinks = iorig_run::event::Fanout(vec![&mut term, m]);
            run.run_on(executor, kind, labels, store, &mut sinks, &stop)
        }
        None => run.run_on(executor, kind, labels, store, &mut term, &stop),
    }?;
    let printer = &term.screen;
    printer.lines(text::plan_table_lines(
        &name,
        &outcome.results,
        outcome.run.map(|r| r.0),
    ));
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
    Ok((code, results, run))
}

/// `iorig plan builtins`.
pub fn list_builtins(printer: &Printer) {
    for (name, line) in iorig_spec::plan::builtins() {
        printer.line(&format!("{name:<14} {line}"));
    }
}
