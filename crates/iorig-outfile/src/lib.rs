//! Output files for iorig: results, CSV, exports, reports, journals and the
//! store are written only to regular files or to new paths in an existing
//! directory, never to a device, a FIFO, a socket or through a directory.
//!
//! iorig runs as root against raw devices, so a mistyped `--json /dev/sdb`
//! must not become a write to a disk. Every command checks its output paths
//! with [`check_file`] or [`check_dir`] before it runs anything, and writes
//! through [`write_atomic`] or an [`AtomicFile`]: the bytes go to a new temp
//! file beside the destination, which is then renamed over it. An existing
//! file is never written through in place, so a path that turns into
//! something else between the check and the write (a symlink swapped for a
//! device node) still only gets a directory entry replaced, and a reader never
//! sees half a file.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Seek, SeekFrom, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why an output path cannot be used or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OutputError {
    /// The path is not something iorig writes to: bad input (exit 2). The
    /// message names the flag, the path, what it is and what to do.
    #[error("{0}")]
    Refused(String),
    /// Writing failed (disk full, permissions changed): a runtime failure.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
}

impl OutputError {
    /// True for bad input (the caller exits 2), false for a runtime failure.
    pub fn is_usage(&self) -> bool {
        matches!(self, OutputError::Refused(_))
    }
}

fn io_err(path: &Path, source: io::Error) -> OutputError {
    OutputError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// What an existing path is, in words for a message; None for a regular file.
fn not_regular(ft: &fs::FileType) -> Option<&'static str> {
    if ft.is_file() {
        None
    } else if ft.is_dir() {
        Some("a directory")
    } else if ft.is_block_device() {
        Some("a block device")
    } else if ft.is_char_device() {
        Some("a character device")
    } else if ft.is_fifo() {
        Some("a FIFO")
    } else if ft.is_socket() {
        Some("a socket")
    } else {
        Some("a special file")
    }
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// What [`check_file`] found at the path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// Nothing there yet: the file will be created.
    New,
    /// A regular file, which will be replaced.
    Regular,
}

/// Checks that `path` may be written as an output file: a regular file (it
/// will be replaced) or a new name in an existing directory. `flag` names the
/// option in messages (`--json`, `result store`, ...). Writes nothing.
pub fn check_file(flag: &str, path: &Path) -> Result<Existing, OutputError> {
    let p = path.display();
    if path.as_os_str().is_empty() {
        return Err(OutputError::Refused(format!(
            "{flag}: the path is empty; give a file name"
        )));
    }
    match fs::metadata(path) {
        Ok(md) => match not_regular(&md.file_type()) {
            None => Ok(Existing::Regular),
            Some(what) => Err(OutputError::Refused(format!(
                "{flag} {p} is {what}, not a regular file; iorig writes results only to regular files or new paths — give a file name"
            ))),
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if fs::symlink_metadata(path).is_ok() {
                return Err(OutputError::Refused(format!(
                    "{flag} {p} is a symbolic link to a missing file; remove the link or give another path"
                )));
            }
            let dir = parent_of(path);
            match fs::metadata(dir) {
                Ok(md) if md.is_dir() => Ok(Existing::New),
                Ok(_) => Err(OutputError::Refused(format!(
                    "{flag} {p}: {} is not a directory; give another path",
                    dir.display()
                ))),
                Err(_) => Err(OutputError::Refused(format!(
                    "{flag} {p}: directory {} does not exist; create it or give another path",
                    dir.display()
                ))),
            }
        }
        Err(e) => Err(OutputError::Refused(format!(
            "{flag} {p}: cannot look at it ({e}); give another path"
        ))),
    }
}

/// O_CLOEXEC as `OpenOptionsExt::custom_flags` takes it (a bit below 2^31).
const CLOEXEC: i32 = rustix::fs::OFlags::CLOEXEC.bits() as i32;

/// [`check_file`], then proves the path can be written, so that a result
/// is never lost after the work that made it: a file is created beside it
/// (as [`AtomicFile`] will) and removed again, and an existing file must be
/// writable (not read-only, not `chattr +i`). Commands call it before any
/// I/O. The existing file is never opened: `access(2)` asks the kernel.
pub fn check_writable(flag: &str, path: &Path) -> Result<Existing, OutputError> {
    let existing = check_file(flag, path)?;
    probe_dir(flag, path, parent_of(path))?;
    if existing == Existing::Regular {
        if std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()).contains(&0) {
            return Err(OutputError::Refused(format!(
                "{flag} {}: a NUL in the path",
                path.display()
            )));
        }
        if let Err(e) = rustix::fs::access(path, rustix::fs::Access::WRITE_OK) {
            let e = io::Error::from(e);
            return Err(OutputError::Refused(format!(
                "{flag} {}: the file cannot be written ({e}); give another path or make it writable",
                path.display()
            )));
        }
    }
    Ok(existing)
}

/// [`check_dir`], then proves files can be made in the directory (or, for a
/// new one, in the directory that will hold it).
pub fn check_dir_writable(flag: &str, dir: &Path) -> Result<(), OutputError> {
    check_dir(flag, dir)?;
    let at = if dir.is_dir() { dir } else { parent_of(dir) };
    probe_dir(flag, dir, at)
}

/// Creates a temp file in `dir` and removes it again: what a write there
/// will need (a file made beside the destination, then renamed, which
/// needs the same rights as removing). A name left by another process is
/// stepped over; a probe that cannot be removed (an append-only directory)
/// is refused, naming it.
fn probe_dir(flag: &str, path: &Path, dir: &Path) -> Result<(), OutputError> {
    let refused = |why: String| {
        OutputError::Refused(format!(
            "{flag} {}: {why}; give a path in a directory you can write",
            path.display()
        ))
    };
    for _ in 0..16 {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let probe = dir.join(format!(".iorig-probe-{}-{n}", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(CLOEXEC)
            .open(&probe)
        {
            Ok(f) => {
                drop(f);
                return fs::remove_file(&probe).map_err(|e| {
                    refused(format!(
                        "a file made in {} cannot be removed ({e}), so no result could be renamed into place there; {} is left behind",
                        dir.display(),
                        probe.display()
                    ))
                });
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(refused(format!(
                    "no file can be created in {} ({e})",
                    dir.display()
                )))
            }
        }
    }
    Err(refused(format!(
        "no free name for a file in {}",
        dir.display()
    )))
}

/// Checks that `dir` may hold output files (a report's pages and charts): an
/// existing directory, or a new name in an existing directory.
pub fn check_dir(flag: &str, dir: &Path) -> Result<(), OutputError> {
    let d = dir.display();
    match fs::metadata(dir) {
        Ok(md) if md.is_dir() => Ok(()),
        Ok(md) => {
            let what = not_regular(&md.file_type()).unwrap_or("a regular file");
            Err(OutputError::Refused(format!(
                "{flag} {d} is {what}, not a directory; give a directory path"
            )))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            if fs::symlink_metadata(dir).is_ok() {
                return Err(OutputError::Refused(format!(
                    "{flag} {d} is a symbolic link to a missing directory; remove the link or give another path"
                )));
            }
            let parent = parent_of(dir);
            if parent.is_dir() {
                Ok(())
            } else {
                Err(OutputError::Refused(format!(
                    "{flag} {d}: directory {} does not exist; create it or give another path",
                    parent.display()
                )))
            }
        }
        Err(e) => Err(OutputError::Refused(format!(
            "{flag} {d}: cannot look at it ({e}); give another path"
        ))),
    }
}

/// Creates `dir` if it is missing (after [`check_dir`]).
pub fn create_dir(flag: &str, dir: &Path) -> Result<(), OutputError> {
    check_dir(flag, dir)?;
    match fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(io_err(dir, e)),
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A file being written beside its destination, renamed over it by
/// [`AtomicFile::commit`]. Dropped without a commit, the temp file is removed
/// and the destination is untouched.
#[derive(Debug)]
pub struct AtomicFile {
    flag: String,
    dest: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
}

impl AtomicFile {
    /// Checks `dest` ([`check_file`]) and creates a new temp file beside it.
    pub fn create(flag: &str, dest: &Path) -> Result<AtomicFile, OutputError> {
        check_file(flag, dest)?;
        let dir = parent_of(dest);
        let name = dest
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".into());
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.iorig-tmp-{}-{n}", std::process::id()));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o644)
            .custom_flags(CLOEXEC)
            .open(&tmp)
            .map_err(|e| io_err(&tmp, e))?;
        Ok(AtomicFile {
            flag: flag.to_string(),
            dest: dest.to_path_buf(),
            tmp,
            file: Some(file),
        })
    }

    /// The destination path.
    pub fn dest(&self) -> &Path {
        &self.dest
    }

    /// Flushes and renames the temp file over the destination. The
    /// destination is checked once more: if it became something other than a
    /// regular file or nothing, the temp file is removed and it is refused.
    pub fn commit(mut self) -> Result<(), OutputError> {
        let Some(mut file) = self.file.take() else {
            return Ok(());
        };
        let flushed = file.flush().and_then(|_| file.sync_data());
        drop(file);
        let result = flushed
            .map_err(|e| io_err(&self.tmp, e))
            .and_then(|_| check_file(&self.flag, &self.dest).map(drop))
            .and_then(|_| fs::rename(&self.tmp, &self.dest).map_err(|e| io_err(&self.dest, e)));
        if result.is_err() {
            let _ = fs::remove_file(&self.tmp);
        }
        result
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.file.as_mut() {
            Some(f) => f.write(buf),
            None => Err(io::Error::other("the file was committed already")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.file.as_mut() {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

/// A zip (an XLSX workbook) is written with seeks back to its headers.
impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self.file.as_mut() {
            Some(f) => f.seek(pos),
            None => Err(io::Error::other("the file was committed already")),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `path` atomically: checked, written to a temp file
/// beside it, synced and renamed over it.
pub fn write_atomic(flag: &str, path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let mut f = AtomicFile::create(flag, path)?;
    f.write_all(bytes).map_err(|e| io_err(path, e))?;
    f.commit()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn unwritable_places_are_found_before_anything_is_written() {
        let e = check_writable("--json", Path::new("/proc/iorig-x.json")).unwrap_err();
        assert!(e.is_usage(), "{e}");
        assert!(e.to_string().contains("/proc"), "{e}");
        assert!(!e.to_string().contains('\n'), "{e}");
        assert!(check_dir_writable("--out", Path::new("/proc/iorig-report")).is_err());
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.json");
        assert_eq!(check_writable("--json", &f).unwrap(), Existing::New);
        fs::write(&f, b"x").unwrap();
        assert_eq!(check_writable("--json", &f).unwrap(), Existing::Regular);
        assert!(check_dir_writable("--out", &d.path().join("new")).is_ok());
        let left: Vec<_> = fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "the probes are gone");
    }

    #[test]
    fn regular_and_new_paths_are_accepted() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.json");
        assert_eq!(check_file("--json", &f).unwrap(), Existing::New);
        fs::write(&f, b"old").unwrap();
        assert_eq!(check_file("--json", &f).unwrap(), Existing::Regular);
    }

    #[test]
    fn devices_fifos_and_directories_are_refused() {
        let d = tempfile::tempdir().unwrap();
        for (path, what) in [
            (PathBuf::from("/dev/null"), "a character device"),
            (d.path().to_path_buf(), "a directory"),
        ] {
            let e = check_file("--csv", &path).unwrap_err();
            assert!(e.is_usage());
            assert!(e.to_string().contains(what), "{e}");
            assert!(e.to_string().starts_with("--csv "), "{e}");
        }
        let missing = d.path().join("no/such/dir/x.csv");
        assert!(check_file("--csv", &missing)
            .unwrap_err()
            .to_string()
            .contains("does not exist"));
        let dangling = d.path().join("dangling");
        symlink(d.path().join("nowhere"), &dangling).unwrap();
        assert!(check_file("--csv", &dangling)
            .unwrap_err()
            .to_string()
            .contains("symbolic link"));
        // A symlink to a device is the device.
        let to_null = d.path().join("null");
        symlink("/dev/null", &to_null).unwrap();
        assert!(check_file("--csv", &to_null).is_err());
    }

    #[test]
    fn atomic_write_replaces_a_file_not_its_inode() {
        use std::os::unix::fs::MetadataExt;
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("r.json");
        fs::write(&f, b"old contents").unwrap();
        let keep = d.path().join("hardlink");
        fs::hard_link(&f, &keep).unwrap();
        let ino = fs::metadata(&f).unwrap().ino();
        write_atomic("--json", &f, b"new").unwrap();
        assert_eq!(fs::read(&f).unwrap(), b"new");
        assert_ne!(fs::metadata(&f).unwrap().ino(), ino);
        // The old inode (seen through the hard link) was never written.
        assert_eq!(fs::read(&keep).unwrap(), b"old contents");
        // No temp file is left behind.
        let names: Vec<_> = fs::read_dir(d.path()).unwrap().collect();
        assert_eq!(names.len(), 2);
    }

    #[test]
    fn uncommitted_file_leaves_nothing() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("x.csv");
        {
            let mut a = AtomicFile::create("--csv", &f).unwrap();
            a.write_all(b"row\n").unwrap();
        }
        assert!(!f.exists());
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
    }

    #[test]
    fn commit_refuses_a_destination_that_became_a_directory() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("x.csv");
        let mut a = AtomicFile::create("--csv", &f).unwrap();
        a.write_all(b"row\n").unwrap();
        fs::create_dir(&f).unwrap();
        assert!(a.commit().unwrap_err().is_usage());
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn directories() {
        let d = tempfile::tempdir().unwrap();
        assert!(check_dir("--out", d.path()).is_ok());
        assert!(check_dir("--out", &d.path().join("new")).is_ok());
        assert!(check_dir("--out", &d.path().join("a/b")).is_err());
        let f = d.path().join("file");
        fs::write(&f, b"").unwrap();
        assert!(check_dir("--out", &f)
            .unwrap_err()
            .to_string()
            .contains("not a directory"));
        assert!(check_dir("--out", Path::new("/dev/null")).is_err());
        create_dir("--out", &d.path().join("new")).unwrap();
        assert!(d.path().join("new").is_dir());
    }
}
