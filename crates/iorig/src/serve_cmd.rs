//! `iorig serve`: the store as web pages and an API until Ctrl-C or
//! SIGTERM.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::{exit, Failure};
use iorig_cli::ServeArgs;
use iorig_serve::pool::StorePool;
use iorig_serve::{App, Auth};
use iorig_store::Location;
use std::time::Duration;

/// Store threads: requests' reads run on them, two at a time.
const STORE_THREADS: usize = 2;

pub fn serve(a: ServeArgs) -> Result<u8, Failure> {
    let token = match &a.token_file {
        Some(p) => Some(iorig_agent::read_token(p).map_err(|e| Failure::usage(e.to_string()))?),
        None => None,
    };
    let auth = Auth::new(token);
    let usage = |e: iorig_serve::ServeError| Failure::usage(e.to_string());
    auth.check_listen("--listen", a.listen).map_err(usage)?;
    if let Some(m) = a.metrics_listen {
        auth.check_listen("--metrics-listen", m).map_err(usage)?;
    }
    let at = crate::store::location(a.db.as_ref())?;
    // Serving never creates a store: a missing file, or a database without
    // iorig's schema, is bad input.
    match &at {
        Location::File(path) => {
            if std::fs::symlink_metadata(path).is_err() {
                return Err(Failure::usage(format!(
                    "no result store at {}; run something first, or give --db PATH|URL (or IORIG_DB)",
                    path.display()
                )));
            }
        }
        _ => {
            iorig_store::Store::open_read_only_at(&at)
                .map_err(|e| Failure::from(iorig_run::store::store_error(&at, e)))?;
        }
    }
    let pool = StorePool::open(&at, STORE_THREADS)
        .map_err(|e| Failure::from(iorig_run::store::store_error(&at, e)))?;
    let app = App::new(pool, auth.clone(), at.to_string());
    let printer = Printer::new(false, a.quiet);
    let stop = crate::signals::install();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::runtime(format!("starting the server's runtime: {e}")))?;
    rt.block_on(async move {
        let bind = |addr, flag: &'static str| async move {
            tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                Failure::usage(format!(
                    "{flag} {addr}: cannot listen there ({e}); choose a free port or an address of this machine"
                ))
            })
        };
        let listener = bind(a.listen, "--listen").await?;
        let metrics = match a.metrics_listen {
            Some(m) => Some(bind(m, "--metrics-listen").await?),
            None => None,
        };
        let bound = listener.local_addr().unwrap_or(a.listen);
        printer.line(&format!(
            "iorig serve {} at http://{bound}/ ({}), store {at}; Ctrl-C ends it",
            env!("CARGO_PKG_VERSION"),
            if app.auth_required() { "token required" } else { "loopback, no token" },
        ));
        let shutdown = move || {
            let stop = stop.clone();
            async move {
                while !stop.interrupted() {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        };
        if let Some(m) = metrics {
            if let Ok(addr) = m.local_addr() {
                printer.line(&format!("metrics at http://{addr}/metrics"));
            }
            let router = iorig_serve::metrics_router(app.clone());
            let done = shutdown();
            let auth = auth.clone();
            tokio::spawn(async move {
                let _ = iorig_serve::serve_on(m, router, &auth, done).await;
            });
        }
        iorig_serve::serve_on(listener, iorig_serve::router(app), &auth, shutdown())
            .await
            .map_err(|e| Failure::runtime(format!("serving: {e}")))
    })?;
    Ok(exit::OK)
}
