//! `iorig report`, `iorig export` and `iorig compare`: the store's runs turned
//! into files people read. The rendering lives in `iorig-report`; this module
//! picks the files and directories and says where they went.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::store::{check_output, check_output_dir, open_read_only, write_output};
use crate::{exit, Failure};
use iorig_cli::ExportFormat;
use iorig_report::export::Kind;
use iorig_report::html::Rendered;
use iorig_report::ReportError;
use iorig_store::{Location, RunId, RunKind};
use std::path::{Path, PathBuf};

/// A report that could not be made: bad input (no such run, a page that
/// cannot be drawn) or a fault reading the store.
pub fn failed(e: ReportError) -> Failure {
    match e {
        ReportError::NoSuchRun(id) => Failure::usage(format!(
            "no run {id} in the result store; iorig runs list shows the runs"
        )),
        ReportError::Usage(why) => Failure::usage(why),
        e => Failure::runtime(format!("result store: {e}")),
    }
}

/// Writes index.html and every chart as SVG and PNG into `dir`.
pub fn write_rendered(dir: &Path, r: &Rendered, printer: &Printer) -> Result<(), Failure> {
    iorig_outfile::create_dir("--out", dir)?;
    let (files, png_failed) = r.files();
    for (name, bytes) in &files {
        write_output("--out", &dir.join(name), bytes)?;
    }
    if let Some(e) = png_failed {
        printer.notice(&format!("some charts have no PNG copy: {e}"));
    }
    printer.line(&format!(
        "wrote {} ({} chart(s) also as SVG and PNG)",
        dir.join("index.html").display(),
        r.charts.len()
    ));
    Ok(())
}

pub fn report(
    id: i64,
    out: Option<PathBuf>,
    steps: Option<&str>,
    db: Option<&Location>,
) -> Result<u8, Failure> {
    let dir = out.unwrap_or_else(|| PathBuf::from(format!("iorig-report-{id}")));
    check_output_dir("--out", &dir)?;
    let store = open_read_only(db)?;
    let rendered = iorig_report::pages::report(&store, id, steps).map_err(failed)?;
    write_rendered(&dir, &rendered, &Printer::new(false, false))?;
    Ok(exit::OK)
}

pub fn export(
    id: i64,
    format: ExportFormat,
    out: &Path,
    db: Option<&Location>,
) -> Result<u8, Failure> {
    let kind = match format {
        ExportFormat::Csv => Kind::Csv,
        ExportFormat::Xlsx => Kind::Xlsx,
        ExportFormat::Json => Kind::Json,
        ExportFormat::Hlog => Kind::Hlog,
    };
    for p in kind.paths(out) {
        check_output("--out", &p)?;
    }
    let store = open_read_only(db)?;
    let run = store.get_run(RunId(id)).map_err(|e| failed(e.into()))?;
    let run = run.ok_or_else(|| failed(ReportError::NoSuchRun(id)))?;
    if run.run.kind == RunKind::Profile && kind == Kind::Hlog {
        return Err(Failure::usage(format!(
            "run {id} is a profile: /proc/diskstats gives no latency histograms to export; use --format csv, xlsx or json"
        )));
    }
    // A run the format cannot hold (XLSX's rows) is a usage error.
    let exporting = |e: ReportError| match e {
        ReportError::Usage(_) => failed(e),
        e => Failure::runtime(format!("exporting run {id}: {e}")),
    };
    let files = iorig_report::export::files(&store, RunId(id), kind, out).map_err(exporting)?;
    let printer = Printer::new(false, false);
    for f in files {
        // Streamed (a page of intervals at a time), renamed in place when whole.
        let mut file = iorig_outfile::AtomicFile::create("--out", &f.path)?;
        f.write_to(&store, std::io::BufWriter::new(&mut file))
            .map_err(exporting)?;
        file.commit()?;
        printer.line(&format!("wrote {} ({})", f.path.display(), f.holds));
    }
    Ok(exit::OK)
}

pub fn compare(ids: &[i64], out: Option<PathBuf>, db: Option<&Location>) -> Result<u8, Failure> {
    iorig_report::pages::distinct(ids).map_err(failed)?;
    let dir = out.unwrap_or_else(|| {
        let names: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
        PathBuf::from(format!("iorig-compare-{}", names.join("-")))
    });
    check_output_dir("--out", &dir)?;
    let store = open_read_only(db)?;
    let (rendered, lines) = iorig_report::pages::compare(&store, ids).map_err(failed)?;
    let printer = Printer::new(false, false);
    printer.lines(lines);
    write_rendered(&dir, &rendered, &printer)?;
    Ok(exit::OK)
}
