//! The page cache between steps: what one step wrote or read stays in
//! memory, and a buffered step after it would read that memory, not the
//! storage. Before each step the targets' cached pages are written back and
//! dropped, as fio's `invalidate=1` does when it opens a file:
//! `fdatasync` then `POSIX_FADV_DONTNEED` on a file, `BLKFLSBUF` on a block
//! device. `keep_cache` leaves them; `drop_caches` drops the whole host's
//! page cache, dentries and inodes first, as HCIBench does between tests.

use super::{OpenTarget, TargetKind};
use crate::target::CacheState;
use crate::EngineError;
use std::io::Write;

const DROP_CACHES: &str = "/proc/sys/vm/drop_caches";

/// Writes back and drops `t`'s cached pages. A device whose buffer cache
/// the kernel will not flush for us (BLKFLSBUF needs CAP_SYS_ADMIN) is
/// said so, not refused: its reads may still be served from memory.
pub(crate) fn invalidate(t: &OpenTarget) -> Result<CacheState, EngineError> {
    // Dirty pages are written first: DONTNEED skips them.
    if let Err(e) = rustix::fs::fdatasync(&t.file) {
        return Err(EngineError::Target {
            path: t.plan.path.display().to_string(),
            why: format!("writing back its cached pages before the step failed: {e}"),
        });
    }
    match t.plan.kind {
        TargetKind::File => {
            // Advice never fails on a regular file; nothing to report if it
            // does (the file then keeps its pages, as before this).
            match rustix::fs::fadvise(&t.file, 0, None, rustix::fs::Advice::DontNeed) {
                Ok(()) => Ok(CacheState::Dropped),
                Err(_) => Ok(CacheState::NotDropped),
            }
        }
        TargetKind::Block => match iorig_blockdev::flush_buffers(&t.file) {
            Ok(()) => Ok(CacheState::Dropped),
            Err(_) => Ok(CacheState::NotDropped),
        },
    }
}

/// Whether `drop_caches` can be done here: the file is root's to write.
pub(crate) fn check_drop_caches() -> Result<(), EngineError> {
    rustix::fs::access(DROP_CACHES, rustix::fs::Access::WRITE_OK).map_err(|e| {
        EngineError::Usage(format!(
            "--drop-caches writes {DROP_CACHES}, which this user cannot ({e}); run as root, or leave it out (each step still drops its targets' own cached pages)"
        ))
    })
}

/// Writes back everything dirty, then drops the host's page cache,
/// dentries and inodes (`echo 3 > /proc/sys/vm/drop_caches`).
pub(crate) fn drop_all_caches() -> Result<(), EngineError> {
    rustix::fs::sync();
    std::fs::OpenOptions::new()
        .write(true)
        .open(DROP_CACHES)
        .and_then(|mut f| f.write_all(b"3\n"))
        .map_err(|e| EngineError::Io {
            what: format!("--drop-caches: writing {DROP_CACHES}"),
            source: e,
        })
}
