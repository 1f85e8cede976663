//! The expected key of every unit of every target, shared by the workers.
//!
//! One byte per unit: the low seven bits are the key the unit was last written
//! with (0 = never written), bit 0x80 is "busy": an I/O on the unit is in
//! flight. Workers lock the units of an I/O before submitting it, so a read is
//! never checked against a write that may or may not have landed yet, and two
//! writes to the same unit never race for the next key.
//!
//! A unit whose validation failed is *unknown*: what it holds is not any
//! generation a run can name, so reads leave it unchecked until it is written
//! again, and a journal keeps it as [`UNKNOWN`]. One loss is reported once,
//! never again under another name by a later check.
//!
//! At ~1 byte per unit a 4 KiB-unit map of a 1 TiB target is 256 MiB, so maps
//! over [`FILE_BACKED_OVER_BYTES`] live in a shared mapping of an unlinked
//! temporary file: the kernel can page them out instead of holding them in RAM.

use std::collections::BTreeSet;
use std::fs::File;
use std::ops::Range;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

use memmap2::MmapRaw;

use crate::error::VerifyError;
use crate::format::SECTOR_BYTES;

const BUSY: u8 = 0x80;
const KEY_MASK: u8 = 0x7f;
/// The value of an unknown unit in a [`KeyMap::snapshot`], in
/// [`KeyMap::from_keys`] and in a journal's map: key 0 with the eighth bit,
/// which a stored key never has (in memory that bit is "busy", so unknown
/// units live in a set of their own there).
pub const UNKNOWN: u8 = 0x80;
/// Total map size above which the map is file-backed rather than anonymous.
pub const FILE_BACKED_OVER_BYTES: u64 = 64 << 20;

/// The memory behind the cells.
enum Cells {
    Heap(Box<[AtomicU8]>),
    /// A shared mapping of an unlinked temporary file; the mapping keeps the
    /// file alive, so the handle itself is not kept.
    File {
        map: MmapRaw,
        len: usize,
    },
}

impl Cells {
    fn as_slice(&self) -> &[AtomicU8] {
        match self {
            Cells::Heap(cells) => cells,
            Cells::File { map, len } => {
                // SAFETY: the mapping is `len` bytes, readable and writable, and
                // stays mapped for as long as `self` (the borrow ties the slice
                // to it). AtomicU8 has the size and alignment of u8 and every
                // byte value is a valid AtomicU8. All access goes through these
                // atomics, so shared references never see unsynchronised
                // writes. `as_mut_ptr` comes from MmapRaw, which hands out no
                // references of its own, so the pointer may be written through.
                // The file is unlinked and private to this process, so nobody
                // can truncate it under the mapping.
                unsafe { std::slice::from_raw_parts(map.as_mut_ptr().cast::<AtomicU8>(), *len) }
            }
        }
    }
}

/// Reinterprets bytes as atomic cells without a per-cell copy, so a freshly
/// zeroed map of tens of MiB costs one `calloc`.
fn atomic_cells(bytes: Vec<u8>) -> Box<[AtomicU8]> {
    let mut bytes = std::mem::ManuallyDrop::new(bytes.into_boxed_slice());
    let len = bytes.len();
    let cells = std::ptr::slice_from_raw_parts_mut(bytes.as_mut_ptr().cast::<AtomicU8>(), len);
    // SAFETY: AtomicU8 has the same size, alignment and bit validity as u8, so
    // the allocation of `len` u8 from the global allocator is also a valid
    // allocation of `len` AtomicU8 with the same layout. ManuallyDrop keeps the
    // original box from freeing it; the new box now owns it.
    unsafe { Box::from_raw(cells) }
}

/// Expected keys and busy bits, one byte per unit per target. Shared by the
/// workers through an `Arc`; all methods take `&self`.
pub struct KeyMap {
    unit_bytes: u32,
    /// Units per target.
    units: Vec<u64>,
    /// Index of each target's first cell.
    starts: Vec<usize>,
    cells: Cells,
    /// (target, unit) of the unknown units (key 0 in `cells`). Few: one per
    /// reported error at most, so a set, and a count read first so that
    /// the common case (none) costs one atomic load.
    unknown: Mutex<BTreeSet<(u32, u64)>>,
    unknown_count: AtomicUsize,
}

fn check_unit_bytes(unit_bytes: u32) -> Result<(), VerifyError> {
    if unit_bytes as usize >= SECTOR_BYTES && (unit_bytes as usize).is_multiple_of(SECTOR_BYTES) {
        Ok(())
    } else {
        Err(VerifyError::Usage(format!(
            "validation unit of {unit_bytes} bytes: it must be a multiple of {SECTOR_BYTES} bytes, at least {SECTOR_BYTES}"
        )))
    }
}

/// Cell offsets of each target and the total, or a usage error if the map
/// would not fit in the address space.
fn layout(units: &[u64]) -> Result<(Vec<usize>, usize), VerifyError> {
    let mut starts = Vec::with_capacity(units.len());
    let mut total = 0usize;
    for &count in units {
        starts.push(total);
        total = usize::try_from(count)
            .ok()
            .and_then(|count| total.checked_add(count))
            .ok_or_else(|| {
                VerifyError::Usage(format!(
                    "key map of more than {} units does not fit in memory",
                    usize::MAX
                ))
            })?;
    }
    Ok((starts, total))
}

impl KeyMap {
    /// A map of never-written units (key 0) for targets of the given sizes;
    /// each target has `size / unit_bytes` units (a partial last unit is not
    /// validated). `unit_bytes` must be a multiple of 512, at least 512.
    ///
    /// Maps up to 64 MiB in total are anonymous memory; larger ones are a
    /// shared mapping of an unlinked temporary file in `std::env::temp_dir()`,
    /// so a huge target's map need not stay resident.
    pub fn new(unit_bytes: u32, target_sizes_bytes: &[u64]) -> Result<KeyMap, VerifyError> {
        check_unit_bytes(unit_bytes)?;
        let units: Vec<u64> = target_sizes_bytes
            .iter()
            .map(|size| size / u64::from(unit_bytes))
            .collect();
        let (starts, total) = layout(&units)?;
        let cells = if total as u64 > FILE_BACKED_OVER_BYTES {
            let file = tempfile::tempfile()
                .map_err(|e| VerifyError::io("creating the key map's temporary file", e))?;
            file_cells(&file, total)?
        } else {
            Cells::Heap(atomic_cells(vec![0u8; total]))
        };
        Ok(KeyMap {
            unit_bytes,
            units,
            starts,
            cells,
            unknown: Mutex::new(BTreeSet::new()),
            unknown_count: AtomicUsize::new(0),
        })
    }

    /// A map holding the given keys, one `Vec` per target (e.g. as replayed
    /// from a journal); [`UNKNOWN`] marks an unknown unit.
    pub fn from_keys(unit_bytes: u32, keys: Vec<Vec<u8>>) -> Result<KeyMap, VerifyError> {
        check_unit_bytes(unit_bytes)?;
        let units: Vec<u64> = keys.iter().map(|keys| keys.len() as u64).collect();
        let (starts, total) = layout(&units)?;
        let mut flat = Vec::with_capacity(total);
        let mut unknown = BTreeSet::new();
        for (target, target_keys) in (0u32..).zip(keys) {
            for (unit, key) in (0u64..).zip(&target_keys) {
                if *key == UNKNOWN {
                    unknown.insert((target, unit));
                }
            }
            flat.extend(target_keys.into_iter().map(|key| key & KEY_MASK));
        }
        Ok(KeyMap {
            unit_bytes,
            units,
            starts,
            cells: Cells::Heap(atomic_cells(flat)),
            unknown_count: AtomicUsize::new(unknown.len()),
            unknown: Mutex::new(unknown),
        })
    }

    pub fn unit_bytes(&self) -> u32 {
        self.unit_bytes
    }

    pub fn targets(&self) -> usize {
        self.units.len()
    }

    /// Units of `target` (0 for a target that does not exist).
    pub fn units(&self, target: u32) -> u64 {
        self.units.get(target as usize).copied().unwrap_or(0)
    }

    /// The cells of units `first_unit..first_unit + count` of `target`,
    /// clamped to the units that exist (a debug build asserts there is no
    /// clamping to do).
    fn range(&self, target: u32, first_unit: u64, count: u64) -> Range<usize> {
        let Some(&units) = self.units.get(target as usize) else {
            debug_assert!(false, "target {target} out of range");
            return 0..0;
        };
        let end = first_unit.saturating_add(count);
        debug_assert!(
            end <= units,
            "units {first_unit}..{end} beyond the {units} of target {target}"
        );
        let start_cell = self.starts[target as usize];
        // Both fit in usize: they are at most `units`, which `layout` checked.
        let first = first_unit.min(units) as usize;
        let end = end.min(units) as usize;
        start_cell + first..start_cell + end
    }

    /// The expected key of one unit, without the busy bit; 0 if never written
    /// (or out of range).
    pub fn key(&self, target: u32, unit: u64) -> u8 {
        let range = self.range(target, unit, 1);
        self.cells.as_slice()[range]
            .first()
            .map_or(0, |cell| cell.load(Ordering::Relaxed) & KEY_MASK)
    }

    /// Marks units `first_unit..first_unit + count` busy, all or nothing: if
    /// any is busy already, the ones this call marked are released again and
    /// it returns false (the caller retries later or picks other units).
    /// Acquire ordering, so the keys read afterwards are those the previous
    /// holder released. Units beyond the target are ignored (debug builds
    /// assert), so a range with none left locks nothing and succeeds.
    pub fn try_lock(&self, target: u32, first_unit: u64, count: u32) -> bool {
        let cells = &self.cells.as_slice()[self.range(target, first_unit, u64::from(count))];
        for (locked, cell) in cells.iter().enumerate() {
            if cell.fetch_or(BUSY, Ordering::Acquire) & BUSY != 0 {
                for cell in &cells[..locked] {
                    cell.fetch_and(KEY_MASK, Ordering::Release);
                }
                return false;
            }
        }
        true
    }

    /// Clears the busy bit of units `first_unit..first_unit + count`; with
    /// `new_keys` (one per unit) also stores those as the units' keys. Release
    /// ordering, pairing with [`KeyMap::try_lock`]'s Acquire. Only the holder
    /// of the lock may call it.
    pub fn release(&self, target: u32, first_unit: u64, count: u32, new_keys: Option<&[u8]>) {
        let cells = &self.cells.as_slice()[self.range(target, first_unit, u64::from(count))];
        match new_keys {
            Some(keys) => {
                debug_assert_eq!(keys.len(), count as usize, "one key per unit");
                // Written (or trimmed): known again.
                self.set_known(target, first_unit, u64::from(count));
                for (index, cell) in cells.iter().enumerate() {
                    match keys.get(index) {
                        // Storing a key without the busy bit also unlocks.
                        Some(&key) => cell.store(key & KEY_MASK, Ordering::Release),
                        None => {
                            cell.fetch_and(KEY_MASK, Ordering::Release);
                        }
                    }
                }
            }
            None => {
                for cell in cells {
                    cell.fetch_and(KEY_MASK, Ordering::Release);
                }
            }
        }
    }

    /// Makes unit `unit` unknown (key 0, not checked until written again),
    /// keeping it locked: after a validation error its content is no
    /// generation a check could expect, so one loss is not reported again
    /// at every later check. Only the holder of the lock may call it.
    pub fn forget(&self, target: u32, unit: u64) {
        let range = self.range(target, unit, 1);
        if let Some(cell) = self.cells.as_slice()[range].first() {
            cell.store(BUSY, Ordering::Release);
            let mut set = self.unknown.lock().unwrap_or_else(PoisonError::into_inner);
            set.insert((target, unit));
            self.unknown_count.store(set.len(), Ordering::Release);
        }
    }

    /// Takes `key` as what unit `unit` holds, keeping it locked: after a
    /// validation error that found an intact block of this unit of an
    /// older (or other) generation, that block is what the storage now
    /// holds, and later checks expect it. Only the holder of the lock may
    /// call it.
    pub fn adopt(&self, target: u32, unit: u64, key: u8) {
        let range = self.range(target, unit, 1);
        if let Some(cell) = self.cells.as_slice()[range].first() {
            cell.store(BUSY | (key & KEY_MASK), Ordering::Release);
            self.set_known(target, unit, 1);
        }
    }

    /// Whether unit `unit` is unknown (see [`KeyMap::forget`]).
    pub fn is_unknown(&self, target: u32, unit: u64) -> bool {
        self.unknown_count.load(Ordering::Acquire) != 0
            && self
                .unknown
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .contains(&(target, unit))
    }

    /// Unknown units, over all targets.
    pub fn unknown_units(&self) -> u64 {
        self.unknown_count.load(Ordering::Acquire) as u64
    }

    fn set_known(&self, target: u32, first_unit: u64, count: u64) {
        if self.unknown_count.load(Ordering::Acquire) == 0 {
            return;
        }
        let mut set = self.unknown.lock().unwrap_or_else(PoisonError::into_inner);
        let gone: Vec<(u32, u64)> = set
            .range((target, first_unit)..(target, first_unit.saturating_add(count)))
            .copied()
            .collect();
        for k in gone {
            set.remove(&k);
        }
        self.unknown_count.store(set.len(), Ordering::Release);
    }

    /// The keys of all units of `target`, without busy bits, [`UNKNOWN`]
    /// for an unknown unit (empty for a target that does not exist).
    pub fn snapshot(&self, target: u32) -> Vec<u8> {
        let range = match self.units.get(target as usize) {
            Some(&units) => self.range(target, 0, units),
            None => 0..0,
        };
        let mut keys: Vec<u8> = self.cells.as_slice()[range]
            .iter()
            .map(|cell| cell.load(Ordering::Acquire) & KEY_MASK)
            .collect();
        if self.unknown_count.load(Ordering::Acquire) != 0 {
            let set = self.unknown.lock().unwrap_or_else(PoisonError::into_inner);
            for &(_, unit) in set.range((target, 0)..=(target, u64::MAX)) {
                if let Some(key) = usize::try_from(unit).ok().and_then(|u| keys.get_mut(u)) {
                    *key = UNKNOWN;
                }
            }
        }
        keys
    }

    /// Units written at least once (key != 0), over all targets.
    pub fn written_units(&self) -> u64 {
        self.cells
            .as_slice()
            .iter()
            .filter(|cell| cell.load(Ordering::Relaxed) & KEY_MASK != 0)
            .count() as u64
    }
}

/// Maps `len` zero bytes of the (unlinked, empty) `file`.
fn file_cells(file: &File, len: usize) -> Result<Cells, VerifyError> {
    // A sparse file: only the pages of units actually written take space.
    file.set_len(len as u64)
        .map_err(|e| VerifyError::io("sizing the key map's temporary file", e))?;
    let map = MmapRaw::map_raw(file)
        .map_err(|e| VerifyError::io("mapping the key map's temporary file", e))?;
    if map.len() != len {
        return Err(VerifyError::Usage(format!(
            "key map mapping is {} bytes, expected {len}",
            map.len()
        )));
    }
    Ok(Cells::File { map, len })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::{Arc, Barrier};

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn is_send_and_sync() {
        assert_send_sync::<KeyMap>();
    }

    #[test]
    fn forget_clears_the_key_and_keeps_the_lock() {
        let map = KeyMap::new(4096, &[4096 * 4]).unwrap();
        assert!(map.try_lock(0, 1, 2));
        map.release(0, 1, 2, Some(&[5, 6]));
        assert!(map.try_lock(0, 1, 2));
        map.forget(0, 2);
        assert_eq!((map.key(0, 1), map.key(0, 2)), (5, 0));
        assert!(!map.try_lock(0, 2, 1), "still held by its holder");
        map.release(0, 1, 2, None);
        assert!(map.try_lock(0, 2, 1));
        assert_eq!(map.key(0, 2), 0);
        assert!(map.is_unknown(0, 2) && !map.is_unknown(0, 1));
        assert_eq!(map.snapshot(0), vec![0, 5, UNKNOWN, 0]);
        // A map made from that snapshot (a journal's) knows the same.
        let again = KeyMap::from_keys(4096, vec![map.snapshot(0)]).unwrap();
        assert!(again.is_unknown(0, 2));
        assert_eq!(
            (again.key(0, 1), again.key(0, 2), again.unknown_units()),
            (5, 0, 1)
        );
        // The next write makes it known again.
        map.release(0, 2, 1, Some(&[1]));
        assert!(!map.is_unknown(0, 2));
        assert_eq!(map.snapshot(0), vec![0, 5, 1, 0]);
    }

    #[test]
    fn adopt_takes_the_found_generation_and_keeps_the_lock() {
        let map = KeyMap::new(4096, &[4096 * 2]).unwrap();
        assert!(map.try_lock(0, 0, 1));
        map.forget(0, 0);
        map.adopt(0, 0, 3);
        assert!(!map.try_lock(0, 0, 1), "still held by its holder");
        map.release(0, 0, 1, None);
        assert_eq!((map.key(0, 0), map.is_unknown(0, 0)), (3, false));
        assert_eq!(map.snapshot(0), vec![3, 0]);
    }

    #[test]
    fn sizes_and_unit_validation() {
        let map = KeyMap::new(4096, &[4096 * 10 + 100, 0, 8192]).unwrap();
        assert_eq!(map.unit_bytes(), 4096);
        assert_eq!(map.targets(), 3);
        assert_eq!(map.units(0), 10, "partial last unit dropped");
        assert_eq!(map.units(1), 0);
        assert_eq!(map.units(2), 2);
        assert_eq!(map.units(3), 0);
        assert!(matches!(map.cells, Cells::Heap(_)));
        for bad in [0u32, 256, 1000, 4097] {
            assert!(matches!(
                KeyMap::new(bad, &[1 << 20]),
                Err(VerifyError::Usage(_))
            ));
            assert!(matches!(
                KeyMap::from_keys(bad, vec![vec![0]]),
                Err(VerifyError::Usage(_))
            ));
        }
        assert!(KeyMap::new(512, &[]).unwrap().targets() == 0);
    }

    #[test]
    fn lock_is_all_or_nothing() {
        let map = KeyMap::new(512, &[512 * 16]).unwrap();
        assert!(map.try_lock(0, 4, 4)); // 4..8
        assert!(!map.try_lock(0, 0, 5), "overlaps unit 4");
        // The failed attempt must not leave 0..4 busy.
        assert!(map.try_lock(0, 0, 4));
        assert!(!map.try_lock(0, 7, 3), "overlaps unit 7");
        assert!(
            map.try_lock(0, 8, 3),
            "8..11 free again after the failed attempt"
        );
        assert!(!map.try_lock(0, 10, 1));
        map.release(0, 4, 4, None);
        assert!(map.try_lock(0, 4, 4));
        assert_eq!(map.key(0, 4), 0, "busy bit not part of the key");
        assert!(map.try_lock(0, 3, 0), "empty range");
    }

    #[test]
    fn release_stores_keys_and_snapshot_hides_busy() {
        let map = KeyMap::new(4096, &[4096 * 8, 4096 * 4]).unwrap();
        assert!(map.try_lock(1, 1, 2));
        map.release(1, 1, 2, Some(&[5, 0x80 | 6]));
        assert_eq!(map.key(1, 1), 5);
        assert_eq!(map.key(1, 2), 6, "busy bit in a new key is dropped");
        assert!(map.try_lock(1, 1, 2), "released");
        assert_eq!(map.snapshot(1), vec![0, 5, 6, 0]);
        map.release(1, 1, 2, None);
        assert_eq!(map.snapshot(1), vec![0, 5, 6, 0]);
        assert_eq!(map.snapshot(0), vec![0; 8]);
        assert_eq!(map.written_units(), 2);
        assert!(map.try_lock(0, 7, 1));
        map.release(0, 7, 1, Some(&[127]));
        assert_eq!(map.written_units(), 3);
        assert_eq!(map.key(0, 7), 127);
        assert_eq!(map.key(1, 0), 0);
    }

    #[test]
    fn from_keys_clears_busy_bits() {
        let map = KeyMap::from_keys(512, vec![vec![1, 0x82, 0], vec![], vec![127]]).unwrap();
        assert_eq!(map.targets(), 3);
        assert_eq!(map.units(0), 3);
        assert_eq!(map.units(1), 0);
        assert_eq!(map.snapshot(0), vec![1, 2, 0]);
        assert_eq!(map.snapshot(2), vec![127]);
        assert!(map.try_lock(0, 0, 3), "nothing busy");
        assert_eq!(map.written_units(), 3);
    }

    #[cfg(not(debug_assertions))]
    #[test]
    fn out_of_range_is_clamped() {
        let map = KeyMap::new(512, &[512 * 4]).unwrap();
        assert_eq!(map.key(0, 4), 0);
        assert_eq!(map.key(9, 0), 0);
        assert!(map.try_lock(0, 2, 10));
        map.release(0, 2, 10, Some(&[3, 4]));
        assert_eq!(map.snapshot(0), vec![0, 0, 3, 4]);
        assert!(map.snapshot(5).is_empty());
    }

    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "beyond")]
    fn out_of_range_asserts_in_debug() {
        let map = KeyMap::new(512, &[512 * 4]).unwrap();
        map.try_lock(0, 2, 10);
    }

    #[test]
    fn concurrent_lock_release_loses_no_update() {
        const THREADS: usize = 8;
        const ROUNDS: usize = 2000;
        let map = Arc::new(KeyMap::new(512, &[512 * 8]).unwrap());
        let barrier = Arc::new(Barrier::new(THREADS));
        // Every thread bumps overlapping ranges; a lost update would show as a
        // key behind the number of increments of its unit.
        let handles: Vec<_> = (0..THREADS)
            .map(|thread| {
                let map = Arc::clone(&map);
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    barrier.wait();
                    let mut bumps = [0u64; 8];
                    for round in 0..ROUNDS {
                        let first = ((thread + round) % 6) as u64;
                        let count = 1 + ((thread * 7 + round) % 3) as u32;
                        while !map.try_lock(0, first, count) {
                            std::thread::yield_now();
                        }
                        let keys: Vec<u8> = (first..first + u64::from(count))
                            .map(|unit| (map.key(0, unit) + 1) % 128)
                            .collect();
                        map.release(0, first, count, Some(&keys));
                        for unit in first..first + u64::from(count) {
                            bumps[unit as usize] += 1;
                        }
                    }
                    bumps
                })
            })
            .collect();
        let mut total = [0u64; 8];
        for handle in handles {
            for (sum, bumps) in total.iter_mut().zip(handle.join().unwrap()) {
                *sum += bumps;
            }
        }
        let expected: Vec<u8> = total.iter().map(|&n| (n % 128) as u8).collect();
        assert_eq!(map.snapshot(0), expected);
        assert!(map.try_lock(0, 0, 8), "no busy bit left behind");
    }

    #[test]
    fn large_map_is_file_backed() {
        // 100 Mi units of 512 bytes (a 50 GiB target): a 100 MiB sparse file.
        let units = 100u64 << 20;
        let map = KeyMap::new(512, &[units * 512, 4096]).unwrap();
        assert!(matches!(map.cells, Cells::File { .. }));
        assert_eq!(map.units(0), units);
        assert_eq!(map.units(1), 8);
        for unit in [0, 1, units / 2, units - 1] {
            assert!(map.try_lock(0, unit, 1));
            map.release(0, unit, 1, Some(&[42]));
            assert_eq!(map.key(0, unit), 42);
        }
        assert!(map.try_lock(1, 7, 1));
        map.release(1, 7, 1, Some(&[9]));
        assert_eq!(map.snapshot(1), vec![0, 0, 0, 0, 0, 0, 0, 9]);
        assert_eq!(map.written_units(), 5);
    }
}
