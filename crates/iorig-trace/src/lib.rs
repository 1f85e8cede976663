//! Block traces: what a host asked of its storage, I/O by I/O.
//!
//! - [`read`]: trace files as a stream of [`Record`]s: blktrace's binary
//!   records ([`blk`]), iorig's own binary format ([`own`], also written
//!   here), the CSV of the public MSR Cambridge / SNIA block traces and
//!   fio's iolog (versions 2 and 3), plain, gzip or zstd, told apart by
//!   their content, never unpacked to disk.
//! - [`capture`]: a block device's I/Os from the kernel's blk tracer,
//!   through tracefs, written as blktrace records or iorig's format.
//! - [`analyse`]: what a cache planner asks of a trace: counts and shares,
//!   the hot spot (the fewest blocks that take a share of the accesses) and
//!   the exact LRU hit-ratio curve from reuse distances, with the cache size
//!   a target hit ratio needs.

pub mod analyse;
pub mod blk;
pub mod capture;
mod error;
pub mod own;
pub mod read;
mod stream;
mod table;

pub use analyse::{analyse, analyse_records, Analysis, Options};
pub use error::TraceError;
pub use read::{open, BadRecords, Format, Records};

/// What an I/O did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    Trim,
}

/// One I/O of a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Issue time from the trace's first record (0 for every record of a
    /// format without times, fio's iolog v2).
    pub t_ns: u64,
    pub op: Op,
    /// The device or file, numbered in order of first appearance.
    pub device: u32,
    pub offset_bytes: u64,
    pub size_bytes: u64,
    /// Completion minus issue, when the trace has it (MSR's ResponseTime).
    pub latency_ns: Option<u64>,
}
