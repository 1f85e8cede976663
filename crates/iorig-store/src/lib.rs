//! The result store of iorig: every run, its steps, the figures of every
//! interval, the merged latency histograms and the analysis made of them,
//! kept in one SQLite file (`./iorig.db` unless told otherwise) or in a
//! PostgreSQL database a team shares (`postgres://...`, the same schema).
//!
//! Results are written as they arrive, one short transaction per write, in
//! WAL mode, so a crash or `kill -9` loses at most the write in flight and a
//! plan can be resumed from its first incomplete step. Histograms are stored
//! whole (HDR V2), so percentiles over several steps or runs come from exact
//! merges, never from averaging percentiles.
//!
//! The schema is versioned (`PRAGMA user_version`) and only ever extended by
//! appending migrations; a database written by a newer iorig is refused.

mod db;
mod error;
mod find;
mod location;
mod push;
mod schema;
mod store;
mod stored;
mod types;

pub use error::StoreError;
pub use find::RunFilter;
pub use iorig_spec::{check_label, LABEL_KEY_MAX_BYTES, LABEL_VALUE_MAX_BYTES};
pub use location::{looks_like_pg_url, redact_args, redact_urls, Location, PgUrl, NOT_UTF8_URL};
pub use push::Pushed;
pub use schema::{Migration, APPLICATION_ID, MIGRATIONS, PG_BASELINE_VERSION, SCHEMA_VERSION};
pub use store::Store;
pub use stored::{IntervalPages, StoredRun, StoredStep, INTERVAL_PAGE};
pub use types::{interval_docs, op_parts};
pub use types::{
    AnalysisRow, ExternalRow, HistKind, IntervalRow, NewRun, NewStep, NewTraceAnalysis, Op,
    RunDetail, RunId, RunKind, RunRow, RunStatus, StepId, StepRole, StepRow, StepStatus,
    TargetFactsRow, TraceAnalysisRow,
};
