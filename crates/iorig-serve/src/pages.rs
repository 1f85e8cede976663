//! The server's own pages (the runs list, plans in progress, the live
//! view, login and errors) and the bar it puts on top of the reports it
//! serves. Everything from the store goes through [`esc`]: labels, names
//! and paths are the user's text.

use crate::app::RunsQuery;
use iorig_report::html::{esc, status_span, CSS};
use iorig_store::{RunDetail, RunFilter, RunStatus};
use iorig_text::runs::{headline, labels_text, targets_text, ListedRun};
use std::fmt::Write as _;

/// The live view's script (served as /static/live.js).
pub const LIVE_JS: &str = include_str!("live.js");

/// Styles of the server's own parts, beside the reports' [`CSS`].
const SERVE_CSS: &str = r#"
header.serve { display: flex; flex-wrap: wrap; gap: 6px 18px; align-items: baseline; padding: 8px 0 10px; margin-bottom: 8px; border-bottom: 1px solid var(--line); }
header.serve a { color: var(--accent); text-decoration: none; }
header.serve .store { color: var(--muted); font-size: 12px; margin-left: auto; }
form.inline { display: inline; }
form.filters { display: flex; flex-wrap: wrap; gap: 6px 12px; align-items: end; margin: 8px 0 14px; }
form.filters label { display: flex; flex-direction: column; font-size: 12px; color: var(--muted); }
input, select, button { font: inherit; padding: 3px 6px; }
.labels span.label { display: inline-block; background: var(--band); border: 1px solid var(--line); border-radius: 3px; padding: 0 5px; margin: 0 4px 2px 0; }
.bar { background: var(--band); border: 1px solid var(--line); height: 10px; width: 160px; display: inline-block; vertical-align: middle; }
.bar > span { background: var(--accent); height: 100%; display: block; }
.live-figures td { font-size: 18px; }
svg.live { width: 100%; height: 260px; border: 1px solid var(--line); background: #fff; }
"#;

/// A page of the server's own: `title`, the bar, `body`.
fn page(title: &str, store: &str, body: &str) -> String {
    let mut html = String::with_capacity(body.len() + CSS.len() + 1024);
    html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    let _ = writeln!(
        html,
        "<title>{}</title>\n<style>{CSS}{SERVE_CSS}</style>",
        esc(title)
    );
    html.push_str("</head>\n<body>\n");
    html.push_str(&bar(store, ""));
    html.push_str(body);
    html.push_str("</body>\n</html>\n");
    html
}

/// The server's bar: where to go, and which store this is.
fn bar(store: &str, extra: &str) -> String {
    format!(
        "<header class=\"serve\"><strong>iorig</strong><a href=\"/\">Runs</a><a href=\"/plans\">In progress</a>{extra}<span class=\"store\">store {}</span></header>\n",
        esc(store)
    )
}

/// A report page (a run's or a comparison's) with the server's bar and
/// `extra` (downloads, labels) on top.
pub fn with_toolbar(index_html: &str, toolbar: &str) -> String {
    let mut html = index_html.replacen("</style>", &format!("{SERVE_CSS}</style>"), 1);
    if let Some(at) = html.find("<body>") {
        html.insert_str(at + "<body>".len(), &format!("\n{toolbar}"));
    }
    html
}

/// The bar of a run's page: downloads, the live view of a running run,
/// and its labels, editable.
/// Steps linked by number from a run's bar (a larger plan's are reached
/// by typing the index into the address).
const MAX_STEP_LINKS: usize = 60;

pub fn run_toolbar(store: &str, d: &RunDetail, steps: usize) -> String {
    let id = d.run.id.0;
    let mut extra = String::new();
    if d.run.status == RunStatus::Running {
        let _ = write!(extra, "<a href=\"/runs/{id}/live\">Live view</a>");
    }
    let mut out = bar(store, &extra);
    out.push_str("<nav class=\"downloads\">Download: ");
    for (file, name) in [
        ("report.html", "HTML report"),
        ("steps.csv", "CSV (steps)"),
        ("intervals.csv", "CSV (intervals)"),
        ("run.xlsx", "XLSX"),
        ("run.json", "JSON"),
    ] {
        let _ = write!(
            out,
            "<a href=\"/runs/{id}/download/{file}\" download>{name}</a>"
        );
    }
    let _ = write!(
        out,
        "<a href=\"/api/runs/{id}\">API</a></nav>\n<nav class=\"intervals\">Intervals of step: "
    );
    // Steps are numbered from 1 here as everywhere a step is shown.
    for n in 1..=steps.min(MAX_STEP_LINKS) {
        let _ = write!(out, "<a href=\"/runs/{id}/steps/{n}\">{n}</a>");
    }
    if steps > MAX_STEP_LINKS {
        let _ = write!(
            out,
            "<span class=\"muted\">… any of the {steps}: /runs/{id}/steps/N</span>"
        );
    }
    let _ = write!(
        out,
        "</nav>\n<section class=\"labels\"><strong>Labels</strong> "
    );
    for (k, v) in &d.run.labels {
        let _ = write!(
            out,
            "<form class=\"inline\" method=\"post\" action=\"/runs/{id}/labels\"><span class=\"label\">{}={}</span><input type=\"hidden\" name=\"key\" value=\"{}\"><input type=\"hidden\" name=\"action\" value=\"remove\"><button title=\"remove this label\">×</button></form> ",
            esc(k),
            esc(v),
            esc(k)
        );
    }
    let _ = writeln!(
        out,
        "<form class=\"inline\" method=\"post\" action=\"/runs/{id}/labels\"><input name=\"key\" placeholder=\"key\" required maxlength=\"128\" size=\"10\"> = <input name=\"value\" placeholder=\"value\" maxlength=\"1024\" size=\"16\"><input type=\"hidden\" name=\"action\" value=\"set\"> <button>Set label</button></form></section>"
    );
    out
}

/// The bar of a comparison.
pub fn compare_toolbar(store: &str, ids: &[i64]) -> String {
    let runs: Vec<String> = ids
        .iter()
        .map(|id| format!("<a href=\"/runs/{id}\">run {id}</a>"))
        .collect();
    format!(
        "{}<p class=\"sub\">Comparing {}</p>\n",
        bar(store, ""),
        runs.join(", ")
    )
}

/// The runs, newest first, with the filters and a page at a time.
pub fn runs_page(
    store: &str,
    q: &RunsQuery,
    filter: &RunFilter,
    listed: &[ListedRun],
    total: u64,
) -> String {
    let mut b = String::new();
    b.push_str("<h1>Runs</h1>\n");
    let val = |v: &Option<String>| esc(v.as_deref().unwrap_or(""));
    let _ = writeln!(
        b,
        "<form class=\"filters\" method=\"get\" action=\"/\">\
<label>label (key or key=value, comma-separated)<input name=\"label\" value=\"{}\" size=\"24\"></label>\
<label>target contains<input name=\"target\" value=\"{}\" size=\"18\"></label>\
<label>from<input name=\"since\" value=\"{}\" placeholder=\"2026-11-01\" size=\"11\"></label>\
<label>to<input name=\"until\" value=\"{}\" placeholder=\"2026-11-30\" size=\"11\"></label>\
<label>status<select name=\"status\">{}</select></label>\
<label>kind<select name=\"kind\">{}</select></label>\
<button>Filter</button> <a href=\"/\">clear</a></form>",
        val(&q.label),
        val(&q.target),
        val(&q.since),
        val(&q.until),
        options(&["", "running", "ok", "failed", "interrupted"], q.status.as_deref()),
        options(&["", "run", "plan", "quick", "profile"], q.kind.as_deref()),
    );
    let first = filter.offset + 1;
    let last = filter.offset + listed.len() as u64;
    let _ = writeln!(
        b,
        "<p class=\"sub\">{} run{} match{}{}</p>",
        total,
        if total == 1 { "" } else { "s" },
        if total == 1 { "es" } else { "" },
        if listed.is_empty() {
            String::new()
        } else {
            format!("; {first} to {last} shown")
        }
    );
    b.push_str("<form method=\"get\" action=\"/compare\">\n<div class=\"scroll\"><table class=\"wide steps\" id=\"runs\">\n<thead><tr><th></th><th class=\"num\">id</th><th>kind</th><th>status</th><th>started</th><th class=\"num\">steps</th><th>target</th><th class=\"num\">result</th><th>labels</th></tr></thead>\n<tbody>\n");
    for l in listed {
        let r = &l.run;
        let id = r.id.0;
        let labels: String = r
            .labels
            .iter()
            .map(|(k, v)| format!("<span class=\"label\">{}={}</span>", esc(k), esc(v)))
            .collect();
        let _ = writeln!(
            b,
            "<tr><td><input type=\"checkbox\" name=\"r\" value=\"{id}\" aria-label=\"compare run {id}\"></td><td class=\"num\"><a href=\"/runs/{id}\">{id}</a></td><td>{}</td><td>{}{}</td><td>{}</td><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"labels\">{labels}</td></tr>",
            r.kind.as_str(),
            status_span(r.status.as_str()),
            if r.status == RunStatus::Running {
                format!(" <a href=\"/runs/{id}/live\">live</a>")
            } else {
                String::new()
            },
            esc(&r.started),
            l.steps.len(),
            esc(&targets_text(&l.targets)),
            esc(&headline(&l.steps)),
        );
    }
    b.push_str("</tbody></table></div>\n<p><button>Compare the checked runs (2 to 8)</button></p></form>\n");
    // Paging links keep the filters.
    let mut nav = Vec::new();
    let link = |offset: u64| {
        let mut params: Vec<String> = Vec::new();
        for (k, v) in [
            ("label", &q.label),
            ("target", &q.target),
            ("since", &q.since),
            ("until", &q.until),
            ("status", &q.status),
            ("kind", &q.kind),
        ] {
            if let Some(v) = v.as_deref().filter(|v| !v.is_empty()) {
                params.push(format!("{k}={}", url_encode(v)));
            }
        }
        params.push(format!("limit={}", filter.limit));
        params.push(format!("offset={offset}"));
        format!("/?{}", params.join("&"))
    };
    if filter.offset > 0 {
        nav.push(format!(
            "<a href=\"{}\">newer</a>",
            esc(&link(filter.offset.saturating_sub(filter.limit)))
        ));
    }
    if last < total {
        nav.push(format!("<a href=\"{}\">older</a>", esc(&link(last))));
    }
    if !nav.is_empty() {
        let _ = writeln!(b, "<nav>{}</nav>", nav.join(" "));
    }
    page("iorig runs", store, &b)
}

fn options(values: &[&str], chosen: Option<&str>) -> String {
    values
        .iter()
        .map(|v| {
            format!(
                "<option value=\"{v}\"{}>{}</option>",
                if Some(*v) == chosen { " selected" } else { "" },
                if v.is_empty() { "any" } else { v }
            )
        })
        .collect()
}

/// `text` for a query string.
fn url_encode(text: &str) -> String {
    let mut out = String::new();
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
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

/// Runs in progress: where each stands and how long it has left.
pub fn plans_page(store: &str, runs: &[Progress]) -> String {
    let mut b = String::from("<h1>In progress</h1>\n");
    if runs.is_empty() {
        b.push_str("<p class=\"note\">No run is in progress.</p>\n");
        return page("iorig: in progress", store, &b);
    }
    b.push_str("<table class=\"wide steps\" id=\"progress\"><thead><tr><th class=\"num\">id</th><th>kind</th><th>started</th><th>host</th><th>step</th><th>done</th><th class=\"num\">ETA</th><th class=\"num\">last interval</th><th>labels</th></tr></thead><tbody>\n");
    for p in runs {
        let r = &p.run;
        let id = r.id.0;
        let pct = if p.steps == 0 {
            0.0
        } else {
            100.0 * p.done as f64 / p.steps as f64
        };
        let eta = p.eta_s.map_or("-".to_owned(), fmt_s);
        let idle = match p.idle_s {
            None => "none yet".to_owned(),
            Some(s) if s > 60.0 => format!(
                "<span class=\"warn\">{} ago: stalled or killed?</span>",
                fmt_s(s)
            ),
            Some(s) => format!("{} ago", fmt_s(s)),
        };
        let _ = writeln!(
            b,
            "<tr><td class=\"num\"><a href=\"/runs/{id}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{} <a href=\"/runs/{id}/live\">live</a></td><td><span class=\"bar\"><span style=\"width:{pct:.0}%\"></span></span> {}/{}</td><td class=\"num\">{eta}</td><td class=\"num\">{idle}</td><td>{}</td></tr>",
            r.kind.as_str(),
            esc(&r.started),
            esc(&r.host),
            esc(p.running_step.as_deref().unwrap_or("-")),
            p.done,
            p.steps,
            esc(&labels_text(&r.labels)),
        );
    }
    b.push_str("</tbody></table>\n<p class=\"note\">ETA: the steps left times the mean time of the steps done so far.</p>\n");
    page("iorig: in progress", store, &b)
}

fn fmt_s(s: f64) -> String {
    let s = s.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// The live view of a run: figures and charts that the script fills from
/// the run's event stream.
pub fn live_page(store: &str, d: &RunDetail) -> String {
    let id = d.run.id.0;
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<h1>Run {id}, live</h1>\n<p class=\"sub\">{} {}, started {} on {}; status <span id=\"status\">{}</span>. <a href=\"/runs/{id}\">The run's page</a></p>",
        d.run.kind.as_str(),
        labels_text(&d.run.labels)
            .is_empty()
            .then(String::new)
            .unwrap_or_else(|| format!("[{}]", esc(&labels_text(&d.run.labels)))),
        esc(&d.run.started),
        esc(&d.run.host),
        d.run.status.as_str()
    );
    b.push_str("<table class=\"live-figures\"><thead><tr><th>step</th><th>t (s)</th><th class=\"num\">IOPS</th><th class=\"num\">MB/s</th><th class=\"num\">p50 ms</th><th class=\"num\">p99 ms</th><th class=\"num\">p99.9 ms</th></tr></thead><tbody><tr id=\"now\"><td>-</td><td>-</td><td class=\"num\">-</td><td class=\"num\">-</td><td class=\"num\">-</td><td class=\"num\">-</td><td class=\"num\">-</td></tr></tbody></table>\n");
    b.push_str("<h2>IOPS</h2>\n<svg class=\"live chart\" id=\"iops\" viewBox=\"0 0 1000 260\" preserveAspectRatio=\"none\" role=\"img\"><title>IOPS over time</title></svg>\n");
    b.push_str("<h2>Latency percentiles (ms)</h2>\n<svg class=\"live chart\" id=\"lat\" viewBox=\"0 0 1000 260\" preserveAspectRatio=\"none\" role=\"img\"><title>Latency percentiles over time</title></svg>\n<p class=\"note\" id=\"legend\">p50 blue, p99 orange, p99.9 red; each point one interval of the run's totals.</p>\n");
    let _ = writeln!(
        b,
        "<script src=\"/static/live.js\" data-run=\"{id}\" id=\"live-script\"></script>"
    );
    page(&format!("iorig run {id}, live"), store, &b)
}

/// Asks for the token; `wrong` after a token that did not match.
pub fn login_page(required: bool, wrong: bool) -> String {
    let mut b = String::from("<h1>Sign in</h1>\n");
    if !required {
        b.push_str("<p>This server needs no token. <a href=\"/\">The runs</a></p>\n");
        return page("iorig: sign in", "", &b);
    }
    if wrong {
        b.push_str("<p class=\"warn\">That is not this server's token.</p>\n");
    }
    b.push_str("<p>This server needs its token (the first line of the file given to <code>iorig serve --token-file</code>). It is kept in a cookie for this site only.</p>\n<form method=\"post\" action=\"/login\"><input type=\"password\" name=\"token\" autocomplete=\"current-password\" required size=\"40\"> <button>Sign in</button></form>\n");
    page("iorig: sign in", "", &b)
}

/// A failed request's page.
pub fn error_page(status: u16, message: &str) -> String {
    page(
        &format!("iorig: {status}"),
        "",
        &format!(
            "<h1>{status}</h1>\n<p id=\"error\">{}</p>\n<p><a href=\"/\">The runs</a></p>\n",
            esc(message)
        ),
    )
}

/// One step's intervals: the totals of each, and its storage-side figures.
pub fn step_page(
    store: &str,
    d: &RunDetail,
    step: &iorig_store::StepRow,
    rows: &[iorig_store::IntervalRow],
    external: &[iorig_store::ExternalRow],
) -> String {
    let id = d.run.id.0;
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<h1>Run {id}, step {}: {}</h1>\n<p class=\"sub\">{} · <a href=\"/runs/{id}\">the run's page</a></p>",
        step.index + 1,
        esc(&step.name),
        status_span(step.status.as_str()),
    );
    b.push_str("<div class=\"scroll\"><table class=\"steps\" id=\"intervals\"><thead><tr><th class=\"num\">#</th><th class=\"num\">t (s)</th><th></th><th class=\"num\">IOPS</th><th class=\"num\">MB/s</th><th class=\"num\">mean ms</th><th class=\"num\">p50 ms</th><th class=\"num\">p99 ms</th><th class=\"num\">p99.9 ms</th><th class=\"num\">max ms</th><th class=\"num\">errors</th><th class=\"num\">CPU usr/sys %</th><th class=\"num\">device util %</th></tr></thead><tbody>\n");
    let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
    for r in rows.iter().filter(|r| r.op == iorig_store::Op::Total) {
        let _ = writeln!(
            b,
            "<tr><td class=\"num\">{}</td><td class=\"num\">{:.2}</td><td>{}</td><td class=\"num\">{:.0}</td><td class=\"num\">{:.2}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{:.0}/{:.0}</td><td class=\"num\">{}</td></tr>",
            r.seq,
            r.t_s,
            if r.warmup { "<span class=\"muted\">warmup</span>" } else { "" },
            r.iops,
            r.bw_bytes_per_s / 1e6,
            ms(r.lat_ns.mean),
            ms(r.lat_ns.p50),
            ms(r.lat_ns.p99),
            ms(r.lat_ns.p99_9),
            ms(r.lat_ns.max),
            r.errors,
            r.cpu_usr_pct,
            r.cpu_sys_pct,
            r.device.map_or("–".to_owned(), |dv| format!("{:.0}", dv.util_pct)),
        );
    }
    b.push_str("</tbody></table></div>\n");
    if !external.is_empty() {
        b.push_str("<h2>Storage side (--collect)</h2>\n<div class=\"scroll\"><table class=\"steps\" id=\"external\"><thead><tr><th class=\"num\">#</th><th>source</th><th>series</th><th class=\"num\">value</th><th>failure</th></tr></thead><tbody>\n");
        for e in external {
            let _ = writeln!(
                b,
                "<tr><td class=\"num\">{}</td><td>{}</td><td><code>{}</code></td><td class=\"num\">{}</td><td>{}</td></tr>",
                e.seq,
                esc(&e.source),
                esc(&e.name),
                e.value.map_or("–".to_owned(), iorig_spec::sig3),
                esc(e.error.as_deref().unwrap_or("")),
            );
        }
        b.push_str("</tbody></table></div>\n");
    }
    page(
        &format!("iorig run {id} step {}", step.index + 1),
        store,
        &b,
    )
}
