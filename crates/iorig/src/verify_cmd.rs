//! `iorig verify --journal FILE`: the offline scan of `iorig-run`, with
//! errors printed as they are found, a summary and the JSON document.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::{exit, Failure};
use iorig_run::verify_scan::{self, ScanOptions};
use iorig_run::{Event, Sink};
use iorig_text::run::validation_lines;
use iorig_text::term::print_validation_error;
use std::path::Path;

/// Prints validation errors as the scan finds them.
struct ErrorPrinter<'a> {
    printer: &'a Printer,
    seen: u64,
}

impl Sink for ErrorPrinter<'_> {
    fn event(&mut self, ev: &Event<'_>) {
        match ev {
            Event::ValidationError(e) => print_validation_error(self.printer, e, &mut self.seen),
            Event::Notice(n) => self.printer.notice(n),
            _ => {}
        }
    }
}

pub fn verify(a: iorig_cli::VerifyArgs) -> Result<u8, Failure> {
    let json_to_stdout = a.json.as_deref() == Some("-");
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        crate::store::check_output("--json", Path::new(j))?;
    }
    let printer = Printer::new(json_to_stdout, a.quiet);
    let opts = ScanOptions {
        journal: a.journal.clone(),
        max_errors: a.max_errors,
        buffered: a.buffered,
    };
    let state = verify_scan::open(&opts)?;
    if !a.quiet {
        let (written, unknown) = verify_scan::unit_counts(&state);
        let unknown = match unknown {
            0 => String::new(),
            n => format!(", {n} unchecked (their loss was reported by a run)"),
        };
        printer.line(&format!(
            "iorig verify {}: {} target(s), {}-byte units, {} written{unknown}, {} write(s) in flight at the end of the log",
            a.journal.display(),
            state.targets.len(),
            state.unit_bytes,
            written,
            state.in_flight.len()
        ));
    }
    let mut sink = ErrorPrinter {
        printer: &printer,
        seen: 0,
    };
    let (doc, summary) = verify_scan::scan(&opts, &state, &mut sink)?;
    printer.line(&format!(
        "verify: {} unit(s) read ({:.1} MiB in {:.1}s), {} with known data checked, {} error(s)",
        doc.units_read,
        doc.bytes_read as f64 / (1 << 20) as f64,
        doc.duration_s,
        doc.units_checked,
        doc.errors
    ));
    if summary.errors > 0 {
        for l in validation_lines(&summary).into_iter().skip(1) {
            printer.line(&l);
        }
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
