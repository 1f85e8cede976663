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
use crate::{pages, Auth};
use axum::extract::rejection::{FormRejection, QueryRejection};
use axum::extract::{Form, Path, Query, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use iorig_store::{RunFilter, RunId, RunKind, RunStatus, Store};
use serde::Deserialize;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs a page shows unless told otherwise, and at most.
const PAGE_RUNS: u64 = 50;
const MAX_PAGE_RUNS: u64 = 1000;
/// How often the live view looks for new intervals.
const LIVE_POLL: Duration = Duration::from_millis(500);
/// Runs a comparison takes.
const COMPARE_RUNS: std::ops::RangeInclusive<usize> = 2..=8;

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

type Shared = State<Arc<App>>;

/// Every route of the server.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(runs_page))
        .route("/runs/{id}", get(run_page))
        .route("/runs/{id}/live", get(live_page))
        .route("/runs/{id}/steps/{index}", get(step_intervals_page))
        .route("/runs/{id}/labels", post(label_form))
        .route("/runs/{id}/download/{file}", get(download))
        .route("/compare", get(compare_page))
        .route("/plans", get(plans_page))
        .route("/login", get(login_page).post(login))
        .route("/static/live.js", get(live_js))
        // Browsers ask for it on every page; nothing to give.
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .route("/api/runs", get(api_runs))
        .route("/api/runs/{id}", get(api_run))
        .route("/api/runs/{id}/export", get(api_export))
        .route("/api/runs/{id}/intervals", get(api_intervals))
        .route("/api/runs/{id}/labels", post(api_label))
        .route("/api/runs/{id}/events", get(api_events))
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
    fn new(status: StatusCode, message: impl Into<String>) -> Failure {
        Failure {
            status,
            message: message.into(),
            api: false,
        }
    }
    fn bad(message: impl Into<String>) -> Failure {
        Failure::new(StatusCode::BAD_REQUEST, message)
    }
    fn no_run(id: i64) -> Failure {
        Failure::new(
            StatusCode::NOT_FOUND,
            format!("no run {id} in this store; the runs page lists them"),
        )
    }
    fn internal(e: impl std::fmt::Display) -> Failure {
        Failure::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
    }
    /// The same failure answered as JSON (`{"error": ...}`).
    fn api(mut self) -> Failure {
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
async fn with_store<R: Send + 'static>(
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

async fn not_found() -> Failure {
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

fn query<T>(q: Result<Query<T>, QueryRejection>) -> Result<T, Failure> {
    q.map(|Query(v)| v).map_err(|e| {
        Failure::bad(format!(
            "the query is not one this page takes: {}",
            e.body_text()
        ))
    })
}

async fn runs_page(
    State(app): Shared,
    q: Result<Query<RunsQuery>, QueryRejection>,
) -> Result<Html<String>, Failure> {
    let q = query(q)?;
    let filter = q.filter()?;
    let f = filter.clone();
    let listed = with_store(&app, move |s| {
        let (runs, total) = s.find_runs(&f).map_err(Failure::internal)?;
        let mut listed = Vec::with_capacity(runs.len());
        for run in runs {
            listed.push(iorig_text::runs::ListedRun {
                steps: s.steps(run.id).map_err(Failure::internal)?,
                targets: s.target_facts(run.id).map_err(Failure::internal)?,
                run,
            });
        }
        Ok((listed, total))
    })
    .await?;
    Ok(Html(pages::runs_page(
        &app.store_name,
        &q,
        &filter,
        &listed.0,
        listed.1,
    )))
}

fn run_id(id: Result<Path<i64>, axum::extract::rejection::PathRejection>) -> Result<i64, Failure> {
    id.map(|Path(id)| id)
        .map_err(|_| Failure::bad("a run is named by its number, e.g. /runs/12"))
}

async fn run_page(
    State(app): Shared,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
) -> Result<Html<String>, Failure> {
    let id = run_id(id)?;
    let (report, detail, steps) = with_store(&app, move |s| {
        let Some(detail) = s.get_run(RunId(id)).map_err(Failure::internal)? else {
            return Err(Failure::no_run(id));
        };
        let report = if detail.run.kind == RunKind::Profile {
            let p = iorig_report::model::ProfileReport::load(s, RunId(id))
                .map_err(Failure::internal)?;
            iorig_report::html::render_profile_report(&p)
        } else {
            let r =
                iorig_report::model::RunReport::load(s, RunId(id)).map_err(Failure::internal)?;
            iorig_report::html::render_report_with(&r, &iorig_report::html::Details::Auto)
        };
        let steps = s.steps(RunId(id)).map_err(Failure::internal)?.len();
        Ok((report, detail, steps))
    })
    .await?;
    Ok(Html(pages::with_toolbar(
        &report.index_html,
        &pages::run_toolbar(&app.store_name, &detail, steps),
    )))
}

/// One step's intervals as a table (`/runs/ID/steps/INDEX`, the index
/// from 0 as the report's step table numbers them).
async fn step_intervals_page(
    State(app): Shared,
    params: Result<Path<(i64, i64)>, axum::extract::rejection::PathRejection>,
) -> Result<Html<String>, Failure> {
    let Path((id, index)) =
        params.map_err(|_| Failure::bad("a step is /runs/ID/steps/INDEX, e.g. /runs/3/steps/0"))?;
    let (detail, step, rows, external) = with_store(&app, move |s| {
        let Some(detail) = s.get_run(RunId(id)).map_err(Failure::internal)? else {
            return Err(Failure::no_run(id));
        };
        let steps = s.steps(RunId(id)).map_err(Failure::internal)?;
        let Some(step) = steps.into_iter().find(|st| st.index == index) else {
            return Err(Failure::new(
                StatusCode::NOT_FOUND,
                format!("run {id} has no step {index}; its page lists the steps"),
            ));
        };
        let rows = s.intervals(step.id).map_err(Failure::internal)?;
        let external = s.external(step.id).map_err(Failure::internal)?;
        Ok((detail, step, rows, external))
    })
    .await?;
    Ok(Html(pages::step_page(
        &app.store_name,
        &detail,
        &step,
        &rows,
        &external,
    )))
}

async fn live_page(
    State(app): Shared,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
) -> Result<Html<String>, Failure> {
    let id = run_id(id)?;
    let detail = with_store(&app, move |s| {
        s.get_run(RunId(id))
            .map_err(Failure::internal)?
            .ok_or_else(|| Failure::no_run(id))
    })
    .await?;
    Ok(Html(pages::live_page(&app.store_name, &detail)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LabelForm {
    key: String,
    #[serde(default)]
    value: String,
    /// `set` (the default) or `remove`.
    #[serde(default)]
    action: Option<String>,
}

/// Sets or removes a label; `Ok(false)` when a removed label was not there.
fn apply_label(s: &Store, id: i64, form: &LabelForm) -> Result<bool, Failure> {
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

async fn label_form(
    State(app): Shared,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
    form: Result<Form<LabelForm>, FormRejection>,
) -> Result<Redirect, Failure> {
    let id = run_id(id)?;
    let Form(form) =
        form.map_err(|e| Failure::bad(format!("the label form: {}", e.body_text())))?;
    with_store(&app, move |s| apply_label(s, id, &form)).await?;
    Ok(Redirect::to(&format!("/runs/{id}")))
}

async fn download(
    State(app): Shared,
    params: Result<Path<(i64, String)>, axum::extract::rejection::PathRejection>,
) -> Result<Response, Failure> {
    let Path((id, file)) =
        params.map_err(|_| Failure::bad("a download is /runs/ID/download/FILE"))?;
    let (content_type, name): (&str, String) = match file.as_str() {
        "report.html" => ("text/html; charset=utf-8", format!("iorig-run-{id}.html")),
        "steps.csv" => ("text/csv; charset=utf-8", format!("iorig-run-{id}.csv")),
        "intervals.csv" => ("text/csv; charset=utf-8", format!("iorig-run-{id}.intervals.csv")),
        "run.xlsx" => (
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            format!("iorig-run-{id}.xlsx"),
        ),
        "run.json" => ("application/json", format!("iorig-run-{id}.json")),
        _ => {
            return Err(Failure::new(
                StatusCode::NOT_FOUND,
                format!("no download {file}; there are report.html, steps.csv, intervals.csv, run.xlsx and run.json"),
            ))
        }
    };
    let bytes = with_store(&app, move |s| {
        if s.get_run(RunId(id)).map_err(Failure::internal)?.is_none() {
            return Err(Failure::no_run(id));
        }
        let e = Failure::internal;
        Ok(match file.as_str() {
            "report.html" => {
                let r = iorig_report::model::RunReport::load(s, RunId(id)).map_err(e)?;
                iorig_report::html::render_report(&r)
                    .index_html
                    .into_bytes()
            }
            "steps.csv" => iorig_report::export::export_csv(s, RunId(id))
                .map_err(e)?
                .steps_csv
                .into_bytes(),
            "intervals.csv" => iorig_report::export::export_csv(s, RunId(id))
                .map_err(e)?
                .intervals_csv
                .into_bytes(),
            "run.xlsx" => iorig_report::export::export_xlsx_bytes(s, RunId(id)).map_err(e)?,
            _ => {
                let doc = iorig_report::export::export_json(s, RunId(id)).map_err(e)?;
                serde_json::to_vec_pretty(&doc).map_err(Failure::internal)?
            }
        })
    })
    .await?;
    Ok((
        [
            (header::CONTENT_TYPE, content_type.to_owned()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{name}\""),
            ),
        ],
        bytes,
    )
        .into_response())
}

/// `/compare?runs=3,4` or the runs page's checkboxes (`r=3&r=4`).
async fn compare_page(
    State(app): Shared,
    axum::extract::RawQuery(raw): axum::extract::RawQuery,
) -> Result<Html<String>, Failure> {
    let raw = raw.unwrap_or_default();
    let mut ids: Vec<i64> = Vec::new();
    for pair in raw.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        if k != "runs" && k != "r" {
            return Err(Failure::bad(format!(
                "{k}: a comparison takes runs=3,4 (or r=3&r=4)"
            )));
        }
        for part in v
            .split([',', '+'])
            .flat_map(|p| p.split("%2C"))
            .filter(|p| !p.is_empty())
        {
            ids.push(part.parse::<i64>().map_err(|_| {
                Failure::bad(format!("{part}: give run numbers, e.g. /compare?runs=3,4"))
            })?);
        }
    }
    if !COMPARE_RUNS.contains(&ids.len()) {
        return Err(Failure::bad(format!(
            "a comparison takes 2 to 8 runs (runs=3,4); {} given",
            ids.len()
        )));
    }
    let shown = ids.clone();
    let rendered = with_store(&app, move |s| {
        let mut reports = Vec::with_capacity(ids.len());
        for id in &ids {
            if s.get_run(RunId(*id)).map_err(Failure::internal)?.is_none() {
                return Err(Failure::no_run(*id));
            }
            reports.push(
                iorig_report::model::RunReport::load(s, RunId(*id)).map_err(Failure::internal)?,
            );
        }
        Ok(iorig_report::html::render_compare(&reports).0)
    })
    .await?;
    Ok(Html(pages::with_toolbar(
        &rendered.index_html,
        &pages::compare_toolbar(&app.store_name, &shown),
    )))
}

async fn plans_page(State(app): Shared) -> Result<Html<String>, Failure> {
    let progress = with_store(&app, running).await?;
    Ok(Html(pages::plans_page(&app.store_name, &progress)))
}

/// Where each running run stands.
pub(crate) struct Progress {
    pub run: iorig_store::RunRow,
    pub steps: usize,
    pub done: usize,
    pub running_step: Option<String>,
    /// Seconds since the last stored interval (None: none yet).
    pub idle_s: Option<f64>,
    /// Seconds left, from the time the finished steps took (None: no step
    /// has finished yet).
    pub eta_s: Option<f64>,
}

fn running(s: &Store) -> Result<Vec<Progress>, Failure> {
    let (runs, _) = s
        .find_runs(&RunFilter {
            status: Some(RunStatus::Running),
            limit: MAX_PAGE_RUNS,
            ..RunFilter::default()
        })
        .map_err(Failure::internal)?;
    let now = now_s();
    let mut out = Vec::new();
    for run in runs {
        let steps = s.steps(run.id).map_err(Failure::internal)?;
        let finished: Vec<&iorig_store::StepRow> = steps
            .iter()
            .filter(|st| {
                matches!(
                    st.status,
                    iorig_store::StepStatus::Ok
                        | iorig_store::StepStatus::Failed
                        | iorig_store::StepStatus::Skipped
                )
            })
            .collect();
        let took: Vec<f64> = finished
            .iter()
            .filter_map(|st| {
                Some(rfc3339_s(st.ended.as_deref()?)? - rfc3339_s(st.started.as_deref()?)?)
            })
            .collect();
        let current = steps
            .iter()
            .find(|st| st.status == iorig_store::StepStatus::Running);
        let remaining = steps.len() - finished.len();
        let eta_s = (!took.is_empty()).then(|| {
            let mean = took.iter().sum::<f64>() / took.len() as f64;
            let into = current
                .and_then(|c| c.started.as_deref())
                .and_then(rfc3339_s)
                .map_or(0.0, |t| (now - t).max(0.0));
            (mean * remaining as f64 - into).max(0.0)
        });
        let idle_s = current.and_then(|c| {
            let started = rfc3339_s(c.started.as_deref()?)?;
            let rows = s.intervals(c.id).ok()?;
            let t = rows.last().map_or(0.0, |r| r.t_s);
            Some((now - started - t).max(0.0))
        });
        out.push(Progress {
            steps: steps.len(),
            done: finished.len(),
            running_step: current.map(|c| format!("{} {}", c.index + 1, c.name)),
            idle_s,
            eta_s,
            run,
        });
    }
    Ok(out)
}

fn now_s() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// Seconds since the epoch of an RFC 3339 UTC time as iorig writes them
/// (`2026-11-25T10:00:00Z`, fractions allowed).
pub(crate) fn rfc3339_s(t: &str) -> Option<f64> {
    let t = t.strip_suffix('Z')?;
    let (date, time) = t.split_once('T')?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut hms = time.split(':');
    let (h, mi) = (
        hms.next()?.parse::<f64>().ok()?,
        hms.next()?.parse::<f64>().ok()?,
    );
    let sec = hms.next()?.parse::<f64>().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as f64 * 86_400.0 + h * 3600.0 + mi * 60.0 + sec)
}

// ----- login -----

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LoginForm {
    token: String,
}

async fn login_page(State(app): Shared) -> Html<String> {
    Html(pages::login_page(app.auth.required(), false))
}

async fn login(State(app): Shared, form: Result<Form<LoginForm>, FormRejection>) -> Response {
    let Ok(Form(form)) = form else {
        return (StatusCode::BAD_REQUEST, Html(pages::login_page(true, true))).into_response();
    };
    let mut h = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&format!("Bearer {}", form.token.trim())) {
        h.insert(header::AUTHORIZATION, v);
    }
    if !app.auth.allows(&h) {
        return (
            StatusCode::UNAUTHORIZED,
            Html(pages::login_page(true, true)),
        )
            .into_response();
    }
    let cookie = format!(
        "{}={}; HttpOnly; SameSite=Strict; Path=/",
        crate::auth::COOKIE,
        form.token.trim()
    );
    let mut r = Redirect::to("/").into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
    r
}

async fn live_js() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=300"),
        ],
        pages::LIVE_JS,
    )
        .into_response()
}

// ----- the API -----

/// `/api/runs`: the runs the filters give, newest first, and how many
/// match in all.
#[derive(serde::Serialize)]
struct RunsDoc {
    total: u64,
    offset: u64,
    runs: Vec<iorig_store::RunRow>,
}

async fn api_runs(
    State(app): Shared,
    q: Result<Query<RunsQuery>, QueryRejection>,
) -> Result<Json<RunsDoc>, Failure> {
    let filter = query(q).and_then(|q| q.filter()).map_err(Failure::api)?;
    let offset = filter.offset;
    let (runs, total) = with_store(&app, move |s| {
        s.find_runs(&filter).map_err(Failure::internal)
    })
    .await
    .map_err(Failure::api)?;
    Ok(Json(RunsDoc {
        total,
        offset,
        runs,
    }))
}

/// A run's `iorig.run/1` document: as `runs show --json` (no intervals)
/// or as `export --format json` (with them).
async fn run_doc(
    app: &App,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
    with_intervals: bool,
) -> Result<Json<iorig_result::RunDoc>, Failure> {
    let id = run_id(id).map_err(Failure::api)?;
    with_store(app, move |s| {
        if s.get_run(RunId(id)).map_err(Failure::internal)?.is_none() {
            return Err(Failure::no_run(id));
        }
        if with_intervals {
            iorig_report::export::export_json(s, RunId(id))
        } else {
            iorig_report::export::show_json(s, RunId(id))
        }
        .map_err(Failure::internal)
    })
    .await
    .map(Json)
    .map_err(Failure::api)
}

async fn api_run(
    State(app): Shared,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
) -> Result<Json<iorig_result::RunDoc>, Failure> {
    run_doc(&app, id, false).await
}

async fn api_export(
    State(app): Shared,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
) -> Result<Json<iorig_result::RunDoc>, Failure> {
    run_doc(&app, id, true).await
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct AfterQuery {
    /// The step index and interval seq last seen (none: from the start).
    #[serde(default)]
    after_step: Option<i64>,
    #[serde(default)]
    after_seq: Option<i64>,
}

/// One interval of a live view: the run's totals.
#[derive(serde::Serialize)]
pub(crate) struct LiveInterval {
    pub step: i64,
    #[serde(flatten)]
    pub interval: iorig_result::IntervalDoc,
}

fn live_rows(s: &Store, id: i64, after: (i64, i64)) -> Result<Vec<LiveInterval>, Failure> {
    let rows = s
        .intervals_after(RunId(id), after.0, after.1, 10_000)
        .map_err(Failure::internal)?;
    Ok(rows
        .into_iter()
        .filter_map(|(step, row)| {
            Some(LiveInterval {
                step,
                interval: iorig_store::interval_docs(std::slice::from_ref(&row), false).pop()?,
            })
        })
        .collect())
}

async fn api_intervals(
    State(app): Shared,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
    q: Result<Query<AfterQuery>, QueryRejection>,
) -> Result<Json<Vec<LiveInterval>>, Failure> {
    let id = run_id(id).map_err(Failure::api)?;
    let q = query(q).map_err(Failure::api)?;
    let after = (q.after_step.unwrap_or(-1), q.after_seq.unwrap_or(-1));
    with_store(&app, move |s| {
        if s.get_run(RunId(id)).map_err(Failure::internal)?.is_none() {
            return Err(Failure::no_run(id));
        }
        live_rows(s, id, after)
    })
    .await
    .map(Json)
    .map_err(Failure::api)
}

async fn api_label(
    State(app): Shared,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
    body: Result<Json<LabelForm>, axum::extract::rejection::JsonRejection>,
) -> Result<Json<std::collections::BTreeMap<String, String>>, Failure> {
    let id = run_id(id).map_err(Failure::api)?;
    let Json(form) =
        body.map_err(|e| Failure::bad(format!("the label: {}", e.body_text())).api())?;
    with_store(&app, move |s| {
        apply_label(s, id, &form)?;
        s.labels(RunId(id)).map_err(Failure::internal)
    })
    .await
    .map(Json)
    .map_err(Failure::api)
}

/// `/api/runs/ID/events`: every interval of the run's totals as it is
/// stored (event `interval`, data a [`LiveInterval`], id `STEP:SEQ` so a
/// reconnecting browser resumes after it), then `end` with the run's
/// status once it is no longer running.
async fn api_events(
    State(app): Shared,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
    headers: HeaderMap,
) -> Result<Response, Failure> {
    let id = run_id(id).map_err(Failure::api)?;
    let exists = with_store(&app, move |s| {
        Ok(s.get_run(RunId(id)).map_err(Failure::internal)?.is_some())
    })
    .await
    .map_err(Failure::api)?;
    if !exists {
        return Err(Failure::no_run(id).api());
    }
    let mut after: (i64, i64) = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split_once(':'))
        .and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)))
        .unwrap_or((-1, -1));
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    let pool = app.pool.clone();
    tokio::spawn(async move {
        loop {
            let at = after;
            let polled = pool
                .with(move |s| {
                    let rows = live_rows(s, id, at)?;
                    let status = s
                        .get_run(RunId(id))
                        .map_err(Failure::internal)?
                        .map(|d| d.run.status);
                    Ok::<_, Failure>((rows, status))
                })
                .await;
            let Ok(Ok((rows, status))) = polled else {
                return;
            };
            for r in rows {
                after = (r.step, r.interval.seq as i64);
                let Ok(data) = serde_json::to_string(&r) else {
                    continue;
                };
                let ev = SseEvent::default()
                    .event("interval")
                    .id(format!("{}:{}", after.0, after.1))
                    .data(data);
                if tx.send(Ok(ev)).await.is_err() {
                    return;
                }
            }
            if status != Some(RunStatus::Running) {
                let word = status.map_or("deleted", RunStatus::as_str);
                let _ = tx
                    .send(Ok(SseEvent::default().event("end").data(word)))
                    .await;
                return;
            }
            tokio::select! {
                _ = tokio::time::sleep(LIVE_POLL) => {}
                _ = tx.closed() => return,
            }
        }
    });
    let stream: tokio_stream::wrappers::ReceiverStream<Result<SseEvent, Infallible>> =
        tokio_stream::wrappers::ReceiverStream::new(rx);
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response())
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
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}

/// `iorig serve --metrics-listen`: `/metrics` of what the store holds
/// (runs by status; each run in progress with its last interval).
pub fn metrics_router(app: Arc<App>) -> Router {
    Router::new()
        .route("/metrics", get(store_metrics))
        .fallback(not_found)
        .with_state(app)
}

async fn store_metrics(State(app): Shared, headers: HeaderMap) -> Response {
    if !app.auth.allows(&headers) {
        return crate::metrics::unauthorized();
    }
    match with_store(&app, |s| store_exposition(s).map_err(Failure::internal)).await {
        Ok(text) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}

fn store_exposition(s: &Store) -> Result<String, iorig_store::StoreError> {
    use iorig_run::metrics::{run_labels_of, Exposition};
    let mut out = Exposition::new(Vec::new());
    out.family("iorig_store_runs", "gauge", "Runs in the store, by status.");
    for status in [
        RunStatus::Running,
        RunStatus::Ok,
        RunStatus::Failed,
        RunStatus::Interrupted,
    ] {
        let (_, n) = s.find_runs(&RunFilter {
            status: Some(status),
            limit: 1,
            ..RunFilter::default()
        })?;
        out.sample(
            "iorig_store_runs",
            &[("status", status.as_str().to_owned())],
            n as f64,
        );
    }
    let (runs, _) = s.find_runs(&RunFilter {
        status: Some(RunStatus::Running),
        limit: MAX_PAGE_RUNS,
        ..RunFilter::default()
    })?;
    let mut last = Vec::new();
    for run in &runs {
        let steps = s.steps(run.id)?;
        let done = steps
            .iter()
            .filter(|st| {
                matches!(
                    st.status,
                    iorig_store::StepStatus::Ok
                        | iorig_store::StepStatus::Failed
                        | iorig_store::StepStatus::Skipped
                )
            })
            .count();
        let mut common = vec![("run".to_owned(), run.id.0.to_string())];
        common.extend(run_labels_of(&run.labels));
        last.push((common, steps.len(), done, s.last_interval(run.id)?));
    }
    type Figure = (&'static str, &'static str, &'static str);
    let families: [Figure; 5] = [
        (
            "iorig_iops",
            "gauge",
            "Operations per second over the last stored interval of a run in progress.",
        ),
        (
            "iorig_throughput_bytes_per_second",
            "gauge",
            "Bytes per second over the last stored interval of a run in progress.",
        ),
        (
            "iorig_interval_latency_seconds",
            "gauge",
            "Latency percentiles of the last stored interval of a run in progress.",
        ),
        ("iorig_plan_steps", "gauge", "Steps of a run in progress."),
        (
            "iorig_plan_steps_done",
            "gauge",
            "Steps of a run in progress that have ended.",
        ),
    ];
    for (name, kind, help) in families {
        out.set_common(Vec::new());
        out.family(name, kind, help);
        for (common, steps, done, row) in &last {
            out.set_common(common.clone());
            match (name, row) {
                ("iorig_iops", Some((_, r))) => out.sample(name, &[], r.iops),
                ("iorig_throughput_bytes_per_second", Some((_, r))) => {
                    out.sample(name, &[], r.bw_bytes_per_s)
                }
                ("iorig_interval_latency_seconds", Some((_, r))) => {
                    for (p, v) in [
                        ("50", r.lat_ns.p50),
                        ("90", r.lat_ns.p90),
                        ("99", r.lat_ns.p99),
                        ("99.9", r.lat_ns.p99_9),
                        ("99.99", r.lat_ns.p99_99),
                    ] {
                        out.sample(name, &[("percentile", p.to_owned())], v as f64 / 1e9);
                    }
                }
                ("iorig_plan_steps", _) => out.sample(name, &[], *steps as f64),
                ("iorig_plan_steps_done", _) => out.sample(name, &[], *done as f64),
                _ => {}
            }
        }
    }
    Ok(out.finish())
}
