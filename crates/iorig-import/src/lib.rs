//! Other tools' files as iorig's.
//!
//! - [`fio`] reads a fio job file (sections, `[global]`, `include`,
//!   `${ENV}`) and translates it into an iorig plan: jobs between
//!   `stonewall`s run at once in one step, each option mapped to iorig's
//!   meaning or refused with its file, line and a hint.
//! - [`fio_json`] writes iorig's measurements in the shape of fio's
//!   `--output-format=json`, for the tools that read fio's results.
//! - [`detect`] tells a fio job file, a vdbench parameter file and iorig's
//!   own TOML apart by their content.
//!
//! Nothing here runs I/O: the plan text goes through iorig's own plan
//! parser, so an imported file and a written plan are one thing.

pub mod fio;
pub mod fio_json;
pub mod vdbench;

use std::path::{Path, PathBuf};

/// Why a file could not be read as the format it claims.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// Bad input: the file, line and option, and what to do.
    #[error("{0}")]
    Usage(String),
}

/// The formats iorig reads besides its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// iorig's workload or plan TOML.
    Iorig,
    Fio,
    Vdbench,
}

impl Format {
    /// `fio`, `vdbench`, `iorig` (the `--format` values).
    pub fn parse(text: &str) -> Result<Format, ImportError> {
        match text {
            "fio" => Ok(Format::Fio),
            "vdbench" => Ok(Format::Vdbench),
            "iorig" | "toml" => Ok(Format::Iorig),
            other => Err(ImportError::Usage(format!(
                "--format {other}: unknown format; give fio, vdbench or iorig"
            ))),
        }
    }
}

/// The format a file's text is in, from its content: what parses as TOML
/// is iorig's (a fio job file of numbers and flags only needs
/// `--input-format fio`); otherwise what it looks like.
pub fn detect(text: &str) -> Format {
    if text.parse::<toml::Table>().is_ok() {
        return Format::Iorig;
    }
    match iorig_spec::foreign::foreign_format(text) {
        Some(t) if t.contains("fio") => Format::Fio,
        Some(_) => Format::Vdbench,
        None => Format::Iorig,
    }
}

/// Reads the files a job file includes. Tests give their own.
pub trait Loader {
    fn read(&self, path: &Path) -> std::io::Result<String>;
    /// The environment variable `name`, for `${name}`.
    fn env(&self, name: &str) -> Option<String>;
    /// Whether a target named in the file exists (fio sizes a job by its
    /// existing files when no size is given).
    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }
}

/// The file system and the process environment.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemLoader;

impl Loader for SystemLoader {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }
    fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// `path` relative to the directory of `base` (unless absolute).
fn beside(base: &Path, path: &str) -> PathBuf {
    let p = Path::new(path);
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.parent().unwrap_or(Path::new(".")).join(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_by_content() {
        // iorig TOML with fio-like keys and trailing comments stays iorig's.
        assert_eq!(
            detect("bs = \"4k\"   # block size\nsize = \"1g\"\nqd = 32 # deep\n"),
            Format::Iorig
        );
        assert_eq!(
            detect("[global]\nrw=randread\nbs=4k\n[j]\nsize=1g\n"),
            Format::Fio
        );
        assert_eq!(detect("include common.inc\n[j]\nrw=read\n"), Format::Fio);
        assert_eq!(
            detect("sd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max\n"),
            Format::Vdbench
        );
    }
}
