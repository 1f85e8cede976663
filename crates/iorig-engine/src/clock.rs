//! Time in a run: the interval boundaries every worker and the collector
//! share ([`IntervalPlan`]), and each worker thread's own clocks
//! ([`ThreadClock`]: time on a CPU or waiting for one, rusage).

use iorig_stats::ThreadUsage;
use std::time::Duration;

/// Interval boundaries of a run, in nanoseconds from its start: warmup intervals
/// first (the last one cut short at the end of warmup), then measured ones.
/// Boundaries are computed, not stored, so a step with an open-ended time (a
/// precondition runs until its bytes are written) costs nothing up front.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalPlan {
    step_ns: u64,
    warm_ns: u64,
    total_ns: u64,
    warmup_intervals: usize,
    len: usize,
}

impl IntervalPlan {
    pub fn new(warmup: Duration, time: Duration, interval: Duration) -> Self {
        let step_ns = (interval.as_nanos().max(1)).min(u64::MAX as u128) as u64;
        let warm_ns = warmup.as_nanos().min(u64::MAX as u128 / 2) as u64;
        let time_ns = time.as_nanos().min(u64::MAX as u128 / 2) as u64;
        let warmup_intervals = warm_ns.div_ceil(step_ns) as usize;
        let measured = time_ns.div_ceil(step_ns) as usize;
        IntervalPlan {
            step_ns,
            warm_ns,
            total_ns: warm_ns + time_ns,
            warmup_intervals,
            len: warmup_intervals + measured,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// End of interval `i`; u64::MAX past the last.
    #[inline]
    pub fn end_of(&self, i: usize) -> u64 {
        if i >= self.len {
            u64::MAX
        } else if i < self.warmup_intervals {
            ((i as u64 + 1).saturating_mul(self.step_ns)).min(self.warm_ns)
        } else {
            let j = (i - self.warmup_intervals) as u64 + 1;
            self.warm_ns
                .saturating_add(j.saturating_mul(self.step_ns))
                .min(self.total_ns)
        }
    }

    pub fn start_of(&self, i: usize) -> u64 {
        if i == 0 {
            0
        } else {
            self.end_of(i - 1)
        }
    }

    pub fn end_ns(&self) -> u64 {
        if self.len == 0 {
            0
        } else {
            self.total_ns
        }
    }

    pub fn is_warmup(&self, i: usize) -> bool {
        i < self.warmup_intervals
    }
}

/// How long the calling thread has been on a CPU or waiting in a run queue
/// for one, ns: a worker for which this grows as fast as the wall clock
/// never waited for the storage, whether it ran (one saturated worker) or
/// was kept from running (more workers than CPUs). From the kernel's
/// per-thread `schedstat` (run time and run-queue wait); where that is
/// missing, the thread's CPU clock alone.
pub struct ThreadClock {
    schedstat: Option<std::fs::File>,
    /// The thread's rusage when [`ThreadClock::usage_delta`] was last asked.
    usage: ThreadUsage,
}

impl ThreadClock {
    /// Call on the thread to be measured.
    pub(crate) fn new() -> Self {
        ThreadClock {
            schedstat: std::fs::File::open("/proc/thread-self/schedstat").ok(),
            usage: thread_usage(),
        }
    }

    /// The thread's rusage counts since the last call (or since `new`).
    pub(crate) fn usage_delta(&mut self) -> ThreadUsage {
        let now = thread_usage();
        let delta = now.since(&self.usage);
        self.usage = now;
        delta
    }

    pub(crate) fn busy_ns(&mut self) -> u64 {
        if let Some(f) = &self.schedstat {
            use std::os::unix::fs::FileExt;
            let mut buf = [0u8; 96];
            if let Ok(n) = f.read_at(&mut buf, 0) {
                let text = std::str::from_utf8(&buf[..n]).unwrap_or("");
                let mut fields = text.split_whitespace().map(|v| v.parse::<u64>().ok());
                if let (Some(Some(run)), Some(Some(wait))) = (fields.next(), fields.next()) {
                    return run.saturating_add(wait);
                }
            }
            self.schedstat = None;
        }
        thread_cpu_ns()
    }
}

/// The calling thread's rusage (`RUSAGE_THREAD`); zeros if the call fails.
pub(crate) fn thread_usage() -> ThreadUsage {
    // SAFETY: an all-zero rusage is a valid value (integers and timevals).
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes one rusage through a valid pointer to a local.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return ThreadUsage::default();
    }
    let ns = |t: libc::timeval| {
        (t.tv_sec.max(0) as u64).saturating_mul(1_000_000_000) + t.tv_usec.max(0) as u64 * 1_000
    };
    let count = |v: libc::c_long| v.max(0) as u64;
    ThreadUsage {
        usr_ns: ns(ru.ru_utime),
        sys_ns: ns(ru.ru_stime),
        ctx: count(ru.ru_nvcsw) + count(ru.ru_nivcsw),
        minflt: count(ru.ru_minflt),
        majflt: count(ru.ru_majflt),
    }
}

/// CPU time (usr+sys) of the calling thread, ns; 0 if the clock is missing.
pub(crate) fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer to a
    // local; CLOCK_THREAD_CPUTIME_ID needs nothing else.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64).saturating_mul(1_000_000_000) + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_plan_with_warmup() {
        let p = IntervalPlan::new(
            Duration::from_millis(1500),
            Duration::from_millis(2500),
            Duration::from_secs(1),
        );
        let s = 1_000_000_000u64;
        let ends: Vec<u64> = (0..p.len()).map(|i| p.end_of(i)).collect();
        assert_eq!(ends, vec![s, 3 * s / 2, 5 * s / 2, 7 * s / 2, 4 * s]);
        assert_eq!(p.end_of(5), u64::MAX);
        assert!(p.is_warmup(0) && p.is_warmup(1) && !p.is_warmup(2));
        assert_eq!(p.end_ns(), 4 * s);
        assert_eq!(p.start_of(2), 3 * s / 2);
    }

    #[test]
    fn an_open_ended_plan_costs_nothing_up_front() {
        // A precondition's 1000 h at 100 ms: 36 million intervals, computed.
        let p = IntervalPlan::new(
            Duration::ZERO,
            Duration::from_secs(1000 * 3600),
            Duration::from_millis(100),
        );
        assert_eq!(p.len(), 36_000_000);
        assert_eq!(p.end_of(35_999_999), 1000 * 3600 * 1_000_000_000);
        assert_eq!(p.end_of(7), 800_000_000);
        assert!(std::mem::size_of_val(&p) <= 64);
        // An interval that does not divide the time: the last one is short.
        let p = IntervalPlan::new(
            Duration::ZERO,
            Duration::from_millis(2500),
            Duration::from_secs(1),
        );
        assert_eq!(p.len(), 3);
        assert_eq!(p.end_of(2), 2_500_000_000);
    }
}
