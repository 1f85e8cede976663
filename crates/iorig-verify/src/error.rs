use thiserror::Error;

/// Failures of the key map and the journal. A unit that fails its check is not
/// an error of this kind: `check_unit` reports it as a [`crate::UnitError`].
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// A system call on a journal or key-map file failed; `what` names the
    /// operation and the file.
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
    /// A journal that is malformed, not a journal at all, or inconsistent with
    /// itself.
    #[error("{0}")]
    Journal(String),
    /// The caller passed arguments that cannot work (unit size, key lengths).
    #[error("{0}")]
    Usage(String),
}

impl VerifyError {
    pub(crate) fn io(what: impl Into<String>, source: std::io::Error) -> VerifyError {
        VerifyError::Io {
            what: what.into(),
            source,
        }
    }
}
