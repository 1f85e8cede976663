//! `ReportError`: why a report could not be made. Every message is one line.

use thiserror::Error;

/// Failures of report building.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ReportError {
    /// Reading the result store failed.
    #[error("{0}")]
    Store(#[from] iorig_store::StoreError),
    /// The run asked for is not in the store.
    #[error("no run {0} in the result store")]
    NoSuchRun(i64),
    /// A chart could not be drawn (plotters refused the data or the layout).
    #[error("drawing chart {chart}: {why}")]
    Chart { chart: String, why: String },
    /// An SVG could not be turned into a PNG.
    #[error("rendering PNG: {0}")]
    Png(String),
    /// Writing an export failed (CSV, XLSX, JSON).
    #[error("export: {0}")]
    Export(String),
    /// Reading or writing a file failed.
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    /// Bad input: what was asked cannot be drawn (the message says what to
    /// give instead).
    #[error("{0}")]
    Usage(String),
    /// What the store holds could not be read back (stored JSON).
    #[error("{0}")]
    Unreadable(String),
    /// A comparison needs at least one run.
    #[error("nothing to compare: no runs given")]
    NothingToCompare,
}
