//! The terminal as a sink: renders the runner's events as the interval
//! table, the live line, summaries and the warnings a finding deserves.

use super::table::{self, human_bytes};
use super::Printer;
use iorig_engine::run::TargetInfo;
use iorig_engine::verify::{ValidationError, ValidationSummary};
use iorig_result::{CurveFinding, Finding, SteadyStateFinding};
use iorig_run::plan::fmt_duration;
use iorig_run::{Event, PlanProgress, Sink};
use iorig_spec::plan::StepRole;
use iorig_spec::{Rate, SyncMode, Workload};
use iorig_verify::Expected;

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
}

pub struct TermSink {
    pub printer: Printer,
    mode: Mode,
    current: Option<Current>,
    fill: Option<(String, indicatif::ProgressBar)>,
    validation_errors: u64,
}

impl TermSink {
    pub fn new(printer: Printer) -> Self {
        TermSink {
            printer,
            mode: Mode::Plan { steps: 0 },
            current: None,
            fill: None,
            validation_errors: 0,
        }
    }

    fn end_fill(&mut self) {
        if let Some((_, b)) = self.fill.take() {
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
            (None, Some(w)) => describe(w, engine, targets),
            (None, None) => String::new(),
        };
        match &self.mode {
            Mode::Single { id } => format!("iorig run {id}: {what}"),
            Mode::Plan { steps } => format!("step {}/{steps} {}: {what}", c.index + 1, c.label),
        }
    }

    fn finding(&self, f: &Finding) {
        let p = &self.printer;
        match f {
            Finding::GeneratorBound(v) if v.generator_bound => {
                if let Some(m) = &v.message {
                    p.notice(m);
                }
            }
            Finding::Rate(r) if !r.met => p.notice(&format!(
                "rate not met: {:.0} IOPS achieved of {:.0} requested ({:+.1} %); the latency figures are for that load, not the one asked",
                r.achieved_iops, r.requested_iops, r.error_pct
            )),
            Finding::Outages(o) if o.outage_intervals > 0 => p.notice(&format!(
                "outage: {} interval(s) without a completed I/O, {:.1} s in total, longest {:.1} s from t={:.1} s; no I/O completed for {:.3} s from t={:.3} s",
                o.outage_intervals,
                o.total_outage_s,
                o.longest_outage_s,
                o.longest_start_t_s.unwrap_or(0.0),
                o.longest_gap_ns.unwrap_or(0) as f64 / 1e9,
                o.longest_gap_start_t_s.unwrap_or(0.0)
            )),
            Finding::WriteCliff(w) => {
                if let Some(c) = &w.cliff {
                    p.notice(&format!(
                        "write cliff at t={:.0} s: IOPS fell from {:.0} to {:.0} ({:.0} % lower) and stayed down",
                        c.onset_t_s, c.level_before_iops, c.level_after_iops, c.drop_pct
                    ));
                }
            }
            Finding::SteadyState(v) => {
                let label = self.current.as_ref().map_or("", |c| c.label.as_str());
                p.notice(&steady_state_line(label, v));
            }
            Finding::Precondition(pre) => p.line(&format!(
                "precondition: wrote {} in {:.1} s ({:.1} MB/s)",
                human_bytes(pre.written_bytes),
                pre.duration_s,
                pre.bw_bytes_per_s / 1e6
            )),
            Finding::Curve(c) => {
                for l in curve_lines(c) {
                    p.line(&l);
                }
            }
            _ => {}
        }
    }
}

impl Sink for TermSink {
    fn event(&mut self, ev: &Event<'_>) {
        match *ev {
            Event::Notice(n) => self.printer.notice(n),
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
                });
            }
            Event::Filling {
                path,
                done_bytes,
                total_bytes,
            } => {
                if self.fill.as_ref().map(|(p, _)| p.as_str()) != Some(path) {
                    self.end_fill();
                    if let Some(b) = self.printer.fill_bar(path, total_bytes) {
                        self.fill = Some((path.to_owned(), b));
                    }
                }
                if let Some((_, b)) = &self.fill {
                    b.set_position(done_bytes);
                }
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
                if !self.printer.quiet {
                    self.printer
                        .line(&table::interval_row(sample, &table::wall_clock()));
                }
                let total_s = self
                    .current
                    .as_ref()
                    .and_then(|c| c.workload.as_ref())
                    .map_or(0.0, |w| (w.warmup + w.time).as_secs_f64());
                self.printer.set_live(format!(
                    "{}{}",
                    progress.map(progress_line).unwrap_or_default(),
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
                    for l in validation_lines(v) {
                        p.line(&l);
                    }
                }
            }
            Event::StepAborted { .. } | Event::Closing | Event::RunEnded { .. } => {
                self.end_fill();
                self.printer.end_live();
            }
            Event::StepSkipped {
                index,
                label,
                finding: Finding::Skipped(s),
            } => self
                .printer
                .notice(&format!("step {} ({label}) skipped: {}", index + 1, s.why)),
            Event::Finding { finding, .. } => self.finding(finding),
            _ => {}
        }
    }
}

/// The plan's line above the live line.
fn progress_line(p: &PlanProgress) -> String {
    let bar_w = 20usize;
    let filled = (p.position * bar_w) / p.steps.max(1);
    format!(
        "plan [{}{}] step {}/{} {}{} | elapsed {} | ETA {}\n",
        "=".repeat(filled),
        " ".repeat(bar_w - filled),
        p.position + 1,
        p.steps,
        p.label,
        p.fill_pct
            .map(|f| format!(" fill {f:.0}%"))
            .unwrap_or_default(),
        fmt_duration(p.elapsed),
        fmt_duration(p.eta)
    )
}

/// One line naming the workload, for the table's title.
pub fn describe(w: &Workload, engine_name: &str, targets: &[TargetInfo]) -> String {
    let targets: Vec<String> = targets
        .iter()
        .map(|t| format!("{} ({}, {})", t.path, t.kind, human_bytes(t.size_bytes)))
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

/// `30s`, `1.5s`, `1.667s`: seconds with at most three decimals.
fn secs(d: std::time::Duration) -> String {
    let t = format!("{:.3}", d.as_secs_f64());
    let t = t.trim_end_matches('0').trim_end_matches('.');
    format!("{t}s")
}

pub fn steady_state_line(label: &str, v: &SteadyStateFinding) -> String {
    if v.reached {
        format!(
            "{label}: steady state reached after {} round(s) ({:.0} s measured)",
            v.rounds,
            v.time_needed_s.unwrap_or(0.0)
        )
    } else {
        let why = v.verdict.reason.as_deref().unwrap_or("");
        format!(
            "{label}: steady state not reached in {} round(s): {why}",
            v.rounds
        )
    }
}

pub fn curve_lines(v: &CurveFinding) -> Vec<String> {
    let a = &v.analysis;
    let group = v.group + 1;
    let th = v.threshold_ms;
    let f = |x: Option<f64>| match x {
        Some(n) => format!("{n:.0}"),
        None => "none".to_string(),
    };
    let at = |step: Option<usize>| match step {
        Some(step) => format!(" (step {step})"),
        None => String::new(),
    };
    let mut out = vec![format!(
        "curve {group}: max {} IOPS; best with mean latency <= {th} ms: {}{}; with p99 <= {th} ms: {}{}",
        f(Some(a.max_iops)),
        f(a.best_under_mean),
        at(v.best_under_mean_step),
        f(a.best_under_p99),
        at(v.best_under_p99_step),
    )];
    for o in &v.off_rate {
        out.push(format!(
            "curve {group}: step {} ran {} IOPS of {} requested ({:+.1} %): off its rate, so it does not count for the best under {th} ms",
            o.step.unwrap_or(0),
            f(Some(o.achieved_iops)),
            f(o.requested_iops),
            o.error_pct.unwrap_or(0.0)
        ));
    }
    if let Some(k) = &a.knee {
        out.push(format!(
            "curve {group}: knee at {} IOPS (mean latency {:.3} ms, over 2x the low-load latency)",
            f(Some(k.iops)),
            k.lat_ns / 1e6
        ));
    }
    out
}

/// One line for a validation error.
pub fn validation_error_text(e: &ValidationError) -> String {
    let u = &e.error;
    let expected = match u.expected {
        Expected::Unwritten => "never written".to_string(),
        Expected::Key(k) => format!("key {k}"),
        Expected::Either { old, new } => format!("key {old} or {new}"),
    };
    let found = match u.found_key {
        Some(k) => format!("key {k}"),
        None => "no iorig data".to_string(),
    };
    let written = u
        .found_time_ns
        .map(|ns| {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns);
            format!(", found written {}", humantime::format_rfc3339_millis(t))
        })
        .unwrap_or_default();
    format!(
        "{} at {} offset {} (t={:.3}s): expected {expected}, found {found}{written}; {}",
        u.kind.name().replace('_', " "),
        e.target_path,
        u.offset_bytes,
        e.t_s,
        u.detail
    )
}

/// The validation lines of a summary.
pub fn validation_lines(v: &ValidationSummary) -> Vec<String> {
    let mut out = vec![format!(
        "validation: {} block(s) checked ({} unit(s) of {} bytes; {} pre-read(s), {} read-back(s)), {} error(s)",
        v.blocks_checked, v.units_checked, v.unit_bytes, v.pre_reads, v.after_reads, v.errors
    )];
    if v.errors > 0 {
        let kinds: Vec<String> = v
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{} {n}", k.replace('_', " ")))
            .collect();
        out.push(format!("  errors by kind: {}", kinds.join(", ")));
    }
    if v.stopped_at_max_errors {
        out.push("  the run stopped at --max-errors".to_string());
    }
    if v.journal_batches > 0 {
        out.push(format!(
            "  journal: {} synced batch(es), {:.3} ms each on average (kept out of the I/O latency above)",
            v.journal_batches,
            v.journal_ns as f64 / v.journal_batches as f64 / 1e6
        ));
    }
    out
}

/// Prints a validation error as it arrives (the first few; then one line
/// saying the rest are counted).
pub fn print_validation_error(printer: &Printer, e: &ValidationError, seen: &mut u64) {
    *seen += 1;
    if *seen <= PRINTED_ERRORS {
        printer.notice(&format!("validation error: {}", validation_error_text(e)));
    } else if *seen == PRINTED_ERRORS + 1 {
        printer.notice("more validation errors: counted in the summary, listed in the JSON");
    }
}
