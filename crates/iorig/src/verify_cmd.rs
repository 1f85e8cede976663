//! Data validation at the command line: the journal of `iorig run --journal`,
//! the validation part of a run's summary (table lines and JSON), and
//! `iorig verify --journal FILE`, which re-reads every block of the journaled
//! targets and checks it against the keys the journal recorded.

use crate::output::Printer;
use crate::{exit, Failure};
use iorig_engine::buffers::AlignedBuffers;
use iorig_engine::run::Prepared;
use iorig_engine::verify::{
    check_ours, target_id, ValidationError, ValidationSummary, VerifySetup,
};
use iorig_result::{Validation, ValidationErrorEntry};
use iorig_spec::Workload;
use iorig_verify::{Expected, Journal, JournalTarget, KeyMap, UnitError};
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Validation errors printed as they happen; the rest are counted.
const PRINTED_ERRORS: u64 = 20;

/// The first bytes of every unit iorig writes under validation.
const HEADER_MAGIC: &[u8] = b"IORV";

/// Bytes `iorig verify` reads per call.
const VERIFY_CHUNK_BYTES: usize = 1 << 20;

// ------------------------------------------------------------------ output

/// The JSON errors keep this many entries.
const JSON_ERRORS: usize = 100;

/// `summary.validation` of the result JSON (and of the store's step summary).
pub fn validation_of(v: &ValidationSummary, target_names: &[String]) -> Validation {
    Validation {
        unit_bytes: v.unit_bytes,
        units_checked: v.units_checked,
        blocks_checked: v.blocks_checked,
        pre_reads: v.pre_reads,
        after_reads: v.after_reads,
        errors: v.errors,
        errors_by_kind: v.errors_by_kind.clone(),
        stopped_at_max_errors: v.stopped_at_max_errors,
        journal_ns: (v.journal_batches > 0).then_some(v.journal_ns),
        journal_batches: (v.journal_batches > 0).then_some(v.journal_batches),
        error_list: v
            .first_errors
            .iter()
            .take(JSON_ERRORS)
            .map(|e| error_json(e, target_names))
            .collect(),
    }
}

fn expected_keys(e: Expected) -> (Option<u8>, Option<u8>) {
    match e {
        Expected::Unwritten => (Some(0), None),
        Expected::Key(k) => (Some(k), None),
        Expected::Either { old, new } => (Some(new), Some(old)),
    }
}

fn error_json(e: &ValidationError, target_names: &[String]) -> ValidationErrorEntry {
    let u = &e.error;
    let (expected_key, expected_alt_key) = expected_keys(u.expected);
    ValidationErrorEntry {
        kind: u.kind.name().to_string(),
        t_s: e.t_s,
        target: e.target_path.clone(),
        offset_bytes: u.offset_bytes,
        expected_key,
        expected_alt_key,
        found_key: u.found_key,
        found_target: u.found_target.map(|t| {
            target_names
                .get(t as usize)
                .cloned()
                .unwrap_or_else(|| format!("#{t}"))
        }),
        found_offset_bytes: u.found_offset_bytes,
        found_written_unix_ns: u.found_time_ns,
        detail: u.detail.clone(),
    }
}

/// One line for a validation error.
pub fn error_text(e: &ValidationError) -> String {
    let u = &e.error;
    let expected = match u.expected {
        Expected::Unwritten => "never written".to_string(),
        Expected::Key(k) => format!("key {k}"),
        Expected::Either { old, new } => format!("key {old} or {new}"),
    };
    let found = match u.found_key {
        Some(k) => format!("key {k}"),
        None => "no iorig data".to_string(),
    };
    let written = u
        .found_time_ns
        .map(|ns| {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns);
            format!(", found written {}", humantime::format_rfc3339_millis(t))
        })
        .unwrap_or_default();
    format!(
        "{} at {} offset {} (t={:.3}s): expected {expected}, found {found}{written}; {}",
        u.kind.name().replace('_', " "),
        e.target_path,
        u.offset_bytes,
        e.t_s,
        u.detail
    )
}

/// The validation lines of a summary.
pub fn summary_lines(v: &ValidationSummary) -> Vec<String> {
    let mut out = vec![format!(
        "validation: {} block(s) checked ({} unit(s) of {} bytes; {} pre-read(s), {} read-back(s)), {} error(s)",
        v.blocks_checked, v.units_checked, v.unit_bytes, v.pre_reads, v.after_reads, v.errors
    )];
    if v.errors > 0 {
        let kinds: Vec<String> = v
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{} {n}", k.replace('_', " ")))
            .collect();
        out.push(format!("  errors by kind: {}", kinds.join(", ")));
    }
    if v.stopped_at_max_errors {
        out.push("  the run stopped at --max-errors".to_string());
    }
    if v.journal_batches > 0 {
        out.push(format!(
            "  journal: {} synced batch(es), {:.3} ms each on average (kept out of the I/O latency above)",
            v.journal_batches,
            v.journal_ns as f64 / v.journal_batches as f64 / 1e6
        ));
    }
    out
}

/// Prints a validation error as it arrives (the first few; then one line
/// saying the rest are counted).
pub fn print_error(printer: &Printer, e: &ValidationError, seen: &mut u64) {
    *seen += 1;
    if *seen <= PRINTED_ERRORS {
        printer.notice(&format!("validation error: {}", error_text(e)));
    } else if *seen == PRINTED_ERRORS + 1 {
        printer.notice("more validation errors: counted in the summary, listed in the JSON");
    }
}

// ------------------------------------------------------------------ journal of a run

/// The canonical form of a target path, as the journal records it.
fn canonical(path: &str) -> String {
    std::fs::canonicalize(path)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.to_string())
}

/// The journal must not be one of the targets: the run would overwrite its
/// own log (and the log the target's data).
fn check_journal_not_target(path: &Path, w: &Workload) -> Result<(), Failure> {
    match w
        .targets
        .iter()
        .find(|t| iorig_engine::target::same_target(path, Path::new(t)))
    {
        Some(t) => Err(Failure::usage(format!(
            "--journal {} is also a target ({t}); keep the journal on another file, outside the data under test",
            path.display()
        ))),
        None => Ok(()),
    }
}

/// Checks an existing journal against the workload before anything runs: the
/// same targets, the same unit, no write left in flight.
pub fn precheck_journal(path: &Path, w: &Workload) -> Result<(), Failure> {
    crate::record::check_output("--journal", path)?;
    check_journal_not_target(path, w)?;
    if !path.exists() {
        return Ok(());
    }
    let state = Journal::read_state(path)
        .map_err(|e| Failure::usage(format!("--journal {}: {e}", path.display())))?;
    let unit = w.verify_unit_bytes();
    if state.unit_bytes as u64 != unit {
        return Err(Failure::usage(format!(
            "--journal {}: it tracks {}-byte units but this workload's smallest block is {} bytes; use block sizes that are multiples of {} or a new journal",
            path.display(),
            state.unit_bytes,
            unit,
            state.unit_bytes
        )));
    }
    let journal_paths: Vec<&str> = state.targets.iter().map(|t| t.path.as_str()).collect();
    let ours: Vec<String> = w.targets.iter().map(|t| canonical(t)).collect();
    if journal_paths != ours.iter().map(String::as_str).collect::<Vec<_>>() {
        return Err(Failure::usage(format!(
            "--journal {}: it belongs to target(s) {}; give the same --target list in that order, or a new journal",
            path.display(),
            journal_paths.join(", ")
        )));
    }
    if !state.in_flight.is_empty() {
        return Err(Failure::usage(format!(
            "--journal {}: {} write(s) were in flight when its last run ended (a crash?); run `iorig verify --journal {}` first",
            path.display(),
            state.in_flight.len(),
            path.display()
        )));
    }
    Ok(())
}

/// Opens (or creates) the journal for a prepared run and builds the
/// validation state from it.
pub fn attach_journal(
    path: &Path,
    w: &Workload,
    p: &Prepared,
) -> Result<Arc<VerifySetup>, Failure> {
    let unit = w.verify_unit_bytes() as u32;
    let fail = |e: iorig_verify::VerifyError| {
        Failure::runtime(format!("--journal {}: {e}", path.display()))
    };
    let (journal, keys, tag) = if path.exists() {
        let (journal, state) = Journal::open(path).map_err(fail)?;
        for (t, (jt, extent)) in state.targets.iter().zip(&p.extents_bytes).enumerate() {
            if jt.size_bytes != *extent {
                return Err(Failure::usage(format!(
                    "--journal {}: target {} ({}) was {} bytes when journaled and is {} now; use a new journal",
                    path.display(),
                    t,
                    jt.path,
                    jt.size_bytes,
                    extent
                )));
            }
        }
        let keys = KeyMap::from_keys(unit, state.keys).map_err(fail)?;
        (journal, keys, state.tag)
    } else {
        let targets: Vec<JournalTarget> = w
            .targets
            .iter()
            .zip(&p.extents_bytes)
            .map(|(t, size)| JournalTarget {
                path: canonical(t),
                size_bytes: *size,
            })
            .collect();
        let tag = new_tag();
        let journal = Journal::create(path, unit, tag, &targets).map_err(fail)?;
        let keys = KeyMap::new(unit, &p.extents_bytes).map_err(fail)?;
        (journal, keys, tag)
    };
    Ok(Arc::new(VerifySetup {
        keys: Arc::new(keys),
        journal: Some(Arc::new(journal)),
        target_ids: (0..p.extents_bytes.len())
            .map(|i| target_id(tag, i))
            .collect(),
        after_write: w.verify_after,
    }))
}

fn new_tag() -> u32 {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let x = (ns ^ (std::process::id() as u64) << 32).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x >> 32) as u32
}

/// After a run: writes the key map into the journal and empties its log,
/// unless a write may have been left in flight (an I/O error), when the log
/// stays for `iorig verify` to resolve.
pub fn close_journal(setup: &VerifySetup, io_errors: u64, printer: &Printer) {
    let Some(j) = &setup.journal else { return };
    if io_errors > 0 {
        printer.notice("journal kept as logged (I/O errors may have left writes in flight); run `iorig verify --journal FILE` before the next run");
        return;
    }
    let keys: Vec<Vec<u8>> = (0..setup.keys.targets())
        .map(|t| setup.keys.snapshot(t as u32))
        .collect();
    if let Err(e) = j.checkpoint(&keys) {
        printer.notice(&format!(
            "journal checkpoint failed ({e}); its log still holds every write"
        ));
    }
}

// ------------------------------------------------------------------ iorig verify

#[derive(Debug, Serialize)]
struct VerifyDoc {
    schema: &'static str,
    journal: String,
    unit_bytes: u32,
    targets: Vec<JournalTarget>,
    units_read: u64,
    units_checked: u64,
    written_units: u64,
    in_flight_writes: u64,
    bytes_read: u64,
    duration_s: f64,
    errors: u64,
    errors_by_kind: BTreeMap<String, u64>,
    stopped_at_max_errors: bool,
    error_list: Vec<ValidationErrorEntry>,
    status: &'static str,
}

/// `iorig verify --journal FILE`.
pub fn verify(a: crate::cli::VerifyArgs) -> Result<u8, Failure> {
    let json_to_stdout = a.json.as_deref() == Some("-");
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        crate::record::check_output("--json", Path::new(j))?;
    }
    if a.max_errors == 0 {
        return Err(Failure::usage("--max-errors must be at least 1"));
    }
    let printer = Printer::new(json_to_stdout, a.quiet);
    if !a.journal.exists() {
        return Err(Failure::usage(format!(
            "--journal {}: no such file; give the journal a `iorig run --journal FILE` wrote",
            a.journal.display()
        )));
    }
    let state = Journal::read_state(&a.journal)
        .map_err(|e| Failure::usage(format!("--journal {}: {e}", a.journal.display())))?;
    let names: Vec<String> = state.targets.iter().map(|t| t.path.clone()).collect();
    let mut files = Vec::new();
    for t in &state.targets {
        files.push(open_for_verify(&t.path, t.size_bytes, a.buffered)?);
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
    if !a.quiet {
        printer.line(&format!(
            "iorig verify {}: {} target(s), {}-byte units, {} written, {} write(s) in flight at the end of the log",
            a.journal.display(),
            state.targets.len(),
            state.unit_bytes,
            state.keys.iter().map(|k| k.iter().filter(|x| **x != 0).count() as u64).sum::<u64>(),
            state.in_flight.len()
        ));
    }
    let started = Instant::now();
    let unit = state.unit_bytes as usize;
    let chunk_units = (VERIFY_CHUNK_BYTES / unit).max(1);
    let mut buf =
        AlignedBuffers::new(1, chunk_units * unit).map_err(|e| Failure::runtime(e.to_string()))?;
    let mut summary = ValidationSummary::new(unit as u64);
    let mut resolved: Vec<Vec<u8>> = state.keys.clone();
    let mut units_read = 0u64;
    let mut bytes_read = 0u64;
    let mut seen = 0u64;
    'targets: for (t, file) in files.iter().enumerate() {
        let keys = &state.keys[t];
        let mut u = 0usize;
        while u < keys.len() {
            let n = chunk_units.min(keys.len() - u);
            let data = &mut buf.slot_mut(0)[..n * unit];
            read_full(file, data, (u * unit) as u64).map_err(|e| {
                Failure::runtime(format!("reading {} at offset {}: {e}", names[t], u * unit))
            })?;
            units_read += n as u64;
            bytes_read += (n * unit) as u64;
            for i in 0..n {
                let unit_index = (u + i) as u64;
                let expected = match in_flight.get(&(t as u32, unit_index)) {
                    Some(&(old, new)) => Expected::Either { old, new },
                    None => match keys[u + i] {
                        0 => Expected::Unwritten,
                        k => Expected::Key(k),
                    },
                };
                let bytes = &data[i * unit..(i + 1) * unit];
                let offset = unit_index * unit as u64;
                if expected != Expected::Unwritten {
                    summary.units_checked += 1;
                }
                match check_block(bytes, &ids, t, offset, expected) {
                    Ok(found) => {
                        if let Expected::Either { .. } = expected {
                            resolved[t][u + i] = found.unwrap_or(0);
                        }
                    }
                    Err(error) => {
                        let e = ValidationError {
                            t_s: started.elapsed().as_secs_f64(),
                            target_path: names[t].clone(),
                            error,
                        };
                        print_error(&printer, &e, &mut seen);
                        summary.add_error(e);
                        if summary.errors >= a.max_errors {
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
    // A clean check settles the writes that were in flight, so the next
    // journaled run can continue from here.
    if summary.errors == 0 && !state.in_flight.is_empty() {
        match Journal::open(&a.journal) {
            Ok((j, _)) => {
                if let Err(e) = j.checkpoint(&resolved) {
                    printer.notice(&format!("could not settle the journal: {e}"));
                }
            }
            Err(e) => printer.notice(&format!("could not settle the journal: {e}")),
        }
    }
    let written_units = state
        .keys
        .iter()
        .map(|k| k.iter().filter(|x| **x != 0).count() as u64)
        .sum();
    printer.line(&format!(
        "verify: {units_read} unit(s) read ({:.1} MiB in {duration_s:.1}s), {} with known data checked, {} error(s)",
        bytes_read as f64 / (1 << 20) as f64,
        summary.units_checked,
        summary.errors
    ));
    if summary.errors > 0 {
        for l in summary_lines(&summary).into_iter().skip(1) {
            printer.line(&l);
        }
    }
    if let Some(j) = &a.json {
        let doc = VerifyDoc {
            schema: "iorig.verify/1",
            journal: a.journal.display().to_string(),
            unit_bytes: state.unit_bytes,
            targets: state.targets.clone(),
            units_read,
            units_checked: summary.units_checked,
            written_units,
            in_flight_writes: state.in_flight.len() as u64,
            bytes_read,
            duration_s,
            errors: summary.errors,
            errors_by_kind: summary.errors_by_kind.clone(),
            stopped_at_max_errors: summary.stopped_at_max_errors,
            error_list: summary
                .first_errors
                .iter()
                .take(JSON_ERRORS)
                .map(|e| error_json(e, &names))
                .collect(),
            status: if summary.errors == 0 { "ok" } else { "errors" },
        };
        crate::output::json::write_json_doc(&printer, j, &doc)?;
    }
    Ok(if summary.errors > 0 {
        exit::VALIDATION
    } else {
        exit::OK
    })
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

fn open_for_verify(path: &str, size_bytes: u64, buffered: bool) -> Result<std::fs::File, Failure> {
    let open = |direct: bool| {
        let mut o = OpenOptions::new();
        o.read(true);
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        o.open(path)
    };
    let file = match open(!buffered) {
        Ok(f) => f,
        // tmpfs and some others refuse O_DIRECT: read through the cache then.
        Err(e) if !buffered && e.raw_os_error() == Some(libc::EINVAL) => {
            open(false).map_err(|e| Failure::runtime(format!("opening {path}: {e}")))?
        }
        Err(e) => {
            return Err(Failure::runtime(format!(
                "opening {path}: {e}; the journal names it as a target"
            )))
        }
    };
    let len = iorig_engine::target::size_of_open(&file)
        .map_err(|e| Failure::runtime(format!("{path}: {e}")))?;
    if len < size_bytes {
        return Err(Failure::runtime(format!(
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
