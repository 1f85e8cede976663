//! What this protects: vdbench parameter files run as they are. The
//! parameter files in `tests/vdbench/run` (modelled on the vdbench guide's
//! raw and file-system examples and on HCIBench's generated files) run and
//! show their parameters' effect in the stored run (rate, skew shares, loops,
//! the curve, the tree's operations); `--vdbench-out` writes vdbench's
//! flatfile and summary; every file in `tests/vdbench/refused` is refused
//! with exit 2, its file, line and parameter, and nothing written.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::{iorig, tmp};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vdbench")
        .join(name)
}

/// Runs a corpus parameter file with `$dir` = a fresh directory; gives the
/// directory and the stored run (`runs show --json`).
fn run_parm(name: &str, extra: &[&str]) -> (tempfile::TempDir, Value) {
    let dir = tmp();
    let db = dir.path().join("t.db");
    let out = iorig()
        .arg("run")
        .arg(corpus(&format!("run/{name}")))
        .args([
            "--set",
            &format!("dir={}", dir.path().display()),
            "-q",
            "--db",
        ])
        .arg(&db)
        .args(extra)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let show = common::ok(
        &["runs", "show", "1", "--json", "--db", db.to_str().unwrap()],
        dir.path(),
    );
    (dir, serde_json::from_str(&show).unwrap())
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn steps(run: &Value) -> &Vec<Value> {
    run["steps"].as_array().unwrap()
}

#[test]
fn the_guides_raw_example_runs_at_its_rate() {
    let (_d, run) = run_parm("example1.parm", &[]);
    let s = &steps(&run)[0];
    assert_eq!(s["name"], "run1");
    // vdbench's default arrivals are exponential: 300 arrivals in 3 s, a
    // count with sd sqrt(300); 5 sd of it as IOPS.
    assert_eq!(s["arrivals"], "poisson", "{s}");
    assert_eq!(f(&s["rate_iops"]), 100.0, "{s}");
    // At most 5 sd above the 300 arrivals (a loaded machine may fall behind
    // the schedule, never ahead of it).
    let ops = f(&s["summary"]["total"]["ops"]);
    assert!(ops > 0.0 && ops < 300.0 + 5.0 * 300f64.sqrt(), "ops {ops}");
    assert_eq!(f(&s["summary"]["write"]["iops"]), 0.0);
    assert_eq!(s["bs"], "4k");
    assert_eq!(
        run["run"]["labels"]["source"]
            .as_str()
            .map(|l| l.starts_with("vdbench:")),
        Some(true)
    );
}

#[test]
fn workloads_of_a_run_share_its_rate_by_skew() {
    let (_d, run) = run_parm("skew.parm", &[]);
    let s = &steps(&run)[0];
    let jobs = s["jobs"].as_array().unwrap();
    // Each job's own schedule: 40 % and 60 % of 200; evenly spaced, so
    // neither can run ahead of 3 s of it (plus its first I/O at 0).
    let rates: Vec<f64> = jobs
        .iter()
        .map(|j| f(&j["workload"]["rate_iops"]))
        .collect();
    assert_eq!(rates, [80.0, 120.0]);
    for (j, rate) in jobs.iter().zip(rates) {
        let ops = f(&j["summary"]["total"]["ops"]);
        assert!(
            ops > 0.0 && ops <= 3.0 * rate + 1.0,
            "{ops} I/Os at {rate}/s"
        );
    }
    // wd1 reads, wd2 writes, at once.
    assert_eq!(f(&jobs[0]["summary"]["write"]["iops"]), 0.0);
    assert_eq!(f(&jobs[1]["summary"]["read"]["iops"]), 0.0);
}

#[test]
fn loops_make_a_run_each_and_a_curve_its_points() {
    let (_d, run) = run_parm("loops.parm", &[]);
    let names: Vec<&str> = steps(&run)
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 4, "{names:?}");
    let bs: Vec<&str> = steps(&run)
        .iter()
        .map(|s| s["bs"].as_str().unwrap())
        .collect();
    assert_eq!(bs, ["4k", "4k", "16k", "16k"]);
    let reads: Vec<f64> = steps(&run).iter().map(|s| f(&s["read_pct"])).collect();
    assert_eq!(reads, [0.0, 100.0, 0.0, 100.0]);
    let (_d, run) = run_parm("curve.parm", &[]);
    assert_eq!(steps(&run).len(), 7);
    let rates: Vec<Option<f64>> = steps(&run)
        .iter()
        .map(|s| s["rate_iops"].as_f64())
        .collect();
    assert_eq!(rates[0], None, "the first curve step runs at max");
    let max = f(&steps(&run)[0]["summary"]["total"]["iops"]);
    let r10 = rates[1].unwrap();
    assert!(
        (r10 - (max * 0.1).round()).abs() <= 1.0,
        "10 % of {max}: {r10}"
    );
}

#[test]
fn hcibenchs_files_and_the_vdbench_output_files() {
    let dir = tmp();
    let out_dir = dir.path().join("vdb");
    let (_d, run) = run_parm(
        "hcibench.parm",
        &["--vdbench-out", out_dir.to_str().unwrap()],
    );
    let s = &steps(&run)[0];
    assert_eq!(s["direct"], true);
    assert_eq!(s["threads"], 2);
    let flat = std::fs::read_to_string(out_dir.join("flatfile.html")).unwrap();
    let mut lines = flat.lines().filter(|l| !l.starts_with('*'));
    let header: Vec<&str> = lines.next().unwrap().split(' ').collect();
    for col in [
        "Run",
        "Interval",
        "reqrate",
        "rate",
        "MB/sec",
        "bytes/io",
        "read%",
        "resp",
        "read_resp",
        "write_resp",
        "resp_max",
        "resp_std",
        "queue_depth",
    ] {
        assert!(header.contains(&col), "flatfile lacks {col}: {header:?}");
    }
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(' ').collect()).collect();
    // Two measured intervals (the warmup's is left out).
    assert_eq!(rows.len(), 2, "{flat}");
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    assert_eq!(rows[0][col("Run")], "run1");
    assert_eq!(rows[0][col("bytes/io")], "4096");
    let read: f64 = rows[0][col("read%")].parse().unwrap();
    assert!((read - 70.0).abs() < 10.0, "read% {read}");
    let summary = std::fs::read_to_string(out_dir.join("summary.html")).unwrap();
    assert!(summary.contains("avg_2-3"), "{summary}");
    // The average row's queue depth is the average of the rows' (one
    // definition: the device's when sampled, else Little's law), within
    // the one decimal the summary shows.
    let depth = |interval: &str| -> f64 {
        let line = summary
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(interval))
            .unwrap_or_else(|| panic!("no row {interval}: {summary}"));
        let f: Vec<&str> = line.split_whitespace().collect();
        f[f.len() - 3].parse().unwrap()
    };
    let mean = (depth("2") + depth("3")) / 2.0;
    assert!(
        (depth("avg_2-3") - mean).abs() <= 0.051,
        "avg {} vs rows {} {}: {summary}",
        depth("avg_2-3"),
        depth("2"),
        depth("3")
    );
}

#[test]
fn a_file_system_run_works_the_tree() {
    let dir = tmp();
    std::fs::create_dir(dir.path().join("fs")).unwrap();
    let db = dir.path().join("t.db");
    let out = iorig()
        .arg("run")
        .arg(corpus("run/fs.parm"))
        .args([
            "--set",
            &format!("dir={}", dir.path().display()),
            "-q",
            "--db",
        ])
        .arg(&db)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let show = common::ok(
        &["runs", "show", "1", "--json", "--db", db.to_str().unwrap()],
        dir.path(),
    );
    let run: Value = serde_json::from_str(&show).unwrap();
    let s = &steps(&run)[0];
    // fwdrate=100: the step's schedule, which its reads never run ahead of.
    assert_eq!(f(&s["rate_iops"]), 100.0, "{s}");
    let reads = f(&s["summary"]["fs_ops"]["read"]["ops"]);
    let secs = f(&s["summary"]["duration_s"]);
    assert!(
        reads > 0.0 && reads <= 100.0 * secs + 2.0,
        "{reads} reads in {secs} s: {s}"
    );
    // 2 × 2 leaf directories of 2 files each.
    let files = walk(&dir.path().join("fs"));
    assert_eq!(files, 8, "files in the tree");
}

fn walk(p: &Path) -> usize {
    std::fs::read_dir(p)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            let t = e.file_type().unwrap();
            if t.is_dir() {
                walk(&e.path())
            } else if e.file_name().to_string_lossy().starts_with('.') {
                0
            } else {
                1
            }
        })
        .sum()
}

#[test]
fn refused_parameter_files_name_file_line_and_parameter() {
    let dir = tmp();
    let mut files: Vec<_> = std::fs::read_dir(corpus("refused"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 4);
    for p in files {
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let out = iorig()
            .arg("run")
            .arg(format!("tests/vdbench/refused/{name}"))
            .args([
                "--set",
                "dir=/nonexistent",
                "--db",
                dir.path().join("t.db").to_str().unwrap(),
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
        insta::assert_snapshot!(
            format!("vdbench_refused_{}", name.trim_end_matches(".parm")),
            err
        );
        assert!(
            common::names(dir.path()).is_empty(),
            "{name} wrote something"
        );
    }
    // import prints the plan; --set is vdbench's only.
    let out = iorig()
        .arg("import")
        .arg(corpus("run/skew.parm"))
        .args(["--set", "dir=/data"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let plan = String::from_utf8(out.stdout).unwrap();
    assert!(
        plan.contains("[[steps.jobs]]") && plan.contains("/data/disk2"),
        "{plan}"
    );
}

#[test]
fn a_journal_carries_validation_across_runs_and_verifies_after() {
    let dir = tmp();
    let d = dir.path();
    let parm = d.join("j.parm");
    std::fs::copy(corpus("run/journal.parm"), &parm).unwrap();
    let out = iorig()
        .args(["run", "j.parm", "--set"])
        .arg(format!("dir={}", d.display()))
        .args(["--db", "t.db"])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // journal=yes without --journal: beside the parameter file.
    assert!(err.contains("journal: j.parm.jnl"), "{err}");
    assert!(d.join("j.parm.jnl").exists());
    let show = common::ok(&["runs", "show", "1", "--json", "--db", "t.db"], d);
    let run: Value = serde_json::from_str(&show).unwrap();
    // The second run found the first run's blocks through the journal.
    let v = &steps(&run)[1]["summary"]["validation"];
    assert!(v["blocks_checked"].as_u64().unwrap_or(0) > 0, "{v}");
    assert!(v["journal_ns"].as_u64().is_some(), "{v}");
    assert_eq!(v["errors"], 0, "{v}");
    let checked = common::ok(&["verify", "--journal", "j.parm.jnl"], d);
    assert!(checked.contains("0 error"), "{checked}");
    // An sd's journal=DIR holds the journal instead (its path in its own
    // case, as vdbench reads paths).
    let text = std::fs::read_to_string(&parm).unwrap();
    let text = text.replace("size=8m", "size=8m,journal=$dir/JD");
    std::fs::write(d.join("k.parm"), text).unwrap();
    std::fs::create_dir(d.join("JD")).unwrap();
    let out = iorig()
        .args(["run", "k.parm", "--set"])
        .arg(format!("dir={}", d.display()))
        .args(["--db", "t.db", "-q"])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(d.join("JD/k.parm.jnl").exists(), "{err}");
    assert!(!d.join("k.parm.jnl").exists());
    // --journal (vdbench's -j) names the journal and turns validation on,
    // for a file that asks for neither.
    let out = iorig()
        .arg("run")
        .arg(corpus("run/example1.parm"))
        .args(["--set"])
        .arg(format!("dir={}", d.display()))
        .args(["--journal", "x.jnl", "--db", "t.db", "-q"])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(d.join("x.jnl").exists());
    // One journal keeps one unit, the first validating step's: a later step
    // whose blocks are not whole units is refused before anything runs (a
    // 4k step after a 64k one; 64k after 4k is 16 units an I/O and runs).
    std::fs::write(
        d.join("units.toml"),
        "targets = [\"u.dat\"]\nsize = \"4m\"\n[defaults]\nverify = true\ntime = \"1s\"\n[[steps]]\nbs = \"64k\"\n[[steps]]\nbs = \"4k\"\n",
    )
    .unwrap();
    let out = iorig()
        .args([
            "plan",
            "run",
            "units.toml",
            "--journal",
            "u.jnl",
            "--db",
            "u.db",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("an earlier step made the journal's unit 65536 bytes")
            && err.contains("block size 4096 bytes is not a multiple of 65536"),
        "{err}"
    );
    assert!(!d.join("u.jnl").exists() && !d.join("u.dat").exists());
}
