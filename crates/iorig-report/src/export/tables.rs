//! The steps table and the intervals table of a run: the rows and columns of
//! both CSV files and of the `steps` and `intervals` XLSX sheets.

use super::{csv_writer, Cell, Column, Fmt, RunData, StepData, Table};
use crate::ReportError;
use iorig_result::{Finding, FsOp, LatSummary, Op, OpSummary, Summary};
use iorig_spec::{headline, key};
use iorig_store::{IntervalPages, IntervalRow, Store, INTERVAL_PAGE};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::io::Write;

/// Parameters shown first, in this order, because they are what a reader
/// pivots on; every other parameter follows alphabetically.
const PREFERRED_PARAMS: [&str; 8] = [
    key::bs,
    headline::BS.column,
    headline::READ.column,
    headline::RANDOM.column,
    headline::QD.column,
    headline::THREADS.column,
    headline::RATE.column,
    key::engine,
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
const SUMMARY_OPS: [Op; 3] = [Op::Total, Op::Read, Op::Write];

/// Latency figures of the summary per operation, in column order.
/// One latency figure's name and where it is in a [`LatSummary`].
type LatFigure = (&'static str, fn(&LatSummary) -> u64);

const SUMMARY_LAT: [LatFigure; 6] = [
    ("mean", |l| l.mean),
    ("p50", |l| l.p50),
    ("p90", |l| l.p90),
    ("p99", |l| l.p99),
    ("p99_9", |l| l.p99_9),
    ("max", |l| l.max),
];

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

fn op_summary(s: &Summary, op: Op) -> &OpSummary {
    static NONE: std::sync::LazyLock<OpSummary> = std::sync::LazyLock::new(OpSummary::default);
    match op {
        Op::Read => &s.read,
        Op::Write => &s.write,
        Op::Trim => s.trim.as_ref().unwrap_or(&NONE),
        Op::Total => &s.total,
        other => other.fs().and_then(|f| s.fs_ops.get(&f)).unwrap_or(&NONE),
    }
}

/// A column from the step's I/O summary (empty for a step without one).
fn from_summary(f: impl Fn(&Summary) -> Cell + 'static) -> impl Fn(&StepData) -> Cell + 'static {
    move |s: &StepData| {
        s.step
            .summary
            .as_ref()
            .and_then(|x| x.io())
            .map_or(Cell::Empty, &f)
    }
}

/// A column from one of the step's findings (empty when absent).
fn from_finding(
    f: impl Fn(&Finding) -> Option<Cell> + 'static,
) -> impl Fn(&StepData) -> Cell + 'static {
    // The last stored wins, as in `runs show`, should a kind repeat.
    move |s: &StepData| {
        s.analysis
            .iter()
            .rev()
            .find_map(|a| f(&a.finding))
            .unwrap_or(Cell::Empty)
    }
}

/// The summary and analysis columns of the steps table.
fn figures(extra: &[Op]) -> Vec<Figure> {
    let mut out = vec![figure(
        "duration_s",
        Fmt::Dec(3),
        from_summary(|s| Cell::Float(s.duration_s)),
    )];
    for op in SUMMARY_OPS.iter().chain(extra).copied() {
        let name = op.as_str();
        out.push(figure(
            format!("{name}_ops"),
            Fmt::Count,
            from_summary(move |s| Cell::UInt(op_summary(s, op).ops)),
        ));
        out.push(figure(
            format!("{name}_bytes"),
            Fmt::Count,
            from_summary(move |s| Cell::UInt(op_summary(s, op).bytes)),
        ));
        out.push(figure(
            format!("{name}_iops"),
            Fmt::Dec(3),
            from_summary(move |s| Cell::Float(op_summary(s, op).iops)),
        ));
        out.push(figure(
            format!("{name}_bw_bytes_per_s"),
            Fmt::Dec(1),
            from_summary(move |s| Cell::Float(op_summary(s, op).bw_bytes_per_s)),
        ));
        for (lat, get) in SUMMARY_LAT {
            out.push(figure(
                format!("{name}_lat_{lat}_ns"),
                Fmt::Count,
                from_summary(move |s| Cell::UInt(get(&op_summary(s, op).lat_ns))),
            ));
        }
    }
    // Under a rate limit the latency above counts from the scheduled start;
    // the service latency (from actual submission) tells the device's share.
    for (lat, get) in [SUMMARY_LAT[0], SUMMARY_LAT[3]] {
        out.push(figure(
            format!("total_service_lat_{lat}_ns"),
            Fmt::Count,
            from_summary(move |s| {
                s.total
                    .service_lat_ns
                    .as_ref()
                    .map_or(Cell::Empty, |l| Cell::UInt(get(l)))
            }),
        ));
    }
    // A paced step's issue lag: how much of the latency above is iorig's.
    for (lat, get) in [SUMMARY_LAT[1], SUMMARY_LAT[3], SUMMARY_LAT[5]] {
        out.push(figure(
            format!("issue_lag_{lat}_ns"),
            Fmt::Count,
            from_summary(move |s| {
                s.issue_lag_ns
                    .as_ref()
                    .map_or(Cell::Empty, |l| Cell::UInt(get(l)))
            }),
        ));
    }
    out.push(figure(
        "cpu_usr_pct",
        Fmt::Dec(2),
        from_summary(|s| Cell::Float(s.cpu.usr_pct)),
    ));
    out.push(figure(
        "cpu_sys_pct",
        Fmt::Dec(2),
        from_summary(|s| Cell::Float(s.cpu.sys_pct)),
    ));
    out.push(figure(
        "errors",
        Fmt::Count,
        from_summary(|s| Cell::UInt(s.errors)),
    ));
    out.extend([
        figure(
            "steady_state_reached",
            Fmt::Plain,
            from_finding(|f| match f {
                Finding::SteadyState(v) => Some(Cell::Bool(v.reached)),
                _ => None,
            }),
        ),
        figure(
            "steady_state_rounds",
            Fmt::Int,
            from_finding(|f| match f {
                Finding::SteadyState(v) => Some(Cell::UInt(v.rounds)),
                _ => None,
            }),
        ),
        figure(
            "generator_bound",
            Fmt::Plain,
            from_finding(|f| match f {
                Finding::GeneratorBound(v) => Some(Cell::Bool(v.generator_bound)),
                _ => None,
            }),
        ),
        figure(
            "in_flight_ratio",
            Fmt::Dec(3),
            from_finding(|f| match f {
                Finding::GeneratorBound(v) => Some(Cell::Float(v.in_flight_ratio)),
                _ => None,
            }),
        ),
        figure(
            "write_cliff_found",
            Fmt::Plain,
            from_finding(|f| match f {
                Finding::WriteCliff(v) => Some(Cell::Bool(v.found)),
                _ => None,
            }),
        ),
        figure(
            "write_cliff_onset_t_s",
            Fmt::Dec(3),
            from_finding(|f| match f {
                Finding::WriteCliff(v) => Some(
                    v.cliff
                        .as_ref()
                        .map_or(Cell::Empty, |c| Cell::Float(c.onset_t_s)),
                ),
                _ => None,
            }),
        ),
        figure(
            "write_cliff_drop_pct",
            Fmt::Dec(2),
            from_finding(|f| match f {
                Finding::WriteCliff(v) => Some(
                    v.cliff
                        .as_ref()
                        .map_or(Cell::Empty, |c| Cell::Float(c.drop_pct)),
                ),
                _ => None,
            }),
        ),
        figure(
            "outage_intervals",
            Fmt::Int,
            from_finding(|f| match f {
                Finding::Outages(v) => Some(Cell::UInt(v.outage_intervals as u64)),
                _ => None,
            }),
        ),
        figure(
            "outage_total_s",
            Fmt::Dec(3),
            from_finding(|f| match f {
                Finding::Outages(v) => Some(Cell::Float(v.total_outage_s)),
                _ => None,
            }),
        ),
    ]);
    out
}

/// A step's parameters as (key, value) pairs: the serialised workload
/// record, flattened one level (the JSON boundary; no key is looked up).
fn params_of(s: &StepData) -> Map<String, Value> {
    match serde_json::to_value(&s.step.params) {
        // A file-system workload's tree (`fs`) becomes `fs_depth`, … .
        Ok(Value::Object(o)) => o
            .into_iter()
            .flat_map(|(k, v)| match v {
                Value::Object(inner) => inner
                    .into_iter()
                    .map(|(ik, iv)| (format!("{k}_{ik}"), iv))
                    .collect::<Vec<_>>(),
                v => vec![(k, v)],
            })
            .collect(),
        _ => Map::new(),
    }
}

/// The kinds of a file-system workload's operations (besides reads and
/// writes) that any step of the run counted, in their order.
fn fs_kinds(data: &RunData) -> Vec<Op> {
    FsOp::ALL
        .into_iter()
        .filter(|f| !matches!(f, FsOp::Read | FsOp::Write))
        .filter(|f| {
            data.steps.iter().any(|s| {
                s.step
                    .summary
                    .as_ref()
                    .and_then(|x| x.io())
                    .is_some_and(|x| x.fs_ops.contains_key(f))
            })
        })
        .map(Op::of_fs)
        .collect()
}

/// The parameter keys of all steps: the preferred ones present, then the
/// others alphabetically.
fn param_keys(params: &[Map<String, Value>]) -> Vec<String> {
    let all: BTreeSet<&str> = params
        .iter()
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
fn param_cell(s: &StepData, key: &str, v: Option<&Value>) -> Cell {
    match (key, v, &s.step.params) {
        ("bs_bytes", Some(_), Some(p)) => match p.bs_bytes.as_slice() {
            [one] => Cell::UInt(one.size_bytes),
            _ => Cell::Empty,
        },
        (_, Some(v), _) => Cell::from_json(v),
        (_, None, _) => Cell::Empty,
    }
}

/// One row per step (docs/export.md, "Steps").
pub(super) fn steps_table(data: &RunData) -> Table {
    let figures = figures(&fs_kinds(data));
    let params: Vec<Map<String, Value>> = data.steps.iter().map(params_of).collect();
    let keys = param_keys(&params);
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
        .zip(&params)
        .map(|(s, p)| {
            let st = &s.step;
            let mut row = vec![
                Cell::Int(run_id),
                Cell::Int(st.index),
                Cell::Text(st.name.clone()),
                Cell::Text(st.role.to_string()),
                Cell::Text(st.status.as_str().to_owned()),
                st.started.clone().map_or(Cell::Empty, Cell::Text),
                st.ended.clone().map_or(Cell::Empty, Cell::Text),
            ];
            row.extend(keys.iter().map(|k| param_cell(s, k, p.get(k))));
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

/// The columns of the intervals table.
pub(super) fn interval_columns() -> Vec<Column> {
    INTERVAL_COLUMNS
        .iter()
        .map(|(name, fmt)| Column {
            name: (*name).to_owned(),
            fmt: *fmt,
        })
        .collect()
}

/// Calls `f` with each row of the intervals table (docs/export.md,
/// "Intervals": one per step, interval and operation), in order, reading
/// the store a page of intervals at a time and without their histograms:
/// what the exports hold at once is one page, whatever the run's length.
pub(super) fn for_each_interval(
    store: &Store,
    data: &RunData,
    mut f: impl FnMut(Vec<Cell>) -> Result<(), ReportError>,
) -> Result<(), ReportError> {
    let run_id = data.detail.run.id.0;
    for s in &data.steps {
        for page in IntervalPages::of(store, s.step.id, INTERVAL_PAGE).figures_only() {
            for i in &page? {
                f(interval_cells(run_id, s, i))?;
            }
        }
    }
    Ok(())
}

/// Writes the intervals table as CSV to `w`, a row at a time.
pub(super) fn write_intervals_csv<W: Write>(
    store: &Store,
    data: &RunData,
    w: W,
) -> Result<(), ReportError> {
    let fail = |e: &dyn std::fmt::Display| ReportError::Export(format!("writing CSV: {e}"));
    let mut out = csv_writer(w);
    out.write_record(INTERVAL_COLUMNS.iter().map(|(name, _)| *name))
        .map_err(|e| fail(&e))?;
    for_each_interval(store, data, |cells| {
        out.write_record(
            cells
                .iter()
                .zip(INTERVAL_COLUMNS)
                .map(|(cell, (_, fmt))| cell.csv_text(fmt)),
        )
        .map_err(|e| fail(&e))
    })?;
    out.flush().map_err(|e| fail(&e))
}

/// One row per step and host of a multi-host run: how the host ended, its
/// clock and start, and its own figures (empty for a one-host run).
pub(super) fn hosts_table(data: &RunData) -> Table {
    let run_id = data.detail.run.id.0;
    let columns: [(&str, Fmt); 22] = [
        ("run_id", Fmt::Int),
        ("step_index", Fmt::Int),
        ("step_name", Fmt::Plain),
        ("host", Fmt::Plain),
        ("address", Fmt::Plain),
        ("hostname", Fmt::Plain),
        ("tool_version", Fmt::Plain),
        ("status", Fmt::Plain),
        ("lost_at_interval", Fmt::Int),
        ("lost_at_s", Fmt::Dec(3)),
        ("clock_offset_ns", Fmt::Count),
        ("clock_rtt_ns", Fmt::Count),
        ("start_skew_ns", Fmt::Count),
        ("start_skew_flagged", Fmt::Plain),
        ("engine", Fmt::Plain),
        ("ops", Fmt::Count),
        ("iops", Fmt::Dec(1)),
        ("bw_bytes_per_s", Fmt::Dec(0)),
        ("lat_mean_ns", Fmt::Count),
        ("lat_p99_ns", Fmt::Count),
        ("lat_max_ns", Fmt::Count),
        ("errors", Fmt::Count),
    ];
    let mut rows = Vec::new();
    for s in &data.steps {
        for h in &s.hosts {
            let t = &h.summary.total;
            rows.push(vec![
                Cell::Int(run_id),
                Cell::Int(s.step.index),
                Cell::Text(s.step.name.clone()),
                Cell::Text(h.name.clone()),
                Cell::Text(h.address.clone()),
                Cell::Text(h.hostname.clone()),
                Cell::Text(h.tool_version.clone()),
                Cell::Text(
                    match h.status {
                        iorig_result::HostStatus::Ok => "ok",
                        iorig_result::HostStatus::Lost => "lost",
                    }
                    .to_owned(),
                ),
                h.lost_at_interval
                    .map_or(Cell::Empty, |i| Cell::UInt(i as u64 + 1)),
                h.lost_at_s.map_or(Cell::Empty, Cell::Float),
                Cell::Int(h.clock_offset_ns),
                Cell::UInt(h.clock_rtt_ns),
                h.start_skew_ns.map_or(Cell::Empty, Cell::Int),
                Cell::Bool(h.start_skew_flagged),
                Cell::Text(h.engine.clone()),
                Cell::UInt(t.ops),
                Cell::Float(t.iops),
                Cell::Float(t.bw_bytes_per_s),
                Cell::UInt(t.lat_ns.mean),
                Cell::UInt(t.lat_ns.p99),
                Cell::UInt(t.lat_ns.max),
                Cell::UInt(h.summary.errors),
            ]);
        }
    }
    Table {
        columns: columns
            .iter()
            .map(|(name, fmt)| Column {
                name: (*name).to_owned(),
                fmt: *fmt,
            })
            .collect(),
        rows,
    }
}
