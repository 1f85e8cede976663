//! Protects what the reports and `plan resume` rely on: everything written
//! reads back the same (runs, labels, facts, steps with their searchable
//! columns, intervals, analysis), stored histograms merge to the same
//! percentiles as the originals, re-storing a step reuses its row, deleting
//! a run removes everything under it, and writes under a missing run or step
//! fail with a clear error.

#![allow(clippy::unwrap_used)]

use crate::common;
use crate::common::*;

use iorig_result::TargetKind;
use iorig_stats::sampler::system::{SystemFacts, TargetFacts};
use iorig_stats::{CpuUsage, LatencyHistogram};
use iorig_store::{
    HistKind, IntervalRow, NewStep, Op, RunId, RunKind, StepRole, Store, StoreError,
};
use rusqlite::Connection;

#[test]
fn run_steps_intervals_labels_analysis_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iorig.db");
    let (_, s0, s1) =
        common::round_trip(Store::open(&path).unwrap(), || Store::open(&path).unwrap());
    // Searchable columns come from the record.
    let conn = Connection::open(&path).unwrap();
    let cols = |id: i64| -> (Option<String>, Option<i64>, f64, f64, i64, i64, Option<f64>) {
        conn.query_row(
            "SELECT bs, bs_bytes, read_pct, random_pct, qd, threads, rate_iops FROM steps WHERE id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)),
        )
        .unwrap()
    };
    assert_eq!(
        cols(s0.0),
        (
            Some("8k".into()),
            Some(8192),
            70.0,
            50.0,
            16,
            4,
            Some(2000.0)
        )
    );
    let (bs, bs_bytes, read_pct, _, qd, threads, rate) = cols(s1.0);
    assert_eq!(bs.as_deref(), Some("4k:50,64k:50"));
    assert_eq!(
        (bs_bytes, read_pct, qd, threads, rate),
        (None, 0.0, 1, 1, None)
    );
}

#[test]
fn a_corrupt_stored_histogram_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iorig.db");
    let store = Store::open(&path).unwrap();
    let run = store
        .create_run(&new_run(RunKind::Run, "2026-01-01T00:00:00Z"))
        .unwrap();
    let step = store
        .upsert_step(
            run,
            &NewStep {
                index: 0,
                name: "s",
                role: StepRole::Run,
                params: None,
            },
        )
        .unwrap();
    store
        .put_histogram(step, Op::Read, HistKind::Lat, &LatencyHistogram::new())
        .unwrap();
    Connection::open(&path)
        .unwrap()
        .execute("UPDATE histograms SET data = x'00112233'", [])
        .unwrap();
    let err = store.histogram(step, Op::Read, HistKind::Lat).unwrap_err();
    assert!(matches!(err, StoreError::BadHistogram { .. }), "{err:?}");
    assert!(err.to_string().contains("read lat"), "{err}");
}

/// Rows under `run` in every table that holds run data.
fn rows_of_run(conn: &Connection, run: RunId) -> Vec<(&'static str, i64)> {
    let by_run = "SELECT COUNT(*) FROM {} WHERE run_id = ?1";
    let by_step =
        "SELECT COUNT(*) FROM {} WHERE step_id IN (SELECT id FROM steps WHERE run_id = ?1)";
    [
        ("runs", "SELECT COUNT(*) FROM runs WHERE id = ?1"),
        ("run_labels", by_run),
        ("system_facts", by_run),
        ("target_facts", by_run),
        ("steps", by_run),
        ("analysis", by_run),
        ("intervals", by_step),
        ("histograms", by_step),
    ]
    .into_iter()
    .map(|(table, sql)| {
        let sql = sql.replace("{}", table);
        let n: i64 = conn.query_row(&sql, [run.0], |r| r.get(0)).unwrap();
        (table, n)
    })
    .collect()
}

#[test]
fn delete_cascades_to_everything_under_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iorig.db");
    let store = Store::open(&path).unwrap();
    let fill = |started: &str| {
        let run = store.create_run(&new_run(RunKind::Plan, started)).unwrap();
        store
            .record_system_facts(run, &SystemFacts::default())
            .unwrap();
        store
            .record_target_facts(
                run,
                "/tmp/x",
                Some(TargetKind::File),
                Some(1),
                &TargetFacts::default(),
            )
            .unwrap();
        let step = store
            .upsert_step(
                run,
                &NewStep {
                    index: 0,
                    name: "s",
                    role: StepRole::Run,
                    params: Some(&params("")),
                },
            )
            .unwrap();
        let rows = IntervalRow::rows_of(0, 1.0, 1.0, false, &stats(3), CpuUsage::default(), None);
        store.add_intervals(step, &rows).unwrap();
        store
            .put_histogram(step, Op::Total, HistKind::Lat, &stats(3).total().lat)
            .unwrap();
        store.put_analysis(run, Some(step), &finding("1")).unwrap();
        store.put_analysis(run, None, &finding("2")).unwrap();
        run
    };
    let doomed = fill("2026-01-01T00:00:00Z");
    let kept = fill("2026-01-02T00:00:00Z");
    let conn = Connection::open(&path).unwrap();
    assert!(rows_of_run(&conn, doomed).iter().all(|(_, n)| *n > 0));

    store.delete_run(doomed).unwrap();
    for (table, n) in rows_of_run(&conn, doomed) {
        assert_eq!(n, 0, "{table} kept rows of the deleted run");
    }
    for (table, n) in rows_of_run(&conn, kept) {
        assert!(n > 0, "{table} lost rows of the other run");
    }
    assert!(matches!(
        store.delete_run(doomed),
        Err(StoreError::NoSuchRun(_))
    ));
    assert_eq!(store.list_runs().unwrap().len(), 1);
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn runs_are_listed_oldest_first_with_labels() {
    common::runs_are_listed_oldest_first_with_labels(&Store::open_in_memory().unwrap());
}

#[test]
fn upsert_reuses_the_step_and_resume_finds_the_first_incomplete() {
    common::upsert_reuses_the_step_and_resume_finds_the_first_incomplete(
        &Store::open_in_memory().unwrap(),
    );
}

#[test]
fn stored_histograms_merge_like_the_originals() {
    common::stored_histograms_merge_like_the_originals(&Store::open_in_memory().unwrap());
}

#[test]
fn writes_under_a_missing_run_or_step_say_so() {
    common::writes_under_a_missing_run_or_step_say_so(&Store::open_in_memory().unwrap());
}

#[test]
fn a_label_the_store_does_not_take_writes_nothing() {
    common::a_label_the_store_does_not_take_writes_nothing(&Store::open_in_memory().unwrap());
}

#[test]
fn push_copies_once_and_replaces_a_running_copy() {
    common::push_copies_once_and_replaces_a_running_copy(
        &Store::open_in_memory().unwrap(),
        &Store::open_in_memory().unwrap(),
    );
}
