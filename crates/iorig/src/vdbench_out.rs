//! `--vdbench-out DIR`: vdbench's `flatfile.html` and `summary.html` of a
//! stored run, written into DIR (made when missing).

use crate::Failure;
use iorig_store::{RunId, Store};
use std::path::Path;

/// DIR is a directory or a new name in an existing one (nothing written).
pub fn check(dir: &Path) -> Result<(), Failure> {
    Ok(iorig_outfile::check_dir("--vdbench-out", dir)?)
}

pub fn write(store: &Store, run: RunId, dir: &Path) -> Result<(), Failure> {
    let e = iorig_report::export::export_vdbench(store, run)
        .map_err(|e| Failure::runtime(e.to_string()))?;
    if !dir.is_dir() {
        iorig_outfile::create_dir("--vdbench-out", dir)?;
    }
    crate::store::write_output(
        "--vdbench-out",
        &dir.join("flatfile.html"),
        e.flatfile.as_bytes(),
    )?;
    crate::store::write_output(
        "--vdbench-out",
        &dir.join("summary.html"),
        e.summary.as_bytes(),
    )
}
