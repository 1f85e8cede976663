//! Whether a block device is in use: mounted (itself, a partition or its
//! disk), an active swap area, or held by a stacked device.

use super::*;

/// Undoes the octal escapes (`\040`) of /proc/self/mountinfo and /proc/swaps.
pub(super) fn unescape(field: &str) -> String {
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
pub(super) struct Mount {
    pub(super) major: u64,
    pub(super) minor: u64,
    pub(super) mount_point: String,
    pub(super) source: String,
}

pub(super) fn parse_mountinfo(text: &str) -> Vec<Mount> {
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
pub(super) fn mounted_at(mounts: &[Mount], name: &str, num: Option<(u64, u64)>) -> Option<String> {
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
pub(super) fn is_swap(swaps: &str, num: Option<(u64, u64)>) -> bool {
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

/// Refuses a device that is mounted, used as swap, held by another device, or
/// partitioned (checking each partition the same way).
pub(super) fn check_block_unused(
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
