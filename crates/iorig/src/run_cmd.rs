//! `iorig run`: one workload, from flags and/or a workload file to the
//! interval table, JSON and CSV, on this machine or on many agents at once
//! (`--hosts`); a job or parameter file goes to `foreign_cmd`.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::store::{check_output, check_store, writer, StoreChoice};
use crate::{exit, Failure};
use iorig_agent::controller::{Cluster, RateShare};
use iorig_cli::RunArgs;
use iorig_run::csv::IntervalCsv;
use iorig_run::event::Fanout;
use iorig_run::fio_out::{self, OutputFormat};
use iorig_run::single::SingleOptions;
use iorig_run::{Sink, StepCall};
use iorig_spec::{Workload, WorkloadFile};
use iorig_text::term::TermSink;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

fn usage(e: impl ToString) -> Failure {
    Failure::usage(e.to_string())
}

pub fn run(a: RunArgs) -> Result<u8, Failure> {
    // 1. The workload: file, then flags on top. A fio job file or vdbench
    // parameter file may come from anywhere: read within the importers'
    // caps on a line and a file.
    let file = match &a.file {
        Some(path) => {
            let text = iorig_import::read_text(path)
                .map_err(|e| usage(format!("workload file {}: {e}", path.display())))?;
            let format = crate::foreign_cmd::format_of(&a.foreign, &text)?;
            Some((path, text, format))
        }
        None => None,
    };
    // Which flags go with which file, checked once before anything else.
    if let Some(why) = a.refusal(file.as_ref().map(|(_, _, format)| *format)) {
        return Err(usage(why));
    }
    let layer = match &file {
        Some((path, text, format)) if *format != iorig_import::Format::Iorig => {
            return crate::foreign_cmd::run(&a, path, text, *format);
        }
        Some((path, text, _)) => {
            WorkloadFile::from_toml(&path.display().to_string(), text).map_err(usage)?
        }
        None => WorkloadFile::default(),
    };
    let mut layer = layer.overlay(a.layer().map_err(usage)?);
    let hosts = match a.on_hosts() {
        // Targets are the agents' paths: each host looks at its own.
        true => Some(
            iorig_agent::options::options(
                &iorig_agent::options::Flags {
                    rate_per_host: a.rate_per_host.clone(),
                    ..crate::host_flags(&a.hosts)?
                },
                layer.rate.is_some(),
            )
            .map_err(iorig_run::RunError::from)?,
        ),
        // A directory as the target is the anchor of a file-system workload.
        false => {
            layer.take_directory_target(|t| Path::new(t).is_dir());
            None
        }
    };
    let default_seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let mut w = layer.resolve(default_seed).map_err(usage)?;
    w.arrivals_without_rate().map_err(usage)?;
    if let Some(o) = &hosts {
        if w.min_iops.is_some() {
            return Err(usage(
                "--min-iops is checked on this machine only; run without --hosts, or drop --min-iops",
            ));
        }
        // Every host gets the same seed base (plus its position), whatever
        // the default the agent would pick.
        layer.seed = Some(w.seed);
        if let RateShare::PerHost(r) = o.rate {
            // The run records the total it asked for.
            w.rate = iorig_spec::Rate::Iops(r * o.hosts.len() as f64);
        }
    }
    crate::store::check_json(a.json.as_deref())?;
    if let Some(c) = &a.csv {
        check_output("--csv", c)?;
    }
    let lat_warning = check_local_outputs(&a, &w)?;
    if a.dry_run {
        if !a.record.no_db {
            check_store(a.record.db.as_ref())?;
        }
        crate::metrics::check(&a.metrics)?;
    }
    let printer = Printer::new(a.json_to_stdout(), a.quiet);
    if let Some(warning) = &lat_warning {
        printer.notice(warning);
    }

    // 2. The executor: this machine, or the agents, each of which checks
    // its share before anything is written anywhere.
    let mut cluster = None;
    if let Some(o) = hosts {
        let rate = iorig_agent::controller::rate_line(&w, &o);
        let mut c = Cluster::connect(o)?;
        let checks = c.check_hosts(&StepCall::single(&w, &layer, a.allow_destroy))?;
        for n in c.notices.drain(..) {
            printer.notice(&n);
        }
        if a.dry_run {
            printer.lines(iorig_agent::controller::dry_run_lines(&checks, &rate, &w));
            return Ok(exit::OK);
        }
        printer.notice(&format!("{} hosts; {rate}", checks.len()));
        cluster = Some(c);
    } else if a.dry_run {
        // The listing goes to stdout whatever --json says: a dry run writes
        // no document.
        return dry_run(&w, a.allow_destroy, Printer::new(false, a.quiet));
    }

    // 3. Run (targets are planned and checked before anything is written).
    let served = crate::metrics::start(&a.metrics, &w.labels)?;
    let mut store = writer(StoreChoice {
        db: a.record.db.as_ref(),
        no_db: a.record.no_db,
    })?;
    let mut csv = match &a.csv {
        Some(path) => Some(IntervalCsv::create(path)?),
        None => None,
    };
    let stop = crate::signals::install();
    if let Some(s) = &served {
        printer.notice(&s.where_line());
    }
    let mut term = TermSink::new(printer);
    let mut sinks: Vec<&mut dyn Sink> = vec![&mut term];
    if let Some(c) = csv.as_mut() {
        sinks.push(c);
    }
    let mut metrics = served.as_ref().map(|s| s.metrics.sink());
    if let Some(m) = metrics.as_mut() {
        sinks.push(m);
    }
    let opts = SingleOptions {
        allow_destroy: a.allow_destroy,
        journal: a.journal.clone(),
        lat_log: a.lat_log.clone(),
        trace_out: a.trace_out.clone(),
        collect: a.collect.collect.clone(),
        ..SingleOptions::default()
    };
    let executor: &mut dyn iorig_run::StepExecutor = match cluster.as_mut() {
        Some(c) => c,
        None => &mut iorig_run::Local,
    };
    let outcome = iorig_run::single::run_with(
        executor,
        &layer,
        &w,
        &opts,
        &mut store,
        &mut Fanout(sinks),
        &stop,
    )?;
    if cluster.is_some() {
        term.screen.line("");
        term.screen
            .lines(iorig_text::hosts::hosts_lines(&outcome.doc.hosts));
    }
    match a.output_format.unwrap_or(OutputFormat::Iorig) {
        OutputFormat::Iorig => {
            if let Some(j) = &a.json {
                crate::output::json::write_json_doc(&term.screen, j, &outcome.doc)?;
            }
        }
        f => {
            let doc = match cluster {
                Some(_) => fio_out::document_of_hosts(&layer, &outcome, f),
                None => fio_out::document_of_run(&layer, &outcome, f),
            };
            let dest = a.json.as_deref().unwrap_or("-");
            crate::output::json::write_json_doc(&term.screen, dest, &doc)?;
        }
    }
    Ok(crate::exit_code(&outcome))
}

/// The outputs only a run on this machine writes (refused with --hosts
/// already): the per-I/O log, the block trace and the journal, checked;
/// the per-I/O log's size warning for a run that is not short.
fn check_local_outputs(a: &RunArgs, w: &Workload) -> Result<Option<String>, Failure> {
    for (path, flag, why) in [
        (&a.lat_log, "--lat-log", "records block I/O; a file-system workload's operations are in its intervals and histograms (drop --lat-log)"),
        (&a.trace_out, "--trace-out", "records block I/O; a file-system workload's operations are not block I/Os (trace its device with iorig trace record instead)"),
    ] {
        if let Some(p) = path {
            if w.fs.is_some() {
                return Err(usage(format!("{flag} {why}")));
            }
            check_output(flag, p)?;
        }
    }
    if let Some(j) = &a.journal {
        check_output("--journal", j)?;
        iorig_run::journal::precheck(j, w)?;
    }
    Ok(a.lat_log
        .as_ref()
        .and_then(|_| iorig_run::iolog::size_warning(w)))
}

/// `iorig run --dry-run`: the workload is resolved and the targets checked
/// exactly as a run would (read-only looks); what would run is printed.
fn dry_run(w: &Workload, allow_destroy: bool, printer: Printer) -> Result<u8, Failure> {
    let planned = iorig_engine::run::plan(w, allow_destroy)?;
    for n in &planned.notices {
        printer.notice(n);
    }
    printer.lines(iorig_text::run::dry_run_lines_single(
        w,
        planned.engine.name(),
        &planned.target_infos(),
        planned.files_to_create(),
    ));
    Ok(exit::OK)
}
