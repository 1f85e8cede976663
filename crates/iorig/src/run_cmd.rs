//! `iorig run`: one workload, from flags and/or a workload file to the interval
//! table, JSON and CSV.

use crate::cli::{parse_labels, RunArgs};
use crate::output::csv::CsvSink;
use crate::output::term::{describe, TermSink};
use crate::output::{table, Printer};
use crate::store::{check_output, check_store, writer, StoreChoice};
use crate::{exit, Failure};
use iorig_engine::run::TargetInfo;
use iorig_run::event::Fanout;
use iorig_run::single::SingleOptions;
use iorig_run::Sink;
use iorig_spec::{OneOrMany, StrOrNum, Workload, WorkloadFile};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

fn s(v: &Option<String>) -> Option<StrOrNum> {
    v.as_ref().map(|x| StrOrNum::Str(x.clone()))
}

/// The command line as a workload layer.
fn cli_layer(a: &RunArgs) -> Result<WorkloadFile, Failure> {
    let labels = parse_labels(&a.labels)?;
    Ok(WorkloadFile {
        target: if a.targets.is_empty() {
            None
        } else {
            Some(OneOrMany::Many(a.targets.clone()))
        },
        size: s(&a.size),
        bs: s(&a.bs),
        read_bs: s(&a.read_bs),
        write_bs: s(&a.write_bs),
        read: s(&a.read),
        random: s(&a.random),
        qd: s(&a.qd),
        submit_batch: s(&a.submit_batch),
        threads: s(&a.threads),
        engine: a.engine.clone(),
        direct: a.direct.then_some(true),
        buffered: a.buffered.then_some(true),
        sync: a.sync.then_some(true),
        dsync: a.dsync.then_some(true),
        rate: s(&a.rate),
        time: s(&a.time),
        warmup: s(&a.warmup),
        interval: s(&a.interval),
        range: a.range.clone(),
        dist: a.dist.clone(),
        data: a.data.clone(),
        seed: a.seed,
        labels: if labels.is_empty() {
            None
        } else {
            Some(labels)
        },
        fault: if a.faults.is_empty() {
            None
        } else {
            Some(a.faults.clone())
        },
        verify: (a.verify || a.journal.is_some()).then_some(true),
        verify_after: a.verify_after.then_some(true),
        max_errors: s(&a.max_errors),
    })
}

pub fn run(a: RunArgs) -> Result<u8, Failure> {
    // 1. The workload: file, then flags on top.
    let mut layer = WorkloadFile::default();
    if let Some(path) = &a.file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::usage(format!("workload file {}: {e}", path.display())))?;
        layer = WorkloadFile::from_toml(&path.display().to_string(), &text)
            .map_err(|e| Failure::usage(e.to_string()))?;
    }
    let layer = layer.overlay(cli_layer(&a)?);
    let now = SystemTime::now();
    let default_seed = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let w = layer
        .resolve(default_seed)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let json_to_stdout = a.json.as_deref() == Some("-");
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        check_output("--json", Path::new(j))?;
    }
    if let Some(c) = &a.csv {
        check_output("--csv", c)?;
    }

    if let Some(j) = &a.journal {
        check_output("--journal", j)?;
        iorig_run::journal::precheck(j, &w)?;
    }
    if a.dry_run {
        if !a.no_db {
            check_store(a.db.as_deref())?;
        }
        return dry_run(&w, a.allow_destroy, a.quiet);
    }
    let mut store = writer(StoreChoice {
        db: a.db.as_deref(),
        no_db: a.no_db,
    })?;
    let mut csv = match &a.csv {
        Some(path) => Some(CsvSink::create(path)?),
        None => None,
    };

    // 2. Run (targets are planned and checked before anything is written).
    let printer = Printer::new(json_to_stdout, a.quiet);
    let stop = crate::signals::install();
    let mut term = TermSink::new(printer);
    let mut sinks: Vec<&mut dyn Sink> = vec![&mut term];
    if let Some(c) = csv.as_mut() {
        sinks.push(c);
    }
    let opts = SingleOptions {
        allow_destroy: a.allow_destroy,
        journal: a.journal.clone(),
    };
    let outcome = iorig_run::single::run(&w, &opts, &mut store, &mut Fanout(sinks), &stop)?;
    if let Some(j) = &a.json {
        crate::output::json::write_json_doc(&term.printer, j, &outcome.doc)?;
    }
    Ok(if outcome.interrupted {
        exit::INTERRUPTED
    } else if outcome.validation_errors > 0 {
        exit::VALIDATION
    } else if outcome.io_errors > 0 {
        exit::RUNTIME
    } else {
        exit::OK
    })
}
/// `iorig run --dry-run`: the workload is resolved and the targets checked
/// exactly as a run would (read-only looks); what would run is printed.
fn dry_run(w: &Workload, allow_destroy: bool, quiet: bool) -> Result<u8, Failure> {
    let planned = iorig_engine::run::plan(w, allow_destroy).map_err(iorig_run::RunError::from)?;
    let printer = Printer::new(false, quiet);
    for n in &planned.notices {
        printer.notice(n);
    }
    let targets: Vec<TargetInfo> = planned.targets.iter().map(TargetInfo::from).collect();
    printer.line(&format!(
        "would run: {}",
        describe(w, planned.engine.name(), &targets)
    ));
    for (path, bytes) in planned.files_to_create() {
        printer.line(&format!(
            "would create {path} and fill it with {} of random data first",
            table::human_bytes(bytes)
        ));
    }
    printer.line(&format!(
        "estimated time: {:.0} s; every target and output checked: ok (nothing was run or written)",
        (w.warmup + w.time).as_secs_f64()
    ));
    Ok(exit::OK)
}
