//! Protects the report of a single `iorig run`: the page's outline (run
//! header, system and target facts, findings, step table, the step's time
//! series and percentile charts) stays as designed, the outage and write
//! cliff found by the analysis reach the page, the page loads nothing from
//! the network, every chart has a unique id and also renders to PNG, and a
//! run whose step never ran still renders.

#![allow(clippy::unwrap_used)]

use crate::report_support::*;
use iorig_report::charts::svg_to_png;
use iorig_report::html::render_report;
use iorig_report::model::RunReport;
use iorig_store::{RunKind, RunStatus, StepStatus, Store};
use std::collections::BTreeSet;

#[test]
fn single_run_report_structure() {
    let store = Store::open_in_memory().unwrap();
    let run = single_run(&store);
    let report = RunReport::load(&store, run).unwrap();
    assert_eq!(report.steps.len(), 1);
    let step = &report.steps[0];
    assert_eq!(step.params.bs_bytes, Some(4096));
    assert_eq!((step.params.qd, step.params.threads), (8, 2));
    assert_eq!(step.intervals.len(), 65);
    assert!((step.measured_start_s() - 5.0).abs() < 1e-9);
    // all I/O, read, write: the split is shown for a mixed workload.
    let labels: Vec<&str> = step.percentiles.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels, ["all I/O", "read", "write"]);
    let p = &step.percentiles[0].points;
    assert!(
        p.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1),
        "monotonic"
    );
    assert!((p.last().unwrap().0 - 99.999).abs() < 1e-6);
    assert!(step.findings.write_cliff.as_ref().unwrap().is_some());
    assert_eq!(
        step.findings.outages.as_ref().unwrap().spans_s,
        [(25.0, 26.0)]
    );
    assert_eq!(report.duration_s(), Some(2550.0));

    let out = render_report(&report);
    insta::assert_snapshot!("single_run_structure", structure(&out.index_html));
    assert_self_contained(&out.index_html);
    assert!(out.index_html.contains("write cliff"));
    assert!(out.index_html.contains("1 outage(s)"));

    let ids: BTreeSet<&str> = out.charts.iter().map(|c| c.file_stem.as_str()).collect();
    assert_eq!(ids.len(), out.charts.len(), "chart ids are unique");
    assert_eq!(chart_ids(&out.index_html).len(), out.charts.len());
    for c in &out.charts {
        assert!(c
            .svg
            .contains(&format!("id=\"{}\" class=\"chart\"", c.file_stem)));
        let png = svg_to_png(&c.svg).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{}", c.file_stem);
    }
}

#[test]
fn steps_that_never_ran_still_render() {
    let store = Store::open_in_memory().unwrap();
    let run = new_run(&store, RunKind::Quick, &[]);
    add_unrun_step(
        &store,
        run,
        0,
        "interrupted",
        Shape::new(4, 100, 1, 1),
        StepStatus::Interrupted,
    );
    add_unrun_step(
        &store,
        run,
        1,
        "skipped",
        Shape::new(4, 100, 1, 1),
        StepStatus::Skipped,
    );
    finish_run(&store, run, RunStatus::Interrupted);
    let report = RunReport::load(&store, run).unwrap();
    let out = render_report(&report);
    assert!(out.charts.is_empty());
    assert_self_contained(&out.index_html);
    let html = &out.index_html;
    assert!(html.contains("status-interrupted"));
    assert!(html.contains("skipped: stop_latency_ms 5 passed"));
    assert!(html.contains("2 step(s), 0 with results"));
}

#[test]
fn a_missing_run_is_an_error() {
    let store = Store::open_in_memory().unwrap();
    let err = RunReport::load(&store, iorig_store::RunId(42)).unwrap_err();
    assert_eq!(err.to_string(), "no run 42 in the result store");
}

/// A lasting drop while the load generator was the limit reaches the page
/// as that, never as a write cliff.
#[test]
fn a_generator_limited_dip_is_said_as_such_not_as_a_cliff() {
    let store = Store::open_in_memory().unwrap();
    let run = single_run(&store);
    let step = store.steps(run).unwrap()[0].id;
    let body = serde_json::json!({
        "found": false, "cliff": null,
        "generator_dip": {"start_t_s": 40.0, "end_t_s": 43.0, "level_before_iops": 50000.0,
                          "level_during_iops": 30000.0, "cpu_busy_max_pct": 98.0,
                          "worker_busy_max_pct": 40.0}
    });
    store
        .put_analysis(
            run,
            Some(step),
            &iorig_result::Finding::from_stored("write_cliff", &body.to_string()).unwrap(),
        )
        .unwrap();
    let report = RunReport::load(&store, run).unwrap();
    let html = render_report(&report).index_html;
    assert!(
        html.contains(
            "IOPS fell while the load generator was the limit</span> from 40.0 s to 43.0 s"
        ),
        "the dip is named: {}",
        html.lines()
            .filter(|l| l.contains("cliff") || l.contains("generator"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(html.contains("host CPU up to 98 %"));
    assert!(!html.contains("write cliff</span>"), "and no cliff is");
}
