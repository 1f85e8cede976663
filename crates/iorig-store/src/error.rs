use thiserror::Error;

/// Failures of the result store. Every message is one line.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    #[error("opening result store {path}: {source}")]
    Open {
        path: String,
        source: rusqlite::Error,
    },
    #[error("result store: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("result store: {}", crate::db::pg_message(.0))]
    Postgres(#[from] postgres::Error),
    /// A PostgreSQL store that cannot be reached (the URL without its
    /// password): bad input.
    #[error("cannot connect to the result store {url}: {why}")]
    Connect { url: String, why: String },
    #[error("result store schema version {found} is newer than this iorig knows ({known}); use a newer iorig")]
    NewerSchema { found: i64, known: i64 },
    #[error("{path} is an SQLite database of another program (application_id {application_id:#x}), not an iorig result store")]
    NotIorigDb { path: String, application_id: i64 },
    #[error("{path} holds tables that are not iorig's ({tables}); it is another program's database — give iorig a file of its own with --db")]
    ForeignTables { path: String, tables: String },
    #[error("{path} is not an iorig result store (no iorig schema in it); give the store iorig wrote with --db")]
    NotAStore { path: String },
    /// A file marked as iorig's whose tables are not all there: damaged,
    /// or made to look like a store. Refused, never completed.
    #[error("{path} says it is an iorig result store of schema version {version} but lacks {missing}; it is damaged or not iorig's, and was left as it is — give iorig a store it wrote, or a new path, with --db")]
    Incomplete {
        path: String,
        version: i64,
        missing: String,
    },
    /// The path is not something a store may live in (a device, a FIFO, a
    /// directory, a missing directory): bad input.
    #[error("{0}")]
    Path(String),
    #[error("applying result store schema version {version}: {source}")]
    Migration {
        version: i64,
        source: rusqlite::Error,
    },
    #[error("applying result store schema version {version}: {}", crate::db::pg_message(.source))]
    PgMigration {
        version: i64,
        source: postgres::Error,
    },
    #[error("no run {0} in the result store")]
    NoSuchRun(i64),
    #[error("no step {0} in the result store")]
    NoSuchStep(i64),
    #[error("stored histogram of step {step} ({op} {kind}) is unreadable: {why}")]
    BadHistogram {
        step: i64,
        op: String,
        kind: String,
        why: String,
    },
    #[error("unexpected {column} value {value:?} in the result store")]
    BadValue { column: &'static str, value: String },
    /// A label the store does not take (see [`crate::check_label`]).
    #[error("label '{key}': {why}")]
    BadLabel { key: String, why: String },
    #[error("encoding a result as JSON: {0}")]
    Json(#[source] serde_json::Error),
}

impl StoreError {
    /// A write refused because the row it names (a run, a step) is missing.
    pub(crate) fn is_foreign_key_violation(&self) -> bool {
        match self {
            StoreError::Sqlite(rusqlite::Error::SqliteFailure(f, _)) => {
                f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY
            }
            StoreError::Postgres(e) => {
                e.code() == Some(&postgres::error::SqlState::FOREIGN_KEY_VIOLATION)
            }
            _ => false,
        }
    }
}
