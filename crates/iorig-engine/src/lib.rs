//! The part of iorig that does I/O: it opens and checks targets, drives them
//! through an [`IoEngine`] (io_uring, psync, null, or a fault-injecting engine for
//! tests) from worker threads, paces them under a rate limit, and emits one
//! [`IntervalSample`](run::IntervalSample) per reporting interval on a channel.
//!
//! The engine never prints and never touches the result store; `iorig-run`
//! turns its samples into events for the store writer and the front end.

pub mod buffers;
mod clock;
mod collect;
pub mod data;
pub mod engine;
mod error;
pub mod fs;
pub mod gen;
pub mod iolog;
mod pool;
pub mod probe;
pub mod replay;
pub mod run;
pub mod target;
pub mod verify;
mod worker;

pub use engine::{Completion, IoEngine, IoRequest, OpKind};
pub use error::EngineError;
