//! `iorig report`, `iorig export` and `iorig compare`: the store's runs turned
//! into files people read. The rendering lives in `iorig-report`; this module
//! picks the files and directories and says where they went.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::store::{check_output, check_output_dir, open_read_only, write_output};
use crate::{exit, Failure};
use iorig_cli::ExportFormat;
use iorig_report::export::Kind;
use iorig_report::html::{render_compare, render_report_with, Details, Rendered};
use iorig_report::html::{render_profile_compare, render_profile_report};
use iorig_report::model::{ProfileReport, RunReport};
use iorig_store::Location;
use iorig_store::{RunId, RunKind, Store};
use std::path::{Path, PathBuf};

/// The kind of stored run `id`; a missing run is bad input.
fn kind_of(store: &Store, id: i64) -> Result<RunKind, Failure> {
    match store.get_run(RunId(id)) {
        Ok(Some(r)) => Ok(r.run.kind),
        Ok(None) => Err(Failure::usage(format!(
            "no run {id} in the result store; iorig runs list shows the runs"
        ))),
        Err(e) => Err(Failure::runtime(format!("result store: {e}"))),
    }
}

fn load(store: &Store, id: i64) -> Result<RunReport, Failure> {
    kind_of(store, id)?;
    RunReport::load(store, RunId(id))
        .map_err(|e| Failure::runtime(format!("reading run {id}: {e}")))
}

fn load_profile(store: &Store, id: i64) -> Result<ProfileReport, Failure> {
    ProfileReport::load(store, RunId(id))
        .map_err(|e| Failure::runtime(format!("reading profile {id}: {e}")))
}

fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    write_output("--out", path, bytes)
}

/// Writes index.html and every chart as SVG and PNG into `dir`.
pub fn write_rendered(dir: &Path, r: &Rendered, printer: &Printer) -> Result<(), Failure> {
    iorig_outfile::create_dir("--out", dir)?;
    let (files, png_failed) = r.files();
    for (name, bytes) in &files {
        write(&dir.join(name), bytes)?;
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

/// `--steps 5,10-20`: step numbers (from 1), each one in the run.
fn parse_steps(text: &str, run: &RunReport) -> Result<Vec<i64>, Failure> {
    let count = run.steps.len() as i64;
    let bad = |why: String| {
        Failure::usage(format!(
            "bad --steps '{text}': {why}; give step numbers from 1 to {count}, e.g. 5,10-20"
        ))
    };
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let num = |t: &str| {
            t.trim()
                .parse::<i64>()
                .map_err(|_| bad(format!("'{part}' is not a number or a range")))
        };
        let (a, b) = (num(a)?, num(b)?);
        if a < 1 || b > count || a > b {
            return Err(bad(format!("'{part}' is outside the run's steps")));
        }
        out.extend(a..=b);
    }
    Ok(out)
}

pub fn report(
    id: i64,
    out: Option<PathBuf>,
    steps: Option<&str>,
    db: Option<&Location>,
) -> Result<u8, Failure> {
    let printer = Printer::new(false, false);
    let dir = out.unwrap_or_else(|| PathBuf::from(format!("iorig-report-{id}")));
    check_output_dir("--out", &dir)?;
    let store = open_read_only(db)?;
    if kind_of(&store, id)? == RunKind::Profile {
        if steps.is_some() {
            return Err(Failure::usage(format!(
                "run {id} is a profile, which has no steps to draw; leave out --steps"
            )));
        }
        let p = load_profile(&store, id)?;
        write_rendered(&dir, &render_profile_report(&p), &printer)?;
        return Ok(exit::OK);
    }
    let run = load(&store, id)?;
    let details = match steps {
        Some(text) => Details::Steps(parse_steps(text, &run)?),
        None => Details::Auto,
    };
    write_rendered(&dir, &render_report_with(&run, &details), &printer)?;
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
    if kind_of(&store, id)? == RunKind::Profile && kind == Kind::Hlog {
        return Err(Failure::usage(format!(
            "run {id} is a profile: /proc/diskstats gives no latency histograms to export; use --format csv, xlsx or json"
        )));
    }
    let files = iorig_report::export::files(&store, RunId(id), kind, out)
        .map_err(|e| Failure::runtime(format!("exporting run {id}: {e}")))?;
    let printer = Printer::new(false, false);
    for f in files {
        write(&f.path, &f.bytes)?;
        printer.line(&format!("wrote {} ({})", f.path.display(), f.holds));
    }
    Ok(exit::OK)
}

pub fn compare(ids: &[i64], out: Option<PathBuf>, db: Option<&Location>) -> Result<u8, Failure> {
    if let Some(twice) = ids
        .iter()
        .find(|id| ids.iter().filter(|x| x == id).count() > 1)
    {
        return Err(Failure::usage(format!(
            "run {twice} is given twice; compare different runs, e.g. iorig compare {twice} OTHER"
        )));
    }
    let printer = Printer::new(false, false);
    let dir = out.unwrap_or_else(|| {
        let names: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
        PathBuf::from(format!("iorig-compare-{}", names.join("-")))
    });
    check_output_dir("--out", &dir)?;
    let store = open_read_only(db)?;
    let kinds = ids
        .iter()
        .map(|id| kind_of(&store, *id))
        .collect::<Result<Vec<_>, _>>()?;
    let profiles = kinds.iter().filter(|k| **k == RunKind::Profile).count();
    if profiles == ids.len() {
        let runs = ids
            .iter()
            .map(|id| load_profile(&store, *id))
            .collect::<Result<Vec<_>, _>>()?;
        let (rendered, lines) = render_profile_compare(&runs);
        for l in lines {
            printer.line(&l);
        }
        write_rendered(&dir, &rendered, &printer)?;
        return Ok(exit::OK);
    }
    if profiles > 0 {
        let which: Vec<String> = ids
            .iter()
            .zip(&kinds)
            .filter(|(_, k)| **k == RunKind::Profile)
            .map(|(id, _)| id.to_string())
            .collect();
        return Err(Failure::usage(format!(
            "run(s) {} are profiles and the others test runs: compare profiles with profiles, test runs with test runs",
            which.join(", ")
        )));
    }
    let runs = ids
        .iter()
        .map(|id| load(&store, *id))
        .collect::<Result<Vec<_>, _>>()?;
    let (rendered, comparison) = render_compare(&runs);
    for l in comparison.table_lines() {
        printer.line(&l);
    }
    write_rendered(&dir, &rendered, &printer)?;
    Ok(exit::OK)
}
