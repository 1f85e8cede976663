//! Protects the latency exports (issue 15, item 13): `iorig export --format
//! hlog` writes every measured interval's histogram in HdrHistogram's
//! interval log format, which HdrHistogram's own Python package reads back
//! to the same counts and percentiles as the run's JSON; and `--lat-log`
//! records every I/O of a run, agreeing with the run's counts, sizes and
//! range.
//!
//! The hlog test needs the PyPI package `hdrhistogram` (module `hdrh`): it is
//! `#[ignore]`d with that reason, and `.ci/run` installs the package into a
//! venv and runs it (with `IORIG_TEST_PYTHON` naming the venv's python).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{ok, run, tmp};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

#[test]
#[ignore = "needs the PyPI package hdrhistogram (.ci/run installs it into a venv)"]
fn the_interval_log_reads_back_in_hdrhistogram_to_the_same_figures() {
    let dir = tmp();
    let d = dir.path();
    // A mix of reads and writes of two sizes, with a warmup the log leaves
    // out, over two steps of a plan so steps follow each other in time.
    std::fs::write(
        d.join("p.toml"),
        r#"
targets = ["d.img"]
size = "32m"
[defaults]
qd = 4
time = "1s"
warmup = "500ms"
interval = "250ms"
[[steps]]
name = "mixed"
read = 70
bs = "4k:50,64k:50"
[[steps]]
name = "reads"
read = 100
bs = "4k"
"#,
    )
    .unwrap();
    ok(&["plan", "run", "p.toml", "-q", "--db", "h.db"], d);
    let said = ok(
        &[
            "export", "1", "--db", "h.db", "--format", "hlog", "--out", "r.hlog",
        ],
        d,
    );
    assert!(said.contains("r.percentiles.csv"), "{said}");
    ok(
        &[
            "export", "1", "--db", "h.db", "--format", "json", "--out", "r.json",
        ],
        d,
    );
    let python = std::env::var("IORIG_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hlog_read.py");
    let out = Command::new(&python)
        .arg(&script)
        .args(["r.hlog", "r.percentiles.csv", "r.json"])
        .current_dir(d)
        .output()
        .unwrap_or_else(|e| panic!("{python}: {e}"));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 2 steps × 4 measured quarter-second intervals.
    assert!(
        said.contains("hlog check: 8 intervals of 2 steps"),
        "{said}"
    );
    let json: Value = serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(json["steps"].as_array().unwrap().len(), 2);
}

#[test]
fn hlog_refuses_a_percentile_path_that_is_not_a_file() {
    let dir = tmp();
    let d = dir.path();
    ok(
        &[
            "run", "--engine", "null", "--time", "1s", "--db", "h.db", "-q",
        ],
        d,
    );
    std::fs::create_dir(d.join("r.percentiles.csv")).unwrap();
    let out = run(
        &[
            "export", "1", "--db", "h.db", "--format", "hlog", "--out", "r.hlog",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !d.join("r.hlog").exists(),
        "nothing is written on bad input"
    );
}

/// `--lat-log` records every counted I/O: as many rows per direction as the
/// run counted, each inside the target's data area, aligned, of the size
/// asked, with the latency its times give; the percentiles of the logged
/// latencies are the run's within the histogram's precision.
#[test]
fn the_per_io_log_agrees_with_the_run() {
    let dir = tmp();
    let d = dir.path();
    ok(
        &[
            "run",
            "--target",
            "d.img",
            "--size",
            "16m",
            "--read",
            "70",
            "--bs",
            "4k:50,16k:50",
            "--qd",
            "4",
            "--time",
            "2s",
            "--warmup",
            "500ms",
            "--lat-log",
            "io.csv",
            "--json",
            "r.json",
            "--no-db",
            "-q",
        ],
        d,
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(d.join("r.json")).unwrap()).unwrap();
    let mut rdr = csv::Reader::from_path(d.join("io.csv")).unwrap();
    assert_eq!(
        rdr.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "start_ns",
            "submit_ns",
            "complete_ns",
            "lat_ns",
            "op",
            "target",
            "offset_bytes",
            "size_bytes",
            "worker",
            "warmup"
        ]
    );
    let header = 1u64 << 20; // an iorig scratch file's header region
    let (mut reads, mut writes, mut warm) = (0u64, 0u64, 0u64);
    let mut lats = Vec::new();
    for rec in rdr.records() {
        let r = rec.unwrap();
        let n = |i: usize| r[i].parse::<u64>().unwrap();
        let (start, submit, complete, lat, offset, size) = (n(0), n(1), n(2), n(3), n(6), n(7));
        assert!(start <= submit && submit <= complete, "{r:?}");
        assert_eq!(lat, complete - start, "{r:?}");
        assert!(size == 4096 || size == 16384, "{r:?}");
        assert_eq!(offset % 4096, 0, "{r:?}");
        assert!(
            offset >= header && offset + size <= header + (16 << 20),
            "{r:?}"
        );
        if &r[9] == "1" {
            warm += 1;
            continue;
        }
        lats.push(lat);
        match &r[4] {
            "read" => reads += 1,
            "write" => writes += 1,
            other => panic!("op {other}"),
        }
    }
    let s = &doc["summary"];
    assert_eq!(reads, s["read"]["ops"].as_u64().unwrap());
    assert_eq!(writes, s["write"]["ops"].as_u64().unwrap());
    assert!(warm > 0, "the warmup's I/Os are logged and marked");
    lats.sort_unstable();
    for (key, q) in [("p50", 0.5), ("p99", 0.99)] {
        let rank = ((q * lats.len() as f64).ceil() as usize).max(1);
        let exact = lats[rank - 1] as f64;
        let hdr = s["total"]["lat_ns"][key].as_f64().unwrap();
        // Three significant digits: the histogram's value is its bucket's
        // highest, at most 1/1024 above the exact one.
        assert!(
            hdr >= exact && hdr <= exact * (1.0 + 1.0 / 1024.0) + 1.0,
            "{key}: log {exact}, histogram {hdr}"
        );
    }
}

/// The size warning comes before a long run (also with --dry-run, which
/// writes nothing).
#[test]
fn a_long_run_with_a_per_io_log_is_warned_about() {
    let dir = tmp();
    let out = run(
        &[
            "run",
            "--engine",
            "null",
            "--time",
            "5m",
            "--lat-log",
            "io.csv",
            "--dry-run",
            "--no-db",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--lat-log writes a row per I/O") && err.contains("meant for short runs"),
        "{err}"
    );
    assert!(!dir.path().join("io.csv").exists());
}
