//! The steps table and the intervals table of a run: the rows and columns of
//! both CSV files and of the `steps` and `intervals` XLSX sheets.

use super::{Cell, Column, Fmt, RunData, StepData, Table};
use iorig_store::IntervalRow;
use serde_json::Value;
use std::collections::BTreeSet;

/// Parameters shown first, in this order, because they are what a reader
/// pivots on; every other parameter follows alphabetically.
const PREFERRED_PARAMS: [&str; 8] = [
    "bs",
    "bs_bytes",
    "read_pct",
    "random_pct",
    "qd",
    "threads",
    "rate_iops",
    "engine",
];

/// The columns of the steps table before the parameters.
const STEP_HEAD: [(&str, Fmt); 7] = [
    ("run_id", Fmt::Int),
    ("step_index", Fmt::Int),
    ("name", Fmt::Plain),
    ("role", Fmt::Plain),
    ("status", Fmt::Plain),
    ("started", Fmt::Plain),
    ("ended", Fmt::Plain),
];

/// Summary operations, in column order: total first, as the figure most
/// often looked at.
const SUMMARY_OPS: [&str; 3] = ["total", "read", "write"];

/// Latency figures of the summary per operation (the keys of `lat_ns`).
const SUMMARY_LAT: [&str; 6] = ["mean", "p50", "p90", "p99", "p99_9", "max"];

/// One column of the steps table after the parameters: its name, format and
/// where its value comes from.
struct Figure {
    name: String,
    fmt: Fmt,
    value: Box<dyn Fn(&StepData) -> Cell>,
}

fn figure(
    name: impl Into<String>,
    fmt: Fmt,
    value: impl Fn(&StepData) -> Cell + 'static,
) -> Figure {
    Figure {
        name: name.into(),
        fmt,
        value: Box::new(value),
    }
}

/// The value at `path` inside `v`, as a cell (empty when absent).
fn at(v: Option<&Value>, path: &[&str]) -> Cell {
    let mut cur = v;
    for key in path {
        cur = cur.and_then(|c| c.get(key));
    }
    cur.map_or(Cell::Empty, Cell::from_json)
}

/// The summary and analysis columns of the steps table.
fn figures() -> Vec<Figure> {
    let summary = |path: Vec<&'static str>| move |s: &StepData| at(s.step.summary.as_ref(), &path);
    let mut out = vec![figure(
        "duration_s",
        Fmt::Dec(3),
        summary(vec!["duration_s"]),
    )];
    for op in SUMMARY_OPS {
        out.push(figure(
            format!("{op}_ops"),
            Fmt::Count,
            summary(vec![op, "ops"]),
        ));
        out.push(figure(
            format!("{op}_bytes"),
            Fmt::Count,
            summary(vec![op, "bytes"]),
        ));
        out.push(figure(
            format!("{op}_iops"),
            Fmt::Dec(3),
            summary(vec![op, "iops"]),
        ));
        out.push(figure(
            format!("{op}_bw_bytes_per_s"),
            Fmt::Dec(1),
            summary(vec![op, "bw_bytes_per_s"]),
        ));
        for lat in SUMMARY_LAT {
            out.push(figure(
                format!("{op}_lat_{lat}_ns"),
                Fmt::Count,
                summary(vec![op, "lat_ns", lat]),
            ));
        }
    }
    // Under a rate limit the latency above counts from the scheduled start;
    // the service latency (from actual submission) tells the device's share.
    for lat in ["mean", "p99"] {
        out.push(figure(
            format!("total_service_lat_{lat}_ns"),
            Fmt::Count,
            summary(vec!["total", "service_lat_ns", lat]),
        ));
    }
    out.push(figure(
        "cpu_usr_pct",
        Fmt::Dec(2),
        summary(vec!["cpu", "usr_pct"]),
    ));
    out.push(figure(
        "cpu_sys_pct",
        Fmt::Dec(2),
        summary(vec!["cpu", "sys_pct"]),
    ));
    out.push(figure("errors", Fmt::Count, summary(vec!["errors"])));

    let analysis = |kind: &'static str, path: Vec<&'static str>| {
        move |s: &StepData| at(s.analysis(kind), &path)
    };
    out.extend([
        figure(
            "steady_state_reached",
            Fmt::Plain,
            analysis("steady_state", vec!["reached"]),
        ),
        figure(
            "steady_state_rounds",
            Fmt::Int,
            analysis("steady_state", vec!["rounds"]),
        ),
        figure(
            "generator_bound",
            Fmt::Plain,
            analysis("generator_bound", vec!["generator_bound"]),
        ),
        figure(
            "in_flight_ratio",
            Fmt::Dec(3),
            analysis("generator_bound", vec!["in_flight_ratio"]),
        ),
        figure(
            "write_cliff_found",
            Fmt::Plain,
            analysis("write_cliff", vec!["found"]),
        ),
        figure(
            "write_cliff_onset_t_s",
            Fmt::Dec(3),
            analysis("write_cliff", vec!["cliff", "onset_t_s"]),
        ),
        figure(
            "write_cliff_drop_pct",
            Fmt::Dec(2),
            analysis("write_cliff", vec!["cliff", "drop_pct"]),
        ),
        figure(
            "outage_intervals",
            Fmt::Int,
            analysis("outages", vec!["outage_intervals"]),
        ),
        figure(
            "outage_total_s",
            Fmt::Dec(3),
            analysis("outages", vec!["total_outage_s"]),
        ),
    ]);
    out
}

/// The parameter keys of all steps: the preferred ones present, then the
/// others alphabetically.
fn param_keys(data: &RunData) -> Vec<String> {
    let all: BTreeSet<&str> = data
        .steps
        .iter()
        .filter_map(|s| s.step.params.as_object())
        .flat_map(|o| o.keys().map(String::as_str))
        .collect();
    let mut keys: Vec<String> = PREFERRED_PARAMS
        .iter()
        .filter(|k| all.contains(*k))
        .map(|k| (*k).to_owned())
        .collect();
    keys.extend(
        all.iter()
            .filter(|k| !PREFERRED_PARAMS.contains(k))
            .map(|k| (*k).to_owned()),
    );
    keys
}

/// A parameter as a cell. `bs_bytes` is the list of sizes and weights; its
/// column holds the size when there is one, and stays empty for a mix (the
/// `bs` column spells the mix out).
fn param_cell(key: &str, v: Option<&Value>) -> Cell {
    match (key, v) {
        ("bs_bytes", Some(Value::Array(sizes))) => match sizes.as_slice() {
            [one] => at(Some(one), &["size_bytes"]),
            _ => Cell::Empty,
        },
        (_, Some(v)) => Cell::from_json(v),
        (_, None) => Cell::Empty,
    }
}

/// One row per step (docs/export.md, "Steps").
pub(super) fn steps_table(data: &RunData) -> Table {
    let figures = figures();
    let keys = param_keys(data);
    let mut columns: Vec<Column> = STEP_HEAD
        .iter()
        .map(|(name, fmt)| Column {
            name: (*name).to_owned(),
            fmt: *fmt,
        })
        .collect();
    // A parameter named like one of our own columns keeps its value under
    // `param_NAME`, so every column name stays unique (XLSX tables need it).
    let taken: BTreeSet<String> = columns
        .iter()
        .map(|c| c.name.clone())
        .chain(figures.iter().map(|f| f.name.clone()))
        .collect();
    columns.extend(keys.iter().map(|k| Column {
        name: if taken.contains(k) {
            format!("param_{k}")
        } else {
            k.clone()
        },
        fmt: Fmt::Plain,
    }));
    columns.extend(figures.iter().map(|f| Column {
        name: f.name.clone(),
        fmt: f.fmt,
    }));

    let run_id = data.detail.run.id.0;
    let rows = data
        .steps
        .iter()
        .map(|s| {
            let st = &s.step;
            let mut row = vec![
                Cell::Int(run_id),
                Cell::Int(st.index),
                Cell::Text(st.name.clone()),
                Cell::Text(st.role.clone()),
                Cell::Text(st.status.as_str().to_owned()),
                st.started.clone().map_or(Cell::Empty, Cell::Text),
                st.ended.clone().map_or(Cell::Empty, Cell::Text),
            ];
            row.extend(keys.iter().map(|k| param_cell(k, st.params.get(k))));
            row.extend(figures.iter().map(|f| (f.value)(s)));
            row
        })
        .collect();
    Table { columns, rows }
}

/// The columns of the intervals table.
const INTERVAL_COLUMNS: [(&str, Fmt); 28] = [
    ("run_id", Fmt::Int),
    ("step_index", Fmt::Int),
    ("step_name", Fmt::Plain),
    ("seq", Fmt::Int),
    ("t_s", Fmt::Dec(3)),
    ("duration_s", Fmt::Dec(3)),
    ("warmup", Fmt::Plain),
    ("op", Fmt::Plain),
    ("ops", Fmt::Count),
    ("bytes", Fmt::Count),
    ("iops", Fmt::Dec(3)),
    ("bw_bytes_per_s", Fmt::Dec(1)),
    ("lat_min_ns", Fmt::Count),
    ("lat_mean_ns", Fmt::Count),
    ("lat_stddev_ns", Fmt::Count),
    ("lat_max_ns", Fmt::Count),
    ("lat_p50_ns", Fmt::Count),
    ("lat_p90_ns", Fmt::Count),
    ("lat_p99_ns", Fmt::Count),
    ("lat_p99_9_ns", Fmt::Count),
    ("lat_p99_99_ns", Fmt::Count),
    ("errors", Fmt::Count),
    ("cpu_usr_pct", Fmt::Dec(2)),
    ("cpu_sys_pct", Fmt::Dec(2)),
    ("device_util_pct", Fmt::Dec(2)),
    ("device_queue_depth", Fmt::Dec(3)),
    ("device_read_await_ns", Fmt::Count),
    ("device_write_await_ns", Fmt::Count),
];

fn interval_cells(run_id: i64, s: &StepData, i: &IntervalRow) -> Vec<Cell> {
    let l = &i.lat_ns;
    let mut row = vec![
        Cell::Int(run_id),
        Cell::Int(s.step.index),
        Cell::Text(s.step.name.clone()),
        Cell::UInt(i.seq),
        Cell::Float(i.t_s),
        Cell::Float(i.duration_s),
        Cell::Bool(i.warmup),
        Cell::Text(i.op.as_str().to_owned()),
        Cell::UInt(i.ops),
        Cell::UInt(i.bytes),
        Cell::Float(i.iops),
        Cell::Float(i.bw_bytes_per_s),
    ];
    row.extend(
        [
            l.min, l.mean, l.stddev, l.max, l.p50, l.p90, l.p99, l.p99_9, l.p99_99, i.errors,
        ]
        .map(Cell::UInt),
    );
    row.push(Cell::Float(i.cpu_usr_pct));
    row.push(Cell::Float(i.cpu_sys_pct));
    match &i.device {
        Some(d) => row.extend([
            Cell::Float(d.util_pct),
            Cell::Float(d.queue_depth),
            Cell::UInt(d.read_await_ns),
            Cell::UInt(d.write_await_ns),
        ]),
        None => row.extend(std::iter::repeat_n(Cell::Empty, 4)),
    }
    row
}

/// One row per step, interval and operation (docs/export.md, "Intervals").
pub(super) fn intervals_table(data: &RunData) -> Table {
    let run_id = data.detail.run.id.0;
    Table {
        columns: INTERVAL_COLUMNS
            .iter()
            .map(|(name, fmt)| Column {
                name: (*name).to_owned(),
                fmt: *fmt,
            })
            .collect(),
        rows: data
            .steps
            .iter()
            .flat_map(|s| {
                s.intervals
                    .iter()
                    .map(move |i| interval_cells(run_id, s, i))
            })
            .collect(),
    }
}
