//! Protects the XLSX export (docs/export.md): the workbook opens, has the
//! sheets `steps`, `intervals` and `run`; `steps` has the same header as the
//! steps CSV and one row per step, with numbers stored as numbers (so sums,
//! pivots and slicers work without conversion) and booleans as booleans;
//! `intervals` holds every interval row; `run` holds the run's facts as
//! key/value rows; both data sheets are Excel Tables.

#![allow(clippy::unwrap_used)]

use crate::export_fixture;

use calamine::{open_workbook, Data, Reader, Xlsx};
use iorig_report::export::{export_csv, export_xlsx_bytes};

#[test]
fn xlsx_has_three_sheets_with_typed_cells() {
    let (store, run) = export_fixture::store_with_run();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.xlsx");
    std::fs::write(&path, export_xlsx_bytes(&store, run).unwrap()).unwrap();

    let mut book: Xlsx<_> = open_workbook(&path).unwrap();
    assert_eq!(book.sheet_names(), ["steps", "intervals", "run"]);

    // The steps sheet: the CSV's header, one row per step.
    let csv = export_csv(&store, run).unwrap();
    let csv_header: Vec<String> = csv::Reader::from_reader(csv.steps_csv.as_bytes())
        .headers()
        .unwrap()
        .iter()
        .map(str::to_owned)
        .collect();
    let steps = book.worksheet_range("steps").unwrap();
    let rows: Vec<&[Data]> = steps.rows().collect();
    assert_eq!(rows.len(), 4, "header and three steps");
    let header: Vec<String> = rows[0].iter().map(|c| c.to_string()).collect();
    assert_eq!(header, csv_header);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for (i, row) in rows[1..].iter().enumerate() {
        assert_eq!(row[col("step_index")], Data::Float(i as f64));
        assert_eq!(
            row[col("name")],
            Data::String(export_fixture::STEP_NAMES[i].to_owned())
        );
        for name in [
            "qd",
            "threads",
            "read_pct",
            "total_iops",
            "total_lat_p99_ns",
            "cpu_sys_pct",
        ] {
            assert!(
                matches!(row[col(name)], Data::Float(_)),
                "{name} of step {i} is {:?}",
                row[col(name)]
            );
        }
    }
    assert_eq!(rows[2][col("total_iops")], Data::Float(100_020.0));
    assert_eq!(rows[1][col("bs_bytes")], Data::Float(131_072.0));
    assert_eq!(rows[3][col("bs_bytes")], Data::Empty);
    assert_eq!(rows[3][col("bs")], Data::String("4k:50,8k:50".into()));
    assert_eq!(rows[2][col("steady_state_reached")], Data::Bool(true));
    assert_eq!(rows[1][col("rate_iops")], Data::Empty);
    assert_eq!(rows[3][col("rate_iops")], Data::Float(50_000.0));

    // The intervals sheet: header and 27 rows.
    let intervals = book.worksheet_range("intervals").unwrap();
    assert_eq!(intervals.rows().count(), 28);
    let ih: Vec<String> = intervals
        .rows()
        .next()
        .unwrap()
        .iter()
        .map(|c| c.to_string())
        .collect();
    assert_eq!(
        ih[..8],
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
    let first = intervals.rows().nth(1).unwrap();
    assert!(matches!(
        first[ih.iter().position(|h| h == "lat_p99_ns").unwrap()],
        Data::Float(_)
    ));

    // The run sheet: key/value rows.
    let runs = book.worksheet_range("run").unwrap();
    let kv: Vec<(String, Data)> = runs
        .rows()
        .map(|r| (r[0].to_string(), r.get(1).cloned().unwrap_or(Data::Empty)))
        .collect();
    let get = |k: &str| kv.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
    assert_eq!(kv[0].0, "key");
    assert_eq!(get("id"), Some(Data::Float(run.0 as f64)));
    assert_eq!(get("kind"), Some(Data::String("plan".into())));
    assert_eq!(get("status"), Some(Data::String("interrupted".into())));
    assert_eq!(get("host"), Some(Data::String("rig1".into())));
    assert_eq!(get("label.fw"), Some(Data::String("2.1, beta".into())));
    assert_eq!(get("system.cpu_count"), Some(Data::Float(16.0)));
    assert_eq!(
        get("target.0.path"),
        Some(Data::String("/dev/zram0".into()))
    );
    assert_eq!(
        get("target.0.size_bytes"),
        Some(Data::Float((1u64 << 30) as f64))
    );
    for k in [
        "started",
        "ended",
        "tool_version",
        "command_line",
        "analysis.0.curve",
        "plan",
    ] {
        assert!(get(k).is_some(), "no {k} row");
    }

    // Both data sheets are Excel Tables (what makes pivots and slicers
    // work directly).
    book.load_tables().unwrap();
    let mut tables = book.table_names().into_iter().cloned().collect::<Vec<_>>();
    tables.sort();
    assert_eq!(tables, ["intervals", "steps"]);
}

#[test]
fn bytes_and_file_are_the_same_workbook() {
    let (store, run) = export_fixture::store_with_run();
    let bytes = export_xlsx_bytes(&store, run).unwrap();
    let mut book = Xlsx::new(std::io::Cursor::new(bytes)).unwrap();
    assert_eq!(book.sheet_names(), ["steps", "intervals", "run"]);
    assert_eq!(book.worksheet_range("steps").unwrap().rows().count(), 4);
}
