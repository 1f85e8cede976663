//! Recording into the result store: where the store is, and a [`Recorder`] that
//! writes a run, its facts, steps, every interval as it completes, the merged
//! histograms and the analysis. Without a store (`--no-db`) every call is a
//! no-op, so callers never branch on it.

use crate::output::Printer;
use crate::Failure;
use iorig_engine::run::{IntervalSample, RunOutcome, TargetInfo};
use iorig_result::{Finding, ProfileSummary, StepRole, StepSummary, Summary, WorkloadRecord};
use iorig_stats::sampler::system::{SystemFacts, TargetFacts};
use iorig_store::{
    HistKind, IntervalRow, NewRun, NewStep, Op, RunId, RunKind, RunStatus, StepId, StepStatus,
    Store,
};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The store path: `--db`, else `IORIG_DB`, else `./iorig.db`.
pub fn db_path(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    match std::env::var_os("IORIG_DB") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from("iorig.db"),
    }
}

/// An output file (`--json`, `--csv`, `--out`, ...) must be a regular file
/// or a new path in an existing directory: bad input, exit 2, before
/// anything is written.
pub fn check_output(flag: &str, path: &Path) -> Result<(), Failure> {
    iorig_outfile::check_file(flag, path)
        .map(drop)
        .map_err(|e| Failure::usage(e.to_string()))
}

/// An output directory (`report --out DIR`, `--record DIR`) must be a
/// directory or a new path in an existing one.
pub fn check_output_dir(flag: &str, path: &Path) -> Result<(), Failure> {
    iorig_outfile::check_dir(flag, path).map_err(|e| Failure::usage(e.to_string()))
}

/// Writes a whole output file atomically (temp file beside it, renamed).
pub fn write_output(flag: &str, path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    iorig_outfile::write_atomic(flag, path, bytes).map_err(output_failure)
}

/// A refused path is bad input; a failed write is a runtime failure.
pub fn output_failure(e: iorig_outfile::OutputError) -> Failure {
    if e.is_usage() {
        Failure::usage(e.to_string())
    } else {
        Failure::runtime(e.to_string())
    }
}

fn store_failure(path: &Path, e: iorig_store::StoreError) -> Failure {
    use iorig_store::StoreError as E;
    match e {
        // These name the path and what to do already.
        E::Path(_) | E::ForeignTables { .. } | E::NotIorigDb { .. } | E::NotAStore { .. } => {
            Failure::usage(e.to_string())
        }
        e => Failure::usage(format!(
            "result store {}: {e}; choose another --db or use --no-db",
            path.display()
        )),
    }
}

/// Checks the store path as a run would use it, writing nothing (dry runs).
pub fn check_store(path: &Path) -> Result<(), Failure> {
    Store::check(path).map_err(|e| store_failure(path, e))
}

/// Opens (or creates) the store at `path` for writing.
pub fn open_store(path: &Path) -> Result<Store, Failure> {
    Store::open(path).map_err(|e| store_failure(path, e))
}

fn require_store(path: &Path) -> Result<(), Failure> {
    if std::fs::symlink_metadata(path).is_err() {
        return Err(Failure::usage(format!(
            "no result store at {}; run something first, or give --db PATH (or IORIG_DB)",
            path.display()
        )));
    }
    Ok(())
}

/// Opens an existing store to change it (`runs label/delete`, `plan
/// resume`); a missing file is bad input and is not created.
pub fn open_existing(path: &Path) -> Result<Store, Failure> {
    require_store(path)?;
    open_store(path)
}

/// Opens an existing store read-only (`runs list/show`, `report`, `export`,
/// `compare`): nothing is created or written, whatever the path holds (the
/// store refuses a missing file itself).
pub fn open_read_only(path: &Path) -> Result<Store, Failure> {
    Store::open_read_only(path).map_err(|e| store_failure(path, e))
}

pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

pub fn command_line() -> String {
    std::env::args().collect::<Vec<_>>().join(" ")
}

/// Writes one run into the store (or nothing, without a store). A store
/// error during the run is reported once and recording stops; the I/O goes on.
pub struct Recorder {
    store: Option<Store>,
    /// A store to create when the run begins (not before: bad input must
    /// leave no database behind).
    deferred: Option<PathBuf>,
    pub run: Option<RunId>,
    failed: bool,
}

impl Recorder {
    pub fn none() -> Self {
        Recorder {
            store: None,
            deferred: None,
            run: None,
            failed: false,
        }
    }

    /// Records into the store at `path`. An existing store is opened now (so
    /// a bad one is reported before any I/O); a new one is created only when
    /// the run begins.
    pub fn at(path: &Path) -> Result<Self, Failure> {
        check_output("result store", path)?;
        if path.exists() {
            return Ok(Recorder::new(open_store(path)?));
        }
        Ok(Recorder {
            store: None,
            deferred: Some(path.to_path_buf()),
            run: None,
            failed: false,
        })
    }

    pub fn new(store: Store) -> Self {
        Recorder {
            store: Some(store),
            deferred: None,
            run: None,
            failed: false,
        }
    }

    /// Continues an existing run (plan resume).
    pub fn resume(store: Store, run: RunId) -> Self {
        Recorder {
            store: Some(store),
            deferred: None,
            run: Some(run),
            failed: false,
        }
    }

    fn write<T>(
        &mut self,
        printer: &Printer,
        what: &str,
        f: impl FnOnce(&Store) -> Result<T, iorig_store::StoreError>,
    ) -> Option<T> {
        if self.failed {
            return None;
        }
        let store = self.store.as_ref()?;
        match f(store) {
            Ok(v) => Some(v),
            Err(e) => {
                printer.notice(&format!(
                    "result store: {what} failed ({e}); the run goes on without recording"
                ));
                self.failed = true;
                None
            }
        }
    }

    /// Creates the run row with the host's facts. Errors here are fatal: a
    /// store that cannot take a run would lose everything that follows.
    pub fn begin_run(
        &mut self,
        kind: RunKind,
        plan_json: Option<String>,
        labels: &BTreeMap<String, String>,
    ) -> Result<(), Failure> {
        if let Some(path) = self.deferred.take() {
            self.store = Some(open_store(&path)?);
        }
        let Some(store) = &self.store else {
            return Ok(());
        };
        let run = store
            .create_run(&NewRun {
                kind,
                plan_json,
                host: host_name(),
                tool_version: env!("CARGO_PKG_VERSION").to_string(),
                command_line: command_line(),
                labels: labels.clone(),
                started: now_rfc3339(),
            })
            .map_err(|e| Failure::runtime(format!("result store: creating the run: {e}")))?;
        store
            .record_system_facts(run, &SystemFacts::gather())
            .map_err(|e| Failure::runtime(format!("result store: {e}")))?;
        self.run = Some(run);
        Ok(())
    }

    /// Records each target's facts (once per path per run).
    pub fn targets(&mut self, printer: &Printer, targets: &[TargetInfo], seen: &mut Vec<String>) {
        let Some(run) = self.run else { return };
        for t in targets {
            if seen.contains(&t.path) {
                continue;
            }
            seen.push(t.path.clone());
            let facts = TargetFacts::for_path(Path::new(&t.path));
            self.write(printer, "recording target facts", |s| {
                s.record_target_facts(run, &t.path, Some(t.kind), Some(t.size_bytes), &facts)
            });
        }
    }

    pub fn begin_step(
        &mut self,
        printer: &Printer,
        index: usize,
        name: &str,
        role: StepRole,
        params: Option<&WorkloadRecord>,
    ) -> Option<StepId> {
        let run = self.run?;
        let step = self.write(printer, "recording the step", |s| {
            let id = s.upsert_step(
                run,
                &NewStep {
                    index: index as i64,
                    name,
                    role,
                    params,
                },
            )?;
            // A resumed step starts again from nothing.
            s.reset_step(id)?;
            s.set_step_status(id, StepStatus::Running, Some(&now_rfc3339()), None)?;
            Ok(id)
        })?;
        Some(step)
    }

    pub fn interval(&mut self, printer: &Printer, step: Option<StepId>, sample: &IntervalSample) {
        let Some(step) = step else { return };
        let rows = IntervalRow::rows_of(
            sample.index as u64,
            sample.t_s,
            sample.duration_s,
            sample.warmup,
            &sample.stats,
            sample.cpu,
            sample.device,
        );
        self.write(printer, "recording an interval", |s| {
            s.add_intervals(step, &rows)
        });
    }

    /// The step's end: merged histograms, summary and status.
    pub fn finish_step(
        &mut self,
        printer: &Printer,
        step: Option<StepId>,
        status: StepStatus,
        outcome: &RunOutcome,
        summary: &Summary,
    ) {
        let summary = StepSummary::Io(Box::new(summary.clone()));
        let Some(step) = step else { return };
        let total = outcome.summary.total();
        self.write(printer, "recording the step's histograms", |s| {
            for (op, stats) in [
                (Op::Read, &outcome.summary.read),
                (Op::Write, &outcome.summary.write),
                (Op::Total, &total),
            ] {
                s.put_histogram(step, op, HistKind::Lat, &stats.lat)?;
                if !stats.service_lat.is_empty() {
                    s.put_histogram(step, op, HistKind::ServiceLat, &stats.service_lat)?;
                }
            }
            s.finish_step(step, status, Some(&summary), &now_rfc3339())
        });
    }

    /// Stores a step as pending, so a resumed plan knows every step.
    pub fn pending_step(&mut self, printer: &Printer, index: usize, name: &str, role: StepRole) {
        let Some(run) = self.run else { return };
        self.write(printer, "recording the plan's steps", |s| {
            s.upsert_step(
                run,
                &NewStep {
                    index: index as i64,
                    name,
                    role,
                    params: None,
                },
            )
            .map(|_| ())
        });
    }

    /// A step that ended before any I/O (its setup failed).
    pub fn finish_step_without_output(
        &mut self,
        printer: &Printer,
        step: Option<StepId>,
        status: StepStatus,
    ) {
        let Some(step) = step else { return };
        self.write(printer, "recording the step's end", |s| {
            s.finish_step(step, status, None, &now_rfc3339())
        });
    }

    /// The end of a step that did no I/O of its own (a profile): its summary.
    pub fn finish_profile_step(
        &mut self,
        printer: &Printer,
        step: StepId,
        summary: &ProfileSummary,
    ) {
        let summary = StepSummary::Profile(summary.clone());
        self.write(printer, "recording the step's end", |s| {
            s.finish_step(step, StepStatus::Ok, Some(&summary), &now_rfc3339())
        });
    }

    /// A step the plan skipped, with the finding that says why.
    pub fn skip_step(&mut self, printer: &Printer, index: usize, name: &str, why: &Finding) {
        let Some(run) = self.run else { return };
        self.write(printer, "recording a skipped step", |s| {
            let id = s.upsert_step(
                run,
                &NewStep {
                    index: index as i64,
                    name,
                    role: StepRole::Skipped,
                    params: None,
                },
            )?;
            s.set_step_status(id, StepStatus::Skipped, None, Some(&now_rfc3339()))?;
            s.put_analysis(run, Some(id), why).map(|_| ())
        });
    }

    pub fn analysis(&mut self, printer: &Printer, step: Option<StepId>, finding: &Finding) {
        let Some(run) = self.run else { return };
        self.write(printer, "recording analysis", |s| {
            s.put_analysis(run, step, finding).map(|_| ())
        });
    }

    pub fn finish_run(&mut self, printer: &Printer, status: RunStatus) {
        let Some(run) = self.run else { return };
        // Even after an earlier store error, try to close the run properly.
        self.failed = false;
        self.write(printer, "closing the run", |s| {
            s.finish_run(run, status, &now_rfc3339())
        });
    }
}
