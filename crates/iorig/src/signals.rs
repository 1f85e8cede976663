//! Interruption handling shared by every command that runs I/O.
//!
//! One handler per process (the `ctrlc` crate allows no more); it catches
//! SIGINT (Ctrl-C), SIGTERM and SIGHUP alike, since each means "stop now" to a
//! benchmark. The first signal sets `interrupted` and `stop`: the running step
//! ends at once, keeping its completed intervals, and a plan stops after it.
//! A second signal exits immediately. Standard output closing under us (a
//! broken pipe, as in `iorig run | head`) is the same kind of interruption:
//! the printer reports it through [`output_closed`]. `stop` is also how a plan ends a step early (steady state
//! reached, preconditioning done), so it is re-armed before each step unless
//! the user interrupted.

use crate::exit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The process's one set of flags, once installed; the printer reaches it
/// through [`output_closed`].
static INSTALLED: OnceLock<Signals> = OnceLock::new();

/// Standard output is gone (broken pipe): interrupt the run as a signal
/// would, so it stops cleanly and is recorded as interrupted.
pub fn output_closed() {
    if let Some(s) = INSTALLED.get() {
        s.interrupted.store(true, Ordering::SeqCst);
        s.stop.store(true, Ordering::SeqCst);
    }
}

#[derive(Clone)]
pub struct Signals {
    pub stop: Arc<AtomicBool>,
    pub interrupted: Arc<AtomicBool>,
}

impl Signals {
    pub fn install() -> Self {
        if let Some(s) = INSTALLED.get() {
            return s.clone();
        }
        let s = Signals {
            stop: Arc::new(AtomicBool::new(false)),
            interrupted: Arc::new(AtomicBool::new(false)),
        };
        let stop = s.stop.clone();
        let interrupted = s.interrupted.clone();
        let _ = ctrlc::set_handler(move || {
            if interrupted.swap(true, Ordering::SeqCst) {
                std::process::exit(exit::INTERRUPTED as i32);
            }
            stop.store(true, Ordering::SeqCst);
        });
        let _ = INSTALLED.set(s.clone());
        s
    }

    pub fn interrupted(&self) -> bool {
        self.interrupted.load(Ordering::SeqCst)
    }

    /// Clears an early-stop request before the next step (not a Ctrl-C).
    pub fn rearm(&self) {
        if !self.interrupted() {
            self.stop.store(false, Ordering::SeqCst);
        }
    }

    /// Ends the running step early.
    pub fn stop_step(&self) {
        self.stop.store(true, Ordering::SeqCst);
    }

    /// Sleeps up to `d`, waking early on Ctrl-C. Returns false when interrupted.
    pub fn sleep(&self, d: std::time::Duration) -> bool {
        let end = std::time::Instant::now() + d;
        loop {
            if self.interrupted() {
                return false;
            }
            let now = std::time::Instant::now();
            if now >= end {
                return true;
            }
            std::thread::sleep((end - now).min(std::time::Duration::from_millis(100)));
        }
    }
}
