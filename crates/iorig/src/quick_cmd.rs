//! `iorig quick`: the built-in five-params plan with short defaults, closing
//! with the five figures a storage engineer asks for first.

use crate::labels as parse_labels;
use crate::output::Printer;
use crate::plan_cmd::{run_plan, RunOptions};
use crate::Failure;
use iorig_cli::QuickArgs;
use iorig_store::RunKind;

pub fn quick(a: QuickArgs) -> Result<u8, Failure> {
    let inv = a.invocation()?;
    let (code, results, _) = run_plan(
        inv,
        RunOptions {
            kind: RunKind::Quick,
            db: a.record.db.clone(),
            no_db: a.record.no_db,
            labels: parse_labels(&a.record.labels)?,
            dry_run: a.dry_run,
            yes: false,
            quiet: a.quiet,
            hosts: a.hosts,
            metrics: Default::default(),
            collect: Vec::new(),
            text_to_stderr: a.json.as_deref() == Some("-"),
            json: a.json.clone(),
        },
    )?;
    let printer = Printer::new(a.json.as_deref() == Some("-"), false);
    if !results.is_empty() {
        let figures = iorig_run::plan::five_figures(&results);
        printer.lines(iorig_text::run::five_figures_lines(&figures));
    }
    Ok(code)
}
