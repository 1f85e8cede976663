//! The store end to end (schema, round trips, kill safety, PostgreSQL): one
//! test crate, so the suite links one binary instead of one per file.

mod common;
mod kill_safety;
mod postgres;
mod roundtrip;
mod schema;
