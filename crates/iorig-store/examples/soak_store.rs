//! Builds a store holding soak runs for `bench/soak.sh` (not a test): each
//! run one step of N one-second intervals, every interval's read, write and
//! total row with its own HDR histogram, written through the same store
//! calls the run writer makes (`upsert_step`, `add_intervals`,
//! `put_histogram`, `finish_step`, `finish_run`). A week at 1 s takes a
//! minute or so instead of a week: the rows go in batches of thousands of
//! intervals per transaction, and the histograms are a handful of encoded
//! variants reused.
//!
//! One interval in the middle of each run is a spike (latency 100 times,
//! IOPS a tenth), so a chart that averages points away shows it as nothing.
//!
//!   cargo run --release -p iorig-store --example soak_store -- DB INTERVALS [RUNS]

use iorig_result::{StepSummary, Summary, WorkloadRecord};
use iorig_stats::{CpuUsage, DeviceUsage, LatencyHistogram, OpSummary};
use iorig_store::{
    HistKind, IntervalRow, NewRun, NewStep, Op, RunKind, RunStatus, StepRole, StepStatus, Store,
};
use serde_json::json;
use std::collections::BTreeMap;
use std::error::Error;
use std::path::PathBuf;

/// Intervals written per transaction: large enough that commits cost
/// nothing next to the inserts, small enough to hold a few MB of rows.
const BATCH_INTERVALS: u64 = 10_000;

/// Distinct histograms per operation; interval `seq` uses `seq % VARIANTS`.
const VARIANTS: u64 = 16;

/// 4 KiB blocks.
const BS_BYTES: u64 = 4096;

type Res<T> = Result<T, Box<dyn Error>>;

fn main() -> Res<()> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: soak_store DB INTERVALS [RUNS]";
    let db = PathBuf::from(args.next().ok_or(usage)?);
    let intervals: u64 = args.next().ok_or(usage)?.parse()?;
    let runs: u32 = args.next().map_or(Ok(1), |r| r.parse())?;
    let store = Store::open(&db)?;
    for _ in 0..runs {
        soak_run(&store, intervals)?;
    }
    Ok(())
}

/// A deterministic generator (xorshift), so every store built is the same.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// A latency histogram of `count` values around `base_ns`, with a tail.
fn histogram(rng: &mut Rng, count: u64, base_ns: u64) -> LatencyHistogram {
    let mut h = LatencyHistogram::new();
    for i in 0..count {
        let jitter = rng.next() % base_ns;
        // One in a hundred is slow: the p99 the charts show.
        let tail = if i % 100 == 0 { base_ns * 8 } else { 0 };
        h.record(base_ns / 2 + jitter + tail);
    }
    h
}

/// One operation's histogram variants, their encoded bytes and summaries.
struct Variants {
    hists: Vec<LatencyHistogram>,
    bytes: Vec<Vec<u8>>,
}

impl Variants {
    fn new(rng: &mut Rng, count: u64, base_ns: u64) -> Variants {
        let hists: Vec<LatencyHistogram> = (0..VARIANTS)
            .map(|_| histogram(rng, count, base_ns))
            .collect();
        let bytes = hists.iter().map(LatencyHistogram::to_bytes).collect();
        Variants { hists, bytes }
    }

    fn row(&self, seq: u64, op: Op, scale_ops: f64) -> IntervalRow {
        let v = usize::try_from(seq % VARIANTS).unwrap_or(0);
        let h = &self.hists[v];
        let ops = (h.count() as f64 * scale_ops) as u64;
        let summary = OpSummary {
            ops,
            bytes: ops * BS_BYTES,
            iops: ops as f64,
            bw_bytes_per_s: (ops * BS_BYTES) as f64,
            lat_ns: h.summary(),
            service_lat_ns: None,
        };
        let mut row = IntervalRow::from_op(seq, (seq + 1) as f64, 1.0, seq < 60, op, &summary)
            .with_host(
                CpuUsage {
                    usr_pct: 10.0 + (seq % 7) as f64,
                    sys_pct: 20.0 + (seq % 5) as f64,
                    ..CpuUsage::default()
                },
                Some(DeviceUsage {
                    util_pct: 90.0 + (seq % 10) as f64,
                    queue_depth: 7.5,
                    read_await_ns: 60_000,
                    write_await_ns: 80_000,
                }),
            );
        row.lat_hist = Some(self.bytes[v].clone());
        row
    }
}

fn soak_run(store: &Store, intervals: u64) -> Res<()> {
    let run = store.create_run(&NewRun {
        kind: RunKind::Run,
        plan_json: None,
        host: "soak-bench".into(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        command_line: format!("iorig run --time {intervals}s --interval 1s (soak_store)"),
        labels: BTreeMap::from([("bench".to_owned(), "soak".to_owned())]),
        started: "2026-03-01T00:00:00Z".into(),
    })?;
    let params: WorkloadRecord = serde_json::from_value(json!({
        "targets": ["/dev/zram0"],
        "size_bytes": 1_073_741_824u64,
        "bs": "4k",
        "bs_bytes": [{"size_bytes": BS_BYTES, "weight": 1}],
        "align_bytes": 4096,
        "read_pct": 70.0,
        "random_pct": 100.0,
        "qd": 8,
        "submit_batch": 1,
        "threads": 4,
        "engine": "io_uring",
        "direct": true,
        "sync": "none",
        "rate_iops": null,
        "time_s": intervals as f64,
        "warmup_s": 60.0,
        "interval_s": 1.0,
        "range_start_pct": 0.0,
        "range_end_pct": 100.0,
        "dist": "uniform",
        "data": "random",
        "seed": 42,
    }))?;
    let step = store.upsert_step(
        run,
        &NewStep {
            index: 0,
            name: "soak 4k randrw 70/30",
            role: StepRole::Run,
            params: Some(&params),
        },
    )?;
    store.set_step_status(
        step,
        StepStatus::Running,
        Some("2026-03-01T00:00:00Z"),
        None,
    )?;

    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let read = Variants::new(&mut rng, 700, 200_000);
    let write = Variants::new(&mut rng, 300, 400_000);
    let total: Variants = {
        let hists: Vec<LatencyHistogram> = read
            .hists
            .iter()
            .zip(&write.hists)
            .map(|(r, w)| {
                let mut t = r.clone();
                t.merge(w);
                t
            })
            .collect();
        let bytes = hists.iter().map(LatencyHistogram::to_bytes).collect();
        Variants { hists, bytes }
    };
    let spike_at = intervals / 2;
    let spike = histogram(&mut rng, 100, 20_000_000);

    let mut batch: Vec<IntervalRow> = Vec::new();
    let mut seq = 0;
    while seq < intervals {
        let end = (seq + BATCH_INTERVALS).min(intervals);
        batch.clear();
        for s in seq..end {
            if s == spike_at {
                // The one stalled second: few I/Os, each very slow.
                let mut rows: Vec<IntervalRow> = [(Op::Read, &read), (Op::Write, &write)]
                    .into_iter()
                    .map(|(op, v)| v.row(s, op, 0.1))
                    .collect();
                let mut t = total.row(s, Op::Total, 0.1);
                t.lat_ns = spike.summary();
                t.lat_hist = Some(spike.to_bytes());
                rows.push(t);
                batch.extend(rows);
                continue;
            }
            batch.push(read.row(s, Op::Read, 1.0));
            batch.push(write.row(s, Op::Write, 1.0));
            batch.push(total.row(s, Op::Total, 1.0));
        }
        store.add_intervals(step, &batch)?;
        seq = end;
    }

    // The step's merged histograms and summary, as a run's end stores them.
    let merged = |v: &Variants| {
        let mut h = LatencyHistogram::new();
        for x in &v.hists {
            h.merge(x);
        }
        h
    };
    let (r, w, t) = (merged(&read), merged(&write), merged(&total));
    store.put_histogram(step, Op::Read, HistKind::Lat, &r)?;
    store.put_histogram(step, Op::Write, HistKind::Lat, &w)?;
    store.put_histogram(step, Op::Total, HistKind::Lat, &t)?;
    let n = intervals as f64;
    let op = |h: &LatencyHistogram| {
        let ops = h.count() * intervals / VARIANTS;
        json!({
            "ops": ops,
            "bytes": ops * BS_BYTES,
            "iops": ops as f64 / n,
            "bw_bytes_per_s": (ops * BS_BYTES) as f64 / n,
            "lat_ns": h.summary(),
        })
    };
    let summary: Summary = serde_json::from_value(json!({
        "duration_s": n,
        "read": op(&r),
        "write": op(&w),
        "total": op(&t),
        "cpu": {"usr_pct": 13.0, "sys_pct": 22.0},
        "errors": 0,
    }))?;
    store.finish_step(
        step,
        StepStatus::Ok,
        Some(&StepSummary::Io(Box::new(summary))),
        "2026-03-08T00:00:00Z",
    )?;
    store.finish_run(run, RunStatus::Ok, "2026-03-08T00:00:00Z")?;
    Ok(())
}
