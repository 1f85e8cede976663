//! One run of a workload, from checked targets to a stream of interval samples.
//!
//! [`plan`] decides everything without writing (engine choice, target checks);
//! [`open`] creates and opens targets; [`execute`] starts the workers and a
//! collector that, at every interval boundary, samples host CPU and device
//! counters, gathers each worker's statistics for the interval, and emits one
//! [`RunEvent::Interval`]. The summary is the merge of the measured intervals'
//! histograms.

use crate::data::DataFiller;
use crate::engine::fault::{FaultEngine, FaultRule};
use crate::engine::null::NullEngine;
use crate::engine::psync::PsyncEngine;
use crate::engine::uring::UringEngine;
use crate::gen::{AddressSpace, OffsetGen, OpGen, Segment, SizeGen};
use crate::target::{self, FillProgress, OpenTarget, TargetKind, TargetPlan};
use crate::verify::{
    ValidationError, ValidationSummary, VerifyCounters, VerifySetup, VerifyWorker,
};
use crate::worker::{WorkerCtx, WorkerMsg};
use crate::EngineError;
use crossbeam_channel::{bounded, unbounded, RecvTimeoutError, Sender};
use iorig_spec::{EngineKind, Rate, Workload, DEFAULT_SIZE_BYTES};
use iorig_stats::{CpuSampler, CpuUsage, DeviceSampler, DeviceUsage, IntervalStats};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Interval boundaries of a run, in nanoseconds from its start: warmup intervals
/// first (the last one cut short at the end of warmup), then measured ones.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalPlan {
    ends_ns: Vec<u64>,
    warmup_intervals: usize,
}

impl IntervalPlan {
    pub fn new(warmup: Duration, time: Duration, interval: Duration) -> Self {
        let step = interval.as_nanos().max(1) as u64;
        let warm = warmup.as_nanos() as u64;
        let total = warm + time.as_nanos() as u64;
        let mut ends = Vec::new();
        let mut t = 0;
        while t < warm {
            t = (t + step).min(warm);
            ends.push(t);
        }
        let warmup_intervals = ends.len();
        while t < total {
            t = (t + step).min(total);
            ends.push(t);
        }
        IntervalPlan {
            ends_ns: ends,
            warmup_intervals,
        }
    }

    pub fn len(&self) -> usize {
        self.ends_ns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends_ns.is_empty()
    }

    /// End of interval `i`; u64::MAX past the last.
    #[inline]
    pub fn end_of(&self, i: usize) -> u64 {
        self.ends_ns.get(i).copied().unwrap_or(u64::MAX)
    }

    pub fn start_of(&self, i: usize) -> u64 {
        if i == 0 {
            0
        } else {
            self.end_of(i - 1)
        }
    }

    pub fn end_ns(&self) -> u64 {
        self.ends_ns.last().copied().unwrap_or(0)
    }

    pub fn is_warmup(&self, i: usize) -> bool {
        i < self.warmup_intervals
    }
}

/// Facts about one target, for output.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetInfo {
    pub path: String,
    pub kind: &'static str,
    /// Usable bytes of the target (its data area).
    pub size_bytes: u64,
    pub device: Option<String>,
}

/// A run decided but not started: nothing has been written yet.
#[derive(Debug)]
pub struct Planned {
    pub workload: Workload,
    /// The engine that will run (io_uring may have fallen back to psync).
    pub engine: EngineKind,
    pub targets: Vec<TargetPlan>,
    /// One line each, for the user (e.g. the io_uring fallback).
    pub notices: Vec<String>,
    fault_rules: Vec<FaultRule>,
}

impl Planned {
    /// Scratch files that [`open`] will create (path, bytes to fill).
    pub fn files_to_create(&self) -> Vec<(String, u64)> {
        self.targets
            .iter()
            .filter(|t| !t.exists)
            .map(|t| (t.path.display().to_string(), t.size_bytes))
            .collect()
    }
}

/// Decides engine and targets without writing anything.
pub fn plan(w: &Workload, allow_destroy: bool) -> Result<Planned, EngineError> {
    let mut notices = Vec::new();
    let mut engine = w.engine;
    if engine == EngineKind::IoUring {
        if let Err(why) = UringEngine::probe() {
            if w.qd > 1 {
                return Err(EngineError::Usage(format!(
                    "io_uring is unavailable ({why}) and psync keeps one I/O in flight per worker; use --qd 1 with --threads {} instead of --qd {}",
                    w.threads as u64 * w.qd as u64,
                    w.qd
                )));
            }
            notices.push(format!("io_uring unavailable ({why}); using psync"));
            engine = EngineKind::Psync;
        }
    }
    let fault_rules = w
        .fault
        .iter()
        .map(|r| FaultRule::parse(r))
        .collect::<Result<Vec<_>, _>>()?;
    let targets = if engine == EngineKind::Null {
        Vec::new()
    } else {
        target::plan_targets(w, allow_destroy)?
    };
    Ok(Planned {
        workload: w.clone(),
        engine,
        targets,
        notices,
        fault_rules,
    })
}

/// Test builds only: with `IORIG_TEST_PAUSE_DIR` set, stops at `point`
/// (creating `DIR/POINT.ready`) until `DIR/POINT.go` exists, at most a
/// minute. The safety tests use it to change a target at a known moment
/// between the checks and the first write; release builds never pause.
#[cfg(debug_assertions)]
fn test_pause(point: &str) {
    let Some(dir) = std::env::var_os("IORIG_TEST_PAUSE_DIR") else {
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let _ = std::fs::write(dir.join(format!("{point}.ready")), b"");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !dir.join(format!("{point}.go")).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(not(debug_assertions))]
fn test_pause(_point: &str) {}

/// A run ready to start: targets created and open.
#[derive(Debug)]
pub struct Prepared {
    pub workload: Workload,
    pub engine: EngineKind,
    pub targets: Vec<OpenTarget>,
    pub info: Vec<TargetInfo>,
    pub space: Arc<AddressSpace>,
    /// Per target, the end of its data area (bytes from offset 0): what a
    /// validation key map must cover.
    pub extents_bytes: Vec<u64>,
    /// Validation state for a `verify` workload; [`execute`] makes a fresh
    /// key map when the caller gave none.
    pub verify: Option<Arc<VerifySetup>>,
    fault_rules: Vec<FaultRule>,
}

/// Creates missing scratch files (reporting fill progress) and opens targets.
pub fn open(
    planned: Planned,
    progress: &mut dyn FnMut(&FillProgress),
) -> Result<Prepared, EngineError> {
    let w = planned.workload;
    let align = w.offset_align_bytes();
    let max_bs = w.max_bs_bytes();
    let (targets, info, segs, extents_bytes) = if planned.engine == EngineKind::Null {
        // No target is opened or created: offsets range over a virtual device of
        // the requested size, so the generators do exactly what they would do.
        let size = w.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES);
        let mut info = Vec::new();
        let mut segs = Vec::new();
        for (i, path) in w.targets.iter().enumerate() {
            let (start, len) = target::working_set(0, size, &w);
            if len == 0 || len < max_bs {
                return Err(EngineError::Usage(format!(
                    "bs {} is larger than the range of {path}; use a smaller --bs, a wider --range or a larger --size",
                    iorig_spec::format_size(max_bs)
                )));
            }
            segs.push(Segment {
                target: i as u32,
                start,
                len,
            });
            info.push(TargetInfo {
                path: path.clone(),
                kind: "null",
                size_bytes: size,
                device: None,
            });
        }
        (Vec::new(), info, segs, Vec::new())
    } else {
        test_pause("open");
        let targets = target::open_targets(&planned.targets, &w, progress)?;
        let mut info = Vec::new();
        let mut segs = Vec::new();
        let mut extents = Vec::new();
        for (i, t) in targets.iter().enumerate() {
            extents.push(t.plan.data_start + t.plan.size_bytes);
            let (start, len) = target::usable_range(&t.plan, &w);
            segs.push(Segment {
                target: i as u32,
                start,
                len,
            });
            info.push(TargetInfo {
                path: t.plan.path.display().to_string(),
                kind: match t.plan.kind {
                    TargetKind::File => "file",
                    TargetKind::Block => "block",
                },
                size_bytes: t.plan.size_bytes,
                device: t.plan.device.clone(),
            });
        }
        (targets, info, segs, extents)
    };
    let space = Arc::new(AddressSpace::new(segs, align, max_bs)?);
    Ok(Prepared {
        workload: w,
        engine: planned.engine,
        targets,
        info,
        space,
        extents_bytes,
        verify: None,
        fault_rules: planned.fault_rules,
    })
}

/// One interval of the run, all workers merged.
#[derive(Debug)]
pub struct IntervalSample {
    pub index: usize,
    /// Seconds from the start of the run to the end of this interval.
    pub t_s: f64,
    pub duration_s: f64,
    pub warmup: bool,
    pub stats: IntervalStats,
    pub cpu: CpuUsage,
    pub device: Option<DeviceUsage>,
}

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

/// The end of a run.
#[derive(Debug)]
pub struct RunOutcome {
    /// Merged statistics of the measured (non-warmup) intervals.
    pub summary: IntervalStats,
    /// Seconds covered by the measured intervals.
    pub measured_s: f64,
    /// Mean CPU use over the measured intervals (time-weighted).
    pub cpu: CpuUsage,
    /// Every I/O error, warmup included (`summary.errors` counts the measured
    /// time only).
    pub errors: u64,
    pub error_messages: Vec<String>,
    /// Ended before the planned time (stop request or every worker failed).
    pub ended_early: bool,
    pub intervals: usize,
    /// Data validation results (`verify` workloads).
    pub validation: Option<ValidationSummary>,
}

/// Runs the workload to its end or until `stop` is set, sending every interval
/// on `events` as soon as it is complete.
pub fn execute(
    prepared: &Prepared,
    stop: Arc<AtomicBool>,
    events: &Sender<RunEvent>,
) -> Result<RunOutcome, EngineError> {
    let w = &prepared.workload;
    let plan = Arc::new(IntervalPlan::new(w.warmup, w.time, w.interval));
    let workers = w.threads;
    let slot_bytes = w.max_bs_bytes() as usize;
    let fds: Vec<i32> = prepared
        .targets
        .iter()
        .map(|t| t.file.as_raw_fd())
        .collect();
    let names = Arc::new(
        prepared
            .info
            .iter()
            .map(|t| t.path.clone())
            .collect::<Vec<_>>(),
    );
    let period_ns = match w.rate {
        Rate::Max => None,
        Rate::Iops(r) => Some(1e9 * workers as f64 / r),
    };
    let verify = match (&prepared.verify, w.verify) {
        (Some(v), true) => Some(v.clone()),
        (None, true) => Some(Arc::new(VerifySetup::fresh(
            w.verify_unit_bytes() as u32,
            &prepared.extents_bytes,
            w.verify_after,
            w.seed,
        )?)),
        (_, false) => None,
    };
    let counters = Arc::new(VerifyCounters::default());
    let wall_base_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let (tx, rx) = unbounded::<WorkerMsg>();
    let mut spares = Vec::new();
    let mut handles = Vec::new();
    // Workers start together: each sets up its engine, then waits at the barrier.
    let barrier = Arc::new(std::sync::Barrier::new(workers as usize + 1));
    let start_cell = Arc::new(std::sync::OnceLock::<Instant>::new());
    let setup_failed = Arc::new(std::sync::Mutex::new(None::<String>));

    for id in 0..workers {
        let (spare_tx, spare_rx) = bounded::<Box<IntervalStats>>(4);
        spares.push(spare_tx);
        let offsets = OffsetGen::new(
            prepared.space.clone(),
            w.dist,
            w.random_pct,
            w.max_bs_bytes(),
            id,
            workers,
            w.seed,
        )?;
        let sizes = SizeGen::new(w, id);
        let ops = OpGen::new(w.read_pct, w.seed, id);
        let data = DataFiller::new(w.data, slot_bytes, w.seed, id);
        let engine_kind = prepared.engine;
        let fds = fds.clone();
        let qd = w.qd;
        let submit_batch = w.submit_batch;
        let rules = prepared.fault_rules.clone();
        let barrier = barrier.clone();
        let start_cell = start_cell.clone();
        let setup_failed = setup_failed.clone();
        let plan = plan.clone();
        let stop = stop.clone();
        let tx = tx.clone();
        let names = names.clone();
        let verify = verify
            .as_ref()
            .map(|v| VerifyWorker::new(v.clone(), counters.clone(), qd, wall_base_ns));
        let handle = std::thread::Builder::new()
            .name(format!("iorig-w{id}"))
            .spawn(move || {
                set_timer_slack();
                let make_ctx = |start: Instant| WorkerCtx {
                    id,
                    qd,
                    submit_batch,
                    offsets,
                    sizes,
                    ops,
                    data,
                    target_names: names,
                    start,
                    plan,
                    stop,
                    period_ns,
                    phase_ns: period_ns.map_or(0.0, |p| p * id as f64 / workers as f64),
                    tx,
                    spare: spare_rx,
                    verify,
                };
                macro_rules! go {
                    ($engine:expr) => {
                        match $engine {
                            Ok(engine) => {
                                barrier.wait();
                                // The collector publishes the start only after it has
                                // seen every engine's setup result.
                                let start = loop {
                                    if let Some(s) = start_cell.get() {
                                        break *s;
                                    }
                                    std::thread::yield_now();
                                };
                                make_ctx(start).run(engine);
                            }
                            Err(e) => {
                                if let Ok(mut f) = setup_failed.lock() {
                                    f.get_or_insert(e.to_string());
                                }
                                barrier.wait();
                                let _ = tx_done(&make_ctx(Instant::now()));
                            }
                        }
                    };
                }
                match engine_kind {
                    EngineKind::Null => go!(NullEngine::new(qd, slot_bytes)),
                    EngineKind::Psync => go!(PsyncEngine::new(fds, qd, slot_bytes)),
                    EngineKind::IoUring => go!(UringEngine::new(&fds, qd, slot_bytes)),
                    EngineKind::Fault => go!(FaultEngine::new(fds, qd, slot_bytes, rules)),
                }
            })
            .map_err(|e| EngineError::Io {
                what: "starting a worker thread".into(),
                source: e,
            })?;
        handles.push(handle);
    }
    drop(tx);

    // Everyone is set up; if an engine failed, stop before any I/O.
    barrier.wait();
    let failed_setup = setup_failed.lock().ok().and_then(|f| f.clone());
    if failed_setup.is_some() {
        stop.store(true, Ordering::SeqCst);
    }
    let start = Instant::now();
    let _ = start_cell.set(start);
    if let Some(why) = failed_setup {
        for h in handles {
            let _ = h.join();
        }
        return Err(EngineError::Engine {
            engine: prepared.engine.name(),
            why,
        });
    }

    let mut validation = verify
        .as_ref()
        .map(|v| ValidationSummary::new(v.keys.unit_bytes() as u64));
    let max_errors = w.max_errors as u64;
    let mut outcome = collect(
        prepared,
        &plan,
        start,
        &stop,
        rx,
        &spares,
        events,
        validation.as_mut().map(|v| (v, max_errors)),
    );
    for h in handles {
        let _ = h.join();
    }
    if let Some(v) = validation.as_mut() {
        v.take_counts(&counters);
    }
    outcome.validation = validation;
    Ok(outcome)
}

fn tx_done(ctx: &WorkerCtx) -> Result<(), crossbeam_channel::SendError<WorkerMsg>> {
    ctx.tx.send(WorkerMsg::Done { worker: ctx.id })
}

/// Lets sleeps under a rate limit wake within microseconds, not the default 50.
fn set_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and only affects the
    // calling thread's timer slack; no memory is passed.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

/// Per-interval bookkeeping of the collector.
struct Pending {
    stats: IntervalStats,
}

#[allow(clippy::too_many_arguments)]
fn collect(
    prepared: &Prepared,
    plan: &IntervalPlan,
    start: Instant,
    stop: &AtomicBool,
    rx: crossbeam_channel::Receiver<WorkerMsg>,
    spares: &[Sender<Box<IntervalStats>>],
    events: &Sender<RunEvent>,
    mut validation: Option<(&mut ValidationSummary, u64)>,
) -> RunOutcome {
    let workers = spares.len();
    let mut reported_upto = vec![0usize; workers]; // next interval each worker owes
    let mut done = vec![false; workers];
    let mut pending: Vec<Option<Pending>> = (0..plan.len()).map(|_| None).collect();
    let mut cpu = CpuSampler::new().ok();
    let devices: Vec<String> = prepared
        .info
        .iter()
        .filter_map(|t| t.device.clone())
        .collect();
    let mut dev = DeviceSampler::new(&devices);
    let mut summary = IntervalStats::default();
    let mut measured_s = 0.0;
    let mut cpu_usr_s = 0.0;
    let mut cpu_sys_s = 0.0;
    let mut errors = 0u64;
    let mut warmup_errors = 0u64;
    let mut error_messages = Vec::new();
    let mut ended_early = false;
    let mut emitted = 0usize;
    let mut last_sample_ns = 0u64;

    let mut handle = |msg: WorkerMsg,
                      pending: &mut Vec<Option<Pending>>,
                      reported_upto: &mut Vec<usize>,
                      done: &mut Vec<bool>,
                      error_messages: &mut Vec<String>| match msg {
        WorkerMsg::Interval {
            worker,
            index,
            stats,
        } => {
            if let Some(slot) = pending.get_mut(index) {
                let p = slot.get_or_insert_with(|| Pending {
                    stats: IntervalStats::default(),
                });
                p.stats.merge(&stats);
            }
            reported_upto[worker as usize] = index + 1;
            let _ = spares[worker as usize].try_send(stats);
        }
        WorkerMsg::Error { worker, message } => {
            error_messages.push(message.clone());
            let _ = events.send(RunEvent::WorkerError { worker, message });
        }
        WorkerMsg::Validation { error, .. } => {
            if let Some((v, max_errors)) = validation.as_mut() {
                v.add_error((*error).clone());
                if v.errors >= *max_errors && !v.stopped_at_max_errors {
                    v.stopped_at_max_errors = true;
                    stop.store(true, Ordering::SeqCst);
                }
            }
            let _ = events.send(RunEvent::Validation(error));
        }
        WorkerMsg::Done { worker } => done[worker as usize] = true,
    };

    for k in 0..plan.len() {
        // Wait for the boundary, staying responsive to a stop request.
        let boundary = start + Duration::from_nanos(plan.end_of(k));
        let mut stopped_at = None;
        loop {
            let now = Instant::now();
            if now >= boundary {
                break;
            }
            if stop.load(Ordering::Relaxed) || done.iter().all(|d| *d) {
                stopped_at = Some(now);
                break;
            }
            let wait = (boundary - now).min(Duration::from_millis(20));
            match rx.recv_timeout(wait) {
                Ok(msg) => handle(
                    msg,
                    &mut pending,
                    &mut reported_upto,
                    &mut done,
                    &mut error_messages,
                ),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    if done.iter().all(|d| *d) {
                        stopped_at = Some(Instant::now());
                        break;
                    }
                }
            }
        }
        let end_ns = match stopped_at {
            Some(t) => (t - start).as_nanos() as u64,
            None => plan.end_of(k),
        };
        let elapsed = Duration::from_nanos(end_ns.saturating_sub(last_sample_ns));
        last_sample_ns = end_ns;
        let cpu_usage = cpu
            .as_mut()
            .and_then(|c| c.sample().ok())
            .unwrap_or_default();
        let dev_usage = if dev.is_empty() {
            None
        } else {
            dev.sample(elapsed)
        };

        // Gather every worker's part of interval k. Workers wake at boundaries,
        // so this is quick unless a synchronous I/O is stuck in the kernel.
        let grace = Duration::from_secs(5);
        let gather_start = Instant::now();
        while !(0..workers).all(|i| done[i] || reported_upto[i] > k) {
            let waited = gather_start.elapsed();
            if stopped_at.is_some() && waited > grace {
                break;
            }
            match rx.recv_timeout(Duration::from_millis(50)) {
                Ok(msg) => handle(
                    msg,
                    &mut pending,
                    &mut reported_upto,
                    &mut done,
                    &mut error_messages,
                ),
                Err(RecvTimeoutError::Timeout) => {
                    if stop.load(Ordering::Relaxed) && stopped_at.is_none() && waited > grace {
                        break;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let stats = pending[k].take().map(|p| p.stats).unwrap_or_default();
        let duration_s = (end_ns - plan.start_of(k)) as f64 / 1e9;
        let warmup = plan.is_warmup(k);
        errors += stats.errors;
        if warmup {
            warmup_errors += stats.errors;
        } else {
            summary.merge(&stats);
            measured_s += duration_s;
            cpu_usr_s += cpu_usage.usr_pct * duration_s;
            cpu_sys_s += cpu_usage.sys_pct * duration_s;
        }
        emitted += 1;
        let _ = events.send(RunEvent::Interval(Box::new(IntervalSample {
            index: k,
            t_s: end_ns as f64 / 1e9,
            duration_s,
            warmup,
            stats,
            cpu: cpu_usage,
            device: dev_usage,
        })));
        if stopped_at.is_some() {
            ended_early = true;
            break;
        }
    }
    // Late messages (errors from draining workers) still count.
    while let Ok(msg) = rx.recv_timeout(Duration::from_millis(10)) {
        if let WorkerMsg::Interval { stats, .. } = &msg {
            errors += stats.errors;
        }
        handle(
            msg,
            &mut pending,
            &mut reported_upto,
            &mut done,
            &mut error_messages,
        );
    }
    if errors < error_messages.len() as u64 {
        errors = error_messages.len() as u64;
    }
    summary.errors = errors - warmup_errors.min(errors);
    let cpu = if measured_s > 0.0 {
        CpuUsage {
            usr_pct: cpu_usr_s / measured_s,
            sys_pct: cpu_sys_s / measured_s,
        }
    } else {
        CpuUsage::default()
    };
    RunOutcome {
        summary,
        measured_s,
        cpu,
        errors,
        error_messages,
        ended_early,
        intervals: emitted,
        validation: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_plan_with_warmup() {
        let p = IntervalPlan::new(
            Duration::from_millis(1500),
            Duration::from_millis(2500),
            Duration::from_secs(1),
        );
        let s = 1_000_000_000u64;
        assert_eq!(p.ends_ns, vec![s, 3 * s / 2, 5 * s / 2, 7 * s / 2, 4 * s]);
        assert!(p.is_warmup(0) && p.is_warmup(1) && !p.is_warmup(2));
        assert_eq!(p.end_ns(), 4 * s);
        assert_eq!(p.start_of(2), 3 * s / 2);
    }
}
