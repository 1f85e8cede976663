//! A tree's directories opened beneath its anchor and never through a
//! symbolic link. The anchor is opened once (a link naming the anchor
//! itself is the user's choice and is followed); every directory below it
//! is opened relative to the anchor with `RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS` (or, on kernels before 5.6, one `O_NOFOLLOW` level
//! at a time), and operations name their entry relative to the descriptor
//! of its leaf directory. So a link planted inside the tree, or a level
//! directory swapped for another one during a run, never leads iorig to
//! anything outside the directories it made.
//!
//! The descriptor of the anchor also holds the run's lock on the tree
//! (`flock`), so two runs never work on one tree at once.

use super::tree::Tree;
use crate::EngineError;
use rustix::fs::{Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Directories are opened readable (for listing). openat2's
/// RESOLVE_NO_SYMLINKS refuses a link anywhere on the way with ELOOP
/// (O_NOFOLLOW there would turn a link at the end into ENOTDIR); the
/// fallback adds O_NOFOLLOW at each level.
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// The anchor of a tree and the descriptors of its leaf directories.
#[derive(Debug)]
pub(crate) struct Beneath {
    anchor: OwnedFd,
    path: PathBuf,
    /// Leaf directories opened so far, kept open for the run (as many as
    /// the open-files limit comfortably allows; the rest are opened per
    /// operation).
    leaves: Vec<OnceLock<OwnedFd>>,
}

/// A directory's descriptor: kept by [`Beneath`], or opened for one
/// operation.
pub(crate) enum DirFd<'a> {
    Kept(BorrowedFd<'a>),
    Own(OwnedFd),
}

impl AsFd for DirFd<'_> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            DirFd::Kept(fd) => *fd,
            DirFd::Own(fd) => fd.as_fd(),
        }
    }
}

/// Leaf descriptors a tree keeps open: a quarter of the open-files limit,
/// so workers' files and the rest of the process keep room.
fn kept_leaves(used_leaves: u64) -> usize {
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .unwrap_or(1 << 20);
    used_leaves.min(soft / 4).min(1 << 16) as usize
}

impl Beneath {
    /// Opens the anchor of `tree`.
    pub fn open(tree: &Tree) -> Result<Beneath, EngineError> {
        let anchor = rustix::fs::open(
            &tree.anchor,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| EngineError::Io {
            what: format!("opening the anchor {}", tree.anchor.display()),
            source: e.into(),
        })?;
        Ok(Beneath::with(anchor, tree))
    }

    fn with(anchor: OwnedFd, tree: &Tree) -> Beneath {
        Beneath {
            anchor,
            path: tree.anchor.clone(),
            leaves: (0..kept_leaves(tree.used_leaf_dirs()))
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    /// The same anchor for another tree (an earlier shape being removed):
    /// the descriptor is shared, and so is the lock.
    pub fn for_tree(&self, tree: &Tree) -> Result<Beneath, EngineError> {
        let anchor =
            rustix::io::fcntl_dupfd_cloexec(&self.anchor, 0).map_err(|e| EngineError::Io {
                what: format!("opening the anchor {}", self.path.display()),
                source: e.into(),
            })?;
        Ok(Beneath::with(anchor, tree))
    }

    /// Takes the tree for this run: another run holding it is refused.
    /// Advisory (`flock`), so it binds iorig runs; on NFS it works as the
    /// server's locking does.
    pub fn lock(&self) -> Result<(), EngineError> {
        match rustix::fs::flock(&self.anchor, rustix::fs::FlockOperation::NonBlockingLockExclusive)
        {
            Ok(()) => Ok(()),
            Err(Errno::WOULDBLOCK) => Err(EngineError::Usage(format!(
                "another iorig run is using the tree in {}; wait for it to end, or give another --anchor",
                self.path.display()
            ))),
            // A file system without locks: nothing to hold.
            Err(Errno::NOLCK | Errno::OPNOTSUPP | Errno::INVAL) => Ok(()),
            Err(e) => Err(EngineError::Io {
                what: format!("locking the anchor {}", self.path.display()),
                source: e.into(),
            }),
        }
    }

    pub fn anchor(&self) -> BorrowedFd<'_> {
        self.anchor.as_fd()
    }

    /// The anchor's path, for messages.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the directory `rel` (relative to the anchor; empty for the
    /// anchor itself) without crossing a link or leaving the anchor.
    pub fn dir(&self, rel: &Path) -> std::io::Result<OwnedFd> {
        if rel.as_os_str().is_empty() {
            return Ok(rustix::io::fcntl_dupfd_cloexec(&self.anchor, 0)?);
        }
        let mut tries = 0;
        loop {
            match rustix::fs::openat2(
                &self.anchor,
                rel,
                DIR_FLAGS,
                Mode::empty(),
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS,
            ) {
                // A rename elsewhere in the file system raced the lookup.
                Err(Errno::AGAIN) if tries < 8 => tries += 1,
                Err(Errno::NOSYS) => return self.dir_by_levels(rel),
                r => return Ok(r?),
            }
        }
    }

    /// `dir` for kernels without openat2: one level at a time.
    fn dir_by_levels(&self, rel: &Path) -> std::io::Result<OwnedFd> {
        let mut at = rustix::io::fcntl_dupfd_cloexec(&self.anchor, 0)?;
        for part in rel.components() {
            let std::path::Component::Normal(name) = part else {
                return Err(std::io::Error::other("not a name below the anchor"));
            };
            at = rustix::fs::openat(&at, name, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())?;
        }
        Ok(at)
    }

    /// The descriptor of leaf directory `leaf` of `tree`.
    pub fn leaf(&self, tree: &Tree, leaf: u64) -> std::io::Result<DirFd<'_>> {
        if tree.shape.depth == 0 {
            return Ok(DirFd::Kept(self.anchor.as_fd()));
        }
        let Some(cell) = self.leaves.get(leaf as usize) else {
            return Ok(DirFd::Own(self.dir(&tree.leaf_rel(leaf))?));
        };
        if let Some(fd) = cell.get() {
            return Ok(DirFd::Kept(fd.as_fd()));
        }
        let fd = self.dir(&tree.leaf_rel(leaf))?;
        Ok(DirFd::Kept(cell.get_or_init(|| fd).as_fd()))
    }
}

impl Beneath {
    /// [`Beneath::leaf`] of the leaf holding `slot`, a failure as one line
    /// naming `op` and the directory.
    pub fn leaf_of_slot(&self, tree: &Tree, slot: u64, op: &str) -> Result<DirFd<'_>, String> {
        let leaf = tree.leaf_of(slot);
        self.leaf(tree, leaf)
            .map_err(|e| format!("{op} {}: {}", tree.leaf_path(leaf).display(), explain(e)))
    }
}

/// What a failed lookup of a tree's directory means, for the user.
pub(crate) fn explain(e: std::io::Error) -> std::io::Error {
    match e.raw_os_error().map(Errno::from_raw_os_error) {
        Some(Errno::LOOP | Errno::XDEV) => std::io::Error::other(
            "a symbolic link stands in the tree (iorig does not follow links inside its tree; remove it, or use another anchor)",
        ),
        Some(Errno::NOTDIR) => std::io::Error::other(
            "something other than a directory (or a symbolic link to one) stands where the tree has a directory (remove it, or use another anchor)",
        ),
        _ => e,
    }
}
