//! What this protects: `iorig trace analyse` reads the formats real
//! producers write (MSR CSV with its FILETIME and byte units, fio's own
//! `write_iolog` output, gzip and zstd) and its JSON holds the figures the
//! issue names (`records`, `hot_spot`, `hot_spot_reads`, `lru_curve`,
//! `cache_for_hit`) with known answers; bad traces exit 2 with the record
//! number and write nothing. The fio producer test needs fio and is
//! `#[ignore]`d with the reason; `.ci/run` runs it.
#![allow(clippy::unwrap_used)]

mod common;

use common::{iorig, ok, tmp};
use serde_json::Value;
use std::fmt::Write as _;

/// An MSR trace: 2 passes over 256 blocks of 4k, reads, then one write per
/// block; FILETIME steps of 10 µs (100 × 100 ns).
fn msr_scan() -> String {
    let mut t = String::new();
    let mut ts = 128_166_372_003_061_629u64;
    for op in ["Read", "Read", "Write"] {
        for b in 0..256u64 {
            let _ = writeln!(t, "{ts},web,1,{op},{},4096,55", b * 4096);
            ts += 100;
        }
    }
    t
}

#[test]
fn an_msr_trace_gives_its_hot_spot_and_lru_cliff() {
    let dir = tmp();
    std::fs::write(dir.path().join("t.csv"), msr_scan()).unwrap();
    let out = ok(
        &["trace", "analyse", "t.csv", "--hit", "0.6", "--json", "-"],
        dir.path(),
    );
    let a: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(a["schema"], "iorig.trace/1");
    assert_eq!(a["records"], 768);
    assert_eq!(a["reads"], 512);
    assert_eq!(a["distinct_blocks"], 256);
    // 767 gaps of 10 µs.
    assert!((a["duration_s"].as_f64().unwrap() - 0.00767).abs() < 1e-9);
    // Every gap is 10 µs; every latency 5.5 µs (55 × 100 ns).
    // (HDR histograms of 3 significant digits: within 0.1 %.)
    let near = |v: &Value, want: f64| (v.as_f64().unwrap() / want - 1.0).abs() < 1e-3;
    assert_eq!(a["interarrival_ns"]["count"], 767);
    assert!(
        near(&a["interarrival_ns"]["p50"], 10_000.0),
        "{}",
        a["interarrival_ns"]
    );
    assert!(
        near(&a["latency_ns"]["max"], 5_500.0),
        "{}",
        a["latency_ns"]
    );
    // Every block equally hot: 50 % of accesses need half of them.
    let half = &a["hot_spot"][0];
    assert_eq!(
        (half["share_pct"].as_f64(), half["bytes"].as_u64()),
        (Some(50.0), Some(128 * 4096))
    );
    assert_eq!(a["hot_spot_reads"].as_array().unwrap().len(), 5);
    // The cliff: nothing hits below 256 blocks, 2 of 3 accesses at 256.
    let curve = a["lru_curve"].as_array().unwrap();
    let at = |blocks: u64| {
        curve
            .iter()
            .find(|p| p["cache_bytes"] == blocks * 4096)
            .unwrap()["hit_ratio"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(at(128), 0.0);
    assert!((at(256) - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(a["cache_for_hit"]["cache_bytes"], 256 * 4096);
    // The same trace compressed reads the same.
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, msr_scan().as_bytes()).unwrap();
    std::fs::write(dir.path().join("t.csv.gz"), gz.finish().unwrap()).unwrap();
    let out = ok(&["trace", "analyse", "t.csv.gz", "--json", "-"], dir.path());
    let b: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(b["lru_curve"], a["lru_curve"]);
    assert!(a["lru_sampling"].is_null());
    // Sampled: the rate and what was followed are stated; the counts and
    // the hot spot do not change.
    let out = ok(
        &[
            "trace", "analyse", "t.csv", "--sample", "0.5", "--json", "-",
        ],
        dir.path(),
    );
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["lru_sampling"]["rate"], 0.5);
    let followed = s["lru_sampling"]["sampled_blocks"].as_u64().unwrap();
    assert!((64..=192).contains(&followed), "{followed} of 256");
    assert_eq!(s["hot_spot"], a["hot_spot"]);
    // Over 2.56 ms windows (256 I/Os of 10 µs each): three windows, one per
    // pass; the read passes keep their hot set, the write pass too (the
    // same blocks).
    let out = ok(
        &[
            "trace", "analyse", "t.csv", "--window", "2560us", "--json", "-",
        ],
        dir.path(),
    );
    let w: Value = serde_json::from_str(&out).unwrap();
    let windows = w["windows"].as_array().unwrap();
    assert_eq!(windows.len(), 3, "{windows:?}");
    assert_eq!(windows[0]["records"], 256);
    assert!(windows[0]["hot_overlap_pct"].is_null());
    assert_eq!(windows[1]["hot_overlap_pct"], 100.0);
    assert_eq!(windows[2]["read_pct"], 0.0);
    // 256 I/Os of 5.5 µs (55 × 100 ns) in 2.56 ms: 0.55 in flight.
    assert!((windows[0]["mean_qd"].as_f64().unwrap() - 0.55).abs() < 1e-9);
    let out = iorig()
        .args(["trace", "analyse", "t.csv", "--sample", "0"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_traces_exit_2_with_the_record_and_write_nothing() {
    let dir = tmp();
    let d = dir.path();
    let mut t = msr_scan();
    t.push_str("128166372003061629,web,1,Read,0,4096,55\n");
    std::fs::write(d.join("late.csv"), &t).unwrap();
    let out = iorig()
        .args(["trace", "analyse", "late.csv", "--json", "out.json"])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("record 769") && err.contains("out of order"),
        "{err}"
    );
    assert!(!d.join("out.json").exists());
    // --skip-bad leaves it out and says so.
    let text = ok(&["trace", "analyse", "late.csv", "--skip-bad"], d);
    assert!(text.contains("1 bad record(s) left out"), "{text}");
    std::fs::write(d.join("junk.bin"), [0u8, 1, 2, 3, 4]).unwrap();
    let out = iorig()
        .args(["trace", "analyse", "junk.bin"])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = iorig()
        .args(["trace", "analyse", "late.csv", "--format", "blktrace"])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not supported yet"));
}

/// fio's own iolog (version 3, with times) of a random-read job reads back
/// with fio's I/O count and sizes.
#[test]
#[ignore = "needs fio (installed by .ci/run)"]
fn fios_own_write_iolog_is_read() {
    let dir = tmp();
    let d = dir.path();
    let status = std::process::Command::new("fio")
        .args([
            "--name=t",
            "--filename=data",
            "--size=4m",
            "--rw=randread",
            "--bs=4k",
            "--number_ios=500",
            "--write_iolog=io.log",
            "--output=/dev/null",
        ])
        .current_dir(d)
        .status()
        .unwrap();
    assert!(status.success());
    let out = ok(&["trace", "analyse", "io.log", "--json", "-"], d);
    let a: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(a["records"], 500);
    assert_eq!(a["reads"], 500);
    assert_eq!(a["sizes"][0]["size_bytes"], 4096);
    assert!(a["duration_s"].as_f64().unwrap() > 0.0);
}
