//! Which devices a profile covers, and which of them add to the total.
//!
//! `/proc/diskstats` lists whole disks, their partitions and stacked devices
//! (device-mapper, md RAID) side by side, so one write to a partition of an
//! LVM volume shows up three times. By default a profile covers whole disks
//! only; partitions and stacked devices are there on request. The total
//! never counts a partition whose disk is also covered, nor a stacked device
//! whose members are (when the members are known: live, from sysfs).
//!
//! Classification needs only the names in one snapshot, so it works the same
//! on a recording from another host: `sda1` is a partition when `sda` is
//! listed, `nvme0n1p2` when `nvme0n1` is.

use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What a `/proc/diskstats` entry is (serialised as its [`DeviceClass::name`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceClass {
    /// A whole disk (sd, nvme, vd, xvd, mmcblk, ...).
    Disk,
    /// A partition of `disk`.
    Partition { disk: String },
    /// A device-mapper device (LVM, dm-crypt, multipath): `dm-N`.
    Mapper,
    /// An md software-RAID device: `mdN`.
    Md,
    /// A loop, RAM, zram, optical or floppy device: not storage being
    /// characterised unless asked for.
    Virtual,
}

impl Serialize for DeviceClass {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl DeviceClass {
    pub fn name(&self) -> &'static str {
        match self {
            DeviceClass::Disk => "disk",
            DeviceClass::Partition { .. } => "partition",
            DeviceClass::Mapper => "dm",
            DeviceClass::Md => "md",
            DeviceClass::Virtual => "virtual",
        }
    }
}

const VIRTUAL_PREFIXES: [&str; 5] = ["loop", "ram", "zram", "sr", "fd"];

/// Classifies `name` among the names of one snapshot.
pub fn classify(name: &str, all: &BTreeSet<&str>) -> DeviceClass {
    if let Some(disk) = partition_parent(name, all) {
        return DeviceClass::Partition { disk };
    }
    let numbered = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    if name.starts_with("dm-") {
        DeviceClass::Mapper
    } else if numbered("md") {
        DeviceClass::Md
    } else if VIRTUAL_PREFIXES.iter().any(|p| numbered(p)) {
        DeviceClass::Virtual
    } else {
        DeviceClass::Disk
    }
}

/// The disk `name` is a partition of, if it is one: the name is the disk's
/// followed by a number (`sda1`), or by `p` and a number when the disk's name
/// ends in a digit (`nvme0n1p1`, `mmcblk0p2`, `loop0p1`, `md0p1`).
fn partition_parent(name: &str, all: &BTreeSet<&str>) -> Option<String> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if base.is_empty() || base.len() == name.len() {
        return None;
    }
    if !base.ends_with(|c: char| c.is_ascii_digit()) && all.contains(base) {
        return Some(base.to_owned());
    }
    let disk = base.strip_suffix('p')?;
    (disk.ends_with(|c: char| c.is_ascii_digit()) && all.contains(disk)).then(|| disk.to_owned())
}

/// The devices a profile covers: whole disks by default, or the ones named.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Names as in /proc/diskstats; empty = every whole disk.
    pub named: Vec<String>,
}

impl Selection {
    /// `--device` values: `sda`, `/dev/sda` and `/dev/nvme0n1p1` all work.
    pub fn named<S: AsRef<str>>(names: &[S]) -> Selection {
        Selection {
            named: names
                .iter()
                .map(|n| {
                    let n = n.as_ref();
                    n.strip_prefix("/dev/").unwrap_or(n).to_owned()
                })
                .collect(),
        }
    }

    pub fn is_default(&self) -> bool {
        self.named.is_empty()
    }

    pub fn includes(&self, name: &str, class: &DeviceClass) -> bool {
        if self.named.is_empty() {
            *class == DeviceClass::Disk
        } else {
            self.named.iter().any(|n| n == name)
        }
    }
}

/// One covered device and whether it adds to the total.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Covered {
    pub name: String,
    pub class: DeviceClass,
    /// For a partition, its disk.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition_of: Option<String>,
    pub in_total: bool,
    /// Why not, when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not_in_total: Option<String>,
}

/// The covered devices among `names` (one snapshot), in that order.
/// `members` maps a stacked device to the devices under it (sysfs `slaves`),
/// where known.
pub fn cover(
    names: &[&str],
    selection: &Selection,
    members: &BTreeMap<String, Vec<String>>,
) -> Vec<Covered> {
    let all: BTreeSet<&str> = names.iter().copied().collect();
    let chosen: Vec<(&str, DeviceClass)> = names
        .iter()
        .map(|&n| (n, classify(n, &all)))
        .filter(|(n, c)| selection.includes(n, c))
        .collect();
    let chosen_names: BTreeSet<&str> = chosen.iter().map(|(n, _)| *n).collect();
    // A device is under a chosen one when it is a chosen disk's partition, or
    // a chosen stacked device's member (or a member's disk).
    let under_chosen = |name: &str, class: &DeviceClass| -> Option<String> {
        if let DeviceClass::Partition { disk } = class {
            if chosen_names.contains(disk.as_str()) {
                return Some(format!("a partition of {disk}, which is counted"));
            }
        }
        let mine = members.get(name)?;
        mine.iter().find_map(|m| {
            let disk = partition_parent(m, &all);
            let hit = chosen_names.contains(m.as_str())
                || disk.as_deref().is_some_and(|d| chosen_names.contains(d));
            hit.then(|| format!("stacked on {m}, which is counted"))
        })
    };
    chosen
        .iter()
        .map(|(name, class)| {
            let why = under_chosen(name, class);
            Covered {
                name: (*name).to_owned(),
                class: class.clone(),
                partition_of: match class {
                    DeviceClass::Partition { disk } => Some(disk.clone()),
                    _ => None,
                },
                in_total: why.is_none(),
                why_not_in_total: why,
            }
        })
        .collect()
}

/// Live only: the members of every stacked device, from
/// `/sys/block/NAME/slaves`.
pub fn live_members() -> BTreeMap<String, Vec<String>> {
    iorig_blockdev::all_members()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const NAMES: [&str; 14] = [
        "sda",
        "sda1",
        "sda2",
        "nvme0n1",
        "nvme0n1p1",
        "mmcblk0",
        "mmcblk0p1",
        "dm-0",
        "md0",
        "md0p1",
        "loop0",
        "zram0",
        "sr0",
        "vdb",
    ];

    fn all() -> BTreeSet<&'static str> {
        NAMES.iter().copied().collect()
    }

    #[test]
    fn names_are_classified() {
        let a = all();
        let class = |n| classify(n, &a).name();
        assert_eq!(class("sda"), "disk");
        assert_eq!(class("vdb"), "disk");
        assert_eq!(class("nvme0n1"), "disk");
        assert_eq!(
            classify("sda1", &a),
            DeviceClass::Partition { disk: "sda".into() }
        );
        assert_eq!(
            classify("nvme0n1p1", &a),
            DeviceClass::Partition {
                disk: "nvme0n1".into()
            }
        );
        assert_eq!(
            classify("mmcblk0p1", &a),
            DeviceClass::Partition {
                disk: "mmcblk0".into()
            }
        );
        assert_eq!(
            classify("md0p1", &a),
            DeviceClass::Partition { disk: "md0".into() }
        );
        assert_eq!(class("dm-0"), "dm");
        assert_eq!(class("md0"), "md");
        assert_eq!(class("loop0"), "virtual");
        assert_eq!(class("zram0"), "virtual");
        assert_eq!(class("sr0"), "virtual");
        // nvme0n1 is not a partition of a device "nvme0n" (there is none).
        assert_eq!(class("nvme0n1"), "disk");
    }

    #[test]
    fn default_covers_whole_disks_only() {
        let c = cover(&NAMES, &Selection::default(), &BTreeMap::new());
        let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["sda", "nvme0n1", "mmcblk0", "vdb"]);
        assert!(c.iter().all(|c| c.in_total));
    }

    #[test]
    fn a_partition_is_not_counted_twice_with_its_disk() {
        let sel = Selection::named(&["/dev/sda", "sda1", "nvme0n1p1"]);
        let c = cover(&NAMES, &sel, &BTreeMap::new());
        let total: Vec<(&str, bool)> = c.iter().map(|c| (c.name.as_str(), c.in_total)).collect();
        assert_eq!(total, [("sda", true), ("sda1", false), ("nvme0n1p1", true)]);
        assert!(c[1]
            .why_not_in_total
            .as_deref()
            .unwrap()
            .contains("partition of sda"));
    }

    #[test]
    fn a_stacked_device_over_a_counted_one_is_not_added() {
        let members: BTreeMap<String, Vec<String>> =
            [("dm-0".to_owned(), vec!["sda2".to_owned()])].into();
        let sel = Selection::named(&["sda", "dm-0", "md0"]);
        let c = cover(&NAMES, &sel, &members);
        let total: Vec<(&str, bool)> = c.iter().map(|c| (c.name.as_str(), c.in_total)).collect();
        assert_eq!(total, [("sda", true), ("dm-0", false), ("md0", true)]);
    }
}
