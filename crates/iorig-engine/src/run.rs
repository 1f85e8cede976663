//! One run of a workload, from checked targets to a stream of interval samples.
//!
//! [`plan`] decides everything without writing (engine choice, target checks);
//! [`open`] creates and opens targets; [`execute`] starts the workers and a
//! collector that, at every interval boundary, samples host CPU and device
//! counters, gathers each worker's statistics for the interval, and emits one
//! [`RunEvent::Interval`]. The summary is the merge of the measured intervals'
//! histograms.

use crate::data::{DataFiller, DataPool};
use crate::engine::fault::{FaultEngine, FaultRule};
use crate::engine::null::NullEngine;
use crate::engine::psync::PsyncEngine;
use crate::engine::uring::UringEngine;
use crate::gen::{AddressSpace, OffsetGen, OpGen, Segment, SizeGen};
use crate::target::{self, FillProgress, OpenTarget, TargetPlan};
use crate::verify::{
    ValidationError, ValidationSummary, VerifyCounters, VerifySetup, VerifyWorker,
};
use crate::worker::{WorkerCtx, WorkerMsg, DRAIN_LIMIT_NS};
use crate::EngineError;
use crossbeam_channel::{bounded, unbounded, RecvTimeoutError, Sender};
use iorig_spec::{EngineKind, Rate, Workload, DEFAULT_SIZE_BYTES};
use iorig_stats::{
    CpuSampler, CpuUsage, DeviceSampler, DeviceUsage, IntervalStats, ThreadUsage,
    WorkerIntervalStats,
};
use std::collections::BTreeMap;
use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Interval boundaries of a run, in nanoseconds from its start: warmup intervals
/// first (the last one cut short at the end of warmup), then measured ones.
/// Boundaries are computed, not stored, so a step with an open-ended time (a
/// precondition runs until its bytes are written) costs nothing up front.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalPlan {
    step_ns: u64,
    warm_ns: u64,
    total_ns: u64,
    warmup_intervals: usize,
    len: usize,
}

impl IntervalPlan {
    pub fn new(warmup: Duration, time: Duration, interval: Duration) -> Self {
        let step_ns = (interval.as_nanos().max(1)).min(u64::MAX as u128) as u64;
        let warm_ns = warmup.as_nanos().min(u64::MAX as u128 / 2) as u64;
        let time_ns = time.as_nanos().min(u64::MAX as u128 / 2) as u64;
        let warmup_intervals = warm_ns.div_ceil(step_ns) as usize;
        let measured = time_ns.div_ceil(step_ns) as usize;
        IntervalPlan {
            step_ns,
            warm_ns,
            total_ns: warm_ns + time_ns,
            warmup_intervals,
            len: warmup_intervals + measured,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// End of interval `i`; u64::MAX past the last.
    #[inline]
    pub fn end_of(&self, i: usize) -> u64 {
        if i >= self.len {
            u64::MAX
        } else if i < self.warmup_intervals {
            ((i as u64 + 1).saturating_mul(self.step_ns)).min(self.warm_ns)
        } else {
            let j = (i - self.warmup_intervals) as u64 + 1;
            self.warm_ns
                .saturating_add(j.saturating_mul(self.step_ns))
                .min(self.total_ns)
        }
    }

    pub fn start_of(&self, i: usize) -> u64 {
        if i == 0 {
            0
        } else {
            self.end_of(i - 1)
        }
    }

    pub fn end_ns(&self) -> u64 {
        if self.len == 0 {
            0
        } else {
            self.total_ns
        }
    }

    pub fn is_warmup(&self, i: usize) -> bool {
        i < self.warmup_intervals
    }
}

/// Facts about one target, for output.
#[derive(Clone, Debug, PartialEq)]
pub struct TargetInfo {
    pub path: String,
    pub kind: iorig_result::TargetKind,
    /// Usable bytes of the target (its data area).
    pub size_bytes: u64,
    pub device: Option<String>,
    /// What became of its cached pages before the step.
    pub cache: CacheState,
}

/// What became of a target's cached pages before the step
/// ([`crate::target::cache`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CacheState {
    /// Not a file or device of this host's (the null engine, a tree, an
    /// agent's target), or not yet opened.
    #[default]
    Untouched,
    /// Written back and dropped.
    Dropped,
    /// The kernel would not drop them (a device without CAP_SYS_ADMIN).
    NotDropped,
    /// Left as they were (`keep_cache`).
    Kept,
}

impl From<&TargetPlan> for TargetInfo {
    fn from(t: &TargetPlan) -> Self {
        TargetInfo {
            path: t.path.display().to_string(),
            kind: t.kind.into(),
            size_bytes: t.size_bytes,
            device: t.device.clone(),
            cache: CacheState::Untouched,
        }
    }
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
    /// The tree of a file-system workload.
    pub fs: Option<crate::fs::FsPlan>,
    /// The tree is looked at again when it is opened, under the same rule.
    allow_destroy: bool,
}

impl Planned {
    /// Each target's working set as [`open`] lays it out, known before
    /// anything is opened or created (a replay checks its trace against it).
    pub fn segments(&self) -> Result<Vec<Segment>, EngineError> {
        let w = &self.workload;
        let max_bs = w.max_bs_bytes();
        if self.engine == EngineKind::Null {
            // Offsets range over a virtual device of the requested size.
            let size = w.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES);
            let mut segs = Vec::new();
            for (i, path) in w.targets.iter().enumerate() {
                let (start, len) = target::working_set(0, size, w);
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
            }
            return Ok(segs);
        }
        Ok(self
            .targets
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let (start, len) = target::usable_range(t, w);
                Segment {
                    target: i as u32,
                    start,
                    len,
                }
            })
            .collect())
    }

    /// Scratch files that [`open`] will create (path, bytes to fill).
    pub fn files_to_create(&self) -> Vec<(String, u64)> {
        self.targets
            .iter()
            .filter(|t| !t.exists)
            .map(|t| (t.path.display().to_string(), t.size_bytes))
            .collect()
    }

    /// The targets as the run will report them: the planned ones, or the
    /// null engine's virtual targets of `--size` (1 GiB by default).
    pub fn target_infos(&self) -> Vec<TargetInfo> {
        if let Some(fs) = &self.fs {
            return vec![fs.info()];
        }
        if self.engine == EngineKind::Null {
            let size = self.workload.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES);
            return self
                .workload
                .targets
                .iter()
                .map(|path| TargetInfo {
                    path: path.clone(),
                    kind: iorig_result::TargetKind::Null,
                    size_bytes: size,
                    device: None,
                    cache: CacheState::Untouched,
                })
                .collect();
        }
        self.targets.iter().map(TargetInfo::from).collect()
    }
}

/// The seeded stream of a worker's Poisson gaps (apart from the generators'
/// streams, so arrivals never shift which offsets are visited).
const ARRIVAL_STREAM: u64 = 0xA7_7117;

/// Decides engine and targets without writing anything.
pub fn plan(w: &Workload, allow_destroy: bool) -> Result<Planned, EngineError> {
    check_cpus(w)?;
    if w.drop_caches {
        crate::target::cache::check_drop_caches()?;
    }
    if let Some(f) = &w.fs {
        return Ok(Planned {
            workload: w.clone(),
            engine: EngineKind::Psync,
            targets: Vec::new(),
            notices: Vec::new(),
            fault_rules: Vec::new(),
            fs: Some(crate::fs::plan(w, f, allow_destroy)?),
            allow_destroy,
        });
    }
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
        fs: None,
        allow_destroy,
    })
}

/// Test builds only: with `IORIG_TEST_PAUSE_DIR` set, stops at `point`
/// (creating `DIR/POINT.ready`) until `DIR/POINT.go` exists, at most a
/// minute. The safety tests use it to change a target at a known moment
/// between the checks and the first write; release builds never pause.
#[cfg(debug_assertions)]
#[doc(hidden)]
pub fn test_pause(point: &str) {
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
#[doc(hidden)]
pub fn test_pause(_point: &str) {}

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
    /// Stop issuing I/O once this many bytes were issued in all (a
    /// precondition's passes × size); workers reserve each I/O's bytes
    /// before issuing it, so the total is exact to within one I/O per worker.
    pub byte_limit: Option<u64>,
    /// Every counted I/O is sent here, in chunks, when set
    /// ([`crate::iolog`]); the channel closes when this and the workers'
    /// copies are dropped.
    pub io_records: Option<crate::iolog::IoRecordSender>,
    /// A trace replay's I/Os ([`crate::replay`]): the one worker takes its
    /// I/Os and their times from here instead of the generators, and ends
    /// when the feed does.
    pub replay: Option<crate::replay::ReplayFeed>,
    fault_rules: Vec<FaultRule>,
    /// The tree of a file-system workload ([`crate::fs::format`] before
    /// [`execute`]).
    pub fs: Option<Arc<crate::fs::FsTarget>>,
}

/// Creates missing scratch files (reporting fill progress) and opens targets.
pub fn open(
    planned: Planned,
    progress: &mut dyn FnMut(&FillProgress),
) -> Result<Prepared, EngineError> {
    let virtual_infos = planned.target_infos();
    if planned.workload.drop_caches && planned.engine != EngineKind::Null {
        crate::target::cache::drop_all_caches()?;
    }
    if let Some(fs) = planned.fs {
        let w = planned.workload;
        let target = fs.open(&w, planned.allow_destroy)?;
        // Under validation the tree is one target: each file slot a span
        // of the largest file size.
        let extents_bytes = if w.verify {
            vec![target.extent_bytes(w.verify_unit_bytes())]
        } else {
            Vec::new()
        };
        // No byte ranges: a tree's operations pick files, not offsets. The
        // one-block space keeps the fields every run has well formed.
        let bs = w.max_bs_bytes();
        let space = AddressSpace::new(
            vec![Segment {
                target: 0,
                start: 0,
                len: bs,
            }],
            bs,
            bs,
        )?;
        return Ok(Prepared {
            workload: w,
            engine: planned.engine,
            targets: Vec::new(),
            info: virtual_infos,
            space: Arc::new(space),
            extents_bytes,
            verify: None,
            byte_limit: None,
            io_records: None,
            replay: None,
            fault_rules: Vec::new(),
            fs: Some(Arc::new(target)),
        });
    }
    let segs = planned.segments()?;
    let w = planned.workload;
    let align = w.offset_align_bytes();
    let max_bs = w.max_bs_bytes();
    let (targets, info, extents_bytes) = if planned.engine == EngineKind::Null {
        // No target is opened or created: offsets range over a virtual device of
        // the requested size, so the generators do exactly what they would do.
        (Vec::new(), virtual_infos, Vec::new())
    } else {
        test_pause("open");
        let targets = target::open_targets(&planned.targets, &w, progress)?;
        let mut info = Vec::new();
        let mut extents = Vec::new();
        for t in &targets {
            extents.push(t.plan.data_start + t.plan.size_bytes);
            let mut i = TargetInfo::from(&t.plan);
            // What the step before left in the page cache is not this
            // step's to read (fio's invalidate=1).
            i.cache = if w.keep_cache {
                CacheState::Kept
            } else {
                target::cache::invalidate(t)?
            };
            info.push(i);
        }
        (targets, info, extents)
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
        byte_limit: None,
        io_records: None,
        replay: None,
        fault_rules: planned.fault_rules,
        fs: None,
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
    /// Longest time in this interval without any completion, from the
    /// completions' own timestamps (a gap that started earlier counts up to
    /// its end here; one still open counts up to the interval's end).
    pub longest_gap_ns: u64,
    /// Where that gap began, ns from the start of the run.
    pub gap_start_ns: u64,
    /// iorig's busiest worker thread over the interval: time on a CPU or
    /// waiting for one, percent of the interval (100 = it never waited for
    /// the storage).
    pub worker_busy_max_pct: f64,
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
    /// Per worker, its thread's time on a CPU or waiting for one over the
    /// measured time, percent: 100 means it never waited for the storage,
    /// so the generator set the pace.
    pub worker_busy_pct: Vec<f64>,
    /// The workers' own rusage over the measured intervals, summed (fio's
    /// per-job CPU, context switches and page faults).
    pub thread_usage: ThreadUsage,
    /// Longest time without any completion in the measured time, and where
    /// it began (seconds from the start of the run).
    pub longest_gap_ns: u64,
    pub longest_gap_start_s: f64,
    /// Bytes issued against `byte_limit`, when there is one.
    pub limited_bytes: Option<u64>,
    /// Time workers spent writing and syncing journal records, and how many
    /// batches they synced (not part of any I/O's latency).
    pub journal_ns: u64,
    pub journal_batches: u64,
    /// One line each for the user about how the run went (a file-system
    /// mix that ran out of work).
    pub notices: Vec<String>,
}

/// What a trim pass ([`trim_working_set`]) did.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrimPass {
    pub bytes: u64,
    pub duration: Duration,
    /// Ended early by a stop request.
    pub stopped: bool,
}

/// Bytes discarded per call of a trim pass, so a stop request is seen
/// between calls on a large device.
const TRIM_PASS_CHUNK_BYTES: u64 = 1 << 30;

/// Discards the whole working set of every target before a precondition
/// (its `trim = true`), as SNIA's PTS asks of flash before a test:
/// `BLKDISCARD` on block devices, punched holes in files. Nothing is done
/// for the null engine. A target that cannot discard fails the pass.
pub fn trim_working_set(prepared: &Prepared, stop: &AtomicBool) -> Result<TrimPass, EngineError> {
    let started = Instant::now();
    let mut bytes = 0u64;
    for seg in prepared.space.segments() {
        let Some(t) = prepared.targets.get(seg.target as usize) else {
            continue;
        };
        let fd = t.file.as_raw_fd();
        let mut at = seg.start;
        let end = seg.start + seg.len;
        while at < end {
            if stop.load(Ordering::Relaxed) {
                return Ok(TrimPass {
                    bytes,
                    duration: started.elapsed(),
                    stopped: true,
                });
            }
            let len = (end - at).min(TRIM_PASS_CHUNK_BYTES);
            let r = crate::engine::psync::trim_range(fd, at, len);
            if r < 0 {
                let e = std::io::Error::from_raw_os_error(i32::try_from(-r).unwrap_or(libc::EIO));
                return Err(EngineError::Usage(format!(
                    "{}: the trim pass could not discard {len} bytes at offset {at}: {e}; this target does not take discards (remove trim = true from the precondition)",
                    t.plan.path.display()
                )));
            }
            bytes += len;
            at += len;
        }
    }
    Ok(TrimPass {
        bytes,
        duration: started.elapsed(),
        stopped: false,
    })
}

/// Runs the workload to its end or until `stop` is set, sending every interval
/// on `events` as soon as it is complete.
pub fn execute(
    prepared: &Prepared,
    stop: Arc<AtomicBool>,
    events: &Sender<RunEvent>,
) -> Result<RunOutcome, EngineError> {
    if let Some(ft) = &prepared.fs {
        return crate::fs::execute(prepared, ft, stop, events);
    }
    let w = &prepared.workload;
    let plan = Arc::new(IntervalPlan::new(w.warmup, w.time, w.interval));
    let workers = w.threads;
    if prepared.replay.is_some() && (workers != 1 || w.verify || w.rate != Rate::Max) {
        return Err(EngineError::Usage(
            "a replay runs one worker, without a rate or validation: the trace sets the I/Os and their times".into(),
        ));
    }
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
            w,
        )?)),
        (_, false) => None,
    };
    let counters = Arc::new(VerifyCounters::default());
    let wall_base_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let (tx, rx) = unbounded::<WorkerMsg>();
    let mut spares = Vec::new();
    // The latest completion of any worker, ns from the start: each reap
    // measures the time since it, so the longest stretch without any
    // completion is known exactly, not in whole intervals.
    let last_completion = Arc::new(AtomicU64::new(0));
    let budget = prepared.byte_limit.map(|b| Arc::new(AtomicU64::new(b)));
    let mut handles = Vec::new();
    // Workers start together: each sets up its engine, then waits at the barrier.
    let barrier = Arc::new(std::sync::Barrier::new(workers as usize + 1));
    let start_cell = Arc::new(std::sync::OnceLock::<Instant>::new());
    let setup_failed = Arc::new(std::sync::Mutex::new(None::<String>));

    let pool = Arc::new(DataPool::new(w.data, slot_bytes, w.seed));
    for id in 0..workers {
        // Two spares: one on its way back while the worker fills the other.
        let (spare_tx, spare_rx) = bounded::<Box<WorkerIntervalStats>>(2);
        spares.push(spare_tx);
        let offsets = OffsetGen::new(
            prepared.space.clone(),
            w.dist,
            w.random_pct,
            w.max_bs_bytes(),
            id,
            workers,
            w.seed,
        )?
        .with_runs(w.run_length, w.skip_bytes)
        .with_zones(w.zones);
        let sizes = SizeGen::new(w, id);
        let ops = OpGen::new(w.read_pct, w.trim_pct, w.seed, id);
        let data = DataFiller::with_pool(pool.clone(), w.seed, id);
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
        let last_completion = last_completion.clone();
        let budget = budget.clone();
        let cpus = prepared.workload.cpus.clone();
        let (w_arrivals, think, seed) = (w.arrivals, w.think, w.seed);
        let ignore = w.ignore_errors.clone();
        // Each worker syncs through handles of its own.
        let sync = match w.sync_every {
            None => None,
            Some(rule) => {
                let files = prepared
                    .targets
                    .iter()
                    .map(|t| t.file.try_clone())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| EngineError::Io {
                        what: "opening a target again to sync it".into(),
                        source: e,
                    })?;
                Some((rule, files))
            }
        };
        let start_delay_ns = w.start_delay.as_nanos() as u64;
        let verify = verify
            .as_ref()
            .map(|v| VerifyWorker::new(v.clone(), counters.clone(), qd, wall_base_ns));
        let io_records = prepared
            .io_records
            .clone()
            .map(crate::iolog::IoRecorder::new);
        let replay = prepared
            .replay
            .as_ref()
            .map(|r| crate::replay::ReplayState::new(r.rx.clone()));
        let async_submit = prepared.replay.as_ref().is_some_and(|r| r.async_submit);
        let handle = std::thread::Builder::new()
            .name(format!("iorig-w{id}"))
            .spawn(move || {
                set_timer_slack();
                pin_to(&cpus);
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
                    poisson: (w_arrivals == iorig_spec::Arrivals::Poisson)
                        .then(|| crate::gen::rng_for(seed, id, ARRIVAL_STREAM)),
                    think,
                    start_delay_ns,
                    sync,
                    ignore: ignore.clone(),
                    ignored_sent: 0,
                    tx,
                    spare: spare_rx,
                    verify,
                    last_completion,
                    own_last_completion: 0,
                    published_completion: 0,
                    budget,
                    clock: ThreadClock::new(),
                    io_records,
                    replay,
                };
                macro_rules! go {
                    ($engine:expr) => {
                        match $engine {
                            Ok(mut engine) => {
                                barrier.wait();
                                // The collector publishes the start only after it has
                                // seen every engine's setup result.
                                let start = loop {
                                    if let Some(s) = start_cell.get() {
                                        break *s;
                                    }
                                    std::thread::yield_now();
                                };
                                crate::engine::IoEngine::clock_started(&mut engine, start);
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
                    EngineKind::IoUring => go!(UringEngine::new(&fds, qd, slot_bytes)
                        .map(|e| e.with_async_submit(async_submit))),
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
        &last_completion,
    );
    outcome.limited_bytes = match (prepared.byte_limit, &budget) {
        (Some(limit), Some(left)) => Some(limit - left.load(Ordering::Relaxed).min(limit)),
        _ => None,
    };
    // Workers end within their drain limit; one stuck in a system call (a
    // hung device under psync) cannot, and is left behind rather than
    // hanging the run: its results so far are in, and the process can exit.
    let deadline = Instant::now() + Duration::from_nanos(DRAIN_LIMIT_NS) + STOP_GRACE;
    for (id, h) in handles.into_iter().enumerate() {
        while !h.is_finished() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if h.is_finished() {
            let _ = h.join();
        } else {
            outcome.errors += 1;
            outcome.error_messages.push(format!(
                "worker {id} is stuck in a system call (the device may have hung); it was left behind"
            ));
        }
    }
    if let Some(v) = validation.as_mut() {
        v.take_counts(&counters);
        v.journal_ns = outcome.journal_ns;
        v.journal_batches = outcome.journal_batches;
    }
    outcome.validation = validation;
    Ok(outcome)
}

fn tx_done(ctx: &WorkerCtx) -> Result<(), crossbeam_channel::SendError<WorkerMsg>> {
    ctx.tx.send(WorkerMsg::Done { worker: ctx.id })
}

/// How long the calling thread has been on a CPU or waiting in a run queue
/// for one, ns: a worker for which this grows as fast as the wall clock
/// never waited for the storage, whether it ran (one saturated worker) or
/// was kept from running (more workers than CPUs). From the kernel's
/// per-thread `schedstat` (run time and run-queue wait); where that is
/// missing, the thread's CPU clock alone.
pub(crate) struct ThreadClock {
    schedstat: Option<std::fs::File>,
    /// The thread's rusage when [`ThreadClock::usage_delta`] was last asked.
    usage: ThreadUsage,
}

impl ThreadClock {
    /// Call on the thread to be measured.
    pub(crate) fn new() -> Self {
        ThreadClock {
            schedstat: std::fs::File::open("/proc/thread-self/schedstat").ok(),
            usage: thread_usage(),
        }
    }

    /// The thread's rusage counts since the last call (or since `new`).
    pub(crate) fn usage_delta(&mut self) -> ThreadUsage {
        let now = thread_usage();
        let delta = now.since(&self.usage);
        self.usage = now;
        delta
    }

    pub(crate) fn busy_ns(&mut self) -> u64 {
        if let Some(f) = &self.schedstat {
            use std::os::unix::fs::FileExt;
            let mut buf = [0u8; 96];
            if let Ok(n) = f.read_at(&mut buf, 0) {
                let text = std::str::from_utf8(&buf[..n]).unwrap_or("");
                let mut fields = text.split_whitespace().map(|v| v.parse::<u64>().ok());
                if let (Some(Some(run)), Some(Some(wait))) = (fields.next(), fields.next()) {
                    return run.saturating_add(wait);
                }
            }
            self.schedstat = None;
        }
        thread_cpu_ns()
    }
}

/// The calling thread's rusage (`RUSAGE_THREAD`); zeros if the call fails.
fn thread_usage() -> ThreadUsage {
    // SAFETY: an all-zero rusage is a valid value (integers and timevals).
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one rusage through a valid pointer to a local.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return ThreadUsage::default();
    }
    let ns = |t: libc::timeval| {
        (t.tv_sec.max(0) as u64).saturating_mul(1_000_000_000) + t.tv_usec.max(0) as u64 * 1_000
    };
    let count = |v: libc::c_long| v.max(0) as u64;
    ThreadUsage {
        usr_ns: ns(ru.ru_utime),
        sys_ns: ns(ru.ru_stime),
        ctx: count(ru.ru_nvcsw) + count(ru.ru_nivcsw),
        minflt: count(ru.ru_minflt),
        majflt: count(ru.ru_majflt),
    }
}

/// CPU time (usr+sys) of the calling thread, ns; 0 if the clock is missing.
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer to a
    // local; CLOCK_THREAD_CPUTIME_ID needs nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64
}

/// Keeps the calling worker thread on `cpus` (none: anywhere). The set was
/// checked against the process's own when the run was planned.
pub(crate) fn pin_to(cpus: &[usize]) {
    if cpus.is_empty() {
        return;
    }
    let mut set = rustix::thread::CpuSet::new();
    for c in cpus {
        set.set(*c);
    }
    // A CPU taken offline since planning leaves the worker where it is.
    let _ = rustix::thread::sched_setaffinity(None, &set);
}

/// The workload's CPUs must be ones this process may run on.
fn check_cpus(w: &Workload) -> Result<(), EngineError> {
    if w.cpus.is_empty() {
        return Ok(());
    }
    let allowed = rustix::thread::sched_getaffinity(None)
        .map_err(|e| EngineError::Usage(format!("--cpus: reading this process's CPUs: {e}")))?;
    let missing: Vec<String> = w
        .cpus
        .iter()
        .filter(|c| !allowed.is_set(**c))
        .map(|c| c.to_string())
        .collect();
    if !missing.is_empty() {
        let mut have = Vec::new();
        for c in 0..rustix::thread::CpuSet::MAX_CPU {
            if allowed.is_set(c) {
                have.push(c.to_string());
            }
        }
        return Err(EngineError::Usage(format!(
            "--cpus names CPU(s) {} that this process may not run on; it may run on {}",
            missing.join(","),
            have.join(",")
        )));
    }
    Ok(())
}

/// Lets sleeps under a rate limit wake within microseconds, not the default 50.
pub(crate) fn set_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and only affects the
    // calling thread's timer slack; no memory is passed.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

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
const STOP_GRACE: Duration = Duration::from_secs(5);

/// The collector, on the run thread: takes host CPU and device samples at
/// every boundary on its own clock (never waiting for a worker, so a worker
/// stuck in a system call cannot skew them), gathers each worker's part of
/// each interval, and emits the intervals in order as they complete. Memory
/// holds only the intervals still being gathered, whatever the run's length.
#[allow(clippy::too_many_arguments)]
pub(crate) fn collect(
    prepared: &Prepared,
    plan: &IntervalPlan,
    start: Instant,
    stop: &AtomicBool,
    rx: crossbeam_channel::Receiver<WorkerMsg>,
    spares: &[Sender<Box<WorkerIntervalStats>>],
    events: &Sender<RunEvent>,
    mut validation: Option<(&mut ValidationSummary, u64)>,
    last_completion: &AtomicU64,
) -> RunOutcome {
    let workers = spares.len();
    let mut reported_upto = vec![0usize; workers]; // next interval each worker owes
    let mut done = vec![false; workers];
    let mut pending: BTreeMap<usize, Pending> = BTreeMap::new();
    let mut samples: BTreeMap<usize, BoundarySample> = BTreeMap::new();
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
    let mut cpu_steal_s = 0.0;
    let mut errors = 0u64;
    let mut warmup_errors = 0u64;
    let mut error_messages = Vec::new();
    let mut worker_cpu_ns = vec![0u64; workers];
    let mut thread_usage = ThreadUsage::default();
    let mut journal_ns = 0u64;
    let mut journal_batches = 0u64;
    let mut longest_gap_ns = 0u64;
    let mut longest_gap_start_ns = 0u64;
    let mut emitted = 0usize;
    let mut last_sample_ns = 0u64;
    let mut next_sample = 0usize;
    // Set when a stop request or the last worker's end cuts the run short:
    // (ns from start, when it was seen) — the interval in progress ends there.
    let mut stopped: Option<(u64, Instant)> = None;
    let mut last_index: Option<usize> = None;

    let elapsed_ns = |at: Instant| at.saturating_duration_since(start).as_nanos() as u64;

    let mut handle = |msg: WorkerMsg,
                      pending: &mut BTreeMap<usize, Pending>,
                      reported_upto: &mut Vec<usize>,
                      done: &mut Vec<bool>,
                      error_messages: &mut Vec<String>,
                      worker_cpu_ns: &mut Vec<u64>,
                      next_emit: usize| match msg {
        WorkerMsg::Interval {
            worker,
            index,
            stats,
            cpu_ns,
            usage,
            gap_ns,
            gap_start_ns,
            journal_ns: jn,
            journal_batches: jb,
        } => {
            journal_ns += jn;
            journal_batches += jb;
            if index >= next_emit && index < plan.len() {
                let p = pending.entry(index).or_default();
                stats.merge_into(&mut p.stats);
                if gap_ns > p.longest_gap_ns {
                    p.longest_gap_ns = gap_ns;
                    p.gap_start_ns = gap_start_ns;
                }
                p.worker_cpu_max_ns = p.worker_cpu_max_ns.max(cpu_ns);
                if !plan.is_warmup(index) {
                    worker_cpu_ns[worker as usize] += cpu_ns;
                    thread_usage.add(&usage);
                }
            } else if stats.errors > 0 {
                // Too late for its interval (the stop grace ran out): its
                // errors still count.
                pending.entry(next_emit).or_default().stats.errors += stats.errors;
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

    // One call for every message, whatever the place in the loop.
    macro_rules! take {
        ($msg:expr, $next_emit:expr) => {
            handle(
                $msg,
                &mut pending,
                &mut reported_upto,
                &mut done,
                &mut error_messages,
                &mut worker_cpu_ns,
                $next_emit,
            )
        };
    }

    loop {
        let now = Instant::now();
        let now_ns = elapsed_ns(now);
        // The planned end counts as a stop too: a worker stuck in a system
        // call then gets STOP_GRACE to report, not forever.
        let at_end = !plan.is_empty() && now_ns >= plan.end_ns();
        let asked = stop.load(Ordering::Relaxed);
        let all_done = done.iter().all(|d| *d);
        if stopped.is_none() && (asked || all_done || at_end) {
            // Every worker ran out of work by itself (a tree's creates are
            // all made): the run ended with its last completion, not when
            // the collector saw the last worker go, so a short run's rate
            // is not diluted by the collector's wake-up.
            let last = last_completion.load(Ordering::Relaxed);
            // A last completion inside an interval already sampled would
            // leave an empty interval after it: then the run ends now.
            let in_open_interval = next_sample < plan.len() && last > plan.start_of(next_sample);
            let end_ns = if all_done && !asked && !at_end && last > 0 && in_open_interval {
                last.min(now_ns)
            } else {
                now_ns
            };
            stopped = Some((end_ns.min(plan.end_ns()), now));
        }

        // Samples for every boundary that has passed, on the collector's own
        // clock: the interval in progress when the run stops ends there. If
        // the collector itself was kept from running past several boundaries
        // (a host saturated by the workers), one sample covers them all and
        // each gets its share, rather than the first all and the rest none.
        let mut passed: Vec<(usize, u64, bool)> = Vec::new();
        while last_index.is_none() && next_sample < plan.len() {
            let boundary = plan.end_of(next_sample);
            let (end_ns, last) = match stopped {
                Some((s, _)) if s < boundary => (s.max(plan.start_of(next_sample)), true),
                _ => (boundary, next_sample + 1 == plan.len()),
            };
            if now_ns < end_ns {
                break;
            }
            passed.push((next_sample, end_ns, last));
            if last {
                last_index = Some(next_sample);
            }
            next_sample += 1;
        }
        if !passed.is_empty() {
            let taken_ns = elapsed_ns(Instant::now());
            let span = Duration::from_nanos(taken_ns.saturating_sub(last_sample_ns));
            last_sample_ns = taken_ns;
            let cpu_usage = cpu
                .as_mut()
                .and_then(|c| c.sample_over(span).ok())
                .unwrap_or_default();
            let device = if dev.is_empty() {
                None
            } else {
                dev.sample(span)
            };
            let last_done_ns = last_completion.load(Ordering::Relaxed);
            for (index, end_ns, _) in passed {
                samples.insert(
                    index,
                    BoundarySample {
                        end_ns,
                        cpu: cpu_usage,
                        device,
                        last_done_ns,
                    },
                );
            }
        }

        // Emit, in order, every sampled interval all workers have reported.
        while samples.contains_key(&emitted) {
            let k = emitted;
            let complete = (0..workers).all(|i| done[i] || reported_upto[i] > k);
            let given_up = stopped.is_some_and(|(_, at)| at.elapsed() > STOP_GRACE);
            if !complete && !given_up {
                break;
            }
            let Some(sample) = samples.remove(&k) else {
                break;
            };
            let p = pending.remove(&k).unwrap_or_default();
            let stats = p.stats;
            let duration_ns = sample.end_ns.saturating_sub(plan.start_of(k));
            let duration_s = duration_ns as f64 / 1e9;
            let warmup = plan.is_warmup(k);
            // A gap still open at the end of the interval counts up to there
            // (a device hung past the end never completes to report it).
            // Workers publish completions once a millisecond, so a shorter
            // silence is no evidence of a gap.
            let (mut gap_ns, mut gap_start_ns) = (p.longest_gap_ns, p.gap_start_ns);
            let last_done = sample.last_done_ns;
            let open_ns = sample.end_ns.saturating_sub(last_done);
            if open_ns > 2_000_000 && open_ns > gap_ns {
                gap_ns = open_ns;
                gap_start_ns = last_done;
            }
            errors += stats.errors;
            if warmup {
                warmup_errors += stats.errors;
            } else {
                summary.merge(&stats);
                measured_s += duration_s;
                cpu_usr_s += sample.cpu.usr_pct * duration_s;
                cpu_sys_s += sample.cpu.sys_pct * duration_s;
                cpu_steal_s += sample.cpu.steal_pct * duration_s;
                if gap_ns > longest_gap_ns {
                    longest_gap_ns = gap_ns;
                    longest_gap_start_ns = gap_start_ns;
                }
            }
            // The kernel updates a thread's schedstat lazily, so one interval
            // may borrow a little from the one before: clamp to the interval.
            let worker_busy_max_pct = if duration_ns > 0 {
                (100.0 * p.worker_cpu_max_ns as f64 / duration_ns as f64).min(100.0)
            } else {
                0.0
            };
            emitted += 1;
            let _ = events.send(RunEvent::Interval(Box::new(IntervalSample {
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
        if last_index.is_some_and(|l| emitted > l) || (plan.is_empty() && stopped.is_some()) {
            break;
        }

        // Wait for workers' messages until the next boundary is due.
        let next_boundary = plan.end_of(next_sample);
        let wait = if stopped.is_some() {
            Duration::from_millis(20)
        } else {
            Duration::from_nanos(next_boundary.saturating_sub(now_ns))
                .min(Duration::from_millis(20))
        };
        match rx.recv_timeout(wait) {
            Ok(msg) => take!(msg, emitted),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => {
                // Every worker is gone; whatever is owed will not come.
                for d in done.iter_mut() {
                    *d = true;
                }
            }
        }
        while let Ok(msg) = rx.try_recv() {
            take!(msg, emitted);
        }
    }
    // Late messages (errors from draining workers) still count.
    while let Ok(msg) = rx.recv_timeout(Duration::from_millis(10)) {
        if let WorkerMsg::Interval { stats, .. } = &msg {
            errors += stats.errors;
        }
        take!(msg, usize::MAX);
    }
    if errors < error_messages.len() as u64 {
        errors = error_messages.len() as u64;
    }
    summary.errors = errors - warmup_errors.min(errors);
    let cpu = if measured_s > 0.0 {
        CpuUsage {
            usr_pct: cpu_usr_s / measured_s,
            sys_pct: cpu_sys_s / measured_s,
            steal_pct: cpu_steal_s / measured_s,
        }
    } else {
        CpuUsage::default()
    };
    let worker_busy_pct = worker_cpu_ns
        .iter()
        .map(|&ns| {
            if measured_s > 0.0 {
                (100.0 * ns as f64 / 1e9 / measured_s).min(100.0)
            } else {
                0.0
            }
        })
        .collect();
    let ended_early = stopped.is_some_and(|(s, _)| s < plan.end_ns());
    RunOutcome {
        summary,
        measured_s,
        cpu,
        errors,
        error_messages,
        ended_early,
        intervals: emitted,
        validation: None,
        worker_busy_pct,
        thread_usage,
        longest_gap_ns,
        longest_gap_start_s: longest_gap_start_ns as f64 / 1e9,
        limited_bytes: None,
        journal_ns,
        journal_batches,
        notices: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_worker_runs_only_on_its_cpus() {
        let allowed = rustix::thread::sched_getaffinity(None).expect("affinity");
        let first = (0..rustix::thread::CpuSet::MAX_CPU)
            .find(|c| allowed.is_set(*c))
            .expect("a CPU");
        let seen = std::thread::spawn(move || {
            pin_to(&[first]);
            let now = rustix::thread::sched_getaffinity(None).expect("affinity");
            (0..rustix::thread::CpuSet::MAX_CPU)
                .filter(|c| now.is_set(*c))
                .collect::<Vec<_>>()
        })
        .join()
        .expect("thread");
        assert_eq!(seen, vec![first]);
    }

    #[test]
    fn interval_plan_with_warmup() {
        let p = IntervalPlan::new(
            Duration::from_millis(1500),
            Duration::from_millis(2500),
            Duration::from_secs(1),
        );
        let s = 1_000_000_000u64;
        let ends: Vec<u64> = (0..p.len()).map(|i| p.end_of(i)).collect();
        assert_eq!(ends, vec![s, 3 * s / 2, 5 * s / 2, 7 * s / 2, 4 * s]);
        assert_eq!(p.end_of(5), u64::MAX);
        assert!(p.is_warmup(0) && p.is_warmup(1) && !p.is_warmup(2));
        assert_eq!(p.end_ns(), 4 * s);
        assert_eq!(p.start_of(2), 3 * s / 2);
    }

    #[test]
    fn an_open_ended_plan_costs_nothing_up_front() {
        // A precondition's 1000 h at 100 ms: 36 million intervals, computed.
        let p = IntervalPlan::new(
            Duration::ZERO,
            Duration::from_secs(1000 * 3600),
            Duration::from_millis(100),
        );
        assert_eq!(p.len(), 36_000_000);
        assert_eq!(p.end_of(35_999_999), 1000 * 3600 * 1_000_000_000);
        assert_eq!(p.end_of(7), 800_000_000);
        assert!(std::mem::size_of_val(&p) <= 64);
        // An interval that does not divide the time: the last one is short.
        let p = IntervalPlan::new(
            Duration::ZERO,
            Duration::from_millis(2500),
            Duration::from_secs(1),
        );
        assert_eq!(p.len(), 3);
        assert_eq!(p.end_of(2), 2_500_000_000);
    }
}
