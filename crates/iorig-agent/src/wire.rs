//! iorig's own types to and from the protobuf messages. Histograms travel
//! in HDR's V2 encoding, so the controller merges exactly what each agent
//! counted.

use crate::proto;
use crate::AgentError;
use iorig_result::live::{IntervalSample, TargetInfo};
use iorig_stats::{CpuUsage, DeviceUsage, IntervalStats, LatencyHistogram, OpStats};

pub fn op_msg(s: &OpStats) -> proto::OpStatsMsg {
    proto::OpStatsMsg {
        ops: s.ops,
        bytes: s.bytes,
        lat_hist: hist_bytes(&s.lat),
        service_hist: hist_bytes(&s.service_lat),
        service_sum_ns: s.service_sum_ns,
    }
}

/// An empty histogram travels as no bytes.
fn hist_bytes(h: &LatencyHistogram) -> Vec<u8> {
    if h.is_empty() {
        Vec::new()
    } else {
        h.to_bytes()
    }
}

fn hist_of(bytes: &[u8]) -> Result<LatencyHistogram, AgentError> {
    if bytes.is_empty() {
        return Ok(LatencyHistogram::new());
    }
    LatencyHistogram::from_bytes(bytes)
        .map_err(|e| AgentError::Runtime(format!("an agent sent a bad histogram: {e}")))
}

pub fn op_of(m: Option<&proto::OpStatsMsg>) -> Result<OpStats, AgentError> {
    let Some(m) = m else {
        return Ok(OpStats::default());
    };
    Ok(OpStats {
        ops: m.ops,
        bytes: m.bytes,
        lat: hist_of(&m.lat_hist)?,
        service_lat: hist_of(&m.service_hist)?,
        service_sum_ns: m.service_sum_ns,
    })
}

pub fn stats_msg(s: &IntervalStats) -> proto::StatsMsg {
    proto::StatsMsg {
        read: Some(op_msg(&s.read)),
        write: Some(op_msg(&s.write)),
        trim: Some(op_msg(&s.trim)),
        errors: s.errors,
        meta: s.meta.iter().map(op_msg).collect(),
        requested: Some(op_msg(&s.requested)),
        sync: Some(op_msg(&s.sync)),
        issue_lag_hist: hist_bytes(&s.issue_lag),
    }
}

pub fn stats_of(m: Option<&proto::StatsMsg>) -> Result<IntervalStats, AgentError> {
    let Some(m) = m else {
        return Ok(IntervalStats::default());
    };
    Ok(IntervalStats {
        read: op_of(m.read.as_ref())?,
        write: op_of(m.write.as_ref())?,
        trim: op_of(m.trim.as_ref())?,
        errors: m.errors,
        meta: m
            .meta
            .iter()
            .map(|o| op_of(Some(o)))
            .collect::<Result<_, _>>()?,
        requested: op_of(m.requested.as_ref())?,
        sync: op_of(m.sync.as_ref())?,
        issue_lag: hist_of(&m.issue_lag_hist)?,
    })
}

pub fn interval_msg(s: &IntervalSample) -> proto::IntervalMsg {
    proto::IntervalMsg {
        index: s.index as u64,
        t_s: s.t_s,
        duration_s: s.duration_s,
        warmup: s.warmup,
        stats: Some(stats_msg(&s.stats)),
        cpu: Some(cpu_msg(&s.cpu)),
        device: s.device.as_ref().map(|d| proto::Device {
            util_pct: d.util_pct,
            queue_depth: d.queue_depth,
            read_await_ns: d.read_await_ns,
            write_await_ns: d.write_await_ns,
        }),
        longest_gap_ns: s.longest_gap_ns,
        gap_start_ns: s.gap_start_ns,
        worker_busy_max_pct: s.worker_busy_max_pct,
    }
}

pub fn cpu_msg(c: &CpuUsage) -> proto::Cpu {
    proto::Cpu {
        usr_pct: c.usr_pct,
        sys_pct: c.sys_pct,
        steal_pct: c.steal_pct,
    }
}

pub fn cpu_of(c: Option<&proto::Cpu>) -> CpuUsage {
    c.map_or_else(CpuUsage::default, |c| CpuUsage {
        usr_pct: c.usr_pct,
        sys_pct: c.sys_pct,
        steal_pct: c.steal_pct,
    })
}

pub fn interval_of(m: &proto::IntervalMsg) -> Result<IntervalSample, AgentError> {
    Ok(IntervalSample {
        index: usize::try_from(m.index).map_err(|_| {
            AgentError::Runtime("an agent sent an interval index out of range".into())
        })?,
        t_s: m.t_s,
        duration_s: m.duration_s,
        warmup: m.warmup,
        stats: stats_of(m.stats.as_ref())?,
        cpu: cpu_of(m.cpu.as_ref()),
        device: m.device.as_ref().map(|d| DeviceUsage {
            util_pct: d.util_pct,
            queue_depth: d.queue_depth,
            read_await_ns: d.read_await_ns,
            write_await_ns: d.write_await_ns,
        }),
        longest_gap_ns: m.longest_gap_ns,
        gap_start_ns: m.gap_start_ns,
        worker_busy_max_pct: m.worker_busy_max_pct,
    })
}

pub fn target_msg(t: &TargetInfo) -> proto::Target {
    proto::Target {
        path: t.path.clone(),
        kind: t.kind.as_str().to_string(),
        size_bytes: t.size_bytes,
        device: t.device.clone().unwrap_or_default(),
    }
}

pub fn target_of(t: &proto::Target) -> Result<TargetInfo, AgentError> {
    Ok(TargetInfo {
        path: t.path.clone(),
        kind: t.kind.parse().map_err(|_| {
            AgentError::Runtime(format!("an agent sent an unknown target kind '{}'", t.kind))
        })?,
        size_bytes: t.size_bytes,
        device: (!t.device.is_empty()).then(|| t.device.clone()),
        // The agent drops its targets' pages itself; it does not say so.
        cache: iorig_result::live::CacheState::Untouched,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn stats_from(lats: &[u64], meta: bool) -> IntervalStats {
        let mut s = IntervalStats::default();
        for (i, &l) in lats.iter().enumerate() {
            let op = if i % 3 == 0 {
                &mut s.write
            } else {
                &mut s.read
            };
            op.ops += 1;
            op.bytes += 4096;
            op.lat.record(l);
            op.service_sum_ns += l / 2;
            if i % 2 == 0 {
                s.issue_lag.record(l / 100);
            }
        }
        if meta {
            s.meta.resize_with(4, OpStats::default);
            s.meta[2].ops = 7;
            s.meta[2].lat.record(1234);
        }
        s
    }

    proptest! {
        // What travels is what was counted: every count, byte and
        // histogram bucket survives the trip, so merges at the controller
        // equal merges at the source.
        #[test]
        fn stats_survive_the_wire(lats in proptest::collection::vec(1u64..10_000_000_000, 0..300), meta: bool) {
            let s = stats_from(&lats, meta);
            let back = stats_of(Some(&stats_msg(&s))).expect("decodes");
            prop_assert_eq!(back.read.ops, s.read.ops);
            prop_assert_eq!(back.write.bytes, s.write.bytes);
            prop_assert_eq!(back.read.service_sum_ns, s.read.service_sum_ns);
            prop_assert_eq!(back.meta.len(), s.meta.len());
            prop_assert!(back.read.lat.inner() == s.read.lat.inner());
            prop_assert!(back.write.lat.inner() == s.write.lat.inner());
            prop_assert!(back.issue_lag.inner() == s.issue_lag.inner());
            prop_assert_eq!(back.total().lat.value_at_quantile(0.99), s.total().lat.value_at_quantile(0.99));
        }
    }
}
