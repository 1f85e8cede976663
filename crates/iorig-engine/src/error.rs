use thiserror::Error;

/// Everything that can go wrong in the engine crate.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum EngineError {
    /// The request cannot be carried out as asked; nothing was written. The CLI
    /// exits 2 with this message.
    #[error("{0}")]
    Usage(String),
    /// A target could not be prepared or opened.
    #[error("{path}: {why}")]
    Target { path: String, why: String },
    /// The engine itself failed (not an individual I/O).
    #[error("{engine} engine: {why}")]
    Engine { engine: &'static str, why: String },
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

impl EngineError {
    /// True when the user asked for something impossible (exit code 2).
    pub fn is_usage(&self) -> bool {
        matches!(self, EngineError::Usage(_))
    }
}
