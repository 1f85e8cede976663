//! The journal of a validating run (`iorig run --journal`): checked against
//! the workload before anything runs, attached once the targets are open,
//! and checkpointed after the run.

use crate::step::Out;
use crate::RunError;
use iorig_engine::run::Prepared;
use iorig_engine::verify::{target_id, VerifySetup};
use iorig_spec::Workload;
use iorig_verify::{Journal, JournalTarget, KeyMap};
use std::path::Path;
use std::sync::Arc;

/// The canonical form of a target path, as the journal records it.
fn canonical(path: &str) -> String {
    std::fs::canonicalize(path)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_string())
}

/// Checks a journal against the workload before anything runs: not one of
/// the targets (the run would overwrite its own log), and an existing one
/// of the same targets and unit with no write left in flight.
pub fn precheck(path: &Path, w: &Workload) -> Result<(), RunError> {
    if w.verify_pattern.is_some() || w.verify_only {
        return Err(RunError::usage(
            "--journal records iorig's own stamped blocks; drop verify_pattern/verify_only, or drop --journal",
        ));
    }
    if w.trim_pct > 0.0 {
        return Err(RunError::usage(
            "--journal does not record trims yet; leave out --trim, or use --verify (trims are then validated in memory)",
        ));
    }
    if let Some(t) = w
        .targets
        .iter()
        .find(|t| iorig_engine::target::same_target(path, Path::new(t)))
    {
        return Err(RunError::usage(format!(
            "--journal {} is also a target ({t}); keep the journal on another file, outside the data under test",
            path.display()
        )));
    }
    if !path.exists() {
        return Ok(());
    }
    let state = Journal::read_state(path)
        .map_err(|e| RunError::usage(format!("--journal {}: {e}", path.display())))?;
    unit_fits(path, u64::from(state.unit_bytes), w)?;
    let journal_paths: Vec<&str> = state.targets.iter().map(|t| t.path.as_str()).collect();
    let ours: Vec<String> = w.targets.iter().map(|t| canonical(t)).collect();
    if journal_paths != ours.iter().map(String::as_str).collect::<Vec<_>>() {
        return Err(RunError::usage(format!(
            "--journal {}: it belongs to target(s) {}; give the same --target list in that order, or a new journal",
            path.display(),
            journal_paths.join(", ")
        )));
    }
    if !state.in_flight.is_empty() {
        return Err(RunError::usage(format!(
            "--journal {}: {} write(s) were in flight when its last run ended (a crash?); run `iorig verify --journal {}` first",
            path.display(),
            state.in_flight.len(),
            path.display()
        )));
    }
    Ok(())
}

/// Whether a journal of `unit`-byte units can follow workload `w`: every
/// block size and the offset alignment are whole units, so each I/O stamps
/// and checks whole units (a 64k step on a 4k journal: 16 units an I/O).
pub(crate) fn unit_fits(path: &Path, unit: u64, w: &Workload) -> Result<(), RunError> {
    let sizes = w.all_sizes();
    let odd = sizes
        .sizes
        .iter()
        .map(|s| s.0)
        .find(|s| !s.is_multiple_of(unit));
    let align = w.offset_align_bytes();
    let what = match odd {
        Some(size) => format!("block size {size}"),
        None if !align.is_multiple_of(unit) => format!("offset alignment {align}"),
        None => return Ok(()),
    };
    Err(RunError::usage(format!(
        "--journal {}: it tracks {unit}-byte units and this workload's {what} bytes is not a multiple of {unit}; use block sizes (and --align) that are multiples of {unit}, or a new journal",
        path.display()
    )))
}

/// Opens (or creates) the journal for a prepared run and builds the
/// validation state from it.
pub(crate) fn attach(
    path: &Path,
    w: &Workload,
    p: &Prepared,
) -> Result<Arc<VerifySetup>, RunError> {
    let unit = w.verify_unit_bytes() as u32;
    let fail = |e: iorig_verify::VerifyError| {
        RunError::runtime(format!("--journal {}: {e}", path.display()))
    };
    let (journal, keys, tag) = if path.exists() {
        let (journal, state) = Journal::open(path).map_err(fail)?;
        unit_fits(path, u64::from(state.unit_bytes), w)?;
        let unit = state.unit_bytes;
        for (t, (jt, extent)) in state.targets.iter().zip(&p.extents_bytes).enumerate() {
            if jt.size_bytes != *extent {
                return Err(RunError::usage(format!(
                    "--journal {}: target {} ({}) was {} bytes when journaled and is {} now; use a new journal",
                    path.display(),
                    t,
                    jt.path,
                    jt.size_bytes,
                    extent
                )));
            }
        }
        let keys = KeyMap::from_keys(unit, state.keys).map_err(fail)?;
        (journal, keys, state.tag)
    } else {
        let targets: Vec<JournalTarget> = w
            .targets
            .iter()
            .zip(&p.extents_bytes)
            .map(|(t, size)| JournalTarget {
                path: canonical(t),
                size_bytes: *size,
            })
            .collect();
        let tag = new_tag();
        let journal = Journal::create(path, unit, tag, &targets).map_err(fail)?;
        let keys = KeyMap::new(unit, &p.extents_bytes).map_err(fail)?;
        (journal, keys, tag)
    };
    Ok(Arc::new(VerifySetup {
        keys: Arc::new(keys),
        journal: Some(Arc::new(journal)),
        target_ids: (0..p.extents_bytes.len())
            .map(|i| target_id(tag, i))
            .collect(),
        after_write: w.verify_after,
        content: iorig_engine::verify::UnitContent::Stamped,
        every_unit: false,
    }))
}

fn new_tag() -> u32 {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let x = (ns ^ (std::process::id() as u64) << 32).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x >> 32) as u32
}

/// After a run: writes the key map into the journal and empties its log,
/// unless a write may have been left in flight (an I/O error), when the log
/// stays for `iorig verify` to resolve.
pub(crate) fn close(setup: &VerifySetup, io_errors: u64, out: &mut Out<'_>) {
    let Some(j) = &setup.journal else { return };
    if io_errors > 0 {
        out.notice("journal kept as logged (I/O errors may have left writes in flight); run `iorig verify --journal FILE` before the next run");
        return;
    }
    let keys: Vec<Vec<u8>> = (0..setup.keys.targets())
        .map(|t| setup.keys.snapshot(t as u32))
        .collect();
    if let Err(e) = j.checkpoint(&keys) {
        out.notice(&format!(
            "journal checkpoint failed ({e}); its log still holds every write"
        ));
    }
}
