//! `iorig profile`: sample /proc/diskstats (or read a recording), print a live
//! table and a summary, judge the figures with rule sets, write JSON, CSV and
//! a replay workload, and store the profile as a run.
//!
//! Every input is checked before the first snapshot, so bad input writes
//! nothing. Ctrl-C is a normal way to end a live profile: the intervals so far
//! (and a last, shorter one) are kept, and the exit code is 0.

use crate::output::json::write_json_doc;
use crate::output::Printer;
use crate::output::Screen as _;
use crate::store::{check_output, check_output_dir, writer, StoreChoice};
use crate::{exit, Failure};
use iorig_cli::ProfileArgs;
use iorig_profile::emit::workload_toml;
use iorig_run::csv::ProfileCsv;
use iorig_run::event::Fanout;
use iorig_run::profile::Source;
use iorig_run::Sink;
use iorig_text::profile as text;

/// Every input is checked before the first snapshot.
pub fn profile(a: ProfileArgs) -> Result<u8, Failure> {
    if let Some(why) = a.refusal() {
        return Err(Failure::usage(why));
    }
    let source = match &a.diskstats {
        Some(dir) => Source::recorded(dir)?,
        None => {
            let live = Source::live(a.interval.as_deref(), a.time.as_deref(), a.record.clone())?;
            if let Some(dir) = &a.record {
                check_output_dir("--record", dir)?;
            }
            live
        }
    };
    let rules = iorig_run::profile::rule_sets(&a.rules)?;
    crate::store::check_json(a.json.as_deref())?;
    for (flag, path) in [("--csv", &a.csv), ("--emit-workload", &a.emit_workload)] {
        if let Some(p) = path {
            check_output(flag, p)?;
        }
    }
    let selection = iorig_run::profile::selection(&a.devices);
    let labels = crate::labels(&a.record_store.labels)?;
    let json_stdout = a.json.as_deref() == Some("-");
    let mut printer = Printer::new(json_stdout, a.quiet);
    let mut store = writer(StoreChoice {
        db: a.record_store.db.as_ref(),
        no_db: a.record_store.no_db,
    })?;
    let mut csv = match &a.csv {
        Some(path) => Some(ProfileCsv::create(path)?),
        None => None,
    };
    if !a.quiet {
        printer.line(&text::source_line(&source));
        printer.line(&text::header_line());
    }
    let stop = crate::signals::install();
    let outcome = {
        let mut term = iorig_text::term::ProfileSink {
            screen: &mut printer,
        };
        let mut sinks: Vec<&mut dyn Sink> = vec![&mut term];
        if let Some(c) = csv.as_mut() {
            sinks.push(c);
        }
        iorig_run::profile::run(
            &source,
            &selection,
            &rules,
            &labels,
            &mut store,
            &mut Fanout(sinks),
            &stop,
        )?
    };
    let p = &outcome.profile;
    printer.line("");
    for l in text::summary_lines(p)
        .into_iter()
        .chain(text::verdict_lines(&outcome.evaluations))
    {
        printer.line(&l);
    }

    if let Some(path) = &a.emit_workload {
        let source = outcome.source_text(&source);
        match workload_toml(p, a.emit_rate, &source) {
            Ok(text) => {
                crate::store::write_output("--emit-workload", path, text.as_bytes())?;
                printer.line(&format!(
                    "workload written to {} (iorig run {} --target PATH)",
                    path.display(),
                    path.display()
                ));
            }
            Err(e) => printer.notice(&format!("--emit-workload: {e}")),
        }
    }
    if let Some(j) = &a.json {
        let doc = outcome.document(&source, &labels, store.run().map(|r| r.0));
        write_json_doc(&printer, j, &doc)?;
    }
    Ok(if outcome.fault.is_some() {
        exit::RUNTIME
    } else {
        exit::OK
    })
}
