//! The one place that prints. Human-readable text goes to stdout, or to stderr
//! when stdout carries JSON (`--json -`); errors and notices go to stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

pub mod json;

use crate::exit;
use iorig_text::safe::{printable, printable_json};
use iorig_text::term::Bar;
pub use iorig_text::term::Screen;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write to stdout failed (the reader went away): later lines are
/// dropped instead of failing again, and the run was told to stop.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes one line to stdout as it is (every caller has made it
/// printable). A closed pipe (`iorig runs list | head -2`) is not a crash:
/// output stops and a running test is interrupted cleanly.
fn write_stdout(line: &str) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut o = std::io::stdout().lock();
    if writeln!(o, "{line}").and_then(|_| o.flush()).is_err() {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        crate::signals::output_closed();
    }
}

/// Writes one line of text to stdout.
fn out(text: &str) {
    write_stdout(&printable(text));
}

/// Writes one line to stderr; if stderr is gone too there is nobody to tell.
fn err(text: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "{}", printable(text));
}

/// Writes JSON to stdout, as [`out`] does other text.
fn out_json(text: &str) {
    write_stdout(&printable_json(text));
}

/// Prints a clap error as one line from clap's own rendering (help and
/// version print in full).
pub fn clap_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp
        | ErrorKind::DisplayVersion
        | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(
                if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    exit::USAGE
                } else {
                    exit::OK
                },
            )
        }
        _ => {
            err(&format!(
                "iorig: {}",
                iorig_cli::one_line(&e.render().to_string())
            ));
            ExitCode::from(exit::USAGE)
        }
    }
}

/// `iorig completions SHELL`: the completion script on stdout, written as
/// every other line is (a closed pipe ends it quietly).
pub fn completions(script: &[u8]) {
    out(String::from_utf8_lossy(script).trim_end());
}

/// `iorig man [COMMAND]`: a manual page (roff) on stdout; `--install DIR`:
/// every page written into DIR.
pub fn man(command: &[String], install: Option<&std::path::Path>) -> Result<u8, crate::Failure> {
    use iorig_cli::generate as g;
    match install {
        None => out(
            String::from_utf8_lossy(&g::man_page(command).map_err(crate::Failure::usage)?)
                .trim_end(),
        ),
        Some(dir) => out(&g::install_pages(dir).map_err(crate::Failure::runtime)?),
    }
    Ok(exit::OK)
}

/// One error line on stderr.
pub fn error_line(message: &str) {
    err(&format!("iorig: {message}"));
}

/// Where human-readable output goes for one command.
pub struct Printer {
    to_stderr: bool,
    pub quiet: bool,
    live: Option<indicatif::ProgressBar>,
    /// A fill or format bar (terminal only).
    bar: Option<indicatif::ProgressBar>,
}

impl Printer {
    pub fn new(to_stderr: bool, quiet: bool) -> Self {
        Printer {
            to_stderr,
            quiet,
            live: None,
            bar: None,
        }
    }

    /// Lines of the report, one after the other.
    pub fn lines(&self, lines: impl IntoIterator<Item = String>) {
        for l in lines {
            self.line(&l);
        }
    }

    /// Writes JSON to stdout (for `--json -`).
    pub fn json_stdout(&self, text: &str) {
        out_json(text);
    }

    /// Writes a whole document (a workload file) to stdout.
    pub fn document_stdout(&self, text: &str) {
        out(text.trim_end_matches('\n'));
    }
}

/// A run's text on the terminal: lines on stdout (stderr for
/// `text_to_stderr`), notices on stderr, the live line and the bars drawn by
/// indicatif on a terminal only.
impl Screen for Printer {
    fn quiet(&self) -> bool {
        self.quiet
    }

    fn line(&self, text: &str) {
        match &self.live {
            Some(pb) if !pb.is_finished() => pb.println(printable(text)),
            _ if self.to_stderr => err(text),
            _ => out(text),
        }
    }

    fn notice(&self, text: &str) {
        match &self.live {
            Some(pb) if !pb.is_finished() => pb.suspend(|| err(&format!("iorig: {text}"))),
            _ => err(&format!("iorig: {text}")),
        }
    }

    fn start_live(&mut self) {
        if self.quiet || !std::io::stderr().is_terminal() {
            return;
        }
        self.live = Some(drawn("{msg}", None));
    }

    fn set_live(&self, text: String) {
        if let Some(pb) = &self.live {
            pb.set_message(printable(&text).into_owned());
        }
    }

    fn end_live(&mut self) {
        if let Some(pb) = self.live.take() {
            pb.finish_and_clear();
        }
    }

    fn start_bar(&mut self, bar: Bar<'_>) {
        if !std::io::stderr().is_terminal() {
            self.notice(&bar.notice());
            return;
        }
        let (template, path, len) = bar.drawn();
        let pb = drawn(template, Some(len));
        pb.set_prefix(printable(path).into_owned());
        self.bar = Some(pb);
    }

    fn set_bar(&self, position: u64) {
        if let Some(pb) = &self.bar {
            pb.set_position(position);
        }
    }

    fn end_bar(&mut self) {
        if let Some(pb) = self.bar.take() {
            pb.finish_and_clear();
        }
    }
}

/// A bar (of `len` steps) or a spinner drawn on stderr with `template`.
fn drawn(template: &str, len: Option<u64>) -> indicatif::ProgressBar {
    let pb = match len {
        Some(n) => indicatif::ProgressBar::new(n),
        None => indicatif::ProgressBar::new_spinner(),
    };
    pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb
}
