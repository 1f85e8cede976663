//! `iorig agent`: serves controllers until Ctrl-C or SIGTERM.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::{exit, Failure};
use iorig_agent::server::{serve, AgentConfig};
use iorig_cli::AgentArgs;
use std::net::SocketAddr;
use std::time::Duration;

pub fn agent(a: AgentArgs) -> Result<u8, Failure> {
    let listen: SocketAddr = a.listen.parse().map_err(|_| {
        Failure::usage(format!(
            "--listen {}: give an address and port, e.g. 127.0.0.1:7420 or 0.0.0.0:7420 (with --token-file)",
            a.listen
        ))
    })?;
    let token = match &a.token_file {
        Some(p) => Some(iorig_agent::read_token(p).map_err(|e| Failure::usage(e.to_string()))?),
        None => None,
    };
    let served = crate::metrics::start(&a.metrics, &std::collections::BTreeMap::new())?;
    let config = AgentConfig {
        listen,
        token,
        allow_destroy: a.allow_destroy,
        results_dir: a.results_dir.clone(),
        db: a.db.clone(),
        metrics: served.as_ref().map(|s| s.metrics.clone()),
        tls: crate::tls_files(&a.tls)?,
    };
    config.check().map_err(|e| Failure::usage(e.to_string()))?;
    match &a.db {
        Some(iorig_store::Location::File(path)) => crate::store::check_output("--db", path)?,
        // A database the agent cannot reach is bad input now, not at its
        // first run.
        Some(db) => crate::store::check_store(Some(db))?,
        None => {}
    }
    let printer = Printer::new(false, a.quiet);
    let stop = crate::signals::install();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::runtime(format!("starting the agent's runtime: {e}")))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| {
            Failure::usage(format!(
                "--listen {listen}: cannot listen there ({e}); choose a free port or an address of this machine"
            ))
        })?;
        let bound = listener.local_addr().unwrap_or(listen);
        printer.line(&format!(
            "iorig agent {} listening on {bound} ({}{}); Ctrl-C ends it",
            env!("CARGO_PKG_VERSION"),
            match (config.token.is_some(), config.tls.is_some()) {
                (true, true) => "mutual TLS and token required",
                (false, true) => "mutual TLS required",
                (true, false) => "token required",
                (false, false) => "loopback, no token",
            },
            if config.allow_destroy { ", --allow-destroy allowed" } else { "" }
        ));
        if let Some(s) = &served {
            printer.line(&s.where_line());
        }
        // The process's one signal handler sets `stop`; the server shuts
        // down (stopping a run in progress) when it does.
        let shutdown = async move {
            while !stop.interrupted() {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        serve(config, listener, shutdown)
            .await
            .map_err(|e| Failure::runtime(e.to_string()))
    })?;
    Ok(exit::OK)
}
