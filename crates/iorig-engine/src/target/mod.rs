//! Targets: regular files and block devices, checked before anything is written.
//!
//! Two phases keep the "bad input writes nothing" promise: [`plan_targets`] looks
//! at every target (existence, kind, size, safety rules, O_DIRECT support,
//! permissions, read-only devices) without writing a byte to any of them, and
//! only when every target passed does [`open_targets`] create missing scratch
//! files and open everything for I/O.
//!
//! Files that iorig creates start with a 1 MiB header region whose first block
//! carries the iorig marker; the data area follows it, so workload I/O never
//! overwrites the marker.

use crate::EngineError;
use iorig_spec::{format_size, RangePct, SyncMode, Workload, DEFAULT_SIZE_BYTES};
use rand_xoshiro::rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub use iorig_result::live::FILE_HEADER_BYTES;

/// What a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    File,
    Block,
}

impl From<TargetKind> for iorig_result::TargetKind {
    fn from(k: TargetKind) -> iorig_result::TargetKind {
        match k {
            TargetKind::File => iorig_result::TargetKind::File,
            TargetKind::Block => iorig_result::TargetKind::Block,
        }
    }
}

impl TargetKind {
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::File => "file",
            TargetKind::Block => "block",
        }
    }
}

/// A target that passed every check; nothing has been written to it yet.
#[derive(Clone, Debug)]
pub struct TargetPlan {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// False when iorig will create the file in [`open_targets`].
    pub exists: bool,
    /// Usable bytes (the data area; excludes an iorig file's header region).
    pub size_bytes: u64,
    /// Absolute offset of the data area in the target (FILE_HEADER_BYTES for an
    /// iorig file, 0 for a block device or a foreign file).
    pub data_start: u64,
    /// Kernel name of the block device under the target (`loop0`, `vda`,
    /// `nvme0n1p1`), for the device sampler; None when unknown.
    pub device: Option<String>,
    /// For an existing iorig file whose data area differs from `--size`: the new
    /// data-area size (already reflected in `size_bytes`), applied by
    /// [`open_targets`] by extending with filled data or truncating.
    pub resize_to: Option<u64>,
    /// An existing target, opened for the run by [`plan_targets`] and checked
    /// through this descriptor; [`open_targets`] does I/O through it and
    /// never opens the path again. A block device written to is held with
    /// `O_EXCL` from the checks on, so the kernel refuses a mount or an mkfs
    /// meanwhile.
    pub file: Option<Arc<File>>,
    /// Checked for foreign data (written to, no `--allow-destroy`): checked
    /// again through its descriptor right before the first write.
    pub guarded: bool,
}

/// The extended attribute that marks a file as iorig's where writes to its
/// data cannot erase the mark: fio writing from offset 0 overwrites the
/// header, not this. Set on every scratch file iorig creates; a user hands
/// another file to iorig for good with `setfattr -n user.iorig -v scratch
/// FILE` (never iorig itself: `--allow-destroy` is for one run, not a
/// permission the file keeps), and takes it back with `setfattr -x`.
pub const OWNER_XATTR: &str = "user.iorig";

/// Whether the file carries [`OWNER_XATTR`] with the value iorig writes
/// (`scratch`): any other value is no mark.
fn marked_owned(f: &File) -> bool {
    let mut value = [0u8; 64];
    matches!(rustix::fs::fgetxattr(f, OWNER_XATTR, &mut value), Ok(n) if &value[..n] == OWNER_VALUE)
}

/// The value of [`OWNER_XATTR`] on iorig's files.
const OWNER_VALUE: &[u8] = b"scratch";

/// Marks the file as iorig's. A file system without user extended
/// attributes (an old tmpfs) keeps no mark: the header alone marks it then.
pub(crate) fn mark_owned(f: &File) {
    let _ = rustix::fs::fsetxattr(f, OWNER_XATTR, OWNER_VALUE, rustix::fs::XattrFlags::empty());
}

/// An open target ready for I/O.
#[derive(Debug)]
pub struct OpenTarget {
    pub plan: TargetPlan,
    pub file: File,
}

/// Progress while creating and filling a scratch file.
#[derive(Clone, Debug)]
pub struct FillProgress {
    pub path: PathBuf,
    pub done_bytes: u64,
    pub total_bytes: u64,
    /// The data area an existing scratch file had before it is grown;
    /// `None` when the file is being created.
    pub grown_from_bytes: Option<u64>,
}

/// How much of each end of a block device is searched for signatures.
const SIGNATURE_SPAN: u64 = 1 << 20;

pub(crate) mod cache;
pub use iorig_result::live::{CacheState, TargetInfo};

impl From<&TargetPlan> for TargetInfo {
    fn from(t: &TargetPlan) -> Self {
        TargetInfo {
            path: t.path.display().to_string(),
            kind: t.kind.into(),
            size_bytes: t.size_bytes,
            device: t.device.clone(),
            cache: CacheState::Untouched,
        }
    }
}

mod header;
mod inuse;
mod scratch;
mod signatures;

use header::{le16, le32, MARKER_BLOCK};
pub use header::{FileHeader, FILE_HEADER_VERSION, FILE_MAGIC};
use inuse::check_block_unused;
use scratch::{create_scratch, resize_scratch};
pub use signatures::detect_signatures;
use signatures::refuse_signatures;

fn usage(msg: impl Into<String>) -> EngineError {
    EngineError::Usage(msg.into())
}

fn target_err(path: &Path, why: impl std::fmt::Display) -> EngineError {
    EngineError::Target {
        path: path.display().to_string(),
        why: why.to_string(),
    }
}

/// A size for messages: `64m`, or `6710886 bytes` when it is not a round unit.
fn show(bytes: u64) -> String {
    let s = format_size(bytes);
    if s.bytes().all(|c| c.is_ascii_digit()) {
        format!("{s} bytes")
    } else {
        s
    }
}

fn errno(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}

fn no_direct_msg(path: &Path) -> String {
    format!(
        "{}: the filesystem does not support O_DIRECT (e.g. tmpfs); use --buffered",
        path.display()
    )
}

/// What a target path names: one file (device and inode), one block
/// device, or a file not made yet (its absolute path). Two paths name the
/// same target when their identities are equal.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Identity {
    Inode(u64, u64),
    Device(u64),
    New(PathBuf),
}

impl Identity {
    /// None for what is no target (a directory, a special file, a path that
    /// cannot be looked at).
    fn of(path: &Path) -> Option<Identity> {
        match fs::metadata(path) {
            Ok(md) if md.file_type().is_block_device() => Some(Identity::Device(md.rdev())),
            Ok(md) if md.is_file() => Some(Identity::Inode(md.dev(), md.ino())),
            Ok(_) => None,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                let dir = parent_dir(path);
                let dir = fs::canonicalize(&dir).unwrap_or(dir);
                Some(Identity::New(match path.file_name() {
                    Some(name) => dir.join(name),
                    None => path.to_path_buf(),
                }))
            }
            Err(_) => None,
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Identity::Device(_) => "block device",
            Identity::Inode(..) | Identity::New(_) => "file",
        }
    }
}

/// Whether two paths name the same file or block device (under any names:
/// links, `.`/`..`, device nodes), also for files not created yet.
pub fn same_target(a: &Path, b: &Path) -> bool {
    a == b || matches!((Identity::of(a), Identity::of(b)), (Some(x), Some(y)) if x == y)
}

/// Checks every target of `w` without writing to any existing file or device.
///
/// Every refusal is [`EngineError::Usage`] with one line naming the target, what
/// was found and how to proceed. The only thing created is, for a file that does
/// not exist yet, a hidden probe file in its directory (removed at once) that
/// proves the directory is writable and, with `w.direct`, supports O_DIRECT.
pub fn plan_targets(w: &Workload, allow_destroy: bool) -> Result<Vec<TargetPlan>, EngineError> {
    let mut plans = Vec::with_capacity(w.targets.len());
    let mut seen: Vec<(Identity, &str)> = Vec::new();
    for t in &w.targets {
        let path = PathBuf::from(t);
        // Before the target is opened: a device given twice must be named as
        // such, not found busy (the first open holds it exclusively).
        let id = Identity::of(&path);
        if let Some((seen_id, first)) = seen.iter().find(|(i, _)| id.as_ref() == Some(i)) {
            return Err(usage(format!(
                "{t} is given twice as a target (it is the same {} as {first}); list each target once",
                seen_id.kind()
            )));
        }
        let plan = plan_one(&path, w, allow_destroy)?;
        check_range(&plan, w)?;
        if let Some(id) = id {
            seen.push((id, t.as_str()));
        }
        plans.push(plan);
    }
    Ok(plans)
}

fn plan_one(path: &Path, w: &Workload, allow_destroy: bool) -> Result<TargetPlan, EngineError> {
    let p = path.display();
    match fs::metadata(path) {
        Ok(md) => {
            let ft = md.file_type();
            if ft.is_file() {
                plan_existing_file(path, &md, w, allow_destroy)
            } else if ft.is_block_device() {
                plan_block(path, &md, w, allow_destroy)
            } else if ft.is_dir() {
                Err(usage(format!(
                    "{p} is a directory; give a file path inside it (e.g. {}) or a block device as --target",
                    path.join("iorig-scratch.dat").display()
                )))
            } else {
                let what = if ft.is_char_device() {
                    "a character device"
                } else if ft.is_fifo() {
                    "a FIFO"
                } else if ft.is_socket() {
                    "a socket"
                } else {
                    "a special file"
                };
                Err(usage(format!(
                    "{p} is {what}, not a regular file or block device; choose another --target"
                )))
            }
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => plan_new_file(path, w),
        Err(e) => Err(usage(format!(
            "cannot look at target {p}: {e}; check the path and its permissions"
        ))),
    }
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn plan_new_file(path: &Path, w: &Workload) -> Result<TargetPlan, EngineError> {
    let p = path.display();
    if fs::symlink_metadata(path).is_ok() {
        return Err(usage(format!(
            "{p} is a symbolic link to a missing file; remove the link or choose another --target"
        )));
    }
    let dir = parent_dir(path);
    let d = dir.display();
    let dir_md = match fs::metadata(&dir) {
        Ok(m) if m.is_dir() => m,
        Ok(_) => {
            return Err(usage(format!(
                "cannot create {p}: {d} is not a directory; choose another --target"
            )))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(usage(format!(
            "cannot create {p}: directory {d} does not exist; create it or choose another --target"
        )))
        }
        Err(e) => {
            return Err(usage(format!(
                "cannot create {p}: cannot look at directory {d}: {e}; choose another --target"
            )))
        }
    };
    // A mistyped path must not quietly become a new 1 GiB file: without a
    // size only the default scratch name is created.
    let default_name = Path::new(iorig_spec::DEFAULT_TARGET).file_name();
    if w.size_bytes.is_none() && path.file_name() != default_name {
        return Err(usage(format!(
            "{p}: no such file; give --size to create a scratch file of that size there (only the default {} is created without one)",
            iorig_spec::DEFAULT_TARGET
        )));
    }
    probe_dir(path, &dir, w.direct)?;
    let size = w.size_bytes.unwrap_or(DEFAULT_SIZE_BYTES);
    let need = size.saturating_add(FILE_HEADER_BYTES);
    if let Some(free) = free_bytes(&dir) {
        if free < need {
            return Err(usage(format!(
                "cannot create {p}: it needs {} but {d} has {} free; use a smaller --size or another directory",
                show(need),
                show(free)
            )));
        }
    }
    let plan = TargetPlan {
        path: path.to_path_buf(),
        kind: TargetKind::File,
        exists: false,
        size_bytes: size,
        data_start: FILE_HEADER_BYTES,
        device: iorig_blockdev::name_of_dev(dir_md.dev()),
        resize_to: None,
        file: None,
        guarded: false,
    };
    Ok(plan)
}

static PROBE_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Creates and removes a hidden file in `dir`: proves the directory is writable
/// and, with `direct`, that its filesystem accepts O_DIRECT.
fn probe_dir(target: &Path, dir: &Path, direct: bool) -> Result<(), EngineError> {
    let p = target.display();
    let d = dir.display();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|t| t.subsec_nanos())
        .unwrap_or(0);
    let n = PROBE_COUNTER.fetch_add(1, Ordering::Relaxed);
    let probe = dir.join(format!(".iorig-probe-{}-{n}-{nanos}", std::process::id()));
    let created = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&probe);
    if let Err(e) = created {
        return Err(match errno(&e) {
            libc::EACCES | libc::EPERM => usage(format!(
                "cannot create {p}: permission denied in directory {d}; fix its permissions or choose another --target"
            )),
            libc::EROFS => usage(format!(
                "cannot create {p}: directory {d} is on a read-only filesystem; choose another --target"
            )),
            libc::ENOSPC | libc::EDQUOT => usage(format!(
                "cannot create {p}: no space left in {d}; free some space or choose another --target"
            )),
            _ => usage(format!(
                "cannot create {p}: creating a file in {d} failed: {e}; choose another --target"
            )),
        });
    }
    let result = if direct {
        OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&probe)
            .map(drop)
    } else {
        Ok(())
    };
    // Best effort: the probe holds no data, and an error here would hide the
    // answer we came for.
    let _ = fs::remove_file(&probe);
    result.map_err(|e| match errno(&e) {
        libc::EINVAL => usage(format!(
            "cannot create {p}: the filesystem of {d} does not support O_DIRECT (e.g. tmpfs); use --buffered"
        )),
        _ => usage(format!(
            "cannot create {p}: opening a file in {d} with O_DIRECT failed: {e}; use --buffered or choose another --target"
        )),
    })
}

/// Bytes an unprivileged writer may still use on the filesystem of `dir`.
fn free_bytes(dir: &Path) -> Option<u64> {
    let st = rustix::fs::statvfs(dir).ok()?;
    if st.f_blocks == 0 {
        // ramfs and some pseudo filesystems report no size and no limit.
        return None;
    }
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

fn open_mode(write: bool) -> &'static str {
    if write {
        "reading and writing"
    } else {
        "reading"
    }
}

/// Opens an existing target the way the run will (without creating or
/// truncating anything): this descriptor is the one the run writes through.
fn open_check(path: &Path, write: bool, w: &Workload, excl: bool) -> io::Result<File> {
    let mut flags = libc::O_CLOEXEC;
    if w.direct {
        flags |= libc::O_DIRECT;
    }
    if excl {
        flags |= libc::O_EXCL;
    }
    flags |= match w.sync {
        SyncMode::None => 0,
        SyncMode::Sync => libc::O_SYNC,
        SyncMode::Dsync => libc::O_DSYNC,
    };
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags)
        .open(path)
}

/// What a descriptor or a path refers to: (device, inode) of a file, or the
/// device number of a block device.
fn object_id(md: &fs::Metadata) -> (u64, u64) {
    if md.file_type().is_block_device() {
        (u64::MAX, md.rdev())
    } else {
        (md.dev(), md.ino())
    }
}

/// Refuses when `path` no longer names the object open as `f` (a file moved
/// into place, a device node swapped) since the checks.
fn same_object(path: &Path, f: &File) -> Result<(), EngineError> {
    let now = fs::metadata(path).ok().map(|m| object_id(&m));
    let held = f
        .metadata()
        .map_err(|e| target_err(path, format!("cannot look at the open target: {e}")))?;
    if now != Some(object_id(&held)) {
        return Err(usage(format!(
            "{} changed since it was checked (another file or device is at that path now); nothing was written to it — check what changed and run again",
            path.display()
        )));
    }
    Ok(())
}

/// A second descriptor on the object open as `f`, without O_DIRECT, for
/// reading headers and signatures through the page cache. Opening
/// `/proc/self/fd/N` reaches the same inode even if the path changed.
fn reopen_plain(f: &File) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(format!("/proc/self/fd/{}", f.as_raw_fd()))
}

fn open_check_error(path: &Path, write: bool, direct: bool, e: &io::Error) -> EngineError {
    let p = path.display();
    let mode = open_mode(write);
    match errno(e) {
        libc::EACCES | libc::EPERM => usage(format!(
            "cannot open {p} for {mode}: permission denied; fix its permissions, run with access to it, or choose another --target"
        )),
        libc::EROFS => usage(format!(
            "cannot open {p} for {mode}: it is on a read-only filesystem or device; use --read 100 or choose another --target"
        )),
        libc::ETXTBSY => usage(format!(
            "cannot open {p} for {mode}: it is a running program; choose another --target"
        )),
        libc::EBUSY => usage(format!(
            "{p} is in use: another program holds it exclusively (mounted, swap, LVM, RAID or another benchmark); stop that use first or choose another --target"
        )),
        libc::EINVAL if direct => usage(no_direct_msg(path)),
        libc::EIO => target_err(path, format!("opening for {mode} failed: {e}")),
        _ => usage(format!("cannot open {p} for {mode}: {e}; choose another --target")),
    }
}

fn read_marker_from(path: &Path, f: &File) -> Result<Option<FileHeader>, EngineError> {
    let mut block = vec![0u8; MARKER_BLOCK];
    let mut got = 0;
    while got < block.len() {
        match f.read_at(&mut block[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(target_err(
                    path,
                    format!("reading its first block failed: {e}"),
                ))
            }
        }
    }
    Ok(FileHeader::decode(&block[..got]))
}

fn plan_existing_file(
    path: &Path,
    md: &fs::Metadata,
    w: &Workload,
    allow_destroy: bool,
) -> Result<TargetPlan, EngineError> {
    let p = path.display();
    // Look through a descriptor, so what is checked is what is opened below.
    let probe = File::open(path).map_err(|e| open_check_error(path, false, false, &e))?;
    let probe_md = probe
        .metadata()
        .map_err(|e| target_err(path, format!("cannot look at it: {e}")))?;
    if object_id(&probe_md) != object_id(md) || !probe_md.is_file() {
        return Err(usage(format!(
            "{p} changed while it was being checked; run again"
        )));
    }
    let len = probe_md.len();
    let marker = read_marker_from(path, &probe)?;
    // Handed to iorig earlier: its header may be gone (fio wrote over it
    // from offset 0) but the mark beside the data says whose it is.
    let owned = marker.is_none() && marked_owned(&probe);
    if owned && w.writes() && !allow_destroy {
        // Marked, but what overwrote the header may have made it something
        // (a file system image, a disk image): known signatures refuse it
        // as they refuse a device's.
        signatures::refuse_signatures(path, &probe, len)?;
    }
    let (size, data_start, resize_to) = if marker.is_some() {
        let size = len.saturating_sub(FILE_HEADER_BYTES);
        match w.size_bytes {
            Some(want) if want != size => (want, FILE_HEADER_BYTES, Some(want)),
            _ => (size, FILE_HEADER_BYTES, None),
        }
    } else {
        if w.writes() && !allow_destroy && !owned {
            return Err(usage(format!(
                "{p} is not an iorig scratch file (no iorig header, no {OWNER_XATTR} mark); writing would destroy it — pass --allow-destroy to write to it this once, or hand it to iorig for good with: setfattr -n {OWNER_XATTR} -v scratch {p} (a mark fio's writes leave alone; docs/fio.md)"
            )));
        }
        (limit_to_size(path, len, w, "file")?, 0, None)
    };
    let write = w.writes() || resize_to.is_some();
    if write && !allow_destroy {
        let loops = iorig_blockdev::loop_devices_backed_by(probe_md.dev(), probe_md.ino());
        if !loops.is_empty() {
            return Err(usage(format!(
                "{p} is the backing file of {}; writing to it would change that device's data under whoever uses it — detach it (losetup -d) or pass --allow-destroy",
                loops.join(", ")
            )));
        }
    }
    if let Some(want) = resize_to {
        let grow = want.saturating_add(FILE_HEADER_BYTES).saturating_sub(len);
        if let Some(free) = free_bytes(&parent_dir(path)) {
            if grow > free {
                return Err(usage(format!(
                    "cannot grow {p} to --size {}: it needs {} more but its filesystem has {} free; use a smaller --size",
                    show(want),
                    show(grow),
                    show(free)
                )));
            }
        }
    }
    let file = open_check(path, write, w, false)
        .map_err(|e| open_check_error(path, write, w.direct, &e))?;
    same_object(path, &file)?;
    if file.metadata().map(|m| object_id(&m)).ok() != Some(object_id(&probe_md)) {
        return Err(usage(format!(
            "{p} changed while it was being checked; run again"
        )));
    }
    Ok(TargetPlan {
        path: path.to_path_buf(),
        kind: TargetKind::File,
        exists: true,
        size_bytes: size,
        data_start,
        device: iorig_blockdev::name_of_dev(md.dev()),
        resize_to,
        file: Some(Arc::new(file)),
        // A marked file is guarded too: the look right before the first
        // write still refuses a file that became a loop device's backing.
        guarded: write && !allow_destroy,
    })
}

pub use iorig_blockdev::size_of_open;

fn plan_block(
    path: &Path,
    md: &fs::Metadata,
    w: &Workload,
    allow_destroy: bool,
) -> Result<TargetPlan, EngineError> {
    let p = path.display();
    let rdev = md.rdev();
    let num = Some(iorig_blockdev::major_minor(rdev));
    let name = iorig_blockdev::name_of_dev(rdev).or_else(|| {
        fs::canonicalize(path)
            .ok()
            .and_then(|r| r.file_name().map(|n| n.to_string_lossy().into_owned()))
    });
    let probe = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match errno(&e) {
            libc::ENXIO | libc::ENOMEDIUM => usage(format!(
                "{p} has no medium or no such device behind it; choose another --target"
            )),
            _ => open_check_error(path, false, false, &e),
        })?;
    let size = match iorig_blockdev::device_size_bytes(&probe) {
        Ok(s) => s,
        Err(_) => {
            use std::io::Seek;
            let mut f = &probe;
            f.seek(io::SeekFrom::End(0))
                .map_err(|e| target_err(path, format!("cannot read the device size: {e}")))?
        }
    };
    // Signatures are looked for over the whole device (backup GPT, md and
    // ZFS labels sit at its end), whatever range `--size` tests.
    let whole_bytes = size;
    let size = limit_to_size(path, size, w, "device")?;
    if w.writes() {
        if iorig_blockdev::read_only(&probe, name.as_deref()) {
            return Err(usage(format!(
                "{p} is a read-only device and this workload writes (--read {}); use --read 100 or make it writable (blockdev --setrw {p})",
                w.read_pct
            )));
        }
        if !allow_destroy {
            check_block_unused(path, name.as_deref(), num)?;
        }
    }
    // The descriptor the run uses; a device written to is held exclusively
    // from here on, and its signatures are read through it.
    // Jobs of one step may write one device: the first holds it exclusively
    // against everyone else, the others open it beside that hold.
    let excl = w.writes() && !exclusive::held(rdev);
    let file = open_check(path, w.writes(), w, excl)
        .map_err(|e| open_check_error(path, w.writes(), w.direct, &e))?;
    same_object(path, &file)?;
    if file.metadata().map(|m| m.rdev()).ok() != Some(rdev) {
        return Err(usage(format!(
            "{p} changed while it was being checked; run again"
        )));
    }
    let file = Arc::new(file);
    if excl {
        exclusive::hold(rdev, &file);
    }
    drop(probe);
    if w.writes() && !allow_destroy {
        refuse_signatures(path, &file, whole_bytes)?;
    }
    Ok(TargetPlan {
        path: path.to_path_buf(),
        kind: TargetKind::Block,
        exists: true,
        size_bytes: size,
        data_start: 0,
        device: name,
        resize_to: None,
        file: Some(file),
        guarded: w.writes() && !allow_destroy,
    })
}

/// Block devices this process holds open with `O_EXCL`, while it does.
mod exclusive {
    use std::fs::File;
    use std::sync::{Arc, Mutex, Weak};

    static HELD: Mutex<Vec<(u64, Weak<File>)>> = Mutex::new(Vec::new());

    /// Whether a live descriptor of this process holds `rdev` exclusively.
    pub(super) fn held(rdev: u64) -> bool {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        held.retain(|(_, f)| f.strong_count() > 0);
        held.iter().any(|(r, _)| *r == rdev)
    }

    pub(super) fn hold(rdev: u64, file: &Arc<File>) {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        held.push((rdev, Arc::downgrade(file)));
    }
}

/// The bytes tested on a target iorig does not size itself (a block device, a
/// file without an iorig header): `--size` limits the range to its first
/// `--size` bytes, as fio's `size=` does on a device; a `--size` larger than
/// the target is refused, since iorig never grows what it did not create.
fn limit_to_size(path: &Path, have: u64, w: &Workload, what: &str) -> Result<u64, EngineError> {
    match w.size_bytes {
        Some(want) if want > have => Err(usage(format!(
            "--size {} is larger than the {what} {} ({}); give --size {} or less, or leave it out to test the whole {what}",
            show(want),
            path.display(),
            show(have),
            show(have)
        ))),
        Some(want) => Ok(want),
        None => Ok(have),
    }
}

fn pct_of(size: u64, pct: f64) -> u64 {
    if pct <= 0.0 {
        0
    } else if pct >= 100.0 {
        size
    } else {
        ((size as f64) * pct / 100.0).min(size as f64) as u64
    }
}

/// The working set of one target: `(absolute start, length)`.
///
/// Start is `data_start` plus `w.range.start_pct` of the data area, aligned up to
/// the block-size alignment; the end (`end_pct`) is aligned down. Offsets the
/// engine generates lie in `start..start + len`.
pub fn usable_range(plan: &TargetPlan, w: &Workload) -> (u64, u64) {
    working_set(plan.data_start, plan.size_bytes, w)
}

/// The aligned working set of `size_bytes` of data starting at `data_start`
/// under `w.range`: (absolute start, length). Shared by real targets and the
/// null engine's virtual ones.
pub fn working_set(data_start: u64, size_bytes: u64, w: &Workload) -> (u64, u64) {
    let align = w.offset_align_bytes().max(1);
    let start = data_start.saturating_add(pct_of(size_bytes, w.range.start_pct));
    let end = data_start.saturating_add(pct_of(size_bytes, w.range.end_pct));
    let start = start.div_ceil(align).saturating_mul(align);
    let end = end / align * align;
    (start, end.saturating_sub(start))
}

fn check_range(plan: &TargetPlan, w: &Workload) -> Result<(), EngineError> {
    let (_, len) = usable_range(plan, w);
    let bs = w.max_bs_bytes();
    if len >= bs && len > 0 {
        return Ok(());
    }
    let p = plan.path.display();
    let bs_text = format_size(bs);
    if w.range == RangePct::FULL {
        let fix = if plan.data_start == FILE_HEADER_BYTES {
            "a larger --size"
        } else {
            "a larger target"
        };
        Err(usage(format!(
            "bs {bs_text} is larger than {p} ({} usable of {}); use a smaller --bs or {fix}",
            show(len),
            show(plan.size_bytes)
        )))
    } else {
        Err(usage(format!(
            "bs {bs_text} is larger than the range of {p} (--range {} leaves {} of {}); use a smaller --bs or a wider --range",
            w.range,
            show(len),
            show(plan.size_bytes)
        )))
    }
}

/// Creates missing scratch files (header, then the whole data area filled with
/// incompressible data and synced), resizes iorig files the plan says to, and
/// then, right before the run's first write, checks every target that existed
/// once more through the descriptor the run will use: the path still names
/// it, a device still carries no signature, a scratch file still has its
/// header. Call only with plans from [`plan_targets`].
pub fn open_targets(
    plans: &[TargetPlan],
    w: &Workload,
    progress: &mut dyn FnMut(&FillProgress),
) -> Result<Vec<OpenTarget>, EngineError> {
    // Nothing is created, filled or resized while any existing target has
    // changed since its check; and everything is checked again after the
    // fills, right before the run's first write.
    for plan in plans {
        if let (true, Some(f)) = (plan.exists, &plan.file) {
            recheck(plan, f)?;
        }
    }
    let mut files = Vec::with_capacity(plans.len());
    for (i, plan) in plans.iter().enumerate() {
        let seed = w.seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x10a1_f111;
        let file = match &plan.file {
            Some(f) => {
                if let Some(want) = plan.resize_to {
                    resize_scratch(plan, f, want, seed, progress)?;
                }
                f.try_clone().map_err(|e| {
                    target_err(&plan.path, format!("cannot use the open target: {e}"))
                })?
            }
            None if plan.kind == TargetKind::File && !plan.exists => {
                create_scratch(plan, w, seed, progress)?
            }
            None => {
                return Err(target_err(
                    &plan.path,
                    "it was not opened when it was checked; plan it again",
                ))
            }
        };
        files.push(file);
    }
    let mut out = Vec::with_capacity(plans.len());
    for (plan, file) in plans.iter().zip(files) {
        if plan.exists {
            recheck(plan, &file)?;
        }
        check_size(plan, &file)?;
        out.push(OpenTarget {
            plan: plan.clone(),
            file,
        });
    }
    Ok(out)
}

/// The last look before the first write: the path still names the object
/// that was checked, and a guarded target still holds no foreign data.
fn recheck(plan: &TargetPlan, f: &File) -> Result<(), EngineError> {
    same_object(&plan.path, f)?;
    if !plan.guarded {
        return Ok(());
    }
    match plan.kind {
        TargetKind::Block => {
            let size = iorig_blockdev::device_size_bytes(f)
                .map_err(|e| target_err(&plan.path, format!("cannot read the device size: {e}")))?;
            refuse_signatures(&plan.path, f, size)
        }
        TargetKind::File => {
            let md = f
                .metadata()
                .map_err(|e| target_err(&plan.path, format!("cannot look at it: {e}")))?;
            let loops = iorig_blockdev::loop_devices_backed_by(md.dev(), md.ino());
            if !loops.is_empty() {
                return Err(usage(format!(
                    "{} became the backing file of {} since it was checked; nothing was written to it — detach it (losetup -d) or pass --allow-destroy",
                    plan.path.display(),
                    loops.join(", ")
                )));
            }
            if plan.data_start == 0 {
                // A marked file whose header is gone: no header to look for.
                return Ok(());
            }
            let plain = reopen_plain(f)
                .map_err(|e| target_err(&plan.path, format!("cannot read it: {e}")))?;
            if read_marker_from(&plan.path, &plain)?.is_none() {
                return Err(usage(format!(
                    "{} lost its iorig header since it was checked (something else wrote to it); nothing was written to it — pass --allow-destroy to write to it anyway",
                    plan.path.display()
                )));
            }
            Ok(())
        }
    }
}

/// Opens a scratch file iorig just created, with the run's flags.
fn open_for_io(plan: &TargetPlan, w: &Workload) -> Result<File, EngineError> {
    open_check(&plan.path, w.writes(), w, false).map_err(|e| {
        target_err(
            &plan.path,
            format!("cannot open for {}: {e}", open_mode(w.writes())),
        )
    })
}

/// Guards against a target that shrank between planning and opening.
fn check_size(plan: &TargetPlan, f: &File) -> Result<(), EngineError> {
    let have = match plan.kind {
        TargetKind::File => f.metadata().map(|m| m.len()),
        TargetKind::Block => iorig_blockdev::device_size_bytes(f),
    }
    .map_err(|e| target_err(&plan.path, format!("cannot read its size: {e}")))?;
    let need = plan.data_start.saturating_add(plan.size_bytes);
    if have < need {
        return Err(target_err(
            &plan.path,
            format!(
                "it is {} now but the plan needs {}; it changed since it was checked",
                show(have),
                show(need)
            ),
        ));
    }
    Ok(())
}

/// Descriptors of its own on every target for each worker after the first
/// (which keeps the ones opened and checked here): workers sharing one
/// descriptor share one `struct file`, whose reference count every
/// `pread` of every worker takes and drops, a cache line bouncing between
/// all their CPUs. Each is opened again through `/proc/self/fd/N` with the
/// same access and status flags (O_DIRECT, O_SYNC, ...) and checked to be
/// the same file (device and inode); a block device held O_EXCL keeps its
/// hold on the first descriptor. When workers × targets would pass the
/// open-files limit (raised to its hard limit first), the workers share
/// the descriptors, and the note says why.
pub(crate) fn worker_descriptors(
    targets: &[OpenTarget],
    workers: u32,
) -> Result<(Vec<Vec<std::os::fd::OwnedFd>>, Option<String>), EngineError> {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let extra = u64::from(workers.saturating_sub(1)) * targets.len() as u64;
    if extra == 0 {
        return Ok((Vec::new(), None));
    }
    // Room for what is open now (the store, logs, rings) besides them.
    const HEADROOM: u64 = 256;
    let limit = getrlimit(Resource::Nofile);
    let need = extra + targets.len() as u64 + HEADROOM;
    if limit.current.is_some_and(|c| c < need) {
        let raised = rustix::process::Rlimit {
            current: limit
                .maximum
                .map(|m| m.min(need.max(limit.current.unwrap_or(0)))),
            maximum: limit.maximum,
        };
        let _ = setrlimit(Resource::Nofile, raised);
        let now = getrlimit(Resource::Nofile);
        if now.current.is_some_and(|c| c < need) {
            return Ok((
                Vec::new(),
                Some(format!(
                    "the workers share each target's descriptor: {extra} more would pass the open-files limit ({}); raise it (ulimit -n) for a descriptor per worker, which scales better on many cores",
                    now.current.unwrap_or(0)
                )),
            ));
        }
    }
    let mut all = Vec::with_capacity(workers as usize - 1);
    for _ in 1..workers {
        let mut mine = Vec::with_capacity(targets.len());
        for t in targets {
            mine.push(reopen(&t.file).map_err(|e| EngineError::Io {
                what: format!(
                    "opening {} again for a worker of its own",
                    t.plan.path.display()
                ),
                source: e,
            })?);
        }
        all.push(mine);
    }
    Ok((all, None))
}

/// `file` opened again, as it was opened, and checked to be the same file.
fn reopen(file: &File) -> io::Result<std::os::fd::OwnedFd> {
    use rustix::fs::{fcntl_getfl, fstat, Mode, OFlags};
    let flags = fcntl_getfl(file)?;
    let link = format!("/proc/self/fd/{}", file.as_raw_fd());
    let fd = rustix::fs::open(link.as_str(), flags | OFlags::CLOEXEC, Mode::empty())?;
    let (a, b) = (fstat(file)?, fstat(&fd)?);
    if (a.st_dev, a.st_ino, a.st_rdev) != (b.st_dev, b.st_ino, b.st_rdev) {
        return Err(io::Error::other(
            "it is not the same file any more (replaced while the run started)",
        ));
    }
    Ok(fd)
}

#[cfg(test)]
mod tests {
    use super::inuse::{mounted_at, parse_mountinfo};
    use super::*;
    use iorig_spec::{OneOrMany, StrOrNum, WorkloadFile};

    fn workload(targets: &[&Path], f: WorkloadFile) -> Workload {
        WorkloadFile {
            target: Some(OneOrMany::Many(
                targets.iter().map(|t| t.display().to_string()).collect(),
            )),
            ..f
        }
        .resolve(1)
        .unwrap()
    }

    fn sized(size: &str) -> WorkloadFile {
        WorkloadFile {
            size: Some(iorig_spec::StrOrNum::Str(size.into())),
            ..WorkloadFile::default()
        }
    }

    #[test]
    fn a_missing_file_is_created_only_with_a_size_or_by_its_default_name() {
        let dir = tempfile::tempdir().unwrap();
        let typo = dir.path().join("loop0.imgg");
        let msg = usage_text(
            plan_targets(&workload(&[&typo], WorkloadFile::default()), false).unwrap_err(),
        );
        assert!(msg.contains("no such file; give --size"), "{msg}");
        assert!(plan_targets(&workload(&[&typo], sized("8m")), false).is_ok());
        let default = dir.path().join("iorig-scratch.dat");
        assert!(plan_targets(&workload(&[&default], WorkloadFile::default()), false).is_ok());
        assert!(
            !typo.exists() && !default.exists(),
            "planning writes nothing"
        );
    }

    fn plan(size: u64, data_start: u64) -> TargetPlan {
        TargetPlan {
            path: PathBuf::from("t"),
            kind: TargetKind::File,
            exists: true,
            size_bytes: size,
            data_start,
            device: None,
            resize_to: None,
            file: None,
            guarded: false,
        }
    }

    /// Each worker after the first gets a descriptor of its own on every
    /// target: the same file, opened with the same flags (O_DIRECT kept),
    /// a different open file (its own offset and reference count).
    #[test]
    fn workers_get_descriptors_of_their_own_on_the_same_files() {
        use rustix::fs::{fcntl_getfl, fstat, OFlags};
        let dir = tempfile::tempdir().unwrap();
        let targets: Vec<OpenTarget> = ["a", "b"]
            .iter()
            .map(|n| {
                let path = dir.path().join(n);
                std::fs::write(&path, vec![7u8; 8192]).unwrap();
                let file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .custom_flags(libc_o_direct_or_none(&path))
                    .open(&path)
                    .unwrap();
                OpenTarget {
                    plan: plan(8192, 0),
                    file,
                }
            })
            .collect();
        let (own, why) = worker_descriptors(&targets, 3).unwrap();
        assert!(why.is_none(), "{why:?}");
        assert_eq!(own.len(), 2, "workers 1 and 2");
        for mine in &own {
            assert_eq!(mine.len(), 2);
            for (fd, t) in mine.iter().zip(&targets) {
                let (a, b) = (fstat(&t.file).unwrap(), fstat(fd).unwrap());
                assert_eq!((a.st_dev, a.st_ino), (b.st_dev, b.st_ino));
                assert_ne!(fd.as_raw_fd(), t.file.as_raw_fd());
                let keep = OFlags::RWMODE | OFlags::DIRECT;
                assert_eq!(
                    fcntl_getfl(fd).unwrap() & keep,
                    fcntl_getfl(&t.file).unwrap() & keep
                );
            }
        }
        assert!(worker_descriptors(&targets, 1).unwrap().0.is_empty());
    }

    /// O_DIRECT where the file system takes it (tmpfs does not), so the
    /// test shows the flag carried over wherever it can be set.
    fn libc_o_direct_or_none(path: &Path) -> i32 {
        let direct = rustix::fs::OFlags::DIRECT.bits() as i32;
        match OpenOptions::new()
            .read(true)
            .custom_flags(direct)
            .open(path)
        {
            Ok(_) => direct,
            Err(_) => 0,
        }
    }

    fn usage_text(e: EngineError) -> String {
        match e {
            EngineError::Usage(m) => m,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn header_round_trip() {
        let h = FileHeader::new(123 << 20);
        let block = h.encode();
        assert_eq!(block.len(), 4096);
        assert_eq!(&block[..14], FILE_MAGIC);
        assert_eq!(FileHeader::decode(&block), Some(h));
        assert_eq!(FileHeader::decode(&[0u8; 4096]), None);
        assert_eq!(FileHeader::decode(b"IORIG"), None);
    }

    #[test]
    fn usable_range_aligns_inward() {
        let w = workload(&[Path::new("t")], WorkloadFile::default());
        assert_eq!(
            usable_range(&plan(1 << 30, FILE_HEADER_BYTES), &w),
            (1 << 20, 1 << 30)
        );
        // A device whose size is not a multiple of bs: the tail is dropped.
        assert_eq!(usable_range(&plan(10_000, 0), &w), (0, 8192));
        let w = workload(
            &[Path::new("t")],
            WorkloadFile {
                range: Some("10%-60%".into()),
                bs: Some(StrOrNum::Str("64k".into())),
                ..Default::default()
            },
        );
        let (start, len) = usable_range(&plan(1 << 30, FILE_HEADER_BYTES), &w);
        assert_eq!(start % 65536, 0);
        assert_eq!(len % 65536, 0);
        assert!(start >= (1 << 20) + (1u64 << 30) / 10);
        assert!(start + len <= (1 << 20) + (1u64 << 30) * 6 / 10);
        assert!(len > (1u64 << 30) / 2 - 2 * 65536);
        // Nothing fits: length 0, never an underflow.
        assert_eq!(usable_range(&plan(1000, 0), &w).1, 0);
    }

    #[test]
    fn signatures_are_named() {
        let size = 64u64 << 20;
        let zero_head = vec![0u8; 1 << 20];
        let zero_tail = vec![0u8; 1 << 20];
        assert!(detect_signatures(&zero_head, &zero_tail, size).is_empty());
        let with = |at: usize, bytes: &[u8]| {
            let mut h = zero_head.clone();
            h[at..at + bytes.len()].copy_from_slice(bytes);
            detect_signatures(&h, &zero_tail, size)
        };
        assert_eq!(with(1080, &[0x53, 0xEF]), vec!["an ext2 filesystem"]);
        let mut ext4 = zero_head.clone();
        ext4[1080..1082].copy_from_slice(&[0x53, 0xEF]);
        ext4[1024 + 0x60] = 0x40; // extents
        assert_eq!(
            detect_signatures(&ext4, &zero_tail, size),
            vec!["an ext4 filesystem"]
        );
        let mut ext3 = zero_head.clone();
        ext3[1080..1082].copy_from_slice(&[0x53, 0xEF]);
        ext3[1024 + 0x5C] = 0x4; // has_journal
        assert_eq!(
            detect_signatures(&ext3, &zero_tail, size),
            vec!["an ext3 filesystem"]
        );
        assert_eq!(with(0, b"XFSB"), vec!["an XFS filesystem"]);
        assert_eq!(with(65600, b"_BHRfS_M"), vec!["a btrfs filesystem"]);
        assert_eq!(with(4086, b"SWAPSPACE2"), vec!["a swap area"]);
        assert_eq!(with(4086, b"SWAP-SPACE"), vec!["a swap area"]);
        assert_eq!(with(0, b"LUKS\xba\xbe"), vec!["a LUKS encrypted volume"]);
        assert_eq!(with(512, b"LABELONE"), vec!["an LVM2 physical volume"]);
        assert_eq!(
            with(4096, &0xa92b_4efcu32.to_le_bytes()),
            vec!["an MD RAID member"]
        );
        assert_eq!(with(512, b"EFI PART"), vec!["a GPT partition table"]);
        assert_eq!(with(3, b"NTFS    "), vec!["an NTFS filesystem"]);
        assert_eq!(with(32769, b"CD001"), vec!["an ISO 9660 filesystem"]);
        assert_eq!(
            with(128 << 10, &0x00ba_b10cu64.to_le_bytes()),
            vec!["a ZFS pool member"]
        );
        // A boot signature alone is not a partition table; with an entry it is.
        assert!(with(510, &[0x55, 0xAA]).is_empty());
        let mut mbr = zero_head.clone();
        mbr[510..512].copy_from_slice(&[0x55, 0xAA]);
        mbr[446 + 4] = 0x83;
        assert_eq!(
            detect_signatures(&mbr, &zero_tail, size),
            vec!["an MBR partition table"]
        );
        let mut fat = zero_head.clone();
        fat[510..512].copy_from_slice(&[0x55, 0xAA]);
        fat[82..90].copy_from_slice(b"FAT32   ");
        fat[446 + 4] = 0x0c;
        assert_eq!(
            detect_signatures(&fat, &zero_tail, size),
            vec!["a FAT filesystem"]
        );
        // A GPT's protective MBR is reported as the GPT only.
        let mut gpt = mbr.clone();
        gpt[446 + 4] = 0xee;
        gpt[512..520].copy_from_slice(b"EFI PART");
        assert_eq!(
            detect_signatures(&gpt, &zero_tail, size),
            vec!["a GPT partition table"]
        );

        // Signatures at the end: backup GPT, MD 1.0 and 0.90 superblocks.
        let tail_with = |abs: u64, bytes: &[u8]| {
            let mut t = zero_tail.clone();
            let i = (abs - (size - t.len() as u64)) as usize;
            t[i..i + bytes.len()].copy_from_slice(bytes);
            detect_signatures(&zero_head, &t, size)
        };
        assert_eq!(
            tail_with(size - 512, b"EFI PART"),
            vec!["a GPT partition table"]
        );
        let md = 0xa92b_4efcu32.to_le_bytes();
        assert_eq!(tail_with(size - 8192, &md), vec!["an MD RAID member"]);
        assert_eq!(tail_with(size - 65536, &md), vec!["an MD RAID member"]);
    }

    #[test]
    fn tiny_devices_do_not_panic() {
        for size in [0u64, 1, 511, 4096, 70_000] {
            let head = vec![0u8; size as usize];
            assert!(detect_signatures(&head, &head, size).is_empty());
        }
    }

    #[test]
    fn mountinfo_parsing() {
        let text = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n\
                    40 27 7:3 / /mnt/my\\040disk rw - ext4 /dev/loop3 rw\n\
                    41 27 0:45 / /data rw - btrfs /dev/loop5 rw\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 3);
        assert_eq!(m[1].mount_point, "/mnt/my disk");
        assert_eq!(
            mounted_at(&m, "loop3", Some((7, 3))),
            Some("/mnt/my disk".into())
        );
        // btrfs shows an anonymous device number; the source names the device.
        assert_eq!(mounted_at(&m, "loop5", Some((7, 5))), Some("/data".into()));
        assert_eq!(mounted_at(&m, "loop4", Some((7, 4))), None);
    }

    #[test]
    fn iorig_file_is_resized_when_size_changes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.dat");
        let wf = |size: &str| WorkloadFile {
            size: Some(StrOrNum::Str(size.into())),
            read: Some(StrOrNum::Int(0)),
            buffered: Some(true),
            ..Default::default()
        };
        let w = workload(&[&path], wf("2m"));
        let plans = plan_targets(&w, false).unwrap();
        open_targets(&plans, &w, &mut |_| {}).unwrap();
        let original = fs::read(&path).unwrap();

        let w = workload(&[&path], wf("3m"));
        let plans = plan_targets(&w, false).unwrap();
        assert_eq!(
            (plans[0].size_bytes, plans[0].resize_to),
            (3 << 20, Some(3 << 20))
        );
        assert_eq!(fs::read(&path).unwrap(), original, "planning wrote");
        open_targets(&plans, &w, &mut |_| {}).unwrap();
        let grown = fs::read(&path).unwrap();
        assert_eq!(grown.len() as u64, FILE_HEADER_BYTES + (3 << 20));
        assert_eq!(grown[..original.len()], original[..]);
        assert!(grown[original.len()..]
            .chunks(4096)
            .all(|c| c.iter().any(|&b| b != 0)));

        let w = workload(&[&path], wf("1m"));
        let plans = plan_targets(&w, false).unwrap();
        open_targets(&plans, &w, &mut |_| {}).unwrap();
        assert_eq!(
            fs::metadata(&path).unwrap().len(),
            FILE_HEADER_BYTES + (1 << 20)
        );
        assert!(FileHeader::decode(&fs::read(&path).unwrap()[..4096]).is_some());
    }

    #[test]
    fn same_target_twice_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.dat");
        let other = dir.path().join(".").join("s.dat");
        let w = workload(&[&path, &other], sized("1m"));
        let msg = usage_text(plan_targets(&w, false).unwrap_err());
        assert!(msg.contains("twice"), "{msg}");
    }

    #[test]
    fn directory_and_char_device_targets_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let w = workload(&[dir.path()], WorkloadFile::default());
        let msg = usage_text(plan_targets(&w, false).unwrap_err());
        assert!(msg.contains("is a directory"), "{msg}");
        let w = workload(&[Path::new("/dev/null")], WorkloadFile::default());
        let msg = usage_text(plan_targets(&w, false).unwrap_err());
        assert!(msg.contains("character device"), "{msg}");
    }

    #[test]
    fn file_device_is_found_through_sysfs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.dat");
        let w = workload(&[&path], sized("1m"));
        let plans = plan_targets(&w, false).unwrap();
        let dev = fs::metadata(dir.path()).unwrap().dev();
        let (major, minor) = iorig_blockdev::major_minor(dev);
        let sys = format!("/sys/dev/block/{major}:{minor}");
        if Path::new(&sys).exists() {
            assert!(plans[0].device.is_some());
        } else {
            assert_eq!(plans[0].device, None);
        }
    }
}
