//! `iorig run`: one workload, from flags and/or a workload file to the interval
//! table, JSON and CSV.

use crate::labels as parse_labels;
use crate::output::Printer;
use crate::output::Screen as _;
use crate::store::{check_output, check_store, writer, StoreChoice};
use crate::{exit, Failure};
use iorig_cli::RunArgs;
use iorig_run::csv::IntervalCsv;
use iorig_run::event::Fanout;
use iorig_run::fio_out::OutputFormat;
use iorig_run::single::SingleOptions;
use iorig_run::Sink;
use iorig_spec::{OneOrMany, Workload, WorkloadFile};
use iorig_text::term::TermSink;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// The command line as a workload layer.
fn cli_layer(a: &RunArgs) -> Result<WorkloadFile, Failure> {
    let mut layer = a.workload.clone();
    if !a.targets.is_empty() {
        layer.target = Some(OneOrMany::Many(a.targets.clone()));
    }
    let labels = parse_labels(&a.record.labels)?;
    layer.labels = (!labels.is_empty()).then_some(labels);
    if a.journal.is_some() {
        layer.verify = Some(true);
    }
    Ok(layer)
}

pub fn run(a: RunArgs) -> Result<u8, Failure> {
    // 1. The workload: file, then flags on top.
    let mut layer = WorkloadFile::default();
    if let Some(path) = &a.file {
        // A fio job file or vdbench parameter file may come from anywhere:
        // read within the importers' caps on a line and a file.
        let text = iorig_import::read_text(path)
            .map_err(|e| Failure::usage(format!("workload file {}: {e}", path.display())))?;
        match crate::foreign_cmd::format_of(&a.foreign, &text)? {
            iorig_import::Format::Iorig => {
                if !a.foreign.set.is_empty() || a.foreign.vdbench_out.is_some() {
                    return Err(Failure::usage(
                        "--set and --vdbench-out are for a vdbench parameter file (or a fio job file for --vdbench-out); FILE is an iorig workload",
                    ));
                }
            }
            other => return crate::foreign_cmd::run(&a, path, &text, other),
        }
        layer = WorkloadFile::from_toml(&path.display().to_string(), &text)
            .map_err(|e| Failure::usage(e.to_string()))?;
    } else if a.foreign.input_format.is_some()
        || a.foreign.ignore_unsupported
        || !a.foreign.set.is_empty()
        || a.foreign.vdbench_out.is_some()
    {
        return Err(Failure::usage(
            "--input-format, --ignore-unsupported, --set and --vdbench-out are for a job or parameter file given as FILE; give one",
        ));
    }
    let mut layer = layer.overlay(cli_layer(&a)?);
    if a.hosts.hosts.is_some() || a.hosts.hosts_file.is_some() {
        // Targets are the agents' paths: each host looks at its own.
        return crate::hosts_cmd::run(&a, layer);
    }
    if let Some(flag) = a.hosts.given_without_hosts() {
        return Err(Failure::usage(format!(
            "{flag} is for runs on several hosts: give --hosts or --hosts-file too"
        )));
    }
    // A directory as the target is the anchor of a file-system workload.
    layer.take_directory_target(|t| Path::new(t).is_dir());
    let now = SystemTime::now();
    let default_seed = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let w = layer
        .resolve(default_seed)
        .map_err(|e| Failure::usage(e.to_string()))?;
    w.arrivals_without_rate()
        .map_err(|e| Failure::usage(e.to_string()))?;
    let out_format = OutputFormat::parse(a.output_format.as_deref())?;
    // fio's JSON without --json goes to stdout, the text to stderr.
    let json_to_stdout =
        a.json.as_deref() == Some("-") || (out_format.is_fio() && a.json.is_none());
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        check_output("--json", Path::new(j))?;
    }
    if let Some(c) = &a.csv {
        check_output("--csv", c)?;
    }
    if let Some(l) = &a.lat_log {
        if w.fs.is_some() {
            return Err(Failure::usage(
                "--lat-log records block I/O; a file-system workload's operations are in its intervals and histograms (drop --lat-log)",
            ));
        }
        check_output("--lat-log", l)?;
    }
    if let Some(t) = &a.trace_out {
        if w.fs.is_some() {
            return Err(Failure::usage(
                "--trace-out records block I/O; a file-system workload's operations are not block I/Os (trace its device with iorig trace record instead)",
            ));
        }
        check_output("--trace-out", t)?;
    }

    if let Some(j) = &a.journal {
        check_output("--journal", j)?;
        iorig_run::journal::precheck(j, &w)?;
    }
    let lat_warning = a
        .lat_log
        .as_ref()
        .and_then(|_| iorig_run::iolog::size_warning(&w));
    if a.dry_run {
        if let Some(warning) = &lat_warning {
            Printer::new(false, a.quiet).notice(warning);
        }
        if !a.record.no_db {
            check_store(a.record.db.as_ref())?;
        }
        crate::metrics::check(&a.metrics)?;
        return dry_run(&w, a.allow_destroy, a.quiet);
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

    // 2. Run (targets are planned and checked before anything is written).
    let printer = Printer::new(json_to_stdout, a.quiet);
    let stop = crate::signals::install();
    if let Some(warning) = &lat_warning {
        printer.notice(warning);
    }
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
    let outcome = iorig_run::single::run(&w, &opts, &mut store, &mut Fanout(sinks), &stop)?;
    match out_format {
        OutputFormat::Iorig => {
            if let Some(j) = &a.json {
                crate::output::json::write_json_doc(&term.screen, j, &outcome.doc)?;
            }
        }
        f => {
            let doc = iorig_run::fio_out::document_of_run(&layer, &outcome, f);
            let dest = a.json.as_deref().unwrap_or("-");
            crate::output::json::write_json_doc(&term.screen, dest, &doc)?;
        }
    }
    Ok(crate::exit_code(&outcome))
}

/// `iorig run --dry-run`: the workload is resolved and the targets checked
/// exactly as a run would (read-only looks); what would run is printed.
fn dry_run(w: &Workload, allow_destroy: bool, quiet: bool) -> Result<u8, Failure> {
    let planned = iorig_engine::run::plan(w, allow_destroy).map_err(iorig_run::RunError::from)?;
    let printer = Printer::new(false, quiet);
    for n in &planned.notices {
        printer.notice(n);
    }
    for l in iorig_text::run::dry_run_lines_single(w, &planned) {
        printer.line(&l);
    }
    Ok(exit::OK)
}
