//! File-system workloads end to end: the tree a TOML of the vdbench guide's
//! shape builds, what each operation does on disk, the JSON and store
//! records per operation kind, and the refusals (foreign anchor, entry
//! limit, free space, bad values) that change nothing.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::{ok, run, tmp};
use serde_json::Value;
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Every regular file and directory below `root`, as paths relative to it.
fn walk(root: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut files = Vec::new();
    let mut dirs = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let rel = e.path().strip_prefix(root).unwrap().to_path_buf();
            if e.file_type().unwrap().is_dir() {
                dirs.push(rel);
                stack.push(e.path());
            } else {
                files.push(rel);
            }
        }
    }
    files.sort();
    dirs.sort();
    (files, dirs)
}

/// The tree's data files (the marker left out).
fn data_files(root: &Path) -> Vec<PathBuf> {
    walk(root)
        .0
        .into_iter()
        .filter(|p| p != Path::new(".iorig-tree"))
        .collect()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `summary.fs_ops.OP.ops` of a result document (0 when absent).
fn ops(doc: &Value, op: &str) -> u64 {
    doc["summary"]["fs_ops"][op]["ops"].as_u64().unwrap_or(0)
}

/// Runs a file-system workload on `anchor` with `args` and gives its JSON.
fn fs_run(dir: &Path, anchor: &Path, args: &[&str]) -> Value {
    let out = dir.join("out.json");
    let mut all = vec![
        "run",
        "--target",
        anchor.to_str().unwrap(),
        "--no-db",
        "--quiet",
        "--buffered",
        "--json",
        out.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    ok(&all, dir);
    json(&out)
}

fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[test]
fn the_vdbench_guide_example_builds_exactly_its_tree_and_reads_it() {
    let dir = tmp();
    let anchor = dir.path().join("fsd1");
    std::fs::create_dir(&anchor).unwrap();
    let toml = dir.path().join("fs.toml");
    std::fs::write(
        &toml,
        format!(
            "anchor = '{}'\ndepth = 2\nwidth = 2\nfiles = 2\nfile_size = '128k'\nops = 'read'\nbs = '4k'\nfileio = 'sequential'\nfileselect = 'random'\nthreads = 2\nformat = 'yes'\ntime = '2s'\n",
            anchor.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("out.json");
    let db = dir.path().join("r.db");
    ok(
        &[
            "run",
            toml.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--quiet",
            "--json",
            out.to_str().unwrap(),
        ],
        dir.path(),
    );
    let (files, dirs) = walk(&anchor);
    let data: Vec<&PathBuf> = files
        .iter()
        .filter(|p| *p != Path::new(".iorig-tree"))
        .collect();
    assert_eq!(data.len(), 2 * 2 * 2, "width^depth x files: {files:?}");
    assert_eq!(dirs.len(), 2 + 4, "{dirs:?}");
    for f in &data {
        assert_eq!(std::fs::metadata(anchor.join(f)).unwrap().len(), 128 << 10);
    }
    let doc = json(&out);
    assert_eq!(doc["targets"][0]["kind"], "directory");
    assert_eq!(doc["summary"]["format"]["files_created"], 8);
    assert_eq!(doc["summary"]["format"]["dirs_created"], 6);
    assert_eq!(doc["summary"]["format"]["bytes_written"], 8 * (128 << 10));
    assert!(ops(&doc, "read") > 0 && ops(&doc, "open") > 0 && ops(&doc, "close") > 0);
    assert_eq!(
        ops(&doc, "read"),
        doc["summary"]["read"]["ops"].as_u64().unwrap()
    );
    // A whole file per open-close: 32 reads of 4k each.
    let per_open = ops(&doc, "read") as f64 / ops(&doc, "open") as f64;
    assert!((per_open - 32.0).abs() < 1.0, "{per_open}");
    for i in doc["intervals"].as_array().unwrap() {
        assert!(i["fs_ops"]["read"]["ops"].as_u64().unwrap() > 0, "{i}");
    }
    // The store has a row per kind per interval, and the export gives them back.
    let show = ok(
        &["runs", "show", "1", "--db", db.to_str().unwrap(), "--json"],
        dir.path(),
    );
    let show: Value = serde_json::from_str(&show).unwrap();
    assert!(
        show["steps"][0]["summary"]["fs_ops"]["open"]["ops"]
            .as_u64()
            .unwrap()
            > 0
    );
    let export = dir.path().join("e.json");
    ok(
        &[
            "export",
            "1",
            "--db",
            db.to_str().unwrap(),
            "--format",
            "json",
            "--out",
            export.to_str().unwrap(),
        ],
        dir.path(),
    );
    let e = json(&export);
    let first = &e["steps"][0]["intervals"][0]["fs_ops"];
    for op in ["read", "open", "close"] {
        assert!(first[op]["ops"].as_u64().unwrap() > 0, "{op}: {first}");
    }
    // CSV: the steps table has a column group per kind, the intervals
    // table a row per kind and interval; the HTML report a row per kind
    // and a chart of the kinds over time.
    let csv = dir.path().join("x.csv");
    ok(
        &[
            "export",
            "1",
            "--db",
            db.to_str().unwrap(),
            "--format",
            "csv",
            "--out",
            csv.to_str().unwrap(),
        ],
        dir.path(),
    );
    let steps = std::fs::read_to_string(&csv).unwrap();
    let head: Vec<&str> = steps.lines().next().unwrap().split(',').collect();
    for col in ["open_ops", "close_iops", "fs_ops", "fs_depth"] {
        assert!(head.contains(&col), "{col}: {head:?}");
    }
    let intervals = std::fs::read_to_string(dir.path().join("x.intervals.csv")).unwrap();
    for op in ["read", "open", "close", "total"] {
        let n = intervals
            .lines()
            .filter(|l| l.split(',').nth(7) == Some(op))
            .filter(|l| l.split(',').nth(8).is_some_and(|v| v != "0"))
            .count();
        assert!(n >= 2, "{op}: {n} rows with operations");
    }
    let rep = dir.path().join("rep");
    ok(
        &[
            "report",
            "1",
            "--db",
            db.to_str().unwrap(),
            "--out",
            rep.to_str().unwrap(),
        ],
        dir.path(),
    );
    let html = std::fs::read_to_string(rep.join("index.html")).unwrap();
    for op in ["read", "open", "close"] {
        assert!(html.contains(&format!("<td>{op}</td>")), "{op}");
    }
    assert!(rep.join("step-0001-operations.svg").exists());

    // A second run with the same shape keeps the tree.
    let again = fs_run(
        dir.path(),
        &anchor,
        &[
            "--depth",
            "2",
            "--width",
            "2",
            "--files",
            "2",
            "--file-size",
            "128k",
            "--ops",
            "stat",
            "--time",
            "1s",
        ],
    );
    assert_eq!(again["summary"]["format"]["files_kept"], 8);
    assert_eq!(again["summary"]["format"]["files_created"], 0);
}

#[test]
fn create_fills_empty_slots_to_their_size_and_the_step_ends_when_all_are_full() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let doc = fs_run(
        dir.path(),
        &anchor,
        &[
            "--depth",
            "1",
            "--width",
            "2",
            "--files",
            "10",
            "--file-size",
            "8k",
            "--format",
            "dirs",
            "--ops",
            "create",
            "--threads",
            "2",
            "--time",
            "30s",
        ],
    );
    let files = data_files(&anchor);
    assert_eq!(files.len(), 20);
    for f in &files {
        assert_eq!(std::fs::metadata(anchor.join(f)).unwrap().len(), 8192);
    }
    assert_eq!(ops(&doc, "create"), 20);
    assert_eq!(ops(&doc, "write"), 40, "two 4k writes per 8k file");
    assert_eq!(doc["summary"]["write"]["bytes"], 20 * 8192);
    assert!(
        doc["summary"]["duration_s"].as_f64().unwrap() < 25.0,
        "the step ends once every slot holds a file"
    );
}

#[test]
fn delete_removes_files_and_mkdir_then_rmdir_make_and_remove_directories() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let shape = [
        "--depth",
        "1",
        "--width",
        "2",
        "--files",
        "6",
        "--file-size",
        "4k",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        shape.iter().chain(extra).copied().collect()
    };
    let doc = fs_run(
        dir.path(),
        &anchor,
        &with(&["--ops", "delete", "--time", "30s"]),
    );
    assert_eq!(ops(&doc, "delete"), 12);
    assert!(data_files(&anchor).is_empty());

    let doc = fs_run(
        dir.path(),
        &anchor,
        &with(&["--ops", "mkdir", "--format", "no", "--time", "30s"]),
    );
    assert_eq!(ops(&doc, "mkdir"), 12);
    let (_, dirs) = walk(&anchor);
    let slots: Vec<&PathBuf> = dirs
        .iter()
        .filter(|d| d.file_name().unwrap().to_str().unwrap().starts_with('s'))
        .collect();
    assert_eq!(slots.len(), 12, "{dirs:?}");

    let doc = fs_run(
        dir.path(),
        &anchor,
        &with(&["--ops", "rmdir", "--format", "no", "--time", "30s"]),
    );
    assert_eq!(ops(&doc, "rmdir"), 12);
    assert_eq!(
        walk(&anchor).1.len(),
        2,
        "only the two leaf directories stay"
    );
}

#[test]
fn rename_moves_files_between_slots_and_keeps_their_data() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let shape = [
        "--depth",
        "0",
        "--files",
        "4",
        "--file-size",
        "16k",
        "--time",
        "1s",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        shape.iter().chain(extra).copied().collect()
    };
    fs_run(dir.path(), &anchor, &with(&["--ops", "stat"]));
    // One slot emptied: every rename moves a file into the empty one.
    std::fs::remove_file(anchor.join("f0")).unwrap();
    let before: BTreeSet<u64> = data_files(&anchor)
        .iter()
        .map(|f| fnv(&std::fs::read(anchor.join(f)).unwrap()))
        .collect();
    let doc = fs_run(
        dir.path(),
        &anchor,
        &with(&["--ops", "rename", "--format", "no"]),
    );
    assert!(ops(&doc, "rename") > 10, "{}", doc["summary"]);
    let files = data_files(&anchor);
    assert_eq!(files.len(), 3);
    let after: BTreeSet<u64> = files
        .iter()
        .map(|f| fnv(&std::fs::read(anchor.join(f)).unwrap()))
        .collect();
    assert_eq!(before, after, "the same three files, moved");
}

#[test]
fn setattr_write_fsync_stat_open_and_readdir_do_what_they_say() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let shape = [
        "--depth",
        "1",
        "--width",
        "2",
        "--files",
        "8",
        "--file-size",
        "64k",
        "--time",
        "1s",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        shape.iter().chain(extra).copied().collect()
    };
    fs_run(dir.path(), &anchor, &with(&["--ops", "stat"]));
    let files = data_files(&anchor);
    assert_eq!(files.len(), 16);
    let old = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
    let mut hashes = Vec::new();
    for f in &files {
        let p = anchor.join(f);
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(old)
            .unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o640)).unwrap();
        hashes.push(fnv(&std::fs::read(&p).unwrap()));
    }

    let doc = fs_run(
        dir.path(),
        &anchor,
        &with(&["--ops", "setattr", "--format", "no"]),
    );
    assert!(ops(&doc, "setattr") > 0);
    let touched = files
        .iter()
        .filter(|f| {
            let m = std::fs::metadata(anchor.join(f)).unwrap();
            m.modified().unwrap() > old && matches!(m.permissions().mode() & 0o777, 0o644 | 0o600)
        })
        .count();
    assert_eq!(touched, files.len(), "1 s of setattr reaches all 16 files");

    let doc = fs_run(
        dir.path(),
        &anchor,
        &with(&["--ops", "write", "--fileio", "random", "--format", "no"]),
    );
    assert!(ops(&doc, "write") > 0);
    let changed = files
        .iter()
        .zip(&hashes)
        .filter(|(f, h)| fnv(&std::fs::read(anchor.join(f)).unwrap()) != **h)
        .count();
    assert!(changed > 0, "writes change the files' data");
    for f in &files {
        assert_eq!(std::fs::metadata(anchor.join(f)).unwrap().len(), 64 << 10);
    }

    let doc = fs_run(
        dir.path(),
        &anchor,
        &with(&["--ops", "fsync", "--format", "no"]),
    );
    let fsyncs = ops(&doc, "fsync");
    assert!(fsyncs > 0);
    // Each fsync opens and closes its file: at most one open-close pair
    // straddles the end of the measured time.
    assert!(
        ops(&doc, "open").abs_diff(fsyncs) <= 2,
        "{}",
        doc["summary"]["fs_ops"]
    );

    let doc = fs_run(
        dir.path(),
        &anchor,
        &with(&["--ops", "stat:40,open:30,readdir:30", "--format", "no"]),
    );
    for op in ["stat", "open", "close", "readdir"] {
        assert!(ops(&doc, op) > 0, "{op}");
    }
    assert_eq!(doc["summary"]["errors"], 0);
    assert_eq!(
        data_files(&anchor).len(),
        16,
        "none of these changes the tree"
    );
}

/// Runs `args` against a fresh anchor holding `seed_files`, asserts exit 2
/// with a message containing `want`, and that nothing changed.
fn refused(seed_files: &[&str], args: &[&str], want: &str) {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    for f in seed_files {
        std::fs::write(anchor.join(f), b"user data").unwrap();
    }
    let db = dir.path().join("r.db");
    let mut all = vec![
        "run",
        "--anchor",
        anchor.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        "--time",
        "1s",
    ];
    all.extend_from_slice(args);
    let out = run(&all, dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    let (files, dirs) = walk(&anchor);
    assert!(dirs.is_empty(), "{dirs:?}");
    assert_eq!(files.len(), seed_files.len(), "{files:?}");
    for f in seed_files {
        assert_eq!(std::fs::read(anchor.join(f)).unwrap(), b"user data");
    }
    assert!(!db.exists(), "no store is created");
}

#[test]
fn bad_trees_and_foreign_anchors_are_refused_and_nothing_changes() {
    refused(
        &["notes.txt"],
        &[],
        "holds notes.txt, which iorig did not create",
    );
    refused(&["d0"], &["--width", "2"], "which iorig did not create");
    refused(
        &[],
        &["--depth", "3", "--width", "100", "--files", "20"],
        "over the limit of 10000000",
    );
    refused(
        &[],
        &["--files", "100", "--file-size", "1t"],
        "free; make it smaller",
    );
    refused(
        &[],
        &["--ops", "create:50,chmod:50"],
        "unknown operation 'chmod'",
    );
    refused(&[], &["--ops", "create:50,stat:40"], "add up to 90");
    refused(&[], &["--file-size", "4q"], "file-size");
    refused(&[], &["--read", "50"], "give the operations with --ops");
    refused(&[], &["--qd", "4"], "give more --threads");
    refused(&[], &["--format", "no"], "holds none");
    refused(
        &[],
        &["--format", "sometimes"],
        "use no, yes, once, restart or dirs",
    );
    refused(&[], &["--engine", "io_uring"], "drop --engine");
    refused(&[], &["--file-size", "1000"], "multiples of 512");
}

#[test]
fn an_anchor_that_is_missing_or_a_file_is_refused() {
    let dir = tmp();
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    for (anchor, want) in [
        (dir.path().join("missing"), "does not exist"),
        (file.clone(), "is not a directory"),
    ] {
        let out = run(
            &["run", "--anchor", anchor.to_str().unwrap(), "--no-db"],
            dir.path(),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "{err}");
    }
    assert_eq!(std::fs::read(&file).unwrap(), b"x");
    assert!(!dir.path().join("missing").exists());
}

#[test]
fn the_entry_limit_can_be_raised_and_a_tree_of_another_shape_is_rebuilt() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let limited = run(
        &[
            "run",
            "--anchor",
            anchor.to_str().unwrap(),
            "--no-db",
            "--files",
            "50",
            "--width",
            "2",
            "--max-entries",
            "20",
        ],
        dir.path(),
    );
    assert_eq!(limited.status.code(), Some(2));
    let doc = fs_run(
        dir.path(),
        &anchor,
        &[
            "--files",
            "50",
            "--width",
            "2",
            "--max-entries",
            "200",
            "--ops",
            "stat",
            "--time",
            "1s",
        ],
    );
    assert_eq!(doc["summary"]["format"]["files_created"], 100);
    let doc = fs_run(
        dir.path(),
        &anchor,
        &[
            "--files", "3", "--width", "3", "--ops", "stat", "--time", "1s",
        ],
    );
    assert_eq!(doc["summary"]["format"]["files_removed"], 100);
    assert_eq!(doc["summary"]["format"]["files_created"], 9);
    assert_eq!(data_files(&anchor).len(), 9);
    let (_, dirs) = walk(&anchor);
    assert_eq!(
        dirs.len(),
        3,
        "the old shape's d0, d1 went, d0..d2 came: {dirs:?}"
    );
    // cleanup removes the tree and its marker, and leaves the anchor.
    fs_run(
        dir.path(),
        &anchor,
        &[
            "--files",
            "3",
            "--width",
            "3",
            "--ops",
            "stat",
            "--time",
            "1s",
            "--cleanup",
        ],
    );
    assert_eq!(walk(&anchor), (vec![], vec![]));
}

#[test]
fn the_built_in_file_system_plans_run_on_a_directory_target() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let db = dir.path().join("r.db");
    let plan = |name: &str, extra: &[&str]| {
        let mut args = vec![
            "plan",
            "run",
            "--builtin",
            name,
            "--target",
            anchor.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
            "--step-time",
            "1s",
            "--quiet",
        ];
        args.extend_from_slice(extra);
        ok(&args, dir.path())
    };
    let show = |id: &str| -> Value {
        serde_json::from_str(&ok(
            &["runs", "show", id, "--db", db.to_str().unwrap(), "--json"],
            dir.path(),
        ))
        .unwrap()
    };
    plan("fs-metadata", &["--files", "50"]);
    let run = show("1");
    let steps = run["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 12);
    for s in steps {
        // "create threads=2": the block's name, then the swept value.
        let label = s["name"].as_str().unwrap();
        let name = label.split(' ').next().unwrap();
        let fs = &s["summary"]["fs_ops"];
        assert_eq!(s["status"], "ok", "{name}");
        assert!(fs[name]["ops"].as_u64().unwrap() > 0, "{name}: {fs}");
        // The total counts the operations of the mix: a create's close
        // rides along.
        assert_eq!(s["summary"]["total"]["ops"], fs[name]["ops"], "{name}");
        // A create or delete step ends once every slot is done, unless
        // --step-time's 1 s ends it first (a loaded machine); it never does
        // a slot twice.
        if name != "stat" {
            let n = fs[name]["ops"].as_u64().unwrap();
            let took_s = s["summary"]["duration_s"].as_f64().unwrap();
            assert!(
                n == 8 * 50 || (n < 8 * 50 && took_s >= 0.9),
                "{name}: {n} of 400 slots in {took_s} s"
            );
        }
    }
    plan("fs-smallfile", &["--files", "20"]);
    let run = show("2");
    let steps = run["steps"].as_array().unwrap();
    // Every slot created once, each with its data, unless --step-time's
    // 1 s ends the step first (a loaded CI once stopped it at 316 of 320).
    let created = steps[0]["summary"]["fs_ops"]["create"]["ops"]
        .as_u64()
        .unwrap();
    let took_s = steps[0]["summary"]["duration_s"].as_f64().unwrap();
    assert!(
        created == 16 * 20 || (created < 16 * 20 && took_s >= 0.9),
        "{created} of 320 files in {took_s} s"
    );
    assert!(
        steps[0]["summary"]["fs_ops"]["write"]["ops"]
            .as_u64()
            .unwrap()
            >= created
    );
    assert!(
        steps[1]["summary"]["fs_ops"]["read"]["ops"]
            .as_u64()
            .unwrap()
            > 0
    );
    plan("fs-stream", &["--file-size", "4m"]);
    let run = show("3");
    let steps = run["steps"].as_array().unwrap();
    for (s, op) in steps.iter().zip(["write", "read"]) {
        let fs = &s["summary"]["fs_ops"];
        assert!(fs[op]["ops"].as_u64().unwrap() > 0, "{op}: {fs}");
        assert_eq!(
            fs[op]["bytes"].as_u64().unwrap() % (1 << 20),
            0,
            "1m transfers"
        );
    }
    assert_eq!(steps[0]["summary"]["format"]["files_created"], 4);
}

#[test]
fn an_operations_rate_holds_and_a_slow_operation_makes_the_late_ones_late() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    // One worker at 1000 stats/s for 3 s; its 501st operation stalls
    // 200 ms. The 200 operations due in the stall go late, by up to 200 ms:
    // about 1/15 of all, so p99 lies well inside the stall.
    let doc = fs_run(
        dir.path(),
        &anchor,
        &[
            "--files",
            "20",
            "--ops",
            "stat",
            "--rate",
            "1000",
            "--time",
            "3s",
            "--fault",
            "stall:after=500:ms=200",
        ],
    );
    let s = &doc["summary"]["fs_ops"]["stat"];
    let n = s["ops"].as_u64().unwrap();
    // Never ahead of the schedule (3000 due in 3 s); a loaded machine may
    // leave some due at the end undone.
    assert!((1500..=3001).contains(&n), "{n} stats at 1000/s for 3 s");
    let ms = |v: &Value| v.as_u64().unwrap() as f64 / 1e6;
    assert!(ms(&s["lat_ns"]["max"]) >= 195.0, "{s}");
    assert!(
        ms(&s["lat_ns"]["p99"]) >= 100.0,
        "counted from the schedule: {s}"
    );
    assert!(
        ms(&s["service_lat_ns"]["p99"]) < ms(&s["lat_ns"]["p99"]) / 2.0,
        "each stat itself is fast; the wait for the stall is not its own: {s}"
    );
    // Only stall rules apply to a tree.
    let out = run(
        &[
            "run",
            "--anchor",
            anchor.to_str().unwrap(),
            "--no-db",
            "--files",
            "20",
            "--fault",
            "eio:after=5",
        ],
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn ctrl_c_during_the_format_is_stored_as_interrupted_and_restart_completes_the_tree() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let db = dir.path().join("r.db");
    let shape = [
        "--width",
        "4",
        "--files",
        "1000",
        "--file-size",
        "32k",
        "--threads",
        "1",
    ];
    let mut args = vec![
        "run",
        "--anchor",
        anchor.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
        "--ops",
        "stat",
        "--time",
        "1s",
        "--quiet",
        "--buffered",
    ];
    args.extend_from_slice(&shape);
    let child = common::iorig()
        .args(&args)
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupt once the format has made some of its 4 000 files.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while data_files(&anchor).len() < 200 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    common::signal(&child, 2);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    let made = data_files(&anchor).len();
    assert!(made < 4000, "stopped before the end: {made}");
    assert!(anchor.join(".iorig-tree").exists());
    let show: Value = serde_json::from_str(&ok(
        &["runs", "show", "1", "--db", db.to_str().unwrap(), "--json"],
        dir.path(),
    ))
    .unwrap();
    assert_eq!(show["steps"][0]["status"], "interrupted", "{show}");
    assert_eq!(show["steps"][0]["summary"]["format"]["interrupted"], true);

    // The next run completes the tree: what is there is kept, the rest
    // made, a file cut short made again.
    let mut again = vec!["--ops", "stat", "--time", "1s"];
    again.extend_from_slice(&shape);
    let doc = fs_run(dir.path(), &anchor, &again);
    let f = &doc["summary"]["format"];
    let kept = f["files_kept"].as_u64().unwrap();
    let created = f["files_created"].as_u64().unwrap();
    assert!(kept >= 199 && kept + created == 4000, "{f}");
    let files = data_files(&anchor);
    assert_eq!(files.len(), 4000);
    for p in &files {
        assert_eq!(std::fs::metadata(anchor.join(p)).unwrap().len(), 32 << 10);
    }
}

#[test]
fn verify_on_a_tree_checks_every_read_and_finds_a_corrupted_file_block() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let shape = [
        "--depth",
        "1",
        "--width",
        "1",
        "--files",
        "4",
        "--file-size",
        "64k",
        "--format",
        "yes",
        "--verify",
    ];
    // Clean: the format writes stamped files, reads and overwrites check
    // them (each overwrite reads first), and nothing is wrong.
    let mut args: Vec<&str> = shape.to_vec();
    args.extend(["--ops", "read:50,write:50", "--time", "1s"]);
    let doc = fs_run(dir.path(), &anchor, &args);
    let v = &doc["summary"]["validation"];
    assert_eq!(v["errors"], 0, "{v}");
    assert!(v["units_checked"].as_u64().unwrap() > 100, "{v}");
    assert!(v["pre_reads"].as_u64().unwrap() > 0, "{v}");

    // A byte of one file changed after the format, before the reads.
    let pause = dir.path().join("pause");
    std::fs::create_dir(&pause).unwrap();
    let out_json = dir.path().join("bad.json");
    let mut args = vec![
        "run",
        "--anchor",
        anchor.to_str().unwrap(),
        "--no-db",
        "--quiet",
        "--buffered",
        "--json",
        out_json.to_str().unwrap(),
        "--ops",
        "read",
        "--fileselect",
        "sequential",
        "--time",
        "2s",
    ];
    args.extend_from_slice(&shape);
    let child = common::iorig()
        .args(&args)
        .env("IORIG_TEST_PAUSE_DIR", &pause)
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !pause.join("formatted.ready").exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let victim = anchor.join("d0").join("f2");
    let mut data = std::fs::read(&victim).unwrap();
    data[8192 + 1000] ^= 0x55;
    std::fs::write(&victim, &data).unwrap();
    std::fs::write(pause.join("formatted.go"), b"").unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let doc = json(&out_json);
    let v = &doc["summary"]["validation"];
    assert!(v["errors"].as_u64().unwrap() >= 1, "{v}");
    let first = &v["error_list"][0];
    assert!(
        first["target"].as_str().unwrap().ends_with("d0/f2"),
        "{first}"
    );
    assert_eq!(first["offset_bytes"], 8192, "{first}");
    assert_eq!(first["kind"], "corrupted", "{first}");
}

#[test]
fn a_journaled_tree_killed_mid_run_verifies_clean_and_a_damaged_block_is_found() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let journal = dir.path().join("tree.jnl");
    let child = common::iorig()
        .args([
            "run",
            "--anchor",
            anchor.to_str().unwrap(),
            "--width",
            "2",
            "--files",
            "10",
            "--file-size",
            "64k",
            "--ops",
            "write",
            "--fileio",
            "random",
            "--format",
            "yes",
            "--threads",
            "2",
            "--journal",
            journal.to_str().unwrap(),
            "--time",
            "60s",
            "--no-db",
            "--quiet",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The format journals 20 files' writes; wait for the workload's too.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while std::fs::metadata(&journal).map_or(0, |m| m.len()) < 256 << 10
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    common::signal(&child, 9);
    let _ = child.wait_with_output();

    let scan = |expect: i32| -> Value {
        let out = dir.path().join("v.json");
        let res = run(
            &[
                "verify",
                "--journal",
                journal.to_str().unwrap(),
                "--json",
                out.to_str().unwrap(),
            ],
            dir.path(),
        );
        assert_eq!(
            res.status.code(),
            Some(expect),
            "{}",
            String::from_utf8_lossy(&res.stderr)
        );
        json(&out)
    };
    let clean = scan(0);
    assert_eq!(clean["errors"], 0, "{clean}");
    assert!(
        clean["written_units"].as_u64().unwrap() >= 20 * 16,
        "{clean}"
    );

    let victim = anchor.join("d1").join("f3");
    let mut data = std::fs::read(&victim).unwrap();
    data[3 * 4096 + 200] ^= 0xff;
    std::fs::write(&victim, &data).unwrap();
    let bad = scan(3);
    let first = &bad["error_list"][0];
    assert!(
        first["target"].as_str().unwrap().ends_with("d1/f3"),
        "{first}"
    );
    assert_eq!(first["offset_bytes"], 3 * 4096, "{first}");
    assert_eq!(first["kind"], "corrupted", "{first}");
}

#[test]
fn the_interval_table_has_a_row_per_kind_of_operation() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let out = ok(
        &[
            "run",
            "--anchor",
            anchor.to_str().unwrap(),
            "--no-db",
            "--buffered",
            "--files",
            "8",
            "--ops",
            "stat:50,read:50",
            "--time",
            "2s",
            "--interval",
            "1s",
        ],
        dir.path(),
    );
    for kind in ["stat", "read", "open", "close"] {
        // Under each interval and under the average line, then in the summary.
        let rows = out
            .lines()
            .filter(|l| l.split_whitespace().next() == Some(kind))
            .count();
        assert!(rows >= 3, "{kind}: {rows} rows in\n{out}");
        assert!(
            out.lines()
                .any(|l| l.trim_start().starts_with(kind) && l.contains("ops/s")),
            "{kind} in the summary"
        );
    }
}

#[test]
fn an_interrupted_file_system_plan_resumes_to_its_end() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let db = dir.path().join("r.db");
    let child = common::iorig()
        .args([
            "plan",
            "run",
            "--builtin",
            "fs-metadata",
            "--target",
            anchor.to_str().unwrap(),
            "--files",
            "20",
            "--step-time",
            "2s",
            "--db",
            db.to_str().unwrap(),
            "--quiet",
        ])
        .current_dir(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted inside the stat steps (the creates end at once).
    common::wait_for_step(&db, 1, "stat", 60);
    common::signal(&child, 2);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ok(
        &[
            "plan",
            "resume",
            "1",
            "--db",
            db.to_str().unwrap(),
            "--quiet",
        ],
        dir.path(),
    );
    let show: Value = serde_json::from_str(&ok(
        &["runs", "show", "1", "--db", db.to_str().unwrap(), "--json"],
        dir.path(),
    ))
    .unwrap();
    let steps = show["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 12);
    for s in steps {
        assert_eq!(s["status"], "ok", "{}", s["name"]);
    }
    // The deletes at the end found every file the stat steps left.
    assert_eq!(steps[11]["summary"]["fs_ops"]["delete"]["ops"], 8 * 20);
}

/// A small tmpfs with few inodes, mounted for one test and unmounted on drop.
struct SmallFs {
    dir: tempfile::TempDir,
}

impl SmallFs {
    fn new(inodes: u32) -> SmallFs {
        assert!(
            common::is_root(),
            "this test needs root (run it with --ignored as root)"
        );
        let dir = tmp();
        let st = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size=16m,nr_inodes={inodes}"),
                "tmpfs",
            ])
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(st.success(), "mount tmpfs");
        SmallFs { dir }
    }
}

impl Drop for SmallFs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

#[test]
#[ignore = "needs root: mounts a small tmpfs"]
fn a_tree_over_the_free_inodes_is_refused_before_the_first_create() {
    let fs = SmallFs::new(100);
    let anchor = fs.dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let out = run(
        &[
            "run",
            "--anchor",
            anchor.to_str().unwrap(),
            "--no-db",
            "--files",
            "50",
            "--width",
            "4",
            "--file-size",
            "4k",
        ],
        fs.dir.path(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("inodes"), "{err}");
    assert_eq!(walk(&anchor), (vec![], vec![]), "nothing was made");
    // A tree that fits is made.
    let doc = fs_run(
        fs.dir.path(),
        &anchor,
        &[
            "--files",
            "10",
            "--width",
            "4",
            "--file-size",
            "4k",
            "--ops",
            "stat",
            "--time",
            "1s",
        ],
    );
    assert_eq!(doc["summary"]["format"]["files_created"], 40);
}

/// Runs `args` on `anchor` and asserts exit 2 with one line containing
/// `want`.
fn refused_on(dir: &Path, anchor: &Path, args: &[&str], want: &str) {
    let mut all = vec![
        "run",
        "--anchor",
        anchor.to_str().unwrap(),
        "--no-db",
        "--buffered",
        "--time",
        "1s",
    ];
    all.extend_from_slice(args);
    let out = run(&all, dir);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(err.contains(want), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
}

#[test]
fn links_planted_in_a_tree_are_refused_and_what_they_point_to_is_untouched() {
    use std::os::unix::fs::symlink;
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let shape = [
        "--depth",
        "2",
        "--width",
        "2",
        "--files",
        "4",
        "--file-size",
        "4k",
    ];
    let with = |ops: &[&'static str]| -> Vec<&'static str> {
        let mut v: Vec<&str> = shape.to_vec();
        v.extend_from_slice(ops);
        v
    };
    fs_run(
        dir.path(),
        &anchor,
        &with(&["--ops", "stat", "--time", "1s"]),
    );
    assert_eq!(data_files(&anchor).len(), 16);

    // Outside the anchor: a file and a directory of files named as slots.
    let victim = dir.path().join("victim");
    std::fs::write(&victim, b"precious").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    for f in ["f0", "f1", "f2", "f3"] {
        std::fs::write(elsewhere.join(f), b"precious").unwrap();
    }
    let untouched = || {
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        let mode = std::fs::metadata(&victim).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        for f in ["f0", "f1", "f2", "f3"] {
            assert_eq!(std::fs::read(elsewhere.join(f)).unwrap(), b"precious");
        }
    };

    // A file slot that is a link: every format mode and operation refuses
    // before touching it (restart would otherwise rewrite a file of the
    // wrong size, setattr chmod it, write write into it).
    let slot = anchor.join("d0/d1/f1");
    std::fs::remove_file(&slot).unwrap();
    symlink(&victim, &slot).unwrap();
    let refuse_all = |list: &[&[&'static str]], want: &str| {
        for ops in list {
            refused_on(dir.path(), &anchor, &with(ops), want);
            untouched();
        }
    };
    refuse_all(
        &[
            &["--ops", "setattr"],
            &["--ops", "write"],
            &["--ops", "stat", "--format", "yes"],
            &["--ops", "stat", "--format", "no"],
            &["--ops", "stat", "--cleanup"],
        ],
        "is a symbolic link",
    );
    std::fs::remove_file(&slot).unwrap();

    // A leaf directory that is a link to a directory of slot names: not
    // followed for deletes, formats or cleanup.
    let leaf = anchor.join("d1/d0");
    std::fs::remove_dir_all(&leaf).unwrap();
    symlink(&elsewhere, &leaf).unwrap();
    refuse_all(
        &[
            &["--ops", "delete", "--format", "yes"],
            &["--ops", "delete"],
            &["--ops", "stat", "--cleanup"],
        ],
        "symbolic link",
    );
    std::fs::remove_file(&leaf).unwrap();

    // A top-level directory or the marker as a link is refused at the plan.
    let top = anchor.join("d1");
    std::fs::remove_dir_all(&top).unwrap();
    symlink(&elsewhere, &top).unwrap();
    refused_on(
        dir.path(),
        &anchor,
        &with(&["--ops", "stat"]),
        "holds d1, which is a symbolic link",
    );
    untouched();
    std::fs::remove_file(&top).unwrap();
    let marker = anchor.join(".iorig-tree");
    let copy = dir.path().join("marker-copy");
    std::fs::rename(&marker, &copy).unwrap();
    symlink(&copy, &marker).unwrap();
    refused_on(
        dir.path(),
        &anchor,
        &with(&["--ops", "stat"]),
        "not a plain file",
    );
    std::fs::remove_file(&marker).unwrap();
    std::fs::rename(&copy, &marker).unwrap();

    // With the links gone, restart completes the tree again.
    let doc = fs_run(
        dir.path(),
        &anchor,
        &with(&["--ops", "stat", "--time", "1s"]),
    );
    assert_eq!(data_files(&anchor).len(), 16, "{doc}");
    untouched();
}

#[test]
fn a_tree_in_use_by_another_run_is_refused() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let mut first = common::spawn_quiet(
        &[
            "run",
            "--anchor",
            anchor.to_str().unwrap(),
            "--no-db",
            "--quiet",
            "--buffered",
            "--files",
            "8",
            "--ops",
            "stat",
            "--time",
            "20s",
        ],
        dir.path(),
    );
    // The first run holds the tree once its format is done.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while data_files(&anchor).len() < 32 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(data_files(&anchor).len(), 32);
    refused_on(
        dir.path(),
        &anchor,
        &["--files", "8", "--ops", "stat"],
        "another iorig run is using the tree",
    );
    assert!(first.try_wait().unwrap().is_none(), "the first run goes on");
}

#[test]
fn plan_tree_flags_without_a_directory_target_are_refused() {
    let dir = tmp();
    let file = dir.path().join("plain");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let missing = dir.path().join("missing");
    for target in [&file, &missing] {
        let out = run(
            &[
                "plan",
                "run",
                "--builtin",
                "fs-metadata",
                "--target",
                target.to_str().unwrap(),
                "--files",
                "10",
                "--no-db",
            ],
            dir.path(),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--files and --file-size"), "{err}");
    }
    assert_eq!(std::fs::read(&file).unwrap().len(), 1 << 20);
    assert!(!missing.exists());
}

/// Two trees as two jobs of one step (vdbench's fwds over two fsds): each
/// tree is made before either job starts, each job works its own tree
/// with its own operations, the step's format phase adds both trees up,
/// and two jobs in one tree are refused (each tree's workers own its
/// files one at a time), writing nothing.
#[test]
fn two_trees_run_side_by_side_as_jobs_of_one_step() {
    let dir = tmp();
    let d = dir.path();
    for t in ["a", "b"] {
        std::fs::create_dir(d.join(t)).unwrap();
    }
    let plan = |b: &str| {
        format!(
            "name = 'two'\n[defaults]\ntime = '1s'\nbuffered = true\n[[steps]]\nname = 'both'\n\
             [[steps.jobs]]\nname = 'ja'\nanchor = '{a}'\ndepth = 1\nwidth = 2\nfiles = 4\nfile_size = '16k'\nops = 'read'\nbs = '4k'\n\
             [[steps.jobs]]\nname = 'jb'\nanchor = '{b}'\ndepth = 1\nwidth = 2\nfiles = 2\nfile_size = '8k'\nops = 'create:50,delete:50'\n",
            a = d.join("a").display(),
            b = d.join(b).display(),
        )
    };
    std::fs::write(d.join("two.toml"), plan("b")).unwrap();
    ok(&["plan", "run", "two.toml", "--db", "r.db", "--quiet"], d);
    let show: Value =
        serde_json::from_str(&ok(&["runs", "show", "1", "--db", "r.db", "--json"], d)).unwrap();
    let step = &show["steps"][0];
    let jobs = step["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["name"], "ja");
    assert!(ops(&jobs[0], "read") > 0, "{}", jobs[0]);
    assert_eq!(ops(&jobs[0], "create"), 0);
    assert!(
        ops(&jobs[1], "create") + ops(&jobs[1], "delete") > 0,
        "{}",
        jobs[1]
    );
    assert_eq!(ops(&jobs[1], "read"), 0);
    // 2 × 4 files in a, 2 × 2 in b, made before the jobs ran.
    assert_eq!(
        step["summary"]["format"]["files_created"], 12,
        "{}",
        step["summary"]["format"]
    );
    assert_eq!(data_files(&d.join("a")).len(), 8);
    // One tree for two jobs: refused before anything is written.
    std::fs::write(
        d.join("same.toml"),
        plan("a").replace("ops = 'create:50,delete:50'", "ops = 'read'"),
    )
    .unwrap();
    let out = run(&["plan", "run", "same.toml", "--db", "s.db"], d);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("is another job's too"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!d.join("s.db").exists());
}

/// Reads and writes of one tree at sizes of their own (`read_bs`,
/// `write_bs`): every read moves 4 KiB, every write 64 KiB.
#[test]
fn reads_and_writes_of_a_tree_take_their_own_sizes() {
    let dir = tmp();
    let anchor = dir.path().join("t");
    std::fs::create_dir(&anchor).unwrap();
    let doc = fs_run(
        dir.path(),
        &anchor,
        &[
            "--depth",
            "1",
            "--width",
            "2",
            "--files",
            "4",
            "--file-size",
            "256k",
            "--ops",
            "read:50,write:50",
            "--fileio",
            "sequential",
            "--stopafter",
            "4",
            "--read-bs",
            "4k",
            "--write-bs",
            "64k",
            "--time",
            "1s",
        ],
    );
    let per_op = |op: &str| {
        let o = &doc["summary"]["fs_ops"][op];
        o["bytes"].as_u64().unwrap() / o["ops"].as_u64().unwrap().max(1)
    };
    assert!(ops(&doc, "read") > 0 && ops(&doc, "write") > 0, "{doc}");
    assert_eq!(per_op("read"), 4096);
    assert_eq!(per_op("write"), 65536);
}
