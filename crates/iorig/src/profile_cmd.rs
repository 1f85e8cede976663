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
use crate::record::{check_output, check_output_dir, db_path, host_name, now_rfc3339, Recorder};
use crate::signals::Signals;
use crate::{exit, Failure};
use iorig_profile::emit::{workload_toml, EmitRate};
use iorig_profile::rules::{Evaluation, RuleSet, Stat};
use iorig_profile::snapshot::{self, Snapshot};
use iorig_profile::{
    devices, Figures, IntervalFigures, Profile, ProfileBuilder, ProfileError, Selection,
    FIGURE_NAMES,
};
use iorig_result::{Finding, ProfileSummary, StepRole};
use iorig_spec::parse_duration;
use iorig_store::{RunKind, RunStatus, StepStatus};
use serde::Serialize;
use serde_json::json;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const SCHEMA: &str = "iorig.profile/1";
const DEFAULT_INTERVAL: &str = "5s";
const DEFAULT_TIME: &str = "10m";
/// A last interval cut short by Ctrl-C is kept when at least this long.
const MIN_PARTIAL: Duration = Duration::from_secs(1);

fn profile_err(e: ProfileError) -> Failure {
    match e {
        ProfileError::Io { .. } => Failure::runtime(e.to_string()),
        _ => Failure::usage(e.to_string()),
    }
}

/// Where the snapshots come from.
enum Source {
    Live {
        interval: Duration,
        time: Duration,
        record: Option<PathBuf>,
    },
    Recorded(PathBuf),
}

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
            Source::Recorded(dir.clone())
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
        rules.push(RuleSet::from_toml(r, &text).map_err(profile_err)?);
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
        labels: crate::plan_cmd::parse_labels(&a.record_store.labels)?,
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

fn epoch_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
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

fn print_interval(printer: &Printer, i: &IntervalFigures, start_ms: u64, many: bool) {
    let t = format!("{:.1}", (i.end_ms - start_ms) as f64 / 1e3);
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

/// `intervals[]` of the JSON: times relative to the start.
#[derive(Serialize)]
struct IntervalJson<'a> {
    t_s: f64,
    duration_s: f64,
    total: &'a Figures,
    devices: &'a BTreeMap<String, Figures>,
}

fn stat_of(s: Stat) -> fn(&iorig_profile::FigureStat) -> Option<f64> {
    match s {
        Stat::Mean => |f| f.mean,
        Stat::P95 => |f| f.p95,
        Stat::Peak => |f| f.peak,
    }
}

fn evaluate(rules: &[RuleSet], p: &Profile) -> Vec<Evaluation> {
    let lookup = |scope: &str, figure: &str, s: Stat| p.stat(scope, figure).and_then(stat_of(s));
    rules.iter().map(|r| r.evaluate(&lookup)).collect()
}

/// The `--csv` file: rows go to a temp file beside it, renamed into place
/// when the profile ends (also after a fault).
struct CsvOut {
    file: std::io::BufWriter<iorig_outfile::AtomicFile>,
    path: PathBuf,
}

impl CsvOut {
    fn create(path: &Path) -> Result<CsvOut, Failure> {
        let f = iorig_outfile::AtomicFile::create("--csv", path)
            .map_err(crate::record::output_failure)?;
        let mut out = CsvOut {
            file: std::io::BufWriter::new(f),
            path: path.to_path_buf(),
        };
        let header = format!("t_s,duration_s,device,{}", FIGURE_NAMES.join(","));
        out.write_line(&header)?;
        Ok(out)
    }

    /// Puts the file in place.
    fn commit(self) -> Result<(), Failure> {
        let path = self.path.display().to_string();
        let f = self
            .file
            .into_inner()
            .map_err(|e| Failure::runtime(format!("--csv {path}: {}", e.error())))?;
        f.commit().map_err(crate::record::output_failure)
    }

    fn write_line(&mut self, line: &str) -> Result<(), Failure> {
        writeln!(self.file, "{line}")
            .and_then(|_| self.file.flush())
            .map_err(|e| Failure::runtime(format!("--csv {}: {e}", self.path.display())))
    }

    fn interval(&mut self, i: &IntervalFigures, start_ms: u64) -> Result<(), Failure> {
        let t = (i.end_ms - start_ms) as f64 / 1e3;
        let rows = std::iter::once(("total", &i.total))
            .chain(i.devices.iter().map(|(n, f)| (n.as_str(), f)));
        for (device, f) in rows {
            let cells: Vec<String> = FIGURE_NAMES
                .iter()
                .map(|n| f.get(n).map(|v| format!("{v}")).unwrap_or_default())
                .collect();
            self.write_line(&format!(
                "{t},{},{device},{}",
                i.duration_s(),
                cells.join(",")
            ))?;
        }
        Ok(())
    }
}

// ------------------------------------------------------------------ run

pub fn profile(a: ProfileArgs) -> Result<u8, Failure> {
    let c = check(&a)?;
    let json_stdout = a.json.as_deref() == Some("-");
    let mut printer = Printer::new(json_stdout, a.quiet);
    let mut recorder = if a.record_store.no_db {
        Recorder::none()
    } else {
        Recorder::at(&db_path(a.record_store.db.as_deref()))?
    };

    // The first snapshot: a named device that is not there is bad input.
    let members = match &c.source {
        Source::Live { .. } => devices::live_members(),
        Source::Recorded(_) => BTreeMap::new(),
    };
    let mut builder = ProfileBuilder::new(c.selection.clone(), members);
    let recording = match &c.source {
        Source::Recorded(dir) => Some(snapshot::read_recording(dir).map_err(profile_err)?),
        Source::Live { .. } => None,
    };
    let started_at = now_rfc3339();
    let mut ended_by = "time";
    // A fault while sampling (diskstats unreadable, a file that cannot be
    // written) ends the profile; what was measured until then is kept.
    let mut fault: Option<String> = None;
    let mut csv = None;
    let (mut first_text, first) = match &recording {
        Some(snaps) => (None, snaps[0].clone()),
        None => {
            let (text, devices) = snapshot::read_live().map_err(profile_err)?;
            (Some(text), Snapshot { t_ms: 0, devices })
        }
    };
    let missing = match &recording {
        Some(snaps) => snaps
            .iter()
            .map(|s| builder.missing_named(s))
            .reduce(|x, y| x.into_iter().filter(|n| y.contains(n)).collect())
            .unwrap_or_default(),
        None => builder.missing_named(&first),
    };
    if !missing.is_empty() {
        let have: Vec<&str> = first.devices.iter().map(|d| d.name.as_str()).collect();
        return Err(Failure::usage(format!(
            "no device {} in {}; name devices as /proc/diskstats does: {}",
            missing.join(", "),
            match &c.source {
                Source::Live { .. } => "/proc/diskstats".to_owned(),
                Source::Recorded(d) => format!("the recording {}", d.display()),
            },
            have.join(", ")
        )));
    }

    // Input is good: from here on, things are written.
    if let Some(path) = &a.csv {
        csv = Some(CsvOut::create(path)?);
    }
    recorder.begin_run(RunKind::Profile, None, &c.labels)?;
    let (source_name, interval_s) = match &c.source {
        Source::Live { interval, .. } => ("live", Some(interval.as_secs_f64())),
        Source::Recorded(_) => ("recorded", None),
    };
    let step = recorder.begin_step(&printer, 0, "profile", StepRole::Profile, None);

    let many = |b: &ProfileBuilder| b.intervals().last().is_some_and(|i| i.devices.len() > 1);
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
            Source::Recorded(dir) => printer.line(&format!(
                "iorig profile: recording {} ({} snapshots)",
                dir.display(),
                recording.as_ref().map_or(0, Vec::len)
            )),
        }
        printer.line(&header_line());
    }
    let start_ms;
    match (&c.source, recording) {
        (Source::Recorded(_), Some(snaps)) => {
            start_ms = snaps[0].t_ms;
            ended_by = "recording";
            for s in snaps {
                if let Some(i) = builder.push(s).map_err(profile_err)? {
                    let i = i.clone();
                    if let Some(out) = csv.as_mut() {
                        out.interval(&i, start_ms)?;
                    }
                    if !a.quiet {
                        print_interval(&printer, &i, start_ms, i.devices.len() > 1);
                    }
                }
            }
        }
        (
            Source::Live {
                interval,
                time,
                record,
            },
            _,
        ) => {
            let signals = Signals::install();
            let t0 = Instant::now();
            let wall0 = epoch_ms();
            start_ms = 0;
            if let Some(dir) = record {
                iorig_outfile::create_dir("--record", dir)
                    .map_err(crate::record::output_failure)?;
            }
            let record_snap = |t_ms: u64, text: &str| -> Result<(), Failure> {
                match record {
                    Some(dir) => {
                        snapshot::write_snapshot(dir, wall0 + t_ms, text).map_err(profile_err)
                    }
                    None => Ok(()),
                }
            };
            if let Some(text) = first_text.take() {
                record_snap(0, &text)?;
            }
            builder.push(first).map_err(profile_err)?;
            printer.start_live();
            let mut k: u32 = 1;
            let mut last = Duration::ZERO;
            loop {
                let due = (*interval * k).min(*time);
                let now = t0.elapsed();
                let completed = signals.sleep(due.saturating_sub(now));
                let at = t0.elapsed();
                if !completed && at.saturating_sub(last) < MIN_PARTIAL {
                    ended_by = "ctrl-c";
                    break;
                }
                let t_ms = at.as_millis() as u64;
                let sampled = snapshot::read_live()
                    .map_err(profile_err)
                    .and_then(|(text, devices)| {
                        record_snap(t_ms, &text)?;
                        Ok(devices)
                    })
                    .and_then(|devices| {
                        builder
                            .push(Snapshot { t_ms, devices })
                            .map(|i| i.cloned())
                            .map_err(profile_err)
                    })
                    .and_then(|i| {
                        if let (Some(i), Some(out)) = (&i, csv.as_mut()) {
                            out.interval(i, start_ms)?;
                        }
                        Ok(i)
                    });
                let closed = match sampled {
                    Ok(i) => i,
                    Err(f) => {
                        printer.notice(&format!(
                            "{}; the profile ends here, keeping the intervals so far",
                            f.message
                        ));
                        fault = Some(f.message);
                        ended_by = "error";
                        break;
                    }
                };
                if let Some(i) = closed {
                    if !a.quiet {
                        print_interval(&printer, &i, start_ms, many(&builder));
                    }
                    printer.set_live(format!(
                        "{:.0}s of {:.0}s: total {} w MB/s, {} r MB/s",
                        at.as_secs_f64(),
                        time.as_secs_f64(),
                        mb(i.total.write_bw_bytes_per_s),
                        mb(i.total.read_bw_bytes_per_s)
                    ));
                }
                last = at;
                if !completed {
                    ended_by = "ctrl-c";
                    break;
                }
                if due >= *time {
                    break;
                }
                k += 1;
            }
            printer.end_live();
        }
        (Source::Recorded(_), None) => unreachable!("a recorded source is read above"),
    }

    printer.end_live();
    if let Some(out) = csv.take() {
        if let Err(f) = out.commit() {
            fault.get_or_insert(f.message);
        }
    }
    let p = builder.finish();
    if p.intervals.is_empty() {
        let (status, failure) = match fault {
            Some(f) => (RunStatus::Failed, Failure::runtime(f)),
            None => (
                RunStatus::Interrupted,
                Failure {
                    code: exit::INTERRUPTED,
                    message: "interrupted before the first interval: nothing was measured"
                        .to_owned(),
                },
            ),
        };
        recorder.finish_step_without_output(&printer, step, StepStatus::Failed);
        recorder.finish_run(&printer, status);
        return Err(failure);
    }
    let evals = evaluate(&c.rules, &p);
    printer.line("");
    print_summary(&printer, &p);
    print_verdicts(&printer, &evals);

    let summary = ProfileSummary {
        source: Some(source_name.to_owned()),
        interval_s,
        duration_s: p.duration_s(),
        intervals: p.intervals.len() as u64,
        total: figure_stats(&p.total),
        devices: p
            .per_device
            .iter()
            .map(|(d, s)| (d.clone(), figure_stats(s)))
            .collect(),
    };
    if let Some(step) = step {
        recorder.finish_profile_step(&printer, step, &summary);
        let intervals: Vec<IntervalJson> = interval_json(&p);
        for f in [
            Finding::ProfileDevices(json!(p.devices)),
            Finding::ProfileIntervals(json!(intervals)),
            Finding::Rules(evals.clone()),
        ] {
            recorder.analysis(&printer, Some(step), &f);
        }
    }
    recorder.finish_run(
        &printer,
        if fault.is_some() {
            RunStatus::Failed
        } else {
            RunStatus::Ok
        },
    );

    if let Some(path) = &a.emit_workload {
        let source = match &c.source {
            Source::Live { .. } => format!("live /proc/diskstats on {}, {started_at}", host_name()),
            Source::Recorded(d) => format!("recording {}", d.display()),
        };
        match workload_toml(&p, c.emit_rate, &source) {
            Ok(text) => {
                crate::record::write_output("--emit-workload", path, text.as_bytes())?;
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
                "id": recorder.run.map(|r| r.0),
                "host": host_name(),
                "started": started_at,
                "labels": c.labels,
                "status": if fault.is_some() { "failed" } else { "ok" },
                "ended_by": ended_by,
                "error": fault,
            },
            "source": match &c.source {
                Source::Live { record, .. } => json!({"kind": "live", "path": snapshot::PROC_DISKSTATS, "recorded_to": record}),
                Source::Recorded(d) => json!({"kind": "recorded", "path": d}),
            },
            "interval_s": interval_s,
            "duration_s": p.duration_s(),
            "devices": p.devices,
            "summary": {"total": p.total, "devices": p.per_device},
            "intervals": interval_json(&p),
            "verdicts": evals,
        });
        write_json_doc(&printer, j, &doc)?;
    }
    Ok(if fault.is_some() {
        exit::RUNTIME
    } else {
        exit::OK
    })
}

fn interval_json(p: &Profile) -> Vec<IntervalJson<'_>> {
    p.intervals
        .iter()
        .map(|i| IntervalJson {
            t_s: (i.end_ms - p.start_ms) as f64 / 1e3,
            duration_s: i.duration_s(),
            total: &i.total,
            devices: &i.devices,
        })
        .collect()
}

/// `iorig runs show` of a profile run: the stored summary and verdicts.
/// The stored form of a profile's summary: figure name → statistics.
fn figure_stats(s: &iorig_profile::Summary) -> BTreeMap<String, iorig_result::FigureStat> {
    FIGURE_NAMES
        .iter()
        .filter_map(|name| {
            let f = s.get(name)?;
            Some((
                (*name).to_owned(),
                iorig_result::FigureStat {
                    mean: f.mean,
                    p95: f.p95,
                    peak: f.peak,
                },
            ))
        })
        .collect()
}

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
