//! The terminal as a sink: renders the runner's events as the interval
//! table, the live line, summaries and the warnings a finding deserves.

use super::Printer;
use iorig_engine::run::TargetInfo;
use iorig_engine::verify::ValidationError;
use iorig_result::Finding;
use iorig_run::{Event, Sink};
use iorig_spec::plan::StepRole;
use iorig_spec::Workload;
use iorig_text::run as text;
use iorig_text::table::{self, human_bytes};

/// Validation errors printed as they happen; the rest are counted.
const PRINTED_ERRORS: u64 = 20;

/// What kind of run is being shown.
enum Mode {
    Single { id: String },
    Plan { steps: usize },
}

/// The step being shown.
struct Current {
    index: usize,
    label: String,
    workload: Option<Workload>,
    precondition: Option<iorig_spec::plan::PreconditionSpec>,
    /// A steady-state step's rounds: its time is their cap.
    steady: Option<iorig_spec::plan::SteadyStateSpec>,
}

pub struct TermSink {
    pub printer: Printer,
    mode: Mode,
    current: Option<Current>,
    /// The scratch file being filled, and its bar (none off a terminal,
    /// where one notice is printed per file instead).
    fill: Option<(String, Option<indicatif::ProgressBar>)>,
    validation_errors: u64,
    /// The jobs of the step running, as they end (shown with its summary).
    jobs: Vec<iorig_result::JobResult>,
    /// `--collect` sources whose failure was told (once each).
    failed_sources: Vec<String>,
    /// The step's measured interval that ended early (label, its length,
    /// the planned length), told under the table.
    partial: Option<(String, f64, f64)>,
}

impl TermSink {
    pub fn new(printer: Printer) -> Self {
        TermSink {
            printer,
            mode: Mode::Plan { steps: 0 },
            current: None,
            jobs: Vec::new(),
            fill: None,
            validation_errors: 0,
            failed_sources: Vec::new(),
            partial: None,
        }
    }

    fn end_fill(&mut self) {
        if let Some((_, Some(b))) = self.fill.take() {
            b.finish_and_clear();
        }
    }

    fn title(&self, targets: &[TargetInfo], engine: &str, byte_limit: Option<u64>) -> String {
        let Some(c) = &self.current else {
            return String::new();
        };
        let what = match (&c.precondition, &c.workload) {
            (Some(p), _) => format!(
                "precondition: write {} {} time(s) over ({})",
                if p.random { "randomly" } else { "sequentially" },
                p.passes,
                human_bytes(byte_limit.unwrap_or(0))
            ),
            (None, Some(w)) => match c.steady {
                Some(ss) => text::describe_for(
                    w,
                    engine,
                    targets,
                    &text::steady_time(ss.round, ss.max_rounds),
                ),
                None => text::describe(w, engine, targets),
            },
            (None, None) => String::new(),
        };
        match &self.mode {
            Mode::Single { id } => format!("iorig run {id}: {what}"),
            Mode::Plan { steps } => format!("step {}/{steps} {}: {what}", c.index + 1, c.label),
        }
    }

    fn finding(&self, f: &Finding) {
        let label = self.current.as_ref().map_or("", |c| c.label.as_str());
        if let Some(n) = text::finding_notice(f, label) {
            self.printer.notice(&n);
        }
        for l in text::finding_lines(f) {
            self.printer.line(&l);
        }
    }
}

impl Sink for TermSink {
    fn event(&mut self, ev: &Event<'_>) {
        match *ev {
            Event::Notice(n) => self.printer.notice(n),
            Event::External { samples, .. } => {
                for s in samples {
                    if let Some(e) = &s.error {
                        if !self.failed_sources.contains(&s.source) {
                            self.printer.notice(&format!(
                                "--collect {}: {e} (the test goes on; each interval's failure is stored)",
                                s.source
                            ));
                            self.failed_sources.push(s.source.clone());
                        }
                    }
                }
            }
            Event::RunBegun { id } => self.mode = Mode::Single { id: id.to_owned() },
            Event::PlanBegun { steps, .. } => self.mode = Mode::Plan { steps },
            Event::StepBegun {
                index,
                label,
                workload,
                plan_step,
                ..
            } => {
                self.current = Some(Current {
                    index,
                    label: label.to_owned(),
                    workload: workload.cloned(),
                    precondition: plan_step.and_then(|s| match s.role {
                        StepRole::Precondition(p) => Some(p),
                        _ => None,
                    }),
                    steady: plan_step.and_then(|s| s.steady_state),
                });
            }
            Event::Filling {
                path,
                done_bytes,
                total_bytes,
                grown_from_bytes,
            } => {
                if self.fill.as_ref().map(|(p, _)| p.as_str()) != Some(path) {
                    self.end_fill();
                    let bar = self.printer.fill_bar(path, total_bytes, grown_from_bytes);
                    self.fill = Some((path.to_owned(), bar));
                }
                if let Some((_, Some(b))) = &self.fill {
                    b.set_position(done_bytes);
                }
            }
            Event::Formatting { path, progress } => {
                if progress.files_total > 0
                    && self.fill.as_ref().map(|(p, _)| p.as_str()) != Some(path)
                {
                    self.end_fill();
                    let bar =
                        self.printer
                            .format_bar(path, progress.files_total, progress.bytes_total);
                    self.fill = Some((path.to_owned(), bar));
                }
                if let Some((_, Some(b))) = &self.fill {
                    b.set_position(progress.files_done);
                }
            }
            Event::Formatted { path, summary, .. } => {
                self.end_fill();
                self.printer.line(&text::format_line(path, summary));
            }
            Event::TargetsOpen {
                targets,
                engine,
                byte_limit,
                ..
            } => {
                self.end_fill();
                if !self.printer.quiet {
                    self.printer.line(&self.title(targets, engine, byte_limit));
                    for l in table::HEADER {
                        self.printer.line(l);
                    }
                }
                self.printer.start_live();
            }
            Event::Interval {
                sample, progress, ..
            } => {
                // The interval's planned length, and the step's (for the
                // live line's progress).
                let (planned_s, total_s) = self
                    .current
                    .as_ref()
                    .and_then(|c| c.workload.as_ref())
                    .map_or((0.0, 0.0), |w| {
                        (w.interval.as_secs_f64(), (w.warmup + w.time).as_secs_f64())
                    });
                // A warmup cut short at its end is planned so; a measured
                // interval cut short is the step's end.
                if !sample.warmup && table::is_partial(sample, planned_s) {
                    self.partial = Some((
                        format!("{}", sample.index + 1),
                        sample.duration_s,
                        planned_s,
                    ));
                }
                if !self.printer.quiet {
                    self.printer.line(&table::interval_row(
                        sample,
                        &table::wall_clock(),
                        planned_s,
                    ));
                    for l in table::op_rows(&sample.stats, sample.duration_s) {
                        self.printer.line(&l);
                    }
                }
                self.printer.set_live(format!(
                    "{}{}",
                    progress.map(text::progress_line).unwrap_or_default(),
                    table::live_line(sample, total_s)
                ));
            }
            Event::WorkerError { worker, message } => self
                .printer
                .notice(&format!("worker {worker} stopped: {message}")),
            Event::ValidationError(e) => {
                print_validation_error(&self.printer, e, &mut self.validation_errors)
            }
            Event::StepEnded { index, outcome, .. } => {
                self.printer.end_live();
                let p = &self.printer;
                if !p.quiet {
                    p.line(&table::row(
                        &table::wall_clock(),
                        "avg",
                        &outcome.summary,
                        outcome.measured_s,
                        outcome.cpu,
                    ));
                    for l in table::op_rows(&outcome.summary, outcome.measured_s) {
                        p.line(&l);
                    }
                }
                if let (false, Some((label, d, planned))) = (p.quiet, self.partial.take()) {
                    p.line(&table::partial_note(&label, d, planned));
                }
                if let (true, Mode::Plan { steps }, Some(c)) = (p.quiet, &self.mode, &self.current)
                {
                    p.line(&format!("step {}/{steps} {}:", index + 1, c.label));
                }
                for l in table::summary_lines(
                    &outcome.summary,
                    outcome.measured_s,
                    outcome.cpu,
                    outcome.summary.errors,
                ) {
                    p.line(&l);
                }
                if let Some(v) = &outcome.validation {
                    for l in text::validation_lines(v) {
                        p.line(&l);
                    }
                }
                if !self.jobs.is_empty() {
                    for l in iorig_text::hosts::jobs_lines(&self.jobs) {
                        p.line(&format!("  {l}"));
                    }
                    self.jobs.clear();
                }
            }
            Event::JobEnded { job, .. } => self.jobs.push(job.clone()),
            Event::StepAborted { .. } | Event::Closing => {
                self.end_fill();
                self.printer.end_live();
            }
            Event::RunEnded { status } => {
                self.end_fill();
                self.printer.end_live();
                // Quiet output has no title line: the run id still shows.
                if let (true, Mode::Single { id }) = (self.printer.quiet, &self.mode) {
                    self.printer.line(&format!("iorig run {id}: {status}"));
                }
            }
            Event::StepSkipped {
                index,
                label,
                finding,
            } => {
                if let Some(n) =
                    text::finding_notice(finding, &format!("step {} ({label})", index + 1))
                {
                    self.printer.notice(&n);
                }
            }
            Event::Finding { finding, .. } => self.finding(finding),
            _ => {}
        }
    }
}

/// Prints a validation error as it arrives (the first few; then one line
/// saying the rest are counted).
pub fn print_validation_error(printer: &Printer, e: &ValidationError, seen: &mut u64) {
    *seen += 1;
    if *seen <= PRINTED_ERRORS {
        printer.notice(&format!(
            "validation error: {}",
            text::validation_error_text(e)
        ));
    } else if *seen == PRINTED_ERRORS + 1 {
        printer.notice("more validation errors: counted in the summary, listed in the JSON");
    }
}
