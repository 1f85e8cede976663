//! Synthetic but realistic result stores for the report tests: runs, plans
//! and curve plans written through the store's own write API, with
//! parameters from real `WorkloadRecord`s, latencies that follow Little's
//! law and histograms whose percentiles agree with the summaries. Also
//! helpers that pull the structure (headings, table headers, chart ids)
//! out of the HTML so snapshots do not depend on SVG bytes.

#![allow(dead_code, clippy::unwrap_used)]

use iorig_result::{Finding, StepSummary, TargetKind, WorkloadRecord};
use iorig_spec::WorkloadFile;
use iorig_stats::analysis::{analyze_curve, CurvePoint};
use iorig_stats::{CpuUsage, DeviceUsage, LatSummary, LatencyHistogram, OpSummary};
use iorig_store::{
    HistKind, IntervalRow, NewRun, NewStep, Op, RunId, RunKind, RunStatus, StepId, StepRole,
    StepStatus, Store,
};
use serde_json::{json, Value};

/// A stored type from its JSON, as the CLI would have written it.
fn typed<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

/// A finding from its kind and JSON, as the CLI stores it.
fn finding(kind: &str, v: Value) -> Finding {
    Finding::from_stored(kind, &v.to_string()).unwrap()
}
use std::collections::BTreeMap;

/// The shape of a step's workload.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub bs_k: u64,
    pub read_pct: u32,
    pub random_pct: u32,
    pub qd: u32,
    pub threads: u32,
    pub rate_iops: Option<u64>,
}

impl Shape {
    pub fn new(bs_k: u64, read_pct: u32, qd: u32, threads: u32) -> Shape {
        Shape {
            bs_k,
            read_pct,
            random_pct: 100,
            qd,
            threads,
            rate_iops: None,
        }
    }

    /// The stored `workload` object of this shape (a real WorkloadRecord).
    pub fn params(&self, time_s: u32, warmup_s: u32, seed: u64) -> WorkloadRecord {
        let mut toml = format!(
            "bs = '{}k'\nread = {}\nrandom = {}\nqd = {}\nthreads = {}\ntime = '{}s'\nwarmup = '{}s'\nengine = 'io_uring'\nseed = {seed}\n",
            self.bs_k, self.read_pct, self.random_pct, self.qd, self.threads, time_s, warmup_s
        );
        if let Some(r) = self.rate_iops {
            toml.push_str(&format!("rate = {r}\n"));
        }
        let w = WorkloadFile::from_toml("t.toml", &toml)
            .unwrap()
            .resolve(seed)
            .unwrap();
        w.record()
    }

    /// A device model: 80 µs reads, 25 µs writes at low load, 2 GB/s and
    /// 400k IOPS at most; more in flight raises IOPS until a limit, then
    /// latency (Little's law: latency = in flight / IOPS).
    pub fn perf(&self, speed: f64) -> (f64, f64) {
        let in_flight = f64::from(self.qd * self.threads);
        let r = f64::from(self.read_pct) / 100.0;
        let base_lat_s = (80e-6 * r + 25e-6 * (1.0 - r)) * (1.0 + self.bs_k as f64 / 64.0);
        let cap = (400_000.0f64).min(2e9 / (self.bs_k as f64 * 1024.0)) * speed;
        let max_iops = (in_flight / base_lat_s).min(cap);
        match self.rate_iops {
            // Under a rate limit fewer I/Os are in flight; latency grows
            // with the load like a queue's (1 / (1 - load)).
            Some(rate) => {
                let iops = (rate as f64).min(max_iops);
                let load = (iops / max_iops).min(1.0) * 0.97;
                (iops, base_lat_s / (1.0 - load))
            }
            None => (max_iops, in_flight / max_iops),
        }
    }
}

/// Deterministic noise in [0, 1).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A latency histogram around `mean_ns` with a tail (1 % ×4, 0.1 % ×15).
fn hist(mean_ns: f64, n: u32, rng: &mut Lcg) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    for i in 0..n {
        let mut v = mean_ns * (0.6 + 0.6 * rng.next());
        if i % 100 == 7 {
            v *= 4.0;
        }
        if i % 1000 == 3 {
            v *= 15.0;
        }
        h.record(v.max(1.0) as u64);
    }
    h
}

/// The histogram's own figures; for small test histograms (the 2000-step
/// matrix) figures made from the model instead, because walking HDR
/// buckets in a debug build dominates that test's set-up.
fn summary_of(h: &LatencyHistogram, mean_ns: f64, samples: u32) -> LatSummary {
    if samples >= 1000 {
        return h.summary();
    }
    let at = |f: f64| (mean_ns * f) as u64;
    LatSummary {
        min: at(0.6),
        mean: at(1.0),
        stddev: at(0.3),
        max: at(15.0),
        p50: at(0.95),
        p90: at(1.3),
        p99: at(3.0),
        p99_9: at(6.0),
        p99_99: at(12.0),
    }
}

fn op_json(ops: u64, bytes: u64, secs: f64, lat: &LatSummary) -> Value {
    json!({
        "ops": ops, "bytes": bytes,
        "iops": ops as f64 / secs, "bw_bytes_per_s": bytes as f64 / secs,
        "lat_ns": lat,
    })
}

pub fn new_run(store: &Store, kind: RunKind, labels: &[(&str, &str)]) -> RunId {
    let run = store
        .create_run(&NewRun {
            kind,
            plan_json: (kind == RunKind::Plan).then(|| "{}".to_owned()),
            host: "rig1".into(),
            tool_version: "0.1.0".into(),
            command_line: format!("iorig {kind} --target /dev/zram0"),
            labels: labels
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect::<BTreeMap<_, _>>(),
            started: "2025-03-04T10:00:00Z".into(),
        })
        .unwrap();
    store
        .record_system_facts(
            run,
            &typed(
                json!({"kernel": "6.8.0-45-generic", "os": "Ubuntu 24.04.1 LTS", "hostname": "rig1",
                    "cpu_model": "AMD EPYC 7543 32-Core Processor", "cpu_count": 64,
                    "mem_total_bytes": 270_000_000_000u64}),
            ),
        )
        .unwrap();
    store
        .record_target_facts(
            run,
            "/dev/zram0",
            Some(TargetKind::Block),
            Some(8 << 30),
            &typed(
                json!({"device": "zram0", "model": null, "rotational": false, "scheduler": "none",
                    "logical_block_bytes": 4096, "physical_block_bytes": 4096, "filesystem": null}),
            ),
        )
        .unwrap();
    run
}

pub fn finish_run(store: &Store, run: RunId, status: RunStatus) {
    store
        .finish_run(run, status, "2025-03-04T10:42:30Z")
        .unwrap();
}

/// What happens during a step beyond its steady figures.
#[derive(Clone, Copy, Debug, Default)]
pub struct Events {
    /// IOPS fall by 60 % from this measured second on.
    pub cliff_at_s: Option<u32>,
    /// No completion in this measured second.
    pub outage_at_s: Option<u32>,
    /// Store a steady-state verdict with rounds of this many seconds.
    pub steady_round_s: Option<u32>,
    /// Scale of the device model's limits (1.0 = as modelled).
    pub speed: f64,
    /// Histogram samples per operation (more = smoother, slower).
    pub samples: u32,
}

impl Events {
    pub fn plain() -> Events {
        Events {
            speed: 1.0,
            samples: 2000,
            ..Events::default()
        }
    }
}

/// Stores one finished step with intervals, histograms, summary and analysis.
#[allow(clippy::too_many_arguments)]
pub fn add_step(
    store: &Store,
    run: RunId,
    index: i64,
    name: &str,
    role: &str,
    shape: Shape,
    time_s: u32,
    warmup_s: u32,
    ev: Events,
) -> StepId {
    let params = shape.params(time_s, warmup_s, 1000 + index as u64);
    let step = store
        .upsert_step(
            run,
            &NewStep {
                index,
                name,
                role: role.parse::<StepRole>().unwrap(),
                params: Some(&params),
            },
        )
        .unwrap();
    store
        .set_step_status(
            step,
            StepStatus::Running,
            Some("2025-03-04T10:00:05Z"),
            None,
        )
        .unwrap();
    let (iops, lat_s) = shape.perf(ev.speed);
    let mean_ns = lat_s * 1e9;
    let mut rng = Lcg(index as u64 * 7 + 3);
    let bs = shape.bs_k * 1024;
    let r = f64::from(shape.read_pct) / 100.0;

    // Intervals: warmup then measured, 1 s each.
    let mut measured_ops = 0u64;
    let mut round_iops = Vec::new();
    let mut round_ops = 0u64;
    for seq in 0..(warmup_s + time_s) {
        let warmup = seq < warmup_s;
        let t = seq - warmup_s.min(seq);
        let mut level = iops * (0.97 + 0.06 * rng.next());
        if warmup {
            level *= 0.8;
        }
        if !warmup && ev.cliff_at_s.is_some_and(|c| t >= c) {
            level *= 0.4;
        }
        if !warmup && ev.outage_at_s == Some(t) {
            level = 0.0;
        }
        let ops = level.round() as u64;
        let reads = (ops as f64 * r).round() as u64;
        let writes = ops - reads;
        let lat = |m: f64| LatSummary {
            min: (m * 0.4) as u64,
            mean: m as u64,
            stddev: (m * 0.2) as u64,
            max: (m * 12.0) as u64,
            p50: (m * 0.95) as u64,
            p90: (m * 1.3) as u64,
            p99: (m * 3.0) as u64,
            p99_9: (m * 6.0) as u64,
            p99_99: (m * 10.0) as u64,
        };
        let m = if ops == 0 {
            0.0
        } else {
            mean_ns * (0.95 + 0.1 * rng.next())
        };
        let summary = |n: u64| OpSummary {
            ops: n,
            bytes: n * bs,
            iops: n as f64,
            bw_bytes_per_s: (n * bs) as f64,
            lat_ns: if n == 0 {
                LatSummary::default()
            } else {
                lat(m)
            },
            service_lat_ns: None,
        };
        let t_s = f64::from(seq + 1);
        let cpu = CpuUsage {
            usr_pct: 8.0 + 4.0 * rng.next(),
            sys_pct: 20.0 + 6.0 * rng.next(),
            steal_pct: 0.0,
        };
        let dev = Some(DeviceUsage {
            util_pct: if ops == 0 {
                0.0
            } else {
                92.0 + 6.0 * rng.next()
            },
            queue_depth: f64::from(shape.qd * shape.threads),
            read_await_ns: m as u64,
            write_await_ns: m as u64,
        });
        let rows = [
            IntervalRow::from_op(seq.into(), t_s, 1.0, warmup, Op::Read, &summary(reads)),
            IntervalRow::from_op(seq.into(), t_s, 1.0, warmup, Op::Write, &summary(writes)),
            IntervalRow::from_op(seq.into(), t_s, 1.0, warmup, Op::Total, &summary(ops)),
        ]
        .map(|row| row.with_host(cpu, dev));
        store.add_intervals(step, &rows).unwrap();
        if !warmup {
            measured_ops += ops;
            round_ops += ops;
            if let Some(rs) = ev.steady_round_s {
                if (t + 1) % rs == 0 {
                    round_iops.push(round_ops as f64 / f64::from(rs));
                    round_ops = 0;
                }
            }
        }
    }

    // Histograms and the summary made from them.
    let reads = (measured_ops as f64 * r).round() as u64;
    let writes = measured_ops - reads;
    let n = ev.samples;
    let mut total = LatencyHistogram::new();
    let secs = f64::from(time_s);
    let mut read_sum = LatSummary::default();
    let mut write_sum = LatSummary::default();
    if reads > 0 {
        let h = hist(mean_ns * 1.1, n, &mut rng);
        read_sum = summary_of(&h, mean_ns * 1.1, n);
        total.merge(&h);
        store
            .put_histogram(step, Op::Read, HistKind::Lat, &h)
            .unwrap();
    }
    if writes > 0 {
        let h = hist(mean_ns * 0.8, n, &mut rng);
        write_sum = summary_of(&h, mean_ns * 0.8, n);
        total.merge(&h);
        store
            .put_histogram(step, Op::Write, HistKind::Lat, &h)
            .unwrap();
    }
    store
        .put_histogram(step, Op::Total, HistKind::Lat, &total)
        .unwrap();
    let summary = json!({
        "duration_s": secs,
        "read": op_json(reads, reads * bs, secs, &read_sum),
        "write": op_json(writes, writes * bs, secs, &write_sum),
        "total": op_json(measured_ops, measured_ops * bs, secs, &summary_of(&total, mean_ns, n)),
        "cpu": {"usr_pct": 10.0, "sys_pct": 23.0},
        "errors": 0,
    });
    store
        .finish_step(
            step,
            StepStatus::Ok,
            Some(&StepSummary::Io(Box::new(typed(summary)))),
            "2025-03-04T10:01:05Z",
        )
        .unwrap();

    // Analysis as the CLI stores it.
    store
        .put_analysis(
            run,
            Some(step),
            &finding(
                "generator_bound",
                json!({"in_flight": 8.0, "expected_in_flight": 8.0, "in_flight_ratio": 0.97,
                    "generator_bound": false, "cpu_busy_pct": 33.0, "message": null}),
            ),
        )
        .unwrap();
    let outages: Vec<Value> = ev
        .outage_at_s
        .map(|t| {
            let start = f64::from(warmup_s + t);
            vec![json!({"start_t_s": start, "end_t_s": start + 1.0, "duration_s": 1.0})]
        })
        .unwrap_or_default();
    store
        .put_analysis(
            run,
            Some(step),
            &finding(
                "outages",
                json!({"outage_intervals": outages.len(), "total_outage_s": outages.len() as f64,
                    "longest_outage_s": if outages.is_empty() { 0.0 } else { 1.0 },
                    "longest_start_t_s": outages.first().map(|o| o["start_t_s"].clone()),
                    "outages": outages, "longest_gap_ns": null}),
            ),
        )
        .unwrap();
    if shape.read_pct < 100 {
        let cliff = ev.cliff_at_s.map(|c| {
            json!({"onset_t_s": f64::from(warmup_s + c), "level_before_iops": iops,
                   "level_after_iops": iops * 0.4, "drop_pct": 60.0})
        });
        store
            .put_analysis(
                run,
                Some(step),
                &finding(
                    "write_cliff",
                    json!({"found": cliff.is_some(), "cliff": cliff}),
                ),
            )
            .unwrap();
    }
    if let Some(rs) = ev.steady_round_s {
        let rounds = round_iops.len();
        store
            .put_analysis(
                run,
                Some(step),
                &finding("steady_state", json!({"reached": true, "rounds": rounds, "round_s": rs, "max_rounds": 25,
                        "window": 5, "rounds_needed": rounds, "time_needed_s": rounds as f64 * f64::from(rs),
                        "round_iops": round_iops,
                        "verdict": {"reached": true, "rounds_used": 5, "window_start_round": rounds.saturating_sub(5),
                                    "mean": iops, "range_pct": 6.0, "slope_excursion_pct": 2.0, "reason": null}})),
            )
            .unwrap();
    }
    step
}

/// Stores a step that never ran, with the given status (and the reason
/// when skipped).
pub fn add_unrun_step(
    store: &Store,
    run: RunId,
    index: i64,
    name: &str,
    shape: Shape,
    status: StepStatus,
) -> StepId {
    let params = shape.params(30, 0, 9);
    let role = if status == StepStatus::Skipped {
        "skipped"
    } else {
        "run"
    };
    let step = store
        .upsert_step(
            run,
            &NewStep {
                index,
                name,
                role: role.parse::<StepRole>().unwrap(),
                params: Some(&params),
            },
        )
        .unwrap();
    store.set_step_status(step, status, None, None).unwrap();
    if status == StepStatus::Skipped {
        store
            .put_analysis(
                run,
                Some(step),
                &finding(
                    "skipped",
                    json!({"why": "stop_latency_ms 5 passed at the previous step"}),
                ),
            )
            .unwrap();
    }
    step
}

/// A single `iorig run`: 4k 70/30 random, qd 8, 2 threads, 5 s warmup,
/// 60 s measured, with an outage and a write cliff.
pub fn single_run(store: &Store) -> RunId {
    let run = new_run(store, RunKind::Run, &[("array", "a1"), ("fw", "1.2")]);
    let ev = Events {
        cliff_at_s: Some(40),
        outage_at_s: Some(20),
        ..Events::plain()
    };
    add_step(
        store,
        run,
        0,
        "run",
        "run",
        Shape::new(4, 70, 8, 2),
        60,
        5,
        ev,
    );
    finish_run(store, run, RunStatus::Ok);
    run
}

/// A plan over bs {4k, 64k} × read {100, 70} × threads {1, 4}, qd 8, with
/// a precondition first and one failed and one skipped step at the end.
pub fn matrix_plan(store: &Store, speed: f64) -> RunId {
    let run = new_run(store, RunKind::Plan, &[("array", "a1")]);
    let mut index = 0;
    add_step(
        store,
        run,
        index,
        "precondition",
        "precondition",
        Shape {
            random_pct: 0,
            ..Shape::new(128, 0, 32, 1)
        },
        20,
        0,
        Events::plain(),
    );
    store
        .put_analysis(
            run,
            store.steps(run).unwrap().last().map(|s| s.id),
            &finding(
                "precondition",
                json!({"passes": 2, "written_bytes": 17_179_869_184u64, "duration_s": 20.0,
                    "bw_bytes_per_s": 858_993_459.0}),
            ),
        )
        .unwrap();
    index += 1;
    for bs in [4, 64] {
        for read in [100, 70] {
            for threads in [1, 4] {
                let name = format!("bs={bs}k read={read} threads={threads}");
                let ev = Events {
                    speed,
                    steady_round_s: Some(5),
                    ..Events::plain()
                };
                add_step(
                    store,
                    run,
                    index,
                    &name,
                    "run",
                    Shape::new(bs, read, 8, threads),
                    30,
                    2,
                    ev,
                );
                index += 1;
            }
        }
    }
    add_unrun_step(
        store,
        run,
        index,
        "late failure",
        Shape::new(4, 50, 8, 4),
        StepStatus::Failed,
    );
    add_unrun_step(
        store,
        run,
        index + 1,
        "not needed",
        Shape::new(4, 50, 8, 8),
        StepStatus::Skipped,
    );
    finish_run(store, run, RunStatus::Ok);
    run
}

/// A curve plan: a max run then rate steps at 10..100 % of its IOPS, with
/// the curve analysis stored as the CLI does.
pub fn curve_plan(store: &Store, speed: f64) -> RunId {
    let run = new_run(store, RunKind::Plan, &[("method", "curve")]);
    let base = Shape::new(4, 70, 16, 4);
    let (max_iops, _) = base.perf(speed);
    let mut points = Vec::new();
    let mut steps = Vec::new();
    add_step(
        store,
        run,
        0,
        "curve max",
        "curve-max",
        base,
        30,
        0,
        Events {
            speed,
            ..Events::plain()
        },
    );
    for (i, pct) in [10u64, 30, 50, 70, 80, 90, 95].into_iter().enumerate() {
        let rate = max_iops * pct as f64 / 100.0;
        let shape = Shape {
            rate_iops: Some(rate as u64),
            ..base
        };
        let idx = i as i64 + 1;
        add_step(
            store,
            run,
            idx,
            &format!("curve {pct}%"),
            &format!("curve-{pct}%"),
            shape,
            30,
            0,
            Events {
                speed,
                ..Events::plain()
            },
        );
        // Queueing: latency grows like 1 / (1 - load).
        let rho = pct as f64 / 100.0 * 0.97;
        let mean = 60_000.0 / (1.0 - rho);
        points.push(CurvePoint {
            iops: rate,
            mean_lat_ns: mean,
            p99_lat_ns: mean * 3.0,
            requested_iops: Some(rate),
            pct_lat_ns: None,
            mean_lat_se_ns: None,
            p99_lat_se_ns: None,
        });
        steps.push(idx);
    }
    let max_mean = 60_000.0 / 0.03;
    points.push(CurvePoint {
        iops: max_iops,
        mean_lat_ns: max_mean,
        p99_lat_ns: max_mean * 3.0,
        requested_iops: None,
        pct_lat_ns: None,
        mean_lat_se_ns: None,
        p99_lat_se_ns: None,
    });
    steps.push(0);
    let analysis = analyze_curve(&points, 1e6, 2.0);
    store
        .put_analysis(
            run,
            None,
            &finding("curve", json!({"group": 0, "threshold_ms": 1.0, "steps": steps, "points": points, "analysis": analysis})),
        )
        .unwrap();
    finish_run(store, run, RunStatus::Ok);
    run
}

// ---------------------------------------------------------------- HTML structure

/// Texts of the elements `tag` (without their markup), in order.
pub fn texts_of(html: &str, tag: &str) -> Vec<String> {
    texts_at(html, tag).into_iter().map(|(_, t)| t).collect()
}

/// Texts of the elements `tag` with their byte offsets.
fn texts_at(html: &str, tag: &str) -> Vec<(usize, String)> {
    let open = format!("<{tag}");
    let close = format!("</{tag}>");
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        // `<th` must not match `<thead`.
        if !after.starts_with('>') && !after.starts_with(' ') {
            rest = after;
            continue;
        }
        let Some(gt) = after.find('>') else { break };
        let body = &after[gt + 1..];
        let Some(end) = body.find(&close) else { break };
        out.push((html.len() - rest.len() + i, strip_tags(&body[..end])));
        rest = &body[end..];
    }
    out
}

fn strip_tags(s: &str) -> String {
    let mut out = String::new();
    let mut in_tag = false;
    for c in s.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag => out.push(c),
            _ => {}
        }
    }
    out.trim().to_owned()
}

/// The header rows of every table, each as `a | b | c`.
pub fn table_heads(html: &str) -> Vec<String> {
    texts_of(html, "thead")
        .into_iter()
        .zip(html.match_indices("<thead>").map(|(i, _)| i))
        .map(|(_, at)| {
            let end = html[at..]
                .find("</thead>")
                .map(|e| at + e)
                .unwrap_or(html.len());
            texts_of(&html[at..end], "th").join(" | ")
        })
        .collect()
}

/// `id: title` of every inline chart.
pub fn chart_ids(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in html.match_indices("<svg ") {
        let tag_end = html[i..].find('>').map(|e| i + e).unwrap_or(html.len());
        let tag = &html[i..tag_end];
        if !tag.contains("class=\"chart\"") {
            continue;
        }
        let id = tag
            .split("id=\"")
            .nth(1)
            .and_then(|s| s.split('"').next())
            .unwrap_or("?")
            .to_owned();
        let title = texts_of(&html[tag_end..], "title")
            .into_iter()
            .next()
            .unwrap_or_default();
        out.push(format!("{id}: {title}"));
    }
    out
}

/// The page's outline: headings, table headers and charts.
pub fn structure(html: &str) -> String {
    let mut s = String::new();
    let mut heads: Vec<(usize, &str, String)> = Vec::new();
    for (level, tag) in [("#", "h1"), ("##", "h2"), ("###", "h3")] {
        for (at, t) in texts_at(html, tag) {
            heads.push((at, level, t));
        }
    }
    heads.sort();
    for (_, level, t) in heads {
        s.push_str(&format!("{level} {t}\n"));
    }
    s.push_str("-- tables\n");
    for t in table_heads(html) {
        s.push_str(&format!("{t}\n"));
    }
    s.push_str("-- charts\n");
    for c in chart_ids(html) {
        s.push_str(&format!("{c}\n"));
    }
    s
}

/// Fails when the page loads anything from the network.
pub fn assert_self_contained(html: &str) {
    for attr in ["src=", "href="] {
        for (i, _) in html.match_indices(attr) {
            let value = &html[i + attr.len()..(i + attr.len() + 12).min(html.len())];
            assert!(
                !value.contains("http:") && !value.contains("https:") && !value.contains("//"),
                "external reference at {i}: {}",
                &html[i..(i + 60).min(html.len())]
            );
        }
    }
    assert!(
        !html.contains("<script"),
        "the report should need no script"
    );
    assert!(
        !html.contains("<link"),
        "the report should link no stylesheet"
    );
}
