//! The format phase: the tree brought to its shape before the operations
//! start (vdbench's `format=`), measured on its own — mkdirs, creates with
//! their writes, and deletes when files must go first.

use super::ops::{self, DataIo, OpSink, Req};
use super::tree::{Tree, MARKER};
use super::FsTarget;
use crate::EngineError;
use iorig_spec::{FormatMode, FsOp, Workload};
use iorig_stats::{IntervalStats, WorkerIntervalStats};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where the format phase stands, for a progress display.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FormatProgress {
    pub files_done: u64,
    pub files_total: u64,
    pub bytes_done: u64,
    pub bytes_total: u64,
}

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
/// a directory.
fn scan(tree: &Tree) -> Result<Scan, EngineError> {
    let mut wrong = Vec::new();
    for leaf in 0..tree.used_leaf_dirs() {
        let dir = tree.leaf_path(leaf);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                return Err(EngineError::Io {
                    what: format!("listing {}", dir.display()),
                    source: e,
                })
            }
        };
        for entry in entries {
            let entry = entry.map_err(|e| EngineError::Io {
                what: format!("listing {}", dir.display()),
                source: e,
            })?;
            let name = entry.file_name();
            let Some((slot, is_dir_slot)) = tree.slot_of_name(leaf, &name.to_string_lossy()) else {
                continue;
            };
            if is_dir_slot {
                tree.set(slot, tree.has_file(slot), true);
            } else {
                tree.set(slot, true, tree.has_dir(slot));
                let len = entry.metadata().map(|m| m.len()).unwrap_or(u64::MAX);
                if len != tree.size_of(slot) {
                    wrong.push(slot);
                }
            }
        }
    }
    Ok(Scan { wrong })
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
                        stats: WorkerIntervalStats::default(),
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

/// Removes the files and directory slots the scan found (all of them, or
/// those `which` picks), counting deletes and rmdirs.
fn remove_slots(
    tree: &Tree,
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
    let work = |r: &mut PhaseSinkRef<'_>, slot: u64| -> Result<(), String> {
        let t = r.sink.now_ns();
        if tree.has_file(slot) {
            ops::delete(r.sink, &tree.file_path(slot), t)?;
            removed.fetch_add(1, Ordering::Relaxed);
        }
        if tree.has_dir(slot) {
            ops::rmdir(r.sink, &tree.dir_slot_path(slot), t)?;
        }
        tree.set(slot, false, false);
        Ok(())
    };
    let (stats, err) = parallel(threads, &items, stop, start, make_dio, &work, || {})?;
    out.stats.merge(&stats);
    out.files_removed += removed.load(Ordering::Relaxed);
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
    threads: u32,
    stop: &AtomicBool,
    start: Instant,
    make_dio: &(dyn Fn(u32) -> Result<DataIo, EngineError> + Sync),
    out: &mut FormatOutcome,
) -> Result<(), EngineError> {
    scan(tree)?;
    remove_slots(tree, threads, stop, start, make_dio, out)?;
    if stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    let mut sink = PhaseSink {
        start,
        stats: WorkerIntervalStats::default(),
    };
    let mut kept = 0u64;
    for dir in tree.dirs_in_order().iter().rev() {
        let t = sink.now_ns();
        match rustix::fs::rmdir(dir) {
            Ok(()) => {
                sink.done(FsOp::Rmdir, 0, t, t, Req::Mix);
            }
            Err(rustix::io::Errno::NOENT) => {}
            Err(rustix::io::Errno::NOTEMPTY) => kept += 1,
            Err(e) => {
                return Err(EngineError::Io {
                    what: format!("removing {}", dir.display()),
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
    let marker = tree.anchor.join(MARKER);
    // A tree of another shape goes first (it is iorig's: the plan checked).
    if let Some(old) = &ft.old_shape {
        let old_tree = Tree::of_shape(&tree.anchor, old)?;
        remove_tree(&old_tree, w.threads, stop, start, &make_dio, &mut out)?;
        if stop.load(Ordering::Relaxed) {
            out.interrupted = true;
            out.duration = start.elapsed();
            return Ok(out);
        }
    }
    if ft.old_shape.is_some() || !ft.marked {
        // The marker goes down before anything else, so an interrupted
        // format leaves a tree iorig knows as its own.
        std::fs::write(&marker, tree.shape.marker_text(&new_id())).map_err(|e| {
            EngineError::Io {
                what: format!("writing {}", marker.display()),
                source: e,
            }
        })?;
    }
    ft.probe_direct(&marker, &mut out.notices);
    let found = scan(tree)?;
    if matches!(mode, FormatMode::Yes | FormatMode::Once | FormatMode::Dirs) {
        remove_slots(tree, w.threads, stop, start, &make_dio, &mut out)?;
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
        stats: WorkerIntervalStats::default(),
    };
    for dir in tree.dirs_in_order() {
        let t = sink.now_ns();
        match rustix::fs::mkdir(&dir, rustix::fs::Mode::from_raw_mode(0o755)) {
            Ok(()) => {
                sink.done(FsOp::Mkdir, 0, t, t, Req::Mix);
                out.dirs_created += 1;
            }
            Err(rustix::io::Errno::EXIST) => {}
            Err(e) => {
                return Err(EngineError::Io {
                    what: format!("creating {}", dir.display()),
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
        ops::create(
            r.sink,
            r.dio,
            &tree.file_path(slot),
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
        w.threads,
        &never,
        Instant::now(),
        &make_dio,
        &mut out,
    )?;
    let marker = ft.tree.anchor.join(MARKER);
    if out.notices.is_empty() {
        if let Err(e) = std::fs::remove_file(&marker) {
            if e.kind() != std::io::ErrorKind::NotFound {
                return Err(EngineError::Io {
                    what: format!("removing {}", marker.display()),
                    source: e,
                });
            }
        }
    }
    Ok((out.files_removed, out.notices))
}
