//! `--metrics-listen`: a run's Prometheus endpoint, started before the run
//! (a bad address is bad input before any I/O) and stopped when it ends.

use crate::Failure;
use iorig_cli::MetricsArgs;
use iorig_run::metrics::Metrics;
use iorig_serve::{Auth, MetricsServer};
use std::collections::BTreeMap;

/// A run's metrics and the server that serves them.
pub struct Served {
    pub metrics: Metrics,
    pub server: MetricsServer,
}

impl Served {
    /// The line that says where the metrics are (tests read it).
    pub fn where_line(&self) -> String {
        format!("metrics at http://{}/metrics", self.server.local_addr())
    }
}

fn auth(a: &MetricsArgs) -> Result<Auth, Failure> {
    let token = match &a.metrics_token_file {
        Some(p) => Some(iorig_agent::read_token(p).map_err(|e| Failure::usage(e.to_string()))?),
        None => None,
    };
    Ok(Auth::new(token))
}

/// Checks the options without listening (dry runs).
pub fn check(a: &MetricsArgs) -> Result<(), Failure> {
    if let Some(addr) = a.metrics_listen {
        auth(a)?
            .check_listen("--metrics-listen", addr)
            .map_err(|e| Failure::usage(e.to_string()))?;
    }
    Ok(())
}

/// Starts serving the metrics of a run with these labels; `None` without
/// `--metrics-listen`.
pub fn start(
    a: &MetricsArgs,
    labels: &BTreeMap<String, String>,
) -> Result<Option<Served>, Failure> {
    let Some(addr) = a.metrics_listen else {
        return Ok(None);
    };
    let metrics = Metrics::new(labels);
    let source = metrics.clone();
    let server =
        iorig_serve::spawn_metrics("--metrics-listen", addr, auth(a)?, move || source.render())
            .map_err(|e| match e {
                iorig_serve::ServeError::Usage(m) => Failure::usage(m),
                e => Failure::runtime(e.to_string()),
            })?;
    Ok(Some(Served { metrics, server }))
}
