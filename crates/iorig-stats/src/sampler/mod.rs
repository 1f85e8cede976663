//! Host CPU and block-device counters, sampled at interval boundaries.
//!
//! - [`cpu`]: host-wide CPU usage from `/proc/stat`, to tell whether a result
//!   was limited by the CPU rather than the storage.
//! - [`device`]: `iostat -x` style figures (`%util`, queue depth, read/write
//!   await) of the block devices under the job's files, to see what the
//!   device did, as opposed to the latency the application observed.
//! - [`system`]: facts about the host and the targets (kernel, CPU, device
//!   model, scheduler, filesystem), gathered once per run and stored with it.

pub mod cpu;
pub mod device;
pub mod system;
