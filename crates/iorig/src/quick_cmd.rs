//! `iorig quick`: the built-in five-params plan with short defaults, closing
//! with the five figures a storage engineer asks for first.

use crate::labels as parse_labels;
use crate::output::Printer;
use crate::output::Screen as _;
use crate::plan_cmd::{run_plan, RunOptions};
use crate::Failure;
use iorig_cli::QuickArgs;
use iorig_run::plan::Invocation;
use iorig_spec::DEFAULT_TARGET;
use iorig_store::RunKind;

const QUICK_STEP_TIME: &str = "10s";

pub fn quick(a: QuickArgs) -> Result<u8, Failure> {
    let mut inv = Invocation::from_builtin("five-params")?;
    inv.targets = Some(vec![a
        .target
        .clone()
        .unwrap_or_else(|| DEFAULT_TARGET.to_string())]);
    // No default size: the default scratch file is made 1 GiB when missing,
    // another missing file needs --size (a mistyped path is refused), and an
    // existing file or device is tested whole unless --size says otherwise.
    inv.size = a.size.clone();
    inv.step_time = Some(
        a.step_time
            .clone()
            .unwrap_or_else(|| QUICK_STEP_TIME.to_string()),
    );
    inv.hot_size = a.hot_size.clone();
    inv.allow_destroy = a.allow_destroy;
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
            text_to_stderr: false,
        },
    )?;
    let printer = Printer::new(false, false);
    if !results.is_empty() {
        let figures = iorig_run::plan::five_figures(&results);
        for l in iorig_text::run::five_figures_lines(&figures) {
            printer.line(&l);
        }
    }
    Ok(code)
}
