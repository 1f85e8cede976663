use thiserror::Error;

/// Errors of profiling: unreadable or malformed snapshots, bad rule files.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum ProfileError {
    /// A file or directory could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A diskstats snapshot that does not parse.
    #[error("{path}: {why}")]
    Snapshot { path: String, why: String },
    /// A rule file that does not parse or names unknown figures.
    #[error("rules {path}: {why}")]
    Rules { path: String, why: String },
    /// A request that cannot be met (unknown device, empty recording, ...).
    #[error("{0}")]
    Usage(String),
}
