//! The parameter table against the CLI and the docs: one test crate, so the
//! suite links one binary instead of one per file.

mod docs_keys;
mod flags_and_keys;
