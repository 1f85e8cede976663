//! `iorig run --hosts ...`: one workload on many agents at once.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::store::{check_output, check_store, writer, StoreChoice};
use crate::{exit, Failure};
use iorig_agent::controller::{self, Cluster, RateShare};
use iorig_cli::RunArgs;
use iorig_run::csv::IntervalCsv;
use iorig_run::event::Fanout;
use iorig_run::single::SingleOptions;
use iorig_run::Sink;
use iorig_run::StepCall;
use iorig_spec::WorkloadFile;
use iorig_text::term::TermSink;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

fn usage(e: impl ToString) -> Failure {
    Failure::usage(e.to_string())
}

pub fn run(a: &RunArgs, layer: WorkloadFile) -> Result<u8, Failure> {
    for (given, flag, why) in [
        (
            a.journal.is_some(),
            "--journal",
            "each host would need a journal of its own",
        ),
        (
            a.lat_log.is_some(),
            "--lat-log",
            "the per-I/O log is written on the host that does the I/O",
        ),
        (
            a.trace_out.is_some(),
            "--trace-out",
            "the trace is written on the host that does the I/O",
        ),
    ] {
        if given {
            return Err(Failure::usage(format!(
                "{flag} is not available with --hosts ({why}); run without it"
            )));
        }
    }
    let opts = iorig_agent::hosts::options(&crate::host_flags(&a.hosts)?, layer.rate.is_some())
        .map_err(iorig_run::RunError::from)?;
    let default_seed = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let mut w = layer.resolve(default_seed).map_err(usage)?;
    w.arrivals_without_rate().map_err(usage)?;
    if w.min_iops.is_some() {
        return Err(usage(
            "--min-iops is checked on this machine only; run without --hosts, or drop --min-iops",
        ));
    }
    let mut layer = layer;
    // Every host gets the same seed base (plus its position), whatever the
    // default the agent would pick.
    layer.seed = Some(w.seed);
    if let RateShare::PerHost(r) = opts.rate {
        // The run records the total it asked for.
        w.rate = iorig_spec::Rate::Iops(r * opts.hosts.len() as f64);
    }
    let out_format = iorig_run::fio_out::OutputFormat::parse(a.output_format.as_deref())?;
    // fio's JSON goes to stdout unless --json names a file (the text then
    // goes to stderr), as fio does.
    let json_to_stdout =
        a.json.as_deref() == Some("-") || (out_format.is_fio() && a.json.is_none());
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        check_output("--json", Path::new(j))?;
    }
    if let Some(c) = &a.csv {
        check_output("--csv", c)?;
    }
    if a.dry_run && !a.record.no_db {
        check_store(a.record.db.as_ref())?;
    }
    if a.dry_run {
        crate::metrics::check(&a.metrics)?;
    }
    let rate = controller::rate_line(&w, &opts);
    let printer = Printer::new(json_to_stdout, a.quiet);
    let mut cluster = Cluster::connect(opts)?;
    let call = StepCall {
        w: &w,
        layer: &layer,
        index: 0,
        allow_destroy: a.allow_destroy,
        hot_size_bytes: None,
        jobs: &[],
    };
    // Every host checks its share before anything is written anywhere.
    let checks = cluster.check_hosts(&call)?;
    for n in cluster.notices.drain(..) {
        printer.notice(&n);
    }
    if a.dry_run {
        for c in &checks {
            let targets: Vec<String> = c.targets.iter().map(|t| t.path.clone()).collect();
            printer.line(&format!(
                "host {} ({}, iorig {}): would run {} on {}; clock offset {:+.3} ms (round trip {:.3} ms)",
                c.name,
                c.hostname,
                c.tool_version,
                c.engine,
                targets.join(", "),
                c.clock_offset_ns as f64 / 1e6,
                c.clock_rtt_ns as f64 / 1e6
            ));
        }
        printer.line(&format!(
            "{rate}; estimated time: {:.0} s; every host checked its targets: ok (nothing was run or written)",
            (w.warmup + w.time).as_secs_f64()
        ));
        return Ok(exit::OK);
    }
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
    printer.notice(&format!("{} hosts; {rate}", checks.len()));
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
    let single = SingleOptions {
        allow_destroy: a.allow_destroy,
        collect: a.collect.collect.clone(),
        ..SingleOptions::default()
    };
    let outcome = iorig_run::single::run_with(
        &mut cluster,
        &layer,
        &w,
        &single,
        &mut store,
        &mut Fanout(sinks),
        &stop,
    )?;
    term.screen.line("");
    for l in iorig_text::hosts::hosts_lines(&outcome.doc.hosts) {
        term.screen.line(&l);
    }
    match out_format {
        iorig_run::fio_out::OutputFormat::Iorig => {
            if let Some(j) = &a.json {
                crate::output::json::write_json_doc(&term.screen, j, &outcome.doc)?;
            }
        }
        f => {
            let doc = iorig_run::fio_out::document_of_hosts(&layer, &outcome, f);
            let dest = a.json.as_deref().unwrap_or("-");
            crate::output::json::write_json_doc(&term.screen, dest, &doc)?;
        }
    }
    Ok(crate::exit_code(&outcome))
}
