//! The XLSX workbook of a run: sheets `steps` and `intervals` (the two CSV
//! tables as Excel Tables, so filters, pivot tables and slicers work on them
//! as they are) and `run` (the run's facts as key/value rows).

use super::{tables, Cell, Column, Fmt, RunData, Table};
use crate::ReportError;
use iorig_store::Store;
use rust_xlsxwriter::{Format, Table as XlTable, TableColumn, Workbook, Worksheet, XlsxError};
use serde_json::Value;

/// The rows of an Excel sheet, its header included (Excel's limit, and
/// rust_xlsxwriter's).
pub const MAX_SHEET_ROWS: u64 = 1_048_576;

/// Rows looked at for the intervals sheet's column widths: the first
/// page's values are typical of the rest.
const WIDTH_SAMPLE_ROWS: usize = 4096;

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

/// The interval rows of a run, refused when they do not fit one sheet
/// under its header: bad input, with what to export instead.
pub(super) fn check_rows(store: &Store, data: &RunData) -> Result<u64, ReportError> {
    if data.detail.run.kind == iorig_result::RunKind::Profile {
        return Ok(0);
    }
    let mut rows = 0;
    for s in &data.steps {
        rows += store.interval_row_count(s.step.id)?;
    }
    fits_a_sheet(data.detail.run.id.0, rows)?;
    Ok(rows)
}

/// `rows` interval rows and the header in one sheet, or why not.
fn fits_a_sheet(run: i64, rows: u64) -> Result<(), ReportError> {
    if rows >= MAX_SHEET_ROWS {
        return Err(ReportError::Usage(format!(
            "run {run} has {rows} interval rows (one per interval and operation); an XLSX sheet holds at most {MAX_SHEET_ROWS} rows, its header included: export it with --format csv (or json)"
        )));
    }
    Ok(())
}

pub(super) fn workbook(store: &Store, data: &RunData) -> Result<Workbook, ReportError> {
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
    let rows = check_rows(store, data)?;
    book.push_worksheet(table_sheet("steps", &tables::steps_table(data), 3).map_err(xlsx_err)?);
    intervals_sheet(&mut book, store, data, rows)?;
    let hosts = tables::hosts_table(data);
    if !hosts.rows.is_empty() {
        book.push_worksheet(table_sheet("hosts", &hosts, 4).map_err(xlsx_err)?);
        // Besides the pivot-ready sheet of every host, a sheet per host:
        // its own steps, as HCIBench gives each VM's results apart.
        for (name, table) in per_host(&hosts) {
            book.push_worksheet(table_sheet(&name, &table, 4).map_err(xlsx_err)?);
        }
    }
    book.push_worksheet(run_sheet(data).map_err(xlsx_err)?);
    Ok(book)
}

/// The `hosts` table split by host, in the order the hosts first appear,
/// each named as a sheet may be: `host NAME`, without the characters Excel
/// refuses in a sheet name and within its 31 characters (a number added
/// when two names come out the same).
fn per_host(hosts: &Table) -> Vec<(String, Table)> {
    let Some(col) = hosts.columns.iter().position(|c| c.name == "host") else {
        return Vec::new();
    };
    let mut out: Vec<(String, String, Table)> = Vec::new();
    for row in &hosts.rows {
        let host = match &row[col] {
            Cell::Text(t) => t.clone(),
            _ => continue,
        };
        match out.iter_mut().find(|(h, ..)| *h == host) {
            Some((_, _, t)) => t.rows.push(row.clone()),
            None => {
                let clean: String = host
                    .chars()
                    .map(|c| if "[]:*?/\\".contains(c) { '_' } else { c })
                    .collect();
                let mut name: String = format!("host {clean}").chars().take(31).collect();
                let mut n = 2;
                while out.iter().any(|(_, s, _)| s.eq_ignore_ascii_case(&name)) {
                    let suffix = format!(" {n}");
                    name = format!("host {clean}")
                        .chars()
                        .take(31 - suffix.len())
                        .collect::<String>()
                        + &suffix;
                    n += 1;
                }
                out.push((
                    host,
                    name,
                    Table {
                        columns: hosts.columns.clone(),
                        rows: vec![row.clone()],
                    },
                ));
            }
        }
    }
    out.into_iter().map(|(_, name, t)| (name, t)).collect()
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
        // A table's name takes letters, digits and underscores only (a
        // sheet's may have spaces and dots: "host 10.0.0.2").
        let table_name: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let xl = XlTable::new().set_name(table_name).set_columns(&columns);
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

/// The `intervals` sheet, as [`table_sheet`] makes a sheet but written
/// row by row in constant-memory mode as the store's pages are read: its
/// rows (`rows` of them, from [`check_rows`]) never sit in memory. The
/// Excel Table goes on first, since its header is row 0 and rows before
/// the last one written cannot be written again.
fn intervals_sheet(
    book: &mut Workbook,
    store: &Store,
    data: &RunData,
    rows: u64,
) -> Result<(), ReportError> {
    let columns: Vec<Column> = tables::interval_columns();
    let name = "intervals";
    let ws = book.add_worksheet_with_constant_memory();
    ws.set_name(name).map_err(xlsx_err)?;
    let formats: Vec<Option<Format>> = columns
        .iter()
        .map(|c| num_format(c.fmt).map(|f| Format::new().set_num_format(f)))
        .collect();
    let last_col = u16::try_from(columns.len().saturating_sub(1))
        .map_err(|_| xlsx_err(XlsxError::RowColumnLimitError))?;
    if rows == 0 {
        let bold = Format::new().set_bold();
        for (c, col) in columns.iter().enumerate() {
            let c = u16::try_from(c).map_err(|_| xlsx_err(XlsxError::RowColumnLimitError))?;
            ws.write_string_with_format(0, c, &col.name, &bold)
                .map_err(xlsx_err)?;
        }
        ws.autofilter(0, 0, 0, last_col).map_err(xlsx_err)?;
    } else {
        let last_row = u32::try_from(rows).map_err(|_| xlsx_err(XlsxError::RowColumnLimitError))?;
        let xl_columns: Vec<TableColumn> = columns
            .iter()
            .map(|c| TableColumn::new().set_header(&c.name))
            .collect();
        let xl = XlTable::new().set_name(name).set_columns(&xl_columns);
        ws.add_table(0, 0, last_row, last_col, &xl)
            .map_err(xlsx_err)?;
    }
    let mut longest: Vec<usize> = vec![0; columns.len()];
    let mut r: u32 = 0;
    tables::for_each_interval(store, data, |cells| {
        r += 1;
        // The count was read before; rows stored since (a running run)
        // stay out rather than land past the table.
        if u64::from(r) > rows {
            return Ok(());
        }
        for (c, cell) in cells.iter().enumerate() {
            if (r as usize) <= WIDTH_SAMPLE_ROWS {
                let chars = columns
                    .get(c)
                    .map_or(0, |col| cell.csv_text(col.fmt).chars().count());
                if let Some(l) = longest.get_mut(c) {
                    *l = (*l).max(chars);
                }
            }
            let c = u16::try_from(c).map_err(|_| xlsx_err(XlsxError::RowColumnLimitError))?;
            write_cell(
                ws,
                r,
                c,
                cell,
                formats.get(usize::from(c)).and_then(Option::as_ref),
            )
            .map_err(xlsx_err)?;
        }
        Ok(())
    })?;
    for (c, col) in columns.iter().enumerate() {
        let w = width(
            &col.name,
            std::iter::once(longest.get(c).copied().unwrap_or(0)),
        );
        let c = u16::try_from(c).map_err(|_| xlsx_err(XlsxError::RowColumnLimitError))?;
        ws.set_column_width(c, w).map_err(xlsx_err)?;
    }
    ws.set_freeze_panes(1, 0).map_err(xlsx_err)?;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sheet_holds_its_header_and_one_row_less_than_excel_s_limit() {
        assert!(fits_a_sheet(1, 0).is_ok());
        assert!(fits_a_sheet(1, MAX_SHEET_ROWS - 1).is_ok());
        // A week at 1 s: 604,800 intervals, three rows each.
        match fits_a_sheet(7, 3 * 604_800) {
            Err(ReportError::Usage(why)) => {
                assert!(
                    why.contains("1048576") && why.contains("--format csv"),
                    "{why}"
                );
                assert!(why.starts_with("run 7 has 1814400 interval rows"), "{why}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            fits_a_sheet(1, MAX_SHEET_ROWS),
            Err(ReportError::Usage(_))
        ));
    }
}
