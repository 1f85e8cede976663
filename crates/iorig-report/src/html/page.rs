//! The page frame shared by the report and the comparison: the HTML
//! skeleton with its CSS (and the [`Frame`] a caller such as iorig serve
//! puts around a page), tables, and the formatting of figures. All of it
//! maud templates: text is escaped where it goes in.

use super::*;
use maud::DOCTYPE;

/// Builds a page: its parts in order and the charts placed in them.
pub(super) struct Page {
    parts: Vec<Markup>,
    pub(super) charts: Vec<Chart>,
}

impl Page {
    pub(super) fn new() -> Page {
        Page {
            parts: Vec::new(),
            charts: Vec::new(),
        }
    }

    /// Adds a part at the end of the body.
    pub(super) fn push(&mut self, part: Markup) {
        self.parts.push(part);
    }

    /// A chart's figure (or, when it could not be drawn, a note saying
    /// so) for the caller to place; a drawn chart joins the page's charts,
    /// so they must be asked for in page order.
    pub(super) fn chart(
        &mut self,
        file_stem: &str,
        title: &str,
        svg: Result<String, ReportError>,
    ) -> Markup {
        match svg {
            Ok(svg) => {
                let svg = tag_svg(&svg, file_stem, title);
                // Markup already: plotters wrote the SVG (escaping its
                // text) and tag_svg added the id and title escaped.
                let figure = html! { figure { (PreEscaped(&svg)) } };
                self.charts.push(Chart {
                    file_stem: file_stem.to_owned(),
                    title: title.to_owned(),
                    svg,
                });
                figure
            }
            Err(e) => html! {
                p.note { "Chart “" (title) "” could not be drawn: " (e.to_string()) }
            },
        }
    }

    pub(super) fn finish(self, title: &str) -> Rendered {
        // A line a part (and a table row, see `table`) keeps the page's
        // source readable and its diffs small; browsers ignore it.
        let body = html! { @for part in &self.parts { (part) "\n" } };
        let index_html = document(title, &body, &Frame::default()).into_string();
        Rendered {
            index_html,
            charts: self.charts,
            title: title.to_owned(),
            body,
        }
    }
}

/// What a caller puts around a page besides the page's own content (the
/// plain frame, [`Frame::default`], is the report as written to a file):
/// iorig serve adds its styles and puts its bar on top.
#[derive(Clone, Debug, Default)]
pub struct Frame {
    /// Styles after the page's [`CSS`], in the same `<style>`. A constant:
    /// it goes into the page as it is.
    pub extra_css: &'static str,
    /// A part put first in the body, above the page's own header.
    pub top: Option<Markup>,
}

/// A whole page: `title`, the stylesheet (with the frame's), the frame's
/// top part and `body`.
pub fn document(title: &str, body: &Markup, frame: &Frame) -> Markup {
    html! {
        (DOCTYPE) "\n"
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                // Both constants (`&'static str`): CSS of this crate and
                // of the caller's source, nothing from a run.
                style { (PreEscaped(CSS)) (PreEscaped(frame.extra_css)) }
            }
            "\n"
            body {
                @if let Some(top) = &frame.top {
                    (top) "\n"
                }
                (body)
            }
        }
    }
}

impl Rendered {
    /// The page in `frame` instead of the plain one of `index_html`.
    pub fn framed(&self, frame: &Frame) -> String {
        document(&self.title, &self.body, frame).into_string()
    }
}

/// Gives the SVG root its id, class and an accessible title. The SVG is
/// plotters' text, not a template, so the two go in through maud's
/// escaper.
pub(super) fn tag_svg(svg: &str, id: &str, title: &str) -> String {
    let Some(start) = svg.find("<svg") else {
        return svg.to_owned();
    };
    let Some(end) = svg[start..].find('>').map(|e| start + e) else {
        return svg.to_owned();
    };
    let mut out = String::with_capacity(svg.len() + 128);
    out.push_str(&svg[..start + 4]);
    out.push_str(" id=\"");
    // Writing to a String cannot fail.
    let _ = maud::Escaper::new(&mut out).write_str(id);
    out.push_str("\" class=\"chart\" role=\"img\"");
    out.push_str(&svg[start + 4..=end]);
    out.push('\n');
    out.push_str(&html! { title { (title) } }.into_string());
    out.push_str(&svg[end + 1..]);
    out
}

/// The stylesheet of every page (reports, comparisons, `iorig serve`).
pub const CSS: &str = r#"
:root { --ink:#1d2330; --muted:#5b6474; --line:#d9dde5; --band:#f4f6f9; --accent:#1f77b4; --bad:#c0392b; --good:#1e8449; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--ink); margin: 0 auto; max-width: 1600px; padding: 24px; }
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
table.step-table th { white-space: normal; }
table.step-table tr.notes td { white-space: normal; color: var(--muted); font-size: 12px; padding-top: 0; }
table.step-table tbody tr:first-child:not(:last-child) td { border-bottom: none; }
/* A table wider than the page scrolls inside its box, its first column
   (the report's step table: number and name) kept in view. */
.scroll th:first-child, .scroll td:first-child { position: sticky; left: 0; z-index: 1; background: #fff; }
.scroll th:first-child { background: var(--band); }
.scroll tbody tr:nth-child(even) td:first-child { background: #fafbfc; }
table.step-table th:first-child, table.step-table td:first-child { width: 3em; min-width: 3em; max-width: 3em; }
table.step-table th:nth-child(2), table.step-table td:nth-child(2) { position: sticky; left: 3em; z-index: 1; background: #fff; box-shadow: 1px 0 0 var(--line); }
table.step-table th:nth-child(2) { background: var(--band); }
/* A step's rows are its own tbody: the zebra goes by step, notes and all. */
.scroll table.step-table tbody tr td, .scroll table.step-table tbody tr td:first-child { background: #fff; }
.scroll table.step-table tbody:nth-of-type(even) tr td, .scroll table.step-table tbody:nth-of-type(even) tr td:first-child { background: #fafbfc; }
.scroll table.step-table tr.notes td { position: static; }
.status-ok { color: var(--good); font-weight: 600; }
.status-failed, .status-interrupted, .warn { color: var(--bad); font-weight: 600; }
.status-skipped, .status-pending, .status-running, .muted { color: var(--muted); }
.up { color: var(--good); } .down { color: var(--bad); }
.yellow { color: #b7950b; font-weight: 600; }
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
  .scroll th, .scroll td { position: static !important; }
  a { color: inherit; text-decoration: none; }
}
"#;

/// A table of facts: a name and its value a row.
pub(super) fn facts_table(rows: &[(&str, Markup)]) -> Markup {
    html! {
        table.facts {
            tbody {
                @for (k, v) in rows {
                    tr { th { (k) } td { (v) } }
                }
            }
        }
    }
}

/// A table with a header row, scrolling sideways when wide.
/// `numeric`: the columns set right-aligned.
pub(super) fn table(
    class: &str,
    head: &[&str],
    rows: &[Vec<Markup>],
    numeric: Range<usize>,
) -> Markup {
    let num = |i: usize| numeric.contains(&i).then_some("num");
    html! {
        div.scroll {
            table class=(class) {
                thead {
                    tr { @for (i, h) in head.iter().enumerate() { th class=[num(i)] { (h) } } }
                }
                tbody {
                    @for r in rows {
                        tr { @for (i, c) in r.iter().enumerate() { td class=[num(i)] { (c) } } }
                        "\n"
                    }
                }
            }
        }
    }
}

/// A row of cells that are text.
pub(super) fn text_row<T: Render>(cells: &[T]) -> Vec<Markup> {
    cells.iter().map(Render::render).collect()
}

/// The dash of a figure or fact that is not there.
pub(super) fn dash() -> Markup {
    html! { "–" }
}

pub(super) fn opt_text(v: Option<&str>) -> Markup {
    html! { (v.unwrap_or("–")) }
}

/// Binary size: `4 KiB`, `1.5 GiB`.
pub(super) use iorig_spec::format_bytes as fmt_bytes;

/// Seconds for people, as every iorig output writes a duration
/// ([`iorig_spec::format_duration`]).
pub(super) fn fmt_duration_s(s: f64) -> String {
    // Not a number of seconds (NaN, infinite) is no duration: a dash.
    std::time::Duration::try_from_secs_f64(s)
        .map_or_else(|_| "–".to_owned(), iorig_spec::format_duration)
}

pub(super) fn fmt_pct(v: f64) -> String {
    if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

pub(super) fn rate_text(p: &StepParams) -> String {
    match p.rate_iops {
        Some(r) => format!("{} IOPS", fmt_iops(r)),
        None => "max".to_owned(),
    }
}

/// `4k, read 70 %, random 100 %, qd 8, 4 threads, rate max`.
pub fn params_text(p: &StepParams) -> String {
    format!(
        "{}, read {} %{}, random {} %, qd {}, {} thread{}, rate {}",
        p.bs,
        fmt_pct(p.read_pct),
        if p.trim_pct > 0.0 {
            format!(", trim {} %", fmt_pct(p.trim_pct))
        } else {
            String::new()
        },
        fmt_pct(p.random_pct),
        p.qd,
        p.threads,
        if p.threads == 1 { "" } else { "s" },
        rate_text(p)
    )
}

/// A status word styled by its meaning.
pub fn status_markup(status: &str) -> Markup {
    html! { span class={ "status-" (status) } { (status) } }
}
