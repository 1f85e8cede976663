//! A fio job file or a vdbench parameter file as an iorig plan, whichever it
//! is: the one entry point `iorig import` and `iorig run FILE` share.

use crate::{fio, vdbench, Format, ImportError, SystemLoader};
use std::collections::BTreeMap;
use std::path::Path;

/// How to translate: the user's choices that apply to either format.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `--set NAME=VALUE`: a vdbench parameter file's `$NAME`s.
    pub set: Vec<String>,
    pub ignore_unsupported: bool,
    /// vdbench's `-v`: validate what is written.
    pub verify: bool,
    /// vdbench's `-j`: validate across the steps through a journal.
    pub journal: bool,
}

/// A job file or parameter file as an iorig plan.
#[derive(Debug, Clone)]
pub struct Plan {
    pub toml: String,
    /// Options accepted without effect, one line each.
    pub notices: Vec<String>,
    /// What `--ignore-unsupported` left out.
    pub ignored: Vec<String>,
    /// The fio translation (its jobs and logs), for fio's output shapes.
    pub fio: Option<fio::Translation>,
    /// `fio:PATH` or `vdbench:PATH`, the run's `source` label.
    pub source: String,
    /// A vdbench file's `journal=yes` (or `--journal`).
    pub journal: bool,
    /// The directory a vdbench file's sds keep their journal in.
    pub journal_dir: Option<String>,
}

impl Plan {
    /// What the user is told of the translation: its notices, and what
    /// `--ignore-unsupported` left out.
    pub fn told(&self) -> Vec<String> {
        let mut out = self.notices.clone();
        if !self.ignored.is_empty() {
            out.push(format!(
                "left out (--ignore-unsupported): {}",
                self.ignored.join("; ")
            ));
        }
        out
    }

    /// What `iorig import` tells: [`Plan::told`], and for each fio job
    /// that asks for fio-format logs, that the printed plan does not write
    /// them (the logs are written when the job file itself runs).
    pub fn told_on_import(&self) -> Vec<String> {
        let mut out = self.told();
        for job in self.fio.iter().flat_map(|t| &t.jobs) {
            let l = &job.logs;
            let asked: Vec<&str> = [
                ("write_bw_log", l.bw.is_some()),
                ("write_iops_log", l.iops.is_some()),
                ("write_lat_log", l.lat.is_some()),
            ]
            .into_iter()
            .filter_map(|(k, on)| on.then_some(k))
            .collect();
            if !asked.is_empty() {
                out.push(format!(
                    "job {}: {}: fio-format logs are written when the job file itself runs (iorig run FILE); this plan does not write them (its stored intervals export with iorig export)",
                    job.name,
                    asked.join(", ")
                ));
            }
        }
        out
    }
}

fn usage(why: impl Into<String>) -> ImportError {
    ImportError::Usage(why.into())
}

/// `--set NAME=VALUE` as vdbench's variables.
fn vars(set: &[String]) -> Result<BTreeMap<String, String>, ImportError> {
    set.iter()
        .map(|kv| {
            kv.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.trim_start_matches('$').to_string(), v.to_string()))
                .ok_or_else(|| {
                    usage(format!(
                        "--set {kv}: write NAME=VALUE, e.g. --set lun=/dev/sdb"
                    ))
                })
        })
        .collect()
}

/// Translates `text` (read from `path`) as `format`.
pub fn translate(
    path: &Path,
    text: &str,
    format: Format,
    o: &Options,
) -> Result<Plan, ImportError> {
    match format {
        Format::Fio => {
            if !o.set.is_empty() {
                return Err(usage(
                    "--set gives a vdbench parameter file's $variables; a fio job file takes ${VAR} from the environment",
                ));
            }
            let t = fio::translate(
                path,
                text,
                &SystemLoader,
                &fio::Options {
                    ignore_unsupported: o.ignore_unsupported,
                },
            )?;
            Ok(Plan {
                toml: t.plan_toml.clone(),
                notices: t.notices.clone(),
                ignored: t.ignored.clone(),
                source: format!("fio:{}", path.display()),
                fio: Some(t),
                journal: false,
                journal_dir: None,
            })
        }
        Format::Vdbench => {
            let t = vdbench::translate(
                path,
                text,
                &vdbench::Options {
                    vars: vars(&o.set)?,
                    ignore_unsupported: o.ignore_unsupported,
                    verify: o.verify,
                    journal: o.journal,
                },
            )?;
            Ok(Plan {
                toml: t.plan_toml,
                notices: t.notices,
                ignored: t.ignored,
                source: format!("vdbench:{}", path.display()),
                fio: None,
                journal: t.journal,
                journal_dir: t.journal_dir,
            })
        }
        Format::Iorig => Err(usage(format!(
            "{}: this is neither a fio job file nor a vdbench parameter file; give --format fio or --format vdbench if it is one",
            path.display()
        ))),
    }
}
