//! Targets: regular files and block devices, checked before anything is written.
//!
//! Two phases keep the "bad input writes nothing" promise: [`plan_targets`] looks
//! at every target (existence, kind, size, safety rules, O_DIRECT support,
//! permissions, read-only devices) without writing a byte to any of them, and
//! only when every target passed does [`open_targets`] create missing scratch
//! files and open everything for I/O.
//!
//! Files that iorig creates start with a 1 MiB header region whose first block
//! carries the iorig marker; the data area follows it, so workload I/O never
//! overwrites the marker.

use crate::EngineError;
use iorig_spec::Workload;
use std::fs::File;
use std::path::PathBuf;

/// Bytes reserved at the start of an iorig scratch file for its marker.
pub const FILE_HEADER_BYTES: u64 = 1 << 20;

/// What a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    File,
    Block,
}

impl TargetKind {
    pub fn name(self) -> &'static str {
        match self {
            TargetKind::File => "file",
            TargetKind::Block => "block",
        }
    }
}

/// A target that passed every check; nothing has been written to it yet.
#[derive(Clone, Debug)]
pub struct TargetPlan {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// False when iorig will create the file in [`open_targets`].
    pub exists: bool,
    /// Usable bytes (the data area; excludes an iorig file's header region).
    pub size_bytes: u64,
    /// Absolute offset of the data area in the target (FILE_HEADER_BYTES for an
    /// iorig file, 0 for a block device or a foreign file).
    pub data_start: u64,
    /// Kernel name of the block device under the target (`loop0`, `vda`,
    /// `nvme0n1p1`), for the device sampler; None when unknown.
    pub device: Option<String>,
}

/// An open target ready for I/O.
#[derive(Debug)]
pub struct OpenTarget {
    pub plan: TargetPlan,
    pub file: File,
}

/// Progress while creating and filling a scratch file.
#[derive(Clone, Debug)]
pub struct FillProgress {
    pub path: PathBuf,
    pub done_bytes: u64,
    pub total_bytes: u64,
}
