//! Running one resolved workload: plan and open its targets, execute, and
//! send every interval as it completes to the store writer and the sink,
//! asking the caller's hooks after each (steady-state detection, a
//! precondition's byte count, validation state kept between steps).

use crate::event::{Event, PlanProgress, Sink};
use crate::results::interval_of;
use crate::store::StoreWriter;
use crate::{RunError, Stop};
use crossbeam_channel::unbounded;
use iorig_engine::run::{self, IntervalSample, Prepared, RunEvent, RunOutcome, TargetInfo};
use iorig_engine::verify::VerifySetup;
use iorig_result::{Interval, StepStatus};
use iorig_spec::Workload;
use std::sync::Arc;

/// The store writer and the front end's sink: every event goes to the store
/// first, then to the sink; a store fault reaches the sink as a notice.
pub struct Out<'a> {
    pub store: &'a mut StoreWriter,
    pub sink: &'a mut dyn Sink,
    /// Storage-side sources (`--collect`), asked at every interval.
    pub collect: Option<&'a mut crate::collect::Collector>,
}

impl<'a> Out<'a> {
    pub fn new(store: &'a mut StoreWriter, sink: &'a mut dyn Sink) -> Out<'a> {
        Out {
            store,
            sink,
            collect: None,
        }
    }

    /// Sends `ev`; returns a fault the sink reported, if any.
    pub fn emit(&mut self, ev: Event<'_>) -> Option<String> {
        // What the sources gave for the step's last intervals goes before
        // its end.
        if let (Event::StepEnded { .. } | Event::StepAborted { .. }, Some(c)) =
            (&ev, self.collect.as_deref_mut())
        {
            for b in c.before_step_end() {
                self.deliver(b.event());
            }
        }
        let fault = self.deliver(ev);
        if let (Event::Interval { index, sample, .. }, Some(c)) = (&ev, self.collect.as_deref_mut())
        {
            for b in c.after_interval(*index, sample.index as u64, sample.duration_s) {
                self.deliver(b.event());
            }
        }
        fault
    }

    fn deliver(&mut self, ev: Event<'_>) -> Option<String> {
        self.store.event(&ev);
        if let Some(f) = self.store.take_fault() {
            self.sink.event(&Event::Notice(&f));
        }
        self.sink.event(&ev);
        self.sink.take_fault()
    }

    /// Sends `ev`; a sink's fault is told as a notice and the run goes on.
    pub fn send(&mut self, ev: Event<'_>) {
        if let Some(f) = self.emit(ev) {
            self.sink.event(&Event::Notice(&f));
        }
    }

    pub fn notice(&mut self, text: &str) {
        self.send(Event::Notice(text));
    }
}

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
    /// The trim pass before the I/O, when the hooks asked for one.
    pub trim_pass: Option<run::TrimPass>,
    /// The format phase of a file-system workload.
    pub format: Option<iorig_engine::fs::FormatOutcome>,
    /// A step run on several hosts: each host's part (the rest of this
    /// output is their totals). Empty for a step run here.
    pub hosts: Vec<iorig_result::HostResult>,
    /// Each host's measured intervals merged, histograms whole, in the
    /// order of `hosts` (fio's client_stats).
    pub host_stats: Vec<iorig_stats::IntervalStats>,
    /// A step of several jobs: each job's part (the rest of this output is
    /// their totals). Empty for a step of one workload.
    pub jobs: Vec<crate::JobPart>,
}

impl StepOutput {
    /// How the step ended, and its validation errors: interrupted, failed
    /// (I/O or validation errors) or ok.
    pub fn status(&self, interrupted: bool) -> (StepStatus, u64) {
        let o = &self.outcome;
        let validation_errors = o.validation.as_ref().map_or(0, |v| v.errors);
        let status = if interrupted {
            StepStatus::Interrupted
        } else if o.errors > 0 || validation_errors > 0 {
            StepStatus::Failed
        } else {
            StepStatus::Ok
        };
        (status, validation_errors)
    }
}

/// Hooks a caller gives [`run_step`].
pub trait StepHooks {
    /// For a `verify` workload, once the targets are open: the validation
    /// state to run with (a journal, or a key map kept from an earlier step).
    /// None gives the step a fresh key map of its own.
    fn verify_setup(&mut self, _prepared: &Prepared) -> Result<Option<Arc<VerifySetup>>, RunError> {
        Ok(None)
    }
    /// Once the targets are open: a limit on the bytes the step issues (a
    /// precondition's passes over the working set of `working_set_bytes`).
    fn byte_limit(&mut self, _working_set_bytes: u64) -> Option<u64> {
        None
    }
    /// The targets passed every check and are open; nothing has run yet.
    fn opened(&mut self, _out: &mut Out<'_>, _targets: &[TargetInfo]) -> Result<(), RunError> {
        Ok(())
    }
    /// Discard the whole working set before the I/O (a precondition's
    /// `trim = true`).
    fn trim_first(&self) -> bool {
        false
    }
    /// A precondition's passes over the working set (what `byte_limit`
    /// multiplies), for an executor whose hosts each know their own
    /// working set.
    fn byte_passes(&self) -> Option<u32> {
        None
    }
    /// Right before the I/O starts: where to send every counted I/O's
    /// record, when the caller keeps a per-I/O log.
    fn io_records(&mut self) -> Result<Option<iorig_engine::iolog::IoRecordSender>, RunError> {
        Ok(None)
    }
    /// Right before the I/O starts, the targets open: a trace replay's feed
    /// of I/Os (which then replaces the workload's generators).
    fn replay(
        &mut self,
        _prepared: &Prepared,
    ) -> Result<Option<iorig_engine::replay::ReplayFeed>, RunError> {
        Ok(None)
    }
    /// Right before the I/O starts (after any trim pass): wait for a start
    /// time. False: the step was stopped while waiting.
    fn before_io(&mut self, _out: &mut Out<'_>, _index: usize, _stop: &Stop) -> bool {
        true
    }
    /// An interval completed: go on or stop, and where a plan stands.
    fn interval(&mut self, sample: &IntervalSample) -> (Control, Option<PlanProgress>);
}

/// A completed interval of step `index`: the hooks are asked whether to go
/// on (a stop ends the step), then it goes to the store and the sink.
pub fn deliver_interval(
    sample: &IntervalSample,
    index: usize,
    out: &mut Out<'_>,
    stop: &Stop,
    hooks: &mut dyn StepHooks,
) -> Interval {
    let interval = interval_of(sample);
    let (control, progress) = hooks.interval(sample);
    if control == Control::Stop {
        stop.stop_step();
    }
    out.send(Event::Interval {
        index,
        sample,
        interval: &interval,
        progress: progress.as_ref(),
    });
    interval
}

/// One step for an executor: the resolved workload and the keys it was
/// resolved from (what a remote host resolves again on its side).
#[derive(Debug, Clone, Copy)]
pub struct StepCall<'a> {
    pub w: &'a Workload,
    pub layer: &'a iorig_spec::WorkloadFile,
    pub index: usize,
    pub allow_destroy: bool,
    /// A hot-data step's working set, applied to each host's own target
    /// (this machine's steps have it in `w.range` already).
    pub hot_size_bytes: Option<u64>,
    /// Workloads that run at once in this step (empty: `w` alone).
    pub jobs: &'a [crate::JobCall],
}

impl<'a> StepCall<'a> {
    /// The one step of a single run (`iorig run`): `w` alone, step 0.
    pub fn single(
        w: &'a Workload,
        layer: &'a iorig_spec::WorkloadFile,
        allow_destroy: bool,
    ) -> Self {
        StepCall {
            w,
            layer,
            index: 0,
            allow_destroy,
            hot_size_bytes: None,
            jobs: &[],
        }
    }
}

/// Where a step's I/O runs: [`Local`] on this machine; a controller on many
/// hosts (iorig-agent). The runners ([`crate::single`], [`crate::plan`])
/// own everything around a step: the run, its begin and end, analysis.
pub trait StepExecutor {
    /// Checks a step before anything runs anywhere (targets, safety,
    /// space), writing nothing.
    fn check(&mut self, call: &StepCall<'_>) -> Result<(), RunError>;
    /// Runs the step to its end, an early stop from the hooks, or an
    /// interrupt, sending its events through `out`.
    fn run_step(
        &mut self,
        call: &StepCall<'_>,
        out: &mut Out<'_>,
        stop: &Stop,
        hooks: &mut dyn StepHooks,
    ) -> Result<StepOutput, RunError>;
    /// Whether steps run on this machine (checks and hot ranges look at
    /// local targets).
    fn is_local(&self) -> bool {
        false
    }
}

/// This machine.
#[derive(Debug, Default, Clone, Copy)]
pub struct Local;

impl StepExecutor for Local {
    fn check(&mut self, call: &StepCall<'_>) -> Result<(), RunError> {
        if !call.jobs.is_empty() {
            return crate::group::check_jobs(call.jobs, call.allow_destroy);
        }
        run::plan(call.w, call.allow_destroy)?;
        Ok(())
    }
    fn run_step(
        &mut self,
        call: &StepCall<'_>,
        out: &mut Out<'_>,
        stop: &Stop,
        hooks: &mut dyn StepHooks,
    ) -> Result<StepOutput, RunError> {
        match call.jobs {
            [] => run_step(call.w, call.index, call.allow_destroy, out, stop, hooks),
            // One job is the step itself (with all a step can do: validation
            // kept between steps, a file-system tree), reported as its job.
            [one] => {
                let mut o = run_step(&one.w, call.index, call.allow_destroy, out, stop, hooks)?;
                let result = iorig_result::JobResult {
                    name: one.name.clone(),
                    workload: one.w.record(),
                    engine: o.engine_name.clone(),
                    targets: o.targets.iter().map(crate::results::target_entry).collect(),
                    summary: crate::results::step_summary(&o),
                    intervals: o.intervals.clone(),
                };
                out.send(Event::JobEnded {
                    index: call.index,
                    position: 0,
                    job: &result,
                });
                o.jobs = vec![crate::JobPart {
                    result,
                    stats: o.outcome.summary.clone(),
                }];
                Ok(o)
            }
            _ => crate::group::run_jobs(call, out, stop, hooks),
        }
    }
    fn is_local(&self) -> bool {
        true
    }
}

/// Runs `w` as step `index` to its end, an early stop from the hooks, or an
/// interrupt.
pub(crate) fn run_step(
    w: &Workload,
    index: usize,
    allow_destroy: bool,
    out: &mut Out<'_>,
    stop: &Stop,
    hooks: &mut dyn StepHooks,
) -> Result<StepOutput, RunError> {
    let planned = run::plan(w, allow_destroy)?;
    for n in &planned.notices {
        out.notice(n);
    }
    let created = created_paths(&planned);
    let engine_name = planned.engine.name().to_string();
    let mut prepared = run::open(planned, &mut |p| {
        out.send(Event::Filling {
            path: &p.path.display().to_string(),
            done_bytes: p.done_bytes,
            total_bytes: p.total_bytes,
            grown_from_bytes: p.grown_from_bytes,
        });
    })?;
    if w.verify {
        // None: the engine gives the step a fresh key map of its own.
        prepared.verify = hooks.verify_setup(&prepared)?;
    }
    // A file-system workload's tree is made ready (and measured) once its
    // anchor passed every check; the byte limit and trims are block ideas.
    let format = match prepared.fs.clone() {
        Some(ft) => {
            if w.verify && prepared.verify.is_none() {
                // The format's writes are stamped with the step's keys, so
                // the key map is made before it. Files kept from before
                // hold data of unknown keys, which reads do not check (as
                // an existing file's blocks in a block run).
                let unit = w.verify_unit_bytes();
                prepared.verify = Some(Arc::new(VerifySetup::fresh(
                    unit as u32,
                    &[ft.extent_bytes(unit)],
                    w,
                )?));
            }
            hooks.opened(out, &prepared.info)?;
            let done = format_tree(&ft, w, prepared.verify.as_ref(), index, out, stop)?;
            // Test builds: a test may change the tree here (IORIG_TEST_PAUSE_DIR).
            run::test_pause("formatted");
            Some(done)
        }
        None => {
            // A precondition's passes and the workload's own io_size: the
            // smaller ends the step.
            prepared.byte_limit = match (
                hooks.byte_limit(prepared.space.total_bytes()),
                w.io_limit_bytes(prepared.space.total_bytes()),
            ) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            hooks.opened(out, &prepared.info)?;
            None
        }
    };
    prepared.io_records = hooks.io_records()?;
    prepared.replay = hooks.replay(&prepared)?;
    out.send(Event::TargetsOpen {
        index,
        targets: &prepared.info,
        engine: &engine_name,
        byte_limit: prepared.byte_limit,
    });
    // The null engine has nothing to discard.
    let trim_pass = if hooks.trim_first() && !prepared.targets.is_empty() && format.is_none() {
        let bytes = prepared.space.total_bytes();
        out.notice(&format!(
            "trim pass: discarding the working set ({}) before writing",
            iorig_spec::format_bytes(bytes)
        ));
        let pass = run::trim_working_set(&prepared, &stop.step)?;
        out.notice(&format!(
            "trim pass: discarded {} in {:.1} s{}",
            iorig_spec::format_bytes(pass.bytes),
            pass.duration.as_secs_f64(),
            if pass.stopped { " (stopped)" } else { "" }
        ));
        Some(pass)
    } else {
        None
    };

    // A run that was stopped while it waited for its start still runs
    // `execute`, which sees the stop flag and ends with nothing measured.
    hooks.before_io(out, index, stop);
    let (tx, rx) = unbounded::<RunEvent>();
    let mut intervals: Vec<Interval> = Vec::new();
    // The first measured interval under the IOPS floor, if any.
    let mut breach: Option<String> = None;
    let outcome = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let r = run::execute(&prepared, stop.step.clone(), &tx);
            drop(tx);
            r
        });
        for ev in rx.iter() {
            match ev {
                RunEvent::Interval(sample) => {
                    if breach.is_none() {
                        breach = below_floor(w, &sample);
                        if breach.is_some() {
                            stop.stop_step();
                        }
                    }
                    intervals.push(deliver_interval(&sample, index, out, stop, hooks));
                }
                RunEvent::WorkerError { worker, message } => {
                    out.send(Event::WorkerError {
                        worker,
                        message: &message,
                    });
                }
                RunEvent::Validation(e) => out.send(Event::ValidationError(&e)),
            }
        }
        worker.join()
    });
    let mut outcome = match outcome {
        Ok(r) => r?,
        Err(_) => return Err(RunError::runtime("the run thread panicked")),
    };
    if let Some(message) = breach {
        // Counted as the run's error: the step fails, as fio's job does.
        outcome.errors += 1;
        outcome.summary.errors += 1;
        outcome.error_messages.push(message);
    }
    for n in &outcome.notices {
        out.notice(n);
    }
    if w.unlink {
        unlink_created(&created_ids(&created, &prepared), out);
    }
    if let (Some(ft), Some(f)) = (&prepared.fs, &w.fs) {
        if f.cleanup && !stop.interrupted() {
            let (files, notices) = iorig_engine::fs::cleanup(ft, w)?;
            for n in &notices {
                out.notice(n);
            }
            out.notice(&format!(
                "cleanup: removed the tree in {} ({files} files)",
                ft.tree.anchor.display()
            ));
        }
    }
    Ok(StepOutput {
        targets: prepared.info.clone(),
        engine_name,
        outcome,
        intervals,
        verify: prepared.verify.clone(),
        extents_bytes: prepared.extents_bytes.clone(),
        trim_pass,
        format,
        hosts: Vec::new(),
        host_stats: Vec::new(),
        jobs: Vec::new(),
    })
}

/// A measured interval under the workload's IOPS floor (`min_iops`): the
/// message the run fails with.
pub(crate) fn below_floor(w: &Workload, sample: &IntervalSample) -> Option<String> {
    let min = w.min_iops?;
    // Judged over whole intervals after any start delay, as fio judges
    // whole rate cycles: the last interval of a run ended by its bytes or
    // a stop is cut short, and a delay's intervals are idle by design.
    let whole = sample.duration_s + 1e-6 >= w.interval.as_secs_f64();
    let started = sample.t_s - sample.duration_s + 1e-9 >= w.start_delay.as_secs_f64();
    if sample.warmup || !whole || !started {
        return None;
    }
    let iops = sample.stats.ops() as f64 / sample.duration_s;
    (iops < min).then(|| {
        format!(
            "interval {} ran at {iops:.1} IOPS, below the floor of {min} (min_iops); the run stopped there",
            sample.index + 1
        )
    })
}

/// The scratch files a planned step will create: the only ones `unlink`
/// removes.
pub(crate) fn created_paths(planned: &run::Planned) -> Vec<std::path::PathBuf> {
    planned
        .targets
        .iter()
        .filter(|t| !t.exists)
        .map(|t| t.path.clone())
        .collect()
}

/// A created file as it was opened: its path and (device, inode), so
/// `unlink` removes that file and nothing put at its path since.
pub(crate) type Created = (std::path::PathBuf, (u64, u64));

/// The (device, inode) of each created path, from the descriptors the step
/// opened.
pub(crate) fn created_ids(paths: &[std::path::PathBuf], prepared: &Prepared) -> Vec<Created> {
    use std::os::unix::fs::MetadataExt;
    paths
        .iter()
        .filter_map(|p| {
            let t = prepared.targets.iter().find(|t| t.plan.path == *p)?;
            let m = t.file.metadata().ok()?;
            Some((p.clone(), (m.dev(), m.ino())))
        })
        .collect()
}

/// Removes the scratch files a step created (`unlink`), saying which; a
/// path that no longer names the file created is left alone.
pub(crate) fn unlink_created(created: &[Created], out: &mut Out<'_>) {
    use std::os::unix::fs::MetadataExt;
    let mut removed = Vec::new();
    for (p, id) in created {
        let same = std::fs::symlink_metadata(p).is_ok_and(|m| (m.dev(), m.ino()) == *id);
        if !same {
            out.notice(&format!(
                "unlink: {} is no longer the file this step created; left as it is",
                p.display()
            ));
            continue;
        }
        match std::fs::remove_file(p) {
            Ok(()) => removed.push(p.display().to_string()),
            Err(e) => out.notice(&format!("unlink: could not remove {}: {e}", p.display())),
        }
    }
    if !removed.is_empty() {
        out.notice(&format!(
            "unlink: removed the {} scratch file(s) this step created: {}",
            removed.len(),
            removed.join(", ")
        ));
    }
}

/// The format phase: progress as `Formatting` events, then `Formatted`
/// with its summary.
fn format_tree(
    ft: &iorig_engine::fs::FsTarget,
    w: &Workload,
    verify: Option<&Arc<VerifySetup>>,
    index: usize,
    out: &mut Out<'_>,
    stop: &Stop,
) -> Result<iorig_engine::fs::FormatOutcome, RunError> {
    let path = ft.tree.anchor.display().to_string();
    let outcome = iorig_engine::fs::format(ft, w, verify, &stop.step, &mut |p| {
        out.send(Event::Formatting {
            path: &path,
            progress: p,
        });
    })?;
    for n in &outcome.notices {
        out.notice(n);
    }
    let summary = crate::results::format_summary(&outcome);
    out.send(Event::Formatted {
        index,
        path: &path,
        summary: &summary,
    });
    Ok(outcome)
}
