//! `iorig runs list|show|label|delete|push`: reading and curating the
//! result store, and copying runs into a team's.

use crate::labels as parse_labels;
use crate::output::Printer;
use crate::output::Screen as _;
use crate::store::{open_existing, open_read_only};
use crate::{exit, Failure};
use iorig_cli::RunsCommand;
use iorig_store::{Location, Pushed, RunId, Store, StoreError};

fn store_err(e: StoreError) -> Failure {
    Failure::runtime(format!("result store: {e}"))
}

/// Run `id` in `s`, or the line that says there is none.
fn existing(s: &Store, id: i64) -> Result<iorig_store::RunDetail, Failure> {
    s.get_run(RunId(id))
        .map_err(store_err)?
        .ok_or_else(|| no_run(id))
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
            let s = open_read_only(store.db.as_ref())?;
            list(&printer, &s, json)
        }
        RunsCommand::Show { id, store, json } => {
            let s = open_read_only(store.db.as_ref())?;
            show(&printer, &s, id, json)
        }
        RunsCommand::Label { id, labels, store } => {
            let labels = parse_labels(&labels)?;
            let s = open_existing(store.db.as_ref())?;
            existing(&s, id)?;
            for (k, v) in &labels {
                s.set_label(RunId(id), k, v).map_err(store_err)?;
            }
            Ok(exit::OK)
        }
        RunsCommand::Delete { id, store } => {
            let s = open_existing(store.db.as_ref())?;
            existing(&s, id)?;
            s.delete_run(RunId(id)).map_err(store_err)?;
            printer.line(&format!("deleted run {id}"));
            Ok(exit::OK)
        }
        RunsCommand::Push {
            ids,
            all,
            to,
            store,
        } => push(&printer, store.db.as_ref(), &ids, all, &to),
    }
}

/// `runs push`: every id is checked before anything is copied; each run is
/// then copied in a transaction of its own, so a failure part way leaves
/// the runs before it pushed whole and the rest not at all.
fn push(
    printer: &Printer,
    db: Option<&Location>,
    ids: &[i64],
    all: bool,
    to: &Location,
) -> Result<u8, Failure> {
    // Read-write: a store from before schema version 9 gets its runs' uids.
    let source = open_existing(db)?;
    let runs: Vec<RunId> = if all {
        source
            .list_runs()
            .map_err(store_err)?
            .into_iter()
            .map(|r| r.id)
            .collect()
    } else {
        for &id in ids {
            existing(&source, id)?;
        }
        ids.iter().map(|&id| RunId(id)).collect()
    };
    let target = crate::store::open_for_write(Some(to))?;
    let (mut copied, mut there) = (0usize, 0usize);
    for run in runs {
        let pushed = source.push_run(run, &target).map_err(|e| {
            Failure::runtime(format!(
                "pushing run {run} to {to}: {e}; the runs before it were pushed, push again to finish"
            ))
        })?;
        let running = source
            .get_run(run)
            .map_err(store_err)?
            .is_some_and(|d| d.run.status == iorig_store::RunStatus::Running);
        match pushed {
            Pushed::AlreadyThere(_) => there += 1,
            _ => copied += 1,
        }
        printer.line(&iorig_text::runs::pushed_line(run, &pushed, running));
    }
    printer.line(&iorig_text::runs::pushed_total_line(copied, there, to));
    Ok(exit::OK)
}

fn list(printer: &Printer, s: &Store, as_json: bool) -> Result<u8, Failure> {
    let runs = s.list_runs().map_err(store_err)?;
    if as_json {
        let text = serde_json::to_string_pretty(&runs)
            .map_err(|e| Failure::runtime(format!("encoding JSON: {e}")))?;
        printer.line(&text);
        return Ok(exit::OK);
    }
    printer.lines(iorig_text::runs::list(s).map_err(store_err)?);
    Ok(exit::OK)
}

fn show(printer: &Printer, s: &Store, id: i64, as_json: bool) -> Result<u8, Failure> {
    let run = iorig_store::StoredRun::load(s, RunId(id))
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
    printer.lines(iorig_text::runs::show(&run));
    Ok(exit::OK)
}
