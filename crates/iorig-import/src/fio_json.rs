//! iorig's measurements in the shape of fio's `--output-format=json`
//! (and `json+`, with latency bins), for the tools that read fio's results
//! (fio-plot, dashboards, CI scripts).
//!
//! What is measured and what is not (docs/fio.md has the table):
//! - `clat_ns` is iorig's latency from the actual submission to the
//!   completion; `lat_ns` counts from the scheduled start under a rate (so
//!   it includes time an I/O waited for the generator: no coordinated
//!   omission), else it equals `clat_ns`. iorig does not time submission
//!   apart: `slat_ns` is all zero with `N` 0.
//! - Percentiles, min, max, mean and stddev come from the job's merged HDR
//!   histogram (3 significant digits), never from averaged figures.
//! - `bw_*`/`iops_*` statistics are over iorig's measured intervals (one
//!   sample each), fio's over its own sampling period.
//! - `iodepth_level` puts every I/O at the job's queue depth per worker;
//!   `short_ios`, `drop_ios` are 0 (not measured).
//! - `usr_cpu`/`sys_cpu` are fio's: the job's own threads' CPU time over
//!   its runtime, percent of one CPU; `ctx`, `minf`, `majf` their context
//!   switches and page faults (getrusage of each worker thread). The
//!   host's CPU (percent of all CPUs) is under `iorig_host_usr_cpu` and
//!   `iorig_host_sys_cpu`.
//! - Percentiles are in fio's order (numeric, not sorted as text).
//! - `disk_util` has each device's mean `util` over the measured intervals;
//!   its counters are 0 (iorig samples rates, not totals, per device).

use iorig_result::Interval;
use iorig_stats::{IntervalStats, LatencyHistogram, OpStats, ThreadUsage};
use serde_json::{json, Map, Value};

/// fio's default percentile list.
pub const PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// One fio job's figures.
pub struct JobFigures<'a> {
    pub name: &'a str,
    pub groupid: u32,
    /// Its options as written (`job options`).
    pub options: &'a [(String, String)],
    /// The measured intervals merged (histograms whole).
    pub stats: &'a IntervalStats,
    /// Its intervals (warmup ones are skipped here).
    pub intervals: &'a [Interval],
    pub runtime_s: f64,
    /// The job's worker threads' rusage over its measured time (None: not
    /// measured, e.g. a result stored before it was).
    pub workers_cpu: Option<ThreadUsage>,
    /// The host's CPU, percent of all CPUs.
    pub host_usr_cpu_pct: f64,
    pub host_sys_cpu_pct: f64,
    pub errors: u64,
    /// Outstanding I/Os per worker.
    pub qd: u32,
    /// The job's latency_target, when it had one.
    pub latency: Option<LatencyTarget>,
}

/// fio's latency_target, latency_percentile and latency_window of a job.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LatencyTarget {
    pub target_ns: u64,
    pub percentile: f64,
    pub window_ns: u64,
}

impl<'a> JobFigures<'a> {
    /// An iorig workload as fio's one job `iorig`: its keys as the job's
    /// options, figures from its merged histograms, intervals and summary.
    pub fn of_workload(
        options: &'a [(String, String)],
        stats: &'a IntervalStats,
        intervals: &'a [Interval],
        summary: &iorig_result::Summary,
        qd: u32,
    ) -> Self {
        JobFigures {
            name: "iorig",
            groupid: 0,
            options,
            stats,
            intervals,
            runtime_s: summary.duration_s,
            workers_cpu: summary.workers_cpu,
            host_usr_cpu_pct: summary.cpu.usr_pct,
            host_sys_cpu_pct: summary.cpu.sys_pct,
            errors: summary.errors,
            qd,
            latency: None,
        }
    }
}

/// A device's mean utilisation over the measured time.
pub struct DiskUtil {
    pub name: String,
    pub util_pct: f64,
}

/// The whole document. `plus`: `json+` (latency bins under `clat_ns` and
/// `lat_ns`).
/// `global`: the `[global]` options (fio's `global options`, left out
/// when empty, as fio does).
pub fn document(
    jobs: &[JobFigures<'_>],
    global: &[(String, String)],
    disks: &[DiskUtil],
    plus: bool,
    unix_ms: u64,
) -> Value {
    let version = format!("iorig-{}", env!("CARGO_PKG_VERSION"));
    let jobs: Vec<Value> = jobs.iter().map(|j| job(j, plus)).collect();
    let disks: Vec<Value> = disks
        .iter()
        .map(|d| {
            json!({
                "name": d.name,
                "read_ios": 0, "write_ios": 0, "read_merges": 0, "write_merges": 0,
                "read_ticks": 0, "write_ticks": 0, "in_queue": 0,
                "util": d.util_pct,
            })
        })
        .collect();
    let mut doc = json!({
        "fio version": version,
        "timestamp": unix_ms / 1000,
        "timestamp_ms": unix_ms,
        "time": "",
        "jobs": jobs,
        "disk_util": disks,
    });
    if !global.is_empty() {
        let mut g = Map::new();
        for (k, v) in global {
            g.insert(k.clone(), Value::String(v.clone()));
        }
        doc["global options"] = Value::Object(g);
    }
    doc
}

/// One host of a multi-host run (fio's `--client`): its job's figures and
/// where it ran.
pub struct ClientFigures<'a> {
    pub hostname: &'a str,
    pub port: u16,
    pub job: JobFigures<'a>,
}

/// The document of a run on several hosts, as fio writes it in client mode:
/// `client_stats` holds each host's job (with `hostname` and `port`), then
/// the merged total as the job "All clients"; there is no `jobs` array.
pub fn client_document(
    clients: &[ClientFigures<'_>],
    all: &JobFigures<'_>,
    plus: bool,
    unix_ms: u64,
) -> Value {
    let mut doc = document(&[], &[], &[], plus, unix_ms);
    let mut stats: Vec<Value> = clients
        .iter()
        .map(|c| {
            let mut j = job(&c.job, plus);
            j["hostname"] = json!(c.hostname);
            j["port"] = json!(c.port);
            j
        })
        .collect();
    let mut total = job(all, plus);
    total["jobname"] = json!("All clients");
    stats.push(total);
    if let Value::Object(m) = &mut doc {
        m.remove("jobs");
        m.insert("client_stats".into(), Value::Array(stats));
    }
    doc
}

fn job(j: &JobFigures<'_>, plus: bool) -> Value {
    let mut opts = Map::new();
    for (k, v) in j.options {
        opts.insert(k.clone(), Value::String(v.clone()));
    }
    let measured: Vec<&Interval> = j.intervals.iter().filter(|i| !i.warmup).collect();
    let runtime_ms = (j.runtime_s * 1e3).round() as u64;
    // fio's job CPU: its threads' time over its runtime, % of one CPU.
    let u = j.workers_cpu.unwrap_or_default();
    let of_runtime = |ns: u64| {
        if j.runtime_s > 0.0 {
            100.0 * ns as f64 / 1e9 / j.runtime_s
        } else {
            0.0
        }
    };
    let (usr_cpu, sys_cpu) = (of_runtime(u.usr_ns), of_runtime(u.sys_ns));
    let read = dir(&j.stats.read, &measured, |i| &i.read, runtime_ms, plus);
    let write = dir(&j.stats.write, &measured, |i| &i.write, runtime_ms, plus);
    let trim = dir(
        &j.stats.trim,
        &measured,
        |i| i.trim.as_ref().unwrap_or(&EMPTY_OP),
        runtime_ms,
        plus,
    );
    let mut all = LatencyHistogram::new();
    all.merge(&j.stats.read.lat);
    all.merge(&j.stats.write.lat);
    all.merge(&j.stats.trim.lat);
    let (lat_ns, lat_us, lat_ms) = latency_buckets(&all);
    let depth = |d: u32| -> Value {
        let mut m = Map::new();
        for (k, lo, hi) in [
            ("1", 1, 1),
            ("2", 2, 3),
            ("4", 4, 7),
            ("8", 8, 15),
            ("16", 16, 31),
            ("32", 32, 63),
            (">=64", 64, u32::MAX),
        ] {
            m.insert(
                k.into(),
                json!(if d >= lo && d <= hi { 100.0 } else { 0.0 }),
            );
        }
        Value::Object(m)
    };
    let sub = |d: u32| -> Value {
        let mut m = Map::new();
        for (k, lo, hi) in [
            ("0", 0, 0),
            ("4", 1, 4),
            ("8", 5, 8),
            ("16", 9, 16),
            ("32", 17, 32),
            ("64", 33, 64),
            (">=64", 65, u32::MAX),
        ] {
            m.insert(
                k.into(),
                json!(if d >= lo && d <= hi { 100.0 } else { 0.0 }),
            );
        }
        Value::Object(m)
    };
    json!({
        "jobname": j.name,
        "groupid": j.groupid,
        "error": if j.errors > 0 { 5 } else { 0 },
        "eta": 0,
        "elapsed": j.runtime_s.round() as u64,
        "job options": Value::Object(opts),
        "read": read,
        "write": write,
        "trim": trim,
        // fsync/fdatasync calls (`fsync`/`fdatasync` in the job file).
        "sync": {
            "total_ios": j.stats.sync.ops,
            "lat_ns": lat_object(&j.stats.sync.lat, true, plus)
        },
        "job_runtime": runtime_ms,
        "usr_cpu": usr_cpu,
        "sys_cpu": sys_cpu,
        "ctx": u.ctx,
        "majf": u.majflt,
        "minf": u.minflt,
        "iodepth_level": depth(j.qd),
        "iodepth_submit": sub(j.qd),
        "iodepth_complete": sub(j.qd),
        "latency_ns": lat_ns,
        "latency_us": lat_us,
        "latency_ms": lat_ms,
        "latency_depth": j.qd,
        // fio keeps the target in ns and the window in µs.
        "latency_target": j.latency.map_or(0, |l| l.target_ns),
        "latency_percentile": j.latency.map_or(100.0, |l| l.percentile),
        "latency_window": j.latency.map_or(0, |l| l.window_ns / 1_000),
        "iorig_host_usr_cpu": j.host_usr_cpu_pct,
        "iorig_host_sys_cpu": j.host_sys_cpu_pct,
    })
}

static EMPTY_OP: iorig_stats::OpSummary = iorig_stats::OpSummary {
    ops: 0,
    bytes: 0,
    iops: 0.0,
    bw_bytes_per_s: 0.0,
    lat_ns: iorig_stats::LatSummary {
        min: 0,
        mean: 0,
        stddev: 0,
        max: 0,
        p50: 0,
        p90: 0,
        p99: 0,
        p99_9: 0,
        p99_99: 0,
    },
    service_lat_ns: None,
};

/// One direction (`read`, `write`, `trim`).
fn dir(
    s: &OpStats,
    measured: &[&Interval],
    pick: impl Fn(&Interval) -> &iorig_stats::OpSummary,
    runtime_ms: u64,
    plus: bool,
) -> Value {
    let secs = runtime_ms as f64 / 1e3;
    let bw_bytes = if secs > 0.0 {
        s.bytes as f64 / secs
    } else {
        0.0
    };
    let iops = if secs > 0.0 { s.ops as f64 / secs } else { 0.0 };
    // The completion latency: from submission. Under a rate the service
    // histogram holds it; otherwise latency already counts from there.
    let clat = if s.service_lat.is_empty() {
        &s.lat
    } else {
        &s.service_lat
    };
    let samples_bw: Vec<f64> = measured
        .iter()
        .map(|i| pick(i).bw_bytes_per_s / 1024.0)
        .collect();
    let samples_iops: Vec<f64> = measured.iter().map(|i| pick(i).iops).collect();
    let (bw_min, bw_max, bw_mean, bw_dev) = stats_of(&samples_bw);
    let (iops_min, iops_max, iops_mean, iops_dev) = stats_of(&samples_iops);
    json!({
        "io_bytes": s.bytes,
        "io_kbytes": s.bytes / 1024,
        "bw_bytes": bw_bytes.round() as u64,
        "bw": (bw_bytes / 1024.0).round() as u64,
        "iops": iops,
        "runtime": if s.ops > 0 { runtime_ms } else { 0 },
        "total_ios": s.ops,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": { "min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0 },
        "clat_ns": lat_object(clat, true, plus),
        "lat_ns": lat_object(&s.lat, false, plus),
        "bw_min": bw_min.round() as u64,
        "bw_max": bw_max.round() as u64,
        "bw_agg": if s.ops > 0 { 100.0 } else { 0.0 },
        "bw_mean": bw_mean,
        "bw_dev": bw_dev,
        "bw_samples": samples_bw.len(),
        "iops_min": iops_min.round() as u64,
        "iops_max": iops_max.round() as u64,
        "iops_mean": iops_mean,
        "iops_stddev": iops_dev,
        "iops_samples": samples_iops.len(),
    })
}

/// min, max, mean, sample standard deviation; zeros for no samples.
fn stats_of(v: &[f64]) -> (f64, f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0, 0.0);
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (min, max, mean, var.sqrt())
}

/// `{min, max, mean, stddev, N[, percentile][, bins]}` from a histogram.
fn lat_object(h: &LatencyHistogram, percentiles: bool, plus: bool) -> Value {
    let n = h.count();
    let inner = h.inner();
    let mut m = Map::new();
    if n == 0 {
        m.insert("min".into(), json!(0));
        m.insert("max".into(), json!(0));
        m.insert("mean".into(), json!(0.0));
        m.insert("stddev".into(), json!(0.0));
        m.insert("N".into(), json!(0));
        return Value::Object(m);
    }
    m.insert("min".into(), json!(inner.min()));
    m.insert("max".into(), json!(inner.max()));
    m.insert("mean".into(), json!(inner.mean()));
    m.insert("stddev".into(), json!(inner.stdev()));
    m.insert("N".into(), json!(n));
    if percentiles {
        let mut p = Map::new();
        for q in PERCENTILES {
            p.insert(format!("{q:.6}"), json!(h.value_at_quantile(q / 100.0)));
        }
        m.insert("percentile".into(), Value::Object(p));
    }
    if plus {
        let mut bins = Map::new();
        for v in inner.iter_recorded() {
            bins.insert(
                inner.highest_equivalent(v.value_iterated_to()).to_string(),
                json!(v.count_at_value()),
            );
        }
        m.insert("bins".into(), Value::Object(bins));
    }
    Value::Object(m)
}

/// fio's latency buckets: the share (%) of I/Os whose latency is at most
/// each bound and above the one before, in ns, µs and ms ranges.
fn latency_buckets(h: &LatencyHistogram) -> (Value, Value, Value) {
    let n = h.count().max(1) as f64;
    let inner = h.inner();
    let share = |lo_ns: u64, hi_ns: u64| -> f64 {
        if h.count() == 0 {
            return 0.0;
        }
        let below = |x: u64| -> u64 {
            if x == 0 {
                0
            } else {
                inner
                    .iter_recorded()
                    .filter(|v| v.value_iterated_to() < x)
                    .map(|v| v.count_at_value())
                    .sum()
            }
        };
        (below(hi_ns).saturating_sub(below(lo_ns))) as f64 * 100.0 / n
    };
    let bounds = [2u64, 4, 10, 20, 50, 100, 250, 500, 750, 1000];
    let mut ns = Map::new();
    let mut prev = 0;
    for b in bounds {
        ns.insert(b.to_string(), json!(share(prev, b)));
        prev = b;
    }
    let mut us = Map::new();
    let mut prev = 1_000;
    for b in bounds {
        let hi = b * 1_000;
        us.insert(b.to_string(), json!(share(prev.min(hi), hi)));
        prev = hi;
    }
    let mut ms = Map::new();
    let mut prev = 1_000_000;
    for b in bounds.iter().copied().chain([2000]) {
        let hi = b * 1_000_000;
        ms.insert(b.to_string(), json!(share(prev.min(hi), hi)));
        prev = hi;
    }
    ms.insert(">=2000".into(), json!(share(2_000_000_000, u64::MAX)));
    (Value::Object(ns), Value::Object(us), Value::Object(ms))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn hist(values: &[u64]) -> LatencyHistogram {
        let mut h = LatencyHistogram::new();
        for v in values {
            h.record(*v);
        }
        h
    }

    #[test]
    fn percentiles_and_buckets_come_from_the_histogram() {
        let mut stats = IntervalStats::default();
        let values: Vec<u64> = (1..=1000).map(|i| i * 1000).collect(); // 1 µs .. 1 ms
        stats.read.lat = hist(&values);
        stats.read.ops = 1000;
        stats.read.bytes = 1000 * 4096;
        let j = JobFigures {
            name: "j",
            groupid: 0,
            options: &[("rw".into(), "randread".into())],
            stats: &stats,
            intervals: &[],
            runtime_s: 2.0,
            workers_cpu: Some(ThreadUsage {
                usr_ns: 500_000_000,
                sys_ns: 1_500_000_000,
                ctx: 7,
                minflt: 11,
                majflt: 1,
            }),
            host_usr_cpu_pct: 1.0,
            host_sys_cpu_pct: 2.0,
            errors: 0,
            qd: 8,
            latency: Some(LatencyTarget {
                target_ns: 2_000_000,
                percentile: 99.9,
                window_ns: 5_000_000_000,
            }),
        };
        let d = document(&[j], &[], &[], true, 1_700_000_000_000);
        // fio's units: the target in ns, the window in µs.
        assert_eq!(d["jobs"][0]["latency_target"], 2_000_000);
        assert_eq!(d["jobs"][0]["latency_window"], 5_000_000);
        assert_eq!(d["jobs"][0]["latency_percentile"], 99.9);
        let r = &d["jobs"][0]["read"];
        assert_eq!(r["total_ios"], 1000);
        assert_eq!(r["io_kbytes"], 4000);
        assert_eq!(r["iops"].as_f64().unwrap(), 500.0);
        let p99 = r["clat_ns"]["percentile"]["99.000000"].as_u64().unwrap();
        assert!((989_000..=991_000).contains(&p99), "{p99}");
        assert!(r["clat_ns"]["bins"].as_object().unwrap().len() > 100);
        // 1..1000 µs: 10 % at most 100 µs (bucket "100" holds 51..100 µs).
        let us = &d["jobs"][0]["latency_us"];
        let total: f64 = [
            "2", "4", "10", "20", "50", "100", "250", "500", "750", "1000",
        ]
        .iter()
        .map(|k| us[*k].as_f64().unwrap())
        .sum();
        assert!((total - 100.0).abs() < 0.5, "{total}");
        assert_eq!(d["jobs"][0]["iodepth_level"]["8"], 100.0);
        assert_eq!(d["jobs"][0]["write"]["clat_ns"]["N"], 0);
        // fio's CPU: the job's threads over its 2 s, % of one CPU; the
        // host's apart under iorig's keys.
        let job = &d["jobs"][0];
        assert_eq!(
            (job["usr_cpu"].as_f64(), job["sys_cpu"].as_f64()),
            (Some(25.0), Some(75.0))
        );
        assert_eq!(
            (
                job["ctx"].as_u64(),
                job["minf"].as_u64(),
                job["majf"].as_u64()
            ),
            (Some(7), Some(11), Some(1))
        );
        assert_eq!(job["iorig_host_sys_cpu"], 2.0);
        // Percentiles in fio's order, as fio writes them.
        let text = serde_json::to_string(&r["clat_ns"]["percentile"]).unwrap();
        let keys: Vec<&str> = text.split('"').skip(1).step_by(2).collect();
        let want: Vec<String> = PERCENTILES.iter().map(|q| format!("{q:.6}")).collect();
        assert_eq!(keys, want);
    }
}
