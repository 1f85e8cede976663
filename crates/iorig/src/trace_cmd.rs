//! `iorig trace analyse FILE`: a block trace's counts, hot spot and LRU
//! curve (iorig-trace), printed and optionally written as JSON; `iorig trace
//! record DEV`: a capture with the kernel's block tracing; `iorig trace
//! replay FILE`: the trace's I/Os issued again at their times.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::{exit, Failure};
use iorig_cli::{
    TraceAnalyseArgs, TraceFitArgs, TraceListArgs, TraceRecordArgs, TraceReplayArgs,
    TraceReportArgs,
};
use iorig_trace::BadRecords;

pub fn analyse(a: &TraceAnalyseArgs) -> Result<u8, Failure> {
    let opts = a.options();
    // --hit and --sample are checked by the analysis, before any record
    // is read and before anything is written.
    crate::store::check_json(a.json.as_deref())?;
    let bad = BadRecords::skipped_if(a.skip_bad);
    let backend = match (a.backend_iops, a.backend_run) {
        (Some(iops), _) => Some((iops, "given with --backend-iops".to_string())),
        (None, Some(run)) => {
            let store = crate::store::open_read_only(a.record.db.as_ref())?;
            Some(iorig_run::store::backend_of_run(&store, run)?)
        }
        (None, None) => None,
    };
    let labels = crate::labels(&a.record.labels)?;
    if !a.record.no_db {
        crate::store::check_store(a.record.db.as_ref())?;
    }
    let (mut analysis, format, skipped) =
        iorig_trace::analyse::analyse_file(&a.file, a.format, bad, &opts)
            .map_err(|e| Failure::usage(e.to_string()))?;
    if let Some((iops, source)) = backend {
        analysis.warmup = Some(iorig_trace::analyse::warmup(&analysis, iops, source));
    }
    let printer = Printer::new(a.json.as_deref() == Some("-"), false);
    printer.lines(iorig_text::trace::analysis_lines(
        &analysis, format, skipped,
    ));
    if !a.record.no_db {
        let store = crate::store::open_for_write(a.record.db.as_ref())?;
        let origin = crate::store::origin();
        let id = iorig_run::store::put_trace_analysis(&store, &origin, &a.file, &analysis, labels)?;
        printer.line(&format!(
            "stored as trace analysis {id} in {} (iorig trace report {id} draws it)",
            crate::store::location(a.record.db.as_ref())?
        ));
    }
    if let Some(dest) = &a.json {
        crate::output::json::write_json_doc(&printer, dest, &analysis)?;
    }
    Ok(exit::OK)
}

pub fn record(a: &TraceRecordArgs) -> Result<u8, Failure> {
    use iorig_trace::capture::{self, CaptureError, CaptureOptions};
    crate::store::check_output("--out", &a.out)?;
    // The device and the host's tracing are checked before the file is
    // made, so a refused capture writes nothing.
    capture::block_device(&a.device).map_err(|e| Failure::usage(e.to_string()))?;
    let stop = crate::signals::install();
    let printer = Printer::new(false, false);
    let opts = CaptureOptions {
        device: a.device.clone(),
        duration: a.time,
        out: a.out.clone(),
        format: a.format,
        buffer_kib: a.buffer_kib,
    };
    let failed = |e: CaptureError| match e {
        CaptureError::Setup(why) => Failure::usage(why),
        other => Failure::runtime(other.to_string()),
    };
    // Tracing is the host's: a second Ctrl-C must not leave it switched on.
    crate::signals::be_patient();
    let running = capture::start(&opts).map_err(failed)?;
    printer.notice(&iorig_text::trace::recording_line(&opts));
    let s = running.run(&stop.step).map_err(failed)?;
    let (line, lost) = iorig_text::trace::recorded_lines(&opts, &s);
    printer.line(&line);
    if let Some(n) = lost {
        printer.notice(&n);
    }
    Ok(exit::OK)
}

pub fn replay(a: &TraceReplayArgs) -> Result<u8, Failure> {
    crate::store::check_json(a.json.as_deref())?;
    let labels = crate::labels(&a.record.labels)?;
    let (w, setup) = iorig_run::replay::prepare(a.replay(labels), a.allow_destroy)?;
    let mut store = crate::store::writer(crate::store::StoreChoice {
        db: a.record.db.as_ref(),
        no_db: a.record.no_db,
    })?;
    let json_to_stdout = a.json.as_deref() == Some("-");
    let printer = Printer::new(json_to_stdout, a.quiet);
    let stop = crate::signals::install();
    printer.notice(&iorig_text::trace::replaying_line(&setup, w.qd));
    let mut term = iorig_text::term::TermSink::new(printer);
    let opts = iorig_run::single::SingleOptions {
        allow_destroy: a.allow_destroy,
        replay: Some(setup),
        ..iorig_run::single::SingleOptions::default()
    };
    let outcome = iorig_run::single::run(&w, &opts, &mut store, &mut term, &stop)?;
    if let Some(r) = &outcome.doc.replay {
        term.screen.line(&iorig_text::trace::replay_line(r));
    }
    if let Some(j) = &a.json {
        crate::output::json::write_json_doc(&term.screen, j, &outcome.doc)?;
    }
    Ok(crate::exit_code(&outcome))
}

pub fn fit(a: &TraceFitArgs) -> Result<u8, Failure> {
    if let Some(o) = &a.out {
        crate::store::check_output("--out", o)?;
    }
    if let Some(p) = &a.plan {
        crate::store::check_output("--plan", p)?;
    }
    crate::store::check_json(a.json.as_deref())?;
    if a.out.is_none() && a.json.as_deref() == Some("-") {
        return Err(Failure::usage(
            "--json - and the workload would both go to stdout; give --out FILE for the workload",
        ));
    }
    let fitted = iorig_run::fit::fit_file(
        &a.file,
        a.format,
        BadRecords::skipped_if(a.skip_bad),
        a.block_bytes,
        a.sample,
        &iorig_run::fit::FitOptions {
            max_accesses: a.accesses,
            ..iorig_run::fit::FitOptions::default()
        },
    )?;
    let printer = Printer::new(true, false);
    printer.line(&iorig_text::trace::fit_line(&fitted));
    match &a.out {
        Some(o) => {
            crate::store::write_output("--out", o, fitted.toml.as_bytes())?;
            printer.line(&format!("wrote {}", o.display()));
        }
        None => printer.document_stdout(&fitted.toml),
    }
    if let Some(p) = &a.plan {
        crate::store::write_output("--plan", p, fitted.plan_toml.as_bytes())?;
        printer.line(&format!("wrote {}", p.display()));
    }
    if let Some(dest) = &a.json {
        crate::output::json::write_json_doc(&printer, dest, &fitted)?;
    }
    Ok(exit::OK)
}

pub fn list(a: &TraceListArgs) -> Result<u8, Failure> {
    let store = crate::store::open_read_only(a.db.as_ref())?;
    let rows = store
        .trace_analyses()
        .map_err(|e| Failure::runtime(format!("result store: {e}")))?;
    let printer = Printer::new(false, false);
    if a.json {
        let text = serde_json::to_string_pretty(&rows)
            .map_err(|e| Failure::runtime(format!("the list as JSON: {e}")))?;
        printer.json_stdout(&text);
        return Ok(exit::OK);
    }
    if rows.is_empty() {
        printer.line("no trace analyses stored; iorig trace analyse FILE stores one");
        return Ok(exit::OK);
    }
    printer.lines(iorig_text::trace::list_lines(&rows));
    Ok(exit::OK)
}

pub fn report(a: &TraceReportArgs) -> Result<u8, Failure> {
    let out = (a.out.clone()).unwrap_or_else(|| format!("iorig-trace-report-{}", a.id).into());
    crate::store::check_output_dir("--out", &out)?;
    let store = crate::store::open_read_only(a.db.as_ref())?;
    let rendered =
        iorig_report::pages::trace_report(&store, a.id).map_err(crate::report_cmd::failed)?;
    let printer = Printer::new(false, false);
    crate::report_cmd::write_rendered(&out, &rendered, &printer)?;
    Ok(exit::OK)
}
