//! `iorig verify --journal FILE`: the offline scan of `iorig-run`, with
//! errors printed as they are found, a summary and the JSON document.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::{exit, Failure};
use iorig_run::verify_scan::{self, ScanOptions};
use iorig_text::run::validation_lines;
use iorig_text::term::ErrorSink;

pub fn verify(a: iorig_cli::VerifyArgs) -> Result<u8, Failure> {
    let json_to_stdout = a.json.as_deref() == Some("-");
    crate::store::check_json(a.json.as_deref())?;
    let printer = Printer::new(json_to_stdout, a.quiet);
    let opts = ScanOptions {
        journal: a.journal.clone(),
        max_errors: a.max_errors,
        buffered: a.buffered,
    };
    let state = verify_scan::open(&opts)?;
    if !a.quiet {
        printer.line(&iorig_text::run::verify_opening_line(&a.journal, &state));
    }
    let mut sink = ErrorSink {
        screen: &printer,
        seen: 0,
    };
    let (doc, summary) = verify_scan::scan(&opts, &state, &mut sink)?;
    printer.line(&iorig_text::run::verify_done_line(&doc));
    if summary.errors > 0 {
        printer.lines(validation_lines(&summary).into_iter().skip(1));
    }
    if let Some(j) = &a.json {
        crate::output::json::write_json_doc(&printer, j, &doc)?;
    }
    Ok(if doc.errors > 0 {
        exit::VALIDATION
    } else {
        exit::OK
    })
}
