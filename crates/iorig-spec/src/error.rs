use thiserror::Error;

/// Everything that can be wrong with a workload before any I/O happens.
///
/// Each message names the offending value and says how to fix it, because the CLI
/// prints it as the one line the user sees before exiting with code 2.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum SpecError {
    #[error("bad size '{value}': {why} (use e.g. 512, 4k, 64m, 10g or 1t)")]
    BadSize { value: String, why: String },
    #[error("bad duration '{value}': {why} (use e.g. 500ms, 30s, 5m, 2h)")]
    BadDuration { value: String, why: String },
    #[error("{field} = {value} is outside 0-100; give a percentage between 0 and 100")]
    PercentOutOfRange { field: &'static str, value: String },
    #[error("bad {field} '{value}': {why}")]
    BadValue {
        field: &'static str,
        value: String,
        why: String,
    },
    #[error("workload file {path}: {why}")]
    BadFile { path: String, why: String },
    /// A test plan is malformed; `place` is empty, " `[defaults]`" or " step N"
    /// (N counts `[[steps]]` blocks from 1), optionally followed by the label of
    /// the expanded step that failed.
    #[error("plan {path}{place}: {why}")]
    BadPlan {
        path: String,
        place: String,
        why: String,
    },
}

impl SpecError {
    pub(crate) fn bad(field: &'static str, value: impl ToString, why: impl ToString) -> Self {
        SpecError::BadValue {
            field,
            value: value.to_string(),
            why: why.to_string(),
        }
    }
}
