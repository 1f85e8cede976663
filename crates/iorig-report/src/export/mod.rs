//! Exports of one stored run for other tools (docs/export.md): two flat CSV
//! files (one row per step, one row per step, interval and operation), an
//! XLSX workbook with the same two tables plus the run's facts, one JSON
//! document of the whole run (schema `iorig.run/1`), and the latency
//! histograms as an HdrHistogram interval log with a percentile CSV.
//!
//! The CSV files and the XLSX sheets are rendered from the same [`Table`]s,
//! so a column means the same thing, with the same name, everywhere. Nothing
//! here writes files: the CLI decides where the bytes go (and writes them
//! only to regular files, atomically).

mod hlog;
mod json;
mod profile;
mod tables;
mod vdbench;
mod xlsx;

use crate::ReportError;
use iorig_store::{
    AnalysisRow, IntervalRow, RunDetail, RunId, StepRow, Store, StoreError, StoredRun,
    TargetFactsRow,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

pub use hlog::{export_hlog, HlogExport};
pub use iorig_result::RUN_SCHEMA;
pub use vdbench::{export_vdbench, VdbenchExport, FLAT_COLUMNS};

/// What `iorig export` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Steps to FILE, intervals to FILE.intervals.csv (hosts to
    /// FILE.hosts.csv when the run had several).
    Csv,
    Xlsx,
    Json,
    /// Interval histograms to FILE, percentiles to FILE.percentiles.csv.
    Hlog,
}

impl Kind {
    /// Every path an export to `out` may write, for checking before any is.
    pub fn paths(self, out: &Path) -> Vec<PathBuf> {
        let mut p = vec![out.to_path_buf()];
        match self {
            Kind::Csv => {
                p.push(out.with_extension("intervals.csv"));
                p.push(out.with_extension("hosts.csv"));
            }
            Kind::Hlog => p.push(out.with_extension("percentiles.csv")),
            Kind::Xlsx | Kind::Json => {}
        }
        p
    }
}

/// One file to write: where, its bytes, and what it holds (for the line
/// that says where it went).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutFile {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub holds: &'static str,
}

/// The files of run `run`'s export as `kind` to `out` (nothing written).
pub fn files(
    store: &Store,
    run: RunId,
    kind: Kind,
    out: &Path,
) -> Result<Vec<OutFile>, ReportError> {
    let file = |path: PathBuf, bytes: Vec<u8>, holds| OutFile { path, bytes, holds };
    Ok(match kind {
        Kind::Csv => {
            let csv = export_csv(store, run)?;
            let mut f = vec![
                file(out.to_path_buf(), csv.steps_csv.into_bytes(), "steps"),
                file(
                    out.with_extension("intervals.csv"),
                    csv.intervals_csv.into_bytes(),
                    "intervals",
                ),
            ];
            if let Some(h) = csv.hosts_csv {
                f.push(file(
                    out.with_extension("hosts.csv"),
                    h.into_bytes(),
                    "hosts",
                ));
            }
            f
        }
        Kind::Xlsx => vec![file(
            out.to_path_buf(),
            export_xlsx_bytes(store, run)?,
            "workbook",
        )],
        Kind::Hlog => {
            let h = export_hlog(store, run)?;
            vec![
                file(out.to_path_buf(), h.log, "interval histograms"),
                file(
                    out.with_extension("percentiles.csv"),
                    h.percentiles_csv.into_bytes(),
                    "percentiles",
                ),
            ]
        }
        Kind::Json => {
            let v = export_json(store, run)?;
            let text =
                serde_json::to_string_pretty(&v).map_err(|e| ReportError::Export(e.to_string()))?;
            vec![file(
                out.to_path_buf(),
                (text + "\n").into_bytes(),
                "the run",
            )]
        }
    })
}

/// The two CSV files of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CsvExport {
    /// One row per step: parameters, summary and key analysis figures. For
    /// a profile: one row per scope and figure (mean, p95, peak).
    pub steps_csv: String,
    /// One row per step, interval and operation (`read`, `write`, `trim`
    /// when the interval had trims, `total`).
    /// For a profile: one row per interval and scope, as `profile --csv`.
    pub intervals_csv: String,
    /// A run on several hosts: one row per step and host (its status,
    /// clock, start skew and own figures); None for a one-host run.
    pub hosts_csv: Option<String>,
}

/// The steps and intervals CSV of a run (docs/export.md). Fails with
/// [`ReportError::NoSuchRun`] when the store has no such run.
pub fn export_csv(store: &Store, run: RunId) -> Result<CsvExport, ReportError> {
    let data = RunData::load(store, run, true)?;
    if data.detail.run.kind == iorig_result::RunKind::Profile {
        let p = profile::profile_of(&data)?;
        return Ok(CsvExport {
            steps_csv: profile::figures_table(run.0, &p).to_csv()?,
            intervals_csv: profile::intervals_table(&p).to_csv()?,
            hosts_csv: None,
        });
    }
    let hosts = tables::hosts_table(&data);
    Ok(CsvExport {
        steps_csv: tables::steps_table(&data).to_csv()?,
        intervals_csv: tables::intervals_table(&data).to_csv()?,
        hosts_csv: if hosts.rows.is_empty() {
            None
        } else {
            Some(hosts.to_csv()?)
        },
    })
}

/// The run as XLSX file contents: sheets `steps`, `intervals` and `run`.
pub fn export_xlsx_bytes(store: &Store, run: RunId) -> Result<Vec<u8>, ReportError> {
    let data = RunData::load(store, run, true)?;
    let mut book = xlsx::workbook(&data)?;
    book.save_to_buffer()
        .map_err(|e| ReportError::Export(format!("writing XLSX: {e}")))
}

/// The whole run as one JSON document of schema [`RUN_SCHEMA`]
/// (docs/export.md).
pub fn export_json(store: &Store, run: RunId) -> Result<iorig_result::RunDoc, ReportError> {
    Ok(json::run_doc(&RunData::load(store, run, true)?))
}

/// The same document without the steps' intervals: `iorig runs show --json`.
pub fn show_json(store: &Store, run: RunId) -> Result<iorig_result::RunDoc, ReportError> {
    Ok(json::run_doc(&RunData::load(store, run, false)?))
}

/// A step with what was stored under it.
struct StepData {
    step: StepRow,
    /// None when the intervals were not read (`runs show --json`).
    intervals: Option<Vec<IntervalRow>>,
    /// The step's analysis rows, in the order they were stored.
    analysis: Vec<AnalysisRow>,
    /// A multi-host step's hosts, in their order.
    hosts: Vec<iorig_result::HostResult>,
    /// A step of several jobs: each job's result, in their order.
    jobs: Vec<iorig_result::JobResult>,
}

/// Everything stored about a run, read once so that every export is built
/// from one consistent read.
struct RunData {
    detail: RunDetail,
    system: Option<iorig_stats::sampler::system::SystemFacts>,
    targets: Vec<TargetFactsRow>,
    steps: Vec<StepData>,
    /// Findings about the run as a whole (curves).
    plan_analysis: Vec<AnalysisRow>,
}

impl RunData {
    /// Reads `run` through the store's one loader of a run
    /// ([`StoredRun`]); its intervals too when `with_intervals`.
    fn load(store: &Store, run: RunId, with_intervals: bool) -> Result<RunData, ReportError> {
        let stored = StoredRun::load(store, run)?.ok_or(ReportError::NoSuchRun(run.0))?;
        let steps = stored
            .steps
            .into_iter()
            .map(|s| {
                Ok(StepData {
                    intervals: if with_intervals {
                        Some(s.intervals(store)?)
                    } else {
                        None
                    },
                    step: s.row,
                    analysis: s.analysis,
                    hosts: s.hosts,
                    jobs: s.jobs,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(RunData {
            detail: stored.detail,
            system: stored.system,
            targets: stored.targets,
            steps,
            plan_analysis: stored.plan_analysis,
        })
    }
}

/// How a column's numbers are shown: the decimals of the CSV text and the
/// XLSX number format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fmt {
    /// Text, or whatever the cell holds (parameters): numbers as Rust prints
    /// them in the CSV, General in XLSX.
    Plain,
    /// A small whole number (index, queue depth): `0`.
    Int,
    /// A count of I/Os, bytes or nanoseconds: `#,##0` in XLSX, plain digits
    /// in the CSV.
    Count,
    /// A fixed number of decimals.
    Dec(u8),
}

/// One value of a table.
#[derive(Clone, Debug, PartialEq)]
enum Cell {
    Empty,
    UInt(u64),
    Int(i64),
    Float(f64),
    Bool(bool),
    Text(String),
}

impl Cell {
    /// A JSON value as a cell; arrays and objects become their compact JSON
    /// text, except arrays of plain values, which are joined with commas.
    fn from_json(v: &Value) -> Cell {
        match v {
            Value::Null => Cell::Empty,
            Value::Bool(b) => Cell::Bool(*b),
            Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
                (Some(u), _, _) => Cell::UInt(u),
                (_, Some(i), _) => Cell::Int(i),
                (_, _, Some(f)) => Cell::Float(f),
                _ => Cell::Text(n.to_string()),
            },
            Value::String(s) => Cell::Text(s.clone()),
            Value::Array(items) if items.iter().all(is_scalar) => Cell::Text(
                items
                    .iter()
                    .map(|i| match i {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            other => Cell::Text(other.to_string()),
        }
    }

    /// The CSV text of the cell in a column of format `fmt`.
    fn csv_text(&self, fmt: Fmt) -> String {
        match self {
            Cell::Empty => String::new(),
            Cell::UInt(u) => u.to_string(),
            Cell::Int(i) => i.to_string(),
            // NaN or infinity would not read back as a number anywhere.
            Cell::Float(f) if !f.is_finite() => String::new(),
            Cell::Float(f) => match fmt {
                Fmt::Dec(d) => format!("{f:.*}", usize::from(d)),
                Fmt::Int | Fmt::Count => format!("{f:.0}"),
                Fmt::Plain => f.to_string(),
            },
            Cell::Bool(b) => b.to_string(),
            Cell::Text(s) => s.clone(),
        }
    }
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

/// A column: its name (with its unit) and how its numbers are shown.
#[derive(Clone, Debug)]
struct Column {
    name: String,
    fmt: Fmt,
}

/// A flat table, the common form of a CSV file and an XLSX sheet.
#[derive(Clone, Debug, Default)]
struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<Cell>>,
}

impl Table {
    fn to_csv(&self) -> Result<String, ReportError> {
        let fail = |e: &dyn std::fmt::Display| ReportError::Export(format!("writing CSV: {e}"));
        // `\n` line ends like `iorig run --csv`; the csv crate quotes any
        // field holding a comma, quote or line break.
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        w.write_record(self.columns.iter().map(|c| c.name.as_str()))
            .map_err(|e| fail(&e))?;
        for row in &self.rows {
            w.write_record(
                row.iter()
                    .zip(&self.columns)
                    .map(|(cell, col)| cell.csv_text(col.fmt)),
            )
            .map_err(|e| fail(&e))?;
        }
        let bytes = w.into_inner().map_err(|e| fail(e.error()))?;
        String::from_utf8(bytes).map_err(|e| fail(&e))
    }
}
