//! The report's charts, each drawn by plotters' SVG backend into a String,
//! plus [`svg_to_png`], which rasterises the same SVG with resvg so the PNG
//! and the page never disagree.
//!
//! Charts take plain figures (not store rows) so the report and the
//! comparison draw the same pictures from different sources. Axis units are
//! chosen from the data's magnitude (µs or ms, k or M IOPS) and named in
//! the axis title. Plotters without its `ttf` feature measures text with a
//! fixed estimate, which keeps the dependency tree free of font libraries.

use crate::model::MAX_NINES;
use crate::ReportError;
use iorig_stats::analysis::CurvePoint;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::error::Error;
use std::sync::{Arc, OnceLock};

type DrawResult = Result<(), Box<dyn Error>>;
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

const FONT: &str = "sans-serif";
const TITLE_PX: u32 = 17;
const LABEL_PX: u32 = 13;
/// Light grid lines: the data, not the mesh, should stand out.
const GRID: RGBColor = RGBColor(232, 232, 232);
const WARMUP: RGBColor = RGBColor(150, 150, 150);
const STEADY: RGBColor = RGBColor(44, 160, 44);
const ALERT: RGBColor = RGBColor(214, 39, 40);

/// Tableau 10: distinct, colour-blind-tolerable, prints well.
const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

/// The `i`-th series colour.
pub fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

// ---------------------------------------------------------------- units

/// A latency unit picked for a range of values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LatUnit {
    pub name: &'static str,
    pub ns_per_unit: f64,
}

impl LatUnit {
    /// The unit in which `max_ns` reads as 1..1000: µs under 1 ms, ms under
    /// 1 s, else s.
    pub fn for_max(max_ns: f64) -> LatUnit {
        if max_ns < 1e6 {
            LatUnit {
                name: "µs",
                ns_per_unit: 1e3,
            }
        } else if max_ns < 1e9 {
            LatUnit {
                name: "ms",
                ns_per_unit: 1e6,
            }
        } else {
            LatUnit {
                name: "s",
                ns_per_unit: 1e9,
            }
        }
    }

    pub fn of(self, ns: f64) -> f64 {
        ns / self.ns_per_unit
    }
}

pub use iorig_spec::sig3;

/// An axis number: three significant digits without trailing zeros
/// (`0.5`, `2`, `12.5`).
pub fn axis_num(v: f64) -> String {
    let s = sig3(v);
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A latency in the unit that suits it: `850 ns`, `85.3 µs`, `1.25 ms`.
pub fn fmt_lat_ns(ns: f64) -> String {
    if ns < 1e3 {
        format!("{} ns", sig3(ns))
    } else {
        let u = LatUnit::for_max(ns);
        format!("{} {}", sig3(u.of(ns)), u.name)
    }
}

/// A count with k/M/G suffix for axes: `950`, `12.5k`, `1.2M`.
pub fn fmt_count(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{}G", axis_num(v / 1e9))
    } else if a >= 1e6 {
        format!("{}M", axis_num(v / 1e6))
    } else if a >= 1e3 {
        format!("{}k", axis_num(v / 1e3))
    } else {
        axis_num(v)
    }
}

/// IOPS for tables: whole numbers with thousands separators.
pub fn fmt_iops(v: f64) -> String {
    if !v.is_finite() {
        return "-".to_owned();
    }
    let n = v.round() as i64;
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 {
        out.insert(0, '-');
    }
    out
}

/// Bandwidth in decimal MB/s (as fio and vdbench print it).
pub fn mb_per_s(bytes_per_s: f64) -> f64 {
    bytes_per_s / 1e6
}

pub fn fmt_mb_s(bytes_per_s: f64) -> String {
    sig3(mb_per_s(bytes_per_s))
}

/// A percentile for the "nines" axis: x = -log10(1 - q) → `99.9`.
pub fn nines_label(x: f64) -> String {
    let pct = 100.0 * (1.0 - 10f64.powf(-x));
    let decimals = (x.ceil() as i64 - 2).max(0) as usize;
    format!("{pct:.decimals$}")
}

/// The "nines" position of a percentile (0..100).
pub fn nines_of(pct: f64) -> f64 {
    let rest = (1.0 - pct / 100.0).max(10f64.powf(-MAX_NINES));
    -rest.log10()
}

// ---------------------------------------------------------------- input types

/// One time series of a step, as the time series chart draws it.
#[derive(Clone, Debug, Default)]
pub struct TimeSeries {
    /// (t_s, value) per interval end.
    pub iops: Vec<(f64, f64)>,
    pub bw_bytes_per_s: Vec<(f64, f64)>,
    pub mean_lat_ns: Vec<(f64, f64)>,
    pub p99_lat_ns: Vec<(f64, f64)>,
    pub cpu_usr_pct: Vec<(f64, f64)>,
    pub cpu_sys_pct: Vec<(f64, f64)>,
    /// Empty without a sampled block device.
    pub dev_util_pct: Vec<(f64, f64)>,
    /// Warmup runs from 0 to this many seconds.
    pub warmup_end_s: Option<f64>,
    /// The steady-state window judged, (start, end) seconds.
    pub steady_window_s: Option<(f64, f64)>,
    pub cliff_onset_s: Option<f64>,
    /// (start, end) seconds of each outage.
    pub outages_s: Vec<(f64, f64)>,
}

/// One line of a latency percentile plot.
#[derive(Clone, Debug)]
pub struct PercentileLine {
    pub label: String,
    /// (percentile 0..100, latency ns).
    pub points: Vec<(f64, u64)>,
}

/// One IOPS–latency curve with what the analysis marked on it.
#[derive(Clone, Debug)]
pub struct CurveLine {
    pub label: String,
    pub points: Vec<CurvePoint>,
    pub best_under_mean: Option<f64>,
    pub best_under_p99: Option<f64>,
    /// (IOPS, mean latency ns).
    pub knee: Option<(f64, f64)>,
}

/// One point of a scaling chart: the figures at one thread count or qd.
#[derive(Clone, Copy, Debug)]
pub struct ScalingPoint {
    pub x: u32,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub mean_lat_ns: f64,
    pub p99_lat_ns: f64,
}

#[derive(Clone, Debug)]
pub struct ScalingLine {
    pub label: String,
    pub points: Vec<ScalingPoint>,
}

/// A grid of values over two categorical axes.
#[derive(Clone, Debug)]
pub struct Heatmap {
    pub title: String,
    pub x_desc: String,
    pub x_cats: Vec<String>,
    pub y_desc: String,
    pub y_cats: Vec<String>,
    /// `values[y][x]`; `None` for a cell without a result.
    pub values: Vec<Vec<Option<f64>>>,
    /// Dark for high values when true (IOPS); dark for low when false (latency).
    pub high_is_good: bool,
    /// How a cell's value is written.
    pub kind: HeatValue,
}

/// What the cells of a heatmap hold (which decides their formatting).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HeatValue {
    Iops,
    LatencyNs,
}

// ---------------------------------------------------------------- plumbing

/// Draws into an SVG string of `size` pixels on a white background.
fn svg_chart(
    name: &str,
    size: (u32, u32),
    draw: impl FnOnce(&Area<'_>) -> DrawResult,
) -> Result<String, ReportError> {
    let fail = |why: String| ReportError::Chart {
        chart: name.to_owned(),
        why,
    };
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, size).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(e.to_string()))?;
        draw(&root).map_err(|e| fail(e.to_string()))?;
        root.present().map_err(|e| fail(e.to_string()))?;
    }
    Ok(out)
}

fn max_of(values: impl Iterator<Item = f64>) -> f64 {
    values.filter(|v| v.is_finite()).fold(0.0, f64::max)
}

/// A y range from 0 with headroom; never empty.
fn y_top(max: f64) -> f64 {
    if max > 0.0 {
        max * 1.1
    } else {
        1.0
    }
}

fn legend_line(color: RGBColor) -> impl Fn((i32, i32)) -> PathElement<(i32, i32)> {
    move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
}

fn legend_box(style: ShapeStyle) -> impl Fn((i32, i32)) -> Rectangle<(i32, i32)> {
    move |(x, y)| Rectangle::new([(x, y - 5), (x + 18, y + 5)], style)
}

// ---------------------------------------------------------------- time series

/// A step over time: IOPS, MB/s, latency (mean and p99) and CPU / device
/// utilisation, stacked on one time axis. Warmup is shaded grey, the
/// judged steady-state window green, outages red; a write cliff's onset is a
/// red dashed line.
pub fn time_series_chart(title: &str, s: &TimeSeries) -> Result<String, ReportError> {
    let t_max = max_of(
        s.iops
            .iter()
            .chain(&s.cpu_usr_pct)
            .map(|p| p.0)
            .chain(s.outages_s.iter().map(|o| o.1)),
    )
    .max(1.0);
    let has_host = !s.cpu_usr_pct.is_empty() || !s.dev_util_pct.is_empty();
    let panels = if has_host { 4 } else { 3 };
    svg_chart(title, (900, 210 * panels + 40), |root| {
        let root = root.titled(title, (FONT, TITLE_PX))?;
        let areas = root.split_evenly((panels as usize, 1));
        let bw_max = max_of(s.bw_bytes_per_s.iter().map(|p| p.1));
        let (bw_div, bw_unit) = if mb_per_s(bw_max) >= 10_000.0 {
            (1e9, "GB/s")
        } else {
            (1e6, "MB/s")
        };
        let lat_unit = LatUnit::for_max(max_of(
            s.p99_lat_ns.iter().chain(&s.mean_lat_ns).map(|p| p.1),
        ));
        let lat_desc = format!("latency ({})", lat_unit.name);
        let mut panels_spec: Vec<Panel<'_>> = vec![
            Panel {
                y_desc: "IOPS".to_owned(),
                lines: vec![("IOPS", s.iops.clone(), color(0))],
                marks: true,
                fixed_top: None,
                count_axis: true,
            },
            Panel {
                y_desc: bw_unit.to_owned(),
                lines: vec![(
                    bw_unit,
                    s.bw_bytes_per_s
                        .iter()
                        .map(|p| (p.0, p.1 / bw_div))
                        .collect(),
                    color(4),
                )],
                marks: false,
                fixed_top: None,
                count_axis: false,
            },
            Panel {
                y_desc: lat_desc,
                lines: vec![
                    (
                        "mean",
                        s.mean_lat_ns
                            .iter()
                            .map(|p| (p.0, lat_unit.of(p.1)))
                            .collect(),
                        color(0),
                    ),
                    (
                        "p99",
                        s.p99_lat_ns
                            .iter()
                            .map(|p| (p.0, lat_unit.of(p.1)))
                            .collect(),
                        color(1),
                    ),
                ],
                marks: false,
                fixed_top: None,
                count_axis: false,
            },
        ];
        if has_host {
            let mut lines = vec![
                ("CPU usr %", s.cpu_usr_pct.clone(), color(2)),
                ("CPU sys %", s.cpu_sys_pct.clone(), color(3)),
            ];
            if !s.dev_util_pct.is_empty() {
                lines.push(("device util %", s.dev_util_pct.clone(), color(7)));
            }
            panels_spec.push(Panel {
                y_desc: "%".to_owned(),
                lines,
                marks: false,
                fixed_top: Some(100.0),
                count_axis: false,
            });
        }
        for (area, panel) in areas.iter().zip(&panels_spec) {
            draw_time_panel(area, t_max, panel, s)?;
        }
        Ok(())
    })
}

/// One panel of [`panels_chart`]: its axis, its lines (name, points).
#[derive(Clone, Debug, Default)]
pub struct SeriesPanel {
    pub y_desc: String,
    pub lines: Vec<(String, Vec<(f64, f64)>)>,
    /// Label the axis with k/M/G (counts) instead of plain numbers.
    pub count_axis: bool,
}

/// Panels over a shared time axis, one under the other (a profile's IOPS,
/// MB/s, await and utilisation).
pub fn panels_chart(title: &str, panels: &[SeriesPanel]) -> Result<String, ReportError> {
    let t_max = max_of(
        panels
            .iter()
            .flat_map(|p| p.lines.iter().flat_map(|l| l.1.iter().map(|v| v.0))),
    )
    .max(1.0);
    let n = panels.len().max(1) as u32;
    let none = TimeSeries::default();
    svg_chart(title, (900, 210 * n + 40), |root| {
        let root = root.titled(title, (FONT, TITLE_PX))?;
        let areas = root.split_evenly((n as usize, 1));
        for (area, p) in areas.iter().zip(panels) {
            let panel = Panel {
                y_desc: p.y_desc.clone(),
                lines: p
                    .lines
                    .iter()
                    .enumerate()
                    .map(|(i, (name, pts))| (name.as_str(), pts.clone(), color(i)))
                    .collect(),
                marks: false,
                fixed_top: None,
                count_axis: p.count_axis,
            };
            draw_time_panel(area, t_max, &panel, &none)?;
        }
        Ok(())
    })
}

/// A named line of a panel and its colour.
type PanelLine<'a> = (&'a str, Vec<(f64, f64)>, RGBColor);

struct Panel<'a> {
    y_desc: String,
    lines: Vec<PanelLine<'a>>,
    /// Put the region legend (warmup, steady state, outages) on this panel.
    marks: bool,
    fixed_top: Option<f64>,
    count_axis: bool,
}

fn draw_time_panel(area: &Area<'_>, t_max: f64, p: &Panel<'_>, s: &TimeSeries) -> DrawResult {
    let top = p
        .fixed_top
        .unwrap_or_else(|| y_top(max_of(p.lines.iter().flat_map(|l| l.1.iter().map(|v| v.1)))));
    let mut chart = ChartBuilder::on(area)
        .margin(8)
        .x_label_area_size(34)
        .y_label_area_size(64)
        .build_cartesian_2d(0f64..t_max, 0f64..top)?;
    let count_fmt = |v: &f64| fmt_count(*v);
    let plain_fmt = |v: &f64| axis_num(*v);
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .bold_line_style(GRID)
        .x_desc("time (s)")
        .y_desc(p.y_desc.as_str())
        .y_label_formatter(if p.count_axis { &count_fmt } else { &plain_fmt })
        .x_label_formatter(&|v| axis_num(*v))
        .label_style((FONT, LABEL_PX))
        .axis_desc_style((FONT, LABEL_PX))
        .draw()?;

    // Regions first so the lines are drawn over them.
    let region = |from: f64, to: f64, c: RGBColor, alpha: f64| {
        Rectangle::new([(from, 0.0), (to, top)], c.mix(alpha).filled())
    };
    if let Some(end) = s.warmup_end_s.filter(|e| *e > 0.0) {
        let d = chart.draw_series(std::iter::once(region(0.0, end, WARMUP, 0.18)))?;
        if p.marks {
            d.label("warmup")
                .legend(legend_box(WARMUP.mix(0.3).filled()));
        }
    }
    if let Some((a, b)) = s.steady_window_s {
        let d = chart.draw_series(std::iter::once(region(a, b, STEADY, 0.14)))?;
        if p.marks {
            d.label("steady-state window")
                .legend(legend_box(STEADY.mix(0.3).filled()));
        }
    }
    if !s.outages_s.is_empty() {
        let d = chart.draw_series(
            s.outages_s
                .iter()
                .map(|(a, b)| region(*a, (*b).max(*a + t_max / 400.0), ALERT, 0.25)),
        )?;
        if p.marks {
            d.label("outage")
                .legend(legend_box(ALERT.mix(0.35).filled()));
        }
    }
    if let Some(t) = s.cliff_onset_s {
        let d = chart.draw_series(DashedLineSeries::new(
            vec![(t, 0.0), (t, top)],
            6,
            4,
            ALERT.stroke_width(2),
        ))?;
        if p.marks {
            d.label("write cliff onset").legend(legend_line(ALERT));
        }
    }
    // A week at 1 s is 604,800 points for some 800 pixels: two a pixel
    // column draw the same picture, spikes included, in a small SVG.
    let columns = chart.plotting_area().dim_in_pixel().0 as usize;
    for (label, points, c) in &p.lines {
        let c = *c;
        chart
            .draw_series(LineSeries::new(
                min_max_per_column(points, columns),
                c.stroke_width(2),
            ))?
            .label(*label)
            .legend(legend_line(c));
    }
    draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    Ok(())
}

/// A series of (x, y) points, in x order, thinned for a plot `columns`
/// pixels wide: when it has more than two points a column, each column's
/// run of points becomes its lowest and its highest (in their order), so a
/// one-interval spike or stall stays on the chart at its full height where
/// averaging would flatten it. Shorter series come back as they are.
pub fn min_max_per_column(points: &[(f64, f64)], columns: usize) -> Vec<(f64, f64)> {
    if columns == 0 || points.len() <= 2 * columns {
        return points.to_vec();
    }
    let (first, last) = match (points.first(), points.last()) {
        (Some(f), Some(l)) => (f.0, l.0),
        _ => return Vec::new(),
    };
    let span = last - first;
    if !(span.is_finite() && span > 0.0) {
        return points.to_vec();
    }
    let column_of = |x: f64| -> usize {
        let c = ((x - first) / span * columns as f64).floor();
        // Casts are safe: clamped to 0..columns, NaN to 0.
        (c.max(0.0) as usize).min(columns - 1)
    };
    let mut out = Vec::with_capacity(2 * columns + 2);
    let mut start = 0;
    while start < points.len() {
        let col = column_of(points[start].0);
        let mut end = start + 1;
        while end < points.len() && column_of(points[end].0) == col {
            end += 1;
        }
        let run = &points[start..end];
        // NaN never wins a comparison, so a column of NaN keeps its first.
        let (mut lo, mut hi) = (0, 0);
        for (i, p) in run.iter().enumerate() {
            if p.1 < run[lo].1 || run[lo].1.is_nan() {
                lo = i;
            }
            if p.1 > run[hi].1 || run[hi].1.is_nan() {
                hi = i;
            }
        }
        out.push(run[lo.min(hi)]);
        if lo != hi {
            out.push(run[lo.max(hi)]);
        }
        start = end;
    }
    out
}

/// The legend box every chart uses, at `position`.
fn draw_legend<'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'a>, CT>,
    position: SeriesLabelPosition,
) -> DrawResult {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(200, 200, 200))
        .label_font((FONT, 12))
        .draw()?;
    Ok(())
}

// ---------------------------------------------------------------- percentiles

/// Latency against percentile, the percentile on a "nines" axis (0, 90,
/// 99, … 99.999 equally spaced) and latency on a log axis, so the tail is
/// as readable as the median.
pub fn percentile_chart(title: &str, lines: &[PercentileLine]) -> Result<String, ReportError> {
    let all = || {
        lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1 as f64))
    };
    let max_ns = max_of(all()).max(1.0);
    let min_ns = all().filter(|v| *v > 0.0).fold(max_ns, f64::min);
    // The unit in which the smallest value reads 1..1000: plotters labels a
    // log axis poorly below 1.
    let unit = LatUnit::for_max(min_ns);
    // Log axis: pad a little either side, never to 0.
    let lo = unit.of(min_ns.max(1.0)) / 1.5;
    let hi = unit.of(max_ns) * 1.5;
    svg_chart(title, (900, 460), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, TITLE_PX))
            .margin(10)
            .margin_right(30)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(
                0f64..MAX_NINES,
                (lo..hi).log_scale().with_key_points(log_ticks(lo, hi)),
            )?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .x_desc("percentile (%)")
            .y_desc(format!("latency ({}), log scale", unit.name))
            .x_labels(MAX_NINES as usize + 1)
            .x_label_formatter(&|x| nines_label(*x))
            .y_label_formatter(&|v| axis_num(*v))
            .label_style((FONT, LABEL_PX))
            .axis_desc_style((FONT, LABEL_PX))
            .draw()?;
        for (i, l) in lines.iter().enumerate() {
            let c = color(i);
            let pts: Vec<(f64, f64)> = l
                .points
                .iter()
                .map(|(pct, ns)| (nines_of(*pct), unit.of((*ns as f64).max(1.0))))
                .collect();
            chart
                .draw_series(LineSeries::new(pts, c.stroke_width(2)))?
                .label(l.label.as_str())
                .legend(legend_line(c));
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    })
}

/// Tick values for a log axis: 1-2-5 in every decade of `lo..hi`, adding
/// 3 and 7 when the range is too short for three ticks (plotters' own log
/// ticks leave ranges inside one decade unlabelled).
fn log_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let pick = |mantissas: &[f64]| -> Vec<f64> {
        let mut out = Vec::new();
        let mut decade = 10f64.powf(lo.max(1e-12).log10().floor());
        while decade <= hi {
            for m in mantissas {
                let v = decade * m;
                if v >= lo && v <= hi {
                    out.push(v);
                }
            }
            decade *= 10.0;
        }
        out
    };
    let ticks = pick(&[1.0, 2.0, 5.0]);
    if ticks.len() >= 3 {
        ticks
    } else {
        pick(&[1.0, 2.0, 3.0, 5.0, 7.0])
    }
}

// ---------------------------------------------------------------- curve

/// Mean (solid) and p99 (dashed) latency against IOPS for one or several
/// curves, the latency threshold as a red dashed line, the best IOPS under
/// it as diamonds on the threshold and the knee as a circled point.
pub fn curve_chart(
    title: &str,
    threshold_ms: f64,
    lines: &[CurveLine],
) -> Result<String, ReportError> {
    let threshold_ns = threshold_ms * 1e6;
    let x_max = y_top(max_of(
        lines.iter().flat_map(|l| l.points.iter().map(|p| p.iops)),
    ));
    let lat_max = max_of(
        lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.p99_lat_ns.max(p.mean_lat_ns))),
    )
    .max(threshold_ns);
    let unit = LatUnit::for_max(lat_max);
    let y_max = y_top(unit.of(lat_max));
    let threshold = unit.of(threshold_ns);
    let single = lines.len() == 1;
    svg_chart(title, (900, 500), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, TITLE_PX))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .x_desc("IOPS")
            .y_desc(format!("latency ({})", unit.name))
            .x_label_formatter(&|v| fmt_count(*v))
            .y_label_formatter(&|v| axis_num(*v))
            .label_style((FONT, LABEL_PX))
            .axis_desc_style((FONT, LABEL_PX))
            .draw()?;
        chart
            .draw_series(DashedLineSeries::new(
                vec![(0.0, threshold), (x_max, threshold)],
                8,
                5,
                ALERT.stroke_width(1),
            ))?
            .label(format!("threshold {} ms", axis_num(threshold_ms)))
            .legend(legend_line(ALERT));
        for (i, l) in lines.iter().enumerate() {
            let (mean_c, p99_c) = if single {
                (color(0), color(1))
            } else {
                (color(i), color(i))
            };
            let name = |what: &str| {
                if single {
                    format!("{what} latency")
                } else {
                    format!("{} {what}", l.label)
                }
            };
            let mut pts = l.points.clone();
            pts.sort_by(|a, b| a.iops.total_cmp(&b.iops));
            let mean: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.iops, unit.of(p.mean_lat_ns)))
                .collect();
            let p99: Vec<(f64, f64)> = pts
                .iter()
                .map(|p| (p.iops, unit.of(p.p99_lat_ns)))
                .collect();
            chart
                .draw_series(LineSeries::new(mean.clone(), mean_c.stroke_width(2)))?
                .label(name("mean"))
                .legend(legend_line(mean_c));
            chart.draw_series(mean.iter().map(|p| Circle::new(*p, 3, mean_c.filled())))?;
            chart
                .draw_series(DashedLineSeries::new(
                    p99.clone(),
                    7,
                    4,
                    p99_c.stroke_width(2),
                ))?
                .label(name("p99"))
                .legend(move |(x, y)| {
                    // A dashed mark: two short strokes.
                    EmptyElement::at((x, y))
                        + PathElement::new(vec![(0, 0), (7, 0)], p99_c.stroke_width(2))
                        + PathElement::new(vec![(11, 0), (18, 0)], p99_c.stroke_width(2))
                });
            chart.draw_series(p99.iter().map(|p| Circle::new(*p, 3, p99_c.filled())))?;
            let best: Vec<((f64, f64), RGBColor)> =
                [(l.best_under_mean, mean_c), (l.best_under_p99, p99_c)]
                    .into_iter()
                    .filter_map(|(x, c)| x.map(|x| ((x, threshold), c)))
                    .collect();
            if !best.is_empty() {
                let d = chart.draw_series(best.into_iter().map(|(p, c)| {
                    EmptyElement::at(p)
                        + Polygon::new(vec![(0, -7), (7, 0), (0, 7), (-7, 0)], c.filled())
                }))?;
                if single || i == 0 {
                    d.label("best IOPS under threshold").legend(|(x, y)| {
                        Polygon::new(
                            vec![(x + 9, y - 6), (x + 15, y), (x + 9, y + 6), (x + 3, y)],
                            BLACK.filled(),
                        )
                    });
                }
            }
            if let Some((kx, ky)) = l.knee {
                let d = chart.draw_series(std::iter::once(Circle::new(
                    (kx, unit.of(ky)),
                    9,
                    BLACK.stroke_width(2),
                )))?;
                if single || i == 0 {
                    d.label("knee")
                        .legend(|(x, y)| Circle::new((x + 9, y), 5, BLACK.stroke_width(2)));
                }
            }
        }
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    })
}

// ---------------------------------------------------------------- scaling

/// IOPS, MB/s and latency (mean solid, p99 dashed) against `x_desc`
/// (threads or qd), one line per series; the x axis lists the values
/// measured, equally spaced (they are usually powers of two).
pub fn scaling_chart(
    title: &str,
    x_desc: &str,
    lines: &[ScalingLine],
) -> Result<String, ReportError> {
    let mut xs: Vec<u32> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.x))
        .collect();
    xs.sort_unstable();
    xs.dedup();
    // Categorical x: one slot per value measured, labelled at its centre.
    let pos = |x: u32| SegmentValue::CenterOf(xs.iter().position(|v| *v == x).unwrap_or(0) as i32);
    let slots = xs.len().max(1) as i32;
    let all = || lines.iter().flat_map(|l| l.points.iter());
    let iops_top = y_top(max_of(all().map(|p| p.iops)));
    let bw_top = y_top(max_of(all().map(|p| mb_per_s(p.bw_bytes_per_s))));
    let unit = LatUnit::for_max(max_of(all().map(|p| p.p99_lat_ns.max(p.mean_lat_ns))));
    let lat_top = y_top(max_of(
        all().map(|p| unit.of(p.p99_lat_ns.max(p.mean_lat_ns))),
    ));
    let lat_desc = format!("latency ({})", unit.name);
    svg_chart(title, (1200, 420), |root| {
        let root = root.titled(title, (FONT, TITLE_PX))?;
        let areas = root.split_evenly((1, 3));
        let x_fmt = |v: &SegmentValue<i32>| match v {
            SegmentValue::CenterOf(i) => usize::try_from(*i)
                .ok()
                .and_then(|i| xs.get(i))
                .map(u32::to_string)
                .unwrap_or_default(),
            _ => String::new(),
        };
        type Metric = fn(&ScalingPoint) -> (f64, Option<f64>);
        let panels: [(&str, f64, Metric, bool); 3] = [
            ("IOPS", iops_top, |p| (p.iops, None), true),
            (
                "MB/s",
                bw_top,
                |p| (mb_per_s(p.bw_bytes_per_s), None),
                false,
            ),
            (
                lat_desc.as_str(),
                lat_top,
                |p| (p.mean_lat_ns, Some(p.p99_lat_ns)),
                false,
            ),
        ];
        for (pi, (area, (desc, top, metric, count))) in areas.iter().zip(panels).enumerate() {
            let is_lat = pi == 2;
            let mut chart = ChartBuilder::on(area)
                .margin(8)
                .x_label_area_size(36)
                .y_label_area_size(60)
                .build_cartesian_2d((0..slots - 1).into_segmented(), 0f64..top)?;
            let count_fmt = |v: &f64| fmt_count(*v);
            let plain_fmt = |v: &f64| axis_num(*v);
            chart
                .configure_mesh()
                .light_line_style(TRANSPARENT)
                .bold_line_style(GRID)
                .x_desc(x_desc)
                .y_desc(desc)
                .x_labels(xs.len() + 1)
                .x_label_formatter(&x_fmt)
                .y_label_formatter(if count { &count_fmt } else { &plain_fmt })
                .label_style((FONT, LABEL_PX))
                .axis_desc_style((FONT, LABEL_PX))
                .draw()?;
            for (i, l) in lines.iter().enumerate() {
                let c = color(i);
                let mut pts = l.points.clone();
                pts.sort_by_key(|p| p.x);
                let main: Vec<(SegmentValue<i32>, f64)> = pts
                    .iter()
                    .map(|p| {
                        let v = metric(p).0;
                        (pos(p.x), if is_lat { unit.of(v) } else { v })
                    })
                    .collect();
                let label = if is_lat {
                    format!("{} mean", l.label)
                } else {
                    l.label.clone()
                };
                chart
                    .draw_series(LineSeries::new(main.clone(), c.stroke_width(2)))?
                    .label(label)
                    .legend(legend_line(c));
                chart.draw_series(main.iter().map(|p| Circle::new(p.clone(), 3, c.filled())))?;
                if is_lat {
                    let p99: Vec<(SegmentValue<i32>, f64)> = pts
                        .iter()
                        .filter_map(|p| metric(p).1.map(|v| (pos(p.x), unit.of(v))))
                        .collect();
                    chart
                        .draw_series(DashedLineSeries::new(p99, 7, 4, c.stroke_width(2)))?
                        .label(format!("{} p99", l.label))
                        .legend(move |(x, y)| {
                            EmptyElement::at((x, y))
                                + PathElement::new(vec![(0, 0), (7, 0)], c.stroke_width(2))
                                + PathElement::new(vec![(11, 0), (18, 0)], c.stroke_width(2))
                        });
                }
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperLeft)
                .background_style(WHITE.mix(0.85))
                .border_style(RGBColor(200, 200, 200))
                .label_font((FONT, 11))
                .draw()?;
        }
        Ok(())
    })
}

// ---------------------------------------------------------------- heatmap

/// A grid of cells coloured by value (dark = good), each cell labelled
/// with its value.
pub fn heatmap_chart(h: &Heatmap) -> Result<String, ReportError> {
    let nx = h.x_cats.len().max(1);
    let ny = h.y_cats.len().max(1);
    let values: Vec<f64> = h.values.iter().flatten().flatten().copied().collect();
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let cell_w = (700 / nx as u32).clamp(50, 110);
    let cell_h = (360 / ny as u32).clamp(30, 60);
    // Wide enough for the title too (about 9 px a character at 17 px).
    let width = (130 + cell_w * nx as u32).max(h.title.chars().count() as u32 * 9 + 40);
    let height = 110 + cell_h * ny as u32;
    svg_chart(&h.title, (width.max(360), height), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(h.title.as_str(), (FONT, TITLE_PX))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..nx as f64, 0f64..ny as f64)?;
        let x_fmt = |v: &f64| cat_label(&h.x_cats, *v);
        let y_fmt = |v: &f64| cat_label(&h.y_cats, *v);
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc(h.x_desc.as_str())
            .y_desc(h.y_desc.as_str())
            .x_labels(nx * 2 + 1)
            .y_labels(ny * 2 + 1)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&y_fmt)
            .label_style((FONT, LABEL_PX))
            .axis_desc_style((FONT, LABEL_PX))
            .draw()?;
        for (yi, row) in h.values.iter().enumerate() {
            for (xi, v) in row.iter().enumerate() {
                let (x0, y0) = (xi as f64, yi as f64);
                let corners = [(x0 + 0.02, y0 + 0.02), (x0 + 0.98, y0 + 0.98)];
                let Some(v) = v else {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        corners,
                        RGBColor(245, 245, 245).filled(),
                    )))?;
                    continue;
                };
                // 0 = worst, 1 = best, on a log scale when the range is wide
                // (IOPS across block sizes easily span 100×).
                let mut t = if hi > lo {
                    if lo > 0.0 && hi / lo > 20.0 {
                        (v.ln() - lo.ln()) / (hi.ln() - lo.ln())
                    } else {
                        (v - lo) / (hi - lo)
                    }
                } else {
                    1.0
                };
                if !h.high_is_good {
                    t = 1.0 - t;
                }
                let fill = shade(t);
                chart.draw_series(std::iter::once(Rectangle::new(corners, fill.filled())))?;
                let text = match h.kind {
                    HeatValue::Iops => fmt_count(*v),
                    HeatValue::LatencyNs => fmt_lat_ns(*v),
                };
                let ink = if t > 0.55 { WHITE } else { BLACK };
                let style = TextStyle::from((FONT, LABEL_PX).into_font())
                    .color(&ink)
                    .pos(Pos::new(HPos::Center, VPos::Center));
                chart.draw_series(std::iter::once(Text::new(
                    text,
                    (x0 + 0.5, y0 + 0.5),
                    style,
                )))?;
            }
        }
        Ok(())
    })
}

/// The category at the centre of slot `v` (labels sit at x.5).
fn cat_label(cats: &[String], v: f64) -> String {
    let f = v - v.floor();
    if (f - 0.5).abs() < 0.01 && v >= 0.0 {
        cats.get(v.floor() as usize).cloned().unwrap_or_default()
    } else {
        String::new()
    }
}

/// White-blue ramp: light for 0, dark blue for 1.
fn shade(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(lerp(239.0, 8.0), lerp(243.0, 48.0), lerp(255.0, 107.0))
}

// ---------------------------------------------------------------- trace

/// A byte count for an axis tick or a short label, in the largest binary
/// unit it reaches: `512 B`, `4 KiB`, `1 MiB`, `1.5 GiB`.
pub fn fmt_bytes_axis(bytes: f64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = bytes;
    let mut i = 0;
    while v.abs() >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    format!("{} {}", axis_num(v), UNITS[i])
}

/// The binary unit (bytes per unit, name) in which `max_bytes` reads
/// 1..1024, KiB at the least: a linear axis of sizes then has short labels
/// whether the hot set is a few MiB or several TiB.
fn byte_unit(max_bytes: f64) -> (f64, &'static str) {
    let units = [
        (1024f64.powi(4), "TiB"),
        (1024f64.powi(3), "GiB"),
        (1024f64.powi(2), "MiB"),
    ];
    units
        .into_iter()
        .find(|(per, _)| max_bytes >= *per)
        .unwrap_or((1024.0, "KiB"))
}

/// Ticks for a log axis of bytes: powers of two, every 1st, 2nd, 5th, 10th
/// or 20th so that about a dozen at most are labelled. Only exponents that
/// are multiples of the step are kept, so 1 KiB, 1 MiB and 1 GiB (2^10,
/// 2^20, 2^30) stay among the ticks for every step but 20, and the labels
/// read as round sizes rather than as an arbitrary run of doublings.
fn size_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let first = lo.max(1.0).log2().ceil() as i32;
    let last = hi.max(1.0).log2().floor() as i32;
    let n = (last - first + 1).max(0);
    let step = [1, 2, 5, 10, 20]
        .into_iter()
        .find(|s| n / s < 12)
        .unwrap_or(20);
    (first..=last)
        .filter(|k| k.rem_euclid(step) == 0)
        .map(|k| 2f64.powi(k))
        .collect()
}

/// A trace's hot spot: the share of accesses against the size of the
/// fewest blocks that take it, one line per kind of access (points are
/// (bytes, share %), each line starting at the origin). A line that rises
/// steeply at the left is a small hot set a cache of that size serves; a
/// diagonal is accesses spread evenly over the footprint.
pub fn hot_spot_chart(
    title: &str,
    lines: &[(String, Vec<(f64, f64)>)],
) -> Result<String, ReportError> {
    let max_bytes = max_of(lines.iter().flat_map(|l| l.1.iter().map(|p| p.0)));
    let (per_unit, unit) = byte_unit(max_bytes);
    let x_top = y_top(max_bytes / per_unit);
    svg_chart(title, (900, 460), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, TITLE_PX))
            .margin(10)
            .margin_right(30)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..x_top, 0f64..100.0)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .x_desc(format!("hot set size ({unit})"))
            .y_desc("share of accesses (%)")
            .x_label_formatter(&|v| axis_num(*v))
            .y_label_formatter(&|v| axis_num(*v))
            .label_style((FONT, LABEL_PX))
            .axis_desc_style((FONT, LABEL_PX))
            .draw()?;
        for (i, (label, points)) in lines.iter().enumerate() {
            let c = color(i);
            let pts: Vec<(f64, f64)> = points
                .iter()
                .map(|&(bytes, share)| (bytes / per_unit, share))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
                .label(label.as_str())
                .legend(legend_line(c));
            // The origin is where every line starts, not a measured share:
            // no marker there.
            chart.draw_series(
                pts.iter()
                    .filter(|p| p.1 > 0.0)
                    .map(|p| Circle::new(*p, 3, c.filled())),
            )?;
        }
        // The lines rise steeply on the left and flatten at the top: the
        // lower right is where they leave room.
        draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        Ok(())
    })
}

/// LRU hit ratio against cache size, the size on a log axis (the curve is
/// measured at doubling sizes, from one block to the footprint) labelled
/// in binary units, one line per kind of access (points are (cache bytes,
/// hit ratio 0..1)).
pub fn lru_chart(title: &str, lines: &[(String, Vec<(f64, f64)>)]) -> Result<String, ReportError> {
    // A log axis cannot hold 0 or below.
    fn usable(p: &(f64, f64)) -> bool {
        p.0.is_finite() && p.0 > 0.0
    }
    let xs = || {
        lines
            .iter()
            .flat_map(|l| l.1.iter().copied().filter(usable).map(|p| p.0))
    };
    let hi_data = max_of(xs()).max(1.0);
    let lo_data = xs().fold(hi_data, f64::min);
    // Room either side so the first and last points are off the frame;
    // this also keeps the range from being empty with one point.
    let lo = lo_data / 1.25;
    let hi = hi_data * 1.25;
    let ticks = size_ticks(lo, hi);
    svg_chart(title, (900, 460), |root| {
        let mut chart = ChartBuilder::on(root)
            .caption(title, (FONT, TITLE_PX))
            .margin(10)
            .margin_right(30)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((lo..hi).log_scale().with_key_points(ticks), 0f64..1.0)?;
        chart
            .configure_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(GRID)
            .x_desc("cache size, log scale")
            .y_desc("hit ratio")
            .x_label_formatter(&|v| fmt_bytes_axis(*v))
            .y_label_formatter(&|v| axis_num(*v))
            .label_style((FONT, LABEL_PX))
            .axis_desc_style((FONT, LABEL_PX))
            .draw()?;
        for (i, (label, points)) in lines.iter().enumerate() {
            let c = color(i);
            let pts: Vec<(f64, f64)> = points
                .iter()
                .copied()
                .filter(usable)
                .map(|(x, h)| (x, h.clamp(0.0, 1.0)))
                .collect();
            chart
                .draw_series(LineSeries::new(pts.clone(), c.stroke_width(2)))?
                .label(label.as_str())
                .legend(legend_line(c));
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 2, c.filled())))?;
        }
        // Hit ratios grow with the cache: the upper left stays clear
        // longest.
        draw_legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
        Ok(())
    })
}

// ---------------------------------------------------------------- PNG

/// The chart font, loaded once: the first of a few common sans-serif
/// families the system has (any family when none of them). Only that
/// family's faces are kept, read into memory: a database of every system
/// font, memory-mapped, makes each text element map and unmap font files,
/// which cost more than drawing a chart. Without any font the PNG is still
/// drawn, only without text.
fn fonts() -> Arc<resvg::usvg::fontdb::Database> {
    use resvg::usvg::fontdb::{Database, Source};
    static FONTS: OnceLock<Arc<Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut all = Database::new();
            all.load_system_fonts();
            let preferred = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "FreeSans"];
            let has = |face: &resvg::usvg::fontdb::FaceInfo, family: &str| {
                face.families.iter().any(|(name, _)| name == family)
            };
            let pick = preferred
                .iter()
                .find(|p| all.faces().any(|f| has(f, p)))
                .map(|p| (*p).to_owned())
                .or_else(|| {
                    all.faces()
                        .next()
                        .and_then(|f| f.families.first().map(|(n, _)| n.clone()))
                });
            let Some(family) = pick else {
                return Arc::new(all);
            };
            let mut db = Database::new();
            let mut files = Vec::new();
            for face in all.faces().filter(|f| has(f, &family)) {
                if let Source::File(path) = &face.source {
                    if !files.contains(path) {
                        files.push(path.clone());
                    }
                }
            }
            for path in &files {
                if let Ok(bytes) = std::fs::read(path) {
                    db.load_font_data(bytes);
                }
            }
            let mut db = if db.is_empty() { all } else { db };
            db.set_sans_serif_family(family);
            Arc::new(db)
        })
        .clone()
}

/// Scale of the PNG against the SVG's pixel size (sharp on high-DPI screens
/// and in documents).
const PNG_SCALE: f32 = 2.0;

/// Rasterises a chart SVG to PNG bytes.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, ReportError> {
    use resvg::{tiny_skia, usvg};
    let options = usvg::Options {
        fontdb: fonts(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &options).map_err(|e| ReportError::Png(e.to_string()))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(PNG_SCALE)
        .ok_or_else(|| ReportError::Png("chart size out of range".to_owned()))?;
    // Opaque white, premultiplied, is every byte 255: one allocation filled
    // once instead of a zeroed pixmap painted white.
    let white = vec![255u8; size.width() as usize * size.height() as usize * 4];
    let mut pixmap = tiny_skia::Pixmap::from_vec(white, size)
        .ok_or_else(|| ReportError::Png("chart size out of range".to_owned()))?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(PNG_SCALE, PNG_SCALE),
        &mut pixmap.as_mut(),
    );
    encode_opaque_png(pixmap.data(), size.width(), size.height())
}

/// Encodes an opaque RGBA pixmap as a PNG. The chart is drawn on opaque
/// white, so every pixel is opaque and its premultiplied colour is its
/// colour: the pixmap's bytes are the PNG's RGBA rows as they are. Dropping
/// the alpha channel would shrink the input by a quarter but cost a copy of
/// every pixel, more than deflate spends on a constant channel the Paeth
/// filter turns into zeros. The fast deflate (fdeflate) costs a few per
/// cent of file size against the default and a fraction of its time.
fn encode_opaque_png(rgba: &[u8], width: u32, height: u32) -> Result<Vec<u8>, ReportError> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgba);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    // One filter for every row instead of trying each per row: on these
    // charts Paeth gives the adaptive choice's size (within 2 %) in a
    // fraction of its time; Up and Sub leave anti-aliased edges and text
    // 1.6-2x larger.
    encoder.set_filter(png::Filter::Paeth);
    let png_err = |e: png::EncodingError| ReportError::Png(e.to_string());
    let mut writer = encoder.write_header().map_err(png_err)?;
    writer.write_image_data(rgba).map_err(png_err)?;
    writer.finish().map_err(png_err)?;
    Ok(out)
}

/// Rasterises many charts, spread over the CPUs (each chart is independent;
/// a 2,000-step report has hundreds). Results are in the order given.
pub fn svgs_to_pngs(svgs: &[&str]) -> Vec<Result<Vec<u8>, ReportError>> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, svgs.len().max(1));
    let mut out: Vec<Option<Result<Vec<u8>, ReportError>>> =
        (0..svgs.len()).map(|_| None).collect();
    std::thread::scope(|scope| {
        let chunk = svgs.len().div_ceil(threads).max(1);
        for (part, slots) in svgs.chunks(chunk).zip(out.chunks_mut(chunk)) {
            scope.spawn(move || {
                for (svg, slot) in part.iter().zip(slots.iter_mut()) {
                    *slot = Some(svg_to_png(svg));
                }
            });
        }
    });
    out.into_iter()
        .map(|r| {
            r.unwrap_or_else(|| Err(ReportError::Png("a rasterising thread failed".to_owned())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_rasterise_in_order_to_opaque_pngs() {
        let svg = |w: u32, fill: &str| {
            format!(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"10\">\
                 <rect x=\"0\" y=\"0\" width=\"5\" height=\"10\" fill=\"{fill}\"/></svg>"
            )
        };
        let svgs = [svg(20, "#ff0000"), svg(30, "#0000ff"), svg(40, "#00ff00")];
        let refs: Vec<&str> = svgs.iter().map(String::as_str).collect();
        for (k, png) in svgs_to_pngs(&refs).into_iter().enumerate() {
            let png = png.unwrap();
            let mut reader = png::Decoder::new(std::io::Cursor::new(png))
                .read_info()
                .unwrap();
            let (width, height, color) = {
                let info = reader.info();
                (info.width, info.height, info.color_type)
            };
            assert_eq!(
                (width, height),
                (40 + 20 * k as u32, 20),
                "chart {k} in order"
            );
            assert_eq!(color, png::ColorType::Rgba);
            let mut buf = vec![0; reader.output_buffer_size().unwrap()];
            reader.next_frame(&mut buf).unwrap();
            assert!(
                buf.chunks_exact(4).all(|p| p[3] == 255),
                "every pixel opaque"
            );
            let left = &buf[..4];
            let right = &buf[(width as usize - 1) * 4..][..4];
            assert_eq!(right, [255, 255, 255, 255], "white where nothing is drawn");
            let expected = [[255, 0, 0, 255], [0, 0, 255, 255], [0, 255, 0, 255]][k];
            assert_eq!(
                left, expected,
                "the drawn colour, not premultiplied or dimmed"
            );
        }
    }

    #[test]
    fn one_spike_in_a_week_of_points_survives_thinning() {
        let n = 604_800;
        let spike_at = 345_678;
        let points: Vec<(f64, f64)> = (0..n)
            .map(|i| {
                let y = if i == spike_at {
                    1e6
                } else {
                    100.0 + (i % 7) as f64
                };
                ((i + 1) as f64, y)
            })
            .collect();
        let thin = min_max_per_column(&points, 800);
        assert!(thin.len() <= 2 * 800, "{}", thin.len());
        assert!(thin.contains(&points[spike_at]), "the spike is kept");
        // The floor survives too: no column is averaged.
        assert!(thin.iter().any(|p| p.1 == 100.0));
        assert!(thin
            .iter()
            .all(|p| p.1 == 1e6 || (100.0..=106.0).contains(&p.1)));
        // In x order, from the first point.
        assert!(thin.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(thin.first(), points.first());
    }

    #[test]
    fn a_dip_survives_and_short_series_are_untouched() {
        let mut points: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64, 50.0)).collect();
        points[1234].1 = 0.0;
        let thin = min_max_per_column(&points, 100);
        assert!(thin.contains(&(1234.0, 0.0)));
        let short: Vec<(f64, f64)> = (0..150).map(|i| (i as f64, i as f64)).collect();
        assert_eq!(min_max_per_column(&short, 100), short);
        assert_eq!(min_max_per_column(&short, 0), short);
        assert!(min_max_per_column(&[], 10).is_empty());
        // All at one x: nothing to bucket by, kept as given.
        let same = vec![(1.0, 2.0); 500];
        assert_eq!(min_max_per_column(&same, 10).len(), 500);
    }

    #[test]
    fn units_follow_magnitude() {
        assert_eq!(fmt_lat_ns(850.0), "850 ns");
        assert_eq!(fmt_lat_ns(85_300.0), "85.3 µs");
        assert_eq!(fmt_lat_ns(1_250_000.0), "1.25 ms");
        assert_eq!(fmt_lat_ns(2.5e9), "2.50 s");
        assert_eq!(fmt_count(12_500.0), "12.5k");
        assert_eq!(fmt_iops(1_234_567.4), "1,234,567");
        assert_eq!(fmt_iops(999.0), "999");
    }

    #[test]
    fn log_ticks_cover_the_range() {
        assert_eq!(log_ticks(27.0, 1800.0), [50.0, 100.0, 200.0, 500.0, 1000.0]);
        assert_eq!(log_ticks(1.5, 4.0), [2.0, 3.0]);
    }

    #[test]
    fn nines_axis_round_trips() {
        assert_eq!(nines_label(0.0), "0");
        assert_eq!(nines_label(1.0), "90");
        assert_eq!(nines_label(2.0), "99");
        assert_eq!(nines_label(3.0), "99.9");
        assert_eq!(nines_label(5.0), "99.999");
        assert!((nines_of(99.9) - 3.0).abs() < 1e-9);
        assert!((nines_of(100.0) - MAX_NINES).abs() < 1e-9);
    }
}
