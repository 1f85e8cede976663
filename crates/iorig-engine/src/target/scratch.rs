//! Scratch files: created with their header and filled with random data
//! before the first measured I/O, grown or shrunk when `size` changes.

use super::*;

/// Chunk size for filling scratch files.
pub(super) const FILL_CHUNK: usize = 4 << 20;
/// Creates a new scratch file (never over an existing one), fills it, and
/// opens it for the run, checking that the path still names the file made.
pub(super) fn create_scratch(
    plan: &TargetPlan,
    w: &Workload,
    seed: u64,
    progress: &mut dyn FnMut(&FillProgress),
) -> Result<File, EngineError> {
    let path = &plan.path;
    let f = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.kind() {
            io::ErrorKind::AlreadyExists => usage(format!(
                "{} appeared since it was checked (something else created it); nothing was written to it — run again",
                path.display()
            )),
            _ => target_err(path, format!("cannot create the scratch file: {e}")),
        })?;
    let result = (|| -> Result<(), EngineError> {
        let mut header = FileHeader::new(plan.size_bytes).encode();
        header.resize(FILE_HEADER_BYTES as usize, 0);
        f.write_all_at(&header, 0)
            .map_err(|e| target_err(path, format!("writing the iorig header failed: {e}")))?;
        mark_owned(&f);
        fill(
            &f,
            path,
            FILE_HEADER_BYTES,
            plan.size_bytes,
            None,
            seed,
            progress,
        )?;
        f.sync_all()
            .map_err(|e| target_err(path, format!("syncing the new scratch file failed: {e}")))?;
        drop_cache(&f);
        Ok(())
    })();
    if let Err(e) = result {
        // Leave no half-filled file behind, if the path still names ours.
        if same_object(path, &f).is_ok() {
            let _ = fs::remove_file(path);
        }
        return Err(e);
    }
    let opened = open_for_io(plan, w).and_then(|file| {
        let created = f
            .metadata()
            .map_err(|e| target_err(path, format!("cannot look at the new file: {e}")))?;
        let now = file
            .metadata()
            .map_err(|e| target_err(path, format!("cannot look at the new file: {e}")))?;
        if object_id(&created) != object_id(&now) {
            return Err(usage(format!(
                "{} was replaced while iorig filled it; nothing more was written — run again",
                path.display()
            )));
        }
        Ok(file)
    });
    if opened.is_err() && same_object(path, &f).is_ok() {
        // Ours, and of no use now: leave nothing behind.
        let _ = fs::remove_file(path);
    }
    opened
}

/// Grows or shrinks an iorig scratch file through the descriptor that was
/// checked (a plain write descriptor on the same inode: the fill's buffers
/// are not aligned for O_DIRECT).
pub(super) fn resize_scratch(
    plan: &TargetPlan,
    held: &File,
    want: u64,
    seed: u64,
    progress: &mut dyn FnMut(&FillProgress),
) -> Result<(), EngineError> {
    let path = &plan.path;
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(format!("/proc/self/fd/{}", held.as_raw_fd()))
        .map_err(|e| {
            target_err(
                path,
                format!("cannot open the scratch file to resize it: {e}"),
            )
        })?;
    // Never resize a file that lost its marker since it was planned.
    if read_marker_from(path, &f)?.is_none() {
        return Err(usage(format!(
            "{} lost its iorig header since it was checked; not resizing it",
            path.display()
        )));
    }
    let len = f
        .metadata()
        .map_err(|e| target_err(path, format!("cannot read its size: {e}")))?
        .len();
    let have = len.saturating_sub(FILE_HEADER_BYTES);
    if want > have {
        fill(
            &f,
            path,
            FILE_HEADER_BYTES + have,
            want - have,
            Some(have),
            seed,
            progress,
        )?;
    } else {
        f.set_len(FILE_HEADER_BYTES + want).map_err(|e| {
            target_err(
                path,
                format!("truncating to --size {} failed: {e}", show(want)),
            )
        })?;
    }
    f.sync_all().map_err(|e| {
        target_err(
            path,
            format!("syncing the resized scratch file failed: {e}"),
        )
    })?;
    drop_cache(&f);
    Ok(())
}

/// Writes `len` bytes of pseudo-random data at `start`, in large chunks.
pub(super) fn fill(
    f: &File,
    path: &Path,
    start: u64,
    len: u64,
    grown_from_bytes: Option<u64>,
    seed: u64,
    progress: &mut dyn FnMut(&FillProgress),
) -> Result<(), EngineError> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed ^ start);
    let mut buf = vec![0u8; (FILL_CHUNK as u64).min(len.max(1)) as usize];
    let mut report = |done: u64| {
        progress(&FillProgress {
            path: path.to_path_buf(),
            done_bytes: done,
            total_bytes: len,
            grown_from_bytes,
        })
    };
    report(0);
    let mut done = 0u64;
    while done < len {
        let n = ((len - done).min(buf.len() as u64)) as usize;
        rng.fill_bytes(&mut buf[..n]);
        f.write_all_at(&buf[..n], start + done).map_err(|e| {
            target_err(
                path,
                format!(
                    "filling the scratch file failed at byte {}: {e}",
                    start + done
                ),
            )
        })?;
        done += n as u64;
        report(done);
    }
    Ok(())
}

/// Drops the file's pages from the page cache so the fill does not warm it.
pub(super) fn drop_cache(f: &File) {
    let _ = rustix::fs::fadvise(f, 0, None, rustix::fs::Advice::DontNeed);
}
