//! The XLSX workbook of a run: sheets `steps` and `intervals` (the two CSV
//! tables as Excel Tables, so filters, pivot tables and slicers work on them
//! as they are) and `run` (the run's facts as key/value rows).

use super::{tables, Cell, Fmt, RunData, Table};
use crate::ReportError;
use rust_xlsxwriter::{Format, Table as XlTable, TableColumn, Workbook, Worksheet, XlsxError};
use serde_json::Value;

/// Excel keeps at most this many characters in a cell; longer text (a big
/// plan or curve as JSON) is cut rather than failing the whole export.
const MAX_CELL_CHARS: usize = 32_767;

/// Whole numbers above this lose digits as an Excel number (an f64); they
/// are written as text instead (seeds are the usual case).
const MAX_EXACT_INT: u64 = 1 << 53;

/// Column widths, in characters, stay within these bounds: narrow columns
/// still show their filter button, long texts do not push the rest away.
const MIN_WIDTH: f64 = 6.0;
const MAX_WIDTH: f64 = 60.0;

fn xlsx_err(e: XlsxError) -> ReportError {
    ReportError::Export(format!("building XLSX: {e}"))
}

pub(super) fn workbook(data: &RunData) -> Result<Workbook, ReportError> {
    let mut book = Workbook::new();
    if data.detail.run.kind == iorig_result::RunKind::Profile {
        // A profile: its figures, intervals and verdicts instead of steps.
        let p = super::profile::profile_of(data)?;
        let run_id = data.detail.run.id.0;
        book.push_worksheet(
            table_sheet("figures", &super::profile::figures_table(run_id, &p), 3)
                .map_err(xlsx_err)?,
        );
        book.push_worksheet(
            table_sheet("intervals", &super::profile::intervals_table(&p), 3).map_err(xlsx_err)?,
        );
        book.push_worksheet(
            table_sheet("verdicts", &super::profile::verdicts_table(&p), 2).map_err(xlsx_err)?,
        );
        book.push_worksheet(run_sheet(data).map_err(xlsx_err)?);
        return Ok(book);
    }
    // The first data columns (run, step, name) stay in view when scrolling
    // right over the many figures of a step.
    book.push_worksheet(table_sheet("steps", &tables::steps_table(data), 3).map_err(xlsx_err)?);
    book.push_worksheet(
        table_sheet("intervals", &tables::intervals_table(data), 0).map_err(xlsx_err)?,
    );
    let hosts = tables::hosts_table(data);
    if !hosts.rows.is_empty() {
        book.push_worksheet(table_sheet("hosts", &hosts, 4).map_err(xlsx_err)?);
    }
    book.push_worksheet(run_sheet(data).map_err(xlsx_err)?);
    Ok(book)
}

/// The Excel number format of a column; `None` for General.
fn num_format(fmt: Fmt) -> Option<String> {
    match fmt {
        Fmt::Plain => None,
        Fmt::Int => Some("0".to_owned()),
        Fmt::Count => Some("#,##0".to_owned()),
        Fmt::Dec(0) => Some("#,##0".to_owned()),
        Fmt::Dec(d) => Some(format!("#,##0.{}", "0".repeat(usize::from(d)))),
    }
}

fn cut(text: &str) -> &str {
    match text.char_indices().nth(MAX_CELL_CHARS) {
        Some((i, _)) => &text[..i],
        None => text,
    }
}

/// Writes one cell; numbers as numbers (in `format` when given), so sums
/// and pivots work without conversion.
fn write_cell(
    ws: &mut Worksheet,
    row: u32,
    col: u16,
    cell: &Cell,
    format: Option<&Format>,
) -> Result<(), XlsxError> {
    let mut number = |n: f64| match format {
        Some(f) => ws.write_number_with_format(row, col, n, f).map(|_| ()),
        None => ws.write_number(row, col, n).map(|_| ()),
    };
    // Casts below are exact: the values are within 2^53.
    match cell {
        Cell::Empty => Ok(()),
        Cell::UInt(u) if *u <= MAX_EXACT_INT => number(*u as f64),
        Cell::Int(i) if i.unsigned_abs() <= MAX_EXACT_INT => number(*i as f64),
        Cell::UInt(u) => ws.write_string(row, col, u.to_string()).map(|_| ()),
        Cell::Int(i) => ws.write_string(row, col, i.to_string()).map(|_| ()),
        Cell::Float(f) if f.is_finite() => number(*f),
        Cell::Float(_) => Ok(()),
        Cell::Bool(b) => ws.write_boolean(row, col, *b).map(|_| ()),
        Cell::Text(s) => ws.write_string(row, col, cut(s)).map(|_| ()),
    }
}

/// A width that shows the header (with room for the filter button) and the
/// typical value.
fn width(header: &str, cells: impl Iterator<Item = usize>) -> f64 {
    let longest = cells.max().unwrap_or(0);
    let chars = (header.chars().count() + 3).max(longest + 1);
    (chars as f64).clamp(MIN_WIDTH, MAX_WIDTH)
}

/// A sheet holding `table` as an Excel Table (header row with filters,
/// banded rows), header frozen along with the first `frozen_cols` columns.
fn table_sheet(name: &str, table: &Table, frozen_cols: u16) -> Result<Worksheet, XlsxError> {
    let mut ws = Worksheet::new();
    ws.set_name(name)?;
    let formats: Vec<Option<Format>> = table
        .columns
        .iter()
        .map(|c| num_format(c.fmt).map(|f| Format::new().set_num_format(f)))
        .collect();
    for (r, row) in table.rows.iter().enumerate() {
        let r = u32::try_from(r + 1).map_err(|_| XlsxError::RowColumnLimitError)?;
        for (c, cell) in row.iter().enumerate() {
            let c = u16::try_from(c).map_err(|_| XlsxError::RowColumnLimitError)?;
            write_cell(
                &mut ws,
                r,
                c,
                cell,
                formats.get(usize::from(c)).and_then(Option::as_ref),
            )?;
        }
    }
    let last_col = u16::try_from(table.columns.len().saturating_sub(1))
        .map_err(|_| XlsxError::RowColumnLimitError)?;
    if table.rows.is_empty() {
        // An Excel Table needs a data row; an empty run gets the header and
        // a plain filter.
        let bold = Format::new().set_bold();
        for (c, col) in table.columns.iter().enumerate() {
            let c = u16::try_from(c).map_err(|_| XlsxError::RowColumnLimitError)?;
            ws.write_string_with_format(0, c, &col.name, &bold)?;
        }
        ws.autofilter(0, 0, 0, last_col)?;
    } else {
        let last_row =
            u32::try_from(table.rows.len()).map_err(|_| XlsxError::RowColumnLimitError)?;
        let columns: Vec<TableColumn> = table
            .columns
            .iter()
            .map(|c| TableColumn::new().set_header(&c.name))
            .collect();
        let xl = XlTable::new().set_name(name).set_columns(&columns);
        ws.add_table(0, 0, last_row, last_col, &xl)?;
    }
    for (c, col) in table.columns.iter().enumerate() {
        let lens = table.rows.iter().map(|row| {
            row.get(c)
                .map_or(0, |cell| cell.csv_text(col.fmt).chars().count())
        });
        let c = u16::try_from(c).map_err(|_| XlsxError::RowColumnLimitError)?;
        ws.set_column_width(c, width(&col.name, lens))?;
    }
    ws.set_freeze_panes(1, frozen_cols)?;
    Ok(ws)
}

/// The key/value rows of the `run` sheet (docs/export.md, "XLSX").
fn run_rows(data: &RunData) -> Vec<(String, Cell)> {
    let d = &data.detail;
    let text = |s: &str| Cell::Text(s.to_owned());
    let mut rows = vec![
        ("id".to_owned(), Cell::Int(d.run.id.0)),
        ("kind".to_owned(), text(d.run.kind.as_str())),
        ("status".to_owned(), text(d.run.status.as_str())),
        ("started".to_owned(), text(&d.run.started)),
        (
            "ended".to_owned(),
            d.run.ended.as_deref().map_or(Cell::Empty, text),
        ),
        ("host".to_owned(), text(&d.run.host)),
        ("tool_version".to_owned(), text(&d.run.tool_version)),
        ("command_line".to_owned(), text(&d.command_line)),
        ("steps".to_owned(), Cell::UInt(data.steps.len() as u64)),
    ];
    for (k, v) in &d.run.labels {
        rows.push((format!("label.{k}"), text(v)));
    }
    // Facts are listed field by field from their serialised form.
    if let Some(Ok(Value::Object(facts))) = data.system.as_ref().map(serde_json::to_value) {
        for (k, v) in &facts {
            rows.push((format!("system.{k}"), Cell::from_json(v)));
        }
    }
    for (i, t) in data.targets.iter().enumerate() {
        rows.push((format!("target.{i}.path"), text(&t.path)));
        rows.push((
            format!("target.{i}.kind"),
            t.kind.as_deref().map_or(Cell::Empty, text),
        ));
        rows.push((
            format!("target.{i}.size_bytes"),
            t.size_bytes.map_or(Cell::Empty, Cell::UInt),
        ));
        if let Ok(Value::Object(facts)) = serde_json::to_value(&t.facts) {
            for (k, v) in &facts {
                rows.push((format!("target.{i}.{k}"), Cell::from_json(v)));
            }
        }
    }
    for (i, a) in data.plan_analysis.iter().enumerate() {
        rows.push((
            format!("analysis.{i}.{}", a.finding.kind()),
            Cell::Text(a.finding.body_json().unwrap_or_default()),
        ));
    }
    if let Some(plan) = &d.plan_json {
        rows.push(("plan".to_owned(), text(plan)));
    }
    rows
}

fn run_sheet(data: &RunData) -> Result<Worksheet, XlsxError> {
    let mut ws = Worksheet::new();
    ws.set_name("run")?;
    let bold = Format::new().set_bold();
    let count = Format::new().set_num_format("#,##0");
    ws.write_string_with_format(0, 0, "key", &bold)?;
    ws.write_string_with_format(0, 1, "value", &bold)?;
    let rows = run_rows(data);
    for (r, (key, value)) in rows.iter().enumerate() {
        let r = u32::try_from(r + 1).map_err(|_| XlsxError::RowColumnLimitError)?;
        ws.write_string(r, 0, key)?;
        // Sizes read better grouped; the run id and counts are small anyway.
        let format = key.ends_with("_bytes").then_some(&count);
        write_cell(&mut ws, r, 1, value, format)?;
    }
    ws.set_column_width(0, width("key", rows.iter().map(|(k, _)| k.chars().count())))?;
    ws.set_column_width(
        1,
        width(
            "value",
            rows.iter()
                .map(|(_, v)| v.csv_text(Fmt::Plain).chars().count()),
        ),
    )?;
    ws.set_freeze_panes(1, 0)?;
    Ok(ws)
}
