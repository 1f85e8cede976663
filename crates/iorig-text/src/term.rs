//! The terminal's text of a run, as a sink: the runner's events become the
//! interval table, the live line, the fill and format bars, summaries and
//! the warnings a finding deserves. What the text is drawn on is a
//! [`Screen`]: the binary's printer (stdout, stderr, indicatif), or a test's
//! buffer. Nothing here prints.

use crate::run as text;
use crate::table::{self, human_bytes};
use iorig_result::live::{TargetInfo, ValidationError, FILE_HEADER_BYTES};
use iorig_result::Finding;
use iorig_run::{Event, Sink};
use iorig_spec::plan::StepRole;
use iorig_spec::Workload;

/// A bar of work before the I/O starts.
#[derive(Clone, Copy, Debug)]
pub enum Bar<'a> {
    /// A scratch file being filled (created, or grown from a size).
    Fill {
        path: &'a str,
        total_bytes: u64,
        grown_from_bytes: Option<u64>,
    },
    /// A tree's files being created (its format phase).
    Format {
        path: &'a str,
        files_total: u64,
        bytes_total: u64,
    },
}

impl Bar<'_> {
    /// The bar as drawn: its template (indicatif's `{prefix}`, `{bar}`,
    /// `{pos}`, ... placeholders), its path (the prefix) and its length.
    pub fn drawn(&self) -> (&'static str, &str, u64) {
        match *self {
            Bar::Fill {
                path,
                total_bytes,
                grown_from_bytes,
            } => (
                match grown_from_bytes {
                    None => "creating {prefix}: [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
                    Some(_) => "growing {prefix}: [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
                },
                path,
                total_bytes,
            ),
            Bar::Format {
                path, files_total, ..
            } => (
                "format {prefix}: [{bar:30}] {pos}/{len} files {per_sec} eta {eta}",
                path,
                files_total,
            ),
        }
    }

    /// The notice a bar is where none can be drawn (off a terminal).
    pub fn notice(&self) -> String {
        match *self {
            Bar::Fill {
                path,
                total_bytes,
                grown_from_bytes: None,
            } => format!(
                "creating {path}: {} of random data after iorig's 1 MiB header ({} on disk)",
                human_bytes(total_bytes),
                human_bytes(total_bytes + FILE_HEADER_BYTES)
            ),
            Bar::Fill {
                path,
                total_bytes,
                grown_from_bytes: Some(from),
            } => format!(
                "growing {path} from {} to {}: filling the new {} with random data",
                human_bytes(from),
                human_bytes(from + total_bytes),
                human_bytes(total_bytes)
            ),
            Bar::Format {
                path,
                files_total,
                bytes_total,
            } => format!(
                "format: creating {files_total} files ({}) in {path}",
                human_bytes(bytes_total)
            ),
        }
    }
}

/// Where a run's text goes: lines of the report, notices for the user, one
/// live status line and one bar at a time.
pub trait Screen {
    /// Only summaries: no title, table or live line.
    fn quiet(&self) -> bool;
    /// A line of the report (table rows, summary).
    fn line(&self, text: &str);
    /// A notice for the user, shown even when quiet.
    fn notice(&self, text: &str);
    fn start_live(&mut self);
    fn set_live(&self, text: String);
    fn end_live(&mut self);
    /// Starts a bar (or tells its notice where none can be drawn).
    fn start_bar(&mut self, bar: Bar<'_>);
    /// The bar's position: bytes filled or files made.
    fn set_bar(&self, position: u64);
    fn end_bar(&mut self);
}

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
    /// What each host sizes from its own targets and cache.
    sizing: iorig_spec::HostSizing,
}

pub struct TermSink<S: Screen> {
    pub screen: S,
    mode: Mode,
    current: Option<Current>,
    /// The path whose bar is shown (a scratch file filled, a tree formatted).
    bar: Option<String>,
    validation_errors: u64,
    /// The jobs of the step running, as they end (shown with its summary).
    jobs: Vec<iorig_result::JobResult>,
    /// `--collect` sources whose failure was told (once each).
    failed_sources: Vec<String>,
    /// The step's measured interval that ended early (label, its length,
    /// the planned length), told under the table.
    partial: Option<(String, f64, f64)>,
    /// The step's block devices (from its targets) and their figures per
    /// measured interval, for the summary's device line (fio's "Disk stats").
    devices: (Vec<String>, Vec<(f64, iorig_stats::DeviceUsage)>),
    /// The hosts of the multi-host step that just ended, as they end.
    hosts: Vec<iorig_result::HostResult>,
}

impl<S: Screen> TermSink<S> {
    pub fn new(screen: S) -> Self {
        TermSink {
            screen,
            mode: Mode::Plan { steps: 0 },
            current: None,
            jobs: Vec::new(),
            bar: None,
            validation_errors: 0,
            failed_sources: Vec::new(),
            devices: (Vec::new(), Vec::new()),
            hosts: Vec::new(),
            partial: None,
        }
    }

    fn end_bar(&mut self) {
        if self.bar.take().is_some() {
            self.screen.end_bar();
        }
    }

    /// Shows `bar` at `position`, starting it when its path is new.
    fn bar(&mut self, bar: Bar<'_>, position: u64) {
        let path = match bar {
            Bar::Fill { path, .. } | Bar::Format { path, .. } => path,
        };
        if self.bar.as_deref() != Some(path) {
            self.end_bar();
            self.screen.start_bar(bar);
            self.bar = Some(path.to_owned());
        }
        self.screen.set_bar(position);
    }

    fn title(&self, targets: &[TargetInfo], engine: &str, byte_limit: Option<u64>) -> String {
        let Some(c) = &self.current else {
            return String::new();
        };
        let what = match (&c.precondition, &c.workload) {
            (Some(p), _) => format!(
                "precondition: write {} {} time(s) over ({}){}",
                if p.random { "randomly" } else { "sequentially" },
                p.passes,
                human_bytes(byte_limit.unwrap_or(0)),
                text::working_set_text(&c.sizing)
            ),
            (None, Some(w)) => match c.steady {
                Some(ss) => text::describe_for(
                    w,
                    engine,
                    targets,
                    &text::steady_time(ss.round, ss.max_rounds),
                    &c.sizing,
                ),
                None => text::describe(w, engine, targets, &c.sizing),
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
            self.screen.notice(&n);
        }
        for l in text::finding_lines(f) {
            self.screen.line(&l);
        }
    }
}

impl<S: Screen> Sink for TermSink<S> {
    fn event(&mut self, ev: &Event<'_>) {
        // A multi-host plan step's hosts come one `HostEnded` each after
        // its summary: the first other event prints them as a table under
        // it (a single run prints its own after the run).
        if !matches!(ev, Event::HostEnded { .. }) && !self.hosts.is_empty() {
            let hosts = std::mem::take(&mut self.hosts);
            if matches!(self.mode, Mode::Plan { .. }) {
                for l in crate::hosts::hosts_lines(&hosts) {
                    self.screen.line(&format!("  {l}"));
                }
            }
        }
        match *ev {
            Event::HostEnded { host, .. } => self.hosts.push(host.clone()),
            Event::Notice(n) => self.screen.notice(n),
            Event::External { samples, .. } => {
                for s in samples {
                    if let Some(e) = &s.error {
                        if !self.failed_sources.contains(&s.source) {
                            self.screen.notice(&format!(
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
                    precondition: plan_step.and_then(|s| match &s.role {
                        StepRole::Precondition(p) => Some(p.clone()),
                        _ => None,
                    }),
                    steady: plan_step.and_then(|s| s.steady_state),
                    sizing: plan_step.map(|s| s.sizing).unwrap_or_default(),
                });
            }
            Event::Filling {
                path,
                done_bytes,
                total_bytes,
                grown_from_bytes,
            } => self.bar(
                Bar::Fill {
                    path,
                    total_bytes,
                    grown_from_bytes,
                },
                done_bytes,
            ),
            Event::Formatting { path, progress } if progress.files_total > 0 => self.bar(
                Bar::Format {
                    path,
                    files_total: progress.files_total,
                    bytes_total: progress.bytes_total,
                },
                progress.files_done,
            ),
            Event::Formatted { path, summary, .. } => {
                self.end_bar();
                self.screen.line(&text::format_line(path, summary));
            }
            Event::TargetsOpen {
                targets,
                engine,
                byte_limit,
                ..
            } => {
                self.end_bar();
                let mut names: Vec<String> =
                    targets.iter().filter_map(|t| t.device.clone()).collect();
                names.sort();
                names.dedup();
                self.devices = (names, Vec::new());
                if !self.screen.quiet() {
                    self.screen.line(&self.title(targets, engine, byte_limit));
                    for l in table::HEADER {
                        self.screen.line(l);
                    }
                }
                self.screen.start_live();
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
                if let (false, Some(d)) = (sample.warmup, sample.device) {
                    self.devices.1.push((sample.duration_s, d));
                }
                if !sample.warmup && table::is_partial(sample, planned_s) {
                    self.partial = Some((
                        format!("{}", sample.index + 1),
                        sample.duration_s,
                        planned_s,
                    ));
                }
                if !self.screen.quiet() {
                    self.screen.line(&table::interval_row(
                        sample,
                        &table::wall_clock(),
                        planned_s,
                    ));
                    for l in table::op_rows(&sample.stats, sample.duration_s) {
                        self.screen.line(&l);
                    }
                }
                self.screen.set_live(format!(
                    "{}{}",
                    progress.map(text::progress_line).unwrap_or_default(),
                    table::live_line(sample, total_s)
                ));
            }
            Event::WorkerError { worker, message } => self
                .screen
                .notice(&format!("worker {worker} stopped: {message}")),
            Event::ValidationError(e) => {
                print_validation_error(&self.screen, e, &mut self.validation_errors)
            }
            Event::StepEnded { index, outcome, .. } => {
                self.screen.end_live();
                let p = &self.screen;
                if !p.quiet() {
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
                if let (false, Some((label, d, planned))) = (p.quiet(), self.partial.take()) {
                    p.line(&table::partial_note(&label, d, planned));
                }
                if let (true, Mode::Plan { steps }, Some(c)) =
                    (p.quiet(), &self.mode, &self.current)
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
                let (names, usage) = std::mem::take(&mut self.devices);
                if let Some(l) = table::device_line(&names, &usage) {
                    p.line(&l);
                }
                if let Some(v) = &outcome.validation {
                    for l in text::validation_lines(v) {
                        p.line(&l);
                    }
                }
                if !self.jobs.is_empty() {
                    for l in crate::hosts::jobs_lines(&self.jobs) {
                        p.line(&format!("  {l}"));
                    }
                    self.jobs.clear();
                }
            }
            Event::JobEnded { job, .. } => self.jobs.push(job.clone()),
            Event::StepAborted { .. } | Event::Closing => {
                self.end_bar();
                self.screen.end_live();
            }
            Event::RunEnded { status } => {
                self.end_bar();
                self.screen.end_live();
                // Quiet output has no title line: the run id still shows.
                if let (true, Mode::Single { id }) = (self.screen.quiet(), &self.mode) {
                    self.screen.line(&format!("iorig run {id}: {status}"));
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
                    self.screen.notice(&n);
                }
            }
            Event::Finding { finding, .. } => self.finding(finding),
            _ => {}
        }
    }
}

/// Prints a validation error as it arrives (the first few; then one line
/// saying the rest are counted).
pub fn print_validation_error(screen: &impl Screen, e: &ValidationError, seen: &mut u64) {
    *seen += 1;
    if *seen <= PRINTED_ERRORS {
        screen.notice(&format!(
            "validation error: {}",
            text::validation_error_text(e)
        ));
    } else if *seen == PRINTED_ERRORS + 1 {
        screen.notice("more validation errors: counted in the summary, listed in the JSON");
    }
}

/// A live profile on a screen: interval rows (unless quiet) and the live
/// line.
pub struct ProfileSink<'a, S: Screen> {
    pub screen: &'a mut S,
}

impl<S: Screen> Sink for ProfileSink<'_, S> {
    fn event(&mut self, ev: &Event<'_>) {
        match *ev {
            Event::Notice(n) => self.screen.notice(n),
            Event::ProfileInterval {
                figures,
                t_s,
                time_s,
                many,
            } => {
                if !self.screen.quiet() {
                    for l in crate::profile::interval_lines(figures, t_s, many) {
                        self.screen.line(&l);
                    }
                }
                if let Some(time_s) = time_s {
                    self.screen.start_live();
                    self.screen.set_live(format!(
                        "{t_s:.0}s of {time_s:.0}s: total {} w MB/s, {} r MB/s",
                        crate::profile::mb(figures.total.write_bw_bytes_per_s),
                        crate::profile::mb(figures.total.read_bw_bytes_per_s)
                    ));
                }
            }
            Event::Closing | Event::RunEnded { .. } => self.screen.end_live(),
            _ => {}
        }
    }
}

/// Validation errors on a screen as they are found (the first few), and
/// notices; for a scan, which has no table.
pub struct ErrorSink<'a, S: Screen> {
    pub screen: &'a S,
    pub seen: u64,
}

impl<S: Screen> Sink for ErrorSink<'_, S> {
    fn event(&mut self, ev: &Event<'_>) {
        match ev {
            Event::ValidationError(e) => print_validation_error(self.screen, e, &mut self.seen),
            Event::Notice(n) => self.screen.notice(n),
            _ => {}
        }
    }
}
