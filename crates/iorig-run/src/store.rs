//! Writing a run into the result store as it happens: [`StoreWriter`] takes
//! the same events as any sink and turns them into the run's rows (facts,
//! steps, every interval with its histogram, merged histograms, summaries,
//! findings). Without a store (`--no-db`) it takes them and writes nothing.
//! A store error during the run is reported once (through `take_fault`) and
//! recording stops; the I/O goes on.

use crate::event::{Event, Sink};
use crate::{now_rfc3339, RunError};
use iorig_result::{HistKind, Op, RunKind, StepRole, StepStatus, StepSummary};
use iorig_spec::Workload;
use iorig_stats::sampler::system::{SystemFacts, TargetFacts};
use iorig_store::{IntervalRow, Location, NewRun, NewStep, RunId, StepId, Store, StoreError};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// A store error as the user sees it: bad input (choose another store).
pub fn store_error(at: &Location, e: StoreError) -> RunError {
    match e {
        // These name the store and what to do already.
        StoreError::Path(_)
        | StoreError::ForeignTables { .. }
        | StoreError::NotIorigDb { .. }
        | StoreError::NotAStore { .. }
        | StoreError::Incomplete { .. }
        | StoreError::Connect { .. } => RunError::usage(e.to_string()),
        e => RunError::usage(format!(
            "result store {at}: {e}; choose another --db or use --no-db"
        )),
    }
}

/// Opens (or creates) the store at `at` for writing.
pub fn open_store(at: &Location) -> Result<Store, RunError> {
    Store::open_at(at).map_err(|e| store_error(at, e))
}

/// The read IOPS stored run `run` measured at best (`--backend-run`), and
/// where.
pub fn backend_of_run(store: &Store, run: i64) -> Result<(f64, String), RunError> {
    store
        .best_read_iops(iorig_store::RunId(run))
        .map_err(|e| RunError::runtime(format!("result store: {e}")))?
        .ok_or_else(|| RunError::usage(format!(
            "--backend-run {run}: no step of that run measured reads (iorig runs list shows the runs); run random reads on the backing device, or give --backend-iops"
        )))
}

/// Refuses a store file that is not there (bad input: a command that only
/// reads or changes runs never creates one).
pub fn must_exist(at: &Location) -> Result<(), RunError> {
    match at {
        Location::File(path) if std::fs::symlink_metadata(path).is_err() => {
            Err(RunError::usage(format!(
                "no result store at {}; run something first, or give --db PATH|URL (or IORIG_DB)",
                path.display()
            )))
        }
        _ => Ok(()),
    }
}

/// Who started the run, as the store records it.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    pub command_line: String,
    pub tool_version: String,
}

/// Writes one run into the store, or nothing.
pub struct StoreWriter {
    store: Option<Store>,
    /// A store to create when the run begins (not before: bad input must
    /// leave no database behind).
    deferred: Option<Location>,
    run: Option<RunId>,
    steps: HashMap<usize, StepId>,
    /// Target paths whose facts are recorded.
    seen_targets: Vec<String>,
    origin: Origin,
    failed: bool,
    fault: Option<String>,
}

impl StoreWriter {
    /// Records nothing.
    pub fn none() -> Self {
        StoreWriter {
            store: None,
            deferred: None,
            run: None,
            steps: HashMap::new(),
            seen_targets: Vec::new(),
            origin: Origin::default(),
            failed: false,
            fault: None,
        }
    }

    /// Records into the store at `at`. An existing store is opened now (so
    /// a bad one is reported before any I/O); a new file is created only
    /// when the run begins. A database is always connected to now: one that
    /// cannot be reached is bad input before any I/O.
    pub fn at(at: &Location, origin: Origin) -> Result<Self, RunError> {
        let mut w = StoreWriter::none();
        w.origin = origin;
        match at {
            Location::File(path) => {
                // Proven writable now, before any I/O: a store that cannot
                // be written must not be found after the target was filled.
                iorig_outfile::check_writable("result store", path)?;
                // SQLite keeps its journal beside the file a link points to.
                let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink());
                if let (true, Ok(real)) = (is_link, std::fs::canonicalize(path)) {
                    iorig_outfile::check_writable("result store", &real)?;
                }
                if path.exists() {
                    w.store = Some(open_store(at)?);
                } else {
                    w.deferred = Some(at.clone());
                }
            }
            _ => w.store = Some(open_store(at)?),
        }
        Ok(w)
    }

    /// Records into an open store.
    pub fn new(store: Store, origin: Origin) -> Self {
        let mut w = StoreWriter::none();
        w.store = Some(store);
        w.origin = origin;
        w
    }

    /// Continues run `run` of `store` (plan resume): reopens it.
    pub fn resume(store: Store, run: RunId) -> Result<Self, RunError> {
        store
            .reopen_run(run)
            .map_err(|e| RunError::runtime(format!("result store: {e}")))?;
        let mut w = StoreWriter::new(store, Origin::default());
        w.run = Some(run);
        Ok(w)
    }

    /// The run being written, once begun.
    pub fn run(&self) -> Option<RunId> {
        self.run
    }

    /// Creates the run row with the host's facts. Errors here are fatal: a
    /// store that cannot take a run would lose everything that follows.
    pub fn begin_run(
        &mut self,
        kind: RunKind,
        plan_json: Option<String>,
        labels: &BTreeMap<String, String>,
    ) -> Result<Option<RunId>, RunError> {
        if let Some(at) = self.deferred.take() {
            self.store = Some(open_store(&at)?);
        }
        let Some(store) = &self.store else {
            return Ok(None);
        };
        let run = store
            .create_run(&NewRun {
                kind,
                plan_json,
                host: crate::host_name(),
                tool_version: self.origin.tool_version.clone(),
                command_line: self.origin.command_line.clone(),
                labels: labels.clone(),
                started: now_rfc3339(),
            })
            .map_err(|e| RunError::runtime(format!("result store: creating the run: {e}")))?;
        store
            .record_system_facts(run, &SystemFacts::gather())
            .map_err(|e| RunError::runtime(format!("result store: {e}")))?;
        self.run = Some(run);
        Ok(Some(run))
    }

    fn write<T>(
        &mut self,
        what: &str,
        f: impl FnOnce(&Store) -> Result<T, StoreError>,
    ) -> Option<T> {
        if self.failed {
            return None;
        }
        let store = self.store.as_ref()?;
        match f(store) {
            Ok(v) => Some(v),
            Err(e) => {
                self.fault = Some(format!(
                    "result store: {what} failed ({e}); the run goes on without recording"
                ));
                self.failed = true;
                None
            }
        }
    }

    fn upsert(&mut self, index: usize, name: &str, role: StepRole) -> Option<StepId> {
        let run = self.run?;
        self.write("recording the plan's steps", |s| {
            s.upsert_step(
                run,
                &NewStep {
                    index: index as i64,
                    name,
                    role,
                    params: None,
                },
            )
        })
    }
}

/// The stored rows of an interval: read, write (trim, fs kinds) and total.
fn rows_of(sample: &iorig_result::live::IntervalSample) -> Vec<IntervalRow> {
    IntervalRow::rows_of(
        sample.index as u64,
        sample.t_s,
        sample.duration_s,
        sample.warmup,
        &sample.stats,
        sample.cpu,
        sample.device,
    )
}

impl StoreWriter {
    /// A step begins: recorded (a resumed one starts again from nothing)
    /// and running.
    fn step_begun(
        &mut self,
        run: RunId,
        index: usize,
        label: &str,
        role: StepRole,
        workload: Option<&Workload>,
    ) {
        let params = workload.map(Workload::record);
        let id = self.write("recording the step", |s| {
            let new = NewStep {
                index: index as i64,
                name: label,
                role,
                params: params.as_ref(),
            };
            let id = s.upsert_step(run, &new)?;
            s.reset_step(id)?;
            s.set_step_status(id, StepStatus::Running, Some(&now_rfc3339()), None)?;
            Ok(id)
        });
        match id {
            Some(id) => self.steps.insert(index, id),
            None => self.steps.remove(&index),
        };
    }

    /// The facts of each target the run has not met before.
    fn targets_open(&mut self, run: RunId, targets: &[iorig_result::live::TargetInfo]) {
        for t in targets {
            if self.seen_targets.contains(&t.path) {
                continue;
            }
            self.seen_targets.push(t.path.clone());
            let facts = TargetFacts::for_path(Path::new(&t.path));
            self.write("recording target facts", |s| {
                s.record_target_facts(run, &t.path, Some(t.kind), Some(t.size_bytes), &facts)
            });
        }
    }

    /// A step's end: its histograms per operation (the kinds it did, and
    /// the total), its status and summary.
    fn step_ended(
        &mut self,
        step: StepId,
        status: StepStatus,
        outcome: &iorig_result::live::RunOutcome,
        summary: &iorig_result::Summary,
    ) {
        let summary = StepSummary::Io(Box::new(summary.clone()));
        let total = outcome.summary.total();
        self.write("recording the step's histograms", |s| {
            let mut ops = vec![
                (Op::Read, &outcome.summary.read),
                (Op::Write, &outcome.summary.write),
                (Op::Trim, &outcome.summary.trim),
            ];
            // A file-system workload's other kinds.
            for f in iorig_spec::FsOp::ALL {
                let op = Op::of_fs(f);
                if let Some(st) = outcome.summary.meta.get(f.index()) {
                    if !matches!(op, Op::Read | Op::Write) {
                        ops.push((op, st));
                    }
                }
            }
            ops.push((Op::Total, &total));
            for (op, stats) in ops {
                if op != Op::Total && op != Op::Read && op != Op::Write && stats.ops == 0 {
                    continue;
                }
                s.put_histogram(step, op, HistKind::Lat, &stats.lat)?;
                if !stats.service_lat.is_empty() {
                    s.put_histogram(step, op, HistKind::ServiceLat, &stats.service_lat)?;
                }
            }
            s.finish_step(step, status, Some(&summary), &now_rfc3339())
        });
    }
}

impl Sink for StoreWriter {
    fn event(&mut self, ev: &Event<'_>) {
        let Some(run) = self.run else { return };
        match *ev {
            Event::StepPending { index, label, role } => {
                self.upsert(index, label, role);
            }
            Event::StepBegun {
                index,
                label,
                role,
                workload,
                ..
            } => self.step_begun(run, index, label, role, workload),
            Event::TargetsOpen { targets, .. } => self.targets_open(run, targets),
            Event::Interval { index, sample, .. } => {
                let Some(&step) = self.steps.get(&index) else {
                    return;
                };
                let rows = rows_of(sample);
                self.write("recording an interval", |s| s.add_intervals(step, &rows));
            }
            Event::External {
                index,
                seq,
                samples,
            } => {
                let Some(&step) = self.steps.get(&index) else {
                    return;
                };
                let rows: Vec<iorig_store::ExternalRow> = samples
                    .iter()
                    .map(|s| iorig_store::ExternalRow {
                        seq,
                        source: s.source.clone(),
                        name: s.name.clone(),
                        value: s.value,
                        error: s.error.clone(),
                    })
                    .collect();
                self.write("recording storage-side figures", |s| {
                    s.add_external(step, &rows)
                });
            }
            Event::HostInterval {
                index,
                host,
                sample,
            } => {
                let Some(&step) = self.steps.get(&index) else {
                    return;
                };
                let rows = rows_of(sample);
                self.write("recording a host's interval", |s| {
                    s.add_host_intervals(step, host, &rows)
                });
            }
            Event::HostEnded {
                index,
                position,
                host,
            } => {
                let Some(&step) = self.steps.get(&index) else {
                    return;
                };
                self.write("recording a host's result", |s| {
                    s.put_step_host(step, position, host)
                });
            }
            Event::JobEnded {
                index,
                position,
                job,
            } => {
                let Some(&step) = self.steps.get(&index) else {
                    return;
                };
                self.write("recording a job's result", |s| {
                    s.put_step_job(step, position, job)
                });
            }
            Event::StepEnded {
                index,
                status,
                outcome,
                summary,
            } => {
                if let Some(&step) = self.steps.get(&index) {
                    self.step_ended(step, status, outcome, summary);
                }
            }
            Event::StepAborted { index } => {
                let Some(&step) = self.steps.get(&index) else {
                    return;
                };
                self.write("recording the step's end", |s| {
                    s.finish_step(step, StepStatus::Failed, None, &now_rfc3339())
                });
            }
            Event::StepSkipped {
                index,
                label,
                finding,
            } => {
                let Some(id) = self.upsert(index, label, StepRole::Skipped) else {
                    return;
                };
                self.write("recording a skipped step", |s| {
                    s.set_step_status(id, StepStatus::Skipped, None, Some(&now_rfc3339()))?;
                    s.put_analysis(run, Some(id), finding).map(|_| ())
                });
            }
            Event::Finding { index, finding } => {
                let step = index.and_then(|i| self.steps.get(&i).copied());
                if index.is_some() && step.is_none() {
                    return;
                }
                self.write("recording analysis", |s| {
                    s.put_analysis(run, step, finding).map(|_| ())
                });
            }
            Event::ProfileEnded { index, summary } => {
                let Some(&step) = self.steps.get(&index) else {
                    return;
                };
                let summary = StepSummary::Profile(summary.clone());
                self.write("recording the step's end", |s| {
                    s.finish_step(step, StepStatus::Ok, Some(&summary), &now_rfc3339())
                });
            }
            Event::RunEnded { status } => {
                // Even after an earlier store error, try to close the run.
                self.failed = false;
                self.write("closing the run", |s| {
                    s.finish_run(run, status, &now_rfc3339())
                });
            }
            _ => {}
        }
    }

    fn take_fault(&mut self) -> Option<String> {
        self.fault.take()
    }
}
/// Stores a trace analysis of `file`, made by `origin`; its id.
pub fn put_trace_analysis(
    store: &iorig_store::Store,
    origin: &Origin,
    file: &std::path::Path,
    analysis: &iorig_trace::analyse::Analysis,
    labels: std::collections::BTreeMap<String, String>,
) -> Result<i64, RunError> {
    let json = serde_json::to_string(analysis)
        .map_err(|e| RunError::Runtime(format!("the analysis as JSON: {e}")))?;
    store
        .put_trace_analysis(&iorig_store::NewTraceAnalysis {
            created: crate::now_rfc3339(),
            host: crate::host_name(),
            tool_version: origin.tool_version.clone(),
            command_line: origin.command_line.clone(),
            file: file.display().to_string(),
            format: analysis.format.clone(),
            records: analysis.records,
            labels,
            analysis_json: json,
        })
        .map_err(|e| RunError::Runtime(format!("result store: {e}")))
}
