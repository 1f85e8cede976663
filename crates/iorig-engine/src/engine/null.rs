//! The null engine: no syscalls and no target; every I/O succeeds at once.
//!
//! It measures iorig's own per-I/O overhead (like fio's `null` engine), so the
//! hot path allocates nothing: the queue and completion vectors keep their
//! capacity between calls.

use super::{Completion, InlineQueue, IoEngine, IoRequest};
use crate::buffers::AlignedBuffers;
use crate::EngineError;
use std::time::Duration;

/// Completes every I/O immediately with its full length, touching nothing.
#[derive(Debug)]
pub struct NullEngine {
    buffers: AlignedBuffers,
    queue: InlineQueue,
}

impl NullEngine {
    /// An engine with `slots` buffers of at least `slot_bytes` each.
    pub fn new(slots: u32, slot_bytes: usize) -> Result<Self, EngineError> {
        let buffers = AlignedBuffers::new(slots, slot_bytes)?;
        Ok(NullEngine {
            buffers,
            queue: InlineQueue::new(slots),
        })
    }
}

impl IoEngine for NullEngine {
    #[inline]
    fn name(&self) -> &'static str {
        "null"
    }

    #[inline]
    fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        self.buffers.slot_mut(slot)
    }

    /// Any target index is accepted (there are none); the slot range is checked.
    #[inline]
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        if !self.buffers.contains(req.slot, req.buf_offset, req.len) {
            return Err(super::psync::bad_request(
                "null",
                &req,
                &self.buffers,
                usize::MAX,
            ));
        }
        self.queue.push(req);
        Ok(())
    }

    #[inline]
    fn submit_and_wait(
        &mut self,
        _min_complete: u32,
        _timeout: Option<Duration>,
    ) -> Result<(), EngineError> {
        self.queue.run(|r| r.len as i64);
        Ok(())
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        self.queue.reap(out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::OpKind;

    #[test]
    fn completes_everything_with_full_length() {
        let mut e = NullEngine::new(4, 8192).unwrap();
        assert_eq!(e.buffer_mut(3).len(), 8192);
        let mut out = Vec::new();
        for round in 0..3u64 {
            for s in 0..4u32 {
                e.queue(IoRequest {
                    slot: s,
                    target: 7,
                    op: if s % 2 == 0 {
                        OpKind::Read
                    } else {
                        OpKind::Write
                    },
                    offset: round * 4096,
                    len: 4096 * (s + 1) / 2,
                    buf_offset: 0,
                })
                .unwrap();
            }
            e.reap(&mut out).unwrap();
            assert!(out.is_empty(), "nothing completes before submit");
            e.submit_and_wait(4, None).unwrap();
            e.reap(&mut out).unwrap();
            assert_eq!(out.len(), 4);
            for (s, c) in out.iter().enumerate() {
                assert_eq!(c.slot, s as u32);
                assert_eq!(c.result, (4096 * (s + 1) / 2) as i64);
            }
            out.clear();
        }
        assert!(e
            .queue(IoRequest {
                slot: 4,
                target: 0,
                op: OpKind::Read,
                offset: 0,
                len: 1,
                buf_offset: 0
            })
            .is_err());
    }
}
