//! Measurement for iorig: latency histograms, per-interval statistics, and the
//! host CPU and block-device samplers that run beside the I/O.
//!
//! Latencies are integer nanoseconds recorded into HDR histograms; every total is
//! a merge of histograms, never an average of percentiles. I/O workers record
//! into [`LatencyRecorder`]s (HDR geometry, memory only for the buckets in use),
//! which merge exactly into [`LatencyHistogram`]s.

pub mod analysis;
mod error;
mod hist;
mod interval;
mod recorder;
pub mod sampler;
#[cfg(test)]
mod test_support;

pub use error::StatsError;
pub use hist::{LatSummary, LatencyHistogram};
pub use interval::{IntervalStats, OpStats, OpSummary};
pub use recorder::{LatencyRecorder, WorkerIntervalStats, WorkerOpStats};
pub use sampler::{
    cpu::{CpuSampler, CpuUsage, ThreadUsage},
    device::{device_for_path, DeviceSampler, DeviceUsage, DiskStat},
};
