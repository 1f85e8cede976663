//! Protects the CSV export (docs/export.md): the steps file has one row per
//! step with every parameter as its own column (preferred ones first, the
//! rest alphabetically), the summary and the key analysis figures; the
//! intervals file has one row per step, interval and operation, warmup
//! included; fields with commas are quoted so the files parse back with the
//! same number of fields on every line. The snapshots pin every column name
//! and the number formats.

#![allow(clippy::unwrap_used)]

use crate::export_fixture;

use iorig_report::export::export_csv;
use iorig_report::ReportError;
use iorig_store::RunId;

fn records(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let header = r.headers().unwrap().iter().map(str::to_owned).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (header, rows)
}

#[test]
fn steps_csv_has_a_row_per_step_and_every_parameter() {
    let (store, run) = export_fixture::store_with_run();
    let csv = export_csv(&store, run).unwrap();
    let (header, rows) = records(&csv.steps_csv);
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.len() == header.len()));

    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    // Fixed head, then the preferred parameters in order, then the others
    // alphabetically (fault only exists in step 2).
    assert_eq!(
        header[..15],
        [
            "run_id",
            "step_index",
            "name",
            "role",
            "status",
            "started",
            "ended",
            "bs",
            "bs_bytes",
            "read_pct",
            "random_pct",
            "qd",
            "threads",
            "rate_iops",
            "engine"
        ]
    );
    assert!(col("align_bytes") < col("fault") && col("fault") < col("targets"));
    assert!(col("targets") < col("duration_s"));

    assert_eq!(rows[2][col("name")], export_fixture::STEP_NAMES[2]);
    assert_eq!(rows[0][col("bs_bytes")], "131072");
    assert_eq!(
        rows[2][col("bs_bytes")],
        "",
        "a size mix has no single size"
    );
    assert_eq!(rows[2][col("bs")], "4k:50,8k:50");
    assert_eq!(rows[2][col("fault")], "eio:0.001,delay:5ms");
    assert_eq!(rows[0][col("fault")], "");
    assert_eq!(rows[2][col("rate_iops")], "50000");
    assert_eq!(rows[1][col("rate_iops")], "");
    assert_eq!(rows[1][col("total_iops")], "100020.000");
    assert_eq!(rows[1][col("read_lat_p99_9_ns")], "2560000");
    assert_eq!(rows[2][col("total_service_lat_p99_ns")], "240000");
    assert_eq!(rows[1][col("total_service_lat_p99_ns")], "");
    assert_eq!(rows[2][col("issue_lag_p99_ns")], "8000");
    assert_eq!(rows[2][col("issue_lag_max_ns")], "40000");
    assert_eq!(rows[1][col("issue_lag_p50_ns")], "");
    assert_eq!(rows[1][col("steady_state_reached")], "true");
    assert_eq!(rows[1][col("steady_state_rounds")], "3");
    assert_eq!(rows[1][col("generator_bound")], "false");
    assert_eq!(rows[2][col("write_cliff_found")], "true");
    assert_eq!(rows[2][col("write_cliff_drop_pct")], "46.67");
    assert_eq!(rows[0][col("write_cliff_onset_t_s")], "");
    assert_eq!(rows[2][col("outage_total_s")], "1.000");
    assert_eq!(rows[2][col("errors")], "3");
    assert_eq!(rows[2][col("status")], "interrupted");

    insta::assert_snapshot!("steps_csv", csv.steps_csv);
}

#[test]
fn intervals_csv_has_a_row_per_interval_and_op() {
    let (store, run) = export_fixture::store_with_run();
    let csv = export_csv(&store, run).unwrap();
    let (header, rows) = records(&csv.intervals_csv);
    // (2 + 4 + 3 intervals) × (read, write, total).
    assert_eq!(rows.len(), 27);
    assert!(rows.iter().all(|r| r.len() == header.len()));
    assert_eq!(
        header[..8],
        [
            "run_id",
            "step_index",
            "step_name",
            "seq",
            "t_s",
            "duration_s",
            "warmup",
            "op"
        ]
    );
    let warm: Vec<_> = rows.iter().filter(|r| r[6] == "true").collect();
    assert_eq!(warm.len(), 3);
    assert!(warm.iter().all(|r| r[1] == "1" && r[3] == "0"));
    // The step name with a comma is quoted in the text, whole after parsing.
    assert!(csv.intervals_csv.contains("\"mixed 70/30, 50% of max\""));
    assert_eq!(rows[26][2], "mixed 70/30, 50% of max");

    insta::assert_snapshot!("intervals_csv", csv.intervals_csv);
}

#[test]
fn a_missing_run_is_named() {
    let (store, _) = export_fixture::store_with_run();
    let err = export_csv(&store, RunId(99)).unwrap_err();
    assert!(matches!(err, ReportError::NoSuchRun(99)), "{err}");
}

/// The intervals CSV written a page at a time is the one `export_csv`
/// gives, byte for byte.
#[test]
fn the_streamed_intervals_csv_is_the_whole_one() {
    let (store, run) = export_fixture::store_with_run();
    let mut streamed = Vec::new();
    iorig_report::export::write_intervals_csv(&store, run, &mut streamed).unwrap();
    let whole = export_csv(&store, run).unwrap().intervals_csv;
    assert_eq!(String::from_utf8(streamed).unwrap(), whole);
    assert_eq!(whole.lines().count(), 28);
}
