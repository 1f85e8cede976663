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

/// Bytes reserved at the start of an iorig scratch file for its marker.
pub const FILE_HEADER_BYTES: u64 = 1 << 20;

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
}

/// Marker at byte 0 of every scratch file iorig creates.
pub const FILE_MAGIC: &[u8; 14] = b"IORIG-SCRATCH\0";
/// Version of the header layout written by this iorig.
pub const FILE_HEADER_VERSION: u16 = 1;
/// Bytes read from an existing file to look for the marker.
const MARKER_BLOCK: usize = 4096;
/// A human-readable note in the header block, for whoever finds the file.
const HEADER_NOTE: &[u8] =
    b"This file was created by iorig as benchmark scratch space; it holds no user data.\n";
const HEADER_NOTE_AT: usize = 128;
/// Chunk size for filling scratch files.
const FILL_CHUNK: usize = 4 << 20;
/// How much of each end of a block device is searched for signatures.
const SIGNATURE_SPAN: u64 = 1 << 20;

/// The first block of an iorig scratch file.
///
/// Layout (little endian): magic `IORIG-SCRATCH\0` (14 bytes) · version u16 ·
/// header bytes u64 (where the data area starts) · data size at creation u64 ·
/// creation time in Unix seconds u64 · creating iorig version, NUL-padded (32
/// bytes) · at byte 128 a one-line note for humans; zeros up to the data area.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    pub version: u16,
    pub header_bytes: u64,
    pub created_size_bytes: u64,
    pub created_unix_s: u64,
    pub tool_version: String,
}

impl FileHeader {
    /// The header for a file created now with `size_bytes` of data.
    pub fn new(size_bytes: u64) -> Self {
        let created_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        FileHeader {
            version: FILE_HEADER_VERSION,
            header_bytes: FILE_HEADER_BYTES,
            created_size_bytes: size_bytes,
            created_unix_s,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// The 4 KiB marker block.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; MARKER_BLOCK];
        b[..14].copy_from_slice(FILE_MAGIC);
        b[14..16].copy_from_slice(&self.version.to_le_bytes());
        b[16..24].copy_from_slice(&self.header_bytes.to_le_bytes());
        b[24..32].copy_from_slice(&self.created_size_bytes.to_le_bytes());
        b[32..40].copy_from_slice(&self.created_unix_s.to_le_bytes());
        let v = self.tool_version.as_bytes();
        let n = v.len().min(31);
        b[40..40 + n].copy_from_slice(&v[..n]);
        b[HEADER_NOTE_AT..HEADER_NOTE_AT + HEADER_NOTE.len()].copy_from_slice(HEADER_NOTE);
        b
    }

    /// Reads a header from the start of a file; None when the marker is absent.
    pub fn decode(block: &[u8]) -> Option<Self> {
        if block.get(..14)? != FILE_MAGIC {
            return None;
        }
        let tool = block.get(40..72)?;
        let tool_len = tool.iter().position(|&c| c == 0).unwrap_or(tool.len());
        Some(FileHeader {
            version: le16(block, 14)?,
            header_bytes: le64(block, 16)?,
            created_size_bytes: le64(block, 24)?,
            created_unix_s: le64(block, 32)?,
            tool_version: String::from_utf8_lossy(&tool[..tool_len]).into_owned(),
        })
    }
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn le64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

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
    let (size, data_start, resize_to) = if marker.is_some() {
        let size = len.saturating_sub(FILE_HEADER_BYTES);
        match w.size_bytes {
            Some(want) if want != size => (want, FILE_HEADER_BYTES, Some(want)),
            _ => (size, FILE_HEADER_BYTES, None),
        }
    } else {
        if w.writes() && !allow_destroy {
            return Err(usage(format!(
                "{p} is not an iorig scratch file (no iorig header); writing would destroy it — pass --allow-destroy to write to it anyway"
            )));
        }
        (len, 0, None)
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
        guarded: write && !allow_destroy,
    })
}

/// Undoes the octal escapes (`\040`) of /proc/self/mountinfo and /proc/swaps.
fn unescape(field: &str) -> String {
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = (b[i + 1] - b'0') as u32 * 64
                + (b[i + 2] - b'0') as u32 * 8
                + (b[i + 3] - b'0') as u32;
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One line of /proc/self/mountinfo that matters here.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Mount {
    major: u64,
    minor: u64,
    mount_point: String,
    source: String,
}

fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let devno = fields.nth(2)?;
            let _root = fields.next()?;
            let mount_point = unescape(fields.next()?);
            let (maj, min) = devno.split_once(':')?;
            let rest = line.split_once(" - ")?.1;
            let source = unescape(rest.split(' ').nth(1).unwrap_or(""));
            Some(Mount {
                major: maj.parse().ok()?,
                minor: min.parse().ok()?,
                mount_point,
                source,
            })
        })
        .collect()
}

/// Where device `name` (MAJ:MIN `num`) is mounted, if anywhere.
fn mounted_at(mounts: &[Mount], name: &str, num: Option<(u64, u64)>) -> Option<String> {
    let dev_path = format!("/dev/{name}");
    mounts
        .iter()
        .find(|m| {
            num == Some((m.major, m.minor))
                || m.source == dev_path
                || (m.source.starts_with('/')
                    && fs::canonicalize(&m.source)
                        .map(|s| s == Path::new(&dev_path))
                        .unwrap_or(false))
        })
        .map(|m| m.mount_point.clone())
}

/// Whether block device number `rdev` is an active swap area.
fn is_swap(swaps: &str, num: Option<(u64, u64)>) -> bool {
    let Some(num) = num else { return false };
    swaps.lines().skip(1).any(|line| {
        let Some(name) = line.split_whitespace().next() else {
            return false;
        };
        fs::metadata(unescape(name))
            .map(|m| {
                m.file_type().is_block_device() && iorig_blockdev::major_minor(m.rdev()) == num
            })
            .unwrap_or(false)
    })
}

pub use iorig_blockdev::size_of_open;

fn read_fully_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    f.read_exact_at(buf, at)
}

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
    let file = open_check(path, w.writes(), w, w.writes())
        .map_err(|e| open_check_error(path, w.writes(), w.direct, &e))?;
    same_object(path, &file)?;
    if file.metadata().map(|m| m.rdev()).ok() != Some(rdev) {
        return Err(usage(format!(
            "{p} changed while it was being checked; run again"
        )));
    }
    drop(probe);
    if w.writes() && !allow_destroy {
        refuse_signatures(path, &file, size)?;
    }
    Ok(TargetPlan {
        path: path.to_path_buf(),
        kind: TargetKind::Block,
        exists: true,
        size_bytes: size,
        data_start: 0,
        device: name,
        resize_to: None,
        file: Some(Arc::new(file)),
        guarded: w.writes() && !allow_destroy,
    })
}

/// Refuses a device that carries any signature: iorig's own detection and
/// the system's (util-linux `wipefs`, else `blkid`), both through the open
/// descriptor.
fn refuse_signatures(path: &Path, f: &File, size: u64) -> Result<(), EngineError> {
    let p = path.display();
    let plain = reopen_plain(f)
        .map_err(|e| target_err(path, format!("cannot read it to look for signatures: {e}")))?;
    let own: Vec<String> = read_signatures(&plain, size)
        .map_err(|e| {
            target_err(
                path,
                format!("reading it to look for signatures failed: {e}"),
            )
        })?
        .into_iter()
        .map(|f| format!("{f} signature"))
        .collect();
    let system = match crate::probe::system_signatures(f) {
        crate::probe::SystemProbe::Found { tool, signatures } => {
            let list: Vec<String> = signatures.iter().map(|s| s.to_string()).collect();
            Some(format!("{tool}: {}", list.join(", ")))
        }
        crate::probe::SystemProbe::Nothing | crate::probe::SystemProbe::Unavailable => None,
    };
    let what = match (own.is_empty(), system) {
        (true, None) => return Ok(()),
        (false, None) => own.join(" and "),
        (false, Some(sys)) => format!("{} ({sys})", own.join(" and ")),
        (true, Some(sys)) => format!("data with a known signature ({sys})"),
    };
    Err(usage(format!(
        "{p} carries {what}; writing would destroy it — pass --allow-destroy to overwrite it"
    )))
}

/// Refuses a device that is mounted, used as swap, held by another device, or
/// partitioned (checking each partition the same way).
fn check_block_unused(
    path: &Path,
    name: Option<&str>,
    num: Option<(u64, u64)>,
) -> Result<(), EngineError> {
    let p = path.display();
    let mounts = parse_mountinfo(&fs::read_to_string("/proc/self/mountinfo").unwrap_or_default());
    let swaps = fs::read_to_string("/proc/swaps").unwrap_or_default();
    let Some(name) = name else {
        if let Some(at) = mounted_at(&mounts, "", num) {
            return Err(usage(format!(
                "{p} is mounted at {at}; writing would destroy the filesystem — unmount it first or choose another --target"
            )));
        }
        return Ok(());
    };
    let parts = iorig_blockdev::partitions(name);
    let mut devs: Vec<(String, Option<(u64, u64)>)> = vec![(name.to_string(), num)];
    devs.extend(
        parts
            .iter()
            .map(|n| (n.clone(), iorig_blockdev::dev_number(n))),
    );
    for (dev, dnum) in &devs {
        let what = if dev == name {
            p.to_string()
        } else {
            format!("{p} (its partition {dev})")
        };
        if let Some(at) = mounted_at(&mounts, dev, *dnum) {
            return Err(usage(format!(
                "{what} is mounted at {at}; writing would destroy the filesystem — unmount it first or choose another --target"
            )));
        }
        if is_swap(&swaps, *dnum) {
            return Err(usage(format!(
                "{what} is in use as swap; run swapoff on it first or choose another --target"
            )));
        }
        let h = iorig_blockdev::holders(dev);
        if !h.is_empty() {
            return Err(usage(format!(
                "{what} is in use by {} (device-mapper, LVM or RAID); remove that first or choose another --target",
                h.join(", ")
            )));
        }
    }
    if let Some(disk) = iorig_blockdev::parent_disk(name) {
        if let Some(at) = mounted_at(&mounts, &disk, iorig_blockdev::dev_number(&disk)) {
            return Err(usage(format!(
                "{p} is a partition of {disk}, which is mounted at {at}; choose another --target"
            )));
        }
    }
    if !parts.is_empty() {
        return Err(usage(format!(
            "{p} has partitions ({}); writing would destroy them — pass --allow-destroy to overwrite the whole device",
            parts.join(", ")
        )));
    }
    Ok(())
}

/// Reads the first and last MiB of a device and names the signatures found.
fn read_signatures(f: &File, size: u64) -> io::Result<Vec<&'static str>> {
    let span = SIGNATURE_SPAN.min(size);
    let mut head = vec![0u8; span as usize];
    read_fully_at(f, &mut head, 0)?;
    let mut tail = vec![0u8; span as usize];
    read_fully_at(f, &mut tail, size - span)?;
    Ok(detect_signatures(&head, &tail, size))
}

/// Names what the first bytes (`head`) and last bytes (`tail`) of a device of
/// `size` bytes carry: filesystems, partition tables, volume-manager and RAID
/// labels. Each entry reads as "an ext4 filesystem".
pub fn detect_signatures(head: &[u8], tail: &[u8], size: u64) -> Vec<&'static str> {
    let has = |buf: &[u8], at: usize, magic: &[u8]| buf.get(at..at + magic.len()) == Some(magic);
    let tail_start = size.saturating_sub(tail.len() as u64);
    // Bytes at absolute offset `at` of the device, from head or tail.
    let abs = |at: u64, len: usize| -> Option<&[u8]> {
        let end = at.checked_add(len as u64)?;
        if end <= head.len() as u64 {
            return head.get(at as usize..end as usize);
        }
        if at >= tail_start && end <= size {
            let i = (at - tail_start) as usize;
            return tail.get(i..i + len);
        }
        None
    };
    let mut found: Vec<&'static str> = Vec::new();

    if le16(head, 1080) == Some(0xEF53) {
        found.push(ext_kind(head));
    }
    if has(head, 0, b"XFSB") {
        found.push("an XFS filesystem");
    }
    if has(head, 65600, b"_BHRfS_M") {
        found.push("a btrfs filesystem");
    }
    if [4096usize, 8192, 16384, 65536]
        .iter()
        .any(|pg| has(head, pg - 10, b"SWAPSPACE2") || has(head, pg - 10, b"SWAP-SPACE"))
    {
        found.push("a swap area");
    }
    if has(head, 0, b"LUKS\xba\xbe") {
        found.push("a LUKS encrypted volume");
    }
    if (0..4).any(|s| has(head, s * 512, b"LABELONE")) {
        found.push("an LVM2 physical volume");
    }
    const MD_MAGIC: u32 = 0xa92b_4efc;
    let md_at = |at: u64| {
        abs(at, 4)
            .and_then(|b| b.try_into().ok())
            .map(|b: [u8; 4]| {
                u32::from_le_bytes(b) == MD_MAGIC || u32::from_be_bytes(b) == MD_MAGIC
            })
            .unwrap_or(false)
    };
    let mut md_offsets = vec![0u64, 4096];
    if size >= 128 << 10 {
        // v0.90: 64 KiB-aligned, 64 KiB before the end.
        md_offsets.push((size & !0xffff) - 0x10000);
    }
    if size >= 16 << 10 {
        // v1.0: 8 KiB before the end, 4 KiB-aligned.
        md_offsets.push((((size >> 9) - 16) & !7) << 9);
    }
    if md_offsets.into_iter().any(md_at) {
        found.push("an MD RAID member");
    }
    let gpt = has(head, 512, b"EFI PART")
        || has(head, 4096, b"EFI PART")
        || [512u64, 4096]
            .iter()
            .any(|s| size >= *s && abs(size - s, 8) == Some(b"EFI PART"));
    if gpt {
        found.push("a GPT partition table");
    }
    let boot_sig = has(head, 510, &[0x55, 0xAA]);
    let fat = boot_sig && (has(head, 54, b"FAT") || has(head, 82, b"FAT"));
    let ntfs = has(head, 3, b"NTFS    ");
    if fat {
        found.push("a FAT filesystem");
    }
    if ntfs {
        found.push("an NTFS filesystem");
    }
    if boot_sig
        && !fat
        && !ntfs
        && !gpt
        && (0..4).any(|i| head.get(446 + 16 * i + 4).is_some_and(|&t| t != 0))
    {
        found.push("an MBR partition table");
    }
    if has(head, 32769, b"CD001") {
        found.push("an ISO 9660 filesystem");
    }
    // ZFS: uberblocks (magic 0x00bab10c) at 128 KiB into each 256 KiB label; two
    // labels at the start of the device and two at its end.
    const ZFS_MAGIC: u64 = 0x00ba_b10c;
    let label_starts = [
        0u64,
        256 << 10,
        (size & !0x3ffff).wrapping_sub(512 << 10),
        (size & !0x3ffff).wrapping_sub(256 << 10),
    ];
    let zfs = size >= 1 << 20
        && label_starts.iter().any(|l| {
            (0..128u64).any(|k| {
                abs(l + (128 << 10) + k * 1024, 8)
                    .and_then(|b| b.try_into().ok())
                    .map(|b: [u8; 8]| {
                        u64::from_le_bytes(b) == ZFS_MAGIC || u64::from_be_bytes(b) == ZFS_MAGIC
                    })
                    .unwrap_or(false)
            })
        });
    if zfs {
        found.push("a ZFS pool member");
    }
    found.dedup();
    found
}

/// ext2, ext3 or ext4, from the superblock feature flags.
fn ext_kind(head: &[u8]) -> &'static str {
    let compat = le32(head, 1024 + 0x5C).unwrap_or(0);
    let incompat = le32(head, 1024 + 0x60).unwrap_or(0);
    let ro_compat = le32(head, 1024 + 0x64).unwrap_or(0);
    // extents, 64bit, flex_bg, ea_inode, csum_seed, largedir, inline_data, encrypt, casefold
    const INCOMPAT_EXT4: u32 =
        0x40 | 0x80 | 0x200 | 0x400 | 0x2000 | 0x4000 | 0x8000 | 0x10000 | 0x20000;
    // huge_file, gdt_csum, dir_nlink, extra_isize, quota, bigalloc, metadata_csum
    const RO_EXT4: u32 = 0x8 | 0x10 | 0x20 | 0x40 | 0x100 | 0x200 | 0x400;
    if incompat & INCOMPAT_EXT4 != 0 || ro_compat & RO_EXT4 != 0 {
        "an ext4 filesystem"
    } else if compat & 0x4 != 0 {
        "an ext3 filesystem"
    } else {
        "an ext2 filesystem"
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
                // A foreign file given --allow-destroy is not guarded.
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

/// Creates a new scratch file (never over an existing one), fills it, and
/// opens it for the run, checking that the path still names the file made.
fn create_scratch(
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
        fill(&f, path, FILE_HEADER_BYTES, plan.size_bytes, seed, progress)?;
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
fn resize_scratch(
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
fn fill(
    f: &File,
    path: &Path,
    start: u64,
    len: u64,
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
fn drop_cache(f: &File) {
    let _ = rustix::fs::fadvise(f, 0, None, rustix::fs::Advice::DontNeed);
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

#[cfg(test)]
mod tests {
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
        let w = workload(&[&path, &other], WorkloadFile::default());
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
        let w = workload(&[&path], WorkloadFile::default());
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
