//! Facts about the machine and the targets, stored beside each run so that a
//! result can be read years later without guessing what it ran on: kernel,
//! CPU, memory, and for each target its device, model, scheduler, block
//! sizes and filesystem.
//!
//! Gathering never fails: a fact the machine does not expose (a container
//! without `/sys`, a device without a model, tmpfs without a block device)
//! is `None`, because a missing fact must never stop a run.

use iorig_blockdev::device_for_path;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The host a run ran on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemFacts {
    /// Kernel release (`uname -r`).
    pub kernel: Option<String>,
    /// The distribution's `PRETTY_NAME` from os-release.
    pub os: Option<String>,
    pub hostname: Option<String>,
    pub cpu_model: Option<String>,
    /// CPUs online (not only those this process may run on).
    pub cpu_count: Option<u32>,
    pub mem_total_bytes: Option<u64>,
}

impl SystemFacts {
    /// Reads the facts from `/proc`, `/sys` and `/etc`.
    pub fn gather() -> SystemFacts {
        let os = read("/etc/os-release")
            .or_else(|| read("/usr/lib/os-release"))
            .and_then(|t| parse_os_release(&t));
        let cpu_count = read("/sys/devices/system/cpu/online")
            .and_then(|t| parse_cpu_list_count(&t))
            .or_else(|| {
                std::thread::available_parallelism()
                    .ok()
                    .and_then(|n| u32::try_from(n.get()).ok())
            });
        SystemFacts {
            kernel: read("/proc/sys/kernel/osrelease").and_then(|t| non_empty(&t)),
            os,
            hostname: read("/proc/sys/kernel/hostname")
                .or_else(|| read("/etc/hostname"))
                .and_then(|t| non_empty(&t)),
            cpu_model: read("/proc/cpuinfo").and_then(|t| parse_cpu_model(&t)),
            cpu_count,
            mem_total_bytes: read("/proc/meminfo").and_then(|t| parse_mem_total_bytes(&t)),
        }
    }
}

/// A target (block device, file or directory) and what lies under it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TargetFacts {
    /// `block`, `file`, `dir` or `other`; `None` when the path does not exist.
    pub kind: Option<String>,
    /// Size of a block device or file; `None` for directories.
    pub size_bytes: Option<u64>,
    /// Kernel name of the block device itself, or of the one holding the
    /// file's filesystem (`None` on tmpfs, overlay, NFS, ...).
    pub device: Option<String>,
    /// The device's model string from sysfs.
    pub model: Option<String>,
    /// Whether the kernel takes the device for a spinning disk.
    pub rotational: Option<bool>,
    /// The I/O scheduler in use (the `[selected]` one).
    pub scheduler: Option<String>,
    pub logical_block_bytes: Option<u64>,
    pub physical_block_bytes: Option<u64>,
    /// Filesystem type of the mount holding a file or directory.
    pub filesystem: Option<String>,
}

impl TargetFacts {
    /// Facts about `path`; a path that does not exist yet (a file iorig will
    /// create) still gets the device and filesystem of its nearest existing
    /// ancestor.
    pub fn for_path(path: &Path) -> TargetFacts {
        use std::os::unix::fs::FileTypeExt;
        let meta = std::fs::metadata(path).ok();
        let is_block = meta
            .as_ref()
            .is_some_and(|m| m.file_type().is_block_device());
        let kind = meta.as_ref().map(|m| {
            let t = m.file_type();
            if t.is_block_device() {
                "block"
            } else if t.is_file() {
                "file"
            } else if t.is_dir() {
                "dir"
            } else {
                "other"
            }
            .to_owned()
        });
        let device = device_for_path(path);
        let sys = device.as_deref().and_then(sysfs_dirs);
        let size_bytes = if is_block {
            // The `size` file counts 512-byte sectors whatever the device's
            // block size; reading sysfs needs no permission on the device.
            sys.as_ref()
                .and_then(|s| read_u64(&s.dev.join("size")))
                .and_then(|sectors| sectors.checked_mul(512))
        } else {
            meta.as_ref().filter(|m| m.is_file()).map(|m| m.len())
        };
        let filesystem = if is_block {
            None
        } else {
            read("/proc/self/mountinfo")
                .and_then(|text| mountinfo_fs_type(&text, &existing_canonical(path)?))
        };
        let queue = sys.as_ref().map(|s| s.disk.join("queue"));
        TargetFacts {
            kind,
            size_bytes,
            model: sys.as_ref().and_then(|s| {
                read_path(&s.disk.join("device").join("model")).and_then(|t| non_empty(&t))
            }),
            rotational: queue
                .as_ref()
                .and_then(|q| read_u64(&q.join("rotational")))
                .map(|v| v != 0),
            scheduler: queue
                .as_ref()
                .and_then(|q| read_path(&q.join("scheduler")))
                .and_then(|t| parse_scheduler(&t)),
            logical_block_bytes: queue
                .as_ref()
                .and_then(|q| read_u64(&q.join("logical_block_size"))),
            physical_block_bytes: queue
                .as_ref()
                .and_then(|q| read_u64(&q.join("physical_block_size"))),
            device,
            filesystem,
        }
    }
}

/// The sysfs directories of a block device: its own (for `size`) and that of
/// the whole disk (for `queue/` and `device/`, which partitions lack).
struct SysDirs {
    dev: PathBuf,
    disk: PathBuf,
}

fn sysfs_dirs(name: &str) -> Option<SysDirs> {
    Some(SysDirs {
        dev: std::fs::canonicalize(iorig_blockdev::sys_dir(name)).ok()?,
        disk: iorig_blockdev::disk_dir(name)?,
    })
}

/// `path` resolved through symlinks; a path that does not exist yet is
/// resolved through its nearest existing ancestor, the rest appended.
fn existing_canonical(path: &Path) -> Option<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let mut rest = Vec::new();
    let mut cur = abs.as_path();
    loop {
        if let Ok(c) = std::fs::canonicalize(cur) {
            let mut out = c;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return Some(out);
        }
        rest.push(cur.file_name()?.to_os_string());
        cur = cur.parent()?;
    }
}

fn read(path: &str) -> Option<String> {
    read_path(Path::new(path))
}

fn read_path(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn read_u64(path: &Path) -> Option<u64> {
    read_path(path)?.trim().parse().ok()
}

fn non_empty(text: &str) -> Option<String> {
    let t = text.trim();
    (!t.is_empty()).then(|| t.to_owned())
}

/// `PRETTY_NAME` of an os-release file, unquoted (falling back to `NAME`).
pub fn parse_os_release(text: &str) -> Option<String> {
    let value = |key: &str| {
        text.lines().find_map(|line| {
            let v = line.trim().strip_prefix(key)?.strip_prefix('=')?.trim();
            let v = v
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
                .unwrap_or(v);
            // Shell-style escapes allowed by os-release(5).
            let v = v
                .replace("\\\"", "\"")
                .replace("\\$", "$")
                .replace("\\`", "`")
                .replace("\\\\", "\\");
            non_empty(&v)
        })
    };
    value("PRETTY_NAME").or_else(|| value("NAME"))
}

/// The selected scheduler of a `queue/scheduler` line such as
/// `mq-deadline kyber [none]`. A line without brackets (some drivers list
/// only the one they use) is taken when it names a single scheduler.
pub fn parse_scheduler(text: &str) -> Option<String> {
    let t = text.trim();
    if let Some(start) = t.find('[') {
        let end = t[start..].find(']')? + start;
        return non_empty(&t[start + 1..end]);
    }
    let mut words = t.split_whitespace();
    match (words.next(), words.next()) {
        (Some(one), None) => Some(one.to_owned()),
        _ => None,
    }
}

/// The CPU model from `/proc/cpuinfo`: `model name` on x86, else the field
/// other architectures use.
pub fn parse_cpu_model(text: &str) -> Option<String> {
    ["model name", "cpu model", "Model", "Processor", "cpu"]
        .iter()
        .find_map(|key| {
            text.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                if k.trim() == *key {
                    non_empty(v)
                } else {
                    None
                }
            })
        })
}

/// `MemTotal` of `/proc/meminfo` in bytes (the file says kB, meaning KiB).
pub fn parse_mem_total_bytes(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") => n.checked_mul(1024),
        None => Some(n),
        Some(_) => None,
    }
}

/// The number of CPUs in a kernel CPU list such as `0-3,8,10-11`.
pub fn parse_cpu_list_count(text: &str) -> Option<u32> {
    let mut count = 0u32;
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let n = match part.split_once('-') {
            Some((a, b)) => {
                let a: u32 = a.trim().parse().ok()?;
                let b: u32 = b.trim().parse().ok()?;
                b.checked_sub(a)?.checked_add(1)?
            }
            None => {
                part.trim().parse::<u32>().ok()?;
                1
            }
        };
        count = count.checked_add(n)?;
    }
    (count > 0).then_some(count)
}

/// The filesystem type of the mount holding `path` (absolute, canonical),
/// from the text of `/proc/self/mountinfo`: the longest mount point that is
/// `path` or one of its ancestors, the later line winning among equals
/// (a later mount on the same point hides the earlier one).
pub fn mountinfo_fs_type(text: &str, path: &Path) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for line in text.lines() {
        // Fields: id parent maj:min root mount-point options [optional...] - fstype source super-options
        let Some((head, tail)) = line.split_once(" - ") else {
            continue;
        };
        let Some(mount_point) = head.split_whitespace().nth(4) else {
            continue;
        };
        let Some(fs_type) = tail.split_whitespace().next() else {
            continue;
        };
        let mount_point = PathBuf::from(unescape_mountinfo(mount_point));
        if !path.starts_with(&mount_point) {
            continue;
        }
        let depth = mount_point.components().count();
        let deeper = match &best {
            None => true,
            Some((d, _)) => depth >= *d,
        };
        if deeper {
            best = Some((depth, fs_type.to_owned()));
        }
    }
    best.map(|(_, fs)| fs)
}

/// Undoes the octal escapes (`\040` for a space, `\011`, `\012`, `\134`)
/// the kernel puts in mountinfo paths.
fn unescape_mountinfo(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\' && i + 4 <= bytes.len() {
            let digits = &bytes[i + 1..i + 4];
            if digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                let v = digits
                    .iter()
                    .fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                if let Ok(v) = u8::try_from(v) {
                    out.push(v);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
22 1 8:2 / / rw,relatime shared:1 - ext4 /dev/sda2 rw,errors=remount-ro
25 22 0:23 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
30 22 259:1 / /data rw,noatime shared:7 - xfs /dev/nvme0n1p1 rw,attr2,inode64
31 30 0:40 / /data/scratch rw shared:8 master:2 - tmpfs tmpfs rw,size=1g
40 22 8:17 / /mnt/my\\040disk rw - btrfs /dev/sdb1 rw
41 22 0:50 / /data2 rw - nfs4 server:/x rw
";

    #[test]
    fn mountinfo_longest_prefix_wins() {
        let fs = |p: &str| mountinfo_fs_type(MOUNTINFO, Path::new(p));
        assert_eq!(fs("/home/u/f.dat").as_deref(), Some("ext4"));
        assert_eq!(fs("/data/f.dat").as_deref(), Some("xfs"));
        assert_eq!(fs("/data").as_deref(), Some("xfs"));
        assert_eq!(fs("/data/scratch/x").as_deref(), Some("tmpfs"));
        // A prefix only counts on a path boundary: /data2 is not under /data.
        assert_eq!(fs("/data2/x").as_deref(), Some("nfs4"));
        assert_eq!(fs("/datax/y").as_deref(), Some("ext4"));
        assert_eq!(fs("/mnt/my disk/f").as_deref(), Some("btrfs"));
        assert_eq!(mountinfo_fs_type("", Path::new("/x")), None);
        assert_eq!(mountinfo_fs_type("garbage line\n", Path::new("/x")), None);
    }

    #[test]
    fn later_mount_on_the_same_point_hides_the_earlier() {
        let text = "22 1 8:2 / / rw - ext4 /dev/sda2 rw\n\
                    50 22 0:60 / /t rw - ext4 /dev/sdc rw\n\
                    51 50 0:61 / /t rw - tmpfs tmpfs rw\n";
        assert_eq!(
            mountinfo_fs_type(text, Path::new("/t/f")).as_deref(),
            Some("tmpfs")
        );
    }

    #[test]
    fn scheduler_selected() {
        assert_eq!(
            parse_scheduler("mq-deadline [none]\n").as_deref(),
            Some("none")
        );
        assert_eq!(
            parse_scheduler("[mq-deadline] kyber bfq none\n").as_deref(),
            Some("mq-deadline")
        );
        assert_eq!(parse_scheduler("none\n").as_deref(), Some("none"));
        assert_eq!(parse_scheduler("a b"), None);
        assert_eq!(parse_scheduler(""), None);
        assert_eq!(parse_scheduler("[broken"), None);
    }

    #[test]
    fn os_release_pretty_name() {
        let text =
            "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nID=debian\n";
        assert_eq!(
            parse_os_release(text).as_deref(),
            Some("Debian GNU/Linux 13 (trixie)")
        );
        assert_eq!(
            parse_os_release("PRETTY_NAME='Alpine \\\"edge\\\"'\n").as_deref(),
            Some("Alpine \"edge\"")
        );
        assert_eq!(parse_os_release("NAME=Fedora\n").as_deref(), Some("Fedora"));
        assert_eq!(parse_os_release("ID=x\n"), None);
        // PRETTY_NAME_X is not PRETTY_NAME.
        assert_eq!(parse_os_release("PRETTY_NAME_X=y\n"), None);
    }

    #[test]
    fn cpuinfo_meminfo_cpu_list() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz\n";
        assert_eq!(
            parse_cpu_model(cpuinfo).as_deref(),
            Some("Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz")
        );
        assert_eq!(
            parse_cpu_model("processor : 0\nBogoMIPS : 50.00\nModel : Raspberry Pi 4\n").as_deref(),
            Some("Raspberry Pi 4")
        );
        assert_eq!(parse_cpu_model("processor : 0\n"), None);

        let meminfo = "MemTotal:       24576000 kB\nMemFree:  1 kB\n";
        assert_eq!(parse_mem_total_bytes(meminfo), Some(24_576_000 * 1024));
        assert_eq!(parse_mem_total_bytes("MemFree: 1 kB\n"), None);

        assert_eq!(parse_cpu_list_count("0-3\n"), Some(4));
        assert_eq!(parse_cpu_list_count("0-3,8,10-11\n"), Some(7));
        assert_eq!(parse_cpu_list_count("0\n"), Some(1));
        assert_eq!(parse_cpu_list_count(""), None);
        assert_eq!(parse_cpu_list_count("3-1"), None);
    }

    #[test]
    fn octal_escapes() {
        assert_eq!(unescape_mountinfo("/a\\040b\\011c"), "/a b\tc");
        assert_eq!(unescape_mountinfo("/plain"), "/plain");
        assert_eq!(unescape_mountinfo("/end\\04"), "/end\\04");
    }

    #[test]
    fn gathering_on_this_machine_does_not_fail() {
        let s = SystemFacts::gather();
        // Linux always has /proc; the rest may be missing in a container.
        assert!(s.kernel.is_some(), "{s:?}");
        assert!(s.cpu_count.is_some_and(|n| n >= 1), "{s:?}");
        let dir = tempfile_dir();
        let file = dir.join("f.dat");
        std::fs::write(&file, vec![0u8; 8192]).expect("write");
        let t = TargetFacts::for_path(&file);
        assert_eq!(t.kind.as_deref(), Some("file"));
        assert_eq!(t.size_bytes, Some(8192));
        assert!(t.filesystem.is_some(), "{t:?}");
        let missing = TargetFacts::for_path(&dir.join("not-yet.dat"));
        assert_eq!(missing.kind, None);
        assert_eq!(missing.size_bytes, None);
        assert_eq!(missing.filesystem, t.filesystem);
        std::fs::remove_dir_all(&dir).ok();
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("iorig-facts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        dir
    }
}
