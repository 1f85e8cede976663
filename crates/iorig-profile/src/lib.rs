//! `iorig profile`: what a running system's storage is asked to do.
//!
//! The kernel counts, per block device, operations, sectors, time spent and
//! time in queue (`/proc/diskstats`). Two snapshots and the time between them
//! give an interval's IOPS, bandwidth, average I/O size, read share, queue
//! depth, await and utilisation, the figures `iostat -x` shows. This crate
//! turns a series of snapshots, read live or from a recording, into those
//! figures per device and in total, summarises them (mean, p95, peak), judges
//! them with rule sets kept as data, and writes a workload that replays the
//! measured mix on candidate storage.

pub mod devices;
pub mod emit;
mod error;
pub mod figures;
pub mod profile;
pub mod rules;
pub mod snapshot;

pub use devices::{Covered, DeviceClass, Selection};
pub use emit::{workload_toml, EmitRate};
pub use error::ProfileError;
pub use figures::{Figure, Figures};
pub use profile::{FigureStat, IntervalFigures, Profile, ProfileBuilder, Summary};
pub use snapshot::{DeviceCounters, Snapshot};
