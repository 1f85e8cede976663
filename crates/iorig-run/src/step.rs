//! Running one resolved workload: plan and open its targets, execute, and
//! send every interval as it completes to the store writer and the sink,
//! asking the caller's hooks after each (steady-state detection, a
//! precondition's byte count, validation state kept between steps).

use crate::event::{Event, PlanProgress, Sink};
use crate::results::interval_of;
use crate::store::StoreWriter;
use crate::{RunError, Stop};
use iorig_engine::run::{self, IntervalSample, Prepared, RunOutcome, TargetInfo};
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
    pub jobs: Vec<crate::results::JobPart>,
}

impl StepOutput {
    /// The summary of a finished step, with its validation results and the
    /// format phase of a file-system workload.
    pub fn summary(&self) -> iorig_result::Summary {
        let (step, outcome) = (self, &self.outcome);
        let mut s = crate::results::summary_of(
            &outcome.summary,
            outcome.measured_s,
            outcome.cpu,
            outcome.summary.errors,
            &outcome.error_messages,
        );
        let names: Vec<String> = step.targets.iter().map(|t| t.path.clone()).collect();
        s.validation = outcome
            .validation
            .as_ref()
            .map(|v| crate::results::validation_of(v, &names));
        s.format = step.format.as_ref().map(crate::results::format_summary);
        s.workers_cpu = Some(outcome.thread_usage);
        s
    }

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

/// One job of a step: its name and its resolved workload.
#[derive(Debug, Clone)]
pub struct JobCall {
    pub name: String,
    pub w: Workload,
    /// When it ends, the step's other jobs end too (fio's `exitall`).
    pub exitall: bool,
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
    /// What each host sizes from its own targets and cache (this
    /// machine's steps have it applied in `w` already).
    pub sizing: iorig_spec::HostSizing,
    /// Workloads that run at once in this step (empty: `w` alone).
    pub jobs: &'a [JobCall],
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
            sizing: iorig_spec::HostSizing::default(),
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
