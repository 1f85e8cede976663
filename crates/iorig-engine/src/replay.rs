//! Replaying a trace: I/Os handed to the worker one by one, each with the
//! time it is due, instead of drawn from the workload's generators.
//!
//! A feed (the caller's thread) reads the trace ahead and sends mapped I/Os
//! in chunks over a bounded channel, so a trace of any length replays in
//! bounded memory. The worker issues each I/O when its time has come; its
//! latency counts from that time, not from when a slot was free, so a
//! storage that falls behind shows in the latency (no coordinated
//! omission). The OS wakes a sleeping thread tens of microseconds late, so
//! the worker sleeps only until [`SPIN_NS`] before an I/O is due and spins
//! from there: a replay keeps one CPU busy near its due times.

use crate::OpKind;
use crossbeam_channel::{Receiver, Sender, TryRecvError};
use std::collections::VecDeque;

/// One I/O of a replayed trace, mapped into the run's targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplayIo {
    /// When it is due, ns from the run's start; `None`: as soon as a slot
    /// is free (as fast as possible), its latency counted from then.
    pub due_ns: Option<u64>,
    pub op: OpKind,
    /// Index of its target in the workload's target list.
    pub target: u32,
    /// Absolute byte offset in the target.
    pub offset: u64,
    pub len: u32,
}

/// I/Os per chunk the feed sends at once.
pub const CHUNK_IOS: usize = 4096;
/// Chunks the channel holds ahead of the worker.
pub const CHANNEL_CHUNKS: usize = 64;
/// How long before a due time the worker stops sleeping and spins.
pub const SPIN_NS: u64 = 200_000;

pub type ReplaySender = Sender<Vec<ReplayIo>>;
pub type ReplayReceiver = Receiver<Vec<ReplayIo>>;

/// A replay as the engine takes it.
#[derive(Debug, Clone)]
pub struct ReplayFeed {
    pub rx: ReplayReceiver,
    /// io_uring: every I/O handed to the kernel's async workers
    /// (IOSQE_ASYNC), so a device that does its work in the submitting call
    /// (zram, brd) does not hold up the next due I/O.
    pub async_submit: bool,
}

/// A bounded channel for a feed and its worker.
pub fn channel() -> (ReplaySender, ReplayReceiver) {
    crossbeam_channel::bounded(CHANNEL_CHUNKS)
}

/// The worker's side: the chunk at hand and the channel.
pub(crate) struct ReplayState {
    rx: ReplayReceiver,
    queue: VecDeque<ReplayIo>,
    ended: bool,
}

impl ReplayState {
    pub(crate) fn new(rx: ReplayReceiver) -> Self {
        ReplayState {
            rx,
            queue: VecDeque::with_capacity(CHUNK_IOS),
            ended: false,
        }
    }

    /// The next I/O, if one is at hand: none when the feed is behind (look
    /// again soon) or done ([`ReplayState::finished`]).
    #[inline]
    pub(crate) fn peek(&mut self) -> Option<ReplayIo> {
        if self.queue.is_empty() && !self.ended {
            match self.rx.try_recv() {
                Ok(chunk) => self.queue.extend(chunk),
                Err(TryRecvError::Empty) => {}
                Err(TryRecvError::Disconnected) => self.ended = true,
            }
        }
        self.queue.front().copied()
    }

    pub(crate) fn pop(&mut self) {
        self.queue.pop_front();
    }

    /// The feed has closed and every I/O it sent was taken.
    pub(crate) fn finished(&self) -> bool {
        self.ended && self.queue.is_empty()
    }
}
