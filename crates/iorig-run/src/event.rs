//! What a running test reports, as it happens, and the sinks that take it.
//!
//! Events borrow from the runner: a sink that keeps them copies what it
//! needs ([`Collector`] does). The order for one step of a plan is
//! `StepBegun`, `Filling`* (or `Formatting`* and `Formatted` for a tree),
//! `TargetsOpen`, (`Interval` | `WorkerError` |
//! `ValidationError`)*, `StepEnded`, `Finding`*; a single run sends
//! `RunBegun` before its step's `StepBegun`, a plan `PlanBegun` and every
//! `StepPending` first; `RunEnded` closes both.

use iorig_profile::IntervalFigures;
use iorig_result::live::{FormatProgress, IntervalSample, RunOutcome, TargetInfo, ValidationError};
use iorig_result::{
    Finding, FormatSummary, Interval, ProfileSummary, RunStatus, StepRole, StepStatus, Summary,
};
use iorig_spec::plan::PlanStep;
use iorig_spec::Workload;
use std::time::Duration;

/// Where a plan stands, sent with each interval.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanProgress {
    /// The running step's position, from 0, and the plan's step count.
    pub position: usize,
    pub steps: usize,
    pub label: String,
    pub elapsed: Duration,
    /// Time left: this step's rest plus the estimate of the steps after it.
    pub eta: Duration,
    /// A precondition's share of its bytes written, percent.
    pub fill_pct: Option<f64>,
}

/// One storage-side figure of an interval, or a source's failure.
#[derive(Debug, Clone, PartialEq)]
pub struct ExternalSample {
    /// The source as given (`http://...`, `cmd: ...`).
    pub source: String,
    /// The series (`node_disk_io_now{device="sda"}`); empty for a failure.
    pub name: String,
    pub value: Option<f64>,
    /// Why the source gave nothing for this interval.
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub enum Event<'a> {
    /// Something the user should know; the test goes on.
    Notice(&'a str),
    /// A single run has entered the store (`run` is its store id) or, without
    /// a store, been given `id`.
    RunBegun { id: &'a str },
    /// A plan starts or resumes: `done` of its `steps` are complete already.
    PlanBegun {
        name: &'a str,
        steps: usize,
        done: usize,
        /// Its id in the store (None without one).
        run: Option<i64>,
    },
    /// A plan's step, stored before anything runs so a resume knows them all.
    StepPending {
        index: usize,
        label: &'a str,
        role: StepRole,
    },
    /// A step starts; its workload (None for a profile) is resolved and
    /// checked.
    StepBegun {
        index: usize,
        label: &'a str,
        role: StepRole,
        workload: Option<&'a Workload>,
        /// The plan step it came from (None for `iorig run`).
        plan_step: Option<&'a PlanStep>,
    },
    /// A scratch file is being created (or grown, from `grown_from_bytes`)
    /// and filled with data before the step runs.
    Filling {
        path: &'a str,
        done_bytes: u64,
        total_bytes: u64,
        grown_from_bytes: Option<u64>,
    },
    /// A file-system workload's tree is being brought to its shape.
    Formatting {
        path: &'a str,
        progress: &'a FormatProgress,
    },
    /// The format phase is over (before `TargetsOpen`).
    Formatted {
        index: usize,
        path: &'a str,
        summary: &'a FormatSummary,
    },
    /// The step's targets are open; its I/O starts now.
    TargetsOpen {
        index: usize,
        targets: &'a [TargetInfo],
        /// The engine that runs (io_uring may have fallen back to psync).
        engine: &'a str,
        /// A precondition's bytes to write.
        byte_limit: Option<u64>,
    },
    /// The I/O starts now: a controller's start time was reached,
    /// `late_ns` after it (negative: early). Sent only when the run waited
    /// for a given start time.
    Started { index: usize, late_ns: i64 },
    /// An interval completed.
    Interval {
        index: usize,
        sample: &'a IntervalSample,
        interval: &'a Interval,
        progress: Option<&'a PlanProgress>,
    },
    /// One host's part of an interval of a multi-host step (the total
    /// comes as `Interval`).
    HostInterval {
        index: usize,
        host: &'a str,
        sample: &'a IntervalSample,
    },
    /// Storage-side figures (`--collect`) of interval `seq` of step
    /// `index`; a source that failed for it gives one sample with its
    /// error. Sent after the interval, before the step's end.
    External {
        index: usize,
        seq: u64,
        samples: &'a [ExternalSample],
    },
    /// How one host of a multi-host step ended (after `StepEnded`);
    /// `position` is its place in the host list.
    HostEnded {
        index: usize,
        position: usize,
        host: &'a iorig_result::HostResult,
    },
    /// How one job of a step of several ended (before `StepEnded`);
    /// `position` is its place in the step's jobs.
    JobEnded {
        index: usize,
        position: usize,
        job: &'a iorig_result::JobResult,
    },
    /// A worker stopped on an I/O error; the others go on.
    WorkerError { worker: u32, message: &'a str },
    /// Data validation found a block that is not what was written.
    ValidationError(&'a ValidationError),
    /// The step's I/O is over.
    StepEnded {
        index: usize,
        status: StepStatus,
        outcome: &'a RunOutcome,
        summary: &'a Summary,
    },
    /// The step failed before any I/O (its setup failed).
    StepAborted { index: usize },
    /// The plan skipped a step; the finding says why.
    StepSkipped {
        index: usize,
        label: &'a str,
        finding: &'a Finding,
    },
    /// An analysis result of step `index`, or of the whole plan (None).
    Finding {
        index: Option<usize>,
        finding: &'a Finding,
    },
    /// A profile interval closed (`t_s` from the profile's start).
    ProfileInterval {
        figures: &'a IntervalFigures,
        t_s: f64,
        /// How long the profile is planned to run (live sampling).
        time_s: Option<f64>,
        /// More than one device is sampled.
        many: bool,
    },
    /// A profile ended with at least one interval.
    ProfileEnded {
        index: usize,
        summary: &'a ProfileSummary,
    },
    /// The run's data is complete: sinks that write files put them in
    /// place now (and report a fault). Sent before `RunEnded`.
    Closing,
    /// The run is over.
    RunEnded { status: RunStatus },
}

/// Takes events as they happen: the terminal printer, the store writer, a
/// CSV file, a test's [`Collector`], an agent's stream.
pub trait Sink {
    fn event(&mut self, ev: &Event<'_>);
    /// A write this sink could not make since it was last asked, once. A
    /// runner reports it and goes on; a profile ends on it.
    fn take_fault(&mut self) -> Option<String> {
        None
    }
}

/// Several sinks as one, in order.
pub struct Fanout<'a>(pub Vec<&'a mut dyn Sink>);

impl Sink for Fanout<'_> {
    fn event(&mut self, ev: &Event<'_>) {
        for s in self.0.iter_mut() {
            s.event(ev);
        }
    }
    fn take_fault(&mut self) -> Option<String> {
        self.0.iter_mut().find_map(|s| s.take_fault())
    }
}

/// A step as the collector saw it begin.
#[derive(Debug, Clone, PartialEq)]
pub struct BegunStep {
    pub index: usize,
    pub label: String,
    pub role: StepRole,
}

/// Keeps owned copies of what a test needs to check: a sink for tests and
/// for front ends that act after the run.
#[derive(Debug, Default)]
pub struct Collector {
    pub notices: Vec<String>,
    pub pending: Vec<BegunStep>,
    pub begun: Vec<BegunStep>,
    /// (step index, interval)
    pub intervals: Vec<(usize, Interval)>,
    /// (step index, status, summary)
    pub ended: Vec<(usize, StepStatus, Summary)>,
    pub skipped: Vec<usize>,
    pub findings: Vec<(Option<usize>, Finding)>,
    pub profile_intervals: usize,
    pub run_status: Option<RunStatus>,
}

impl Sink for Collector {
    fn event(&mut self, ev: &Event<'_>) {
        match *ev {
            Event::Notice(n) => self.notices.push(n.to_owned()),
            Event::StepPending { index, label, role } => self.pending.push(BegunStep {
                index,
                label: label.to_owned(),
                role,
            }),
            Event::StepBegun {
                index, label, role, ..
            } => self.begun.push(BegunStep {
                index,
                label: label.to_owned(),
                role,
            }),
            Event::Interval {
                index, interval, ..
            } => self.intervals.push((index, interval.clone())),
            Event::StepEnded {
                index,
                status,
                summary,
                ..
            } => self.ended.push((index, status, summary.clone())),
            Event::StepSkipped { index, finding, .. } => {
                self.skipped.push(index);
                self.findings.push((Some(index), finding.clone()));
            }
            Event::Finding { index, finding } => self.findings.push((index, finding.clone())),
            Event::ProfileInterval { .. } => self.profile_intervals += 1,
            Event::RunEnded { status } => self.run_status = Some(status),
            _ => {}
        }
    }
}
