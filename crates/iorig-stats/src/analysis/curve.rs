//! IOPS–latency curve analysis: from the steps of a load sweep, the highest
//! IOPS the storage sustains under a latency limit, and where the curve bends
//! from "more load, more IOPS" to "more load, only more latency".

use serde::{Deserialize, Serialize};

/// The latency at which the factor knee is placed, as a multiple of the
/// low-load latency.
pub const DEFAULT_KNEE_FACTOR: f64 = 2.0;

/// Normalized distances below this are rounding of a straight line, not a
/// bend: the normalized axes span 1, and f64 arithmetic on them is exact to
/// about 1e-16, so 1e-9 leaves a wide margin without hiding any real knee.
const MIN_BEND: f64 = 1e-9;

/// How far (percent) a paced step's achieved IOPS may be from its requested
/// rate and still count as having run at that rate.
pub const RATE_TOLERANCE_PCT: f64 = 3.0;

/// One step of a load sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurvePoint {
    pub iops: f64,
    pub mean_lat_ns: f64,
    pub p99_lat_ns: f64,
    /// The rate the step was paced at; None for an uncontrolled step.
    #[serde(default)]
    pub requested_iops: Option<f64>,
    /// Latency at the curve's `threshold_percentile`, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct_lat_ns: Option<f64>,
    /// Standard errors of the step's mean and p99 latency: the standard
    /// deviation of its intervals' figures over √intervals (None: fewer
    /// than two intervals, or not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_lat_se_ns: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_lat_se_ns: Option<f64>,
}

/// The standard error of the mean of `values`: their sample standard
/// deviation over √n; None for fewer than two values.
pub fn standard_error(values: &[f64]) -> Option<f64> {
    let n = values.len();
    if n < 2 {
        return None;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
    Some((var / n as f64).sqrt())
}

impl CurvePoint {
    /// Achieved against requested IOPS, percent (−10 = 10 % short); None
    /// for an uncontrolled step.
    pub fn rate_error_pct(&self) -> Option<f64> {
        let r = self.requested_iops.filter(|r| *r > 0.0)?;
        Some(100.0 * (self.iops / r - 1.0))
    }

    /// A paced step that ran at its rate (within [`RATE_TOLERANCE_PCT`]).
    /// Only such a step shows that a rate is sustained at a latency: an
    /// uncontrolled step's latency runs from issue, not from a schedule,
    /// and a step that fell short (or overshot) did not run the load asked.
    pub fn met_rate(&self) -> bool {
        self.rate_error_pct()
            .is_some_and(|e| e.abs() <= RATE_TOLERANCE_PCT)
    }
}

/// A point where the curve bends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Knee {
    /// Index into the points as given (load order), not the sorted order.
    pub index: usize,
    pub iops: f64,
    /// Mean latency of that point.
    pub lat_ns: f64,
}

/// The outcome of [`analyze_curve`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveAnalysis {
    /// Highest IOPS of any point; 0 without points.
    pub max_iops: f64,
    /// The latency limit `best_under_*` refer to.
    pub threshold_ns: f64,
    /// Highest IOPS with mean latency ≤ `threshold_ns`, interpolated, from
    /// paced steps that met their rate only.
    pub best_under_mean: Option<f64>,
    /// The step (index into the points as given) `best_under_mean` stands on.
    #[serde(default)]
    pub best_under_mean_point: Option<usize>,
    /// Highest IOPS with p99 latency ≤ `threshold_ns`, as `best_under_mean`.
    pub best_under_p99: Option<f64>,
    #[serde(default)]
    pub best_under_p99_point: Option<usize>,
    /// Highest IOPS with the latency at the points' percentile
    /// ([`CurvePoint::pct_lat_ns`]) ≤ `threshold_ns`, as `best_under_mean`;
    /// `None` also when the points carry no such latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_under_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_under_pct_point: Option<usize>,
    /// The point past the threshold each best was interpolated toward
    /// (index as given): the best lies between `*_point` and this one and
    /// is no step's measured IOPS. `None`: the best is `*_point`'s own
    /// IOPS (no point above it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_under_mean_toward: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_under_p99_toward: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_under_pct_toward: Option<usize>,
    /// Paced steps whose achieved IOPS was more than
    /// [`RATE_TOLERANCE_PCT`] off their requested rate (indices as given).
    #[serde(default)]
    pub off_rate_points: Vec<usize>,
    /// Paced steps whose mean or p99 latency exceeds the next higher-rate
    /// step's by more than two standard errors of the difference
    /// (2·√(se₁² + se₂²)): slower at less load, a disturbance rather than
    /// the storage's curve (indices as given).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub non_monotone_points: Vec<usize>,
    /// The multiple of the low-load latency used for `knee`.
    pub knee_factor: f64,
    /// First point (by IOPS) whose mean latency exceeds `knee_factor` × the
    /// mean latency of the lowest-IOPS point.
    pub knee: Option<Knee>,
    /// Point of mean latency vs IOPS farthest below the chord from the
    /// lowest- to the highest-IOPS point, on axes normalized to 0..1
    /// (Kneedle); `None` for fewer than three points or a curve that does
    /// not bend upwards.
    pub curvature_knee: Option<Knee>,
}

/// Analyses the steps of a sweep, given in load order. Points with a
/// non-finite figure are ignored; the rest are sorted by IOPS.
///
/// `best_under_*` takes the highest-IOPS point whose latency is within the
/// threshold and, if a point with higher IOPS exists (it is then over the
/// threshold), interpolates linearly in latency between the two. So every
/// point under → the highest IOPS; every point over → `None`. Taking the
/// highest point under, rather than stopping at the first point over, credits
/// a step that did reach that IOPS within the limit even if a noisy step
/// below it did not.
pub fn analyze_curve(points: &[CurvePoint], threshold_ns: f64, knee_factor: f64) -> CurveAnalysis {
    let mut sorted: Vec<(usize, &CurvePoint)> = points
        .iter()
        .enumerate()
        .filter(|(_, p)| {
            p.iops.is_finite()
                && p.mean_lat_ns.is_finite()
                && p.p99_lat_ns.is_finite()
                && p.pct_lat_ns.is_none_or(f64::is_finite)
        })
        .collect();
    // Stable, so equal IOPS keep their load order.
    sorted.sort_by(|a, b| a.1.iops.total_cmp(&b.1.iops));

    let max_iops = sorted.last().map_or(0.0, |(_, p)| p.iops);
    let paced: Vec<(usize, &CurvePoint)> = sorted
        .iter()
        .copied()
        .filter(|(_, p)| p.met_rate())
        .collect();
    let best_mean = best_under(&paced, threshold_ns, |p| p.mean_lat_ns);
    let best_p99 = best_under(&paced, threshold_ns, |p| p.p99_lat_ns);
    // Judged only when every point has it: a point without would read as
    // latency 0 (always under) or be dropped (shifting the interpolation).
    let best_pct = if paced.iter().all(|(_, p)| p.pct_lat_ns.is_some()) {
        best_under(&paced, threshold_ns, |p| p.pct_lat_ns.unwrap_or(f64::MAX))
    } else {
        None
    };
    let mut off_rate_points: Vec<usize> = points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.requested_iops.is_some() && !p.met_rate())
        .map(|(i, _)| i)
        .collect();
    off_rate_points.sort_unstable();

    // A knee stands on a step that ran the load asked of it: not on one that
    // missed its rate.
    let on_rate: Vec<(usize, &CurvePoint)> = sorted
        .iter()
        .copied()
        .filter(|(_, p)| p.requested_iops.is_none() || p.met_rate())
        .collect();
    let knee = on_rate.first().and_then(|(_, low)| {
        let limit = knee_factor * low.mean_lat_ns;
        on_rate
            .iter()
            .find(|(_, p)| p.mean_lat_ns > limit)
            .map(|&(index, p)| knee_at(index, p))
    });

    CurveAnalysis {
        max_iops,
        threshold_ns,
        best_under_mean: best_mean.map(|b| b.0),
        best_under_mean_point: best_mean.map(|b| b.1),
        best_under_p99: best_p99.map(|b| b.0),
        best_under_p99_point: best_p99.map(|b| b.1),
        best_under_pct: best_pct.map(|b| b.0),
        best_under_pct_point: best_pct.map(|b| b.1),
        best_under_mean_toward: best_mean.and_then(|b| b.2),
        best_under_p99_toward: best_p99.and_then(|b| b.2),
        best_under_pct_toward: best_pct.and_then(|b| b.2),
        off_rate_points,
        non_monotone_points: non_monotone(points),
        knee_factor,
        knee,
        curvature_knee: curvature_knee(&on_rate),
    }
}

/// The paced steps slower than the next higher-rate step beyond their
/// spread (see [`CurveAnalysis::non_monotone_points`]); indices as given.
fn non_monotone(points: &[CurvePoint]) -> Vec<usize> {
    let mut paced: Vec<(usize, &CurvePoint, f64)> = points
        .iter()
        .enumerate()
        .filter_map(|(i, p)| p.requested_iops.map(|r| (i, p, r)))
        .filter(|(_, p, r)| r.is_finite() && p.mean_lat_ns.is_finite() && p.p99_lat_ns.is_finite())
        .collect();
    paced.sort_by(|a, b| a.2.total_cmp(&b.2));
    let beyond = |a: f64, b: f64, se_a: Option<f64>, se_b: Option<f64>| match (se_a, se_b) {
        (Some(x), Some(y)) => a - b > 2.0 * (x * x + y * y).sqrt(),
        _ => false,
    };
    let mut out: Vec<usize> = paced
        .windows(2)
        .filter(|w| {
            let (lo, hi) = (w[0].1, w[1].1);
            beyond(
                lo.mean_lat_ns,
                hi.mean_lat_ns,
                lo.mean_lat_se_ns,
                hi.mean_lat_se_ns,
            ) || beyond(
                lo.p99_lat_ns,
                hi.p99_lat_ns,
                lo.p99_lat_se_ns,
                hi.p99_lat_se_ns,
            )
        })
        .map(|w| w[0].0)
        .collect();
    out.sort_unstable();
    out
}

fn knee_at(index: usize, p: &CurvePoint) -> Knee {
    Knee {
        index,
        iops: p.iops,
        lat_ns: p.mean_lat_ns,
    }
}

/// The best IOPS under the threshold, the point (index as given) it
/// stands on, and the point past the threshold it was interpolated toward.
fn best_under(
    sorted: &[(usize, &CurvePoint)],
    threshold_ns: f64,
    lat: impl Fn(&CurvePoint) -> f64,
) -> Option<(f64, usize, Option<usize>)> {
    let i = sorted.iter().rposition(|(_, p)| lat(p) <= threshold_ns)?;
    let (index, under) = sorted[i];
    let Some(&(over_index, over)) = sorted.get(i + 1) else {
        return Some((under.iops, index, None));
    };
    // `over` is past the threshold and `under` within it, so the latency
    // difference is positive.
    let frac = (threshold_ns - lat(under)) / (lat(over) - lat(under));
    Some((
        under.iops + frac * (over.iops - under.iops),
        index,
        Some(over_index),
    ))
}

fn curvature_knee(sorted: &[(usize, &CurvePoint)]) -> Option<Knee> {
    if sorted.len() < 3 {
        return None;
    }
    let (x_lo, x_hi) = span(sorted.iter().map(|(_, p)| p.iops));
    let (y_lo, y_hi) = span(sorted.iter().map(|(_, p)| p.mean_lat_ns));
    if x_hi <= x_lo || y_hi <= y_lo {
        return None;
    }
    // Normalizing makes the result independent of units: otherwise IOPS in
    // the 1e5 range would swamp latencies and the chord distance would only
    // measure IOPS.
    let norm = |p: &CurvePoint| {
        (
            (p.iops - x_lo) / (x_hi - x_lo),
            (p.mean_lat_ns - y_lo) / (y_hi - y_lo),
        )
    };
    let (x0, y0) = norm(sorted.first()?.1);
    let (x1, y1) = norm(sorted.last()?.1);
    if x1 <= x0 {
        return None;
    }
    let chord_slope = (y1 - y0) / (x1 - x0);
    // Vertical distance below the chord; the perpendicular distance is this
    // times a constant, so both have the same maximum.
    let (best, bend) = sorted[1..sorted.len() - 1]
        .iter()
        .map(|&(index, p)| {
            let (x, y) = norm(p);
            ((index, p), y0 + chord_slope * (x - x0) - y)
        })
        .fold(
            None,
            |acc: Option<((usize, &CurvePoint), f64)>, cur| match acc {
                Some(a) if a.1 >= cur.1 => Some(a),
                _ => Some(cur),
            },
        )?;
    (bend > MIN_BEND).then(|| knee_at(best.0, best.1))
}

fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
        (lo.min(v), hi.max(v))
    })
}

/// A refinement stops once the bracket around the answer is this narrow,
/// percent of the max: closer than one step's own noise.
pub const REFINE_ENOUGH_PCT: f64 = 1.0;

/// The rate of a curve's next refinement step: halfway between the highest
/// paced rate that held the target (it met its rate, and the judged
/// latency, `pct_lat_ns` when `at_pct` or else p99, stayed within
/// `threshold_ns`) and the lowest rate above it that did not (0 when none
/// held). Like fio's latency_target search, it narrows on the edge; unlike
/// it, the load stays open-loop at a known rate. Err says why no step is
/// needed: no rate above the held ones failed, or the bracket is already
/// within [`REFINE_ENOUGH_PCT`] of `max_iops`.
pub fn refine_rate(
    points: &[CurvePoint],
    threshold_ns: f64,
    at_pct: bool,
    max_iops: f64,
) -> Result<f64, String> {
    let judged = |p: &CurvePoint| {
        if at_pct {
            p.pct_lat_ns
        } else {
            Some(p.p99_lat_ns)
        }
    };
    let held = |p: &CurvePoint| p.met_rate() && judged(p).is_some_and(|l| l <= threshold_ns);
    let low = points
        .iter()
        .filter(|p| held(p))
        .filter_map(|p| p.requested_iops)
        .fold(0.0, f64::max);
    let Some(high) = points
        .iter()
        .filter(|p| !held(p))
        .filter_map(|p| p.requested_iops)
        .filter(|r| *r > low)
        .min_by(f64::total_cmp)
    else {
        return Err(format!(
            "the latency target held at every rate tried (up to {low:.0} IOPS): nothing to refine"
        ));
    };
    if high - low <= (max_iops * REFINE_ENOUGH_PCT / 100.0).max(1.0) {
        return Err(format!(
            "the answer lies between {low:.0} and {high:.0} IOPS, within {REFINE_ENOUGH_PCT} % of the max: refined enough"
        ));
    }
    Ok(((low + high) / 2.0).round())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: f64 = 1_000_000.0;

    #[test]
    fn refinement_halves_the_bracket_around_the_answer() {
        // 100k max: 50k held 0.8 ms, 70k missed with 1.4 ms.
        let mut pts = vec![
            pt(10_000.0, 0.2, 0.5),
            pt(50_000.0, 0.4, 0.8),
            pt(70_000.0, 0.6, 1.4),
        ];
        assert_eq!(refine_rate(&pts, MS, false, 100_000.0), Ok(60_000.0));
        // 60k held: the next is 65k; then 62.5k missing (its rate too).
        pts.push(pt(60_000.0, 0.5, 0.95));
        assert_eq!(refine_rate(&pts, MS, false, 100_000.0), Ok(65_000.0));
        let mut short = pt(62_500.0, 0.5, 0.9);
        short.iops = 58_000.0;
        pts.push(pt(65_000.0, 0.5, 1.1));
        assert_eq!(refine_rate(&pts, MS, false, 100_000.0), Ok(62_500.0));
        pts.push(short);
        assert_eq!(refine_rate(&pts, MS, false, 100_000.0), Ok(61_250.0));
        // Within 1 % of the max: enough.
        pts.push(pt(61_250.0, 0.5, 0.97));
        assert_eq!(refine_rate(&pts, MS, false, 100_000.0), Ok(61_875.0));
        pts.push(pt(61_875.0, 0.5, 1.01));
        let e = refine_rate(&pts, MS, false, 100_000.0).unwrap_err();
        assert!(e.contains("between 61250 and 61875 IOPS"), "{e}");
        // Judged at the curve's percentile when it has one.
        let mut at = pt(30_000.0, 0.2, 0.5);
        at.pct_lat_ns = Some(2.0 * MS);
        let low = pt(10_000.0, 0.1, 0.3);
        let mut low = low;
        low.pct_lat_ns = Some(0.5 * MS);
        assert_eq!(refine_rate(&[low, at], MS, true, 100_000.0), Ok(20_000.0));
    }

    #[test]
    fn refinement_needs_a_rate_that_failed() {
        let pts = [pt(50_000.0, 0.4, 0.8), pt(100_000.0, 0.6, 0.9)];
        let e = refine_rate(&pts, MS, false, 100_000.0).unwrap_err();
        assert!(
            e.contains("held at every rate tried (up to 100000 IOPS)"),
            "{e}"
        );
        // None held: the search goes below the lowest rate.
        let pts = [pt(10_000.0, 2.0, 3.0)];
        assert_eq!(refine_rate(&pts, MS, false, 100_000.0), Ok(5_000.0));
        // An unpaced point (the max) is no evidence either way.
        let mut max = pt(100_000.0, 5.0, 9.0);
        max.requested_iops = None;
        let e = refine_rate(&[max], MS, false, 100_000.0).unwrap_err();
        assert!(e.contains("nothing to refine"), "{e}");
    }

    /// A paced point that met its rate exactly.
    fn pt(iops: f64, mean_ms: f64, p99_ms: f64) -> CurvePoint {
        CurvePoint {
            iops,
            mean_lat_ns: mean_ms * MS,
            p99_lat_ns: p99_ms * MS,
            requested_iops: Some(iops),
            pct_lat_ns: None,
            mean_lat_se_ns: None,
            p99_lat_se_ns: None,
        }
    }

    fn with_se(p: CurvePoint, mean_se_ms: f64, p99_se_ms: f64) -> CurvePoint {
        CurvePoint {
            mean_lat_se_ns: Some(mean_se_ms * MS),
            p99_lat_se_ns: Some(p99_se_ms * MS),
            ..p
        }
    }

    #[test]
    fn a_step_slower_than_the_next_beyond_their_spread_is_non_monotone() {
        // The report's curve: the 80 % step's mean 35 ms, the 90 % step's
        // 0.85 ms. "best <= 1 ms" stands, but beside a warning.
        let pts = [
            with_se(pt(10e3, 0.3, 0.6), 0.01, 0.05),
            with_se(pt(50e3, 0.4, 0.8), 0.01, 0.05),
            with_se(pt(80e3, 35.0, 90.0), 10.0, 30.0),
            with_se(pt(90e3, 0.85, 1.6), 0.02, 0.1),
        ];
        let a = analyze_curve(&pts, MS, 2.0);
        assert_eq!(a.non_monotone_points, vec![2]);
        // Within the spread: 0.45 ms over 0.4 ms with se 0.03 each (the
        // difference's two standard errors: 0.085) is noise.
        let close = [
            with_se(pt(10e3, 0.45, 0.9), 0.03, 0.05),
            with_se(pt(20e3, 0.4, 0.9), 0.03, 0.05),
        ];
        assert!(analyze_curve(&close, MS, 2.0)
            .non_monotone_points
            .is_empty());
        // 0.6 over 0.4: beyond it.
        let apart = [
            with_se(pt(10e3, 0.6, 0.9), 0.03, 0.05),
            with_se(pt(20e3, 0.4, 0.9), 0.03, 0.05),
        ];
        assert_eq!(analyze_curve(&apart, MS, 2.0).non_monotone_points, vec![0]);
        // Without a spread nothing is judged.
        let unknown = [pt(10e3, 9.0, 9.0), pt(20e3, 0.4, 0.9)];
        assert!(analyze_curve(&unknown, MS, 2.0)
            .non_monotone_points
            .is_empty());
    }

    #[test]
    fn the_knee_never_stands_on_a_step_that_missed_its_rate() {
        let low = pt(10e3, 0.2, 0.5);
        let missed = CurvePoint {
            requested_iops: Some(60e3),
            ..pt(40e3, 5.0, 9.0)
        };
        let hit = pt(50e3, 0.9, 2.0);
        let a = analyze_curve(&[low, missed, hit], MS, 2.0);
        assert_eq!(a.knee.as_ref().map(|k| k.index), Some(2), "{a:?}");
    }

    #[test]
    fn standard_error_of_interval_figures() {
        assert_eq!(standard_error(&[1.0]), None);
        // sd of 1, 3 is √2; over √2: 1.
        assert!((standard_error(&[1.0, 3.0]).unwrap() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn only_paced_steps_that_met_their_rate_give_the_best_under_target() {
        // The case found in the field: an uncontrolled max step at 192 k
        // IOPS with a low mean, then paced steps that missed their rates
        // (138 k of 154 k) or overshot them (188 k of 173 k).
        let max = CurvePoint {
            requested_iops: None,
            ..pt(192_490.0, 0.6, 1.0)
        };
        let p50 = pt(96_000.0, 0.4, 0.8);
        let p70 = CurvePoint {
            requested_iops: Some(134_700.0),
            ..pt(134_000.0, 3.4, 9.0)
        };
        let p80 = CurvePoint {
            requested_iops: Some(154_000.0),
            ..pt(138_000.0, 85.6, 200.0)
        };
        let p90 = CurvePoint {
            requested_iops: Some(173_000.0),
            ..pt(188_000.0, 0.9, 1.5)
        };
        let a = analyze_curve(&[max, p50, p70, p80, p90], MS, 2.0);
        assert_eq!(a.max_iops, 192_490.0);
        // p50 met its rate under 1 ms; p70 met its rate but over 1 ms, so
        // the answer lies between them; p80 and p90 are off their rates.
        let best = a.best_under_mean.unwrap();
        assert!(best > 96_000.0 && best < 134_000.0, "{best}");
        assert_eq!(a.best_under_mean_point, Some(1));
        assert_eq!(a.off_rate_points, vec![3, 4]);
        assert!((p80_err() + 10.39).abs() < 0.01);
        fn p80_err() -> f64 {
            CurvePoint {
                requested_iops: Some(154_000.0),
                ..pt(138_000.0, 1.0, 1.0)
            }
            .rate_error_pct()
            .unwrap()
        }
        // An uncontrolled step alone answers nothing.
        let alone = analyze_curve(
            &[CurvePoint {
                requested_iops: None,
                ..pt(1000.0, 0.1, 0.2)
            }],
            MS,
            2.0,
        );
        assert_eq!(alone.best_under_mean, None);
    }

    /// The example sweep; p99 is twice the mean.
    fn sweep() -> Vec<CurvePoint> {
        [
            (10e3, 0.2),
            (50e3, 0.3),
            (100e3, 0.6),
            (150e3, 0.9),
            (160e3, 1.1),
            (170e3, 3.0),
        ]
        .iter()
        .map(|&(iops, ms)| pt(iops, ms, 2.0 * ms))
        .collect()
    }

    /// Each answer is a handful of f64 operations on exact-ish inputs, so it
    /// is right to within a few ulps; 1e-9 relative is far above that.
    fn near(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs()
    }

    #[test]
    fn example_sweep() {
        let a = analyze_curve(&sweep(), 1.0 * MS, DEFAULT_KNEE_FACTOR);
        assert_eq!(a.max_iops, 170e3);
        assert_eq!(a.threshold_ns, MS);
        // 150k + (1.0 - 0.9) / (1.1 - 0.9) × 10k.
        assert!(near(a.best_under_mean.unwrap(), 155e3), "{a:?}");
        // p99: 0.6 ms at 50k, 1.2 ms at 100k → 50k + 0.4 / 0.6 × 50k.
        assert!(
            near(a.best_under_p99.unwrap(), 50e3 + 50e3 * 2.0 / 3.0),
            "{a:?}"
        );
        // 2 × 0.2 ms = 0.4 ms is first exceeded at 100k (0.6 ms).
        let knee = a.knee.unwrap();
        assert_eq!((knee.index, knee.iops), (2, 100e3));
        assert!(near(knee.lat_ns, 0.6 * MS));
        // Normalized x − y: 0, .214, .420, .625, .616, 0 → 150k.
        let ck = a.curvature_knee.unwrap();
        assert_eq!((ck.index, ck.iops), (3, 150e3));
    }

    #[test]
    fn a_chosen_percentile_is_judged_only_when_every_point_has_it() {
        // The sweep's p99.9 is three times the mean: 0.9 ms at 50k, 1.8 ms
        // at 100k → 50k + 0.1 / 0.9 × 50k.
        let with_pct: Vec<CurvePoint> = sweep()
            .into_iter()
            .map(|p| CurvePoint {
                pct_lat_ns: Some(3.0 * p.mean_lat_ns),
                ..p
            })
            .collect();
        let a = analyze_curve(&with_pct, MS, DEFAULT_KNEE_FACTOR);
        assert!(near(a.best_under_pct.unwrap(), 50e3 + 50e3 / 9.0), "{a:?}");
        assert_eq!(a.best_under_pct_point, Some(1));
        // The other answers do not move.
        let plain = analyze_curve(&sweep(), MS, DEFAULT_KNEE_FACTOR);
        assert_eq!(a.best_under_mean, plain.best_under_mean);
        assert_eq!(plain.best_under_pct, None);
        // One paced point without it (a step resumed from an older store):
        // no answer rather than a wrong one.
        let mut partial = with_pct.clone();
        partial[0].pct_lat_ns = None;
        assert_eq!(
            analyze_curve(&partial, MS, DEFAULT_KNEE_FACTOR).best_under_pct,
            None
        );
    }

    #[test]
    fn load_order_does_not_matter_but_index_follows_it() {
        let mut pts = sweep();
        pts.reverse();
        let a = analyze_curve(&pts, 1.0 * MS, DEFAULT_KNEE_FACTOR);
        assert!(near(a.best_under_mean.unwrap(), 155e3));
        assert_eq!(a.knee.unwrap().index, 3);
        assert_eq!(a.curvature_knee.unwrap().index, 2);
    }

    #[test]
    fn all_under_gives_max_and_first_over_gives_none() {
        let a = analyze_curve(&sweep(), 5.0 * MS, DEFAULT_KNEE_FACTOR);
        assert_eq!(a.best_under_mean, Some(170e3));
        // Every p99 (0.4 ms and up) is over 0.3 ms; the mean at 10k is under.
        let a = analyze_curve(&sweep(), 0.3 * MS, DEFAULT_KNEE_FACTOR);
        assert_eq!(a.best_under_p99, None);
        // 0.3 ms at 50k is exactly at the limit, then 0.6 ms at 100k:
        // interpolation adds nothing.
        assert!(near(a.best_under_mean.unwrap(), 50e3), "{a:?}");
    }

    #[test]
    fn highest_point_under_wins_over_a_noisy_step() {
        // 50k is over 1 ms, yet 100k made it in 0.9 ms; 150k at 1.9 ms
        // → 100k + 0.1 / 1.0 × 50k.
        let pts = [
            pt(10e3, 0.5, 1.0),
            pt(50e3, 1.2, 2.0),
            pt(100e3, 0.9, 2.0),
            pt(150e3, 1.9, 3.0),
        ];
        let a = analyze_curve(&pts, 1.0 * MS, DEFAULT_KNEE_FACTOR);
        assert!(near(a.best_under_mean.unwrap(), 105e3), "{a:?}");
    }

    #[test]
    fn knee_factor_is_configurable() {
        // 3 × 0.2 ms = 0.6 ms is first exceeded at 150k (0.9 ms).
        let a = analyze_curve(&sweep(), MS, 3.0);
        assert_eq!(a.knee.unwrap().index, 3);
        // 20 × 0.2 ms = 4 ms is never exceeded.
        assert_eq!(analyze_curve(&sweep(), MS, 20.0).knee, None);
    }

    #[test]
    fn straight_or_short_curves_have_no_curvature_knee() {
        let line: Vec<_> = (1..=6)
            .map(|i| pt(i as f64 * 10e3, i as f64 * 0.1, 1.0))
            .collect();
        assert_eq!(analyze_curve(&line, MS, 2.0).curvature_knee, None);
        // Concave (latency flattens): the curve lies above the chord.
        let concave = [pt(10e3, 0.1, 1.0), pt(20e3, 0.9, 1.0), pt(30e3, 1.0, 1.0)];
        assert_eq!(analyze_curve(&concave, MS, 2.0).curvature_knee, None);
        let two = [pt(10e3, 0.1, 1.0), pt(20e3, 0.9, 1.0)];
        assert_eq!(analyze_curve(&two, MS, 2.0).curvature_knee, None);
    }

    #[test]
    fn empty_and_non_finite_points() {
        let a = analyze_curve(&[], MS, 2.0);
        assert_eq!(a.max_iops, 0.0);
        assert_eq!((a.best_under_mean, a.best_under_p99), (None, None));
        assert_eq!((a.knee, a.curvature_knee), (None, None));
        let mut pts = sweep();
        pts.push(pt(f64::NAN, 0.1, 0.1));
        let a = analyze_curve(&pts, MS, 2.0);
        assert_eq!(a.max_iops, 170e3);
        assert!(near(a.best_under_mean.unwrap(), 155e3));
    }
}
