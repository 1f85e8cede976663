//! Helpers shared by the histogram and recorder tests.

use crate::hist::{CLAMP_FROM_NS, MAX_TRACKABLE_NS};
use hdrhistogram::Histogram;
use proptest::prelude::*;

/// Quantiles compared between histograms that must be identical.
const QUANTILES: [f64; 14] = [
    0.0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999, 0.99999, 0.999999, 1.0,
];

/// Asserts that two HDR histograms hold the same count at every value and
/// give the same figures, bit for bit (their counts arrays may differ in size).
pub fn assert_same_hdr(got: &Histogram<u64>, want: &Histogram<u64>) {
    assert_eq!(got.len(), want.len(), "count");
    let pairs = |h: &Histogram<u64>| -> Vec<(u64, u64)> {
        h.iter_recorded()
            .map(|v| (v.value_iterated_to(), v.count_at_value()))
            .collect()
    };
    assert_eq!(pairs(got), pairs(want), "counts at values");
    if want.is_empty() {
        assert!(got.is_empty());
        return;
    }
    assert_eq!(got.min(), want.min(), "min");
    assert_eq!(got.min_nz(), want.min_nz(), "min_nz");
    assert_eq!(got.max(), want.max(), "max");
    assert_eq!(got.mean().to_bits(), want.mean().to_bits(), "mean");
    assert_eq!(got.stdev().to_bits(), want.stdev().to_bits(), "stdev");
    for q in QUANTILES {
        assert_eq!(got.value_at_quantile(q), want.value_at_quantile(q), "q {q}");
    }
}

/// The histogram iorig used before it became auto-resizing: 1 ns..1 h,
/// preallocated, values recorded with `saturating_record(v.max(1))`.
pub fn old_preallocated() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, 3).expect("old bounds")
}

pub fn old_record(h: &mut Histogram<u64>, v: u64) {
    h.saturating_record(v.max(1));
}

/// Latencies of every magnitude, weighted towards the edges of HDR buckets
/// and of the tracked range.
pub fn latency_value() -> impl Strategy<Value = u64> {
    let edges = prop::sample::select(vec![
        0,
        1,
        2,
        1023,
        1024,
        1025,
        2047,
        2048,
        2049,
        4095,
        4096,
        4097,
        MAX_TRACKABLE_NS - 1,
        MAX_TRACKABLE_NS,
        MAX_TRACKABLE_NS + 1,
        CLAMP_FROM_NS - 1,
        CLAMP_FROM_NS,
        CLAMP_FROM_NS + 1,
        u64::MAX - 1,
        u64::MAX,
    ]);
    prop_oneof![
        edges,
        // Powers of two and their neighbours.
        (0u32..64, -1i64..=1).prop_map(|(e, d)| (1u64 << e).wrapping_add_signed(d)),
        // Log-uniform over the whole u64 range.
        (0u32..64, any::<u64>()).prop_map(|(s, r)| r >> s),
        // Typical storage latencies: 1 µs .. 100 ms.
        1_000u64..100_000_000,
    ]
}
