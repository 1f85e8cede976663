//! Other tools' files: `iorig import FILE` prints the iorig plan a fio job
//! file becomes, and `iorig run FILE` runs it as that plan (the same
//! translation, so what import shows is what runs); `--output-format
//! fio-json[+]` writes the result in fio's JSON shape.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::plan_cmd::{run_plan, RunOptions};
use crate::{exit, Failure};
use iorig_cli::{ForeignArgs, RunArgs};
use iorig_import::foreign::{self, Plan};
use iorig_import::Format;
use iorig_run::fio_out::OutputFormat;
use iorig_run::plan::Invocation;
use std::path::Path;

/// The format of FILE: `--format`, else its content.
pub fn format_of(f: &ForeignArgs, text: &str) -> Result<Format, Failure> {
    match &f.input_format {
        Some(v) => Format::parse(v).map_err(|e| Failure::usage(e.to_string())),
        None => Ok(iorig_import::detect(text)),
    }
}

/// A job file or parameter file, held to a line's and a file's cap (a
/// line past 64 KiB is refused by its number, not read on).
fn read(path: &Path) -> Result<String, Failure> {
    iorig_import::read_text(path).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))
}

fn translate(
    path: &Path,
    text: &str,
    format: Format,
    f: &ForeignArgs,
    verify: bool,
    journal: bool,
) -> Result<Plan, Failure> {
    let o = foreign::Options {
        set: f.set.clone(),
        ignore_unsupported: f.ignore_unsupported,
        verify,
        journal,
    };
    foreign::translate(path, text, format, &o).map_err(|e| Failure::usage(e.to_string()))
}

fn tell_plan(printer: &Printer, p: &Plan) {
    for n in p.told() {
        printer.notice(&n);
    }
}

/// `iorig import FILE`.
pub fn import(path: &Path, f: &ForeignArgs) -> Result<u8, Failure> {
    let text = read(path)?;
    let format = format_of(f, &text)?;
    let p = translate(path, &text, format, f, false, false)?;
    // The plan on stdout, what was said about it on stderr.
    let printer = Printer::new(true, false);
    for n in p.told_on_import() {
        printer.notice(&n);
    }
    printer.json_stdout(p.toml.trim_end());
    Ok(exit::OK)
}

/// `iorig run FILE` with a fio job file or a vdbench parameter file: the
/// plan it becomes, run here (or on the parameter file's hosts).
pub fn run(a: &RunArgs, path: &Path, text: &str, format: Format) -> Result<u8, Failure> {
    // The flags were checked against the file's format (RunArgs::refusal).
    let out_format = a.output_format.unwrap_or(OutputFormat::Iorig);
    crate::store::check_json(a.json.as_deref())?;
    if let Some(d) = &a.foreign.vdbench_out {
        iorig_outfile::check_dir("--vdbench-out", d)?;
    }
    let verify = a.workload.verify == Some(true);
    let p = translate(path, text, format, &a.foreign, verify, a.journal.is_some())?;
    // fio's JSON goes to stdout unless --json names a file; the text then
    // goes to stderr, so stdout is one JSON document and nothing else.
    let json_stdout = a.json_to_stdout();
    let printer = Printer::new(json_stdout, a.quiet);
    tell_plan(&printer, &p);
    let mut inv = Invocation::from_text(p.source.clone(), p.toml.clone());
    inv.allow_destroy = a.allow_destroy;
    // vdbench's journal: where --journal says, else in the sds' journal
    // directory, else beside the parameter file (never on the storage
    // under test).
    if p.journal {
        let j = match &a.journal {
            Some(j) => j.clone(),
            None => {
                let mut name = path.file_name().unwrap_or_default().to_os_string();
                name.push(".jnl");
                match &p.journal_dir {
                    Some(dir) => Path::new(dir).join(name),
                    None => path.with_file_name(name),
                }
            }
        };
        printer.notice(&format!("journal: {}", j.display()));
        inv.journal = Some(j);
    }
    // The stored run says where it came from and what was left out.
    let mut labels = crate::labels(&a.record.labels)?;
    labels
        .entry("source".into())
        .or_insert_with(|| p.source.clone());
    if !p.ignored.is_empty() {
        labels.insert("ignored".into(), p.ignored.join("; "));
    }
    let (code, results, run) = run_plan(
        inv,
        RunOptions {
            kind: iorig_store::RunKind::Plan,
            db: a.record.db.clone(),
            no_db: a.record.no_db,
            labels,
            dry_run: a.dry_run,
            // A job that ends by its bytes has no time to estimate.
            yes: true,
            quiet: a.quiet,
            // A parameter file runs on --hosts (or its hd= hosts) as a
            // plan does; a fio job file was refused them (RunArgs::refusal).
            hosts: a.hosts.clone(),
            metrics: a.metrics.clone(),
            collect: a.collect.collect.clone(),
            text_to_stderr: json_stdout,
            // The job's own --json is written below, in its format.
            json: None,
        },
    )?;
    if a.dry_run {
        return Ok(code);
    }
    if let Some(t) = &p.fio {
        iorig_run::fio_out::write_logs(&t.jobs, &results)?;
    }
    if let (Some(d), Some(id)) = (&a.foreign.vdbench_out, run) {
        // vdbench's flatfile.html and summary.html of the stored run.
        let store = crate::store::open_existing(a.record.db.as_ref())?;
        let e =
            iorig_report::export::export_vdbench(&store, id).map_err(crate::report_cmd::failed)?;
        if !d.is_dir() {
            iorig_outfile::create_dir("--vdbench-out", d)?;
        }
        for (name, text) in [("flatfile.html", e.flatfile), ("summary.html", e.summary)] {
            crate::store::write_output("--vdbench-out", &d.join(name), text.as_bytes())?;
        }
        let (f, s) = (d.join("flatfile.html"), d.join("summary.html"));
        printer.notice(&format!("vdbench files: {}, {}", f.display(), s.display()));
    }
    let dest = a.json.clone().unwrap_or_else(|| "-".into());
    match (out_format, &p.fio) {
        (OutputFormat::Iorig, _) => {
            if let (Some(_), Some(id)) = (&a.json, run) {
                let store = crate::store::open_existing(a.record.db.as_ref())?;
                let doc = iorig_report::export::export_json(&store, id)
                    .map_err(|e| Failure::runtime(e.to_string()))?;
                crate::output::json::write_json_doc(&printer, &dest, &doc)?;
            }
        }
        (f, Some(t)) => {
            let doc = iorig_run::fio_out::document_of_plan(t, &results, f);
            crate::output::json::write_json_doc(&printer, &dest, &doc)?;
        }
        (_, None) => {}
    }
    Ok(code)
}
