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
    ScalingLine, ScalingPoint, SeriesPanel, TimeSeries,
};
use crate::model::{CurveReport, RunReport, StepParams, StepReport};
use crate::ReportError;
use iorig_result::StepRole;
use iorig_store::RunId;
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

/// A rendered page and its charts (in page order).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rendered {
    pub index_html: String,
    pub charts: Vec<Chart>,
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
pub use page::{esc, status_span, CSS};
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
