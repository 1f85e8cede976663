//! iorig's test runner as a library: everything that executes a test, for
//! every front end (the CLI today; agents, the web UI and importers next).
//!
//! - [`single`] runs one resolved workload (`iorig run`).
//! - [`plan`] runs a whole plan: precondition, warmup, measured rounds until
//!   steady or time, pauses, per-step and plan-level analysis, resume.
//! - [`verify_scan`] re-reads journaled targets offline (`iorig verify`).
//! - [`profile`] samples `/proc/diskstats` or reads a recording.
//!
//! Progress leaves as [`Event`]s to a [`Sink`]; the result store is written
//! by [`StoreWriter`], which takes the same events. Results are the typed
//! `iorig-result` documents. Nothing here prints or exits: a front end wires
//! sinks, renders events and chooses exit codes.

pub mod analyse;
pub mod collect;
mod created;
pub mod csv;
pub mod event;
pub mod fio_out;
pub mod fit;
pub mod group;
pub mod iolog;
pub mod journal;
pub mod local;
pub mod merge;
pub mod metrics;
pub mod plan;
pub mod profile;
pub mod replay;
pub mod results;
pub mod single;
pub mod sizing;
pub mod step;
pub mod stop;
pub mod store;
mod tree;
pub mod verify_scan;

pub use event::{Collector, Event, PlanProgress, Sink};
pub use local::Local;
pub use results::JobPart;
pub use step::{Control, JobCall, Out, StepCall, StepExecutor, StepHooks, StepOutput};
pub use stop::{StartGate, Stop};
pub use store::StoreWriter;

/// Why a test could not run or went wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// Bad input: a workload, plan, target or output the user must change.
    /// Nothing was written.
    #[error("{0}")]
    Usage(String),
    /// A fault while running (a file that cannot be read or written, a
    /// target that vanished).
    #[error("{0}")]
    Runtime(String),
    /// Stopped by the user before anything was measured.
    #[error("{0}")]
    Interrupted(String),
}

impl RunError {
    pub fn usage(message: impl Into<String>) -> Self {
        RunError::Usage(message.into())
    }
    pub fn runtime(message: impl Into<String>) -> Self {
        RunError::Runtime(message.into())
    }
    /// The same kind of error with `prefix` in front of its message.
    pub fn context(self, prefix: &str) -> Self {
        match self {
            RunError::Usage(m) => RunError::Usage(format!("{prefix}{m}")),
            RunError::Runtime(m) => RunError::Runtime(format!("{prefix}{m}")),
            RunError::Interrupted(m) => RunError::Interrupted(format!("{prefix}{m}")),
        }
    }
}

impl From<iorig_engine::EngineError> for RunError {
    fn from(e: iorig_engine::EngineError) -> Self {
        if e.is_usage() {
            RunError::Usage(e.to_string())
        } else {
            RunError::Runtime(e.to_string())
        }
    }
}

impl From<iorig_outfile::OutputError> for RunError {
    fn from(e: iorig_outfile::OutputError) -> Self {
        if e.is_usage() {
            RunError::Usage(e.to_string())
        } else {
            RunError::Runtime(e.to_string())
        }
    }
}

/// The time now as RFC 3339 (UTC, seconds).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// This machine's host name.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}
