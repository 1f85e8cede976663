//! Where the result store is and how a command opens it, and the checks on
//! every other file a command writes.

use crate::Failure;
use iorig_run::store::{open_store, store_error, Origin};
use iorig_run::StoreWriter;
use iorig_store::Store;
use std::path::{Path, PathBuf};

/// `--db PATH` and `--no-db`, as a command gave them.
pub struct StoreChoice<'a> {
    pub db: Option<&'a Path>,
    pub no_db: bool,
}

/// The store path: `--db`, else `IORIG_DB`, else `./iorig.db`.
pub fn db_path(flag: Option<&Path>) -> PathBuf {
    if let Some(p) = flag {
        return p.to_path_buf();
    }
    match std::env::var_os("IORIG_DB") {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from("iorig.db"),
    }
}

/// The writer a run records into (nothing with `--no-db`).
pub fn writer(choice: StoreChoice<'_>) -> Result<StoreWriter, Failure> {
    if choice.no_db {
        return Ok(StoreWriter::none());
    }
    let origin = Origin {
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    Ok(StoreWriter::at(&db_path(choice.db), origin)?)
}

/// An output file (`--json`, `--csv`, `--out`, ...) must be a regular file
/// or a new path in an existing directory: bad input, exit 2, before
/// anything is written.
pub fn check_output(flag: &str, path: &Path) -> Result<(), Failure> {
    iorig_outfile::check_file(flag, path).map(drop)?;
    Ok(())
}

/// An output directory (`report --out DIR`, `--record DIR`) must be a
/// directory or a new path in an existing one.
pub fn check_output_dir(flag: &str, path: &Path) -> Result<(), Failure> {
    Ok(iorig_outfile::check_dir(flag, path)?)
}

/// Writes a whole output file atomically (temp file beside it, renamed).
pub fn write_output(flag: &str, path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    Ok(iorig_outfile::write_atomic(flag, path, bytes)?)
}

/// Checks the store path as a run would use it, writing nothing (dry runs).
pub fn check_store(flag: Option<&Path>) -> Result<(), Failure> {
    let path = db_path(flag);
    Store::check(&path).map_err(|e| store_error(&path, e).into())
}

/// Opens an existing store to change it (`runs label/delete`, `plan
/// resume`); a missing file is bad input and is not created.
pub fn open_existing(flag: Option<&Path>) -> Result<Store, Failure> {
    let path = db_path(flag);
    if std::fs::symlink_metadata(&path).is_err() {
        return Err(Failure::usage(format!(
            "no result store at {}; run something first, or give --db PATH (or IORIG_DB)",
            path.display()
        )));
    }
    Ok(open_store(&path)?)
}

/// Opens the store to add to it, creating it when missing (`trace
/// analyse`, once its input was good).
pub fn open_for_write(flag: Option<&Path>) -> Result<Store, Failure> {
    let path = db_path(flag);
    Ok(open_store(&path)?)
}

/// Opens an existing store read-only (`runs list/show`, `report`, `export`,
/// `compare`): nothing is created or written, whatever the path holds (the
/// store refuses a missing file itself).
pub fn open_read_only(flag: Option<&Path>) -> Result<Store, Failure> {
    let path = db_path(flag);
    Store::open_read_only(&path).map_err(|e| store_error(&path, e).into())
}
