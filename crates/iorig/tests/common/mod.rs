//! Helpers shared by the integration tests that run the real binary.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The binary, with no result store inherited from the environment.
pub fn iorig() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iorig"));
    c.env_remove("IORIG_DB");
    c
}

/// A temporary directory under the target directory (O_DIRECT-capable in CI,
/// unlike a tmpfs /tmp).
pub fn tmp() -> tempfile::TempDir {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

/// Runs the binary in `dir`.
pub fn run(args: &[&str], dir: &Path) -> Output {
    iorig().args(args).current_dir(dir).output().unwrap()
}
