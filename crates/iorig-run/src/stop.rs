//! Stopping a test: the user's interrupt (a signal, a closed terminal) and a
//! runner's early end of one step (steady state reached, precondition bytes
//! written) share one flag the workers watch.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

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

/// A start time someone else gives later: a controller tells every agent
/// when its I/O starts once every host is ready.
#[derive(Clone, Debug, Default)]
pub struct StartGate {
    at: Arc<(Mutex<Option<SystemTime>>, Condvar)>,
}

impl StartGate {
    pub fn new() -> Self {
        StartGate::default()
    }

    /// Opens the gate at `at` (this machine's clock).
    pub fn set(&self, at: SystemTime) {
        let (lock, cv) = &*self.at;
        if let Ok(mut g) = lock.lock() {
            *g = Some(at);
        }
        cv.notify_all();
    }

    /// Waits until the start time is given and reached: the time it was
    /// given, or None when `stop` asked the step to end first.
    pub fn wait(&self, stop: &Stop) -> Option<SystemTime> {
        let (lock, cv) = &*self.at;
        let at = loop {
            if stop.step.load(Ordering::SeqCst) {
                return None;
            }
            let g = lock.lock().ok()?;
            if let Some(at) = *g {
                break at;
            }
            // Woken by `set`, or every 50 ms to look at the stop flag.
            let _ = cv.wait_timeout(g, Duration::from_millis(50)).ok()?;
        };
        // Sleep to within a millisecond, then yield until the time: the
        // hosts' starts are then as close as their clocks are.
        loop {
            if stop.step.load(Ordering::SeqCst) {
                return None;
            }
            let left = match at.duration_since(SystemTime::now()) {
                Ok(d) => d,
                Err(_) => return Some(at),
            };
            if left > Duration::from_millis(2) {
                std::thread::sleep(
                    (left - Duration::from_millis(1)).min(Duration::from_millis(50)),
                );
            } else {
                std::thread::yield_now();
            }
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

    #[test]
    fn a_gate_opens_at_its_time_and_a_stop_ends_the_wait() {
        let g = StartGate::new();
        let s = Stop::new();
        let at = SystemTime::now() + Duration::from_millis(30);
        let g2 = g.clone();
        let setter = std::thread::spawn(move || g2.set(at));
        assert_eq!(g.wait(&s), Some(at));
        assert!(SystemTime::now() >= at);
        let _ = setter.join();
        let never = StartGate::new();
        let s2 = s.clone();
        let stopper = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            s2.stop_step();
        });
        let t = Instant::now();
        assert_eq!(never.wait(&s), None);
        assert!(t.elapsed() < Duration::from_secs(5));
        let _ = stopper.join();
    }
}
