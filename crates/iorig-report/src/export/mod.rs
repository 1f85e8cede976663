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
use iorig_store::{AnalysisRow, RunDetail, RunId, StepRow, Store, StoredRun, TargetFactsRow};
use serde_json::Value;
use std::io::{Seek, Write};
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

/// One file to write: where, what goes in it, and what it holds (for the
/// line that says where it went).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutFile {
    pub path: PathBuf,
    pub body: Body,
    pub holds: &'static str,
}

/// What an [`OutFile`] holds: bytes already made (small files: the steps,
/// the hosts, a profile's tables, the interval log), or a run's intervals
/// read from the store page by page while the file is written
/// ([`OutFile::write_to`]), so a week-long soak is never in memory whole.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Body {
    Bytes(Vec<u8>),
    /// The intervals CSV of a run ([`write_intervals_csv`]).
    IntervalsCsv(RunId),
    /// The run's JSON document ([`write_json`]).
    Json(RunId),
    /// The run's workbook ([`write_xlsx`]).
    Xlsx(RunId),
}

impl OutFile {
    /// Writes the file's body to `w` (the CLI's temporary file, renamed
    /// over the destination once this returns). Streamed bodies read the
    /// store as they go; `w` should be buffered.
    pub fn write_to<W: Write + Seek + Send>(
        &self,
        store: &Store,
        mut w: W,
    ) -> Result<(), ReportError> {
        let io = |e: std::io::Error| ReportError::Io {
            what: format!("writing {}", self.path.display()),
            source: e,
        };
        match &self.body {
            Body::Bytes(b) => w.write_all(b).map_err(io)?,
            Body::IntervalsCsv(run) => write_intervals_csv(store, *run, &mut w)?,
            Body::Json(run) => write_json(store, *run, &mut w)?,
            Body::Xlsx(run) => write_xlsx(store, *run, &mut w)?,
        }
        w.flush().map_err(io)
    }
}

/// The files of run `run`'s export as `kind` to `out` (nothing written;
/// the intervals are read when each file is, see [`OutFile::write_to`]).
/// A run too long for an XLSX sheet is refused here, as bad input
/// ([`ReportError::Usage`]), before any file is made.
pub fn files(
    store: &Store,
    run: RunId,
    kind: Kind,
    out: &Path,
) -> Result<Vec<OutFile>, ReportError> {
    let file = |path: PathBuf, body: Body, holds| OutFile { path, body, holds };
    Ok(match kind {
        Kind::Csv => {
            let data = RunData::load(store, run)?;
            let (steps_csv, intervals, hosts_csv) =
                if data.detail.run.kind == iorig_result::RunKind::Profile {
                    let p = profile::profile_of(&data)?;
                    (
                        profile::figures_table(run.0, &p).to_csv()?,
                        Body::Bytes(profile::intervals_table(&p).to_csv()?.into_bytes()),
                        None,
                    )
                } else {
                    let hosts = tables::hosts_table(&data);
                    (
                        tables::steps_table(&data).to_csv()?,
                        Body::IntervalsCsv(run),
                        (!hosts.rows.is_empty())
                            .then(|| hosts.to_csv())
                            .transpose()?,
                    )
                };
            let mut f = vec![
                file(
                    out.to_path_buf(),
                    Body::Bytes(steps_csv.into_bytes()),
                    "steps",
                ),
                file(out.with_extension("intervals.csv"), intervals, "intervals"),
            ];
            if let Some(h) = hosts_csv {
                f.push(file(
                    out.with_extension("hosts.csv"),
                    Body::Bytes(h.into_bytes()),
                    "hosts",
                ));
            }
            f
        }
        Kind::Xlsx => {
            let data = RunData::load(store, run)?;
            xlsx::check_rows(store, &data)?;
            vec![file(out.to_path_buf(), Body::Xlsx(run), "workbook")]
        }
        Kind::Hlog => {
            let h = export_hlog(store, run)?;
            vec![
                file(out.to_path_buf(), Body::Bytes(h.log), "interval histograms"),
                file(
                    out.with_extension("percentiles.csv"),
                    Body::Bytes(h.percentiles_csv.into_bytes()),
                    "percentiles",
                ),
            ]
        }
        Kind::Json => {
            // Fails now, not halfway through a file, when there is no run.
            RunData::load(store, run)?;
            vec![file(out.to_path_buf(), Body::Json(run), "the run")]
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

/// The steps and intervals CSV of a run (docs/export.md), in memory: for
/// a run of any length write the intervals with [`write_intervals_csv`].
/// Fails with [`ReportError::NoSuchRun`] when the store has no such run.
pub fn export_csv(store: &Store, run: RunId) -> Result<CsvExport, ReportError> {
    let data = RunData::load(store, run)?;
    if data.detail.run.kind == iorig_result::RunKind::Profile {
        let p = profile::profile_of(&data)?;
        return Ok(CsvExport {
            steps_csv: profile::figures_table(run.0, &p).to_csv()?,
            intervals_csv: profile::intervals_table(&p).to_csv()?,
            hosts_csv: None,
        });
    }
    let hosts = tables::hosts_table(&data);
    let mut intervals = Vec::new();
    tables::write_intervals_csv(store, &data, &mut intervals)?;
    Ok(CsvExport {
        steps_csv: tables::steps_table(&data).to_csv()?,
        intervals_csv: String::from_utf8(intervals)
            .map_err(|e| ReportError::Export(format!("writing CSV: {e}")))?,
        hosts_csv: if hosts.rows.is_empty() {
            None
        } else {
            Some(hosts.to_csv()?)
        },
    })
}

/// The steps CSV of a run alone (what [`export_csv`] gives as its
/// `steps_csv`), read without any of the run's intervals.
pub fn export_steps_csv(store: &Store, run: RunId) -> Result<String, ReportError> {
    let data = RunData::load(store, run)?;
    if data.detail.run.kind == iorig_result::RunKind::Profile {
        return profile::figures_table(run.0, &profile::profile_of(&data)?).to_csv();
    }
    tables::steps_table(&data).to_csv()
}

/// Writes the intervals CSV of a run (docs/export.md, "Intervals") to `w`
/// a row at a time, reading the store a page at a time: its memory does
/// not grow with the run. A profile's intervals are its own table.
pub fn write_intervals_csv<W: Write>(store: &Store, run: RunId, w: W) -> Result<(), ReportError> {
    let data = RunData::load(store, run)?;
    if data.detail.run.kind == iorig_result::RunKind::Profile {
        let p = profile::profile_of(&data)?;
        let mut w = w;
        return w
            .write_all(profile::intervals_table(&p).to_csv()?.as_bytes())
            .map_err(|e| ReportError::Export(format!("writing CSV: {e}")));
    }
    tables::write_intervals_csv(store, &data, w)
}

/// The run as XLSX file contents: sheets `steps`, `intervals` and `run`
/// (for a long run prefer [`write_xlsx`] to a file).
pub fn export_xlsx_bytes(store: &Store, run: RunId) -> Result<Vec<u8>, ReportError> {
    let mut out = std::io::Cursor::new(Vec::new());
    write_xlsx(store, run, &mut out)?;
    Ok(out.into_inner())
}

/// Writes the run's workbook to `w`. The intervals sheet is written row by
/// row from the store's pages in rust_xlsxwriter's constant-memory mode
/// (its rows go to a temporary file, not memory); a run with more interval
/// rows than a sheet holds is refused ([`ReportError::Usage`]).
pub fn write_xlsx<W: Write + Seek + Send>(
    store: &Store,
    run: RunId,
    w: W,
) -> Result<(), ReportError> {
    let data = RunData::load(store, run)?;
    let mut book = xlsx::workbook(store, &data)?;
    book.save_to_writer(w)
        .map_err(|e| ReportError::Export(format!("writing XLSX: {e}")))
}

/// The whole run as one JSON document of schema [`RUN_SCHEMA`]
/// (docs/export.md), in memory: for a run of any length write it with
/// [`write_json`].
pub fn export_json(store: &Store, run: RunId) -> Result<iorig_result::RunDoc, ReportError> {
    let data = RunData::load(store, run)?;
    let mut doc = json::run_doc(&data);
    for (d, s) in doc.steps.iter_mut().zip(&data.steps) {
        d.intervals = Some(json::interval_docs_of(store, s)?);
    }
    Ok(doc)
}

/// Writes the run's JSON document to `w`: the bytes of
/// `serde_json::to_string_pretty(&export_json(..))` and a line end, with
/// each step's intervals read from the store page by page as they are
/// written.
pub fn write_json<W: Write>(store: &Store, run: RunId, w: W) -> Result<(), ReportError> {
    json::write_json(store, &RunData::load(store, run)?, w)
}

/// The same document without the steps' intervals: `iorig runs show --json`.
pub fn show_json(store: &Store, run: RunId) -> Result<iorig_result::RunDoc, ReportError> {
    Ok(json::run_doc(&RunData::load(store, run)?))
}

/// A step with what was stored under it but its intervals, which the
/// exports read page by page ([`tables::for_each_interval`]).
struct StepData {
    step: StepRow,
    /// The step's analysis rows, in the order they were stored.
    analysis: Vec<AnalysisRow>,
    /// A multi-host step's hosts, in their order.
    hosts: Vec<iorig_result::HostResult>,
    /// A step of several jobs: each job's result, in their order.
    jobs: Vec<iorig_result::JobResult>,
}

/// Everything stored about a run but its intervals, read once so that every
/// export is built from one consistent read.
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
    /// ([`StoredRun`]).
    fn load(store: &Store, run: RunId) -> Result<RunData, ReportError> {
        let stored = StoredRun::load(store, run)?.ok_or(ReportError::NoSuchRun(run.0))?;
        let steps = stored
            .steps
            .into_iter()
            .map(|s| StepData {
                step: s.row,
                analysis: s.analysis,
                hosts: s.hosts,
                jobs: s.jobs,
            })
            .collect();
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
        let mut w = csv_writer(Vec::new());
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

/// The CSV writer of every export: `\n` line ends like `iorig run --csv`;
/// the csv crate quotes any field holding a comma, quote or line break.
fn csv_writer<W: Write>(w: W) -> csv::Writer<W> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(w)
}
