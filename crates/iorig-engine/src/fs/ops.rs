//! The operations themselves: one system call each (a create writes its
//! file, a session reads or writes inside one open file), each timed and
//! handed to an [`OpSink`] as it completes. Shared by the format phase and
//! the workload's workers.

use crate::buffers::AlignedBuffers;
use crate::data::DataFiller;
use crate::gen::SizeGen;
use crate::verify::{Phase, VerifyWorker};
use iorig_spec::{FsOp, SyncMode};
use iorig_verify::UnitError;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::PathBuf;

/// An entry of the tree: its name in a directory iorig opened beneath the
/// anchor (see [`super::beneath`]), and its path for messages. Entries are
/// never followed when they are links: opens carry `O_NOFOLLOW`, stats and
/// time changes `AT_SYMLINK_NOFOLLOW`, and unlink, rmdir and rename act on
/// the name itself.
pub(crate) struct At<'a> {
    pub dir: BorrowedFd<'a>,
    pub name: &'a str,
    /// The entry's path, built only for a message.
    pub path: &'a dyn Fn() -> PathBuf,
}

/// Where completed operations go.
pub(crate) trait OpSink {
    /// Nanoseconds since the run's start.
    fn now_ns(&self) -> u64;
    /// One operation completed at `now_ns()`: it was due at `sched_ns`
    /// (its latency counts from there) and really began at `submit_ns`.
    /// `Req::Mix` for an operation of the workload's mix (the total counts
    /// it), `Req::Along` for one that rides along (the open and close
    /// around transfers, the writes inside a create). Returns the
    /// completion time.
    fn done(&mut self, op: FsOp, bytes: u64, sched_ns: u64, submit_ns: u64, req: Req) -> u64;
    /// When the next transfer of a session is due (waiting for it under a
    /// rate); None when the run is ending.
    fn next_due(&mut self) -> Option<u64>;
    /// Operations are due on a schedule (`--rate`): their latency counts
    /// from it. Unpaced, a transfer counts from its system call, as a
    /// block I/O does from its submission (so not the open before it, nor
    /// a validation pre-read or journal write).
    fn paced(&self) -> bool;
}

/// Whether an operation is one of the mix or rides along with one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Req {
    Mix,
    Along,
}

/// What a worker needs to move data: an aligned buffer, the write
/// contents, the transfer sizes and the open flags.
pub(crate) struct DataIo {
    pub buf: AlignedBuffers,
    pub data: DataFiller,
    /// Transfer sizes, per direction when reads and writes differ.
    pub bs: SizeGen,
    pub direct: bool,
    pub sync: SyncMode,
    /// The buffer holds read data (a write refreshes it first).
    pub stale: bool,
    /// Data validation (`--verify`): the tree is one validation target
    /// whose file `slot` starts at `slot × span` ([`DataIo::at_file`]).
    pub verify: Option<VerifyWorker>,
    /// Where the current file starts in the validation target.
    pub vbase: u64,
    /// Validation errors found, with the file they were found in, for the
    /// caller to report.
    pub errors: Vec<(std::path::PathBuf, UnitError)>,
}

impl DataIo {
    /// The next operation works on the file that starts at `vbase` of the
    /// validation target.
    pub fn at_file(&mut self, vbase: u64) {
        self.vbase = vbase;
    }

    /// Adds this worker's validation counts to the run's.
    pub fn flush_counts(&mut self) {
        if let Some(v) = &mut self.verify {
            v.flush_counts();
        }
    }
}

/// Reads `buf.len()` bytes at `offset`; fewer only at the end of the file.
fn pread_full(fd: &OwnedFd, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut done = 0usize;
    while done < buf.len() {
        match rustix::io::pread(fd, &mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(e) => return Err(io(e)),
        }
    }
    Ok(done)
}

impl DataIo {
    /// Read-write for writes under validation (pre-reads and read-backs
    /// read what they write over).
    fn access(&self, write: bool) -> OFlags {
        match (write, self.verify.is_some()) {
            (false, _) => OFlags::RDONLY,
            (true, false) => OFlags::WRONLY,
            (true, true) => OFlags::RDWR,
        }
    }

    fn flags(&self, write: bool) -> OFlags {
        let mut f = OFlags::CLOEXEC;
        if self.direct {
            f |= OFlags::DIRECT;
        }
        if write {
            f |= match self.sync {
                SyncMode::None => OFlags::empty(),
                SyncMode::Sync => OFlags::SYNC,
                SyncMode::Dsync => OFlags::DSYNC,
            };
        }
        f
    }
}

/// An operation's failure, as one line naming what and where.
pub(crate) fn failed(op: &str, at: &At<'_>, e: impl std::fmt::Display) -> String {
    format!("{op} {}: {e}", (at.path)().display())
}

fn io(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from(e)
}

/// Writes `len` bytes of fresh data at `offset`, the rest of a short write
/// after it; one write operation. Under validation the block's units are
/// held for the write; a write that fails leaves them released and
/// unknown (what the file holds there is not known), so the other workers
/// go on with the file.
#[allow(clippy::too_many_arguments)]
fn write_at(
    sink: &mut dyn OpSink,
    dio: &mut DataIo,
    fd: &OwnedFd,
    target: u32,
    offset: u64,
    len: usize,
    sched_ns: u64,
    req: Req,
) -> std::io::Result<u64> {
    let voff = dio.vbase + offset;
    if let Some(v) = &dio.verify {
        if !v.lock(0, voff, len as u32) {
            return Err(std::io::Error::other(
                "validation: the block is held by another I/O",
            ));
        }
    }
    let r = write_locked(sink, dio, fd, target, offset, len, sched_ns, req);
    if r.is_err() {
        if let Some(v) = &dio.verify {
            v.trimmed(0, voff, len as u32);
        }
    }
    r
}

/// [`write_at`] once the block is held.
#[allow(clippy::too_many_arguments)]
fn write_locked(
    sink: &mut dyn OpSink,
    dio: &mut DataIo,
    fd: &OwnedFd,
    target: u32,
    offset: u64,
    len: usize,
    sched_ns: u64,
    req: Req,
) -> std::io::Result<u64> {
    let vbase = dio.vbase;
    let buf = dio.buf.slot_mut(0);
    let Some(buf) = buf.get_mut(..len) else {
        return Err(std::io::Error::other("transfer larger than the buffer"));
    };
    let voff = vbase + offset;
    match &mut dio.verify {
        Some(v) => {
            // Data of a known write is read and checked before it is
            // overwritten, as block runs do.
            // A file made anew (a format's create) has nothing to read:
            // only a whole block read is checked.
            if v.known(0, voff, len as u32) && pread_full(fd, buf, offset)? == len {
                let mut errs = Vec::new();
                v.check(0, buf, 0, voff, Phase::PreRead, &mut errs);
                dio.errors
                    .extend(errs.into_iter().map(|e| (std::path::PathBuf::new(), e)));
            }
            v.prepare_write(0, buf, 0, voff, sink.now_ns());
            v.flush_intents().map_err(std::io::Error::other)?;
        }
        None => dio.data.fill(buf, target, offset, dio.stale),
    }
    dio.stale = false;
    let submit = sink.now_ns();
    let sched_ns = if sink.paced() { sched_ns } else { submit };
    let mut done = 0usize;
    while done < len {
        match rustix::io::pwrite(fd, &buf[done..], offset + done as u64) {
            Ok(0) => return Err(std::io::Error::other("wrote 0 bytes")),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(e) => return Err(io(e)),
        }
    }
    sink.done(FsOp::Write, len as u64, sched_ns, submit, req);
    if let Some(v) = &mut dio.verify {
        if v.after_write() {
            // Journaled as done now; the keys are published after the
            // read-back.
            v.write_done(0, 0, voff, len as u32, false);
            v.finish_writes().map_err(std::io::Error::other)?;
            pread_full(fd, buf, offset)?;
            let mut errs = Vec::new();
            v.check(0, buf, 0, voff, Phase::AfterRead, &mut errs);
            dio.errors
                .extend(errs.into_iter().map(|e| (std::path::PathBuf::new(), e)));
            v.release_written(0, 0, voff);
            dio.stale = true;
        } else {
            v.write_done(0, 0, voff, len as u32, true);
            v.finish_writes().map_err(std::io::Error::other)?;
        }
    }
    Ok(len as u64)
}

/// Creates `path` and writes it to `size` bytes: the create counts from
/// `sched_ns` to its last write, each write and the close on their own. `replace` truncates a
/// file that is there (a format rewriting a file of the wrong size) instead
/// of failing.
#[allow(clippy::too_many_arguments)]
pub(crate) fn create(
    sink: &mut dyn OpSink,
    dio: &mut DataIo,
    path: &At<'_>,
    size: u64,
    target: u32,
    sched_ns: u64,
    replace: bool,
) -> Result<(), String> {
    let submit = sink.now_ns();
    let mut flags = dio.flags(true) | dio.access(true) | OFlags::CREATE | OFlags::NOFOLLOW;
    flags |= if replace { OFlags::TRUNC } else { OFlags::EXCL };
    let fd = rustix::fs::openat(path.dir, path.name, flags, Mode::from_raw_mode(0o644))
        .map_err(|e| failed("create", path, io(e)))?;
    let mut at = 0u64;
    while at < size {
        let len = dio.bs.next_bs(false).min(size - at) as usize;
        let sched = sink.now_ns();
        write_at(sink, dio, &fd, target, at, len, sched, Req::Along)
            .map_err(|e| failed("write", path, e))?;
        at += len as u64;
    }
    // The create ends with its data down; the close is counted on its own,
    // as it is after every other open (and as fio's filecreate times only
    // the open of an empty file).
    sink.done(FsOp::Create, size, sched_ns, submit, Req::Mix);
    close(sink, fd);
    Ok(())
}

pub(crate) fn delete(sink: &mut dyn OpSink, path: &At<'_>, sched_ns: u64) -> Result<(), String> {
    let submit = sink.now_ns();
    rustix::fs::unlinkat(path.dir, path.name, AtFlags::empty())
        .map_err(|e| failed("delete", path, io(e)))?;
    sink.done(FsOp::Delete, 0, sched_ns, submit, Req::Mix);
    Ok(())
}

pub(crate) fn mkdir(sink: &mut dyn OpSink, path: &At<'_>, sched_ns: u64) -> Result<(), String> {
    let submit = sink.now_ns();
    rustix::fs::mkdirat(path.dir, path.name, Mode::from_raw_mode(0o755))
        .map_err(|e| failed("mkdir", path, io(e)))?;
    sink.done(FsOp::Mkdir, 0, sched_ns, submit, Req::Mix);
    Ok(())
}

pub(crate) fn rmdir(sink: &mut dyn OpSink, path: &At<'_>, sched_ns: u64) -> Result<(), String> {
    let submit = sink.now_ns();
    rustix::fs::unlinkat(path.dir, path.name, AtFlags::REMOVEDIR)
        .map_err(|e| failed("rmdir", path, io(e)))?;
    sink.done(FsOp::Rmdir, 0, sched_ns, submit, Req::Mix);
    Ok(())
}

pub(crate) fn stat(sink: &mut dyn OpSink, path: &At<'_>, sched_ns: u64) -> Result<(), String> {
    let submit = sink.now_ns();
    rustix::fs::statat(path.dir, path.name, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| failed("stat", path, io(e)))?;
    sink.done(FsOp::Stat, 0, sched_ns, submit, Req::Mix);
    Ok(())
}

/// chmod to `mode` and both times set to now: one setattr. The chmod is by
/// name in the leaf's descriptor, which follows a link in the slot itself
/// (Linux before fchmodat2 has no chmod that does not): the format's scan
/// refuses links in slots before any operation runs, and during the run
/// only the tree's owner can add one to a directory iorig made.
pub(crate) fn setattr(
    sink: &mut dyn OpSink,
    path: &At<'_>,
    mode: u32,
    sched_ns: u64,
) -> Result<(), String> {
    let submit = sink.now_ns();
    rustix::fs::chmodat(
        path.dir,
        path.name,
        Mode::from_raw_mode(mode),
        AtFlags::empty(),
    )
    .map_err(|e| failed("setattr", path, io(e)))?;
    let now = rustix::fs::Timestamps {
        last_access: rustix::fs::Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_NOW,
        },
        last_modification: rustix::fs::Timespec {
            tv_sec: 0,
            tv_nsec: rustix::fs::UTIME_NOW,
        },
    };
    rustix::fs::utimensat(path.dir, path.name, &now, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| failed("setattr", path, io(e)))?;
    sink.done(FsOp::Setattr, 0, sched_ns, submit, Req::Mix);
    Ok(())
}

pub(crate) fn rename(
    sink: &mut dyn OpSink,
    from: &At<'_>,
    to: &At<'_>,
    sched_ns: u64,
) -> Result<(), String> {
    let submit = sink.now_ns();
    rustix::fs::renameat(from.dir, from.name, to.dir, to.name)
        .map_err(|e| failed("rename", from, io(e)))?;
    sink.done(FsOp::Rename, 0, sched_ns, submit, Req::Mix);
    Ok(())
}

/// Lists a directory (`path.dir` itself; its name is for messages) to its
/// end: an open, the reads of its entries and the close, as `opendir`,
/// `readdir` and `closedir` do. Returns the entries seen.
pub(crate) fn readdir(sink: &mut dyn OpSink, path: &At<'_>, sched_ns: u64) -> Result<u64, String> {
    let submit = sink.now_ns();
    let mut n = 0u64;
    let mut dir =
        rustix::fs::Dir::read_from(path.dir).map_err(|e| failed("readdir", path, io(e)))?;
    for e in &mut dir {
        e.map_err(|e| failed("readdir", path, io(e)))?;
        n += 1;
    }
    sink.done(FsOp::Readdir, 0, sched_ns, submit, Req::Mix);
    Ok(n)
}

/// Opens `path` (an open operation counted from `sched_ns`).
fn open(
    sink: &mut dyn OpSink,
    path: &At<'_>,
    flags: OFlags,
    sched_ns: u64,
    req: Req,
) -> Result<OwnedFd, String> {
    let submit = sink.now_ns();
    let fd = rustix::fs::openat(path.dir, path.name, flags | OFlags::NOFOLLOW, Mode::empty())
        .map_err(|e| failed("open", path, io(e)))?;
    sink.done(FsOp::Open, 0, sched_ns, submit, req);
    Ok(fd)
}

fn close(sink: &mut dyn OpSink, fd: OwnedFd) {
    let t = sink.now_ns();
    drop(fd);
    sink.done(FsOp::Close, 0, t, t, Req::Along);
}

/// An open and its close, nothing between.
pub(crate) fn open_close(
    sink: &mut dyn OpSink,
    path: &At<'_>,
    sched_ns: u64,
) -> Result<(), String> {
    let fd = open(
        sink,
        path,
        OFlags::RDONLY | OFlags::CLOEXEC,
        sched_ns,
        Req::Mix,
    )?;
    close(sink, fd);
    Ok(())
}

/// Open for writing, fsync, close.
pub(crate) fn fsync(sink: &mut dyn OpSink, path: &At<'_>, sched_ns: u64) -> Result<(), String> {
    let t = sink.now_ns();
    let fd = open(sink, path, OFlags::WRONLY | OFlags::CLOEXEC, t, Req::Along)?;
    let submit = sink.now_ns();
    rustix::fs::fsync(&fd).map_err(|e| failed("fsync", path, io(e)))?;
    sink.done(FsOp::Fsync, 0, sched_ns, submit, Req::Mix);
    close(sink, fd);
    Ok(())
}

/// Where the transfers of a session go.
pub(crate) trait Offsets {
    /// The next transfer of a session (its `k`-th; the last one ended at
    /// `at`) in a file of `size` bytes: offset and length; None ends the
    /// session.
    fn next(&mut self, k: u64, at: u64, size: u64, len: u64) -> Option<(u64, u64)>;
}

/// One open–transfers–close of a file: reads or writes of `bs` each, at
/// most `transfers`, until `offsets` ends the session; the first is due at
/// `first_sched_ns`, each later one when the sink says.
#[allow(clippy::too_many_arguments)]
pub(crate) fn session(
    sink: &mut dyn OpSink,
    dio: &mut DataIo,
    path: &At<'_>,
    size: u64,
    target: u32,
    write: bool,
    transfers: u64,
    offsets: &mut dyn Offsets,
    first_sched_ns: u64,
) -> Result<(), String> {
    let flags = dio.flags(write) | dio.access(write);
    let t = sink.now_ns();
    let fd = open(sink, path, flags, t, Req::Along)?;
    let mut at = 0u64;
    let mut sched = Some(first_sched_ns);
    for k in 0..transfers {
        let Some(s) = sched else { break };
        let len = dio.bs.next_bs(!write);
        let Some((off, len)) = offsets.next(k, at, size, len) else {
            break;
        };
        if write {
            write_at(sink, dio, &fd, target, off, len as usize, s, Req::Mix)
                .map_err(|e| failed("write", path, e))?;
        } else {
            let buf = dio.buf.slot_mut(0);
            let Some(buf) = buf.get_mut(..len as usize) else {
                return Err(failed("read", path, "transfer larger than the buffer"));
            };
            let voff = dio.vbase + off;
            if let Some(v) = &dio.verify {
                if !v.lock(0, voff, len as u32) {
                    return Err(failed(
                        "read",
                        path,
                        "validation: the block is held by another I/O",
                    ));
                }
            }
            let submit = sink.now_ns();
            let s = if sink.paced() { s } else { submit };
            let n = loop {
                match rustix::io::pread(&fd, &mut *buf, off) {
                    Ok(n) => break n,
                    Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
                    Err(e) => {
                        if let Some(v) = &dio.verify {
                            v.release(0, voff, len as u32);
                        }
                        return Err(failed("read", path, io(e)));
                    }
                }
            };
            dio.stale = true;
            if let Some(v) = &mut dio.verify {
                if n == len as usize {
                    let mut errs = Vec::new();
                    v.check(0, buf, 0, voff, Phase::Plain, &mut errs);
                    dio.errors
                        .extend(errs.into_iter().map(|e| ((path.path)(), e)));
                }
                v.release(0, voff, len as u32);
            }
            if n == 0 {
                // The end of the file (a renamed file may be shorter).
                break;
            }
            sink.done(FsOp::Read, n as u64, s, submit, Req::Mix);
        }
        at = off + len;
        if k + 1 < transfers {
            sched = sink.next_due();
        }
    }
    close(sink, fd);
    Ok(())
}
