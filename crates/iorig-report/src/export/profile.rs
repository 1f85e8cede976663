//! The tables of a stored profile (`iorig profile`): its figure statistics
//! (one row per scope and figure), its intervals (one row per interval and
//! scope, the columns of `iorig profile --csv`) and its rule verdicts. The
//! CSV and XLSX exports of a profile are made of these.

use super::{Cell, Column, Fmt, RunData, Table};
use crate::ReportError;
use iorig_profile::figures::Figure;

/// A stored profile's figures, intervals and verdicts.
use crate::model::ProfileReport as ProfileData;

/// The profile of a run read for export.
pub(super) fn profile_of(data: &RunData) -> Result<ProfileData, ReportError> {
    let step = data
        .steps
        .first()
        .ok_or_else(|| ReportError::Export("the profile has no step".into()))?;
    ProfileData::from_rows(data.detail.clone(), &step.step, &step.analysis)
}

fn col(name: &str, fmt: Fmt) -> Column {
    Column {
        name: name.to_owned(),
        fmt,
    }
}

fn opt(v: Option<f64>) -> Cell {
    v.map_or(Cell::Empty, Cell::Float)
}

/// One row per scope (`total`, then each device) and figure: mean, p95, peak.
pub(super) fn figures_table(run_id: i64, p: &ProfileData) -> Table {
    let mut rows = Vec::new();
    for (scope, stats) in p.scopes() {
        for f in Figure::ALL {
            let st = stats.get(f.name()).copied().unwrap_or_default();
            rows.push(vec![
                Cell::Int(run_id),
                Cell::Text(scope.to_owned()),
                Cell::Text(f.name().to_owned()),
                opt(st.mean),
                opt(st.p95),
                opt(st.peak),
            ]);
        }
    }
    Table {
        columns: vec![
            col("run_id", Fmt::Int),
            col("scope", Fmt::Plain),
            col("figure", Fmt::Plain),
            col("mean", Fmt::Dec(3)),
            col("p95", Fmt::Dec(3)),
            col("peak", Fmt::Dec(3)),
        ],
        rows,
    }
}

/// One row per interval and scope: the columns of `iorig profile --csv`
/// (`t_s`, `duration_s`, `device`, then every figure), `total` for the
/// covered devices together.
pub(super) fn intervals_table(p: &ProfileData) -> Table {
    let mut columns = vec![
        col("t_s", Fmt::Dec(3)),
        col("duration_s", Fmt::Dec(3)),
        col("device", Fmt::Plain),
    ];
    columns.extend(Figure::ALL.iter().map(|f| col(f.name(), Fmt::Dec(3))));
    let mut rows = Vec::new();
    for i in &p.intervals {
        let scoped = std::iter::once(("total", &i.total))
            .chain(i.devices.iter().map(|(d, figs)| (d.as_str(), figs)));
        for (scope, figs) in scoped {
            let mut row = vec![
                Cell::Float(i.t_s),
                Cell::Float(i.duration_s),
                Cell::Text(scope.to_owned()),
            ];
            row.extend(
                Figure::ALL
                    .iter()
                    .map(|f| opt(figs.get(f.name()).copied().flatten())),
            );
            rows.push(row);
        }
    }
    Table { columns, rows }
}

/// One row per rule verdict.
pub(super) fn verdicts_table(p: &ProfileData) -> Table {
    let mut rows = Vec::new();
    for e in &p.evaluations {
        for v in &e.verdicts {
            rows.push(vec![
                Cell::Text(e.rule_set.clone()),
                Cell::Text(v.rule.clone()),
                Cell::Text(v.level.map_or("no data", |l| l.name()).to_owned()),
                Cell::Text(v.scope.clone()),
                Cell::Text(v.figure.name().to_owned()),
                Cell::Text(v.stat.name().to_owned()),
                opt(v.value),
                Cell::Text(v.zone.clone()),
                Cell::Text(v.says.clone()),
                Cell::Text(v.shown.clone()),
            ]);
        }
    }
    Table {
        columns: vec![
            col("rule_set", Fmt::Plain),
            col("rule", Fmt::Plain),
            col("level", Fmt::Plain),
            col("scope", Fmt::Plain),
            col("figure", Fmt::Plain),
            col("stat", Fmt::Plain),
            col("value", Fmt::Dec(3)),
            col("zone", Fmt::Plain),
            col("says", Fmt::Plain),
            col("shown", Fmt::Plain),
        ],
        rows,
    }
}
