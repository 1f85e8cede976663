//! Protects trims (issue 15, item 15): `--trim PCT` discards blocks in a mix
//! (punched holes in files, BLKDISCARD on block devices), counted with their
//! own figures and histograms in the JSON and the store; a trimmed block
//! leaves the validation key map, so a mix of reads, writes and trims
//! validates clean; a precondition's `trim = true` discards the working set
//! first; and bad combinations are refused before anything is written.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{ok, run, tmp, LoopDev};
use serde_json::Value;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

fn json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The (offset, size) of every trim in a `--lat-log` file.
fn trims_logged(path: &Path) -> Vec<(u64, u64)> {
    let mut rdr = csv::Reader::from_path(path).unwrap();
    rdr.records()
        .map(|r| r.unwrap())
        .filter(|r| &r[4] == "trim")
        .map(|r| (r[6].parse().unwrap(), r[7].parse().unwrap()))
        .collect()
}

/// Whether every byte of each range of `path` reads as zero.
fn all_zero(path: &Path, ranges: &[(u64, u64)]) -> bool {
    let mut f = std::fs::File::open(path).unwrap();
    let mut buf = Vec::new();
    ranges.iter().all(|&(at, len)| {
        buf.resize(len as usize, 0xff);
        f.seek(SeekFrom::Start(at)).unwrap();
        f.read_exact(&mut buf).unwrap();
        buf.iter().all(|&b| b == 0)
    })
}

#[test]
fn trims_punch_holes_in_a_file_that_read_back_as_zeros() {
    let dir = tmp();
    let d = dir.path();
    ok(
        &[
            "run",
            "--target",
            "t.dat",
            "--size",
            "16m",
            "--read",
            "0",
            "--trim",
            "100",
            "--bs",
            "64k",
            "--qd",
            "4",
            // Paced: every trim is checked below, so a bounded number of them.
            "--rate",
            "2000",
            "--time",
            "1s",
            "--lat-log",
            "io.csv",
            "--json",
            "r.json",
            "--no-db",
            "-q",
        ],
        d,
    );
    let doc = json(&d.join("r.json"));
    let s = &doc["summary"];
    let trims = trims_logged(&d.join("io.csv"));
    assert!(!trims.is_empty());
    assert_eq!(s["trim"]["ops"].as_u64().unwrap(), trims.len() as u64);
    assert_eq!(s["write"]["ops"], 0);
    assert_eq!(s["total"]["ops"], s["trim"]["ops"]);
    assert_eq!(doc["workload"]["trim_pct"], 100.0);
    assert!(
        all_zero(&d.join("t.dat"), &trims),
        "a trimmed range holds data"
    );
    // The holes are real: the file holds fewer blocks than its length.
    let md = std::fs::metadata(d.join("t.dat")).unwrap();
    assert!(md.blocks() * 512 < md.len(), "no hole was punched");
}

#[test]
fn a_mix_with_trims_validates_clean_and_is_stored_as_its_own_operation() {
    let dir = tmp();
    let d = dir.path();
    ok(
        &[
            "run",
            "--target",
            "t.dat",
            "--size",
            "4m",
            "--read",
            "50",
            "--trim",
            "25",
            "--verify",
            "--qd",
            "4",
            "--time",
            "2s",
            "--interval",
            "500ms",
            "--json",
            "r.json",
            "--db",
            "t.db",
            "-q",
        ],
        d,
    );
    let doc = json(&d.join("r.json"));
    let s = &doc["summary"];
    assert!(s["trim"]["ops"].as_u64().unwrap() > 100, "{s}");
    assert!(s["read"]["ops"].as_u64().unwrap() > 100, "{s}");
    // Reads of trimmed blocks check nothing; everything else checks clean.
    assert_eq!(s["validation"]["errors"], 0, "{s}");
    assert!(s["validation"]["blocks_checked"].as_u64().unwrap() > 0);
    let sum = |k: &str| s[k]["ops"].as_u64().unwrap();
    assert_eq!(sum("read") + sum("write") + sum("trim"), sum("total"));
    // The store keeps trims as an operation: summary, intervals, histogram.
    let show: Value =
        serde_json::from_str(&ok(&["runs", "show", "1", "--db", "t.db", "--json"], d)).unwrap();
    assert_eq!(show["steps"][0]["summary"]["trim"]["ops"], s["trim"]["ops"]);
    ok(
        &[
            "export", "1", "--db", "t.db", "--format", "json", "--out", "e.json",
        ],
        d,
    );
    let e = json(&d.join("e.json"));
    let with_trims = e["steps"][0]["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["trim"]["ops"].as_u64().unwrap_or(0) > 0)
        .count();
    assert!(with_trims >= 3, "{}", e["steps"][0]["intervals"]);
    ok(
        &[
            "export", "1", "--db", "t.db", "--format", "hlog", "--out", "e.hlog",
        ],
        d,
    );
    let log = std::fs::read_to_string(d.join("e.hlog")).unwrap();
    assert!(log.lines().any(|l| l.starts_with("Tag=trim,")), "{log}");
    let pct = std::fs::read_to_string(d.join("e.percentiles.csv")).unwrap();
    assert!(pct.lines().any(|l| l.contains(",trim,")));
}

#[test]
fn bad_trim_settings_are_refused_before_anything_is_written() {
    let dir = tmp();
    let d = dir.path();
    let out = run(
        &[
            "run", "--target", "t.dat", "--size", "4m", "--read", "80", "--trim", "30", "--no-db",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--trim 20 or less"), "{err}");
    let out = run(
        &[
            "run",
            "--target",
            "t.dat",
            "--size",
            "4m",
            "--read",
            "0",
            "--trim",
            "10",
            "--journal",
            "j.jnl",
            "--no-db",
        ],
        d,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--journal does not record trims"));
    assert!(!d.join("t.dat").exists() && !d.join("j.jnl").exists());
    // The key in a workload file, shown in what would run.
    std::fs::write(d.join("w.toml"), "read = 60\ntrim = 20\n").unwrap();
    let said = ok(
        &[
            "run",
            "w.toml",
            "--target",
            "t.dat",
            "--size",
            "4m",
            "--dry-run",
            "--no-db",
        ],
        d,
    );
    assert!(said.contains("read 60% trim 20%"), "{said}");
}

#[test]
fn a_precondition_can_trim_the_working_set_first() {
    let dir = tmp();
    let d = dir.path();
    std::fs::write(
        d.join("p.toml"),
        "targets = [\"t.dat\"]\nsize = \"8m\"\n[[steps]]\nkind = \"precondition\"\npasses = 1\ntrim = true\n",
    )
    .unwrap();
    let out = run(&["plan", "run", "p.toml", "--db", "p.db"], d);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("trim pass: discarded 8.00 MiB"), "{err}");
    let show: Value =
        serde_json::from_str(&ok(&["runs", "show", "1", "--db", "p.db", "--json"], d)).unwrap();
    let p = &show["steps"][0]["analysis"]["precondition"];
    assert_eq!(p["trimmed_bytes"], 8 << 20, "{p}");
    assert_eq!(p["written_bytes"], 8 << 20, "{p}");
}

#[test]
#[ignore = "needs root: loop devices"]
fn trims_on_a_block_device_are_discards() {
    let lo = LoopDev::new(32 << 20);
    // Data everywhere first, so a discard shows as zeros (a loop device
    // punches holes in its backing file).
    std::fs::write(&lo.backing, vec![0x5a_u8; 32 << 20]).unwrap();
    let dir = tmp();
    let d = dir.path();
    ok(
        &[
            "run",
            "--target",
            &lo.dev,
            "--size",
            "8m",
            "--read",
            "0",
            "--trim",
            "100",
            "--bs",
            "64k",
            "--qd",
            "4",
            "--time",
            "1s",
            "--allow-destroy",
            "--lat-log",
            "io.csv",
            "--json",
            "r.json",
            "--no-db",
            "-q",
        ],
        d,
    );
    let doc = json(&d.join("r.json"));
    let trims = trims_logged(&d.join("io.csv"));
    assert_eq!(
        doc["summary"]["trim"]["ops"].as_u64().unwrap(),
        trims.len() as u64
    );
    assert!(
        trims.iter().all(|&(at, len)| at + len <= 8 << 20),
        "a trim past --size"
    );
    let _ = std::process::Command::new("blockdev")
        .args(["--flushbufs", &lo.dev])
        .status();
    assert!(
        all_zero(Path::new(&lo.dev), &trims),
        "a discarded range holds data"
    );
    // Past --size nothing changed.
    let mut f = std::fs::File::open(&lo.dev).unwrap();
    let mut tail = vec![0u8; 24 << 20];
    f.seek(SeekFrom::Start(8 << 20)).unwrap();
    f.read_exact(&mut tail).unwrap();
    assert!(tail.iter().all(|&b| b == 0x5a));
}
