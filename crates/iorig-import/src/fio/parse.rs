//! A fio job file as sections of options, each with the file and line it
//! came from: `[global]` and job sections, `include FILE` (relative to the
//! including file; loops and missing files refused), `${VAR}` from the
//! environment (an undefined one refused), comments (from the first `#`
//! or `;` of a line to its end, as fio cuts them) and bare flags
//! (`time_based`).
//!
//! An included file may be any file (`include /etc/shadow`): a message
//! about one of its lines names the file and line only, never its text
//! ([`usage`]), and no line is longer than [`crate::MAX_LINE_BYTES`].

use crate::{beside, ImportError, Loader};
use std::path::{Path, PathBuf};

/// Where an option was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: usize,
    /// The line is in a file pulled in by `include`, not in the job file
    /// given: its text is never shown in a message.
    pub included: bool,
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)
    }
}

/// One `key=value` (or bare `key`) line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opt {
    pub key: String,
    pub value: Option<String>,
    pub loc: Loc,
}

/// A `[name]` section and its options in written order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub loc: Loc,
    pub opts: Vec<Opt>,
}

/// Most nested includes (fio has no limit; a loop is caught before this).
const MAX_INCLUDE_DEPTH: usize = 16;

/// Every section of `path` (its text `text`) and of the files it includes,
/// in file order.
pub fn sections(path: &Path, text: &str, loader: &dyn Loader) -> Result<Vec<Section>, ImportError> {
    let mut out = Vec::new();
    let mut stack = vec![path.to_path_buf()];
    read_into(path, text, loader, &mut stack, &mut out)?;
    Ok(out)
}

/// What a message about a line of an included file says instead of why:
/// the why may quote the line, and the file may be anything.
const INCLUDED_WHY: &str = "not taken (the text of an included file is not shown in messages; check that line, or paste it into the job file to see why)";

/// A refusal at `loc`: `why` may quote the file's text, so for a line of
/// an included file only the file and line are said.
pub(crate) fn usage(loc: &Loc, why: impl std::fmt::Display) -> ImportError {
    if loc.included {
        return ImportError::Usage(format!("{loc}: this line is {INCLUDED_WHY}"));
    }
    ImportError::Usage(format!("{loc}: {why}"))
}

/// A refusal whose `why` is iorig's own words only (option names it knows,
/// fixed hints): shown whole, for an included file's line too.
pub(crate) fn usage_plain(loc: &Loc, why: impl std::fmt::Display) -> ImportError {
    ImportError::Usage(format!("{loc}: {why}"))
}

/// A refusal of option `key` (one iorig knows, so no text of the file) at
/// `loc`: for a line of an included file, the key without the why.
pub(crate) fn usage_key(loc: &Loc, key: &str, why: impl std::fmt::Display) -> ImportError {
    if loc.included {
        return ImportError::Usage(format!("{loc}: {key}: the value is {INCLUDED_WHY}"));
    }
    ImportError::Usage(format!("{loc}: {key}: {why}"))
}

fn read_into(
    path: &Path,
    text: &str,
    loader: &dyn Loader,
    stack: &mut Vec<PathBuf>,
    out: &mut Vec<Section>,
) -> Result<(), ImportError> {
    let file = path.display().to_string();
    // The first file on the stack is the job file given; the rest came in
    // by include.
    let included = stack.len() > 1;
    for (i, raw) in text.lines().enumerate() {
        let loc = Loc {
            file: file.clone(),
            line: i + 1,
            included,
        };
        if raw.len() > crate::MAX_LINE_BYTES {
            // Text not read by read_text (a test's loader, the caller's).
            return Err(ImportError::Usage(format!(
                "{loc}: the line is longer than {} KiB, the most iorig reads of one line of a job file",
                crate::MAX_LINE_BYTES >> 10
            )));
        }
        // fio cuts a line at its first `#` or `;`, wherever it stands:
        // `bs=4k  # four` is `bs=4k`, and `filename=a#b` is `filename=a`
        // (fio --showcmd shows it so). A variable's value is not cut.
        let line = raw.find(['#', ';']).map_or(raw, |at| &raw[..at]).trim();
        if line.is_empty() {
            continue;
        }
        let line = expand_env(line, loader).map_err(|why| usage(&loc, why))?;
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("include ") {
            let target = beside(path, rest.trim());
            if stack.len() > MAX_INCLUDE_DEPTH {
                return Err(ImportError::Usage(format!(
                    "{loc}: includes nest more than {MAX_INCLUDE_DEPTH} deep; flatten them"
                )));
            }
            let canon = std::fs::canonicalize(&target).unwrap_or_else(|_| target.clone());
            if let Some(back) = stack
                .iter()
                .position(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()) == canon)
            {
                if loc.included {
                    // The target is this included file's text: named only
                    // when it is the job file given.
                    let to = if back == 0 {
                        format!("the job file {}", stack[0].display())
                    } else {
                        "a file that includes it".into()
                    };
                    return Err(ImportError::Usage(format!(
                        "{loc}: this include loops back to {to}; remove one of the includes"
                    )));
                }
                return Err(usage(
                    &loc,
                    format!(
                        "include {} includes itself (a loop through {}); remove one of the includes",
                        target.display(),
                        stack
                            .iter()
                            .map(|p| p.display().to_string())
                            .collect::<Vec<_>>()
                            .join(" -> ")
                    ),
                ));
            }
            let inner = loader.read(&target).map_err(|e| {
                // Past a cap or not text: the file is there, so no hint
                // about its path (the error names the line, not its text).
                let hint = if e.kind() == std::io::ErrorKind::InvalidData {
                    String::new()
                } else {
                    "; give a path relative to this file or an absolute one".into()
                };
                if loc.included {
                    // The path is this included file's text.
                    ImportError::Usage(format!(
                        "{loc}: the file this line includes cannot be read: {e}{hint}"
                    ))
                } else {
                    usage(&loc, format!("include {}: {e}{hint}", target.display()))
                }
            })?;
            stack.push(target.clone());
            read_into(&target, &inner, loader, stack, out)?;
            stack.pop();
            continue;
        }
        if let Some(rest) = line.strip_prefix('[') {
            let Some(name) = rest.strip_suffix(']') else {
                return Err(usage(
                    &loc,
                    format!("'{line}' opens a section but does not close it; write [name]"),
                ));
            };
            // The name is shown by run, runs show and the store: its
            // control characters (an escape sequence) are dropped.
            let name = iorig_spec::printable(name);
            let name = name.trim();
            if name.is_empty() {
                return Err(ImportError::Usage(format!(
                    "{loc}: a section needs a name of printable characters, e.g. [job1]"
                )));
            }
            out.push(Section {
                name: name.to_string(),
                loc,
                opts: Vec::new(),
            });
            continue;
        }
        let Some(section) = out.last_mut() else {
            return Err(usage(
                &loc,
                format!("'{line}' comes before any section; put options under [global] or a [job]"),
            ));
        };
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (line, None),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err(usage(
                &loc,
                format!(
                    "'{line}' is not an option; write key=value or a bare flag such as time_based"
                ),
            ));
        }
        section.opts.push(Opt {
            key: key.to_ascii_lowercase(),
            value,
            loc,
        });
    }
    Ok(())
}

/// `${NAME}` replaced by the environment's value.
fn expand_env(line: &str, loader: &dyn Loader) -> Result<String, String> {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("'${{' without a closing '}}' in '{line}'"));
        };
        let name = &after[..end];
        match loader.env(name) {
            Some(v) => out.push_str(&v),
            None => {
                return Err(format!(
                    "${{{name}}} is not set in the environment; export {name}=... before running, or write the value"
                ))
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(keywords(&out, loader))
}

/// fio's keywords in a value (`numjobs=$ncpus`, `bs=$pagesize`,
/// `size=$mb_memory`m), replaced by this machine's figures as fio does.
fn keywords(line: &str, loader: &dyn Loader) -> String {
    if !line.contains('$') {
        return line.to_string();
    }
    let mut out = line.to_string();
    for name in ["ncpus", "pagesize", "mb_memory"] {
        let token = format!("${name}");
        if out.contains(&token) {
            if let Some(v) = loader.keyword(name) {
                out = out.replace(&token, &v.to_string());
            }
        }
    }
    out
}
