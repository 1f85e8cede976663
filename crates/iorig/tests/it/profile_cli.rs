//! Protects `iorig profile` end to end: recorded snapshots with known counter
//! deltas give exactly the expected figures (a 32-bit counter wrap, a disk
//! that appears mid-recording, a partition not counted twice with its disk);
//! the built-in rules give the documented zone on each boundary (35.0 and
//! 50.0 MB/s, 8k and 16k); a live profile of a loop device measures the write
//! MB/s an `iorig run --rate` reported, within 10 %; `--record` then
//! `--diskstats` reproduces a live profile; the emitted workload runs; the
//! profile is stored and listed; bad input exits 2 and writes nothing; a
//! fault while sampling keeps the intervals so far and exits 1; the printed
//! table, summary and verdicts are snapshot-tested.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common::{iorig, ok, run, tmp};

use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

fn profile_json(args: &[&str], dir: &Path) -> Value {
    let out = iorig()
        .arg("profile")
        .args(args)
        .args(["--json", "-"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "iorig profile {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON alone")
}

/// One diskstats line: reads, read sectors, read ms, writes, write sectors,
/// write ms, io ms, queue ms (17 counter fields, the rest 0).
#[derive(Clone, Copy, Default)]
struct Line {
    r: u64,
    rs: u64,
    rms: u64,
    w: u64,
    ws: u64,
    wms: u64,
    io_ms: u64,
    q_ms: u64,
}

fn text(devs: &[(&str, Line)]) -> String {
    let mut t = String::new();
    for (i, (name, l)) in devs.iter().enumerate() {
        let _ = writeln!(
            t,
            "   8 {:>7} {name} {} 0 {} {} {} 0 {} {} 0 {} {} 0 0 0 0 0 0",
            i * 16,
            l.r,
            l.rs,
            l.rms,
            l.w,
            l.ws,
            l.wms,
            l.io_ms,
            l.q_ms
        );
    }
    t
}

fn record(dir: &Path, snaps: &[(u64, Vec<(&str, Line)>)]) {
    std::fs::create_dir_all(dir).unwrap();
    for (t, devs) in snaps {
        std::fs::write(dir.join(format!("{t}.diskstats")), text(devs)).unwrap();
    }
}

const T0: u64 = 1_700_000_000_000;

#[test]
fn recorded_snapshots_give_exact_figures() {
    let d = tmp();
    let rec = d.path().join("rec");
    // sda: 2 s intervals. Interval 1: 1000 reads of 4 KiB, 500 writes of
    // 16 KiB. Interval 2: the write-sector counter wraps at 2^32 (a 32-bit
    // kernel) while 200 writes of 8 KiB happen. sdb appears in snapshot 2 and
    // only has figures from interval 2 on. sda1 is a partition: not covered.
    let wrap_from = (1u64 << 32) - 1000;
    let sda = [
        Line {
            wms: 0,
            ws: wrap_from - 16_000,
            ..Default::default()
        },
        Line {
            r: 1000,
            rs: 8000,
            rms: 2000,
            w: 500,
            ws: wrap_from,
            wms: 1500,
            io_ms: 1000,
            q_ms: 3000,
        },
        Line {
            r: 1000,
            rs: 8000,
            rms: 2000,
            w: 700,
            ws: 2200,
            wms: 1900,
            io_ms: 2000,
            q_ms: 3400,
        },
    ];
    let sdb = Line {
        w: 100,
        ws: 800,
        ..Default::default()
    };
    let sdb2 = Line {
        w: 300,
        ws: 2400,
        wms: 400,
        io_ms: 500,
        q_ms: 400,
        ..Default::default()
    };
    let part = Line {
        w: 9999,
        ws: 999_999,
        ..Default::default()
    };
    record(
        &rec,
        &[
            (T0, vec![("sda", sda[0]), ("sda1", part)]),
            (
                T0 + 2000,
                vec![("sda", sda[1]), ("sda1", part), ("sdb", sdb)],
            ),
            (
                T0 + 4000,
                vec![("sda", sda[2]), ("sda1", part), ("sdb", sdb2)],
            ),
        ],
    );
    let doc = profile_json(&["--diskstats", rec.to_str().unwrap(), "--no-db"], d.path());
    assert_eq!(doc["schema"], "iorig.profile/1");
    assert_eq!(doc["duration_s"], 4.0);
    let names: Vec<&str> = doc["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["sda", "sdb"],
        "whole disks only, sdb once it appears"
    );

    let iv = doc["intervals"].as_array().unwrap();
    assert_eq!(iv.len(), 2);
    let i1 = &iv[0]["total"];
    assert_eq!(i1["read_iops"], 500.0);
    assert_eq!(i1["write_iops"], 250.0);
    assert_eq!(i1["read_bw_bytes_per_s"], 1000.0 * 4096.0 / 2.0);
    assert_eq!(i1["write_bw_bytes_per_s"], 500.0 * 16384.0 / 2.0);
    assert_eq!(i1["read_avg_size_bytes"], 4096.0);
    assert_eq!(i1["write_avg_size_bytes"], 16384.0);
    assert_eq!(i1["read_pct_ops"], 100.0 * 1000.0 / 1500.0);
    assert_eq!(i1["queue_depth"], 1.5);
    assert_eq!(i1["read_await_ms"], 2.0);
    assert_eq!(i1["write_await_ms"], 3.0);
    assert_eq!(i1["util_pct"], 50.0);
    assert!(
        iv[0]["devices"].get("sdb").is_none(),
        "sdb's first snapshot is only a baseline"
    );

    // Interval 2: sda's writes wrapped (1000 + 2200 sectors = 200 writes of
    // 8 KiB); sdb 200 writes of 4 KiB.
    let i2 = &iv[1];
    assert_eq!(i2["devices"]["sda"]["write_iops"], 100.0);
    assert_eq!(
        i2["devices"]["sda"]["write_avg_size_bytes"],
        3200.0 * 512.0 / 200.0
    );
    assert_eq!(i2["devices"]["sdb"]["write_iops"], 100.0);
    assert_eq!(i2["devices"]["sdb"]["write_avg_size_bytes"], 4096.0);
    assert_eq!(i2["total"]["write_iops"], 200.0);
    assert_eq!(
        i2["total"]["write_bw_bytes_per_s"],
        (3200.0 + 1600.0) * 512.0 / 2.0
    );
    assert_eq!(i2["total"]["util_pct"], 50.0, "the busiest device");
    assert_eq!(i2["total"]["read_await_ms"], Value::Null, "no reads");

    // The summary: means from summed counters, p95 and peak over intervals.
    let s = &doc["summary"]["total"];
    assert_eq!(s["write_iops"]["mean"], (500.0 + 400.0) / 4.0);
    assert_eq!(s["write_iops"]["peak"], 250.0);
    assert_eq!(s["write_iops"]["p95"], 250.0);
    let bytes = (500.0 * 16384.0) + (3200.0 + 1600.0) * 512.0;
    assert_eq!(s["write_bw_bytes_per_s"]["mean"], bytes / 4.0);
    assert_eq!(s["write_avg_size_bytes"]["mean"], bytes / 900.0);
    assert_eq!(s["read_pct_ops"]["mean"], 100.0 * 1000.0 / 1900.0);
    assert_eq!(
        doc["summary"]["devices"]["sdb"]["write_iops"]["mean"],
        100.0
    );

    // A partition with its disk: shown, not added to the total.
    let doc = profile_json(
        &[
            "--diskstats",
            rec.to_str().unwrap(),
            "--device",
            "sda",
            "--device",
            "sda1",
            "--no-db",
        ],
        d.path(),
    );
    let sda1 = doc["devices"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["name"] == "sda1")
        .unwrap();
    assert_eq!(sda1["in_total"], false);
    assert_eq!(sda1["partition_of"], "sda");
    assert_eq!(doc["intervals"][0]["total"]["write_iops"], 250.0);
}

#[test]
fn the_printed_profile_reads_well() {
    let d = tmp();
    let rec = d.path().join("rec");
    let at = |r: u64, w: u64, ws: u64, ms: u64| Line {
        r,
        rs: r * 8,
        rms: r / 2,
        w,
        ws,
        wms: w,
        io_ms: ms,
        q_ms: 2 * ms,
    };
    record(
        &rec,
        &[
            (T0, vec![("sda", at(0, 0, 0, 0)), ("sdb", at(0, 0, 0, 0))]),
            (
                T0 + 5000,
                vec![
                    ("sda", at(5000, 2500, 40_000, 2500)),
                    ("sdb", at(100, 0, 0, 50)),
                ],
            ),
            (
                T0 + 10_000,
                vec![
                    ("sda", at(9000, 7500, 200_000, 4500)),
                    ("sdb", at(200, 10, 80, 100)),
                ],
            ),
        ],
    );
    let out = run(
        &["profile", "--diskstats", rec.to_str().unwrap(), "--no-db"],
        d.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).replace(rec.to_str().unwrap(), "[REC]");
    insta::assert_snapshot!(text);
}

/// A recording of one 8 s interval on sda with `writes` writes of `sectors` sectors in all.
fn one_interval(dir: &Path, writes: u64, sectors: u64) {
    record(
        dir,
        &[
            (T0, vec![("sda", Line::default())]),
            (
                T0 + 8000,
                vec![(
                    "sda",
                    Line {
                        w: writes,
                        ws: sectors,
                        ..Default::default()
                    },
                )],
            ),
        ],
    );
}

fn verdict(doc: &Value, rule_set: &str, figure: &str) -> (String, f64) {
    let set = doc["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["rule_set"] == rule_set)
        .unwrap();
    let v = set["verdicts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["figure"] == figure)
        .unwrap();
    (
        v["level"].as_str().unwrap_or("none").to_owned(),
        v["value"].as_f64().unwrap(),
    )
}

/// The replication-link verdict on `figure` for one 8 s interval of `writes`
/// writes of `sectors` sectors in all.
fn replication_verdict(d: &Path, writes: u64, sectors: u64, figure: &str) -> (String, f64) {
    let rec = d.join(format!("rec-{writes}-{sectors}"));
    one_interval(&rec, writes, sectors);
    let args = [
        "--diskstats",
        rec.to_str().unwrap(),
        "--rules",
        "replication-link",
        "--no-db",
    ];
    verdict(&profile_json(&args, d), "replication-link", figure)
}

#[test]
fn replication_link_rules_at_their_boundaries() {
    let d = tmp();
    // Write MB/s: 280 MB in 8 s = 35.0 exactly; 400 MB = 50.0; one sector more is above.
    for (sectors, want) in [
        (546_875, "green"),
        (546_876, "yellow"),
        (781_250, "yellow"),
        (781_251, "red"),
        (100_000, "green"),
    ] {
        let (level, value) = replication_verdict(d.path(), 1000, sectors, "write_bw_bytes_per_s");
        assert_eq!(level, want, "{sectors} sectors in 8 s = {value} bytes/s");
    }
    // Average write size: exactly 8k and 16k are in the middle zone.
    for (sectors, want) in [
        (15_999, "green"),
        (16_000, "yellow"),
        (32_000, "yellow"),
        (32_001, "red"),
    ] {
        let (level, value) = replication_verdict(d.path(), 1000, sectors, "write_avg_size_bytes");
        assert_eq!(level, want, "average write {value} bytes");
    }
}

#[test]
fn the_emitted_workload_replays_the_mix() {
    let d = tmp();
    let rec = d.path().join("rec");
    // 10 s: 3000 reads of 4 KiB, 1000 writes of 16 KiB, queue depth 2.
    record(
        &rec,
        &[
            (T0, vec![("sda", Line::default())]),
            (
                T0 + 10_000,
                vec![(
                    "sda",
                    Line {
                        r: 3000,
                        rs: 24_000,
                        w: 1000,
                        ws: 32_000,
                        q_ms: 20_000,
                        ..Default::default()
                    },
                )],
            ),
        ],
    );
    let w = d.path().join("w.toml");
    let out = run(
        &[
            "profile",
            "--diskstats",
            rec.to_str().unwrap(),
            "--emit-workload",
            w.to_str().unwrap(),
            "--no-db",
            "--quiet",
        ],
        d.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let toml = std::fs::read_to_string(&w).unwrap();
    for want in [
        "read = 75.0",
        "read_bs = \"4k\"",
        "write_bs = \"16k\"",
        "rate = 400",
        "qd = 2",
    ] {
        assert!(toml.contains(want), "{want} in:\n{toml}");
    }
    // It runs, and does what it says.
    let f = d.path().join("t.dat");
    let out = iorig()
        .args([
            "run",
            w.to_str().unwrap(),
            "--target",
            f.to_str().unwrap(),
            "--size",
            "16m",
            "--time",
            "2s",
            "--no-db",
            "--json",
            "-",
        ])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &doc["summary"];
    let size = |op: &str| s[op]["bytes"].as_f64().unwrap() / s[op]["ops"].as_f64().unwrap();
    assert_eq!(size("read"), 4096.0);
    assert_eq!(size("write"), 16384.0);
    // Paced at the measured rate: the run asks for 400 IOPS and never runs
    // ahead of that schedule (counts, not speed: a loaded machine may fall
    // behind). I/O k is due at k / 400 s, so at most 800 in 2 s, plus the
    // first at time 0 and a little slack.
    assert_eq!(doc["workload"]["rate_iops"].as_f64(), Some(400.0), "{doc}");
    let ops = s["total"]["ops"].as_u64().unwrap();
    assert!(
        ops > 0 && ops <= 400 * 2 + 4,
        "{ops} I/Os in 2 s at 400 IOPS"
    );
}

#[test]
fn a_profile_is_stored_and_listed() {
    let d = tmp();
    let rec = d.path().join("rec");
    one_interval(&rec, 100, 800);
    let out = run(
        &[
            "profile",
            "--diskstats",
            rec.to_str().unwrap(),
            "--db",
            "p.db",
            "--quiet",
        ],
        d.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["runs", "list", "--db", "p.db"], d.path());
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed
            .lines()
            .any(|l| l.contains("profile") && l.contains("ok")),
        "{listed}"
    );
    let out = run(&["runs", "show", "1", "--db", "p.db", "--json"], d.path());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let step = &doc["steps"][0];
    assert_eq!(step["summary"]["total"]["write_iops"]["mean"], 12.5);
    assert!(step["analysis"]["rules"].is_array());
    assert_eq!(
        step["analysis"]["profile_intervals"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn bad_input_exits_2_and_writes_nothing() {
    let d = tmp();
    let rec = d.path().join("rec");
    one_interval(&rec, 100, 800);
    let r = rec.to_str().unwrap();
    let full = d.path().join("full");
    record(&full, &[(T0, vec![("sda", Line::default())])]);
    let cases: Vec<Vec<&str>> = vec![
        vec!["--diskstats", r, "--device", "sdz"],
        vec![
            "--device",
            "no-such-device",
            "--time",
            "1s",
            "--interval",
            "1s",
        ],
        vec!["--diskstats", r, "--interval", "1s"],
        vec!["--diskstats", r, "--rules", "no-such-rules"],
        vec!["--interval", "10ms"],
        vec!["--interval", "5s", "--time", "1s"],
        vec![
            "--record",
            full.to_str().unwrap(),
            "--time",
            "1s",
            "--interval",
            "1s",
        ],
        vec!["--diskstats", full.to_str().unwrap()],
        vec!["--diskstats", r, "--emit-rate", "median"],
    ];
    for args in cases {
        let mut all = vec!["profile"];
        all.extend(&args);
        all.extend(["--db", "bad.db", "--csv", "bad.csv"]);
        let out = run(&all, d.path());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        assert!(
            !d.path().join("bad.db").exists() && !d.path().join("bad.csv").exists(),
            "{args:?} wrote"
        );
    }
}

#[test]
fn record_then_replay_gives_the_same_profile() {
    let d = tmp();
    let rec = d.path().join("rec");
    let live = profile_json(
        &[
            "--interval",
            "200ms",
            "--time",
            "1s",
            "--record",
            rec.to_str().unwrap(),
            "--no-db",
            "--csv",
            "live.csv",
        ],
        d.path(),
    );
    let replay = profile_json(&["--diskstats", rec.to_str().unwrap(), "--no-db"], d.path());
    assert_eq!(live["intervals"].as_array().unwrap().len(), 5);
    assert_eq!(live["summary"], replay["summary"]);
    assert_eq!(live["intervals"], replay["intervals"]);
    let csv = std::fs::read_to_string(d.path().join("live.csv")).unwrap();
    assert!(csv.starts_with("t_s,duration_s,device,read_iops,"));
    assert!(csv.lines().count() >= 6, "{csv}");
}

// ------------------------------------------------------------------ live, loop device

struct LoopDev(String);

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.0]).status();
    }
}

/// A loop device for the live test, which is `#[ignore]`d as needing root:
/// run with `--ignored` as root, a missing losetup is a failure.
fn loop_dev(dir: &Path) -> LoopDev {
    // SAFETY: geteuid has no preconditions.
    assert!(
        unsafe { geteuid() } == 0,
        "the live profile test needs root"
    );
    let img = dir.join("disk.img");
    std::fs::File::create(&img)
        .unwrap()
        .set_len(256 << 20)
        .unwrap();
    let o = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&img)
        .output()
        .expect("losetup");
    assert!(o.status.success(), "losetup could not attach a loop device");
    LoopDev(String::from_utf8_lossy(&o.stdout).trim().to_owned())
}

extern "C" {
    fn geteuid() -> u32;
}

#[test]
#[ignore = "needs root: loop devices"]
fn live_profile_of_a_loop_device_matches_the_run() {
    let d = tmp();
    let lo = loop_dev(d.path());
    // 300 writes/s of 64 KiB = 19.7 MB/s for 12 s; the profile samples 4 s
    // of it, started once the run's writes reach the device.
    let name = lo.0.trim_start_matches("/dev/").to_owned();
    let stat = format!("/sys/block/{name}/stat");
    let writes = || -> u64 {
        // Field 5 of the block layer's stat file: writes completed.
        std::fs::read_to_string(&stat)
            .unwrap()
            .split_whitespace()
            .nth(4)
            .unwrap()
            .parse()
            .unwrap()
    };
    let before = writes();
    let run = iorig()
        .args([
            "run",
            "--target",
            &lo.0,
            "--allow-destroy",
            "--read",
            "0",
            "--bs",
            "64k",
            "--rate",
            "300",
            "--qd",
            "4",
            "--time",
            "12s",
            "--no-db",
            "--quiet",
            "--json",
            "-",
        ])
        .current_dir(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while writes() == before {
        assert!(
            std::time::Instant::now() < deadline,
            "the run never wrote to {}",
            lo.0
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let prof = profile_json(
        &[
            "--device",
            name.as_str(),
            "--interval",
            "1s",
            "--time",
            "4s",
            "--no-db",
        ],
        d.path(),
    );
    let out = run.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ran = doc["summary"]["write"]["bw_bytes_per_s"].as_f64().unwrap();
    let seen = prof["summary"]["total"]["write_bw_bytes_per_s"]["mean"]
        .as_f64()
        .unwrap();
    assert!(
        (seen - ran).abs() <= 0.10 * ran,
        "profile {seen} bytes/s vs run {ran} bytes/s"
    );
    assert_eq!(
        prof["summary"]["total"]["write_avg_size_bytes"]["mean"],
        65536.0
    );
}

/// How many snapshots (`<ms>.diskstats`) a recording directory holds so far
/// (0 while it does not exist).
fn snapshots(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "diskstats"))
            .count()
    })
}

#[test]
fn a_fault_while_sampling_keeps_the_intervals_so_far() {
    let d = tmp();
    let rec = d.path().join("rec");
    let child = iorig()
        .args([
            "profile",
            "--interval",
            "200ms",
            "--time",
            "30s",
            "--record",
        ])
        .arg(&rec)
        .args(["--db", "f.db", "--json", "-"])
        .current_dir(d.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Let three intervals complete (four snapshots: the first is the
    // baseline), then take the recording's directory away: the next
    // snapshot cannot be written.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while snapshots(&rec) < 4 {
        assert!(
            std::time::Instant::now() < deadline,
            "only {} snapshot(s) recorded",
            snapshots(&rec)
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Again should a snapshot land in it while it goes (then not empty).
    while rec.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} stays",
            rec.display()
        );
        if std::fs::remove_dir_all(&rec).is_err() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("keeping the intervals so far"), "{stderr}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["run"]["status"], "failed");
    assert_eq!(doc["run"]["ended_by"], "error");
    let kept = doc["intervals"].as_array().unwrap().len();
    assert!(kept >= 3, "{kept} interval(s) kept");
    let out = run(&["runs", "show", "1", "--db", "f.db", "--json"], d.path());
    let stored: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(stored["run"]["status"], "failed");
    assert_eq!(stored["steps"][0]["summary"]["intervals"], kept);
}

/// Issue 15, item 14: a stored profile has a report, exports and a
/// comparison like a test run: the figures, the verdicts and the series per
/// interval, with exact numbers from a recording.
#[test]
fn a_stored_profile_is_reported_exported_and_compared() {
    let d = tmp();
    // Two profiles of one disk over two 8 s intervals: 100 then 300 writes,
    // and the same disk doing twice as many writes.
    for (name, k) in [("a", 1u64), ("b", 2)] {
        let rec = d.path().join(name);
        let l = |w: u64| Line {
            w: w * k,
            ws: w * k * 8,
            wms: w * k,
            io_ms: 400,
            ..Line::default()
        };
        record(
            &rec,
            &[
                (T0, vec![("sda", Line::default())]),
                (T0 + 8_000, vec![("sda", l(100))]),
                (T0 + 16_000, vec![("sda", l(400))]),
            ],
        );
        ok(
            &[
                "profile",
                "--diskstats",
                rec.to_str().unwrap(),
                "--db",
                "p.db",
                "-q",
            ],
            d.path(),
        );
    }
    // CSV: the figures (write_iops mean 25 = 400 writes / 16 s, peak 37.5)
    // and one row per interval and scope.
    ok(
        &[
            "export", "1", "--db", "p.db", "--format", "csv", "--out", "p.csv",
        ],
        d.path(),
    );
    let figures = std::fs::read_to_string(d.path().join("p.csv")).unwrap();
    assert!(
        figures.starts_with("run_id,scope,figure,mean,p95,peak\n"),
        "{figures}"
    );
    assert!(figures.contains("1,total,write_iops,25.000,"), "{figures}");
    assert!(figures.contains("1,sda,write_iops,25.000,"), "{figures}");
    let line = figures
        .lines()
        .find(|l| l.starts_with("1,total,write_iops,"))
        .unwrap();
    assert!(line.ends_with(",37.500"), "{line}");
    let intervals = std::fs::read_to_string(d.path().join("p.intervals.csv")).unwrap();
    let rows: Vec<&str> = intervals.lines().collect();
    assert!(
        rows[0].starts_with("t_s,duration_s,device,read_iops,write_iops,"),
        "{}",
        rows[0]
    );
    // Two intervals, each a total row and an sda row.
    assert_eq!(rows.len(), 5, "{intervals}");
    assert!(
        rows[1].starts_with("8.000,8.000,total,0.000,12.500,"),
        "{}",
        rows[1]
    );
    assert!(
        rows[3].starts_with("16.000,8.000,total,0.000,37.500,"),
        "{}",
        rows[3]
    );
    // XLSX and JSON.
    ok(
        &[
            "export", "1", "--db", "p.db", "--format", "xlsx", "--out", "p.xlsx",
        ],
        d.path(),
    );
    assert!(std::fs::read(d.path().join("p.xlsx"))
        .unwrap()
        .starts_with(b"PK"));
    ok(
        &[
            "export", "1", "--db", "p.db", "--format", "json", "--out", "p.json",
        ],
        d.path(),
    );
    let doc: Value =
        serde_json::from_slice(&std::fs::read(d.path().join("p.json")).unwrap()).unwrap();
    assert_eq!(doc["run"]["kind"], "profile");
    assert_eq!(
        doc["steps"][0]["summary"]["total"]["write_iops"]["mean"],
        25.0
    );
    // hlog has nothing to export: refused, nothing written.
    let out = run(
        &[
            "export", "1", "--db", "p.db", "--format", "hlog", "--out", "p.hlog",
        ],
        d.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!d.path().join("p.hlog").exists());
    // The report: verdicts, figures and a chart per scope.
    ok(&["report", "1", "--db", "p.db", "--out", "rep"], d.path());
    let html = std::fs::read_to_string(d.path().join("rep/index.html")).unwrap();
    for want in ["Verdicts", "replication-link", "write_iops", "37.5", "sda"] {
        assert!(
            html.contains(want),
            "{want} missing from the profile report"
        );
    }
    assert!(
        d.path().join("rep/profile-1.svg").exists() && d.path().join("rep/profile-2.svg").exists()
    );
    // Compared: profile 2 does twice the writes of profile 1.
    let said = ok(
        &["compare", "1", "2", "--db", "p.db", "--out", "cmp"],
        d.path(),
    );
    let row = said
        .lines()
        .find(|l| l.starts_with("write_iops") && l.contains("mean"))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        row.contains("25.0") && row.contains("50.0 (+100.0%)"),
        "{row}"
    );
    assert!(
        said.contains("profile 2 overall: replication-link"),
        "{said}"
    );
    assert!(d.path().join("cmp/index.html").exists());
    // A profile is not compared with a test run.
    ok(
        &[
            "run", "--engine", "null", "--time", "200ms", "--db", "p.db", "-q",
        ],
        d.path(),
    );
    let out = run(&["compare", "1", "3", "--db", "p.db"], d.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("compare profiles with profiles"));
}
