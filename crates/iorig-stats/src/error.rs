use thiserror::Error;

/// Failures of the samplers and of decoding a stored histogram (recording
/// and merging histograms cannot fail).
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
    /// A serialized histogram that is not valid HDR V2.
    #[error("bad serialized histogram: {why}")]
    BadHistogram { why: String },
}
