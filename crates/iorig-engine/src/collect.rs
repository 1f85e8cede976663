//! The collector, on the run thread: takes host CPU and device samples at
//! every interval boundary on its own clock (never waiting for a worker, so
//! a worker stuck in a system call cannot skew them), gathers each worker's
//! part of each interval, and emits the intervals in order as they complete
//! ([`RunEvent::Interval`]). Memory holds only the intervals still being
//! gathered, whatever the run's length. The summary is the merge of the
//! measured intervals' histograms.

use crate::clock::IntervalPlan;
use crate::verify::{ValidationError, ValidationSummary};
use crate::worker::WorkerMsg;
use crossbeam_channel::{RecvTimeoutError, Sender};
use iorig_stats::{
    CpuSampler, CpuUsage, DeviceSampler, DeviceUsage, IntervalStats, ThreadUsage,
    WorkerIntervalStats,
};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use iorig_result::live::IntervalSample;

/// What a running workload reports.
#[derive(Debug)]
pub enum RunEvent {
    Interval(Box<IntervalSample>),
    /// A worker stopped on an I/O error.
    WorkerError {
        worker: u32,
        message: String,
    },
    /// Data read back was not what was written.
    Validation(Box<ValidationError>),
}

pub use iorig_result::live::RunOutcome;

/// One interval being gathered from the workers.
#[derive(Default)]
struct Pending {
    stats: IntervalStats,
    longest_gap_ns: u64,
    gap_start_ns: u64,
    worker_cpu_max_ns: u64,
}

/// Host CPU and device figures taken when an interval's boundary passed.
struct BoundarySample {
    end_ns: u64,
    cpu: CpuUsage,
    device: Option<DeviceUsage>,
    /// The last completion any worker had published when the boundary was
    /// sampled: a gap open at the boundary runs from there. Read then, not
    /// when the interval is emitted: a worker blocked in a synchronous I/O
    /// reports its part only once the I/O returns, by when completions have
    /// moved on and the gap it sat in looks closed.
    last_done_ns: u64,
}

/// How long to wait for a worker's part of an interval once the run is
/// stopping (a synchronous I/O may be stuck in the kernel).
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(5);

/// Where the collector sends, and what it shares with the workers.
pub(crate) struct Wiring<'a> {
    pub plan: &'a IntervalPlan,
    pub start: Instant,
    pub stop: &'a AtomicBool,
    /// Each worker's channel for its statistics buffers, sent back.
    pub spares: &'a [Sender<Box<WorkerIntervalStats>>],
    pub events: &'a Sender<RunEvent>,
    /// The latest completion of any worker, ns from the start.
    pub last_completion: &'a AtomicU64,
}

/// Collects the run's intervals from `rx` until its end (see the module);
/// `devices` are sampled at each boundary; `validation` gathers data errors
/// and stops the run at its most errors.
pub(crate) fn collect(
    wiring: Wiring<'_>,
    devices: &[String],
    rx: crossbeam_channel::Receiver<WorkerMsg>,
    validation: Option<(&mut ValidationSummary, u64)>,
) -> RunOutcome {
    let mut c = Collector::new(wiring, devices, validation);
    loop {
        let now = Instant::now();
        let now_ns = c.elapsed_ns(now);
        c.see_stop(now, now_ns);
        c.sample_boundaries(now_ns);
        c.emit_complete();
        if c.last_index.is_some_and(|l| c.emitted > l)
            || (c.w.plan.is_empty() && c.stopped.is_some())
        {
            break;
        }
        // Wait for workers' messages until the next boundary is due.
        let next_boundary = c.w.plan.end_of(c.next_sample);
        let wait = if c.stopped.is_some() {
            Duration::from_millis(20)
        } else {
            Duration::from_nanos(next_boundary.saturating_sub(now_ns))
                .min(Duration::from_millis(20))
        };
        match rx.recv_timeout(wait) {
            Ok(msg) => c.take(msg, c.emitted),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                // Every worker is gone; whatever is owed will not come.
                c.done.iter_mut().for_each(|d| *d = true);
            }
        }
        while let Ok(msg) = rx.try_recv() {
            c.take(msg, c.emitted);
        }
    }
    // Late messages (errors from draining workers) still count.
    while let Ok(msg) = rx.recv_timeout(Duration::from_millis(10)) {
        if let WorkerMsg::Interval { stats, .. } = &msg {
            c.errors += stats.errors;
        }
        c.take(msg, usize::MAX);
    }
    c.finish()
}

/// What the collector holds while the run goes on.
struct Collector<'a, 'v> {
    w: Wiring<'a>,
    validation: Option<(&'v mut ValidationSummary, u64)>,
    /// The next interval each worker owes, and whether it has ended.
    reported_upto: Vec<usize>,
    done: Vec<bool>,
    pending: BTreeMap<usize, Pending>,
    samples: BTreeMap<usize, BoundarySample>,
    cpu: Option<CpuSampler>,
    dev: DeviceSampler,
    summary: IntervalStats,
    measured_s: f64,
    cpu_usr_s: f64,
    cpu_sys_s: f64,
    cpu_steal_s: f64,
    errors: u64,
    warmup_errors: u64,
    error_messages: Vec<String>,
    worker_cpu_ns: Vec<u64>,
    thread_usage: ThreadUsage,
    journal_ns: u64,
    journal_batches: u64,
    longest_gap_ns: u64,
    longest_gap_start_ns: u64,
    emitted: usize,
    last_sample_ns: u64,
    next_sample: usize,
    /// Set when a stop request or the last worker's end cuts the run short:
    /// (ns from start, when it was seen); the interval in progress ends
    /// there.
    stopped: Option<(u64, Instant)>,
    last_index: Option<usize>,
}

impl<'a, 'v> Collector<'a, 'v> {
    fn new(
        w: Wiring<'a>,
        devices: &[String],
        validation: Option<(&'v mut ValidationSummary, u64)>,
    ) -> Self {
        let workers = w.spares.len();
        Collector {
            w,
            validation,
            reported_upto: vec![0; workers],
            done: vec![false; workers],
            pending: BTreeMap::new(),
            samples: BTreeMap::new(),
            cpu: CpuSampler::new().ok(),
            dev: DeviceSampler::new(devices),
            summary: IntervalStats::default(),
            measured_s: 0.0,
            cpu_usr_s: 0.0,
            cpu_sys_s: 0.0,
            cpu_steal_s: 0.0,
            errors: 0,
            warmup_errors: 0,
            error_messages: Vec::new(),
            worker_cpu_ns: vec![0; workers],
            thread_usage: ThreadUsage::default(),
            journal_ns: 0,
            journal_batches: 0,
            longest_gap_ns: 0,
            longest_gap_start_ns: 0,
            emitted: 0,
            last_sample_ns: 0,
            next_sample: 0,
            stopped: None,
            last_index: None,
        }
    }

    fn elapsed_ns(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.w.start).as_nanos() as u64
    }

    /// One worker message; `next_emit` is the first interval not emitted
    /// yet (a part for an earlier one is too late).
    fn take(&mut self, msg: WorkerMsg, next_emit: usize) {
        let plan = self.w.plan;
        match msg {
            WorkerMsg::Interval {
                worker,
                index,
                stats,
                cpu_ns,
                usage,
                gap_ns,
                gap_start_ns,
                journal_ns,
                journal_batches,
            } => {
                self.journal_ns += journal_ns;
                self.journal_batches += journal_batches;
                if index >= next_emit && index < plan.len() {
                    let p = self.pending.entry(index).or_default();
                    stats.merge_into(&mut p.stats);
                    if gap_ns > p.longest_gap_ns {
                        p.longest_gap_ns = gap_ns;
                        p.gap_start_ns = gap_start_ns;
                    }
                    p.worker_cpu_max_ns = p.worker_cpu_max_ns.max(cpu_ns);
                    if !plan.is_warmup(index) {
                        self.worker_cpu_ns[worker as usize] += cpu_ns;
                        self.thread_usage.add(&usage);
                    }
                } else if stats.errors > 0 {
                    // Too late for its interval (the stop grace ran out): its
                    // errors still count.
                    self.pending.entry(next_emit).or_default().stats.errors += stats.errors;
                }
                self.reported_upto[worker as usize] = index + 1;
                let _ = self.w.spares[worker as usize].try_send(stats);
            }
            WorkerMsg::Error { worker, message } => {
                self.error_messages.push(message.clone());
                let _ = self
                    .w
                    .events
                    .send(RunEvent::WorkerError { worker, message });
            }
            WorkerMsg::Validation { error, .. } => {
                if let Some((v, max_errors)) = self.validation.as_mut() {
                    v.add_error((*error).clone());
                    if v.errors >= *max_errors && !v.stopped_at_max_errors {
                        v.stopped_at_max_errors = true;
                        self.w.stop.store(true, Ordering::SeqCst);
                    }
                }
                let _ = self.w.events.send(RunEvent::Validation(error));
            }
            WorkerMsg::Done { worker } => self.done[worker as usize] = true,
        }
    }

    /// Notes the run's end once a stop is asked, every worker is done or
    /// the planned end passed (which gives a stuck worker STOP_GRACE to
    /// report, not forever).
    fn see_stop(&mut self, now: Instant, now_ns: u64) {
        let plan = self.w.plan;
        let at_end = !plan.is_empty() && now_ns >= plan.end_ns();
        let asked = self.w.stop.load(Ordering::Relaxed);
        let all_done = self.done.iter().all(|d| *d);
        if self.stopped.is_some() || !(asked || all_done || at_end) {
            return;
        }
        // Every worker ran out of work by itself (a tree's creates are all
        // made): the run ended with its last completion, not when the
        // collector saw the last worker go, so a short run's rate is not
        // diluted by the collector's wake-up.
        let last = self.w.last_completion.load(Ordering::Relaxed);
        // A last completion inside an interval already sampled would leave
        // an empty interval after it: then the run ends now.
        let in_open_interval =
            self.next_sample < plan.len() && last > plan.start_of(self.next_sample);
        let end_ns = if all_done && !asked && !at_end && last > 0 && in_open_interval {
            last.min(now_ns)
        } else {
            now_ns
        };
        self.stopped = Some((end_ns.min(plan.end_ns()), now));
    }

    /// Samples for every boundary that has passed, on the collector's own
    /// clock: the interval in progress when the run stops ends there. If the
    /// collector itself was kept from running past several boundaries (a
    /// host saturated by the workers), one sample covers them all and each
    /// gets its share, rather than the first all and the rest none.
    fn sample_boundaries(&mut self, now_ns: u64) {
        let plan = self.w.plan;
        let mut passed: Vec<(usize, u64)> = Vec::new();
        while self.last_index.is_none() && self.next_sample < plan.len() {
            let boundary = plan.end_of(self.next_sample);
            let (end_ns, last) = match self.stopped {
                Some((s, _)) if s < boundary => (s.max(plan.start_of(self.next_sample)), true),
                _ => (boundary, self.next_sample + 1 == plan.len()),
            };
            if now_ns < end_ns {
                break;
            }
            passed.push((self.next_sample, end_ns));
            if last {
                self.last_index = Some(self.next_sample);
            }
            self.next_sample += 1;
        }
        if passed.is_empty() {
            return;
        }
        let taken_ns = self.elapsed_ns(Instant::now());
        let span = Duration::from_nanos(taken_ns.saturating_sub(self.last_sample_ns));
        self.last_sample_ns = taken_ns;
        let cpu = self
            .cpu
            .as_mut()
            .and_then(|c| c.sample_over(span).ok())
            .unwrap_or_default();
        let device = if self.dev.is_empty() {
            None
        } else {
            self.dev.sample(span)
        };
        let last_done_ns = self.w.last_completion.load(Ordering::Relaxed);
        for (index, end_ns) in passed {
            let sample = BoundarySample {
                end_ns,
                cpu,
                device,
                last_done_ns,
            };
            self.samples.insert(index, sample);
        }
    }

    /// Emits, in order, every sampled interval all workers have reported
    /// (or that the stop grace gave up waiting for).
    fn emit_complete(&mut self) {
        while self.samples.contains_key(&self.emitted) {
            let k = self.emitted;
            let complete = (0..self.done.len()).all(|i| self.done[i] || self.reported_upto[i] > k);
            let given_up = self
                .stopped
                .is_some_and(|(_, at)| at.elapsed() > STOP_GRACE);
            if !complete && !given_up {
                break;
            }
            let Some(sample) = self.samples.remove(&k) else {
                break;
            };
            let p = self.pending.remove(&k).unwrap_or_default();
            self.emit(k, sample, p);
        }
    }

    /// Interval `k`, into the totals and out as an event.
    fn emit(&mut self, k: usize, sample: BoundarySample, p: Pending) {
        let plan = self.w.plan;
        let stats = p.stats;
        let duration_ns = sample.end_ns.saturating_sub(plan.start_of(k));
        let duration_s = duration_ns as f64 / 1e9;
        let warmup = plan.is_warmup(k);
        // A gap still open at the end of the interval counts up to there (a
        // device hung past the end never completes to report it). Workers
        // publish completions once a millisecond, so a shorter silence is
        // no evidence of a gap.
        let (mut gap_ns, mut gap_start_ns) = (p.longest_gap_ns, p.gap_start_ns);
        let last_done = sample.last_done_ns;
        let open_ns = sample.end_ns.saturating_sub(last_done);
        if open_ns > 2_000_000 && open_ns > gap_ns {
            gap_ns = open_ns;
            gap_start_ns = last_done;
        }
        self.errors += stats.errors;
        if warmup {
            self.warmup_errors += stats.errors;
        } else {
            self.summary.merge(&stats);
            self.measured_s += duration_s;
            self.cpu_usr_s += sample.cpu.usr_pct * duration_s;
            self.cpu_sys_s += sample.cpu.sys_pct * duration_s;
            self.cpu_steal_s += sample.cpu.steal_pct * duration_s;
            if gap_ns > self.longest_gap_ns {
                self.longest_gap_ns = gap_ns;
                self.longest_gap_start_ns = gap_start_ns;
            }
        }
        // The kernel updates a thread's schedstat lazily, so one interval
        // may borrow a little from the one before: clamp to the interval.
        let worker_busy_max_pct = if duration_ns > 0 {
            (100.0 * p.worker_cpu_max_ns as f64 / duration_ns as f64).min(100.0)
        } else {
            0.0
        };
        self.emitted += 1;
        let _ = self
            .w
            .events
            .send(RunEvent::Interval(Box::new(IntervalSample {
                index: k,
                t_s: sample.end_ns as f64 / 1e9,
                duration_s,
                warmup,
                stats,
                cpu: sample.cpu,
                device: sample.device,
                longest_gap_ns: gap_ns,
                gap_start_ns,
                worker_busy_max_pct,
            })));
    }

    /// The run's outcome from the measured intervals.
    fn finish(mut self) -> RunOutcome {
        if self.errors < self.error_messages.len() as u64 {
            self.errors = self.error_messages.len() as u64;
        }
        let measured_s = self.measured_s;
        self.summary.errors = self.errors - self.warmup_errors.min(self.errors);
        let cpu = if measured_s > 0.0 {
            CpuUsage {
                usr_pct: self.cpu_usr_s / measured_s,
                sys_pct: self.cpu_sys_s / measured_s,
                steal_pct: self.cpu_steal_s / measured_s,
            }
        } else {
            CpuUsage::default()
        };
        let worker_busy_pct = self
            .worker_cpu_ns
            .iter()
            .map(|&ns| {
                if measured_s > 0.0 {
                    (100.0 * ns as f64 / 1e9 / measured_s).min(100.0)
                } else {
                    0.0
                }
            })
            .collect();
        let ended_early = self.stopped.is_some_and(|(s, _)| s < self.w.plan.end_ns());
        RunOutcome {
            summary: self.summary,
            measured_s,
            cpu,
            errors: self.errors,
            error_messages: self.error_messages,
            ended_early,
            intervals: self.emitted,
            validation: None,
            worker_busy_pct,
            thread_usage: self.thread_usage,
            longest_gap_ns: self.longest_gap_ns,
            longest_gap_start_s: self.longest_gap_start_ns as f64 / 1e9,
            limited_bytes: None,
            journal_ns: self.journal_ns,
            journal_batches: self.journal_batches,
            notices: Vec::new(),
        }
    }
}
