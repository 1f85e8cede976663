//! File-system workloads: a tree of directories and files under an anchor
//! directory, and metadata and data operations run in it by worker threads
//! (vdbench's fsd/fwd, mdtest, elbencho).
//!
//! The same three steps as a block run: [`plan`] checks the anchor and
//! writes nothing (a directory, writable, empty or holding only an iorig
//! tree, room for the tree); `run::open` builds the [`FsTarget`];
//! [`format`] brings the tree to its shape, measured on its own; then
//! `run::execute` runs [`execute`]'s workers under the block run's
//! collector, so intervals, CPU and device figures come the same way.
//! iorig only ever touches names of its own tree, so a directory left with
//! something else in it is never emptied.

mod beneath;
mod format;
mod ops;
pub mod tree;
mod worker;

pub use format::{cleanup, format, FormatOutcome, FormatProgress};
pub use tree::{Found, Shape, Tree, MARKER};

use crate::buffers::AlignedBuffers;
use crate::clock::IntervalPlan;
use crate::collect::{RunEvent, RunOutcome};
use crate::data::{DataFiller, DataPool};
use crate::gen::SizeGen;
use crate::pool::{Gate, Pool};
use crate::target::TargetInfo;
use crate::verify::{ValidationSummary, VerifyCounters, VerifySetup, VerifyWorker};
use crate::worker::WorkerMsg;
use crate::EngineError;
use crossbeam_channel::{bounded, unbounded, Sender};
use iorig_spec::{format_bytes, FormatMode, FsOp, FsWorkload, SyncMode, Workload};
use iorig_stats::WorkerIntervalStats;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A tree decided but not touched.
#[derive(Debug)]
pub struct FsPlan {
    pub tree: Tree,
    pub found: Found,
    /// Stall rules for tests (`--fault stall:after=N:ms=M`).
    pub stalls: Vec<crate::engine::fault::FaultRule>,
}

/// The tree of a prepared run.
#[derive(Debug)]
pub struct FsTarget {
    pub tree: Arc<Tree>,
    /// What the format phase does (`once` is `yes`: the runner turns it
    /// into `restart` after a run's first step).
    pub mode: FormatMode,
    /// The anchor already holds this tree's marker.
    pub marked: bool,
    /// The shape of an earlier tree in the anchor that the format replaces.
    pub old_shape: Option<Shape>,
    /// Stall rules for tests, applied by each worker to its own operations.
    pub stalls: Vec<crate::engine::fault::FaultRule>,
    /// The tree's directories, opened beneath the anchor (which it holds
    /// locked for the run).
    dirs: Arc<beneath::Beneath>,
    /// O_DIRECT, unless the file system refused it at the format.
    direct: AtomicBool,
    sync: SyncMode,
    pool: Arc<DataPool>,
}

impl FsTarget {
    pub fn direct(&self) -> bool {
        self.direct.load(Ordering::Relaxed)
    }

    /// Opens the marker with O_DIRECT: a file system that refuses it
    /// (tmpfs before Linux 6.6, some FUSE) is used buffered, with a notice.
    fn probe_direct(&self, notices: &mut Vec<String>) {
        if !self.direct() {
            return;
        }
        let flags = rustix::fs::OFlags::RDONLY
            | rustix::fs::OFlags::DIRECT
            | rustix::fs::OFlags::NOFOLLOW
            | rustix::fs::OFlags::CLOEXEC;
        if let Err(e) =
            rustix::fs::openat(self.dirs.anchor(), MARKER, flags, rustix::fs::Mode::empty())
        {
            if e == rustix::io::Errno::INVAL {
                self.direct.store(false, Ordering::Relaxed);
                notices.push(format!(
                    "the file system of {} does not take O_DIRECT; its files are used buffered (through the page cache)",
                    self.tree.anchor.display()
                ));
            }
        }
    }

    fn data_io(
        &self,
        w: &Workload,
        thread: u32,
        verify: Option<&Validation>,
    ) -> Result<DataIo, EngineError> {
        Ok(DataIo {
            buf: AlignedBuffers::new(1, w.max_bs_bytes() as usize)?,
            data: DataFiller::with_pool(self.pool.clone(), w.seed, thread),
            bs: SizeGen::new(w, thread),
            direct: self.direct(),
            sync: self.sync,
            stale: true,
            verify: verify
                .map(|v| VerifyWorker::new(v.setup.clone(), v.counters.clone(), 1, v.wall_base_ns)),
            vbase: 0,
            errors: Vec::new(),
        })
    }

    /// Bytes of the validation target each file slot takes: the largest
    /// file size, in whole validation units.
    pub fn span_bytes(&self, unit_bytes: u64) -> u64 {
        self.tree
            .max_file_bytes()
            .div_ceil(unit_bytes.max(1))
            .max(1)
            * unit_bytes.max(1)
    }

    /// The validation target's size: every slot's span.
    pub fn extent_bytes(&self, unit_bytes: u64) -> u64 {
        self.tree.slots * self.span_bytes(unit_bytes)
    }
}

/// What validating workers of a tree share.
pub(crate) struct Validation {
    pub setup: Arc<VerifySetup>,
    pub counters: Arc<VerifyCounters>,
    pub wall_base_ns: u64,
}

impl Validation {
    pub fn new(setup: Arc<VerifySetup>) -> Validation {
        Validation {
            setup,
            counters: Arc::new(VerifyCounters::default()),
            wall_base_ns: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
        }
    }
}

use ops::DataIo;

/// Checks the anchor and the room the tree needs; writes nothing.
pub fn plan(w: &Workload, f: &FsWorkload, allow_destroy: bool) -> Result<FsPlan, EngineError> {
    let mut stalls = Vec::new();
    for r in &w.fault {
        match crate::engine::fault::FaultRule::parse(r)? {
            rule @ crate::engine::fault::FaultRule::Stall {
                when: crate::engine::fault::FaultTrigger::After(_),
                ..
            } => stalls.push(rule),
            other => {
                return Err(EngineError::Usage(format!(
                    "fault rule {other}: a file-system workload takes only stall:after=N:ms=M"
                )))
            }
        }
    }
    let tree = Tree::new(f)?;
    let anchor = tree.anchor.clone();
    let found = tree::inspect(&anchor, allow_destroy)?;
    let same = matches!(&found, Found::Tree { shape, .. } if *shape == tree.shape);
    if f.format == FormatMode::No {
        match &found {
            Found::Empty => {
                return Err(EngineError::Usage(format!(
                    "format = no uses an existing tree, but {} holds none; leave --format out (restart builds what is missing)",
                    anchor.display()
                )))
            }
            Found::Tree { shape, .. } if !same => {
                return Err(EngineError::Usage(format!(
                    "format = no uses the tree in {} as it is, but that tree has depth {}, width {}, files {}, file size {}; give that shape, or --format yes to rebuild it",
                    anchor.display(),
                    shape.depth,
                    shape.width,
                    shape.files,
                    shape.file_size
                )))
            }
            Found::Tree { .. } => {}
        }
    }
    // A new or rebuilt tree must fit; an existing one was checked when it
    // was made.
    if !same || matches!(f.format, FormatMode::Yes | FormatMode::Once) {
        let makes_files = f.format != FormatMode::Dirs || f.ops.has(FsOp::Create);
        let bytes = if makes_files { tree.total_bytes() } else { 0 };
        let dir_slots = if f.ops.has(FsOp::Mkdir) {
            tree.slots
        } else {
            0
        };
        let inodes = tree.dirs_in_order().len() as u64 + tree.slots + dir_slots + 1;
        // The tree there now goes first (another shape, or `yes`): its
        // room counts as free.
        let (old_bytes, old_inodes) = match &found {
            Found::Tree { shape, .. } => {
                let old = Tree::of_shape(&anchor, shape)?;
                (
                    old.total_bytes(),
                    old.dirs_in_order().len() as u64 + old.slots,
                )
            }
            Found::Empty => (0, 0),
        };
        check_room(
            &anchor,
            bytes.saturating_sub(old_bytes),
            inodes.saturating_sub(old_inodes),
        )?;
    }
    Ok(FsPlan {
        tree,
        found,
        stalls,
    })
}

/// Refuses a tree the anchor's file system has no room for (statvfs).
fn check_room(anchor: &std::path::Path, bytes: u64, inodes: u64) -> Result<(), EngineError> {
    let Ok(st) = rustix::fs::statvfs(anchor) else {
        return Ok(());
    };
    let free = st.f_bavail.saturating_mul(st.f_frsize);
    if bytes > free {
        return Err(EngineError::Usage(format!(
            "the tree needs {} but the file system of {} has {} free; make it smaller (--files, --file-size, --width, --depth or --total-size) or use another directory",
            format_bytes(bytes),
            anchor.display(),
            format_bytes(free)
        )));
    }
    // Some file systems (btrfs) report no inode count: nothing to check.
    if st.f_files > 0 && inodes > st.f_favail {
        return Err(EngineError::Usage(format!(
            "the tree needs {inodes} inodes but the file system of {} has {} free; make it smaller (--files, --width or --depth) or use another directory",
            anchor.display(),
            st.f_favail
        )));
    }
    Ok(())
}

impl FsPlan {
    /// The anchor as the run reports it.
    pub fn info(&self) -> TargetInfo {
        TargetInfo {
            path: self.tree.anchor.display().to_string(),
            kind: iorig_result::TargetKind::Directory,
            size_bytes: self.tree.total_bytes(),
            device: iorig_blockdev::device_for_path(&self.tree.anchor),
            cache: crate::target::CacheState::Untouched,
        }
    }

    /// Looks at the anchor again (it may have changed since the plan) and
    /// makes the run's target.
    pub fn open(self, w: &Workload, allow_destroy: bool) -> Result<FsTarget, EngineError> {
        let f =
            w.fs.as_ref()
                .ok_or_else(|| EngineError::Usage("not a file-system workload".into()))?;
        let found = tree::inspect(&self.tree.anchor, allow_destroy)?;
        let (marked, old_shape) = match found {
            Found::Empty => (false, None),
            Found::Tree { shape, .. } if shape == self.tree.shape => (true, None),
            Found::Tree { shape, .. } => (true, Some(shape)),
        };
        if f.format == FormatMode::No && (!marked || old_shape.is_some()) {
            return Err(EngineError::Usage(format!(
                "the tree in {} changed since the run was planned; run again",
                self.tree.anchor.display()
            )));
        }
        let mode = match f.format {
            FormatMode::Once => FormatMode::Yes,
            m => m,
        };
        let dirs = beneath::Beneath::open(&self.tree)?;
        dirs.lock()?;
        Ok(FsTarget {
            dirs: Arc::new(dirs),
            tree: Arc::new(self.tree),
            mode,
            marked,
            old_shape,
            stalls: self.stalls,
            direct: AtomicBool::new(w.direct),
            sync: w.sync,
            pool: Arc::new(DataPool::new(
                w.data.clone(),
                w.max_bs_bytes() as usize,
                w.seed,
            )),
        })
    }
}

/// Runs the operations until the planned time, a stop request, or until
/// the mix has nothing left to do (every slot full for a create-only mix);
/// intervals go out on `events` as block runs' do.
pub(crate) fn execute(
    w: &Workload,
    verify: Option<&Arc<VerifySetup>>,
    devices: &[String],
    ft: &FsTarget,
    stop: Arc<AtomicBool>,
    events: &Sender<RunEvent>,
) -> Result<RunOutcome, EngineError> {
    let f =
        w.fs.as_ref()
            .ok_or_else(|| EngineError::Usage("not a file-system workload".into()))?;
    let plan = Arc::new(IntervalPlan::new(w.warmup, w.time, w.interval));
    let workers = w.threads;
    let shared = Arc::new(worker::Shared::default());
    let unit = w.verify_unit_bytes();
    let validation = match (verify, w.verify) {
        (Some(v), true) => Some(Validation::new(v.clone())),
        (None, true) => Some(Validation::new(Arc::new(VerifySetup::fresh(
            unit as u32,
            &[ft.extent_bytes(unit)],
            w,
        )?))),
        (_, false) => None,
    };
    let span = ft.span_bytes(unit);
    let (tx, rx) = unbounded::<WorkerMsg>();
    let mut spares = Vec::new();
    let mut threads = Pool::new(workers);
    // Every worker's buffers before the first starts: a failure here must
    // not leave started workers waiting at the barrier.
    let dios = (0..workers)
        .map(|id| ft.data_io(w, id, validation.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    for (id, dio) in (0..workers).zip(dios) {
        let (spare_tx, spare_rx) = bounded::<Box<WorkerIntervalStats>>(2);
        spares.push(spare_tx);
        let tree = ft.tree.clone();
        let dirs = ft.dirs.clone();
        let plan = plan.clone();
        let stop = stop.clone();
        let tx = tx.clone();
        let shared = shared.clone();
        let w = w.clone();
        let f = f.clone();
        let stalls = ft.stalls.clone();
        let cpus = w.cpus.clone();
        threads.spawn(format!("iorig-fs{id}"), cpus, move |gate: Gate| {
            let start = gate.wait_start();
            match worker::FsWorker::new(
                id,
                workers,
                tree,
                dirs,
                &w,
                &f,
                dio,
                start,
                plan,
                stop,
                tx.clone(),
                spare_rx,
                shared,
            ) {
                Ok(wk) => wk.with_stalls(stalls).with_span(span).run(),
                Err(e) => {
                    let _ = tx.send(WorkerMsg::Error {
                        worker: id,
                        message: e.to_string(),
                    });
                    let _ = tx.send(WorkerMsg::Done { worker: id });
                }
            }
        })?;
    }
    drop(tx);
    threads.all_set_up();
    let start = threads.start();
    let mut summary = validation
        .as_ref()
        .map(|v| ValidationSummary::new(u64::from(v.setup.keys.unit_bytes())));
    let wiring = crate::collect::Wiring {
        plan: &plan,
        start,
        stop: &stop,
        spares: &spares,
        events,
        last_completion: &shared.last_completion,
    };
    let limits = summary.as_mut().map(|s| (s, u64::from(w.max_errors)));
    let mut outcome = crate::collect::collect(wiring, devices, rx, limits);
    // A worker stuck in a system call (a hung NFS server) is left behind
    // rather than hanging the run, as block workers are.
    for id in threads.join_by(Instant::now() + Duration::from_secs(15)) {
        outcome.errors += 1;
        outcome.error_messages.push(format!(
            "worker {id} is stuck in a system call (the file system may have hung); it was left behind"
        ));
    }
    if let (Some(s), Some(v)) = (summary.as_mut(), &validation) {
        crate::verify::take_counts(s, &v.counters);
    }
    outcome.validation = summary;
    for op in FsOp::ALL {
        let n = shared.no_slot[op.index()].load(Ordering::Relaxed);
        if n > 0 {
            outcome.notices.push(format!(
                "{op} found no {} to work on {n} time{}",
                match op {
                    FsOp::Create => "empty file slot",
                    FsOp::Mkdir => "empty directory slot",
                    FsOp::Rmdir => "directory",
                    _ => "file",
                },
                if n == 1 { "" } else { "s" }
            ));
        }
    }
    let dry = shared.ended_dry.load(Ordering::Relaxed);
    if dry > 0 && !shared.exhausted.load(Ordering::Relaxed) {
        if let iorig_spec::Rate::Iops(r) = w.rate {
            // Each worker keeps its own schedule of rate / workers.
            outcome.notices.push(format!(
                "{dry} of {workers} workers found nothing left to work on and ended early, taking their share of --rate {r} with them; give fewer --threads or more --files to hold the rate"
            ));
        }
    }
    if shared.exhausted.load(Ordering::Relaxed) {
        outcome.notices.push(format!(
            "the step ended early, after {:.3} s: nothing was left for {} to work on",
            outcome.measured_s, f.ops
        ));
    }
    Ok(outcome)
}
