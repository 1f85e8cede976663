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
pub mod foreign;
pub mod vdbench;

use std::path::{Path, PathBuf};

/// Why a file could not be read as the format it claims.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ImportError {
    /// Bad input: the file, line and option, and what to do. Shown without
    /// control characters: a message quotes the file's text, which must not
    /// bring an escape sequence or a line break to the terminal.
    #[error("{}", iorig_spec::printable(.0))]
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

/// The longest line of a job file or parameter file (and of a file it
/// includes). Real ones are under a hundred bytes; past this the file is
/// no job file, and reading on would make memory follow the line.
pub const MAX_LINE_BYTES: usize = 64 << 10;

/// The largest job file or parameter file (and included file).
pub const MAX_FILE_BYTES: usize = 16 << 20;

/// Reads a job file, parameter file or workload file as text, refusing a
/// line longer than [`MAX_LINE_BYTES`] or a file larger than
/// [`MAX_FILE_BYTES`] as soon as it is seen: memory stays within the file
/// cap whatever the file holds (a gigabyte line without a newline, a
/// device). The errors name the line by number, never its content; the
/// caller puts the path in front.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    read_capped(std::fs::File::open(path)?)
}

/// [`read_text`] of any stream.
pub fn read_capped(stream: impl std::io::Read) -> std::io::Result<String> {
    use std::io::BufRead;
    let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    let mut r = std::io::BufReader::with_capacity(64 << 10, stream);
    let mut out: Vec<u8> = Vec::new();
    let mut line = 1usize;
    // Bytes of the current line read so far.
    let mut in_line = 0usize;
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            break;
        }
        for &b in buf {
            if b == b'\n' {
                line += 1;
                in_line = 0;
            } else {
                in_line += 1;
                if in_line > MAX_LINE_BYTES {
                    return Err(invalid(format!(
                        "line {line} is longer than {} KiB, the most iorig reads of one line of a job, parameter or workload file",
                        MAX_LINE_BYTES >> 10
                    )));
                }
            }
        }
        if out.len() + buf.len() > MAX_FILE_BYTES {
            return Err(invalid(format!(
                "larger than {} MiB, the most iorig reads of a job, parameter or workload file",
                MAX_FILE_BYTES >> 20
            )));
        }
        out.extend_from_slice(buf);
        let n = buf.len();
        r.consume(n);
    }
    String::from_utf8(out).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..at].iter().filter(|b| **b == b'\n').count();
        invalid(format!("line {line} is not UTF-8 text"))
    })
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
    /// fio's keywords in a job file's values, from this machine: `ncpus`
    /// (CPUs online), `pagesize` (bytes) and `mb_memory` (MiB of memory).
    fn keyword(&self, name: &str) -> Option<u64> {
        match name {
            "ncpus" => std::thread::available_parallelism()
                .ok()
                .map(|n| n.get() as u64),
            "pagesize" => Some(rustix::param::page_size() as u64),
            "mb_memory" => std::fs::read_to_string("/proc/meminfo")
                .ok()
                .and_then(|t| iorig_stats::sampler::system::parse_mem_total_bytes(&t))
                .map(|b| b >> 20),
            _ => None,
        }
    }
}

/// The file system and the process environment.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemLoader;

impl Loader for SystemLoader {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        read_text(path)
    }
    fn env(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// Checks a translated plan with the code `iorig run` and `iorig plan run`
/// check a plan with (parsed, every step expanded and its workload
/// resolved): a value the translation let through that a run would refuse
/// (a time past iorig's longest, a count past its limits) is refused at
/// import, with the same reason, and no translated plan is one that cannot
/// run. `anchor`: the directory of the plan's file-system steps, which a
/// run takes from the plan's one target once it exists (it need not exist
/// at import).
fn check_plan(path: &Path, plan_toml: &str, anchor: Option<&str>) -> Result<(), ImportError> {
    iorig_spec::Plan::from_toml(&path.display().to_string(), plan_toml)
        .and_then(|mut p| {
            if let Some(a) = anchor {
                p.anchor = Some(a.to_string());
                p.targets = None;
            }
            p.expand()
        })
        .map(|_| ())
        .map_err(|e| ImportError::Usage(e.to_string()))
}

/// `path` relative to the directory of `base` (unless absolute).
pub(crate) fn beside(base: &Path, path: &str) -> PathBuf {
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
            detect("SD=sd1,LUN=/dev/sdb\nWD=wd1,SD=sd1\nRD=r1,WD=wd1,IORATE=MAX\n"),
            Format::Vdbench
        );
        assert_eq!(
            detect("sd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max\n"),
            Format::Vdbench
        );
    }
}
