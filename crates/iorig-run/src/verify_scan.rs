//! `iorig verify --journal FILE`: re-reads every block of the journaled
//! targets and checks it against the keys the journal recorded. Writes that
//! were in flight at the end of the log may hold either generation; a clean
//! check settles them in the journal, so the next run continues from here.

use crate::event::{Event, Sink};
use crate::results::{error_entry, LISTED_ERRORS};
use crate::RunError;
use iorig_engine::buffers::AlignedBuffers;
use iorig_engine::verify::{check_ours, target_id, ValidationError, ValidationSummary};
use iorig_result::ValidationErrorEntry;
use iorig_verify::{Expected, Journal, JournalState, JournalTarget, UnitError, UNKNOWN};
use rustix::fs::OFlags;
use rustix::io::Errno;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The first bytes of every unit iorig writes under validation.
const HEADER_MAGIC: &[u8] = b"IORV";
/// Bytes read per call.
const CHUNK_BYTES: usize = 1 << 20;
pub const SCHEMA: &str = "iorig.verify/1";

/// What the scan is asked to do.
#[derive(Debug, Clone)]
pub struct ScanOptions {
    pub journal: PathBuf,
    /// Stop after this many errors (at least 1).
    pub max_errors: u64,
    /// Read through the page cache instead of O_DIRECT.
    pub buffered: bool,
}

/// The `iorig.verify/1` document.
#[derive(Debug, Clone, Serialize)]
pub struct VerifyDoc {
    pub schema: &'static str,
    pub journal: String,
    pub unit_bytes: u32,
    pub targets: Vec<JournalTarget>,
    pub units_read: u64,
    pub units_checked: u64,
    pub written_units: u64,
    /// Units left unchecked: an earlier run reported their loss and nothing
    /// is known of them until they are written again.
    pub unknown_units: u64,
    pub in_flight_writes: u64,
    pub bytes_read: u64,
    pub duration_s: f64,
    pub errors: u64,
    pub errors_by_kind: BTreeMap<String, u64>,
    pub stopped_at_max_errors: bool,
    pub error_list: Vec<ValidationErrorEntry>,
    pub status: &'static str,
}

/// The journal's state, read before the scan (the caller may describe it).
pub fn open(opts: &ScanOptions) -> Result<JournalState, RunError> {
    if opts.max_errors == 0 {
        return Err(RunError::usage("--max-errors must be at least 1"));
    }
    let path = &opts.journal;
    if !path.exists() {
        return Err(RunError::usage(format!(
            "--journal {}: no such file; give the journal a `iorig run --journal FILE` wrote",
            path.display()
        )));
    }
    Journal::read_state(path)
        .map_err(|e| RunError::usage(format!("--journal {}: {e}", path.display())))
}

/// Units of the journal written at least once and known, and units whose
/// loss a run reported ([`UNKNOWN`] in the journal's map), in one pass.
pub fn unit_counts(state: &JournalState) -> (u64, u64) {
    let (mut written, mut unknown) = (0, 0);
    for key in state.keys.iter().flatten() {
        match *key {
            0 => {}
            UNKNOWN => unknown += 1,
            _ => written += 1,
        }
    }
    (written, unknown)
}

/// Reads every unit of every target; each error goes to `sink` as it is
/// found (and a settle failure as a notice).
pub fn scan(
    opts: &ScanOptions,
    state: &JournalState,
    sink: &mut dyn Sink,
) -> Result<(VerifyDoc, ValidationSummary), RunError> {
    let names: Vec<String> = state.targets.iter().map(|t| t.path.clone()).collect();
    let mut files = Vec::new();
    for t in &state.targets {
        files.push(Reader::open(&t.path, t.size_bytes, opts.buffered)?);
    }
    let ids: Vec<u32> = (0..state.targets.len())
        .map(|i| target_id(state.tag, i))
        .collect();
    // Writes in flight at the end of the log may hold either generation.
    let mut in_flight: HashMap<(u32, u64), (u8, u8)> = HashMap::new();
    for f in &state.in_flight {
        for (i, (old, new)) in f.old_keys.iter().zip(&f.new_keys).enumerate() {
            in_flight.insert((f.target, f.first_unit + i as u64), (*old, *new));
        }
    }
    let started = Instant::now();
    let unit = state.unit_bytes as usize;
    let chunk_units = (CHUNK_BYTES / unit).max(1);
    let mut buf =
        AlignedBuffers::new(1, chunk_units * unit).map_err(|e| RunError::runtime(e.to_string()))?;
    let mut summary = ValidationSummary::new(unit as u64);
    let mut resolved: Vec<Vec<u8>> = state.keys.clone();
    let mut units_read = 0u64;
    let mut bytes_read = 0u64;
    'targets: for (t, file) in files.iter_mut().enumerate() {
        let keys = &state.keys[t];
        let mut u = 0usize;
        while u < keys.len() {
            let n = chunk_units.min(keys.len() - u);
            let data = &mut buf.slot_mut(0)[..n * unit];
            file.read(data, (u * unit) as u64, unit).map_err(|e| {
                RunError::runtime(format!("reading {} at offset {}: {e}", names[t], u * unit))
            })?;
            units_read += n as u64;
            bytes_read += (n * unit) as u64;
            for i in 0..n {
                let unit_index = (u + i) as u64;
                let bytes = &data[i * unit..(i + 1) * unit];
                let offset = unit_index * unit as u64;
                let expected = match in_flight.get(&(t as u32, unit_index)) {
                    // Unknown before a write that may not have landed:
                    // known again only if it did.
                    Some(&(UNKNOWN, new)) => {
                        if let Ok(Some(k)) = check_block(bytes, &ids, t, offset, Expected::Key(new))
                        {
                            resolved[t][u + i] = k;
                        }
                        continue;
                    }
                    Some(&(old, new)) => Expected::Either { old, new },
                    None => match keys[u + i] {
                        0 => Expected::Unwritten,
                        // A run reported this unit's loss already.
                        UNKNOWN => continue,
                        k => Expected::Key(k),
                    },
                };
                if expected != Expected::Unwritten {
                    summary.units_checked += 1;
                }
                match check_block(bytes, &ids, t, offset, expected) {
                    Ok(found) => {
                        if let Expected::Either { .. } = expected {
                            resolved[t][u + i] = found.unwrap_or(0);
                        }
                    }
                    Err(mut error) => {
                        error.name_found_target(&names);
                        // A tree's error names its file and the offset in it.
                        let (target_path, at) = file
                            .locate(offset)
                            .unwrap_or_else(|| (names[t].clone(), offset));
                        error.offset_bytes = at;
                        let e = ValidationError {
                            t_s: started.elapsed().as_secs_f64(),
                            target_path,
                            error,
                        };
                        sink.event(&Event::ValidationError(&e));
                        summary.add_error(e);
                        if summary.errors >= opts.max_errors {
                            summary.stopped_at_max_errors = true;
                            break 'targets;
                        }
                    }
                }
            }
            u += n;
        }
    }
    let duration_s = started.elapsed().as_secs_f64();
    // A clean check settles the writes that were in flight.
    if summary.errors == 0 && !state.in_flight.is_empty() {
        let settled = Journal::open(&opts.journal).and_then(|(j, _)| j.checkpoint(&resolved));
        if let Err(e) = settled {
            sink.event(&Event::Notice(&format!(
                "could not settle the journal: {e}"
            )));
        }
    }
    let (written_units, unknown_units) = unit_counts(state);
    let doc = VerifyDoc {
        schema: SCHEMA,
        journal: opts.journal.display().to_string(),
        unit_bytes: state.unit_bytes,
        targets: state.targets.clone(),
        units_read,
        units_checked: summary.units_checked,
        written_units,
        unknown_units,
        in_flight_writes: state.in_flight.len() as u64,
        bytes_read,
        duration_s,
        errors: summary.errors,
        errors_by_kind: summary.errors_by_kind.clone(),
        stopped_at_max_errors: summary.stopped_at_max_errors,
        error_list: summary
            .first_errors
            .iter()
            .take(LISTED_ERRORS)
            .map(|e| error_entry(e, &names))
            .collect(),
        status: if summary.errors == 0 { "ok" } else { "errors" },
    };
    Ok((doc, summary))
}

/// Checks one unit; never-written units are only looked at for a header of
/// ours (a write that landed where none was journaled).
fn check_block(
    bytes: &[u8],
    ids: &[u32],
    target: usize,
    offset: u64,
    expected: Expected,
) -> Result<Option<u8>, UnitError> {
    if expected == Expected::Unwritten && bytes.get(..4) != Some(HEADER_MAGIC) {
        return Ok(None);
    }
    check_ours(bytes, ids, target, offset, expected)
}

/// Where a journaled target's units are read from: a file or device, or
/// the files of a tree, each at its slot's span of the validation target.
enum Reader {
    Plain(std::fs::File),
    Tree {
        tree: Box<iorig_engine::fs::Tree>,
        span: u64,
        buffered: bool,
        /// The slot whose file is open, and the file (None: no file there).
        open: Option<(u64, Option<std::fs::File>)>,
    },
}

impl Reader {
    fn open(path: &str, size_bytes: u64, buffered: bool) -> Result<Reader, RunError> {
        let p = Path::new(path);
        if !p.is_dir() {
            return open_target(path, size_bytes, buffered).map(Reader::Plain);
        }
        let marker = p.join(iorig_engine::fs::MARKER);
        let text = std::fs::read_to_string(&marker).map_err(|e| {
            RunError::runtime(format!(
                "{}: {e}; the journal names a tree there, and its marker is gone",
                marker.display()
            ))
        })?;
        let (_, shape) = iorig_engine::fs::Shape::parse_marker(&text).ok_or_else(|| {
            RunError::runtime(format!("{} is not a marker iorig wrote", marker.display()))
        })?;
        let tree = iorig_engine::fs::Tree::of_shape(p, &shape)
            .map_err(|e| RunError::runtime(e.to_string()))?;
        if tree.slots == 0 || !size_bytes.is_multiple_of(tree.slots) {
            return Err(RunError::runtime(format!(
                "the tree in {path} has {} file slots now, which does not fit the {size_bytes} bytes journaled for it; it was rebuilt with another shape",
                tree.slots
            )));
        }
        Ok(Reader::Tree {
            span: size_bytes / tree.slots,
            tree: Box::new(tree),
            buffered,
            open: None,
        })
    }

    /// The file and the offset in it of a tree's `offset`.
    fn locate(&self, offset: u64) -> Option<(String, u64)> {
        match self {
            Reader::Plain(_) => None,
            Reader::Tree { tree, span, .. } => Some((
                tree.file_path(offset / span).display().to_string(),
                offset % span,
            )),
        }
    }

    /// Fills `buf` from `offset`; a tree's bytes past the end of a file (or
    /// of a file that is not there) read as zeros: never written.
    fn read(&mut self, buf: &mut [u8], offset: u64, unit: usize) -> std::io::Result<()> {
        let (tree, span, buffered, open) = match self {
            Reader::Plain(f) => return read_full(f, buf, offset),
            Reader::Tree {
                tree,
                span,
                buffered,
                open,
            } => (tree, *span, *buffered, open),
        };
        for (i, chunk) in buf.chunks_mut(unit).enumerate() {
            let at = offset + (i * unit) as u64;
            let slot = at / span;
            let in_file = at % span;
            if open.as_ref().map(|o| o.0) != Some(slot) {
                let path = tree.file_path(slot);
                let file = match open_file(&path, buffered) {
                    Ok(f) => Some(f),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                    Err(e) => return Err(e),
                };
                *open = Some((slot, file));
            }
            chunk.fill(0);
            if let Some((_, Some(f))) = open.as_ref() {
                let mut done = 0;
                while done < chunk.len() {
                    match f.read_at(&mut chunk[done..], in_file + done as u64) {
                        Ok(0) => break,
                        Ok(n) => done += n,
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
                    }
                }
            }
        }
        Ok(())
    }
}

/// Open flags as `OpenOptionsExt::custom_flags` takes them.
fn open_flags(f: OFlags) -> i32 {
    // The flags are bits below 2^31, so the cast keeps them.
    f.bits() as i32
}

/// Opens one of a tree's files for reading (never a link in its place),
/// O_DIRECT unless `buffered` or the file system refuses it.
fn open_file(path: &Path, buffered: bool) -> std::io::Result<std::fs::File> {
    let open = |direct: bool| {
        let mut o = OpenOptions::new();
        o.read(true);
        o.custom_flags(open_flags(if direct {
            OFlags::NOFOLLOW | OFlags::DIRECT
        } else {
            OFlags::NOFOLLOW
        }));
        o.open(path)
    };
    match open(!buffered) {
        Err(e) if !buffered && e.raw_os_error() == Some(Errno::INVAL.raw_os_error()) => open(false),
        r => r,
    }
}

fn open_target(path: &str, size_bytes: u64, buffered: bool) -> Result<std::fs::File, RunError> {
    let open = |direct: bool| {
        let mut o = OpenOptions::new();
        o.read(true);
        if direct {
            o.custom_flags(open_flags(OFlags::DIRECT));
        }
        o.open(path)
    };
    let file = match open(!buffered) {
        Ok(f) => f,
        // tmpfs and some others refuse O_DIRECT: read through the cache then.
        Err(e) if !buffered && e.raw_os_error() == Some(Errno::INVAL.raw_os_error()) => {
            open(false).map_err(|e| RunError::runtime(format!("opening {path}: {e}")))?
        }
        Err(e) => {
            return Err(RunError::runtime(format!(
                "opening {path}: {e}; the journal names it as a target"
            )))
        }
    };
    let len = iorig_engine::target::size_of_open(&file)
        .map_err(|e| RunError::runtime(format!("{path}: {e}")))?;
    if len < size_bytes {
        return Err(RunError::runtime(format!(
            "{path} is {len} bytes but was {size_bytes} when journaled; it was truncated or replaced"
        )));
    }
    Ok(file)
}

fn read_full(file: &std::fs::File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match file.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    "end of target",
                ))
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
