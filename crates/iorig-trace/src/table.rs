//! A hash table of block numbers for the analysis' per-block state, laid
//! out for the memory system.
//!
//! The analysis of a large trace waits on memory: every block access is a
//! lookup in a table far bigger than the CPU's caches (millions of blocks
//! of 32 bytes), and one lookup waits for the last. This table does two
//! things std's `HashMap` cannot:
//! - a key's slot can be asked for ahead of time ([`BlockTable::prefetch`]),
//!   so the analysis asks for a batch of records' slots at once and their
//!   waits overlap instead of adding up;
//! - consecutive blocks sit in consecutive slots (runs of [`RUN`]), so an
//!   I/O's blocks share cache lines and a hot region of the disk stays a
//!   compact set of lines in the caches.
//!
//! Open addressing with linear probing: a key's slot is usually its home,
//! or the next in the same or the following cache line.

/// The key no block has: block keys are a device number (16 bits) over a
/// block number below 2^48 - 1 (the analysis refuses larger ones).
pub(crate) const EMPTY: u64 = u64::MAX;

/// Consecutive blocks kept in consecutive slots (see [`BlockTable::home`]).
const RUN: u64 = 8;

#[derive(Clone, Copy)]
struct Slot<V> {
    key: u64,
    value: V,
}

/// Block keys to `V`, a zero value for a key not seen.
pub(crate) struct BlockTable<V> {
    slots: Vec<Slot<V>>,
    len: usize,
    /// log2 of the slots.
    bits: u32,
}

impl<V: Copy + Default> Default for BlockTable<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V: Copy + Default> BlockTable<V> {
    pub(crate) fn new() -> Self {
        Self::with_bits(10)
    }

    fn with_bits(bits: u32) -> Self {
        BlockTable {
            slots: vec![
                Slot {
                    key: EMPTY,
                    value: V::default()
                };
                1 << bits
            ],
            len: 0,
            bits,
        }
    }

    /// A key's first slot. Blocks go in runs of [`RUN`]: a run's place is
    /// hashed (Fibonacci hashing, the top bits of a multiply), and its
    /// blocks take the slots in order from there. An I/O's consecutive
    /// blocks then share cache lines, and a hot region of the disk is a
    /// compact set of lines that stays in the CPU's caches, where one slot
    /// per block hashed apart would touch a line per block.
    #[inline]
    fn home(&self, key: u64) -> usize {
        let run = (key / RUN).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits);
        ((run & !(RUN - 1)) | (key % RUN)) as usize
    }

    /// Asks the CPU to start loading `key`'s slot (a hint; nothing changes).
    #[inline]
    pub(crate) fn prefetch(&self, key: u64) {
        let slot: *const Slot<V> = &self.slots[self.home(key)];
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a prefetch reads nothing into the program and cannot
        // fault, whatever the address; this one is a slot of the table.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(slot.cast());
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = slot;
    }

    /// `key`'s value, inserted as zero when new. `key` must not be
    /// [`EMPTY`].
    #[inline]
    pub(crate) fn entry(&mut self, key: u64) -> &mut V {
        debug_assert_ne!(key, EMPTY);
        // Grown at 70 % full: linear probing's runs stay short below that.
        if (self.len + 1) * 10 > self.slots.len() * 7 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let k = self.slots[i].key;
            if k == key {
                break;
            }
            if k == EMPTY {
                self.slots[i].key = key;
                self.len += 1;
                break;
            }
            i = (i + 1) & mask;
        }
        &mut self.slots[i].value
    }

    /// `key`'s value, if it has been entered.
    pub(crate) fn get(&self, key: u64) -> Option<&V> {
        let mask = self.slots.len() - 1;
        let mut i = self.home(key);
        loop {
            let s = &self.slots[i];
            if s.key == key && key != EMPTY {
                return Some(&s.value);
            }
            if s.key == EMPTY {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let old = std::mem::replace(self, Self::with_bits(self.bits + 1));
        for s in old.slots.into_iter().filter(|s| s.key != EMPTY) {
            *self.entry(s.key) = s.value;
        }
    }

    /// Keys entered.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Every key entered and its value, in no particular order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u64, &V)> {
        self.slots
            .iter()
            .filter(|s| s.key != EMPTY)
            .map(|s| (s.key, &s.value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashMap;

    proptest! {
        // Whatever the keys (consecutive runs, strided ones that all want
        // the first slot of their run, repeats, far apart), the table
        // counts as a HashMap does, through its growth.
        #[test]
        fn counts_as_a_hash_map_does(
            keys in prop::collection::vec(
                (0u64..(1 << 48) - 1_000_000, 1u64..20, prop::sample::select(vec![1u64, 8, 64])),
                0..400,
            ),
        ) {
            let mut t: BlockTable<u32> = BlockTable::new();
            let mut m: HashMap<u64, u32> = HashMap::new();
            for (start, n, stride) in &keys {
                for k in (0..*n).map(|i| start + i * stride) {
                    t.prefetch(k);
                    *t.entry(k) += 1;
                    *m.entry(k).or_default() += 1;
                }
            }
            prop_assert_eq!(t.len(), m.len());
            let mut got: Vec<(u64, u32)> = t.iter().map(|(k, v)| (k, *v)).collect();
            let mut want: Vec<(u64, u32)> = m.iter().map(|(k, v)| (*k, *v)).collect();
            got.sort_unstable();
            want.sort_unstable();
            prop_assert_eq!(got, want);
            for (k, v) in &m {
                prop_assert_eq!(t.get(*k), Some(v));
            }
            prop_assert_eq!(t.get((1 << 48) + 7), None);
        }
    }
}
