//! Worker-side latency recording: small per-worker memory, exact merge.
//!
//! Every I/O worker records the latencies of the current interval and hands
//! them to the aggregator, which merges them into [`LatencyHistogram`]s. With a
//! full HDR histogram per worker, per op and per latency kind (preallocated up
//! to an hour: 264 KiB each) memory grew by megabytes per worker, most of it
//! counts that were never touched: the latencies of one worker in one interval
//! span a few powers of two, not forty.
//!
//! [`LatencyRecorder`] uses HDR's index geometry (2048 sub-buckets, 1 ns
//! units, 3 significant digits) but keeps its counts in 1024-entry blocks, one
//! per half of bucket 0 and one per further bucket (the upper 1024
//! sub-buckets, as in HDR), allocated when a value first lands in them and
//! freed by [`LatencyRecorder::reset`] once an interval passes without one.
//! Latencies within 50..200 ms take three blocks, 12 KiB. Counts are u32;
//! one that would overflow carries 2^32 into a side table, so no count is lost.
//!
//! [`LatencyRecorder::merge_into`] adds every count at the lowest value of its
//! bucket, which is where the histogram would have put the raw value, so the
//! merged histogram equals recording the raw values into it (every count,
//! min, max, mean and percentile): nothing is lost by recording on the worker.
//!
//! [`WorkerOpStats`] and [`WorkerIntervalStats`] are the worker-side mirrors of
//! [`OpStats`] and [`IntervalStats`], with the same field names.

use crate::{IntervalStats, LatencyHistogram, OpStats};
use iorig_spec::FsOp;
use std::fmt;

/// log2 of the sub-bucket half count (1024): entries per block.
const BLOCK_MAG: u32 = 10;
const BLOCK_LEN: usize = 1 << BLOCK_MAG;
/// HDR's sub-bucket mask for 2048 sub-buckets of 1 ns.
const SUB_BUCKET_MASK: u64 = 2047;
/// HDR's leading-zero base: 64 - unit magnitude (0) - sub-bucket magnitude (11).
const LZ_BASE: u32 = 53;
/// Buckets 0..=53 cover all of u64; bucket 0 takes two blocks.
const BLOCKS: usize = 55;

type Block = Box<[u32; BLOCK_LEN]>;

/// HDR's flat counts index of `v` (sub-bucket count 2048, unit magnitude 0).
#[inline]
fn index_of(v: u64) -> usize {
    // In 0..=53: `v | 2047` has at most 53 leading zeros.
    let bucket = LZ_BASE - (v | SUB_BUCKET_MASK).leading_zeros();
    // Bucket 0: the index is v itself (0..2048); bucket b > 0: sub-buckets
    // 1024..2048 at b * 1024 + sub, right after bucket b - 1.
    ((bucket as usize) << BLOCK_MAG) + (v >> bucket) as usize
}

/// The lowest value whose flat index is `idx`.
#[inline]
fn lowest_value_of(idx: usize) -> u64 {
    let bucket = (idx >> BLOCK_MAG).saturating_sub(1);
    let sub = idx - (bucket << BLOCK_MAG);
    (sub as u64) << bucket
}

#[cold]
#[inline(never)]
fn new_block() -> Block {
    Box::new([0; BLOCK_LEN])
}

/// One worker's latencies of one interval, in nanoseconds, with HDR's bucket
/// geometry and memory only for the buckets in use. See the module docs.
#[derive(Clone)]
pub struct LatencyRecorder {
    blocks: [Option<Block>; BLOCKS],
    /// Counts carried out of a u32 that wrapped: (flat index, multiple of 2^32).
    spill: Vec<(u32, u64)>,
    total: u64,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        Self::new()
    }
}

impl fmt::Debug for LatencyRecorder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LatencyRecorder")
            .field("count", &self.total)
            .field("blocks", &self.blocks.iter().flatten().count())
            .field("heap_bytes", &self.heap_bytes())
            .finish()
    }
}

impl LatencyRecorder {
    /// An empty recorder; it allocates nothing until the first value.
    pub fn new() -> Self {
        LatencyRecorder {
            blocks: [const { None }; BLOCKS],
            spill: Vec::new(),
            total: 0,
        }
    }

    /// Records one latency. Values are kept as given; zero and values past an
    /// hour are clamped when merged, as [`LatencyHistogram::record`] does.
    /// Allocates only the first time a value lands in a bucket.
    #[inline]
    pub fn record(&mut self, lat_ns: u64) {
        let idx = index_of(lat_ns);
        let block = self.blocks[idx >> BLOCK_MAG].get_or_insert_with(new_block);
        let c = &mut block[idx & (BLOCK_LEN - 1)];
        let (n, wrapped) = c.overflowing_add(1);
        *c = n;
        self.total += 1;
        if wrapped {
            self.carry(idx);
        }
    }

    /// Moves 2^32 of the count at `idx`, which just wrapped to 0, to the spill table.
    #[cold]
    #[inline(never)]
    fn carry(&mut self, idx: usize) {
        // idx < 55 * 1024, so it fits a u32.
        let key = idx as u32;
        match self.spill.iter_mut().find(|(k, _)| *k == key) {
            Some((_, n)) => *n += 1 << 32,
            None => self.spill.push((key, 1 << 32)),
        }
    }

    /// Latencies recorded since the last reset.
    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Clears every count for the next interval. Blocks that got a count since
    /// the last reset are zeroed and kept; the others are freed, so memory
    /// follows the latencies of the current interval.
    pub fn reset(&mut self) {
        let spill = std::mem::take(&mut self.spill);
        for (k, slot) in self.blocks.iter_mut().enumerate() {
            if let Some(block) = slot {
                let carried = spill.iter().any(|(i, _)| *i as usize >> BLOCK_MAG == k);
                if carried || block.iter().any(|&c| c != 0) {
                    block.fill(0);
                } else {
                    *slot = None;
                }
            }
        }
        self.total = 0;
    }

    /// Adds every recorded latency to `hist`, each count at the lowest value
    /// of its HDR bucket: the result equals recording the raw values into it.
    pub fn merge_into(&self, hist: &mut LatencyHistogram) {
        // Highest first, so that the histogram grows once.
        for (k, block) in self.blocks.iter().enumerate().rev() {
            let Some(block) = block else { continue };
            for (off, &c) in block.iter().enumerate().rev() {
                if c != 0 {
                    let idx = (k << BLOCK_MAG) + off;
                    hist.record_n(lowest_value_of(idx), u64::from(c));
                }
            }
        }
        for &(idx, n) in &self.spill {
            hist.record_n(lowest_value_of(idx as usize), n);
        }
    }

    /// The recorded latencies as a histogram.
    pub fn to_histogram(&self) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        self.merge_into(&mut h);
        h
    }

    /// Bytes allocated for counts (blocks and spill table), for tests and
    /// memory accounting; the recorder itself is about 480 bytes more.
    pub fn heap_bytes(&self) -> usize {
        self.blocks.iter().flatten().count() * std::mem::size_of::<[u32; BLOCK_LEN]>()
            + self.spill.capacity() * std::mem::size_of::<(u32, u64)>()
    }

    /// Sets the u32 count at `v`'s bucket as if `count` values had been
    /// recorded there (on top of what the spill table holds).
    #[cfg(test)]
    fn preset(&mut self, v: u64, count: u32) {
        let idx = index_of(v);
        let block = self.blocks[idx >> BLOCK_MAG].get_or_insert_with(new_block);
        let c = &mut block[idx & (BLOCK_LEN - 1)];
        self.total = self.total - u64::from(*c) + u64::from(count);
        *c = count;
    }
}

/// The worker-side [`OpStats`]: operations of one kind in one interval.
#[derive(Clone, Debug, Default)]
pub struct WorkerOpStats {
    pub ops: u64,
    pub bytes: u64,
    /// As [`OpStats::lat`].
    pub lat: LatencyRecorder,
    /// As [`OpStats::service_lat`].
    pub service_lat: LatencyRecorder,
    /// As [`OpStats::service_sum_ns`].
    pub service_sum_ns: u64,
}

impl WorkerOpStats {
    /// Adds these operations to `into`, histograms exactly.
    pub fn merge_into(&self, into: &mut OpStats) {
        into.ops += self.ops;
        into.bytes += self.bytes;
        self.lat.merge_into(&mut into.lat);
        self.service_lat.merge_into(&mut into.service_lat);
        into.service_sum_ns += self.service_sum_ns;
    }

    pub fn reset(&mut self) {
        self.ops = 0;
        self.bytes = 0;
        self.lat.reset();
        self.service_lat.reset();
        self.service_sum_ns = 0;
    }

    pub fn heap_bytes(&self) -> usize {
        self.lat.heap_bytes() + self.service_lat.heap_bytes()
    }
}

/// The worker-side [`IntervalStats`]: reads and writes of one interval.
#[derive(Clone, Debug, Default)]
pub struct WorkerIntervalStats {
    pub read: WorkerOpStats,
    pub write: WorkerOpStats,
    pub trim: WorkerOpStats,
    /// I/Os that failed (counted, not timed).
    pub errors: u64,
    /// As [`IntervalStats::meta`]: other file-system operations by
    /// [`FsOp::index`]; empty for block workloads.
    pub meta: Vec<WorkerOpStats>,
    /// As [`IntervalStats::requested`].
    pub requested: WorkerOpStats,
    /// As [`IntervalStats::sync`].
    pub sync: WorkerOpStats,
    /// As [`IntervalStats::issue_lag`].
    pub issue_lag: LatencyRecorder,
}

impl WorkerIntervalStats {
    /// A file-system worker's statistics: every kind there from the start,
    /// so an interval in which only reads and writes completed (a long
    /// session, a large create) is still counted and shown as one of a
    /// file-system run.
    pub fn for_fs() -> WorkerIntervalStats {
        let mut s = WorkerIntervalStats::default();
        s.meta.resize_with(FsOp::COUNT, WorkerOpStats::default);
        s
    }

    /// Adds this interval to `into`, histograms exactly.
    pub fn merge_into(&self, into: &mut IntervalStats) {
        self.read.merge_into(&mut into.read);
        self.write.merge_into(&mut into.write);
        self.trim.merge_into(&mut into.trim);
        into.errors += self.errors;
        if into.meta.len() < self.meta.len() {
            into.meta.resize_with(self.meta.len(), OpStats::default);
        }
        for (m, o) in self.meta.iter().zip(into.meta.iter_mut()) {
            m.merge_into(o);
        }
        self.requested.merge_into(&mut into.requested);
        self.sync.merge_into(&mut into.sync);
        self.issue_lag.merge_into(&mut into.issue_lag);
    }

    /// Clears everything for the next interval; see [`LatencyRecorder::reset`].
    pub fn reset(&mut self) {
        self.read.reset();
        self.write.reset();
        self.trim.reset();
        self.errors = 0;
        self.meta.iter_mut().for_each(WorkerOpStats::reset);
        self.requested.reset();
        self.sync.reset();
        self.issue_lag.reset();
    }

    /// The operations the interval's total counts (as [`IntervalStats::ops`]).
    pub fn ops(&self) -> u64 {
        if !self.meta.is_empty() {
            return self.requested.ops;
        }
        self.read.ops + self.write.ops + self.trim.ops
    }

    /// Where one kind of file-system operation is counted.
    pub fn fs_op_mut(&mut self, op: FsOp) -> &mut WorkerOpStats {
        match op {
            FsOp::Read => &mut self.read,
            FsOp::Write => &mut self.write,
            _ => {
                if self.meta.len() < FsOp::COUNT {
                    self.meta.resize_with(FsOp::COUNT, WorkerOpStats::default);
                }
                &mut self.meta[op.index()]
            }
        }
    }

    pub fn heap_bytes(&self) -> usize {
        self.read.heap_bytes()
            + self.write.heap_bytes()
            + self.trim.heap_bytes()
            + self
                .meta
                .iter()
                .map(WorkerOpStats::heap_bytes)
                .sum::<usize>()
            + self.requested.heap_bytes()
            + self.sync.heap_bytes()
            + self.issue_lag.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_same_hdr, latency_value, old_preallocated, old_record};
    use proptest::prelude::*;

    /// Asserts that `got` equals a histogram of `values` recorded directly.
    fn assert_equals_direct(got: &LatencyHistogram, values: &[u64]) {
        let mut want = LatencyHistogram::new();
        for &v in values {
            want.record(v);
        }
        assert_same_hdr(got.inner(), want.inner());
        assert_eq!(got.summary(), want.summary());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// Recording into several recorders and merging them into one
        /// histogram equals recording every value into that histogram.
        #[test]
        fn merged_recorders_equal_direct_recording(
            values in prop::collection::vec((latency_value(), 0usize..4), 0..2000),
            start in prop::collection::vec(latency_value(), 0..50),
        ) {
            let mut recorders = vec![LatencyRecorder::new(); 4];
            for &(v, r) in &values {
                recorders[r].record(v);
            }
            // Into a histogram that already holds values, too.
            let mut merged = LatencyHistogram::new();
            for &v in &start {
                merged.record(v);
            }
            for r in &recorders {
                r.merge_into(&mut merged);
            }
            let all: Vec<u64> = start.iter().copied().chain(values.iter().map(|&(v, _)| v)).collect();
            assert_equals_direct(&merged, &all);
            prop_assert_eq!(recorders.iter().map(LatencyRecorder::count).sum::<u64>(), values.len() as u64);
            // And equals the old preallocated histogram.
            let mut old = old_preallocated();
            for &v in &all {
                old_record(&mut old, v);
            }
            assert_same_hdr(merged.inner(), &old);
        }
    }

    #[test]
    fn a_file_system_interval_with_only_ride_along_writes_stays_one() {
        // A large create spanning intervals: its writes ride along, no
        // operation of the mix completes. The interval is still a
        // file-system one: total 0, the writes in their own kind.
        let mut w = WorkerIntervalStats::for_fs();
        w.fs_op_mut(FsOp::Write).ops += 3;
        w.fs_op_mut(FsOp::Write).bytes += 3 << 20;
        w.fs_op_mut(FsOp::Write).lat.record(1000);
        assert_eq!(w.ops(), 0);
        let mut merged = IntervalStats::default();
        w.merge_into(&mut merged);
        assert_eq!(merged.ops(), 0);
        assert_eq!(merged.total().ops, 0);
        assert_eq!(merged.fs_op(FsOp::Write).map(|s| s.ops), Some(3));
        // A block worker's writes are its total.
        let mut b = WorkerIntervalStats::default();
        b.write.ops = 3;
        assert_eq!(b.ops(), 3);
    }

    #[test]
    fn index_matches_hdr_geometry() {
        let h = old_preallocated();
        let mut values: Vec<u64> = (0..5000).collect();
        for e in 11..64 {
            let p = 1u64 << e;
            values.extend([p - 1, p, p + 1, p + p / 2, p + p / 3]);
        }
        values.push(u64::MAX);
        for v in values {
            let idx = index_of(v);
            let low = lowest_value_of(idx);
            assert_eq!(index_of(low), idx, "v {v}");
            assert!(low <= v, "v {v}");
            if v < (1 << 42) {
                assert_eq!(low, h.lowest_equivalent(v), "v {v}");
            }
            assert!(idx >> BLOCK_MAG < BLOCKS);
        }
        assert_eq!(index_of(u64::MAX) >> BLOCK_MAG, BLOCKS - 1);
    }

    #[test]
    fn u32_overflow_loses_no_count() {
        let v = 123_456; // 123 µs
        let mut r = LatencyRecorder::new();
        r.record(1_000);
        r.preset(v, u32::MAX - 2);
        for _ in 0..5 {
            r.record(v); // wraps once, leaves 2
        }
        r.preset(v, u32::MAX);
        r.record(v); // wraps again, leaves exactly 0 in the u32
        let at_v = 2 * (1u64 << 32);
        assert_eq!(r.count(), at_v + 1);
        let h = r.to_histogram();
        assert_eq!(h.count(), at_v + 1);
        assert_eq!(h.inner().count_at(v), at_v);
        assert_eq!(h.inner().count_at(1_000), 1);
        assert_eq!(h.summary().max, h.inner().highest_equivalent(v));

        // A block whose only count wrapped to 0 still counts as used.
        let mut r = LatencyRecorder::new();
        r.preset(v, u32::MAX);
        r.record(v);
        assert_eq!(r.to_histogram().inner().count_at(v), 1 << 32);
        let used = r.heap_bytes();
        r.reset();
        assert!(r.is_empty());
        assert_eq!(r.heap_bytes(), 4096, "block kept, spill freed (was {used})");
        assert!(r.to_histogram().is_empty());
    }

    #[test]
    fn narrow_latencies_take_little_memory() {
        let old = old_preallocated().distinct_values() * std::mem::size_of::<u64>();
        assert_eq!(old, 270_336);
        let mut r = LatencyRecorder::new();
        assert_eq!(r.heap_bytes(), 0);
        let mut direct = LatencyHistogram::new();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut values = Vec::new();
        for _ in 0..100_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = 50_000_000 + x % 150_000_001; // 50..=200 ms
            r.record(v);
            direct.record(v);
            values.push(v);
        }
        assert_eq!(r.heap_bytes(), 3 * 4096, "buckets 15, 16 and 17");
        assert!(r.heap_bytes() <= 16 * 1024);
        // The auto-resizing histogram holds every bucket from 1 ns up.
        assert_eq!(direct.heap_bytes(), 19 * 1024 * 8);
        assert_equals_direct(&r.to_histogram(), &values);
        assert!(std::mem::size_of::<LatencyRecorder>() <= 512);
    }

    #[test]
    fn reset_frees_blocks_unused_in_the_last_interval() {
        let mut r = LatencyRecorder::new();
        r.record(5_000); // 5 µs
        r.record(100_000_000); // 100 ms
        assert_eq!(r.heap_bytes(), 2 * 4096);
        r.reset();
        assert!(r.is_empty() && r.to_histogram().is_empty());
        assert_eq!(r.heap_bytes(), 2 * 4096, "both had counts: kept, zeroed");
        r.record(100_000_000);
        r.reset();
        assert_eq!(r.heap_bytes(), 4096, "5 µs block freed");
        r.record(100_000_001);
        assert_eq!(r.heap_bytes(), 4096, "no allocation into a kept block");
        assert_equals_direct(&r.to_histogram(), &[100_000_001]);
        r.reset();
        r.reset();
        assert_eq!(r.heap_bytes(), 0);
    }

    #[test]
    fn worker_stats_merge_like_interval_stats() {
        let mut w = WorkerIntervalStats::default();
        let mut direct = IntervalStats::default();
        let mut merged = IntervalStats::default();
        for interval in 0..3u64 {
            for i in 0..1000u64 {
                let lat = 20_000 + (i * 7919 + interval * 13) % 3_000_000;
                let (wo, d) = if i % 3 == 0 {
                    (&mut w.write, &mut direct.write)
                } else {
                    (&mut w.read, &mut direct.read)
                };
                wo.ops += 1;
                wo.bytes += 4096;
                wo.lat.record(lat);
                wo.service_lat.record(lat / 2);
                wo.service_sum_ns += lat / 2;
                d.ops += 1;
                d.bytes += 4096;
                d.lat.record(lat);
                d.service_lat.record(lat / 2);
                d.service_sum_ns += lat / 2;
            }
            w.errors += 2;
            direct.errors += 2;
            assert_eq!(w.ops(), 1000);
            w.merge_into(&mut merged);
            w.reset();
            assert_eq!(
                (w.ops(), w.errors, w.read.bytes, w.write.service_sum_ns),
                (0, 0, 0, 0)
            );
            assert!(w.read.lat.is_empty() && w.write.service_lat.is_empty());
        }
        assert_eq!(merged.errors, 6);
        for (m, d) in [(&merged.read, &direct.read), (&merged.write, &direct.write)] {
            assert_eq!(
                (m.ops, m.bytes, m.service_sum_ns),
                (d.ops, d.bytes, d.service_sum_ns)
            );
            assert_same_hdr(m.lat.inner(), d.lat.inner());
            assert_same_hdr(m.service_lat.inner(), d.service_lat.inner());
            assert_eq!(m.summary(3.0), d.summary(3.0));
        }
        assert!(w.heap_bytes() > 0);
    }
}
