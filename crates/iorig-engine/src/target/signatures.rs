//! On-disk signatures (filesystems, volume managers, swap, LUKS, ...) in
//! the first and last MiB of a target: found, the target is refused for
//! writing.

use super::*;

pub(super) fn read_fully_at(f: &File, buf: &mut [u8], at: u64) -> io::Result<()> {
    f.read_exact_at(buf, at)
}

/// Refuses a device that carries any signature: iorig's own detection and
/// the system's (util-linux `wipefs`, else `blkid`), both through the open
/// descriptor.
pub(super) fn refuse_signatures(path: &Path, f: &File, size: u64) -> Result<(), EngineError> {
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

/// Reads the first and last MiB of a device and names the signatures found.
pub(super) fn read_signatures(f: &File, size: u64) -> io::Result<Vec<&'static str>> {
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
pub(super) fn ext_kind(head: &[u8]) -> &'static str {
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
