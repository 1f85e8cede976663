//! `iorig serve`: the store as web pages and an API until Ctrl-C or
//! SIGTERM.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::{exit, Failure};
use iorig_cli::ServeArgs;
use iorig_serve::pool::StorePool;
use iorig_serve::{App, Auth};
use iorig_store::Location;

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
        auth.check_listen_with("--metrics-listen", "--token-file", m)
            .map_err(usage)?;
    }
    let at = crate::store::location(a.db.as_ref())?;
    // Serving never creates a store: a missing file, or a database without
    // iorig's schema, is bad input.
    iorig_run::store::must_exist(&at)?;
    if !matches!(at, Location::File(_)) {
        iorig_store::Store::open_read_only_at(&at)
            .map_err(|e| iorig_run::store::store_error(&at, e))?;
    }
    let pool =
        StorePool::open(&at, STORE_THREADS).map_err(|e| iorig_run::store::store_error(&at, e))?;
    let app = App::new(pool, auth.clone(), at.to_string());
    let printer = Printer::new(false, a.quiet);
    let stop = crate::signals::install();
    let listen = iorig_serve::Listen {
        pages: a.listen,
        metrics: a.metrics_listen,
    };
    let token = if app.auth_required() {
        "token required"
    } else {
        "loopback, no token"
    };
    let listening = |bound, metrics: Option<std::net::SocketAddr>| {
        printer.line(&format!(
            "iorig serve {} at http://{bound}/ ({token}), store {at}; Ctrl-C ends it",
            env!("CARGO_PKG_VERSION"),
        ));
        if let Some(addr) = metrics {
            printer.line(&format!("metrics at http://{addr}/metrics"));
        }
    };
    iorig_serve::serve_blocking(app, listen, move || stop.interrupted(), listening).map_err(
        |e| match e {
            iorig_serve::ServeError::Usage(m) => Failure::usage(m),
            e => Failure::runtime(e.to_string()),
        },
    )?;
    Ok(exit::OK)
}
