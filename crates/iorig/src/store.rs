//! Where the result store is and how a command opens it, and the checks on
//! every other file a command writes.

use crate::Failure;
use iorig_run::store::{open_store, store_error, Origin};
use iorig_run::StoreWriter;
use iorig_store::{Location, Store};
use std::path::Path;

/// `--db PATH|URL` and `--no-db`, as a command gave them.
pub struct StoreChoice<'a> {
    pub db: Option<&'a Location>,
    pub no_db: bool,
}

/// The store: `--db`, else `IORIG_DB`, else `./iorig.db`.
pub fn location(flag: Option<&Location>) -> Result<Location, Failure> {
    Location::chosen(flag).map_err(Failure::usage)
}

/// The command line a run records: a store URL's password left out.
pub fn origin() -> Origin {
    Origin {
        command_line: iorig_store::redact_args(
            std::env::args_os().map(|a| a.to_string_lossy().into_owned()),
        ),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
    }
}

/// The writer a run records into (nothing with `--no-db`).
pub fn writer(choice: StoreChoice<'_>) -> Result<StoreWriter, Failure> {
    if choice.no_db {
        return Ok(StoreWriter::none());
    }
    StoreWriter::at(&location(choice.db)?, origin())
}

/// An output file (`--json`, `--csv`, `--out`, ...) must be a regular file
/// or a new path in an existing directory: bad input, exit 2, before
/// anything is written.
pub fn check_output(flag: &str, path: &Path) -> Result<(), Failure> {
    iorig_outfile::check_writable(flag, path).map(drop)?;
    Ok(())
}

/// `--json FILE` checked as an output file (`-` is stdout).
pub fn check_json(json: Option<&str>) -> Result<(), Failure> {
    match json.filter(|j| *j != "-") {
        Some(j) => check_output("--json", Path::new(j)),
        None => Ok(()),
    }
}

/// An output directory (`report --out DIR`, `--record DIR`) must be a
/// directory or a new path in an existing one.
pub fn check_output_dir(flag: &str, path: &Path) -> Result<(), Failure> {
    Ok(iorig_outfile::check_dir_writable(flag, path)?)
}

/// Writes a whole output file atomically (temp file beside it, renamed).
pub fn write_output(flag: &str, path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    Ok(iorig_outfile::write_atomic(flag, path, bytes)?)
}

/// Checks the store as a run would use it, writing nothing (dry runs): a
/// path's checks, or a database reached and looked at.
pub fn check_store(flag: Option<&Location>) -> Result<(), Failure> {
    let at = location(flag)?;
    Store::check_at(&at).map_err(|e| store_error(&at, e))
}

/// Opens an existing store to change it (`runs label/delete`, `plan
/// resume`); a missing file is bad input and is not created.
pub fn open_existing(flag: Option<&Location>) -> Result<Store, Failure> {
    let at = location(flag)?;
    iorig_run::store::must_exist(&at)?;
    open_store(&at)
}

/// Opens the store to add to it, creating it when missing (`trace
/// analyse`, once its input was good).
pub fn open_for_write(flag: Option<&Location>) -> Result<Store, Failure> {
    open_store(&location(flag)?)
}

/// Opens an existing store read-only (`runs list/show`, `report`, `export`,
/// `compare`): nothing is created or written, whatever the path holds (the
/// store refuses a missing file itself).
pub fn open_read_only(flag: Option<&Location>) -> Result<Store, Failure> {
    let at = location(flag)?;
    Store::open_read_only_at(&at).map_err(|e| store_error(&at, e))
}
