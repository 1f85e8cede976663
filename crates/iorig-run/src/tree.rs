//! A file-system workload's tree around its run, for a step of one
//! workload ([`crate::local`]) and a step of several ([`crate::group`]):
//! its key map before the format, the format phase with its progress, and
//! the cleanup after.

use crate::event::Event;
use crate::step::Out;
use crate::{RunError, Stop};
use iorig_engine::run;
use iorig_engine::verify::VerifySetup;
use iorig_spec::Workload;
use std::sync::Arc;

/// A validating tree's key map, made before its format: the format's
/// writes are stamped with the step's keys. Files kept from before hold
/// data of unknown keys, which reads do not check (as an existing file's
/// blocks in a block run).
pub(crate) fn tree_keys(
    prepared: &mut run::Prepared,
    ft: &iorig_engine::fs::FsTarget,
    w: &Workload,
) -> Result<(), RunError> {
    if w.verify && prepared.verify.is_none() {
        let unit = w.verify_unit_bytes();
        prepared.verify = Some(Arc::new(VerifySetup::fresh(
            unit as u32,
            &[ft.extent_bytes(unit)],
            w,
        )?));
    }
    Ok(())
}

/// Removes the tree of a workload that asks for it (`cleanup`), unless
/// the run was interrupted.
pub(crate) fn cleanup_tree(
    prepared: &run::Prepared,
    w: &Workload,
    out: &mut Out<'_>,
    stop: &Stop,
) -> Result<(), RunError> {
    if let (Some(ft), Some(f)) = (&prepared.fs, &w.fs) {
        if f.cleanup && !stop.interrupted() {
            let (files, notices) = iorig_engine::fs::cleanup(ft, w)?;
            for n in &notices {
                out.notice(n);
            }
            out.notice(&format!(
                "cleanup: removed the tree in {} ({files} files)",
                ft.tree.anchor.display()
            ));
        }
    }
    Ok(())
}

/// The format phase: progress as `Formatting` events, then `Formatted`
/// with its summary.
pub(crate) fn format_tree(
    ft: &iorig_engine::fs::FsTarget,
    w: &Workload,
    verify: Option<&Arc<VerifySetup>>,
    index: usize,
    out: &mut Out<'_>,
    stop: &Stop,
) -> Result<iorig_engine::fs::FormatOutcome, RunError> {
    let path = ft.tree.anchor.display().to_string();
    let outcome = iorig_engine::fs::format(ft, w, verify, &stop.step, &mut |p| {
        out.send(Event::Formatting {
            path: &path,
            progress: p,
        });
    })?;
    for n in &outcome.notices {
        out.notice(n);
    }
    let summary = crate::results::format_summary(&outcome);
    out.send(Event::Formatted {
        index,
        path: &path,
        summary: &summary,
    });
    Ok(outcome)
}
