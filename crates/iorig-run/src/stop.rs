//! Stopping a test: the user's interrupt (a signal, a closed terminal) and a
//! runner's early end of one step (steady state reached, precondition bytes
//! written) share one flag the workers watch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Shared by the front end (which calls [`Stop::interrupt`] on a signal)
/// and the runner.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    /// The running step ends as soon as the workers see this.
    pub step: Arc<AtomicBool>,
    interrupted: Arc<AtomicBool>,
}

impl Stop {
    pub fn new() -> Self {
        Stop::default()
    }

    /// The user wants everything to end: the running step stops at once,
    /// keeping its completed intervals, and a plan stops after it. Safe to
    /// call from a signal handler thread.
    pub fn interrupt(&self) {
        self.interrupted.store(true, Ordering::SeqCst);
        self.step.store(true, Ordering::SeqCst);
    }

    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// Clears an early-stop request before the next step (not an interrupt).
    pub fn rearm(&self) {
        if !self.interrupted() {
            self.step.store(false, Ordering::SeqCst);
        }
    }

    /// Ends the running step early.
    pub fn stop_step(&self) {
        self.step.store(true, Ordering::SeqCst);
    }

    /// Sleeps up to `d`, waking early on an interrupt. Returns false when
    /// interrupted.
    pub fn sleep(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        loop {
            if self.interrupted() {
                return false;
            }
            let now = Instant::now();
            if now >= end {
                return true;
            }
            std::thread::sleep((end - now).min(Duration::from_millis(100)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupt_survives_rearm_and_ends_a_sleep() {
        let s = Stop::new();
        s.stop_step();
        s.rearm();
        assert!(!s.step.load(Ordering::SeqCst));
        s.interrupt();
        s.rearm();
        assert!(s.step.load(Ordering::SeqCst));
        let t = Instant::now();
        assert!(!s.sleep(Duration::from_secs(30)));
        assert!(t.elapsed() < Duration::from_secs(5));
    }
}
