//! HDR latency histograms in nanoseconds.

use crate::StatsError;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::Serialize;

/// Highest latency tracked: one hour. Longer I/Os are clamped to it and still
/// counted (see [`CLAMP_FROM_NS`] for the exact edge).
pub const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;
/// Values from here up are recorded as [`MAX_TRACKABLE_NS`]. This is where the
/// counts array of a 1 ns..1 h histogram ends (its last bucket spans 2^41 to
/// 2^42 ns, about 73 min): the preallocated histogram iorig used before kept
/// values up to there at their own value and clamped only beyond, and the
/// auto-resizing one keeps exactly that rule so that every figure is unchanged.
pub(crate) const CLAMP_FROM_NS: u64 = 1 << 42;
/// Three significant digits: 0.1 % resolution at every magnitude.
const SIG_FIGS: u8 = 3;

/// The value a latency is recorded as: zero becomes 1 ns, anything from
/// [`CLAMP_FROM_NS`] up becomes [`MAX_TRACKABLE_NS`].
#[inline]
fn clamp(lat_ns: u64) -> u64 {
    if lat_ns >= CLAMP_FROM_NS {
        MAX_TRACKABLE_NS
    } else {
        lat_ns.max(1)
    }
}

/// A latency histogram in nanoseconds (1 ns to 1 h, 3 significant digits).
///
/// The counts array grows with the largest value recorded (auto-resizing HDR
/// histogram, lowest discernible value 1 ns), so an empty histogram takes
/// 16 KiB instead of the 264 KiB of one preallocated up to an hour; the bucket
/// geometry is the same, so figures, merges and the stored bytes are too.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    hist: Histogram<u64>,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    pub fn new() -> Self {
        LatencyHistogram { hist: empty_hist() }
    }

    /// Records one latency; values beyond one hour are clamped, zero becomes 1 ns.
    #[inline]
    pub fn record(&mut self, lat_ns: u64) {
        self.record_n(lat_ns, 1);
    }

    /// Records `n` latencies of `lat_ns`, clamped like [`LatencyHistogram::record`].
    #[inline]
    pub(crate) fn record_n(&mut self, lat_ns: u64, n: u64) {
        let v = clamp(lat_ns);
        // Growing to cover v <= 1 h only fails where a usize cannot index the
        // counts (16-bit targets); saturate there rather than panic or drop it.
        if self.hist.record_n(v, n).is_err() {
            self.hist.saturating_record_n(v, n);
        }
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Same geometry and self grows as needed, so add cannot fail short of
        // a usize too small to index; re-record on that path instead of
        // panicking.
        self.add_hist(&other.hist);
    }

    /// Adds the counts of an HDR histogram of iorig's geometry (lowest
    /// discernible value 1, 3 significant digits, values below
    /// [`CLAMP_FROM_NS`]).
    fn add_hist(&mut self, other: &Histogram<u64>) {
        if self.hist.add(other).is_err() {
            for v in other.iter_recorded() {
                self.record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
    }

    /// Clears every count; the counts array keeps its size.
    pub fn reset(&mut self) {
        self.hist.reset();
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
    }

    /// Bytes of the counts array (for tests and memory accounting).
    pub fn heap_bytes(&self) -> usize {
        self.hist.distinct_values() * std::mem::size_of::<u64>()
    }

    pub fn value_at_quantile(&self, q: f64) -> u64 {
        self.hist.value_at_quantile(q)
    }

    pub fn inner(&self) -> &Histogram<u64> {
        &self.hist
    }

    /// The histogram in HDR V2 form (uncompressed), as other HDR tools read it.
    /// Used to store the merged histogram of a step so that later merges
    /// across steps or runs are exact.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // V2 only fails for counts that do not fit an i64 or a write error;
        // u64 counts of real runs stay far below 2^63 and a Vec cannot fail
        // to grow short of aborting. Should it fail anyway, the empty result
        // is refused by `from_bytes`, so no wrong histogram is ever read back.
        if V2Serializer::new().serialize(&self.hist, &mut out).is_err() {
            out.clear();
        }
        out
    }

    /// Reads a histogram written by [`LatencyHistogram::to_bytes`] (or any HDR
    /// V2 histogram), including those stored before the histogram became
    /// auto-resizing (1 ns..1 h bounds). One of iorig's geometry is used as it
    /// was read (set to grow like ours; no copy: a controller reads one per
    /// host and interval); one of other geometry is re-recorded into iorig's,
    /// so every histogram merges exactly with every other.
    pub fn from_bytes(bytes: &[u8]) -> Result<LatencyHistogram, StatsError> {
        let mut reader = bytes;
        let read: Histogram<u64> =
            Deserializer::new()
                .deserialize(&mut reader)
                .map_err(|e| StatsError::BadHistogram {
                    why: format!("{e:?}"),
                })?;
        let ours = read.low() == 1 && read.sigfig() == SIG_FIGS && read.max() < CLAMP_FROM_NS;
        // Sized to its values (as ours grow): taken as it is, no copy; an
        // old preallocated 1 h one is copied into one sized to its values.
        if ours && read.high() <= 4 * read.max().max(4096) {
            let mut read = read;
            read.auto(true);
            return Ok(LatencyHistogram { hist: read });
        }
        let mut h = LatencyHistogram::new();
        if ours {
            h.add_hist(&read);
            return Ok(h);
        }
        for v in read.iter_recorded() {
            h.record_n(v.value_iterated_to(), v.count_at_value());
        }
        Ok(h)
    }

    /// min, mean, stddev, max and the standard percentiles; all zero when empty.
    pub fn summary(&self) -> LatSummary {
        if self.hist.is_empty() {
            return LatSummary::default();
        }
        let h = &self.hist;
        // One walk over the recorded buckets for mean and deviation, one
        // scan of the counts for the five percentiles: a controller
        // summarises every host's interval, so this is hot. The arithmetic
        // is hdrhistogram's own (`mean`, `stdev`, `value_at_quantile`) in
        // the same order, so the figures are the same to the bit
        // (`one_pass_summary_equals_the_crates_own_figures`).
        let total = h.len() as f64;
        let buckets: Vec<(f64, f64)> = h
            .iter_recorded()
            .map(|v| {
                (
                    h.median_equivalent(v.value_iterated_to()) as f64,
                    v.count_at_value() as f64,
                )
            })
            .collect();
        let mean = buckets
            .iter()
            .fold(0.0_f64, |acc, (m, c)| acc + m * c / total);
        let dev = buckets.iter().fold(0.0_f64, |acc, (m, c)| {
            let d = m - mean;
            acc + (d * d) * c
        });
        let mut q = h.value_at_quantiles([0.50, 0.90, 0.99, 0.999, 0.9999]);
        let mut next = || q.next().unwrap_or(0);
        LatSummary {
            min: h.min(),
            mean: mean.round() as u64,
            stddev: (dev / total).sqrt().round() as u64,
            max: h.max(),
            p50: next(),
            p90: next(),
            p99: next(),
            p99_9: next(),
            p99_99: next(),
        }
    }
}

/// An empty auto-resizing histogram of iorig's geometry.
fn empty_hist() -> Histogram<u64> {
    // hdrhistogram only refuses sigfig > 5, so this cannot fail; no other
    // geometry would merge exactly, so there is nothing sensible to fall back to.
    match Histogram::new(SIG_FIGS) {
        Ok(h) => h,
        Err(_) => std::process::abort(),
    }
}

/// Latency figures of one histogram, integer nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LatSummary {
    pub min: u64,
    pub mean: u64,
    pub stddev: u64,
    pub max: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{assert_same_hdr, latency_value, old_preallocated, old_record};
    use proptest::prelude::*;

    proptest! {
        // Each case walks two 1 ns..1 h histograms, slow in unoptimised tests.
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// The one-pass summary gives hdrhistogram's own mean, deviation
        /// and percentiles to the bit.
        #[test]
        fn one_pass_summary_equals_the_crates_own_figures(
            values in prop::collection::vec(latency_value(), 1..3000),
        ) {
            let mut h = LatencyHistogram::new();
            for &v in &values {
                h.record(v);
            }
            let s = h.summary();
            let x = h.inner();
            prop_assert_eq!(s.mean, x.mean().round() as u64);
            prop_assert_eq!(s.stddev, x.stdev().round() as u64);
            prop_assert_eq!(s.min, x.min());
            prop_assert_eq!(s.max, x.max());
            prop_assert_eq!(s.p50, x.value_at_quantile(0.50));
            prop_assert_eq!(s.p90, x.value_at_quantile(0.90));
            prop_assert_eq!(s.p99, x.value_at_quantile(0.99));
            prop_assert_eq!(s.p99_9, x.value_at_quantile(0.999));
            prop_assert_eq!(s.p99_99, x.value_at_quantile(0.9999));
        }

        /// The auto-resizing histogram gives exactly the figures of the
        /// preallocated 1 ns..1 h one it replaced, for any values, including
        /// zero, values past an hour and u64::MAX.
        #[test]
        fn same_figures_as_the_old_preallocated_histogram(
            values in prop::collection::vec(latency_value(), 0..3000),
        ) {
            let mut old = old_preallocated();
            let mut new = LatencyHistogram::new();
            for &v in &values {
                old_record(&mut old, v);
                new.record(v);
            }
            assert_same_hdr(new.inner(), &old);
            let mut old_summary = LatencyHistogram::new();
            old_summary.hist = old;
            prop_assert_eq!(new.summary(), old_summary.summary());
        }

        /// Bytes stored by the old code (V2 of a 1 ns..1 h histogram) decode to
        /// the same histogram and merge with new ones as the old ones did.
        #[test]
        fn old_stored_bytes_decode_and_merge(
            a in prop::collection::vec(latency_value(), 0..1000),
            b in prop::collection::vec(latency_value(), 0..1000),
        ) {
            let mut old_a = old_preallocated();
            let mut old_all = old_preallocated();
            let mut new_b = LatencyHistogram::new();
            for &v in &a {
                old_record(&mut old_a, v);
                old_record(&mut old_all, v);
            }
            for &v in &b {
                new_b.record(v);
                old_record(&mut old_all, v);
            }
            let mut bytes = Vec::new();
            V2Serializer::new().serialize(&old_a, &mut bytes).expect("serialize");
            let decoded = LatencyHistogram::from_bytes(&bytes).expect("decode");
            assert_same_hdr(decoded.inner(), &old_a);
            // Old into new, new into old, and through the new bytes.
            let mut merged = decoded.clone();
            merged.merge(&new_b);
            assert_same_hdr(merged.inner(), &old_all);
            let mut merged = new_b.clone();
            merged.merge(&decoded);
            assert_same_hdr(merged.inner(), &old_all);
            let again = LatencyHistogram::from_bytes(&merged.to_bytes()).expect("decode new");
            assert_same_hdr(again.inner(), &old_all);
        }
    }

    #[test]
    fn counts_array_follows_the_largest_value() {
        let old = old_preallocated().distinct_values() * 8;
        assert_eq!(old, 270_336);
        let mut h = LatencyHistogram::new();
        assert_eq!(h.heap_bytes(), 16_384, "empty: bucket 0 only");
        h.record(150_000); // 150 µs
        assert!(h.heap_bytes() <= 90 * 1024, "{}", h.heap_bytes());
        h.record(200_000_000); // 200 ms
        assert!(h.heap_bytes() < old, "{}", h.heap_bytes());
        // Decoding an old 1 h histogram sizes the result to its values.
        let mut old_h = old_preallocated();
        old_record(&mut old_h, 5_000);
        let mut bytes = Vec::new();
        V2Serializer::new()
            .serialize(&old_h, &mut bytes)
            .expect("serialize");
        let back = LatencyHistogram::from_bytes(&bytes).expect("decode");
        assert!(back.heap_bytes() <= 32 * 1024, "{}", back.heap_bytes());
    }

    #[test]
    fn percentiles_of_known_data() {
        let mut h = LatencyHistogram::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert_eq!(s.min, 1000);
        // 3 significant digits: within 0.1 %.
        let near = |a: u64, b: u64| (a as f64 - b as f64).abs() <= b as f64 * 0.001;
        assert!(near(s.p50, 5_000_000), "{s:?}");
        assert!(near(s.p99, 9_900_000), "{s:?}");
        assert!(near(s.max, 10_000_000), "{s:?}");
        assert!(near(s.mean, 5_000_500), "{s:?}");
        assert!(s.min <= s.p50 && s.p50 <= s.p90 && s.p90 <= s.p99 && s.p99 <= s.p99_9);
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for v in 0..5000u64 {
            let x = 1000 + v * 37 % 90_000;
            if v % 3 == 0 {
                a.record(x)
            } else {
                b.record(x)
            }
            all.record(x);
        }
        a.merge(&b);
        assert_eq!(a.summary(), all.summary());
    }

    #[test]
    fn bytes_round_trip_keeps_every_figure() {
        let mut h = LatencyHistogram::new();
        for v in 0..20_000u64 {
            h.record(500 + v * v % 7_000_000);
        }
        h.record(MAX_TRACKABLE_NS);
        let back = LatencyHistogram::from_bytes(&h.to_bytes()).expect("decode");
        assert_eq!(back.summary(), h.summary());
        assert_eq!(back.count(), h.count());
        for q in [0.0, 0.25, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0] {
            assert_eq!(back.value_at_quantile(q), h.value_at_quantile(q), "q {q}");
        }
        // An empty histogram survives too.
        let empty = LatencyHistogram::from_bytes(&LatencyHistogram::new().to_bytes())
            .expect("decode empty");
        assert!(empty.is_empty());
    }

    #[test]
    fn foreign_bounds_are_re_recorded_into_ours() {
        let mut other: Histogram<u64> = Histogram::new_with_bounds(1, 1_000_000, 2).unwrap();
        other.record(1500).unwrap();
        other.record_n(900_000, 3).unwrap();
        let mut bytes = Vec::new();
        V2Serializer::new().serialize(&other, &mut bytes).unwrap();
        let h = LatencyHistogram::from_bytes(&bytes).unwrap();
        assert_eq!(h.count(), 4);
        assert_eq!((h.inner().low(), h.inner().sigfig()), (1, SIG_FIGS));
        // Each value lands within the other histogram's 2-digit bucket.
        assert!(
            (1490..=1510).contains(&h.summary().min),
            "{:?}",
            h.summary()
        );
        let mut ours = LatencyHistogram::new();
        ours.merge(&h);
        assert_eq!(ours.count(), 4);
    }

    #[test]
    fn garbage_bytes_are_an_error() {
        assert!(LatencyHistogram::from_bytes(&[]).is_err());
        assert!(LatencyHistogram::from_bytes(b"not a histogram").is_err());
        let mut cut = LatencyHistogram::new();
        cut.record(1234);
        let bytes = cut.to_bytes();
        assert!(LatencyHistogram::from_bytes(&bytes[..bytes.len() / 2]).is_err());
    }

    #[test]
    fn huge_values_clamp_instead_of_failing() {
        let mut h = LatencyHistogram::new();
        h.record(u64::MAX);
        h.record(0);
        assert_eq!(h.count(), 2);
        assert_eq!(h.summary().min, 1);
    }
}
