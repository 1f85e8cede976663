//! `iorig serve`: the web pages and the JSON API over a result store, and
//! the live view of runs in progress. The store is the meeting point: a
//! run any `iorig` writes into the same store (a file, or a team's
//! PostgreSQL database) shows up here as it goes, no second channel.
//!
//! Every page is rendered on the server (the reports' own HTML and SVG
//! charts); the only script is the live view's, served from here, so the
//! pages work offline. Every request passes [`guard`]: the token when
//! there is one, no cross-site writes, and the headers that keep pages
//! from being framed or scripts from elsewhere from running.

use crate::pool::StorePool;
use crate::{api, pages, web, Auth};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use iorig_store::{RunFilter, RunId, RunKind, RunStatus, Store};
use serde::Deserialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs a page shows unless told otherwise, and at most.
pub(crate) const PAGE_RUNS: u64 = 50;
pub(crate) const MAX_PAGE_RUNS: u64 = 1000;
/// How often the live view looks for new intervals.
pub(crate) const LIVE_POLL: Duration = Duration::from_millis(500);
/// Runs a comparison takes.
pub(crate) const COMPARE_RUNS: std::ops::RangeInclusive<usize> = 2..=8;

/// What the server needs.
pub struct App {
    pub(crate) pool: StorePool,
    pub(crate) auth: Auth,
    /// The store as the pages name it (a URL without its password).
    pub(crate) store_name: String,
}

impl App {
    pub fn new(pool: StorePool, auth: Auth, store_name: String) -> Arc<App> {
        Arc::new(App {
            pool,
            auth,
            store_name,
        })
    }
}

pub(crate) type Shared = State<Arc<App>>;

/// Every route of the server.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(web::runs_page))
        .route("/runs/{id}", get(web::run_page))
        .route("/runs/{id}/live", get(web::live_page))
        .route("/runs/{id}/steps/{step}", get(web::step_intervals_page))
        .route("/runs/{id}/labels", post(web::label_form))
        .route("/runs/{id}/download/{file}", get(web::download))
        .route("/compare", get(web::compare_page))
        .route("/plans", get(web::plans_page))
        .route("/login", get(web::login_page).post(web::login))
        .route("/static/live.js", get(web::live_js))
        // Browsers ask for it on every page; nothing to give.
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/api/runs", get(api::api_runs))
        .route("/api/runs/{id}", get(api::api_run))
        .route("/api/runs/{id}/export", get(api::api_export))
        .route("/api/runs/{id}/intervals", get(api::api_intervals))
        .route("/api/runs/{id}/labels", post(api::api_label))
        .route("/api/runs/{id}/events", get(api::api_events))
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(app.clone(), guard))
        .with_state(app)
}

/// A failed request: its status and one line saying why.
pub(crate) struct Failure {
    status: StatusCode,
    message: String,
    api: bool,
}

impl Failure {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
            api: false,
        }
    }
    pub(crate) fn bad(message: impl Into<String>) -> Failure {
        Failure::new(StatusCode::BAD_REQUEST, message)
    }
    pub(crate) fn no_run(id: i64) -> Failure {
        Failure::new(
            StatusCode::NOT_FOUND,
            format!("no run {id} in this store; the runs page lists them"),
        )
    }
    pub(crate) fn internal(e: impl std::fmt::Display) -> Failure {
        Failure::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
    /// The same failure answered as JSON (`{"error": ...}`).
    pub(crate) fn api(mut self) -> Failure {
        self.api = true;
        self
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        if self.api {
            let body = serde_json::json!({ "error": self.message });
            return (self.status, Json(body)).into_response();
        }
        (
            self.status,
            Html(pages::error_page(self.status.as_u16(), &self.message)),
        )
            .into_response()
    }
}

impl From<crate::pool::PoolError> for Failure {
    fn from(e: crate::pool::PoolError) -> Failure {
        Failure::internal(e)
    }
}

/// Runs `f` on a store thread; a store error is a 500 saying so.
pub(crate) async fn with_store<R: Send + 'static>(
    app: &App,
    f: impl FnOnce(&Store) -> Result<R, Failure> + Send + 'static,
) -> Result<R, Failure> {
    app.pool.with(f).await?
}

/// The token, cross-site writes and the headers every answer carries.
async fn guard(State(app): Shared, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let path = req.uri().path().to_owned();
    let api = path.starts_with("/api/");
    let open = path == "/login" || path == "/favicon.ico" || path.starts_with("/static/");
    let mut resp = if !open && !app.auth.allows(req.headers()) {
        if api {
            let mut r = Failure::new(
                StatusCode::UNAUTHORIZED,
                "a token is required: send Authorization: Bearer TOKEN",
            )
            .api()
            .into_response();
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            r
        } else {
            let mut r = (
                StatusCode::UNAUTHORIZED,
                Html(pages::login_page(true, false)),
            )
                .into_response();
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            r
        }
    } else if req.method() != Method::GET
        && req.method() != Method::HEAD
        && cross_site(req.headers())
    {
        Failure::new(
            StatusCode::FORBIDDEN,
            "a change from another site's page is refused; use this server's own pages or the API",
        )
        .into_response()
    } else {
        next.run(req).await
    };
    let h = resp.headers_mut();
    // Scripts and styles only from here (the pages' inline CSS and SVG
    // styles aside); never framed.
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    if let Ok(v) = HeaderValue::from_str(&format!(
        "app;dur={:.1}",
        started.elapsed().as_secs_f64() * 1e3
    )) {
        h.insert("server-timing", v);
    }
    resp
}

/// A request a browser made for another site's page: `Sec-Fetch-Site`
/// says so, or an `Origin` that is not this server's host.
fn cross_site(h: &HeaderMap) -> bool {
    if let Some(site) = h.get("sec-fetch-site").and_then(|v| v.to_str().ok()) {
        return !matches!(site, "same-origin" | "none");
    }
    match (
        h.get(header::ORIGIN).and_then(|v| v.to_str().ok()),
        h.get(header::HOST).and_then(|v| v.to_str().ok()),
    ) {
        (Some(origin), Some(host)) => {
            let origin_host = origin.split("://").nth(1).unwrap_or(origin);
            origin_host != host
        }
        (Some(_), None) => true,
        _ => false,
    }
}

pub(crate) async fn not_found() -> Failure {
    Failure::new(StatusCode::NOT_FOUND, "no such page; the runs page is at /")
}

// ----- the runs -----

/// The runs page's and `/api/runs`' filters, as given in the query.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RunsQuery {
    /// `key` or `key=value`, comma-separated for several.
    #[serde(default)]
    pub label: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub target: Option<String>,
    #[serde(default)]
    pub since: Option<String>,
    #[serde(default)]
    pub until: Option<String>,
    #[serde(default)]
    pub limit: Option<u64>,
    #[serde(default)]
    pub offset: Option<u64>,
}

impl RunsQuery {
    /// The store's filter, or why the query is not one.
    pub(crate) fn filter(&self) -> Result<RunFilter, Failure> {
        let nonempty = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let mut f = RunFilter {
            limit: self.limit.unwrap_or(PAGE_RUNS),
            offset: self.offset.unwrap_or(0),
            target: nonempty(&self.target),
            since: nonempty(&self.since),
            until: nonempty(&self.until),
            ..RunFilter::default()
        };
        if f.limit == 0 || f.limit > MAX_PAGE_RUNS {
            return Err(Failure::bad(format!(
                "limit={}: give 1 to {MAX_PAGE_RUNS}",
                f.limit
            )));
        }
        if let Some(labels) = nonempty(&self.label) {
            for part in labels.split(',').map(str::trim).filter(|p| !p.is_empty()) {
                f.labels.push(match part.split_once('=') {
                    Some((k, v)) => (k.to_owned(), Some(v.to_owned())),
                    None => (part.to_owned(), None),
                });
            }
        }
        if let Some(s) = nonempty(&self.status) {
            f.status = Some(s.parse::<RunStatus>().map_err(|_| {
                Failure::bad(format!(
                    "status={s}: give one of running, ok, failed, interrupted"
                ))
            })?);
        }
        if let Some(k) = nonempty(&self.kind) {
            f.kind = Some(k.parse::<RunKind>().map_err(|_| {
                Failure::bad(format!("kind={k}: give one of run, plan, quick, profile"))
            })?);
        }
        for (name, v) in [("since", &f.since), ("until", &f.until)] {
            if let Some(v) = v {
                let ok = v.len() >= 4
                    && v.chars()
                        .all(|c| c.is_ascii_digit() || "-:TZ.+".contains(c));
                if !ok {
                    return Err(Failure::bad(format!(
                        "{name}={v}: give a date or time as the runs show it, e.g. 2026-11-25 or 2026-11-25T10:00"
                    )));
                }
            }
        }
        Ok(f)
    }
}

pub(crate) fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, Failure> {
    q.map(|Query(v)| v).map_err(|e| {
        Failure::bad(format!(
            "the query is not one this page takes: {}",
            e.body_text()
        ))
    })
}

pub(crate) fn run_id(
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
) -> Result<i64, Failure> {
    id.map(|Path(id)| id)
        .map_err(|_| Failure::bad("a run is named by its number, e.g. /runs/12"))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LabelForm {
    key: String,
    #[serde(default)]
    value: String,
    /// `set` (the default) or `remove`.
    #[serde(default)]
    action: Option<String>,
}

/// Sets or removes a label; `Ok(false)` when a removed label was not there.
pub(crate) fn apply_label(s: &Store, id: i64, form: &LabelForm) -> Result<bool, Failure> {
    let not_taken = |e: iorig_store::StoreError| match e {
        iorig_store::StoreError::NoSuchRun(_) => Failure::no_run(id),
        iorig_store::StoreError::BadLabel { .. } => Failure::bad(e.to_string()),
        e => Failure::internal(e),
    };
    match form.action.as_deref().unwrap_or("set") {
        "set" => {
            s.set_label(RunId(id), form.key.trim(), &form.value)
                .map_err(not_taken)?;
            Ok(true)
        }
        "remove" => s
            .remove_label(RunId(id), form.key.trim())
            .map_err(not_taken),
        other => Err(Failure::bad(format!("action={other}: give set or remove"))),
    }
}

// ----- serving -----

impl App {
    /// Whether requests need the token.
    pub fn auth_required(&self) -> bool {
        self.auth.required()
    }
}

/// Serves `router` on `listener` until `shutdown` completes.
pub async fn serve_on(
    listener: tokio::net::TcpListener,
    router: Router,
    auth: &Auth,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let router = with_host_guard(router, auth, listener.local_addr()?);
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

/// Where `iorig serve` listens: the pages and API, and the metrics when
/// asked for.
pub struct Listen {
    pub pages: std::net::SocketAddr,
    pub metrics: Option<std::net::SocketAddr>,
}

/// Serves `app` on a runtime of its own until `stopped()` says so (polled
/// every 100 ms), after telling `listening` the addresses bound. An address
/// it cannot listen on is bad input.
pub fn serve_blocking(
    app: Arc<App>,
    listen: Listen,
    stopped: impl Fn() -> bool + Clone + Send + Sync + 'static,
    listening: impl FnOnce(std::net::SocketAddr, Option<std::net::SocketAddr>),
) -> Result<(), crate::ServeError> {
    use crate::ServeError;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| ServeError::Runtime(format!("starting the server's runtime: {e}")))?;
    rt.block_on(async move {
        let bind = |addr, flag: &'static str| async move {
            tokio::net::TcpListener::bind(addr).await.map_err(|e| {
                ServeError::Usage(format!(
                    "{flag} {addr}: cannot listen there ({e}); choose a free port or an address of this machine"
                ))
            })
        };
        let listener = bind(listen.pages, "--listen").await?;
        let metrics = match listen.metrics {
            Some(m) => Some(bind(m, "--metrics-listen").await?),
            None => None,
        };
        listening(
            listener.local_addr().unwrap_or(listen.pages),
            metrics.as_ref().and_then(|m| m.local_addr().ok()),
        );
        let shutdown = move || {
            let stopped = stopped.clone();
            async move {
                while !stopped() {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                }
            }
        };
        let auth = app.auth.clone();
        if let Some(m) = metrics {
            let router = crate::metrics_router(app.clone());
            let done = shutdown();
            let auth = auth.clone();
            tokio::spawn(async move {
                let _ = serve_on(m, router, &auth, done).await;
            });
        }
        serve_on(listener, router(app), &auth, shutdown())
            .await
            .map_err(|e| ServeError::Runtime(format!("serving: {e}")))
    })
}

/// `router` answering only requests for this server's own names when it
/// has no token ([`Auth::host_allowed`]); others get 421.
pub(crate) fn with_host_guard(router: Router, auth: &Auth, local: std::net::SocketAddr) -> Router {
    let auth = auth.clone();
    router.layer(middleware::from_fn(move |req: Request, next: Next| {
        let auth = auth.clone();
        async move {
            let host = req
                .headers()
                .get(header::HOST)
                .and_then(|h| h.to_str().ok())
                .map(str::to_owned)
                .or_else(|| req.uri().authority().map(|a| a.to_string()));
            if auth.host_allowed(host.as_deref(), local) {
                next.run(req).await
            } else {
                (
                    StatusCode::MISDIRECTED_REQUEST,
                    format!(
                        "this server answers requests for {local} or localhost:{} only, as a server without a token must; give it --token-file to reach it by other names\n",
                        local.port()
                    ),
                )
                    .into_response()
            }
        }
    }))
}

/// A step's planned length in seconds: its warmup and time (a start delay
/// falls inside them), from its stored parameters. None where the length is
/// not known ahead: a precondition or a step that ends by its bytes, or a
/// step stored without parameters.
pub(crate) fn planned_s(st: &iorig_store::StepRow) -> Option<f64> {
    if matches!(st.role, iorig_result::StepRole::Precondition) {
        return None;
    }
    let p = st.params.as_ref()?;
    if p.io_size_bytes.is_some() || p.io_size_pct.is_some() || p.time_s <= 0.0 {
        return None;
    }
    Some(p.warmup_s + p.time_s)
}

/// The planned length of all of `steps`; None when one is not known, or
/// before any step is stored.
pub(crate) fn planned_total_s<'a>(
    steps: impl IntoIterator<Item = &'a iorig_store::StepRow>,
) -> Option<f64> {
    let mut any = false;
    let total: Option<f64> = steps
        .into_iter()
        .inspect(|_| any = true)
        .map(planned_s)
        .sum();
    total.filter(|_| any)
}

/// A step that will not run again in this run: done, failed or skipped.
pub(crate) fn step_ended(st: &iorig_store::StepRow) -> bool {
    matches!(
        st.status,
        iorig_store::StepStatus::Ok
            | iorig_store::StepStatus::Failed
            | iorig_store::StepStatus::Skipped
    )
}
