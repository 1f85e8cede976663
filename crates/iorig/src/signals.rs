//! Interruption handling shared by every command that runs I/O.
//!
//! One handler per process (the `ctrlc` crate allows no more); it catches
//! SIGINT (Ctrl-C), SIGTERM and SIGHUP alike, since each means "stop now" to a
//! benchmark. The first signal interrupts the runner's [`Stop`]: the running
//! step ends at once, keeping its completed intervals, and a plan stops after
//! it. A second signal exits immediately. Standard output closing under us (a
//! broken pipe, as in `iorig run | head`) is the same kind of interruption:
//! the printer reports it through [`output_closed`].

use crate::exit;
use iorig_run::Stop;
use std::sync::OnceLock;

/// The process's one stop handle, once installed.
static INSTALLED: OnceLock<Stop> = OnceLock::new();

/// Set while the process holds host state it must put back (a trace
/// capture's tracing settings): a second signal then does not exit at once.
static PATIENT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes further signals only interrupt, never exit: the command ends
/// through its own cleanup.
pub fn be_patient() {
    PATIENT.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// Standard output is gone (broken pipe): interrupt the run as a signal
/// would, so it stops cleanly and is recorded as interrupted.
pub fn output_closed() {
    if let Some(s) = INSTALLED.get() {
        s.interrupt();
    }
}

/// The stop handle the signal handler interrupts.
pub fn install() -> Stop {
    INSTALLED
        .get_or_init(|| {
            let stop = Stop::new();
            let handler = stop.clone();
            let _ = ctrlc::set_handler(move || {
                if handler.interrupted() && !PATIENT.load(std::sync::atomic::Ordering::SeqCst) {
                    std::process::exit(exit::INTERRUPTED as i32);
                }
                handler.interrupt();
            });
            stop
        })
        .clone()
}
