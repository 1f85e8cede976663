//! Protects the report of plans: a bs × read % × threads matrix gets its
//! step table (precondition, failed and skipped steps included), scaling
//! charts with one line per block size, read % × block size heatmaps per
//! thread count; a curve plan gets its curve chart with threshold, best
//! point and knee; all pages are self-contained and every chart renders to
//! PNG. Also a coarse bound on rendering a 2000-step matrix.

#![allow(clippy::unwrap_used)]

use crate::report_support::*;
use iorig_report::charts::svg_to_png;
use iorig_report::html::{render_report, MAX_STEP_DETAILS};
use iorig_report::model::RunReport;
use iorig_store::{RunKind, RunStatus, Store};
use std::time::{Duration, Instant};

fn check_pngs(charts: &[iorig_report::html::Chart]) {
    for c in charts {
        let png = svg_to_png(&c.svg).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{}", c.file_stem);
    }
}

#[test]
fn matrix_plan_report_structure() {
    let store = Store::open_in_memory().unwrap();
    let run = matrix_plan(&store, 1.0);
    let report = RunReport::load(&store, run).unwrap();
    assert_eq!(report.steps.len(), 11);
    let out = render_report(&report);
    insta::assert_snapshot!("matrix_plan_structure", structure(&out.index_html));
    assert_self_contained(&out.index_html);
    let stems: Vec<&str> = out.charts.iter().map(|c| c.file_stem.as_str()).collect();
    assert!(stems.contains(&"scaling-threads-1"), "{stems:?}");
    assert!(stems.contains(&"heatmap-2-p99"), "{stems:?}");
    // The steady-state verdicts reach the step table.
    assert_eq!(out.index_html.matches("reached (6 rounds)").count(), 8);
    check_pngs(&out.charts);
}

#[test]
fn curve_plan_report_structure() {
    let store = Store::open_in_memory().unwrap();
    let run = curve_plan(&store, 1.0);
    let report = RunReport::load(&store, run).unwrap();
    assert_eq!(report.curves.len(), 1);
    let c = &report.curves[0];
    assert_eq!(c.points.len(), 8);
    let a = c.analysis.as_ref().unwrap();
    assert!(a.best_under_mean.is_some() && a.knee.is_some());
    let out = render_report(&report);
    insta::assert_snapshot!("curve_plan_structure", structure(&out.index_html));
    assert_self_contained(&out.index_html);
    assert!(out.index_html.contains("knee at"));
    check_pngs(&out.charts);
}

#[test]
fn a_2000_step_matrix_renders_in_time() {
    let store = Store::open_in_memory().unwrap();
    let run = new_run(&store, RunKind::Plan, &[]);
    let mut index = 0;
    let ev = Events {
        samples: 100,
        ..Events::plain()
    };
    for bs in [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048] {
        for read in [0, 10, 20, 30, 40, 50, 60, 70, 80, 100] {
            for threads in [1, 2, 4, 8, 16] {
                for qd in [1, 4, 16, 64] {
                    let name = format!("{bs}k r{read} t{threads} qd{qd}");
                    add_step(
                        &store,
                        run,
                        index,
                        &name,
                        "run",
                        Shape::new(bs, read, qd, threads),
                        3,
                        0,
                        ev,
                    );
                    index += 1;
                }
            }
        }
    }
    finish_run(&store, run, RunStatus::Ok);
    let start = Instant::now();
    let report = RunReport::load(&store, run).unwrap();
    let out = render_report(&report);
    let took = start.elapsed();
    assert_eq!(report.steps.len(), 2000);
    assert!(took < Duration::from_secs(60), "took {took:?}");
    assert_eq!(
        out.index_html
            .matches("-timeseries\" class=\"chart\"")
            .count(),
        MAX_STEP_DETAILS
    );
    assert!(out
        .index_html
        .contains("Charts of 40 of 2000 steps with results (those with warnings first"));
    // Steps named by number are drawn instead, and only those.
    let chosen = iorig_report::html::render_report_with(
        &report,
        &iorig_report::html::Details::Steps(vec![7, 1999]),
    );
    let drawn: Vec<&str> = chosen
        .charts
        .iter()
        .filter(|c| c.file_stem.ends_with("-timeseries"))
        .map(|c| c.file_stem.as_str())
        .collect();
    assert_eq!(drawn.len(), 2, "{drawn:?}");
    assert!(out.index_html.matches("<tr>").count() > 2000);
}
