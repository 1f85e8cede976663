//! Prometheus metrics of a run as it goes. [`Metrics`] is shared between
//! the runner, which feeds it through [`MetricsSink`] (the same events as
//! any sink), and whatever serves `/metrics`, which asks it to
//! [`Metrics::render`] the text exposition format (version 0.0.4). No
//! HTTP here: the listener is `iorig-serve`'s.
//!
//! Counters (`_total`) add up every interval of the run, warmup included
//! (it is I/O the storage did); the latency histogram's buckets are counted
//! from each interval's HDR histogram, so they are as exact as its three
//! significant digits. Gauges hold the last interval's rates and
//! percentiles and where the run or plan stands. Every series carries the
//! run's id and its labels (`label_<key>`); a multi-host step's parts carry
//! `host` and that host's targets only (its totals do not, so sum over
//! `host=""` or over the hosts, never both).

use crate::event::{Event, Sink};
use iorig_engine::run::IntervalSample;
use iorig_stats::OpStats;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};

/// Upper bounds of the latency histogram's buckets, in seconds: 1-2.5-5
/// steps from 1 µs to 10 s (then +Inf), wide enough for memory-speed
/// devices and for stalls.
pub const LATENCY_BUCKETS_S: [f64; 22] = [
    1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2,
    5e-2, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// One figure of a latency summary.
type Pick = fn(&iorig_stats::LatSummary) -> u64;

/// The percentiles of the last interval's latency gauges. (Labelled
/// `percentile`: `quantile` belongs to Prometheus summaries, which these
/// are not, being over one interval rather than the whole run.)
const PERCENTILES: [(&str, Pick); 5] = [
    ("50", |l| l.p50),
    ("90", |l| l.p90),
    ("99", |l| l.p99),
    ("99.9", |l| l.p99_9),
    ("99.99", |l| l.p99_99),
];

/// The metrics of one process's runs, shared.
#[derive(Clone, Default)]
pub struct Metrics(Arc<Mutex<State>>);

/// Where a series comes from: a host (empty: the run's own totals), the
/// step's targets and the operation.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Key {
    host: String,
    target: String,
    op: String,
}

#[derive(Clone, Default)]
struct OpCounters {
    ops: u64,
    bytes: u64,
    lat_sum_s: f64,
    /// Count at or under each bound of [`LATENCY_BUCKETS_S`] (cumulative).
    buckets: [u64; LATENCY_BUCKETS_S.len()],
    /// The last interval's rates and latency percentiles (ns).
    iops: f64,
    bw_bytes_per_s: f64,
    lat_ns: iorig_stats::LatSummary,
}

/// Per host (empty: the run's totals) and targets.
#[derive(Clone, Default)]
struct HostCounters {
    errors: u64,
    outage_s: f64,
    intervals: u64,
    longest_gap_s: f64,
}

#[derive(Default)]
struct State {
    /// `label_<key>` names (made valid) and values, from the run's labels.
    labels: Vec<(String, String)>,
    run: Option<String>,
    running: bool,
    step_index: Option<usize>,
    /// The running step's targets, comma-joined.
    target: String,
    warmup: bool,
    plan_steps: Option<usize>,
    plan_position: Option<usize>,
    eta_s: Option<f64>,
    fill_pct: Option<f64>,
    steps_ended: BTreeMap<&'static str, u64>,
    ops: BTreeMap<Key, OpCounters>,
    hosts: BTreeMap<(String, String), HostCounters>,
    /// An agent's run as its controller names it: the controller's run id
    /// (in place of the agent's own) and this host's name there, so the
    /// agent's series join the controller's.
    origin_run: Option<String>,
    origin_host: Option<String>,
}

impl Metrics {
    /// Metrics carrying these run labels on every series.
    pub fn new(run_labels: &BTreeMap<String, String>) -> Metrics {
        Metrics(Arc::new(Mutex::new(State {
            labels: run_labels_of(run_labels),
            ..State::default()
        })))
    }

    /// A sink feeding these metrics.
    pub fn sink(&self) -> MetricsSink {
        MetricsSink(self.clone())
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock leaves counters that are still
        // whole numbers: keep serving them.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Labels the running run's series as its controller does: `run` its
    /// id there, `host` this host's name there (`None`, `None`: the
    /// run's own id, no host).
    pub fn set_origin(&self, run: Option<String>, host: Option<String>) {
        let mut s = self.state();
        s.origin_run = run;
        s.origin_host = host;
    }

    /// The exposition text, as `/metrics` serves it.
    pub fn render(&self) -> String {
        self.state().render()
    }
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

/// A run's labels as Prometheus labels (`label_KEY`); of two keys that
/// read the same once made valid, the first wins.
pub fn run_labels_of(run_labels: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let mut labels: Vec<(String, String)> = Vec::new();
    for (k, v) in run_labels {
        let name = format!("label_{}", label_name(k));
        if !labels.iter().any(|(n, _)| *n == name) {
            labels.push((name, v.clone()));
        }
    }
    labels
}

/// Feeds [`Metrics`] from a run's events.
pub struct MetricsSink(Metrics);

impl Sink for MetricsSink {
    fn event(&mut self, ev: &Event<'_>) {
        let mut s = self.0.state();
        match ev {
            // A new run's series start from zero under its own id (an agent
            // serves one run after another).
            Event::RunBegun { id } => {
                s.begin();
                s.run = Some((*id).to_owned());
            }
            Event::PlanBegun {
                steps, done, run, ..
            } => {
                s.begin();
                s.run = run.map(|r| r.to_string());
                s.plan_steps = Some(*steps);
                s.plan_position = Some(*done);
            }
            Event::StepBegun { index, .. } => {
                s.step_index = Some(*index);
                if s.plan_steps.is_some() {
                    s.plan_position = Some(*index);
                }
                s.target.clear();
            }
            Event::TargetsOpen { targets, .. } => {
                s.target = targets
                    .iter()
                    .map(|t| t.path.as_str())
                    .collect::<Vec<_>>()
                    .join(",");
            }
            Event::Interval {
                sample, progress, ..
            } => {
                s.warmup = sample.warmup;
                if let Some(p) = progress {
                    s.plan_steps = Some(p.steps);
                    s.plan_position = Some(p.position);
                    s.eta_s = Some(p.eta.as_secs_f64());
                    s.fill_pct = p.fill_pct;
                }
                s.add(String::new(), sample);
            }
            Event::HostInterval { host, sample, .. } => s.add((*host).to_owned(), sample),
            Event::StepEnded { status, .. } => {
                *s.steps_ended.entry((*status).into()).or_default() += 1;
            }
            Event::RunEnded { .. } => {
                s.running = false;
                s.eta_s = Some(0.0);
            }
            _ => {}
        }
    }
}

impl State {
    /// Forgets the previous run's figures, keeping the labels.
    fn begin(&mut self) {
        *self = State {
            labels: std::mem::take(&mut self.labels),
            origin_run: self.origin_run.take(),
            origin_host: self.origin_host.take(),
            running: true,
            ..State::default()
        };
    }

    fn add(&mut self, host: String, sample: &IntervalSample) {
        // A host's series carry its own targets only: a multi-host step's
        // targets are named HOST:PATH; the totals carry them all.
        let target = if host.is_empty() {
            self.target.clone()
        } else {
            let own: Vec<&str> = self
                .target
                .split(',')
                .filter(|t| {
                    t.strip_prefix(host.as_str())
                        .is_some_and(|r| r.starts_with(':'))
                })
                .collect();
            if own.is_empty() {
                self.target.clone()
            } else {
                own.join(",")
            }
        };
        for (op, stats) in iorig_store::op_parts(&sample.stats) {
            let key = Key {
                host: host.clone(),
                target: target.clone(),
                op: op.to_string(),
            };
            self.ops
                .entry(key)
                .or_default()
                .add(stats, sample.duration_s);
        }
        let h = self.hosts.entry((host, target)).or_default();
        h.errors += sample.stats.errors;
        h.intervals += 1;
        if sample.stats.ops() == 0 {
            h.outage_s += sample.duration_s;
        }
        h.longest_gap_s = sample.longest_gap_ns as f64 / 1e9;
    }

    fn render(&self) -> String {
        let mut out = Exposition::new(self.common_labels());
        let key_labels = |k: &Key| {
            let mut l = Vec::new();
            if !k.host.is_empty() {
                l.push(("host", k.host.clone()));
            }
            l.push(("target", k.target.clone()));
            l.push(("op", k.op.clone()));
            l
        };
        let host_labels = |(host, target): &(String, String)| {
            let mut l = Vec::new();
            if !host.is_empty() {
                l.push(("host", host.clone()));
            }
            l.push(("target", target.clone()));
            l
        };

        out.family("iorig_ops_total", "counter", "I/O operations completed.");
        for (k, c) in &self.ops {
            out.sample("iorig_ops_total", &key_labels(k), c.ops as f64);
        }
        out.family("iorig_bytes_total", "counter", "Bytes transferred.");
        for (k, c) in &self.ops {
            out.sample("iorig_bytes_total", &key_labels(k), c.bytes as f64);
        }
        out.family(
            "iorig_latency_seconds",
            "histogram",
            "Completion latency of each I/O (from its scheduled start under a rate).",
        );
        for (k, c) in &self.ops {
            let labels = key_labels(k);
            for (bound, count) in LATENCY_BUCKETS_S.iter().zip(c.buckets) {
                let mut l = labels.clone();
                l.push(("le", format_bound(*bound)));
                out.sample("iorig_latency_seconds_bucket", &l, count as f64);
            }
            let mut l = labels.clone();
            l.push(("le", "+Inf".into()));
            out.sample("iorig_latency_seconds_bucket", &l, c.ops as f64);
            out.sample("iorig_latency_seconds_sum", &labels, c.lat_sum_s);
            out.sample("iorig_latency_seconds_count", &labels, c.ops as f64);
        }
        out.family(
            "iorig_iops",
            "gauge",
            "Operations per second over the last interval.",
        );
        for (k, c) in &self.ops {
            out.sample("iorig_iops", &key_labels(k), c.iops);
        }
        out.family(
            "iorig_throughput_bytes_per_second",
            "gauge",
            "Bytes per second over the last interval.",
        );
        for (k, c) in &self.ops {
            out.sample(
                "iorig_throughput_bytes_per_second",
                &key_labels(k),
                c.bw_bytes_per_s,
            );
        }
        out.family(
            "iorig_interval_latency_seconds",
            "gauge",
            "Latency percentiles of the last interval (exact from its histogram).",
        );
        for (k, c) in &self.ops {
            for (q, get) in PERCENTILES {
                let mut l = key_labels(k);
                l.push(("percentile", q.to_owned()));
                out.sample(
                    "iorig_interval_latency_seconds",
                    &l,
                    get(&c.lat_ns) as f64 / 1e9,
                );
            }
        }
        out.family(
            "iorig_errors_total",
            "counter",
            "I/O operations that failed.",
        );
        for (k, h) in &self.hosts {
            out.sample("iorig_errors_total", &host_labels(k), h.errors as f64);
        }
        out.family(
            "iorig_outage_seconds_total",
            "counter",
            "Time in intervals without a single completion.",
        );
        for (k, h) in &self.hosts {
            out.sample("iorig_outage_seconds_total", &host_labels(k), h.outage_s);
        }
        out.family(
            "iorig_longest_gap_seconds",
            "gauge",
            "Longest time without a completion in the last interval.",
        );
        for (k, h) in &self.hosts {
            out.sample(
                "iorig_longest_gap_seconds",
                &host_labels(k),
                h.longest_gap_s,
            );
        }
        out.family("iorig_intervals_total", "counter", "Intervals completed.");
        for (k, h) in &self.hosts {
            out.sample("iorig_intervals_total", &host_labels(k), h.intervals as f64);
        }
        out.family(
            "iorig_steps_ended_total",
            "counter",
            "Steps that ended, by how they ended.",
        );
        for (status, n) in &self.steps_ended {
            out.sample(
                "iorig_steps_ended_total",
                &[("status", (*status).to_owned())],
                *n as f64,
            );
        }
        out.family(
            "iorig_running",
            "gauge",
            "1 while a run is in progress, 0 once it ended.",
        );
        out.sample("iorig_running", &[], f64::from(u8::from(self.running)));
        out.family(
            "iorig_warmup",
            "gauge",
            "1 when the last interval was warmup (not measured).",
        );
        out.sample("iorig_warmup", &[], f64::from(u8::from(self.warmup)));
        if let Some(i) = self.step_index {
            out.family(
                "iorig_step_index",
                "gauge",
                "The running step's index, from 0.",
            );
            out.sample("iorig_step_index", &[], i as f64);
        }
        if let (Some(steps), Some(position)) = (self.plan_steps, self.plan_position) {
            out.family("iorig_plan_steps", "gauge", "Steps in the plan.");
            out.sample("iorig_plan_steps", &[], steps as f64);
            out.family(
                "iorig_plan_position",
                "gauge",
                "Position of the running step in the plan, from 0.",
            );
            out.sample("iorig_plan_position", &[], position as f64);
        }
        if let Some(eta) = self.eta_s {
            out.family(
                "iorig_plan_eta_seconds",
                "gauge",
                "Estimated time until the plan ends.",
            );
            out.sample("iorig_plan_eta_seconds", &[], eta);
        }
        if let Some(f) = self.fill_pct {
            out.family(
                "iorig_precondition_fill_ratio",
                "gauge",
                "Share of a precondition's bytes written, 0 to 1.",
            );
            out.sample("iorig_precondition_fill_ratio", &[], f / 100.0);
        }
        out.finish()
    }

    fn common_labels(&self) -> Vec<(String, String)> {
        let mut l = Vec::new();
        if let Some(run) = self.origin_run.as_ref().or(self.run.as_ref()) {
            l.push(("run".to_owned(), run.clone()));
        }
        // An agent's own series (it has no per-host parts) name its host.
        if let Some(host) = &self.origin_host {
            l.push(("host".to_owned(), host.clone()));
        }
        l.extend(self.labels.iter().cloned());
        l
    }
}

impl OpCounters {
    fn add(&mut self, s: &OpStats, duration_s: f64) {
        self.ops += s.ops;
        self.bytes += s.bytes;
        let h = s.lat.inner();
        self.lat_sum_s += h.mean() * h.len() as f64 / 1e9;
        for v in h.iter_recorded() {
            let lat_s = v.value_iterated_to() as f64 / 1e9;
            let n = v.count_at_value();
            // Cumulative: every bucket whose bound the value is under.
            for (bound, count) in LATENCY_BUCKETS_S.iter().zip(self.buckets.iter_mut()) {
                if lat_s <= *bound {
                    *count += n;
                }
            }
        }
        let summary = s.summary(duration_s);
        self.iops = summary.iops;
        self.bw_bytes_per_s = summary.bw_bytes_per_s;
        self.lat_ns = summary.lat_ns;
    }
}

/// Exposition text being written: families (`# HELP`, `# TYPE`) each
/// followed by its samples, every sample with the `common` labels first.
pub struct Exposition {
    text: String,
    common: Vec<(String, String)>,
}

impl Exposition {
    pub fn new(common: Vec<(String, String)>) -> Exposition {
        Exposition {
            text: String::new(),
            common,
        }
    }

    /// The labels every sample carries from now on.
    pub fn set_common(&mut self, common: Vec<(String, String)>) {
        self.common = common;
    }

    /// The text written so far.
    pub fn finish(self) -> String {
        self.text
    }

    pub fn family(&mut self, name: &str, kind: &str, help: &str) {
        let _ = writeln!(self.text, "# HELP {name} {help}");
        let _ = writeln!(self.text, "# TYPE {name} {kind}");
    }

    pub fn sample(&mut self, name: &str, labels: &[(&str, String)], value: f64) {
        self.text.push_str(name);
        let all: Vec<(&str, &str)> = self
            .common
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain(labels.iter().map(|(k, v)| (*k, v.as_str())))
            .collect();
        if !all.is_empty() {
            self.text.push('{');
            for (i, (k, v)) in all.iter().enumerate() {
                if i > 0 {
                    self.text.push(',');
                }
                let _ = write!(self.text, "{k}=\"{}\"", escape_value(v));
            }
            self.text.push('}');
        }
        let _ = writeln!(self.text, " {}", format_value(value));
    }
}

/// A label value as the format wants it: backslash, quote and newline
/// escaped.
fn escape_value(v: &str) -> String {
    let mut out = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out
}

/// A label key made a valid Prometheus label name: anything but ASCII
/// letters, digits and `_` becomes `_`.
pub fn label_name(key: &str) -> String {
    key.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn format_value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else {
        format!("{v}")
    }
}

/// A bucket bound as Prometheus' own clients write them (`0.0001`, `2.5`).
fn format_bound(v: f64) -> String {
    format!("{v}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use iorig_result::RunStatus;
    use iorig_stats::IntervalStats;

    fn sample(ops: u64, lat_ns: u64) -> IntervalSample {
        let mut stats = IntervalStats::default();
        for _ in 0..ops {
            stats.read.ops += 1;
            stats.read.bytes += 4096;
            stats.read.lat.record(lat_ns);
        }
        IntervalSample {
            index: 0,
            t_s: 1.0,
            duration_s: 1.0,
            warmup: false,
            stats,
            cpu: Default::default(),
            device: None,
            longest_gap_ns: 0,
            gap_start_ns: 0,
            worker_busy_max_pct: 0.0,
        }
    }

    fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
    }

    #[test]
    fn a_hosts_series_carry_its_own_targets_only() {
        let m = Metrics::new(&BTreeMap::new());
        let mut sink = m.sink();
        sink.event(&Event::RunBegun { id: "3" });
        let target = |path: &str| iorig_result::live::TargetInfo {
            path: path.to_owned(),
            kind: iorig_result::TargetKind::File,
            size_bytes: 1 << 20,
            device: None,
            cache: Default::default(),
        };
        let targets = [target("h1:/data/t.dat"), target("h2:/data/t.dat")];
        sink.event(&Event::TargetsOpen {
            index: 0,
            targets: &targets,
            engine: "psync",
            byte_limit: None,
        });
        let s = sample(10, 20_000);
        for host in ["h1", "h2"] {
            sink.event(&Event::HostInterval {
                index: 0,
                host,
                sample: &s,
            });
        }
        let text = m.render();
        for host in ["h1", "h2"] {
            let l = text
                .lines()
                .find(|l| {
                    l.starts_with("iorig_ops_total{") && l.contains(&format!("host=\"{host}\""))
                })
                .unwrap_or_else(|| panic!("no {host} series in\n{text}"));
            assert!(l.contains(&format!("target=\"{host}:/data/t.dat\"")), "{l}");
            let other = if host == "h1" { "h2:" } else { "h1:" };
            assert!(!l.contains(other), "another host's target in {l}");
        }
    }

    #[test]
    fn counters_add_up_intervals_and_buckets_are_cumulative() {
        let labels = BTreeMap::from([
            ("array-name".to_owned(), "a\"1\\\n<script>".to_owned()),
            ("fw".to_owned(), "1.2".to_owned()),
        ]);
        let m = Metrics::new(&labels);
        let mut sink = m.sink();
        sink.event(&Event::RunBegun { id: "7" });
        let interval = iorig_result::Interval::default();
        for (ops, lat) in [(100, 20_000), (50, 3_000_000), (0, 0)] {
            let s = sample(ops, lat);
            sink.event(&Event::Interval {
                index: 0,
                sample: &s,
                interval: &interval,
                progress: None,
            });
        }
        let text = m.render();
        let common = r#"run="7",label_array_name="a\"1\\\n<script>",label_fw="1.2""#;
        assert_eq!(
            line(&text, "iorig_ops_total{"),
            format!(r#"iorig_ops_total{{{common},target="",op="read"}} 150"#)
        );
        assert!(text.contains(&format!(
            r#"iorig_bytes_total{{{common},target="",op="read"}} 614400"#
        )));
        // 100 at 20 µs: under 25 µs; 50 at 3 ms: under 5 ms.
        let bucket = |le: &str| {
            let p = format!(
                r#"iorig_latency_seconds_bucket{{{common},target="",op="read",le="{le}"}} "#
            );
            line(&text, &p)[p.len()..].parse::<u64>().unwrap()
        };
        assert_eq!(bucket("0.00001"), 0);
        assert_eq!(bucket("0.000025"), 100);
        assert_eq!(bucket("0.0025"), 100);
        assert_eq!(bucket("0.005"), 150);
        assert_eq!(bucket("+Inf"), 150);
        let sum = line(&text, "iorig_latency_seconds_sum{");
        let sum: f64 = sum.rsplit(' ').next().unwrap().parse().unwrap();
        assert!(
            (sum - (100.0 * 20e-6 + 50.0 * 3e-3)).abs() < 1e-3 * sum,
            "{sum}"
        );
        // The third interval had no completion.
        assert!(text.contains(&format!(
            r#"iorig_outage_seconds_total{{{common},target=""}} 1"#
        )));
        assert!(text.contains("\niorig_running{run=\"7\""));
        sink.event(&Event::RunEnded {
            status: RunStatus::Ok,
        });
        assert!(line(&m.render(), "iorig_running{").ends_with(" 0"));
    }

    #[test]
    fn every_family_is_announced_once_before_its_samples() {
        let m = Metrics::new(&BTreeMap::new());
        let text = m.render();
        let mut seen = Vec::new();
        for l in text.lines().filter(|l| l.starts_with("# TYPE ")) {
            let name = l.split(' ').nth(2).unwrap_or_default();
            assert!(!seen.contains(&name), "{name} twice");
            seen.push(name);
        }
        assert!(seen.contains(&"iorig_latency_seconds"));
        assert_eq!(label_name("a.b-c"), "a_b_c");
        assert_eq!(format_bound(1e-5), "0.00001");
    }
}
