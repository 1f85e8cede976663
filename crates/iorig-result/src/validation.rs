//! What data validation (`--verify`) checked and found, as results carry it.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A step's data validation (`summary.validation`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Validation {
    pub unit_bytes: u64,
    pub units_checked: u64,
    pub blocks_checked: u64,
    pub pre_reads: u64,
    pub after_reads: u64,
    pub errors: u64,
    /// Error count per kind (`lost_write`, `torn_write`, ...).
    pub errors_by_kind: BTreeMap<String, u64>,
    pub stopped_at_max_errors: bool,
    /// With `--journal`: time spent writing and syncing journal records and
    /// the batches synced. Not part of any I/O's latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal_batches: Option<u64>,
    /// The first errors in full.
    #[serde(default)]
    pub error_list: Vec<ValidationErrorEntry>,
}

/// One validation error in full.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ValidationErrorEntry {
    pub kind: String,
    /// Seconds from the start of the run.
    pub t_s: f64,
    pub target: String,
    pub offset_bytes: u64,
    pub expected_key: Option<u8>,
    /// Also accepted: the key of a write in flight at a crash.
    pub expected_alt_key: Option<u8>,
    pub found_key: Option<u8>,
    pub found_target: Option<String>,
    pub found_offset_bytes: Option<u64>,
    /// When the block found was written (header time, ns since the epoch).
    pub found_written_unix_ns: Option<u64>,
    pub detail: String,
}
