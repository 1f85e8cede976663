//! Protects the `iorig run` contract end to end: the real binary on temp files
//! with every engine writes the documented JSON (schema iorig.result/1), keeps
//! its numbers consistent (percentiles monotone, read + write = total), paces
//! `--rate`, rejects bad input with exit 2 without touching the target, and keeps
//! completed intervals when I/O fails or the run is interrupted.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn iorig() -> Command {
    // Never the caller's result store.
    let mut c = Command::new(env!("CARGO_BIN_EXE_iorig"));
    c.env_remove("IORIG_DB");
    c
}

fn run_ok(args: &[&str], dir: &Path) -> Value {
    let out = iorig()
        .args(args)
        .args(["--json", "-"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "iorig {args:?} failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON alone")
}

fn lat_fields() -> [&'static str; 9] {
    [
        "min", "mean", "stddev", "max", "p50", "p90", "p99", "p99_9", "p99_99",
    ]
}

/// Checks one `{ops, bytes, iops, bw_bytes_per_s, lat_ns}` object.
fn check_op(v: &Value, what: &str) {
    for k in ["ops", "bytes"] {
        assert!(v[k].is_u64(), "{what}.{k} missing: {v}");
    }
    for k in ["iops", "bw_bytes_per_s"] {
        assert!(v[k].is_f64(), "{what}.{k} missing: {v}");
    }
    let lat = &v["lat_ns"];
    for k in lat_fields() {
        assert!(lat[k].is_u64(), "{what}.lat_ns.{k} missing: {lat}");
    }
    if v["ops"].as_u64().unwrap() > 0 {
        let p: Vec<u64> = ["min", "p50", "p90", "p99", "p99_9", "p99_99", "max"]
            .iter()
            .map(|k| lat[*k].as_u64().unwrap())
            .collect();
        assert!(
            p.windows(2).all(|w| w[0] <= w[1]),
            "{what} percentiles not monotone: {p:?}"
        );
        let mean = lat["mean"].as_u64().unwrap();
        assert!(p[0] <= mean && mean <= p[6], "{what} mean outside min..max");
    }
}

fn check_doc(doc: &Value) {
    assert_eq!(doc["schema"], "iorig.result/1");
    assert_eq!(doc["tool"]["name"], "iorig");
    assert!(doc["tool"]["version"].is_string());
    for k in ["id", "started", "host"] {
        assert!(doc["run"][k].is_string(), "run.{k}");
    }
    assert!(doc["run"]["labels"].is_object());
    assert!(doc["workload"].is_object());
    for t in doc["targets"].as_array().unwrap() {
        assert!(t["path"].is_string() && t["kind"].is_string() && t["size_bytes"].is_u64());
    }
    let intervals = doc["intervals"].as_array().unwrap();
    assert!(!intervals.is_empty());
    for i in intervals {
        assert!(i["t_s"].is_f64() && i["warmup"].is_boolean());
        for op in ["read", "write", "total"] {
            check_op(&i[op], op);
        }
        assert!(i["cpu"]["usr_pct"].is_f64() && i["cpu"]["sys_pct"].is_f64());
        assert_eq!(
            i["read"]["ops"].as_u64().unwrap() + i["write"]["ops"].as_u64().unwrap(),
            i["total"]["ops"].as_u64().unwrap()
        );
    }
    let s = &doc["summary"];
    assert!(s["duration_s"].is_f64());
    for op in ["read", "write", "total"] {
        check_op(&s[op], op);
    }
    assert!(s["errors"].is_u64());
    assert_eq!(
        s["read"]["ops"].as_u64().unwrap() + s["write"]["ops"].as_u64().unwrap(),
        s["total"]["ops"].as_u64().unwrap()
    );
    // The summary is the measured intervals, exactly.
    let sum: u64 = intervals
        .iter()
        .filter(|i| !i["warmup"].as_bool().unwrap())
        .map(|i| i["total"]["ops"].as_u64().unwrap())
        .sum();
    assert_eq!(sum, s["total"]["ops"].as_u64().unwrap());
}

fn checksum(path: &Path) -> u64 {
    // FNV-1a over the whole file: enough to see a single changed byte.
    let data = std::fs::read(path).unwrap();
    data.iter().fold(0xcbf29ce484222325u64, |h, b| {
        (h ^ *b as u64).wrapping_mul(0x100000001b3)
    })
}

fn tmp() -> tempfile::TempDir {
    // Under the build directory: on the root filesystem, which supports O_DIRECT.
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    tempfile::tempdir_in(base).unwrap()
}

#[test]
fn null_engine_json_shape_and_no_target_created() {
    let dir = tmp();
    let doc = run_ok(
        &[
            "run",
            "--engine",
            "null",
            "--time",
            "1s",
            "--interval",
            "250ms",
            "--read",
            "70",
            "--qd",
            "8",
            "--warmup",
            "250ms",
        ],
        dir.path(),
    );
    check_doc(&doc);
    assert!(doc["intervals"][0]["warmup"].as_bool().unwrap());
    assert!(doc["summary"]["write"]["ops"].as_u64().unwrap() > 0);
    assert!(
        !dir.path().join("iorig-scratch.dat").exists(),
        "null engine must not create a target"
    );
}

#[test]
fn io_uring_and_psync_on_a_temp_file() {
    let dir = tmp();
    let target = dir.path().join("t.dat");
    let t = target.to_str().unwrap();
    for engine in ["io_uring", "psync"] {
        let doc = run_ok(
            &[
                "run",
                "--target",
                t,
                "--size",
                "16m",
                "--engine",
                engine,
                "--time",
                "1s",
                "--read",
                "50",
                "--bs",
                "4k:50,8k:50",
                "--interval",
                "500ms",
            ],
            dir.path(),
        );
        check_doc(&doc);
        assert_eq!(doc["targets"][0]["kind"], "file");
        assert_eq!(doc["targets"][0]["size_bytes"], 16 << 20);
        let total = &doc["summary"]["total"];
        assert!(total["ops"].as_u64().unwrap() > 100, "{engine}: {total}");
        // Mixed 4k/8k: bytes per I/O lies between.
        let bpio = total["bytes"].as_u64().unwrap() as f64 / total["ops"].as_u64().unwrap() as f64;
        assert!((4096.0..=8192.0).contains(&bpio));
    }
    // Sizes per direction: every read 4k, every write 64k.
    let doc = run_ok(
        &[
            "run",
            "--target",
            t,
            "--size",
            "16m",
            "--time",
            "1s",
            "--read",
            "50",
            "--read-bs",
            "4k",
            "--write-bs",
            "64k",
            "--qd",
            "4",
        ],
        dir.path(),
    );
    check_doc(&doc);
    let s = &doc["summary"];
    let per_io = |op: &str| s[op]["bytes"].as_f64().unwrap() / s[op]["ops"].as_f64().unwrap();
    assert_eq!((per_io("read"), per_io("write")), (4096.0, 65536.0));
    assert_eq!(
        (
            doc["workload"]["read_bs"].as_str(),
            doc["workload"]["write_bs"].as_str()
        ),
        (Some("4k"), Some("64k"))
    );
    // The file was created once at 1 MiB header + 16 MiB, and reused.
    assert_eq!(
        std::fs::metadata(&target).unwrap().len(),
        (1 << 20) + (16 << 20)
    );
}

/// A rate is a schedule: the run records it, never issues ahead of it
/// (counts, not speed: a loaded machine may fall behind, never ahead).
#[test]
fn rate_2000_is_a_schedule_the_run_never_runs_ahead_of() {
    let dir = tmp();
    let target = dir.path().join("r.dat");
    let doc = run_ok(
        &[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "16m",
            "--time",
            "3s",
            "--rate",
            "2000",
            "--qd",
            "4",
        ],
        dir.path(),
    );
    check_doc(&doc);
    assert_eq!(doc["workload"]["rate_iops"], 2000.0);
    let ops = doc["summary"]["total"]["ops"].as_u64().unwrap();
    // I/O k is due at k / 2000 s: by the end of 3 s at most 6000 were due
    // (plus the first of each slot at time 0).
    assert!(
        ops > 0 && ops <= 2000 * 3 + 4,
        "{ops} I/Os in 3 s at 2000 IOPS"
    );
    // Service latency is reported beside latency under a rate limit, and the
    // latency from the schedule can only be longer.
    let t = &doc["summary"]["total"];
    assert!(t["service_lat_ns"]["p50"].as_u64().unwrap() <= t["lat_ns"]["p50"].as_u64().unwrap());
    // So is the issue lag, iorig's own part of that latency: each I/O's lag
    // ends at its submission, so no quantile of it exceeds the latency's.
    let lag = &doc["summary"]["issue_lag_ns"];
    for q in ["p50", "p99", "max"] {
        assert!(
            lag[q].as_u64().unwrap() <= t["lat_ns"][q].as_u64().unwrap(),
            "issue lag {q} {lag} against latency {}",
            t["lat_ns"]
        );
    }
}

#[test]
fn workload_file_with_flag_override() {
    let dir = tmp();
    let wl = dir.path().join("w.toml");
    std::fs::write(
        &wl,
        "engine = 'null'\ntime = '500ms'\nread = 30\nqd = 2\nlabels = { array = 'A' }\n",
    )
    .unwrap();
    let doc = run_ok(
        &[
            "run",
            wl.to_str().unwrap(),
            "--qd",
            "4",
            "--label",
            "fw=1.2",
        ],
        dir.path(),
    );
    assert_eq!(doc["workload"]["qd"], 4);
    assert_eq!(doc["workload"]["read_pct"], 30.0);
    assert_eq!(doc["workload"]["submit_batch"], 1);
    assert_eq!(doc["run"]["labels"]["array"], "A");
    assert_eq!(doc["run"]["labels"]["fw"], "1.2");
    // Unpaced: nothing is scheduled, so there is no issue lag to tell.
    assert!(doc["summary"]["issue_lag_ns"].is_null());
}

fn run_raw(args: &[&str], dir: &Path) -> Output {
    iorig().args(args).current_dir(dir).output().unwrap()
}

#[test]
fn bad_input_exits_2_and_leaves_the_target_alone() {
    let dir = tmp();
    // A foreign file with known content, and an iorig file made by a real run.
    let foreign = dir.path().join("foreign.dat");
    std::fs::write(&foreign, vec![0x5au8; 8 << 20]).unwrap();
    let own = dir.path().join("own.dat");
    let out = run_raw(
        &[
            "run",
            "--target",
            own.to_str().unwrap(),
            "--size",
            "8m",
            "--time",
            "200ms",
            "-q",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = (checksum(&foreign), checksum(&own));
    let f = foreign.to_str().unwrap();
    let o = own.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", "--target", o, "--no-such-flag"],
        vec!["run", "--target", o, "--size", "12q", "--read", "0"],
        vec!["run", "--target", o, "--time", "3 weeks", "--read", "0"],
        vec!["run", "--target", o, "--read", "101"],
        vec!["run", "--target", o, "--random", "-5", "--read", "0"],
        vec!["run", "--target", o, "--bs", "1000", "--read", "0"],
        vec!["run", "--target", o, "--bs", "16m", "--read", "0"],
        vec![
            "run", "--target", o, "--range", "10%-20%", "--bs", "1m", "--read", "0",
        ],
        vec![
            "run", "--target", o, "--engine", "psync", "--qd", "4", "--read", "0",
        ],
        vec!["run", "--target", o, "--range", "50%-50%", "--read", "0"],
        vec!["run", "--target", o, "--qd", "20000", "--read", "0"],
        vec![
            "run",
            "--target",
            o,
            "--qd",
            "4",
            "--submit-batch",
            "8",
            "--read",
            "0",
        ],
        vec!["run", "--target", o, "--dist", "zipf:-1", "--read", "0"],
        vec!["run", "--target", f, "--read", "0"],
        vec!["run", "--target", f, "--read", "50", "--target", o],
        vec!["run", "--target", "/nonexistent-dir/x.dat", "--read", "0"],
        vec![
            "run",
            "--target",
            o,
            "--read",
            "0",
            "--json",
            "/nonexistent-dir/x.json",
        ],
    ];
    for args in &cases {
        let out = run_raw(args, dir.path());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?} gave {:?}: {err}",
            out.status
        );
        assert_eq!(
            err.trim().lines().count(),
            1,
            "{args:?}: not one line: {err}"
        );
        assert!(err.starts_with("iorig: "), "{args:?}: {err}");
        assert_eq!(
            (checksum(&foreign), checksum(&own)),
            before,
            "{args:?} changed a target"
        );
    }
    assert!(!Path::new("/nonexistent-dir").exists());
}

/// A directory on a filesystem without O_DIRECT: tmpfs before Linux 6.6, or
/// ramfs (mounted here when root) on kernels whose tmpfs gained O_DIRECT.
struct NoDirectDir {
    dir: tempfile::TempDir,
    mounted: bool,
}

impl Drop for NoDirectDir {
    fn drop(&mut self) {
        if self.mounted {
            // Another test's child may briefly hold the mount busy (a forked
            // process inherits the cwd); detach lazily then, quietly.
            let ok = Command::new("umount")
                .arg(self.dir.path())
                .stderr(std::process::Stdio::null())
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if !ok {
                let _ = Command::new("umount")
                    .arg("-l")
                    .arg(self.dir.path())
                    .status();
            }
        }
    }
}

fn o_direct_works(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let p = dir.join(".probe");
    let ok = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(0o40000) // O_DIRECT on x86_64 and aarch64
        .open(&p)
        .is_ok();
    let _ = std::fs::remove_file(&p);
    ok
}

fn no_direct_dir() -> Option<NoDirectDir> {
    if Path::new("/dev/shm").is_dir() {
        let dir = tempfile::tempdir_in("/dev/shm").unwrap();
        if !o_direct_works(dir.path()) {
            return Some(NoDirectDir {
                dir,
                mounted: false,
            });
        }
    }
    let dir = tmp();
    let ok = Command::new("mount")
        .args(["-t", "ramfs", "ramfs"])
        .arg(dir.path())
        .stderr(std::process::Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        return None;
    }
    let d = NoDirectDir { dir, mounted: true };
    if o_direct_works(d.dir.path()) {
        return None;
    }
    Some(d)
}

#[test]
#[ignore = "needs root: mounts a ramfs (tmpfs has O_DIRECT since Linux 6.6)"]
fn filesystem_without_o_direct_is_refused_with_a_hint() {
    let nd = no_direct_dir().expect("no filesystem without O_DIRECT: mounting ramfs failed");
    let target = nd.dir.path().join("t.dat");
    let out = run_raw(
        &[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "4m",
            "--time",
            "200ms",
        ],
        nd.dir.path(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--buffered"), "{err}");
    assert!(!target.exists());
    assert_eq!(
        std::fs::read_dir(nd.dir.path()).unwrap().count(),
        0,
        "probe file left behind"
    );
    // And --buffered works there.
    let doc = run_ok(
        &[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "4m",
            "--time",
            "300ms",
            "--buffered",
        ],
        nd.dir.path(),
    );
    check_doc(&doc);
}

#[test]
fn eio_mid_run_exits_1_and_keeps_intervals() {
    let dir = tmp();
    let target = dir.path().join("f.dat");
    let out = run_raw(
        &[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "8m",
            "--engine",
            "fault",
            "--fault",
            "eio:at=1200ms",
            "--time",
            "3s",
            "--interval",
            "500ms",
            "--threads",
            "2",
            "--qd",
            "4",
            "--json",
            "-",
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_doc(&doc);
    assert_eq!(doc["run"]["status"], "failed");
    let errors = doc["summary"]["errors"].as_u64().unwrap();
    assert!(errors >= 1, "errors {errors}");
    // The two intervals before the fault were measured and kept.
    let intervals = doc["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 2);
    assert!(intervals[0]["total"]["ops"].as_u64().unwrap() > 0);
    assert!(intervals[1]["total"]["ops"].as_u64().unwrap() > 0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("Input/output error"));
}

#[test]
fn enospc_mid_run_exits_1_and_keeps_intervals() {
    let dir = tmp();
    let target = dir.path().join("n.dat");
    let out = run_raw(
        &[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "8m",
            "--engine",
            "fault",
            "--fault",
            "enospc:at=700ms",
            "--time",
            "2s",
            "--interval",
            "500ms",
            "--read",
            "0",
            "--json",
            "-",
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["summary"]["errors"].as_u64().unwrap() >= 1);
    assert!(doc["intervals"][0]["write"]["ops"].as_u64().unwrap() > 0);
    assert!(String::from_utf8_lossy(&out.stderr).contains("No space left on device"));
}

#[test]
fn io_is_spread_over_several_targets() {
    let dir = tmp();
    let a = dir.path().join("a.dat");
    let b = dir.path().join("b.dat");
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    // Create both, then remember their contents.
    let doc = run_ok(
        &[
            "run", "--target", a, "--target", b, "--size", "4m", "--time", "200ms",
        ],
        dir.path(),
    );
    assert_eq!(doc["targets"].as_array().unwrap().len(), 2);
    let before = (checksum(Path::new(a)), checksum(Path::new(b)));
    for random in ["100", "0"] {
        let doc = run_ok(
            &[
                "run",
                "--target",
                a,
                "--target",
                b,
                "--time",
                "500ms",
                "--read",
                "0",
                "--random",
                random,
                "--threads",
                "2",
            ],
            dir.path(),
        );
        assert!(doc["summary"]["write"]["ops"].as_u64().unwrap() > 0);
    }
    let after = (checksum(Path::new(a)), checksum(Path::new(b)));
    assert_ne!(before.0, after.0, "no writes reached the first target");
    assert_ne!(before.1, after.1, "no writes reached the second target");
}

#[test]
fn permission_denied_is_bad_input() {
    let dir = tmp();
    let target = dir.path().join("p.dat");
    let t = target.to_str().unwrap();
    let doc = run_ok(
        &["run", "--target", t, "--size", "4m", "--time", "200ms"],
        dir.path(),
    );
    check_doc(&doc);
    // Root ignores file modes, but not the immutable attribute; anyone else
    // is stopped by the mode.
    extern "C" {
        fn geteuid() -> u32;
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { geteuid() } == 0 {
        let immutable = Command::new("chattr").arg("+i").arg(&target).status();
        assert!(
            immutable.map(|s| s.success()).unwrap_or(false),
            "chattr +i failed on {}",
            target.display()
        );
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o444)).unwrap();
    }
    let before = checksum(&target);
    let out = run_raw(
        &["run", "--target", t, "--read", "0", "--time", "200ms"],
        dir.path(),
    );
    let _ = Command::new("chattr").arg("-i").arg(&target).status();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(checksum(&target), before);
}

#[test]
fn short_transfers_and_eagain_are_retried_not_errors() {
    let dir = tmp();
    let target = dir.path().join("s.dat");
    let doc = run_ok(
        &[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "8m",
            "--engine",
            "fault",
            "--fault",
            "short:every=3",
            "--fault",
            "eagain:every=5",
            "--time",
            "1s",
            "--read",
            "50",
            "--qd",
            "4",
            "--bs",
            "8k",
        ],
        dir.path(),
    );
    check_doc(&doc);
    let s = &doc["summary"];
    assert_eq!(s["errors"], 0);
    // Every completed I/O moved its whole block.
    assert_eq!(
        s["total"]["bytes"].as_u64().unwrap(),
        s["total"]["ops"].as_u64().unwrap() * 8192
    );
}

#[test]
fn dropped_writes_count_as_completions() {
    let dir = tmp();
    let target = dir.path().join("d.dat");
    let doc = run_ok(
        &[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "8m",
            "--engine",
            "fault",
            "--fault",
            "drop:every=2",
            "--time",
            "500ms",
            "--read",
            "0",
        ],
        dir.path(),
    );
    assert_eq!(doc["summary"]["errors"], 0);
    assert!(doc["summary"]["write"]["ops"].as_u64().unwrap() > 10);
}

#[test]
fn stall_shows_as_an_interval_without_completions() {
    let dir = tmp();
    let target = dir.path().join("st.dat");
    let doc = run_ok(
        &[
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "8m",
            "--engine",
            "fault",
            "--fault",
            "stall:at=300ms:ms=1200",
            "--time",
            "2s",
            "--interval",
            "250ms",
        ],
        dir.path(),
    );
    let intervals = doc["intervals"].as_array().unwrap();
    let empty = intervals.iter().filter(|i| i["total"]["ops"] == 0).count();
    assert!(
        empty >= 2,
        "a 1.2 s stall should empty at least two 250 ms intervals"
    );
    assert!(doc["summary"]["total"]["lat_ns"]["max"].as_u64().unwrap() >= 1_100_000_000);
}

#[test]
fn ctrl_c_exits_130_with_completed_intervals() {
    let dir = tmp();
    let child = iorig()
        .args([
            "run",
            "--engine",
            "null",
            "--time",
            "30s",
            "--interval",
            "200ms",
            "--json",
            "-",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once it has stored five intervals (1 s of 200 ms ones),
    // however long it took to get there.
    common::wait_for_intervals(&dir.path().join("iorig.db"), 1, 5, 60);
    // SAFETY: sending SIGINT to our own child process.
    unsafe {
        libc_kill(child.id() as i32, 2);
    }
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    check_doc(&doc);
    assert_eq!(doc["run"]["status"], "interrupted");
    // Every completed interval is kept (the one the signal cut short too).
    let n = doc["intervals"].as_array().unwrap().len();
    assert!(n >= 5, "{n} intervals, five were stored before the signal");
    let d = doc["summary"]["duration_s"].as_f64().unwrap();
    assert!(
        (0.99..29.0).contains(&d),
        "measured {d}s: stopped early, after 1 s"
    );
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}

#[test]
fn command_line_mistakes_name_what_is_missing_and_the_nearest_flag() {
    let dir = tmp();
    let cases: [(&[&str], &[&str]); 4] = [
        // A missing option is named, with the usage, on one line.
        (
            &["export", "2", "--format", "xlsx"],
            &["provided: --out <FILE>", "(usage: iorig export"],
        ),
        (
            &["plan", "run"],
            &["provided: <FILE>", "(usage: iorig plan run"],
        ),
        // A typo gets the nearest flag.
        (
            &["run", "--targt", "x"],
            &["'--targt'", "a similar argument exists: '--target'"],
        ),
        // A run compared with itself says so before opening any store.
        (&["compare", "1", "1"], &["run 1 is given twice"]),
    ];
    for (args, wanted) in cases {
        let out = run_raw(args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: one line: {err}");
        for w in wanted {
            assert!(err.contains(w), "{args:?}: no {w:?} in {err}");
        }
    }
}

#[test]
fn a_fio_job_file_or_vdbench_parmfile_is_named_as_such() {
    let dir = tmp();
    let fio = dir.path().join("job.fio");
    std::fs::write(
        &fio,
        "[global]\nioengine=libaio\ndirect=1\n[rr]\nrw=randread\nbs=4k\n",
    )
    .unwrap();
    let vd = dir.path().join("parm");
    std::fs::write(
        &vd,
        "sd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1,xfersize=4k\nrd=r1,wd=wd1,iorate=max\n",
    )
    .unwrap();
    // A plan or a workload that is another tool's file: named as such,
    // with the command that runs it.
    for (args, tool) in [
        (
            vec!["plan", "run", fio.to_str().unwrap(), "--no-db"],
            "a fio job file",
        ),
        (
            vec!["plan", "run", vd.to_str().unwrap(), "--no-db"],
            "a vdbench parameter file",
        ),
    ] {
        let out = run_raw(&args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("looks like {tool}")) && err.contains("iorig run FILE"),
            "{args:?}: {err}"
        );
    }
    // iorig run reads it, and says what it cannot run (file:line).
    let out = run_raw(&["run", fio.to_str().unwrap(), "--no-db"], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("job.fio:4: job 'rr'") && err.contains("size="),
        "{err}"
    );
}

#[test]
fn sizes_rates_and_durations_as_fio_users_write_them() {
    let dir = tmp();
    let doc = run_ok(
        &[
            "run", "--engine", "null", "--bs", "4KB", "--rate", "2k", "--time", "0m1s", "--no-db",
            "-q",
        ],
        dir.path(),
    );
    assert_eq!(doc["workload"]["bs"], "4k", "4KB is 4096, as in fio");
    assert_eq!(doc["workload"]["rate_iops"], 2000.0);
    assert_eq!(doc["workload"]["time_s"], 1.0);
}

#[test]
fn runs_list_shows_target_and_result_and_quiet_runs_show_their_id() {
    let dir = tmp();
    let target = dir.path().join("t.dat");
    let t = target.to_str().unwrap();
    let db = dir.path().join("s.db");
    let db = db.to_str().unwrap();
    for bs in ["4k", "1m"] {
        let out = run_raw(
            &[
                "run", "--engine", "null", "--target", t, "--bs", bs, "--time", "1s", "--db", db,
                "-q",
            ],
            dir.path(),
        );
        assert_eq!(out.status.code(), Some(0));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("iorig run ") && stdout.contains(": ok"),
            "{stdout}"
        );
    }
    let out = run_raw(&["runs", "list", "--db", db], dir.path());
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].contains("target") && lines[0].contains("result"),
        "{text}"
    );
    assert!(
        lines[1].contains(t) && lines[1].contains("IOPS"),
        "small blocks in IOPS: {text}"
    );
    assert!(
        lines[2].contains(t) && lines[2].contains("B/s"),
        "large blocks in bytes/s: {text}"
    );
}

#[test]
fn a_grown_scratch_file_is_said_to_grow_not_to_be_created() {
    let dir = tmp();
    let target = dir.path().join("g.dat");
    let t = target.to_str().unwrap();
    let base = [
        "run",
        "--engine",
        "psync",
        "--buffered",
        "--target",
        t,
        "--time",
        "200ms",
        "--no-db",
        "-q",
    ];
    // Large enough that the fill reports progress many times: off a
    // terminal the notice still comes once per file.
    let first = run_raw(&[&base[..], &["--size", "64m"]].concat(), dir.path());
    assert_eq!(first.status.code(), Some(0));
    let err = String::from_utf8_lossy(&first.stderr);
    assert_eq!(err.matches(&format!("creating {t}")).count(), 1, "{err}");
    let second = run_raw(&[&base[..], &["--size", "96m"]].concat(), dir.path());
    assert_eq!(second.status.code(), Some(0));
    let err = String::from_utf8_lossy(&second.stderr);
    assert!(
        err.matches(&format!("growing {t} from 64.0 MiB to 96.0 MiB"))
            .count()
            == 1
            && !err.contains("creating"),
        "{err}"
    );
}

#[test]
fn a_mistyped_target_is_refused_not_created() {
    let dir = tmp();
    let out = run_raw(
        &["run", "--target", "loop0.imgg", "--read", "0", "--no-db"],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("loop0.imgg: no such file; give --size"),
        "{err}"
    );
    assert!(!dir.path().join("loop0.imgg").exists());
    // With a size it is a new scratch file, as asked.
    let out = run_raw(
        &[
            "run",
            "--engine",
            "psync",
            "--buffered",
            "--target",
            "new.dat",
            "--size",
            "4m",
            "--time",
            "200ms",
            "--no-db",
            "-q",
        ],
        dir.path(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("new.dat").exists());
}

/// Issue 15, item 5: on a file iorig did not create, `--size` tests its first
/// SIZE bytes and the run records that size; a larger `--size` is refused with
/// exit 2 and the file keeps its length (iorig never grows a foreign file).
#[test]
fn size_limits_a_foreign_file_and_larger_is_refused() {
    let dir = tmp();
    let f = dir.path().join("foreign.bin");
    std::fs::write(&f, vec![7u8; 8 << 20]).unwrap();
    let p = f.to_str().unwrap();
    let doc = run_ok(
        &[
            "run",
            "--target",
            p,
            "--size",
            "2m",
            "--read",
            "100",
            "--time",
            "1s",
            "--buffered",
        ],
        dir.path(),
    );
    assert_eq!(doc["targets"][0]["size_bytes"], 2 << 20);
    let out = run_raw(
        &[
            "run", "--target", p, "--size", "9m", "--read", "100", "--time", "1s",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--size 9m is larger than the file"), "{err}");
    assert_eq!(std::fs::metadata(&f).unwrap().len(), 8 << 20);
}

#[test]
fn ignore_errors_counts_listed_failures_and_goes_on() {
    let dir = tmp();
    let target = dir.path().join("g.dat");
    let run_with = |extra: &[&str]| -> (Option<i32>, Value, String) {
        let mut args = vec![
            "run",
            "--target",
            target.to_str().unwrap(),
            "--size",
            "8m",
            "--engine",
            "fault",
            "--fault",
            "enospc:at=600ms",
            "--read",
            "0",
            "--time",
            "2s",
            "--interval",
            "500ms",
            "--json",
            "-",
        ];
        args.extend(extra);
        let out = run_raw(&args, dir.path());
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        (
            out.status.code(),
            doc,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // ENOSPC listed: the worker counts each failure and runs to the end.
    let (code, doc, err) = run_with(&["--ignore-errors", "ENOSPC,EIO"]);
    assert_eq!(code, Some(1), "{err}");
    let errors = doc["summary"]["errors"].as_u64().unwrap();
    assert!(errors > 100, "errors {errors}");
    assert_eq!(doc["intervals"].as_array().unwrap().len(), 4);
    // Only the first few messages of a failing device are kept.
    let messages = doc["summary"]["error_messages"].as_array().unwrap();
    assert!(messages.len() <= 5, "{}", messages.len());
    assert!(err.contains("(ignored: ignore_errors)"), "{err}");
    // Not listed: the first failure ends the worker.
    let (code, doc, err) = run_with(&["--ignore-errors", "EIO"]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(doc["summary"]["errors"].as_u64(), Some(1));
    // With validation it is refused: a failed write leaves its block unknown.
    let out = run_raw(
        &[
            "run",
            "--target",
            "v.dat",
            "--size",
            "1m",
            "--verify",
            "--ignore-errors",
            "all",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.path().join("v.dat").exists());
}

#[test]
fn labels_are_bounded_printable_and_escaped_where_shown() {
    // A label reaches terminals, HTML pages, CSV and metrics: one too long
    // or holding a control character (a terminal escape, a line break) is
    // refused before anything is written, from the command line and from a
    // workload file alike; markup is taken and escaped where it is shown.
    let dir = tmp();
    let long = format!("note={}", "x".repeat(1025));
    std::fs::write(
        dir.path().join("w.toml"),
        "engine = 'null'\ntime = '1s'\nlabels = { note = \"two\\nlines\" }\n",
    )
    .unwrap();
    let no_equals = format!("{}\u{1b}[2J", "y".repeat(2000));
    let cases: [(&[&str], &str); 5] = [
        (
            &["run", "--engine", "null", "--label", &no_equals],
            "write KEY=VALUE",
        ),
        (
            &["run", "--engine", "null", "--label", &long],
            "at most 1024",
        ),
        (
            &["run", "--engine", "null", "--label", "k=red\u{1b}[31m"],
            "control character (U+001B)",
        ),
        (
            &[
                "run",
                "--engine",
                "null",
                "--label",
                &format!("{}=v", "k".repeat(129)),
            ],
            "at most 128",
        ),
        (&["run", "w.toml"], "control character (U+000A)"),
    ];
    for (args, wanted) in cases {
        let out = run_raw(args, dir.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(err.contains(wanted), "{args:?}: no {wanted:?} in {err}");
        assert!(err.len() < 300, "the label is not echoed whole: {err}");
        assert!(!err.contains('\u{1b}'), "{err:?}");
        assert!(
            !dir.path().join("iorig.db").exists(),
            "{args:?} wrote a store"
        );
    }
    let script = "<script>alert('label')</script>";
    let doc = run_ok(
        &[
            "run",
            "--engine",
            "null",
            "--time",
            "500ms",
            "--label",
            &format!("note={script}"),
        ],
        dir.path(),
    );
    assert_eq!(doc["run"]["labels"]["note"], script);
    let out = run_raw(&["report", "1", "--out", "rep"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(dir.path().join("rep").join("index.html")).unwrap();
    assert!(
        !html.contains(script),
        "the label went into the page unescaped"
    );
    assert!(
        html.contains("&lt;script&gt;"),
        "the label is not on the page"
    );
}

/// A buffered step starts with its targets' cached pages written back and
/// dropped (fio's invalidate=1) and says so in its title; --keep-cache
/// keeps them and says that; a direct step, which does not read the cache,
/// says nothing of it. --drop-caches drops the whole host's cache as root,
/// and is refused before anything is written otherwise.
#[test]
fn a_buffered_step_says_what_became_of_the_page_cache() {
    let dir = tempfile::tempdir().unwrap();
    let title = |extra: &[&str]| -> (Option<i32>, String, String) {
        let out = iorig()
            .args([
                "run", "--target", "c.dat", "--size", "4m", "--time", "1s", "--no-db",
            ])
            .args(extra)
            .current_dir(dir.path())
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_string(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let (code, t, err) = title(&["--buffered"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        t.contains(", buffered (the targets' cached pages dropped first), rate"),
        "{t}"
    );
    let (_, t, _) = title(&["--buffered", "--keep-cache"]);
    assert!(
        t.contains(
            "buffered (the targets' cached pages kept (--keep-cache): reads may come from memory)"
        ),
        "{t}"
    );
    let (_, t, _) = title(&[]);
    assert!(t.contains(", direct, rate") && !t.contains("cache"), "{t}");
    std::fs::remove_file(dir.path().join("c.dat")).unwrap();
    let (code, t, err) = title(&["--buffered", "--drop-caches"]);
    let root = is_root();
    if root {
        assert_eq!(code, Some(0), "{err}");
        assert!(t.contains("buffered (host's page cache dropped first; the targets' cached pages dropped first)"), "{t}");
    } else {
        assert_eq!(code, Some(2), "{err}");
        assert!(
            err.contains("--drop-caches writes /proc/sys/vm/drop_caches"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!dir.path().join("c.dat").exists(), "nothing written");
    }
}

fn is_root() -> bool {
    extern "C" {
        fn geteuid() -> u32;
    }
    // SAFETY: geteuid has no preconditions.
    unsafe { geteuid() == 0 }
}

/// `--cpus-policy split` (fio's cpus_allowed_policy=split): each worker
/// thread may run on one CPU of the list alone, worker i on the i-th,
/// wrapping round; `shared` (the default) lets each run on all of them.
#[test]
fn split_cpus_give_each_worker_a_cpu_of_its_own() {
    // Two CPUs this process may run on (one on a one-CPU machine).
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let allowed = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let cpus: Vec<usize> = iorig_spec::parse_cpu_list(&allowed)
        .unwrap()
        .into_iter()
        .take(2)
        .collect();
    let n = cpus.len();
    let list = cpus
        .iter()
        .map(|c| c.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let dir = common::tmp();
    let args = common::null_run(
        "60s",
        "1s",
        &[
            "--threads",
            "4",
            "--cpus",
            &list,
            "--cpus-policy",
            "split",
            "--no-db",
        ],
    );
    let g = common::spawn_quiet(&args, dir.path());
    let tasks = format!("/proc/{}/task", g.id());
    // The workers' names and the CPUs each may run on, once all 4 exist
    // (waited for at most 30 s).
    let mut seen = std::collections::BTreeMap::new();
    for _ in 0..300 {
        seen.clear();
        for t in std::fs::read_dir(&tasks).into_iter().flatten().flatten() {
            let comm = std::fs::read_to_string(t.path().join("comm")).unwrap_or_default();
            let Some(i) = comm.trim().strip_prefix("iorig-w") else {
                continue;
            };
            let status = std::fs::read_to_string(t.path().join("status")).unwrap_or_default();
            let allowed = status
                .lines()
                .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
                .map(|v| v.trim().to_string());
            if let (Ok(i), Some(a)) = (i.parse::<usize>(), allowed) {
                seen.insert(i, a);
            }
        }
        if seen.len() == 4 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(g);
    assert_eq!(seen.len(), 4, "worker threads seen: {seen:?}");
    for (i, allowed) in &seen {
        assert_eq!(allowed, &cpus[i % n].to_string(), "worker {i}: {seen:?}");
    }
    // split hands out the CPUs of --cpus: without them it is refused.
    let out = common::run(
        &common::null_run("1s", "1s", &["--cpus-policy", "split", "--no-db"]),
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give --cpus too"));
}

/// `--write-rate` / `--read-rate` cap one direction as fio paces each
/// (`rate_iops=,W`): the writes hold to their cap, reads fill the rest
/// unpaced; with both capped each holds its own, whatever `--read` says.
#[test]
fn direction_caps_hold_each_direction_to_its_rate() {
    let dir = common::tmp();
    let count = |doc: &Value, d: &str| doc["summary"][d]["ops"].as_f64().unwrap();
    let secs = |doc: &Value| doc["summary"]["duration_s"].as_f64().unwrap();
    let args = common::null_run(
        "2s",
        "1s",
        &["--read", "30", "--write-rate", "200", "--threads", "2"],
    );
    let doc = run_ok(&args, dir.path());
    let (w, s) = (count(&doc, "write"), secs(&doc));
    // On schedule: 200 a second, give or take a due I/O per worker.
    assert!(
        (w - 200.0 * s).abs() <= 0.05 * 200.0 * s + 2.0,
        "{w} writes in {s} s"
    );
    assert!(count(&doc, "read") > 4.0 * w, "reads run unpaced: {doc}");
    let args = common::null_run(
        "2s",
        "1s",
        &["--read", "90", "--read-rate", "300", "--write-rate", "100"],
    );
    let doc = run_ok(&args, dir.path());
    let s = secs(&doc);
    for (d, rate) in [("read", 300.0), ("write", 100.0)] {
        let n = count(&doc, d);
        assert!(
            (n - rate * s).abs() <= 0.05 * rate * s + 2.0,
            "{d}: {n} in {s} s"
        );
    }
    // A cap with a whole-workload rate, or of a direction there is none of.
    for extra in [
        ["--rate", "100", "--write-rate", "10"],
        ["--read", "100", "--write-rate", "10"],
    ] {
        let out = common::run(&common::null_run("1s", "1s", &extra), dir.path());
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
    }
}
