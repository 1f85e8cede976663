//! SNIA PTS steady state: whether the last few rounds of a test agree closely
//! enough that further rounds would not change the result.
//!
//! The rule (SNIA Solid State Storage PTS, "steady state measurement window"):
//! over the last `window_rounds` rounds of the tracking variable (e.g. IOPS),
//! the range (max − min) stays within `max_range_pct` % of the window mean,
//! and the least-squares line through the window rises or falls by at most
//! `max_slope_excursion_pct` % of the mean from the first round to the last.
//! The range bounds the noise; the slope bounds a slow drift that a small
//! range alone would hide.

use serde::{Deserialize, Serialize};

/// The SNIA steady-state rule with its three parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SteadyStateDetector {
    /// Rounds in the measurement window (SNIA: 5). Below 2 no slope exists,
    /// so 2 is used instead.
    pub window_rounds: usize,
    /// Largest allowed range (max − min) as a percentage of the window mean (SNIA: 20).
    pub max_range_pct: f64,
    /// Largest allowed rise or fall of the fitted line across the window, as
    /// a percentage of the window mean (SNIA: 10).
    pub max_slope_excursion_pct: f64,
    /// Largest allowed distance of any round from the window mean, as a
    /// percentage of the mean (fio's `ss=iops:X%`); infinite: not judged.
    #[serde(default = "unlimited")]
    pub max_deviation_pct: f64,
    /// Largest allowed |slope| per round of the least-squares line, as a
    /// percentage of the mean (fio's `ss=iops_slope:X%`); infinite: not
    /// judged.
    #[serde(default = "unlimited")]
    pub max_slope_pct: f64,
}

fn unlimited() -> f64 {
    f64::INFINITY
}

impl Default for SteadyStateDetector {
    /// The SNIA PTS parameters: 5 rounds, 20 % range, 10 % slope excursion.
    fn default() -> Self {
        Self::new(5, 20.0, 10.0)
    }
}

/// The outcome of [`SteadyStateDetector::check`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SteadyStateVerdict {
    pub reached: bool,
    /// Number of rounds given (not only those in the window).
    pub rounds_used: usize,
    /// Index of the first round of the window that was judged.
    pub window_start_round: usize,
    /// Mean of the window; 0 when there were too few rounds.
    pub mean: f64,
    /// (max − min) of the window as a percentage of its mean.
    pub range_pct: f64,
    /// |slope| × (window − 1) of the least-squares line, as a percentage of the mean.
    pub slope_excursion_pct: f64,
    /// The largest |round − mean| of the window, as a percentage of the mean.
    #[serde(default)]
    pub deviation_pct: f64,
    /// |slope| per round, as a percentage of the mean.
    #[serde(default)]
    pub slope_pct: f64,
    /// Why steady state was not reached; `None` when it was.
    pub reason: Option<String>,
}

impl SteadyStateDetector {
    pub fn new(window_rounds: usize, max_range_pct: f64, max_slope_excursion_pct: f64) -> Self {
        SteadyStateDetector {
            window_rounds,
            max_range_pct,
            max_slope_excursion_pct,
            max_deviation_pct: f64::INFINITY,
            max_slope_pct: f64::INFINITY,
        }
    }

    /// fio's rules: every round within `max_deviation_pct` of the mean
    /// (`ss=iops:X%`), or a slope per round within `max_slope_pct` of it
    /// (`ss=iops_slope:X%`); the SNIA limits are off.
    pub fn fio(window_rounds: usize, max_deviation_pct: f64, max_slope_pct: f64) -> Self {
        SteadyStateDetector {
            window_rounds,
            max_range_pct: f64::INFINITY,
            max_slope_excursion_pct: f64::INFINITY,
            max_deviation_pct,
            max_slope_pct,
        }
    }

    /// Judges the last `window_rounds` values of `rounds` (one value per round,
    /// oldest first).
    pub fn check(&self, rounds: &[f64]) -> SteadyStateVerdict {
        let w = self.window();
        let n = rounds.len();
        let mut verdict = SteadyStateVerdict {
            reached: false,
            rounds_used: n,
            window_start_round: n.saturating_sub(w),
            mean: 0.0,
            range_pct: 0.0,
            slope_excursion_pct: 0.0,
            deviation_pct: 0.0,
            slope_pct: 0.0,
            reason: None,
        };
        if n < w {
            verdict.reason = Some(format!("only {n} of {w} rounds"));
            return verdict;
        }
        let window = &rounds[n - w..];
        if window.iter().any(|v| !v.is_finite()) {
            verdict.reason = Some("a round in the window has no finite value".to_string());
            return verdict;
        }

        let mean = window.iter().sum::<f64>() / w as f64;
        verdict.mean = mean;
        // Both limits are relative to the mean; with a mean of zero or below
        // (nothing completed) there is nothing to be steady around.
        if mean <= 0.0 {
            verdict.reason = Some(format!("window mean is {mean}, not positive"));
            return verdict;
        }
        let (min, max) = window
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
                (lo.min(v), hi.max(v))
            });
        // Multiply before dividing so that exact inputs give exact percentages.
        verdict.range_pct = 100.0 * (max - min) / mean;
        let fitted = slope(window).abs();
        verdict.slope_excursion_pct = 100.0 * fitted * (w - 1) as f64 / mean;
        verdict.slope_pct = 100.0 * fitted / mean;
        verdict.deviation_pct = 100.0 * (max - mean).max(mean - min) / mean;

        let mut why = Vec::new();
        if verdict.range_pct > self.max_range_pct {
            why.push(format!(
                "range {:.1} % > {} %",
                verdict.range_pct, self.max_range_pct
            ));
        }
        if verdict.slope_excursion_pct > self.max_slope_excursion_pct {
            why.push(format!(
                "slope excursion {:.1} % > {} %",
                verdict.slope_excursion_pct, self.max_slope_excursion_pct
            ));
        }
        if verdict.deviation_pct > self.max_deviation_pct {
            why.push(format!(
                "a round {:.1} % from the mean > {} %",
                verdict.deviation_pct, self.max_deviation_pct
            ));
        }
        if verdict.slope_pct > self.max_slope_pct {
            why.push(format!(
                "slope {:.3} % of the mean per round > {} %",
                verdict.slope_pct, self.max_slope_pct
            ));
        }
        verdict.reached = why.is_empty();
        if !why.is_empty() {
            verdict.reason = Some(why.join("; "));
        }
        verdict
    }

    /// The index of the first round at which a window ending there is steady,
    /// i.e. how many rounds (index + 1) the device needed to settle.
    pub fn first_steady(&self, rounds: &[f64]) -> Option<usize> {
        (self.window() - 1..rounds.len()).find(|&end| self.check(&rounds[..=end]).reached)
    }

    fn window(&self) -> usize {
        self.window_rounds.max(2)
    }
}

/// Least-squares slope per round of `ys` against x = 0, 1, 2, …; needs two or
/// more values.
fn slope(ys: &[f64]) -> f64 {
    let n = ys.len() as f64;
    let x_mean = (n - 1.0) / 2.0;
    let y_mean = ys.iter().sum::<f64>() / n;
    let (sxy, sxx) = ys
        .iter()
        .enumerate()
        .fold((0.0, 0.0), |(sxy, sxx), (i, &y)| {
            let dx = i as f64 - x_mean;
            (sxy + dx * (y - y_mean), sxx + dx * dx)
        });
    if sxx > 0.0 {
        sxy / sxx
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Inputs below are small integers, so sums, means and the slope are exact
    // in f64; the remaining division leaves at most a few ulps of error.
    const EPS: f64 = 1e-12;

    #[test]
    fn flat_noisy_series_is_steady() {
        // mean 100, range 6, sxy = -5 over sxx = 10 → slope -0.5, excursion 2.
        let v = SteadyStateDetector::default().check(&[100.0, 103.0, 97.0, 102.0, 98.0]);
        assert!(v.reached, "{v:?}");
        assert_eq!(v.reason, None);
        assert_eq!(v.rounds_used, 5);
        assert_eq!(v.window_start_round, 0);
        assert!((v.mean - 100.0).abs() < EPS);
        assert!((v.range_pct - 6.0).abs() < EPS);
        assert!((v.slope_excursion_pct - 2.0).abs() < EPS);
    }

    #[test]
    fn only_the_last_window_counts() {
        // A wild start followed by the flat window above.
        let rounds = [10.0, 500.0, 30.0, 100.0, 103.0, 97.0, 102.0, 98.0];
        let v = SteadyStateDetector::default().check(&rounds);
        assert!(v.reached, "{v:?}");
        assert_eq!(v.rounds_used, 8);
        assert_eq!(v.window_start_round, 3);
    }

    #[test]
    fn fios_deviation_and_slope_rules() {
        // Mean 100, rounds at most 3 from it; slope 0.
        let rounds = [100.0, 103.0, 97.0, 100.0, 100.0];
        let v = SteadyStateDetector::fio(5, 3.0, f64::INFINITY).check(&rounds);
        assert!(v.reached, "{v:?}");
        assert!((v.deviation_pct - 3.0).abs() < EPS);
        let v = SteadyStateDetector::fio(5, 2.0, f64::INFINITY).check(&rounds);
        assert_eq!(
            v.reason.as_deref(),
            Some("a round 3.0 % from the mean > 2 %")
        );
        // A steady climb of 1 per round around a mean of 100: slope 1 %.
        let ramp = [98.0, 99.0, 100.0, 101.0, 102.0];
        let v = SteadyStateDetector::fio(5, f64::INFINITY, 1.0).check(&ramp);
        assert!(v.reached && (v.slope_pct - 1.0).abs() < EPS, "{v:?}");
        let v = SteadyStateDetector::fio(5, f64::INFINITY, 0.5).check(&ramp);
        assert!(!v.reached, "{v:?}");
    }

    #[test]
    fn wide_range_is_not_steady() {
        // Symmetric, so slope 0; range 40 of mean 100.
        let v = SteadyStateDetector::default().check(&[80.0, 120.0, 100.0, 120.0, 80.0]);
        assert!(!v.reached);
        assert!((v.range_pct - 40.0).abs() < EPS);
        assert!(v.slope_excursion_pct.abs() < EPS);
        assert_eq!(v.reason.as_deref(), Some("range 40.0 % > 20 %"));
    }

    #[test]
    fn steady_ramp_fails_on_slope_only() {
        // Mean 106; range and excursion are both 12 → 11.32 %: within the
        // 20 % range limit but over the 10 % slope limit.
        let v = SteadyStateDetector::default().check(&[100.0, 103.0, 106.0, 109.0, 112.0]);
        assert!(!v.reached);
        assert!((v.range_pct - 1200.0 / 106.0).abs() < EPS);
        assert!((v.slope_excursion_pct - 1200.0 / 106.0).abs() < EPS);
        assert_eq!(v.reason.as_deref(), Some("slope excursion 11.3 % > 10 %"));
    }

    #[test]
    fn both_failures_are_reported() {
        // Ramp by 10: range = excursion = 40 of mean 120.
        let v = SteadyStateDetector::default().check(&[100.0, 110.0, 120.0, 130.0, 140.0]);
        assert!(!v.reached);
        assert_eq!(
            v.reason.as_deref(),
            Some("range 33.3 % > 20 %; slope excursion 33.3 % > 10 %")
        );
    }

    #[test]
    fn limits_are_inclusive() {
        // Range exactly 20 of mean 100; sxy = 10, sxx = 10 → excursion 4.
        let v = SteadyStateDetector::default().check(&[90.0, 110.0, 100.0, 100.0, 100.0]);
        assert_eq!(v.range_pct, 20.0);
        assert!(v.reached, "{v:?}");
    }

    #[test]
    fn too_few_rounds() {
        let v = SteadyStateDetector::default().check(&[100.0, 100.0, 100.0]);
        assert!(!v.reached);
        assert_eq!(v.rounds_used, 3);
        assert_eq!(v.reason.as_deref(), Some("only 3 of 5 rounds"));
        let v = SteadyStateDetector::default().check(&[]);
        assert_eq!(v.reason.as_deref(), Some("only 0 of 5 rounds"));
    }

    #[test]
    fn zero_mean_is_not_steady() {
        let v = SteadyStateDetector::default().check(&[0.0; 5]);
        assert!(!v.reached);
        assert!(v.reason.as_deref().unwrap_or("").contains("mean"), "{v:?}");
        let v = SteadyStateDetector::default().check(&[1.0, 2.0, f64::NAN, 1.0, 1.0]);
        assert!(!v.reached);
        assert!(v.reason.is_some());
    }

    #[test]
    fn first_steady_finds_the_settling_round() {
        // Window ending at 4: range 50 of 80 → fails. At 5: range 30 of 90 →
        // fails. At 6: range 16 of 96.2 passes, but sxy = 37 → excursion 14.8
        // of 96.2 = 15.4 % fails. At 7: range 6 of 99, excursion 3.6 → steady.
        let rounds = [
            50.0, 70.0, 85.0, 95.0, 100.0, 100.0, 101.0, 99.0, 100.0, 100.0,
        ];
        let d = SteadyStateDetector::default();
        assert!(d.check(&rounds[..=6]).reason.unwrap().starts_with("slope"));
        assert_eq!(d.first_steady(&rounds), Some(7));
        assert_eq!(d.first_steady(&rounds[..7]), None);
        assert_eq!(d.first_steady(&[]), None);
    }
}
