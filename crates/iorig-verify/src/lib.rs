//! Data validation for iorig (in the spirit of vdbench `-v` / `-j`).
//!
//! Every block the benchmark writes is *stamped*: a 32-byte header naming the
//! target, the offset and a small per-unit "key" (the write generation,
//! 1..=127), followed by a payload that is a pure function of those three. A
//! read can therefore be checked without keeping a copy of the data: the
//! benchmark only remembers the expected key per unit, about one byte per
//! unit, in a [`KeyMap`]. A "unit" is the workload's smallest block size
//! (a multiple of 512 bytes), so every I/O covers whole units.
//!
//! - [`mod@format`]: stamping a unit and classifying what a read found
//!   ([`check_unit`], [`ErrorKind`]).
//! - [`keymap`]: the shared expected-key map with per-unit busy bits, so two
//!   in-flight I/Os never touch the same unit (the expectation would be
//!   ambiguous otherwise).
//! - [`journal`]: an on-disk copy of the key map plus an intent/done log, so
//!   that after a crash every unit can still be re-checked; writes in flight at
//!   the crash may hold either their old or their new key.

mod error;
pub mod format;
pub mod journal;
pub mod keymap;

pub use error::VerifyError;
pub use format::{
    check_pattern, check_self, check_unit, fill_pattern, next_key, payload_matches, stamp_unit,
    ErrorKind, Expected, UnitError, HEADER_BYTES, MAX_KEY, SECTOR_BYTES,
};
pub use journal::{InFlight, Journal, JournalState, JournalTarget, WriteRecord};
pub use keymap::{KeyMap, UNKNOWN};
