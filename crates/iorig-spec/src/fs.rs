//! File-system workloads: a directory tree (vdbench's file-system
//! definition: anchor, depth, width, files, sizes) and the operations run in
//! it (vdbench's file-system workload, mdtest's metadata set).
//!
//! The tree has `width^depth` leaf directories, each with `files` file slots;
//! a slot holds a file or not, and create, delete and rename move files
//! between slots, so the names stay the ones the shape gives. mkdir and rmdir
//! work on a second set of slots, one empty directory per file slot.

use crate::dist::AccessDist;
use crate::SpecError;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Entries (directories and file slots) a tree may hold unless
/// `max_entries` raises the limit.
pub const DEFAULT_MAX_ENTRIES: u64 = 10_000_000;

/// One kind of file-system operation. Reads and writes move data inside
/// files; the rest are metadata operations.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum FsOp {
    /// Reads inside an open file (`bs` each).
    Read,
    /// Writes inside an open file, over existing data.
    Write,
    /// A new file in an empty slot, written to its size.
    Create,
    /// Unlink a file.
    Delete,
    /// A directory in an empty directory slot.
    Mkdir,
    /// Remove an (empty) directory of a directory slot.
    Rmdir,
    /// Open a file (each open is followed by a close).
    Open,
    /// Close a file.
    Close,
    /// `stat` (getattr) a file.
    Stat,
    /// Change a file's mode and times (chmod + utimes).
    Setattr,
    /// Move a file to an empty slot.
    Rename,
    /// `fsync` an open file.
    Fsync,
    /// List a leaf directory.
    Readdir,
}

impl FsOp {
    /// Every kind, in the order results list them.
    pub const ALL: [FsOp; 13] = [
        FsOp::Read,
        FsOp::Write,
        FsOp::Create,
        FsOp::Delete,
        FsOp::Mkdir,
        FsOp::Rmdir,
        FsOp::Open,
        FsOp::Close,
        FsOp::Stat,
        FsOp::Setattr,
        FsOp::Rename,
        FsOp::Fsync,
        FsOp::Readdir,
    ];
    pub const COUNT: usize = Self::ALL.len();

    /// The stored and printed spelling.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Position in [`FsOp::ALL`], for per-kind tables.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Operations that change which slots hold files or directories: a
    /// validated workload follows the data of a fixed set of files.
    pub fn changes_names(self) -> bool {
        matches!(
            self,
            FsOp::Create | FsOp::Delete | FsOp::Mkdir | FsOp::Rmdir | FsOp::Rename
        )
    }
}

/// The operations of a workload with their shares: `read`, or
/// `create:20,stat:50,read:20,delete:10` (shares add up to 100).
#[derive(Debug, Clone, PartialEq)]
pub struct OpMix {
    pub ops: Vec<(FsOp, f64)>,
}

impl OpMix {
    /// One operation, all of the time.
    pub fn single(op: FsOp) -> Self {
        OpMix {
            ops: vec![(op, 100.0)],
        }
    }

    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let names = || {
            FsOp::ALL
                .iter()
                .filter(|o| **o != FsOp::Close)
                .map(|o| o.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut ops: Vec<(FsOp, f64)> = Vec::new();
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        for part in &parts {
            if part.is_empty() {
                return Err(SpecError::bad(
                    "ops",
                    text,
                    "empty entry; write e.g. create:20,stat:80",
                ));
            }
            let (name, share) = match part.split_once(':') {
                Some((n, s)) => {
                    let v: f64 = s.trim().trim_end_matches('%').parse().map_err(|_| {
                        SpecError::bad("ops", text, format!("share '{s}' is not a number"))
                    })?;
                    if !(v.is_finite() && v > 0.0 && v <= 100.0) {
                        return Err(SpecError::bad(
                            "ops",
                            text,
                            format!("share '{s}' must lie above 0 and at most 100"),
                        ));
                    }
                    (n.trim(), Some(v))
                }
                None if parts.len() == 1 => (*part, None),
                None => {
                    return Err(SpecError::bad(
                        "ops",
                        text,
                        format!("'{part}' has no share; give every operation one, e.g. {part}:50"),
                    ))
                }
            };
            let op: FsOp = name.parse().map_err(|_| {
                SpecError::bad(
                    "ops",
                    text,
                    format!("unknown operation '{name}'; use {}", names()),
                )
            })?;
            if op == FsOp::Close {
                return Err(SpecError::bad(
                    "ops",
                    text,
                    "close is counted with every open (each open is closed); give open",
                ));
            }
            if ops.iter().any(|(o, _)| *o == op) {
                return Err(SpecError::bad(
                    "ops",
                    text,
                    format!("{name} is given twice; give each operation once"),
                ));
            }
            ops.push((op, share.unwrap_or(100.0)));
        }
        let sum: f64 = ops.iter().map(|o| o.1).sum();
        if (sum - 100.0).abs() > 1e-6 {
            return Err(SpecError::bad(
                "ops",
                text,
                format!("the shares add up to {sum}, not 100"),
            ));
        }
        Ok(OpMix { ops })
    }

    pub fn has(&self, op: FsOp) -> bool {
        self.ops.iter().any(|(o, _)| *o == op)
    }

    /// Every kind the workload counts: the mix, plus the opens and closes
    /// around reads, writes and fsyncs, and the writes of creates with data.
    pub fn counted(&self, creates_write: bool) -> Vec<FsOp> {
        let mut out: Vec<FsOp> = Vec::new();
        for (op, _) in &self.ops {
            out.push(*op);
            match op {
                FsOp::Read | FsOp::Write | FsOp::Fsync | FsOp::Open => {
                    out.extend([FsOp::Open, FsOp::Close])
                }
                FsOp::Create if creates_write => out.push(FsOp::Write),
                _ => {}
            }
        }
        let mut sorted: Vec<FsOp> = FsOp::ALL
            .iter()
            .copied()
            .filter(|o| out.contains(o))
            .collect();
        sorted.dedup();
        sorted
    }
}

impl fmt::Display for OpMix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let [(op, _)] = self.ops.as_slice() {
            return write!(f, "{op}");
        }
        let parts: Vec<String> = self.ops.iter().map(|(o, s)| format!("{o}:{s}")).collect();
        write!(f, "{}", parts.join(","))
    }
}

/// File sizes with weights: `128k`, or `4k:70,64k:30`; 0 makes empty files.
#[derive(Debug, Clone, PartialEq)]
pub struct FileSizes {
    pub sizes: Vec<(u64, u32)>,
}

impl FileSizes {
    pub fn single(bytes: u64) -> Self {
        FileSizes {
            sizes: vec![(bytes, 1)],
        }
    }

    /// The file sizes' rules of the one size-mix grammar ([`crate::mix`]):
    /// 0 allowed (empty files), no ceiling.
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let rules = crate::mix::MixRules {
            key: "file-size",
            example: "4k:70,64k:30",
            zero_ok: true,
            max: None,
        };
        Ok(FileSizes {
            sizes: crate::mix::parse(text, &rules)?,
        })
    }

    pub fn max_bytes(&self) -> u64 {
        self.sizes.iter().map(|s| s.0).max().unwrap_or(0)
    }

    /// The size of a file whose uniform draw in `[0, 1)` is `u`: weights
    /// pick the entry, so each slot's size follows from the seed.
    pub fn pick(&self, u: f64) -> u64 {
        let total: u64 = self.sizes.iter().map(|s| u64::from(s.1)).sum();
        let mut at = (u * total as f64) as u64;
        for (size, w) in &self.sizes {
            if at < u64::from(*w) {
                return *size;
            }
            at -= u64::from(*w);
        }
        self.sizes.last().map_or(0, |s| s.0)
    }

    /// Mean size over the weights.
    pub fn mean_bytes(&self) -> f64 {
        let total: f64 = self.sizes.iter().map(|s| f64::from(s.1)).sum();
        if total == 0.0 {
            return 0.0;
        }
        self.sizes
            .iter()
            .map(|(s, w)| *s as f64 * f64::from(*w))
            .sum::<f64>()
            / total
    }
}

impl fmt::Display for FileSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::mix::format(&self.sizes))
    }
}

/// Where in a file its reads and writes go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileIo {
    /// From the start of the file on (vdbench `fileio=sequential`).
    Sequential,
    /// At random `bs`-aligned offsets.
    Random,
}

impl fmt::Display for FileIo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which file an operation picks.
// Holds an AccessDist (Copy, up to 256 bytes for zones): see its note.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FileSelect {
    /// Uniformly at random (vdbench `fileselect=random`).
    Random,
    /// Each thread walks its own share of the slots in order.
    Sequential,
    /// Skewed over the slots, as `--dist` skews offsets: a hot set of files.
    Skewed(AccessDist),
}

impl FileSelect {
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        match text.trim() {
            "random" | "uniform" => Ok(FileSelect::Random),
            "sequential" | "seq" => Ok(FileSelect::Sequential),
            t => match AccessDist::parse(t) {
                Ok(AccessDist::Uniform) => Ok(FileSelect::Random),
                // Sizes say nothing over a list of files.
                Ok(AccessDist::ZonedAbs { .. } | AccessDist::Hotband) => Err(SpecError::bad(
                    "fileselect",
                    text,
                    "zones of sizes and hotband's curve of offsets do not apply to picking files; give zoned: with shares of the files",
                )),
                Ok(d) => Ok(FileSelect::Skewed(d)),
                Err(_) => Err(SpecError::bad(
                    "fileselect",
                    text,
                    "use random, sequential, zipf:THETA, pareto:H, normal:DEV, hot:IOPCT/SPACEPCT or zoned:IOPCT/SPACEPCT:...",
                )),
            },
        }
    }
}

impl fmt::Display for FileSelect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileSelect::Random => write!(f, "random"),
            FileSelect::Sequential => write!(f, "sequential"),
            FileSelect::Skewed(d) => write!(f, "{d}"),
        }
    }
}

/// What happens to the tree before the operations start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatMode {
    /// Use the tree as it is; it must exist with this shape.
    No,
    /// Delete the tree's files and create them all anew.
    Yes,
    /// As `yes` for the first step of a run, `restart` for later ones.
    Once,
    /// Create what is missing (directories, files, a file of the wrong
    /// size) and keep the rest: the default.
    Restart,
    /// Directories only, every file slot empty: the start of a create
    /// workload.
    Dirs,
}

impl fmt::Display for FormatMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A validated file-system workload: the tree and its operations.
#[derive(Debug, Clone, PartialEq)]
pub struct FsWorkload {
    /// The directory the tree lives in.
    pub anchor: String,
    pub depth: u32,
    pub width: u32,
    /// File slots per leaf directory.
    pub files: u64,
    pub file_sizes: FileSizes,
    /// Slots past the one where the sizes reach this total hold no file.
    pub total_size_bytes: Option<u64>,
    pub ops: OpMix,
    pub fileio: FileIo,
    pub fileselect: FileSelect,
    /// Reads or writes per open–close; None: the file's size in `bs` units.
    pub stopafter: Option<u32>,
    /// Passes of each worker over its share of the files, then it ends.
    pub passes: Option<u64>,
    pub format: FormatMode,
    /// Remove the tree when the run ends.
    pub cleanup: bool,
    pub max_entries: u64,
}

impl FsWorkload {
    /// Leaf directories: `width^depth` (1 for depth 0: the anchor itself).
    pub fn leaf_dirs(&self) -> u64 {
        u64::from(self.width).saturating_pow(self.depth)
    }

    /// Every directory the shape makes below the anchor.
    pub fn dirs(&self) -> u64 {
        (1..=self.depth).fold(0u64, |acc, level| {
            acc.saturating_add(u64::from(self.width).saturating_pow(level))
        })
    }

    /// File slots: leaf directories × files.
    pub fn file_slots(&self) -> u64 {
        self.leaf_dirs().saturating_mul(self.files)
    }

    /// Entries the tree can hold: its directories, its file slots, and a
    /// directory slot per file slot when the mix makes directories.
    pub fn entries(&self) -> u64 {
        let dir_slots = if self.ops.has(FsOp::Mkdir) || self.ops.has(FsOp::Rmdir) {
            self.file_slots()
        } else {
            0
        };
        self.dirs()
            .saturating_add(self.file_slots())
            .saturating_add(dir_slots)
    }
}

/// The flat form of an [`FsWorkload`] recorded with results.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FsRecord {
    pub anchor: String,
    pub depth: u32,
    pub width: u32,
    pub files: u64,
    pub file_size: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_size_bytes: Option<u64>,
    pub ops: String,
    pub fileio: String,
    pub fileselect: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopafter: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<u64>,
    pub format: String,
    pub cleanup: bool,
}

impl FsWorkload {
    pub fn record(&self) -> FsRecord {
        FsRecord {
            anchor: self.anchor.clone(),
            depth: self.depth,
            width: self.width,
            files: self.files,
            file_size: self.file_sizes.to_string(),
            total_size_bytes: self.total_size_bytes,
            ops: self.ops.to_string(),
            fileio: self.fileio.name().to_string(),
            fileselect: self.fileselect.to_string(),
            stopafter: self.stopafter,
            passes: self.passes,
            format: self.format.name().to_string(),
            cleanup: self.cleanup,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_op_mix_parses_and_its_shares_must_add_up() {
        let m = OpMix::parse("create:20,stat:50,read:20,delete:10").unwrap();
        assert_eq!(m.ops.len(), 4);
        assert_eq!(m.to_string(), "create:20,stat:50,read:20,delete:10");
        assert_eq!(OpMix::parse("read").unwrap().ops, vec![(FsOp::Read, 100.0)]);
        let err = |t: &str| OpMix::parse(t).unwrap_err().to_string();
        assert!(err("create:20,stat:50").contains("add up to 70"));
        assert!(err("creat:100").contains("unknown operation 'creat'"));
        assert!(err("close:100").contains("counted with every open"));
        assert!(err("read:50,read:50").contains("twice"));
        assert!(err("read,stat").contains("no share"));
        assert!(err("read:0,stat:100").contains("above 0"));
    }

    #[test]
    fn counted_kinds_include_the_opens_and_closes_around_data() {
        let m = OpMix::parse("read:50,create:50").unwrap();
        assert_eq!(
            m.counted(true),
            vec![
                FsOp::Read,
                FsOp::Write,
                FsOp::Create,
                FsOp::Open,
                FsOp::Close
            ]
        );
        assert_eq!(
            OpMix::parse("stat").unwrap().counted(false),
            vec![FsOp::Stat]
        );
    }

    #[test]
    fn file_sizes_allow_zero_and_pick_by_weight() {
        let s = FileSizes::parse("0").unwrap();
        assert_eq!(s.max_bytes(), 0);
        let s = FileSizes::parse("4k:70,64k:30").unwrap();
        assert_eq!(s.pick(0.0), 4096);
        assert_eq!(s.pick(0.69), 4096);
        assert_eq!(s.pick(0.71), 65536);
        assert_eq!(s.pick(0.9999), 65536);
        assert_eq!(s.to_string(), "4k:70,64k:30");
        assert!((s.mean_bytes() - (0.7 * 4096.0 + 0.3 * 65536.0)).abs() < 1e-6);
        assert!(FileSizes::parse("4q").is_err());
        assert!(FileSizes::parse("4k:0").is_err());
    }

    #[test]
    fn a_shape_counts_its_directories_and_slots() {
        let w = FsWorkload {
            anchor: "/x".into(),
            depth: 2,
            width: 3,
            files: 10,
            file_sizes: FileSizes::parse("4k").unwrap(),
            total_size_bytes: None,
            ops: OpMix::parse("mkdir:50,read:50").unwrap(),
            fileio: FileIo::Sequential,
            fileselect: FileSelect::Random,
            stopafter: None,
            passes: None,
            format: FormatMode::Restart,
            cleanup: false,
            max_entries: DEFAULT_MAX_ENTRIES,
        };
        assert_eq!(w.leaf_dirs(), 9);
        assert_eq!(w.dirs(), 3 + 9);
        assert_eq!(w.file_slots(), 90);
        assert_eq!(w.entries(), 12 + 90 + 90);
    }

    #[test]
    fn fileselect_takes_the_offset_distributions() {
        assert_eq!(FileSelect::parse("random").unwrap(), FileSelect::Random);
        assert_eq!(
            FileSelect::parse("sequential").unwrap(),
            FileSelect::Sequential
        );
        assert!(matches!(
            FileSelect::parse("zipf:1.2").unwrap(),
            FileSelect::Skewed(AccessDist::Zipf { .. })
        ));
        assert!(FileSelect::parse("hottest").is_err());
    }
}
