//! One CSV row per interval (docs/csv.md).

use iorig_result::Interval;
use iorig_stats::OpSummary;

const OPS: [&str; 3] = ["read", "write", "total"];
const OP_FIELDS: [&str; 13] = [
    "ops",
    "bytes",
    "iops",
    "bw_bytes_per_s",
    "lat_min_ns",
    "lat_mean_ns",
    "lat_stddev_ns",
    "lat_max_ns",
    "lat_p50_ns",
    "lat_p90_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "lat_p99_99_ns",
];

pub fn header() -> String {
    let mut cols = vec!["t_s".to_string(), "duration_s".into(), "warmup".into()];
    for op in OPS {
        for f in OP_FIELDS {
            cols.push(format!("{op}_{f}"));
        }
    }
    for c in [
        "cpu_usr_pct",
        "cpu_sys_pct",
        "device_util_pct",
        "device_queue_depth",
        "device_read_await_ns",
        "device_write_await_ns",
        "errors",
    ] {
        cols.push(c.into());
    }
    cols.join(",")
}

fn op_cells(s: &OpSummary, out: &mut Vec<String>) {
    let l = &s.lat_ns;
    out.push(s.ops.to_string());
    out.push(s.bytes.to_string());
    out.push(format!("{:.3}", s.iops));
    out.push(format!("{:.1}", s.bw_bytes_per_s));
    for v in [
        l.min, l.mean, l.stddev, l.max, l.p50, l.p90, l.p99, l.p99_9, l.p99_99,
    ] {
        out.push(v.to_string());
    }
}

pub fn row(i: &Interval) -> String {
    let mut out = vec![
        format!("{:.3}", i.t_s),
        format!("{:.3}", i.duration_s),
        i.warmup.to_string(),
    ];
    for s in [&i.read, &i.write, &i.total] {
        op_cells(s, &mut out);
    }
    out.push(format!("{:.2}", i.cpu.usr_pct));
    out.push(format!("{:.2}", i.cpu.sys_pct));
    match &i.device {
        Some(d) => {
            out.push(format!("{:.2}", d.util_pct));
            out.push(format!("{:.3}", d.queue_depth));
            out.push(d.read_await_ns.to_string());
            out.push(d.write_await_ns.to_string());
        }
        None => out.extend(std::iter::repeat_n(String::new(), 4)),
    }
    out.push(i.errors.to_string());
    out.join(",")
}

#[cfg(test)]
mod tests {
    #[test]
    fn header_has_every_column_once() {
        let h = super::header();
        let cols: Vec<&str> = h.split(',').collect();
        let unique: std::collections::HashSet<_> = cols.iter().collect();
        assert_eq!(cols.len(), unique.len());
        assert_eq!(cols.len(), 3 + 3 * 13 + 7);
    }
}
