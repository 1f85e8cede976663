//! What `iorig profile` stores as a step's summary: statistics of the
//! figures it observed, over all covered devices and per device.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Mean, p95 and peak of one observed figure; `None` when never observed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FigureStat {
    pub mean: Option<f64>,
    pub p95: Option<f64>,
    pub peak: Option<f64>,
}

/// A profile step's summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileSummary {
    /// `live` (/proc/diskstats) or `recorded` (a recording replayed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The sampling interval of a live profile.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_s: Option<f64>,
    pub duration_s: f64,
    /// Intervals observed.
    pub intervals: u64,
    /// Figure name (`write_iops`, `read_bw_bytes_per_s`, ...) → statistics
    /// over the covered devices together.
    pub total: BTreeMap<String, FigureStat>,
    /// Device → figure name → statistics.
    pub devices: BTreeMap<String, BTreeMap<String, FigureStat>>,
}

/// One interval of a stored profile, as the `profile_intervals` finding
/// holds it: every figure of the covered devices together (`total`) and of
/// each device, `None` where the interval has no value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileInterval {
    /// Seconds from the profile's start to the end of the interval.
    pub t_s: f64,
    pub duration_s: f64,
    pub total: BTreeMap<String, Option<f64>>,
    pub devices: BTreeMap<String, BTreeMap<String, Option<f64>>>,
}

impl ProfileInterval {
    /// The intervals of a stored `profile_intervals` finding.
    pub fn list_from(v: &serde_json::Value) -> Result<Vec<ProfileInterval>, serde_json::Error> {
        Vec::<ProfileInterval>::deserialize(v)
    }
}
