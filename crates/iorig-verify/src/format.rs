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
//! corruption (a sector from no generation at all).

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
        }
    }

    /// Whether "no iorig data here" is an acceptable state.
    fn allows_unwritten(self) -> bool {
        match self {
            Expected::Unwritten => true,
            Expected::Key(key) => key == 0,
            Expected::Either { old, new } => old == 0 || new == 0,
        }
    }

    /// Whether an iorig unit with `key` is an acceptable state.
    fn accepts(self, key: u8) -> bool {
        key != 0
            && match self {
                Expected::Unwritten => false,
                Expected::Key(expected) => key == expected,
                Expected::Either { old, new } => key == old || key == new,
            }
    }

    /// The acceptable non-zero keys, most likely first.
    fn keys(self) -> [u8; 2] {
        match self {
            Expected::Unwritten => [0, 0],
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
        }
    }
}

/// The kinds of failure a unit check reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Bytes that no iorig write produced: a damaged payload or header.
    Corrupted,
    /// A complete, consistent unit of another generation (or no data at all)
    /// where a newer write was acknowledged.
    LostWrite,
    /// A complete, consistent unit written for another offset or target.
    Misdirected,
    /// Parts of the unit come from different writes.
    Torn,
    /// An iorig unit where nothing was ever written.
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
    /// The key found: from the header when the magic is present, else the key
    /// the whole payload matches, if any.
    pub found_key: Option<u8>,
    /// Header fields, when the magic is present.
    pub found_target: Option<u32>,
    pub found_offset_bytes: Option<u64>,
    pub found_time_ns: Option<u64>,
    /// One human-readable line saying what was wrong.
    pub detail: String,
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

    fn header_elsewhere(&self) -> bool {
        self.header.target != self.target || self.header.offset_bytes != self.offset_bytes
    }

    /// For each sector, the key whose payload (for this target and offset) it
    /// holds, if any; sector 0 is judged on the bytes after the header. Keys
    /// are tried in the order `preferred`, then the previous sector's key (a
    /// unit is usually one write), then all of 1..=127.
    fn sector_keys(&self, preferred: &[u8]) -> Vec<Option<u8>> {
        let mut seeds = [0u64; MAX_KEY as usize + 1];
        for (key, seed) in (0u8..).zip(seeds.iter_mut()) {
            *seed = unit_seed(self.target, self.offset_bytes, key);
        }
        let len = self.buf.len();
        let sectors = len.div_ceil(SECTOR_BYTES);
        let mut found = Vec::with_capacity(sectors);
        let mut previous = 0u8;
        for sector in 0..sectors {
            let start = (sector * SECTOR_BYTES).max(HEADER_BYTES);
            let end = ((sector + 1) * SECTOR_BYTES).min(len);
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
}

/// Describes which sectors hold which key, in runs: "sectors 0-3 match key 3,
/// sectors 4-7 match key 4". `none` names a sector that matches no key.
fn describe_sectors(keys: &[Option<u8>], none: &str) -> String {
    let mut parts = Vec::new();
    let mut start = 0;
    while start < keys.len() {
        let mut end = start;
        while end + 1 < keys.len() && keys[end + 1] == keys[start] {
            end += 1;
        }
        let sectors = if start == end {
            format!("sector {start}")
        } else {
            format!("sectors {start}-{end}")
        };
        let what = match keys[start] {
            Some(key) => format!("match key {key}"),
            None => none.to_owned(),
        };
        parts.push(format!("{sectors} {what}"));
        start = end + 1;
    }
    parts.join(", ")
}

/// The distinct values in `keys`, in order of first appearance.
fn distinct(keys: &[Option<u8>]) -> Vec<Option<u8>> {
    let mut seen = Vec::new();
    for key in keys {
        if !seen.contains(key) {
            seen.push(*key);
        }
    }
    seen
}

/// Checks one unit read back from (`target`, `offset_bytes`).
///
/// - `Ok(Some(key))`: an intact iorig unit for this place with an expected key.
/// - `Ok(None)`: no iorig data, and the expectation allows that
///   ([`Expected::Unwritten`], or [`Expected::Either`] with `old == 0`).
/// - `Err`: what is wrong, classified as described on [`ErrorKind`]. An
///   `Either { old: 0, .. }` expectation also treats sectors holding no iorig
///   data as the old state, so a first write torn at a crash reports
///   [`ErrorKind::Torn`] rather than corruption.
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
        Err(classify_consistent(&check))
    } else if header.magic_ok && header.version_ok {
        Err(classify_damaged(&check))
    } else {
        classify_headerless(&check)
    }
}

/// Header and payload agree (one complete write), but it is not the expected one.
fn classify_consistent(check: &Check<'_>) -> UnitError {
    let h = check.header;
    if check.header_elsewhere() {
        return check.error(
            ErrorKind::Misdirected,
            None,
            format!(
                "header names offset {} of target {} (key {})",
                h.offset_bytes, h.target, h.key
            ),
        );
    }
    if !check.expected.has_keys() {
        return check.error(
            ErrorKind::UnwrittenHasData,
            None,
            format!(
                "never written, but holds a complete unit with key {}",
                h.key
            ),
        );
    }
    check.error(
        ErrorKind::LostWrite,
        None,
        format!("expected {}, found key {}", check.expected, h.key),
    )
}

/// The magic is there but the checksum fails: find out which writes the
/// sectors come from.
fn classify_damaged(check: &Check<'_>) -> UnitError {
    let h = check.header;
    let [first, second] = check.expected.keys();
    let sectors = check.sector_keys(&[h.key, first, second]);
    // A crash during the first write to a unit can leave sectors that still
    // hold whatever was there before, which is the legitimate old state.
    let unwritten_is_old = check.expected.allows_unwritten() && check.expected.has_keys();
    let sectors: Vec<Option<u8>> = if unwritten_is_old {
        sectors.iter().map(|key| Some(key.unwrap_or(0))).collect()
    } else {
        sectors
    };
    let elsewhere = if check.header_elsewhere() {
        format!(
            " (header names offset {} of target {})",
            h.offset_bytes, h.target
        )
    } else {
        String::new()
    };
    if let Some(bad) = sectors.iter().position(Option::is_none) {
        let more = sectors.iter().filter(|key| key.is_none()).count() - 1;
        let more = if more > 0 {
            format!(" (and {more} more)")
        } else {
            String::new()
        };
        return check.error(
            ErrorKind::Corrupted,
            None,
            format!("checksum mismatch: payload sector {bad} matches no write{more}{elsewhere}"),
        );
    }
    let keys = distinct(&sectors);
    let unwritten = if unwritten_is_old {
        sectors
            .iter()
            .map(|key| key.filter(|&key| key != 0))
            .collect()
    } else {
        sectors.clone()
    };
    if keys.len() > 1 {
        return check.error(
            ErrorKind::Torn,
            None,
            format!(
                "header has key {}; {}",
                h.key,
                describe_sectors(&unwritten, "hold no iorig data")
            ),
        );
    }
    let payload_key = keys.first().copied().flatten().unwrap_or(0);
    if payload_key != h.key {
        let payload = if payload_key == 0 {
            "no iorig data".to_owned()
        } else {
            format!("key {payload_key}")
        };
        return check.error(
            ErrorKind::Torn,
            None,
            format!("header has key {} but the payload holds {payload}", h.key),
        );
    }
    check.error(
        ErrorKind::Corrupted,
        None,
        format!("checksum mismatch: header damaged (payload matches key {payload_key}){elsewhere}"),
    )
}

/// No magic, or a version this code does not write.
fn classify_headerless(check: &Check<'_>) -> Result<Option<u8>, UnitError> {
    let no_data = |check: &Check<'_>| {
        if check.expected.allows_unwritten() {
            Ok(None)
        } else {
            Err(check.error(
                ErrorKind::LostWrite,
                None,
                "holds no iorig data: the write never reached the storage".to_owned(),
            ))
        }
    };
    // Fresh storage is mostly zeros; no key's payload is all zero, so skip the
    // per-key search.
    if check.buf.iter().all(|&byte| byte == 0) {
        return no_data(check);
    }
    let [first, second] = check.expected.keys();
    let sectors = check.sector_keys(&[first, second]);
    let keys = distinct(&sectors);
    let header_what = if check.header.magic_ok {
        format!("header has unknown format version {}", check.buf[17])
    } else {
        "no header".to_owned()
    };
    match keys.as_slice() {
        [None] => no_data(check),
        [Some(key)] => Err(check.error(
            ErrorKind::Corrupted,
            Some(*key),
            format!("{header_what}, but the payload matches key {key}: header damaged"),
        )),
        _ => {
            let first_write_torn = check.expected.allows_unwritten()
                && check.expected.has_keys()
                && keys
                    .iter()
                    .all(|key| key.is_none_or(|key| check.expected.accepts(key)));
            let kind = if first_write_torn {
                ErrorKind::Torn
            } else {
                ErrorKind::Corrupted
            };
            Err(check.error(
                kind,
                None,
                format!(
                    "{header_what}; {}",
                    describe_sectors(&sectors, "hold no iorig data")
                ),
            ))
        }
    }
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
                err.detail
                    .contains(&format!("payload sector {sector} matches no write")),
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
    fn flipped_header_field_is_corrupted() {
        // time, offset, target, checksum, version padding: all "header damaged".
        for at in [20usize, 27, 8, 12, 4, 18, 29] {
            let mut buf = stamped(4096, 1, 8192, 11);
            buf[at] ^= 0x40;
            let err = check_unit(&buf, 1, 8192, Expected::Key(11)).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Corrupted, "byte {at}: {err}");
            assert!(err.detail.contains("header damaged"), "{}", err.detail);
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
        assert!(err.detail.contains("header damaged"), "{}", err.detail);
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
    fn older_generation_is_lost_write() {
        let buf = stamped(4096, 0, 4096, 3);
        let err = check_unit(&buf, 0, 4096, Expected::Key(4)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::LostWrite);
        assert_eq!(err.found_key, Some(3));
        assert!(err.detail.contains("key 4"), "{}", err.detail);
        assert!(err.detail.contains("key 3"), "{}", err.detail);
    }

    #[test]
    fn other_offset_or_target_is_misdirected() {
        let buf = stamped(4096, 0, 8192, 3);
        for expected in [Expected::Key(3), Expected::Key(9), Expected::Unwritten] {
            let err = check_unit(&buf, 0, 4096, expected).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Misdirected, "{expected:?}");
            assert_eq!(err.found_offset_bytes, Some(8192));
            assert!(
                err.detail.contains("header names offset 8192 of target 0"),
                "{}",
                err.detail
            );
        }
        let buf = stamped(4096, 1, 4096, 3);
        let err = check_unit(&buf, 0, 4096, Expected::Key(3)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Misdirected);
        assert_eq!(err.found_target, Some(1));
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
            let half = len / 512 / 2;
            let first = if half == 1 {
                "sector 0 match key 3".to_owned()
            } else {
                format!("sectors 0-{} match key 3", half - 1)
            };
            assert!(err.detail.contains(&first), "{}", err.detail);
            assert!(err.detail.contains("match key 4"), "{}", err.detail);
            // Also torn when a crash allowed either key.
            let err = check_unit(&buf, 0, 65536, Expected::Either { old: 3, new: 4 }).unwrap_err();
            assert_eq!(err.kind, ErrorKind::Torn);
        }
    }

    #[test]
    fn header_from_another_write_is_torn() {
        let a = stamped(4096, 0, 0, 3);
        let mut buf = stamped(4096, 0, 0, 4);
        buf[..HEADER_BYTES].copy_from_slice(&a[..HEADER_BYTES]);
        let err = check_unit(&buf, 0, 0, Expected::Key(4)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Torn);
        assert!(err.detail.contains("payload holds key 4"), "{}", err.detail);
    }

    #[test]
    fn torn_first_write_after_crash() {
        // New header and first half; the second half still holds old, non-iorig bytes.
        let mut buf = noise(4096, 99);
        let b = stamped(4096, 0, 0, 1);
        buf[..2048].copy_from_slice(&b[..2048]);
        let err = check_unit(&buf, 0, 0, Expected::Either { old: 0, new: 1 }).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Torn, "{err}");
        assert!(
            err.detail.contains("sectors 4-7 hold no iorig data"),
            "{}",
            err.detail
        );
        // Without the crash excuse the same bytes are corruption.
        let err = check_unit(&buf, 0, 0, Expected::Key(1)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupted);
        assert!(
            err.detail
                .contains("payload sector 4 matches no write (and 3 more)"),
            "{}",
            err.detail
        );
        // Header sector old, rest new.
        let mut buf = noise(4096, 98);
        buf[512..].copy_from_slice(&b[512..]);
        let err = check_unit(&buf, 0, 0, Expected::Either { old: 0, new: 1 }).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Torn, "{err}");
        let err = check_unit(&buf, 0, 0, Expected::Key(1)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupted, "{err}");
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
    fn random_bytes() {
        for len in [512usize, 4096, 65536] {
            let buf = noise(len, 0x1234_5678 + len as u64);
            assert_eq!(check_unit(&buf, 0, 0, Expected::Unwritten), Ok(None));
            assert_eq!(
                check_unit(&buf, 0, 0, Expected::Either { old: 0, new: 5 }),
                Ok(None)
            );
            let err = check_unit(&buf, 0, 0, Expected::Key(5)).unwrap_err();
            assert_eq!(err.kind, ErrorKind::LostWrite);
            assert_eq!(err.found_key, None);
            assert!(err.detail.contains("holds no iorig data"), "{}", err.detail);
            let err = check_unit(&buf, 0, 0, Expected::Either { old: 4, new: 5 }).unwrap_err();
            assert_eq!(err.kind, ErrorKind::LostWrite);
        }
        let zeros = vec![0u8; 4096];
        assert_eq!(check_unit(&zeros, 0, 0, Expected::Unwritten), Ok(None));
        assert_eq!(
            check_unit(&zeros, 0, 0, Expected::Key(5)).unwrap_err().kind,
            ErrorKind::LostWrite
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
            err.detail.contains("payload sector 0 matches no write"),
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
        assert!(err.detail.contains("key 3 or key 4"), "{}", err.detail);
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
    fn headerless_mixed_keys_is_corrupted() {
        let a = stamped(4096, 0, 0, 3);
        let b = stamped(4096, 0, 0, 4);
        let mut buf = a.clone();
        buf[2048..].copy_from_slice(&b[2048..]);
        buf[..4].fill(0);
        let err = check_unit(&buf, 0, 0, Expected::Key(4)).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupted);
        assert!(err.detail.contains("no header"), "{}", err.detail);
        // Part of a unit without header, rest noise.
        let mut buf = noise(4096, 5);
        buf[1024..].copy_from_slice(&a[1024..]);
        let err = check_unit(&buf, 0, 0, Expected::Unwritten).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupted);
    }

    #[test]
    fn too_short_is_an_error_not_a_panic() {
        let err = check_unit(&[0u8; 16], 0, 0, Expected::Unwritten).unwrap_err();
        assert_eq!(err.kind, ErrorKind::Corrupted);
        assert!(!payload_matches(&[0u8; 16], 0, 0, 1));
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
}
