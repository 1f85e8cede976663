//! Profiling a live system: sample `/proc/diskstats` every interval (or read
//! a recording of it), close intervals into figures per device and in
//! total, judge them with rule sets, and store the profile as a run. An
//! interrupt is a normal way to end a live profile: the intervals so far
//! (and a last, shorter one) are kept.

use crate::event::{Event, Sink};
use crate::step::Out;
use crate::store::StoreWriter;
use crate::{now_rfc3339, RunError, Stop};
use iorig_profile::rules::{Evaluation, RuleSet, Stat};
use iorig_profile::snapshot::{self, Snapshot};
use iorig_profile::{
    devices, Figure, IntervalFigures, Profile, ProfileBuilder, ProfileError, Selection,
};
use iorig_result::{FigureStat, Finding, ProfileSummary, RunKind, RunStatus, StepRole};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A last interval cut short by an interrupt is kept when at least this long.
const MIN_PARTIAL: Duration = Duration::from_secs(1);

pub fn profile_error(e: ProfileError) -> RunError {
    match e {
        ProfileError::Io { .. } => RunError::runtime(e.to_string()),
        _ => RunError::usage(e.to_string()),
    }
}

/// Where the snapshots come from.
#[derive(Debug, Clone)]
pub enum Source {
    Live {
        interval: Duration,
        time: Duration,
        /// Keep every snapshot in this directory (new or empty).
        record: Option<PathBuf>,
    },
    /// A recording's snapshots (at least one), read already.
    Recorded { dir: PathBuf, snaps: Vec<Snapshot> },
}

/// Sampling interval and time when none is given.
pub const DEFAULT_INTERVAL: &str = "5s";
pub const DEFAULT_TIME: &str = "10m";

impl Source {
    /// Live sampling every `interval` for `time` (texts as given, defaults
    /// when None), keeping every snapshot in `record` (which must hold none
    /// yet, so two recordings never mix).
    pub fn live(
        interval: Option<&str>,
        time: Option<&str>,
        record: Option<PathBuf>,
    ) -> Result<Source, RunError> {
        let dur = |flag: &str, text: &str| {
            iorig_spec::parse_duration(text).map_err(|e| RunError::usage(format!("{flag}: {e}")))
        };
        let interval_text = interval.unwrap_or(DEFAULT_INTERVAL);
        let time_text = time.unwrap_or(DEFAULT_TIME);
        let interval = dur("--interval", interval_text)?;
        let time = dur("--time", time_text)?;
        if interval < Duration::from_millis(100) {
            return Err(RunError::usage(format!(
                "bad interval '{interval_text}': the kernel counts in milliseconds, so intervals under 100ms are noise; use --interval 1s or more"
            )));
        }
        if time < interval {
            return Err(RunError::usage(format!(
                "--time {time_text} is shorter than one --interval {interval_text}; profile for at least one interval"
            )));
        }
        if let Some(dir) = &record {
            if dir.exists() && !dir.is_dir() {
                return Err(RunError::usage(format!(
                    "--record {}: not a directory; give a directory for the snapshots",
                    dir.display()
                )));
            }
            if snapshot::has_snapshots(dir) {
                return Err(RunError::usage(format!(
                    "--record {}: it already holds snapshots, and two recordings must not mix; choose an empty or new directory",
                    dir.display()
                )));
            }
        }
        Ok(Source::Live {
            interval,
            time,
            record,
        })
    }

    /// The recording in `dir` (written by a live profile's `record`).
    pub fn recorded(dir: &Path) -> Result<Source, RunError> {
        if !dir.is_dir() {
            return Err(RunError::usage(format!(
                "--diskstats {}: no such directory; give the directory `iorig profile --record DIR` wrote",
                dir.display()
            )));
        }
        let snaps = snapshot::read_recording(dir).map_err(profile_error)?;
        Ok(Source::Recorded {
            dir: dir.to_path_buf(),
            snaps,
        })
    }
}

/// Rule sets by name (built-in) or TOML file; both built-ins when none.
pub fn rule_sets(given: &[String]) -> Result<Vec<RuleSet>, RunError> {
    let names: Vec<String> = if given.is_empty() {
        RuleSet::builtin_names()
            .iter()
            .map(|n| n.to_string())
            .collect()
    } else {
        given.to_vec()
    };
    let mut rules = Vec::new();
    for r in &names {
        if let Some(set) = RuleSet::builtin(r) {
            rules.push(set);
            continue;
        }
        let path = Path::new(r);
        if !path.is_file() {
            return Err(RunError::usage(format!(
                "--rules {r}: neither a built-in rule set ({}) nor a file",
                RuleSet::builtin_names().join(", ")
            )));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| RunError::usage(format!("--rules {r}: {e}")))?;
        rules.push(RuleSet::from_toml(r, &text).map_err(profile_error)?);
    }
    Ok(rules)
}

/// Devices as /proc/diskstats names them: a path such as
/// `/dev/mapper/vg-data` or `/dev/disk/by-id/...` is followed to its node
/// (`dm-3`, `sdb`); other names are taken as given.
pub fn selection(given: &[String]) -> Selection {
    let names: Vec<String> = given
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
        .collect();
    Selection::named(&names)
}

/// Why the profile ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum EndedBy {
    Time,
    Recording,
    CtrlC,
    Error,
}

/// A finished profile.
#[derive(Debug)]
pub struct ProfileOutcome {
    pub profile: Profile,
    pub evaluations: Vec<Evaluation>,
    pub summary: ProfileSummary,
    pub started: String,
    pub ended_by: EndedBy,
    /// The fault that ended it early (what was measured is kept).
    pub fault: Option<String>,
}

/// The schema of `iorig profile --json`.
pub const SCHEMA: &str = "iorig.profile/1";

impl ProfileOutcome {
    /// Where the figures came from, for an emitted workload's header.
    pub fn source_text(&self, source: &Source) -> String {
        match source {
            Source::Live { .. } => format!(
                "live /proc/diskstats on {}, {}",
                crate::host_name(),
                self.started
            ),
            Source::Recorded { dir, .. } => format!("recording {}", dir.display()),
        }
    }

    /// The profile document (schema [`SCHEMA`], docs/json-schema.md).
    pub fn document(
        &self,
        source: &Source,
        labels: &std::collections::BTreeMap<String, String>,
        run: Option<i64>,
    ) -> serde_json::Value {
        use serde_json::json;
        let p = &self.profile;
        json!({
            "schema": SCHEMA,
            "tool": {"name": "iorig", "version": env!("CARGO_PKG_VERSION")},
            "run": {
                "id": run,
                "host": crate::host_name(),
                "started": self.started,
                "labels": labels,
                "status": if self.fault.is_some() { "failed" } else { "ok" },
                "ended_by": self.ended_by,
                "error": self.fault,
            },
            "source": match source {
                Source::Live { record, .. } => json!({"kind": "live", "path": iorig_profile::snapshot::PROC_DISKSTATS, "recorded_to": record}),
                Source::Recorded { dir, .. } => json!({"kind": "recorded", "path": dir}),
            },
            "interval_s": self.summary.interval_s,
            "duration_s": p.duration_s(),
            "devices": p.devices,
            "summary": {"total": p.total, "devices": p.per_device},
            "intervals": interval_docs(p),
            "verdicts": self.evaluations,
        })
    }
}

/// `intervals[]` of the profile document: times from the start.
#[derive(Debug, Serialize)]
pub struct IntervalDoc<'a> {
    pub t_s: f64,
    pub duration_s: f64,
    pub total: &'a iorig_profile::Figures,
    pub devices: &'a BTreeMap<String, iorig_profile::Figures>,
}

pub fn interval_docs(p: &Profile) -> Vec<IntervalDoc<'_>> {
    p.intervals
        .iter()
        .map(|i| IntervalDoc {
            t_s: (i.end_ms - p.start_ms) as f64 / 1e3,
            duration_s: i.duration_s(),
            total: &i.total,
            devices: &i.devices,
        })
        .collect()
}

fn epoch_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn stat_of(s: Stat) -> fn(&iorig_profile::FigureStat) -> Option<f64> {
    match s {
        Stat::Mean => |f| f.mean,
        Stat::P95 => |f| f.p95,
        Stat::Peak => |f| f.peak,
    }
}

/// Every rule set judged against the profile's figures.
pub fn evaluate(rules: &[RuleSet], p: &Profile) -> Vec<Evaluation> {
    let lookup = |scope: &str, figure: Figure, s: Stat| p.stat(scope, figure).and_then(stat_of(s));
    rules.iter().map(|r| r.evaluate(&lookup)).collect()
}

/// The stored form of a profile's summary: figure name → statistics.
fn figure_stats(s: &iorig_profile::Summary) -> BTreeMap<String, FigureStat> {
    Figure::ALL
        .iter()
        .map(|&figure| {
            let f = s.get(figure);
            (
                figure.name().to_owned(),
                FigureStat {
                    mean: f.mean,
                    p95: f.p95,
                    peak: f.peak,
                },
            )
        })
        .collect()
}

fn json_of<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
}

/// The first snapshot (and, live, its text for a recording), once every
/// named device is in it (in every snapshot of a recording).
fn first_snapshot(
    source: &Source,
    builder: &ProfileBuilder,
) -> Result<(Option<String>, Snapshot), RunError> {
    let (first_text, first) = match source {
        Source::Recorded { snaps, dir } => (
            None,
            snaps.first().cloned().ok_or_else(|| {
                RunError::usage(format!("--diskstats {}: no snapshots", dir.display()))
            })?,
        ),
        Source::Live { .. } => {
            let (text, devices) = snapshot::read_live().map_err(profile_error)?;
            (Some(text), Snapshot { t_ms: 0, devices })
        }
    };
    let missing = match source {
        Source::Recorded { snaps, .. } => snaps
            .iter()
            .map(|s| builder.missing_named(s))
            .reduce(|x, y| x.into_iter().filter(|n| y.contains(n)).collect())
            .unwrap_or_default(),
        Source::Live { .. } => builder.missing_named(&first),
    };
    if !missing.is_empty() {
        let have: Vec<&str> = first.devices.iter().map(|d| d.name.as_str()).collect();
        return Err(RunError::usage(format!(
            "no device {} in {}; name devices as /proc/diskstats does: {}",
            missing.join(", "),
            match source {
                Source::Live { .. } => "/proc/diskstats".to_owned(),
                Source::Recorded { dir, .. } => format!("the recording {}", dir.display()),
            },
            have.join(", ")
        )));
    }

    Ok((first_text, first))
}

/// Samples until the time is up, the recording ends, an interrupt, or a
/// fault (including a sink's). Bad input (a named device that is not there)
/// is refused before anything is written.
pub fn run(
    source: &Source,
    selection: &Selection,
    rules: &[RuleSet],
    labels: &BTreeMap<String, String>,
    store: &mut StoreWriter,
    sink: &mut dyn Sink,
    stop: &Stop,
) -> Result<ProfileOutcome, RunError> {
    let members = match source {
        Source::Live { .. } => devices::live_members(),
        Source::Recorded { .. } => BTreeMap::new(),
    };
    let mut builder = ProfileBuilder::new(selection.clone(), members);
    let started = now_rfc3339();
    let (first_text, first) = first_snapshot(source, &builder)?;

    // Input is good: from here on, things are written.
    let mut out = Out::new(store, sink);
    out.store.begin_run(RunKind::Profile, None, labels)?;
    out.send(Event::StepBegun {
        index: 0,
        label: "profile",
        role: StepRole::Profile,
        workload: None,
        plan_step: None,
    });
    let mut fault: Option<String> = None;
    let ended_by = match source {
        Source::Recorded { snaps, .. } => {
            let start_ms = snaps.first().map_or(0, |s| s.t_ms);
            let mut ended_by = EndedBy::Recording;
            for s in snaps {
                let closed = builder.push(s.clone()).map_err(profile_error)?.cloned();
                if let Some(i) = closed {
                    let many = i.devices.len() > 1;
                    if let Some(f) = emit_interval(&mut out, &i, start_ms, None, many) {
                        fault = Some(f);
                        ended_by = EndedBy::Error;
                        break;
                    }
                }
            }
            ended_by
        }
        Source::Live {
            interval,
            time,
            record,
        } => {
            if let Some(dir) = record {
                iorig_outfile::create_dir("--record", dir)?;
            }
            let wall0 = epoch_ms();
            let record_snap = |t_ms: u64, text: &str| -> Result<(), RunError> {
                match record {
                    Some(dir) => {
                        snapshot::write_snapshot(dir, wall0 + t_ms, text).map_err(profile_error)
                    }
                    None => Ok(()),
                }
            };
            if let Some(text) = &first_text {
                record_snap(0, text)?;
            }
            builder.push(first).map_err(profile_error)?;
            let t0 = Instant::now();
            let mut k: u32 = 1;
            let mut last = Duration::ZERO;
            loop {
                let due = (*interval * k).min(*time);
                let completed = stop.sleep(due.saturating_sub(t0.elapsed()));
                let at = t0.elapsed();
                if !completed && at.saturating_sub(last) < MIN_PARTIAL {
                    break EndedBy::CtrlC;
                }
                let t_ms = at.as_millis() as u64;
                let sampled = snapshot::read_live()
                    .map_err(profile_error)
                    .and_then(|(text, devices)| {
                        record_snap(t_ms, &text)?;
                        Ok(devices)
                    })
                    .and_then(|devices| {
                        builder
                            .push(Snapshot { t_ms, devices })
                            .map(|i| i.cloned())
                            .map_err(profile_error)
                    });
                let closed = match sampled {
                    Ok(i) => i,
                    Err(e) => {
                        fault = Some(e.to_string());
                        break EndedBy::Error;
                    }
                };
                if let Some(i) = closed {
                    let many = builder
                        .intervals()
                        .last()
                        .is_some_and(|i| i.devices.len() > 1);
                    let time_s = Some(time.as_secs_f64());
                    if let Some(f) = emit_interval(&mut out, &i, 0, time_s, many) {
                        fault = Some(f);
                        break EndedBy::Error;
                    }
                }
                last = at;
                if !completed {
                    break EndedBy::CtrlC;
                }
                if due >= *time {
                    break EndedBy::Time;
                }
                k += 1;
            }
        }
    };
    if let Some(f) = &fault {
        out.notice(&format!(
            "{f}; the profile ends here, keeping the intervals so far"
        ));
    }
    if let Some(f) = out.emit(Event::Closing) {
        out.notice(&f);
        fault.get_or_insert(f);
    }
    let p = builder.finish();
    if p.intervals.is_empty() {
        let (status, err) = match fault {
            Some(f) => (RunStatus::Failed, RunError::Runtime(f)),
            None => (
                RunStatus::Interrupted,
                RunError::Interrupted(
                    "interrupted before the first interval: nothing was measured".to_owned(),
                ),
            ),
        };
        out.send(Event::StepAborted { index: 0 });
        out.send(Event::RunEnded { status });
        return Err(err);
    }
    let evaluations = evaluate(rules, &p);
    let summary = ProfileSummary {
        source: Some(
            match source {
                Source::Live { .. } => "live",
                Source::Recorded { .. } => "recorded",
            }
            .to_owned(),
        ),
        interval_s: match source {
            Source::Live { interval, .. } => Some(interval.as_secs_f64()),
            Source::Recorded { .. } => None,
        },
        duration_s: p.duration_s(),
        intervals: p.intervals.len() as u64,
        total: figure_stats(&p.total),
        devices: p
            .per_device
            .iter()
            .map(|(d, s)| (d.clone(), figure_stats(s)))
            .collect(),
    };
    out.send(Event::ProfileEnded {
        index: 0,
        summary: &summary,
    });
    for f in [
        Finding::ProfileDevices(json_of(&p.devices)),
        Finding::ProfileIntervals(json_of(&interval_docs(&p))),
        Finding::Rules(evaluations.clone()),
    ] {
        out.send(Event::Finding {
            index: Some(0),
            finding: &f,
        });
    }
    out.send(Event::RunEnded {
        status: if fault.is_some() {
            RunStatus::Failed
        } else {
            RunStatus::Ok
        },
    });
    Ok(ProfileOutcome {
        profile: p,
        evaluations,
        summary,
        started,
        ended_by,
        fault,
    })
}

/// Sends a closed interval; returns a sink's fault.
fn emit_interval(
    out: &mut Out<'_>,
    i: &IntervalFigures,
    start_ms: u64,
    time_s: Option<f64>,
    many: bool,
) -> Option<String> {
    out.emit(Event::ProfileInterval {
        figures: i,
        t_s: (i.end_ms - start_ms) as f64 / 1e3,
        time_s,
        many,
    })
}
