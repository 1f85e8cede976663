//! A step of several workloads at once (a plan step's `jobs`, a fio job
//! file's jobs without `stonewall`): each job is planned and opened with
//! every target rule, then all run together, each with its own workers,
//! targets, mix and rate; interval `k` of every job is merged into the
//! step's interval `k`, and each job keeps its own figures.

use crate::created::{created_ids, created_paths, unlink_created};
use crate::event::Event;
use crate::merge::{merge_interval, summary_of_samples};
use crate::results::JobPart;
use crate::results::{interval_of, target_entry};
use crate::step::{below_floor, deliver_interval, JobCall, Out, StepCall, StepHooks, StepOutput};
use crate::{RunError, Stop};
use crossbeam_channel::{unbounded, Receiver, Select};
use iorig_engine::run::{self, IntervalSample, Prepared, RunEvent, RunOutcome, TargetInfo};
use iorig_result::JobResult;
use std::collections::BTreeMap;

/// Checks every job of a step as [`crate::Local`] checks one workload.
pub(crate) fn check_jobs(jobs: &[JobCall], allow_destroy: bool) -> Result<(), RunError> {
    for j in jobs {
        run::plan(&j.w, allow_destroy).map_err(|e| job_err(j, e))?;
    }
    Ok(())
}

fn job_err(j: &JobCall, e: impl Into<RunError>) -> RunError {
    e.into().context(&format!("job '{}': ", j.name))
}

/// Runs every job of `call` at once to its own end (its time or its
/// `io_size`), an early stop from the hooks, or an interrupt.
pub(crate) fn run_jobs(
    call: &StepCall<'_>,
    out: &mut Out<'_>,
    stop: &Stop,
    hooks: &mut dyn StepHooks,
) -> Result<StepOutput, RunError> {
    let index = call.index;
    // Planned and opened one after another: a job that shares a scratch
    // file with an earlier one finds it made, and a device an earlier job
    // holds exclusively is opened beside that hold.
    let mut prepared: Vec<Prepared> = Vec::with_capacity(call.jobs.len());
    let mut engines: Vec<String> = Vec::new();
    let mut created: Vec<Vec<std::path::PathBuf>> = Vec::new();
    let mut formats: Vec<iorig_engine::fs::FormatOutcome> = Vec::new();
    for j in call.jobs {
        let planned = run::plan(&j.w, call.allow_destroy).map_err(|e| job_err(j, e))?;
        created.push(created_paths(&planned));
        for n in &planned.notices {
            out.notice(&format!("job '{}': {n}", j.name));
        }
        engines.push(planned.engine.name().to_string());
        let mut p = run::open(planned, &mut |p| {
            out.send(Event::Filling {
                path: &p.path.display().to_string(),
                done_bytes: p.done_bytes,
                total_bytes: p.total_bytes,
                grown_from_bytes: p.grown_from_bytes,
            });
        })
        .map_err(|e| job_err(j, e))?;
        p.byte_limit = j.w.io_limit_bytes(p.space.total_bytes());
        // A file-system job's tree is made ready (and measured) before any
        // job starts, each in turn.
        if let Some(ft) = p.fs.clone() {
            crate::tree::tree_keys(&mut p, &ft, &j.w).map_err(|e| job_err(j, e))?;
            let f = crate::tree::format_tree(&ft, &j.w, p.verify.as_ref(), index, out, stop)
                .map_err(|e| job_err(j, e))?;
            formats.push(f);
        }
        prepared.push(p);
    }
    // The step's targets: each once, in the order the jobs name them.
    let mut targets: Vec<TargetInfo> = Vec::new();
    for p in &prepared {
        for t in &p.info {
            if !targets.iter().any(|u| u.path == t.path) {
                targets.push(t.clone());
            }
        }
    }
    let mut engine_name = engines.first().cloned().unwrap_or_default();
    if engines.iter().any(|e| *e != engine_name) {
        let mut names = engines.clone();
        names.dedup();
        engine_name = names.join("+");
    }
    hooks.opened(out, &targets)?;
    out.send(Event::TargetsOpen {
        index,
        targets: &targets,
        engine: &engine_name,
        byte_limit: None,
    });
    hooks.before_io(out, index, stop);

    let n = prepared.len();
    let mut breach: Vec<Option<String>> = vec![None; n];
    let mut per_job: Vec<Vec<IntervalSample>> = (0..n).map(|_| Vec::new()).collect();
    let mut intervals = Vec::new();
    let mut totals: Vec<IntervalSample> = Vec::new();
    let results = std::thread::scope(|scope| {
        let mut receivers: Vec<Receiver<RunEvent>> = Vec::with_capacity(n);
        let mut handles = Vec::with_capacity(n);
        for p in &prepared {
            let (tx, rx) = unbounded::<RunEvent>();
            receivers.push(rx);
            let flag = stop.step.clone();
            handles.push(scope.spawn(move || {
                let r = run::execute(p, flag, &tx);
                drop(tx);
                r
            }));
        }
        // Interval k is delivered once every job still running gave it.
        let mut pending: Vec<BTreeMap<usize, IntervalSample>> =
            (0..n).map(|_| BTreeMap::new()).collect();
        let mut open = vec![true; n];
        let mut next = 0usize;
        while open.iter().any(|o| *o) {
            let mut sel = Select::new();
            let ids: Vec<usize> = (0..n).filter(|&j| open[j]).collect();
            for &j in &ids {
                sel.recv(&receivers[j]);
            }
            let op = sel.select();
            let j = ids[op.index()];
            match op.recv(&receivers[j]) {
                Ok(RunEvent::Interval(sample)) => {
                    if breach[j].is_none() {
                        breach[j] = below_floor(&call.jobs[j].w, &sample)
                            .map(|m| format!("job '{}': {m}", call.jobs[j].name));
                        if breach[j].is_some() {
                            // The jobs share one clock: the step ends.
                            stop.stop_step();
                        }
                    }
                    pending[j].insert(sample.index, *sample);
                }
                Ok(RunEvent::WorkerError { worker, message }) => {
                    let m = format!("job '{}': {message}", call.jobs[j].name);
                    out.send(Event::WorkerError {
                        worker,
                        message: &m,
                    });
                }
                Ok(RunEvent::Validation(e)) => out.send(Event::ValidationError(&e)),
                Err(_) => {
                    open[j] = false;
                    if call.jobs[j].exitall {
                        stop.stop_step();
                    }
                }
            }
            loop {
                let ready = (0..n).all(|j| !open[j] || pending[j].contains_key(&next));
                let any = (0..n).any(|j| pending[j].contains_key(&next));
                if !ready || !any {
                    break;
                }
                let parts: Vec<(usize, IntervalSample)> = (0..n)
                    .filter_map(|j| pending[j].remove(&next).map(|s| (j, s)))
                    .collect();
                let refs: Vec<&IntervalSample> = parts.iter().map(|(_, s)| s).collect();
                if let Some(total) = merge_interval(&refs) {
                    intervals.push(deliver_interval(&total, index, out, stop, hooks));
                    totals.push(total);
                }
                next += 1;
                for (j, s) in parts {
                    per_job[j].push(s);
                }
            }
        }
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    let mut outcomes: Vec<RunOutcome> = Vec::with_capacity(n);
    for r in results {
        match r {
            Ok(r) => outcomes.push(r?),
            Err(_) => return Err(RunError::runtime("a job's run thread panicked")),
        }
    }
    let breaches = breach.iter().filter(|b| b.is_some()).count() as u64;
    for (o, b) in outcomes.iter_mut().zip(breach) {
        if let Some(message) = b {
            o.errors += 1;
            o.summary.errors += 1;
            o.error_messages.push(message);
        }
    }
    for (j, o) in outcomes.iter().enumerate() {
        for m in &o.notices {
            out.notice(&format!("job '{}': {m}", call.jobs[j].name));
        }
    }
    let mut jobs = Vec::with_capacity(n);
    for (j, (p, o)) in prepared.iter().zip(&outcomes).enumerate() {
        let (mut summary, stats, _, _) = summary_of_samples(&per_job[j], &o.error_messages);
        summary.errors = o.errors;
        let result = JobResult {
            name: call.jobs[j].name.clone(),
            workload: call.jobs[j].w.record(),
            engine: engines[j].clone(),
            targets: p.info.iter().map(target_entry).collect(),
            summary,
            intervals: per_job[j].iter().map(interval_of).collect(),
        };
        out.send(Event::JobEnded {
            index,
            position: j,
            job: &result,
        });
        jobs.push(JobPart { result, stats });
    }
    for (j, paths) in created.iter().enumerate() {
        if call.jobs[j].w.unlink {
            unlink_created(&created_ids(paths, &prepared[j]), out);
        }
        crate::tree::cleanup_tree(&prepared[j], &call.jobs[j].w, out, stop)?;
    }
    let mut outcome = merge_outcomes(outcomes, &totals);
    // The totals count I/O errors; a floor's breach is the step's too.
    outcome.summary.errors += breaches;
    Ok(StepOutput {
        targets,
        engine_name,
        outcome,
        intervals,
        verify: None,
        extents_bytes: Vec::new(),
        trim_pass: None,
        format: merge_formats(formats),
        hosts: Vec::new(),
        host_stats: Vec::new(),
        jobs,
    })
}

/// The step's outcome from its jobs': statistics from the merged
/// intervals, errors and notices summed, the longest gap the step's own.
fn merge_outcomes(outcomes: Vec<RunOutcome>, totals: &[IntervalSample]) -> RunOutcome {
    let (_, summary, measured_s, cpu) = summary_of_samples(totals, &[]);
    let mut longest_gap_ns = 0;
    let mut longest_gap_start_s = 0.0;
    for t in totals.iter().filter(|t| !t.warmup) {
        if t.longest_gap_ns > longest_gap_ns {
            longest_gap_ns = t.longest_gap_ns;
            longest_gap_start_s = t.gap_start_ns as f64 / 1e9;
        }
    }
    let mut o = RunOutcome {
        summary,
        measured_s,
        cpu,
        errors: 0,
        error_messages: Vec::new(),
        ended_early: !outcomes.is_empty(),
        intervals: totals.len(),
        validation: None,
        worker_busy_pct: Vec::new(),
        thread_usage: Default::default(),
        longest_gap_ns,
        longest_gap_start_s,
        limited_bytes: None,
        journal_ns: 0,
        journal_batches: 0,
        notices: Vec::new(),
    };
    for j in outcomes {
        o.errors += j.errors;
        o.error_messages.extend(j.error_messages);
        // The step ended early only if every job did.
        o.ended_early &= j.ended_early;
        o.worker_busy_pct.extend(j.worker_busy_pct);
        o.thread_usage.add(&j.thread_usage);
        if let Some(b) = j.limited_bytes {
            *o.limited_bytes.get_or_insert(0) += b;
        }
    }
    o
}

/// The step's format phase from its trees': counts and operations added
/// up, the times too (the trees are made one after another).
fn merge_formats(
    formats: Vec<iorig_engine::fs::FormatOutcome>,
) -> Option<iorig_engine::fs::FormatOutcome> {
    let mut it = formats.into_iter();
    let mut all = it.next()?;
    for f in it {
        all.stats.merge(&f.stats);
        all.files_kept += f.files_kept;
        all.files_removed += f.files_removed;
        all.dirs_created += f.dirs_created;
        all.files_created += f.files_created;
        all.bytes_written += f.bytes_written;
        all.duration += f.duration;
        all.interrupted |= f.interrupted;
        all.notices.extend(f.notices);
    }
    Some(all)
}
