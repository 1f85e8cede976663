//! Per-I/O records: every counted I/O of a run, with its times, direction,
//! place and size, for a per-I/O log (`iorig run --lat-log`).
//!
//! Workers gather records in chunks and hand each full chunk to a channel the
//! caller drains, so a worker never formats or writes anything itself; the
//! channel is bounded, so a reader that falls far behind slows the workers
//! (and shows in their latency) instead of growing memory without end.

use crossbeam_channel::Sender;

/// One I/O. Times are nanoseconds from the run's start on the monotonic
/// clock the latency histograms use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRecord {
    /// When the I/O's latency starts: its scheduled time under a rate, else
    /// when its slot was refilled (as the histograms count it).
    pub start_ns: u64,
    /// When it was first handed to the kernel (a resubmission after a short
    /// transfer or `EAGAIN` keeps this time).
    pub submit_ns: u64,
    /// When its completion was reaped.
    pub complete_ns: u64,
    /// Byte offset in its target.
    pub offset_bytes: u64,
    pub size_bytes: u32,
    /// Index of its target in the workload's target list.
    pub target: u32,
    pub worker: u32,
    pub op: crate::OpKind,
}

impl IoRecord {
    /// The latency the histograms recorded for it.
    pub fn lat_ns(&self) -> u64 {
        self.complete_ns.saturating_sub(self.start_ns)
    }
}

/// Records per chunk handed over at once.
pub const CHUNK_RECORDS: usize = 8192;

/// Full chunks the channel holds before a worker waits for the reader.
pub const CHANNEL_CHUNKS: usize = 128;

/// Where the workers send their chunks.
pub type IoRecordSender = Sender<Vec<IoRecord>>;

/// A worker's side: fills a chunk and sends it when full, and the rest when
/// dropped.
pub(crate) struct IoRecorder {
    chunk: Vec<IoRecord>,
    tx: IoRecordSender,
}

impl IoRecorder {
    pub(crate) fn new(tx: IoRecordSender) -> Self {
        IoRecorder {
            chunk: Vec::with_capacity(CHUNK_RECORDS),
            tx,
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, r: IoRecord) {
        self.chunk.push(r);
        if self.chunk.len() >= CHUNK_RECORDS {
            self.send();
        }
    }

    fn send(&mut self) {
        let full = std::mem::replace(&mut self.chunk, Vec::with_capacity(CHUNK_RECORDS));
        // A reader that is gone has stopped wanting records; the run goes on.
        let _ = self.tx.send(full);
    }
}

impl Drop for IoRecorder {
    fn drop(&mut self) {
        if !self.chunk.is_empty() {
            self.send();
        }
    }
}
