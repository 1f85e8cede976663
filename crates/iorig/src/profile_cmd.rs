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
use iorig_profile::emit::{workload_toml, EmitRate};
use iorig_profile::rules::RuleSet;
use iorig_profile::Selection;
use iorig_run::csv::ProfileCsv;
use iorig_run::event::Fanout;
use iorig_run::profile::Source;
use iorig_run::Sink;
use iorig_text::profile as text;
use std::collections::BTreeMap;

/// Everything checked before the first snapshot.
struct Checked {
    source: Source,
    selection: Selection,
    rules: Vec<RuleSet>,
    emit_rate: EmitRate,
    labels: BTreeMap<String, String>,
}

fn check(a: &ProfileArgs) -> Result<Checked, Failure> {
    let emit_rate = EmitRate::parse(&a.emit_rate).ok_or_else(|| {
        Failure::usage(format!("bad emit-rate '{}': use mean or peak", a.emit_rate))
    })?;
    let source = match &a.diskstats {
        Some(dir) => {
            for (flag, given) in [("--interval", &a.interval), ("--time", &a.time)] {
                if given.is_some() {
                    return Err(Failure::usage(format!(
                        "{flag} does not apply to --diskstats: a recording's intervals are the times between its snapshots; drop {flag}"
                    )));
                }
            }
            Source::recorded(dir)?
        }
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
    if let Some(c) = &a.csv {
        check_output("--csv", c)?;
    }
    if let Some(w) = &a.emit_workload {
        check_output("--emit-workload", w)?;
    }
    Ok(Checked {
        source,
        selection: iorig_run::profile::selection(&a.devices),
        rules,
        emit_rate,
        labels: crate::labels(&a.record_store.labels)?,
    })
}

// ------------------------------------------------------------------ run

pub fn profile(a: ProfileArgs) -> Result<u8, Failure> {
    let c = check(&a)?;
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
        printer.line(&text::source_line(&c.source));
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
            &c.source,
            &c.selection,
            &c.rules,
            &c.labels,
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
        let source = outcome.source_text(&c.source);
        match workload_toml(p, c.emit_rate, &source) {
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
        let doc = outcome.document(&c.source, &c.labels, store.run().map(|r| r.0));
        write_json_doc(&printer, j, &doc)?;
    }
    Ok(if outcome.fault.is_some() {
        exit::RUNTIME
    } else {
        exit::OK
    })
}
