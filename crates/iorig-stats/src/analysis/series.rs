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
    /// The host's CPU busy in the interval (user, system and steal), percent
    /// of all CPUs, when sampled.
    pub cpu_busy_pct: Option<f64>,
    /// The busiest worker thread's time on a CPU or waiting for one, percent
    /// of the interval (100: it never waited for the storage), when known.
    pub worker_busy_pct: Option<f64>,
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

/// A lasting drop of IOPS while the load generator, not the storage, was
/// the limit: the host's CPU or one of iorig's workers was busy for at least
/// [`GENERATOR_BUSY_PCT`] of some interval of the drop. Reported as that,
/// never as a write cliff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorDip {
    pub start_t_s: f64,
    pub end_t_s: f64,
    pub level_before_iops: f64,
    /// Mean IOPS over the dip.
    pub level_during_iops: f64,
    /// The highest host CPU busy and worker busy of the dip's intervals.
    pub cpu_busy_max_pct: f64,
    pub worker_busy_max_pct: f64,
}

/// What [`detect_write_cliff`] concluded.
#[derive(Debug, Clone, PartialEq)]
pub enum CliffVerdict {
    /// The series is shorter than twice the baseline: no verdict.
    TooShort {
        run_s: f64,
        needed_s: f64,
    },
    /// No lasting drop, or none that stayed down.
    NoCliff,
    Cliff(WriteCliff),
    /// The only lasting drops came while the generator was the limit.
    GeneratorLimited(GeneratorDip),
}

/// Host CPU or worker busy (percent) from which an interval's IOPS are the
/// generator's limit, not the storage's (as the generator-bound verdict).
pub const GENERATOR_BUSY_PCT: f64 = 90.0;

/// Share of the intervals from the onset to the end that may be back at or
/// above the limit for the drop to count as lasting.
pub const CLIFF_MAX_BACK_SHARE: f64 = 0.10;

/// Looks for a write cliff in `points` (time order).
///
/// No verdict on a series shorter than 2 × `baseline_s`: there is no
/// baseline and enough after it to compare. The baseline is the mean IOPS
/// over the first `baseline_s` seconds; the limit lies `drop_pct` % below
/// it. A candidate onset is the start of a run of intervals below the limit
/// lasting at least `sustain_s` (default: the larger of a quarter of the
/// baseline and three median intervals). It is a cliff when, from the onset
/// to the end of the series, at most [`CLIFF_MAX_BACK_SHARE`] of the
/// intervals are back at or above the limit and the mean over that stretch
/// (the level after) lies more than `drop_pct` % below the baseline: the
/// stated drop satisfies the stated rule. A run during which the host CPU or
/// a worker was at least [`GENERATOR_BUSY_PCT`] busy is the generator's
/// limit, not a cliff; candidates that fail are passed over and the search
/// goes on after them. Means are weighted by interval duration.
pub fn detect_write_cliff(
    points: &[SeriesPoint],
    baseline_s: f64,
    drop_pct: f64,
    sustain_s: Option<f64>,
) -> CliffVerdict {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return CliffVerdict::TooShort {
            run_s: 0.0,
            needed_s: 2.0 * baseline_s,
        };
    };
    let t0 = first.t_s;
    let run_s = last.end_s() - t0;
    if run_s < 2.0 * baseline_s * (1.0 - TIME_SLACK) {
        return CliffVerdict::TooShort {
            run_s,
            needed_s: 2.0 * baseline_s,
        };
    }
    let n_base = points
        .iter()
        .take_while(|p| p.t_s < t0 + baseline_s * (1.0 - TIME_SLACK))
        .count()
        .max(1);
    let base = &points[..n_base];
    let before = mean_iops(base);
    // Without a positive baseline there is nothing to fall from.
    if before <= 0.0 || !before.is_finite() {
        return CliffVerdict::NoCliff;
    }
    let base_span = base.last().map_or(0.0, |p| p.end_s() - t0);
    let sustain = sustain_s.unwrap_or_else(|| (base_span / 4.0).max(3.0 * median_duration(points)));
    // Multiplied out so that round figures give an exact limit.
    let limit = before * (100.0 - drop_pct) / 100.0;
    let busy = |p: &SeriesPoint| {
        p.cpu_busy_pct.is_some_and(|c| c >= GENERATOR_BUSY_PCT)
            || p.worker_busy_pct.is_some_and(|w| w >= GENERATOR_BUSY_PCT)
    };

    let mut generator: Option<GeneratorDip> = None;
    let mut i = n_base;
    while i < points.len() {
        if points[i].iops >= limit {
            i += 1;
            continue;
        }
        // A run of intervals below the limit from `s`.
        let s = i;
        let mut e = s;
        while e < points.len() && points[e].iops < limit {
            e += 1;
        }
        let start_t = points[s].t_s;
        let lasting = points[e - 1].end_s() - start_t >= sustain * (1.0 - TIME_SLACK);
        if !lasting {
            i = e;
            continue;
        }
        let dip = &points[s..e];
        if dip.iter().any(busy) {
            generator.get_or_insert_with(|| GeneratorDip {
                start_t_s: start_t,
                end_t_s: points[e - 1].end_s(),
                level_before_iops: before,
                level_during_iops: mean_iops(dip),
                cpu_busy_max_pct: dip
                    .iter()
                    .filter_map(|p| p.cpu_busy_pct)
                    .fold(0.0, f64::max),
                worker_busy_max_pct: dip
                    .iter()
                    .filter_map(|p| p.worker_busy_pct)
                    .fold(0.0, f64::max),
            });
            i = e;
            continue;
        }
        let tail = &points[s..];
        let back = tail.iter().filter(|p| p.iops >= limit).count();
        let after = mean_iops(tail);
        let drop = 100.0 * (before - after) / before;
        if back as f64 <= CLIFF_MAX_BACK_SHARE * tail.len() as f64 && drop > drop_pct {
            return CliffVerdict::Cliff(WriteCliff {
                onset_t_s: start_t,
                level_before_iops: before,
                level_after_iops: after,
                drop_pct: drop,
            });
        }
        i = e;
    }
    match generator {
        Some(g) => CliffVerdict::GeneratorLimited(g),
        None => CliffVerdict::NoCliff,
    }
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
                cpu_busy_pct: None,
                worker_busy_pct: None,
            })
            .collect()
    }

    fn cliff(v: CliffVerdict) -> Option<WriteCliff> {
        match v {
            CliffVerdict::Cliff(c) => Some(c),
            _ => None,
        }
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
        assert_eq!(
            detect_write_cliff(&s, 60.0, 30.0, None),
            CliffVerdict::NoCliff
        );
    }

    #[test]
    fn step_down_is_a_cliff() {
        let mut v = vec![10_000.0; 100];
        v.extend(vec![5_000.0; 200]);
        let c = cliff(detect_write_cliff(&series(&v), 60.0, 30.0, None)).unwrap();
        assert_eq!(c.onset_t_s, 100.0);
        assert!(near(c.level_before_iops, 10_000.0));
        assert!(near(c.level_after_iops, 5_000.0));
        assert!(near(c.drop_pct, 50.0));
    }

    #[test]
    fn drop_must_exceed_the_percentage() {
        // 6990 is more than 30 % below 10 000, 7000 exactly 30 %: not *more*.
        let mut v = vec![10_000.0; 100];
        v.extend(vec![7_000.0; 200]);
        assert_eq!(
            cliff(detect_write_cliff(&series(&v), 60.0, 30.0, None)),
            None
        );
        assert!(cliff(detect_write_cliff(&series(&v), 60.0, 29.0, None)).is_some());
    }

    #[test]
    fn a_dip_that_comes_back_is_not_a_cliff() {
        // Default sustain: max(60 / 4, 3 × 1 s) = 15 s. A 20 s dip, then
        // back up for 80 s: 80 % of the stretch from the onset is above the
        // limit, and its mean is 16 % down, not the 30 % the rule needs.
        let mut v = vec![1_000.0; 200];
        v[100..120].fill(200.0);
        assert_eq!(
            detect_write_cliff(&series(&v), 60.0, 30.0, None),
            CliffVerdict::NoCliff
        );
        // Down to the end but for 10 % of the intervals: a cliff, whose
        // stated drop (the mean from the onset) meets the rule.
        let mut v = vec![1_000.0; 200];
        v[100..].fill(200.0);
        for k in [135, 140, 145, 150, 155, 160, 165, 170, 175, 180] {
            v[k] = 1_000.0;
        }
        let c = cliff(detect_write_cliff(&series(&v), 60.0, 30.0, None)).unwrap();
        assert_eq!(c.onset_t_s, 100.0);
        assert!(near(
            c.level_after_iops,
            (90.0 * 200.0 + 10.0 * 1000.0) / 100.0
        ));
        assert!(c.drop_pct > 30.0);
        // One more interval back up (11 %): from t=100 it came back; the
        // drop that stayed down is the last stretch, from t=181.
        v[125] = 1_000.0;
        let c = cliff(detect_write_cliff(&series(&v), 60.0, 30.0, None)).unwrap();
        assert_eq!(c.onset_t_s, 181.0);
    }

    #[test]
    fn dip_shorter_than_sustain_is_not_a_cliff() {
        let mut v = vec![1_000.0; 200];
        v[186..200].fill(100.0); // 14 s to the end
        assert_eq!(
            cliff(detect_write_cliff(&series(&v), 60.0, 30.0, None)),
            None
        );
        v[185] = 100.0; // 15 s: now it qualifies
        let c = cliff(detect_write_cliff(&series(&v), 60.0, 30.0, None)).unwrap();
        assert_eq!(c.onset_t_s, 185.0);
        assert!(near(c.level_after_iops, 100.0));
    }

    #[test]
    fn a_dip_before_the_cliff_is_skipped() {
        let mut v = noisy(10_000.0, 300);
        v[70..80].fill(0.0); // 10 s stall
        v[150..].fill(4_000.0);
        let c = cliff(detect_write_cliff(&series(&v), 60.0, 30.0, None)).unwrap();
        assert_eq!(c.onset_t_s, 150.0);
        assert!(near(c.level_after_iops, 4_000.0));
        // A sustain shorter than the stall makes the stall a candidate; it
        // came back, so the search goes on to the real cliff.
        let c = cliff(detect_write_cliff(&series(&v), 60.0, 30.0, Some(10.0))).unwrap();
        assert_eq!(c.onset_t_s, 150.0);
    }

    #[test]
    fn no_verdict_under_twice_the_baseline() {
        // A 15 s run that fell for good: too short to judge against a 60 s
        // baseline, whatever it did.
        let mut v = vec![1_000.0; 5];
        v.extend(vec![100.0; 10]);
        assert_eq!(
            detect_write_cliff(&series(&v), 60.0, 30.0, None),
            CliffVerdict::TooShort {
                run_s: 15.0,
                needed_s: 120.0
            }
        );
        let v = vec![1_000.0; 120];
        assert_eq!(
            detect_write_cliff(&series(&v), 60.0, 30.0, None),
            CliffVerdict::NoCliff
        );
    }

    #[test]
    fn a_drop_while_the_generator_was_busy_is_the_generators() {
        // The 70 % read run of the report: IOPS dip while the host CPU is
        // at 98 %. Here the dip lasts: still the generator, not the storage.
        let mut s = series(&{
            let mut v = vec![1_000.0; 100];
            v.extend(vec![500.0; 100]);
            v
        });
        for p in &mut s[100..] {
            p.cpu_busy_pct = Some(98.0);
        }
        match detect_write_cliff(&s, 60.0, 30.0, None) {
            CliffVerdict::GeneratorLimited(g) => {
                assert_eq!((g.start_t_s, g.end_t_s), (100.0, 200.0));
                assert!(near(g.level_during_iops, 500.0));
                assert_eq!(g.cpu_busy_max_pct, 98.0);
            }
            other => panic!("{other:?}"),
        }
        // A worker busy all the time is the same.
        for p in &mut s[100..] {
            p.cpu_busy_pct = Some(40.0);
            p.worker_busy_pct = Some(99.0);
        }
        assert!(matches!(
            detect_write_cliff(&s, 60.0, 30.0, None),
            CliffVerdict::GeneratorLimited(_)
        ));
        // Neither busy: a cliff.
        for p in &mut s[100..] {
            p.worker_busy_pct = Some(20.0);
        }
        assert!(cliff(detect_write_cliff(&s, 60.0, 30.0, None)).is_some());
    }

    #[test]
    fn fractional_intervals_reach_the_sustain_window() {
        // 0.1 s intervals over 12 s, a 6 s baseline: sustain 3 × 0.1 s
        // must be met despite rounding of 0.1 × k.
        let pts: Vec<SeriesPoint> = (0..120)
            .map(|i| {
                let iops = if i < 117 { 1000.0 } else { 100.0 };
                SeriesPoint {
                    t_s: i as f64 * 0.1,
                    duration_s: 0.1,
                    ops: 100,
                    iops,
                    max_gap_ns: None,
                    cpu_busy_pct: None,
                    worker_busy_pct: None,
                }
            })
            .collect();
        let c = cliff(detect_write_cliff(&pts, 6.0, 30.0, Some(0.3))).unwrap();
        assert!(near(c.onset_t_s, 11.7));
    }

    #[test]
    fn empty_or_zero_series_has_no_cliff() {
        assert!(matches!(
            detect_write_cliff(&[], 60.0, 30.0, None),
            CliffVerdict::TooShort { .. }
        ));
        assert_eq!(
            detect_write_cliff(&series(&[0.0; 300]), 60.0, 30.0, None),
            CliffVerdict::NoCliff
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
