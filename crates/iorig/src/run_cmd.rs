//! `iorig run`: one workload, from flags and/or a workload file to the interval
//! table, JSON and CSV.

use crate::analyse::analyse_step;
use crate::cli::RunArgs;
use crate::output::json::{step_summary, target_entry};
use crate::output::{csv, table, Printer};
use crate::plan_cmd::parse_labels;
use crate::record::{check_output, db_path, host_name, Recorder};
use crate::signals::Signals;
use crate::step::{describe, run_step, Control, StepObserver};
use crate::{exit, Failure};
use iorig_engine::run::{IntervalSample, TargetInfo};
use iorig_result::{Interval, ResultDoc, RunInfo, StepRole, ToolInfo, SCHEMA};
use iorig_spec::{OneOrMany, StrOrNum, Workload, WorkloadFile};
use iorig_store::{RunKind, RunStatus, StepId, StepStatus};
use std::io::Write;
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

fn run_id(now: SystemTime) -> String {
    let ts = humantime::format_rfc3339_seconds(now).to_string();
    let compact: String = ts.chars().filter(|c| c.is_ascii_digit()).take(14).collect();
    let nanos = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mix =
        (nanos as u64 ^ (std::process::id() as u64) << 20).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    format!(
        "{}-{}-{:06x}",
        &compact[..8.min(compact.len())],
        &compact[8.min(compact.len())..],
        mix >> 40
    )
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
        crate::verify_cmd::precheck_journal(j, &w)?;
    }

    let recorder = if a.no_db {
        Recorder::none()
    } else if a.dry_run {
        crate::record::check_store(&db_path(a.db.as_deref()))?;
        Recorder::none()
    } else {
        Recorder::at(&db_path(a.db.as_deref()))?
    };
    if a.dry_run {
        return dry_run(&w, a.allow_destroy, a.quiet);
    }

    // 2. Run (targets are planned and checked before anything is written).
    let mut printer = Printer::new(json_to_stdout, a.quiet);
    let signals = Signals::install();
    let started = humantime::format_rfc3339_seconds(now).to_string();
    let mut observer = RunObserver {
        id: run_id(now),
        w: &w,
        csv_path: a.csv.as_deref(),
        csv: None,
        recorder,
        step: None,
        journal: a.journal.as_deref(),
    };
    let out = match run_step(&w, a.allow_destroy, &mut printer, &signals, &mut observer) {
        Ok(out) => out,
        Err(f) => {
            // Begun in the store (targets passed their checks) but failed
            // before it ran: it must not stay `running` there.
            let step = observer.step;
            let rec = &mut observer.recorder;
            rec.finish_step_without_output(&printer, step, StepStatus::Failed);
            rec.finish_run(&printer, RunStatus::Failed);
            return Err(f);
        }
    };
    if let Some(f) = observer.csv.take() {
        if let Err(e) = f.commit() {
            printer.notice(&format!(
                "--csv: {e}; the intervals are in the result store"
            ));
        }
    }
    let outcome = &out.outcome;
    let id = observer.id.clone();

    // 3. Summary and JSON.
    for l in table::summary_lines(
        &outcome.summary,
        outcome.measured_s,
        outcome.cpu,
        outcome.summary.errors,
    ) {
        printer.line(&l);
    }
    if let Some(setup) = &out.verify {
        if setup.journal.is_some() {
            crate::verify_cmd::close_journal(setup, outcome.errors, &printer);
        }
    }
    let validation_errors = outcome.validation.as_ref().map_or(0, |v| v.errors);
    if let Some(v) = &outcome.validation {
        for l in crate::verify_cmd::summary_lines(v) {
            printer.line(&l);
        }
    }
    let was_interrupted = signals.interrupted();
    let status = if was_interrupted {
        StepStatus::Interrupted
    } else if outcome.errors > 0 || validation_errors > 0 {
        StepStatus::Failed
    } else {
        StepStatus::Ok
    };
    if outcome.errors > 0 {
        printer.notice(&format!(
            "{} I/O error(s); first: {}",
            outcome.errors,
            outcome
                .error_messages
                .first()
                .map(String::as_str)
                .unwrap_or("?")
        ));
    }
    if was_interrupted {
        printer.notice("interrupted: results of the completed intervals are kept");
    }
    let summary = step_summary(outcome, &out.targets);
    let analysis = analyse_step(&w, &out, &printer);
    {
        let rec = &mut observer.recorder;
        let step = observer.step;
        rec.finish_step(&printer, step, status, outcome, &summary);
        for f in &analysis {
            rec.analysis(&printer, step, f);
        }
        rec.finish_run(&printer, RunStatus::from(status));
    }
    if let Some(j) = &a.json {
        let doc = ResultDoc {
            schema: SCHEMA.to_owned(),
            tool: ToolInfo::this(),
            run: RunInfo {
                id,
                started,
                host: host_name(),
                labels: w.labels.clone(),
                engine: out.engine_name.clone(),
                status: RunStatus::from(status),
            },
            workload: w.record(),
            targets: out.targets.iter().map(target_entry).collect(),
            intervals: out.intervals,
            summary,
        };
        crate::output::json::write_json_doc(&printer, j, &doc)?;
    }
    Ok(if was_interrupted {
        exit::INTERRUPTED
    } else if validation_errors > 0 {
        exit::VALIDATION
    } else if outcome.errors > 0 {
        exit::RUNTIME
    } else {
        exit::OK
    })
}

/// `iorig run --dry-run`: the workload is resolved and the targets checked
/// exactly as a run would (read-only looks); what would run is printed.
fn dry_run(w: &Workload, allow_destroy: bool, quiet: bool) -> Result<u8, Failure> {
    let planned = iorig_engine::run::plan(w, allow_destroy).map_err(crate::step::engine_failure)?;
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

/// Writes CSV rows and the store as intervals complete, and titles the table.
struct RunObserver<'a> {
    id: String,
    w: &'a Workload,
    csv_path: Option<&'a Path>,
    /// Rows go to a temp file beside `--csv`, renamed into place at the end.
    csv: Option<iorig_outfile::AtomicFile>,
    recorder: Recorder,
    step: Option<StepId>,
    journal: Option<&'a Path>,
}

impl StepObserver for RunObserver<'_> {
    fn verify_setup(
        &mut self,
        prepared: &iorig_engine::run::Prepared,
    ) -> Result<Option<std::sync::Arc<iorig_engine::verify::VerifySetup>>, Failure> {
        match self.journal {
            Some(path) => crate::verify_cmd::attach_journal(path, self.w, prepared).map(Some),
            None => Ok(None),
        }
    }

    fn prepared(
        &mut self,
        printer: &Printer,
        targets: &[TargetInfo],
        engine_name: &str,
    ) -> Result<String, Failure> {
        // The run enters the store only once its targets passed every check.
        self.recorder
            .begin_run(RunKind::Run, None, &self.w.labels)?;
        if let Some(run) = self.recorder.run {
            self.id = run.to_string();
        }
        self.recorder.targets(printer, targets, &mut Vec::new());
        self.step =
            self.recorder
                .begin_step(printer, 0, "run", StepRole::Run, Some(&self.w.record()));
        if let Some(path) = self.csv_path {
            let mut f = iorig_outfile::AtomicFile::create("--csv", path)
                .map_err(crate::record::output_failure)?;
            let _ = writeln!(f, "{}", csv::header());
            self.csv = Some(f);
        }
        Ok(format!(
            "iorig run {}: {}",
            self.id,
            describe(self.w, engine_name, targets)
        ))
    }

    fn interval(
        &mut self,
        printer: &Printer,
        sample: &IntervalSample,
        interval: &Interval,
    ) -> Control {
        self.recorder.interval(printer, self.step, sample);
        if let Some(f) = self.csv.as_mut() {
            let _ = writeln!(f, "{}", csv::row(interval));
            let _ = f.flush();
        }
        Control::Continue
    }
}
