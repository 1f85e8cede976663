/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    /// A record that cannot be taken, with its 1-based number.
    #[error("{path}: record {record}: {why}")]
    Record {
        path: String,
        record: u64,
        why: String,
    },
    /// The content is none of the known formats.
    #[error("{path}: {why}")]
    Format { path: String, why: String },
    /// The analysis would not fit its limits.
    #[error("{0}")]
    Limit(String),
}
