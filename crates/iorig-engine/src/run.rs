//! One run of a workload, from checked targets to a stream of interval
//! samples: the orchestration. [`plan`] decides everything without writing
//! (engine choice, target checks); [`open`] creates and opens targets;
//! [`execute`] starts the workers ([`crate::pool`]) and the collector
//! ([`crate::collect`]), which emits one [`RunEvent::Interval`] at every
//! interval boundary. The shared parts (the interval plan and thread clocks,
//! the pool, the collector, target facts) live in modules of their own, so
//! the workers and the file-system runner use them without this one.

pub use crate::clock::IntervalPlan;
use crate::clock::ThreadClock;
pub use crate::collect::{IntervalSample, RunEvent, RunOutcome};
use crate::data::{DataFiller, DataPool};
use crate::engine::fault::{FaultEngine, FaultRule};
use crate::engine::mmap::MmapEngine;
use crate::engine::null::NullEngine;
use crate::engine::psync::PsyncEngine;
use crate::engine::uring::UringEngine;
use crate::gen::{AddressSpace, OffsetGen, OpGen, Segment, SizeGen};
use crate::pool::{check_cpus, Gate, Pool};
use crate::target::{self, FillProgress, OpenTarget, TargetPlan};
pub use crate::target::{CacheState, TargetInfo};
use crate::verify::{ValidationSummary, VerifyCounters, VerifySetup, VerifyWorker};
use crate::worker::{SyncTargets, WorkerCtx, WorkerMsg, DRAIN_LIMIT_NS};
use crate::EngineError;
use crossbeam_channel::{bounded, unbounded, Sender};
use iorig_spec::{EngineKind, Rate, Workload, DEFAULT_SIZE_BYTES};
use iorig_stats::WorkerIntervalStats;
use std::os::fd::AsRawFd;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

impl Prepared {
    /// The block devices under the targets, for the collector's samples.
    pub(crate) fn devices(&self) -> Vec<String> {
        self.info.iter().filter_map(|t| t.device.clone()).collect()
    }
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
        let (w, devices) = (&prepared.workload, prepared.devices());
        return crate::fs::execute(w, prepared.verify.as_ref(), &devices, ft, stop, events);
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
    // A descriptor of its own per worker and target (worker 0 keeps the
    // checked ones); shared when the open-files limit is too low.
    let (mut own_fds, shared_why) = target::worker_descriptors(&prepared.targets, workers)?;
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
    // Workers start together: each sets up its engine, then waits at the
    // barrier; an engine that fails says why.
    let mut threads = Pool::new(workers);
    let setup_failed = Arc::new(std::sync::Mutex::new(None::<String>));

    let pool = Arc::new(DataPool::new(w.data.clone(), slot_bytes, w.seed));
    // Paced workers spin the last stretch before an I/O only when each can
    // have a CPU of its own.
    let cpus_for_us = if w.cpus.is_empty() {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        w.cpus.len()
    };
    let may_spin = workers as usize <= cpus_for_us;
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
        .with_zones(w.zones)
        .with_target_order(w.target_order);
        let sizes = SizeGen::new(w, id);
        let ops = OpGen::new(w.read_pct, w.trim_pct, w.seed, id);
        let data = DataFiller::with_pool(pool.clone(), w.seed, id);
        let engine_kind = prepared.engine;
        // Worker 0 (and every worker when they share) works the checked
        // descriptors; the others their own, kept open by the thread.
        let keep: Vec<std::os::fd::OwnedFd> = match id {
            0 => Vec::new(),
            _ if own_fds.is_empty() => Vec::new(),
            _ => std::mem::take(&mut own_fds[id as usize - 1]),
        };
        let fds: Vec<i32> = if keep.is_empty() {
            fds.clone()
        } else {
            keep.iter().map(|f| f.as_raw_fd()).collect()
        };
        let qd = w.qd;
        let random_pct = w.random_pct;
        let submit_batch = w.submit_batch;
        let rules = prepared.fault_rules.clone();
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
        let sync = match (w.sync_every, w.fsync_at_end) {
            (None, false) => None,
            (rule, at_end) => {
                let files = prepared
                    .targets
                    .iter()
                    .map(|t| t.file.try_clone())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| EngineError::Io {
                        what: "opening a target again to sync it".into(),
                        source: e,
                    })?;
                Some(SyncTargets {
                    every: rule,
                    at_end,
                    files,
                })
            }
        };
        // Each worker takes an even share of each direction's cap, its
        // schedule staggered like a rate's.
        let caps = w.direction_caps.any().then(|| {
            let period = |c: Option<f64>| c.map(|iops| 1e9 * workers as f64 / iops);
            let period_ns = [
                period(w.direction_caps.read_iops),
                period(w.direction_caps.write_iops),
            ];
            crate::worker::DirectionPacer {
                period_ns,
                // From the end of the start delay, as a rate's schedule.
                next_ns: period_ns.map(|p| {
                    p.map_or(0.0, |p| {
                        w.start_delay.as_nanos() as f64 + p * id as f64 / workers as f64
                    })
                }),
                has: [w.read_pct > 0.0, 100.0 - w.read_pct - w.trim_pct > 0.0],
            }
        });
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
        // fio's cpus_allowed_policy=split: worker i on the i-th CPU alone.
        let cpus = match prepared.workload.cpus_policy {
            iorig_spec::CpuPolicy::Split if !cpus.is_empty() => {
                vec![cpus[id as usize % cpus.len()]]
            }
            _ => cpus,
        };
        threads.spawn(format!("iorig-w{id}"), cpus, move |gate: Gate| {
            // The worker's own descriptors live as long as it does.
            let _keep = keep;
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
                on_time: crate::worker::OnTime::new(may_spin),
                caps: caps.clone(),
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
                            // The collector publishes the start only after it has
                            // seen every engine's setup result.
                            let start = gate.wait_start();
                            crate::engine::IoEngine::clock_started(&mut engine, start);
                            make_ctx(start).run(engine);
                        }
                        Err(e) => {
                            if let Ok(mut f) = setup_failed.lock() {
                                f.get_or_insert(e.to_string());
                            }
                            gate.pass();
                            let ctx = make_ctx(Instant::now());
                            let _ = ctx.tx.send(WorkerMsg::Done { worker: ctx.id });
                        }
                    }
                };
            }
            match engine_kind {
                EngineKind::Null => go!(NullEngine::new(qd, slot_bytes)),
                EngineKind::Psync => go!(PsyncEngine::new(fds, qd, slot_bytes)),
                EngineKind::Mmap => go!(MmapEngine::new(fds, qd, slot_bytes, random_pct)),
                EngineKind::IoUring => go!(UringEngine::new(&fds, qd, slot_bytes)
                    .map(|e| e.with_async_submit(async_submit))),
                EngineKind::Fault => go!(FaultEngine::new(fds, qd, slot_bytes, rules)),
            }
        })?;
    }
    drop(tx);

    // Everyone is set up; if an engine failed, stop before any I/O.
    threads.all_set_up();
    let failed_setup = setup_failed.lock().ok().and_then(|f| f.clone());
    if failed_setup.is_some() {
        stop.store(true, Ordering::SeqCst);
    }
    let start = threads.start();
    if let Some(why) = failed_setup {
        threads.join();
        return Err(EngineError::Engine {
            engine: prepared.engine.name(),
            why,
        });
    }

    let mut validation = verify
        .as_ref()
        .map(|v| ValidationSummary::new(v.keys.unit_bytes() as u64));
    let max_errors = w.max_errors as u64;
    let wiring = crate::collect::Wiring {
        plan: &plan,
        start,
        stop: &stop,
        spares: &spares,
        events,
        last_completion: &last_completion,
    };
    let devices = prepared.devices();
    let limits = validation.as_mut().map(|v| (v, max_errors));
    let mut outcome = crate::collect::collect(wiring, &devices, rx, limits);
    outcome.notices.extend(shared_why);
    outcome.limited_bytes = match (prepared.byte_limit, &budget) {
        (Some(limit), Some(left)) => Some(limit - left.load(Ordering::Relaxed).min(limit)),
        _ => None,
    };
    // Workers end within their drain limit; one stuck in a system call (a
    // hung device under psync) cannot, and is left behind rather than
    // hanging the run: its results so far are in, and the process can exit.
    let deadline =
        Instant::now() + Duration::from_nanos(DRAIN_LIMIT_NS) + crate::collect::STOP_GRACE;
    for id in threads.join_by(deadline) {
        outcome.errors += 1;
        outcome.error_messages.push(format!(
            "worker {id} is stuck in a system call (the device may have hung); it was left behind"
        ));
    }
    if let Some(v) = validation.as_mut() {
        crate::verify::take_counts(v, &counters);
        v.journal_ns = outcome.journal_ns;
        v.journal_batches = outcome.journal_batches;
    }
    outcome.validation = validation;
    Ok(outcome)
}
