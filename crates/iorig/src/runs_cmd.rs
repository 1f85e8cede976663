//! `iorig runs list|show|label|delete`: reading and curating the result store.

use crate::cli::parse_labels;
use crate::cli::RunsCommand;
use crate::output::Printer;
use crate::store::{open_existing, open_read_only};
use crate::{exit, Failure};
use iorig_store::{RunId, Store, StoreError};

fn store_err(e: StoreError) -> Failure {
    Failure::runtime(format!("result store: {e}"))
}

fn no_run(id: i64) -> Failure {
    Failure::usage(format!(
        "no run {id} in the result store; iorig runs list shows the runs"
    ))
}

pub fn runs(cmd: RunsCommand) -> Result<u8, Failure> {
    let printer = Printer::new(false, false);
    match cmd {
        RunsCommand::List { store, json } => {
            let s = open_read_only(store.db.as_deref())?;
            list(&printer, &s, json)
        }
        RunsCommand::Show { id, store, json } => {
            let s = open_read_only(store.db.as_deref())?;
            show(&printer, &s, id, json)
        }
        RunsCommand::Label { id, labels, store } => {
            let labels = parse_labels(&labels)?;
            let s = open_existing(store.db.as_deref())?;
            if s.get_run(RunId(id)).map_err(store_err)?.is_none() {
                return Err(no_run(id));
            }
            for (k, v) in &labels {
                s.set_label(RunId(id), k, v).map_err(store_err)?;
            }
            Ok(exit::OK)
        }
        RunsCommand::Delete { id, store } => {
            let s = open_existing(store.db.as_deref())?;
            if s.get_run(RunId(id)).map_err(store_err)?.is_none() {
                return Err(no_run(id));
            }
            s.delete_run(RunId(id)).map_err(store_err)?;
            printer.line(&format!("deleted run {id}"));
            Ok(exit::OK)
        }
    }
}

fn list(printer: &Printer, s: &Store, as_json: bool) -> Result<u8, Failure> {
    let runs = s.list_runs().map_err(store_err)?;
    if as_json {
        let text = serde_json::to_string_pretty(&runs)
            .map_err(|e| Failure::runtime(format!("encoding JSON: {e}")))?;
        printer.line(&text);
        return Ok(exit::OK);
    }
    let mut listed = Vec::new();
    for run in runs {
        listed.push(iorig_text::runs::ListedRun {
            steps: s.steps(run.id).map_err(store_err)?,
            targets: s.target_facts(run.id).map_err(store_err)?,
            run,
        });
    }
    for l in iorig_text::runs::list_lines(&listed) {
        printer.line(&l);
    }
    Ok(exit::OK)
}

fn show(printer: &Printer, s: &Store, id: i64, as_json: bool) -> Result<u8, Failure> {
    let run = s
        .get_run(RunId(id))
        .map_err(store_err)?
        .ok_or_else(|| no_run(id))?;
    if as_json {
        // The export's document (iorig.run/1) without the steps' intervals.
        let doc = iorig_report::export::show_json(s, RunId(id))
            .map_err(|e| Failure::runtime(format!("reading run {id}: {e}")))?;
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| Failure::runtime(format!("encoding JSON: {e}")))?;
        printer.line(&text);
        return Ok(exit::OK);
    }
    let steps = s.steps(RunId(id)).map_err(store_err)?;
    let analysis = s.analysis(RunId(id)).map_err(store_err)?;
    let targets = s.target_facts(RunId(id)).map_err(store_err)?;
    for l in iorig_text::runs::show_lines(&run, &targets, &steps, &analysis) {
        printer.line(&l);
    }
    // A step of several jobs: each job's own part.
    for step in &steps {
        let jobs = s.step_jobs(step.id).map_err(store_err)?;
        if jobs.is_empty() {
            continue;
        }
        printer.line(&format!("jobs of step {} ({}):", step.index + 1, step.name));
        for l in iorig_text::hosts::jobs_lines(&jobs) {
            printer.line(&format!("  {l}"));
        }
    }
    // A multi-host step: each host's own part.
    for step in &steps {
        let hosts = s.step_hosts(step.id).map_err(store_err)?;
        if hosts.is_empty() {
            continue;
        }
        printer.line(&format!(
            "hosts of step {} ({}):",
            step.index + 1,
            step.name
        ));
        for l in iorig_text::hosts::hosts_lines(&hosts) {
            printer.line(&format!("  {l}"));
        }
    }
    Ok(exit::OK)
}
