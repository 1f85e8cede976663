//! Protects data validation end to end (`--verify`, `--journal`, `iorig
//! verify`): a clean write-then-read run finds nothing; every kind of damage
//! made to a temp file between the write and the check is found and named
//! (corrupted payload, corrupted header, lost write, misdirected write, torn
//! write); the fault engine's silently dropped writes are found as lost
//! writes (and the store, `runs show` and the report say so); after `kill -9`
//! of a journaled run `iorig verify` reports no false errors yet finds a block
//! damaged after the crash; mixed block sizes, sequential and random, io_uring
//! and psync all validate clean on one journal; a plan's read step checks its
//! write step; bad input exits 2.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common::{iorig, run, tmp};

use serde_json::Value;
use std::collections::BTreeMap;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

const UNIT: u64 = 4096;
const HEADER_BYTES: usize = 32;
/// Units of the scratch file's own header (its first MiB), never written by a run.
const SCRATCH_HEADER_UNITS: u64 = (1 << 20) / UNIT;

/// Runs iorig with `--json -` (or `verify --json -`) and returns exit code and document.
fn run_json(args: &[&str], dir: &Path) -> (i32, Value, String) {
    let out = iorig()
        .args(args)
        .args(["--json", "-"])
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let doc = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("iorig {args:?}: stdout is not JSON ({e}); stderr:\n{stderr}"));
    (out.status.code().unwrap_or(-1), doc, stderr)
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Errors of an `iorig verify` document by offset → kind.
fn errors_by_offset(doc: &Value) -> BTreeMap<u64, String> {
    doc["error_list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["offset_bytes"].as_u64().unwrap(),
                e["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn read_unit(f: &std::fs::File, unit: u64) -> Vec<u8> {
    let mut b = vec![0u8; UNIT as usize];
    f.read_exact_at(&mut b, unit * UNIT).unwrap();
    b
}

fn write_unit(f: &std::fs::File, unit: u64, b: &[u8]) {
    f.write_all_at(b, unit * UNIT).unwrap();
    f.sync_all().unwrap();
}

fn key_of(b: &[u8]) -> Option<u8> {
    (&b[..4] == b"IORV").then_some(b[16])
}

#[test]
fn clean_256mib_random_write_then_read_has_no_errors() {
    let d = tmp();
    let f = d.path().join("clean.dat");
    let j = d.path().join("clean.journal");
    let common = [
        "run",
        "--target",
        path_str(&f),
        "--size",
        "256m",
        "--bs",
        "4k",
        "--qd",
        "16",
        "--time",
        "3s",
        "--no-db",
        "--quiet",
        "--journal",
        path_str(&j),
    ];
    // Random writes, then random reads of what was written, both validated.
    let (code, w, stderr) = run_json(&[&common[..], &["--read", "0"]].concat(), d.path());
    assert_eq!(code, 0, "{stderr}");
    let v = &w["summary"]["validation"];
    assert_eq!(v["errors"], 0, "{v}");
    let writes = w["summary"]["write"]["ops"].as_u64().unwrap();
    assert!(writes > 100, "{writes} writes");
    assert_eq!(w["workload"]["verify"], true);

    let (code, r, stderr) = run_json(&[&common[..], &["--read", "100"]].concat(), d.path());
    assert_eq!(code, 0, "{stderr}");
    let v = &r["summary"]["validation"];
    assert_eq!(v["errors"], 0, "{v}");
    // Random reads land on written blocks in proportion to what was
    // written: checked, and none of them wrong.
    assert!(
        v["units_checked"].as_u64().unwrap() > 0,
        "reads of written blocks were checked: {v}"
    );

    // A mixed run validates reads, and reads before overwriting, in one go.
    let (code, m, stderr) = run_json(
        &[&common[..], &["--read", "50", "--verify-after"]].concat(),
        d.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    let v = &m["summary"]["validation"];
    assert_eq!(v["errors"], 0, "{v}");
    assert!(v["pre_reads"].as_u64().unwrap() > 0, "{v}");
    assert!(v["after_reads"].as_u64().unwrap() > 0, "{v}");

    let (code, doc, stderr) = run_json(&["verify", "--journal", path_str(&j)], d.path());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(doc["errors"], 0);
    assert_eq!(doc["units_read"], 65536 + SCRATCH_HEADER_UNITS);
    // Every unit any run wrote is checked: exactly the journal's written ones.
    assert!(
        doc["units_checked"].as_u64().unwrap() >= writes.min(65536) / 16,
        "{doc}"
    );
    assert_eq!(doc["units_checked"], doc["written_units"], "{doc}");
}

#[test]
fn each_kind_of_damage_is_found_and_named() {
    let d = tmp();
    let f = d.path().join("dmg.dat");
    let j = d.path().join("dmg.journal");
    // 4 MiB = 1024 units, written sequentially over and over: every unit
    // has a known key after each run.
    let args = [
        "run",
        "--target",
        path_str(&f),
        "--size",
        "4m",
        "--bs",
        "4k",
        "--read",
        "0",
        "--random",
        "0",
        "--time",
        "1s",
        "--no-db",
        "--quiet",
        "--journal",
        path_str(&j),
    ];
    let (code, _, stderr) = run_json(&args, d.path());
    assert_eq!(code, 0, "{stderr}");
    let snap = std::fs::read(&f).unwrap();
    let (code, _, stderr) = run_json(&args, d.path());
    assert_eq!(code, 0, "{stderr}");

    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&f)
        .unwrap();
    let old = |u: u64| snap[(u * UNIT) as usize..((u + 1) * UNIT) as usize].to_vec();
    // Units (after the scratch header) whose generation changed between the runs.
    let units = std::fs::metadata(&f).unwrap().len() / UNIT;
    let changed: Vec<u64> = (SCRATCH_HEADER_UNITS..units)
        .filter(|&u| {
            let now = read_unit(&file, u);
            key_of(&now).is_some() && key_of(&old(u)).is_some() && key_of(&now) != key_of(&old(u))
        })
        .collect();
    assert!(changed.len() > 100, "the second run rewrote the file");
    let pick = |n: usize| changed[n * changed.len() / 8];
    let (payload, header, lost, mis_from, mis_to, torn) =
        (pick(0), pick(1), pick(2), pick(3), pick(4), pick(5));

    let mut b = read_unit(&file, payload);
    b[1000] ^= 0x40;
    write_unit(&file, payload, &b);

    let mut b = read_unit(&file, header);
    b[22] ^= 0x01; // inside the timestamp
    write_unit(&file, header, &b);

    write_unit(&file, lost, &old(lost));

    let b = read_unit(&file, mis_from);
    write_unit(&file, mis_to, &b);

    let mut b = read_unit(&file, torn);
    let half = UNIT as usize / 2;
    b[half..].copy_from_slice(&old(torn)[half..]);
    write_unit(&file, torn, &b);

    let (code, doc, stderr) = run_json(&["verify", "--journal", path_str(&j)], d.path());
    assert_eq!(code, 3, "{stderr}");
    let found = errors_by_offset(&doc);
    let want: BTreeMap<u64, String> = [
        (payload, "corrupted"),
        (header, "corrupted"),
        (lost, "lost_write"),
        (mis_to, "misdirected"),
        (torn, "torn"),
    ]
    .into_iter()
    .map(|(u, k)| (u * UNIT, k.to_string()))
    .collect();
    assert_eq!(found, want, "{stderr}");
    assert_eq!(doc["errors"], 5);
    // The misdirected block names where it belonged.
    let mis = doc["error_list"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "misdirected")
        .unwrap();
    assert_eq!(mis["found_offset_bytes"], mis_from * UNIT);
    // It says whose block it is in words, not by a header's hash id.
    let detail = mis["detail"].as_str().unwrap();
    assert!(
        detail.starts_with(&format!(
            "valid block for offset {} of this target",
            mis_from * UNIT
        )),
        "{detail}"
    );
    // One clear line per error on stderr.
    assert!(stderr.contains("lost write at"), "{stderr}");

    // One loss, one report: a read run on the journal finds the same five
    // (verify only reads), and afterwards neither `iorig verify` nor the
    // next run reports any of them again, under any name.
    let read_all = [
        "run",
        "--target",
        path_str(&f),
        "--read",
        "100",
        "--random",
        "0",
        "--io-size",
        "100%",
        "--no-db",
        "--quiet",
        "--journal",
        path_str(&j),
    ];
    let (code, doc, stderr) = run_json(&read_all, d.path());
    assert_eq!(code, 3, "{stderr}");
    let kinds = |doc: &Value| -> BTreeMap<u64, String> {
        doc["summary"]["validation"]["error_list"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let at = e["offset_bytes"].as_u64().unwrap();
                (at, e["kind"].as_str().unwrap().to_string())
            })
            .collect()
    };
    assert_eq!(kinds(&doc), want, "{stderr}");
    let (code, doc, stderr) = run_json(&["verify", "--journal", path_str(&j)], d.path());
    assert_eq!(code, 0, "reported again: {stderr}");
    // The lost write's older block is what the unit holds now, and is
    // checked as such; the other four are unknown until written again.
    assert_eq!(doc["unknown_units"], 4, "{doc}");
    assert!(
        stderr.contains("4 unchecked (their loss was reported by a run)"),
        "{stderr}"
    );
    let (code, doc, stderr) = run_json(&read_all, d.path());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(doc["summary"]["validation"]["errors"], 0);
    // Writing them makes them known again; a journal of 4k units follows a
    // run of 16k blocks (four units an I/O).
    let mut write_16k = read_all.to_vec();
    write_16k[4] = "0";
    write_16k.extend(["--bs", "16k"]);
    let (code, _, stderr) = run_json(&write_16k, d.path());
    assert_eq!(code, 0, "{stderr}");
    let (code, doc, stderr) = run_json(&["verify", "--journal", path_str(&j)], d.path());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        (doc["unknown_units"].as_u64(), doc["errors"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(doc["units_checked"], doc["written_units"], "{doc}");
    // Blocks smaller than the journal's unit cannot be followed: one line
    // that says so and how to go on.
    let mut small = read_all.to_vec();
    small.extend(["--bs", "2k"]);
    let out = run(&small, d.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("it tracks 4096-byte units and this workload's block size 2048 bytes is not a multiple of 4096"),
        "{err}"
    );
}

#[test]
fn dropped_writes_are_found_as_lost_writes() {
    let d = tmp();
    let f = d.path().join("drop.dat");
    let (code, doc, stderr) = run_json(
        &[
            "run",
            "--target",
            path_str(&f),
            "--size",
            "1m",
            "--engine",
            "fault",
            "--fault",
            "drop:every=20",
            "--threads",
            "2",
            "--read",
            "50",
            "--verify",
            "--time",
            "5s",
            "--max-errors",
            "10",
            "--db",
            "v.db",
            "--quiet",
        ],
        d.path(),
    );
    assert_eq!(code, 3, "{stderr}");
    let v = &doc["summary"]["validation"];
    // The run stops at the 10th error; checks the workers complete before
    // they see the stop (a few milliseconds) still count.
    let errors = v["errors"].as_u64().unwrap();
    assert!((10..=20).contains(&errors), "stops at --max-errors: {v}");
    assert_eq!(v["stopped_at_max_errors"], true);
    let kinds: Vec<&str> = v["errors_by_kind"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(kinds, ["lost_write"], "{v}");
    assert_eq!(doc["run"]["status"], "failed");
    // Every interval completed before the stop is kept.
    assert!(!doc["intervals"].as_array().unwrap().is_empty());
    // The store has it: `runs show` and the report say what was found.
    let out = run(&["runs", "show", "1", "--db", "v.db"], d.path());
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("validation: ")
            && shown.contains(&format!("{errors} error(s) (lost_write {errors})")),
        "{shown}"
    );
    let out = run(&["report", "1", "--db", "v.db", "--out", "rep"], d.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = std::fs::read_to_string(d.path().join("rep/index.html")).unwrap();
    assert!(page.contains(&format!(
        "{errors} validation error(s)</span> (lost_write {errors})"
    )));
}

#[test]
fn kill_9_during_a_journaled_run_then_verify() {
    let d = tmp();
    let f = d.path().join("crash.dat");
    let j = d.path().join("crash.journal");
    let mut child = iorig()
        .args([
            "run",
            "--target",
            path_str(&f),
            "--size",
            "64m",
            "--read",
            "0",
            "--qd",
            "8",
            "--bs",
            "4k,16k",
            "--time",
            "60s",
            "--journal",
            path_str(&j),
            "--no-db",
            "--quiet",
        ])
        .current_dir(d.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Let it write for a while (the 64 MiB fill comes first). The journal
    // grows as fast as the disk syncs: about 90 KB/s on a 2-core CI VM, and
    // slower while other tests load it, so the bound is a coarse liveness
    // one.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::fs::metadata(&j).map(|m| m.len()).unwrap_or(0) < 512 << 10 {
        assert!(std::time::Instant::now() < deadline, "no journal growth");
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    // A new run refuses the unsettled journal, without touching the target.
    let before = std::fs::read(&f).unwrap();
    let out = run(
        &[
            "run",
            "--target",
            path_str(&f),
            "--read",
            "0",
            "--time",
            "1s",
            "--journal",
            path_str(&j),
            "--no-db",
        ],
        d.path(),
    );
    // The kill may land while every write's done record is already in the
    // log (a journaled worker spends much of its time syncing them): then
    // nothing was in flight, the journal is consistent and a new run may
    // continue it. Otherwise it must refuse, without touching the target.
    match out.status.code() {
        Some(2) => {
            assert!(String::from_utf8_lossy(&out.stderr).contains("iorig verify --journal"));
            assert!(std::fs::read(&f).unwrap() == before, "target untouched");
        }
        Some(0) => {}
        other => panic!("exit {other:?}: {}", String::from_utf8_lossy(&out.stderr)),
    }

    let (code, doc, stderr) = run_json(&["verify", "--journal", path_str(&j)], d.path());
    assert_eq!(code, 0, "no false errors after the crash: {stderr}");
    assert!(doc["written_units"].as_u64().unwrap() > 100);

    // Damage one written block after the crash: found.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&f)
        .unwrap();
    let units = std::fs::metadata(&f).unwrap().len() / UNIT;
    let unit = (SCRATCH_HEADER_UNITS..units)
        .find(|&u| key_of(&read_unit(&file, u)).is_some())
        .unwrap();
    let mut b = read_unit(&file, unit);
    b[HEADER_BYTES + 100] ^= 0xff;
    write_unit(&file, unit, &b);
    let (code, doc, stderr) = run_json(&["verify", "--journal", path_str(&j)], d.path());
    assert_eq!(code, 3, "{stderr}");
    assert_eq!(
        errors_by_offset(&doc),
        [(unit * UNIT, "corrupted".to_string())].into()
    );
}

#[test]
fn a_plan_checks_in_a_read_step_what_a_write_step_wrote() {
    let d = tmp();
    let f = d.path().join("plan.dat");
    let plan = d.path().join("p.toml");
    std::fs::write(
        &plan,
        "name = \"write then read\"\nsize = \"16m\"\n[defaults]\nverify = true\ntime = \"1s\"\n\
         [[steps]]\nread = 0\n[[steps]]\nread = 100\n",
    )
    .unwrap();
    let out = run(
        &[
            "plan",
            "run",
            path_str(&plan),
            "--target",
            path_str(&f),
            "--no-db",
        ],
        d.path(),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let checked: Vec<u64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("validation: "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(checked.len(), 2, "{stdout}");
    assert!(
        checked[1] > 100,
        "the read step checked written blocks: {stdout}"
    );
}

#[test]
fn bad_validation_input_exits_2_and_writes_nothing() {
    let d = tmp();
    let f = d.path().join("bad.dat");
    let cases: [&[&str]; 4] = [
        &["--verify", "--engine", "null"],
        &["--verify", "--bs", "4k,6k"],
        &["--verify", "--data", "zero"],
        &["--journal", "/nonexistent-dir/j"],
    ];
    for extra in cases {
        let out = run(
            &[
                &[
                    "run",
                    "--target",
                    path_str(&f),
                    "--size",
                    "1m",
                    "--read",
                    "0",
                    "--no-db",
                ][..],
                extra,
            ]
            .concat(),
            d.path(),
        );
        assert_eq!(out.status.code(), Some(2), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(!f.exists(), "{extra:?} created the target");
    }
    let out = run(&["verify", "--journal", "nope.journal"], d.path());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn mixed_block_sizes_both_patterns_and_both_engines_validate_clean() {
    let d = tmp();
    let f = d.path().join("mix.dat");
    let j = d.path().join("mix.journal");
    // One journal throughout: every run continues the key map the one before
    // left, so each checks what the others wrote, across engines and patterns.
    for (engine, random, qd, threads) in [
        ("psync", "100", "1", "3"),
        ("io_uring", "0", "8", "2"),
        ("io_uring", "100", "16", "2"),
        ("psync", "0", "1", "2"),
    ] {
        let (code, doc, stderr) = run_json(
            &[
                "run",
                "--target",
                path_str(&f),
                "--size",
                "16m",
                "--bs",
                "4k:50,16k:30,64k:20",
                "--engine",
                engine,
                "--random",
                random,
                "--qd",
                qd,
                "--threads",
                threads,
                "--read",
                "50",
                "--time",
                "1s",
                "--no-db",
                "--quiet",
                "--journal",
                path_str(&j),
            ],
            d.path(),
        );
        assert_eq!(code, 0, "{engine} random {random}: {stderr}");
        let v = &doc["summary"]["validation"];
        assert_eq!(v["errors"], 0, "{engine} random {random}: {v}");
        assert_eq!(v["unit_bytes"], 4096);
        // 16k and 64k blocks hold several units each.
        assert!(
            v["units_checked"].as_u64().unwrap() > v["blocks_checked"].as_u64().unwrap(),
            "{v}"
        );
    }
    let (code, doc, stderr) = run_json(&["verify", "--journal", path_str(&j)], d.path());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(doc["errors"], 0);
    // Every unit the runs wrote is checked (how many the time allowed
    // depends on the machine).
    assert!(doc["written_units"].as_u64().unwrap() > 0, "{doc}");
    assert_eq!(doc["units_checked"], doc["written_units"], "{doc}");
}

/// Validation's own reads are not the workload's: a write-only run under
/// `--verify` (and `--verify-after`) reports no reads, and counts its
/// pre-reads and read-backs in the validation summary.
#[test]
fn validation_reads_are_counted_apart_from_the_workload() {
    let d = tmp();
    let target = d.path().join("v.dat");
    for extra in [&["--verify"][..], &["--verify-after"][..]] {
        let _ = std::fs::remove_file(&target);
        let args = [
            &[
                "run",
                "--target",
                path_str(&target),
                "--size",
                "64k",
                "--bs",
                "4k",
                "--read",
                "0",
                "--time",
                "1s",
                "--no-db",
                "-q",
            ][..],
            extra,
        ]
        .concat();
        let (code, doc, stderr) = run_json(&args, d.path());
        assert_eq!(code, 0, "{stderr}");
        let s = &doc["summary"];
        let v = &s["validation"];
        assert_eq!(s["read"]["ops"], 0, "{extra:?}: no workload reads: {s}");
        // More writes than the 16 units: some were rewrites (a loaded
        // machine still makes dozens of writes in a second).
        assert!(s["write"]["ops"].as_u64().unwrap() > 16, "{s}");
        let validation_reads =
            v["pre_reads"].as_u64().unwrap() + v["after_reads"].as_u64().unwrap();
        assert!(
            validation_reads > 0,
            "{extra:?}: rewrites were pre-read or read back: {v}"
        );
    }
}
