//! The tree of a file-system workload: its names and sizes (pure functions
//! of the shape), the marker that says iorig made it, and which slots hold a
//! file or a directory right now.
//!
//! Names: level directories `d0`, `d1`, … (zero-padded to the width), file
//! slots `f000`… and directory slots `s000`… in each leaf directory. Sizes
//! follow from the shape alone, not from the run's seed, so every run with
//! the same shape builds and expects the same tree.

use crate::gen::rng_for;
use crate::EngineError;
use iorig_spec::{FileSizes, FsWorkload};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// The file in the anchor that marks a tree as iorig's.
pub const MARKER: &str = ".iorig-tree";
const MARKER_MAGIC: &str = "iorig-tree 1";

/// What a tree looks like: everything that decides its names and sizes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub depth: u32,
    pub width: u32,
    pub files: u64,
    /// The file sizes as written (`4k:70,64k:30`).
    pub file_size: String,
    pub total_size_bytes: Option<u64>,
}

impl Shape {
    pub fn of(f: &FsWorkload) -> Shape {
        Shape {
            depth: f.depth,
            width: f.width,
            files: f.files,
            file_size: f.file_sizes.to_string(),
            total_size_bytes: f.total_size_bytes,
        }
    }

    /// The marker file's text.
    pub fn marker_text(&self, id: &str) -> String {
        format!(
            "{MARKER_MAGIC}\nid {id}\ndepth {}\nwidth {}\nfiles {}\nfile_size {}\ntotal_size_bytes {}\n",
            self.depth,
            self.width,
            self.files,
            self.file_size,
            self.total_size_bytes
                .map_or_else(|| "-".to_string(), |t| t.to_string())
        )
    }

    /// The id and shape a marker holds; None when the text is not one.
    pub fn parse_marker(text: &str) -> Option<(String, Shape)> {
        let mut lines = text.lines();
        if lines.next()? != MARKER_MAGIC {
            return None;
        }
        let mut get = |key: &str| -> Option<String> {
            let line = lines.next()?;
            let (k, v) = line.split_once(' ')?;
            (k == key).then(|| v.to_string())
        };
        let id = get("id")?;
        let depth = get("depth")?.parse().ok()?;
        let width = get("width")?.parse().ok()?;
        let files = get("files")?.parse().ok()?;
        let file_size = get("file_size")?;
        let total = get("total_size_bytes")?;
        let total_size_bytes = if total == "-" {
            None
        } else {
            Some(total.parse().ok()?)
        };
        Some((
            id,
            Shape {
                depth,
                width,
                files,
                file_size,
                total_size_bytes,
            },
        ))
    }

    fn seed(&self) -> u64 {
        // FNV-1a over the shape's text: the same shape, the same sizes.
        self.marker_text("")
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            })
    }
}

/// Digits of the largest index below `n` (at least 1).
fn digits(n: u64) -> usize {
    n.saturating_sub(1).max(1).ilog10() as usize + 1
}

/// A slot's state bits.
const PRESENT: u8 = 1;
const DIR_PRESENT: u8 = 2;
const BUSY: u8 = 4;

/// The tree: names, sizes and slot states. Workers share it; an operation
/// takes a slot ([`Tree::take`]) so no two work on one name at once.
#[derive(Debug)]
pub struct Tree {
    pub anchor: PathBuf,
    pub shape: Shape,
    sizes: FileSizes,
    seed: u64,
    /// File slots in use: all of them, or those within the total size.
    pub slots: u64,
    dir_digits: usize,
    file_digits: usize,
    state: Vec<AtomicU8>,
    files_present: AtomicU64,
    dirs_present: AtomicU64,
}

/// What a slot must hold for an operation to take it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// A file (read, write, stat, delete, rename's source, …).
    File,
    /// No file (create, rename's destination).
    NoFile,
    /// A directory in its directory slot (rmdir).
    Dir,
    /// No directory in its directory slot (mkdir).
    NoDir,
}

impl Tree {
    /// The tree of a workload; fails when the sizes leave no slot within the
    /// total size.
    pub fn new(f: &FsWorkload) -> Result<Tree, EngineError> {
        let shape = Shape::of(f);
        let seed = shape.seed();
        let all = f.file_slots();
        let mut t = Tree {
            anchor: PathBuf::from(&f.anchor),
            sizes: f.file_sizes.clone(),
            seed,
            slots: all,
            dir_digits: digits(u64::from(f.width)),
            file_digits: digits(f.files),
            state: Vec::new(),
            files_present: AtomicU64::new(0),
            dirs_present: AtomicU64::new(0),
            shape,
        };
        if let Some(total) = f.total_size_bytes {
            let mut sum = 0u64;
            let mut n = 0u64;
            while n < all {
                let s = t.size_of(n);
                if sum.saturating_add(s) > total {
                    break;
                }
                sum += s;
                n += 1;
            }
            if n == 0 {
                return Err(EngineError::Usage(format!(
                    "--total-size {} holds no file of the first size ({}); raise --total-size or lower --file-size",
                    iorig_spec::format_size(total),
                    iorig_spec::format_size(t.size_of(0))
                )));
            }
            t.slots = n;
        }
        t.state = (0..t.slots).map(|_| AtomicU8::new(0)).collect();
        Ok(t)
    }

    pub fn leaf_dirs(&self) -> u64 {
        u64::from(self.shape.width).saturating_pow(self.shape.depth)
    }

    /// Leaf directories that hold at least one slot in use.
    pub fn used_leaf_dirs(&self) -> u64 {
        self.slots.div_ceil(self.shape.files.max(1))
    }

    /// The size of the file in `slot`.
    pub fn size_of(&self, slot: u64) -> u64 {
        if self.sizes.sizes.len() == 1 {
            return self.sizes.sizes[0].0;
        }
        let mut rng = rng_for(self.seed, 0, slot);
        self.sizes.pick(crate::gen::unit_f64(&mut rng))
    }

    /// The largest size a file of the tree has.
    pub fn max_file_bytes(&self) -> u64 {
        self.sizes.max_bytes()
    }

    /// The bytes of every file the tree holds when complete.
    pub fn total_bytes(&self) -> u64 {
        (0..self.slots).map(|s| self.size_of(s)).sum()
    }

    fn level_name(&self, index: u64) -> String {
        format!("d{index:0w$}", w = self.dir_digits)
    }

    /// The directory of leaf `leaf` (the anchor itself at depth 0).
    pub fn leaf_path(&self, leaf: u64) -> PathBuf {
        self.anchor.join(self.leaf_rel(leaf))
    }

    /// The directory of leaf `leaf` relative to the anchor (empty at depth
    /// 0).
    pub fn leaf_rel(&self, leaf: u64) -> PathBuf {
        let mut p = PathBuf::new();
        let w = u64::from(self.shape.width);
        for level in 0..self.shape.depth {
            let below = w.saturating_pow(self.shape.depth - 1 - level);
            p.push(self.level_name((leaf / below) % w));
        }
        p
    }

    pub fn leaf_of(&self, slot: u64) -> u64 {
        slot / self.shape.files.max(1)
    }

    pub fn file_name(&self, slot: u64) -> String {
        format!(
            "f{:0w$}",
            slot % self.shape.files.max(1),
            w = self.file_digits
        )
    }

    pub fn dir_slot_name(&self, slot: u64) -> String {
        format!(
            "s{:0w$}",
            slot % self.shape.files.max(1),
            w = self.file_digits
        )
    }

    pub fn file_path(&self, slot: u64) -> PathBuf {
        self.leaf_path(self.leaf_of(slot))
            .join(self.file_name(slot))
    }

    pub fn dir_slot_path(&self, slot: u64) -> PathBuf {
        self.leaf_path(self.leaf_of(slot))
            .join(self.dir_slot_name(slot))
    }

    /// Every directory of the shape that holds a used slot or leads to one,
    /// parents before children, relative to the anchor.
    pub fn dirs_in_order(&self) -> Vec<PathBuf> {
        let used = self.used_leaf_dirs();
        let w = u64::from(self.shape.width);
        let mut out = Vec::new();
        for level in 1..=self.shape.depth {
            // Leaves below one directory of this level.
            let below = w.saturating_pow(self.shape.depth - level);
            let count = used.div_ceil(below.max(1));
            for i in 0..count {
                let mut p = PathBuf::new();
                for l in 0..level {
                    let span = w.saturating_pow(level - 1 - l);
                    p.push(self.level_name((i / span) % w));
                }
                out.push(p);
            }
        }
        out
    }

    /// Whether `name`, found in the anchor, is one the tree may hold there.
    pub fn owns_top_name(&self, name: &str) -> bool {
        if name == MARKER {
            return true;
        }
        if self.shape.depth == 0 {
            return self.is_slot_name(name);
        }
        name.strip_prefix('d').is_some_and(|n| {
            n.len() == self.dir_digits
                && n.bytes().all(|b| b.is_ascii_digit())
                && n.parse::<u64>()
                    .is_ok_and(|i| i < u64::from(self.shape.width))
        })
    }

    /// Whether `name` is a file or directory slot's name of a leaf.
    pub fn is_slot_name(&self, name: &str) -> bool {
        let Some(rest) = name.strip_prefix('f').or_else(|| name.strip_prefix('s')) else {
            return false;
        };
        rest.len() == self.file_digits
            && rest.bytes().all(|b| b.is_ascii_digit())
            && rest.parse::<u64>().is_ok_and(|i| i < self.shape.files)
    }

    /// The slot a leaf's entry names, with whether it is a directory slot.
    pub fn slot_of_name(&self, leaf: u64, name: &str) -> Option<(u64, bool)> {
        if !self.is_slot_name(name) {
            return None;
        }
        let j: u64 = name.get(1..)?.parse().ok()?;
        let slot = leaf.checked_mul(self.shape.files)?.checked_add(j)?;
        (slot < self.slots).then_some((slot, name.starts_with('s')))
    }

    // --- slot states -----------------------------------------------------

    pub fn files_present(&self) -> u64 {
        self.files_present.load(Ordering::Relaxed)
    }

    pub fn dirs_present(&self) -> u64 {
        self.dirs_present.load(Ordering::Relaxed)
    }

    pub fn has_file(&self, slot: u64) -> bool {
        self.state
            .get(slot as usize)
            .is_some_and(|s| s.load(Ordering::Relaxed) & PRESENT != 0)
    }

    pub fn has_dir(&self, slot: u64) -> bool {
        self.state
            .get(slot as usize)
            .is_some_and(|s| s.load(Ordering::Relaxed) & DIR_PRESENT != 0)
    }

    /// Records what a slot holds (scans and formats, not concurrent with
    /// operations).
    pub fn set(&self, slot: u64, file: bool, dir: bool) {
        self.put(slot, file, dir);
    }

    /// Takes `slot` for one operation when it holds what `want` asks and no
    /// other operation has it.
    pub fn take(&self, slot: u64, want: Want) -> bool {
        let Some(s) = self.state.get(slot as usize) else {
            return false;
        };
        s.fetch_update(Ordering::Acquire, Ordering::Relaxed, |v| {
            let fits = v & BUSY == 0
                && match want {
                    Want::File => v & PRESENT != 0,
                    Want::NoFile => v & PRESENT == 0,
                    Want::Dir => v & DIR_PRESENT != 0,
                    Want::NoDir => v & DIR_PRESENT == 0,
                };
            fits.then_some(v | BUSY)
        })
        .is_ok()
    }

    /// Gives a taken slot back, holding a file or directory as the operation
    /// left it.
    pub fn release(&self, slot: u64, file: bool, dir: bool) {
        self.put(slot, file, dir);
    }

    /// Sets what a slot holds (clearing its busy bit) and keeps the
    /// present counts with it. Release: a taken slot's operation happened
    /// before the next operation to take it.
    fn put(&self, slot: u64, file: bool, dir: bool) {
        let Some(s) = self.state.get(slot as usize) else {
            return;
        };
        let old = s.swap(
            if file { PRESENT } else { 0 } | if dir { DIR_PRESENT } else { 0 },
            Ordering::Release,
        );
        let adjust = |counter: &AtomicU64, was: bool, now: bool| match (was, now) {
            (false, true) => {
                counter.fetch_add(1, Ordering::Relaxed);
            }
            (true, false) => {
                counter.fetch_sub(1, Ordering::Relaxed);
            }
            _ => {}
        };
        adjust(&self.files_present, old & PRESENT != 0, file);
        adjust(&self.dirs_present, old & DIR_PRESENT != 0, dir);
    }

    /// No slot holds what `want` asks (so an operation that needs it has
    /// nothing to work on).
    pub fn none_for(&self, want: Want) -> bool {
        match want {
            Want::File => self.files_present() == 0,
            Want::NoFile => self.files_present() >= self.slots,
            Want::Dir => self.dirs_present() == 0,
            Want::NoDir => self.dirs_present() >= self.slots,
        }
    }
}

/// What the anchor holds now.
#[derive(Debug)]
pub enum Found {
    /// Nothing: a new tree goes here.
    Empty,
    /// An iorig tree, with its id and shape.
    Tree { id: String, shape: Shape },
}

/// Looks at the anchor: it must be a writable directory that is empty or
/// holds an iorig tree and nothing else (unless `allow_destroy`). Reads
/// only.
pub fn inspect(anchor: &Path, allow_destroy: bool) -> Result<Found, EngineError> {
    let shown = anchor.display();
    let meta = std::fs::symlink_metadata(anchor).map_err(|e| {
        EngineError::Usage(if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "anchor {shown} does not exist; create the directory first (mkdir -p {shown}) or give an existing one"
            )
        } else {
            format!("anchor {shown}: {e}")
        })
    })?;
    let meta = if meta.file_type().is_symlink() {
        std::fs::metadata(anchor).map_err(|e| EngineError::Usage(format!("anchor {shown}: {e}")))?
    } else {
        meta
    };
    if !meta.is_dir() {
        return Err(EngineError::Usage(format!(
            "anchor {shown} is not a directory; a file-system workload needs a directory to build its tree in"
        )));
    }
    if rustix::fs::access(
        anchor,
        rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK,
    )
    .is_err()
    {
        return Err(EngineError::Usage(format!(
            "anchor {shown} is not writable by this user; give a directory you can write to"
        )));
    }
    let marker = anchor.join(MARKER);
    // The marker is read only as a file of the anchor's own: a link there
    // could make a foreign directory look like iorig's.
    if let Ok(m) = std::fs::symlink_metadata(&marker) {
        if !m.file_type().is_file() {
            return Err(EngineError::Usage(format!(
                "anchor {shown} holds a {MARKER} that is not a plain file (a link or a directory) and iorig did not write it; remove it, or give another directory"
            )));
        }
    }
    let found = match std::fs::read_to_string(&marker) {
        Ok(text) => match Shape::parse_marker(&text) {
            Some((id, shape)) => Found::Tree { id, shape },
            None if allow_destroy => Found::Empty,
            None => {
                return Err(EngineError::Usage(format!(
                    "anchor {shown} holds a {MARKER} that iorig did not write; give an empty directory, or --allow-destroy to build a tree in it anyway"
                )))
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Found::Empty,
        Err(e) => {
            return Err(EngineError::Usage(format!(
                "anchor {shown}: cannot read {MARKER}: {e}"
            )))
        }
    };
    if allow_destroy {
        return Ok(found);
    }
    let entries = std::fs::read_dir(anchor)
        .map_err(|e| EngineError::Usage(format!("anchor {shown}: cannot list it: {e}")))?;
    let owner: Option<Tree> = match &found {
        Found::Tree { shape, .. } => Some(Tree::of_shape(anchor, shape)?),
        Found::Empty => None,
    };
    for entry in entries {
        let entry = entry
            .map_err(|e| EngineError::Usage(format!("anchor {shown}: cannot list it: {e}")))?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let ours = owner.as_ref().is_some_and(|t| t.owns_top_name(&name));
        if !ours {
            return Err(EngineError::Usage(format!(
                "anchor {shown} holds {name}, which iorig did not create; give an empty directory (or one with an iorig tree), or --allow-destroy to use it anyway"
            )));
        }
        // A name of the tree must also be what the tree puts there (never
        // a link): level directories and directory slots are directories,
        // file slots and the marker plain files.
        let ty = std::fs::symlink_metadata(entry.path())
            .map(|m| rustix::fs::FileType::from_raw_mode(std::os::unix::fs::MetadataExt::mode(&m)))
            .map_err(|e| EngineError::Usage(format!("anchor {shown}: {name}: {e}")))?;
        let dir_expected = name != MARKER && !name.starts_with('f');
        let fits = ty
            == if dir_expected {
                rustix::fs::FileType::Directory
            } else {
                rustix::fs::FileType::RegularFile
            };
        if !fits {
            return Err(EngineError::Usage(format!(
                "anchor {shown} holds {name}, which is {} where iorig's tree has a {}; iorig does not follow or replace it: remove it, or give another directory",
                kind_of(ty),
                if dir_expected { "directory" } else { "file" }
            )));
        }
    }
    Ok(found)
}

/// How a file type reads in a message.
pub(crate) fn kind_of(ty: rustix::fs::FileType) -> &'static str {
    use rustix::fs::FileType;
    match ty {
        FileType::Symlink => "a symbolic link",
        FileType::Directory => "a directory",
        FileType::RegularFile => "a plain file",
        FileType::Fifo => "a FIFO",
        FileType::Socket => "a socket",
        _ => "a device node",
    }
}

/// The most entries a marker's shape may have: a marker past this was not
/// written by iorig (or was damaged), and a tree of it would not fit in
/// memory anyway.
const MARKER_MAX_ENTRIES: u64 = 1 << 32;

impl Tree {
    /// A tree of a stored shape (a marker's), for its names only.
    pub fn of_shape(anchor: &Path, shape: &Shape) -> Result<Tree, EngineError> {
        let file_sizes = FileSizes::parse(&shape.file_size)
            .map_err(|e| EngineError::Usage(format!("{}: {e}", anchor.join(MARKER).display())))?;
        let f = FsWorkload {
            anchor: anchor.display().to_string(),
            depth: shape.depth,
            width: shape.width,
            files: shape.files,
            file_sizes,
            total_size_bytes: shape.total_size_bytes,
            ops: iorig_spec::OpMix::single(iorig_spec::FsOp::Stat),
            fileio: iorig_spec::FileIo::Sequential,
            fileselect: iorig_spec::FileSelect::Random,
            stopafter: None,
            passes: None,
            format: iorig_spec::FormatMode::No,
            cleanup: false,
            max_entries: u64::MAX,
        };
        if f.entries() > MARKER_MAX_ENTRIES || f.width == 0 {
            return Err(EngineError::Usage(format!(
                "{} describes a tree of {} entries, which iorig never makes; the marker is damaged: remove the tree by hand, or give another directory",
                anchor.join(MARKER).display(),
                f.entries()
            )));
        }
        Tree::new(&f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs(depth: u32, width: u32, files: u64, size: &str) -> FsWorkload {
        FsWorkload {
            anchor: "/a".into(),
            depth,
            width,
            files,
            file_sizes: FileSizes::parse(size).unwrap(),
            total_size_bytes: None,
            ops: iorig_spec::OpMix::single(iorig_spec::FsOp::Read),
            fileio: iorig_spec::FileIo::Sequential,
            fileselect: iorig_spec::FileSelect::Random,
            stopafter: None,
            passes: None,
            format: iorig_spec::FormatMode::Restart,
            cleanup: false,
            max_entries: u64::MAX,
        }
    }

    #[test]
    fn names_follow_the_shape() {
        let t = Tree::new(&fs(2, 12, 100, "4k")).unwrap();
        assert_eq!(t.file_path(0), PathBuf::from("/a/d00/d00/f00"));
        assert_eq!(t.file_path(100 * 13 + 5), PathBuf::from("/a/d01/d01/f05"));
        assert_eq!(t.dir_slot_path(99), PathBuf::from("/a/d00/d00/s99"));
        assert_eq!(t.leaf_dirs(), 144);
        let dirs = t.dirs_in_order();
        assert_eq!(dirs.len(), 12 + 144);
        assert_eq!(dirs[0], PathBuf::from("d00"));
        assert_eq!(dirs[12], PathBuf::from("d00/d00"));
        assert_eq!(dirs[13], PathBuf::from("d00/d01"));
        assert_eq!(t.leaf_rel(13), PathBuf::from("d01/d01"));
        assert!(t.owns_top_name("d11") && !t.owns_top_name("d12"));
        assert!(!t.owns_top_name("d1") && t.owns_top_name(MARKER));
        assert_eq!(t.slot_of_name(2, "f07"), Some((207, false)));
        assert_eq!(t.slot_of_name(2, "s07"), Some((207, true)));
        assert_eq!(t.slot_of_name(2, "f7"), None);
        let flat = Tree::new(&fs(0, 1, 3, "4k")).unwrap();
        assert_eq!(flat.file_path(2), PathBuf::from("/a/f2"));
        assert!(flat.dirs_in_order().is_empty());
        assert!(flat.owns_top_name("f2") && !flat.owns_top_name("f3"));
    }

    #[test]
    fn sizes_follow_the_shape_and_the_total_caps_the_slots() {
        let a = Tree::new(&fs(1, 2, 500, "4k:70,64k:30")).unwrap();
        let b = Tree::new(&fs(1, 2, 500, "4k:70,64k:30")).unwrap();
        let sizes: Vec<u64> = (0..a.slots).map(|s| a.size_of(s)).collect();
        assert_eq!(
            sizes,
            (0..b.slots).map(|s| b.size_of(s)).collect::<Vec<_>>()
        );
        let small = sizes.iter().filter(|s| **s == 4096).count() as f64 / 1000.0;
        // 1000 draws of a 70 % share: 4 standard deviations is ±5.8 %.
        assert!((small - 0.7).abs() < 0.058, "{small}");
        let mut f = fs(1, 2, 500, "4k");
        f.total_size_bytes = Some(10 * 4096 + 100);
        let t = Tree::new(&f).unwrap();
        assert_eq!(t.slots, 10);
        assert_eq!(t.used_leaf_dirs(), 1);
        assert_eq!(t.dirs_in_order().len(), 1);
    }

    #[test]
    fn markers_round_trip_and_strangers_are_not_markers() {
        let s = Shape::of(&fs(2, 2, 2, "128k"));
        let (id, back) = Shape::parse_marker(&s.marker_text("abc")).unwrap();
        assert_eq!((id.as_str(), back), ("abc", s));
        assert!(Shape::parse_marker("hello\n").is_none());
    }

    #[test]
    fn a_slot_is_taken_by_one_operation_at_a_time() {
        let t = Tree::new(&fs(0, 1, 4, "4k")).unwrap();
        assert!(t.none_for(Want::File));
        assert!(t.take(1, Want::NoFile));
        assert!(!t.take(1, Want::NoFile), "busy");
        t.release(1, true, false);
        assert_eq!(t.files_present(), 1);
        assert!(!t.take(1, Want::NoFile));
        assert!(t.take(1, Want::File));
        t.release(1, false, false);
        assert_eq!(t.files_present(), 0);
        assert!(t.take(2, Want::NoDir));
        t.release(2, false, true);
        assert_eq!((t.dirs_present(), t.has_dir(2)), (1, true));
    }
}
