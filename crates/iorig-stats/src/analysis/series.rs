//! Per-interval time series of a run: the write cliff (a lasting drop of
//! IOPS after an initial fast phase, e.g. when an SSD's write cache or clean
//! blocks run out) and outages (intervals in which no I/O completed at all).

use serde::{Deserialize, Serialize};

/// Relative slack for comparing summed timestamps with a duration: interval
/// starts such as 0.1 × k carry rounding of a few ulps, far below 1e-9.
const TIME_SLACK: f64 = 1e-9;

/// One reporting interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// Start of the interval, seconds from the start of the run.
    pub t_s: f64,
    pub duration_s: f64,
    /// I/Os completed in the interval.
    pub ops: u64,
    pub iops: f64,
    /// Longest time between two consecutive completions in the interval, when
    /// the engine measures it.
    pub max_gap_ns: Option<u64>,
}

impl SeriesPoint {
    fn end_s(&self) -> f64 {
        self.t_s + self.duration_s
    }
}

/// A lasting drop of IOPS found by [`detect_write_cliff`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WriteCliff {
    /// Start of the first interval of the drop.
    pub onset_t_s: f64,
    /// Mean IOPS over the baseline.
    pub level_before_iops: f64,
    /// Mean IOPS from the onset to the end of the series.
    pub level_after_iops: f64,
    /// How far `level_after_iops` lies below `level_before_iops`, in percent.
    pub drop_pct: f64,
}

/// A run of consecutive intervals without a single completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Outage {
    pub start_t_s: f64,
    pub end_t_s: f64,
    pub duration_s: f64,
}

/// The outcome of [`detect_outages`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutageReport {
    /// Intervals with zero completions.
    pub outage_intervals: usize,
    pub total_outage_s: f64,
    /// 0 without outages.
    pub longest_outage_s: f64,
    /// Start of the longest (first, among equals) outage.
    pub longest_start_t_s: Option<f64>,
    pub outages: Vec<Outage>,
    /// Largest [`SeriesPoint::max_gap_ns`] of the series; finer than whole
    /// intervals, and `None` when no interval carries the figure.
    pub longest_gap_ns: Option<u64>,
    /// Where that gap began, seconds from the start of the run, when known.
    #[serde(default)]
    pub longest_gap_start_t_s: Option<f64>,
}

/// Looks for a write cliff in `points` (time order).
///
/// The baseline is the mean IOPS over the first `baseline_s` seconds; for a
/// series shorter than 2 × `baseline_s` it is the first quarter of the
/// intervals (at least one), so that enough of the series remains after it.
/// The onset is the start of the first interval after the baseline from which
/// every interval for `sustain_s` seconds runs more than `drop_pct` % below
/// the baseline; a shorter dip is noise or a stall, not a cliff. `sustain_s`
/// defaults to the larger of a quarter of the baseline actually used and
/// three (median) intervals. Means are weighted by interval duration.
pub fn detect_write_cliff(
    points: &[SeriesPoint],
    baseline_s: f64,
    drop_pct: f64,
    sustain_s: Option<f64>,
) -> Option<WriteCliff> {
    let first = points.first()?;
    let last = points.last()?;
    let t0 = first.t_s;
    let n_base = if last.end_s() - t0 >= 2.0 * baseline_s {
        points
            .iter()
            .take_while(|p| p.t_s < t0 + baseline_s)
            .count()
            .max(1)
    } else {
        (points.len() / 4).max(1)
    };
    let base = &points[..n_base];
    let before = mean_iops(base);
    // Without a positive baseline there is nothing to fall from.
    if before <= 0.0 || !before.is_finite() {
        return None;
    }
    let base_span = base.last().map_or(0.0, |p| p.end_s() - t0);
    let sustain = sustain_s.unwrap_or_else(|| (base_span / 4.0).max(3.0 * median_duration(points)));
    // Multiplied out so that round figures give an exact limit.
    let limit = before * (100.0 - drop_pct) / 100.0;

    let mut run_start: Option<usize> = None;
    for (i, p) in points.iter().enumerate().skip(n_base) {
        if p.iops >= limit {
            run_start = None;
            continue;
        }
        let s = *run_start.get_or_insert(i);
        let start_t = points[s].t_s;
        if p.end_s() - start_t >= sustain * (1.0 - TIME_SLACK) {
            let after = mean_iops(&points[s..]);
            return Some(WriteCliff {
                onset_t_s: start_t,
                level_before_iops: before,
                level_after_iops: after,
                drop_pct: 100.0 * (before - after) / before,
            });
        }
    }
    None
}

/// Finds the runs of consecutive intervals with zero completions.
pub fn detect_outages(points: &[SeriesPoint]) -> OutageReport {
    let mut outages: Vec<Outage> = Vec::new();
    let mut outage_intervals = 0;
    // Whether the previous interval was part of the outage being built.
    let mut in_outage = false;
    for p in points {
        if p.ops != 0 {
            in_outage = false;
            continue;
        }
        outage_intervals += 1;
        match outages.last_mut() {
            Some(o) if in_outage => {
                o.end_t_s = p.end_s();
                o.duration_s = o.end_t_s - o.start_t_s;
            }
            _ => outages.push(Outage {
                start_t_s: p.t_s,
                end_t_s: p.end_s(),
                duration_s: p.duration_s,
            }),
        }
        in_outage = true;
    }
    let longest = outages
        .iter()
        .fold(None, |acc: Option<&Outage>, o| match acc {
            Some(a) if a.duration_s >= o.duration_s => Some(a),
            _ => Some(o),
        });
    OutageReport {
        outage_intervals,
        // + 0.0: an empty f64 sum is -0.0.
        total_outage_s: outages.iter().map(|o| o.duration_s).sum::<f64>() + 0.0,
        longest_outage_s: longest.map_or(0.0, |o| o.duration_s),
        longest_start_t_s: longest.map(|o| o.start_t_s),
        longest_gap_ns: points.iter().filter_map(|p| p.max_gap_ns).max(),
        longest_gap_start_t_s: None,
        outages,
    }
}

/// Duration-weighted mean IOPS; the plain mean if no interval has a duration.
fn mean_iops(points: &[SeriesPoint]) -> f64 {
    let total_s: f64 = points.iter().map(|p| p.duration_s).sum();
    if total_s > 0.0 {
        points.iter().map(|p| p.iops * p.duration_s).sum::<f64>() / total_s
    } else if points.is_empty() {
        0.0
    } else {
        points.iter().map(|p| p.iops).sum::<f64>() / points.len() as f64
    }
}

/// The median interval duration: robust to a short last interval.
fn median_duration(points: &[SeriesPoint]) -> f64 {
    let mut d: Vec<f64> = points.iter().map(|p| p.duration_s).collect();
    d.sort_by(f64::total_cmp);
    d.get(d.len() / 2).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One-second intervals with the given IOPS.
    fn series(iops: &[f64]) -> Vec<SeriesPoint> {
        iops.iter()
            .enumerate()
            .map(|(i, &v)| SeriesPoint {
                t_s: i as f64,
                duration_s: 1.0,
                ops: v as u64,
                iops: v,
                max_gap_ns: None,
            })
            .collect()
    }

    /// Deterministic ±50 around `level` (steps of 10).
    fn noisy(level: f64, n: usize) -> Vec<f64> {
        (0..n)
            .map(|i| level + 10.0 * ((i * 37) % 11) as f64 - 50.0)
            .collect()
    }

    // Integer IOPS over whole seconds: sums are exact, one division each.
    fn near(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn flat_noisy_series_has_no_cliff() {
        let s = series(&noisy(1000.0, 300));
        assert_eq!(detect_write_cliff(&s, 60.0, 30.0, None), None);
    }

    #[test]
    fn step_down_is_a_cliff() {
        let mut v = vec![10_000.0; 100];
        v.extend(vec![5_000.0; 200]);
        let c = detect_write_cliff(&series(&v), 60.0, 30.0, None).unwrap();
        assert_eq!(c.onset_t_s, 100.0);
        assert!(near(c.level_before_iops, 10_000.0));
        assert!(near(c.level_after_iops, 5_000.0));
        assert!(near(c.drop_pct, 50.0));
    }

    #[test]
    fn drop_must_exceed_the_percentage() {
        // 7000 is exactly 30 % below 10 000: not *more* than 30 %.
        let mut v = vec![10_000.0; 100];
        v.extend(vec![7_000.0; 200]);
        assert_eq!(detect_write_cliff(&series(&v), 60.0, 30.0, None), None);
        assert!(detect_write_cliff(&series(&v), 60.0, 29.0, None).is_some());
    }

    #[test]
    fn dip_shorter_than_sustain_is_not_a_cliff() {
        // Default sustain: max(60 / 4, 3 × 1 s) = 15 s.
        let mut v = vec![1_000.0; 200];
        v[100..114].fill(100.0); // 14 s
        assert_eq!(detect_write_cliff(&series(&v), 60.0, 30.0, None), None);
        v[114] = 100.0; // 15 s: now it qualifies
        let c = detect_write_cliff(&series(&v), 60.0, 30.0, None).unwrap();
        assert_eq!(c.onset_t_s, 100.0);
        // 15 s at 100 and 85 s at 1000 after the onset.
        assert!(near(
            c.level_after_iops,
            (15.0 * 100.0 + 85.0 * 1000.0) / 100.0
        ));
    }

    #[test]
    fn a_dip_before_the_cliff_is_skipped() {
        let mut v = noisy(10_000.0, 300);
        v[70..80].fill(0.0); // 10 s stall
        v[150..].fill(4_000.0);
        let c = detect_write_cliff(&series(&v), 60.0, 30.0, None).unwrap();
        assert_eq!(c.onset_t_s, 150.0);
        assert!(near(c.level_after_iops, 4_000.0));
        // Explicit sustain shorter than the stall finds the stall instead.
        let c = detect_write_cliff(&series(&v), 60.0, 30.0, Some(10.0)).unwrap();
        assert_eq!(c.onset_t_s, 70.0);
    }

    #[test]
    fn short_series_uses_first_quarter_as_baseline() {
        // 40 s < 2 × 60 s: baseline = first 10 intervals (mean 1000), sustain
        // = max(10 / 4, 3) = 3 s.
        let mut v = vec![1_000.0; 20];
        v.extend(vec![400.0; 20]);
        let c = detect_write_cliff(&series(&v), 60.0, 30.0, None).unwrap();
        assert_eq!(c.onset_t_s, 20.0);
        assert!(near(c.level_before_iops, 1000.0));
        assert!(near(c.drop_pct, 60.0));
        // The last 2 s alone are too short to confirm a drop.
        let mut v = vec![1_000.0; 38];
        v.extend([400.0, 400.0]);
        assert_eq!(detect_write_cliff(&series(&v), 60.0, 30.0, None), None);
    }

    #[test]
    fn fractional_intervals_reach_the_sustain_window() {
        // 0.1 s intervals: sustain 3 × 0.1 s must be met despite rounding of
        // 0.1 × k. Baseline: first 10 of 40 intervals.
        let pts: Vec<SeriesPoint> = (0..40)
            .map(|i| {
                let iops = if i < 37 { 1000.0 } else { 100.0 };
                SeriesPoint {
                    t_s: i as f64 * 0.1,
                    duration_s: 0.1,
                    ops: 100,
                    iops,
                    max_gap_ns: None,
                }
            })
            .collect();
        let c = detect_write_cliff(&pts, 60.0, 30.0, None).unwrap();
        assert!(near(c.onset_t_s, 3.7));
    }

    #[test]
    fn empty_or_zero_series_has_no_cliff() {
        assert_eq!(detect_write_cliff(&[], 60.0, 30.0, None), None);
        assert_eq!(
            detect_write_cliff(&series(&[0.0; 300]), 60.0, 30.0, None),
            None
        );
    }

    #[test]
    fn outages_are_runs_of_empty_intervals() {
        let mut s = series(&[5.0, 0.0, 0.0, 5.0, 0.0, 5.0, 5.0, 0.0, 0.0, 0.0]);
        s[0].max_gap_ns = Some(2_000_000);
        s[3].max_gap_ns = Some(1_500_000_000);
        let r = detect_outages(&s);
        assert_eq!(r.outage_intervals, 6);
        let spans: Vec<(f64, f64, f64)> = r
            .outages
            .iter()
            .map(|o| (o.start_t_s, o.end_t_s, o.duration_s))
            .collect();
        assert_eq!(spans, [(1.0, 3.0, 2.0), (4.0, 5.0, 1.0), (7.0, 10.0, 3.0)]);
        assert_eq!(r.total_outage_s, 6.0);
        assert_eq!(r.longest_outage_s, 3.0);
        assert_eq!(r.longest_start_t_s, Some(7.0));
        assert_eq!(r.longest_gap_ns, Some(1_500_000_000));
    }

    #[test]
    fn no_outages() {
        let r = detect_outages(&series(&[1.0, 2.0, 3.0]));
        assert_eq!(r.outage_intervals, 0);
        assert!(r.outages.is_empty());
        assert_eq!(r.longest_outage_s, 0.0);
        assert_eq!(r.longest_start_t_s, None);
        assert_eq!(r.longest_gap_ns, None);
        assert_eq!(detect_outages(&[]).outages, vec![]);
    }
}
