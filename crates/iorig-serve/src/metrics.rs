//! The `/metrics` endpoint: Prometheus' text format from whatever renders
//! it (a run's [`iorig_run::metrics::Metrics`], or a store), behind the
//! server's [`Auth`].

use crate::{Auth, ServeError};
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use std::net::SocketAddr;
use std::sync::Arc;

/// What renders the exposition text at each scrape.
type Render = Arc<dyn Fn() -> String + Send + Sync>;

/// A running metrics endpoint; dropping it stops it.
pub struct MetricsServer {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl MetricsServer {
    /// Where it listens (the port chosen when `:0` was given).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Serves `GET /metrics` at `addr` on a thread of its own until the
/// returned server is dropped. `flag` names the option in messages. The
/// address is bound before this returns, so a bad one is bad input now.
pub fn spawn_metrics(
    flag: &str,
    addr: SocketAddr,
    auth: Auth,
    render: impl Fn() -> String + Send + Sync + 'static,
) -> Result<MetricsServer, ServeError> {
    auth.check_listen(flag, addr)?;
    let listener = std::net::TcpListener::bind(addr).map_err(|e| {
        ServeError::Usage(format!(
            "{flag} {addr}: cannot listen there ({e}); choose a free port or an address of this machine"
        ))
    })?;
    let bound = listener.local_addr().unwrap_or(addr);
    listener
        .set_nonblocking(true)
        .map_err(|e| ServeError::Runtime(format!("{flag} {addr}: {e}")))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| ServeError::Runtime(format!("starting the metrics server: {e}")))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let render: Render = Arc::new(render);
    let app = Router::new()
        .route("/metrics", get(scrape))
        .with_state((auth.clone(), render));
    let app = crate::app::with_host_guard(app, &auth, bound);
    let thread = std::thread::Builder::new()
        .name("iorig-metrics".into())
        .spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
                    return;
                };
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await;
            });
        })
        .map_err(|e| ServeError::Runtime(format!("starting the metrics server: {e}")))?;
    Ok(MetricsServer {
        addr: bound,
        stop: Some(stop),
        thread: Some(thread),
    })
}

async fn scrape(State((auth, render)): State<(Auth, Render)>, headers: HeaderMap) -> Response {
    if !auth.allows(&headers) {
        return unauthorized();
    }
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        render(),
    )
        .into_response()
}

/// 401 with the scheme to use.
pub(crate) fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        "a token is required: send Authorization: Bearer TOKEN\n",
    )
        .into_response()
}
