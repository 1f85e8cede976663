//! The pages' handlers: the runs, a run, a step's intervals, the live
//! view, label edits from a page, downloads, compare, runs in progress,
//! sign-in. Each reads the store on a pool thread and renders with
//! [`crate::pages`].

use crate::app::{
    apply_label, query, run_id, with_store, Failure, LabelForm, RunsQuery, Shared, COMPARE_RUNS,
    MAX_PAGE_RUNS,
};
use crate::pages::{self, Progress};
use axum::extract::rejection::{FormRejection, QueryRejection};
use axum::extract::{Form, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use iorig_store::{RunFilter, RunId, RunKind, RunStatus, Store};
use serde::Deserialize;

pub(crate) async fn runs_page(
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

pub(crate) async fn run_page(
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
        &report,
        pages::run_toolbar(&app.store_name, &detail, steps),
    )))
}

/// `?page=K` of a step's intervals.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct StepQuery {
    page: Option<u64>,
}

/// One step's intervals as a table (`/runs/ID/steps/N`, N from 1 as every
/// page and message numbers steps), [`pages::INTERVALS_PER_PAGE`] a page
/// (`?page=K`, from 1): only that page's rows are read from the store, so
/// a week-long soak's step is as quick to show as a minute's.
pub(crate) async fn step_intervals_page(
    State(app): Shared,
    params: Result<Path<(i64, i64)>, axum::extract::rejection::PathRejection>,
    q: Result<Query<StepQuery>, QueryRejection>,
) -> Result<Html<String>, Failure> {
    let Path((id, number)) = params
        .map_err(|_| Failure::bad("a step is /runs/ID/steps/N, N from 1, e.g. /runs/3/steps/1"))?;
    let asked = query(q)?.page;
    let (detail, step, page, rows, external) = with_store(&app, move |s| {
        // The store's one loader of a run; this page reads one step's
        // intervals of it.
        let Some(run) = iorig_store::StoredRun::load(s, RunId(id)).map_err(Failure::internal)?
        else {
            return Err(Failure::no_run(id));
        };
        // Numbered from 1, as every page shows them; the store's index is
        // from 0.
        let Some(step) = run.steps.into_iter().find(|st| st.row.index + 1 == number) else {
            return Err(Failure::new(
                StatusCode::NOT_FOUND,
                format!("run {id} has no step {number} (steps are numbered from 1); its page lists the steps"),
            ));
        };
        let total = s.interval_end(step.row.id).map_err(Failure::internal)?;
        let Some(page) = pages::IntervalPage::of(total, pages::INTERVALS_PER_PAGE, asked) else {
            let last = pages::IntervalPage::of(total, pages::INTERVALS_PER_PAGE, None)
                .map_or(1, |p| p.pages);
            return Err(Failure::new(
                StatusCode::NOT_FOUND,
                format!("step {number} of run {id} has pages 1 to {last} of intervals"),
            ));
        };
        let seqs = page.from..page.to;
        let rows = s
            .interval_range_figures(step.row.id, "", seqs.clone())
            .map_err(Failure::internal)?;
        let external = s
            .external_range(step.row.id, seqs)
            .map_err(Failure::internal)?;
        Ok((run.detail, step.row, page, rows, external))
    })
    .await?;
    Ok(Html(pages::step_page(
        &app.store_name,
        &detail,
        &step,
        &page,
        &rows,
        &external,
    )))
}

pub(crate) async fn live_page(
    State(app): Shared,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
) -> Result<Html<String>, Failure> {
    let id = run_id(id)?;
    let (detail, total_s) = with_store(&app, move |s| {
        let detail = s
            .get_run(RunId(id))
            .map_err(Failure::internal)?
            .ok_or_else(|| Failure::no_run(id))?;
        let steps = s.steps(RunId(id)).map_err(Failure::internal)?;
        Ok((detail, crate::app::planned_total_s(&steps)))
    })
    .await?;
    Ok(Html(pages::live_page(&app.store_name, &detail, total_s)))
}

pub(crate) async fn label_form(
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

pub(crate) async fn download(
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
            "steps.csv" => iorig_report::export::export_steps_csv(s, RunId(id))
                .map_err(e)?
                .into_bytes(),
            // Written from the store's pages: the bytes, not the rows and
            // the bytes, are what this holds.
            "intervals.csv" => {
                let mut out = Vec::new();
                iorig_report::export::write_intervals_csv(s, RunId(id), &mut out).map_err(e)?;
                out
            }
            "run.xlsx" => match iorig_report::export::export_xlsx_bytes(s, RunId(id)) {
                Err(iorig_report::ReportError::Usage(why)) => {
                    return Err(Failure::new(StatusCode::UNPROCESSABLE_ENTITY, why));
                }
                other => other.map_err(e)?,
            },
            _ => {
                let mut out = Vec::new();
                iorig_report::export::write_json(s, RunId(id), &mut out).map_err(e)?;
                out
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
pub(crate) async fn compare_page(
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
        &rendered,
        pages::compare_toolbar(&app.store_name, &shown),
    )))
}

pub(crate) async fn plans_page(State(app): Shared) -> Result<Html<String>, Failure> {
    let progress = with_store(&app, running).await?;
    Ok(Html(pages::plans_page(&app.store_name, &progress)))
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
            .filter(|st| crate::app::step_ended(st))
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
        let into = current
            .and_then(|c| c.started.as_deref())
            .and_then(rfc3339_s)
            .map_or(0.0, |t| (now - t).max(0.0));
        // The steps' own planned lengths when every step left has one;
        // else the mean time of the steps done so far.
        let left =
            crate::app::planned_total_s(steps.iter().filter(|st| !crate::app::step_ended(st)));
        let eta_s = match left {
            Some(left) => Some((left - into).max(0.0)),
            None => (!took.is_empty()).then(|| {
                let mean = took.iter().sum::<f64>() / took.len() as f64;
                (mean * remaining as f64 - into).max(0.0)
            }),
        };
        let total_s = crate::app::planned_total_s(&steps);
        let elapsed_s = rfc3339_s(&run.started).map(|t| (now - t).max(0.0));
        // The last stored interval's end (its t_s counts from its step's
        // start), or the running step's start before its first interval.
        let last = s.last_interval(run.id).map_err(Failure::internal)?;
        let idle_s = current.and_then(|c| {
            let started = rfc3339_s(c.started.as_deref()?)?;
            let t = last
                .as_ref()
                .filter(|(index, _)| *index == c.index)
                .map_or(0.0, |(_, r)| r.t_s);
            Some((now - started - t).max(0.0))
        });
        out.push(Progress {
            steps: steps.len(),
            done: finished.len(),
            running_step: current.map(|c| format!("{} {}", c.index + 1, c.name)),
            idle_s,
            eta_s,
            elapsed_s,
            total_s,
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
pub(crate) struct LoginForm {
    token: String,
}

pub(crate) async fn login_page(State(app): Shared) -> Html<String> {
    Html(pages::login_page(app.auth.required(), false))
}

pub(crate) async fn login(
    State(app): Shared,
    form: Result<Form<LoginForm>, FormRejection>,
) -> Response {
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

pub(crate) async fn live_js() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "max-age=300"),
        ],
        pages::LIVE_JS,
    )
        .into_response()
}
