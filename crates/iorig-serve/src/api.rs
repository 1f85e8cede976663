//! The JSON API (`/api/...`: the documents `--json` writes, label edits,
//! a run's intervals and their Server-Sent Events) and the store's
//! Prometheus metrics (`serve --metrics-listen`).

use crate::app::{
    apply_label, query, run_id, with_store, App, Failure, LabelForm, RunsQuery, Shared, LIVE_POLL,
    MAX_PAGE_RUNS,
};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use iorig_store::{RunFilter, RunId, RunStatus, Store};
use serde::Deserialize;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

/// `/api/runs`: the runs the filters give, newest first, and how many
/// match in all.
#[derive(serde::Serialize)]
pub(crate) struct RunsDoc {
    total: u64,
    offset: u64,
    runs: Vec<iorig_store::RunRow>,
}

pub(crate) async fn api_runs(
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
pub(crate) async fn run_doc(
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

pub(crate) async fn api_run(
    State(app): Shared,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
) -> Result<Json<iorig_result::RunDoc>, Failure> {
    run_doc(&app, id, false).await
}

pub(crate) async fn api_export(
    State(app): Shared,
    id: Result<Path<i64>, axum::extract::rejection::PathRejection>,
) -> Result<Json<iorig_result::RunDoc>, Failure> {
    run_doc(&app, id, true).await
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct AfterQuery {
    /// The step index and interval seq last seen (none: from the start).
    #[serde(default)]
    after_step: Option<i64>,
    #[serde(default)]
    after_seq: Option<i64>,
}

/// One interval of a live view: the run's totals, and each host's part of
/// a multi-host run.
#[derive(serde::Serialize)]
pub(crate) struct LiveInterval {
    pub step: i64,
    #[serde(flatten)]
    pub interval: iorig_result::IntervalDoc,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<LiveHost>,
}

/// A host's figures in one interval of a multi-host run.
#[derive(serde::Serialize)]
pub(crate) struct LiveHost {
    pub host: String,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_p99_ns: u64,
}

fn live_rows(s: &Store, id: i64, after: (i64, i64)) -> Result<Vec<LiveInterval>, Failure> {
    const LIMIT: u64 = 10_000;
    let rows = s
        .intervals_after(RunId(id), after.0, after.1, LIMIT)
        .map_err(Failure::internal)?;
    // A host's row of an interval is stored before the interval's total
    // (the total waits for every host), so the hosts of every total read
    // here are there too.
    let mut hosts: std::collections::BTreeMap<(i64, i64), Vec<LiveHost>> = Default::default();
    if let Some((last_step, last)) = rows.last() {
        let last = (*last_step, last.seq as i64);
        for (step, host, row) in s
            .host_intervals_after(RunId(id), after.0, after.1, LIMIT * 64)
            .map_err(Failure::internal)?
        {
            let at = (step, row.seq as i64);
            if at > last {
                break;
            }
            hosts.entry(at).or_default().push(LiveHost {
                host,
                iops: row.iops,
                bw_bytes_per_s: row.bw_bytes_per_s,
                lat_p99_ns: row.lat_ns.p99,
            });
        }
    }
    Ok(rows
        .into_iter()
        .filter_map(|(step, row)| {
            let at = (step, row.seq as i64);
            Some(LiveInterval {
                step,
                interval: iorig_store::interval_docs(std::slice::from_ref(&row), false).pop()?,
                hosts: hosts.remove(&at).unwrap_or_default(),
            })
        })
        .collect())
}

pub(crate) async fn api_intervals(
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

pub(crate) async fn api_label(
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
pub(crate) async fn api_events(
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

/// `iorig serve --metrics-listen`: `/metrics` of what the store holds
/// (runs by status; each run in progress with its last interval).
pub fn metrics_router(app: Arc<App>) -> Router {
    Router::new()
        .route("/metrics", get(store_metrics))
        .fallback(crate::app::not_found)
        .with_state(app)
}

pub(crate) async fn store_metrics(State(app): Shared, headers: HeaderMap) -> Response {
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
        let done = steps.iter().filter(|st| crate::app::step_ended(st)).count();
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
