//! The scratch files a step creates, and removing them after it (`unlink`):
//! only files the step itself created, checked by inode.

use crate::step::Out;
use iorig_engine::run::{self, Prepared};

/// The scratch files a planned step will create: the only ones `unlink`
/// removes.
pub(crate) fn created_paths(planned: &run::Planned) -> Vec<std::path::PathBuf> {
    planned
        .targets
        .iter()
        .filter(|t| !t.exists)
        .map(|t| t.path.clone())
        .collect()
}

/// A created file as it was opened: its path and (device, inode), so
/// `unlink` removes that file and nothing put at its path since.
pub(crate) type Created = (std::path::PathBuf, (u64, u64));

/// The (device, inode) of each created path, from the descriptors the step
/// opened.
pub(crate) fn created_ids(paths: &[std::path::PathBuf], prepared: &Prepared) -> Vec<Created> {
    use std::os::unix::fs::MetadataExt;
    paths
        .iter()
        .filter_map(|p| {
            let t = prepared.targets.iter().find(|t| t.plan.path == *p)?;
            let m = t.file.metadata().ok()?;
            Some((p.clone(), (m.dev(), m.ino())))
        })
        .collect()
}

/// Removes the scratch files a step created (`unlink`), saying which; a
/// path that no longer names the file created is left alone.
pub(crate) fn unlink_created(created: &[Created], out: &mut Out<'_>) {
    use std::os::unix::fs::MetadataExt;
    let mut removed = Vec::new();
    for (p, id) in created {
        let same = std::fs::symlink_metadata(p).is_ok_and(|m| (m.dev(), m.ino()) == *id);
        if !same {
            out.notice(&format!(
                "unlink: {} is no longer the file this step created; left as it is",
                p.display()
            ));
            continue;
        }
        match std::fs::remove_file(p) {
            Ok(()) => removed.push(p.display().to_string()),
            Err(e) => out.notice(&format!("unlink: could not remove {}: {e}", p.display())),
        }
    }
    if !removed.is_empty() {
        out.notice(&format!(
            "unlink: removed the {} scratch file(s) this step created: {}",
            removed.len(),
            removed.join(", ")
        ));
    }
}
