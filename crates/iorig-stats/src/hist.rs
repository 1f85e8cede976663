//! HDR latency histograms in nanoseconds.

use crate::StatsError;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};
use hdrhistogram::Histogram;
use serde::Serialize;

/// Highest latency tracked exactly: one hour. Longer I/Os are clamped to it and
/// still counted.
pub const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;
/// Three significant digits: 0.1 % resolution at every magnitude.
const SIG_FIGS: u8 = 3;

/// A latency histogram in nanoseconds (1 ns to 1 h, 3 significant digits).
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
        // The bounds are constants that hdrhistogram accepts, so this cannot fail;
        // fall back to an auto-resizing histogram rather than panic regardless.
        let hist = Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, SIG_FIGS)
            .or_else(|_| Histogram::new(SIG_FIGS))
            .unwrap_or_else(|_| unreachable_hist());
        LatencyHistogram { hist }
    }

    /// Records one latency; values beyond one hour are clamped, zero becomes 1 ns.
    #[inline]
    pub fn record(&mut self, lat_ns: u64) {
        self.hist.saturating_record(lat_ns.max(1));
    }

    pub fn merge(&mut self, other: &LatencyHistogram) {
        // Both have identical bounds, so add cannot fail; saturate on the
        // impossible path instead of panicking.
        if self.hist.add(&other.hist).is_err() {
            for v in other.hist.iter_recorded() {
                self.hist
                    .saturating_record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
    }

    pub fn reset(&mut self) {
        self.hist.reset();
    }

    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    pub fn is_empty(&self) -> bool {
        self.hist.is_empty()
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
    /// V2 histogram). One with other bounds than iorig's is re-recorded into
    /// iorig's, so every histogram merges exactly with every other.
    pub fn from_bytes(bytes: &[u8]) -> Result<LatencyHistogram, StatsError> {
        let mut reader = bytes;
        let read: Histogram<u64> =
            Deserializer::new()
                .deserialize(&mut reader)
                .map_err(|e| StatsError::BadHistogram {
                    why: format!("{e:?}"),
                })?;
        if read.low() == 1 && read.high() == MAX_TRACKABLE_NS && read.sigfig() == SIG_FIGS {
            return Ok(LatencyHistogram { hist: read });
        }
        let mut h = LatencyHistogram::new();
        for v in read.iter_recorded() {
            h.hist
                .saturating_record_n(v.value_iterated_to().max(1), v.count_at_value());
        }
        Ok(h)
    }

    /// min, mean, stddev, max and the standard percentiles; all zero when empty.
    pub fn summary(&self) -> LatSummary {
        if self.hist.is_empty() {
            return LatSummary::default();
        }
        let h = &self.hist;
        LatSummary {
            min: h.min(),
            mean: h.mean().round() as u64,
            stddev: h.stdev().round() as u64,
            max: h.max(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p99_9: h.value_at_quantile(0.999),
            p99_99: h.value_at_quantile(0.9999),
        }
    }
}

fn unreachable_hist() -> Histogram<u64> {
    // hdrhistogram only refuses sigfig > 5 or bad bounds; 3 and auto-resize are valid.
    match Histogram::new(1) {
        Ok(h) => h,
        Err(_) => std::process::abort(),
    }
}

/// Latency figures of one histogram, integer nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
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
        assert_eq!(h.inner().high(), MAX_TRACKABLE_NS);
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
