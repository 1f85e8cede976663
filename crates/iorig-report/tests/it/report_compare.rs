//! Protects `iorig compare`: steps are matched across runs by their shape
//! (block size, read/random %, qd, threads, rate or curve role; not seed or
//! time), the % changes against the first run are right, steps only one run
//! has stay unmatched, the terminal table lists them, and the page overlays
//! the runs' curves and scaling charts (one line per run).

#![allow(clippy::unwrap_used)]

use crate::report_support::*;
use iorig_report::charts::svg_to_png;
use iorig_report::html::{beyond_noise, render_compare, Change, StepKey};
use iorig_report::model::RunReport;
use iorig_store::Store;

fn key(bs: &str, read: i64, qd: u32, threads: u32) -> StepKey {
    StepKey {
        bs: bs.to_owned(),
        read_permille: read * 10,
        trim_permille: 0,
        random_permille: 1000,
        qd,
        threads,
        rate: "max".to_owned(),
        tree: None,
        occurrence: 0,
    }
}

/// The noise rule, worked by hand: means 100 and 101.4 with variances 2.5
/// and 4.3 over 5 intervals each differ by 1.4, under 2·√(2.5/5 + 4.3/5) =
/// 2.33: within noise; means 100 and 110 differ beyond it. One interval
/// gives no spread: never beyond noise.
#[test]
fn a_change_counts_only_beyond_twice_the_standard_error() {
    let a = [100.0, 102.0, 98.0, 101.0, 99.0];
    assert!(!beyond_noise(&a, &[103.0, 101.0, 99.0, 104.0, 100.0]));
    assert!(beyond_noise(&a, &[110.0, 112.0, 108.0, 111.0, 109.0]));
    assert!(
        beyond_noise(&[110.0, 112.0, 108.0, 111.0, 109.0], &a),
        "either direction"
    );
    assert!(!beyond_noise(&[100.0], &[200.0]));
}

#[test]
fn compare_matches_steps_and_computes_changes() {
    let store = Store::open_in_memory().unwrap();
    // Run b's device is half as fast where bandwidth limits: 64k steps
    // lose half their IOPS (and latency doubles); 4k reads on one thread
    // are latency-bound and do not change.
    let a = matrix_plan(&store, 1.0);
    let b = matrix_plan(&store, 0.5);
    let reports = [
        RunReport::load(&store, a).unwrap(),
        RunReport::load(&store, b).unwrap(),
    ];
    let (out, cmp) = render_compare(&reports);
    assert_eq!(cmp.runs, [a, b]);
    // precondition + 8 matrix steps, in both runs.
    assert_eq!(cmp.steps.len(), 9);
    assert!(cmp
        .steps
        .iter()
        .all(|s| s.per_run.iter().all(Option::is_some)));

    let find = |k: &StepKey| cmp.steps.iter().find(|s| &s.key == k).unwrap();
    let slow = find(&key("64k", 70, 8, 4));
    let base = slow.per_run[0].as_ref().unwrap();
    assert!(base.change.is_none());
    let ch = slow.per_run[1].as_ref().unwrap().change.unwrap();
    let near = |v: Option<Change>, want: f64| (v.unwrap().pct - want).abs() < 1.0;
    assert!(near(ch.iops, -50.0), "{ch:?}");
    assert!(near(ch.bw, -50.0), "{ch:?}");
    assert!(near(ch.mean_lat, 100.0), "{ch:?}");
    assert!(near(ch.p99_lat, 100.0), "{ch:?}");
    assert!(ch.iops.unwrap().beyond_noise, "{ch:?}");
    let same = find(&key("4k", 100, 8, 1)).per_run[1]
        .as_ref()
        .unwrap()
        .change
        .unwrap();
    assert!(near(same.iops, 0.0), "{same:?}");
    assert!(!same.iops.unwrap().beyond_noise, "{same:?}");

    let lines = cmp.table_lines();
    // A line per step and run, then the rule the changes are judged by.
    assert_eq!(lines.len(), 1 + 9 * 2 + 2);
    assert!(lines.last().unwrap().contains("within noise"), "{lines:#?}");
    assert!(lines[0].starts_with("step"));
    // Rows carry the steps' names when the runs agree on them (a plan's
    // labels, quick's fill, seq-write, ...), else their shape.
    let name = slow.name.clone().expect("both runs name the step alike");
    assert_eq!(slow.label(), name);
    assert!(lines.iter().any(|l| l.contains(&name)), "{lines:#?}");
    assert_eq!(slow.key.label(), "64k read 70% random 100% qd 8 t4 max");
    assert!(lines.iter().any(|l| l.contains("-50.0%")), "{lines:#?}");

    insta::assert_snapshot!("compare_structure", structure(&out.index_html));
    assert_self_contained(&out.index_html);
    for c in &out.charts {
        assert_eq!(&svg_to_png(&c.svg).unwrap()[..4], b"\x89PNG");
    }
}

#[test]
fn compare_overlays_curves_and_leaves_unmatched_steps_apart() {
    let store = Store::open_in_memory().unwrap();
    let a = curve_plan(&store, 1.0);
    let b = curve_plan(&store, 0.8);
    let c = single_run(&store);
    let reports: Vec<RunReport> = [a, b, c]
        .iter()
        .map(|r| RunReport::load(&store, *r).unwrap())
        .collect();
    let (out, cmp) = render_compare(&reports);
    // Curve steps match by role even though their rates differ.
    let curve50 = cmp
        .steps
        .iter()
        .find(|s| s.key.rate == "curve-50%")
        .unwrap();
    assert!(curve50.per_run[0].is_some() && curve50.per_run[1].is_some());
    assert!(curve50.per_run[2].is_none());
    // The single run's step is only in the third run.
    let single = cmp
        .steps
        .iter()
        .find(|s| s.key.qd == 8 && s.key.threads == 2)
        .unwrap();
    assert_eq!(single.per_run.iter().filter(|m| m.is_some()).count(), 1);
    assert!(single.per_run[2].as_ref().unwrap().change.is_none());

    let curve = out
        .charts
        .iter()
        .find(|c| c.file_stem == "compare-curve-1")
        .unwrap();
    assert!(curve.svg.contains(&format!("run {a} mean")));
    assert!(curve.svg.contains(&format!("run {b} mean")));
    assert!(out.index_html.contains("not run"));
}

/// Steps that differ only in their trims are different steps: the key and
/// its label say so.
#[test]
fn trims_are_part_of_a_steps_identity() {
    let plain = key("4k", 50, 8, 1);
    let trimmed = StepKey {
        trim_permille: 250,
        ..plain.clone()
    };
    assert_ne!(plain, trimmed);
    assert!(
        trimmed.label().contains("read 50% trim 25%"),
        "{}",
        trimmed.label()
    );
    assert!(!plain.label().contains("trim"));
}
