//! Protects the promise that killing iorig (even `kill -9`) in the middle of
//! a run loses at most the interval being written: after a writer process is
//! killed, the database passes SQLite's integrity check and holds every
//! interval the writer had seen committed, with no gap in `seq` and no
//! half-written interval.
//!
//! The writer is this test binary itself, started again with an environment
//! variable that turns `writer_child` from a no-op into the writing loop
//! (a child process is needed: a thread cannot be killed the way a crash
//! kills a process).

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use iorig_stats::{CpuUsage, IntervalStats};
use iorig_store::{HistKind, IntervalRow, NewRun, NewStep, Op, RunKind, Store};
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const DB_ENV: &str = "IORIG_STORE_KILL_TEST_DB";
/// The child stops by itself after this long, should the parent fail to kill it.
const CHILD_LIMIT: Duration = Duration::from_secs(60);

fn interval_stats(seq: u64) -> IntervalStats {
    let mut s = IntervalStats::default();
    for i in 0..200u64 {
        s.read.ops += 1;
        s.read.bytes += 4096;
        s.read.lat.record(20_000 + (i * 131 + seq * 17) % 80_000);
    }
    s
}

/// The name the test harness knows [`writer_child`] by: its module path
/// without the test crate's name (`kill_safety::writer_child` in the one
/// test crate of this package).
fn child_test_name() -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::writer_child"),
        None => "writer_child".to_owned(),
    }
}

/// The writing loop when started by the test below; passes at once otherwise.
#[test]
fn writer_child() {
    let Some(path) = std::env::var_os(DB_ENV) else {
        return;
    };
    let store = Store::open(std::path::Path::new(&path)).unwrap();
    let run = store
        .create_run(&NewRun {
            kind: RunKind::Run,
            plan_json: None,
            host: "h".into(),
            tool_version: "0".into(),
            command_line: "writer".into(),
            labels: Default::default(),
            started: "2026-01-01T00:00:00Z".into(),
        })
        .unwrap();
    let params = iorig_spec::WorkloadFile::default()
        .resolve(1)
        .unwrap()
        .record();
    let step = store
        .upsert_step(
            run,
            &NewStep {
                index: 0,
                name: "w",
                role: iorig_store::StepRole::Run,
                params: Some(&params),
            },
        )
        .unwrap();
    let start = Instant::now();
    let mut seq = 0u64;
    while start.elapsed() < CHILD_LIMIT {
        let stats = interval_stats(seq);
        let rows = IntervalRow::rows_of(
            seq,
            seq as f64,
            1.0,
            false,
            &stats,
            CpuUsage::default(),
            None,
        );
        store.add_intervals(step, &rows).unwrap();
        store
            .put_histogram(step, Op::Read, HistKind::Lat, &stats.read.lat)
            .unwrap();
        // Only printed once the commit returned: everything up to here must
        // survive the kill.
        println!("committed {seq}");
        seq += 1;
    }
}

#[test]
fn kill_minus_9_loses_at_most_the_interval_in_flight() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("iorig.db");
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args([
            "--exact",
            &child_test_name(),
            "--nocapture",
            "--test-threads=1",
        ])
        .env(DB_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let last = Arc::new(AtomicI64::new(-1));
    let reader = {
        let last = Arc::clone(&last);
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(n) = line
                    .split("committed ")
                    .nth(1)
                    .and_then(|n| n.trim().parse::<i64>().ok())
                {
                    last.store(n, Ordering::SeqCst);
                }
            }
        })
    };

    // Let the writer get going, then give it ~300 ms more mid-stream.
    let waited = Instant::now();
    while last.load(Ordering::SeqCst) < 5 && waited.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap(); // SIGKILL on Unix: no destructor, no flush.
    let status = child.wait().unwrap();
    reader.join().unwrap();
    assert!(!status.success(), "the writer ended by itself: {status:?}");
    let last = last.load(Ordering::SeqCst);
    assert!(last >= 5, "the writer committed only up to {last}");

    let store = Store::open(&path).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let runs = store.list_runs().unwrap();
    assert_eq!(runs.len(), 1);
    let steps = store.steps(runs[0].id).unwrap();
    assert_eq!(steps.len(), 1);
    let rows = store.intervals(steps[0].id).unwrap();
    assert_eq!(rows.len() % 3, 0, "a half-written interval survived");
    let intervals = (rows.len() / 3) as i64;
    for (i, chunk) in rows.chunks(3).enumerate() {
        let ops: Vec<Op> = chunk.iter().map(|r| r.op).collect();
        assert_eq!(ops, [Op::Read, Op::Write, Op::Total], "interval {i}");
        assert!(chunk.iter().all(|r| r.seq == i as u64), "gap before {i}");
        assert_eq!(chunk[0].ops, 200);
    }
    println!("{intervals} intervals stored, last reported committed seq {last}");
    // Everything reported committed is there; at most the one in flight
    // (committed but not yet reported) is beyond it.
    assert!(
        intervals - 1 == last || intervals - 1 == last + 1,
        "{intervals} intervals stored, last reported committed seq {last}"
    );
    let hist = store
        .histogram(steps[0].id, Op::Read, HistKind::Lat)
        .unwrap()
        .unwrap();
    assert_eq!(hist.count(), 200);
}
