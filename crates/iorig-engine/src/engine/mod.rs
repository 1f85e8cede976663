//! The I/O engine interface and its implementations.
//!
//! An engine owns one buffer per *slot* (one slot per I/O that may be in flight)
//! and the open targets. A worker fills a slot's buffer, [`IoEngine::queue`]s a
//! request naming that slot, and later reaps a [`Completion`] for it; between the
//! two the buffer belongs to the engine (and, for io_uring, to the kernel), so the
//! worker never touches a buffer that is in flight.
//!
//! Engines report raw results: a short transfer or `-EAGAIN` comes back to the
//! worker as it happened, and the worker resubmits the remainder. That keeps the
//! retry logic in one place, where the fault engine can exercise it.

use crate::EngineError;
use std::time::Duration;

pub mod fault;
pub mod mmap;
pub mod null;
pub mod psync;
pub mod uring;

pub use fault::{FaultCounts, FaultEngine, FaultRule, FaultTrigger};
pub use mmap::MmapEngine;
pub use null::NullEngine;
pub use psync::PsyncEngine;
pub use uring::UringEngine;

/// Read, write or trim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Read,
    Write,
    /// Discard the range: `BLKDISCARD` on a block device,
    /// `FALLOC_FL_PUNCH_HOLE` on a file. No buffer is used; a completion
    /// reports `len` on success. Engines do it synchronously when submitted
    /// (as fio does): neither io_uring nor psync has an asynchronous discard
    /// for both kinds of target on the kernels iorig supports.
    Trim,
}

/// One I/O handed to an engine: transfer `len` bytes between
/// `buffer(slot)[buf_offset..buf_offset + len]` and `offset` of target `target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    pub slot: u32,
    /// Index into the engine's target list.
    pub target: u32,
    pub op: OpKind,
    /// Absolute byte offset in the target (any header already added).
    pub offset: u64,
    pub len: u32,
    pub buf_offset: u32,
}

/// The outcome of one [`IoRequest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    /// Bytes transferred (may be fewer than asked: a short transfer), or `-errno`.
    pub result: i64,
}

/// The queue of an engine that carries out every I/O inside its
/// submitting call (psync, mmap, fault, null): requests wait here until
/// submitted, completions until reaped. Both vectors keep their capacity
/// between calls, so the hot path allocates nothing.
#[derive(Debug, Default)]
pub(crate) struct InlineQueue {
    queued: Vec<IoRequest>,
    completed: Vec<Completion>,
}

impl InlineQueue {
    /// Room for `slots` requests and completions.
    pub fn new(slots: u32) -> Self {
        InlineQueue {
            queued: Vec::with_capacity(slots as usize),
            completed: Vec::with_capacity(slots as usize),
        }
    }

    #[inline]
    pub fn push(&mut self, req: IoRequest) {
        self.queued.push(req);
    }

    /// Carries out every queued request in order with `io`, which gives its
    /// result (bytes, or a negative errno), as a completion.
    #[inline]
    pub fn run(&mut self, mut io: impl FnMut(&IoRequest) -> i64) {
        for req in self.queued.drain(..) {
            let result = io(&req);
            self.completed.push(Completion {
                slot: req.slot,
                result,
            });
        }
    }

    /// Hands over every completion.
    #[inline]
    pub fn reap(&mut self, out: &mut Vec<Completion>) {
        out.append(&mut self.completed);
    }
}

/// A way of doing I/O. One engine per worker thread; engines are not shared.
pub trait IoEngine: Send {
    fn name(&self) -> &'static str;

    /// The buffer owned by `slot` (its length is the largest block size, rounded
    /// up to the buffer alignment). Only valid while the slot is not in flight.
    fn buffer_mut(&mut self, slot: u32) -> &mut [u8];

    /// Queues one I/O. It starts at the next [`IoEngine::submit_and_wait`].
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError>;

    /// Starts every queued I/O, then waits until at least `min_complete`
    /// completions can be reaped or `timeout` has passed (`None`: no limit).
    /// `min_complete == 0` only submits.
    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        timeout: Option<Duration>,
    ) -> Result<(), EngineError>;

    /// Appends every completion available now to `out`, without blocking.
    fn reap(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError>;

    /// The run's clock starts now: engines that act on time (the fault
    /// engine's `at=` rules) count from here, so their times are the run's.
    fn clock_started(&mut self, _start: std::time::Instant) {}
}
