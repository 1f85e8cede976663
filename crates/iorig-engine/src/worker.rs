//! One worker: a thread that keeps up to `qd` I/Os in flight on its own engine.
//!
//! The loop is shared by every engine, so the null engine measures exactly the
//! overhead the real ones carry. Per iteration it fills free slots (now, or when
//! their scheduled time comes under a rate limit), takes one timestamp, submits
//! and waits, takes one timestamp, and accounts every completion against it — the
//! same batching of clock reads that fio does.
//!
//! Latency runs from the scheduled time under `--rate` (an I/O that waits for a
//! free slot is late, and that lateness is the storage's doing: no coordinated
//! omission), and otherwise from the moment the worker issued it (refilled its
//! slot), so iorig's own submission calls count, as in fio's `lat`. Short transfers and `-EAGAIN` are
//! resubmitted for the remainder; any other error stops this worker.

use crate::clock::{IntervalPlan, ThreadClock};
use crate::data::DataFiller;
use crate::engine::{Completion, IoEngine, IoRequest, OpKind};
use crate::gen::{OffsetGen, OpGen, SizeGen};
use crate::verify::{Phase, ValidationError, VerifyWorker};
use crossbeam_channel::{Receiver, Sender};
use iorig_stats::WorkerIntervalStats;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often (at most) a worker publishes its latest completion time to the
/// others: the longest-gap figure is exact to within this.
pub(crate) const GAP_PUBLISH_NS: u64 = 1_000_000;

/// Messages a worker sends of the failed I/Os it goes on past.
const IGNORED_MESSAGES: u32 = 5;

/// How long a worker waits for in-flight I/O after the run ends.
pub(crate) const DRAIN_LIMIT_NS: u64 = 10_000_000_000;

/// What a worker tells the collector.
#[derive(Debug)]
pub(crate) enum WorkerMsg {
    /// Statistics of interval `index` (completions whose end fell in it).
    Interval {
        worker: u32,
        index: usize,
        stats: Box<WorkerIntervalStats>,
        /// This worker thread's time on a CPU or waiting for one in the
        /// interval ([`crate::clock::ThreadClock`]).
        cpu_ns: u64,
        /// The thread's rusage counts in the interval.
        usage: iorig_stats::ThreadUsage,
        /// Longest time without any completion (of any worker) that ended
        /// at one of this worker's reaps in the interval, and its start.
        gap_ns: u64,
        gap_start_ns: u64,
        /// Time spent writing and syncing journal records, and batches synced.
        journal_ns: u64,
        journal_batches: u64,
    },
    /// The worker hit an I/O error and stops.
    Error { worker: u32, message: String },
    /// Data read back was not what was written (the worker carries on).
    Validation { error: Box<ValidationError> },
    /// The worker has finished; it sends nothing more.
    Done { worker: u32 },
}

/// How a paced worker waits for its next I/O. The OS wakes a sleeping
/// thread tens of microseconds late (more on a busy host), and under a rate
/// that lateness would count as the storage's latency. So the worker sleeps
/// until a window before the I/O is due and spins from there. The window
/// follows the oversleep the worker measures: it widens at once to twice a
/// late wake-up and narrows slowly, between [`OnTime::MIN_NS`] and
/// [`OnTime::MAX_NS`]. When workers outnumber the CPUs they may run on, it
/// only sleeps: a spinning worker would take a CPU another one needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct OnTime {
    spin: bool,
    window_ns: u64,
}

impl OnTime {
    pub const MIN_NS: u64 = 20_000;
    pub const MAX_NS: u64 = 200_000;

    pub fn new(spin: bool) -> Self {
        OnTime {
            spin,
            window_ns: 50_000,
        }
    }

    /// The window after a wake-up `late_ns` past its target: twice that
    /// when it used up most of the window, else a little narrower; always
    /// within [MIN_NS, MAX_NS].
    pub fn next_window(window_ns: u64, late_ns: u64) -> u64 {
        if late_ns >= window_ns * 3 / 4 {
            late_ns.saturating_mul(2).clamp(Self::MIN_NS, Self::MAX_NS)
        } else {
            (window_ns - window_ns / 32).max(Self::MIN_NS)
        }
    }

    /// Waits from `now` until `wake` (ns on `clock`).
    pub fn wait(&mut self, now: u64, wake: u64, clock: impl Fn() -> u64) {
        let left = wake.saturating_sub(now);
        if !self.spin {
            std::thread::sleep(Duration::from_nanos(left));
            return;
        }
        if left > self.window_ns {
            let target = wake - self.window_ns;
            std::thread::sleep(Duration::from_nanos(left - self.window_ns));
            let late = clock().saturating_sub(target);
            self.window_ns = Self::next_window(self.window_ns, late);
        }
        while clock() < wake {
            std::hint::spin_loop();
        }
    }
}

/// A worker's share of the caps on one direction's IOPS, paced as fio
/// paces each direction (`rate_ddir` in fio's io_u.c): an I/O of a
/// direction ahead of its schedule is swapped for one of the other
/// direction when that one may go (it has a share and is not ahead), and
/// waits otherwise. Each direction's schedule moves on by its period per
/// I/O, so a direction that fell behind catches up, as fio's does.
#[derive(Debug, Clone)]
pub(crate) struct DirectionPacer {
    /// Nanoseconds between this worker's reads, writes (None: not capped).
    pub period_ns: [Option<f64>; 2],
    /// When the next read, write may go.
    pub next_ns: [f64; 2],
    /// Whether the workload has reads, writes at all.
    pub has: [bool; 2],
}

impl DirectionPacer {
    fn index(op: OpKind) -> Option<usize> {
        match op {
            OpKind::Read => Some(0),
            OpKind::Write => Some(1),
            _ => None,
        }
    }

    /// The I/O to issue now instead of `op`, if one may go.
    #[inline]
    pub fn choose(&mut self, op: OpKind, now: u64) -> Option<OpKind> {
        let Some(d) = Self::index(op) else {
            return Some(op);
        };
        let may = |p: &Self, k: usize| p.period_ns[k].is_none() || p.next_ns[k] <= now as f64;
        let k = if may(self, d) {
            d
        } else if self.has[1 - d] && may(self, 1 - d) {
            1 - d
        } else {
            return None;
        };
        if let Some(p) = self.period_ns[k] {
            self.next_ns[k] += p;
        }
        Some(if k == 0 { OpKind::Read } else { OpKind::Write })
    }

    /// When the earliest held direction may go again.
    pub fn next_due_ns(&self, now: u64) -> u64 {
        (0..2)
            .filter(|&k| self.has[k])
            .map(|k| match self.period_ns[k] {
                None => now,
                Some(_) => self.next_ns[k] as u64,
            })
            .min()
            .unwrap_or(now)
    }
}

/// When a worker syncs the targets it wrote, and its handles of them.
pub(crate) struct SyncTargets {
    /// After every so many writes (fio's fsync=N, fdatasync=N).
    pub every: Option<iorig_spec::SyncEvery>,
    /// Once its I/O has ended (fio's end_fsync, fsync_on_close).
    pub at_end: bool,
    pub files: Vec<std::fs::File>,
}

/// Everything a worker needs besides its engine.
pub(crate) struct WorkerCtx {
    pub id: u32,
    pub qd: u32,
    /// Queued I/Os that trigger a submission while filling slots. 1 submits
    /// each at once, as fio does by default: some devices serve a trickle of
    /// single requests faster than the same requests in bursts.
    pub submit_batch: u32,
    pub offsets: OffsetGen,
    pub sizes: SizeGen,
    pub ops: OpGen,
    pub data: DataFiller,
    /// Target paths, for error messages.
    pub target_names: Arc<Vec<String>>,
    pub start: Instant,
    pub plan: Arc<IntervalPlan>,
    pub stop: Arc<AtomicBool>,
    /// Nanoseconds between this worker's scheduled I/Os; None = as fast as possible.
    pub period_ns: Option<f64>,
    /// First scheduled time (staggers workers under a rate limit).
    pub phase_ns: f64,
    /// How a paced worker waits for its next I/O: asleep until
    /// `window_ns` before it is due, then spinning ([`OnTime`]).
    pub on_time: OnTime,
    /// Caps of one direction's IOPS (`read_rate`, `write_rate`).
    pub caps: Option<DirectionPacer>,
    /// Under a rate, draws exponential gaps (Poisson arrivals) instead of
    /// spacing I/Os evenly.
    pub poisson: Option<rand_xoshiro::Xoshiro256PlusPlus>,
    /// Pauses after every so many I/Os (fio's thinktime).
    pub think: Option<iorig_spec::Think>,
    /// No I/O before this time (ns from the start).
    pub start_delay_ns: u64,
    /// Failed I/Os counted and gone on past (`ignore_errors`), and how many
    /// of their messages this worker has sent (the first few only).
    pub ignore: iorig_spec::IgnoreErrors,
    pub ignored_sent: u32,
    /// fsync/fdatasync after every so many writes or at the end, through
    /// this worker's own handles of the targets.
    pub sync: Option<SyncTargets>,
    pub tx: Sender<WorkerMsg>,
    /// Interval buffers handed back by the collector for reuse.
    pub spare: Receiver<Box<WorkerIntervalStats>>,
    /// Data validation, when the workload asks for it.
    pub verify: Option<VerifyWorker>,
    /// The latest completion of any worker (ns from start), shared.
    pub last_completion: Arc<AtomicU64>,
    /// This worker's latest completion, and when it last published one.
    pub own_last_completion: u64,
    pub published_completion: u64,
    /// Bytes left to issue, shared, when the run has a byte limit.
    pub budget: Option<Arc<AtomicU64>>,
    /// This thread's busy clock (made on the worker thread).
    pub clock: ThreadClock,
    /// Per-I/O records, when the run keeps them.
    pub io_records: Option<crate::iolog::IoRecorder>,
    /// A trace replay's I/Os, when the run is one ([`crate::replay`]).
    pub replay: Option<crate::replay::ReplayState>,
}

/// What a worker measures per interval besides its I/O statistics.
#[derive(Clone, Copy, Debug, Default)]
struct Extras {
    /// The thread's CPU clock at the start of the interval.
    cpu_start_ns: u64,
    gap_ns: u64,
    gap_start_ns: u64,
    journal_ns: u64,
    journal_batches: u64,
}

/// Takes `len` bytes from a shared budget; false (and nothing taken) when
/// fewer are left.
#[inline]
fn reserve(budget: &AtomicU64, len: u64) -> bool {
    budget
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            left.checked_sub(len)
        })
        .is_ok()
}

/// How soon a replay looks again at a feed that had no I/O ready.
const POLL_FEED_NS: u64 = 50_000;

/// Offsets tried for a block no other I/O holds before a slot waits a round.
const LOCK_TRIES: u32 = 8;

/// The hot loop's state between its phases ([`WorkerCtx::run_loop`]).
struct Turn {
    end_ns: u64,
    /// Validation keeps a journal: intents are synced before submissions.
    journaled: bool,
    slots: Vec<SlotState>,
    /// Slots with no I/O, the next to fill last.
    free: Vec<u32>,
    /// Slots queued since the last submission, to be timestamped.
    to_stamp: Vec<u32>,
    comps: Vec<Completion>,
    inflight: usize,
    stats: Box<WorkerIntervalStats>,
    /// The interval being measured, and when it ends.
    index: usize,
    next_boundary: u64,
    /// Under a rate: when the next I/O is due.
    next_due: f64,
    /// No I/O is issued before this time (a start delay, then think times).
    idle_until: u64,
    /// I/Os issued since the last think time, and whether one is due once
    /// those have completed.
    issued_since_think: u32,
    think_due: bool,
    /// Writes since the last sync, the targets they went to, and whether a
    /// sync is due once they have completed.
    writes_since_sync: u32,
    written: Vec<bool>,
    sync_due: bool,
    now: u64,
    /// No more I/O is issued; what is in flight drains (from
    /// `stop_seen_ns`).
    stopping: bool,
    stop_seen_ns: u64,
    /// An I/O failed: the worker ends after this turn.
    failed: bool,
    /// When a slot last came free after every slot was busy (or a sync
    /// ended): a scheduled I/O due before then waited for the storage, not
    /// for this worker, so its issue lag counts from here.
    free_since: u64,
    extras: Extras,
}

impl Turn {
    /// Issues no more I/O from `now` on; what is in flight drains.
    #[inline]
    fn stop(&mut self, now: u64) {
        self.stopping = true;
        self.stop_seen_ns = now;
    }
}

/// An I/O chosen for a free slot ([`WorkerCtx::next_io`]).
#[derive(Clone, Copy, Debug)]
struct NextIo {
    op: OpKind,
    len: u64,
    target: u32,
    offset: u64,
    sched_ns: u64,
    /// Due at `sched_ns` on a schedule (a rate, a timed replay), so its
    /// issue lag is measured.
    scheduled: bool,
    phase: Phase,
}

#[derive(Clone, Copy, Debug, Default)]
struct SlotState {
    read: bool,
    /// A trim (discard): no data moves; under validation its units are
    /// forgotten when it completes.
    trim: bool,
    target: u32,
    offset: u64,
    len: u32,
    done: u32,
    sched_ns: u64,
    submit_ns: u64,
    /// A scheduled I/O's earliest possible issue: its scheduled time, or
    /// when a slot came free if none was then ([`Turn::free_since`]).
    ready_ns: u64,
    scheduled: bool,
    /// The buffer holds read data, so a write must refresh it first.
    stale: bool,
    submitted: bool,
    /// What the I/O is for under validation.
    phase: Phase,
}

impl SlotState {
    /// What the slot's I/O does now.
    #[inline]
    fn op(&self) -> OpKind {
        if self.read {
            OpKind::Read
        } else if self.trim {
            OpKind::Trim
        } else {
            OpKind::Write
        }
    }
}

/// How a worker ended.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum WorkerEnd {
    Finished,
    Failed,
}

impl WorkerCtx {
    #[inline]
    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn fresh_stats(&self) -> Box<WorkerIntervalStats> {
        match self.spare.try_recv() {
            Ok(mut s) => {
                s.reset();
                s
            }
            Err(_) => Box::default(),
        }
    }

    /// Runs until the plan's end, a stop request, or an error.
    pub fn run<E: IoEngine>(mut self, mut engine: E) -> WorkerEnd {
        let end = self.run_loop(&mut engine);
        // The exact last completion, so a run whose workers all ended
        // early ends at it (publishing is otherwise throttled).
        self.last_completion
            .fetch_max(self.own_last_completion, Ordering::Relaxed);
        let _ = self.tx.send(WorkerMsg::Done { worker: self.id });
        end
    }

    /// The hot loop: per turn it fills free slots, submits and waits, and
    /// accounts the completions (see the module's doc). Its state lives in a
    /// [`Turn`] so each phase is a method of its own. The per-I/O phases are
    /// `#[inline(always)]`: left to the compiler they became calls, and the
    /// null engine lost 12 % of its IOPS at qd 1 and 21 % at qd 32
    /// (`bench/vs-fio.sh` with the one-function loop as `IORIG_B`); inlined
    /// into this loop, the state stays in registers as before (within 2 %).
    fn run_loop<E: IoEngine>(&mut self, engine: &mut E) -> WorkerEnd {
        let mut t = self.first_turn();
        // Every buffer starts with pattern data of its own.
        for s in 0..self.qd {
            self.data.refresh(engine.buffer_mut(s));
        }
        let end = loop {
            match self.turn(engine, &mut t) {
                Ok(Some(end)) => break end,
                Ok(None) => {}
                Err(message) => {
                    self.report_error(&mut t.stats, message);
                    break WorkerEnd::Failed;
                }
            }
        };
        let Turn {
            mut stats,
            index,
            mut extras,
            mut written,
            ..
        } = t;
        // fio's end_fsync: the targets written are synced once every write
        // has completed, and the sync is timed in the last interval (which
        // `advance` held back for it).
        let mut end = end;
        if end == WorkerEnd::Finished && self.sync.as_ref().is_some_and(|s| s.at_end) {
            if let Err(message) = self.sync_written(&mut stats, &mut written, false, true) {
                self.report_error(&mut stats, message);
                end = WorkerEnd::Failed;
            }
        }
        self.finish(stats, index, &mut extras, end)
    }

    /// The loop's state before the first I/O.
    fn first_turn(&mut self) -> Turn {
        let qd = self.qd as usize;
        Turn {
            end_ns: self.plan.end_ns(),
            journaled: self.verify.as_ref().is_some_and(|v| v.journaled()),
            slots: vec![SlotState::default(); qd],
            free: (0..self.qd).rev().collect(),
            to_stamp: Vec::with_capacity(qd),
            comps: Vec::with_capacity(qd * 2),
            inflight: 0,
            stats: self.fresh_stats(),
            index: 0,
            next_boundary: self.plan.end_of(0),
            next_due: self.phase_ns + self.start_delay_ns as f64,
            idle_until: self.start_delay_ns,
            issued_since_think: 0,
            think_due: false,
            writes_since_sync: 0,
            written: vec![false; self.sync.as_ref().map_or(0, |s| s.files.len())],
            sync_due: false,
            now: self.now_ns(),
            stopping: false,
            stop_seen_ns: 0,
            failed: false,
            free_since: 0,
            extras: Extras {
                cpu_start_ns: self.clock.busy_ns(),
                ..Extras::default()
            },
        }
    }

    /// One turn of the loop: `Some` when the worker ends, an error message
    /// when it fails on one.
    #[inline(always)]
    fn turn<E: IoEngine>(
        &mut self,
        engine: &mut E,
        t: &mut Turn,
    ) -> Result<Option<WorkerEnd>, String> {
        if !t.stopping && (t.now >= t.end_ns || self.stop.load(Ordering::Relaxed)) {
            t.stop(t.now);
        }
        if t.stopping && t.inflight > 0 && t.now.saturating_sub(t.stop_seen_ns) > DRAIN_LIMIT_NS {
            // The device stopped answering; don't hang the whole run on it.
            return Err(format!(
                "{} I/O(s) still outstanding {} s after the run ended; the device may have hung",
                t.inflight,
                DRAIN_LIMIT_NS / 1_000_000_000
            ));
        }
        if !t.stopping && !t.think_due && !t.sync_due && t.now >= t.idle_until {
            self.fill(engine, t)?;
        }
        if t.inflight == 0 {
            if t.stopping {
                return Ok(Some(WorkerEnd::Finished));
            }
            self.idle(t)?;
            return Ok(None);
        }
        self.submit_and_reap(engine, t)?;
        self.complete(engine, t);
        if let Some(v) = &mut self.verify {
            let t0 = t.journaled.then(std::time::Instant::now);
            if let Err(message) = v.finish_writes() {
                self.report_error(&mut t.stats, message);
                t.failed = true;
            }
            if let Some(t0) = t0 {
                t.extras.journal_ns += t0.elapsed().as_nanos() as u64;
                // The next I/Os exist from now, after the done records.
                t.now = self.now_ns();
            }
        }
        if t.failed {
            // This worker stops; others carry on. In-flight I/O is drained by
            // the engine's drop before its buffers go.
            return Ok(Some(WorkerEnd::Failed));
        }
        Ok(None)
    }

    /// Fills free slots with I/Os and queues them (submitting every
    /// `submit_batch`), until no slot is free, no I/O is due yet, or a
    /// pause, sync or the end is due.
    #[inline(always)]
    fn fill<E: IoEngine>(&mut self, engine: &mut E, t: &mut Turn) -> Result<(), String> {
        while let Some(&slot) = t.free.last() {
            let Some(io) = self.next_io(t) else {
                break;
            };
            t.free.pop();
            self.queue_io(engine, t, slot, io)?;
            if t.think_due || t.sync_due {
                // Nothing more is queued before the pause or sync (fio
                // quiesces there); what is queued goes out in the wait.
                break;
            }
            // A journal syncs its intents before each submission, so
            // journaled writes go out as one batch per refill: one sync for
            // many writes instead of one per write.
            if t.to_stamp.len() >= self.submit_batch as usize && !t.journaled {
                self.flush_intents(&mut t.extras)?;
                self.stamp(&mut t.slots, &mut t.to_stamp);
                engine
                    .submit_and_wait(0, None)
                    .map_err(|e| format!("submitting I/O: {e}"))?;
            }
        }
        Ok(())
    }

    /// The next I/O to issue, if one is due now: its schedule, kind, size
    /// and place (a replay's own, or drawn), with its blocks locked under
    /// validation. `None` leaves the slot free for a later turn (and may
    /// set the loop stopping: the trace or the byte budget is all issued).
    #[inline(always)]
    fn next_io(&mut self, t: &mut Turn) -> Option<NextIo> {
        let now = t.now;
        // A replay's next I/O, once its time has come.
        let replayed = match &mut self.replay {
            Some(r) => match r.peek() {
                Some(io) if io.due_ns.is_none_or(|d| d <= now) => {
                    r.pop();
                    Some(io)
                }
                Some(_) => return None,
                None => {
                    if r.finished() {
                        // The trace is all issued: drain and end.
                        t.stop(now);
                    }
                    return None;
                }
            },
            None => None,
        };
        let scheduled = match replayed {
            Some(io) => io.due_ns.is_some(),
            None => self.period_ns.is_some(),
        };
        let sched_ns = match (replayed, self.period_ns) {
            (Some(io), _) => io.due_ns.unwrap_or(now),
            (None, Some(period)) => {
                if t.next_due > now as f64 {
                    return None;
                }
                // An I/O that fell due during a think time exists from
                // the pause's end: the silence was the workload's own, not
                // the storage's.
                let due = (t.next_due as u64).max(t.idle_until);
                t.next_due += match &mut self.poisson {
                    // Exponential with mean `period`: -ln(1 - U).
                    Some(rng) => -period * (1.0 - crate::gen::unit_f64(rng)).ln(),
                    None => period,
                };
                due
            }
            // Uncontrolled: the I/O exists from the moment its slot was
            // refilled (`now`, taken after the last reap), so the submission
            // calls made before its own — one per I/O with --submit-batch 1
            // — count in its latency, as fio's lat (slat + clat) counts them.
            (None, None) => now,
        };
        let op = match replayed {
            Some(io) => io.op,
            None => {
                let op = self.ops.next_op();
                match &mut self.caps {
                    None => op,
                    // Both directions held: the slot waits (the drawn
                    // I/O is dropped, as fio's is redrawn).
                    Some(c) => c.choose(op, now)?,
                }
            }
        };
        let read = op == OpKind::Read;
        // Trims take the write sizes.
        let len = match replayed {
            Some(io) => u64::from(io.len),
            None => self.sizes.next_bs(read),
        };
        if let Some(b) = &self.budget {
            if !reserve(b, len) {
                // The run's bytes are all issued: drain and end.
                t.stop(now);
                return None;
            }
        }
        let (mut target, mut offset) = match replayed {
            Some(io) => (io.target, io.offset),
            None => self.offsets.next_for(len, op != OpKind::Read),
        };
        let mut phase = Phase::Plain;
        if let Some(v) = &self.verify {
            // One I/O per block at a time, so the expected key is exact when
            // the data comes back.
            let mut locked = v.lock(target, offset, len as u32);
            let mut tries = 1;
            while !locked && tries < LOCK_TRIES {
                (target, offset) = self.offsets.next_for(len, op != OpKind::Read);
                locked = v.lock(target, offset, len as u32);
                tries += 1;
            }
            if !locked {
                // Every block tried is busy: wait for completions, and give
                // back the bytes this I/O reserved.
                if let Some(b) = &self.budget {
                    b.fetch_add(len, Ordering::Relaxed);
                }
                return None;
            }
            if op == OpKind::Write && v.known(target, offset, len as u32) {
                phase = Phase::PreRead;
            }
        }
        Some(NextIo {
            op,
            len,
            target,
            offset,
            sched_ns,
            scheduled,
            phase,
        })
    }

    /// Puts `io` into `slot`: its write data, its state, its request on the
    /// engine's queue, and the sync and think counts it moves on.
    #[inline(always)]
    fn queue_io<E: IoEngine>(
        &mut self,
        engine: &mut E,
        t: &mut Turn,
        slot: u32,
        io: NextIo,
    ) -> Result<(), String> {
        let read = io.op == OpKind::Read;
        let trim = io.op == OpKind::Trim;
        let st = &mut t.slots[slot as usize];
        // A trim leaves the buffer as it was.
        let stale = if trim { st.stale } else { read };
        if !read && !trim && io.phase == Phase::Plain {
            let Some(buf) = engine.buffer_mut(slot).get_mut(..io.len as usize) else {
                return Err(format!("engine gave slot {slot} no {}-byte buffer", io.len));
            };
            match &mut self.verify {
                Some(v) => v.prepare_write(slot, buf, io.target, io.offset, t.now),
                None => self.data.fill(buf, io.target, io.offset, st.stale),
            }
        }
        // A write of the workload, whether or not validation reads the
        // block first.
        let workload_write = !read && !trim;
        let read = read || io.phase == Phase::PreRead;
        *st = SlotState {
            read,
            trim,
            target: io.target,
            offset: io.offset,
            len: io.len as u32,
            done: 0,
            sched_ns: io.sched_ns,
            submit_ns: 0,
            ready_ns: io.sched_ns.max(t.free_since),
            scheduled: io.scheduled,
            stale: stale || read,
            submitted: false,
            phase: io.phase,
        };
        engine
            .queue(request(slot, st))
            .map_err(|e| format!("queueing I/O: {e}"))?;
        t.to_stamp.push(slot);
        t.inflight += 1;
        if let (Some(sync), true) = (&self.sync, workload_write) {
            if let Some(w) = t.written.get_mut(io.target as usize) {
                *w = true;
            }
            // Writes are counted only where a rule syncs after so many.
            if let Some(rule) = sync.every {
                t.writes_since_sync += 1;
                if t.writes_since_sync >= rule.writes {
                    // Synced once these writes have completed, as fio's
                    // sync waits for the writes before it.
                    t.writes_since_sync = 0;
                    t.sync_due = true;
                }
            }
        }
        if let Some(th) = &self.think {
            t.issued_since_think += 1;
            if t.issued_since_think >= th.every {
                // Pause once these I/Os have completed, as fio quiesces
                // before its think time.
                t.issued_since_think = 0;
                t.think_due = true;
            }
        }
        Ok(())
    }

    /// Nothing in flight: makes a due sync or think time, then sleeps until
    /// the next I/O is due (or the interval ends, so the report is not
    /// late), and closes the intervals that passed.
    fn idle(&mut self, t: &mut Turn) -> Result<(), String> {
        if t.sync_due {
            t.sync_due = false;
            let data_only = self
                .sync
                .as_ref()
                .and_then(|s| s.every)
                .is_some_and(|r| r.data_only);
            self.sync_written(&mut t.stats, &mut t.written, data_only, t.now < t.end_ns)?;
            t.now = self.now_ns();
            // I/Os that fell due during the sync waited for the storage.
            t.free_since = t.now;
        }
        if t.think_due {
            t.think_due = false;
            if let Some(th) = self.think {
                let pause_ns = th.time.as_nanos() as u64;
                t.idle_until = t.now + pause_ns;
                if th.moves_rate {
                    // fio's rate_ignore_thinktime: the schedule resumes
                    // where it stood, one pause later.
                    t.next_due += pause_ns as f64;
                    if let Some(c) = &mut self.caps {
                        c.next_ns.iter_mut().for_each(|n| *n += pause_ns as f64);
                    }
                }
                let spin_until = (t.now + th.spin.as_nanos() as u64).min(t.end_ns);
                while self.now_ns() < spin_until {
                    std::hint::spin_loop();
                }
                t.now = self.now_ns();
            }
        }
        let now = t.now;
        // A feed that is behind is looked at again after a sleep (no I/O is
        // due that a spin could make on time).
        let mut feed_behind = false;
        let due = match (&mut self.replay, self.period_ns) {
            (Some(r), _) => match r.peek() {
                Some(io) => io.due_ns.unwrap_or(now),
                None => {
                    feed_behind = true;
                    now + POLL_FEED_NS
                }
            },
            (None, Some(_)) => t.next_due as u64,
            (None, None) => self.caps.as_ref().map_or(now, |c| c.next_due_ns(now)),
        };
        let wake = due.max(t.idle_until).min(t.next_boundary).min(t.end_ns);
        // A paced I/O is due at `wake`: issued on time, not when the OS
        // happens to wake the thread (its lateness would count as the
        // storage's latency).
        let paced_io = self.replay.is_none()
            && (self.period_ns.is_some() || self.caps.is_some())
            && wake == due
            && due >= t.idle_until;
        if wake > now {
            let left = wake - now;
            if paced_io {
                let start = self.start;
                let clock = || start.elapsed().as_nanos() as u64;
                self.on_time.wait(now, wake, clock);
            } else if self.replay.is_none() || feed_behind {
                std::thread::sleep(Duration::from_nanos(left));
            } else if left > crate::replay::SPIN_NS {
                // Woken early; the loop spins the rest.
                std::thread::sleep(Duration::from_nanos(left - crate::replay::SPIN_NS));
            }
        }
        let idle = now < t.idle_until;
        t.now = self.now_ns();
        if idle && t.now >= t.idle_until {
            // A pause or delay is over: the silence before it was the
            // workload's own, not an outage of the storage.
            self.own_last_completion = self.own_last_completion.max(t.idle_until);
        }
        self.advance(
            &mut t.stats,
            &mut t.index,
            &mut t.next_boundary,
            t.now,
            &mut t.extras,
        );
        Ok(())
    }

    /// Submits what is queued and waits for at least one completion,
    /// waking in time for the next scheduled I/O or interval boundary;
    /// takes the completions, the time, and the gap they close.
    #[inline(always)]
    fn submit_and_reap<E: IoEngine>(&mut self, engine: &mut E, t: &mut Turn) -> Result<(), String> {
        self.flush_intents(&mut t.extras)?;
        if t.journaled && !t.to_stamp.is_empty() && self.period_ns.is_none() {
            // The journal's synced intent records are iorig's own work, not
            // the storage's answer to these I/Os: their latency starts once
            // the records are down. (Under a rate the scheduled start stays:
            // lateness counts.)
            let now = self.now_ns();
            for &s in &t.to_stamp {
                t.slots[s as usize].sched_ns = now;
            }
            t.now = now;
        }
        self.stamp(&mut t.slots, &mut t.to_stamp);
        let now = t.now;
        let mut wake = t.next_boundary.min(t.end_ns.max(now + 1));
        if self.period_ns.is_some()
            && !t.free.is_empty()
            && !t.stopping
            && !t.sync_due
            && !t.think_due
        {
            wake = wake.min(t.next_due as u64);
        }
        // Both directions held: the first one's next turn refills a free
        // slot on time.
        if let (Some(c), false, false, false, false) = (
            &self.caps,
            t.free.is_empty(),
            t.stopping,
            t.sync_due,
            t.think_due,
        ) {
            let due = c.next_due_ns(now);
            if due > now {
                wake = wake.min(due);
            }
        }
        let mut feed_behind = false;
        if let (Some(r), false, false) = (&mut self.replay, t.free.is_empty(), t.stopping) {
            wake = wake.min(match r.peek() {
                Some(io) => io.due_ns.unwrap_or(now),
                None => {
                    feed_behind = true;
                    now + POLL_FEED_NS
                }
            });
        }
        let (min_complete, timeout) = if t.stopping {
            (1, Some(Duration::from_millis(100)))
        } else if self.replay.is_some() && !feed_behind {
            // Wait for completions until shortly before the next I/O is due;
            // from there, only look for them (spinning).
            match wake.saturating_sub(now).checked_sub(crate::replay::SPIN_NS) {
                Some(left) if left > 0 => (1, Some(Duration::from_nanos(left))),
                _ => (0, None),
            }
        } else {
            (
                1,
                Some(Duration::from_nanos(wake.saturating_sub(now).max(1_000))),
            )
        };
        engine
            .submit_and_wait(min_complete, timeout)
            .map_err(|e| format!("submitting I/O: {e}"))?;
        t.comps.clear();
        engine
            .reap(&mut t.comps)
            .map_err(|e| format!("reaping I/O: {e}"))?;
        t.now = self.now_ns();
        let gap = self.gap_closed(t);
        self.advance_with_gap(
            &mut t.stats,
            &mut t.index,
            &mut t.next_boundary,
            t.now,
            &mut t.extras,
            gap,
        );
        Ok(())
    }

    /// The time since any worker's last completion, ended by the
    /// completions just reaped (counted up to the run's end at most, in the
    /// interval where it ends).
    #[inline(always)]
    fn gap_closed(&mut self, t: &Turn) -> Option<(u64, u64)> {
        if t.comps.is_empty() {
            return None;
        }
        let now = t.now;
        // The latest completion anyone published, or our own later one.
        // Publishing at most once per GAP_PUBLISH_NS keeps the shared cache
        // line quiet at millions of IOPS; a gap is then long by at most that
        // much.
        let prev = self
            .last_completion
            .load(Ordering::Relaxed)
            .max(self.own_last_completion);
        let gap_end = now.min(t.end_ns);
        self.own_last_completion = now;
        if now.saturating_sub(self.published_completion) >= GAP_PUBLISH_NS
            || gap_end.saturating_sub(prev) >= GAP_PUBLISH_NS
        {
            self.last_completion.fetch_max(now, Ordering::Relaxed);
            self.published_completion = now;
        }
        (gap_end > prev).then_some((prev, gap_end))
    }

    /// Accounts the completions just reaped: resubmits what did not finish,
    /// reports failures, records latency while the run is measured, and
    /// moves validation on; frees the slots that are done.
    #[inline(always)]
    fn complete<E: IoEngine>(&mut self, engine: &mut E, t: &mut Turn) {
        let now = t.now;
        let counting = now < t.end_ns;
        // Taken out for the loop (a pointer move), so the slots and counts
        // can change while it runs.
        let comps = std::mem::take(&mut t.comps);
        for c in &comps {
            let st = &mut t.slots[c.slot as usize];
            if c.result == -(libc::EAGAIN as i64) || c.result == -(libc::EINTR as i64) {
                // Not started: submit the same remainder again.
                if engine.queue(request(c.slot, st)).is_err() {
                    t.failed = true;
                }
                continue;
            }
            if c.result <= 0 {
                if t.inflight == self.qd as usize {
                    t.free_since = now;
                }
                t.inflight -= 1;
                t.free.push(c.slot);
                let st = *st;
                self.failed_io(&mut t.stats, &st, c.result, &mut t.failed);
                continue;
            }
            st.done += c.result as u32;
            if st.done < st.len {
                // Short transfer: the rest goes out as its own request.
                if engine.queue(request(c.slot, st)).is_err() {
                    t.failed = true;
                }
                continue;
            }
            // Validation's own reads (a pre-read before overwriting known
            // data, a read-back after a write) are not the workload's: the
            // validation summary counts them (`pre_reads`, `after_reads`),
            // the read figures do not.
            let validation_read = matches!(st.phase, Phase::PreRead | Phase::AfterRead);
            if counting && !validation_read {
                self.record(&mut t.stats, st, now);
            }
            if self.verify.is_some() {
                match self.verify_next(engine, c.slot, st, now, t.stopping) {
                    Ok(true) => {
                        // The slot goes on with its next I/O.
                        t.to_stamp.push(c.slot);
                        continue;
                    }
                    Ok(false) => {}
                    Err(message) => {
                        self.report_error(&mut t.stats, message);
                        t.failed = true;
                    }
                }
            }
            if t.inflight == self.qd as usize {
                t.free_since = now;
            }
            t.inflight -= 1;
            t.free.push(c.slot);
        }
        t.comps = comps;
    }

    /// One finished I/O of the workload into the interval's figures (and
    /// the per-I/O log).
    #[inline(always)]
    fn record(&mut self, stats: &mut WorkerIntervalStats, st: &SlotState, now: u64) {
        let op = if st.read {
            &mut stats.read
        } else if st.trim {
            &mut stats.trim
        } else {
            &mut stats.write
        };
        op.ops += 1;
        op.bytes += st.len as u64;
        op.lat.record(now.saturating_sub(st.sched_ns));
        let service_ns = now.saturating_sub(st.submit_ns);
        op.service_sum_ns += service_ns;
        if self.period_ns.is_some() || self.replay.is_some() {
            op.service_lat.record(service_ns);
        }
        if st.scheduled {
            stats
                .issue_lag
                .record(st.submit_ns.saturating_sub(st.ready_ns));
        }
        if let Some(r) = &mut self.io_records {
            r.push(crate::iolog::IoRecord {
                start_ns: st.sched_ns,
                submit_ns: st.submit_ns,
                complete_ns: now,
                offset_bytes: st.offset,
                size_bytes: st.len,
                target: st.target,
                worker: self.id,
                op: st.op(),
            });
        }
    }

    /// An I/O that failed (`result` ≤ 0): counted and gone on past under
    /// `ignore_errors` (its message sent for the first few), otherwise
    /// reported, and the worker stops (`failed`).
    #[cold]
    fn failed_io(
        &mut self,
        stats: &mut WorkerIntervalStats,
        st: &SlotState,
        result: i64,
        failed: &mut bool,
    ) {
        let what = if result == 0 {
            "transferred 0 bytes (end of target?)".to_string()
        } else {
            std::io::Error::from_raw_os_error((-result) as i32).to_string()
        };
        let message = format!(
            "{} of {} bytes at offset {} of {}: {}",
            match st.op() {
                OpKind::Read => "read",
                OpKind::Write => "write",
                OpKind::Trim => "trim",
            },
            st.len,
            st.offset,
            self.target_names
                .get(st.target as usize)
                .map(String::as_str)
                .unwrap_or("?"),
            what
        );
        if result < 0 && self.ignore.covers((-result) as i32) {
            // Counted, and the worker goes on; a failing device would flood
            // the messages, so only the first few.
            stats.errors += 1;
            if self.ignored_sent < IGNORED_MESSAGES {
                self.ignored_sent += 1;
                let _ = self.tx.send(WorkerMsg::Error {
                    worker: self.id,
                    message: format!("{message} (ignored: ignore_errors)"),
                });
            }
            return;
        }
        self.report_error(stats, message);
        *failed = true;
    }

    /// Journals stamped writes before they are submitted.
    #[inline]
    fn flush_intents(&mut self, extras: &mut Extras) -> Result<(), String> {
        match &mut self.verify {
            Some(v) if v.journaled() && v.has_intents() => {
                let t0 = std::time::Instant::now();
                let r = v.flush_intents();
                extras.journal_ns += t0.elapsed().as_nanos() as u64;
                extras.journal_batches += 1;
                r
            }
            Some(v) => v.flush_intents(),
            None => Ok(()),
        }
    }

    /// Validation after a slot's I/O completed: checks data read, and moves
    /// the slot on (pre-read → write → read-back). Returns true when the slot
    /// has queued its next I/O.
    fn verify_next<E: IoEngine>(
        &mut self,
        engine: &mut E,
        slot: u32,
        st: &mut SlotState,
        now: u64,
        stopping: bool,
    ) -> Result<bool, String> {
        let Some(v) = &mut self.verify else {
            return Ok(false);
        };
        let len = st.len as usize;
        if st.trim {
            // What the trimmed units hold is no longer known: later reads
            // of them check nothing until they are written again.
            v.trimmed(st.target, st.offset, st.len);
            return Ok(false);
        }
        if st.read {
            let mut errors = Vec::new();
            if let Some(buf) = engine.buffer_mut(slot).get(..len) {
                v.check(slot, buf, st.target, st.offset, st.phase, &mut errors);
            }
            for mut error in errors {
                error.name_found_target(&self.target_names);
                let target_path = self
                    .target_names
                    .get(st.target as usize)
                    .cloned()
                    .unwrap_or_default();
                let _ = self.tx.send(WorkerMsg::Validation {
                    error: Box::new(ValidationError {
                        t_s: now as f64 / 1e9,
                        target_path,
                        error,
                    }),
                });
            }
            match st.phase {
                Phase::Plain => {
                    v.release(st.target, st.offset, st.len);
                    Ok(false)
                }
                Phase::AfterRead => {
                    v.release_written(slot, st.target, st.offset);
                    Ok(false)
                }
                Phase::PreRead if stopping => {
                    v.release(st.target, st.offset, st.len);
                    Ok(false)
                }
                Phase::PreRead => {
                    let Some(buf) = engine.buffer_mut(slot).get_mut(..len) else {
                        return Err(format!("engine gave slot {slot} no {len}-byte buffer"));
                    };
                    v.prepare_write(slot, buf, st.target, st.offset, now);
                    st.read = false;
                    st.phase = Phase::Plain;
                    requeue(engine, st, slot, now)?;
                    Ok(true)
                }
            }
        } else if v.after_write() && !stopping {
            // Journaled as done now; the keys are published after the read-back.
            v.write_done(slot, st.target, st.offset, st.len, false);
            st.read = true;
            st.phase = Phase::AfterRead;
            requeue(engine, st, slot, now)?;
            Ok(true)
        } else {
            v.write_done(slot, st.target, st.offset, st.len, true);
            Ok(false)
        }
    }

    /// Marks the queued slots as submitted now (one clock read for the batch).
    #[inline]
    fn stamp(&self, slots: &mut [SlotState], to_stamp: &mut Vec<u32>) {
        if to_stamp.is_empty() {
            return;
        }
        let t = self.now_ns();
        for &s in to_stamp.iter() {
            let st = &mut slots[s as usize];
            if !st.submitted {
                st.submitted = true;
                st.submit_ns = t;
            }
        }
        to_stamp.clear();
    }

    /// fsync (or fdatasync) each target written since the last sync, each
    /// call timed as one operation of `stats.sync` when `counting`.
    fn sync_written(
        &mut self,
        stats: &mut WorkerIntervalStats,
        written: &mut [bool],
        data_only: bool,
        counting: bool,
    ) -> Result<(), String> {
        let Some(SyncTargets { files, .. }) = &self.sync else {
            return Ok(());
        };
        for (i, w) in written.iter_mut().enumerate() {
            if !std::mem::take(w) {
                continue;
            }
            let Some(f) = files.get(i) else { continue };
            let start = self.now_ns();
            let r = if data_only {
                f.sync_data()
            } else {
                f.sync_all()
            };
            let end = self.now_ns();
            r.map_err(|e| {
                format!(
                    "{} of {}: {e}",
                    if data_only { "fdatasync" } else { "fsync" },
                    self.target_names.get(i).map(String::as_str).unwrap_or("?")
                )
            })?;
            if counting {
                stats.sync.ops += 1;
                stats.sync.lat.record(end.saturating_sub(start));
            }
        }
        Ok(())
    }

    /// Sends every interval that ended before `now`.
    #[inline]
    fn advance(
        &mut self,
        stats: &mut Box<WorkerIntervalStats>,
        index: &mut usize,
        next_boundary: &mut u64,
        now: u64,
        extras: &mut Extras,
    ) {
        self.advance_with_gap(stats, index, next_boundary, now, extras, None);
    }

    /// [`Self::advance`], attaching a gap without completions that ended at
    /// `gap.1` to the interval it ended in.
    #[inline]
    fn advance_with_gap(
        &mut self,
        stats: &mut Box<WorkerIntervalStats>,
        index: &mut usize,
        next_boundary: &mut u64,
        now: u64,
        extras: &mut Extras,
        mut gap: Option<(u64, u64)>,
    ) {
        let note = |extras: &mut Extras, (from, to): (u64, u64)| {
            if to - from > extras.gap_ns {
                extras.gap_ns = to - from;
                extras.gap_start_ns = from;
            }
        };
        // With a sync at the end, the last interval waits for it (finish
        // sends it).
        let last = self
            .plan
            .len()
            .saturating_sub(usize::from(self.sync.as_ref().is_some_and(|s| s.at_end)));
        while now >= *next_boundary && *index < last {
            if let Some(g) = gap.filter(|g| g.1 <= *next_boundary) {
                note(extras, g);
                gap = None;
            }
            let full = std::mem::replace(stats, self.fresh_stats());
            self.send_interval(full, *index, extras);
            *index += 1;
            *next_boundary = self.plan.end_of(*index);
        }
        if let Some(g) = gap {
            note(extras, g);
        }
    }

    /// Sends one interval's statistics with what else the worker measured
    /// in it, and starts the next interval's measurements.
    fn send_interval(
        &mut self,
        stats: Box<WorkerIntervalStats>,
        index: usize,
        extras: &mut Extras,
    ) {
        let cpu_now = self.clock.busy_ns();
        let _ = self.tx.send(WorkerMsg::Interval {
            worker: self.id,
            index,
            stats,
            cpu_ns: cpu_now.saturating_sub(extras.cpu_start_ns),
            usage: self.clock.usage_delta(),
            gap_ns: extras.gap_ns,
            gap_start_ns: extras.gap_start_ns,
            journal_ns: extras.journal_ns,
            journal_batches: extras.journal_batches,
        });
        *extras = Extras {
            cpu_start_ns: cpu_now,
            ..Extras::default()
        };
    }

    fn report_error(&mut self, stats: &mut WorkerIntervalStats, message: String) {
        stats.errors += 1;
        let _ = self.tx.send(WorkerMsg::Error {
            worker: self.id,
            message,
        });
    }

    /// Sends the interval in progress (possibly partial) and ends.
    fn finish(
        &mut self,
        stats: Box<WorkerIntervalStats>,
        index: usize,
        extras: &mut Extras,
        end: WorkerEnd,
    ) -> WorkerEnd {
        if let Some(v) = &mut self.verify {
            v.flush_counts();
        }
        if index < self.plan.len() {
            self.send_interval(stats, index, extras);
        }
        end
    }
}

/// Queues the slot's block again as a new I/O starting now.
fn requeue<E: IoEngine>(
    engine: &mut E,
    st: &mut SlotState,
    slot: u32,
    now: u64,
) -> Result<(), String> {
    st.done = 0;
    st.sched_ns = now;
    st.ready_ns = now;
    st.submit_ns = 0;
    st.submitted = false;
    st.stale = true;
    engine
        .queue(request(slot, st))
        .map_err(|e| format!("queueing I/O: {e}"))
}

#[inline]
fn request(slot: u32, st: &SlotState) -> IoRequest {
    IoRequest {
        slot,
        target: st.target,
        op: st.op(),
        offset: st.offset + st.done as u64,
        len: st.len - st.done,
        buf_offset: st.done,
    }
}

#[cfg(test)]
mod tests {
    use super::OnTime;

    /// The spin window widens at once to twice a late wake-up that used up
    /// most of it, narrows by 1/32 after one that came in time, and stays
    /// within its bounds.
    #[test]
    fn the_spin_window_follows_the_oversleep_within_bounds() {
        assert_eq!(OnTime::next_window(50_000, 40_000), 80_000);
        assert_eq!(OnTime::next_window(50_000, 10_000), 48_438);
        assert_eq!(OnTime::next_window(50_000, 5_000_000), OnTime::MAX_NS);
        assert_eq!(OnTime::next_window(OnTime::MIN_NS, 0), OnTime::MIN_NS);
        let mut w = OnTime::MAX_NS;
        for _ in 0..1000 {
            w = OnTime::next_window(w, 1_000);
        }
        assert_eq!(w, OnTime::MIN_NS);
    }

    /// A wait, spinning or not, never ends before its due time.
    #[test]
    fn a_wait_never_ends_early() {
        let start = std::time::Instant::now();
        let clock = || start.elapsed().as_nanos() as u64;
        for spin in [true, false] {
            let mut o = OnTime::new(spin);
            for _ in 0..20 {
                let wake = clock() + 300_000;
                o.wait(clock(), wake, clock);
                assert!(clock() >= wake);
            }
        }
    }
}
