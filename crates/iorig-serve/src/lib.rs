//! iorig's HTTP side: the Prometheus `/metrics` endpoint of a run (`run`,
//! `plan run`, `agent` with `--metrics-listen`), and the rules every iorig
//! server follows: loopback unless a token guards it, every request
//! refused with 401 without the token when there is one.
//!
//! Servers run on a thread of their own with a small runtime, so the
//! synchronous runner never waits on them, and stop when their handle is
//! dropped.

mod auth;
mod metrics;

pub use auth::Auth;
pub use metrics::{spawn_metrics, MetricsServer};

/// Why a server cannot start. Every message is one line, saying what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The address or its authentication is not acceptable (bad input).
    #[error("{0}")]
    Usage(String),
    /// The server could not be set up.
    #[error("{0}")]
    Runtime(String),
}
