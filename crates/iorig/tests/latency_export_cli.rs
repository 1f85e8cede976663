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

mod common;

use common::{run, tmp};
use serde_json::Value;
use std::path::Path;
use std::process::Command;

fn ok(args: &[&str], dir: &Path) -> String {
    let out = run(args, dir);
    assert!(
        out.status.success(),
        "iorig {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

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
time = "2s"
warmup = "1s"
interval = "500ms"
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
    // 2 steps × 4 measured half-second intervals.
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
