//! The page frame shared by the report and the comparison: the HTML
//! skeleton with its CSS, tables, escaping and the formatting of figures.

use super::*;

/// Builds a page: sections of HTML and the charts placed in them.
pub(super) struct Page {
    pub(super) body: String,
    pub(super) charts: Vec<Chart>,
}

impl Page {
    pub(super) fn new() -> Page {
        Page {
            body: String::new(),
            charts: Vec::new(),
        }
    }

    pub(super) fn push(&mut self, html: &str) {
        self.body.push_str(html);
    }

    /// Places a chart (or, when it could not be drawn, a note saying so).
    pub(super) fn chart(&mut self, file_stem: &str, title: &str, svg: Result<String, ReportError>) {
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

    pub(super) fn finish(self, title: &str) -> Rendered {
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
pub(super) fn tag_svg(svg: &str, id: &str, title: &str) -> String {
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

/// The stylesheet of every page (reports, comparisons, `iorig serve`).
pub const CSS: &str = r#"
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
  a { color: inherit; text-decoration: none; }
}
"#;

/// Text escaped for HTML content and attribute values.
pub fn esc(s: &str) -> String {
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

pub(super) fn facts_table(rows: &[(&str, String)]) -> String {
    let mut t = String::from("<table class=\"facts\"><tbody>\n");
    for (k, v) in rows {
        let _ = writeln!(t, "<tr><th>{}</th><td>{}</td></tr>", esc(k), v);
    }
    t.push_str("</tbody></table>\n");
    t
}

/// A table with a header row; cells are HTML already.
/// `numeric`: the columns set right-aligned.
pub(super) fn table(
    class: &str,
    head: &[&str],
    rows: &[Vec<String>],
    numeric: Range<usize>,
) -> String {
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

pub(super) fn opt_text(v: Option<&str>) -> String {
    v.map_or_else(|| "–".to_owned(), esc)
}

/// Binary size: `4 KiB`, `1.5 GiB`.
pub(super) use iorig_spec::format_bytes as fmt_bytes;

pub(super) fn fmt_duration_s(s: f64) -> String {
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
pub fn status_span(status: &str) -> String {
    format!("<span class=\"status-{0}\">{0}</span>", esc(status))
}
