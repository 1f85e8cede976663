//! Host-wide CPU usage from `/proc/stat`: shares of all CPU time of all
//! CPUs together (every CPU busy = 100 %), the way vdbench and `iostat`
//! report them.

use crate::StatsError;
use serde::Serialize;
use std::time::Duration;

const PROC_STAT: &str = "/proc/stat";

/// CPU usage over one interval, in percent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuUsage {
    /// User time: `user + nice` (guest time is already part of these).
    pub usr_pct: f64,
    /// System time: `system + irq + softirq`.
    pub sys_pct: f64,
    /// Time the hypervisor gave to other guests while this one wanted to
    /// run: on a shared VM, CPU the load generator asked for and did not get.
    /// (Absent from results stored before it was measured.)
    #[serde(default)]
    pub steal_pct: f64,
}

/// What the kernel counts for threads (`getrusage`), summed over a step's
/// workers over its measured time: the load generator's own CPU, where
/// [`CpuUsage`] is the whole host's. fio reports these per job (`usr_cpu`,
/// `sys_cpu` as percent of one CPU, `ctx`, `minf`, `majf`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThreadUsage {
    /// CPU time in user mode.
    pub usr_ns: u64,
    /// CPU time in the kernel.
    pub sys_ns: u64,
    /// Context switches, voluntary and involuntary.
    pub ctx: u64,
    /// Page faults served without I/O (minor) and with I/O (major).
    pub minflt: u64,
    pub majflt: u64,
}

impl ThreadUsage {
    /// The counts from `earlier` to `self` (counters only grow; a smaller
    /// one counts 0).
    pub fn since(&self, earlier: &ThreadUsage) -> ThreadUsage {
        ThreadUsage {
            usr_ns: self.usr_ns.saturating_sub(earlier.usr_ns),
            sys_ns: self.sys_ns.saturating_sub(earlier.sys_ns),
            ctx: self.ctx.saturating_sub(earlier.ctx),
            minflt: self.minflt.saturating_sub(earlier.minflt),
            majflt: self.majflt.saturating_sub(earlier.majflt),
        }
    }

    pub fn add(&mut self, other: &ThreadUsage) {
        self.usr_ns += other.usr_ns;
        self.sys_ns += other.sys_ns;
        self.ctx += other.ctx;
        self.minflt += other.minflt;
        self.majflt += other.majflt;
    }
}

/// Cumulative CPU tick counters of the `cpu` line of `/proc/stat` (all CPUs
/// summed). Fields the kernel does not report count as 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl CpuTimes {
    /// Reads the current host-wide counters. Only the aggregate `cpu` line
    /// is read, so kernels and sandboxes that leave other lines out (which
    /// a whole-file parser such as procfs's refuses) still give figures.
    pub fn current() -> Result<Self, StatsError> {
        let text = std::fs::read_to_string(PROC_STAT).map_err(|source| StatsError::Read {
            path: PROC_STAT.to_owned(),
            source,
        })?;
        Self::parse_proc_stat(&text)
    }

    /// Parses the aggregate `cpu` line out of the text of `/proc/stat`.
    pub fn parse_proc_stat(text: &str) -> Result<Self, StatsError> {
        let parse_err = |why: String| StatsError::Parse {
            path: PROC_STAT.to_owned(),
            why,
        };
        let line = text
            .lines()
            .find(|l| l.split_whitespace().next() == Some("cpu"))
            .ok_or_else(|| parse_err("no aggregate `cpu` line".to_owned()))?;
        let mut vals = [0u64; 8];
        let mut n = 0;
        for (slot, field) in vals.iter_mut().zip(line.split_whitespace().skip(1)) {
            *slot = field
                .parse()
                .map_err(|e| parse_err(format!("bad cpu field {field:?}: {e}")))?;
            n += 1;
        }
        if n < 4 {
            return Err(parse_err(format!(
                "`cpu` line has {n} counters, need at least 4"
            )));
        }
        let [user, nice, system, idle, iowait, irq, softirq, steal] = vals;
        Ok(Self {
            user,
            nice,
            system,
            idle,
            iowait,
            irq,
            softirq,
            steal,
        })
    }
}

/// Usage between two snapshots `a` (earlier) and `b` (later), as percent of
/// all CPU time in between. Counters that went backwards (iowait may; CPU
/// hot-unplug can) contribute nothing; no elapsed ticks give 0, never NaN.
pub fn cpu_usage_between(a: &CpuTimes, b: &CpuTimes) -> CpuUsage {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
    let usr = d(a.user, b.user) + d(a.nice, b.nice);
    let sys = d(a.system, b.system) + d(a.irq, b.irq) + d(a.softirq, b.softirq);
    let total = usr + sys + d(a.idle, b.idle) + d(a.iowait, b.iowait) + d(a.steal, b.steal);
    shares(a, b, total)
}

/// Usage between `a` and `b` as shares of `total` ticks.
fn shares(a: &CpuTimes, b: &CpuTimes, total: f64) -> CpuUsage {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
    if total <= 0.0 {
        return CpuUsage::default();
    }
    let usr = d(a.user, b.user) + d(a.nice, b.nice);
    let sys = d(a.system, b.system) + d(a.irq, b.irq) + d(a.softirq, b.softirq);
    let pct = |x: f64| (100.0 * x / total).min(100.0);
    CpuUsage {
        usr_pct: pct(usr),
        sys_pct: pct(sys),
        steal_pct: pct(d(a.steal, b.steal)),
    }
}

/// Like [`cpu_usage_between`], for a span of `wall` on a host of `cpus`
/// CPUs ticking `ticks_per_s`: the shares are of the ticks the span really
/// had, or of the ticks counted, whichever is more. The kernel counts in
/// whole ticks (10 ms), so a 20 ms tail interval may show 2 ticks of 4 as
/// 50 % — or 1 tick of 1 as 100 % when measured against the ticks counted
/// alone; against the span's real length the same tick is 25 % at most.
pub fn cpu_usage_over(
    a: &CpuTimes,
    b: &CpuTimes,
    wall: Duration,
    cpus: u32,
    ticks_per_s: u64,
) -> CpuUsage {
    let d = |x: u64, y: u64| y.saturating_sub(x) as f64;
    let counted = d(a.user, b.user)
        + d(a.nice, b.nice)
        + d(a.system, b.system)
        + d(a.irq, b.irq)
        + d(a.softirq, b.softirq)
        + d(a.idle, b.idle)
        + d(a.iowait, b.iowait)
        + d(a.steal, b.steal);
    let expected = wall.as_secs_f64() * cpus as f64 * ticks_per_s as f64;
    shares(a, b, counted.max(expected))
}

/// Samples host-wide CPU usage between successive calls.
#[derive(Debug)]
pub struct CpuSampler {
    prev: CpuTimes,
    cpus: u32,
    ticks_per_s: u64,
}

impl CpuSampler {
    /// Takes the first snapshot.
    pub fn new() -> Result<Self, StatsError> {
        let cpus = std::fs::read_to_string(PROC_STAT)
            .map(|t| {
                t.lines()
                    .filter(|l| {
                        l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit)
                    })
                    .count() as u32
            })
            .unwrap_or(1)
            .max(1);
        Ok(Self {
            prev: CpuTimes::current()?,
            cpus,
            ticks_per_s: rustix::param::clock_ticks_per_second().max(1),
        })
    }

    /// Usage since the previous sample over a span of `wall` (see
    /// [`cpu_usage_over`]); the new snapshot becomes the next baseline.
    pub fn sample_over(&mut self, wall: Duration) -> Result<CpuUsage, StatsError> {
        let now = CpuTimes::current()?;
        let usage = cpu_usage_over(&self.prev, &now, wall, self.cpus, self.ticks_per_s);
        self.prev = now;
        Ok(usage)
    }

    /// Usage since the previous sample (or since [`CpuSampler::new`]); the new
    /// snapshot becomes the baseline of the next call.
    pub fn sample(&mut self) -> Result<CpuUsage, StatsError> {
        let now = CpuTimes::current()?;
        let usage = cpu_usage_between(&self.prev, &now);
        self.prev = now;
        Ok(usage)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(user: u64, nice: u64, system: u64, idle: u64) -> CpuTimes {
        CpuTimes {
            user,
            nice,
            system,
            idle,
            ..CpuTimes::default()
        }
    }

    #[test]
    fn a_short_span_is_measured_against_its_real_ticks() {
        // 20 ms on 2 CPUs at 100 ticks/s is 4 ticks; the kernel counted one,
        // and it was user time.
        let a = times(100, 0, 50, 1000);
        let b = times(101, 0, 50, 1000);
        let u = cpu_usage_over(&a, &b, Duration::from_millis(20), 2, 100);
        assert_eq!(u.usr_pct, 25.0);
        // Measured against the ticks counted alone, the same tick is 100 %.
        assert_eq!(cpu_usage_between(&a, &b).usr_pct, 100.0);
        // A full second: 200 ticks expected and counted, the plain share.
        let b = times(200, 0, 90, 1060);
        let u = cpu_usage_over(&a, &b, Duration::from_secs(1), 2, 100);
        assert_eq!((u.usr_pct, u.sys_pct), (50.0, 20.0));
        // Steal is its own share.
        let b = CpuTimes {
            steal: 20,
            ..times(100, 0, 50, 1180)
        };
        let u = cpu_usage_over(&a, &b, Duration::from_secs(1), 2, 100);
        assert_eq!(u.steal_pct, 10.0);
    }

    #[test]
    fn usage_of_known_deltas() {
        let a = CpuTimes {
            user: 100,
            nice: 10,
            system: 50,
            idle: 1000,
            iowait: 5,
            irq: 1,
            softirq: 2,
            steal: 0,
        };
        // +30 user, +10 nice, +15 system, +3 irq, +2 softirq, +130 idle,
        // +10 iowait  => total 200
        let b = CpuTimes {
            user: 130,
            nice: 20,
            system: 65,
            idle: 1130,
            iowait: 15,
            irq: 4,
            softirq: 4,
            steal: 0,
        };
        let u = cpu_usage_between(&a, &b);
        assert_eq!(u.usr_pct, 20.0);
        assert_eq!(u.sys_pct, 10.0);
    }

    #[test]
    fn steal_counts_as_elapsed_time() {
        let a = CpuTimes::default();
        let b = CpuTimes {
            user: 25,
            steal: 25,
            idle: 50,
            ..CpuTimes::default()
        };
        let u = cpu_usage_between(&a, &b);
        assert_eq!(u.usr_pct, 25.0);
        assert_eq!(u.sys_pct, 0.0);
    }

    #[test]
    fn zero_delta_is_zero_not_nan() {
        let a = times(5, 0, 5, 90);
        let u = cpu_usage_between(&a, &a);
        assert_eq!(u, CpuUsage::default());
        assert!(!u.usr_pct.is_nan() && !u.sys_pct.is_nan());
    }

    #[test]
    fn backwards_counters_do_not_underflow() {
        let a = CpuTimes {
            iowait: 100,
            ..times(10, 0, 10, 100)
        };
        let b = CpuTimes {
            iowait: 50, // iowait may go down
            ..times(20, 0, 10, 190)
        };
        let u = cpu_usage_between(&a, &b);
        assert_eq!(u.usr_pct, 10.0);
        assert_eq!(u.sys_pct, 0.0);
        // Everything backwards: nothing elapsed.
        assert_eq!(cpu_usage_between(&b, &a), CpuUsage::default());
    }

    #[test]
    fn parses_proc_stat_text() {
        let text = "cpu  7981 3 3350 139444 813 7 39 28 0 0\n\
                    cpu0 3333 0 1259 71193 61 0 5 14 0 0\n\
                    intr 1 2 3\nctxt 99\n";
        let t = CpuTimes::parse_proc_stat(text).expect("parse");
        assert_eq!(
            t,
            CpuTimes {
                user: 7981,
                nice: 3,
                system: 3350,
                idle: 139444,
                iowait: 813,
                irq: 7,
                softirq: 39,
                steal: 28,
            }
        );
        // Old kernels: only four counters.
        let old = CpuTimes::parse_proc_stat("cpu 1 2 3 4\n").expect("parse");
        assert_eq!(old, times(1, 2, 3, 4));
        assert!(CpuTimes::parse_proc_stat("cpu 1 2 3\n").is_err());
        assert!(CpuTimes::parse_proc_stat("cpu0 1 2 3 4\n").is_err());
        assert!(CpuTimes::parse_proc_stat("cpu 1 x 3 4\n").is_err());
    }

    #[test]
    fn host_sampler_reads_proc_stat() {
        let mut s = CpuSampler::new().expect("CpuSampler::new");
        // Burn a little CPU so the interval is not empty.
        let mut x = 0u64;
        let until = std::time::Instant::now() + Duration::from_millis(30);
        while std::time::Instant::now() < until {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
        }
        let u = s.sample().expect("sample");
        assert!((0.0..=100.0).contains(&u.usr_pct), "{u:?}");
        assert!((0.0..=100.0).contains(&u.sys_pct), "{u:?}");
        assert!(u.usr_pct + u.sys_pct <= 100.0 + 1e-9, "{u:?}");
    }
}
