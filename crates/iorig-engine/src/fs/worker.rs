//! A file-system worker: draws operations from the mix, picks their slots,
//! runs them one at a time, and reports each interval to the collector the
//! way block workers do.
//!
//! Under `--rate` every operation of the mix is due on a schedule (each
//! transfer of a read or write session is one), and its latency counts from
//! when it was due: an operation the storage kept waiting is late, and the
//! lateness is the storage's (no coordinated omission). The opens and
//! closes around a session and the writes inside a create ride along:
//! counted and timed, not scheduled.

use super::beneath::Beneath;
use super::ops::{self, At, DataIo, Offsets, OpSink, Req};
use super::tree::{Tree, Want};
use crate::clock::{IntervalPlan, ThreadClock};
use crate::gen::{below, rng_for, unit_f64, DistSampler};
use crate::worker::WorkerMsg;
use crossbeam_channel::{Receiver, Sender};
use iorig_spec::{FileIo, FileSelect, FsOp};
use iorig_stats::{WorkerIntervalStats, WorkerOpStats};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Slots looked at from a drawn one before drawing again.
const PROBE: u64 = 64;
/// Draws of a slot before the slots are scanned in a row.
const DRAWS: u32 = 8;
/// Slots scanned in a row when the draws found none.
const SCAN: u64 = 1 << 20;

/// Counts shared by a run's workers.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Operations drawn that found no slot to work on, by kind.
    pub no_slot: [AtomicU64; FsOp::COUNT],
    /// The latest completion of any worker (ns from start).
    pub last_completion: AtomicU64,
    /// Set by the worker that found the mix has nothing left to do.
    pub exhausted: AtomicBool,
    /// Workers that ended before the others because they found nothing
    /// to take.
    pub ended_dry: std::sync::atomic::AtomicU32,
}

/// How a worker picks slots.
pub(crate) enum Select {
    Random,
    /// This worker's share of the slots, walked in order.
    Sequential {
        from: u64,
        len: u64,
        next: u64,
    },
    Skewed(DistSampler),
}

/// The measuring half of a worker: its schedule, its interval statistics
/// and what it sends the collector. Operations report to it as their
/// [`OpSink`].
pub(crate) struct Meter {
    pub id: u32,
    pub start: Instant,
    pub plan: Arc<IntervalPlan>,
    pub stop: Arc<AtomicBool>,
    pub period_ns: Option<f64>,
    pub next_due: f64,
    pub tx: Sender<WorkerMsg>,
    pub spare: Receiver<Box<WorkerIntervalStats>>,
    pub shared: Arc<Shared>,
    pub stats: Box<WorkerIntervalStats>,
    pub index: usize,
    pub next_boundary: u64,
    pub end_ns: u64,
    pub clock: ThreadClock,
    pub cpu_start_ns: u64,
    pub gap_ns: u64,
    pub gap_start_ns: u64,
    pub own_last_completion: u64,
    /// The completion time last published to `shared.last_completion`.
    pub published_completion: u64,
}

pub(crate) struct FsWorker {
    pub meter: Meter,
    pub dio: DataIo,
    pub tree: Arc<Tree>,
    /// The tree's directories, opened beneath the anchor.
    pub dirs: Arc<Beneath>,
    /// Cumulative shares of the mix (to 100).
    pub mix: Vec<(FsOp, f64)>,
    pub rng: Xoshiro256PlusPlus,
    pub select: Select,
    pub fileio: FileIo,
    pub stopafter: Option<u32>,
    /// Operations left before the worker ends (`passes` × its share of
    /// the files), when the workload counts passes.
    pub ops_left: Option<u64>,
    /// Offsets of random transfers are multiples of this.
    pub align: u64,
    /// Transfers of a random session without `stopafter`: the file's size
    /// over the mean transfer size (of reads, of writes).
    pub mean_bs: [f64; 2],
    /// Test stalls: (operations before it, ms), each once.
    stalls: Vec<(u64, u64)>,
    /// Bytes of the validation target per file slot.
    span: u64,
    /// Operations of the mix this worker has drawn.
    drawn: u64,
}

impl FsWorker {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        id: u32,
        workers: u32,
        tree: Arc<Tree>,
        dirs: Arc<Beneath>,
        w: &iorig_spec::Workload,
        f: &iorig_spec::FsWorkload,
        dio: DataIo,
        start: Instant,
        plan: Arc<IntervalPlan>,
        stop: Arc<AtomicBool>,
        tx: Sender<WorkerMsg>,
        spare: Receiver<Box<WorkerIntervalStats>>,
        shared: Arc<Shared>,
    ) -> Result<FsWorker, crate::EngineError> {
        let mut cum = 0.0;
        let mix = f
            .ops
            .ops
            .iter()
            .map(|(op, share)| {
                cum += share;
                (*op, cum)
            })
            .collect();
        let slots = tree.slots;
        let select = match f.fileselect {
            FileSelect::Random => Select::Random,
            FileSelect::Sequential => {
                let from = slots * u64::from(id) / u64::from(workers);
                let to = slots * (u64::from(id) + 1) / u64::from(workers);
                Select::Sequential {
                    from,
                    len: (to - from).max(1),
                    next: 0,
                }
            }
            FileSelect::Skewed(d) => Select::Skewed(DistSampler::new(d, slots, w.seed)?),
        };
        // `passes`: as many operations as the worker's share has files,
        // that many times (in order, with fileselect sequential).
        let ops_left = match (&select, f.passes) {
            (Select::Sequential { len, .. }, Some(p)) => Some(p.saturating_mul(*len)),
            _ => None,
        };
        let period_ns = match w.rate {
            iorig_spec::Rate::Max => None,
            iorig_spec::Rate::Iops(r) => Some(1e9 * f64::from(workers) / r),
        };
        let next_due = period_ns.map_or(0.0, |p| p * f64::from(id) / f64::from(workers));
        let mut clock = ThreadClock::new();
        let cpu_start_ns = clock.busy_ns();
        let mean = |b: &iorig_spec::BsSpec| {
            let total_w: f64 = b.sizes.iter().map(|s| f64::from(s.1)).sum();
            let m = b
                .sizes
                .iter()
                .map(|(s, wt)| *s as f64 * f64::from(*wt))
                .sum::<f64>()
                / total_w.max(1.0);
            m.max(1.0)
        };
        let mean_bs = [mean(w.read_sizes()), mean(w.write_sizes())];
        Ok(FsWorker {
            meter: Meter {
                id,
                start,
                end_ns: plan.end_ns(),
                next_boundary: plan.end_of(0),
                plan,
                stop,
                period_ns,
                next_due,
                tx,
                spare,
                shared,
                stats: Box::new(WorkerIntervalStats::for_fs()),
                index: 0,
                clock,
                cpu_start_ns,
                gap_ns: 0,
                gap_start_ns: 0,
                own_last_completion: 0,
                published_completion: 0,
            },
            dio,
            tree,
            dirs,
            mix,
            rng: rng_for(w.seed, id, 11),
            select,
            fileio: f.fileio,
            stopafter: f.stopafter,
            ops_left,
            // Under validation no transfer covers part of a unit.
            align: w.offset_align_bytes().max(1),
            mean_bs,
            stalls: Vec::new(),
            drawn: 0,
            span: 0,
        })
    }

    /// Where each file starts in the validation target.
    pub fn with_span(mut self, span: u64) -> FsWorker {
        self.span = span;
        self
    }

    /// `stall:after=N:ms=M` rules: this worker's operation N+1 waits M ms
    /// before it is carried out (a slow operation, for tests of latency
    /// under a rate). Other forms were refused at the plan.
    pub fn with_stalls(mut self, rules: Vec<crate::engine::fault::FaultRule>) -> FsWorker {
        use crate::engine::fault::{FaultRule, FaultTrigger};
        self.stalls = rules
            .into_iter()
            .filter_map(|r| match r {
                FaultRule::Stall {
                    when: FaultTrigger::After(n),
                    ms,
                } => Some((n, ms)),
                _ => None,
            })
            .collect();
        self
    }

    /// Runs to the plan's end, a stop request, an error, or until the mix
    /// has nothing left to do.
    pub fn run(mut self) {
        // Operations in a row that found nothing to work on.
        let mut dry = 0u32;
        loop {
            let now = self.meter.now_ns();
            self.meter.advance(now);
            if self.meter.stopping(now) || self.meter.shared.exhausted.load(Ordering::Relaxed) {
                break;
            }
            let Some(sched) = self.meter.sched(now) else {
                continue;
            };
            let op = self.draw();
            self.drawn += 1;
            if let Some(i) = self.stalls.iter().position(|(n, _)| self.drawn == n + 1) {
                let (_, ms) = self.stalls.swap_remove(i);
                std::thread::sleep(Duration::from_millis(ms));
            }
            match self.run_op(op, sched) {
                Ok(true) => {
                    dry = 0;
                    if let Some(n) = self.ops_left.as_mut() {
                        *n -= 1;
                        if *n == 0 {
                            break;
                        }
                    }
                }
                Ok(false) => {
                    self.meter.shared.no_slot[op.index()].fetch_add(1, Ordering::Relaxed);
                    if self.nothing_left() {
                        self.meter.shared.exhausted.store(true, Ordering::Relaxed);
                        break;
                    }
                    dry += 1;
                    // Every operation of the mix looked at every slot and
                    // found none it could take (the rest are being worked
                    // on by others): this worker is done, as a fio job
                    // that has processed its files exits.
                    if dry >= 4 * self.mix.len() as u32 {
                        self.meter.shared.ended_dry.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                }
                Err(message) => {
                    self.meter.stats.errors += 1;
                    let _ = self.meter.tx.send(WorkerMsg::Error {
                        worker: self.meter.id,
                        message,
                    });
                    break;
                }
            }
        }
        self.dio.flush_counts();
        self.meter.finish();
    }

    /// Sends the validation errors the last operation found, each with the
    /// file it was found in and its offset in that file.
    fn report_validation(&mut self, slot: u64) {
        if self.dio.errors.is_empty() {
            return;
        }
        let file = self.tree.file_path(slot);
        let base = slot * self.span;
        let t_s = self.meter.now_ns() as f64 / 1e9;
        for (path, mut error) in std::mem::take(&mut self.dio.errors) {
            error.offset_bytes = error.offset_bytes.saturating_sub(base);
            if let Some(o) = error.found_offset_bytes.as_mut() {
                if *o >= base && *o < base + self.span {
                    *o -= base;
                }
            }
            let path = if path.as_os_str().is_empty() {
                &file
            } else {
                &path
            };
            let _ = self.meter.tx.send(WorkerMsg::Validation {
                error: Box::new(crate::verify::ValidationError {
                    t_s,
                    target_path: path.display().to_string(),
                    error,
                }),
            });
        }
    }

    fn draw(&mut self) -> FsOp {
        let u = unit_f64(&mut self.rng) * 100.0;
        self.mix
            .iter()
            .find(|(_, cum)| u < *cum)
            .or(self.mix.last())
            .map_or(FsOp::Read, |m| m.0)
    }

    /// Every operation of the mix has nothing to work on.
    fn nothing_left(&self) -> bool {
        self.mix.iter().all(|(op, _)| match want_of(*op) {
            Some(w) => self.tree.none_for(w),
            None => false,
        })
    }

    fn candidate(&mut self) -> u64 {
        let slots = self.tree.slots.max(1);
        match &mut self.select {
            Select::Random => below(&mut self.rng, slots),
            Select::Sequential { from, len, next } => {
                let s = *from + *next % *len;
                *next = (*next + 1) % *len;
                s.min(slots - 1)
            }
            Select::Skewed(d) => d.sample(&mut self.rng).min(slots - 1),
        }
    }

    /// A slot holding what `want` asks, taken for this operation.
    fn pick(&mut self, want: Want) -> Option<u64> {
        let slots = self.tree.slots;
        for _ in 0..DRAWS {
            let c = self.candidate();
            for k in 0..PROBE.min(slots) {
                let s = (c + k) % slots;
                if self.tree.take(s, want) {
                    if let Select::Sequential { from, len, next } = &mut self.select {
                        // Go on after the slot taken.
                        if s >= *from && s < *from + *len {
                            *next = (s - *from + 1) % *len;
                        }
                    }
                    return Some(s);
                }
            }
            if self.tree.none_for(want) {
                return None;
            }
        }
        // The draws found nothing free near them: look at every slot once
        // (a million at most, about a millisecond), so a worker whose own
        // share is done helps with the rest, and one that finds nothing
        // knows there is nothing to take.
        let from = below(&mut self.rng, slots);
        (0..slots.min(SCAN))
            .map(|k| (from + k) % slots)
            .find(|s| self.tree.take(*s, want))
    }

    /// Runs one operation of the mix; false when it found nothing to work
    /// on.
    fn run_op(&mut self, op: FsOp, sched: u64) -> Result<bool, String> {
        let tree = self.tree.clone();
        let dirs = self.dirs.clone();
        if op == FsOp::Readdir {
            let slot = self.candidate();
            let show = || tree.leaf_path(tree.leaf_of(slot));
            let dir = dirs.leaf_of_slot(&tree, slot, "readdir")?;
            let at = At {
                dir: dir.as_fd(),
                name: ".",
                path: &show,
            };
            ops::readdir(&mut self.meter, &at, sched)?;
            return Ok(true);
        }
        let Some(want) = want_of(op) else {
            return Ok(false);
        };
        let Some(slot) = self.pick(want) else {
            return Ok(false);
        };
        // Without a rate an operation counts from when it is issued, not
        // from before its slot was looked for.
        let sched = if self.meter.period_ns.is_none() {
            self.meter.now_ns()
        } else {
            sched
        };
        let had_dir = tree.has_dir(slot);
        let had_file = tree.has_file(slot);
        let show_file = || tree.file_path(slot);
        let show_dir = || tree.dir_slot_path(slot);
        let dir = match dirs.leaf_of_slot(&tree, slot, op.into()) {
            Ok(d) => d,
            Err(e) => {
                tree.release(slot, had_file, had_dir);
                return Err(e);
            }
        };
        let file_name = tree.file_name(slot);
        let file = At {
            dir: dir.as_fd(),
            name: &file_name,
            path: &show_file,
        };
        self.dio.at_file(slot * self.span);
        let r = match op {
            FsOp::Create => {
                let r = ops::create(
                    &mut self.meter,
                    &mut self.dio,
                    &file,
                    tree.size_of(slot),
                    slot as u32,
                    sched,
                    false,
                );
                // A failed create may have left a partial file.
                let there = r.is_ok() || on_disk(dir.as_fd(), &file_name);
                tree.release(slot, there, had_dir);
                r
            }
            FsOp::Delete => {
                let r = ops::delete(&mut self.meter, &file, sched);
                // A file someone else removed is gone all the same.
                let there = r.is_err() && on_disk(dir.as_fd(), &file_name);
                tree.release(slot, there, had_dir);
                r
            }
            FsOp::Mkdir | FsOp::Rmdir => {
                let name = tree.dir_slot_name(slot);
                let at = At {
                    dir: dir.as_fd(),
                    name: &name,
                    path: &show_dir,
                };
                let r = if op == FsOp::Mkdir {
                    ops::mkdir(&mut self.meter, &at, sched)
                } else {
                    ops::rmdir(&mut self.meter, &at, sched)
                };
                let there = match (&r, op) {
                    (Ok(()), FsOp::Mkdir) => true,
                    (Ok(()), _) => false,
                    // What a failure left (EEXIST, ENOENT: someone else).
                    (Err(_), _) => on_disk(dir.as_fd(), &name),
                };
                tree.release(slot, had_file, there);
                r
            }
            FsOp::Stat => {
                let r = ops::stat(&mut self.meter, &file, sched);
                tree.release(slot, true, had_dir);
                r
            }
            FsOp::Setattr => {
                let mode = if below(&mut self.rng, 2) == 1 {
                    0o644
                } else {
                    0o600
                };
                let r = ops::setattr(&mut self.meter, &file, mode, sched);
                tree.release(slot, true, had_dir);
                r
            }
            FsOp::Open => {
                let r = ops::open_close(&mut self.meter, &file, sched);
                tree.release(slot, true, had_dir);
                r
            }
            FsOp::Fsync => {
                let r = ops::fsync(&mut self.meter, &file, sched);
                tree.release(slot, true, had_dir);
                r
            }
            FsOp::Rename => {
                let Some(to) = self.pick(Want::NoFile) else {
                    tree.release(slot, true, had_dir);
                    return Ok(false);
                };
                let to_dir = tree.has_dir(to);
                let show_to = || tree.file_path(to);
                let to_name = tree.file_name(to);
                let to_leaf = dirs.leaf_of_slot(&tree, to, "rename");
                let r = match &to_leaf {
                    Ok(d) => {
                        let dest = At {
                            dir: d.as_fd(),
                            name: &to_name,
                            path: &show_to,
                        };
                        ops::rename(&mut self.meter, &file, &dest, sched)
                    }
                    Err(e) => Err(e.clone()),
                };
                let moved = r.is_ok();
                let (to_there, from_there) = if moved {
                    (true, false)
                } else {
                    let to_there = to_leaf.as_ref().is_ok_and(|d| on_disk(d.as_fd(), &to_name));
                    (to_there, on_disk(dir.as_fd(), &file_name))
                };
                tree.release(to, to_there, to_dir);
                tree.release(slot, from_there, had_dir);
                r
            }
            FsOp::Read | FsOp::Write => {
                let r = self.session(slot, &file, op == FsOp::Write, sched);
                tree.release(slot, true, had_dir);
                r
            }
            FsOp::Close | FsOp::Readdir => Ok(()),
        };
        self.report_validation(slot);
        r.map(|()| true)
    }

    fn session(&mut self, slot: u64, file: &At<'_>, write: bool, sched: u64) -> Result<(), String> {
        let size = self.tree.size_of(slot);
        let random = self.fileio == FileIo::Random;
        let transfers = match (self.stopafter, random) {
            (Some(n), _) => u64::from(n),
            // Sequential: to the end of the file.
            (None, false) => u64::MAX,
            (None, true) => ((size as f64 / self.mean_bs[usize::from(write)]).ceil() as u64).max(1),
        };
        let mut offsets = SessionOffsets {
            random,
            wrap: self.stopafter.is_some(),
            align: self.align,
            rng: &mut self.rng,
        };
        ops::session(
            &mut self.meter,
            &mut self.dio,
            file,
            size,
            slot as u32,
            write,
            transfers,
            &mut offsets,
            sched,
        )
    }
}

/// Whether `name` is in `dir` now (after a failed operation, whose
/// outcome the slot's state must follow so the other workers do not
/// stumble on it).
fn on_disk(dir: std::os::fd::BorrowedFd<'_>, name: &str) -> bool {
    rustix::fs::statat(dir, name, rustix::fs::AtFlags::SYMLINK_NOFOLLOW).is_ok()
}

impl Meter {
    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn stopping(&self, now: u64) -> bool {
        now >= self.end_ns || self.stop.load(Ordering::Relaxed)
    }

    /// When the next operation is due: now without a rate; under one, its
    /// scheduled time once that has come (None after sleeping toward it).
    fn sched(&mut self, now: u64) -> Option<u64> {
        let Some(period) = self.period_ns else {
            return Some(now);
        };
        if self.next_due > now as f64 {
            let wake = (self.next_due as u64)
                .min(self.next_boundary)
                .min(self.end_ns);
            if wake > now {
                std::thread::sleep(Duration::from_nanos(wake - now));
            }
            return None;
        }
        let due = self.next_due as u64;
        self.next_due += period;
        Some(due)
    }

    fn fresh_stats(&self) -> Box<WorkerIntervalStats> {
        match self.spare.try_recv() {
            Ok(mut s) => {
                s.reset();
                s
            }
            Err(_) => Box::new(WorkerIntervalStats::for_fs()),
        }
    }

    /// Sends every interval that ended before `now`.
    fn advance(&mut self, now: u64) {
        while now >= self.next_boundary && self.index < self.plan.len() {
            let fresh = self.fresh_stats();
            let full = std::mem::replace(&mut self.stats, fresh);
            self.send_interval(full, self.index);
            self.index += 1;
            self.next_boundary = self.plan.end_of(self.index);
        }
    }

    fn send_interval(&mut self, stats: Box<WorkerIntervalStats>, index: usize) {
        let cpu_now = self.clock.busy_ns();
        let _ = self.tx.send(WorkerMsg::Interval {
            worker: self.id,
            index,
            stats,
            cpu_ns: cpu_now.saturating_sub(self.cpu_start_ns),
            usage: self.clock.usage_delta(),
            gap_ns: self.gap_ns,
            gap_start_ns: self.gap_start_ns,
            journal_ns: 0,
            journal_batches: 0,
        });
        self.cpu_start_ns = cpu_now;
        self.gap_ns = 0;
        self.gap_start_ns = 0;
    }

    /// Sends the interval in progress (possibly partial) and ends.
    fn finish(&mut self) {
        self.shared
            .last_completion
            .fetch_max(self.own_last_completion, Ordering::Relaxed);
        let now = self.now_ns();
        self.advance(now);
        if self.index < self.plan.len() {
            let stats = std::mem::take(&mut self.stats);
            self.send_interval(stats, self.index);
        }
        let _ = self.tx.send(WorkerMsg::Done { worker: self.id });
    }
}

/// What a slot must hold for `op`; None for operations on directories of
/// the shape (readdir) or that are never drawn (close).
fn want_of(op: FsOp) -> Option<Want> {
    match op {
        FsOp::Create => Some(Want::NoFile),
        FsOp::Mkdir => Some(Want::NoDir),
        FsOp::Rmdir => Some(Want::Dir),
        FsOp::Close | FsOp::Readdir => None,
        _ => Some(Want::File),
    }
}

impl OpSink for Meter {
    fn now_ns(&self) -> u64 {
        Meter::now_ns(self)
    }

    fn done(&mut self, op: FsOp, bytes: u64, sched_ns: u64, submit_ns: u64, req: Req) -> u64 {
        let now = Meter::now_ns(self);
        // The time since any worker's last completion ends here.
        let prev = self
            .shared
            .last_completion
            .load(Ordering::Relaxed)
            .max(self.own_last_completion);
        let gap_end = now.min(self.end_ns);
        // An operation due before this worker's last one ended waited for
        // the storage: its issue lag counts from that end.
        let ready_ns = sched_ns.max(self.own_last_completion);
        self.own_last_completion = now;
        // Published at most once per GAP_PUBLISH_NS (and at the end), as
        // block workers do: one shared cache line for every operation of
        // every worker would cost more than a stat on tmpfs.
        if now.saturating_sub(self.published_completion) >= crate::worker::GAP_PUBLISH_NS
            || gap_end.saturating_sub(prev) >= crate::worker::GAP_PUBLISH_NS
        {
            self.shared
                .last_completion
                .fetch_max(now, Ordering::Relaxed);
            self.published_completion = now;
        }
        self.advance(now);
        if gap_end > prev && gap_end - prev > self.gap_ns {
            self.gap_ns = gap_end - prev;
            self.gap_start_ns = prev;
        }
        if now < self.end_ns {
            let period = self.period_ns.is_some();
            let lat = now.saturating_sub(sched_ns);
            let service = now.saturating_sub(submit_ns);
            let kind = self.stats.fs_op_mut(op);
            count(kind, bytes, lat, service, period);
            if req == Req::Mix {
                count(&mut self.stats.requested, bytes, lat, service, period);
                if period {
                    self.stats
                        .issue_lag
                        .record(submit_ns.saturating_sub(ready_ns));
                }
            }
        }
        now
    }

    fn paced(&self) -> bool {
        self.period_ns.is_some()
    }

    fn next_due(&mut self) -> Option<u64> {
        loop {
            let now = Meter::now_ns(self);
            self.advance(now);
            if self.stopping(now) {
                return None;
            }
            if let Some(s) = self.sched(now) {
                return Some(s);
            }
        }
    }
}

/// Offsets of one session.
struct SessionOffsets<'a> {
    random: bool,
    /// Past the end, start again (a `stopafter` above the file's blocks).
    wrap: bool,
    align: u64,
    rng: &'a mut Xoshiro256PlusPlus,
}

impl Offsets for SessionOffsets<'_> {
    fn next(&mut self, _k: u64, at: u64, size: u64, len: u64) -> Option<(u64, u64)> {
        if size == 0 {
            return None;
        }
        let off = if self.random {
            below(self.rng, size.div_ceil(self.align)) * self.align
        } else if at < size {
            at
        } else if self.wrap {
            0
        } else {
            return None;
        };
        Some((off, len.min(size - off)))
    }
}

/// Counts one completed operation.
fn count(s: &mut WorkerOpStats, bytes: u64, lat_ns: u64, service_ns: u64, paced: bool) {
    s.ops += 1;
    s.bytes += bytes;
    s.lat.record(lat_ns);
    s.service_sum_ns += service_ns;
    if paced {
        s.service_lat.record(service_ns);
    }
}
