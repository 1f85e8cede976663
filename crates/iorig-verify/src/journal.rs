//! The validation journal: the key map on disk, so data written by one run can
//! be re-checked after a crash (`iorig verify --journal FILE`).
//!
//! # File format
//!
//! All integers little endian; offsets in bytes.
//!
//! 1. **Header block** at offset 0, 4096 bytes (rounded up to the next
//!    multiple of 4096 should the JSON not fit): magic `b"IORIGJNL"`, `u32`
//!    format version (1), `u32` length of the JSON that follows, the JSON
//!    `{"unit_bytes":…,"tag":…,"targets":[{"path":…,"size_bytes":…},…]}`, then the
//!    CRC-32C of all the preceding header bytes. The rest of the block is zero.
//! 2. **Key map** region: for each target, `size_bytes / unit_bytes` bytes,
//!    one key per unit (0 = never written, 0x80 = [`crate::UNKNOWN`]: a
//!    run reported the unit's loss and nothing is known of it until it is
//!    written again); each target's region starts on a
//!    4096-byte boundary, the first right after the header block.
//! 3. **Log** region, from the next 4096-byte boundary after the map to the
//!    end of the file: records of
//!    `[kind u8: 1 intent, 2 done][target u32][first_unit u64][count u32]`
//!    `[count new keys, u8 each — intent records only][CRC-32C u32 of the record's preceding bytes]`.
//!
//! # Protocol and replay
//!
//! Before a batch of writes is submitted, [`Journal::log_intents`] appends an
//! intent per write and fdatasyncs; after they complete, [`Journal::log_done`]
//! appends the matching done records. [`Journal::checkpoint`] folds the
//! current keys into the map region, syncs, then empties the log.
//!
//! Replay starts from the map region and walks the log: an intent is held as
//! pending under (target, first unit), a done record applies its pending
//! intent's keys to the map. Intents still pending at the end are writes that
//! were in flight at the crash: each of their units may hold the old or the
//! new key ([`InFlight`]). The walk stops at the first record that is short,
//! of an unknown kind or fails its CRC: that is the torn tail of an append cut
//! short by the crash, never acknowledged to anyone.
//!
//! Replay is idempotent, so a crash between a checkpoint's map write and its
//! log truncation is harmless: the units a write covers are locked from its
//! intent to its done record, so done records of one unit appear in write
//! order and replaying them over the checkpointed map ends with the same keys.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::error::VerifyError;
use crate::format::SECTOR_BYTES;
use crate::keymap::UNKNOWN;

const MAGIC: &[u8; 8] = b"IORIGJNL";
const VERSION: u32 = 1;
const BLOCK_BYTES: u64 = 4096;
/// Magic, version and JSON length.
const HEADER_PREFIX_BYTES: usize = 16;
const CRC_BYTES: usize = 4;
const KIND_INTENT: u8 = 1;
const KIND_DONE: u8 = 2;
/// kind, target, first unit, count.
const RECORD_HEAD_BYTES: usize = 17;
const KEY_MASK: u8 = 0x7f;
/// Chunk in which a checkpoint copies keys, so busy bits can be masked without
/// a second copy of a large map.
const CHECKPOINT_CHUNK_BYTES: usize = 1 << 20;

/// One target as recorded in the journal header.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalTarget {
    pub path: String,
    pub size_bytes: u64,
}

/// A write that was logged as intended but never as done: at a crash its units
/// may hold either key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InFlight {
    pub target: u32,
    pub first_unit: u64,
    /// The units' keys before the write (0 = never written).
    pub old_keys: Vec<u8>,
    /// The keys the write was stamping.
    pub new_keys: Vec<u8>,
}

/// The state a journal replays to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalState {
    pub unit_bytes: u32,
    /// The caller's tag given to [`Journal::create`] (e.g. the seed of the
    /// target ids stamped into unit headers).
    pub tag: u32,
    pub targets: Vec<JournalTarget>,
    /// Per target, the key of every unit after applying all completed writes.
    pub keys: Vec<Vec<u8>>,
    /// Writes without a done record, ordered by (target, first unit).
    pub in_flight: Vec<InFlight>,
    /// Valid log records replayed (intents and dones).
    pub log_records: u64,
}

/// One write as the journal sees it: `new_keys.len()` units from `first_unit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteRecord<'a> {
    pub target: u32,
    pub first_unit: u64,
    pub new_keys: &'a [u8],
}

#[derive(Serialize, Deserialize)]
struct HeaderJson {
    unit_bytes: u32,
    tag: u32,
    targets: Vec<JournalTarget>,
}

/// Where everything lives in the file.
#[derive(Clone, Debug)]
struct Layout {
    units: Vec<u64>,
    map_starts: Vec<u64>,
    log_start: u64,
}

fn round_up(value: u64, to: u64) -> Option<u64> {
    value.checked_next_multiple_of(to)
}

impl Layout {
    fn new(header_bytes: u64, unit_bytes: u32, targets: &[JournalTarget]) -> Option<Layout> {
        let mut units = Vec::with_capacity(targets.len());
        let mut map_starts = Vec::with_capacity(targets.len());
        let mut pos = header_bytes;
        for target in targets {
            let count = target.size_bytes / u64::from(unit_bytes);
            map_starts.push(pos);
            units.push(count);
            pos = round_up(pos.checked_add(count)?, BLOCK_BYTES)?;
        }
        Some(Layout {
            units,
            map_starts,
            log_start: pos,
        })
    }

    /// Whether a record's units exist.
    fn contains(&self, target: u32, first_unit: u64, count: u64) -> bool {
        self.units.get(target as usize).is_some_and(|&units| {
            first_unit
                .checked_add(count)
                .is_some_and(|end| end <= units)
        })
    }
}

fn valid_unit_bytes(unit_bytes: u32) -> bool {
    unit_bytes as usize >= SECTOR_BYTES && (unit_bytes as usize).is_multiple_of(SECTOR_BYTES)
}

fn le_u32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

fn le_u64(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

fn encode_header(
    unit_bytes: u32,
    tag: u32,
    targets: &[JournalTarget],
) -> Result<Vec<u8>, VerifyError> {
    let json = serde_json::to_vec(&HeaderJson {
        unit_bytes,
        tag,
        targets: targets.to_vec(),
    })
    .map_err(|e| VerifyError::Usage(format!("encoding the journal header: {e}")))?;
    let json_len = u32::try_from(json.len())
        .map_err(|_| VerifyError::Usage("journal header too large".to_owned()))?;
    let mut header = Vec::with_capacity(HEADER_PREFIX_BYTES + json.len() + CRC_BYTES);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&VERSION.to_le_bytes());
    header.extend_from_slice(&json_len.to_le_bytes());
    header.extend_from_slice(&json);
    let crc = crc32c::crc32c(&header);
    header.extend_from_slice(&crc.to_le_bytes());
    let block = round_up(header.len() as u64, BLOCK_BYTES)
        .ok_or_else(|| VerifyError::Usage("journal header too large".to_owned()))?;
    header.resize(block as usize, 0);
    Ok(header)
}

/// Reads and checks the header: (unit bytes, tag, targets, layout).
fn read_header(
    file: &File,
    path: &Path,
) -> Result<(u32, u32, Vec<JournalTarget>, Layout), VerifyError> {
    let shown = path.display();
    let file_bytes = file
        .metadata()
        .map_err(|e| VerifyError::io(format!("reading journal {shown}"), e))?
        .len();
    let not_journal = || VerifyError::Journal(format!("{shown}: not an iorig journal"));
    let damaged = || VerifyError::Journal(format!("{shown}: damaged header"));
    if file_bytes < HEADER_PREFIX_BYTES as u64 {
        return Err(not_journal());
    }
    let mut prefix = [0u8; HEADER_PREFIX_BYTES];
    read_at(file, &mut prefix, 0, path)?;
    if &prefix[..8] != MAGIC {
        return Err(not_journal());
    }
    let version = le_u32(&prefix, 8);
    if version != VERSION {
        return Err(VerifyError::Journal(format!(
            "{shown}: journal format version {version}, this iorig reads version {VERSION}"
        )));
    }
    let json_len = le_u32(&prefix, 12) as usize;
    let header_len = HEADER_PREFIX_BYTES + json_len + CRC_BYTES;
    if header_len as u64 > file_bytes {
        return Err(damaged());
    }
    let mut header = vec![0u8; header_len];
    read_at(file, &mut header, 0, path)?;
    let crc_at = header_len - CRC_BYTES;
    if crc32c::crc32c(&header[..crc_at]) != le_u32(&header, crc_at) {
        return Err(damaged());
    }
    let json: HeaderJson =
        serde_json::from_slice(&header[HEADER_PREFIX_BYTES..crc_at]).map_err(|_| damaged())?;
    if !valid_unit_bytes(json.unit_bytes) {
        return Err(damaged());
    }
    let header_block = round_up(header_len as u64, BLOCK_BYTES).ok_or_else(damaged)?;
    let layout = Layout::new(header_block, json.unit_bytes, &json.targets).ok_or_else(damaged)?;
    Ok((json.unit_bytes, json.tag, json.targets, layout))
}

fn read_at(file: &File, buf: &mut [u8], offset: u64, path: &Path) -> Result<(), VerifyError> {
    file.read_exact_at(buf, offset)
        .map_err(|e| VerifyError::io(format!("reading journal {}", path.display()), e))
}

/// Replays map and log: the state and where the valid log ends.
fn replay(
    file: &File,
    path: &Path,
    unit_bytes: u32,
    tag: u32,
    targets: Vec<JournalTarget>,
    layout: &Layout,
) -> Result<(JournalState, u64), VerifyError> {
    let shown = path.display();
    let file_bytes = file
        .metadata()
        .map_err(|e| VerifyError::io(format!("reading journal {shown}"), e))?
        .len();
    if file_bytes < layout.log_start {
        return Err(VerifyError::Journal(format!(
            "{shown}: truncated: {file_bytes} bytes, the key map alone needs {}",
            layout.log_start
        )));
    }
    let mut keys = Vec::with_capacity(layout.units.len());
    for (&units, &start) in layout.units.iter().zip(&layout.map_starts) {
        let len = usize::try_from(units).map_err(|_| {
            VerifyError::Journal(format!(
                "{shown}: key map of {units} units does not fit in memory"
            ))
        })?;
        let mut target_keys = vec![0u8; len];
        read_at(file, &mut target_keys, start, path)?;
        for key in &mut target_keys {
            if *key != UNKNOWN {
                *key &= KEY_MASK;
            }
        }
        keys.push(target_keys);
    }

    let log_len = usize::try_from(file_bytes - layout.log_start)
        .map_err(|_| VerifyError::Journal(format!("{shown}: log too large")))?;
    let mut log = vec![0u8; log_len];
    read_at(file, &mut log, layout.log_start, path)?;

    let mut pending: BTreeMap<(u32, u64), Vec<u8>> = BTreeMap::new();
    let mut pos = 0usize;
    let mut log_records = 0u64;
    while let Some(record) = next_record(&log[pos..]) {
        let at = layout.log_start + pos as u64;
        if !layout.contains(record.target, record.first_unit, u64::from(record.count)) {
            return Err(VerifyError::Journal(format!(
                "{shown}: log record at byte {at} names units {}..+{} of target {}, which do not exist",
                record.first_unit, record.count, record.target
            )));
        }
        let key = (record.target, record.first_unit);
        match record.new_keys {
            Some(new_keys) => {
                pending.insert(key, new_keys.iter().map(|k| k & KEY_MASK).collect());
            }
            None => {
                // A done without a pending intent is one whose intent was
                // folded into the map by a checkpoint that crashed before
                // truncating the log: the map already holds its keys.
                if let Some(new_keys) = pending.remove(&key) {
                    if new_keys.len() != record.count as usize {
                        return Err(VerifyError::Journal(format!(
                            "{shown}: done record at byte {at} covers {} units, its intent {}",
                            record.count,
                            new_keys.len()
                        )));
                    }
                    let first = record.first_unit as usize;
                    keys[record.target as usize][first..first + new_keys.len()]
                        .copy_from_slice(&new_keys);
                }
            }
        }
        pos += record.len;
        log_records += 1;
    }

    let in_flight = pending
        .into_iter()
        .map(|((target, first_unit), new_keys)| {
            let first = first_unit as usize;
            InFlight {
                target,
                first_unit,
                old_keys: keys[target as usize][first..first + new_keys.len()].to_vec(),
                new_keys,
            }
        })
        .collect();
    let state = JournalState {
        unit_bytes,
        tag,
        targets,
        keys,
        in_flight,
        log_records,
    };
    Ok((state, layout.log_start + pos as u64))
}

struct Record<'a> {
    target: u32,
    first_unit: u64,
    count: u32,
    /// Intent records only.
    new_keys: Option<&'a [u8]>,
    /// Bytes the record occupies.
    len: usize,
}

/// Parses the record at the start of `log`; None at the end of the log or at a
/// torn or garbage record.
fn next_record(log: &[u8]) -> Option<Record<'_>> {
    if log.len() < RECORD_HEAD_BYTES + CRC_BYTES {
        return None;
    }
    let kind = log[0];
    let count = le_u32(log, 13);
    let keys_len = match kind {
        KIND_INTENT => count as usize,
        KIND_DONE => 0,
        _ => return None,
    };
    let body_len = RECORD_HEAD_BYTES.checked_add(keys_len)?;
    let len = body_len.checked_add(CRC_BYTES)?;
    if log.len() < len {
        return None;
    }
    if crc32c::crc32c(&log[..body_len]) != le_u32(log, body_len) {
        return None;
    }
    Some(Record {
        target: le_u32(log, 1),
        first_unit: le_u64(log, 5),
        count,
        new_keys: (kind == KIND_INTENT).then(|| &log[RECORD_HEAD_BYTES..body_len]),
        len,
    })
}

fn encode_record(out: &mut Vec<u8>, kind: u8, write: &WriteRecord<'_>, count: u32) {
    let start = out.len();
    out.push(kind);
    out.extend_from_slice(&write.target.to_le_bytes());
    out.extend_from_slice(&write.first_unit.to_le_bytes());
    out.extend_from_slice(&count.to_le_bytes());
    if kind == KIND_INTENT {
        out.extend(write.new_keys.iter().map(|key| key & KEY_MASK));
    }
    let crc = crc32c::crc32c(&out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
}

fn sync_parent_dir(path: &Path) -> Result<(), VerifyError> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    File::open(parent)
        .and_then(|dir| dir.sync_all())
        .map_err(|e| VerifyError::io(format!("syncing directory {}", parent.display()), e))
}

/// The log's file and where the next record goes.
struct LogFile {
    file: File,
    end: u64,
}

/// An open journal, appended to by the workers (all methods take `&self`;
/// appends are serialised by an internal lock).
pub struct Journal {
    path: PathBuf,
    unit_bytes: u32,
    tag: u32,
    targets: Vec<JournalTarget>,
    layout: Layout,
    log: Mutex<LogFile>,
}

impl std::fmt::Debug for Journal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Journal")
            .field("path", &self.path)
            .field("unit_bytes", &self.unit_bytes)
            .field("tag", &self.tag)
            .field("targets", &self.targets)
            .finish_non_exhaustive()
    }
}

impl Journal {
    /// Creates a new journal at `path` (failing if anything exists there) with
    /// every unit never written, and makes it durable, directory entry
    /// included, before returning. `tag` is stored for the caller and
    /// returned by replays ([`JournalState::tag`]).
    pub fn create(
        path: &Path,
        unit_bytes: u32,
        tag: u32,
        targets: &[JournalTarget],
    ) -> Result<Journal, VerifyError> {
        if !valid_unit_bytes(unit_bytes) {
            return Err(VerifyError::Usage(format!(
                "validation unit of {unit_bytes} bytes: it must be a multiple of {SECTOR_BYTES} bytes, at least {SECTOR_BYTES}"
            )));
        }
        let header = encode_header(unit_bytes, tag, targets)?;
        let layout = Layout::new(header.len() as u64, unit_bytes, targets)
            .ok_or_else(|| VerifyError::Usage("journal key map too large".to_owned()))?;
        let shown = path.display();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)
            .map_err(|e| VerifyError::io(format!("creating journal {shown}"), e))?;
        let written = file
            .write_all_at(&header, 0)
            // The map region reads as zeros (never written) without writing it.
            .and_then(|()| file.set_len(layout.log_start))
            .and_then(|()| file.sync_all())
            .map_err(|e| VerifyError::io(format!("writing journal {shown}"), e))
            .and_then(|()| sync_parent_dir(path));
        if let Err(e) = written {
            // Best effort: a half-written journal would only block the next try.
            drop(file);
            let _ = std::fs::remove_file(path);
            return Err(e);
        }
        Ok(Journal {
            path: path.to_owned(),
            unit_bytes,
            tag,
            targets: targets.to_vec(),
            log: Mutex::new(LogFile {
                file,
                end: layout.log_start,
            }),
            layout,
        })
    }

    /// Opens an existing journal for appending and replays it. A torn tail of
    /// the log (short record, bad CRC) is ignored and cut off, so new records
    /// follow the last valid one.
    pub fn open(path: &Path) -> Result<(Journal, JournalState), VerifyError> {
        let shown = path.display();
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| VerifyError::io(format!("opening journal {shown}"), e))?;
        let (unit_bytes, tag, targets, layout) = read_header(&file, path)?;
        let (state, end) = replay(&file, path, unit_bytes, tag, targets.clone(), &layout)?;
        let file_bytes = file
            .metadata()
            .map_err(|e| VerifyError::io(format!("reading journal {shown}"), e))?
            .len();
        if file_bytes != end {
            file.set_len(end)
                .and_then(|()| file.sync_all())
                .map_err(|e| VerifyError::io(format!("cutting the torn log tail of {shown}"), e))?;
        }
        let journal = Journal {
            path: path.to_owned(),
            unit_bytes,
            tag,
            targets,
            layout,
            log: Mutex::new(LogFile { file, end }),
        };
        Ok((journal, state))
    }

    /// Replays a journal without modifying it (for `iorig verify`).
    pub fn read_state(path: &Path) -> Result<JournalState, VerifyError> {
        let file = File::open(path)
            .map_err(|e| VerifyError::io(format!("opening journal {}", path.display()), e))?;
        let (unit_bytes, tag, targets, layout) = read_header(&file, path)?;
        let (state, _) = replay(&file, path, unit_bytes, tag, targets, &layout)?;
        Ok(state)
    }

    /// Records that these writes are about to be submitted; durable on return.
    /// Call BEFORE submitting them, with their units locked in the key map.
    pub fn log_intents(&self, writes: &[WriteRecord<'_>]) -> Result<(), VerifyError> {
        self.append(KIND_INTENT, writes)
    }

    /// Records that these writes completed; durable on return. Call after
    /// they completed and before their units are unlocked.
    pub fn log_done(&self, writes: &[WriteRecord<'_>]) -> Result<(), VerifyError> {
        self.append(KIND_DONE, writes)
    }

    fn append(&self, kind: u8, writes: &[WriteRecord<'_>]) -> Result<(), VerifyError> {
        if writes.is_empty() {
            return Ok(());
        }
        let key_bytes: usize = if kind == KIND_INTENT {
            writes.iter().map(|w| w.new_keys.len()).sum()
        } else {
            0
        };
        let mut records =
            Vec::with_capacity(writes.len() * (RECORD_HEAD_BYTES + CRC_BYTES) + key_bytes);
        for write in writes {
            let count = u32::try_from(write.new_keys.len())
                .ok()
                .filter(|&count| {
                    self.layout
                        .contains(write.target, write.first_unit, u64::from(count))
                })
                .ok_or_else(|| {
                    VerifyError::Usage(format!(
                        "journal record for units {}..+{} of target {}, which do not exist",
                        write.first_unit,
                        write.new_keys.len(),
                        write.target
                    ))
                })?;
            encode_record(&mut records, kind, write, count);
        }
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        // On failure `end` stays put, so the next append overwrites whatever
        // part of this one reached the file.
        log.file
            .write_all_at(&records, log.end)
            .and_then(|()| log.file.sync_data())
            .map_err(|e| {
                VerifyError::io(format!("appending to journal {}", self.path.display()), e)
            })?;
        log.end += records.len() as u64;
        Ok(())
    }

    /// Makes `keys` (one `Vec` per target, every unit) the journal's map and
    /// empties the log: map written and synced first, so a crash in between
    /// leaves a log whose replay over the new map changes nothing. Only call
    /// when no write is in flight. [`UNKNOWN`] is kept as it is; other
    /// values lose their busy bit.
    pub fn checkpoint(&self, keys: &[Vec<u8>]) -> Result<(), VerifyError> {
        if keys.len() != self.layout.units.len()
            || keys
                .iter()
                .zip(&self.layout.units)
                .any(|(keys, &units)| keys.len() as u64 != units)
        {
            return Err(VerifyError::Usage(format!(
                "checkpoint of {} targets does not match the journal's {} targets and their unit counts",
                keys.len(),
                self.layout.units.len()
            )));
        }
        let shown = self.path.display();
        let mut log = self.log.lock().unwrap_or_else(PoisonError::into_inner);
        let mut chunk = Vec::with_capacity(CHECKPOINT_CHUNK_BYTES);
        for (target_keys, &start) in keys.iter().zip(&self.layout.map_starts) {
            let mut offset = start;
            for part in target_keys.chunks(CHECKPOINT_CHUNK_BYTES) {
                chunk.clear();
                chunk.extend(part.iter().map(
                    |&key| {
                        if key == UNKNOWN {
                            key
                        } else {
                            key & KEY_MASK
                        }
                    },
                ));
                log.file
                    .write_all_at(&chunk, offset)
                    .map_err(|e| VerifyError::io(format!("checkpointing journal {shown}"), e))?;
                offset += part.len() as u64;
            }
        }
        log.file
            .sync_data()
            .map_err(|e| VerifyError::io(format!("checkpointing journal {shown}"), e))?;
        log.file
            .set_len(self.layout.log_start)
            .and_then(|()| log.file.sync_all())
            .map_err(|e| VerifyError::io(format!("truncating the log of journal {shown}"), e))?;
        log.end = self.layout.log_start;
        Ok(())
    }

    pub fn unit_bytes(&self) -> u32 {
        self.unit_bytes
    }

    pub fn tag(&self) -> u32 {
        self.tag
    }

    pub fn targets(&self) -> &[JournalTarget] {
        &self.targets
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Write;

    fn targets() -> Vec<JournalTarget> {
        vec![
            JournalTarget {
                path: "/dev/nvme0n1".to_owned(),
                size_bytes: 4096 * 100,
            },
            JournalTarget {
                path: "/mnt/data/file with \"quotes\"".to_owned(),
                size_bytes: 4096 * 5000 + 17,
            },
        ]
    }

    fn new_journal(dir: &tempfile::TempDir) -> (PathBuf, Journal) {
        let path = dir.path().join("j");
        let journal = Journal::create(&path, 4096, 0xabcd_1234, &targets()).unwrap();
        (path, journal)
    }

    fn file_bytes(path: &Path) -> Vec<u8> {
        std::fs::read(path).unwrap()
    }

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn is_send_and_sync() {
        assert_send_sync::<Journal>();
    }

    #[test]
    fn create_and_layout() {
        let dir = tempfile::tempdir().unwrap();
        let (path, journal) = new_journal(&dir);
        assert_eq!(journal.unit_bytes(), 4096);
        assert_eq!(journal.targets(), targets().as_slice());
        let bytes = file_bytes(&path);
        assert_eq!(&bytes[..8], b"IORIGJNL");
        assert_eq!(le_u32(&bytes, 8), 1);
        let json_len = le_u32(&bytes, 12) as usize;
        let json: serde_json::Value = serde_json::from_slice(&bytes[16..16 + json_len]).unwrap();
        assert_eq!(json["unit_bytes"], 4096);
        assert_eq!(json["targets"][1]["size_bytes"], 4096 * 5000 + 17);
        assert_eq!(
            le_u32(&bytes, 16 + json_len),
            crc32c::crc32c(&bytes[..16 + json_len])
        );
        // Header 4096, target 0: 100 units → one block, target 1: 5000 units
        // → two blocks; the log starts right after.
        assert_eq!(journal.layout.map_starts, vec![4096, 8192]);
        assert_eq!(journal.layout.log_start, 4096 + 4096 + 8192);
        assert_eq!(bytes.len() as u64, journal.layout.log_start);

        let state = Journal::read_state(&path).unwrap();
        assert_eq!(state.unit_bytes, 4096);
        assert_eq!(state.tag, 0xabcd_1234);
        assert_eq!(journal.tag(), 0xabcd_1234);
        assert_eq!(state.targets, targets());
        assert_eq!(state.keys, vec![vec![0; 100], vec![0; 5000]]);
        assert!(state.in_flight.is_empty());
        assert_eq!(state.log_records, 0);
    }

    #[test]
    fn create_on_existing_path_fails() {
        let dir = tempfile::tempdir().unwrap();
        let (path, _journal) = new_journal(&dir);
        let before = file_bytes(&path);
        let err = Journal::create(&path, 4096, 0xabcd_1234, &targets()).unwrap_err();
        match err {
            VerifyError::Io { source, .. } => {
                assert_eq!(source.kind(), std::io::ErrorKind::AlreadyExists);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(file_bytes(&path), before, "existing file untouched");
        assert!(matches!(
            Journal::create(&dir.path().join("k"), 1000, 0, &targets()),
            Err(VerifyError::Usage(_))
        ));
    }

    #[test]
    fn intents_and_done_apply_on_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let (path, journal) = new_journal(&dir);
        journal
            .log_intents(&[
                WriteRecord {
                    target: 0,
                    first_unit: 10,
                    new_keys: &[1, 1, 1],
                },
                WriteRecord {
                    target: 1,
                    first_unit: 4999,
                    new_keys: &[7],
                },
            ])
            .unwrap();
        journal
            .log_done(&[
                WriteRecord {
                    target: 0,
                    first_unit: 10,
                    new_keys: &[1, 1, 1],
                },
                WriteRecord {
                    target: 1,
                    first_unit: 4999,
                    new_keys: &[7],
                },
            ])
            .unwrap();
        // A second generation over part of the first.
        let second = [WriteRecord {
            target: 0,
            first_unit: 11,
            new_keys: &[2],
        }];
        journal.log_intents(&second).unwrap();
        journal.log_done(&second).unwrap();
        drop(journal);

        let (journal, state) = Journal::open(&path).unwrap();
        assert_eq!(state.log_records, 6);
        assert!(state.in_flight.is_empty());
        assert_eq!(&state.keys[0][9..14], &[0, 1, 2, 1, 0]);
        assert_eq!(state.keys[1][4999], 7);
        assert_eq!(state.keys[1].iter().filter(|&&k| k != 0).count(), 1);
        // Appending after reopen continues the log.
        let third = [WriteRecord {
            target: 0,
            first_unit: 0,
            new_keys: &[0x80 | 3],
        }];
        journal.log_intents(&third).unwrap();
        journal.log_done(&third).unwrap();
        drop(journal);
        let state = Journal::read_state(&path).unwrap();
        assert_eq!(state.log_records, 8);
        assert_eq!(state.keys[0][0], 3, "busy bit masked");
        assert_eq!(&state.keys[0][10..13], &[1, 2, 1]);
    }

    #[test]
    fn intent_without_done_is_in_flight() {
        let dir = tempfile::tempdir().unwrap();
        let (path, journal) = new_journal(&dir);
        let first = [WriteRecord {
            target: 0,
            first_unit: 5,
            new_keys: &[1, 1],
        }];
        journal.log_intents(&first).unwrap();
        journal.log_done(&first).unwrap();
        journal
            .log_intents(&[
                WriteRecord {
                    target: 0,
                    first_unit: 5,
                    new_keys: &[2, 2],
                },
                WriteRecord {
                    target: 1,
                    first_unit: 0,
                    new_keys: &[1],
                },
            ])
            .unwrap();
        drop(journal);
        let state = Journal::read_state(&path).unwrap();
        assert_eq!(
            state.in_flight,
            vec![
                InFlight {
                    target: 0,
                    first_unit: 5,
                    old_keys: vec![1, 1],
                    new_keys: vec![2, 2]
                },
                InFlight {
                    target: 1,
                    first_unit: 0,
                    old_keys: vec![0],
                    new_keys: vec![1]
                },
            ]
        );
        assert_eq!(&state.keys[0][5..7], &[1, 1], "map holds the old keys");
        let (_journal, reopened) = Journal::open(&path).unwrap();
        assert_eq!(reopened, state);
    }

    #[test]
    fn torn_tail_is_ignored_and_cut() {
        for tail in [
            vec![0x5a; 3],                               // garbage shorter than a record
            vec![0u8; 64],                               // zeros
            vec![1, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0], // intent cut short
        ] {
            let dir = tempfile::tempdir().unwrap();
            let (path, journal) = new_journal(&dir);
            let write = [WriteRecord {
                target: 0,
                first_unit: 1,
                new_keys: &[4, 4],
            }];
            journal.log_intents(&write).unwrap();
            journal.log_done(&write).unwrap();
            let good_len = file_bytes(&path).len();
            drop(journal);
            let mut file = OpenOptions::new().append(true).open(&path).unwrap();
            file.write_all(&tail).unwrap();
            drop(file);

            let state = Journal::read_state(&path).unwrap();
            assert_eq!(state.log_records, 2);
            assert_eq!(&state.keys[0][1..3], &[4, 4]);
            assert_eq!(
                file_bytes(&path).len(),
                good_len + tail.len(),
                "read_state leaves it"
            );

            let (journal, reopened) = Journal::open(&path).unwrap();
            assert_eq!(reopened, state);
            assert_eq!(file_bytes(&path).len(), good_len, "open cuts the tail");
            let next = [WriteRecord {
                target: 0,
                first_unit: 1,
                new_keys: &[5, 5],
            }];
            journal.log_intents(&next).unwrap();
            journal.log_done(&next).unwrap();
            drop(journal);
            let state = Journal::read_state(&path).unwrap();
            assert_eq!(state.log_records, 4);
            assert_eq!(&state.keys[0][1..3], &[5, 5]);
        }
    }

    #[test]
    fn truncated_or_corrupt_last_record_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let (path, journal) = new_journal(&dir);
        let write = [WriteRecord {
            target: 0,
            first_unit: 1,
            new_keys: &[4, 4],
        }];
        journal.log_intents(&write).unwrap();
        journal.log_done(&write).unwrap();
        let second = [WriteRecord {
            target: 0,
            first_unit: 1,
            new_keys: &[5, 5],
        }];
        journal.log_intents(&second).unwrap();
        journal.log_done(&second).unwrap();
        drop(journal);
        let full = file_bytes(&path);

        // The last done record (21 bytes) loses its final byte: the second
        // write becomes in flight.
        std::fs::write(&path, &full[..full.len() - 1]).unwrap();
        let state = Journal::read_state(&path).unwrap();
        assert_eq!(state.log_records, 3);
        assert_eq!(&state.keys[0][1..3], &[4, 4]);
        assert_eq!(
            state.in_flight,
            vec![InFlight {
                target: 0,
                first_unit: 1,
                old_keys: vec![4, 4],
                new_keys: vec![5, 5]
            }]
        );

        // A flipped bit in the last record: same.
        let mut flipped = full.clone();
        let last = flipped.len() - 6;
        flipped[last] ^= 0x10;
        std::fs::write(&path, &flipped).unwrap();
        assert_eq!(Journal::read_state(&path).unwrap(), state);
        let (_journal, reopened) = Journal::open(&path).unwrap();
        assert_eq!(reopened, state);
        assert_eq!(file_bytes(&path).len(), full.len() - 21);
    }

    #[test]
    fn checkpoint_then_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let (path, journal) = new_journal(&dir);
        let write = [WriteRecord {
            target: 1,
            first_unit: 100,
            new_keys: &[9, 9, 9],
        }];
        journal.log_intents(&write).unwrap();
        journal.log_done(&write).unwrap();
        let mut keys = vec![vec![0u8; 100], vec![0u8; 5000]];
        keys[1][100..103].copy_from_slice(&[9, 9, 9]);
        keys[0][99] = 0x80 | 127;
        journal.checkpoint(&keys).unwrap();
        let log_start = journal.layout.log_start;
        assert_eq!(file_bytes(&path).len() as u64, log_start, "log emptied");
        // Appends after a checkpoint start at the log's beginning.
        let after = [WriteRecord {
            target: 0,
            first_unit: 0,
            new_keys: &[1],
        }];
        journal.log_intents(&after).unwrap();
        drop(journal);

        let (journal, state) = Journal::open(&path).unwrap();
        assert_eq!(state.log_records, 1);
        assert_eq!(state.keys[0][99], 127);
        assert_eq!(&state.keys[1][100..103], &[9, 9, 9]);
        assert_eq!(
            state.in_flight,
            vec![InFlight {
                target: 0,
                first_unit: 0,
                old_keys: vec![0],
                new_keys: vec![1]
            }]
        );
        let mut keys = state.keys.clone();
        keys[0][0] = 1;
        journal.checkpoint(&keys).unwrap();
        drop(journal);
        let state = Journal::read_state(&path).unwrap();
        assert_eq!(state.keys, keys);
        assert_eq!(state.log_records, 0);
        assert!(state.in_flight.is_empty());
    }

    #[test]
    fn replay_is_idempotent_over_a_checkpointed_map() {
        // A crash after the checkpoint wrote the map but before the log was
        // truncated: the log is replayed over the final map.
        let dir = tempfile::tempdir().unwrap();
        let (path, journal) = new_journal(&dir);
        for key in 1..=3u8 {
            let write = [WriteRecord {
                target: 0,
                first_unit: 7,
                new_keys: &[key, key],
            }];
            journal.log_intents(&write).unwrap();
            journal.log_done(&write).unwrap();
        }
        drop(journal);
        let before = Journal::read_state(&path).unwrap();
        let log = file_bytes(&path)[16384..].to_vec();
        let (journal, _) = Journal::open(&path).unwrap();
        journal.checkpoint(&before.keys).unwrap();
        drop(journal);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&log).unwrap();
        drop(file);
        let after = Journal::read_state(&path).unwrap();
        assert_eq!(after.keys, before.keys);
        assert!(after.in_flight.is_empty());
    }

    #[test]
    fn unknown_units_survive_a_checkpoint_until_written() {
        let dir = tempfile::tempdir().unwrap();
        let (path, journal) = new_journal(&dir);
        let mut keys = Journal::read_state(&path).unwrap().keys;
        keys[0][2] = UNKNOWN;
        keys[0][3] = 5 | 0x80; // a busy bit is no "unknown"
        journal.checkpoint(&keys).unwrap();
        let write = [WriteRecord {
            target: 0,
            first_unit: 4,
            new_keys: &[1],
        }];
        journal.log_intents(&write).unwrap();
        journal.log_done(&write).unwrap();
        drop(journal);
        let state = Journal::read_state(&path).unwrap();
        assert_eq!(&state.keys[0][2..5], &[UNKNOWN, 5, 1]);
        // A done write over the unknown unit makes it known.
        let (journal, _) = Journal::open(&path).unwrap();
        let write = [WriteRecord {
            target: 0,
            first_unit: 2,
            new_keys: &[7],
        }];
        journal.log_intents(&write).unwrap();
        journal.log_done(&write).unwrap();
        drop(journal);
        assert_eq!(Journal::read_state(&path).unwrap().keys[0][2], 7);
    }

    #[test]
    fn read_state_does_not_modify() {
        let dir = tempfile::tempdir().unwrap();
        let (path, journal) = new_journal(&dir);
        let write = [WriteRecord {
            target: 0,
            first_unit: 3,
            new_keys: &[2],
        }];
        journal.log_intents(&write).unwrap();
        drop(journal);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(&[0xee; 10]).unwrap();
        drop(file);
        let before = file_bytes(&path);
        let mtime = std::fs::metadata(&path).unwrap().modified().unwrap();
        let state = Journal::read_state(&path).unwrap();
        assert_eq!(state.in_flight.len(), 1);
        assert_eq!(file_bytes(&path), before);
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), mtime);
        // Read-only files are fine too.
        let mut perms = std::fs::metadata(&path).unwrap().permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(&path, perms).unwrap();
        assert_eq!(Journal::read_state(&path).unwrap(), state);
    }

    #[test]
    fn bad_headers_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let (path, journal) = new_journal(&dir);
        drop(journal);
        let good = file_bytes(&path);
        let journal_error = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            match Journal::read_state(&path) {
                Err(VerifyError::Journal(why)) => why,
                other => panic!("unexpected {other:?}"),
            }
        };
        let mut bad = good.clone();
        bad[0] = b'X';
        assert!(journal_error(&bad).ends_with("not an iorig journal"));
        assert!(journal_error(b"short").ends_with("not an iorig journal"));
        assert!(journal_error(&[]).ends_with("not an iorig journal"));
        let mut bad = good.clone();
        bad[30] ^= 1; // inside the JSON
        assert!(journal_error(&bad).ends_with("damaged header"));
        let mut bad = good.clone();
        bad[12] = 0xff; // JSON length beyond the file
        bad[13] = 0xff;
        bad[14] = 0xff;
        assert!(journal_error(&bad).ends_with("damaged header"));
        let mut bad = good.clone();
        bad[8] = 2;
        assert!(journal_error(&bad).contains("version 2"));
        // Header intact but the map region cut off.
        let why = journal_error(&good[..5000]);
        assert!(why.contains("truncated"), "{why}");
        // And Journal::open says the same.
        std::fs::write(&path, b"definitely not a journal").unwrap();
        assert!(matches!(Journal::open(&path), Err(VerifyError::Journal(_))));
    }

    #[test]
    fn records_beyond_the_targets_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (_path, journal) = new_journal(&dir);
        for write in [
            WriteRecord {
                target: 2,
                first_unit: 0,
                new_keys: &[1],
            },
            WriteRecord {
                target: 0,
                first_unit: 99,
                new_keys: &[1, 1],
            },
            WriteRecord {
                target: 0,
                first_unit: u64::MAX,
                new_keys: &[1],
            },
        ] {
            assert!(matches!(
                journal.log_intents(&[write]),
                Err(VerifyError::Usage(_))
            ));
        }
        assert!(matches!(
            journal.checkpoint(&[vec![0; 100]]),
            Err(VerifyError::Usage(_))
        ));
        assert!(matches!(
            journal.checkpoint(&[vec![0; 100], vec![0; 4999]]),
            Err(VerifyError::Usage(_))
        ));
        journal.log_intents(&[]).unwrap();
    }

    #[test]
    fn large_header_spans_blocks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big");
        let targets: Vec<JournalTarget> = (0..200)
            .map(|i| JournalTarget {
                path: format!("/mnt/a/rather/long/directory/name/for/target/file-{i:04}"),
                size_bytes: 512 * 3,
            })
            .collect();
        let journal = Journal::create(&path, 512, 7, &targets).unwrap();
        assert!(journal.layout.map_starts[0] > 4096);
        assert_eq!(journal.layout.map_starts[0] % 4096, 0);
        let write = [WriteRecord {
            target: 199,
            first_unit: 2,
            new_keys: &[6],
        }];
        journal.log_intents(&write).unwrap();
        journal.log_done(&write).unwrap();
        drop(journal);
        let state = Journal::read_state(&path).unwrap();
        assert_eq!(state.targets, targets);
        assert_eq!(state.keys[199], vec![0, 0, 6]);
    }
}
