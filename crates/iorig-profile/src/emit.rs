//! A workload TOML that replays a profile's measured mix on other storage.
//!
//! What the counters tell: the read share, the average size per direction,
//! the rate and the queue depth. What they do not: whether I/O was random or
//! sequential, and how sizes were spread around their average. The workload
//! says so in its comments. An average size becomes a mix of the two
//! neighbouring multiples of 4 KiB whose mean is that average (6 KiB → 4k and
//! 8k, half each), so the bytes per I/O match and direct I/O stays aligned.

use crate::figures::Figure;
use crate::profile::Profile;
use crate::ProfileError;
use iorig_spec::{StrOrNum, WorkloadFile};
use std::fmt::Write as _;

/// Which rate the workload runs at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmitRate {
    Mean,
    Peak,
}

impl EmitRate {
    pub fn parse(s: &str) -> Option<EmitRate> {
        match s {
            "mean" => Some(EmitRate::Mean),
            "peak" => Some(EmitRate::Peak),
            _ => None,
        }
    }
}

/// The granule of emitted block sizes.
const GRANULE_BYTES: f64 = 4096.0;

/// A weighted block-size spec (`4k:50,8k:50`) whose mean is `avg_bytes`.
pub fn bs_for_average(avg_bytes: f64) -> String {
    let avg = avg_bytes.max(GRANULE_BYTES);
    let lo = (avg / GRANULE_BYTES).floor() * GRANULE_BYTES;
    let hi = lo + GRANULE_BYTES;
    let w_hi = ((avg - lo) / GRANULE_BYTES * 100.0).round() as u32;
    let size = |b: f64| format!("{}k", (b / 1024.0) as u64);
    match w_hi {
        0 => size(lo),
        100 => size(hi),
        w => format!("{}:{},{}:{}", size(lo), 100 - w, size(hi), w),
    }
}

/// The workload TOML for a profile's total. `source` says where the profile
/// came from (a line of the header comment).
pub fn workload_toml(p: &Profile, rate: EmitRate, source: &str) -> Result<String, ProfileError> {
    let stat = |f: Figure| *p.total.get(f);
    let iops = stat(Figure::TotalIops);
    let rate_iops = match rate {
        EmitRate::Mean => iops.mean,
        EmitRate::Peak => iops.peak,
    }
    .unwrap_or(0.0);
    if rate_iops <= 0.0 {
        return Err(ProfileError::Usage(
            "the profile saw no I/O on the covered devices, so there is no mix to replay; profile while the application runs, or name its devices with --device".to_owned(),
        ));
    }
    let read_pct = stat(Figure::ReadPctOps).mean.unwrap_or(0.0);
    let read_avg = stat(Figure::ReadAvgSizeBytes).mean;
    let write_avg = stat(Figure::WriteAvgSizeBytes).mean;
    let qd = stat(Figure::QueueDepth)
        .mean
        .unwrap_or(1.0)
        .round()
        .max(1.0) as u64;
    let kib = |v: Option<f64>| v.map_or("-".to_owned(), |b| format!("{:.1} KiB", b / 1024.0));
    let mut t = String::new();
    let _ = writeln!(t, "# Replays the I/O mix measured by `iorig profile`.");
    let _ = writeln!(t, "# Source: {source}");
    let _ = writeln!(
        t,
        "# Measured (total over covered devices, {:.0} s): {:.0} IOPS mean, {:.0} peak; read {:.1} % of I/Os; average read {}, write {}; queue depth {:.2} mean.",
        p.duration_s(),
        iops.mean.unwrap_or(0.0),
        iops.peak.unwrap_or(0.0),
        read_pct,
        kib(read_avg),
        kib(write_avg),
        stat(Figure::QueueDepth).mean.unwrap_or(0.0),
    );
    let _ = writeln!(
        t,
        "# Not measurable from the counters: random vs sequential (random assumed) and the spread of sizes around their averages."
    );
    let _ = writeln!(t, "# Run it with: iorig run THIS_FILE --target PATH");
    let text = |v: String| Some(StrOrNum::Str(v));
    let (bs, read_bs, write_bs) = match (read_avg, write_avg) {
        (Some(r), Some(w)) => (None, Some(bs_for_average(r)), Some(bs_for_average(w))),
        (Some(one), None) | (None, Some(one)) => (Some(bs_for_average(one)), None, None),
        (None, None) => (None, None, None),
    };
    let w = WorkloadFile {
        // One decimal, as the header says it.
        read: Some(StrOrNum::Float((read_pct * 10.0).round() / 10.0)),
        random: Some(StrOrNum::Int(100)),
        bs: bs.and_then(text),
        read_bs: read_bs.and_then(text),
        write_bs: write_bs.and_then(text),
        rate: Some(StrOrNum::Int(rate_iops.round().max(1.0) as i64)),
        qd: Some(StrOrNum::count(qd)),
        threads: Some(StrOrNum::Int(1)),
        time: text("60s".to_owned()),
        ..WorkloadFile::default()
    };
    let _ = writeln!(
        t,
        "# rate is the {} rate.",
        match rate {
            EmitRate::Mean => "mean",
            EmitRate::Peak => "peak",
        }
    );
    for (k, v) in w.to_pairs() {
        let _ = writeln!(t, "{k} = {v}");
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn averages_become_mixes_with_that_mean() {
        assert_eq!(bs_for_average(4096.0), "4k");
        assert_eq!(bs_for_average(6144.0), "4k:50,8k:50");
        assert_eq!(bs_for_average(5120.0), "4k:75,8k:25");
        assert_eq!(bs_for_average(65536.0), "64k");
        assert_eq!(bs_for_average(1000.0), "4k", "at least one granule");
        assert_eq!(bs_for_average(8191.0), "8k", "rounds to whole percents");
    }
}
