//! The psync engine: one `pread(2)`/`pwrite(2)` per I/O, done synchronously.
//!
//! Every queued request is carried out, in queue order, inside
//! [`IoEngine::submit_and_wait`]; the worker normally runs it at queue depth 1.

use super::{Completion, InlineQueue, IoEngine, IoRequest, OpKind};
use crate::buffers::AlignedBuffers;
use crate::EngineError;
use std::os::fd::RawFd;
use std::time::Duration;

/// Synchronous `pread`/`pwrite` engine.
///
/// The engine does not own the file descriptors: the caller keeps them open for
/// the engine's whole life and closes them afterwards.
#[derive(Debug)]
pub struct PsyncEngine {
    fds: Vec<RawFd>,
    buffers: AlignedBuffers,
    queue: InlineQueue,
}

impl PsyncEngine {
    /// An engine over `fds` (indexed by [`IoRequest::target`]) with `slots`
    /// buffers of at least `slot_bytes` each.
    pub fn new(fds: Vec<RawFd>, slots: u32, slot_bytes: usize) -> Result<Self, EngineError> {
        let buffers = AlignedBuffers::new(slots, slot_bytes)?;
        Ok(PsyncEngine {
            fds,
            buffers,
            queue: InlineQueue::new(slots),
        })
    }
}

impl IoEngine for PsyncEngine {
    fn name(&self) -> &'static str {
        "psync"
    }

    #[inline]
    fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        self.buffers.slot_mut(slot)
    }

    #[inline]
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        check_request(self.name(), &req, &self.buffers, self.fds.len())?;
        self.queue.push(req);
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        _min_complete: u32,
        _timeout: Option<Duration>,
    ) -> Result<(), EngineError> {
        let (fds, buffers) = (&self.fds, &self.buffers);
        self.queue.run(|req| match fds.get(req.target as usize) {
            Some(&fd) => sync_io(fd, buffers, req, req.len),
            None => -(libc::EBADF as i64),
        });
        Ok(())
    }

    #[inline]
    fn reap(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        self.queue.reap(out);
        Ok(())
    }
}

/// Rejects a request naming a missing slot or target, or overrunning its slot.
#[inline]
pub(crate) fn check_request(
    engine: &'static str,
    req: &IoRequest,
    buffers: &AlignedBuffers,
    targets: usize,
) -> Result<(), EngineError> {
    if (req.target as usize) < targets && buffers.contains(req.slot, req.buf_offset, req.len) {
        return Ok(());
    }
    Err(bad_request(engine, req, buffers, targets))
}

#[cold]
pub(crate) fn bad_request(
    engine: &'static str,
    req: &IoRequest,
    buffers: &AlignedBuffers,
    targets: usize,
) -> EngineError {
    let why = if req.slot >= buffers.slots() {
        format!(
            "request for slot {} but the engine has {} slots",
            req.slot,
            buffers.slots()
        )
    } else if req.target as usize >= targets {
        format!(
            "request for target {} but the engine has {} targets",
            req.target, targets
        )
    } else {
        format!(
            "request of {} bytes at buffer offset {} overruns the {}-byte slot",
            req.len,
            req.buf_offset,
            buffers.slot_bytes()
        )
    };
    EngineError::Engine { engine, why }
}

/// The last OS error as a negative errno.
#[inline]
fn neg_errno() -> i64 {
    -(std::io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO) as i64)
}

/// Does `req` synchronously with one `pread`/`pwrite` of `len` bytes (at most
/// `req.len`), retrying on `EINTR`. Returns the bytes transferred or `-errno`.
///
/// The caller must have checked the request with [`check_request`].
/// Discards `len` bytes at `offset`: `BLKDISCARD` on a block device,
/// `FALLOC_FL_PUNCH_HOLE` (keeping the size) on a file. Returns `len`, or
/// `-errno` (`-EOPNOTSUPP` where neither is supported).
pub(crate) fn trim_range(fd: RawFd, offset: u64, len: u64) -> i64 {
    if fd < 0 {
        return -(libc::EBADF as i64);
    }
    // SAFETY: the descriptor is the engine's open target, alive for the call.
    let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let block = rustix::fs::fstat(fd).is_ok_and(|st| {
        rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::BlockDevice
    });
    let r = if block {
        iorig_blockdev::discard(fd, offset, len)
    } else {
        use rustix::fs::FallocateFlags as F;
        rustix::fs::fallocate(fd, F::PUNCH_HOLE | F::KEEP_SIZE, offset, len)
            .map_err(std::io::Error::from)
    };
    match r {
        Ok(()) => i64::try_from(len).unwrap_or(i64::MAX),
        Err(e) => -i64::from(e.raw_os_error().unwrap_or(libc::EIO)),
    }
}

pub(crate) fn sync_io(fd: RawFd, buffers: &AlignedBuffers, req: &IoRequest, len: u32) -> i64 {
    let len = len.min(req.len);
    if req.op == OpKind::Trim {
        return trim_range(fd, req.offset, u64::from(len));
    }
    if !buffers.contains(req.slot, req.buf_offset, len) {
        return -(libc::EFAULT as i64);
    }
    let Ok(offset) = libc::off_t::try_from(req.offset) else {
        return -(libc::EINVAL as i64);
    };
    // SAFETY: `contains` checked that the slot exists and that
    // [buf_offset, buf_offset + len) lies inside it, so the pointer stays inside
    // the allocation.
    let buf = unsafe { buffers.slot_ptr(req.slot).add(req.buf_offset as usize) };
    loop {
        let n = match req.op {
            // SAFETY: `buf` is valid for writes of `len` bytes (checked above);
            // the engine owns the buffers and no Rust reference to this slot is
            // alive while the engine runs the request (buffer_mut needs &mut
            // engine, and we hold the engine borrowed here).
            OpKind::Read => unsafe { libc::pread(fd, buf.cast(), len as usize, offset) },
            // SAFETY: `buf` is valid for reads of `len` bytes (checked above).
            OpKind::Write => unsafe { libc::pwrite(fd, buf.cast(), len as usize, offset) },
            OpKind::Trim => return trim_range(fd, req.offset, u64::from(len)),
        };
        if n >= 0 {
            return n as i64;
        }
        let e = neg_errno();
        if e != -(libc::EINTR as i64) {
            return e;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::fs::{File, OpenOptions};
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;

    /// A temporary file opened O_DIRECT when the file system allows it; the
    /// bool says whether it is.
    pub(crate) fn temp_target(size: u64) -> (tempfile::TempDir, File, bool) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.dat");
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        f.set_len(size).unwrap();
        drop(f);
        match OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
        {
            Ok(f) => (dir, f, true),
            Err(_) => {
                let f = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&path)
                    .unwrap();
                (dir, f, false)
            }
        }
    }

    pub(crate) fn pattern(block: u64, len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (block as usize * 31 + i * 7 + 1) as u8)
            .collect()
    }

    pub(crate) fn req(slot: u32, op: OpKind, offset: u64, len: u32) -> IoRequest {
        IoRequest {
            slot,
            target: 0,
            op,
            offset,
            len,
            buf_offset: 0,
        }
    }

    /// Runs one request to completion on `e` and returns its result.
    pub(crate) fn one(e: &mut dyn IoEngine, r: IoRequest) -> i64 {
        e.queue(r).unwrap();
        e.submit_and_wait(1, None).unwrap();
        let mut out = Vec::new();
        while out.is_empty() {
            e.reap(&mut out).unwrap();
            if out.is_empty() {
                e.submit_and_wait(1, None).unwrap();
            }
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].slot, r.slot);
        out[0].result
    }

    #[test]
    fn psync_write_then_read_back() {
        let (_dir, f, direct) = temp_target(1 << 20);
        eprintln!("O_DIRECT: {direct}");
        let mut e = PsyncEngine::new(vec![f.as_raw_fd()], 2, 4096).unwrap();
        for b in 0..16u64 {
            e.buffer_mut(0).copy_from_slice(&pattern(b, 4096));
            assert_eq!(one(&mut e, req(0, OpKind::Write, b * 4096, 4096)), 4096);
        }
        for b in (0..16u64).rev() {
            e.buffer_mut(1).fill(0);
            assert_eq!(one(&mut e, req(1, OpKind::Read, b * 4096, 4096)), 4096);
            assert_eq!(e.buffer_mut(1), &pattern(b, 4096)[..]);
        }
        // Several queued at once all complete in one call.
        for s in 0..2u32 {
            e.queue(req(s, OpKind::Read, s as u64 * 4096, 4096))
                .unwrap();
        }
        e.submit_and_wait(2, None).unwrap();
        let mut out = Vec::new();
        e.reap(&mut out).unwrap();
        assert_eq!(out.len(), 2);
        assert!(out.iter().all(|c| c.result == 4096));
        // Reading past the end of the file is a short (zero) transfer.
        assert_eq!(one(&mut e, req(0, OpKind::Read, 1 << 20, 4096)), 0);
    }

    #[test]
    fn psync_rejects_bad_requests_and_reports_errno() {
        let (_dir, f, _) = temp_target(1 << 16);
        let mut e = PsyncEngine::new(vec![f.as_raw_fd()], 1, 4096).unwrap();
        assert!(e.queue(req(1, OpKind::Read, 0, 4096)).is_err());
        let mut r = req(0, OpKind::Read, 0, 4096);
        r.target = 1;
        assert!(e.queue(r).is_err());
        let mut r = req(0, OpKind::Read, 0, 4096);
        r.buf_offset = 512;
        assert!(e.queue(r).is_err());
        // A bad fd comes back as -EBADF.
        let mut e = PsyncEngine::new(vec![-1], 1, 4096).unwrap();
        assert_eq!(
            one(&mut e, req(0, OpKind::Read, 0, 4096)),
            -(libc::EBADF as i64)
        );
    }
}
