//! Data validation during a run (`--verify`), on top of `iorig-verify`.
//!
//! Every unit (the workload's smallest block size) a worker writes carries a
//! header and a payload derived from a key, the unit's write generation. The
//! [`KeyMap`] holds the expected key of every unit and, in its busy bit, the
//! lock that keeps two workers off the same block at once, so the expected key
//! is exact when the read comes back. With a journal, each write's new keys
//! are journaled (and synced) before the write is submitted and again once it
//! completed, so `iorig verify --journal` can check everything after a crash.
//!
//! Units whose key is 0 have not been written under this key map: their
//! content is unknown (a fresh file, or data of an older run) and they are not
//! checked during a run.

use crate::EngineError;
use iorig_spec::Workload;
use iorig_verify::{check_unit, ErrorKind, Expected, Journal, KeyMap, UnitError};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

pub use iorig_result::live::KEPT_ERRORS;

/// What a run validates against, shared by its workers.
pub struct VerifySetup {
    pub keys: Arc<KeyMap>,
    pub journal: Option<Arc<Journal>>,
    /// The id each target's headers carry (by target index).
    pub target_ids: Vec<u32>,
    /// Re-read every block right after writing it.
    pub after_write: bool,
    /// What written units hold and reads are judged against.
    pub content: UnitContent,
    /// Check every unit read, whether this run knows it written or not
    /// (fio's verify_only): stamped units by [`iorig_verify::check_self`].
    pub every_unit: bool,
}

/// What a validated unit holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum UnitContent {
    /// iorig's stamped blocks: header, generation, checksum
    /// ([`iorig_verify::stamp_unit`]).
    #[default]
    Stamped,
    /// The workload's pattern over every byte (fio's verify_pattern).
    Pattern(Arc<[u8]>),
}

impl UnitContent {
    pub fn of(w: &Workload) -> UnitContent {
        match &w.verify_pattern {
            Some(p) => UnitContent::Pattern(p.as_slice().into()),
            None => UnitContent::Stamped,
        }
    }
}

impl std::fmt::Debug for VerifySetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifySetup")
            .field("unit_bytes", &self.keys.unit_bytes())
            .field("journal", &self.journal.is_some())
            .field("target_ids", &self.target_ids)
            .field("after_write", &self.after_write)
            .field("content", &self.content)
            .field("every_unit", &self.every_unit)
            .finish()
    }
}

impl VerifySetup {
    /// A new, empty key map for one run (no journal): headers carry a target
    /// id made from the seed and the clock, so data of older runs is not
    /// taken for this run's.
    pub fn fresh(
        unit_bytes: u32,
        extents_bytes: &[u64],
        w: &Workload,
    ) -> Result<VerifySetup, EngineError> {
        let seed = w.seed;
        let keys = KeyMap::new(unit_bytes, extents_bytes).map_err(|e| EngineError::Engine {
            engine: "verify",
            why: e.to_string(),
        })?;
        let clock = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let tag = (splitmix(seed ^ clock) >> 32) as u32;
        Ok(VerifySetup {
            keys: Arc::new(keys),
            journal: None,
            target_ids: (0..extents_bytes.len())
                .map(|i| target_id(tag, i))
                .collect(),
            after_write: w.verify_after,
            content: UnitContent::of(w),
            every_unit: w.verify_only,
        })
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Counters shared by the workers of one run.
#[derive(Debug, Default)]
pub(crate) struct VerifyCounters {
    pub units_checked: AtomicU64,
    pub blocks_checked: AtomicU64,
    pub pre_reads: AtomicU64,
    pub after_reads: AtomicU64,
}

pub use iorig_result::live::{ValidationError, ValidationSummary};

/// Copies the workers' counters into a summary.
pub(crate) fn take_counts(summary: &mut ValidationSummary, c: &VerifyCounters) {
    summary.units_checked = c.units_checked.load(Ordering::Relaxed);
    summary.blocks_checked = c.blocks_checked.load(Ordering::Relaxed);
    summary.pre_reads = c.pre_reads.load(Ordering::Relaxed);
    summary.after_reads = c.after_reads.load(Ordering::Relaxed);
}

/// The header id of target `index` for a key map or journal with `tag`:
/// distinct per target, and (through the tag) unlikely to match data an
/// unrelated run left behind.
pub fn target_id(tag: u32, index: usize) -> u32 {
    tag.wrapping_add((index as u32).wrapping_mul(0x9E37_79B1))
}

/// Checks one unit read from target `target` (index) at `offset_bytes`,
/// treating units whose header names a target id that is not one of ours as
/// holding no iorig data (an older, unrelated run wrote them).
pub fn check_ours(
    buf: &[u8],
    target_ids: &[u32],
    target: usize,
    offset_bytes: u64,
    expected: Expected,
) -> Result<Option<u8>, UnitError> {
    let id = target_ids.get(target).copied().unwrap_or(u32::MAX);
    match check_unit(buf, id, offset_bytes, expected) {
        Ok(k) => Ok(k),
        Err(mut e) => {
            let foreign = e.found_target.is_some_and(|t| !target_ids.contains(&t));
            if foreign && matches!(e.kind, ErrorKind::Misdirected | ErrorKind::UnwrittenHasData) {
                match expected {
                    Expected::Unwritten | Expected::Either { old: 0, .. } => return Ok(None),
                    _ => {
                        e.kind = ErrorKind::LostWrite;
                        e.detail = format!(
                            "holds data of another run (target id {:#x}): the write never reached the storage",
                            e.found_target.unwrap_or(0)
                        );
                    }
                }
            }
            // Report the target by index, as the user knows it.
            e.target = target as u32;
            if let Some(t) = e.found_target {
                if let Some(i) = target_ids.iter().position(|x| *x == t) {
                    e.found_target = Some(i as u32);
                }
            }
            Err(e)
        }
    }
}

/// A worker's side of validation: locks, keys and journal records of the
/// blocks its slots are working on.
pub(crate) struct VerifyWorker {
    setup: Arc<VerifySetup>,
    counters: Arc<VerifyCounters>,
    unit_bytes: u64,
    /// New keys of the write each slot carries (one per unit).
    slot_keys: Vec<Vec<u8>>,
    /// (slot, target, first unit) of writes stamped but not yet journaled.
    intents: Vec<(u32, u32, u64)>,
    /// (slot, target, first unit, publish) of completed writes: journaled as
    /// done, then (unless a read-back is still to come) their keys published.
    completed: Vec<(u32, u32, u64, bool)>,
    /// Wall-clock ns at the run's monotonic zero, for header timestamps.
    wall_base_ns: u64,
    units_checked: u64,
    blocks_checked: u64,
    pre_reads: u64,
    after_reads: u64,
}

/// What a slot's current I/O is for, under validation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The workload's own read or write.
    #[default]
    Plain,
    /// A read of known data before writing over it.
    PreRead,
    /// The read-back right after a write (`--verify-after`).
    AfterRead,
}

impl VerifyWorker {
    pub fn new(
        setup: Arc<VerifySetup>,
        counters: Arc<VerifyCounters>,
        qd: u32,
        wall_base_ns: u64,
    ) -> Self {
        let unit_bytes = setup.keys.unit_bytes() as u64;
        VerifyWorker {
            setup,
            counters,
            unit_bytes,
            slot_keys: vec![Vec::new(); qd as usize],
            intents: Vec::new(),
            completed: Vec::new(),
            wall_base_ns,
            units_checked: 0,
            blocks_checked: 0,
            pre_reads: 0,
            after_reads: 0,
        }
    }

    fn units(&self, offset: u64, len: u32) -> (u64, u32) {
        (
            offset / self.unit_bytes,
            (len as u64 / self.unit_bytes) as u32,
        )
    }

    /// Takes the block's units for this worker; false when another I/O holds one.
    /// Whether writes are journaled (each flush of intents is a synced write).
    pub fn journaled(&self) -> bool {
        self.setup.journal.is_some()
    }

    pub fn lock(&self, target: u32, offset: u64, len: u32) -> bool {
        let (first, count) = self.units(offset, len);
        self.setup.keys.try_lock(target, first, count)
    }

    pub fn release(&self, target: u32, offset: u64, len: u32) {
        let (first, count) = self.units(offset, len);
        self.setup.keys.release(target, first, count, None);
    }

    /// A trim of the block completed: its units become "never written" (key
    /// 0, which reads do not check) and are released.
    pub fn trimmed(&self, target: u32, offset: u64, len: u32) {
        let (first, count) = self.units(offset, len);
        let unknown = vec![0u8; count as usize];
        self.setup
            .keys
            .release(target, first, count, Some(&unknown));
    }

    /// Whether any unit of the block holds data of a known write.
    pub fn known(&self, target: u32, offset: u64, len: u32) -> bool {
        let (first, count) = self.units(offset, len);
        (first..first + count as u64).any(|u| self.setup.keys.key(target, u) != 0)
    }

    /// Stamps `buf` as the next generation of every unit of the block and
    /// queues its journal intent.
    pub fn prepare_write(
        &mut self,
        slot: u32,
        buf: &mut [u8],
        target: u32,
        offset: u64,
        now_ns: u64,
    ) {
        let (first, _) = self.units(offset, buf.len() as u32);
        let id = self
            .setup
            .target_ids
            .get(target as usize)
            .copied()
            .unwrap_or(0);
        let time_ns = self.wall_base_ns + now_ns;
        let keys = &mut self.slot_keys[slot as usize];
        keys.clear();
        for (i, unit) in buf.chunks_exact_mut(self.unit_bytes as usize).enumerate() {
            let key = iorig_verify::next_key(self.setup.keys.key(target, first + i as u64));
            keys.push(key);
            match &self.setup.content {
                UnitContent::Stamped => iorig_verify::stamp_unit(
                    unit,
                    id,
                    offset + i as u64 * self.unit_bytes,
                    key,
                    time_ns,
                ),
                UnitContent::Pattern(p) => iorig_verify::fill_pattern(unit, p),
            }
        }
        if self.setup.journal.is_some() {
            self.intents.push((slot, target, first));
        }
    }

    /// Journals the stamped writes (synced) before they are submitted.
    /// Whether stamped writes wait for their intent records.
    pub fn has_intents(&self) -> bool {
        !self.intents.is_empty()
    }

    pub fn flush_intents(&mut self) -> Result<(), String> {
        if self.intents.is_empty() {
            return Ok(());
        }
        let Some(j) = &self.setup.journal else {
            self.intents.clear();
            return Ok(());
        };
        let recs: Vec<iorig_verify::WriteRecord<'_>> = self
            .intents
            .iter()
            .map(|&(slot, target, first)| iorig_verify::WriteRecord {
                target,
                first_unit: first,
                new_keys: &self.slot_keys[slot as usize],
            })
            .collect();
        let r = j.log_intents(&recs).map_err(|e| format!("journal: {e}"));
        self.intents.clear();
        r
    }

    /// Checks a block read into `buf`. `expect_new` checks against the keys
    /// the slot just wrote (read-back) instead of the key map.
    pub fn check(
        &mut self,
        slot: u32,
        buf: &[u8],
        target: u32,
        offset: u64,
        phase: Phase,
        errors: &mut Vec<UnitError>,
    ) {
        let (first, _) = self.units(offset, buf.len() as u32);
        match phase {
            Phase::PreRead => self.pre_reads += 1,
            Phase::AfterRead => self.after_reads += 1,
            Phase::Plain => {}
        }
        let mut checked = false;
        for (i, unit) in buf.chunks_exact(self.unit_bytes as usize).enumerate() {
            let key = if phase == Phase::AfterRead {
                self.slot_keys[slot as usize].get(i).copied().unwrap_or(0)
            } else {
                self.setup.keys.key(target, first + i as u64)
            };
            if key == 0
                && (!self.setup.every_unit
                    || (phase != Phase::AfterRead
                        && self.setup.keys.is_unknown(target, first + i as u64)))
            {
                continue;
            }
            checked = true;
            self.units_checked += 1;
            let at = offset + i as u64 * self.unit_bytes;
            let expected = if key == 0 {
                Expected::Any
            } else {
                Expected::Key(key)
            };
            let result = match (&self.setup.content, expected) {
                (UnitContent::Pattern(p), _) => iorig_verify::check_pattern(unit, p, target, at),
                (UnitContent::Stamped, Expected::Any) => {
                    iorig_verify::check_self(unit, target, at).map(|_| ())
                }
                (UnitContent::Stamped, _) => {
                    check_ours(unit, &self.setup.target_ids, target as usize, at, expected)
                        .map(|_| ())
                }
            };
            if let Err(e) = result {
                if phase != Phase::AfterRead {
                    // Reported once: later checks expect what the unit now
                    // holds, never the lost generation again.
                    self.settle_after_error(unit, target, first + i as u64, at, &e);
                }
                errors.push(e);
            }
        }
        if checked {
            self.blocks_checked += 1;
        }
    }

    /// After an error in unit `unit` (read at `at`): when it holds an
    /// intact block of its own place (an older generation: a lost write),
    /// that block is what later checks expect; anything else leaves it
    /// unknown, unchecked until written again. Either way the loss is
    /// reported once, by this error, not again by every later read or by
    /// `iorig verify` under another name.
    fn settle_after_error(&self, buf: &[u8], target: u32, unit: u64, at: u64, e: &UnitError) {
        let found = match (&self.setup.content, e.found_key) {
            (UnitContent::Stamped, Some(k)) => check_ours(
                buf,
                &self.setup.target_ids,
                target as usize,
                at,
                Expected::Key(k),
            )
            .ok()
            .flatten(),
            _ => None,
        };
        match found {
            Some(k) => self.setup.keys.adopt(target, unit, k),
            None => self.setup.keys.forget(target, unit),
        }
    }

    /// Notes a completed write of `slot`; [`Self::finish_writes`] journals it
    /// and, when `publish`, makes its keys the expected ones.
    pub fn write_done(&mut self, slot: u32, target: u32, offset: u64, len: u32, publish: bool) {
        let (first, count) = self.units(offset, len);
        debug_assert_eq!(count as usize, self.slot_keys[slot as usize].len());
        self.completed.push((slot, target, first, publish));
    }

    /// Journals the completed writes (synced), then publishes their keys.
    pub fn finish_writes(&mut self) -> Result<(), String> {
        if self.completed.is_empty() {
            return Ok(());
        }
        let mut result = Ok(());
        if let Some(j) = &self.setup.journal {
            let recs: Vec<iorig_verify::WriteRecord<'_>> = self
                .completed
                .iter()
                .map(|&(slot, target, first, _)| iorig_verify::WriteRecord {
                    target,
                    first_unit: first,
                    new_keys: &self.slot_keys[slot as usize],
                })
                .collect();
            result = j.log_done(&recs).map_err(|e| format!("journal: {e}"));
        }
        if result.is_ok() {
            for &(slot, target, first, _) in self.completed.iter().filter(|c| c.3) {
                let keys = &self.slot_keys[slot as usize];
                self.setup
                    .keys
                    .release(target, first, keys.len() as u32, Some(keys));
            }
        }
        self.completed.clear();
        result
    }

    /// Publishes the keys of a written block that was also read back.
    pub fn release_written(&self, slot: u32, target: u32, offset: u64) {
        let keys = &self.slot_keys[slot as usize];
        let (first, _) = self.units(offset, 0);
        self.setup
            .keys
            .release(target, first, keys.len() as u32, Some(keys));
    }

    /// Adds this worker's counts to the run's.
    pub fn flush_counts(&mut self) {
        let c = &self.counters;
        c.units_checked
            .fetch_add(std::mem::take(&mut self.units_checked), Ordering::Relaxed);
        c.blocks_checked
            .fetch_add(std::mem::take(&mut self.blocks_checked), Ordering::Relaxed);
        c.pre_reads
            .fetch_add(std::mem::take(&mut self.pre_reads), Ordering::Relaxed);
        c.after_reads
            .fetch_add(std::mem::take(&mut self.after_reads), Ordering::Relaxed);
    }

    pub fn after_write(&self) -> bool {
        self.setup.after_write
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use iorig_verify::stamp_unit;

    #[test]
    fn data_of_an_unrelated_run_is_not_ours() {
        let ids = [target_id(7, 0), target_id(7, 1)];
        let mut buf = vec![0u8; 4096];
        // Same offset, a target id from another tag.
        stamp_unit(&mut buf, target_id(99, 0), 8192, 3, 1);
        assert_eq!(
            check_ours(&buf, &ids, 0, 8192, Expected::Unwritten),
            Ok(None)
        );
        let e = check_ours(&buf, &ids, 0, 8192, Expected::Key(3)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::LostWrite);
    }

    #[test]
    fn misdirected_between_our_targets_names_the_index() {
        let ids = [target_id(7, 0), target_id(7, 1)];
        let mut buf = vec![0u8; 4096];
        stamp_unit(&mut buf, ids[1], 8192, 3, 1);
        let e = check_ours(&buf, &ids, 0, 8192, Expected::Key(3)).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Misdirected);
        assert_eq!((e.target, e.found_target), (0, Some(1)));
        stamp_unit(&mut buf, ids[0], 8192, 3, 1);
        assert_eq!(
            check_ours(&buf, &ids, 0, 8192, Expected::Key(3)),
            Ok(Some(3))
        );
    }
}
