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
//!
//! Every piece of HTML is a maud template (`html!`): text goes in as a
//! value and comes out escaped, so nothing from the store (labels, step
//! names, paths, command lines) can become markup. Only the charts' SVG
//! (plotters' own markup) and the constant stylesheet go in as
//! `PreEscaped`, each with its reason beside it.

use crate::charts::{
    self, fmt_iops, fmt_lat_ns, fmt_mb_s, CurveLine, HeatValue, Heatmap, PercentileLine,
    ScalingLine, ScalingPoint, SeriesPanel, TimeSeries,
};
use crate::model::{CurveReport, RunReport, StepParams, StepReport};
use crate::ReportError;
use iorig_result::StepRole;
use iorig_store::RunId;
// Re-exported so a caller (iorig serve) builds its parts of a page with
// the same maud as the report (its `html!` needs `maud` among the
// caller's own dependencies: the macro's expansion names the crate).
pub use maud::{html, Markup, PreEscaped, Render};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Range;

/// Steps drawn in detail (time series and percentiles) unless the caller
/// names them: a large matrix would otherwise spend most of its report on
/// hundreds of similar charts (and their PNG copies); the step table still
/// lists every step, and [`Details::Steps`] draws any others.
pub const MAX_STEP_DETAILS: usize = 40;

/// Which steps of a run get detail charts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Details {
    /// Every step when there are at most [`MAX_STEP_DETAILS`]; else the
    /// steps with warnings first, then the others in order, up to it.
    #[default]
    Auto,
    /// Exactly these steps, by number (from 1, as the tables show them).
    Steps(Vec<i64>),
}
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

/// A rendered page and its charts (in page order). It keeps its title
/// and body, so a caller can put the same page in another frame
/// ([`Rendered::framed`]).
#[derive(Clone, Debug, Default)]
pub struct Rendered {
    /// The page as written to `index.html` (the plain [`Frame`]).
    pub index_html: String,
    pub charts: Vec<Chart>,
    title: String,
    body: Markup,
}

// By hand: maud's `Markup` does not derive `PartialEq`.
impl PartialEq for Rendered {
    fn eq(&self, other: &Rendered) -> bool {
        self.index_html == other.index_html
            && self.charts == other.charts
            && self.title == other.title
            && self.body.0 == other.body.0
    }
}

impl Rendered {
    /// The files of the report's directory: index.html, and each chart as
    /// SVG and (where it converts) PNG; the last PNG failure, if any.
    pub fn files(&self) -> (Vec<(String, Vec<u8>)>, Option<String>) {
        let mut files = vec![(
            "index.html".to_string(),
            self.index_html.clone().into_bytes(),
        )];
        let mut png_failed = None;
        let svgs: Vec<&str> = self.charts.iter().map(|c| c.svg.as_str()).collect();
        let pngs = crate::charts::svgs_to_pngs(&svgs);
        for (c, png) in self.charts.iter().zip(pngs) {
            files.push((format!("{}.svg", c.file_stem), c.svg.clone().into_bytes()));
            match png {
                Ok(png) => files.push((format!("{}.png", c.file_stem), png)),
                Err(e) => png_failed = Some(e.to_string()),
            }
        }
        (files, png_failed)
    }
}

mod compare;
mod grouping;
mod page;
mod profile;
mod report;
mod trace;

pub use compare::*;
use grouping::*;
use page::*;
pub use page::{document, status_markup, Frame, CSS};
pub use profile::{render_profile_compare, render_profile_report};
pub use report::*;
pub use trace::{render_trace_report, TraceReport};

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
            pct_lat_ns: None,
            mean_lat_se_ns: None,
            p99_lat_se_ns: None,
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
            name: Some("bs=64k".into()),
            threshold_ms: 1.0,
            step_indexes: vec![0, 1, 2, 3],
            analysis: Some(analyze_curve(&points, 1e6, 2.0)),
            points,
        };
        let s = curve_sentence(&c);
        assert!(s.starts_with("Curve 1 (bs=64k): "), "{s}");
        assert!(s.contains("not counted for the best): 4"), "{s}");
        assert!(
            s.contains("best with mean latency ≤ 1 ms: 103,600 IOPS (interpolated between steps 2 and 3)"),
            "the best lies between the paced steps 2 and 3, not at the uncontrolled max, and is no step's measurement: {s}"
        );
    }

    fn page_with(text: &str) -> Rendered {
        let mut page = Page::new();
        page.push(html! { h1 { (text) } });
        let chart = page.chart(
            "c-1",
            "a <b> & 'c'",
            Ok("<svg xmlns=\"http://www.w3.org/2000/svg\"><rect/></svg>".to_owned()),
        );
        page.push(chart);
        let failed = page.chart("c-2", "<t>", Err(ReportError::Usage("<why>".into())));
        page.push(failed);
        page.finish("title <1>")
    }

    #[test]
    fn text_is_escaped_and_charts_are_tagged() {
        let r = page_with("<script>\"x\"</script>");
        let html = &r.index_html;
        assert!(
            html.starts_with("<!DOCTYPE html>\n<html lang=\"en\"><head>"),
            "{html}"
        );
        assert!(html.contains("<title>title &lt;1&gt;</title>"));
        assert!(html.contains("<h1>&lt;script&gt;&quot;x&quot;&lt;/script&gt;</h1>"));
        assert!(!html.contains("<script>"));
        assert_eq!(
            r.charts.len(),
            1,
            "a chart that failed is a note, not a chart"
        );
        let svg = &r.charts[0].svg;
        assert!(svg.starts_with("<svg id=\"c-1\" class=\"chart\" role=\"img\" xmlns="));
        assert!(svg.contains("<title>a &lt;b&gt; &amp; 'c'</title><rect/>"));
        assert!(html.contains(&format!("<figure>{svg}</figure>")));
        assert!(html.contains("<p class=\"note\">Chart “&lt;t&gt;” could not be drawn: "));
        assert!(html.contains("&lt;why&gt;</p>"));
    }

    #[test]
    fn a_frame_adds_its_styles_to_the_head_and_its_part_first_in_the_body() {
        let r = page_with("page");
        assert_eq!(r.framed(&Frame::default()), r.index_html);
        let framed = r.framed(&Frame {
            extra_css: "header.serve { color: red; }\n",
            top: Some(html! { header.serve { "bar " (r#"<&>"#) } }),
        });
        assert!(framed.contains(&format!(
            "<style>{CSS}header.serve {{ color: red; }}\n</style></head>"
        )));
        assert!(framed
            .contains("<body><header class=\"serve\">bar &lt;&amp;&gt;</header>\n<h1>page</h1>"));
        // The rest of the page is the plain page's.
        let plain_body = &r.index_html[r.index_html.find("<h1>").unwrap()..];
        assert!(framed.ends_with(plain_body));
    }

    #[test]
    fn status_words_are_styled_by_their_meaning() {
        assert_eq!(
            status_markup("ok").into_string(),
            "<span class=\"status-ok\">ok</span>"
        );
        assert_eq!(
            status_markup("a\"b").into_string(),
            "<span class=\"status-a&quot;b\">a&quot;b</span>"
        );
    }
}
