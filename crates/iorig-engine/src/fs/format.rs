//! The format phase: the tree brought to its shape before the operations
//! start (vdbench's `format=`), measured on its own — mkdirs, creates with
//! their writes, and deletes when files must go first.

use super::beneath::{explain, Beneath};
use super::ops::{self, At, DataIo, OpSink, Req};
use super::tree::{kind_of, Tree, MARKER};
use super::FsTarget;
use crate::EngineError;
use iorig_spec::{FormatMode, FsOp, Workload};
use iorig_stats::{IntervalStats, WorkerIntervalStats};
use rustix::fs::{AtFlags, OFlags};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub use iorig_result::live::FormatProgress;

/// What the format phase did.
#[derive(Debug, Default)]
pub struct FormatOutcome {
    pub mode: Option<FormatMode>,
    /// Every operation of the phase (mkdir, create, write, delete, rmdir).
    pub stats: IntervalStats,
    pub files_kept: u64,
    pub files_removed: u64,
    pub dirs_created: u64,
    pub files_created: u64,
    pub bytes_written: u64,
    pub duration: Duration,
    /// Stopped before the tree was complete.
    pub interrupted: bool,
    /// One line each for the user (a fallback to buffered I/O, leftovers).
    pub notices: Vec<String>,
}

/// Counts every operation; never waits.
struct PhaseSink {
    start: Instant,
    stats: WorkerIntervalStats,
}

impl OpSink for PhaseSink {
    fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    fn done(&mut self, op: FsOp, bytes: u64, sched_ns: u64, submit_ns: u64, req: Req) -> u64 {
        let now = self.now_ns();
        let lat = now.saturating_sub(sched_ns);
        let service = now.saturating_sub(submit_ns);
        let count = |s: &mut iorig_stats::WorkerOpStats| {
            s.ops += 1;
            s.bytes += bytes;
            s.lat.record(lat);
            s.service_sum_ns += service;
        };
        count(self.stats.fs_op_mut(op));
        if req == Req::Mix {
            count(&mut self.stats.requested);
        }
        now
    }

    fn paced(&self) -> bool {
        false
    }

    fn next_due(&mut self) -> Option<u64> {
        Some(self.now_ns())
    }
}

/// What a leaf scan found.
struct Scan {
    /// Slots whose file has the wrong size (cut short by an interrupted
    /// format, or moved there by a rename).
    wrong: Vec<u64>,
}

/// Reads every used leaf directory and records which slots hold a file or
/// a directory. A slot's name holding anything else (a link, a directory
/// named as a file slot, …) is refused: iorig neither follows nor
/// replaces what it did not make.
fn scan(tree: &Tree, dirs: &Beneath) -> Result<Scan, EngineError> {
    use rustix::fs::FileType;
    let mut wrong = Vec::new();
    for leaf in 0..tree.used_leaf_dirs() {
        let shown = || tree.leaf_path(leaf);
        let dir = match dirs.leaf(tree, leaf) {
            Ok(d) => d,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(refused(&shown(), e)),
        };
        let listing = rustix::fs::Dir::read_from(&dir).map_err(|e| EngineError::Io {
            what: format!("listing {}", shown().display()),
            source: e.into(),
        })?;
        for entry in listing {
            let entry = entry.map_err(|e| EngineError::Io {
                what: format!("listing {}", shown().display()),
                source: e.into(),
            })?;
            let name = entry.file_name().to_string_lossy();
            let Some((slot, is_dir_slot)) = tree.slot_of_name(leaf, &name) else {
                continue;
            };
            let st = rustix::fs::statat(&dir, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| EngineError::Io {
                    what: format!("looking at {}", shown().join(&*name).display()),
                    source: e.into(),
                })?;
            let ty = FileType::from_raw_mode(st.st_mode);
            let expected = if is_dir_slot {
                FileType::Directory
            } else {
                FileType::RegularFile
            };
            if ty != expected {
                return Err(EngineError::Usage(format!(
                    "{} is {} where iorig's tree has a {}; iorig neither follows nor replaces it: remove it, or use another anchor",
                    shown().join(&*name).display(),
                    kind_of(ty),
                    if is_dir_slot { "directory" } else { "file" }
                )));
            }
            if is_dir_slot {
                tree.set(slot, tree.has_file(slot), true);
            } else {
                tree.set(slot, true, tree.has_dir(slot));
                if st.st_size as u64 != tree.size_of(slot) {
                    wrong.push(slot);
                }
            }
        }
    }
    Ok(Scan { wrong })
}

/// A directory of the tree that could not be opened: a link or a
/// non-directory in its place is the user's to remove (exit 2), anything
/// else a fault.
fn refused(path: &std::path::Path, e: std::io::Error) -> EngineError {
    match e.raw_os_error().map(rustix::io::Errno::from_raw_os_error) {
        Some(rustix::io::Errno::LOOP | rustix::io::Errno::XDEV | rustix::io::Errno::NOTDIR) => {
            EngineError::Usage(format!("{}: {}", path.display(), explain(e)))
        }
        _ => EngineError::Io {
            what: format!("opening {}", path.display()),
            source: e,
        },
    }
}

/// Opens parent directories for a walk over `dirs_in_order`, keeping the
/// last one (siblings come in a row).
struct Parents<'a> {
    dirs: &'a Beneath,
    last: Option<(PathBuf, OwnedFd)>,
}

impl Parents<'_> {
    /// The parent's descriptor and the name of `rel` in it.
    fn of<'p>(
        &mut self,
        rel: &'p Path,
    ) -> Result<(BorrowedFd<'_>, &'p std::ffi::OsStr), EngineError> {
        let parent = rel.parent().unwrap_or(Path::new(""));
        let name = rel.file_name().unwrap_or_default();
        if self.last.as_ref().is_none_or(|(p, _)| p != parent) {
            let fd = self
                .dirs
                .dir(parent)
                .map_err(|e| refused(&self.dirs.path().join(parent), e))?;
            self.last = Some((parent.to_path_buf(), fd));
        }
        match &self.last {
            Some((_, fd)) => Ok((fd.as_fd(), name)),
            None => Err(EngineError::Usage("no parent directory".into())),
        }
    }
}

/// Runs `work(i)` for every `i` of `items` on `threads` threads (item `i`
/// on thread `i % threads`), each with its own sink and data state, until
/// done, stopped or failed. Returns the merged statistics and the first
/// error.
fn parallel<F>(
    threads: u32,
    items: &[u64],
    stop: &AtomicBool,
    start: Instant,
    make_dio: &(dyn Fn(u32) -> Result<DataIo, EngineError> + Sync),
    work: &F,
    mut tick: impl FnMut(),
) -> Result<(IntervalStats, Option<String>), EngineError>
where
    F: Fn(&mut PhaseSinkRef<'_>, u64) -> Result<(), String> + Sync,
{
    let threads = threads.max(1).min(items.len().max(1) as u32);
    let dios = (0..threads).map(make_dio).collect::<Result<Vec<_>, _>>()?;
    let failed = AtomicBool::new(false);
    let finished = AtomicU64::new(0);
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = dios
            .into_iter()
            .enumerate()
            .map(|(t, dio)| {
                let failed = &failed;
                let finished = &finished;
                scope.spawn(move || {
                    let mut sink = PhaseSink {
                        start,
                        stats: WorkerIntervalStats::for_fs(),
                    };
                    let mut dio = dio;
                    let mut error = None;
                    for &item in items.iter().skip(t).step_by(threads as usize) {
                        if stop.load(Ordering::Relaxed) || failed.load(Ordering::Relaxed) {
                            break;
                        }
                        let mut r = PhaseSinkRef {
                            sink: &mut sink,
                            dio: &mut dio,
                        };
                        if let Err(e) = work(&mut r, item) {
                            failed.store(true, Ordering::Relaxed);
                            error = Some(e);
                            break;
                        }
                    }
                    finished.fetch_add(1, Ordering::Relaxed);
                    (sink.stats, error)
                })
            })
            .collect();
        while finished.load(Ordering::Relaxed) < u64::from(threads) {
            std::thread::sleep(Duration::from_millis(50));
            tick();
        }
        handles.into_iter().map(|h| h.join()).collect::<Vec<_>>()
    });
    let mut stats = IntervalStats::default();
    let mut first = None;
    for r in results {
        match r {
            Ok((s, e)) => {
                s.merge_into(&mut stats);
                if first.is_none() {
                    first = e;
                }
            }
            Err(_) => first = Some("a format thread panicked".to_string()),
        }
    }
    Ok((stats, first))
}

/// A format thread's sink and data state, handed to each item's work.
pub(crate) struct PhaseSinkRef<'a> {
    sink: &'a mut PhaseSink,
    dio: &'a mut DataIo,
}

/// Removes the files and directory slots the scan found, counting deletes
/// and rmdirs. A directory slot that holds something iorig did not put
/// there is left, with a notice.
fn remove_slots(
    tree: &Tree,
    dirs: &Beneath,
    threads: u32,
    stop: &AtomicBool,
    start: Instant,
    make_dio: &(dyn Fn(u32) -> Result<DataIo, EngineError> + Sync),
    out: &mut FormatOutcome,
) -> Result<(), EngineError> {
    let items: Vec<u64> = (0..tree.slots)
        .filter(|s| tree.has_file(*s) || tree.has_dir(*s))
        .collect();
    let removed = AtomicU64::new(0);
    let kept = AtomicU64::new(0);
    let work = |r: &mut PhaseSinkRef<'_>, slot: u64| -> Result<(), String> {
        let t = r.sink.now_ns();
        let show_file = || tree.file_path(slot);
        let show_dir = || tree.dir_slot_path(slot);
        let dir = dirs.leaf_of_slot(tree, slot, "delete")?;
        if tree.has_file(slot) {
            let name = tree.file_name(slot);
            let at = At {
                dir: dir.as_fd(),
                name: &name,
                path: &show_file,
            };
            ops::delete(r.sink, &at, t)?;
            removed.fetch_add(1, Ordering::Relaxed);
        }
        let mut dir_left = false;
        if tree.has_dir(slot) {
            let name = tree.dir_slot_name(slot);
            let t = r.sink.now_ns();
            match rustix::fs::unlinkat(&dir, &*name, AtFlags::REMOVEDIR) {
                Ok(()) => {
                    r.sink.done(FsOp::Rmdir, 0, t, t, Req::Mix);
                }
                Err(rustix::io::Errno::NOENT) => {}
                Err(rustix::io::Errno::NOTEMPTY | rustix::io::Errno::EXIST) => {
                    kept.fetch_add(1, Ordering::Relaxed);
                    dir_left = true;
                }
                Err(e) => {
                    return Err(format!(
                        "rmdir {}: {}",
                        show_dir().display(),
                        std::io::Error::from(e)
                    ))
                }
            }
        }
        tree.set(slot, false, dir_left);
        Ok(())
    };
    let (stats, err) = parallel(threads, &items, stop, start, make_dio, &work, || {})?;
    out.stats.merge(&stats);
    out.files_removed += removed.load(Ordering::Relaxed);
    let kept = kept.load(Ordering::Relaxed);
    if kept > 0 {
        out.notices.push(format!(
            "{kept} directory slot{} in {} still hold{} files iorig did not make; left in place",
            if kept == 1 { "" } else { "s" },
            tree.anchor.display(),
            if kept == 1 { "s" } else { "" }
        ));
    }
    if let Some(e) = err {
        return Err(EngineError::Io {
            what: "removing the tree's files".into(),
            source: std::io::Error::other(e),
        });
    }
    Ok(())
}

/// Removes a whole tree of `shape` (an earlier one in this anchor): its
/// files, directory slots and directories; the marker stays for the caller
/// to replace. Directories that still hold something iorig did not put
/// there are left, with a notice.
pub(crate) fn remove_tree(
    tree: &Tree,
    dirs: &Beneath,
    threads: u32,
    stop: &AtomicBool,
    start: Instant,
    make_dio: &(dyn Fn(u32) -> Result<DataIo, EngineError> + Sync),
    out: &mut FormatOutcome,
) -> Result<(), EngineError> {
    scan(tree, dirs)?;
    remove_slots(tree, dirs, threads, stop, start, make_dio, out)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut sink = PhaseSink {
        start,
        stats: WorkerIntervalStats::for_fs(),
    };
    let mut kept = 0u64;
    let mut parents = Parents { dirs, last: None };
    for rel in tree.dirs_in_order().iter().rev() {
        let (parent, name) = match parents.of(rel) {
            Ok(p) => p,
            // Its parent is gone already (removed by hand).
            Err(EngineError::Io { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                continue
            }
            Err(e) => return Err(e),
        };
        let t = sink.now_ns();
        match rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR) {
            Ok(()) => {
                sink.done(FsOp::Rmdir, 0, t, t, Req::Mix);
            }
            Err(rustix::io::Errno::NOENT) => {}
            Err(rustix::io::Errno::NOTEMPTY | rustix::io::Errno::EXIST) => kept += 1,
            Err(e) => {
                return Err(EngineError::Io {
                    what: format!("removing {}", tree.anchor.join(rel).display()),
                    source: e.into(),
                })
            }
        }
    }
    sink.stats.merge_into(&mut out.stats);
    if kept > 0 {
        out.notices.push(format!(
            "{kept} director{} of the old tree in {} still hold files iorig did not make; they were left in place",
            if kept == 1 { "y" } else { "ies" },
            tree.anchor.display()
        ));
    }
    Ok(())
}

/// Writes the marker (never through a link) and makes it and its name
/// durable before the tree's first directory: after a crash the anchor
/// still says whose tree it holds.
fn write_marker(dirs: &Beneath, text: &str) -> Result<(), EngineError> {
    let shown = dirs.path().join(MARKER);
    let fail = |e: rustix::io::Errno| EngineError::Io {
        what: format!("writing {}", shown.display()),
        source: e.into(),
    };
    let fd = rustix::fs::openat(
        dirs.anchor(),
        MARKER,
        OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        rustix::fs::Mode::from_raw_mode(0o644),
    )
    .map_err(fail)?;
    let mut left = text.as_bytes();
    while !left.is_empty() {
        match rustix::io::write(&fd, left) {
            Ok(0) => return Err(fail(rustix::io::Errno::IO)),
            Ok(n) => left = &left[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(fail(e)),
        }
    }
    rustix::fs::fsync(&fd).map_err(fail)?;
    // A directory opened read-only takes fsync on Linux; a file system
    // that refuses it has nothing more to make durable.
    match rustix::fs::fsync(dirs.anchor()) {
        Ok(()) | Err(rustix::io::Errno::INVAL | rustix::io::Errno::BADF) => Ok(()),
        Err(e) => Err(fail(e)),
    }
}

/// A fresh id for a new tree's marker.
fn new_id() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("{:x}-{:x}", t, std::process::id())
}

/// Brings the tree to its shape as `mode` asks, measuring every operation;
/// a stop request ends it between files, leaving a tree the next run can
/// complete (`restart`) or remove.
pub fn format(
    ft: &FsTarget,
    w: &Workload,
    verify: Option<&std::sync::Arc<crate::verify::VerifySetup>>,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&FormatProgress),
) -> Result<FormatOutcome, EngineError> {
    let tree = &ft.tree;
    let start = Instant::now();
    let mode = ft.mode;
    let mut out = FormatOutcome {
        mode: Some(mode),
        ..FormatOutcome::default()
    };
    // Under validation the files are written stamped, as the workload's
    // writes are, so its reads check them.
    let validation = verify.map(|v| super::Validation::new(v.clone()));
    let span = ft.span_bytes(w.verify_unit_bytes());
    let make_dio = |t: u32| ft.data_io(w, t, validation.as_ref());
    let dirs = &*ft.dirs;
    // A tree of another shape goes first (it is iorig's: the plan checked).
    if let Some(old) = &ft.old_shape {
        let old_tree = Tree::of_shape(&tree.anchor, old)?;
        let old_dirs = dirs.for_tree(&old_tree)?;
        remove_tree(
            &old_tree, &old_dirs, w.threads, stop, start, &make_dio, &mut out,
        )?;
        if stop.load(Ordering::Relaxed) {
            out.interrupted = true;
            out.duration = start.elapsed();
            return Ok(out);
        }
    }
    if ft.old_shape.is_some() || !ft.marked {
        // The marker goes down before anything else, so an interrupted
        // format leaves a tree iorig knows as its own.
        write_marker(dirs, &tree.shape.marker_text(&new_id()))?;
    }
    ft.probe_direct(&mut out.notices);
    let found = scan(tree, dirs)?;
    if matches!(mode, FormatMode::Yes | FormatMode::Once | FormatMode::Dirs) {
        remove_slots(tree, dirs, w.threads, stop, start, &make_dio, &mut out)?;
    }
    if mode == FormatMode::No || stop.load(Ordering::Relaxed) {
        out.files_kept = tree.files_present() - found.wrong.len() as u64;
        out.interrupted = stop.load(Ordering::Relaxed);
        out.duration = start.elapsed();
        return Ok(out);
    }
    // Directories, parents first.
    let mut sink = PhaseSink {
        start,
        stats: WorkerIntervalStats::for_fs(),
    };
    let mut parents = Parents { dirs, last: None };
    for rel in tree.dirs_in_order() {
        let (parent, name) = parents.of(&rel)?;
        let t = sink.now_ns();
        match rustix::fs::mkdirat(parent, name, rustix::fs::Mode::from_raw_mode(0o755)) {
            Ok(()) => {
                sink.done(FsOp::Mkdir, 0, t, t, Req::Mix);
                out.dirs_created += 1;
            }
            Err(rustix::io::Errno::EXIST) => {}
            Err(e) => {
                return Err(EngineError::Io {
                    what: format!("creating {}", tree.anchor.join(&rel).display()),
                    source: e.into(),
                })
            }
        }
    }
    sink.stats.merge_into(&mut out.stats);
    if mode == FormatMode::Dirs {
        out.duration = start.elapsed();
        return Ok(out);
    }
    // Files: the missing ones, and those of the wrong size again.
    let wrong: std::collections::HashSet<u64> = found.wrong.iter().copied().collect();
    let items: Vec<u64> = (0..tree.slots)
        .filter(|s| !tree.has_file(*s) || wrong.contains(s))
        .collect();
    out.files_kept = tree.files_present() - wrong.len().min(tree.files_present() as usize) as u64;
    let bytes_total: u64 = items.iter().map(|s| tree.size_of(*s)).sum();
    let files_done = AtomicU64::new(0);
    let bytes_done = AtomicU64::new(0);
    let work = |r: &mut PhaseSinkRef<'_>, slot: u64| -> Result<(), String> {
        let t = r.sink.now_ns();
        let size = tree.size_of(slot);
        r.dio.at_file(slot * span);
        let show = || tree.file_path(slot);
        let dir = dirs.leaf_of_slot(tree, slot, "create")?;
        let name = tree.file_name(slot);
        ops::create(
            r.sink,
            r.dio,
            &At {
                dir: dir.as_fd(),
                name: &name,
                path: &show,
            },
            size,
            slot as u32,
            t,
            wrong.contains(&slot),
        )?;
        tree.set(slot, true, tree.has_dir(slot));
        files_done.fetch_add(1, Ordering::Relaxed);
        bytes_done.fetch_add(size, Ordering::Relaxed);
        Ok(())
    };
    let files_total = items.len() as u64;
    let mut report = || {
        progress(&FormatProgress {
            files_done: files_done.load(Ordering::Relaxed),
            files_total,
            bytes_done: bytes_done.load(Ordering::Relaxed),
            bytes_total,
        })
    };
    let (stats, err) = parallel(
        w.threads,
        &items,
        stop,
        start,
        &make_dio,
        &work,
        &mut report,
    )?;
    report();
    out.stats.merge(&stats);
    out.files_created = files_done.load(Ordering::Relaxed);
    out.bytes_written = bytes_done.load(Ordering::Relaxed);
    out.duration = start.elapsed();
    out.interrupted = stop.load(Ordering::Relaxed) && out.files_created < files_total;
    if let Some(e) = err {
        return Err(EngineError::Io {
            what: "creating the tree's files".into(),
            source: std::io::Error::other(e),
        });
    }
    Ok(out)
}

/// Removes the tree when a run with `cleanup` ends: files, directory
/// slots, directories and the marker; the anchor itself stays. Returns the
/// files and directories removed.
pub fn cleanup(ft: &FsTarget, w: &Workload) -> Result<(u64, Vec<String>), EngineError> {
    let never = AtomicBool::new(false);
    let mut out = FormatOutcome::default();
    let make_dio = |t: u32| ft.data_io(w, t, None);
    remove_tree(
        &ft.tree,
        &ft.dirs,
        w.threads,
        &never,
        Instant::now(),
        &make_dio,
        &mut out,
    )?;
    if out.notices.is_empty() {
        match rustix::fs::unlinkat(ft.dirs.anchor(), MARKER, AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => {}
            Err(e) => {
                return Err(EngineError::Io {
                    what: format!("removing {}", ft.tree.anchor.join(MARKER).display()),
                    source: e.into(),
                })
            }
        }
    }
    Ok((out.files_removed, out.notices))
}
