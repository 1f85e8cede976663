//! Trace files as a stream of [`Record`]s.
//!
//! The file is read once, front to back, through a decompressor when its
//! first bytes say gzip (`1f 8b`) or zstd (`28 b5 2f fd`), so a trace of any
//! length needs memory only for one line. The format is told from the first
//! line when not given:
//!
//! - **fio iolog** (`fio version 2 iolog` / `fio version 3 iolog`): `[TIME]
//!   FILE ACTION [OFFSET LENGTH]`; version 3's TIME is µs from the start,
//!   version 2 has none (a `FILE wait MS` line sets the time from the start
//!   in ms). `read`, `write` and `trim` are I/Os; `add`, `open`, `close`,
//!   `sync` and `datasync` are not.
//! - **MSR Cambridge / SNIA CSV**: `Timestamp,Hostname,DiskNumber,Type,
//!   Offset,Size,ResponseTime`; Timestamp in Windows FILETIME (100 ns since
//!   1601), ResponseTime in 100 ns, Offset and Size in bytes.
//! - **blktrace** binary records ([`crate::blk`]), told by their magic.
//! - **iorig**'s own binary format ([`crate::own`]), told by `IORIGTRC`.
//!
//! A text trace's line is at most [`MAX_LINE_BYTES`]: a longer one is
//! refused by its number as soon as the cap is passed, so memory never
//! follows a line (a few kilobytes of zstd hold a gigabyte line).

use crate::{Op, Record, TraceError};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// The longest line of a text trace. A record is a few dozen bytes; a
/// line past this is a damaged file or no trace.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Most devices (or files) a text trace names: what iorig's own format
/// holds ([`crate::own`]).
pub const MAX_DEVICES: usize = 65_535;

pub(crate) use crate::stream::Bad;
pub use crate::stream::MAX_DEVICE_NAME_BYTES;

/// Why a line could not be read.
enum LineError {
    Io(std::io::Error),
    /// Past [`MAX_LINE_BYTES`] (the rest of the line is left unread).
    TooLong,
    NotText,
}

/// Reads one line into `line` (its newline kept), taking at most
/// [`MAX_LINE_BYTES`] bytes of it from the stream before refusing: the
/// bytes read (0 at the end of the stream).
fn read_line_capped(r: &mut dyn BufRead, line: &mut String) -> Result<usize, LineError> {
    // The line's own buffer is read into, so a record costs no allocation
    // more than it did with `read_line`.
    let start = line.len();
    let mut bytes = std::mem::take(line).into_bytes();
    let outcome = loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => break Err(LineError::Io(e)),
        };
        if buf.is_empty() {
            break Ok(());
        }
        let (take, end) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        // The newline does not count.
        if bytes.len() - start + take - usize::from(end) > MAX_LINE_BYTES {
            break Err(LineError::TooLong);
        }
        bytes.extend_from_slice(&buf[..take]);
        r.consume(take);
        if end {
            break Ok(());
        }
    };
    let n = bytes.len() - start;
    match (outcome, String::from_utf8(bytes)) {
        (Ok(()), Ok(text)) => {
            *line = text;
            Ok(n)
        }
        (outcome, text) => {
            let mut bytes = text.map_or_else(|e| e.into_bytes(), String::into_bytes);
            bytes.truncate(start);
            *line = String::from_utf8(bytes).unwrap_or_default();
            Err(outcome.err().unwrap_or(LineError::NotText))
        }
    }
}

/// Why line `line_no` was not read, as a record error says it.
fn line_error(e: LineError, line_no: u64) -> String {
    match e {
        LineError::Io(e) => format!("cannot be read ({e}); a truncated or damaged file?"),
        LineError::TooLong => format!(
            "line {line_no} is longer than {} MiB, the most iorig reads of one line of a text trace: a damaged file, or not a trace",
            MAX_LINE_BYTES >> 20
        ),
        LineError::NotText => {
            format!("line {line_no} is not UTF-8 text: a damaged file, or not a text trace")
        }
    }
}

/// Up to 60 characters of a trace's text for a message, without control
/// characters (an escape sequence in a file must not reach the terminal).
fn shown(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(60).collect()
}

/// A trace file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// fio's iolog, version 2 or 3.
    Fio,
    /// The MSR Cambridge / SNIA block trace CSV.
    Msr,
    /// blktrace's binary records, merged in time order.
    Blktrace,
    /// iorig's own binary trace.
    Iorig,
}

impl Format {
    /// `--format` values.
    pub fn parse(text: &str) -> Result<Format, String> {
        match text {
            "fio" => Ok(Format::Fio),
            "msr" => Ok(Format::Msr),
            "blktrace" => Ok(Format::Blktrace),
            "iorig" => Ok(Format::Iorig),
            other => Err(format!(
                "--format {other}: unknown; give blktrace, fio, msr or iorig"
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Fio => "fio",
            Format::Msr => "msr",
            Format::Blktrace => "blktrace",
            Format::Iorig => "iorig",
        }
    }
}

/// How records that cannot be taken are treated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BadRecords {
    /// The first one ends the read with its record number.
    #[default]
    Refuse,
    /// Counted ([`Records::skipped`]) and left out (`--skip-bad`).
    Skip,
}

impl BadRecords {
    /// `--skip-bad`: skip them when given, else refuse.
    pub fn skipped_if(skip: bool) -> BadRecords {
        if skip {
            BadRecords::Skip
        } else {
            BadRecords::Refuse
        }
    }
}

/// An open trace: its format and its records, in issue order.
pub struct Records {
    path: String,
    format: Format,
    bad: BadRecords,
    skipped: u64,
    body: Body,
    /// The last record's time, for formats whose order is checked here.
    last_t_ns: u64,
}

enum Body {
    Text(Text),
    Blk(Box<crate::blk::BlkBody>),
    Own(crate::own::OwnBody),
}

/// The text formats: a record per line.
struct Text {
    lines: Box<dyn BufRead + Send>,
    line: String,
    /// Lines read (for record numbers: a record's line).
    line_no: u64,
    /// Whether the records carry issue times.
    timed: bool,
    devices: HashMap<String, u32>,
    /// Bytes of the names in `devices`.
    device_name_bytes: usize,
    /// A line could not be read: the stream is mid-line, nothing follows.
    ended: bool,
    last_msr: Option<(String, String, u32)>,
    state: State,
}

enum State {
    Fio {
        version: u8,
        now_ns: u64,
    },
    Msr {
        first_100ns: Option<u64>,
        last_100ns: u64,
    },
}

/// Opens `path` (plain, gzip or zstd) as `format`, or as what its first
/// bytes say.
pub fn open(path: &Path, format: Option<Format>, bad: BadRecords) -> Result<Records, TraceError> {
    let name = path.display().to_string();
    let io = |source| TraceError::Io {
        path: name.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut raw = BufReader::with_capacity(1 << 20, file);
    let head = raw.fill_buf().map_err(io)?.to_vec();
    let stream: Box<dyn Read + Send> = if head.starts_with(&[0x1f, 0x8b]) {
        Box::new(flate2::bufread::MultiGzDecoder::new(raw))
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Box::new(zstd::stream::read::Decoder::with_buffer(raw).map_err(io)?)
    } else {
        Box::new(raw)
    };
    let mut lines: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(1 << 20, stream));
    let head = lines.fill_buf().map_err(io)?;
    let binary = if head.starts_with(crate::own::MAGIC) {
        Some(Format::Iorig)
    } else if crate::blk::looks_like(head) {
        Some(Format::Blktrace)
    } else if crate::blk::looks_swapped(head) {
        return Err(TraceError::Format {
            path: name,
            why: "blktrace records of the other byte order; read the trace on a host of the byte order that wrote it".into(),
        });
    } else {
        None
    };
    let mismatch = |detected: Format, what: String| TraceError::Format {
        path: name.clone(),
        why: format!(
            "--format {} but the content is {} ({what})",
            format.map(Format::name).unwrap_or_default(),
            detected.name()
        ),
    };
    if let Some(detected) = binary {
        if format.is_some_and(|f| f != detected) {
            return Err(mismatch(detected, "told by its first bytes".into()));
        }
        let body = match detected {
            Format::Iorig => {
                let devices =
                    crate::own::read_header(&mut lines).map_err(|why| TraceError::Format {
                        path: name.clone(),
                        why,
                    })?;
                Body::Own(crate::own::OwnBody {
                    stream: lines,
                    devices,
                    record: 0,
                })
            }
            _ => Body::Blk(Box::new(crate::blk::BlkBody {
                stream: lines,
                pairing: crate::blk::Pairing::default(),
                record: 0,
                ended: false,
            })),
        };
        return Ok(Records {
            path: name,
            format: detected,
            bad,
            skipped: 0,
            body,
            last_t_ns: 0,
        });
    }
    if matches!(format, Some(Format::Blktrace | Format::Iorig)) {
        return Err(TraceError::Format {
            path: name,
            why: format!(
                "--format {} but the file does not start with its magic (a text trace, or another format)",
                format.map(Format::name).unwrap_or_default()
            ),
        });
    }
    // The first line decides the format (and is a header for fio's).
    let mut first = String::new();
    let mut line_no = 0;
    while first.trim().is_empty() {
        first.clear();
        line_no += 1;
        let n = read_line_capped(&mut *lines, &mut first).map_err(|e| TraceError::Format {
            path: name.clone(),
            why: match e {
                LineError::Io(e) => format!(
                    "not a trace of a known format ({e}); give a blktrace, iorig or fio trace or an MSR CSV, plain, gzip or zstd"
                ),
                other => line_error(other, line_no),
            },
        })?;
        if n == 0 {
            return Err(TraceError::Format {
                path: name,
                why: "empty: no records".into(),
            });
        }
    }
    let header = first.trim();
    let fio_version = match header {
        "fio version 2 iolog" => Some(2),
        "fio version 3 iolog" => Some(3),
        _ => None,
    };
    let detected = match fio_version {
        Some(_) => Format::Fio,
        None if looks_like_msr(header) => Format::Msr,
        None => {
            return Err(TraceError::Format {
                path: name,
                why: format!(
                    "line {line_no} '{}' is neither an fio iolog header nor an MSR CSV record, and the file starts with no blktrace or iorig magic; give --format for a trace of a known format",
                    shown(header)
                ),
            })
        }
    };
    if format.is_some_and(|f| f != detected) {
        let line = format!("line {line_no}: '{}'", shown(header));
        return Err(mismatch(detected, line));
    }
    let (state, timed, pending) = match fio_version {
        Some(v) => (
            State::Fio {
                version: v,
                now_ns: 0,
            },
            v == 3,
            String::new(),
        ),
        // The first line is already a record.
        None => (
            State::Msr {
                first_100ns: None,
                last_100ns: 0,
            },
            true,
            first,
        ),
    };
    Ok(Records {
        path: name,
        format: detected,
        bad,
        skipped: 0,
        body: Body::Text(Text {
            lines,
            line: pending,
            line_no: if fio_version.is_some() {
                line_no
            } else {
                line_no - 1
            },
            timed,
            devices: HashMap::new(),
            device_name_bytes: 0,
            ended: false,
            last_msr: None,
            state,
        }),
        last_t_ns: 0,
    })
}

fn looks_like_msr(line: &str) -> bool {
    let f: Vec<&str> = line.split(',').collect();
    f.len() >= 7
        && f[0].trim().parse::<u64>().is_ok()
        && matches!(f[3].trim().to_ascii_lowercase().as_str(), "read" | "write")
}

impl Records {
    pub fn format(&self) -> Format {
        self.format
    }
    /// Whether the records may carry issue times, before they are read:
    /// an fio iolog v2 is timed only if a `wait` line comes, anywhere in
    /// it, so read it as timed (its records before the first wait at 0)
    /// and ask [`Records::timed`] at the end.
    pub fn may_be_timed(&self) -> bool {
        match &self.body {
            Body::Text(t) => t.timed || matches!(t.state, State::Fio { version: 2, .. }),
            Body::Blk(_) | Body::Own(_) => true,
        }
    }

    /// Whether records carry issue times (fio's iolog v2 has none unless it
    /// has `wait` lines): final only once every record is read.
    pub fn timed(&self) -> bool {
        match &self.body {
            Body::Text(t) => t.timed,
            Body::Blk(_) | Body::Own(_) => true,
        }
    }
    /// Records left out under [`BadRecords::Skip`].
    pub fn skipped(&self) -> u64 {
        self.skipped
    }
    /// Devices (or files) by name, numbered as in [`Record::device`]: a
    /// blktrace's as `MAJOR:MINOR`.
    pub fn devices(&self) -> Vec<String> {
        match &self.body {
            Body::Text(t) => {
                let mut v: Vec<(&String, &u32)> = t.devices.iter().collect();
                v.sort_by_key(|(_, id)| **id);
                v.into_iter().map(|(n, _)| n.clone()).collect()
            }
            Body::Blk(b) => b
                .pairing
                .devices()
                .iter()
                .map(|d| crate::blk::device_name(*d))
                .collect(),
            Body::Own(o) => o.devices.clone(),
        }
    }
    /// A blktrace's completions whose issue is not in it (issued before the
    /// capture began) and completions with an error status.
    pub fn blk_counts(&self) -> Option<(u64, u64)> {
        match &self.body {
            Body::Blk(b) => Some((b.pairing.unmatched_completions, b.pairing.errors)),
            _ => None,
        }
    }
}

impl Text {
    fn device(&mut self, name: &str) -> Result<u32, String> {
        if let Some(id) = self.devices.get(name) {
            return Ok(*id);
        }
        if self.devices.len() >= MAX_DEVICES
            || self.device_name_bytes + name.len() > MAX_DEVICE_NAME_BYTES
        {
            return Err(format!(
                "a device or file past the most a trace names ({MAX_DEVICES}, {} MiB of names)",
                MAX_DEVICE_NAME_BYTES >> 20
            ));
        }
        let next = self.devices.len() as u32;
        self.devices.insert(name.to_string(), next);
        self.device_name_bytes += name.len();
        Ok(next)
    }

    /// An MSR device, Hostname:DiskNumber, without a string per record in
    /// the usual case of the same device as the record before.
    fn msr_device(&mut self, host: &str, disk: &str) -> Result<u32, String> {
        if let Some((h, d, id)) = &self.last_msr {
            if h == host && d == disk {
                return Ok(*id);
            }
        }
        let id = self.device(&format!("{host}:{disk}"))?;
        self.last_msr = Some((host.to_string(), disk.to_string(), id));
        Ok(id)
    }
    /// The next line's record: Ok(None) for a line that is no I/O.
    fn parse(&mut self, line: &str) -> Result<Option<Record>, String> {
        match self.state {
            State::Fio { version, now_ns } => {
                let f: Vec<&str> = line.split_whitespace().collect();
                let (t_ns, rest) = if version == 3 {
                    let (t, rest) = f.split_first().ok_or("an empty line")?;
                    let us: u64 = t
                        .parse()
                        .map_err(|_| format!("time '{}' is not whole µs", shown(t)))?;
                    (us.saturating_mul(1000), rest)
                } else {
                    (now_ns, &f[..])
                };
                let [file, action, more @ ..] = rest else {
                    return Err(format!(
                        "'{}': expected FILE ACTION [OFFSET LENGTH]",
                        shown(line)
                    ));
                };
                let op = match *action {
                    "read" => Op::Read,
                    "write" => Op::Write,
                    "trim" => Op::Trim,
                    "add" | "open" | "close" | "sync" | "datasync" => return Ok(None),
                    "wait" if version == 2 => {
                        let ms: u64 = more
                            .first()
                            .and_then(|v| v.parse().ok())
                            .ok_or_else(|| format!("'{}': wait takes milliseconds", shown(line)))?;
                        self.state = State::Fio {
                            version,
                            now_ns: now_ns.max(ms.saturating_mul(1_000_000)),
                        };
                        self.timed = true;
                        return Ok(None);
                    }
                    other => return Err(format!("unknown action '{}'", shown(other))),
                };
                let [offset, size, ..] = more else {
                    return Err(format!("'{}': {action} needs OFFSET LENGTH", shown(line)));
                };
                let offset_bytes: u64 = offset
                    .parse()
                    .map_err(|_| format!("offset '{}' is not a number of bytes", shown(offset)))?;
                let size_bytes: u64 = size
                    .parse()
                    .map_err(|_| format!("length '{}' is not a number of bytes", shown(size)))?;
                let device = self.device(file)?;
                Ok(Some(Record {
                    t_ns,
                    op,
                    device,
                    offset_bytes,
                    size_bytes,
                    latency_ns: None,
                }))
            }
            State::Msr {
                first_100ns,
                last_100ns,
            } => {
                // Seven fields, without a vector per line (millions of lines).
                let mut f = [""; 7];
                let mut n = 0;
                for (i, field) in line.trim().split(',').enumerate() {
                    if i < 7 {
                        f[i] = field.trim();
                    }
                    n = i + 1;
                }
                if n < 7 {
                    return Err(format!(
                        "{n} fields; MSR records have 7: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"
                    ));
                }
                let num = |i: usize, what: &str| -> Result<u64, String> {
                    f[i].parse()
                        .map_err(|_| format!("{what} '{}' is not a whole number", shown(f[i])))
                };
                let ts = num(0, "Timestamp")?;
                if ts < last_100ns {
                    return Err(format!(
                        "Timestamp {ts} is before the previous record's ({last_100ns}): records out of order"
                    ));
                }
                let first = first_100ns.unwrap_or(ts);
                self.state = State::Msr {
                    first_100ns: Some(first),
                    last_100ns: ts,
                };
                let op = if f[3].eq_ignore_ascii_case("read") {
                    Op::Read
                } else if f[3].eq_ignore_ascii_case("write") {
                    Op::Write
                } else {
                    return Err(format!("Type '{}': give Read or Write", shown(f[3])));
                };
                let device = self.msr_device(f[1], f[2])?;
                Ok(Some(Record {
                    t_ns: (ts - first).saturating_mul(100),
                    op,
                    device,
                    offset_bytes: num(4, "Offset")?,
                    size_bytes: num(5, "Size")?,
                    latency_ns: Some(num(6, "ResponseTime")?.saturating_mul(100)),
                }))
            }
        }
    }
}

impl Text {
    fn next(&mut self) -> Option<Result<Record, Bad>> {
        loop {
            if self.ended {
                return None;
            }
            if self.line.is_empty() {
                match read_line_capped(&mut *self.lines, &mut self.line) {
                    Ok(0) => return None,
                    Ok(_) => {}
                    Err(e) => {
                        // The stream is left mid-line: nothing after it
                        // can be read as records.
                        self.ended = true;
                        return Some(Err(Bad {
                            record: self.line_no + 1,
                            why: line_error(e, self.line_no + 1),
                            fatal: true,
                        }));
                    }
                }
            }
            self.line_no += 1;
            let line = std::mem::take(&mut self.line);
            if line.trim().is_empty() {
                continue;
            }
            // A last line without its newline was cut off mid-record unless
            // it parses whole.
            match self.parse(line.trim_end_matches(['\n', '\r'])) {
                Ok(Some(r)) => return Some(Ok(r)),
                Ok(None) => continue,
                Err(why) => {
                    return Some(Err(Bad {
                        record: self.line_no,
                        why,
                        fatal: false,
                    }))
                }
            }
        }
    }
}

impl Body {
    fn record_no(&self) -> u64 {
        match self {
            Body::Text(t) => t.line_no,
            Body::Blk(b) => b.record,
            Body::Own(o) => o.record,
        }
    }
}

impl Iterator for Records {
    type Item = Result<Record, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let got = match &mut self.body {
                Body::Text(t) => t.next(),
                Body::Blk(b) => b.next(),
                Body::Own(o) => o.next(),
            }?;
            let record_no = self.body.record_no();
            let checked = got.and_then(|r| {
                let why = if r.size_bytes == 0 {
                    "a zero-length I/O".to_string()
                } else if matches!(self.body, Body::Own(_)) && r.t_ns < self.last_t_ns {
                    format!(
                        "issued at {} ns, before the record before it ({} ns): records out of order",
                        r.t_ns, self.last_t_ns
                    )
                } else {
                    return Ok(r);
                };
                Err(Bad {
                    record: record_no,
                    why,
                    fatal: false,
                })
            });
            match checked {
                Ok(r) => {
                    self.last_t_ns = r.t_ns;
                    return Some(Ok(r));
                }
                Err(bad) if self.bad == BadRecords::Skip && !bad.fatal => {
                    self.skipped += 1;
                }
                Err(bad) => {
                    let hint = if bad.fatal {
                        ""
                    } else {
                        " (--skip-bad leaves such records out, counted)"
                    };
                    return Some(Err(TraceError::Record {
                        path: self.path.clone(),
                        record: bad.record,
                        why: format!("{}{hint}", bad.why),
                    }));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::io::Write;

    fn file(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let p = dir.path().join(name);
        std::fs::write(&p, bytes).unwrap();
        p
    }

    fn all(p: &Path) -> Vec<Record> {
        open(p, None, BadRecords::Refuse)
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    }

    const MSR: &str = "128166372003061629,web,1,Read,3221225472,4096,4620\n128166372003061729,web,1,Write,4096,8192,100\n128166372013061729,web,0,Read,0,512,100\n";

    #[test]
    fn msr_units_are_filetime_and_bytes() {
        let d = tempfile::tempdir().unwrap();
        let r = all(&file(&d, "t.csv", MSR.as_bytes()));
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].t_ns, 0);
        assert_eq!(r[1].t_ns, 10_000, "100 × 100 ns");
        assert_eq!(r[2].t_ns, 1_000_010_000);
        assert_eq!((r[0].offset_bytes, r[0].size_bytes), (3 << 30, 4096));
        assert_eq!(r[0].latency_ns, Some(462_000));
        assert_eq!((r[0].device, r[2].device), (0, 1));
        assert_eq!(r[1].op, Op::Write);
    }

    #[test]
    fn fio_iologs_v2_and_v3_with_their_times() {
        let d = tempfile::tempdir().unwrap();
        let v3 = "fio version 3 iolog\n0 /dev/x add\n5 /dev/x open\n10 /dev/x read 4096 4096\n250 /dev/x write 0 8192\n260 /dev/x sync\n300 /dev/x close\n";
        let r = all(&file(&d, "v3.log", v3.as_bytes()));
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].t_ns, r[1].t_ns), (10_000, 250_000));
        // fio's rule (iolog.c, read_iolog_get): `wait MS` holds the next I/O
        // until MS after the replay's start; a time already past holds
        // nothing. Not µs, not since the previous wait.
        let v2 = "fio version 2 iolog\n/dev/x add\n/dev/x read 0 4096\n/dev/x wait 2\n/dev/y trim 512 512\n/dev/x wait 1 0\n/dev/x read 0 512\n/dev/x wait 5 0\n/dev/x read 0 512\n";
        let mut recs = open(&file(&d, "v2.log", v2.as_bytes()), None, BadRecords::Refuse).unwrap();
        assert!(
            recs.may_be_timed() && !recs.timed(),
            "not known before a wait"
        );
        let r: Vec<Record> = recs.by_ref().map(|r| r.unwrap()).collect();
        let times: Vec<u64> = r.iter().map(|r| r.t_ns).collect();
        assert_eq!(times, [0, 2_000_000, 2_000_000, 5_000_000]);
        assert_eq!((r[1].op, r[1].device), (Op::Trim, 1));
        assert!(recs.timed());
        assert_eq!(recs.devices(), ["/dev/x", "/dev/y"]);
    }

    #[test]
    fn gzip_and_zstd_stream() {
        let d = tempfile::tempdir().unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(MSR.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        assert_eq!(all(&file(&d, "t.csv.gz", &gz)).len(), 3);
        let zs = zstd::encode_all(MSR.as_bytes(), 1).unwrap();
        assert_eq!(all(&file(&d, "t.csv.zst", &zs)).len(), 3);
    }

    fn err_of(p: &Path) -> String {
        match open(p, None, BadRecords::Refuse) {
            Err(e) => e.to_string(),
            Ok(recs) => recs.collect::<Result<Vec<_>, _>>().unwrap_err().to_string(),
        }
    }

    #[test]
    fn a_line_past_the_cap_is_refused_by_number_in_bounded_memory() {
        // An endless line: refused once past the cap (read_line would
        // grow its string until memory ran out).
        let mut endless: Box<dyn BufRead + Send> = Box::new(BufReader::new(std::io::repeat(b'7')));
        let mut line = String::new();
        assert!(matches!(
            read_line_capped(&mut *endless, &mut line),
            Err(LineError::TooLong)
        ));
        assert!(line.is_empty());
        // A record line of 64 MiB without a newline, zstd and gzip: a few
        // kilobytes on disk.
        let d = tempfile::tempdir().unwrap();
        let mut text = b"fio version 3 iolog\n10 /dev/x read 0 4096\n".to_vec();
        text.extend(std::iter::repeat_n(b'a', 64 << 20));
        let zs = zstd::encode_all(&text[..], 1).unwrap();
        assert!(zs.len() < 1 << 20, "{}", zs.len());
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&text).unwrap();
        let gz = gz.finish().unwrap();
        for p in [file(&d, "t.log.zst", &zs), file(&d, "t.log.gz", &gz)] {
            let mut recs = open(&p, None, BadRecords::Skip).unwrap();
            assert_eq!(recs.next().unwrap().unwrap().size_bytes, 4096);
            let e = recs.next().unwrap().unwrap_err().to_string();
            assert!(e.contains("record 3: line 3 is longer than 1 MiB"), "{e}");
            assert!(!e.contains("aaaa"), "{e}");
            // Fatal under --skip-bad too: the stream is mid-line.
            assert!(recs.next().is_none());
        }
        // The first line, which tells the format.
        let mut first = vec![b'x'; 2 << 20];
        first.push(b'\n');
        let e = err_of(&file(&d, "x.csv", &first));
        assert!(e.contains("line 1 is longer than 1 MiB"), "{e}");
        assert!(!e.contains("xxxx"), "{e}");
        // A line of exactly the cap is read.
        let mut ok = b"fio version 2 iolog\n/dev/x read 0 4096".to_vec();
        ok.resize("fio version 2 iolog\n".len() + MAX_LINE_BYTES, b' ');
        ok.push(b'\n');
        assert_eq!(all(&file(&d, "cap.log", &ok)).len(), 1);
    }

    #[test]
    fn quoted_text_has_no_control_characters() {
        let d = tempfile::tempdir().unwrap();
        let e = err_of(&file(
            &d,
            "esc.log",
            b"fio version 3 iolog\n10 /dev/x re\x1b[2Jad 0 4096\n",
        ));
        assert!(e.contains("unknown action 're[2Jad'"), "{e}");
        let e = err_of(&file(&d, "esc.txt", b"\x1b]0;title\x07hello\n"));
        assert!(e.contains("line 1 ']0;titlehello'"), "{e}");
        assert!(!e.chars().any(|c| c.is_control()), "{e:?}");
    }

    #[test]
    fn devices_are_held_to_what_a_trace_names() {
        let d = tempfile::tempdir().unwrap();
        let mut t = String::new();
        for i in 0..=MAX_DEVICES {
            t.push_str(&format!("128166372003061629,h,{i},Read,0,4096,1\n"));
        }
        let p = file(&d, "many.csv", t.as_bytes());
        let e = err_of(&p);
        assert!(
            e.contains("record 65536: a device or file past the most a trace names"),
            "{e}"
        );
        let mut recs = open(&p, None, BadRecords::Skip).unwrap();
        assert_eq!(recs.by_ref().filter_map(Result::ok).count(), MAX_DEVICES);
        assert_eq!(recs.skipped(), 1);
        // iorig's own format: a header of names past the cap is refused
        // before they are all read.
        let mut own = crate::own::MAGIC.to_vec();
        own.extend(crate::own::VERSION.to_le_bytes());
        own.extend(300u16.to_le_bytes());
        for _ in 0..300 {
            own.extend(u16::MAX.to_le_bytes());
            own.extend(std::iter::repeat_n(b'd', u16::MAX as usize));
        }
        let e = err_of(&file(&d, "names.iotrace", &own));
        assert!(e.contains("device names pass 16 MiB"), "{e}");
        let names = vec!["d".repeat(u16::MAX as usize); 300];
        let e = crate::own::Writer::new(Vec::new(), &names).err().unwrap();
        assert!(e.to_string().contains("at most 16"), "{e}");
    }

    #[test]
    fn bad_records_are_named_or_skipped_and_counted() {
        let d = tempfile::tempdir().unwrap();
        let bad = "128166372003061629,web,1,Read,0,4096,1\n128166372003061529,web,1,Read,0,4096,1\n128166372003061729,web,1,Read,0,0,1\n128166372003061829,web,1,Read,0,4096,1\n";
        let p = file(&d, "bad.csv", bad.as_bytes());
        let e = err_of(&p);
        assert!(
            e.contains("record 2: Timestamp") && e.contains("out of order"),
            "{e}"
        );
        let mut recs = open(&p, None, BadRecords::Skip).unwrap();
        assert_eq!(recs.by_ref().filter_map(Result::ok).count(), 2);
        assert_eq!(recs.skipped(), 2, "out of order and zero length");
        let e = open(&file(&d, "x.txt", b"hello\n"), None, BadRecords::Refuse)
            .err()
            .unwrap()
            .to_string();
        assert!(
            e.contains("neither an fio iolog header nor an MSR CSV record"),
            "{e}"
        );
        let e = open(&p, Some(Format::Fio), BadRecords::Refuse)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("--format fio but the content is msr"), "{e}");
    }
}
