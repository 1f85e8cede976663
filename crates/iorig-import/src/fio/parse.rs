//! A fio job file as sections of options, each with the file and line it
//! came from: `[global]` and job sections, `include FILE` (relative to the
//! including file; loops and missing files refused), `${VAR}` from the
//! environment (an undefined one refused), comments (`#`, `;`) and bare
//! flags (`time_based`).

use crate::{beside, ImportError, Loader};
use std::path::{Path, PathBuf};

/// Where an option was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loc {
    pub file: String,
    pub line: usize,
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

fn usage(loc: &Loc, why: impl std::fmt::Display) -> ImportError {
    ImportError::Usage(format!("{loc}: {why}"))
}

fn read_into(
    path: &Path,
    text: &str,
    loader: &dyn Loader,
    stack: &mut Vec<PathBuf>,
    out: &mut Vec<Section>,
) -> Result<(), ImportError> {
    let file = path.display().to_string();
    for (i, raw) in text.lines().enumerate() {
        let loc = Loc {
            file: file.clone(),
            line: i + 1,
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        let line = expand_env(line, loader).map_err(|why| usage(&loc, why))?;
        let line = line.trim();
        if let Some(rest) = line.strip_prefix("include ") {
            let target = beside(path, rest.trim());
            if stack.len() > MAX_INCLUDE_DEPTH {
                return Err(usage(
                    &loc,
                    format!("includes nest more than {MAX_INCLUDE_DEPTH} deep; flatten them"),
                ));
            }
            let canon = std::fs::canonicalize(&target).unwrap_or_else(|_| target.clone());
            if stack
                .iter()
                .any(|p| std::fs::canonicalize(p).unwrap_or_else(|_| p.clone()) == canon)
            {
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
                usage(
                    &loc,
                    format!(
                        "include {}: {e}; give a path relative to this file or an absolute one",
                        target.display()
                    ),
                )
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
            let name = name.trim();
            if name.is_empty() {
                return Err(usage(&loc, "a section needs a name, e.g. [job1]"));
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
    Ok(out)
}
