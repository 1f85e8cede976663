//! This machine as a step executor ([`Local`]): plan and open the step's
//! targets, execute, and send every interval as it completes to the store
//! writer and the sink, asking the caller's hooks after each; a step of
//! several jobs goes to [`crate::group`].

use crate::created::{created_ids, created_paths, unlink_created};
use crate::event::Event;
use crate::step::{
    below_floor, deliver_interval, Out, StepCall, StepExecutor, StepHooks, StepOutput,
};
use crate::{RunError, Stop};
use crossbeam_channel::unbounded;
use iorig_engine::run::{self, RunEvent};
use iorig_result::Interval;
use iorig_spec::Workload;

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
                    summary: o.summary(),
                    intervals: o.intervals.clone(),
                };
                out.send(Event::JobEnded {
                    index: call.index,
                    position: 0,
                    job: &result,
                });
                o.jobs = vec![crate::results::JobPart {
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
            crate::tree::tree_keys(&mut prepared, &ft, w)?;
            hooks.opened(out, &prepared.info)?;
            let done =
                crate::tree::format_tree(&ft, w, prepared.verify.as_ref(), index, out, stop)?;
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
    crate::tree::cleanup_tree(&prepared, w, out, stop)?;
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
