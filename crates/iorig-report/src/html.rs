//! The HTML report of a run and the comparison of several runs: one
//! self-contained page each (inline CSS and SVG, no script, nothing loaded
//! from the network, a print stylesheet), plus every chart on its own so
//! the CLI can also write it as SVG and PNG.
//!
//! Which charts appear follows from the run: every step with results gets
//! its time series and percentile plot; steps that differ only in threads
//! or qd become scaling charts (one line per block size); read % × block
//! size grids become heatmaps; stored curve analyses become curve charts.
//! A chart that cannot be drawn is replaced by a note, never fails the page.

use crate::charts::{
    self, fmt_iops, fmt_lat_ns, fmt_mb_s, CurveLine, HeatValue, Heatmap, PercentileLine,
    ScalingLine, ScalingPoint, TimeSeries,
};
use crate::model::{CurveReport, RunReport, StepParams, StepReport};
use crate::ReportError;
use iorig_result::StepRole;
use iorig_store::RunId;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;

/// Steps drawn in detail (time series and percentiles): beyond this the
/// page would grow to hundreds of megabytes for a large matrix; the step
/// table still lists every step.
pub const MAX_STEP_DETAILS: usize = 100;
/// Scaling charts per page, for the same reason.
pub const MAX_SCALING_CHARTS: usize = 40;
/// Heatmap pairs (IOPS, p99) per page.
pub const MAX_HEATMAPS: usize = 40;

/// One chart: `svg` is a complete SVG document whose root element carries
/// `id="{file_stem}"` and `class="chart"` and whose `<title>` is `title`.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// Unique within the page; also the file name without extension.
    pub file_stem: String,
    pub title: String,
    pub svg: String,
}

/// A rendered page and its charts (in page order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rendered {
    pub index_html: String,
    pub charts: Vec<Chart>,
}

// ---------------------------------------------------------------- page

/// Builds a page: sections of HTML and the charts placed in them.
struct Page {
    body: String,
    charts: Vec<Chart>,
}

impl Page {
    fn new() -> Page {
        Page {
            body: String::new(),
            charts: Vec::new(),
        }
    }

    fn push(&mut self, html: &str) {
        self.body.push_str(html);
    }

    /// Places a chart (or, when it could not be drawn, a note saying so).
    fn chart(&mut self, file_stem: &str, title: &str, svg: Result<String, ReportError>) {
        match svg {
            Ok(svg) => {
                let svg = tag_svg(&svg, file_stem, title);
                let _ = writeln!(self.body, "<figure>{svg}</figure>");
                self.charts.push(Chart {
                    file_stem: file_stem.to_owned(),
                    title: title.to_owned(),
                    svg,
                });
            }
            Err(e) => {
                let _ = writeln!(
                    self.body,
                    "<p class=\"note\">Chart “{}” could not be drawn: {}</p>",
                    esc(title),
                    esc(&e.to_string())
                );
            }
        }
    }

    fn finish(self, title: &str) -> Rendered {
        let mut html = String::with_capacity(self.body.len() + CSS.len() + 512);
        html.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
        html.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
        let _ = writeln!(html, "<title>{}</title>\n<style>{CSS}</style>", esc(title));
        html.push_str("</head>\n<body>\n");
        html.push_str(&self.body);
        html.push_str("</body>\n</html>\n");
        Rendered {
            index_html: html,
            charts: self.charts,
        }
    }
}

/// Gives the SVG root its id, class and an accessible title.
fn tag_svg(svg: &str, id: &str, title: &str) -> String {
    let Some(start) = svg.find("<svg") else {
        return svg.to_owned();
    };
    let Some(end) = svg[start..].find('>').map(|e| start + e) else {
        return svg.to_owned();
    };
    let mut out = String::with_capacity(svg.len() + 128);
    out.push_str(&svg[..start + 4]);
    let _ = write!(out, " id=\"{}\" class=\"chart\" role=\"img\"", esc(id));
    out.push_str(&svg[start + 4..=end]);
    let _ = write!(out, "\n<title>{}</title>", esc(title));
    out.push_str(&svg[end + 1..]);
    out
}

const CSS: &str = r#"
:root { --ink:#1d2330; --muted:#5b6474; --line:#d9dde5; --band:#f4f6f9; --accent:#1f77b4; --bad:#c0392b; --good:#1e8449; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); margin: 0 auto; max-width: 1280px; padding: 24px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 20px; margin: 32px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 24px 0 8px; }
.sub { color: var(--muted); margin: 0 0 16px; }
nav { margin: 8px 0 16px; }
nav a { margin-right: 14px; color: var(--accent); text-decoration: none; }
table { border-collapse: collapse; margin: 6px 0 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 9px; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { background: var(--band); font-weight: 600; white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
table.facts th { background: none; color: var(--muted); font-weight: 500; }
table.wide { width: 100%; }
tbody tr:nth-child(even) td { background: #fafbfc; }
table.steps, table.compare { font-size: 13px; }
table.steps td { white-space: nowrap; }
table.steps td:nth-child(2), table.steps td:last-child { white-space: normal; min-width: 9em; }
.status-ok { color: var(--good); font-weight: 600; }
.status-failed, .status-interrupted, .warn { color: var(--bad); font-weight: 600; }
.status-skipped, .status-pending, .status-running, .muted { color: var(--muted); }
.up { color: var(--good); } .down { color: var(--bad); }
.note { color: var(--muted); font-style: italic; }
ul.findings li { margin: 3px 0; }
figure { margin: 10px 0 18px; }
svg.chart { max-width: 100%; height: auto; display: block; }
.scroll { overflow-x: auto; }
footer { margin-top: 40px; color: var(--muted); font-size: 12px; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  nav { display: none; }
  h2 { break-after: avoid; }
  figure, table.facts { break-inside: avoid; }
  tr { break-inside: avoid; }
  .scroll { overflow: visible; }
  a { color: inherit; text-decoration: none; }
}
"#;

fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn facts_table(rows: &[(&str, String)]) -> String {
    let mut t = String::from("<table class=\"facts\"><tbody>\n");
    for (k, v) in rows {
        let _ = writeln!(t, "<tr><th>{}</th><td>{}</td></tr>", esc(k), v);
    }
    t.push_str("</tbody></table>\n");
    t
}

/// A table with a header row; cells are HTML already.
/// `numeric`: the columns set right-aligned.
fn table(class: &str, head: &[&str], rows: &[Vec<String>], numeric: Range<usize>) -> String {
    let mut t = format!("<div class=\"scroll\"><table class=\"{class}\"><thead><tr>");
    for (i, h) in head.iter().enumerate() {
        let cls = if numeric.contains(&i) {
            " class=\"num\""
        } else {
            ""
        };
        let _ = write!(t, "<th{cls}>{}</th>", esc(h));
    }
    t.push_str("</tr></thead><tbody>\n");
    for r in rows {
        t.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let cls = if numeric.contains(&i) {
                " class=\"num\""
            } else {
                ""
            };
            let _ = write!(t, "<td{cls}>{c}</td>");
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</tbody></table></div>\n");
    t
}

fn opt_text(v: Option<&str>) -> String {
    v.map_or_else(|| "–".to_owned(), esc)
}

/// Binary size: `4 KiB`, `1.5 GiB`.
fn fmt_bytes(b: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < units.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{} {}", charts::sig3(v), units[i])
    }
}

fn fmt_duration_s(s: f64) -> String {
    let whole = s.round() as u64;
    if whole >= 3600 {
        format!(
            "{}h {:02}m {:02}s",
            whole / 3600,
            whole / 60 % 60,
            whole % 60
        )
    } else if whole >= 60 {
        format!("{}m {:02}s", whole / 60, whole % 60)
    } else {
        format!("{} s", charts::sig3(s))
    }
}

fn fmt_pct(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn rate_text(p: &StepParams) -> String {
    match p.rate_iops {
        Some(r) => format!("{} IOPS", fmt_iops(r)),
        None => "max".to_owned(),
    }
}

/// `4k, read 70 %, random 100 %, qd 8, 4 threads, rate max`.
pub fn params_text(p: &StepParams) -> String {
    format!(
        "{}, read {} %, random {} %, qd {}, {} thread{}, rate {}",
        p.bs,
        fmt_pct(p.read_pct),
        fmt_pct(p.random_pct),
        p.qd,
        p.threads,
        if p.threads == 1 { "" } else { "s" },
        rate_text(p)
    )
}

fn status_span(status: &str) -> String {
    format!("<span class=\"status-{0}\">{0}</span>", esc(status))
}

// ---------------------------------------------------------------- report

/// The report of one run.
pub fn render_report(r: &RunReport) -> Rendered {
    let mut page = Page::new();
    let run = &r.run.run;
    let title = format!("iorig report: run {}", run.id);
    let _ = writeln!(
        page.body,
        "<header><h1>{}</h1><p class=\"sub\">{} · {} · {} · started {}</p></header>",
        esc(&title),
        esc(run.kind.as_str()),
        status_span(run.status.as_str()),
        esc(&run.host),
        esc(&run.started)
    );

    let detailed: Vec<&StepReport> = r
        .steps
        .iter()
        .filter(|s| s.has_results())
        .take(MAX_STEP_DETAILS)
        .collect();
    let scaling = scaling_groups(&r.steps);
    let heatmaps = heatmap_groups(&r.steps);
    let mut nav = vec![("run", "Run"), ("findings", "Findings"), ("steps", "Steps")];
    if !r.curves.is_empty() {
        nav.push(("curves", "Curves"));
    }
    if !scaling.is_empty() {
        nav.push(("scaling", "Scaling"));
    }
    if !heatmaps.is_empty() {
        nav.push(("heatmaps", "Heatmaps"));
    }
    if !detailed.is_empty() {
        nav.push(("details", "Step details"));
    }
    page.push("<nav>");
    for (id, name) in &nav {
        let _ = write!(page.body, "<a href=\"#{id}\">{name}</a>");
    }
    page.push("</nav>\n");

    run_section(&mut page, r);
    findings_section(&mut page, r);
    steps_section(&mut page, r);

    if !r.curves.is_empty() {
        page.push("<section id=\"curves\"><h2>IOPS–latency curves</h2>\n");
        for c in &r.curves {
            curve_section(&mut page, r, c);
        }
        page.push("</section>\n");
    }

    if !scaling.is_empty() {
        page.push("<section id=\"scaling\"><h2>Scaling</h2>\n");
        for (i, g) in scaling.iter().take(MAX_SCALING_CHARTS).enumerate() {
            let title = format!("Scaling with {}: {}", g.axis.name(), g.fixed);
            let lines: Vec<ScalingLine> = g
                .lines
                .iter()
                .map(|(bs, pts)| ScalingLine {
                    label: bs.label.clone(),
                    points: pts.clone(),
                })
                .collect();
            page.chart(
                &format!("scaling-{}-{}", g.axis.name(), i + 1),
                &title,
                charts::scaling_chart(&title, g.axis.desc(), &lines),
            );
        }
        if scaling.len() > MAX_SCALING_CHARTS {
            let _ = writeln!(
                page.body,
                "<p class=\"note\">{} more scaling charts left out.</p>",
                scaling.len() - MAX_SCALING_CHARTS
            );
        }
        page.push("</section>\n");
    }

    if !heatmaps.is_empty() {
        page.push("<section id=\"heatmaps\"><h2>Heatmaps: read % × block size</h2>\n");
        for (i, h) in heatmaps.iter().take(MAX_HEATMAPS).enumerate() {
            for (kind, what, high_is_good) in [
                (HeatValue::Iops, "IOPS", true),
                (HeatValue::LatencyNs, "p99 latency", false),
            ] {
                let title = format!("{what}: {}", h.fixed);
                let values = h
                    .cells
                    .iter()
                    .map(|row| {
                        row.iter()
                            .map(|c| {
                                c.map(|(iops, p99)| match kind {
                                    HeatValue::Iops => iops,
                                    HeatValue::LatencyNs => p99,
                                })
                            })
                            .collect()
                    })
                    .collect();
                let map = Heatmap {
                    title: title.clone(),
                    x_desc: "block size".to_owned(),
                    x_cats: h.bs.iter().map(|b| b.label.clone()).collect(),
                    y_desc: "read %".to_owned(),
                    y_cats: h.reads.iter().map(|r| fmt_pct(*r)).collect(),
                    values,
                    high_is_good,
                    kind,
                };
                let stem = match kind {
                    HeatValue::Iops => format!("heatmap-{}-iops", i + 1),
                    HeatValue::LatencyNs => format!("heatmap-{}-p99", i + 1),
                };
                page.chart(&stem, &title, charts::heatmap_chart(&map));
            }
        }
        page.push("</section>\n");
    }

    if !detailed.is_empty() {
        page.push("<section id=\"details\"><h2>Step details</h2>\n");
        let with_results = r.steps.iter().filter(|s| s.has_results()).count();
        if with_results > detailed.len() {
            let _ = writeln!(
                page.body,
                "<p class=\"note\">Charts of the first {} of {} steps with results; the step table lists all.</p>",
                detailed.len(),
                with_results
            );
        }
        for s in detailed {
            step_detail(&mut page, s);
        }
        page.push("</section>\n");
    }
    let _ = writeln!(
        page.body,
        "<footer>Made by iorig {} from the result store.</footer>",
        esc(&run.tool_version)
    );
    page.finish(&title)
}

fn run_section(page: &mut Page, r: &RunReport) {
    let run = &r.run.run;
    page.push("<section id=\"run\"><h2>Run</h2>\n");
    let mut rows = vec![
        ("id", esc(&run.id.to_string())),
        ("kind", esc(run.kind.as_str())),
        ("status", status_span(run.status.as_str())),
        ("host", esc(&run.host)),
        ("tool version", esc(&run.tool_version)),
        (
            "command line",
            format!("<code>{}</code>", esc(&r.run.command_line)),
        ),
        ("started", esc(&run.started)),
        (
            "ended",
            run.ended
                .as_deref()
                .map(esc)
                .unwrap_or_else(|| "–".to_owned()),
        ),
        (
            "duration",
            r.duration_s()
                .map(fmt_duration_s)
                .unwrap_or_else(|| "–".to_owned()),
        ),
    ];
    if !run.labels.is_empty() {
        let labels = run
            .labels
            .iter()
            .map(|(k, v)| format!("{}={}", esc(k), esc(v)))
            .collect::<Vec<_>>()
            .join(", ");
        rows.push(("labels", labels));
    }
    page.push(&facts_table(&rows));

    page.push("<h3>System</h3>\n");
    match &r.system {
        Some(sys) => {
            let mem = sys
                .mem_total_bytes
                .map(fmt_bytes)
                .unwrap_or_else(|| "–".to_owned());
            page.push(&facts_table(&[
                ("hostname", opt_text(sys.hostname.as_deref())),
                ("OS", opt_text(sys.os.as_deref())),
                ("kernel", opt_text(sys.kernel.as_deref())),
                ("CPU", opt_text(sys.cpu_model.as_deref())),
                (
                    "CPUs",
                    opt_text(sys.cpu_count.map(|n| n.to_string()).as_deref()),
                ),
                ("memory", mem),
            ]));
        }
        None => page.push("<p class=\"note\">No system facts recorded.</p>\n"),
    }

    page.push("<h3>Targets</h3>\n");
    if r.targets.is_empty() {
        page.push("<p class=\"note\">No targets recorded (the null engine uses none).</p>\n");
    } else {
        let rows: Vec<Vec<String>> = r
            .targets
            .iter()
            .map(|t| {
                let j = &t.facts;
                let blocks = match (j.logical_block_bytes, j.physical_block_bytes) {
                    (Some(l), Some(p)) => format!("{l} / {p}"),
                    _ => "–".to_owned(),
                };
                vec![
                    format!("<code>{}</code>", esc(&t.path)),
                    t.kind.as_deref().map(esc).unwrap_or_else(|| "–".to_owned()),
                    t.size_bytes
                        .map(fmt_bytes)
                        .unwrap_or_else(|| "–".to_owned()),
                    opt_text(j.device.as_deref()),
                    opt_text(j.model.as_deref()),
                    opt_text(j.rotational.map(|r| if r { "yes" } else { "no" })),
                    opt_text(j.scheduler.as_deref()),
                    blocks,
                    opt_text(j.filesystem.as_deref()),
                ]
            })
            .collect();
        page.push(&table(
            "targets",
            &[
                "path",
                "kind",
                "size",
                "device",
                "model",
                "rotational",
                "scheduler",
                "logical / physical block (B)",
                "filesystem",
            ],
            &rows,
            0..0,
        ));
    }
    page.push("</section>\n");
}

/// One line per thing worth a reader's attention.
fn findings_section(page: &mut Page, r: &RunReport) {
    let mut items: Vec<String> = Vec::new();
    for c in &r.curves {
        items.push(curve_sentence(c));
    }
    for s in &r.steps {
        let f = &s.findings;
        let who = format!("Step {} ({})", s.index, esc(&s.name));
        if let Some(g) = f.generator_bound.as_ref().filter(|g| g.generator_bound) {
            items.push(format!(
                "<span class=\"warn\">{who}: generator-bound</span> (in-flight ratio {:.2}){}",
                g.in_flight_ratio,
                g.message
                    .as_deref()
                    .map(|m| format!(": {}", esc(m)))
                    .unwrap_or_default()
            ));
        }
        if let Some(r) = f.rate.as_ref().filter(|r| !r.met) {
            items.push(format!(
                "<span class=\"warn\">{who}: rate not met</span>: {} of {} IOPS requested ({:+.1} %); its latency is for that load",
                fmt_iops(r.achieved_iops),
                fmt_iops(r.requested_iops),
                r.error_pct
            ));
        }
        if let Some(o) = f.outages.as_ref().filter(|o| !o.spans_s.is_empty()) {
            items.push(format!(
                "<span class=\"warn\">{who}: {} outage(s)</span>, {} s in total, longest {} s",
                o.spans_s.len(),
                charts::sig3(o.total_outage_s),
                charts::sig3(o.longest_outage_s)
            ));
        }
        if let Some(Some(c)) = &f.write_cliff {
            items.push(format!(
                "<span class=\"warn\">{who}: write cliff</span> at {} s: {} → {} IOPS ({:.0} % lower)",
                charts::sig3(c.onset_t_s),
                fmt_iops(c.level_before_iops),
                fmt_iops(c.level_after_iops),
                c.drop_pct
            ));
        }
        // Reached steady states are counted below; only misses are news.
        if let Some(ss) = f.steady_state.as_ref().filter(|ss| !ss.reached) {
            items.push(format!("{who}: {}", steady_text(ss)));
        }
        if let Some(s_) = s.summary.filter(|s_| s_.errors > 0) {
            items.push(format!(
                "<span class=\"warn\">{who}: {} I/O error(s)</span>",
                s_.errors
            ));
        }
    }
    let judged = r
        .steps
        .iter()
        .filter(|s| s.findings.steady_state.is_some())
        .count();
    if judged > 0 {
        let reached = r
            .steps
            .iter()
            .filter(|s| {
                s.findings
                    .steady_state
                    .as_ref()
                    .is_some_and(|ss| ss.reached)
            })
            .count();
        items.push(format!(
            "Steady state reached in {reached} of {judged} step(s) measured in rounds."
        ));
    }
    for a in &r.plan_findings {
        items.push(format!(
            "{}: <code>{}</code>",
            esc(a.finding.kind().as_str()),
            esc(&a.finding.body_json().unwrap_or_default())
        ));
    }
    let done = r.steps.iter().filter(|s| s.has_results()).count();
    page.push("<section id=\"findings\"><h2>Findings</h2>\n");
    let _ = writeln!(
        page.body,
        "<p>{} step(s), {} with results.</p>",
        r.steps.len(),
        done
    );
    if items.is_empty() {
        page.push("<p class=\"note\">Nothing notable: no outages, write cliffs or generator limits found.</p>\n");
    } else {
        // A big matrix can have thousands of notes; the step table has them all.
        const MAX_ITEMS: usize = 200;
        page.push("<ul class=\"findings\">\n");
        for i in items.iter().take(MAX_ITEMS) {
            let _ = writeln!(page.body, "<li>{i}</li>");
        }
        page.push("</ul>\n");
        if items.len() > MAX_ITEMS {
            let _ = writeln!(
                page.body,
                "<p class=\"note\">{} more in the step table.</p>",
                items.len() - MAX_ITEMS
            );
        }
    }
    page.push("</section>\n");
}

fn steady_text(ss: &crate::model::SteadyState) -> String {
    if ss.reached {
        format!(
            "steady state reached after {} round(s)",
            ss.rounds_needed.unwrap_or(ss.rounds)
        )
    } else {
        format!(
            "<span class=\"warn\">steady state not reached</span> in {} round(s){}",
            ss.rounds,
            ss.reason
                .as_deref()
                .map(|r| format!(": {}", esc(r)))
                .unwrap_or_default()
        )
    }
}

fn curve_sentence(c: &CurveReport) -> String {
    let Some(a) = &c.analysis else {
        return format!("Curve {}: no analysis stored.", c.group + 1);
    };
    // The plan step a point stands for (shown from 1, as the step table).
    let step_no = |i: usize| c.step_indexes.get(i).map(|s| s + 1);
    let step_of = |point: Option<usize>| {
        point
            .and_then(step_no)
            .map(|n| format!(" (step {n})"))
            .unwrap_or_default()
    };
    let best = |v: Option<f64>, point: Option<usize>| {
        v.map(|x| format!("{} IOPS{}", fmt_iops(x), step_of(point)))
            .unwrap_or_else(|| "none (no paced step met its rate within the limit)".to_owned())
    };
    let mut s = format!(
        "Curve {}: max {} IOPS; best with mean latency ≤ {} ms: {}; with p99 ≤ {} ms: {}",
        c.group + 1,
        fmt_iops(a.max_iops),
        charts::axis_num(c.threshold_ms),
        best(a.best_under_mean, a.best_under_mean_point),
        charts::axis_num(c.threshold_ms),
        best(a.best_under_p99, a.best_under_p99_point)
    );
    if !a.off_rate_points.is_empty() {
        let steps: Vec<String> = a
            .off_rate_points
            .iter()
            .filter_map(|&i| step_no(i))
            .map(|n| n.to_string())
            .collect();
        let _ = write!(
            s,
            "; steps off their requested rate by more than 3 % (not counted for the best): {}",
            steps.join(", ")
        );
    }
    if let Some(k) = &a.knee {
        let _ = write!(
            s,
            "; knee at {} IOPS (mean {})",
            fmt_iops(k.iops),
            fmt_lat_ns(k.lat_ns)
        );
    }
    s
}

fn step_notes(s: &StepReport) -> String {
    let f = &s.findings;
    let mut notes: Vec<String> = Vec::new();
    if let Some(why) = &f.skipped_why {
        notes.push(if why.is_empty() {
            "skipped".to_owned()
        } else {
            format!("skipped: {}", esc(why))
        });
    }
    if let Some(g) = f.generator_bound.as_ref().filter(|g| g.generator_bound) {
        notes.push(format!(
            "<span class=\"warn\">generator-bound</span> (ratio {:.2})",
            g.in_flight_ratio
        ));
    }
    if let Some(r) = f.rate.as_ref().filter(|r| !r.met) {
        notes.push(format!(
            "<span class=\"warn\">rate not met</span> ({:+.1} % of {} IOPS)",
            r.error_pct,
            fmt_iops(r.requested_iops)
        ));
    }
    if let Some(o) = f.outages.as_ref().filter(|o| !o.spans_s.is_empty()) {
        notes.push(format!(
            "<span class=\"warn\">{} outage(s)</span>, {} s",
            o.spans_s.len(),
            charts::sig3(o.total_outage_s)
        ));
    }
    if let Some(Some(c)) = &f.write_cliff {
        notes.push(format!(
            "<span class=\"warn\">write cliff</span> at {} s (−{:.0} %)",
            charts::sig3(c.onset_t_s),
            c.drop_pct
        ));
    }
    if let Some(p) = &f.precondition {
        notes.push(format!(
            "precondition: {} written in {} ({} MB/s)",
            fmt_bytes(p.written_bytes),
            fmt_duration_s(p.duration_s),
            fmt_mb_s(p.bw_bytes_per_s)
        ));
    }
    if let Some(v) = &f.validation {
        if v.errors == 0 {
            notes.push(format!(
                "validated: {} block(s) checked, no errors",
                v.blocks_checked
            ));
        } else {
            let kinds: Vec<String> = v
                .errors_by_kind
                .iter()
                .map(|(k, n)| format!("{} {n}", esc(k)))
                .collect();
            notes.push(format!(
                "<span class=\"warn\">{} validation error(s)</span> ({}) in {} block(s) checked",
                v.errors,
                kinds.join(", "),
                v.blocks_checked
            ));
        }
    }
    if let Some(sum) = s.summary.filter(|x| x.errors > 0) {
        notes.push(format!(
            "<span class=\"warn\">{} error(s)</span>",
            sum.errors
        ));
    }
    notes.join("; ")
}

fn steps_section(page: &mut Page, r: &RunReport) {
    page.push("<section id=\"steps\"><h2>Steps</h2>\n");
    if r.steps.is_empty() {
        page.push("<p class=\"note\">No steps recorded.</p>\n</section>\n");
        return;
    }
    let dash = || "–".to_owned();
    let rows: Vec<Vec<String>> = r
        .steps
        .iter()
        .map(|s| {
            let p = &s.params;
            let mut row = vec![
                s.index.to_string(),
                esc(&s.name),
                esc(&s.role.to_string()),
                status_span(s.status.as_str()),
                esc(&p.bs),
                fmt_pct(p.read_pct),
                fmt_pct(p.random_pct),
                p.qd.to_string(),
                p.threads.to_string(),
                esc(&rate_text(p)),
            ];
            match s.summary.filter(|_| s.has_results()) {
                Some(sum) => {
                    let t = &sum.total;
                    row.extend([
                        fmt_iops(t.iops),
                        fmt_mb_s(t.bw_bytes_per_s),
                        fmt_lat_ns(t.lat_ns.mean as f64),
                        fmt_lat_ns(t.lat_ns.p99 as f64),
                        fmt_lat_ns(t.lat_ns.max as f64),
                        format!("{:.0} / {:.0}", sum.cpu_usr_pct, sum.cpu_sys_pct),
                    ]);
                }
                None => row.extend((0..6).map(|_| dash())),
            }
            row.push(match &s.findings.steady_state {
                Some(ss) if ss.reached => {
                    format!("reached ({} rounds)", ss.rounds_needed.unwrap_or(ss.rounds))
                }
                Some(ss) => format!(
                    "<span class=\"warn\">not reached</span> ({} rounds)",
                    ss.rounds
                ),
                None => dash(),
            });
            row.push(step_notes(s));
            row
        })
        .collect();
    page.push(&table("steps wide", &STEP_TABLE_HEAD, &rows, 5..16));
    page.push("</section>\n");
}

/// The step table's header row (kept public for the CLI and tests).
pub const STEP_TABLE_HEAD: [&str; 18] = [
    "#",
    "step",
    "role",
    "status",
    "bs",
    "read %",
    "random %",
    "qd",
    "threads",
    "rate",
    "IOPS",
    "MB/s",
    "mean lat",
    "p99 lat",
    "max lat",
    "CPU usr / sys %",
    "steady state",
    "notes",
];

fn curve_line(label: String, c: &CurveReport) -> CurveLine {
    let a = c.analysis.as_ref();
    CurveLine {
        label,
        points: c.points.clone(),
        best_under_mean: a.and_then(|a| a.best_under_mean),
        best_under_p99: a.and_then(|a| a.best_under_p99),
        knee: a.and_then(|a| a.knee.as_ref()).map(|k| (k.iops, k.lat_ns)),
    }
}

/// The parameters a curve was measured with, from its first step.
fn curve_params(r: &RunReport, c: &CurveReport) -> Option<String> {
    let first = c.step_indexes.first()?;
    let s = r.steps.iter().find(|s| s.index == *first)?;
    // The rate differs from step to step of a curve.
    Some(fixed_text(&s.params, &["rate"]))
}

fn curve_section(page: &mut Page, r: &RunReport, c: &CurveReport) {
    let n = c.group + 1;
    let title = match curve_params(r, c) {
        Some(p) => format!("IOPS–latency curve {n}: {p}"),
        None => format!("IOPS–latency curve {n}"),
    };
    let _ = writeln!(
        page.body,
        "<h3>Curve {n}</h3>\n<p>{}</p>",
        curve_sentence(c)
    );
    page.chart(
        &format!("curve-{n}"),
        &title,
        charts::curve_chart(
            &title,
            c.threshold_ms,
            &[curve_line(format!("curve {n}"), c)],
        ),
    );
    let rows: Vec<Vec<String>> = c
        .points
        .iter()
        .zip(
            c.step_indexes
                .iter()
                .map(Some)
                .chain(std::iter::repeat(None)),
        )
        .map(|(p, idx)| {
            let role = idx
                .and_then(|i| r.steps.iter().find(|s| s.index == *i))
                .map(|s| esc(&s.role.to_string()))
                .unwrap_or_default();
            vec![
                idx.map(i64::to_string).unwrap_or_default(),
                role,
                fmt_iops(p.iops),
                fmt_lat_ns(p.mean_lat_ns),
                fmt_lat_ns(p.p99_lat_ns),
            ]
        })
        .collect();
    page.push(&table(
        "curve",
        &["step", "load", "IOPS", "mean lat", "p99 lat"],
        &rows,
        2..5,
    ));
}

fn time_series_of(s: &StepReport) -> TimeSeries {
    let iv = &s.intervals;
    let pts = |f: &dyn Fn(&crate::model::IntervalPoint) -> f64| -> Vec<(f64, f64)> {
        iv.iter().map(|i| (i.t_s, f(i))).collect()
    };
    let measured_start = s.measured_start_s();
    TimeSeries {
        iops: pts(&|i| i.total.iops),
        bw_bytes_per_s: pts(&|i| i.total.bw_bytes_per_s),
        mean_lat_ns: pts(&|i| i.total.lat_ns.mean as f64),
        p99_lat_ns: pts(&|i| i.total.lat_ns.p99 as f64),
        cpu_usr_pct: pts(&|i| i.cpu_usr_pct),
        cpu_sys_pct: pts(&|i| i.cpu_sys_pct),
        dev_util_pct: iv
            .iter()
            .filter_map(|i| i.dev_util_pct.map(|u| (i.t_s, u)))
            .collect(),
        warmup_end_s: (measured_start > 0.0).then_some(measured_start),
        steady_window_s: s.findings.steady_state.as_ref().and_then(|ss| ss.window_s),
        cliff_onset_s: s
            .findings
            .write_cliff
            .as_ref()
            .and_then(|c| c.as_ref().map(|c| c.onset_t_s)),
        outages_s: s
            .findings
            .outages
            .as_ref()
            .map(|o| o.spans_s.clone())
            .unwrap_or_default(),
    }
}

fn step_detail(page: &mut Page, s: &StepReport) {
    let _ = writeln!(
        page.body,
        "<h3 id=\"step-{0}\">Step {0}: {1}</h3>\n<p class=\"sub\">{2} · {3} · {4}</p>",
        s.index,
        esc(&s.name),
        esc(&s.role.to_string()),
        status_span(s.status.as_str()),
        esc(&params_text(&s.params))
    );
    if let Some(sum) = &s.summary {
        let rows: Vec<Vec<String>> = [
            ("read", &sum.read),
            ("write", &sum.write),
            ("total", &sum.total),
        ]
        .into_iter()
        .filter(|(name, o)| o.ops > 0 || *name == "total")
        .map(|(name, o)| {
            let l = &o.lat_ns;
            vec![
                name.to_owned(),
                fmt_iops(o.iops),
                fmt_mb_s(o.bw_bytes_per_s),
                fmt_lat_ns(l.min as f64),
                fmt_lat_ns(l.mean as f64),
                fmt_lat_ns(l.p50 as f64),
                fmt_lat_ns(l.p99 as f64),
                fmt_lat_ns(l.p99_9 as f64),
                fmt_lat_ns(l.max as f64),
            ]
        })
        .collect();
        page.push(&table(
            "ops",
            &[
                "op", "IOPS", "MB/s", "min", "mean", "p50", "p99", "p99.9", "max",
            ],
            &rows,
            1..9,
        ));
    }
    let stem = format!("step-{:04}", s.index);
    if !s.intervals.is_empty() {
        let title = format!("Step {} over time: {}", s.index, s.name);
        page.chart(
            &format!("{stem}-timeseries"),
            &title,
            charts::time_series_chart(&title, &time_series_of(s)),
        );
    }
    if !s.percentiles.is_empty() {
        let title = format!("Step {} latency percentiles: {}", s.index, s.name);
        let lines: Vec<PercentileLine> = s
            .percentiles
            .iter()
            .map(|p| PercentileLine {
                label: p.label.clone(),
                points: p.points.clone(),
            })
            .collect();
        page.chart(
            &format!("{stem}-percentiles"),
            &title,
            charts::percentile_chart(&title, &lines),
        );
    }
}

// ---------------------------------------------------------------- grouping

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Axis {
    Threads,
    Qd,
}

impl Axis {
    fn name(self) -> &'static str {
        match self {
            Axis::Threads => "threads",
            Axis::Qd => "qd",
        }
    }

    fn desc(self) -> &'static str {
        match self {
            Axis::Threads => "threads (workers)",
            Axis::Qd => "queue depth per worker",
        }
    }

    fn of(self, p: &StepParams) -> u32 {
        match self {
            Axis::Threads => p.threads,
            Axis::Qd => p.qd,
        }
    }
}

/// A block size for ordering: by bytes when single, else by text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct BsKey {
    bytes: u64,
    label: String,
}

impl BsKey {
    fn of(p: &StepParams) -> BsKey {
        BsKey {
            bytes: p.bs_bytes.unwrap_or(u64::MAX),
            label: p.bs.clone(),
        }
    }
}

/// The steps that take part in scaling and heatmaps: measured, with
/// results, not a curve's rate steps (their rate differs by design) nor a
/// precondition.
fn comparable(s: &StepReport) -> bool {
    s.has_results()
        && !matches!(
            s.role,
            StepRole::CurveMax | StepRole::CurveRate { .. } | StepRole::Precondition
        )
}

/// Text of the parameters that are neither the chart's axes nor its lines.
fn fixed_text(p: &StepParams, leave_out: &[&str]) -> String {
    let mut parts = Vec::new();
    let mut add = |name: &str, text: String| {
        if !leave_out.contains(&name) {
            parts.push(text);
        }
    };
    add("bs", format!("bs {}", p.bs));
    add("read", format!("read {} %", fmt_pct(p.read_pct)));
    add("random", format!("random {} %", fmt_pct(p.random_pct)));
    add("qd", format!("qd {}", p.qd));
    add(
        "threads",
        format!(
            "{} thread{}",
            p.threads,
            if p.threads == 1 { "" } else { "s" }
        ),
    );
    add("rate", format!("rate {}", rate_text(p)));
    parts.join(", ")
}

/// What groups steps for a chart: the shown parameters plus the engine
/// (steps of different engines do not belong on one line, but naming the
/// engine in every title would be noise).
fn group_key(p: &StepParams, leave_out: &[&str]) -> String {
    format!("{}\u{1f}{}", fixed_text(p, leave_out), p.engine)
}

/// The shown part of a [`group_key`].
fn shown(key: &str) -> String {
    key.split('\u{1f}').next().unwrap_or_default().to_owned()
}

struct ScalingGroup {
    axis: Axis,
    /// The parameters shared by every line (title and grouping key).
    fixed: String,
    lines: Vec<(BsKey, Vec<ScalingPoint>)>,
}

fn point_of(s: &StepReport, axis: Axis) -> Option<ScalingPoint> {
    let t = s.summary?.total;
    Some(ScalingPoint {
        x: axis.of(&s.params),
        iops: t.iops,
        bw_bytes_per_s: t.bw_bytes_per_s,
        mean_lat_ns: t.lat_ns.mean as f64,
        p99_lat_ns: t.lat_ns.p99 as f64,
    })
}

/// Steps that differ only in threads (or qd) and block size: one group per
/// combination of the other parameters, one line per block size with at
/// least two points.
fn scaling_groups(steps: &[StepReport]) -> Vec<ScalingGroup> {
    let mut out = Vec::new();
    for axis in [Axis::Threads, Axis::Qd] {
        let mut groups: BTreeMap<String, BTreeMap<BsKey, BTreeMap<u32, ScalingPoint>>> =
            BTreeMap::new();
        for s in steps.iter().filter(|s| comparable(s)) {
            let Some(pt) = point_of(s, axis) else {
                continue;
            };
            let fixed = group_key(&s.params, &["bs", axis.name()]);
            // The first step at a point wins; repeats do not make a line.
            groups
                .entry(fixed)
                .or_default()
                .entry(BsKey::of(&s.params))
                .or_default()
                .entry(pt.x)
                .or_insert(pt);
        }
        for (fixed, lines) in groups {
            let lines: Vec<(BsKey, Vec<ScalingPoint>)> = lines
                .into_iter()
                .filter(|(_, pts)| pts.len() >= 2)
                .map(|(bs, pts)| (bs, pts.into_values().collect()))
                .collect();
            if !lines.is_empty() {
                let fixed = shown(&fixed);
                out.push(ScalingGroup { axis, fixed, lines });
            }
        }
    }
    out
}

struct HeatGroup {
    fixed: String,
    reads: Vec<f64>,
    bs: Vec<BsKey>,
    /// `cells[read][bs]` = (IOPS, p99 ns).
    cells: Vec<Vec<Option<(f64, f64)>>>,
}

/// Steps forming a read % × block size grid (at least 2 × 2) with every
/// other parameter equal: one group per thread count, qd, random %, rate.
fn heatmap_groups(steps: &[StepReport]) -> Vec<HeatGroup> {
    // Read percentages as integer per-mille so they can be map keys.
    // Per group: (read per mille, block size) → (IOPS, p99 ns).
    type Cells = BTreeMap<(i64, BsKey), (f64, f64)>;
    let mut groups: BTreeMap<String, Cells> = BTreeMap::new();
    for s in steps.iter().filter(|s| comparable(s)) {
        let Some(sum) = s.summary else { continue };
        let fixed = group_key(&s.params, &["bs", "read"]);
        let read_key = (s.params.read_pct * 10.0).round() as i64;
        groups
            .entry(fixed)
            .or_default()
            .entry((read_key, BsKey::of(&s.params)))
            .or_insert((sum.total.iops, sum.total.lat_ns.p99 as f64));
    }
    let mut out = Vec::new();
    for (fixed, cells) in groups {
        let mut reads: Vec<i64> = cells.keys().map(|k| k.0).collect();
        reads.sort_unstable();
        reads.dedup();
        let mut bs: Vec<BsKey> = cells.keys().map(|k| k.1.clone()).collect();
        bs.sort();
        bs.dedup();
        if reads.len() < 2 || bs.len() < 2 {
            continue;
        }
        let grid = reads
            .iter()
            .map(|r| {
                bs.iter()
                    .map(|b| cells.get(&(*r, b.clone())).copied())
                    .collect()
            })
            .collect();
        out.push(HeatGroup {
            fixed: shown(&fixed),
            reads: reads.iter().map(|r| *r as f64 / 10.0).collect(),
            bs,
            cells: grid,
        });
    }
    out
}

// ---------------------------------------------------------------- compare

/// What identifies "the same step" across runs: the workload's shape, not
/// its seed or duration. Curve steps match by their role (`curve-50%`),
/// since their absolute rate follows each run's own maximum.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StepKey {
    pub bs: String,
    /// Per mille, so the key can be compared exactly.
    pub read_permille: i64,
    pub random_permille: i64,
    pub qd: u32,
    pub threads: u32,
    /// `max`, `5000 IOPS`, or the curve role.
    pub rate: String,
    /// Which repetition of the same shape in its run (0 for the first).
    pub occurrence: u32,
}

impl StepKey {
    fn of(s: &StepReport) -> StepKey {
        let p = &s.params;
        let rate = if matches!(s.role, StepRole::CurveMax | StepRole::CurveRate { .. }) {
            s.role.to_string()
        } else {
            rate_text(p)
        };
        StepKey {
            bs: p.bs.clone(),
            read_permille: (p.read_pct * 10.0).round() as i64,
            random_permille: (p.random_pct * 10.0).round() as i64,
            qd: p.qd,
            threads: p.threads,
            rate,
            occurrence: 0,
        }
    }

    /// `4k read 70% random 100% qd 8 t4 max`.
    pub fn label(&self) -> String {
        let mut s = format!(
            "{} read {}% random {}% qd {} t{} {}",
            self.bs,
            fmt_pct(self.read_permille as f64 / 10.0),
            fmt_pct(self.random_permille as f64 / 10.0),
            self.qd,
            self.threads,
            self.rate
        );
        if self.occurrence > 0 {
            let _ = write!(s, " #{}", self.occurrence + 1);
        }
        s
    }
}

/// The figures of one step of one run in a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct StepMetrics {
    pub step_index: i64,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub mean_lat_ns: f64,
    pub p99_lat_ns: f64,
    /// Against the first run; `None` for the first run itself or when the
    /// first run lacks the step.
    pub change: Option<Changes>,
}

/// Percentage changes against the first run (`None` when its figure is 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Changes {
    pub iops_pct: Option<f64>,
    pub bw_pct: Option<f64>,
    pub mean_lat_pct: Option<f64>,
    pub p99_lat_pct: Option<f64>,
}

/// One matched step: its figures in each run (`None` where a run lacks it).
#[derive(Clone, Debug, PartialEq)]
pub struct ComparedStep {
    pub key: StepKey,
    pub per_run: Vec<Option<StepMetrics>>,
}

/// Steps matched across runs, in the first run's order (steps only other
/// runs have follow).
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub runs: Vec<RunId>,
    pub steps: Vec<ComparedStep>,
}

fn pct_change(base: f64, v: f64) -> Option<f64> {
    (base.abs() > 0.0 && base.is_finite() && v.is_finite()).then(|| (v - base) / base * 100.0)
}

fn fmt_change(c: Option<f64>) -> String {
    match c {
        Some(v) => format!("{v:+.1}%"),
        None => String::new(),
    }
}

impl Comparison {
    /// Matches the steps with results of `runs` by [`StepKey`].
    pub fn of(runs: &[RunReport]) -> Comparison {
        let mut order: Vec<StepKey> = Vec::new();
        let mut found: BTreeMap<StepKey, Vec<Option<StepMetrics>>> = BTreeMap::new();
        for (ri, r) in runs.iter().enumerate() {
            let mut seen: BTreeMap<StepKey, u32> = BTreeMap::new();
            for s in r.steps.iter().filter(|s| s.has_results()) {
                let Some(sum) = s.summary else { continue };
                let mut key = StepKey::of(s);
                let n = seen.entry(key.clone()).or_insert(0);
                key.occurrence = *n;
                *n += 1;
                let slot = found.entry(key.clone()).or_insert_with(|| {
                    order.push(key.clone());
                    vec![None; runs.len()]
                });
                slot[ri] = Some(StepMetrics {
                    step_index: s.index,
                    iops: sum.total.iops,
                    bw_bytes_per_s: sum.total.bw_bytes_per_s,
                    mean_lat_ns: sum.total.lat_ns.mean as f64,
                    p99_lat_ns: sum.total.lat_ns.p99 as f64,
                    change: None,
                });
            }
        }
        let steps = order
            .into_iter()
            .map(|key| {
                let mut per_run = found.remove(&key).unwrap_or_default();
                let base = per_run.first().cloned().flatten();
                if let Some(b) = base {
                    for m in per_run.iter_mut().skip(1).flatten() {
                        m.change = Some(Changes {
                            iops_pct: pct_change(b.iops, m.iops),
                            bw_pct: pct_change(b.bw_bytes_per_s, m.bw_bytes_per_s),
                            mean_lat_pct: pct_change(b.mean_lat_ns, m.mean_lat_ns),
                            p99_lat_pct: pct_change(b.p99_lat_ns, m.p99_lat_ns),
                        });
                    }
                }
                ComparedStep { key, per_run }
            })
            .collect();
        Comparison {
            runs: runs.iter().map(RunReport::id).collect(),
            steps,
        }
    }

    /// A plain-text table for a terminal: one line per step and run, the
    /// change against the first run beside each figure.
    pub fn table_lines(&self) -> Vec<String> {
        let width = self
            .steps
            .iter()
            .map(|s| s.key.label().chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = vec![format!(
            "{:<width$}  {:>6}  {:>11} {:>8}  {:>9} {:>8}  {:>10} {:>8}  {:>10} {:>8}",
            "step", "run", "IOPS", "Δ", "MB/s", "Δ", "mean lat", "Δ", "p99 lat", "Δ"
        )];
        for s in &self.steps {
            let label = s.key.label();
            for (i, (run, m)) in self.runs.iter().zip(&s.per_run).enumerate() {
                let name = if i == 0 { label.as_str() } else { "" };
                let line = match m {
                    Some(m) => {
                        let c = m.change;
                        format!(
                            "{:<width$}  {:>6}  {:>11} {:>8}  {:>9} {:>8}  {:>10} {:>8}  {:>10} {:>8}",
                            name,
                            run.0,
                            fmt_iops(m.iops),
                            fmt_change(c.and_then(|c| c.iops_pct)),
                            fmt_mb_s(m.bw_bytes_per_s),
                            fmt_change(c.and_then(|c| c.bw_pct)),
                            fmt_lat_ns(m.mean_lat_ns),
                            fmt_change(c.and_then(|c| c.mean_lat_pct)),
                            fmt_lat_ns(m.p99_lat_ns),
                            fmt_change(c.and_then(|c| c.p99_lat_pct)),
                        )
                    }
                    None => format!("{:<width$}  {:>6}  {:>11}", name, run.0, "–"),
                };
                out.push(line.trim_end().to_owned());
            }
        }
        out
    }
}

/// A change cell coloured by whether it is better (`up`) or worse.
fn change_cell(c: Option<f64>, higher_is_better: bool) -> String {
    match c {
        Some(v) if v.abs() >= 0.05 => {
            let good = (v > 0.0) == higher_is_better;
            format!(
                "<span class=\"{}\">{v:+.1} %</span>",
                if good { "up" } else { "down" }
            )
        }
        Some(v) => format!("{v:+.1} %"),
        None => String::new(),
    }
}

/// The comparison page of several runs (the first is the baseline) and
/// the matched figures behind it.
pub fn render_compare(runs: &[RunReport]) -> (Rendered, Comparison) {
    let cmp = Comparison::of(runs);
    let mut page = Page::new();
    let ids: Vec<String> = runs.iter().map(|r| r.id().to_string()).collect();
    let title = format!("iorig comparison: runs {}", ids.join(", "));
    let _ = writeln!(
        page.body,
        "<header><h1>{}</h1><p class=\"sub\">Changes are against run {}.</p></header>",
        esc(&title),
        ids.first().map(String::as_str).unwrap_or("–")
    );
    page.push("<nav><a href=\"#runs\">Runs</a><a href=\"#compared\">Steps compared</a><a href=\"#compare-charts\">Charts</a></nav>\n");

    page.push("<section id=\"runs\"><h2>Runs</h2>\n");
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let run = &r.run.run;
            vec![
                run.id.to_string(),
                esc(run.kind.as_str()),
                status_span(run.status.as_str()),
                esc(&run.host),
                esc(&run.started),
                esc(&run.tool_version),
                r.steps.len().to_string(),
                esc(&run
                    .labels
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(", ")),
            ]
        })
        .collect();
    page.push(&table(
        "runs",
        &[
            "run", "kind", "status", "host", "started", "version", "steps", "labels",
        ],
        &rows,
        6..7,
    ));
    page.push("</section>\n");

    page.push("<section id=\"compared\"><h2>Steps compared</h2>\n");
    if cmp.steps.is_empty() {
        page.push("<p class=\"note\">No step with results in these runs.</p>\n");
    } else {
        let mut rows = Vec::new();
        for s in &cmp.steps {
            for (i, (run, m)) in cmp.runs.iter().zip(&s.per_run).enumerate() {
                let name = if i == 0 {
                    esc(&s.key.label())
                } else {
                    String::new()
                };
                let mut row = vec![name, run.0.to_string()];
                match m {
                    Some(m) => {
                        let c = m.change;
                        row.extend([
                            fmt_iops(m.iops),
                            change_cell(c.and_then(|c| c.iops_pct), true),
                            fmt_mb_s(m.bw_bytes_per_s),
                            change_cell(c.and_then(|c| c.bw_pct), true),
                            fmt_lat_ns(m.mean_lat_ns),
                            change_cell(c.and_then(|c| c.mean_lat_pct), false),
                            fmt_lat_ns(m.p99_lat_ns),
                            change_cell(c.and_then(|c| c.p99_lat_pct), false),
                        ]);
                    }
                    None => row.extend((0..8).map(|i| {
                        if i == 0 {
                            "<span class=\"muted\">not run</span>".to_owned()
                        } else {
                            String::new()
                        }
                    })),
                }
                rows.push(row);
            }
        }
        page.push(&table("compare wide", &COMPARE_TABLE_HEAD, &rows, 2..10));
    }
    page.push("</section>\n");

    page.push("<section id=\"compare-charts\"><h2>Charts</h2>\n");
    let run_label = |r: &RunReport| format!("run {}", r.id());
    // Curves: the n-th curve of each run.
    let max_curves = runs.iter().map(|r| r.curves.len()).max().unwrap_or(0);
    for ci in 0..max_curves {
        let lines: Vec<CurveLine> = runs
            .iter()
            .filter_map(|r| r.curves.get(ci).map(|c| curve_line(run_label(r), c)))
            .collect();
        let threshold_ms = runs
            .iter()
            .find_map(|r| r.curves.get(ci).map(|c| c.threshold_ms))
            .unwrap_or(1.0);
        let title = format!("IOPS–latency curve {} by run", ci + 1);
        page.chart(
            &format!("compare-curve-{}", ci + 1),
            &title,
            charts::curve_chart(&title, threshold_ms, &lines),
        );
    }
    // Scaling: one chart per (axis, fixed parameters, block size), a line per run.
    let mut scaling: BTreeMap<(Axis, String, BsKey), Vec<ScalingLine>> = BTreeMap::new();
    for r in runs {
        for g in scaling_groups(&r.steps) {
            for (bs, pts) in g.lines {
                scaling
                    .entry((g.axis, g.fixed.clone(), bs))
                    .or_default()
                    .push(ScalingLine {
                        label: run_label(r),
                        points: pts,
                    });
            }
        }
    }
    for (i, ((axis, fixed, bs), lines)) in scaling.iter().take(MAX_SCALING_CHARTS).enumerate() {
        let title = format!(
            "Scaling with {} by run: bs {}, {fixed}",
            axis.name(),
            bs.label
        );
        page.chart(
            &format!("compare-scaling-{}-{}", axis.name(), i + 1),
            &title,
            charts::scaling_chart(&title, axis.desc(), lines),
        );
    }
    // Percentiles of matched steps, a line per run.
    let mut drawn = 0;
    for s in &cmp.steps {
        if drawn >= MAX_STEP_DETAILS {
            break;
        }
        let lines: Vec<PercentileLine> = runs
            .iter()
            .zip(&s.per_run)
            .filter_map(|(r, m)| {
                let m = m.as_ref()?;
                let step = r.steps.iter().find(|x| x.index == m.step_index)?;
                let p = step.percentiles.first()?;
                Some(PercentileLine {
                    label: run_label(r),
                    points: p.points.clone(),
                })
            })
            .collect();
        if lines.len() < 2 {
            continue;
        }
        drawn += 1;
        let title = format!("Latency percentiles by run: {}", s.key.label());
        page.chart(
            &format!("compare-percentiles-{drawn}"),
            &title,
            charts::percentile_chart(&title, &lines),
        );
    }
    if page.charts.is_empty() {
        page.push("<p class=\"note\">No charts: the runs share no curve, scaling series or step with latency histograms.</p>\n");
    }
    page.push("</section>\n");
    page.push("<footer>Made by iorig from the result store.</footer>\n");
    (page.finish(&title), cmp)
}

/// The comparison table's header row.
pub const COMPARE_TABLE_HEAD: [&str; 10] = [
    "step", "run", "IOPS", "Δ IOPS", "MB/s", "Δ MB/s", "mean lat", "Δ mean", "p99 lat", "Δ p99",
];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use iorig_stats::analysis::{analyze_curve, CurvePoint};

    fn point(iops: f64, mean_ms: f64, requested: Option<f64>) -> CurvePoint {
        CurvePoint {
            iops,
            mean_lat_ns: mean_ms * 1e6,
            p99_lat_ns: 2.0 * mean_ms * 1e6,
            requested_iops: requested,
        }
    }

    #[test]
    fn the_curve_sentence_names_the_best_step_and_the_off_rate_ones() {
        // Plan steps 1 (max, uncontrolled), 2..4 paced; step 4 fell short.
        let points = vec![
            point(192_000.0, 0.6, None),
            point(96_000.0, 0.4, Some(96_000.0)),
            point(134_000.0, 3.4, Some(134_400.0)),
            point(138_000.0, 85.6, Some(153_600.0)),
        ];
        let c = CurveReport {
            group: 0,
            threshold_ms: 1.0,
            step_indexes: vec![0, 1, 2, 3],
            analysis: Some(analyze_curve(&points, 1e6, 2.0)),
            points,
        };
        let s = curve_sentence(&c);
        assert!(s.contains("(step 2)"), "{s}");
        assert!(s.contains("not counted for the best): 4"), "{s}");
        assert!(
            s.contains("best with mean latency ≤ 1 ms: 103,600 IOPS (step 2)"),
            "the best lies between the paced steps 2 and 3, not at the uncontrolled max: {s}"
        );
    }
}
