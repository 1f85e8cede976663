//! The scratch-file header: the marker block at the start of every file
//! iorig creates, which later runs look for before writing to a file.

use super::*;

/// Marker at byte 0 of every scratch file iorig creates.
pub const FILE_MAGIC: &[u8; 14] = b"IORIG-SCRATCH\0";
/// Version of the header layout written by this iorig.
pub const FILE_HEADER_VERSION: u16 = 1;
/// Bytes read from an existing file to look for the marker.
pub(super) const MARKER_BLOCK: usize = 4096;
/// A human-readable note in the header block, for whoever finds the file.
pub(super) const HEADER_NOTE: &[u8] =
    b"This file was created by iorig as benchmark scratch space; it holds no user data.\n";
pub(super) const HEADER_NOTE_AT: usize = 128;
/// The first block of an iorig scratch file.
///
/// Layout (little endian): magic `IORIG-SCRATCH\0` (14 bytes) · version u16 ·
/// header bytes u64 (where the data area starts) · data size at creation u64 ·
/// creation time in Unix seconds u64 · creating iorig version, NUL-padded (32
/// bytes) · at byte 128 a one-line note for humans; zeros up to the data area.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileHeader {
    pub version: u16,
    pub header_bytes: u64,
    pub created_size_bytes: u64,
    pub created_unix_s: u64,
    pub tool_version: String,
}

impl FileHeader {
    /// The header for a file created now with `size_bytes` of data.
    pub fn new(size_bytes: u64) -> Self {
        let created_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        FileHeader {
            version: FILE_HEADER_VERSION,
            header_bytes: FILE_HEADER_BYTES,
            created_size_bytes: size_bytes,
            created_unix_s,
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }

    /// The 4 KiB marker block.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; MARKER_BLOCK];
        b[..14].copy_from_slice(FILE_MAGIC);
        b[14..16].copy_from_slice(&self.version.to_le_bytes());
        b[16..24].copy_from_slice(&self.header_bytes.to_le_bytes());
        b[24..32].copy_from_slice(&self.created_size_bytes.to_le_bytes());
        b[32..40].copy_from_slice(&self.created_unix_s.to_le_bytes());
        let v = self.tool_version.as_bytes();
        let n = v.len().min(31);
        b[40..40 + n].copy_from_slice(&v[..n]);
        b[HEADER_NOTE_AT..HEADER_NOTE_AT + HEADER_NOTE.len()].copy_from_slice(HEADER_NOTE);
        b
    }

    /// Reads a header from the start of a file; None when the marker is absent.
    pub fn decode(block: &[u8]) -> Option<Self> {
        if block.get(..14)? != FILE_MAGIC {
            return None;
        }
        let tool = block.get(40..72)?;
        let tool_len = tool.iter().position(|&c| c == 0).unwrap_or(tool.len());
        Some(FileHeader {
            version: le16(block, 14)?,
            header_bytes: le64(block, 16)?,
            created_size_bytes: le64(block, 24)?,
            created_unix_s: le64(block, 32)?,
            tool_version: String::from_utf8_lossy(&tool[..tool_len]).into_owned(),
        })
    }
}

pub(super) fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

pub(super) fn le32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

pub(super) fn le64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}
