//! The per-host breakdown of a multi-host run, and the per-job breakdown
//! of a step of several jobs.

use iorig_result::{HostResult, HostStatus, JobResult};

fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// A table of every host's own figures and its timing: the clock offset
/// measured and how far its start was from the common one.
pub fn hosts_lines(hosts: &[HostResult]) -> Vec<String> {
    let width = hosts.iter().map(|h| h.name.len()).max().unwrap_or(4).max(4);
    let mut out = vec![format!(
        "{:<width$} {:<18} {:>10} {:>8} {:>9} {:>9} {:>10} {:>9}",
        "host", "status", "IOPS", "MB/s", "mean ms", "p99 ms", "offset ms", "skew ms"
    )];
    for h in hosts {
        let status = match h.status {
            HostStatus::Ok => "ok".to_string(),
            HostStatus::Lost => format!(
                "lost at interval {}",
                h.lost_at_interval.map_or(0, |i| i + 1)
            ),
        };
        let t = &h.summary.total;
        let skew = h.start_skew_ns.map_or("-".to_string(), |s| {
            format!(
                "{:.3}{}",
                ms(s as f64),
                if h.start_skew_flagged { "!" } else { "" }
            )
        });
        out.push(format!(
            "{:<width$} {:<18} {:>10.1} {:>8.2} {:>9.3} {:>9.3} {:>+10.3} {:>9}",
            h.name,
            status,
            t.iops,
            t.bw_bytes_per_s / 1e6,
            ms(t.lat_ns.mean as f64),
            ms(t.lat_ns.p99 as f64),
            ms(h.clock_offset_ns as f64),
            skew
        ));
    }
    out
}

/// A table of every job's own figures in a step of several jobs.
pub fn jobs_lines(jobs: &[JobResult]) -> Vec<String> {
    let width = jobs.iter().map(|j| j.name.len()).max().unwrap_or(3).max(3);
    let mut out = vec![format!(
        "{:<width$} {:>10} {:>10} {:>8} {:>9} {:>9} {:>9}",
        "job", "read IOPS", "write IOPS", "MB/s", "mean ms", "p99 ms", "errors"
    )];
    for j in jobs {
        let s = &j.summary;
        out.push(format!(
            "{:<width$} {:>10.1} {:>10.1} {:>8.2} {:>9.3} {:>9.3} {:>9}",
            j.name,
            s.read.iops,
            s.write.iops,
            s.total.bw_bytes_per_s / 1e6,
            ms(s.total.lat_ns.mean as f64),
            ms(s.total.lat_ns.p99 as f64),
            s.errors
        ));
    }
    out
}
