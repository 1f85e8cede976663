//! The mmap engine (fio's `ioengine=mmap`): each target mapped shared into
//! memory once, a read copied out of the mapping and a write copied into
//! it, done synchronously as psync does its calls.
//!
//! The storage is reached through the page cache: a read of a page not in
//! memory faults it in, a write dirties it for the kernel to write back
//! (the worker's fsync rules sync them, as fio's msync). So this engine
//! measures what a program that maps its data meets, not the device alone;
//! O_DIRECT has no meaning here and the spec refuses it.

use super::psync::{check_request, trim_range};
use super::{Completion, InlineQueue, IoEngine, IoRequest, OpKind};
use crate::buffers::AlignedBuffers;
use crate::EngineError;
use std::os::fd::{BorrowedFd, RawFd};
use std::time::Duration;

/// One target's mapping, unmapped when dropped (also when a later
/// target fails to map).
#[derive(Debug)]
struct Mapping {
    ptr: *mut u8,
    len: usize,
    writable: bool,
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: made by `MmapEngine::new` with this length, unmapped once.
        let _ = unsafe { rustix::mm::munmap(self.ptr.cast(), self.len) };
    }
}

/// Synchronous copies to and from shared mappings of the targets.
///
/// The engine does not own the file descriptors (the caller keeps them open
/// for its whole life); it unmaps its mappings when dropped.
#[derive(Debug)]
pub struct MmapEngine {
    fds: Vec<RawFd>,
    maps: Vec<Mapping>,
    buffers: AlignedBuffers,
    queue: InlineQueue,
}

// SAFETY: the mappings are the engine's own (made in `new`, unmapped in
// `drop`) and only touched through `&mut self`, from one thread at a time.
unsafe impl Send for MmapEngine {}

impl MmapEngine {
    /// An engine over `fds` (indexed by [`IoRequest::target`]), each mapped
    /// whole (shared, for writing where the target was opened for it), with
    /// `slots` buffers of at least `slot_bytes` each. `random_pct` advises
    /// the kernel as fio's fadvise_hint does for its mapping: random access
    /// reads no pages around a fault, sequential reads ahead.
    ///
    /// Each worker maps each target whole: the address space taken is
    /// workers × the targets' size (Linux gives a process 128 TiB).
    pub fn new(
        fds: Vec<RawFd>,
        slots: u32,
        slot_bytes: usize,
        random_pct: f64,
    ) -> Result<Self, EngineError> {
        use rustix::mm::{madvise, mmap, Advice, MapFlags, ProtFlags};
        let buffers = AlignedBuffers::new(slots, slot_bytes)?;
        let mut maps = Vec::with_capacity(fds.len());
        let io = |what: &str, e: rustix::io::Errno| EngineError::Io {
            what: what.into(),
            source: std::io::Error::from(e),
        };
        for &fd in &fds {
            // SAFETY: the caller keeps the descriptor open for the engine's life.
            let b = unsafe { BorrowedFd::borrow_raw(fd) };
            // A file's length or a block device's size alike.
            let len = rustix::fs::seek(b, rustix::fs::SeekFrom::End(0))
                .map_err(|e| io("finding a target's size to map it", e))?;
            let len = usize::try_from(len)
                .map_err(|_| EngineError::Usage("a target too large to map".into()))?;
            if len == 0 {
                return Err(EngineError::Usage(
                    "an empty target cannot be mapped".into(),
                ));
            }
            let writable =
                rustix::fs::fcntl_getfl(b).is_ok_and(|f| f.contains(rustix::fs::OFlags::RDWR));
            let prot = if writable {
                ProtFlags::READ | ProtFlags::WRITE
            } else {
                ProtFlags::READ
            };
            // SAFETY: a new shared mapping of the whole target, at an
            // address the kernel picks. Other workers map the same pages;
            // the kernel keeps them coherent, and each worker copies only
            // through its own mapping.
            let ptr = unsafe { mmap(std::ptr::null_mut(), len, prot, MapFlags::SHARED, b, 0) }
                .map_err(|e| io("mapping a target", e))?;
            maps.push(Mapping {
                ptr: ptr.cast(),
                len,
                writable,
            });
            let advice = if random_pct >= 100.0 {
                Advice::Random
            } else if random_pct <= 0.0 {
                Advice::Sequential
            } else {
                Advice::Normal
            };
            // SAFETY: the range is the mapping just made; advice only.
            let _ = unsafe { madvise(ptr, len, advice) };
        }
        Ok(MmapEngine {
            fds,
            maps,
            buffers,
            queue: InlineQueue::new(slots),
        })
    }
}

/// Copies `req` between its slot in `buffers` and its target's mapping:
/// the bytes copied, or `-errno`.
fn copy(maps: &[Mapping], fds: &[RawFd], buffers: &mut AlignedBuffers, req: &IoRequest) -> i64 {
    let (Some(map), Some(&fd)) = (maps.get(req.target as usize), fds.get(req.target as usize))
    else {
        return -(libc::EBADF as i64);
    };
    if req.op == OpKind::Trim {
        return trim_range(fd, req.offset, u64::from(req.len));
    }
    let len = req.len as usize;
    let Some(end) = usize::try_from(req.offset)
        .ok()
        .and_then(|o| o.checked_add(len))
    else {
        return -(libc::EINVAL as i64);
    };
    if end > map.len {
        return -(libc::EINVAL as i64);
    }
    let at = req.offset as usize;
    let buf = &mut buffers.slot_mut(req.slot)[req.buf_offset as usize..][..len];
    // SAFETY: [at, at + len) lies inside the mapping (checked above);
    // the mapping and the slot buffer are distinct memory.
    unsafe {
        match req.op {
            OpKind::Read => std::ptr::copy_nonoverlapping(map.ptr.add(at), buf.as_mut_ptr(), len),
            _ if !map.writable => return -(libc::EBADF as i64),
            _ => std::ptr::copy_nonoverlapping(buf.as_ptr(), map.ptr.add(at), len),
        }
    }
    len as i64
}

impl IoEngine for MmapEngine {
    fn name(&self) -> &'static str {
        "mmap"
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
        let (maps, fds, buffers) = (&self.maps, &self.fds, &mut self.buffers);
        self.queue.run(|req| copy(maps, fds, buffers, req));
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
    use std::io::{Read, Seek, Write};
    use std::os::fd::AsRawFd;

    #[test]
    fn reads_and_writes_go_through_the_mapping() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![7u8; 64 << 10]).unwrap();
        let mut e = MmapEngine::new(vec![f.as_raw_fd()], 2, 4096, 100.0).unwrap();
        e.buffer_mut(0)[..4096].fill(0xAB);
        let w = IoRequest {
            slot: 0,
            target: 0,
            op: OpKind::Write,
            offset: 8192,
            len: 4096,
            buf_offset: 0,
        };
        let r = IoRequest {
            slot: 1,
            target: 0,
            op: OpKind::Read,
            offset: 8192,
            len: 4096,
            buf_offset: 0,
        };
        e.queue(w).unwrap();
        e.queue(r).unwrap();
        e.submit_and_wait(2, None).unwrap();
        let mut out = Vec::new();
        e.reap(&mut out).unwrap();
        assert_eq!(
            out.iter().map(|c| c.result).collect::<Vec<_>>(),
            [4096, 4096]
        );
        assert!(e.buffer_mut(1)[..4096].iter().all(|&b| b == 0xAB));
        // Past the end: refused, not a fault.
        e.queue(IoRequest {
            offset: 64 << 10,
            ..r
        })
        .unwrap();
        e.submit_and_wait(1, None).unwrap();
        out.clear();
        e.reap(&mut out).unwrap();
        assert_eq!(out[0].result, -(libc::EINVAL as i64));
        drop(e);
        // The file holds what was written through the mapping.
        let mut back = vec![0u8; 4096];
        f.seek(std::io::SeekFrom::Start(8192)).unwrap();
        f.read_exact(&mut back).unwrap();
        assert!(back.iter().all(|&b| b == 0xAB));
    }
}
