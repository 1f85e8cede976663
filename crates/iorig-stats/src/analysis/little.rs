//! Little's-law check for a generator-bound result: whether the load
//! generator, rather than the storage, limited the IOPS of a run.
//!
//! By Little's law the mean number of I/Os in flight is IOPS × mean latency.
//! A run that keeps `workers × qd` I/Os outstanding should show about that
//! many; far fewer means the I/Os spent much of their time not in flight but
//! waiting in the generator (CPU, locks, scheduling), so the IOPS describe
//! the host, not the device. Under a rate limit fewer I/Os in flight is the
//! intent, so the check does not apply there: a paced step is judged by its
//! issue lag instead. Its latency counts from each I/O's scheduled time, so
//! when iorig issued late by a material share of that latency
//! ([`ISSUE_LAG_SHARE_PCT`]), the step's latency is partly the tool's.

use serde::{Deserialize, Serialize};

/// Host CPU busy percentage above which the message names the CPU as the
/// likely cause.
const CPU_PEGGED_PCT: f64 = 90.0;

/// A worker thread busy this much of one CPU (its own usr+sys, allowing for
/// time the hypervisor stole) never waited for the storage: it set the pace.
pub const WORKER_SATURATED_PCT: f64 = 90.0;

/// A paced step whose issue lag p99 is more than this share of its latency
/// p99 reports the tool's lateness as a good part of the storage's latency.
pub const ISSUE_LAG_SHARE_PCT: f64 = 10.0;

/// The figures of one run (or step) that the check needs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LittleInput {
    pub iops: f64,
    /// Mean latency from submission to completion.
    pub mean_lat_ns: f64,
    pub workers: u32,
    /// Queue depth per worker.
    pub qd: u32,
    /// Worker threads, when `workers × qd` counts queue slots rather than
    /// threads (several jobs, each its own queue depth): the CPUs are
    /// shared by threads, never by slots. 0: `workers` are the threads.
    #[serde(default)]
    pub threads: u32,
    /// Whether the run was rate-limited; the check only applies without a limit.
    pub rate_limited: bool,
    /// usr + sys of the whole host, 0–100.
    pub cpu_busy_pct: f64,
    pub host_cpus: u32,
    /// iorig's busiest worker thread over the run: time on a CPU or waiting
    /// in a run queue for one, percent of the run (0 when not measured).
    #[serde(default)]
    pub worker_busy_max_pct: f64,
    /// Host steal time, percent of all CPU time.
    #[serde(default)]
    pub steal_pct: f64,
    /// A paced step's issue lag p99 (None: not paced, or not measured).
    /// When present it decides instead of the busy worker: a paced worker
    /// spins for its next I/O by design.
    #[serde(default)]
    pub issue_lag_p99_ns: Option<u64>,
    /// Latency p99 (from the schedule under a rate), the lag's yardstick.
    #[serde(default)]
    pub lat_p99_ns: u64,
}

impl LittleInput {
    /// The busiest worker's CPU use with stolen time given back: a worker
    /// that wanted a whole CPU on a host losing 30 % to steal measures 70 %.
    pub fn worker_effective_busy_pct(&self) -> f64 {
        let steal = self.steal_pct.clamp(0.0, 90.0);
        self.worker_busy_max_pct / (1.0 - steal / 100.0)
    }
}

/// The outcome of [`GeneratorBoundCheck::evaluate`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
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
    /// The busiest worker's CPU use allowing for steal, percent of one CPU.
    #[serde(default)]
    pub worker_busy_pct: f64,
    /// A worker thread was saturated (at least [`WORKER_SATURATED_PCT`]).
    #[serde(default)]
    pub worker_saturated: bool,
    /// A paced step's issue lag p99 and its share of the latency p99.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_lag_p99_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issue_lag_share_pct: Option<f64>,
    /// The issue lag was more than [`ISSUE_LAG_SHARE_PCT`] of the latency
    /// (written only when true, so unpaced findings read as before).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub issued_late: bool,
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
        // iorig's own threads, whatever the host total: a saturated worker
        // spends its time generating, so its I/Os wait on it, not on storage.
        let worker_busy_pct = input.worker_effective_busy_pct();
        let worker_saturated = measured && worker_busy_pct >= WORKER_SATURATED_PCT;
        let issue_lag_share_pct = input
            .issue_lag_p99_ns
            .filter(|_| input.lat_p99_ns > 0)
            .map(|lag| 100.0 * lag as f64 / input.lat_p99_ns as f64);
        let issued_late = issue_lag_share_pct.is_some_and(|s| s > ISSUE_LAG_SHARE_PCT);
        let generator_bound = match issue_lag_share_pct {
            Some(_) => issued_late,
            None => {
                worker_saturated || (!input.rate_limited && measured && expected > 0.0 && short)
            }
        };
        let threads = if input.threads > 0 {
            input.threads
        } else {
            input.workers
        };

        let message = generator_bound.then(|| {
            if let (true, Some(share), Some(lag)) =
                (issued_late, issue_lag_share_pct, input.issue_lag_p99_ns)
            {
                return late_message(&input, lag, share, threads);
            }
            let mut m = if short && !input.rate_limited {
                format!(
                    "generator-bound: only {in_flight:.1} of {expected} I/Os were in flight \
                     on average (IOPS × mean latency)"
                )
            } else {
                "generator-bound".to_string()
            };
            if worker_saturated {
                m.push_str(&format!(
                    "; iorig's busiest worker thread was on a CPU or waiting for one {:.0} % of the time (it never waited for the storage)",
                    input.worker_busy_max_pct
                ));
                if input.steal_pct >= 1.0 {
                    m.push_str(&format!(
                        " while the hypervisor stole {:.0} % of the host's CPU time",
                        input.steal_pct
                    ));
                }
            }
            if input.cpu_busy_pct > CPU_PEGGED_PCT {
                m.push_str(&format!("; host CPU {:.0} % busy", input.cpu_busy_pct));
            }
            if input.host_cpus > 0 && threads > input.host_cpus {
                m.push_str(&format!(
                    "; {threads} workers share {} CPUs",
                    input.host_cpus
                ));
            }
            // The advice fits the case: too many workers for the CPUs, one
            // worker with CPUs to spare, or a host too slow for the load.
            let advice = if input.host_cpus > 0 && threads > input.host_cpus {
                format!(
                    "use at most {} workers (one per CPU) or a faster host",
                    input.host_cpus
                )
            } else if threads == 1 && input.host_cpus > 1 {
                format!(
                    "spread the queue over more workers (--threads; this host has {} CPUs) or use a faster host",
                    input.host_cpus
                )
            } else {
                "use a faster host".to_owned()
            };
            m.push_str(&format!(
                " — the load generator, not the storage, set this limit; {advice}"
            ));
            m
        });

        LittleVerdict {
            in_flight,
            expected_in_flight: expected,
            in_flight_ratio,
            generator_bound,
            cpu_busy_pct: input.cpu_busy_pct,
            worker_busy_pct,
            worker_saturated,
            issue_lag_p99_ns: input.issue_lag_p99_ns,
            issue_lag_share_pct,
            issued_late,
            message,
        }
    }
}

/// What a paced step that issued late is told: how late, what share of its
/// latency that is, and what would let iorig keep its schedule.
fn late_message(input: &LittleInput, lag_ns: u64, share_pct: f64, threads: u32) -> String {
    let us = |ns: u64| ns as f64 / 1000.0;
    let mut m = format!(
        "generator-limited: paced I/Os went out p99 {:.1} µs after their time, {share_pct:.0} % of the latency p99 ({:.1} µs), which counts from the schedule: that share is iorig's own lateness, not the storage's",
        us(lag_ns),
        us(input.lat_p99_ns)
    );
    if input.cpu_busy_pct > CPU_PEGGED_PCT {
        m.push_str(&format!("; host CPU {:.0} % busy", input.cpu_busy_pct));
    }
    if input.steal_pct >= 1.0 {
        m.push_str(&format!(
            "; the hypervisor stole {:.0} % of the host's CPU time",
            input.steal_pct
        ));
    }
    let advice = if input.host_cpus > 0 && threads > input.host_cpus {
        format!(
            "{threads} workers share {} CPUs, so they sleep instead of spinning for their next I/O: use at most {} workers",
            input.host_cpus, input.host_cpus
        )
    } else if input.cpu_busy_pct > CPU_PEGGED_PCT {
        "give iorig idle CPUs (other work delayed its workers)".to_owned()
    } else {
        "spread the rate over more workers (--threads) or use a faster host".to_owned()
    };
    m.push_str(&format!("; {advice}"));
    m
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
            threads: 0,
            rate_limited: false,
            cpu_busy_pct: 40.0,
            host_cpus: 16,
            worker_busy_max_pct: 0.0,
            steal_pct: 0.0,
            issue_lag_p99_ns: None,
            lat_p99_ns: 0,
        }
    }

    #[test]
    fn a_saturated_worker_is_generator_bound_whatever_the_host_does() {
        // One io_uring worker at qd 32, 63-140 µs mean latency for ~2 µs of
        // device work: 31 of 32 in flight by Little's law, host CPU 50 % on
        // 2 CPUs, yet the worker thread never waited.
        let v = GeneratorBoundCheck::default().evaluate(LittleInput {
            cpu_busy_pct: 50.0,
            host_cpus: 2,
            worker_busy_max_pct: 99.0,
            ..input(32.0 / 100e-6, 97_000.0, 1, 32)
        });
        assert!(v.in_flight_ratio > 0.9);
        assert!(v.generator_bound && v.worker_saturated, "{v:?}");
        assert!(v.message.as_deref().unwrap().contains("99 % of the time"));
        // Steal counts: 72 % measured while 20 % is stolen is 90 % wanted.
        let v = GeneratorBoundCheck::default().evaluate(LittleInput {
            worker_busy_max_pct: 72.0,
            steal_pct: 20.0,
            ..input(32.0 / 100e-6, 97_000.0, 1, 32)
        });
        assert!(v.worker_saturated, "{v:?}");
        assert!(v.message.as_deref().unwrap().contains("stole 20 %"));
        // A worker that waits most of the time is not the limit.
        let v = GeneratorBoundCheck::default().evaluate(LittleInput {
            worker_busy_max_pct: 30.0,
            ..input(32.0 / 100e-6, 97_000.0, 1, 32)
        });
        assert!(!v.generator_bound);
        // Saturation counts under a rate limit too.
        let v = GeneratorBoundCheck::default().evaluate(LittleInput {
            rate_limited: true,
            worker_busy_max_pct: 95.0,
            ..input(1000.0, 50_000.0, 1, 32)
        });
        assert!(v.generator_bound);
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
                 use at most 2 workers (one per CPU) or a faster host"
            )
        );
        // One worker on a host with CPUs to spare is told to spread the load;
        // enough workers on enough CPUs, to find a faster host.
        let one = GeneratorBoundCheck::default().evaluate(LittleInput {
            cpu_busy_pct: 50.0,
            host_cpus: 8,
            ..input(iops, 9_000.0, 1, 32)
        });
        let m = one.message.unwrap_or_default();
        assert!(m.ends_with("spread the queue over more workers (--threads; this host has 8 CPUs) or use a faster host"), "{m}");
        // The CPUs are shared by threads, not by queue slots: one thread
        // keeping 4 slots (given as 4 × 1 by a caller summing jobs) on 2
        // CPUs is one worker, not "4 workers share 2 CPUs".
        let slots = GeneratorBoundCheck::default().evaluate(LittleInput {
            cpu_busy_pct: 50.0,
            host_cpus: 2,
            threads: 1,
            ..input(iops, 1_000.0, 4, 1)
        });
        let m = slots.message.unwrap_or_default();
        assert!(!m.contains("workers share"), "{m}");
        assert!(m.ends_with("spread the queue over more workers (--threads; this host has 2 CPUs) or use a faster host"), "{m}");
        let fitting = GeneratorBoundCheck::default().evaluate(LittleInput {
            host_cpus: 64,
            ..input(iops, 9_000.0, 4, 8)
        });
        let m = fitting.message.unwrap_or_default();
        assert!(m.ends_with("set this limit; use a faster host"), "{m}");
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
    fn a_paced_step_is_judged_by_its_issue_lag() {
        let paced = |lag_ns: u64, lat_p99_ns: u64| LittleInput {
            rate_limited: true,
            // Spinning for the next I/O keeps a paced worker busy: no
            // evidence when the lag is measured.
            worker_busy_max_pct: 99.0,
            issue_lag_p99_ns: Some(lag_ns),
            lat_p99_ns,
            ..input(20_000.0, 40_000.0, 1, 1)
        };
        // 3 µs late against 100 µs: the storage's latency, told straight.
        let v = GeneratorBoundCheck::default().evaluate(paced(3_000, 100_000));
        assert!(!v.generator_bound && !v.issued_late, "{v:?}");
        assert_eq!(v.issue_lag_share_pct, Some(3.0));
        assert_eq!(v.message, None);
        // Exactly 10 % is not more than 10 %.
        let v = GeneratorBoundCheck::default().evaluate(paced(10_000, 100_000));
        assert!(!v.generator_bound);
        // 130 µs late against 330 µs: mostly iorig's.
        let v = GeneratorBoundCheck::default().evaluate(paced(130_000, 330_000));
        assert!(v.generator_bound && v.issued_late, "{v:?}");
        let m = v.message.unwrap_or_default();
        assert!(
            m.starts_with("generator-limited: paced I/Os went out p99 130.0 µs after their time, 39 % of the latency p99 (330.0 µs)"),
            "{m}"
        );
        assert!(
            m.ends_with("spread the rate over more workers (--threads) or use a faster host"),
            "{m}"
        );
        // More workers than CPUs: they cannot spin.
        let v = GeneratorBoundCheck::default().evaluate(LittleInput {
            host_cpus: 2,
            workers: 8,
            ..paced(130_000, 330_000)
        });
        assert!(v.message.unwrap_or_default().ends_with("8 workers share 2 CPUs, so they sleep instead of spinning for their next I/O: use at most 2 workers"));
        // Without a latency there is no yardstick: the older rules decide.
        let v = GeneratorBoundCheck::default().evaluate(paced(130_000, 0));
        assert_eq!(v.issue_lag_share_pct, None);
        assert!(v.worker_saturated && v.generator_bound);
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
