//! The run's worker threads: each started on its CPUs with a fine timer
//! slack, set up on its own, then held at one barrier until the collector
//! gives them all the same start; joined by a deadline, where one stuck in a
//! system call is left behind rather than hanging the run.

use crate::EngineError;
use iorig_spec::Workload;
use std::sync::{Arc, Barrier, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What a worker thread waits at: every worker's setup, then the start.
#[derive(Clone)]
pub(crate) struct Gate {
    barrier: Arc<Barrier>,
    start: Arc<OnceLock<Instant>>,
}

impl Gate {
    /// Set up: waits for the others, then for the common start time.
    pub(crate) fn wait_start(&self) -> Instant {
        self.barrier.wait();
        loop {
            if let Some(s) = self.start.get() {
                return *s;
            }
            std::thread::yield_now();
        }
    }

    /// Setup failed: passes the barrier, so the others are not kept waiting.
    pub(crate) fn pass(&self) {
        self.barrier.wait();
    }
}

/// The worker threads of one run.
pub(crate) struct Pool {
    gate: Gate,
    handles: Vec<JoinHandle<()>>,
}

impl Pool {
    pub(crate) fn new(workers: u32) -> Self {
        Pool {
            gate: Gate {
                barrier: Arc::new(Barrier::new(workers as usize + 1)),
                start: Arc::new(OnceLock::new()),
            },
            handles: Vec::new(),
        }
    }

    /// Starts worker thread `name` on `cpus` (none: anywhere); `body` sets
    /// itself up and then waits at its gate.
    pub(crate) fn spawn(
        &mut self,
        name: String,
        cpus: Vec<usize>,
        body: impl FnOnce(Gate) + Send + 'static,
    ) -> Result<(), EngineError> {
        let gate = self.gate.clone();
        let handle = std::thread::Builder::new()
            .name(name)
            .spawn(move || {
                set_timer_slack();
                pin_to(&cpus);
                body(gate);
            })
            .map_err(|e| EngineError::Io {
                what: "starting a worker thread".into(),
                source: e,
            })?;
        self.handles.push(handle);
        Ok(())
    }

    /// Waits until every worker is set up (or failed).
    pub(crate) fn all_set_up(&self) {
        self.gate.barrier.wait();
    }

    /// Gives every worker the start time: now.
    pub(crate) fn start(&self) -> Instant {
        let start = Instant::now();
        let _ = self.gate.start.set(start);
        start
    }

    /// Joins every worker, however long they take (a run that never
    /// started).
    pub(crate) fn join(self) {
        for h in self.handles {
            let _ = h.join();
        }
    }

    /// Joins the workers by `deadline`; the ids of those left behind.
    pub(crate) fn join_by(self, deadline: Instant) -> Vec<usize> {
        let mut behind = Vec::new();
        for (id, h) in self.handles.into_iter().enumerate() {
            while !h.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            if h.is_finished() {
                let _ = h.join();
            } else {
                behind.push(id);
            }
        }
        behind
    }
}

/// Keeps the calling worker thread on `cpus` (none: anywhere). The set was
/// checked against the process's own when the run was planned.
pub(crate) fn pin_to(cpus: &[usize]) {
    if cpus.is_empty() {
        return;
    }
    let mut set = rustix::thread::CpuSet::new();
    for c in cpus {
        set.set(*c);
    }
    // A CPU taken offline since planning leaves the worker where it is.
    let _ = rustix::thread::sched_setaffinity(None, &set);
}

/// The workload's CPUs must be ones this process may run on.
pub(crate) fn check_cpus(w: &Workload) -> Result<(), EngineError> {
    if w.cpus.is_empty() {
        return Ok(());
    }
    let allowed = rustix::thread::sched_getaffinity(None)
        .map_err(|e| EngineError::Usage(format!("--cpus: reading this process's CPUs: {e}")))?;
    let missing: Vec<String> = w
        .cpus
        .iter()
        .filter(|c| !allowed.is_set(**c))
        .map(|c| c.to_string())
        .collect();
    if !missing.is_empty() {
        let mut have = Vec::new();
        for c in 0..rustix::thread::CpuSet::MAX_CPU {
            if allowed.is_set(c) {
                have.push(c.to_string());
            }
        }
        return Err(EngineError::Usage(format!(
            "--cpus names CPU(s) {} that this process may not run on; it may run on {}",
            missing.join(","),
            have.join(",")
        )));
    }
    Ok(())
}

/// Lets sleeps under a rate limit wake within microseconds, not the default 50.
pub(crate) fn set_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and only affects the
    // calling thread's timer slack; no memory is passed.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pinned_worker_runs_only_on_its_cpus() {
        let allowed = rustix::thread::sched_getaffinity(None).expect("affinity");
        let first = (0..rustix::thread::CpuSet::MAX_CPU)
            .find(|c| allowed.is_set(*c))
            .expect("a CPU");
        let seen = std::thread::spawn(move || {
            pin_to(&[first]);
            let now = rustix::thread::sched_getaffinity(None).expect("affinity");
            (0..rustix::thread::CpuSet::MAX_CPU)
                .filter(|c| now.is_set(*c))
                .collect::<Vec<_>>()
        })
        .join()
        .expect("thread");
        assert_eq!(seen, vec![first]);
    }
}
