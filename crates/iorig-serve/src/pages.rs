//! The server's own pages (the runs list, plans in progress, the live
//! view, login and errors) and the bar it puts on top of the reports it
//! serves, as maud templates: labels, names and paths are the user's text,
//! and every value is escaped where it goes in.

use crate::app::RunsQuery;
use iorig_report::html::{document, html, status_markup, Frame, Markup, Rendered};
use iorig_store::{RunDetail, RunFilter, RunStatus};
use iorig_text::runs::{headline, labels_text, targets_text, ListedRun};

/// The live view's script (served as /static/live.js).
pub const LIVE_JS: &str = include_str!("live.js");

/// Styles of the server's own parts, beside the reports' own
/// (`iorig_report::html::CSS`).
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

/// The server's frame around any page: its styles, and `top` first in the
/// body.
fn frame(top: Markup) -> Frame {
    Frame {
        extra_css: SERVE_CSS,
        top: Some(top),
    }
}

/// A page of the server's own: `title`, the bar, `body`.
fn page(title: &str, store: &str, body: Markup) -> String {
    document(title, &body, &frame(bar(store, None))).into_string()
}

/// The server's bar: where to go, `extra` links, and which store this is.
fn bar(store: &str, extra: Option<Markup>) -> Markup {
    html! {
        header.serve {
            strong { "iorig" }
            a href="/" { "Runs" }
            a href="/plans" { "In progress" }
            @if let Some(extra) = extra { (extra) }
            span.store { "store " (store) }
        }
    }
}

/// A report page (a run's or a comparison's) with `toolbar` on top: the
/// rendered page put in the server's frame, not edited as text.
pub fn with_toolbar(report: &Rendered, toolbar: Markup) -> String {
    report.framed(&frame(toolbar))
}

/// Steps linked by number from a run's bar (a larger plan's are reached
/// by typing the index into the address).
const MAX_STEP_LINKS: usize = 60;

/// The bar of a run's page: downloads, the live view of a running run,
/// and its labels, editable.
pub fn run_toolbar(store: &str, d: &RunDetail, steps: usize) -> Markup {
    let id = d.run.id.0;
    let live = (d.run.status == RunStatus::Running)
        .then(|| html! { a href={ "/runs/" (id) "/live" } { "Live view" } });
    let downloads = [
        ("report.html", "HTML report"),
        ("steps.csv", "CSV (steps)"),
        ("intervals.csv", "CSV (intervals)"),
        ("run.xlsx", "XLSX"),
        ("run.json", "JSON"),
    ];
    html! {
        (bar(store, live))
        nav.downloads {
            "Download: "
            @for (file, name) in downloads {
                a href={ "/runs/" (id) "/download/" (file) } download { (name) }
            }
            a href={ "/api/runs/" (id) } { "API" }
        }
        "\n"
        nav.intervals {
            "Intervals of step: "
            // Steps are numbered from 1 here as everywhere a step is shown.
            @for n in 1..=steps.min(MAX_STEP_LINKS) {
                a href={ "/runs/" (id) "/steps/" (n) } { (n) }
            }
            @if steps > MAX_STEP_LINKS {
                span.muted { "… any of the " (steps) ": /runs/" (id) "/steps/N" }
            }
        }
        "\n"
        section.labels {
            strong { "Labels" } " "
            @for (k, v) in &d.run.labels {
                form.inline method="post" action={ "/runs/" (id) "/labels" } {
                    span.label { (k) "=" (v) }
                    input type="hidden" name="key" value=(k);
                    input type="hidden" name="action" value="remove";
                    button title="remove this label" { "×" }
                }
                " "
            }
            form.inline method="post" action={ "/runs/" (id) "/labels" } {
                input name="key" placeholder="key" required maxlength="128" size="10";
                " = "
                input name="value" placeholder="value" maxlength="1024" size="16";
                input type="hidden" name="action" value="set";
                " "
                button { "Set label" }
            }
        }
    }
}

/// The bar of a comparison.
pub fn compare_toolbar(store: &str, ids: &[i64]) -> Markup {
    html! {
        (bar(store, None))
        p.sub {
            "Comparing "
            @for (i, id) in ids.iter().enumerate() {
                @if i > 0 { ", " }
                a href={ "/runs/" (id) } { "run " (id) }
            }
        }
    }
}

/// The runs, newest first, with the filters and a page at a time.
pub fn runs_page(
    store: &str,
    q: &RunsQuery,
    filter: &RunFilter,
    listed: &[ListedRun],
    total: u64,
) -> String {
    let val = |v: &Option<String>| v.clone().unwrap_or_default();
    let first = filter.offset + 1;
    let last = filter.offset + listed.len() as u64;
    let body = html! {
        h1 { "Runs" }
        form.filters method="get" action="/" {
            label { "label (key or key=value, comma-separated)" input name="label" value=(val(&q.label)) size="24"; }
            label { "target contains" input name="target" value=(val(&q.target)) size="18"; }
            label { "from" input name="since" value=(val(&q.since)) placeholder="2026-11-01" size="11"; }
            label { "to" input name="until" value=(val(&q.until)) placeholder="2026-11-30" size="11"; }
            label { "status" select name="status" { (options(&["", "running", "ok", "failed", "interrupted"], q.status.as_deref())) } }
            label { "kind" select name="kind" { (options(&["", "run", "plan", "quick", "profile"], q.kind.as_deref())) } }
            button { "Filter" } " " a href="/" { "clear" }
        }
        "\n"
        p.sub {
            (total) " run" @if total != 1 { "s" } " match" @if total == 1 { "es" }
            @if !listed.is_empty() { "; " (first) " to " (last) " shown" }
        }
        "\n"
        form method="get" action="/compare" {
            div.scroll {
                table.wide.steps #runs {
                    thead { tr {
                        th {} th.num { "id" } th { "kind" } th { "status" } th { "started" }
                        th.num { "steps" } th { "target" } th.num { "result" } th { "labels" }
                    } }
                    tbody {
                        @for l in listed { (run_row(l)) "\n" }
                    }
                }
            }
            "\n"
            p { button { "Compare the checked runs (2 to 8)" } }
        }
        "\n"
        (paging(q, filter, last, total))
    };
    page("iorig runs", store, body)
}

/// A row of the runs list.
fn run_row(l: &ListedRun) -> Markup {
    let r = &l.run;
    let id = r.id.0;
    html! {
        tr {
            td { input type="checkbox" name="r" value=(id) aria-label={ "compare run " (id) }; }
            td.num { a href={ "/runs/" (id) } { (id) } }
            td { (r.kind.as_str()) }
            td {
                (status_markup(r.status.as_str()))
                @if r.status == RunStatus::Running {
                    " " a href={ "/runs/" (id) "/live" } { "live" }
                }
            }
            td { (r.started) }
            td.num { (l.steps.len()) }
            td { (targets_text(&l.targets)) }
            td.num { (headline(&l.steps)) }
            td.labels {
                @for (k, v) in &r.labels { span.label { (k) "=" (v) } }
            }
        }
    }
}

/// The links to newer and older runs, keeping the filters.
fn paging(q: &RunsQuery, filter: &RunFilter, last: u64, total: u64) -> Markup {
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
    let newer = (filter.offset > 0).then(|| link(filter.offset.saturating_sub(filter.limit)));
    let older = (last < total).then(|| link(last));
    html! {
        @if newer.is_some() || older.is_some() {
            nav {
                @if let Some(href) = &newer { a href=(href) { "newer" } }
                @if newer.is_some() && older.is_some() { " " }
                @if let Some(href) = &older { a href=(href) { "older" } }
            }
            "\n"
        }
    }
}

fn options(values: &[&str], chosen: Option<&str>) -> Markup {
    html! {
        @for v in values {
            option value=(v) selected[Some(*v) == chosen] {
                @if v.is_empty() { "any" } @else { (v) }
            }
        }
    }
}

/// `text` for a query string.
fn url_encode(text: &str) -> String {
    use std::fmt::Write as _;
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
    /// Seconds left: from the steps' planned lengths when known, else from
    /// the time the finished steps took (None: neither is known yet).
    pub eta_s: Option<f64>,
    /// Seconds since the run started.
    pub elapsed_s: Option<f64>,
    /// The run's planned length, when every step's is known.
    pub total_s: Option<f64>,
}

/// Runs in progress: where each stands and how long it has left.
pub fn plans_page(store: &str, runs: &[Progress]) -> String {
    let body = html! {
        h1 { "In progress" }
        @if runs.is_empty() {
            p.note { "No run is in progress." }
        } @else {
            table.wide.steps #progress {
                thead { tr {
                    th.num { "id" } th { "kind" } th { "started" } th { "host" } th { "step" }
                    th { "done" } th.num { "elapsed / total" } th.num { "ETA" } th.num { "last interval" } th { "labels" }
                } }
                tbody { @for p in runs { (progress_row(p)) "\n" } }
            }
            "\n"
            p.note {
                "ETA: the planned length of the steps left (warmup and time), less the time into the \
                 running one; where a step's length is not known ahead (a precondition, a step \
                 that ends by its bytes), the steps left times the mean time of those done so far."
            }
        }
    };
    page("iorig: in progress", store, body)
}

/// A row of the runs in progress.
fn progress_row(p: &Progress) -> Markup {
    let r = &p.run;
    let id = r.id.0;
    // By time when the run's length is known, else by steps done.
    let pct = match (p.elapsed_s, p.total_s) {
        (Some(e), Some(t)) if t > 0.0 => (100.0 * e / t).min(100.0),
        _ if p.steps == 0 => 0.0,
        _ => 100.0 * p.done as f64 / p.steps as f64,
    };
    let fmt_s = |s: f64| {
        std::time::Duration::try_from_secs_f64(s.round())
            .map_or_else(|_| "-".to_owned(), iorig_spec::format_duration)
    };
    html! {
        tr {
            td.num { a href={ "/runs/" (id) } { (id) } }
            td { (r.kind.as_str()) }
            td { (r.started) }
            td { (r.host) }
            td { (p.running_step.as_deref().unwrap_or("-")) " " a href={ "/runs/" (id) "/live" } { "live" } }
            td {
                span.bar { span style={ "width:" (format!("{pct:.0}")) "%" } {} }
                " " (p.done) "/" (p.steps) " steps"
            }
            td.num {
                (p.elapsed_s.map_or("-".to_owned(), fmt_s))
                " / " (p.total_s.map_or("?".to_owned(), fmt_s))
            }
            td.num { (p.eta_s.map_or("-".to_owned(), fmt_s)) }
            td.num {
                @match p.idle_s {
                    None => "none yet",
                    Some(s) if s > 60.0 => span.warn { (fmt_s(s)) " ago: stalled or killed?" },
                    Some(s) => { (fmt_s(s)) " ago" },
                }
            }
            td { (labels_text(&r.labels)) }
        }
    }
}

/// The live view of a run: figures and charts that the script fills from
/// the run's event stream.
pub fn live_page(store: &str, d: &RunDetail, total_s: Option<f64>) -> String {
    let id = d.run.id.0;
    let labels = labels_text(&d.run.labels);
    let body = html! {
        h1 { "Run " (id) ", live" }
        "\n"
        p.sub {
            (d.run.kind.as_str()) " "
            @if !labels.is_empty() { "[" (labels) "]" }
            ", started " (d.run.started) " on " (d.run.host) "; status "
            span #status { (d.run.status.as_str()) }
            ". " a href={ "/runs/" (id) } { "The run's page" }
        }
        "\n"
        table.live-figures {
            thead { tr {
                th { "step" } th { "t (s)" } th.num { "IOPS" } th.num { "MB/s" }
                th.num { "p50 ms" } th.num { "p99 ms" } th.num { "p99.9 ms" }
            } }
            tbody { tr #now {
                td { "-" } td { "-" }
                @for _ in 0..5 { td.num { "-" } }
            } }
        }
        "\n"
        // A multi-host run's hosts in the last interval (shown once they
        // report).
        table.live-figures #hosts-figures hidden {
            thead { tr { th { "host" } th.num { "IOPS" } th.num { "MB/s" } th.num { "p99 ms" } } }
            tbody #hosts-now {}
        }
        "\n"
        p #clock data-started=(d.run.started) data-total-s=[total_s.map(|t| format!("{t:.3}"))] { "-" }
        "\n"
        h2 { "IOPS" }
        svg.live.chart #iops viewBox="0 0 1000 260" role="img" { title { "IOPS over time" } }
        "\n"
        h2 { "Latency percentiles (ms)" }
        svg.live.chart #lat viewBox="0 0 1000 260" role="img" { title { "Latency percentiles over time" } }
        "\n"
        p.note #legend { "p50 blue, p99 orange, p99.9 red; each point one interval of the run's totals. A multi-host run adds a dashed line per host (its IOPS; its p99)." }
        "\n"
        script src="/static/live.js" data-run=(id) id="live-script" {}
    };
    page(&format!("iorig run {id}, live"), store, body)
}

/// Asks for the token; `wrong` after a token that did not match.
pub fn login_page(required: bool, wrong: bool) -> String {
    let body = html! {
        h1 { "Sign in" }
        @if !required {
            p { "This server needs no token. " a href="/" { "The runs" } }
        } @else {
            @if wrong { p.warn { "That is not this server's token." } }
            p {
                "This server needs its token (the first line of the file given to "
                code { "iorig serve --token-file" }
                "). It is kept in a cookie for this site only."
            }
            form method="post" action="/login" {
                input type="password" name="token" autocomplete="current-password" required size="40";
                " "
                button { "Sign in" }
            }
        }
    };
    page("iorig: sign in", "", body)
}

/// A failed request's page.
pub fn error_page(status: u16, message: &str) -> String {
    let body = html! {
        h1 { (status) }
        p #error { (message) }
        p { a href="/" { "The runs" } }
    };
    page(&format!("iorig: {status}"), "", body)
}

/// Intervals a page of a step's table shows: about 200 bytes of HTML a
/// row, so a page stays under half a MB however long the step.
pub const INTERVALS_PER_PAGE: u64 = 2000;

/// Which intervals a page of a step's table holds (`?page=K`, from 1):
/// positions `from..to` of the `total` positions stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntervalPage {
    /// This page, from 1.
    pub number: u64,
    /// How many pages there are (at least 1, even for no intervals).
    pub pages: u64,
    pub from: u64,
    pub to: u64,
    /// One past the last interval position stored.
    pub total: u64,
}

impl IntervalPage {
    /// Page `number` (1 when not given) of `total` interval positions at
    /// `per_page` a page; `None` past the last page or for page 0.
    pub fn of(total: u64, per_page: u64, number: Option<u64>) -> Option<IntervalPage> {
        let per_page = per_page.max(1);
        let pages = total.div_ceil(per_page).max(1);
        let number = number.unwrap_or(1);
        if number == 0 || number > pages {
            return None;
        }
        let from = (number - 1) * per_page;
        Some(IntervalPage {
            number,
            pages,
            from,
            to: (from + per_page).min(total),
            total,
        })
    }
}

/// A count with thousands separated, as the page numbers read.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The line above and below a step's table: which intervals, and links to
/// the first, previous, next and last pages.
fn interval_pager(base: &str, p: &IntervalPage) -> Markup {
    let link = |label: &str, to: u64, on: bool| {
        html! {
            @if on { a href={ (base) "?page=" (to) } { (label) } } @else { span.muted { (label) } }
        }
    };
    html! {
        p.sub.pager {
            @if p.to > p.from {
                "intervals " (grouped(p.from)) "–" (grouped(p.to - 1)) " of " (grouped(p.total))
            } @else {
                "no intervals"
            }
            @if p.pages > 1 {
                " · page " (p.number) " of " (grouped(p.pages)) " · "
                (link("first", 1, p.number > 1)) " "
                (link("prev", p.number.saturating_sub(1), p.number > 1)) " "
                (link("next", p.number + 1, p.number < p.pages)) " "
                (link("last", p.pages, p.number < p.pages))
            }
        }
    }
}

/// One page of a step's intervals: the totals of each, and its
/// storage-side figures over the same intervals.
pub fn step_page(
    store: &str,
    d: &RunDetail,
    step: &iorig_store::StepRow,
    shown: &IntervalPage,
    rows: &[iorig_store::IntervalRow],
    external: &[iorig_store::ExternalRow],
) -> String {
    let id = d.run.id.0;
    let ms = |ns: u64| format!("{:.3}", ns as f64 / 1e6);
    let base = format!("/runs/{id}/steps/{}", step.index + 1);
    let body = html! {
        h1 { "Run " (id) ", step " (step.index + 1) ": " (step.name) }
        "\n"
        p.sub { (status_markup(step.status.as_str())) " · " a href={ "/runs/" (id) } { "the run's page" } }
        "\n"
        (interval_pager(&base, shown))
        "\n"
        div.scroll { table.steps #intervals {
            thead { tr {
                th.num { "#" } th.num { "t (s)" } th {} th.num { "IOPS" } th.num { "MB/s" }
                th.num { "mean ms" } th.num { "p50 ms" } th.num { "p99 ms" } th.num { "p99.9 ms" }
                th.num { "max ms" } th.num { "errors" } th.num { "CPU usr/sys %" } th.num { "device util %" }
            } }
            tbody {
                @for r in rows.iter().filter(|r| r.op == iorig_store::Op::Total) {
                    tr {
                        td.num { (r.seq) }
                        td.num { (format!("{:.2}", r.t_s)) }
                        td { @if r.warmup { span.muted { "warmup" } } }
                        td.num { (format!("{:.0}", r.iops)) }
                        td.num { (format!("{:.2}", r.bw_bytes_per_s / 1e6)) }
                        td.num { (ms(r.lat_ns.mean)) }
                        td.num { (ms(r.lat_ns.p50)) }
                        td.num { (ms(r.lat_ns.p99)) }
                        td.num { (ms(r.lat_ns.p99_9)) }
                        td.num { (ms(r.lat_ns.max)) }
                        td.num { (r.errors) }
                        td.num { (format!("{:.0}/{:.0}", r.cpu_usr_pct, r.cpu_sys_pct)) }
                        td.num { (r.device.map_or("–".to_owned(), |dv| format!("{:.0}", dv.util_pct))) }
                    }
                    "\n"
                }
            }
        } }
        "\n"
        @if shown.pages > 1 { (interval_pager(&base, shown)) "\n" }
        @if !external.is_empty() {
            h2 { "Storage side (--collect)" }
            "\n"
            div.scroll { table.steps #external {
                thead { tr { th.num { "#" } th { "source" } th { "series" } th.num { "value" } th { "failure" } } }
                tbody {
                    @for e in external {
                        tr {
                            td.num { (e.seq) }
                            td { (e.source) }
                            td { code { (e.name) } }
                            td.num { (e.value.map_or("–".to_owned(), iorig_spec::sig3)) }
                            td { (e.error.as_deref().unwrap_or("")) }
                        }
                        "\n"
                    }
                }
            } }
            "\n"
        }
    };
    page(
        &format!("iorig run {id} step {}", step.index + 1),
        store,
        body,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use iorig_store::{RunId, RunKind, RunRow};

    const HOSTILE: &str = "<script>alert(\"x\")</script>";

    fn run() -> RunDetail {
        RunDetail {
            run: RunRow {
                id: RunId(7),
                kind: RunKind::Run,
                status: RunStatus::Running,
                started: "2026-01-01T00:00:00Z".into(),
                ended: None,
                host: HOSTILE.into(),
                tool_version: "0".into(),
                labels: [(HOSTILE.to_string(), "v\"><b>".to_string())].into(),
            },
            plan_json: None,
            command_line: String::new(),
        }
    }

    #[test]
    fn interval_pages_cover_every_position_once() {
        assert_eq!(
            IntervalPage::of(0, 2000, None),
            Some(IntervalPage {
                number: 1,
                pages: 1,
                from: 0,
                to: 0,
                total: 0
            })
        );
        let week = 604_800;
        let last = IntervalPage::of(week, 2000, Some(303)).unwrap();
        assert_eq!((last.pages, last.from, last.to), (303, 604_000, week));
        assert_eq!(IntervalPage::of(week, 2000, Some(304)), None);
        assert_eq!(IntervalPage::of(week, 2000, Some(0)), None);
        let mut next = 0;
        for n in 1..=IntervalPage::of(4001, 2000, None).unwrap().pages {
            let p = IntervalPage::of(4001, 2000, Some(n)).unwrap();
            assert_eq!(p.from, next);
            assert!(p.to - p.from <= 2000);
            next = p.to;
        }
        assert_eq!(next, 4001);
        assert_eq!(grouped(604_800), "604,800");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
    }

    #[test]
    fn the_user_s_text_never_becomes_markup() {
        for page in [
            error_page(404, HOSTILE),
            live_page(HOSTILE, &run(), Some(15.0)),
            with_toolbar(&Rendered::default(), run_toolbar(HOSTILE, &run(), 3)),
        ] {
            assert!(!page.contains("<script>alert"), "{page}");
            assert!(!page.contains("<b>"), "{page}");
        }
        let bar = run_toolbar("s", &run(), 3).into_string();
        assert!(bar.contains("value=\"&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;\""));
        assert!(
            bar.contains("<a href=\"/runs/7/live\">Live view</a>"),
            "{bar}"
        );
    }

    #[test]
    fn the_bar_is_the_first_thing_on_a_report_and_its_styles_in_the_head() {
        let page = with_toolbar(&Rendered::default(), compare_toolbar("s", &[3, 4]));
        let body = page
            .find("<body>")
            .map(|at| &page[at..])
            .unwrap_or_default();
        assert!(body.starts_with("<body><header class=\"serve\">"), "{page}");
        assert!(
            body.contains("Comparing <a href=\"/runs/3\">run 3</a>, <a href=\"/runs/4\">run 4</a>")
        );
        let head = page.split("</head>").next().unwrap_or_default();
        assert!(head.contains("header.serve {"), "{head}");
        assert_eq!(page.matches("<style>").count(), 1);
    }
}
