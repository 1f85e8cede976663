//! Little's-law check for a generator-bound result: whether the load
//! generator, rather than the storage, limited the IOPS of a run.
//!
//! By Little's law the mean number of I/Os in flight is IOPS × mean latency.
//! A run that keeps `workers × qd` I/Os outstanding should show about that
//! many; far fewer means the I/Os spent much of their time not in flight but
//! waiting in the generator (CPU, locks, scheduling), so the IOPS describe
//! the host, not the device. Under a rate limit fewer I/Os in flight is the
//! intent, so the check does not apply there.

use serde::{Deserialize, Serialize};

/// Host CPU busy percentage above which the message names the CPU as the
/// likely cause.
const CPU_PEGGED_PCT: f64 = 90.0;

/// The figures of one run (or step) that the check needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LittleInput {
    pub iops: f64,
    /// Mean latency from submission to completion.
    pub mean_lat_ns: f64,
    pub workers: u32,
    /// Queue depth per worker.
    pub qd: u32,
    /// Whether the run was rate-limited; the check only applies without a limit.
    pub rate_limited: bool,
    /// usr + sys of the whole host, 0–100.
    pub cpu_busy_pct: f64,
    pub host_cpus: u32,
}

/// The outcome of [`GeneratorBoundCheck::evaluate`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LittleVerdict {
    /// IOPS × mean latency in seconds: I/Os in flight on average.
    pub in_flight: f64,
    /// workers × qd: what the run meant to keep in flight.
    pub expected_in_flight: f64,
    /// in_flight / expected_in_flight; 0 when nothing was expected.
    pub in_flight_ratio: f64,
    pub generator_bound: bool,
    /// Copied from the input, as supporting evidence.
    pub cpu_busy_pct: f64,
    /// Explanation and advice; only set when `generator_bound`.
    pub message: Option<String>,
}

/// The rule, with its two thresholds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GeneratorBoundCheck {
    /// A run is generator-bound when fewer than `min_ratio` × workers × qd
    /// I/Os were in flight on average (default 0.5), whatever the CPU did.
    pub min_ratio: f64,
    /// ... or fewer than `pegged_ratio` × workers × qd (default 0.8) while the
    /// host CPU was pegged: then the gap between a completion and the next
    /// submission is time spent waiting for a CPU. Measured here: 64 psync
    /// workers on 2 CPUs against zram keep 0.68 of their slots busy at 99 %
    /// CPU, while a device-bound file run at qd 32 keeps over 0.8 at low CPU.
    pub pegged_ratio: f64,
}

impl Default for GeneratorBoundCheck {
    fn default() -> Self {
        GeneratorBoundCheck {
            min_ratio: 0.5,
            pegged_ratio: 0.8,
        }
    }
}

impl GeneratorBoundCheck {
    pub fn new(min_ratio: f64, pegged_ratio: f64) -> Self {
        GeneratorBoundCheck {
            min_ratio,
            pegged_ratio,
        }
    }

    /// Judges one run. A generator can be the bottleneck without saturating
    /// the CPU (locks, a single submitting thread), so a large shortfall alone
    /// decides; a smaller one counts only with the CPU pegged.
    pub fn evaluate(&self, input: LittleInput) -> LittleVerdict {
        // Nanoseconds times IOPS first, then one division: exact for round
        // figures (100 000 × 320 000 / 1e9 = 32).
        let in_flight = input.iops * input.mean_lat_ns / 1e9;
        let expected = f64::from(input.workers) * f64::from(input.qd);
        let in_flight_ratio = if expected > 0.0 {
            in_flight / expected
        } else {
            0.0
        };
        // Without completions (or a measured latency) there is no evidence
        // either way: an outage is not a slow generator.
        let measured = input.iops > 0.0 && input.mean_lat_ns > 0.0 && in_flight.is_finite();
        let short = in_flight_ratio < self.min_ratio
            || (in_flight_ratio < self.pegged_ratio && input.cpu_busy_pct > CPU_PEGGED_PCT);
        let generator_bound = !input.rate_limited && measured && expected > 0.0 && short;

        let message = generator_bound.then(|| {
            let mut m = format!(
                "generator-bound: only {in_flight:.1} of {expected} I/Os were in flight \
                 on average (IOPS × mean latency)"
            );
            if input.cpu_busy_pct > CPU_PEGGED_PCT {
                m.push_str(&format!("; host CPU {:.0} % busy", input.cpu_busy_pct));
            }
            if input.host_cpus > 0 && input.workers > input.host_cpus {
                m.push_str(&format!(
                    "; {} workers share {} CPUs",
                    input.workers, input.host_cpus
                ));
            }
            m.push_str(
                " — the load generator, not the storage, set this limit; \
                 use fewer workers or a faster host",
            );
            m
        });

        LittleVerdict {
            in_flight,
            expected_in_flight: expected,
            in_flight_ratio,
            generator_bound,
            cpu_busy_pct: input.cpu_busy_pct,
            message,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(iops: f64, mean_lat_ns: f64, workers: u32, qd: u32) -> LittleInput {
        LittleInput {
            iops,
            mean_lat_ns,
            workers,
            qd,
            rate_limited: false,
            cpu_busy_pct: 40.0,
            host_cpus: 16,
        }
    }

    #[test]
    fn vdbench_oversubscribed_host_is_generator_bound() {
        // 32 threads at QD 1 on 2 CPUs: 32 / IOPS = 54 µs, yet each I/O took
        // only 9 µs, so 32 × 9 / 54 = 5.33 were in flight.
        let iops = 32.0 / 54e-6;
        let v = GeneratorBoundCheck::default().evaluate(LittleInput {
            cpu_busy_pct: 97.0,
            host_cpus: 2,
            ..input(iops, 9_000.0, 32, 1)
        });
        // A few roundings of order 1e-16 each.
        assert!((v.in_flight - 32.0 * 9.0 / 54.0).abs() < 1e-12, "{v:?}");
        assert_eq!(v.expected_in_flight, 32.0);
        assert!((v.in_flight_ratio - 9.0 / 54.0).abs() < 1e-12);
        assert!(v.generator_bound);
        assert_eq!(v.cpu_busy_pct, 97.0);
        assert_eq!(
            v.message.as_deref(),
            Some(
                "generator-bound: only 5.3 of 32 I/Os were in flight on average \
                 (IOPS × mean latency); host CPU 97 % busy; 32 workers share 2 CPUs \
                 — the load generator, not the storage, set this limit; \
                 use fewer workers or a faster host"
            )
        );
    }

    #[test]
    fn cpu_is_only_mentioned_when_pegged() {
        let v = GeneratorBoundCheck::default().evaluate(input(100_000.0, 50_000.0, 4, 8));
        // 100k × 50 µs = 5 of 32.
        assert!(v.generator_bound);
        let m = v.message.unwrap();
        assert!(m.starts_with("generator-bound: only 5.0 of 32 I/Os"), "{m}");
        assert!(!m.contains("CPU"), "{m}");
    }

    #[test]
    fn device_bound_run_is_not_generator_bound() {
        // QD 32 at 100k IOPS and 320 µs: 32 in flight, exactly as intended.
        let v = GeneratorBoundCheck::default().evaluate(input(100_000.0, 320_000.0, 1, 32));
        assert_eq!(v.in_flight, 32.0);
        assert_eq!(v.in_flight_ratio, 1.0);
        assert!(!v.generator_bound);
        assert_eq!(v.message, None);
    }

    #[test]
    fn ratio_threshold_is_strict_and_tunable() {
        // 100k × 160 µs = 16 of 32: exactly half, not fewer.
        let i = input(100_000.0, 160_000.0, 1, 32);
        assert!(!GeneratorBoundCheck::default().evaluate(i).generator_bound);
        assert!(
            GeneratorBoundCheck::new(0.8, 0.8)
                .evaluate(i)
                .generator_bound
        );
    }

    #[test]
    fn a_smaller_shortfall_counts_only_with_the_cpu_pegged() {
        // 64 psync workers on 2 CPUs: 0.68 of the slots in flight.
        let i = input(590_000.0, 73_700.0, 64, 1);
        assert!((i.iops * i.mean_lat_ns / 1e9 / 64.0 - 0.679).abs() < 0.001);
        assert!(!GeneratorBoundCheck::default().evaluate(i).generator_bound);
        let pegged = LittleInput {
            cpu_busy_pct: 99.0,
            ..i
        };
        let v = GeneratorBoundCheck::default().evaluate(pegged);
        assert!(v.generator_bound);
        assert!(v.message.unwrap().contains("host CPU 99 % busy"));
        // 0.85 of the slots with the CPU pegged: the device kept up.
        let busy_device = LittleInput {
            mean_lat_ns: 92_200.0,
            ..pegged
        };
        assert!(
            !GeneratorBoundCheck::default()
                .evaluate(busy_device)
                .generator_bound
        );
    }

    #[test]
    fn rate_limited_is_never_generator_bound() {
        let v = GeneratorBoundCheck::default().evaluate(LittleInput {
            rate_limited: true,
            cpu_busy_pct: 99.0,
            ..input(1_000.0, 100_000.0, 32, 32)
        });
        assert!((v.in_flight - 0.1).abs() < 1e-15);
        assert!(!v.generator_bound);
        assert_eq!(v.message, None);
    }

    #[test]
    fn no_completions_is_no_evidence() {
        let v = GeneratorBoundCheck::default().evaluate(input(0.0, 0.0, 8, 8));
        assert!(!v.generator_bound);
        let v = GeneratorBoundCheck::default().evaluate(input(1_000.0, 1_000.0, 0, 8));
        assert_eq!(v.in_flight_ratio, 0.0);
        assert!(!v.generator_bound);
    }
}
