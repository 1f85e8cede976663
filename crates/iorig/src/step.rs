//! Running one resolved workload: plan and open the targets, execute, print the
//! interval table and live line, and hand every interval to the caller as it
//! completes (the store writer, steady-state detection, a precondition's byte
//! count). `iorig run` runs one step; plans and `iorig quick` run many.

use crate::output::json::interval_of;
use crate::output::{table, Printer};
use crate::signals::Signals;
use crate::Failure;
use crossbeam_channel::unbounded;
use iorig_engine::run::{self, IntervalSample, Prepared, RunEvent, RunOutcome, TargetInfo};
use iorig_engine::verify::VerifySetup;
use iorig_engine::EngineError;
use iorig_result::Interval;
use iorig_spec::{Rate, SyncMode, Workload};
use std::sync::Arc;

/// What the caller wants after an interval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    Continue,
    /// End the step now (its completed intervals are kept).
    Stop,
}

/// Everything a finished step produced.
pub struct StepOutput {
    pub targets: Vec<TargetInfo>,
    /// The engine that ran (io_uring may have fallen back to psync).
    pub engine_name: String,
    pub outcome: RunOutcome,
    pub intervals: Vec<Interval>,
    /// The validation state the step ran with (`verify` workloads).
    pub verify: Option<Arc<VerifySetup>>,
    /// Per target, the end of its data area (what a key map covers).
    pub extents_bytes: Vec<u64>,
}

pub fn engine_failure(e: EngineError) -> Failure {
    if e.is_usage() {
        Failure::usage(e.to_string())
    } else {
        Failure::runtime(e.to_string())
    }
}

/// One line naming the workload, for the table's title.
pub fn describe(w: &Workload, engine_name: &str, targets: &[TargetInfo]) -> String {
    let targets: Vec<String> = targets
        .iter()
        .map(|t| {
            format!(
                "{} ({}, {})",
                t.path,
                t.kind,
                table::human_bytes(t.size_bytes)
            )
        })
        .collect();
    format!(
        "bs {} read {}% random {}% qd {} x {} worker(s), {}, {}{}, rate {}, {}{} on {}, seed {}",
        w.bs_text(),
        w.read_pct,
        w.random_pct,
        w.qd,
        w.threads,
        engine_name,
        if w.direct { "direct" } else { "buffered" },
        match w.sync {
            SyncMode::None => "",
            SyncMode::Sync => "+sync",
            SyncMode::Dsync => "+dsync",
        },
        match w.rate {
            Rate::Max => "max".to_string(),
            Rate::Iops(r) => format!("{r:.0} IOPS"),
        },
        secs(w.time),
        if w.warmup.is_zero() {
            String::new()
        } else {
            format!(" after {} warmup", secs(w.warmup))
        },
        targets.join(", "),
        w.seed
    )
}

/// Hooks a caller gives [`run_step`].
pub trait StepObserver {
    /// The targets are open (files created); nothing has run yet. Returns the
    /// title printed above the interval table.
    fn prepared(
        &mut self,
        printer: &Printer,
        targets: &[TargetInfo],
        engine_name: &str,
    ) -> Result<String, Failure>;
    /// An interval completed.
    fn interval(
        &mut self,
        printer: &Printer,
        sample: &IntervalSample,
        interval: &Interval,
    ) -> Control;
    /// Lines shown above the live line (e.g. plan progress), ending in '\n'.
    fn live_prefix(&self) -> String {
        String::new()
    }
    /// For a `verify` workload, once the targets are open: the validation
    /// state to run with (a journal, or a key map kept from an earlier step).
    /// None gives the step a fresh key map of its own.
    fn verify_setup(&mut self, _prepared: &Prepared) -> Result<Option<Arc<VerifySetup>>, Failure> {
        Ok(None)
    }
    /// Once the targets are open: a limit on the bytes the step issues (a
    /// precondition's passes over the working set of `working_set_bytes`).
    fn byte_limit(&mut self, _working_set_bytes: u64) -> Option<u64> {
        None
    }
}

/// Runs `w` to its end, an early stop from the observer, or Ctrl-C.
pub fn run_step(
    w: &Workload,
    allow_destroy: bool,
    printer: &mut Printer,
    signals: &Signals,
    observer: &mut dyn StepObserver,
) -> Result<StepOutput, Failure> {
    let planned = run::plan(w, allow_destroy).map_err(engine_failure)?;
    for n in &planned.notices {
        printer.notice(n);
    }
    let engine_name = planned.engine.name().to_string();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut bar_path: Option<String> = None;
    let mut prepared = run::open(planned, &mut |p| {
        let path = p.path.display().to_string();
        if bar_path.as_deref() != Some(path.as_str()) {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
            bar = printer.fill_bar(&path, p.total_bytes);
            bar_path = Some(path);
        }
        if let Some(b) = &bar {
            b.set_position(p.done_bytes);
        }
    })
    .map_err(engine_failure)?;
    if let Some(b) = bar.take() {
        b.finish_and_clear();
    }
    if w.verify {
        // None: the engine gives the step a fresh key map of its own.
        prepared.verify = observer.verify_setup(&prepared)?;
    }
    prepared.byte_limit = observer.byte_limit(prepared.space.total_bytes());
    let title = observer.prepared(printer, &prepared.info, &engine_name)?;
    if !printer.quiet {
        printer.line(&title);
        for l in table::HEADER {
            printer.line(l);
        }
    }

    printer.start_live();
    let (tx, rx) = unbounded::<RunEvent>();
    let total_s = (w.warmup + w.time).as_secs_f64();
    let mut intervals: Vec<Interval> = Vec::new();
    let mut validation_errors = 0u64;
    let outcome = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let r = run::execute(&prepared, signals.stop.clone(), &tx);
            drop(tx);
            r
        });
        for ev in rx.iter() {
            match ev {
                RunEvent::Interval(sample) => {
                    let clock = wall_clock();
                    if !printer.quiet {
                        printer.line(&table::interval_row(&sample, &clock));
                    }
                    let j = interval_of(&sample);
                    if observer.interval(printer, &sample, &j) == Control::Stop {
                        signals.stop_step();
                    }
                    printer.set_live(format!(
                        "{}{}",
                        observer.live_prefix(),
                        table::live_line(&sample, total_s)
                    ));
                    intervals.push(j);
                }
                RunEvent::WorkerError { worker, message } => {
                    printer.notice(&format!("worker {worker} stopped: {message}"));
                }
                RunEvent::Validation(e) => {
                    crate::verify_cmd::print_error(printer, &e, &mut validation_errors);
                }
            }
        }
        worker.join()
    });
    printer.end_live();
    let outcome = match outcome {
        Ok(r) => r.map_err(engine_failure)?,
        Err(_) => return Err(Failure::runtime("the run thread panicked")),
    };
    if !printer.quiet {
        printer.line(&table::row(
            &wall_clock(),
            "avg",
            &outcome.summary,
            outcome.measured_s,
            outcome.cpu,
        ));
    }
    Ok(StepOutput {
        targets: prepared.info.clone(),
        engine_name,
        outcome,
        intervals,
        verify: prepared.verify.clone(),
        extents_bytes: prepared.extents_bytes.clone(),
    })
}

pub fn wall_clock() -> String {
    // HH:MM:SS in UTC from the RFC 3339 form; enough to line up with other logs.
    let t = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    t.get(11..19).unwrap_or("").to_string()
}

/// `30s`, `1.5s`, `1.667s`: seconds with at most three decimals.
fn secs(d: std::time::Duration) -> String {
    let t = format!("{:.3}", d.as_secs_f64());
    let t = t.trim_end_matches('0').trim_end_matches('.');
    format!("{t}s")
}
