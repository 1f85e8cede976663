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
    devices, IntervalFigures, Profile, ProfileBuilder, ProfileError, Selection, FIGURE_NAMES,
};
use iorig_result::{FigureStat, Finding, ProfileSummary, RunKind, RunStatus, StepRole};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;
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
    let lookup = |scope: &str, figure: &str, s: Stat| p.stat(scope, figure).and_then(stat_of(s));
    rules.iter().map(|r| r.evaluate(&lookup)).collect()
}

/// The stored form of a profile's summary: figure name → statistics.
fn figure_stats(s: &iorig_profile::Summary) -> BTreeMap<String, FigureStat> {
    FIGURE_NAMES
        .iter()
        .filter_map(|name| {
            let f = s.get(name)?;
            Some((
                (*name).to_owned(),
                FigureStat {
                    mean: f.mean,
                    p95: f.p95,
                    peak: f.peak,
                },
            ))
        })
        .collect()
}

fn json_of<T: Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).unwrap_or(serde_json::Value::Null)
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

    // Input is good: from here on, things are written.
    let mut out = Out { store, sink };
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
