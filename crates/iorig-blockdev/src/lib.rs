//! What Linux says about block devices, in one place, for the engine's
//! safety checks, the samplers and the profiler: device numbers, the kernel
//! name behind a path or a device number, sysfs relations (partitions,
//! holders, members, the parent disk, loop backing files), the read-only
//! flag and the size of an open device. Reading sysfs needs no permission
//! on the device; the ioctls need an open descriptor. Nothing here fails a
//! caller for a missing sysfs entry: absent facts are `None` or empty.

use rustix::ioctl::{ioctl, opcode, Getter};
use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// Major and minor number of a `dev_t`.
pub fn major_minor(dev: u64) -> (u64, u64) {
    (
        u64::from(rustix::fs::major(dev)),
        u64::from(rustix::fs::minor(dev)),
    )
}

/// The sysfs spelling of a device name: without `/dev/`, `/` as `!` (as in
/// `cciss!c0d0`). `None` for names that could escape the sysfs directory.
pub fn sysfs_name(raw: &str) -> Option<String> {
    let name = raw.trim();
    let name = name.strip_prefix("/dev/").unwrap_or(name).replace('/', "!");
    if name.is_empty() || name == "." || name == ".." {
        None
    } else {
        Some(name)
    }
}

/// `/sys/class/block/NAME`: every block device, partitions included.
pub fn sys_dir(name: &str) -> PathBuf {
    Path::new("/sys/class/block").join(name)
}

/// The sysfs directory of the whole disk `name` is or belongs to (where
/// `queue/` and `device/` are; partitions lack them).
pub fn disk_dir(name: &str) -> Option<PathBuf> {
    let dev = fs::canonicalize(sys_dir(name)).ok()?;
    if dev.join("partition").exists() {
        dev.parent().map(Path::to_path_buf)
    } else {
        Some(dev)
    }
}

/// Kernel name of the block device number `dev` (`vda`, `vda1`, `loop3`).
pub fn name_of_dev(dev: u64) -> Option<String> {
    let (major, minor) = major_minor(dev);
    let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    let target = fs::read_link(&link)
        .or_else(|_| fs::canonicalize(&link))
        .ok()?;
    target.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// The block device behind `path`: for a block device node (symlinks
/// followed), its kernel name; for anything else, the device holding its
/// filesystem. A path that does not exist yet is looked up through its
/// nearest existing ancestor. `None` when the filesystem has no block device
/// (overlay, tmpfs, btrfs subvolumes, NFS, ...).
pub fn device_for_path(path: &Path) -> Option<String> {
    let meta = path
        .ancestors()
        .filter(|p| !p.as_os_str().is_empty())
        .find_map(|p| fs::metadata(p).ok())
        .or_else(|| {
            // A bare relative name: its filesystem is the current directory's.
            if path.is_relative() {
                fs::metadata(".").ok()
            } else {
                None
            }
        })?;
    if meta.file_type().is_block_device() {
        name_of_dev(meta.rdev())
    } else {
        name_of_dev(meta.dev())
    }
}

/// `MAJ:MIN` of a kernel block device name.
pub fn dev_number(name: &str) -> Option<(u64, u64)> {
    let text = fs::read_to_string(sys_dir(name).join("dev")).ok()?;
    let (a, b) = text.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn names_in(dir: &Path, keep: impl Fn(&fs::DirEntry) -> bool) -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| keep(e))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// Partitions of a whole-disk device, by kernel name.
pub fn partitions(name: &str) -> Vec<String> {
    names_in(&sys_dir(name), |e| e.path().join("partition").exists())
}

/// Devices stacked on `name` (device-mapper, LVM, MD RAID, bcache...).
pub fn holders(name: &str) -> Vec<String> {
    names_in(&sys_dir(name).join("holders"), |_| true)
}

/// The whole disk a partition belongs to.
pub fn parent_disk(name: &str) -> Option<String> {
    let dir = sys_dir(name);
    if !dir.join("partition").exists() {
        return None;
    }
    let real = fs::canonicalize(dir).ok()?;
    real.parent()?
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
}

/// The cache tier in front of `name` where the kernel exposes one: a
/// bcache device's cache set (`/sys/block/bcacheN/bcache/cache`, whose
/// `cacheK` links lead to the caching devices): the caching devices'
/// bytes and the first one's name. `None` for anything else (dm-cache and
/// array caches are not visible here).
pub fn cache_tier(name: &str) -> Option<(u64, String)> {
    cache_tier_in(Path::new("/sys/class/block"), name)
}

fn cache_tier_in(class_block: &Path, name: &str) -> Option<(u64, String)> {
    let set = fs::canonicalize(class_block.join(name).join("bcache/cache")).ok()?;
    let mut total = 0u64;
    let mut first: Option<String> = None;
    for k in 0..64 {
        // cacheK -> .../block/DEV/bcache: DEV's size is the cache's.
        let Ok(dev) = fs::canonicalize(set.join(format!("cache{k}"))) else {
            break;
        };
        let dev_dir = dev.parent()?;
        let sectors: u64 = fs::read_to_string(dev_dir.join("size"))
            .ok()?
            .trim()
            .parse()
            .ok()?;
        total += sectors * 512;
        if first.is_none() {
            first = dev_dir
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
        }
    }
    (total > 0).then(|| (total, first.unwrap_or_default()))
}

/// The members of every stacked device (`/sys/block/NAME/slaves`).
pub fn all_members() -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for e in fs::read_dir("/sys/block").into_iter().flatten().flatten() {
        let list = names_in(&e.path().join("slaves"), |_| true);
        if !list.is_empty() {
            out.insert(e.file_name().to_string_lossy().into_owned(), list);
        }
    }
    out
}

/// Loop devices (`/dev/loop3`) whose backing file is the file with device
/// number `dev` and inode `ino`.
pub fn loop_devices_backed_by(dev: u64, ino: u64) -> Vec<String> {
    let mut out = Vec::new();
    for e in fs::read_dir("/sys/block").into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.starts_with("loop") {
            continue;
        }
        let Ok(text) = fs::read_to_string(e.path().join("loop/backing_file")) else {
            continue;
        };
        let backing = text.trim_end_matches('\n');
        let backing = backing.strip_suffix(" (deleted)").unwrap_or(backing);
        if let Ok(b) = fs::metadata(backing) {
            if b.dev() == dev && b.ino() == ino {
                out.push(format!("/dev/{name}"));
            }
        }
    }
    out.sort();
    out
}

// Block-device ioctls of <linux/fs.h>: BLKROGET = _IO(0x12, 94), which
// writes an int; BLKGETSIZE64 = _IOR(0x12, 114, size_t), which writes a u64.
const BLKROGET: rustix::ioctl::Opcode = opcode::none(0x12, 94);
const BLKGETSIZE64: rustix::ioctl::Opcode = opcode::read::<usize>(0x12, 114);
// BLKDISCARD = _IO(0x12, 119), whose argument points to a u64 [start, len].
const BLKDISCARD: rustix::ioctl::Opcode = opcode::none(0x12, 119);

// BLKFLSBUF = _IO(0x12, 97): write back and drop the device's buffer cache.
const BLKFLSBUF: rustix::ioctl::Opcode = opcode::none(0x12, 97);

/// Writes back and drops the page cache of an open block device (fio's
/// `invalidate` on a device), so that buffered reads after it come from the
/// device. Needs CAP_SYS_ADMIN.
pub fn flush_buffers(f: impl AsFd) -> io::Result<()> {
    // SAFETY: BLKFLSBUF is a valid opcode that takes no argument.
    unsafe { ioctl(f, rustix::ioctl::NoArg::<BLKFLSBUF>::new()) }?;
    Ok(())
}

/// Discards `len` bytes at `offset` of an open block device (opened for
/// writing): the device may unmap them, and what reads give afterwards is
/// the device's to say.
pub fn discard(f: impl AsFd, offset: u64, len: u64) -> io::Result<()> {
    // SAFETY: BLKDISCARD is a valid opcode whose argument the kernel reads
    // as two u64s, which is what the pointer points to.
    unsafe {
        ioctl(
            f,
            rustix::ioctl::Setter::<BLKDISCARD, [u64; 2]>::new([offset, len]),
        )
    }?;
    Ok(())
}

/// Size of an open block device in bytes.
pub fn device_size_bytes(f: &File) -> io::Result<u64> {
    // SAFETY: BLKGETSIZE64 is a valid opcode whose argument the kernel
    // fills with the size as a 64-bit integer.
    let size = unsafe { ioctl(f, Getter::<BLKGETSIZE64, u64>::new()) }?;
    Ok(size)
}

/// Size of an open file or block device in bytes.
pub fn size_of_open(f: &File) -> io::Result<u64> {
    let meta = f.metadata()?;
    if meta.file_type().is_block_device() {
        device_size_bytes(f)
    } else {
        Ok(meta.len())
    }
}

/// Whether an open block device is read-only (the ioctl, else sysfs `ro`).
pub fn read_only(f: &File, name: Option<&str>) -> bool {
    // SAFETY: BLKROGET is a valid opcode whose argument the kernel fills
    // with an int.
    if let Ok(ro) = unsafe { ioctl(f, Getter::<BLKROGET, std::ffi::c_int>::new()) } {
        return ro != 0;
    }
    name.and_then(|n| fs::read_to_string(sys_dir(n).join("ro")).ok())
        .map(|t| t.trim() == "1")
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn device_numbers_split_as_the_kernel_does() {
        assert_eq!(major_minor(0xfe00), (254, 0));
        assert_eq!(major_minor(0x0801), (8, 1));
        let dev = rustix::fs::makedev(259, 300);
        assert_eq!(major_minor(dev), (259, 300));
    }

    #[test]
    fn the_ioctl_numbers_are_those_of_linux_fs_h() {
        assert_eq!(BLKGETSIZE64 as u64, 0x8008_1272);
        assert_eq!(BLKROGET as u64, 0x125e);
        assert_eq!(BLKDISCARD as u64, 0x1277);
    }

    #[test]
    fn sysfs_names() {
        assert_eq!(sysfs_name("sda").as_deref(), Some("sda"));
        assert_eq!(sysfs_name("/dev/nvme0n1").as_deref(), Some("nvme0n1"));
        assert_eq!(sysfs_name("/dev/cciss/c0d0").as_deref(), Some("cciss!c0d0"));
        assert_eq!(sysfs_name(".."), None);
        assert_eq!(sysfs_name(""), None);
    }

    #[test]
    fn a_file_has_its_length_and_the_root_fs_a_name_or_none() {
        let dir = std::env::temp_dir();
        let p = dir.join(format!("iorig-blockdev-{}", std::process::id()));
        fs::write(&p, vec![0u8; 12345]).unwrap();
        assert_eq!(size_of_open(&File::open(&p).unwrap()).unwrap(), 12345);
        fs::remove_file(&p).unwrap();
        // Whatever the machine, the lookup does not fail.
        let _ = device_for_path(Path::new("/"));
    }
}
