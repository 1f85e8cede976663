use thiserror::Error;

/// Failures of the samplers (the histograms themselves cannot fail).
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StatsError {
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("parsing {path}: {why}")]
    Parse { path: String, why: String },
    #[error("{call}: {source}")]
    Sys {
        call: &'static str,
        source: std::io::Error,
    },
}
