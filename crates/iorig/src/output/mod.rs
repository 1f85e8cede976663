//! The one place that prints. Human-readable text goes to stdout, or to stderr
//! when stdout carries JSON (`--json -`); errors and notices go to stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

pub mod json;
pub mod term;

use crate::exit;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a write to stdout failed (the reader went away): later lines are
/// dropped instead of failing again, and the run was told to stop.
static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// `text` as it may reach a terminal: control characters dropped (C0 but
/// newline and tab, DEL, C1), so a name from a job file, a store, an agent
/// or a storage exporter cannot move the cursor, clear the screen or set
/// the window title. iorig's own text has none, so this is the one place
/// every line passes, whatever its origin.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if text.contains(bad) {
        std::borrow::Cow::Owned(text.chars().filter(|&c| !bad(c)).collect())
    } else {
        std::borrow::Cow::Borrowed(text)
    }
}

/// JSON as it may reach a terminal: serde_json escapes C0 controls in
/// strings but writes DEL and C1 (U+007F to U+009F) raw, and a terminal may
/// take U+009B for a control sequence. They only occur inside strings, where
/// `\u00XX` is the same value.
fn printable_json(text: &str) -> std::borrow::Cow<'_, str> {
    let raw = |c: char| ('\u{7f}'..='\u{9f}').contains(&c);
    if !text.contains(raw) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if raw(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

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
            err(&format!("iorig: {}", clap_line(&e.render().to_string())));
            ExitCode::from(exit::USAGE)
        }
    }
}

/// clap's own rendering (the problem, what is missing, the nearest flag,
/// the usage) folded into the one line bad input gets.
fn clap_line(rendered: &str) -> String {
    let mut problem = String::new();
    let mut items = Vec::new();
    let mut tips = Vec::new();
    let mut usage = None;
    for line in rendered.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(p) = line.strip_prefix("error: ") {
            problem = p.trim_end_matches(':').to_owned();
        } else if let Some(t) = line.strip_prefix("tip: ") {
            tips.push(t.to_owned());
        } else if let Some(u) = line.strip_prefix("Usage: ") {
            usage = Some(u.to_owned());
        } else if !line.starts_with("For more information") {
            items.push(line.to_owned());
        }
    }
    let mut out = problem;
    if !items.is_empty() {
        out.push_str(": ");
        out.push_str(&items.join(", "));
    }
    for t in tips {
        out.push_str("; ");
        out.push_str(&t);
    }
    if let Some(u) = usage {
        out.push_str(&format!(" (usage: {u})"));
    }
    out
}

/// `iorig completions SHELL`: the completion script on stdout.
pub fn completions(shell: clap_complete::Shell) {
    use clap::CommandFactory;
    let mut cmd = iorig_cli::Cli::command();
    clap_complete::generate(shell, &mut cmd, "iorig", &mut std::io::stdout());
}

/// `iorig man`: the manual page (roff) on stdout.
pub fn man_page() -> Result<u8, crate::Failure> {
    use clap::CommandFactory;
    let mut page = Vec::new();
    clap_mangen::Man::new(iorig_cli::Cli::command())
        .render(&mut page)
        .map_err(|e| crate::Failure::runtime(format!("rendering the manual page: {e}")))?;
    out(String::from_utf8_lossy(&page).trim_end());
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
}

impl Printer {
    pub fn new(to_stderr: bool, quiet: bool) -> Self {
        Printer {
            to_stderr,
            quiet,
            live: None,
        }
    }

    /// Whether a live status line makes sense (a terminal, not quiet).
    pub fn is_terminal(&self) -> bool {
        std::io::stderr().is_terminal()
    }

    /// A line of the report (table rows, summary).
    pub fn line(&self, text: &str) {
        match &self.live {
            Some(pb) if !pb.is_finished() => pb.println(printable(text)),
            _ => {
                if self.to_stderr {
                    err(text);
                } else {
                    out(text);
                }
            }
        }
    }

    /// A notice for the user (stderr), shown even when quiet.
    pub fn notice(&self, text: &str) {
        match &self.live {
            Some(pb) if !pb.is_finished() => pb.suspend(|| err(&format!("iorig: {text}"))),
            _ => err(&format!("iorig: {text}")),
        }
    }

    /// Starts the live status line on stderr (terminal only).
    pub fn start_live(&mut self) {
        if self.quiet || !self.is_terminal() {
            return;
        }
        let pb = indicatif::ProgressBar::new_spinner();
        pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) = indicatif::ProgressStyle::with_template("{msg}") {
            pb.set_style(style);
        }
        self.live = Some(pb);
    }

    pub fn set_live(&self, text: String) {
        if let Some(pb) = &self.live {
            pb.set_message(printable(&text).into_owned());
        }
    }

    pub fn end_live(&mut self) {
        if let Some(pb) = self.live.take() {
            pb.finish_and_clear();
        }
    }

    /// A progress bar for filling a scratch file (terminal only); elsewhere
    /// one notice saying whether the file is created or grown.
    pub fn fill_bar(
        &self,
        path: &str,
        total_bytes: u64,
        grown_from_bytes: Option<u64>,
    ) -> Option<indicatif::ProgressBar> {
        let (doing, what) = match grown_from_bytes {
            None => (
                "creating",
                format!(
                    "creating {path}: {} of random data after iorig's 1 MiB header ({} on disk)",
                    iorig_text::human_bytes(total_bytes),
                    iorig_text::human_bytes(total_bytes + iorig_engine::target::FILE_HEADER_BYTES)
                ),
            ),
            Some(from) => (
                "growing",
                format!(
                    "growing {path} from {} to {}: filling the new {} with random data",
                    iorig_text::human_bytes(from),
                    iorig_text::human_bytes(from + total_bytes),
                    iorig_text::human_bytes(total_bytes)
                ),
            ),
        };
        if !self.is_terminal() {
            self.notice(&what);
            return None;
        }
        let pb = indicatif::ProgressBar::new(total_bytes);
        pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) = indicatif::ProgressStyle::with_template(&format!(
            "{doing} {{prefix}}: [{{bar:30}}] {{bytes}}/{{total_bytes}} {{bytes_per_sec}} eta {{eta}}"
        )) {
            pb.set_style(style.progress_chars("=> "));
        }
        pb.set_prefix(printable(path).into_owned());
        Some(pb)
    }

    /// A progress bar over the files a format phase creates (terminal
    /// only); elsewhere one notice.
    pub fn format_bar(
        &self,
        path: &str,
        files_total: u64,
        bytes_total: u64,
    ) -> Option<indicatif::ProgressBar> {
        if !self.is_terminal() {
            self.notice(&format!(
                "format: creating {files_total} files ({}) in {path}",
                iorig_text::human_bytes(bytes_total)
            ));
            return None;
        }
        let pb = indicatif::ProgressBar::new(files_total);
        pb.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "format {prefix}: [{bar:30}] {pos}/{len} files {per_sec} eta {eta}",
        ) {
            pb.set_style(style.progress_chars("=> "));
        }
        pb.set_prefix(printable(path).into_owned());
        Some(pb)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_never_reach_a_terminal() {
        assert_eq!(
            printable("job\u{1b}[2J\u{1b}]0;owned\u{7}x\r\u{9b}31m\u{7f}\tend\nnext"),
            "job[2J]0;ownedx31m\tend\nnext"
        );
        assert!(matches!(printable("plain"), std::borrow::Cow::Borrowed(_)));
        let json = serde_json::to_string(&serde_json::json!({"name": "a\u{9b}b\u{1b}c"}))
            .unwrap_or_default();
        let shown = printable_json(&json);
        assert_eq!(shown, r#"{"name":"a\u009bb\u001bc"}"#);
        let back: serde_json::Value = serde_json::from_str(&shown).unwrap_or_default();
        assert_eq!(back["name"], "a\u{9b}b\u{1b}c", "the same value");
    }
}
