//! `iorig profile`: sample /proc/diskstats (or read a recording), print a live
//! table and a summary, judge the figures with rule sets, write JSON, CSV and
//! a replay workload, and store the profile as a run.
//!
//! Every input is checked before the first snapshot, so bad input writes
//! nothing. Ctrl-C is a normal way to end a live profile: the intervals so far
//! (and a last, shorter one) are kept, and the exit code is 0.

use crate::cli::ProfileArgs;
use crate::output::json::write_json_doc;
use crate::output::Printer;
use crate::store::{check_output, check_output_dir, writer, StoreChoice};
use crate::{exit, Failure};
use iorig_profile::emit::{workload_toml, EmitRate};
use iorig_profile::rules::{Evaluation, RuleSet};
use iorig_profile::snapshot;
use iorig_profile::{Figures, IntervalFigures, Profile, Selection, FIGURE_NAMES};
use iorig_result::{Finding, ProfileSummary};
use iorig_run::event::Fanout;
use iorig_run::profile::{interval_docs, profile_error, Source};
use iorig_run::{Event, Sink};
use iorig_spec::parse_duration;
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

const SCHEMA: &str = "iorig.profile/1";
const DEFAULT_INTERVAL: &str = "5s";
const DEFAULT_TIME: &str = "10m";

/// Everything checked before the first snapshot.
struct Checked {
    source: Source,
    selection: Selection,
    rules: Vec<RuleSet>,
    emit_rate: EmitRate,
    labels: BTreeMap<String, String>,
}

fn check(a: &ProfileArgs) -> Result<Checked, Failure> {
    let emit_rate = EmitRate::parse(&a.emit_rate).ok_or_else(|| {
        Failure::usage(format!("bad emit-rate '{}': use mean or peak", a.emit_rate))
    })?;
    let source = match &a.diskstats {
        Some(dir) => {
            for (flag, given) in [("--interval", &a.interval), ("--time", &a.time)] {
                if given.is_some() {
                    return Err(Failure::usage(format!(
                        "{flag} does not apply to --diskstats: a recording's intervals are the times between its snapshots; drop {flag}"
                    )));
                }
            }
            if !dir.is_dir() {
                return Err(Failure::usage(format!(
                    "--diskstats {}: no such directory; give the directory `iorig profile --record DIR` wrote",
                    dir.display()
                )));
            }
            let snaps = snapshot::read_recording(dir).map_err(profile_error)?;
            Source::Recorded {
                dir: dir.clone(),
                snaps,
            }
        }
        None => {
            let dur = |flag: &str, v: &Option<String>, default: &str| {
                let text = v.as_deref().unwrap_or(default);
                parse_duration(text).map_err(|e| Failure::usage(format!("{flag}: {e}")))
            };
            let interval = dur("--interval", &a.interval, DEFAULT_INTERVAL)?;
            let time = dur("--time", &a.time, DEFAULT_TIME)?;
            if interval < Duration::from_millis(100) {
                return Err(Failure::usage(format!(
                    "bad interval '{}': the kernel counts in milliseconds, so intervals under 100ms are noise; use --interval 1s or more",
                    a.interval.as_deref().unwrap_or_default()
                )));
            }
            if time < interval {
                return Err(Failure::usage(format!(
                    "--time {} is shorter than one --interval {}; profile for at least one interval",
                    a.time.as_deref().unwrap_or(DEFAULT_TIME),
                    a.interval.as_deref().unwrap_or(DEFAULT_INTERVAL)
                )));
            }
            if let Some(dir) = &a.record {
                if dir.exists() && !dir.is_dir() {
                    return Err(Failure::usage(format!(
                        "--record {}: not a directory; give a directory for the snapshots",
                        dir.display()
                    )));
                }
                if snapshot::has_snapshots(dir) {
                    return Err(Failure::usage(format!(
                        "--record {}: it already holds snapshots, and two recordings must not mix; choose an empty or new directory",
                        dir.display()
                    )));
                }
                check_output_dir("--record", dir)?;
            }
            Source::Live {
                interval,
                time,
                record: a.record.clone(),
            }
        }
    };
    let mut rules = Vec::new();
    let names: Vec<String> = if a.rules.is_empty() {
        RuleSet::builtin_names()
            .iter()
            .map(|n| n.to_string())
            .collect()
    } else {
        a.rules.clone()
    };
    for r in &names {
        if let Some(set) = RuleSet::builtin(r) {
            rules.push(set);
            continue;
        }
        let path = Path::new(r);
        if !path.is_file() {
            return Err(Failure::usage(format!(
                "--rules {r}: neither a built-in rule set ({}) nor a file",
                RuleSet::builtin_names().join(", ")
            )));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::usage(format!("--rules {r}: {e}")))?;
        rules.push(RuleSet::from_toml(r, &text).map_err(profile_error)?);
    }
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        check_output("--json", Path::new(j))?;
    }
    if let Some(c) = &a.csv {
        check_output("--csv", c)?;
    }
    if let Some(w) = &a.emit_workload {
        check_output("--emit-workload", w)?;
    }
    Ok(Checked {
        source,
        selection: Selection::named(&device_names(&a.devices)),
        rules,
        emit_rate,
        labels: crate::cli::parse_labels(&a.record_store.labels)?,
    })
}

/// `--device` values as /proc/diskstats names them: a path such as
/// `/dev/mapper/vg-data` or `/dev/disk/by-id/...` is followed to its node
/// (`dm-3`, `sdb`); other names are taken as given (without `/dev/`).
fn device_names(given: &[String]) -> Vec<String> {
    given
        .iter()
        .map(|g| {
            if g.starts_with('/') {
                if let Some(name) = std::fs::canonicalize(g)
                    .ok()
                    .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                {
                    return name;
                }
            }
            g.clone()
        })
        .collect()
}

// ------------------------------------------------------------------ output

fn mb(v: Option<f64>) -> String {
    v.map_or("-".into(), |b| format!("{:.2}", b / 1e6))
}
fn kib(v: Option<f64>) -> String {
    v.map_or("-".into(), |b| format!("{:.1}", b / 1024.0))
}
fn num(v: Option<f64>, digits: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.digits$}"))
}

fn header_line() -> String {
    format!(
        "{:>8} {:<12} {:>9} {:>9} {:>8} {:>8} {:>7} {:>7} {:>6} {:>6} {:>8} {:>8} {:>6}",
        "time",
        "device",
        "r/s",
        "w/s",
        "rMB/s",
        "wMB/s",
        "rKiB/io",
        "wKiB/io",
        "read%",
        "aqu",
        "r_await",
        "w_await",
        "%util"
    )
}

fn row_line(t: &str, device: &str, f: &Figures) -> String {
    format!(
        "{:>8} {:<12} {:>9} {:>9} {:>8} {:>8} {:>7} {:>7} {:>6} {:>6} {:>8} {:>8} {:>6}",
        t,
        device,
        num(f.read_iops, 1),
        num(f.write_iops, 1),
        mb(f.read_bw_bytes_per_s),
        mb(f.write_bw_bytes_per_s),
        kib(f.read_avg_size_bytes),
        kib(f.write_avg_size_bytes),
        num(f.read_pct_ops, 1),
        num(f.queue_depth, 2),
        num(f.read_await_ms, 2),
        num(f.write_await_ms, 2),
        num(f.util_pct, 1)
    )
}

fn print_interval(printer: &Printer, i: &IntervalFigures, t_s: f64, many: bool) {
    let t = format!("{t_s:.1}");
    if many {
        for (name, f) in &i.devices {
            printer.line(&row_line(&t, name, f));
        }
    }
    printer.line(&row_line(&t, "total", &i.total));
}

/// How a figure is shown in the summary: label, divisor, decimals.
fn shown(figure: &str) -> (&'static str, f64, usize) {
    match figure {
        "read_iops" => ("read IOPS", 1.0, 1),
        "write_iops" => ("write IOPS", 1.0, 1),
        "total_iops" => ("total IOPS", 1.0, 1),
        "read_bw_bytes_per_s" => ("read MB/s", 1e6, 2),
        "write_bw_bytes_per_s" => ("write MB/s", 1e6, 2),
        "total_bw_bytes_per_s" => ("total MB/s", 1e6, 2),
        "read_avg_size_bytes" => ("avg read KiB", 1024.0, 1),
        "write_avg_size_bytes" => ("avg write KiB", 1024.0, 1),
        "read_pct_ops" => ("read % (ops)", 1.0, 1),
        "read_pct_bytes" => ("read % (bytes)", 1.0, 1),
        "queue_depth" => ("queue depth", 1.0, 2),
        "read_await_ms" => ("read await ms", 1.0, 2),
        "write_await_ms" => ("write await ms", 1.0, 2),
        "util_pct" => ("util %", 1.0, 1),
        "discard_iops" => ("discard IOPS", 1.0, 1),
        "discard_bw_bytes_per_s" => ("discard MB/s", 1e6, 2),
        "flush_iops" => ("flush IOPS", 1.0, 1),
        _ => ("?", 1.0, 1),
    }
}

fn print_summary(printer: &Printer, p: &Profile) {
    printer.line(&format!(
        "profile over {:.1}s, {} interval(s); total over {}:",
        p.duration_s(),
        p.intervals.len(),
        p.devices
            .iter()
            .filter(|d| d.in_total)
            .map(|d| d.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    printer.line(&format!(
        "  {:<16} {:>12} {:>12} {:>12}",
        "", "mean", "p95", "peak"
    ));
    for (name, stat) in FIGURE_NAMES.iter().zip(&p.total.stats) {
        if stat.mean.is_none() && stat.peak.is_none() {
            continue; // not reported by this kernel, or no I/O of that kind
        }
        let (label, div, d) = shown(name);
        let f = |v: Option<f64>| v.map_or("-".into(), |x| format!("{:.d$}", x / div));
        printer.line(&format!(
            "  {:<16} {:>12} {:>12} {:>12}",
            label,
            f(stat.mean),
            f(stat.p95),
            f(stat.peak)
        ));
    }
    for d in p.devices.iter().filter(|d| !d.in_total) {
        if let Some(why) = &d.why_not_in_total {
            printer.line(&format!("  {} is not added to the total: {why}", d.name));
        }
    }
}

fn level_name<T: Serialize>(level: &T) -> String {
    serde_json::to_value(level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_uppercase))
        .unwrap_or_default()
}

fn print_verdicts(printer: &Printer, evals: &[Evaluation]) {
    for e in evals {
        let overall = e
            .overall
            .as_ref()
            .map(level_name)
            .unwrap_or("NO DATA".into());
        printer.line(&format!("rules {}: {overall}", e.rule_set));
        for v in &e.verdicts {
            let level = v.level.as_ref().map(level_name).unwrap_or("NO DATA".into());
            printer.line(&format!(
                "  {:<7} {}: {} ({})",
                level, v.rule, v.says, v.shown
            ));
        }
    }
}

/// The `--csv` file: rows go to a temp file beside it, renamed into place
/// when the profile ends (also after a fault).
struct CsvOut {
    out: Option<csv::Writer<iorig_outfile::AtomicFile>>,
    path: PathBuf,
    fault: Option<String>,
}

type CsvWriter = csv::Writer<iorig_outfile::AtomicFile>;

impl CsvOut {
    fn create(path: &Path) -> Result<CsvOut, Failure> {
        let f = iorig_outfile::AtomicFile::create("--csv", path)?;
        let mut out = CsvOut {
            out: Some(csv::Writer::from_writer(f)),
            path: path.to_path_buf(),
            fault: None,
        };
        let header = ["t_s", "duration_s", "device"]
            .into_iter()
            .chain(FIGURE_NAMES.iter().copied());
        out.write(|w| w.write_record(header));
        Ok(out)
    }

    fn write(&mut self, f: impl FnOnce(&mut CsvWriter) -> csv::Result<()>) {
        let Some(w) = self.out.as_mut() else { return };
        if let Err(e) = f(w).and_then(|_| w.flush().map_err(Into::into)) {
            self.fault = Some(format!("--csv {}: {e}", self.path.display()));
            self.out = None;
        }
    }
}

impl Sink for CsvOut {
    fn event(&mut self, ev: &Event<'_>) {
        match ev {
            Event::ProfileInterval {
                figures: i, t_s, ..
            } => {
                let rows = std::iter::once(("total", &i.total))
                    .chain(i.devices.iter().map(|(n, f)| (n.as_str(), f)));
                let duration_s = i.duration_s().to_string();
                let t = t_s.to_string();
                for (device, f) in rows {
                    self.write(|w| {
                        let cells = FIGURE_NAMES
                            .iter()
                            .map(|n| f.get(n).map(|v| format!("{v}")).unwrap_or_default());
                        w.write_record(
                            [t.clone(), duration_s.clone(), device.to_owned()]
                                .into_iter()
                                .chain(cells),
                        )
                    });
                }
            }
            Event::Closing => {
                if let Some(w) = self.out.take() {
                    let path = self.path.display().to_string();
                    let done = w
                        .into_inner()
                        .map_err(|e| format!("--csv {path}: {}", e.error()))
                        .and_then(|f| f.commit().map_err(|e| e.to_string()));
                    if let Err(e) = done {
                        self.fault = Some(e);
                    }
                }
            }
            _ => {}
        }
    }

    fn take_fault(&mut self) -> Option<String> {
        self.fault.take()
    }
}

/// The terminal: interval rows and the live line.
struct ProfileTerm<'a> {
    printer: &'a mut Printer,
    quiet: bool,
}

impl Sink for ProfileTerm<'_> {
    fn event(&mut self, ev: &Event<'_>) {
        match *ev {
            Event::Notice(n) => self.printer.notice(n),
            Event::ProfileInterval {
                figures,
                t_s,
                time_s,
                many,
            } => {
                if !self.quiet {
                    print_interval(self.printer, figures, t_s, many);
                }
                if let Some(time_s) = time_s {
                    self.printer.start_live();
                    self.printer.set_live(format!(
                        "{t_s:.0}s of {time_s:.0}s: total {} w MB/s, {} r MB/s",
                        mb(figures.total.write_bw_bytes_per_s),
                        mb(figures.total.read_bw_bytes_per_s)
                    ));
                }
            }
            Event::Closing | Event::RunEnded { .. } => self.printer.end_live(),
            _ => {}
        }
    }
}

// ------------------------------------------------------------------ run

pub fn profile(a: ProfileArgs) -> Result<u8, Failure> {
    let c = check(&a)?;
    let json_stdout = a.json.as_deref() == Some("-");
    let mut printer = Printer::new(json_stdout, a.quiet);
    let mut store = writer(StoreChoice {
        db: a.record_store.db.as_deref(),
        no_db: a.record_store.no_db,
    })?;
    let mut csv = match &a.csv {
        Some(path) => Some(CsvOut::create(path)?),
        None => None,
    };
    if !a.quiet {
        match &c.source {
            Source::Live {
                interval,
                time,
                record,
            } => printer.line(&format!(
                "iorig profile: /proc/diskstats every {:?} for {:?}{}; Ctrl-C ends it early",
                interval,
                time,
                record
                    .as_ref()
                    .map(|d| format!(", recording to {}", d.display()))
                    .unwrap_or_default()
            )),
            Source::Recorded { dir, snaps } => printer.line(&format!(
                "iorig profile: recording {} ({} snapshots)",
                dir.display(),
                snaps.len()
            )),
        }
        printer.line(&header_line());
    }
    let stop = crate::signals::install();
    let outcome = {
        let mut term = ProfileTerm {
            printer: &mut printer,
            quiet: a.quiet,
        };
        let mut sinks: Vec<&mut dyn Sink> = vec![&mut term];
        if let Some(c) = csv.as_mut() {
            sinks.push(c);
        }
        iorig_run::profile::run(
            &c.source,
            &c.selection,
            &c.rules,
            &c.labels,
            &mut store,
            &mut Fanout(sinks),
            &stop,
        )?
    };
    let p = &outcome.profile;
    printer.line("");
    print_summary(&printer, p);
    print_verdicts(&printer, &outcome.evaluations);

    if let Some(path) = &a.emit_workload {
        let source = match &c.source {
            Source::Live { .. } => format!(
                "live /proc/diskstats on {}, {}",
                iorig_run::host_name(),
                outcome.started
            ),
            Source::Recorded { dir, .. } => format!("recording {}", dir.display()),
        };
        match workload_toml(p, c.emit_rate, &source) {
            Ok(text) => {
                crate::store::write_output("--emit-workload", path, text.as_bytes())?;
                printer.line(&format!(
                    "workload written to {} (iorig run {} --target PATH)",
                    path.display(),
                    path.display()
                ));
            }
            Err(e) => printer.notice(&format!("--emit-workload: {e}")),
        }
    }
    if let Some(j) = &a.json {
        let doc = json!({
            "schema": SCHEMA,
            "tool": {"name": "iorig", "version": env!("CARGO_PKG_VERSION")},
            "run": {
                "id": store.run().map(|r| r.0),
                "host": iorig_run::host_name(),
                "started": outcome.started,
                "labels": c.labels,
                "status": if outcome.fault.is_some() { "failed" } else { "ok" },
                "ended_by": outcome.ended_by,
                "error": outcome.fault,
            },
            "source": match &c.source {
                Source::Live { record, .. } => json!({"kind": "live", "path": snapshot::PROC_DISKSTATS, "recorded_to": record}),
                Source::Recorded { dir, .. } => json!({"kind": "recorded", "path": dir}),
            },
            "interval_s": outcome.summary.interval_s,
            "duration_s": p.duration_s(),
            "devices": p.devices,
            "summary": {"total": p.total, "devices": p.per_device},
            "intervals": interval_docs(p),
            "verdicts": outcome.evaluations,
        });
        write_json_doc(&printer, j, &doc)?;
    }
    Ok(if outcome.fault.is_some() {
        exit::RUNTIME
    } else {
        exit::OK
    })
}

/// `iorig runs show` of a profile run: the stored summary and verdicts.
pub fn print_stored(
    printer: &Printer,
    summary: Option<&ProfileSummary>,
    analysis: &[&iorig_store::AnalysisRow],
) {
    let Some(summary) = summary else {
        printer.line("profile: no summary stored (it ended before its first interval)");
        return;
    };
    printer.line(&format!(
        "profile over {:.1}s, {} interval(s); total over the covered devices:",
        summary.duration_s, summary.intervals
    ));
    printer.line(&format!(
        "  {:<16} {:>12} {:>12} {:>12}",
        "", "mean", "p95", "peak"
    ));
    for name in FIGURE_NAMES {
        let Some(stat) = summary.total.get(name as &str) else {
            continue;
        };
        if stat.mean.is_none() && stat.peak.is_none() {
            continue;
        }
        let (label, div, d) = shown(name);
        let f = |v: Option<f64>| v.map_or("-".into(), |x| format!("{:.d$}", x / div));
        printer.line(&format!(
            "  {:<16} {:>12} {:>12} {:>12}",
            label,
            f(stat.mean),
            f(stat.p95),
            f(stat.peak)
        ));
    }
    for a in analysis {
        if let Finding::Rules(evals) = &a.finding {
            print_verdicts(printer, evals);
        }
    }
}
