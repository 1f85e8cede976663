//! iorig's HTTP side: `iorig serve` (the web pages and JSON API over a
//! result store, the live view of runs in progress) and the Prometheus
//! `/metrics` endpoint of a run (`run`, `plan run`, `agent` with
//! `--metrics-listen`), with the rules every iorig server follows:
//! loopback unless a token guards it, every request refused with 401
//! without the token when there is one.
//!
//! The store is reached through [`pool::StorePool`]'s threads, never from
//! the server's tasks. A run's metrics endpoint runs on a thread of its
//! own with a small runtime, so the synchronous runner never waits on it,
//! and stops when its handle is dropped.

mod api;
mod app;
mod auth;
mod metrics;
mod pages;
pub mod pool;
mod web;

pub use api::metrics_router;
pub use app::{router, serve_blocking, serve_on, App, Listen};
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
