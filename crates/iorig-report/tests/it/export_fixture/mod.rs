//! A realistic plan run stored in memory for the export tests: three steps
//! with different parameters (a sequential precondition, a random read with a
//! warmup interval and steady state, a rate-limited mixed-size curve point
//! with a fault and a write cliff), labels, host and target facts, per-step
//! analysis and a plan-level curve. Every figure is fixed, so the exports are
//! the same on every run and can be compared with snapshots.

#![allow(clippy::unwrap_used, dead_code)]

use iorig_result::{Finding, StepSummary, TargetKind, WorkloadRecord};
use iorig_stats::{DeviceUsage, LatSummary};
use iorig_store::{
    IntervalRow, NewRun, NewStep, Op, RunId, RunKind, RunStatus, StepRole, StepStatus, Store,
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

/// Names of the steps, in order.
pub const STEP_NAMES: [&str; 3] = [
    "precondition 128k seq write",
    "4k randread qd8",
    "mixed 70/30, 50% of max",
];

fn lat(base: u64) -> LatSummary {
    LatSummary {
        min: base / 4,
        mean: base,
        stddev: base / 3,
        max: base * 20,
        p50: base * 9 / 10,
        p90: base * 2,
        p99: base * 4,
        p99_9: base * 8,
        p99_99: base * 12,
    }
}

/// The read, write and total rows of one interval.
#[allow(clippy::too_many_arguments)]
fn interval(
    seq: u64,
    warmup: bool,
    read_ops: u64,
    write_ops: u64,
    bs: u64,
    lat_base: u64,
    errors: u64,
    device: Option<DeviceUsage>,
) -> [IntervalRow; 3] {
    let row = |op, ops: u64, base: u64| IntervalRow {
        seq,
        t_s: (seq + 1) as f64,
        duration_s: 1.0,
        warmup,
        op,
        ops,
        bytes: ops * bs,
        iops: ops as f64,
        bw_bytes_per_s: (ops * bs) as f64,
        lat_ns: if ops == 0 {
            LatSummary::default()
        } else {
            lat(base)
        },
        errors: 0,
        cpu_usr_pct: 12.5 + seq as f64,
        cpu_sys_pct: 30.25,
        device,
        lat_hist: None,
    };
    let mut total = row(Op::Total, read_ops + write_ops, lat_base + 500);
    total.errors = errors;
    [
        row(Op::Read, read_ops, lat_base),
        row(Op::Write, write_ops, lat_base + 1000),
        total,
    ]
}

fn op_summary(ops: u64, bs: u64, base: u64, duration_s: f64) -> Value {
    let l = if ops == 0 {
        LatSummary::default()
    } else {
        lat(base)
    };
    json!({
        "ops": ops,
        "bytes": ops * bs,
        "iops": ops as f64 / duration_s,
        "bw_bytes_per_s": (ops * bs) as f64 / duration_s,
        "lat_ns": l,
    })
}

fn summary(read_ops: u64, write_ops: u64, bs: u64, base: u64, errors: u64) -> Value {
    json!({
        "duration_s": 3.0,
        "read": op_summary(read_ops, bs, base, 3.0),
        "write": op_summary(write_ops, bs, base + 1000, 3.0),
        "total": op_summary(read_ops + write_ops, bs, base + 500, 3.0),
        "cpu": {"usr_pct": 14.5, "sys_pct": 30.25},
        "errors": errors,
    })
}

/// A resolved workload like `WorkloadRecord` serializes it.
fn params(
    bs: &str,
    bs_bytes: Value,
    read_pct: f64,
    random_pct: f64,
    qd: u32,
    threads: u32,
    rate: Value,
) -> Value {
    json!({
        "targets": ["/dev/zram0"],
        "size_bytes": 1_073_741_824u64,
        "bs": bs,
        "bs_bytes": bs_bytes,
        "align_bytes": 4096,
        "read_pct": read_pct,
        "random_pct": random_pct,
        "qd": qd,
        "submit_batch": 1,
        "threads": threads,
        "engine": "io_uring",
        "direct": true,
        "sync": "none",
        "rate_iops": rate,
        "time_s": 3.0,
        "warmup_s": 0.0,
        "interval_s": 1.0,
        "range_start_pct": 0.0,
        "range_end_pct": 100.0,
        "dist": "uniform",
        "data": "random",
        "seed": 42,
    })
}

/// Stores the run; returns the store and the run's id.
pub fn store_with_run() -> (Store, RunId) {
    let store = Store::open_in_memory().unwrap();
    let run = store
        .create_run(&NewRun {
            kind: RunKind::Plan,
            plan_json: Some(r#"{"name":"export-test","steps":3}"#.to_owned()),
            host: "rig1".into(),
            tool_version: "0.1.0".into(),
            command_line: "iorig plan run export.toml --label array=a1".into(),
            labels: BTreeMap::from([
                ("array".to_owned(), "a1".to_owned()),
                ("fw".to_owned(), "2.1, beta".to_owned()),
            ]),
            started: "2026-03-01T10:00:00Z".into(),
        })
        .unwrap();
    store
        .record_system_facts(
            run,
            &typed(
                json!({"kernel": "6.8.0", "os": "Debian 13", "hostname": "rig1",
                    "cpu_model": "Test CPU @ 3.0GHz", "cpu_count": 16,
                    "mem_total_bytes": 68_719_476_736u64}),
            ),
        )
        .unwrap();
    store
        .record_target_facts(
            run,
            "/dev/zram0",
            Some(TargetKind::Block),
            Some(1 << 30),
            &typed(
                json!({"device": "zram0", "model": null, "rotational": false,
                    "scheduler": "none", "logical_block_bytes": 4096,
                    "physical_block_bytes": 4096, "filesystem": null}),
            ),
        )
        .unwrap();

    let dev = Some(DeviceUsage {
        util_pct: 99.5,
        queue_depth: 7.875,
        read_await_ns: 61_000,
        write_await_ns: 0,
    });

    // Step 0: sequential write precondition, no device figures.
    let p0 = params(
        "128k",
        json!([{"size_bytes": 131072, "weight": 1}]),
        0.0,
        0.0,
        32,
        1,
        Value::Null,
    );
    let s0 = store
        .upsert_step(
            run,
            &NewStep {
                index: 0,
                name: STEP_NAMES[0],
                role: "precondition".parse::<StepRole>().unwrap(),
                params: Some(&typed::<WorkloadRecord>(p0.clone())),
            },
        )
        .unwrap();
    store
        .set_step_status(s0, StepStatus::Running, Some("2026-03-01T10:00:01Z"), None)
        .unwrap();
    for seq in 0..2 {
        store
            .add_intervals(
                s0,
                &interval(seq, false, 0, 8000, 131_072, 400_000, 0, None),
            )
            .unwrap();
    }
    store
        .finish_step(
            s0,
            StepStatus::Ok,
            Some(&StepSummary::Io(Box::new(typed(summary(
                0, 16000, 131_072, 400_000, 0,
            ))))),
            "2026-03-01T10:00:03Z",
        )
        .unwrap();
    store
        .put_analysis(
            run,
            Some(s0),
            &finding(
                "precondition",
                json!({"passes": 1, "written_bytes": 2_097_152_000u64, "duration_s": 2.0,
                    "bw_bytes_per_s": 1_048_576_000.0}),
            ),
        )
        .unwrap();
    store
        .put_analysis(
            run,
            Some(s0),
            &finding("write_cliff", json!({"found": false, "cliff": null})),
        )
        .unwrap();

    // Step 1: random read with one warmup interval and steady state.
    let p1 = params(
        "4k",
        json!([{"size_bytes": 4096, "weight": 1}]),
        100.0,
        100.0,
        8,
        4,
        Value::Null,
    );
    let s1 = store
        .upsert_step(
            run,
            &NewStep {
                index: 1,
                name: STEP_NAMES[1],
                role: "run".parse::<StepRole>().unwrap(),
                params: Some(&typed::<WorkloadRecord>(p1.clone())),
            },
        )
        .unwrap();
    store
        .set_step_status(s1, StepStatus::Running, Some("2026-03-01T10:00:04Z"), None)
        .unwrap();
    store
        .add_intervals(s1, &interval(0, true, 90_000, 0, 4096, 350_000, 0, dev))
        .unwrap();
    for seq in 1..4 {
        store
            .add_intervals(
                s1,
                &interval(seq, false, 100_000 + seq * 10, 0, 4096, 320_000, 0, dev),
            )
            .unwrap();
    }
    store
        .finish_step(
            s1,
            StepStatus::Ok,
            Some(&StepSummary::Io(Box::new(typed(summary(
                300_060, 0, 4096, 320_000, 0,
            ))))),
            "2026-03-01T10:00:08Z",
        )
        .unwrap();
    store
        .put_analysis(
            run,
            Some(s1),
            &finding(
                "generator_bound",
                json!({"in_flight": 32.0, "expected_in_flight": 32, "in_flight_ratio": 1.0,
                    "generator_bound": false, "cpu_busy_pct": 44.75, "message": null}),
            ),
        )
        .unwrap();
    store
        .put_analysis(
            run,
            Some(s1),
            &finding(
                "outages",
                json!({"outage_intervals": 0, "total_outage_s": 0.0, "longest_outage_s": 0.0,
                    "longest_start_t_s": null, "outages": [], "longest_gap_ns": null}),
            ),
        )
        .unwrap();
    store
        .put_analysis(
            run,
            Some(s1),
            &finding(
                "steady_state",
                json!({"reached": true, "rounds": 3, "round_s": 1.0, "max_rounds": 5, "window": 3,
                    "rounds_needed": 3, "time_needed_s": 3.0,
                    "round_iops": [100010.0, 100020.0, 100030.0],
                    "verdict": {"reached": true, "rounds_used": 3, "window_start_round": 0,
                                "mean": 100020.0, "range_pct": 0.02, "slope_excursion_pct": 0.02,
                                "reason": null}}),
            ),
        )
        .unwrap();

    // Step 2: mixed sizes under a rate limit, with a fault list (a parameter
    // the others lack), errors, an outage and a write cliff; interrupted.
    let mut p2 = params(
        "4k:50,8k:50",
        json!([{"size_bytes": 4096, "weight": 50}, {"size_bytes": 8192, "weight": 50}]),
        70.0,
        100.0,
        16,
        2,
        json!(50000.0),
    );
    p2["fault"] = json!(["eio:0.001", "delay:5ms"]);
    let s2 = store
        .upsert_step(
            run,
            &NewStep {
                index: 2,
                name: STEP_NAMES[2],
                role: "curve-50%".parse::<StepRole>().unwrap(),
                params: Some(&typed::<WorkloadRecord>(p2.clone())),
            },
        )
        .unwrap();
    store
        .set_step_status(s2, StepStatus::Running, Some("2026-03-01T10:00:09Z"), None)
        .unwrap();
    for (seq, (r, w)) in [(35_000, 15_000), (0, 0), (20_000, 8_000)]
        .into_iter()
        .enumerate()
    {
        store
            .add_intervals(
                s2,
                &interval(seq as u64, false, r, w, 6144, 90_000, seq as u64, dev),
            )
            .unwrap();
    }
    let mut sum2 = summary(55_000, 23_000, 6144, 90_000, 3);
    sum2["total"]["service_lat_ns"] = json!(lat(60_000));
    sum2["issue_lag_ns"] = json!(lat(2_000));
    store
        .finish_step(
            s2,
            StepStatus::Interrupted,
            Some(&StepSummary::Io(Box::new(typed(sum2)))),
            "2026-03-01T10:00:12Z",
        )
        .unwrap();
    store
        .put_analysis(
            run,
            Some(s2),
            &finding(
                "outages",
                json!({"outage_intervals": 1, "total_outage_s": 1.0, "longest_outage_s": 1.0,
                    "longest_start_t_s": 1.0,
                    "outages": [{"start_t_s": 1.0, "end_t_s": 2.0, "duration_s": 1.0}],
                    "longest_gap_ns": null}),
            ),
        )
        .unwrap();
    store
        .put_analysis(
            run,
            Some(s2),
            &finding(
                "write_cliff",
                json!({"found": true, "cliff": {"onset_t_s": 2.0, "level_before_iops": 15000.0,
                    "level_after_iops": 8000.0, "drop_pct": 46.666666}}),
            ),
        )
        .unwrap();

    store
        .put_analysis(
            run,
            None,
            &finding(
                "curve",
                json!({"group": 0, "threshold_ms": 1.0, "steps": [1, 2],
                    "points": [{"iops": 100020.0, "mean_lat_ns": 320500.0, "p99_lat_ns": 1282000.0},
                               {"iops": 26000.0, "mean_lat_ns": 90500.0, "p99_lat_ns": 362000.0}],
                    "analysis": {"max_iops": 100020.0, "threshold_ns": 1000000.0,
                                 "best_under_mean": 100020.0,
                                 "best_under_p99": 26000.0, "knee_factor": 2.0,
                                 "knee": null, "curvature_knee": null}}),
            ),
        )
        .unwrap();
    store
        .finish_run(run, RunStatus::Interrupted, "2026-03-01T10:00:12Z")
        .unwrap();
    (store, run)
}
