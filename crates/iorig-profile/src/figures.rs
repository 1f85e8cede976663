//! The figures of one device (or the total) over one interval, from counter
//! deltas, as `iostat -x` computes them, each named with its unit.

use iorig_stats::DiskStat;
use serde::{Deserialize, Serialize};

/// Bytes in a diskstats sector (always 512, whatever the device's own).
pub const SECTOR_BYTES: f64 = 512.0;

/// Figures over an interval. `None` where a figure has no value: an average
/// size or await without I/O of that kind, a read share without I/O, discard
/// and flush figures the kernel does not report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Figures {
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
    pub total_iops: Option<f64>,
    pub read_bw_bytes_per_s: Option<f64>,
    pub write_bw_bytes_per_s: Option<f64>,
    pub total_bw_bytes_per_s: Option<f64>,
    pub read_avg_size_bytes: Option<f64>,
    pub write_avg_size_bytes: Option<f64>,
    pub read_pct_ops: Option<f64>,
    pub read_pct_bytes: Option<f64>,
    /// Average I/Os in flight (`aqu-sz`).
    pub queue_depth: Option<f64>,
    pub read_await_ms: Option<f64>,
    pub write_await_ms: Option<f64>,
    /// Share of the time with I/O in flight; for the total, the busiest device.
    pub util_pct: Option<f64>,
    pub discard_iops: Option<f64>,
    pub discard_bw_bytes_per_s: Option<f64>,
    pub flush_iops: Option<f64>,
}

/// A figure of [`Figures`], by the name the JSON, the CSV and rule sets
/// give it; [`Figure::ALL`] is every one, in the order of [`Figures`].
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Figure {
    ReadIops,
    WriteIops,
    TotalIops,
    ReadBwBytesPerS,
    WriteBwBytesPerS,
    TotalBwBytesPerS,
    ReadAvgSizeBytes,
    WriteAvgSizeBytes,
    ReadPctOps,
    ReadPctBytes,
    QueueDepth,
    ReadAwaitMs,
    WriteAwaitMs,
    UtilPct,
    DiscardIops,
    DiscardBwBytesPerS,
    FlushIops,
}

impl Figure {
    /// Every figure, in the order of [`Figures`].
    pub const ALL: &'static [Figure] = <Figure as strum::VariantArray>::VARIANTS;

    /// The figure's name (`read_iops`).
    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// Counter deltas over a span of time, possibly summed over devices.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Delta {
    pub stat: DiskStat,
    pub elapsed_ms: f64,
    pub has_discard: bool,
    pub has_flush: bool,
}

impl Delta {
    /// Adds another device's delta over the same span.
    pub fn add_device(&mut self, other: &Delta) {
        let (a, b) = (&mut self.stat, &other.stat);
        a.read_ios += b.read_ios;
        a.read_merges += b.read_merges;
        a.read_sectors += b.read_sectors;
        a.read_ticks_ms += b.read_ticks_ms;
        a.write_ios += b.write_ios;
        a.write_merges += b.write_merges;
        a.write_sectors += b.write_sectors;
        a.write_ticks_ms += b.write_ticks_ms;
        a.in_flight += b.in_flight;
        a.io_ticks_ms += b.io_ticks_ms;
        a.time_in_queue_ms += b.time_in_queue_ms;
        a.discard_ios += b.discard_ios;
        a.discard_merges += b.discard_merges;
        a.discard_sectors += b.discard_sectors;
        a.discard_ticks_ms += b.discard_ticks_ms;
        a.flush_ios += b.flush_ios;
        a.flush_ticks_ms += b.flush_ticks_ms;
        if self.elapsed_ms == 0.0 {
            self.elapsed_ms = other.elapsed_ms;
            self.has_discard = other.has_discard;
            self.has_flush = other.has_flush;
        } else {
            self.has_discard &= other.has_discard;
            self.has_flush &= other.has_flush;
        }
    }

    /// Adds the same device's delta over the next span (for whole-run means).
    pub fn add_span(&mut self, other: &Delta) {
        let elapsed = self.elapsed_ms + other.elapsed_ms;
        let first = self.elapsed_ms == 0.0;
        self.add_device(other);
        self.elapsed_ms = elapsed;
        if first {
            self.has_discard = other.has_discard;
            self.has_flush = other.has_flush;
        }
    }
}

fn ratio(num: f64, den: f64) -> Option<f64> {
    (den > 0.0).then(|| num / den)
}

impl Figures {
    /// The figures of a delta. A zero-length span gives no figures at all.
    pub fn of(d: &Delta) -> Figures {
        if d.elapsed_ms <= 0.0 {
            return Figures::default();
        }
        let s = &d.stat;
        // Counts × 1000 / ms: one rounding, so a rate that is a whole number
        // (35 MB/s from 280 MB in 8 s) comes out exactly, as rule boundaries need.
        let rate = |v: f64| v * 1e3 / d.elapsed_ms;
        let per_s = |v: u64| Some(rate(v as f64));
        let (r_ops, w_ops) = (s.read_ios as f64, s.write_ios as f64);
        let r_bytes = s.read_sectors as f64 * SECTOR_BYTES;
        let w_bytes = s.write_sectors as f64 * SECTOR_BYTES;
        Figures {
            read_iops: per_s(s.read_ios),
            write_iops: per_s(s.write_ios),
            total_iops: per_s(s.read_ios + s.write_ios),
            read_bw_bytes_per_s: Some(rate(r_bytes)),
            write_bw_bytes_per_s: Some(rate(w_bytes)),
            total_bw_bytes_per_s: Some(rate(r_bytes + w_bytes)),
            read_avg_size_bytes: ratio(r_bytes, r_ops),
            write_avg_size_bytes: ratio(w_bytes, w_ops),
            read_pct_ops: ratio(100.0 * r_ops, r_ops + w_ops),
            read_pct_bytes: ratio(100.0 * r_bytes, r_bytes + w_bytes),
            queue_depth: Some(s.time_in_queue_ms as f64 / d.elapsed_ms),
            read_await_ms: ratio(s.read_ticks_ms as f64, r_ops),
            write_await_ms: ratio(s.write_ticks_ms as f64, w_ops),
            util_pct: Some((100.0 * s.io_ticks_ms as f64 / d.elapsed_ms).min(100.0)),
            discard_iops: d.has_discard.then(|| rate(s.discard_ios as f64)),
            discard_bw_bytes_per_s: d
                .has_discard
                .then(|| rate(s.discard_sectors as f64 * SECTOR_BYTES)),
            flush_iops: d.has_flush.then(|| rate(s.flush_ios as f64)),
        }
    }

    /// One figure.
    pub fn get(&self, figure: Figure) -> Option<f64> {
        match figure {
            Figure::ReadIops => self.read_iops,
            Figure::WriteIops => self.write_iops,
            Figure::TotalIops => self.total_iops,
            Figure::ReadBwBytesPerS => self.read_bw_bytes_per_s,
            Figure::WriteBwBytesPerS => self.write_bw_bytes_per_s,
            Figure::TotalBwBytesPerS => self.total_bw_bytes_per_s,
            Figure::ReadAvgSizeBytes => self.read_avg_size_bytes,
            Figure::WriteAvgSizeBytes => self.write_avg_size_bytes,
            Figure::ReadPctOps => self.read_pct_ops,
            Figure::ReadPctBytes => self.read_pct_bytes,
            Figure::QueueDepth => self.queue_depth,
            Figure::ReadAwaitMs => self.read_await_ms,
            Figure::WriteAwaitMs => self.write_await_ms,
            Figure::UtilPct => self.util_pct,
            Figure::DiscardIops => self.discard_iops,
            Figure::DiscardBwBytesPerS => self.discard_bw_bytes_per_s,
            Figure::FlushIops => self.flush_iops,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn iostat_figures_from_a_delta() {
        let d = Delta {
            stat: DiskStat {
                read_ios: 300,
                read_sectors: 300 * 8,
                read_ticks_ms: 600,
                write_ios: 100,
                write_sectors: 100 * 32,
                write_ticks_ms: 500,
                io_ticks_ms: 1500,
                time_in_queue_ms: 4000,
                discard_ios: 2,
                discard_sectors: 2048,
                flush_ios: 10,
                ..Default::default()
            },
            elapsed_ms: 2000.0,
            has_discard: true,
            has_flush: false,
        };
        let f = Figures::of(&d);
        assert_eq!(f.read_iops, Some(150.0));
        assert_eq!(f.write_iops, Some(50.0));
        assert_eq!(f.total_iops, Some(200.0));
        assert_eq!(f.read_bw_bytes_per_s, Some(300.0 * 4096.0 / 2.0));
        assert_eq!(f.write_bw_bytes_per_s, Some(100.0 * 16384.0 / 2.0));
        assert_eq!(f.read_avg_size_bytes, Some(4096.0));
        assert_eq!(f.write_avg_size_bytes, Some(16384.0));
        assert_eq!(f.read_pct_ops, Some(75.0));
        assert_eq!(
            f.read_pct_bytes,
            Some(100.0 * 1_228_800.0 / (1_228_800.0 + 1_638_400.0))
        );
        assert_eq!(f.queue_depth, Some(2.0));
        assert_eq!(f.read_await_ms, Some(2.0));
        assert_eq!(f.write_await_ms, Some(5.0));
        assert_eq!(f.util_pct, Some(75.0));
        assert_eq!(f.discard_iops, Some(1.0));
        assert_eq!(f.discard_bw_bytes_per_s, Some(512.0 * 1024.0));
        assert_eq!(f.flush_iops, None, "not reported");
        for &figure in Figure::ALL {
            assert_eq!(
                f.get(figure).is_some(),
                figure != Figure::FlushIops,
                "{figure}"
            );
        }
        // The names are the serialised field names, in order.
        let keys: Vec<String> = match serde_json::to_value(f).unwrap() {
            serde_json::Value::Object(m) => m.keys().cloned().collect(),
            _ => Vec::new(),
        };
        let mut names: Vec<String> = Figure::ALL.iter().map(|f| f.name().to_owned()).collect();
        names.sort();
        let mut keys = keys;
        keys.sort();
        assert_eq!(keys, names);
    }

    #[test]
    fn no_io_means_no_sizes_shares_or_awaits() {
        let f = Figures::of(&Delta {
            elapsed_ms: 1000.0,
            ..Default::default()
        });
        assert_eq!(f.total_iops, Some(0.0));
        assert_eq!(f.write_avg_size_bytes, None);
        assert_eq!(f.read_pct_ops, None);
        assert_eq!(f.read_await_ms, None);
        assert_eq!(f.util_pct, Some(0.0));
    }
}
