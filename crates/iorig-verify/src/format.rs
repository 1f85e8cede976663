//! The on-storage format of a validated unit, and how a read-back unit is judged.
//!
//! A unit of `len` bytes (a multiple of [`SECTOR_BYTES`], at least one sector)
//! starts with a 32-byte little-endian header:
//!
//! | bytes    | field                                                        |
//! |----------|--------------------------------------------------------------|
//! | `0..4`   | magic `b"IORV"`                                              |
//! | `4..8`   | target index, `u32`                                          |
//! | `8..16`  | offset of this unit within its target in bytes, `u64`        |
//! | `16`     | key (write generation, 1..=127)                              |
//! | `17`     | format version, 1                                            |
//! | `18..20` | zero                                                         |
//! | `20..28` | wall-clock time of the write, ns since the UNIX epoch, `u64` |
//! | `28..32` | CRC-32C of bytes `0..28` followed by bytes `32..len`         |
//!
//! The payload (bytes `32..len`) is a sequence of little-endian 64-bit words;
//! word `i` (counted from the unit start, so the first payload word is 4) is
//! `splitmix64(seed ^ i * 0x9E3779B97F4A7C15)` with `seed` mixed from
//! (target, offset, key). Because every word depends only on its own index,
//! any 512-byte sector can be regenerated on its own, which is what lets
//! [`check_unit`] tell a torn write (sectors from different generations) from
//! corruption (a sector from no generation at all). A header can be checked on
//! its own too: its checksum must hold over it and the regenerated payload of
//! the generation it names, which proves a torn unit's header genuine.

use std::fmt;

/// Size of the unit header.
pub const HEADER_BYTES: usize = 32;
/// The granularity at which storage may tear a write, and so the granularity
/// at which a damaged unit is analysed.
pub const SECTOR_BYTES: usize = 512;
/// Keys are 1..=`MAX_KEY`; 0 means "never written by iorig". The eighth bit is
/// left free for the key map's busy flag.
pub const MAX_KEY: u8 = 127;

const MAGIC: [u8; 4] = *b"IORV";
const VERSION: u8 = 1;
const WORD_BYTES: usize = 8;
const KEY_MASK: u8 = 0x7f;
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;
/// Where the checksum lives inside the header; it covers everything else.
const CRC_AT: usize = 28;

/// The key of the next write to a unit that currently holds `key`: 0→1, 1→2,
/// …, 126→127, 127→1. Never yields 0, so "written" stays distinguishable from
/// "never written". The busy bit (0x80) is ignored.
pub fn next_key(key: u8) -> u8 {
    let key = key & KEY_MASK;
    if key >= MAX_KEY {
        1
    } else {
        key + 1
    }
}

#[inline]
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(GOLDEN_GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[inline]
fn unit_seed(target: u32, offset_bytes: u64, key: u8) -> u64 {
    splitmix64(splitmix64(u64::from(target) ^ (u64::from(key) << 32)) ^ offset_bytes)
}

#[inline]
fn payload_word(seed: u64, word_index: u64) -> u64 {
    splitmix64(seed ^ word_index.wrapping_mul(GOLDEN_GAMMA))
}

#[inline]
fn le_u32(bytes: &[u8], at: usize) -> u32 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u32::from_le_bytes(word)
}

#[inline]
fn le_u64(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Checksum of a whole unit, skipping the checksum field itself.
#[inline]
fn unit_crc(buf: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&buf[..CRC_AT]), &buf[HEADER_BYTES..])
}

fn valid_unit_len(len: usize) -> bool {
    len >= SECTOR_BYTES && len.is_multiple_of(SECTOR_BYTES)
}

/// Writes one unit: header + payload + checksum. `buf.len()` is the unit size
/// (a multiple of 512, at least 512); `offset_bytes` is where the unit lives
/// within target `target`; `key` is its new generation (1..=127, busy bit
/// ignored); `time_ns` is the wall clock, recorded for error reports only.
///
/// Runs on every write, so it allocates nothing and fills the payload in one
/// pass of independent word computations.
pub fn stamp_unit(buf: &mut [u8], target: u32, offset_bytes: u64, key: u8, time_ns: u64) {
    debug_assert!(
        valid_unit_len(buf.len()),
        "unit of {} bytes is not a whole number of sectors",
        buf.len()
    );
    let key = key & KEY_MASK;
    debug_assert!(key != 0, "key 0 is reserved for never-written units");
    if buf.len() < HEADER_BYTES {
        return;
    }
    let seed = unit_seed(target, offset_bytes, key);
    // Four independent words per step keep the multipliers busy; a unit is a
    // whole number of sectors, so the tail loop only runs for odd sizes.
    let mut index = (HEADER_BYTES / WORD_BYTES) as u64;
    let mut quads = buf[HEADER_BYTES..].chunks_exact_mut(4 * WORD_BYTES);
    for quad in &mut quads {
        let words = [
            payload_word(seed, index),
            payload_word(seed, index + 1),
            payload_word(seed, index + 2),
            payload_word(seed, index + 3),
        ];
        for (out, word) in quad.chunks_exact_mut(WORD_BYTES).zip(words) {
            out.copy_from_slice(&word.to_le_bytes());
        }
        index += 4;
    }
    for (out, index) in quads
        .into_remainder()
        .chunks_exact_mut(WORD_BYTES)
        .zip(index..)
    {
        out.copy_from_slice(&payload_word(seed, index).to_le_bytes());
    }
    buf[0..4].copy_from_slice(&MAGIC);
    buf[4..8].copy_from_slice(&target.to_le_bytes());
    buf[8..16].copy_from_slice(&offset_bytes.to_le_bytes());
    buf[16] = key;
    buf[17] = VERSION;
    buf[18..20].fill(0);
    buf[20..28].copy_from_slice(&time_ns.to_le_bytes());
    let crc = unit_crc(buf);
    buf[CRC_AT..HEADER_BYTES].copy_from_slice(&crc.to_le_bytes());
}

/// Whether bytes `start..end` of a unit (word aligned) hold the payload of
/// `seed`. Stops at the first differing word, so rejecting a wrong key is cheap.
fn range_matches(buf: &[u8], start: usize, end: usize, seed: u64) -> bool {
    buf[start..end]
        .chunks_exact(WORD_BYTES)
        .zip((start / WORD_BYTES) as u64..)
        .all(|(word, index)| le_u64(word, 0) == payload_word(seed, index))
}

/// Whether the whole payload of `buf` (everything after the header) is the one
/// iorig writes for (target, offset_bytes, key). The header is not looked at.
pub fn payload_matches(buf: &[u8], target: u32, offset_bytes: u64, key: u8) -> bool {
    if buf.len() < HEADER_BYTES {
        return false;
    }
    range_matches(
        buf,
        HEADER_BYTES,
        buf.len(),
        unit_seed(target, offset_bytes, key & KEY_MASK),
    )
}

/// What a reader expects in a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Never written by iorig: anything but an iorig stamp is fine.
    Unwritten,
    /// Last written with this key.
    Key(u8),
    /// A write was in flight at a crash: the unit may hold either generation.
    /// `old` may be 0 (= unwritten).
    Either { old: u8, new: u8 },
    /// Nothing is known of the unit's writes: any intact block of its own
    /// will do ([`check_self`], fio's verify_only).
    Any,
    /// The workload's pattern over every byte ([`check_pattern`]).
    Pattern,
}

impl Expected {
    /// Drops busy bits, so a value read straight from a key map works.
    fn masked(self) -> Expected {
        match self {
            Expected::Unwritten => Expected::Unwritten,
            Expected::Key(key) => Expected::Key(key & KEY_MASK),
            Expected::Either { old, new } => Expected::Either {
                old: old & KEY_MASK,
                new: new & KEY_MASK,
            },
            Expected::Any => Expected::Any,
            Expected::Pattern => Expected::Pattern,
        }
    }

    /// Whether "no iorig data here" is an acceptable state.
    fn allows_unwritten(self) -> bool {
        match self {
            Expected::Unwritten => true,
            Expected::Key(key) => key == 0,
            Expected::Either { old, new } => old == 0 || new == 0,
            Expected::Any | Expected::Pattern => false,
        }
    }

    /// Whether an iorig unit with `key` is an acceptable state.
    fn accepts(self, key: u8) -> bool {
        key != 0
            && match self {
                Expected::Unwritten => false,
                Expected::Key(expected) => key == expected,
                Expected::Either { old, new } => key == old || key == new,
                Expected::Any => true,
                Expected::Pattern => false,
            }
    }

    /// The acceptable non-zero keys, most likely first.
    fn keys(self) -> [u8; 2] {
        match self {
            Expected::Unwritten | Expected::Any | Expected::Pattern => [0, 0],
            Expected::Key(key) => [key, 0],
            Expected::Either { old, new } => [new, old],
        }
    }

    fn has_keys(self) -> bool {
        self.keys() != [0, 0]
    }
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let key = |key: u8| {
            if key == 0 {
                "no iorig data".to_owned()
            } else {
                format!("key {key}")
            }
        };
        match *self {
            Expected::Unwritten => f.write_str("no iorig data"),
            Expected::Key(k) => f.write_str(&key(k)),
            Expected::Either { old, new } => write!(f, "{} or {}", key(old), key(new)),
            Expected::Any => f.write_str("any intact block"),
            Expected::Pattern => f.write_str("the pattern"),
        }
    }
}

/// The kinds of failure a unit check reports, each named by its evidence (the
/// decision table is in `docs/verify.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Not a valid block, and not made of genuine parts of writes: a header
    /// or payload that fails its checksum (a flipped bit, random or zeroed
    /// bytes), or no iorig data where a rewritten unit was expected.
    Corrupted,
    /// A valid block of this unit (header and checksum hold), of another
    /// generation than the acknowledged one: an older version came back.
    /// Also no iorig data at all where generation 1 was expected, since the
    /// unit's never-written content is the version before its first write.
    LostWrite,
    /// A valid block written for another offset or target.
    Misdirected,
    /// Every sector is a genuine part of some write (sector 0 with a header
    /// that verifies against its own generation's payload), from at least two
    /// writes; or genuine parts of the expected first write beside
    /// never-written content where that is an older version.
    Torn,
    /// A valid block of this unit where the map says nothing was ever written.
    UnwrittenHasData,
}

impl ErrorKind {
    /// Stable snake_case name, for reports and result stores.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Corrupted => "corrupted",
            ErrorKind::LostWrite => "lost_write",
            ErrorKind::Misdirected => "misdirected",
            ErrorKind::Torn => "torn",
            ErrorKind::UnwrittenHasData => "unwritten_has_data",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One unit that failed its check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitError {
    pub kind: ErrorKind,
    /// Where the unit was read from.
    pub target: u32,
    pub offset_bytes: u64,
    pub expected: Expected,
    /// The key found: the payload's when the payload is one intact write and
    /// only the header is damaged; else the header's when the magic is
    /// present; else none.
    pub found_key: Option<u8>,
    /// Header fields, when the magic is present.
    pub found_target: Option<u32>,
    pub found_offset_bytes: Option<u64>,
    pub found_time_ns: Option<u64>,
    /// One human-readable line saying what was wrong.
    pub detail: String,
}

const THIS_TARGET: &str = "this target";
const ANOTHER_TARGET: &str = "another target";

impl UnitError {
    /// Names the target a misplaced block's header points at (`found_target`,
    /// an index into `names`) in the detail, where it says "another target".
    pub fn name_found_target(&mut self, names: &[String]) {
        let Some(name) = self
            .found_target
            .filter(|t| *t != self.target)
            .and_then(|t| names.get(t as usize))
        else {
            return;
        };
        self.detail = self.detail.replacen(ANOTHER_TARGET, name, 1);
    }
}

impl fmt::Display for UnitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} at offset {} of target {} (expected {}): {}",
            self.kind, self.offset_bytes, self.target, self.expected, self.detail
        )
    }
}

impl std::error::Error for UnitError {}

/// The header fields as read, whether or not they are valid.
#[derive(Clone, Copy)]
struct Header {
    magic_ok: bool,
    version_ok: bool,
    target: u32,
    offset_bytes: u64,
    key: u8,
    time_ns: u64,
    crc: u32,
}

impl Header {
    fn read(buf: &[u8]) -> Header {
        Header {
            magic_ok: buf[0..4] == MAGIC,
            version_ok: buf[17] == VERSION,
            target: le_u32(buf, 4),
            offset_bytes: le_u64(buf, 8),
            key: buf[16],
            time_ns: le_u64(buf, 20),
            crc: le_u32(buf, CRC_AT),
        }
    }
}

/// Context shared by the slow-path classifiers.
struct Check<'a> {
    buf: &'a [u8],
    target: u32,
    offset_bytes: u64,
    expected: Expected,
    header: Header,
}

/// What one 512-byte sector of a unit that failed its checksum holds. Sector 0
/// includes the header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    /// Exactly what the write of this generation put there. For sector 0 that
    /// includes a header which verifies against the generation's payload.
    Generation(u8),
    /// Nothing any write of this unit put there: no header, and not one word
    /// of the payload of any generation in question. What a never-written
    /// unit holds.
    NoData,
    /// Neither: damaged data (a header that does not verify, a sector with a
    /// flipped bit or partly overwritten).
    Damaged,
}

impl Check<'_> {
    fn error(&self, kind: ErrorKind, found_key: Option<u8>, detail: String) -> UnitError {
        let h = self.header.magic_ok.then_some(self.header);
        UnitError {
            kind,
            target: self.target,
            offset_bytes: self.offset_bytes,
            expected: self.expected,
            found_key: found_key.or(h.map(|h| h.key)),
            found_target: h.map(|h| h.target),
            found_offset_bytes: h.map(|h| h.offset_bytes),
            found_time_ns: h.map(|h| h.time_ns),
            detail,
        }
    }

    /// The target the header names, as a detail says it: the header's id
    /// means nothing to the user, so "this target" or "another target"
    /// (whose name the caller, who knows the targets, puts in with
    /// [`UnitError::name_found_target`]).
    fn header_target(&self) -> &'static str {
        if self.header.target == self.target {
            THIS_TARGET
        } else {
            ANOTHER_TARGET
        }
    }

    fn header_elsewhere(&self) -> bool {
        self.header.target != self.target || self.header.offset_bytes != self.offset_bytes
    }

    /// Bytes `start..end` of sector `sector`'s payload (sector 0 starts after
    /// the header).
    fn sector_range(&self, sector: usize) -> (usize, usize) {
        let start = (sector * SECTOR_BYTES).max(HEADER_BYTES);
        let end = ((sector + 1) * SECTOR_BYTES).min(self.buf.len());
        (start, end)
    }

    /// For each sector, the generation whose payload (for this target and
    /// offset) it holds, if any; sector 0 is judged on the bytes after the
    /// header. Keys are tried in the order `preferred`, then the previous
    /// sector's key (a unit is usually one write), then all of 1..=127.
    fn sector_keys(&self, preferred: &[u8]) -> Vec<Option<u8>> {
        let mut seeds = [0u64; MAX_KEY as usize + 1];
        for (key, seed) in (0u8..).zip(seeds.iter_mut()) {
            *seed = unit_seed(self.target, self.offset_bytes, key);
        }
        let sectors = self.buf.len().div_ceil(SECTOR_BYTES);
        let mut found = Vec::with_capacity(sectors);
        let mut previous = 0u8;
        for sector in 0..sectors {
            let (start, end) = self.sector_range(sector);
            let candidates = preferred
                .iter()
                .copied()
                .chain(std::iter::once(previous))
                .chain(1..=MAX_KEY)
                .filter(|&key| (1..=MAX_KEY).contains(&key));
            let mut hit = None;
            for key in candidates {
                if range_matches(self.buf, start, end, seeds[usize::from(key)]) {
                    hit = Some(key);
                    break;
                }
            }
            if let Some(key) = hit {
                previous = key;
            }
            found.push(hit);
        }
        found
    }

    /// Whether any payload word of `sector` is the word one of `keys` would
    /// put there: then the sector is a damaged copy of a write, not data that
    /// no write produced. Random or zeroed data shares no 64-bit word with a
    /// payload except by a 2^-64 chance.
    fn echoes(&self, sector: usize, keys: &[u8]) -> bool {
        let (start, end) = self.sector_range(sector);
        keys.iter()
            .filter(|&&key| (1..=MAX_KEY).contains(&key))
            .any(|&key| {
                let seed = unit_seed(self.target, self.offset_bytes, key);
                self.buf[start..end]
                    .chunks_exact(WORD_BYTES)
                    .zip((start / WORD_BYTES) as u64..)
                    .any(|(word, index)| le_u64(word, 0) == payload_word(seed, index))
            })
    }

    /// Whether the header is exactly the one the write of its own generation
    /// put at its own place: its checksum holds over the header and that
    /// generation's regenerated payload. Then the header (with its time) is
    /// genuine even though the payload read back is not all that write's.
    fn header_verifies(&self) -> bool {
        let h = self.header;
        let buf = self.buf;
        if !h.magic_ok
            || !h.version_ok
            || !(1..=MAX_KEY).contains(&h.key)
            || !buf.len().is_multiple_of(WORD_BYTES)
        {
            return false;
        }
        let seed = unit_seed(h.target, h.offset_bytes, h.key);
        let mut crc = crc32c::crc32c(&buf[..CRC_AT]);
        let mut chunk = [0u8; SECTOR_BYTES];
        let mut index = (HEADER_BYTES / WORD_BYTES) as u64;
        let mut left = buf.len() - HEADER_BYTES;
        while left > 0 {
            let n = left.min(SECTOR_BYTES);
            for word in chunk[..n].chunks_exact_mut(WORD_BYTES) {
                word.copy_from_slice(&payload_word(seed, index).to_le_bytes());
                index += 1;
            }
            crc = crc32c::crc32c_append(crc, &chunk[..n]);
            left -= n;
        }
        crc == h.crc
    }

    /// What the header is, in words, for a unit whose checksum failed.
    fn header_what(&self) -> String {
        if !self.header.magic_ok {
            "no iorig header".to_owned()
        } else if !self.header.version_ok {
            format!("header has unknown format version {}", self.buf[17])
        } else {
            "header checksum fails".to_owned()
        }
    }
}

/// The expected generations in words: "7", "6 or 7", "never written or 1".
fn expected_generations(expected: Expected) -> String {
    let one = |key: u8| {
        if key == 0 {
            "never written".to_owned()
        } else {
            key.to_string()
        }
    };
    match expected {
        Expected::Unwritten => "never written".to_owned(),
        Expected::Key(key) => one(key),
        Expected::Either { old, new } => format!("{} or {}", one(old), one(new)),
        Expected::Any => "any".to_owned(),
        Expected::Pattern => "the pattern".to_owned(),
    }
}

/// Describes a unit's parts in byte runs: "first 2048 bytes are generation 5,
/// the rest generation 7", or "bytes 0..512 are generation 7, bytes 512..1024
/// generation 5, bytes 1024..4096 generation 7". `Damaged` parts are named
/// "match no write".
fn describe_parts(parts: &[Part], len: usize) -> String {
    let mut runs: Vec<(usize, usize, Part)> = Vec::new();
    for (sector, &part) in parts.iter().enumerate() {
        let end = ((sector + 1) * SECTOR_BYTES).min(len);
        match runs.last_mut() {
            Some(run) if run.2 == part => run.1 = end,
            _ => runs.push((sector * SECTOR_BYTES, end, part)),
        }
    }
    let what = |part: Part, first: bool| match part {
        Part::Generation(key) if first => format!("are generation {key}"),
        Part::Generation(key) => format!("generation {key}"),
        Part::NoData => "hold no iorig data (never written)".to_owned(),
        Part::Damaged => "match no write".to_owned(),
    };
    if let [(_, first_end, first), (_, _, rest)] = runs.as_slice() {
        return format!(
            "first {first_end} bytes {}, the rest {}",
            what(*first, true),
            what(*rest, false)
        );
    }
    runs.iter()
        .enumerate()
        .map(|(i, &(start, end, part))| format!("bytes {start}..{end} {}", what(part, i == 0)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Checks one unit read back from (`target`, `offset_bytes`).
///
/// - `Ok(Some(key))`: an intact iorig unit for this place with an expected key.
/// - `Ok(None)`: no iorig data, and the expectation allows that
///   ([`Expected::Unwritten`], or [`Expected::Either`] with `old == 0`).
/// - `Err`: what is wrong, named by the evidence as described on
///   [`ErrorKind`] and in the decision table of `docs/verify.md`.
///
/// The expected case (valid header and checksum, right place, right key) costs
/// one CRC-32C pass and allocates nothing; the per-sector analysis, which may
/// try every key, runs only when the unit is bad or holds no stamp.
pub fn check_unit(
    buf: &[u8],
    target: u32,
    offset_bytes: u64,
    expected: Expected,
) -> Result<Option<u8>, UnitError> {
    let expected = expected.masked();
    if buf.len() < HEADER_BYTES + WORD_BYTES {
        return Err(UnitError {
            kind: ErrorKind::Corrupted,
            target,
            offset_bytes,
            expected,
            found_key: None,
            found_target: None,
            found_offset_bytes: None,
            found_time_ns: None,
            detail: format!("unit of {} bytes is too short to check", buf.len()),
        });
    }
    let header = Header::read(buf);
    let intact = header.magic_ok && header.version_ok && header.crc == unit_crc(buf);
    if intact
        && header.target == target
        && header.offset_bytes == offset_bytes
        && expected.accepts(header.key)
    {
        return Ok(Some(header.key));
    }
    let check = Check {
        buf,
        target,
        offset_bytes,
        expected,
        header,
    };
    if intact {
        Err(classify_valid(&check))
    } else {
        classify_invalid(&check)
    }
}

/// Checks a unit without knowing what was written there (fio's
/// verify_only): it must be an intact iorig block of this offset, of any
/// generation, under whatever target id its header names (so a block moved
/// from another target is not seen). `target` names the unit in the error.
/// A unit with no iorig header at all is `corrupted`: never written, or
/// overwritten by something else; without a record of the writes the two
/// cannot be told apart.
pub fn check_self(buf: &[u8], target: u32, offset_bytes: u64) -> Result<u8, UnitError> {
    let no_header = |detail: String| UnitError {
        kind: ErrorKind::Corrupted,
        target,
        offset_bytes,
        expected: Expected::Any,
        found_key: None,
        found_target: None,
        found_offset_bytes: None,
        found_time_ns: None,
        detail,
    };
    if buf.len() < HEADER_BYTES + WORD_BYTES {
        return Err(no_header(format!(
            "unit of {} bytes is too short to check",
            buf.len()
        )));
    }
    let header = Header::read(buf);
    if !header.magic_ok {
        let what = if buf.iter().all(|b| *b == 0) {
            "all zeros"
        } else {
            "other data"
        };
        return Err(no_header(format!(
            "no iorig header ({what}): never written by iorig, or overwritten since"
        )));
    }
    match check_unit(buf, header.target, offset_bytes, Expected::Key(header.key)) {
        Ok(k) => Ok(k.unwrap_or(header.key)),
        Err(mut e) => {
            e.target = target;
            e.expected = Expected::Any;
            Err(e)
        }
    }
}

/// Fills a unit with `pattern`, repeated from its first byte (fio's
/// verify_pattern).
pub fn fill_pattern(buf: &mut [u8], pattern: &[u8]) {
    if pattern.is_empty() {
        return;
    }
    for chunk in buf.chunks_mut(pattern.len()) {
        chunk.copy_from_slice(&pattern[..chunk.len()]);
    }
}

/// Checks a unit filled by [`fill_pattern`]: every byte must be the
/// pattern's. Storage returns what it holds, so a difference is damage (or
/// data that is not this pattern); a lost write of the same pattern cannot be
/// seen, since every generation is the same bytes.
pub fn check_pattern(
    buf: &[u8],
    pattern: &[u8],
    target: u32,
    offset_bytes: u64,
) -> Result<(), UnitError> {
    if pattern.is_empty() {
        return Ok(());
    }
    let differs = |(i, b): (usize, &u8)| *b != pattern[i % pattern.len()];
    let Some(first) = buf.iter().enumerate().position(differs) else {
        return Ok(());
    };
    let count = buf.iter().enumerate().filter(|x| differs(*x)).count();
    let whole = if buf.iter().all(|b| *b == 0) {
        " (the unit is all zeros)".to_string()
    } else {
        String::new()
    };
    Err(UnitError {
        kind: ErrorKind::Corrupted,
        target,
        offset_bytes,
        expected: Expected::Pattern,
        found_key: None,
        found_target: None,
        found_offset_bytes: None,
        found_time_ns: None,
        detail: format!(
            "byte {first} is {:#04x} where the pattern has {:#04x}; {count} of {} bytes differ{whole}",
            buf[first],
            pattern[first % pattern.len()],
            buf.len()
        ),
    })
}

/// A valid block (header and checksum hold: one complete write), but not the
/// expected one.
fn classify_valid(check: &Check<'_>) -> UnitError {
    let h = check.header;
    if check.header_elsewhere() {
        return check.error(
            ErrorKind::Misdirected,
            None,
            format!(
                "valid block for offset {} of {} (generation {})",
                h.offset_bytes,
                check.header_target(),
                h.key
            ),
        );
    }
    if !check.expected.has_keys() {
        return check.error(
            ErrorKind::UnwrittenHasData,
            None,
            format!(
                "never written, but holds a valid block of generation {}",
                h.key
            ),
        );
    }
    check.error(
        ErrorKind::LostWrite,
        None,
        format!(
            "valid block of generation {} (expected {})",
            h.key,
            expected_generations(check.expected)
        ),
    )
}

/// The checksum fails, or there is no header this code wrote: find out, sector
/// by sector, which writes the unit is made of.
fn classify_invalid(check: &Check<'_>) -> Result<Option<u8>, UnitError> {
    let h = check.header;
    let expected = check.expected;
    let len = check.buf.len();
    let sectors = len.div_ceil(SECTOR_BYTES);
    // Fresh storage is mostly zeros; no generation's payload has a zero word
    // (but by a 2^-64 chance), so skip the per-key search.
    let zeros = check.buf.iter().all(|&byte| byte == 0);
    let keys = if zeros {
        vec![None; sectors]
    } else {
        let [first, second] = expected.keys();
        check.sector_keys(&[h.key, first, second])
    };

    // Which part each sector is. Sector 0 is a genuine part only with a
    // header of this place that verifies against its sector's generation.
    let header_ok = h.magic_ok && !check.header_elsewhere() && check.header_verifies();
    let mut candidates: Vec<u8> = expected.keys().to_vec();
    if h.magic_ok {
        candidates.push(h.key);
    }
    candidates.extend(keys.iter().flatten());
    candidates.sort_unstable();
    candidates.dedup();
    let parts: Vec<Part> = keys
        .iter()
        .enumerate()
        .map(|(sector, &key)| match key {
            Some(key) if sector > 0 || (header_ok && key == h.key) => Part::Generation(key),
            Some(_) => Part::Damaged,
            None if sector == 0 && h.magic_ok => Part::Damaged,
            None if zeros || !check.echoes(sector, &candidates) => Part::NoData,
            None => Part::Damaged,
        })
        .collect();

    let mut generations: Vec<u8> = parts
        .iter()
        .filter_map(|part| match part {
            Part::Generation(key) => Some(*key),
            _ => None,
        })
        .collect();
    generations.sort_unstable();
    generations.dedup();
    let damaged = parts.contains(&Part::Damaged);
    let no_data = parts.contains(&Part::NoData);
    // Whether never-written content is a valid older version here: the map
    // allows "never written" (a first write in flight at a crash), or expects
    // generation 1, which follows "never written".
    let never_written_is_older = expected.has_keys()
        && (expected.allows_unwritten() || expected == Expected::Key(1))
        && generations.iter().all(|&key| expected.accepts(key));

    if !damaged && generations.is_empty() {
        // No iorig data anywhere in the unit.
        if expected.allows_unwritten() {
            return Ok(None);
        }
        if expected == Expected::Key(1) {
            return Err(check.error(
                ErrorKind::LostWrite,
                None,
                "holds no iorig data, as before its first write: generation 1 never landed"
                    .to_owned(),
            ));
        }
        let zeros = if zeros { " (all zeros)" } else { "" };
        return Err(check.error(
            ErrorKind::Corrupted,
            None,
            format!("no iorig header and no data of any write of this unit{zeros}"),
        ));
    }
    let torn = !damaged
        && if no_data {
            never_written_is_older
        } else {
            generations.len() > 1
        };
    if torn {
        return Err(check.error(ErrorKind::Torn, None, describe_parts(&parts, len)));
    }
    Err(describe_corruption(check, &keys))
}

/// The evidence for a unit that is neither one valid block, nor made of
/// genuine parts: what is wrong with its header, and which sectors match no
/// write. `keys` is the generation of each sector's payload, if any.
fn describe_corruption(check: &Check<'_>, keys: &[Option<u8>]) -> UnitError {
    let h = check.header;
    let header_what = check.header_what();
    let bad: Vec<usize> = (0..keys.len()).filter(|&s| keys[s].is_none()).collect();
    if let Some(&first_bad) = bad.first() {
        // Some sector's payload is no write's.
        let (start, end) = check.sector_range(first_bad);
        let start = if first_bad == 0 { 0 } else { start };
        let more = if bad.len() > 1 {
            format!(" (and {} more)", bad.len() - 1)
        } else {
            String::new()
        };
        return check.error(
            ErrorKind::Corrupted,
            None,
            format!(
                "{header_what}; sector {first_bad} (bytes {start}..{end}) matches no write{more}"
            ),
        );
    }
    let payload: Vec<Part> = keys
        .iter()
        .map(|key| key.map_or(Part::Damaged, Part::Generation))
        .collect();
    let mut generations: Vec<u8> = keys.iter().flatten().copied().collect();
    generations.sort_unstable();
    generations.dedup();
    let sector0 = keys.first().copied().flatten().unwrap_or(0);
    if let [key] = generations.as_slice() {
        // The payload is one whole write: only the header is damaged.
        let said = if h.magic_ok && h.version_ok {
            if check.header_elsewhere() {
                format!(
                    " (the header names offset {} of {})",
                    h.offset_bytes,
                    check.header_target()
                )
            } else if h.key != *key {
                format!(" (the header says generation {})", h.key)
            } else {
                String::new()
            }
        } else {
            String::new()
        };
        return check.error(
            ErrorKind::Corrupted,
            Some(*key),
            format!("{header_what}; the payload is intact generation {key}{said}"),
        );
    }
    // Every sector's payload is some write's, of several, but the header does
    // not belong to its sector: it is damaged (or missing), so the parts are
    // not shown to be genuine.
    let header_note = if h.magic_ok && h.version_ok {
        format!(" and the header does not match generation {sector0} of its sector")
    } else {
        String::new()
    };
    check.error(
        ErrorKind::Corrupted,
        None,
        format!(
            "{header_what}{header_note}; payload: {}",
            describe_parts(&payload, check.buf.len())
        ),
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Deterministic noise for "random bytes" (xorshift64*).
    fn noise(len: usize, mut state: u64) -> Vec<u8> {
        let mut out = Vec::with_capacity(len);
        while out.len() < len {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            out.extend_from_slice(&state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
        }
        out.truncate(len);
        out
    }

    fn stamped(len: usize, target: u32, offset: u64, key: u8) -> Vec<u8> {
        let mut buf = vec![0u8; len];
        stamp_unit(&mut buf, target, offset, key, 1_700_000_000_000_000_000);
        buf
    }

    #[test]
    fn next_key_cycles_and_never_yields_zero() {
        assert_eq!(next_key(0), 1);
        assert_eq!(next_key(1), 2);
        assert_eq!(next_key(126), 127);
        assert_eq!(next_key(127), 1);
        assert_eq!(next_key(0x80 | 5), 6, "busy bit ignored");
        assert_eq!(next_key(0xff), 1);
        let mut key = 0;
        let mut seen = [false; 128];
        for _ in 0..127 {
            key = next_key(key);
            assert_ne!(key, 0);
            assert!(key <= MAX_KEY);
            seen[usize::from(key)] = true;
        }
        assert_eq!(key, 127);
        assert!(seen[1..].iter().all(|&s| s), "every key 1..=127 visited");
        assert_eq!(next_key(key), 1);
        for k in 0..=255u8 {
            assert_ne!(next_key(k), 0);
        }
    }

    #[test]
    fn header_layout() {
        let buf = stamped(4096, 7, 8192, 9);
        assert_eq!(&buf[0..4], b"IORV");
        assert_eq!(le_u32(&buf, 4), 7);
        assert_eq!(le_u64(&buf, 8), 8192);
        assert_eq!(buf[16], 9);
        assert_eq!(buf[17], 1);
        assert_eq!(&buf[18..20], &[0, 0]);
        assert_eq!(le_u64(&buf, 20), 1_700_000_000_000_000_000);
        let mut crc_input = buf[..28].to_vec();
        crc_input.extend_from_slice(&buf[32..]);
        assert_eq!(le_u32(&buf, 28), crc32c::crc32c(&crc_input));
        // Payload word 4 per the documented formula.
        let seed = splitmix64(splitmix64(7 ^ (9u64 << 32)) ^ 8192);
        assert_eq!(
            le_u64(&buf, 32),
            splitmix64(seed ^ 4u64.wrapping_mul(GOLDEN_GAMMA))
        );
    }

    #[test]
    fn stamp_then_check_ok() {
        for len in [512usize, 4096, 65536] {
            for (target, offset) in [(0u32, 0u64), (1, 512), (3, 1 << 40), (u32::MAX, 4096 * 77)] {
                for key in [1u8, 2, 64, 127] {
                    let buf = stamped(len, target, offset, key);
                    assert_eq!(
                        check_unit(&buf, target, offset, Expected::Key(key)),
                        Ok(Some(key)),
                        "len {len} target {target} offset {offset} key {key}"
                    );
                    assert!(payload_matches(&buf, target, offset, key));
                    assert!(!payload_matches(&buf, target, offset, next_key(key)));
                }
            }
        }
    }

    #[test]
    fn stamp_is_deterministic_and_key_dependent() {
        let a = stamped(4096, 1, 4096, 5);
        let b = stamped(4096, 1, 4096, 5);
        let c = stamped(4096, 1, 4096, 6);
        let d = stamped(4096, 1, 8192, 5);
        let e = stamped(4096, 2, 4096, 5);
        assert_eq!(a, b);
        assert_ne!(a[32..], c[32..]);
        assert_ne!(a[32..], d[32..]);
        assert_ne!(a[32..], e[32..]);
    }

    #[test]
    fn expected_busy_bit_is_ignored() {
        let buf = stamped(4096, 0, 0, 5);
        assert_eq!(check_unit(&buf, 0, 0, Expected::Key(0x85)), Ok(Some(5)));
    }

    #[test]
    fn flipped_payload_byte_is_corrupted() {
        for (len, at) in [(512usize, 100usize), (4096, 3 * 512 + 7), (65536, 65535)] {
            let mut buf = stamped(len, 2, 4096, 7);
            buf[at] ^= 0x01;
            let err = check_unit(&buf, 2, 4096, Expected::Key(7)).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Corrupted, "{err}");
            let sector = at / 512;
            assert!(
                err.detail.contains(&format!(
                    "header checksum fails; sector {sector} (bytes {}..{}) matches no write",
                    sector * 512,
                    sector * 512 + 512
                )),
                "{}",
                err.detail
            );
            assert_eq!(err.found_key, Some(7));
            assert_eq!(err.found_target, Some(2));
            assert_eq!(err.found_offset_bytes, Some(4096));
            assert_eq!(err.found_time_ns, Some(1_700_000_000_000_000_000));
        }
    }

    #[test]
    fn flipped_magic_is_corrupted() {
        let mut buf = stamped(4096, 1, 8192, 11);
        buf[1] ^= 0xff;
        let err = check_unit(&buf, 1, 8192, Expected::Key(11)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupted);
        assert_eq!(err.found_key, Some(11), "recovered from the payload");
        assert_eq!(err.found_target, None, "no magic, no header fields");
        assert!(
            err.detail
                .contains("no iorig header; the payload is intact generation 11"),
            "{}",
            err.detail
        );
        // Also when nothing was expected there.
        let err = check_unit(&buf, 1, 8192, Expected::Unwritten).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupted);
    }

    #[test]
    fn unknown_version_is_treated_as_headerless() {
        let mut buf = stamped(4096, 1, 0, 3);
        buf[17] = 2;
        let err = check_unit(&buf, 1, 0, Expected::Key(3)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupted);
        assert_eq!(
            err.found_target,
            Some(1),
            "magic present, header fields filled"
        );
        assert!(err.detail.contains("version 2"), "{}", err.detail);
    }

    #[test]
    fn halves_of_two_generations_are_torn() {
        for len in [1024usize, 4096, 65536] {
            let a = stamped(len, 0, 65536, 3);
            let b = stamped(len, 0, 65536, 4);
            let mut buf = a.clone();
            buf[len / 2..].copy_from_slice(&b[len / 2..]);
            let err = check_unit(&buf, 0, 65536, Expected::Key(4)).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Torn, "{err}");
            assert_eq!(err.found_key, Some(3));
            assert_eq!(
                err.detail,
                format!(
                    "first {} bytes are generation 3, the rest generation 4",
                    len / 2
                )
            );
            // Also torn when a crash allowed either key.
            let err = check_unit(&buf, 0, 65536, Expected::Either { old: 3, new: 4 }).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Torn);
        }
    }

    #[test]
    fn stamped_but_expected_unwritten() {
        let buf = stamped(4096, 0, 0, 1);
        let err = check_unit(&buf, 0, 0, Expected::Unwritten).unwrap_err();
        assert_eq!(err.kind, ErrorKind::UnwrittenHasData);
        assert_eq!(err.found_key, Some(1));
        assert_eq!(
            check_unit(&buf, 0, 0, Expected::Key(0)).unwrap_err().kind,
            ErrorKind::UnwrittenHasData
        );
    }

    #[test]
    fn random_bytes_with_magic_is_corrupted() {
        let mut buf = noise(4096, 7);
        buf[..4].copy_from_slice(b"IORV");
        buf[17] = 1;
        buf[18..20].fill(0);
        let err = check_unit(&buf, 0, 0, Expected::Unwritten).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupted);
        assert!(
            err.detail
                .contains("header checksum fails; sector 0 (bytes 0..512) matches no write"),
            "{}",
            err.detail
        );
    }

    #[test]
    fn either_accepts_both_and_rejects_a_third() {
        let expected = Expected::Either { old: 3, new: 4 };
        assert_eq!(
            check_unit(&stamped(4096, 0, 0, 3), 0, 0, expected),
            Ok(Some(3))
        );
        assert_eq!(
            check_unit(&stamped(4096, 0, 0, 4), 0, 0, expected),
            Ok(Some(4))
        );
        let err = check_unit(&stamped(4096, 0, 0, 5), 0, 0, expected).unwrap_err();
        assert_eq!(err.kind, ErrorKind::LostWrite);
        assert_eq!(err.found_key, Some(5));
        assert!(err.detail.contains("(expected 3 or 4)"), "{}", err.detail);
        // Old state "unwritten" with a new first write.
        let expected = Expected::Either { old: 0, new: 1 };
        assert_eq!(
            check_unit(&stamped(4096, 0, 0, 1), 0, 0, expected),
            Ok(Some(1))
        );
        assert_eq!(check_unit(&vec![0; 4096], 0, 0, expected), Ok(None));
        assert_eq!(
            check_unit(&stamped(4096, 0, 0, 2), 0, 0, expected)
                .unwrap_err()
                .kind,
            ErrorKind::LostWrite
        );
    }

    #[test]
    fn kind_names() {
        assert_eq!(ErrorKind::Corrupted.name(), "corrupted");
        assert_eq!(ErrorKind::LostWrite.name(), "lost_write");
        assert_eq!(ErrorKind::Misdirected.name(), "misdirected");
        assert_eq!(ErrorKind::Torn.name(), "torn");
        assert_eq!(ErrorKind::UnwrittenHasData.name(), "unwritten_has_data");
    }

    #[test]
    fn a_misplaced_blocks_target_is_named_not_numbered() {
        // A header id is a hash the user never sees: the detail says "this
        // target", or names the other target once the caller knows it.
        let buf = stamped(4096, 0x5eed, 8192, 3);
        let here = check_unit(&buf, 0x5eed, 4096, Expected::Key(3)).unwrap_err();
        assert!(
            here.detail.contains("offset 8192 of this target"),
            "{}",
            here.detail
        );
        assert!(!here.detail.contains("5eed") && !here.detail.contains("24301"));
        let mut there = check_unit(&buf, 0x1234, 4096, Expected::Key(3)).unwrap_err();
        assert!(
            there.detail.contains("of another target"),
            "{}",
            there.detail
        );
        there.target = 0;
        there.found_target = Some(1);
        there.name_found_target(&["/dev/a".into(), "/dev/b".into()]);
        assert!(
            there.detail.contains("offset 8192 of /dev/b"),
            "{}",
            there.detail
        );
    }

    #[test]
    fn display_is_one_line() {
        let buf = stamped(4096, 0, 8192, 3);
        let err = check_unit(&buf, 0, 4096, Expected::Key(3)).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("misdirected at offset 4096 of target 0"),
            "{text}"
        );
        assert!(!text.contains('\n'));
    }

    // One test per row of the decision table in docs/verify.md.

    const KEY: u8 = 7;
    const OFFSET: u64 = 4096 * 3;

    fn err(buf: &[u8], expected: Expected) -> UnitError {
        check_unit(buf, 0, OFFSET, expected).unwrap_err()
    }

    #[test]
    fn row_valid_block_for_another_place_is_misdirected() {
        for (target, offset) in [(0u32, OFFSET + 4096), (1, OFFSET)] {
            let buf = stamped(4096, target, offset, KEY);
            for expected in [Expected::Key(KEY), Expected::Key(2), Expected::Unwritten] {
                let e = err(&buf, expected);
                assert_eq!(e.kind, ErrorKind::Misdirected, "{e}");
                assert_eq!(e.found_key, Some(KEY));
                assert_eq!(e.found_target, Some(target));
                assert_eq!(e.found_offset_bytes, Some(offset));
                assert!(
                    e.detail.contains(&format!(
                        "valid block for offset {offset} of {} (generation 7)",
                        if target == 0 {
                            "this target"
                        } else {
                            "another target"
                        }
                    )),
                    "{}",
                    e.detail
                );
            }
        }
    }

    #[test]
    fn row_valid_block_where_never_written_is_unwritten_has_data() {
        let buf = stamped(4096, 0, OFFSET, KEY);
        for expected in [Expected::Unwritten, Expected::Key(0)] {
            let e = err(&buf, expected);
            assert_eq!(e.kind, ErrorKind::UnwrittenHasData, "{e}");
            assert!(
                e.detail
                    .contains("never written, but holds a valid block of generation 7"),
                "{}",
                e.detail
            );
        }
    }

    #[test]
    fn row_whole_older_valid_block_is_lost_write() {
        let buf = stamped(4096, 0, OFFSET, 5);
        let e = err(&buf, Expected::Key(KEY));
        assert_eq!(e.kind, ErrorKind::LostWrite, "{e}");
        assert_eq!(e.found_key, Some(5));
        assert!(
            e.detail
                .contains("valid block of generation 5 (expected 7)"),
            "{}",
            e.detail
        );
        let e = err(&buf, Expected::Either { old: 6, new: 7 });
        assert_eq!(e.kind, ErrorKind::LostWrite, "{e}");
        assert!(
            e.detail
                .contains("valid block of generation 5 (expected 6 or 7)"),
            "{}",
            e.detail
        );
    }

    #[test]
    fn row_no_iorig_data_where_never_written_is_allowed_is_ok() {
        for buf in [noise(4096, 11), vec![0u8; 4096]] {
            for expected in [
                Expected::Unwritten,
                Expected::Key(0),
                Expected::Either { old: 0, new: 1 },
            ] {
                assert_eq!(check_unit(&buf, 0, OFFSET, expected), Ok(None));
            }
        }
    }

    #[test]
    fn row_no_iorig_data_instead_of_a_first_write_is_lost_write() {
        // Generation 1 follows "never written", whose content is whatever the
        // storage held: finding no iorig data at all is that older version.
        for buf in [noise(4096, 12), vec![0u8; 4096]] {
            let e = err(&buf, Expected::Key(1));
            assert_eq!(e.kind, ErrorKind::LostWrite, "{e}");
            assert_eq!(e.found_key, None);
            assert!(
                e.detail
                    .contains("holds no iorig data, as before its first write"),
                "{}",
                e.detail
            );
        }
    }

    #[test]
    fn row_random_bytes_over_a_written_block_are_corrupted() {
        for len in [512usize, 4096, 65536] {
            let buf = noise(len, 0x1234_5678 + len as u64);
            for expected in [Expected::Key(KEY), Expected::Either { old: 6, new: 7 }] {
                let e = check_unit(&buf, 0, OFFSET, expected).unwrap_err();
                assert_eq!(e.kind, ErrorKind::Corrupted, "{e}");
                assert_eq!(e.found_key, None);
                assert!(
                    e.detail
                        .contains("no iorig header and no data of any write of this unit"),
                    "{}",
                    e.detail
                );
            }
        }
        // Zeros over a written block say so.
        let e = err(&[0u8; 4096], Expected::Key(KEY));
        assert_eq!(e.kind, ErrorKind::Corrupted, "{e}");
        assert!(e.detail.contains("all zeros"), "{}", e.detail);
    }

    #[test]
    fn row_one_bit_flip_in_the_header_key_is_corrupted() {
        for bit in 0..8 {
            let mut buf = stamped(4096, 0, OFFSET, KEY);
            buf[16] ^= 1 << bit;
            for expected in [Expected::Key(KEY), Expected::Either { old: 6, new: 7 }] {
                let e = err(&buf, expected);
                assert_eq!(e.kind, ErrorKind::Corrupted, "bit {bit}: {e}");
                assert_eq!(e.found_key, Some(KEY), "the payload's generation");
                assert!(
                    e.detail.contains("header checksum fails")
                        && e.detail.contains("the payload is intact generation 7"),
                    "{}",
                    e.detail
                );
            }
        }
    }

    #[test]
    fn row_damaged_header_over_an_intact_payload_is_corrupted() {
        // Every header byte, one bit at a time: magic, target, offset, key,
        // version, padding, time, checksum.
        for at in 0..HEADER_BYTES {
            for bit in [0u8, 6] {
                let mut buf = stamped(4096, 0, OFFSET, KEY);
                buf[at] ^= 1 << bit;
                let e = err(&buf, Expected::Key(KEY));
                assert_eq!(e.kind, ErrorKind::Corrupted, "byte {at} bit {bit}: {e}");
                assert!(
                    e.detail.contains("the payload is intact generation 7"),
                    "byte {at} bit {bit}: {}",
                    e.detail
                );
            }
        }
    }

    #[test]
    fn row_header_of_another_write_over_a_payload_is_corrupted() {
        // Only the 32 header bytes of generation 6: no storage tears a write
        // inside a sector, so this is a damaged header, not a torn write.
        let old = stamped(4096, 0, OFFSET, 6);
        let mut buf = stamped(4096, 0, OFFSET, KEY);
        buf[..HEADER_BYTES].copy_from_slice(&old[..HEADER_BYTES]);
        let e = err(&buf, Expected::Key(KEY));
        assert_eq!(e.kind, ErrorKind::Corrupted, "{e}");
        assert!(
            e.detail.contains("the payload is intact generation 7"),
            "{}",
            e.detail
        );
    }

    #[test]
    fn row_one_bit_flip_in_the_payload_is_corrupted() {
        for (key, expected) in [
            (KEY, Expected::Key(KEY)),
            (KEY, Expected::Either { old: 6, new: 7 }),
            (1, Expected::Key(1)),
            // In a crash window over a never-written unit, the damaged
            // sector is still not "never-written content": most of its words
            // are generation 1's.
            (1, Expected::Either { old: 0, new: 1 }),
        ] {
            for at in [HEADER_BYTES, 100, 3 * 512 + 7, 4095] {
                let mut buf = stamped(4096, 0, OFFSET, key);
                buf[at] ^= 0x10;
                let e = err(&buf, expected);
                assert_eq!(e.kind, ErrorKind::Corrupted, "{expected:?} byte {at}: {e}");
                let sector = at / 512;
                assert!(
                    e.detail.contains(&format!(
                        "sector {sector} (bytes {}..{}) matches no write",
                        sector * 512,
                        sector * 512 + 512
                    )),
                    "{}",
                    e.detail
                );
            }
        }
    }

    #[test]
    fn row_partial_random_overwrite_is_corrupted() {
        let mut buf = stamped(4096, 0, OFFSET, KEY);
        buf[1024..2048].copy_from_slice(&noise(1024, 77));
        let e = err(&buf, Expected::Key(KEY));
        assert_eq!(e.kind, ErrorKind::Corrupted, "{e}");
        assert!(
            e.detail.contains("header checksum fails")
                && e.detail
                    .contains("sector 2 (bytes 1024..1536) matches no write (and 1 more)"),
            "{}",
            e.detail
        );
    }

    #[test]
    fn row_half_of_an_older_block_over_a_newer_one_is_torn() {
        let older = stamped(4096, 0, OFFSET, 5);
        let newer = stamped(4096, 0, OFFSET, KEY);
        // The older write's first half (with its header) over the newer block.
        let mut buf = newer.clone();
        buf[..2048].copy_from_slice(&older[..2048]);
        for expected in [Expected::Key(KEY), Expected::Either { old: 5, new: 7 }] {
            let e = err(&buf, expected);
            assert_eq!(e.kind, ErrorKind::Torn, "{e}");
            assert_eq!(e.found_key, Some(5));
            assert!(
                e.detail
                    .contains("first 2048 bytes are generation 5, the rest generation 7"),
                "{}",
                e.detail
            );
        }
        // The older write's second half under the newer header and first half.
        let mut buf = newer.clone();
        buf[2048..].copy_from_slice(&older[2048..]);
        let e = err(&buf, Expected::Key(KEY));
        assert_eq!(e.kind, ErrorKind::Torn, "{e}");
        assert!(
            e.detail
                .contains("first 2048 bytes are generation 7, the rest generation 5"),
            "{}",
            e.detail
        );
        // Three parts, at sector granularity.
        let mut buf = newer.clone();
        buf[512..1024].copy_from_slice(&older[512..1024]);
        let e = err(&buf, Expected::Key(KEY));
        assert_eq!(e.kind, ErrorKind::Torn, "{e}");
        assert!(
            e.detail.contains(
                "bytes 0..512 are generation 7, bytes 512..1024 generation 5, bytes 1024..4096 generation 7"
            ),
            "{}",
            e.detail
        );
    }

    #[test]
    fn row_first_write_over_never_written_content_is_torn() {
        let new = stamped(4096, 0, OFFSET, 1);
        for expected in [Expected::Either { old: 0, new: 1 }, Expected::Key(1)] {
            // New header and first half; the rest still holds the old content.
            let mut buf = noise(4096, 99);
            buf[..2048].copy_from_slice(&new[..2048]);
            let e = err(&buf, expected);
            assert_eq!(e.kind, ErrorKind::Torn, "{expected:?}: {e}");
            assert!(
                e.detail.contains(
                    "first 2048 bytes are generation 1, the rest hold no iorig data (never written)"
                ),
                "{}",
                e.detail
            );
            // Old header sector, the rest new.
            let mut buf = vec![0u8; 4096];
            buf[512..].copy_from_slice(&new[512..]);
            let e = err(&buf, expected);
            assert_eq!(e.kind, ErrorKind::Torn, "{expected:?}: {e}");
            assert!(
                e.detail.contains(
                    "first 512 bytes hold no iorig data (never written), the rest generation 1"
                ),
                "{}",
                e.detail
            );
        }
    }

    #[test]
    fn row_never_written_content_in_a_rewritten_unit_is_corrupted() {
        // Generation 7 had older versions with iorig data: never-written
        // content is not one of them.
        let mut buf = noise(4096, 99);
        buf[..2048].copy_from_slice(&stamped(4096, 0, OFFSET, KEY)[..2048]);
        let e = err(&buf, Expected::Key(KEY));
        assert_eq!(e.kind, ErrorKind::Corrupted, "{e}");
        assert!(
            e.detail
                .contains("sector 4 (bytes 2048..2560) matches no write (and 3 more)"),
            "{}",
            e.detail
        );
        // And a unit the map says was never written cannot hold part of a write.
        let mut buf = noise(4096, 5);
        buf[1024..].copy_from_slice(&stamped(4096, 0, OFFSET, 3)[1024..]);
        let e = err(&buf, Expected::Unwritten);
        assert_eq!(e.kind, ErrorKind::Corrupted, "{e}");
    }

    #[test]
    fn row_generations_mixed_under_a_damaged_header_are_corrupted() {
        let a = stamped(4096, 0, OFFSET, 5);
        let b = stamped(4096, 0, OFFSET, KEY);
        let mut torn = a.clone();
        torn[2048..].copy_from_slice(&b[2048..]);
        // Magic gone.
        let mut buf = torn.clone();
        buf[..4].fill(0);
        let e = err(&buf, Expected::Key(KEY));
        assert_eq!(e.kind, ErrorKind::Corrupted, "{e}");
        assert!(e.detail.contains("no iorig header"), "{}", e.detail);
        // A bit of the header's time flipped: the header no longer verifies
        // against its own generation.
        let mut buf = torn.clone();
        buf[21] ^= 0x01;
        let e = err(&buf, Expected::Key(KEY));
        assert_eq!(e.kind, ErrorKind::Corrupted, "{e}");
        assert!(
            e.detail.contains("header checksum fails")
                && e.detail.contains("the header does not match generation 5"),
            "{}",
            e.detail
        );
    }

    #[test]
    fn row_too_short_is_corrupted() {
        let e = check_unit(&[0u8; 16], 0, 0, Expected::Unwritten).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Corrupted);
        assert!(e.detail.contains("too short"), "{}", e.detail);
        assert!(!payload_matches(&[0u8; 16], 0, 0, 1));
    }

    #[test]
    fn decision_table_examples_are_what_the_checker_says() {
        let doc = include_str!("../../../docs/verify.md");
        let table = &doc[doc.find("| # | evidence").unwrap()..];
        let example = |buf: &[u8], at: u64, expected: Expected| {
            check_unit(buf, 0, at, expected).unwrap_err().detail
        };
        let gen = |key: u8| stamped(4096, 0, OFFSET, key);
        let mut flipped_payload = gen(KEY);
        flipped_payload[3 * 512 + 9] ^= 0x04;
        let mut flipped_key = gen(KEY);
        flipped_key[16] ^= 0x01;
        let mut torn = gen(KEY);
        torn[..2048].copy_from_slice(&gen(5)[..2048]);
        let mut torn_first = noise(4096, 1);
        torn_first[..2048].copy_from_slice(&gen(1)[..2048]);
        let mut torn_damaged = torn.clone();
        torn_damaged[21] ^= 0x01;
        let details = [
            example(&stamped(4096, 0, 8192, 3), 4096, Expected::Key(3)),
            example(&stamped(4096, 0, 0, 3), 0, Expected::Unwritten),
            example(&gen(5), OFFSET, Expected::Key(KEY)),
            example(&noise(4096, 2), OFFSET, Expected::Key(1)),
            example(&[0u8; 4096], OFFSET, Expected::Key(KEY)),
            example(&torn, OFFSET, Expected::Key(KEY)),
            example(&torn_first, OFFSET, Expected::Either { old: 0, new: 1 }),
            example(&flipped_payload, OFFSET, Expected::Key(KEY)),
            example(&flipped_key, OFFSET, Expected::Key(KEY)),
            example(&torn_damaged, OFFSET, Expected::Key(KEY)),
            example(&[0u8; 16], 0, Expected::Unwritten),
        ];
        for detail in details {
            assert!(
                table.contains(&format!("| `{detail}` |")),
                "docs/verify.md lacks the example `{detail}`"
            );
        }
    }

    /// verify_only: any intact block of its own offset passes, whatever its
    /// generation and target id; damage, a misplaced block or no header
    /// fail, each named.
    #[test]
    fn a_self_check_needs_an_intact_block_of_its_own_offset() {
        let mut unit = vec![0u8; 4096];
        stamp_unit(&mut unit, 0xabc, 8192, 9, 1);
        assert_eq!(check_self(&unit, 2, 8192), Ok(9));
        let e = check_self(&unit, 2, 4096).unwrap_err();
        assert_eq!(
            (e.kind, e.target, e.expected),
            (ErrorKind::Misdirected, 2, Expected::Any)
        );
        unit[1000] ^= 1;
        assert_eq!(
            check_self(&unit, 2, 8192).unwrap_err().kind,
            ErrorKind::Corrupted
        );
        let e = check_self(&[0u8; 4096], 0, 0).unwrap_err();
        assert!(
            e.detail.contains("no iorig header (all zeros)"),
            "{}",
            e.detail
        );
    }

    #[test]
    fn a_pattern_fills_each_unit_from_its_start_and_every_byte_is_checked() {
        let mut unit = vec![0u8; 1024];
        fill_pattern(&mut unit, &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(&unit[..6], &[0xde, 0xad, 0xbe, 0xef, 0xde, 0xad]);
        assert_eq!(
            check_pattern(&unit, &[0xde, 0xad, 0xbe, 0xef], 0, 0),
            Ok(())
        );
        unit[1021] = 0;
        unit[7] = 0;
        let e = check_pattern(&unit, &[0xde, 0xad, 0xbe, 0xef], 1, 4096).unwrap_err();
        assert_eq!(
            (e.kind, e.expected),
            (ErrorKind::Corrupted, Expected::Pattern)
        );
        assert_eq!(
            e.detail,
            "byte 7 is 0x00 where the pattern has 0xef; 2 of 1024 bytes differ"
        );
        let e = check_pattern(&[0u8; 512], b"ab", 0, 0).unwrap_err();
        assert!(
            e.detail.ends_with("(the unit is all zeros)"),
            "{}",
            e.detail
        );
    }
}
