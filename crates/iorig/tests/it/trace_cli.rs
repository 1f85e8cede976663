//! What this protects: `iorig trace analyse` reads the formats real
//! producers write (MSR CSV with its FILETIME and byte units, fio's own
//! `write_iolog` output, gzip and zstd) and its JSON holds the figures the
//! issue names (`records`, `hot_spot`, `hot_spot_reads`, `lru_curve`,
//! `cache_for_hit`) with known answers; bad traces exit 2 with the record
//! number and write nothing. blktrace's binary records are read from a
//! capture the kernel wrote (a fixture taken from the ftrace blk tracer, and,
//! as root, a capture `iorig trace record` takes in the test on a loop
//! device while `iorig run` loads it, counted against the run and against
//! blkparse). The fio producer test needs fio, the capture root: both are
//! `#[ignore]`d with the reason; `.ci/run` runs them.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::{iorig, ok, run, tmp};
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
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--format blktrace but the file does not start with its magic"));
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

/// The kernel's blktrace records of `dd` on /dev/loop0 (ftrace's blk tracer
/// in bin mode): 5 direct 4k writes at sectors 0..32, then 3 direct 64k
/// reads at sectors 1280, 1408 and 1536, with every event of their lives.
const KERNEL_CAPTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/trace/loop0-dd.blktrace");

#[test]
fn a_kernel_blktrace_capture_gives_its_ios_d_to_c() {
    let dir = tmp();
    let d = dir.path();
    std::fs::copy(KERNEL_CAPTURE, d.join("cap")).unwrap();
    let a: Value =
        serde_json::from_str(&ok(&["trace", "analyse", "cap", "--json", "-"], d)).unwrap();
    assert_eq!(a["format"], "blktrace");
    assert_eq!(
        (a["records"].as_u64(), a["reads"].as_u64()),
        (Some(8), Some(3))
    );
    assert_eq!(a["write_bytes"], 5 * 4096);
    assert_eq!(a["read_bytes"], 3 * 65536);
    // From the first D (0.000034772) to the last (0.002429201), blkparse's
    // times; the first I/O's D2C is 0.000113473 - 0.000034772.
    assert!(
        (a["duration_s"].as_f64().unwrap() - 0.002394429).abs() < 1e-9,
        "{}",
        a["duration_s"]
    );
    assert!(
        (a["latency_ns"]["max"].as_f64().unwrap() / 78_701.0 - 1.0).abs() < 1e-3,
        "{}",
        a["latency_ns"]
    );
    assert_eq!(a["devices"][0], "7:0");
    // Cut inside its third record: the record is named, nothing is written.
    let bytes = std::fs::read(KERNEL_CAPTURE).unwrap();
    std::fs::write(d.join("cut"), &bytes[..120]).unwrap();
    let out = run(&["trace", "analyse", "cut", "--json", "x.json"], d);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("record 3: cut off after 24 of its 48 bytes"),
        "{err}"
    );
    assert!(!d.join("x.json").exists());
    let out = run(&["trace", "analyse", "cap", "--format", "msr"], d);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--format msr but the content is blktrace")
    );
}

/// The kernel's tracing is one per host: the tests that capture take turns.
static TRACING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A running `iorig trace record`. Dropped (a failed assertion), it is
/// interrupted as Ctrl-C would, so it puts the host's tracing back, and
/// killed only if it does not end.
struct Recording(std::process::Child);

impl Drop for Recording {
    fn drop(&mut self) {
        common::signal(&self.0, 2);
        let end = std::time::Instant::now() + std::time::Duration::from_secs(15);
        while std::time::Instant::now() < end {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.0.kill();
    }
}

/// The kernel's tracing lives in tracefs: mounted where it belongs if this
/// host has not.
fn mount_tracefs() {
    if !std::path::Path::new("/sys/kernel/tracing/trace_pipe").exists() {
        let st = std::process::Command::new("mount")
            .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
            .status()
            .unwrap();
        assert!(st.success(), "cannot mount tracefs");
    }
}

/// Starts `iorig trace record` and returns it once it says it is recording.
fn recording(dev: &str, out: &str, format: &str, d: &std::path::Path) -> Recording {
    use std::io::BufRead;
    let mut child = iorig()
        .args([
            "trace", "record", dev, "--time", "8s", "--out", out, "--format", format,
        ])
        .current_dir(d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let err = child.stderr.take().unwrap();
    let rec = Recording(child);
    let mut line = String::new();
    std::io::BufReader::new(err).read_line(&mut line).unwrap();
    assert!(line.contains("recording"), "trace record said: {line}");
    rec
}

#[test]
#[ignore = "needs root: a loop device and the kernel's tracing (tracefs)"]
fn a_capture_on_a_loop_device_holds_every_io_of_a_run() {
    let _turn = TRACING.lock().unwrap_or_else(|e| e.into_inner());
    let lo = common::LoopDev::new(64 << 20);
    mount_tracefs();
    let dir = tmp();
    let d = dir.path();
    for (format, file) in [("blktrace", "cap.blktrace"), ("iorig", "cap.iotrace")] {
        let mut rec = recording(&lo.dev, file, format, d);
        let out = ok(
            &[
                "run",
                "--target",
                &lo.dev,
                "--read",
                "50",
                "--qd",
                "4",
                "--random",
                "100",
                // Paced, so the kernel's trace buffers keep every event on
                // a loaded machine too (91 k I/Os a second unpaced).
                "--rate",
                "5000",
                "--time",
                "1s",
                "--json",
                "-",
                "--trace-out",
                "own.iotrace",
            ],
            d,
        );
        common::signal(&rec.0, 2);
        let st = common::wait_child(&mut rec.0, 20);
        assert!(st.success(), "trace record ended with {st}");
        let mut said = String::new();
        std::io::Read::read_to_string(rec.0.stdout.as_mut().unwrap(), &mut said).unwrap();
        let run: Value = serde_json::from_str(&out).unwrap();
        let ios = run["summary"]["read"]["ops"].as_u64().unwrap()
            + run["summary"]["write"]["ops"].as_u64().unwrap();
        let a: Value =
            serde_json::from_str(&ok(&["trace", "analyse", file, "--json", "-"], d)).unwrap();
        assert_eq!(a["format"], format);
        // Each 4k direct I/O of the run is one request of the device; the
        // capture began before the run and ended after it. The run counts
        // the I/Os that completed in its time: up to --qd more were in
        // flight when it ended. Its safety check's reads of the device's
        // signature areas are the other sizes (and perhaps one 4k read).
        // A loaded CI once traced 6 more than the run counted where qd + 1
        // = 5 was allowed, with no udev to probe the device: the bound
        // keeps a margin of a few I/Os, far below a run's thousands, so a
        // capture that loses or invents I/Os still fails.
        let small = a["sizes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["size_bytes"] == 4096)
            .map(|s| s["count"].as_u64().unwrap())
            .unwrap();
        assert!(
            small >= ios && small <= ios + 4 + 1 + 8,
            "{small} 4k I/Os traced, {ios} counted by the run: {said}"
        );
        assert_eq!(
            a["latency_ns"]["count"], a["records"],
            "every I/O has its completion"
        );
        // iorig's own trace of the run holds exactly the I/Os it counted,
        // and each one is in the kernel's capture with the same place, size
        // and direction; the kernel's latency (issue to the driver until
        // completion) is within iorig's (submission until reaped).
        let own = iorig_trace_records(&d.join("own.iotrace"));
        assert_eq!(own.len() as u64, ios);
        if format == "iorig" {
            let kernel = iorig_trace_records(&d.join(file));
            let mut seen: std::collections::HashMap<(u64, u32, u8), Vec<u64>> =
                std::collections::HashMap::new();
            for k in &kernel {
                seen.entry((k.offset, k.size, k.op))
                    .or_default()
                    .push(k.lat_ns);
            }
            let (mut kernel_ns, mut iorig_ns) = (0u64, 0u64);
            for o in &own {
                let lats = seen
                    .get_mut(&(o.offset, o.size, o.op))
                    .unwrap_or_else(|| panic!("iorig's I/O {o:?} is not in the kernel's capture"));
                kernel_ns += lats.pop().expect("as often as iorig issued it");
                iorig_ns += o.lat_ns;
            }
            assert!(
                kernel_ns <= iorig_ns,
                "kernel {kernel_ns} ns, iorig {iorig_ns} ns"
            );
        }
        if format == "blktrace" && common::have("blkparse") {
            let parsed = std::process::Command::new("sh")
                .arg("-c")
                // Issues of data (D events with a sector range; a flush's
                // D has none) less the requeued ones, which are issued
                // again: what iorig counts as one I/O each. Matched by
                // column, not by text (an RWBS of "D", a discard, or a
                // process name could hold " D ").
                .arg(format!(
                    "blkparse -i - < {file} | awk '$1 ~ /^[0-9]+,[0-9]+$/ && $9 == \"+\" {{ if ($6 == \"D\") d++; else if ($6 == \"R\") r++ }} END {{ print d - r }}'"
                ))
                .current_dir(d)
                .output()
                .unwrap();
            let issued: u64 = String::from_utf8_lossy(&parsed.stdout)
                .trim()
                .parse()
                .unwrap();
            assert_eq!(
                Some(issued),
                a["records"].as_u64(),
                "blkparse counts the same issues"
            );
        }
    }
    // The host's tracing is as it was.
    let t = |f: &str| std::fs::read_to_string(format!("/sys/kernel/tracing/{f}")).unwrap();
    assert_eq!(t("current_tracer").trim(), "nop");
    assert!(t("trace_options").lines().any(|l| l == "nobin"));
}

#[derive(Debug)]
struct TraceIo {
    offset: u64,
    size: u32,
    op: u8,
    lat_ns: u64,
}

/// An iorig trace's records, read by hand from the format's definition
/// (docs/trace.md), not through iorig's reader.
fn iorig_trace_records(p: &std::path::Path) -> Vec<TraceIo> {
    let b = std::fs::read(p).unwrap();
    assert_eq!(&b[..8], b"IORIGTRC");
    let le = |at: usize, n: usize| {
        let mut v = 0u64;
        for i in (0..n).rev() {
            v = v << 8 | u64::from(b[at + i]);
        }
        v
    };
    let mut at = 12;
    for _ in 0..le(10, 2) {
        at += 2 + le(at, 2) as usize;
    }
    assert_eq!((b.len() - at) % 32, 0, "whole 32-byte records");
    b[at..]
        .chunks(32)
        .enumerate()
        .map(|(i, _)| {
            let r = at + i * 32;
            TraceIo {
                lat_ns: le(r + 8, 8),
                offset: le(r + 16, 8),
                size: le(r + 24, 4) as u32,
                op: b[r + 30],
            }
        })
        .collect()
}

/// `run --trace-out` writes every I/O the run counted, in issue order, as
/// a trace that `trace analyse` reads back with the run's own counts.
#[test]
fn a_runs_own_trace_holds_the_ios_it_counted() {
    let dir = tmp();
    let d = dir.path();
    let out = ok(
        &[
            "run",
            "--target",
            "data",
            "--size",
            "8m",
            "--read",
            "70",
            "--random",
            "100",
            "--qd",
            "4",
            "--bs",
            "8k",
            "--time",
            "1s",
            "--json",
            "-",
            "--trace-out",
            "run.trace",
        ],
        d,
    );
    let run: Value = serde_json::from_str(&out).unwrap();
    let a: Value =
        serde_json::from_str(&ok(&["trace", "analyse", "run.trace", "--json", "-"], d)).unwrap();
    assert_eq!(a["format"], "iorig");
    assert_eq!(a["reads"], run["summary"]["read"]["ops"]);
    assert_eq!(a["writes"], run["summary"]["write"]["ops"]);
    assert_eq!(a["sizes"][0]["size_bytes"], 8192);
    assert!(a["devices"][0].as_str().unwrap().ends_with("data"));
    let own = iorig_trace_records(&d.join("run.trace"));
    // Offsets are the file's own (its data area follows iorig's header).
    let len = std::fs::metadata(d.join("data")).unwrap().len();
    assert!(own
        .iter()
        .all(|r| r.offset % 8192 == 0 && r.offset + 8192 <= len));
    // A file-system workload has no block I/Os to trace: refused, nothing
    // written.
    let bad = common::run(
        &[
            "run",
            "--fs",
            "--target",
            "tree",
            "--time",
            "1s",
            "--trace-out",
            "fs.trace",
        ],
        d,
    );
    assert_eq!(
        bad.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    assert!(!d.join("fs.trace").exists());
}

/// The warm-up estimate is a backend read per hot block: 256 equally hot
/// blocks, the half that takes 50 % of accesses, at 64 reads/s: 2 s; from a
/// stored run, its measured read rate is the one used.
#[test]
fn warm_up_is_a_backend_read_per_hot_block() {
    let dir = tmp();
    let d = dir.path();
    std::fs::write(d.join("t.csv"), msr_scan()).unwrap();
    let a: Value = serde_json::from_str(&ok(
        &[
            "trace",
            "analyse",
            "t.csv",
            "--backend-iops",
            "64",
            "--json",
            "-",
        ],
        d,
    ))
    .unwrap();
    let w = &a["warmup"];
    assert_eq!(w["backend_read_iops"], 64.0);
    assert_eq!(w["hot_sets"][0]["share_pct"], 50.0);
    assert_eq!(w["hot_sets"][0]["bytes"], 128 * 4096);
    assert_eq!(w["hot_sets"][0]["seconds"], 2.0);
    // A stored run's reads.
    let run: Value = serde_json::from_str(&ok(
        &[
            "run", "--target", "data", "--size", "4m", "--read", "100", "--time", "1s", "--json",
            "-",
        ],
        d,
    ))
    .unwrap();
    let iops = run["summary"]["read"]["iops"].as_f64().unwrap();
    let a: Value = serde_json::from_str(&ok(
        &[
            "trace",
            "analyse",
            "t.csv",
            "--backend-run",
            "1",
            "--json",
            "-",
        ],
        d,
    ))
    .unwrap();
    assert_eq!(a["warmup"]["backend_read_iops"].as_f64(), Some(iops));
    assert!(a["warmup"]["source"]
        .as_str()
        .unwrap()
        .starts_with("run 1 step 0"));
    let bad = common::run(&["trace", "analyse", "t.csv", "--backend-iops", "0"], d);
    assert_eq!(bad.status.code(), Some(2));
}

/// An MSR trace of `n` 4k I/Os `gap_us` apart, every third a write, offsets
/// striding over `span` bytes of disk 0 (in 512-byte units, so not all
/// 4k-aligned).
fn msr_timed(n: u64, gap_us: u64, span: u64) -> String {
    let mut t = String::new();
    let ts0 = 128_166_372_003_061_629u64;
    for i in 0..n {
        let op = if i % 3 == 2 { "Write" } else { "Read" };
        let off = (i * 7_340_032 + i * 512) % span;
        let _ = writeln!(t, "{},web,0,{op},{off},4096,40", ts0 + i * gap_us * 10);
    }
    t
}

/// A replay issues each I/O of the trace once, at its time, and reports how
/// late each went out; the run's own figures count the trace's reads and
/// writes.
#[test]
fn a_replay_issues_the_traces_ios_at_their_times() {
    let dir = tmp();
    let d = dir.path();
    std::fs::write(d.join("t.csv"), msr_timed(3000, 100, 1 << 30)).unwrap();
    let run = common::run(
        &[
            "trace", "replay", "t.csv", "--target", "data", "--size", "16m", "--json", "-",
        ],
        d,
    );
    assert!(run.status.success(), "{run:?}");
    // Paced by the trace, its one worker waits for each I/O's time: no
    // generator-bound verdict (it counted the queue's 256 slots idle and
    // the waiting worker busy); the replay's own report says how late.
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(!err.contains("generator-bound"), "{err}");
    let doc: Value = serde_json::from_slice(&run.stdout).unwrap();
    let r = &doc["replay"];
    assert_eq!(r["format"], "msr");
    assert_eq!(
        (r["records"].as_u64(), r["issued"].as_u64()),
        (Some(3000), Some(3000))
    );
    assert_eq!(r["speed"], 1.0);
    assert_eq!(r["map"], "modulo");
    // 512-byte offsets moved to 4k: all but every eighth.
    assert_eq!(r["realigned"], 3000 - 3000 / 8);
    assert_eq!(doc["summary"]["read"]["ops"], 2000);
    assert_eq!(doc["summary"]["write"]["ops"], 1000);
    let t = &r["timing_error_ns"];
    assert!(t["p50"].as_u64().unwrap() <= t["max"].as_u64().unwrap());
    // 3000 I/Os 100 µs apart: 0.3 s of trace, and the run ended with it
    // (coarse: not the minute of slack the time limit allows).
    let secs = doc["summary"]["duration_s"].as_f64().unwrap();
    assert!((0.25..20.0).contains(&secs), "{secs}");
    // The run is stored, its replay with it.
    assert!(d.join("iorig.db").exists());
}

#[test]
fn a_replay_refuses_what_it_cannot_place_and_writes_nothing() {
    let dir = tmp();
    let d = dir.path();
    std::fs::write(d.join("t.csv"), msr_timed(100, 100, 1 << 30)).unwrap();
    for (args, says) in [
        (
            vec!["--map", "exact", "--size", "16m"],
            "--map exact: the trace's device 0 reaches byte",
        ),
        (
            vec!["--map", "exact", "--size", "2g", "--engine", "null"],
            "have an offset or size that is not a multiple of --align 4096",
        ),
        (vec!["--speed", "0"], "--speed 0: give a factor above 0"),
        (
            vec!["--map", "fold"],
            "--map fold: give modulo, scale or exact",
        ),
        (vec!["--align", "1000"], "--align 1000: give a power of two"),
    ] {
        let mut all = vec!["trace", "replay", "t.csv", "--target", "data"];
        all.extend(args);
        let out = common::run(&all, d);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{all:?}: {err}");
        assert!(err.contains(says), "{all:?}: {err}");
        assert!(!d.join("iorig.db").exists(), "{all:?} wrote the store");
    }
    // A trace without times replays as fast as possible only.
    std::fs::write(
        d.join("v2.log"),
        "fio version 2 iolog\n/dev/x add\n/dev/x read 0 4096\n/dev/x write 8192 4096\n",
    )
    .unwrap();
    let out = common::run(
        &[
            "trace", "replay", "v2.log", "--target", "data", "--size", "1m",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("replay it with --afap"));
    let doc: Value = serde_json::from_str(&ok(
        &[
            "trace", "replay", "v2.log", "--afap", "--target", "data", "--size", "1m", "--no-db",
            "--json", "-",
        ],
        d,
    ))
    .unwrap();
    let r = &doc["replay"];
    assert_eq!((r["issued"].as_u64(), r["qd"].as_u64()), (Some(2), Some(1)));
    assert!(r["speed"].is_null() && r["timing_error_ns"].is_null());
}

/// An fio iolog v2's `wait MS 0` holds the I/Os after it until MS after the
/// start (fio's iolog.c: absolute, milliseconds, a past time holds nothing),
/// and a wait after the first records still makes the log timed.
#[test]
fn an_fio_v2_logs_waits_are_milliseconds_from_the_start() {
    let dir = tmp();
    let d = dir.path();
    std::fs::write(
        d.join("v2.log"),
        "fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x read 0 4096\n/dev/x read 4096 4096\n\
         /dev/x wait 600 0\n/dev/x read 8192 4096\n/dev/x wait 300 0\n/dev/x read 12288 4096\n\
         /dev/x wait 800 0\n/dev/x write 0 4096\n/dev/x close\n",
    )
    .unwrap();
    let out = ok(&["trace", "analyse", "v2.log", "--no-db"], d);
    // 0, 0, 600, 600 (300 is past), 800 ms: not "(no times in the trace)",
    // and not 1.7 s (waits as delays) nor 1.7 ms (as µs).
    assert!(out.contains("5 I/Os over 0.800s"), "{out}");
    let doc: Value = serde_json::from_str(&ok(
        &["trace", "analyse", "v2.log", "--no-db", "--json", "-"],
        d,
    ))
    .unwrap();
    assert_eq!(doc["duration_s"], 0.8);
    // The replay issues at those times: never before them.
    let doc: Value = serde_json::from_str(&ok(
        &[
            "trace", "replay", "v2.log", "--target", "data", "--size", "1m", "--no-db", "--json",
            "-",
        ],
        d,
    ))
    .unwrap();
    assert_eq!(doc["replay"]["issued"], 5);
    let secs = doc["summary"]["duration_s"].as_f64().unwrap();
    assert!(secs >= 0.8, "the last I/O is due at 0.8 s: {secs}");
}

/// A replay with `--map exact` puts each of the trace's I/Os on the device
/// where the trace had it: the kernel's own capture of the replay holds
/// every one of them, with its size and direction.
#[test]
#[ignore = "needs root: a loop device and the kernel's tracing (tracefs)"]
fn an_exact_replay_on_a_loop_device_is_what_the_kernel_sees() {
    let _turn = TRACING.lock().unwrap_or_else(|e| e.into_inner());
    let lo = common::LoopDev::new(64 << 20);
    mount_tracefs();
    let dir = tmp();
    let d = dir.path();
    std::fs::write(d.join("t.csv"), msr_timed(2000, 200, 60 << 20)).unwrap();
    let mut rec = recording(&lo.dev, "cap.iotrace", "iorig", d);
    let doc: Value = serde_json::from_str(&ok(
        &[
            "trace", "replay", "t.csv", "--target", &lo.dev, "--map", "exact", "--align", "512",
            "--json", "-",
        ],
        d,
    ))
    .unwrap();
    common::signal(&rec.0, 2);
    assert!(common::wait_child(&mut rec.0, 20).success());
    assert_eq!(doc["replay"]["issued"], 2000);
    assert_eq!(doc["replay"]["realigned"], 0);
    let kernel = iorig_trace_records(&d.join("cap.iotrace"));
    let mut seen: std::collections::HashMap<(u64, u32, u8), u32> = std::collections::HashMap::new();
    for k in &kernel {
        *seen.entry((k.offset, k.size, k.op)).or_default() += 1;
    }
    for i in 0..2000u64 {
        let off = (i * 7_340_032 + i * 512) % (60 << 20);
        let op = if i % 3 == 2 { 1 } else { 0 };
        let n = seen.get_mut(&(off, 4096, op)).unwrap_or_else(|| {
            panic!("the trace's I/O {i} ({off}, op {op}) is not in the kernel's capture")
        });
        assert!(*n > 0, "I/O {i} at {off} seen fewer times than replayed");
        *n -= 1;
    }
    // What is left: the safety check's reads of the device's signature
    // areas, none of them a 4k write. The targets are planned twice (when
    // the replay is prepared, and when it runs), each with the device
    // opened afresh, so a signature block may be read twice.
    let left: Vec<_> = seen
        .iter()
        .filter(|((_, size, op), n)| !(**n == 0 || *op == 0 && (*size != 4096 || **n <= 2)))
        .collect();
    assert!(left.is_empty(), "left over: {left:?}");
}

/// A trace with a hot tenth (9 of 10 accesses to the first 100 of 1000
/// blocks) is fitted by a distribution whose curve is close to the trace's;
/// the workload and the plan it writes run as they are (checked by dry
/// runs, which resolve every key).
#[test]
fn a_fitted_workload_has_the_traces_hot_spot_and_runs() {
    let dir = tmp();
    let d = dir.path();
    let mut t = String::new();
    let mut x: u64 = 12345;
    let ts0 = 128_166_372_003_061_629u64;
    for i in 0..40_000u64 {
        // A fixed LCG: the test's answer does not move.
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        let r = x >> 33;
        let block = if r % 10 < 9 { r % 100 } else { 100 + r % 900 };
        let op = if i % 5 == 0 { "Write" } else { "Read" };
        let _ = writeln!(t, "{},db,0,{op},{},4096,20", ts0 + i * 1000, block * 4096);
    }
    std::fs::write(d.join("t.csv"), t).unwrap();
    ok(
        &[
            "trace", "fit", "t.csv", "--out", "w.toml", "--plan", "p.toml", "--json", "fit.json",
        ],
        d,
    );
    let f: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("fit.json")).unwrap()).unwrap();
    let best = f["best"]["dist"].as_str().unwrap();
    assert!(
        f["best"]["error"].as_f64().unwrap() < 0.02,
        "{}",
        f["candidates"]
    );
    assert!(
        best.starts_with("hot:90/") || best.starts_with("pareto:"),
        "{best}"
    );
    let w = std::fs::read_to_string(d.join("w.toml")).unwrap();
    assert!(
        w.contains(&format!("dist = \"{best}\"")) && w.contains("read = 80.0"),
        "{w}"
    );
    // 40 000 I/Os 100 µs apart: 10 000 IOPS.
    assert!(w.contains("rate = 10000"), "{w}");
    ok(&["run", "w.toml", "--target", "x.dat", "--dry-run"], d);
    ok(
        &["plan", "run", "p.toml", "--target", "x.dat", "--dry-run"],
        d,
    );
}

/// An analysis is stored (unless --no-db), listed, and rendered as an HTML
/// page with its charts; the page holds the analysis's own figures.
#[test]
fn an_analysis_is_stored_listed_and_reported() {
    let dir = tmp();
    let d = dir.path();
    std::fs::write(d.join("t.csv"), msr_scan()).unwrap();
    let out = ok(&["trace", "analyse", "t.csv", "--no-db", "--json", "-"], d);
    assert!(out.contains("\"records\": 768"));
    assert!(!d.join("iorig.db").exists(), "--no-db stores nothing");
    let said = ok(
        &[
            "trace",
            "analyse",
            "t.csv",
            "--hit",
            "0.6",
            "--backend-iops",
            "64",
            "--label",
            "app=web",
        ],
        d,
    );
    assert!(said.contains("stored as trace analysis 1"), "{said}");
    let list: Value = serde_json::from_str(&ok(&["trace", "list", "--json"], d)).unwrap();
    assert_eq!(list[0]["id"], 1);
    assert_eq!(list[0]["records"], 768);
    assert_eq!(list[0]["labels"]["app"], "web");
    ok(&["trace", "report", "1", "--out", "rep"], d);
    let html = std::fs::read_to_string(d.join("rep/index.html")).unwrap();
    for want in [
        "trace analysis 1",
        "t.csv",
        "Hot spot",
        "LRU",
        "Warm-up",
        "768",
    ] {
        assert!(html.contains(want), "the page lacks {want}");
    }
    for chart in ["trace-hot-spot.svg", "trace-lru.svg", "trace-over-time.svg"] {
        let svg = std::fs::read_to_string(d.join("rep").join(chart)).unwrap();
        assert!(
            svg.contains("<polyline") || svg.contains("<path"),
            "{chart} has no line"
        );
    }
    let bad = common::run(&["trace", "report", "7", "--out", "rep7"], d);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("no trace analysis 7"));
    assert!(!d.join("rep7").exists());
}
