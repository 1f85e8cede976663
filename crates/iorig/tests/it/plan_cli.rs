//! Protects plans and the result store end to end, with the real binary:
//! runs are recorded (histograms reload and merge to the live run's
//! percentiles), `runs list/show/label/delete` give the documented JSON, plans
//! expand and estimate before running, curve rates follow the measured max,
//! `kill -9` of a plan loses only the step in flight and `plan resume`
//! finishes it with an intact database, `iorig quick` prints its five figures,
//! and the generator-bound warning fires on an oversubscribed host but not on
//! a device-bound run.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use iorig_store::{HistKind, Op, RunId, Store};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn iorig() -> Command {
    // Never the caller's result store.
    let mut c = Command::new(env!("CARGO_BIN_EXE_iorig"));
    c.env_remove("IORIG_DB");
    c
}

fn tmp() -> tempfile::TempDir {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

fn run(args: &[&str], dir: &Path) -> Output {
    iorig()
        .args(args)
        .current_dir(dir)
        .env_remove("IORIG_DB")
        .output()
        .unwrap()
}

fn ok(args: &[&str], dir: &Path) -> String {
    let out = run(args, dir);
    assert!(
        out.status.success(),
        "iorig {args:?}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(args: &[&str], dir: &Path) -> Value {
    serde_json::from_str(&ok(args, dir)).expect("JSON on stdout")
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn a_run_is_recorded_and_its_histograms_reload_to_the_same_percentiles() {
    let dir = tmp();
    let doc = json(
        &[
            "run",
            "--size",
            "16m",
            "--engine",
            "psync",
            "--time",
            "1s",
            "--interval",
            "250ms",
            "--label",
            "array=A",
            "--json",
            "-",
            "-q",
        ],
        dir.path(),
    );
    let id: i64 = doc["run"]["id"].as_str().unwrap().parse().unwrap();
    let store = Store::open(&dir.path().join("iorig.db")).unwrap();
    let steps = store.steps(RunId(id)).unwrap();
    assert_eq!(steps.len(), 1);
    let h = store
        .histogram(steps[0].id, Op::Total, HistKind::Lat)
        .unwrap()
        .expect("total histogram stored");
    let live = &doc["summary"]["total"]["lat_ns"];
    let stored = h.summary();
    assert_eq!(h.count(), doc["summary"]["total"]["ops"].as_u64().unwrap());
    for (k, v) in [
        ("p50", stored.p50),
        ("p99", stored.p99),
        ("max", stored.max),
        ("min", stored.min),
    ] {
        assert_eq!(live[k].as_u64().unwrap(), v, "{k}");
    }
    // Merging the step's read and write histograms gives the total again.
    let mut merged = store
        .histogram(steps[0].id, Op::Read, HistKind::Lat)
        .unwrap()
        .unwrap();
    merged.merge(
        &store
            .histogram(steps[0].id, Op::Write, HistKind::Lat)
            .unwrap()
            .unwrap(),
    );
    assert_eq!(merged.summary(), stored);
    // Every interval of the JSON is in the store (read, write, total rows).
    let rows = store.intervals(steps[0].id).unwrap();
    assert_eq!(rows.len(), 3 * doc["intervals"].as_array().unwrap().len());
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let facts = store.system_facts(RunId(id)).unwrap().unwrap();
    assert!(facts.cpu_count.unwrap() >= 1);
}

#[test]
fn runs_list_show_label_delete() {
    let dir = tmp();
    for label in ["fw=1", "fw=2"] {
        ok(
            &[
                "run", "--engine", "null", "--time", "300ms", "--label", label, "-q",
            ],
            dir.path(),
        );
    }
    let list = json(&["runs", "list", "--json"], dir.path());
    let runs = list.as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (r, fw) in runs.iter().zip(["1", "2"]) {
        for key in ["id", "kind", "status", "started", "labels"] {
            assert!(!r[key].is_null(), "{key} in {r}");
        }
        assert_eq!(r["kind"], "run");
        assert_eq!(r["status"], "ok");
        assert_eq!(r["labels"]["fw"], fw, "oldest first");
    }
    let id = runs[0]["id"].as_i64().unwrap().to_string();
    let show = json(&["runs", "show", &id, "--json"], dir.path());
    assert_eq!(show["run"]["status"], "ok");
    let step = &show["steps"][0];
    assert_eq!(step["engine"], "null");
    assert_eq!(step["read_pct"], 100.0);
    assert!(step["summary"]["total"]["iops"].as_f64().unwrap() > 0.0);
    assert!(step["summary"]["total"]["lat_ns"]["p99"].is_u64());
    let text = ok(&["runs", "show", &id], dir.path());
    assert!(text.contains("IOPS") && text.contains("fw=1"), "{text}");

    ok(&["runs", "label", &id, "site=lab", "fw=1b"], dir.path());
    let list = json(&["runs", "list", "--json"], dir.path());
    assert_eq!(list[0]["labels"]["site"], "lab");
    assert_eq!(list[0]["labels"]["fw"], "1b");

    ok(&["runs", "delete", &id], dir.path());
    let list = json(&["runs", "list", "--json"], dir.path());
    assert_eq!(list.as_array().unwrap().len(), 1);
    let out = run(&["runs", "show", &id], dir.path());
    assert_eq!(out.status.code(), Some(2));
    // --db and IORIG_DB choose the store.
    let other = dir.path().join("other.db");
    ok(
        &[
            "run",
            "--engine",
            "null",
            "--time",
            "200ms",
            "-q",
            "--db",
            other.to_str().unwrap(),
        ],
        dir.path(),
    );
    let out = iorig()
        .args(["runs", "list", "--json"])
        .env("IORIG_DB", &other)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 1);
    // --no-db records nothing.
    ok(
        &[
            "run", "--engine", "null", "--time", "200ms", "-q", "--no-db",
        ],
        dir.path(),
    );
    assert_eq!(
        json(&["runs", "list", "--json"], dir.path())
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn dry_run_expands_and_estimates_and_a_long_plan_needs_yes() {
    let dir = tmp();
    let out = ok(
        &["plan", "run", "--builtin", "matrix", "--dry-run"],
        dir.path(),
    );
    assert!(out.contains("132 step(s)"), "{out}");
    assert!(out.contains("estimated 2h 12m"), "{out}");
    assert!(
        !dir.path().join("iorig.db").exists(),
        "a dry run writes nothing"
    );
    assert!(!dir.path().join("iorig-scratch.dat").exists());

    let builtins = ok(&["plan", "builtins"], dir.path());
    for name in [
        "five-params",
        "matrix",
        "curve",
        "qd-cycle",
        "flash-cliff",
        "flash-matrix",
    ] {
        assert!(builtins.contains(name), "{name} in {builtins}");
    }

    let long = write(
        dir.path(),
        "long.toml",
        "[defaults]\nengine = 'null'\ntime = '25h'\n[[steps]]\nread = 100\n",
    );
    let out = run(&["plan", "run", &long], dir.path());
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--yes") && err.lines().count() == 1, "{err}");
    assert!(!dir.path().join("iorig.db").exists());

    let bad = write(
        dir.path(),
        "bad.toml",
        "[[steps]]\nread = [0, 50]\nbogus = 1\n",
    );
    let out = run(&["plan", "run", &bad], dir.path());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bogus"));
    let out = run(&["plan", "run", "--builtin", "nope"], dir.path());
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn curve_rates_follow_the_measured_max_and_the_curve_is_analysed() {
    let dir = tmp();
    let plan = write(
        dir.path(),
        "curve.toml",
        "[defaults]\nengine = 'null'\ntime = '400ms'\ninterval = '100ms'\n\
         [[steps]]\nkind = 'curve'\nqd = 4\nrates_pct = [10, 50]\n",
    );
    ok(&["plan", "run", &plan, "-q"], dir.path());
    let list = json(&["runs", "list", "--json"], dir.path());
    assert_eq!(list[0]["kind"], "plan");
    let id = list[0]["id"].as_i64().unwrap().to_string();
    let show = json(&["runs", "show", &id, "--json"], dir.path());
    let steps = show["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    assert!(steps[0]["rate_iops"].is_null());
    let max = steps[0]["summary"]["total"]["iops"].as_f64().unwrap();
    for (s, pct) in steps[1..].iter().zip([10.0, 50.0]) {
        let rate = s["rate_iops"].as_f64().unwrap();
        assert!(
            (rate - max * pct / 100.0).abs() <= 1.0,
            "rate {rate} for {pct}% of {max}"
        );
        assert_eq!(s["status"], "ok");
    }
    let curve = show["analysis"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "curve")
        .expect("curve analysis stored");
    assert_eq!(curve["result"]["points"].as_array().unwrap().len(), 3);
    assert!(curve["result"]["analysis"]["max_iops"].as_f64().unwrap() > 0.0);

    // `report --steps` draws the steps named, and refuses numbers the run
    // does not have before writing anything.
    for bad in ["4", "0", "2-1", "x"] {
        let out = run(&["report", &id, "--steps", bad, "--out", "bad"], dir.path());
        assert_eq!(out.status.code(), Some(2), "--steps {bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("bad --steps") && err.contains("from 1 to 3"),
            "{err}"
        );
        assert!(!dir.path().join("bad").exists());
    }
    // `runs show` gives the curve's answer again, as the run printed it.
    let shown = ok(&["runs", "show", &id], dir.path());
    assert!(shown.contains("curve 1: max"), "{shown}");
    ok(&["report", &id, "--steps", "2", "--out", "rep"], dir.path());
    let mut timeseries: Vec<String> = std::fs::read_dir(dir.path().join("rep"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with("-timeseries.svg"))
        .collect();
    timeseries.sort();
    // `--steps 2` is step 2: its charts are named so.
    assert_eq!(timeseries, ["step-0002-timeseries.svg"]);
}

fn db_steps(db: &Path, id: i64) -> Vec<iorig_store::StepRow> {
    Store::open(db).unwrap().steps(RunId(id)).unwrap()
}

#[test]
fn kill_9_then_resume_finishes_the_plan() {
    let dir = tmp();
    let plan = write(
        dir.path(),
        "p.toml",
        "[defaults]\nengine = 'null'\ntime = '700ms'\ninterval = '100ms'\n\
         [[steps]]\nqd = [1, 2, 4, 8]\n",
    );
    let db = dir.path().join("iorig.db");
    let mut child = iorig()
        .args(["plan", "run", &plan, "-q"])
        .current_dir(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill once the second step has recorded an interval.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        assert!(Instant::now() < deadline, "the plan never reached step 2");
        if db.exists() {
            if let Ok(s) = Store::open(&db) {
                if let Ok(steps) = s.steps(RunId(1)) {
                    let second_running = steps.iter().any(|st| {
                        st.index == 1
                            && st.status == iorig_store::StepStatus::Running
                            && s.intervals(st.id).map(|r| !r.is_empty()).unwrap_or(false)
                    });
                    if second_running {
                        break;
                    }
                }
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();

    let before = db_steps(&db, 1);
    assert_eq!(before.len(), 4, "all steps stored up front");
    assert_eq!(before[0].status, iorig_store::StepStatus::Ok);
    assert_ne!(before[1].status, iorig_store::StepStatus::Ok);
    let first_started = before[0].started.clone();
    assert_eq!(Store::open(&db).unwrap().integrity_check().unwrap(), "ok");

    let out = run(&["plan", "resume", "1", "-q"], dir.path());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after = db_steps(&db, 1);
    assert!(after
        .iter()
        .all(|s| s.status == iorig_store::StepStatus::Ok));
    assert_eq!(after[0].started, first_started, "step 1 did not run again");
    let store = Store::open(&db).unwrap();
    assert_eq!(store.integrity_check().unwrap(), "ok");
    let run_row = store.get_run(RunId(1)).unwrap().unwrap();
    assert_eq!(run_row.run.status, iorig_store::RunStatus::Ok);
    // Every resumed step holds exactly its own intervals (7 of 100 ms, or 8).
    for s in &after {
        let n = store.intervals(s.id).unwrap().len() / 3;
        assert!((7..=8).contains(&n), "step {} has {n} intervals", s.index);
    }
    // A finished plan cannot be resumed again.
    assert_eq!(
        run(&["plan", "resume", "1"], dir.path()).status.code(),
        Some(2)
    );
}

#[test]
fn quick_prints_five_figures() {
    let dir = tmp();
    let out = ok(
        &[
            "quick",
            "--size",
            "64m",
            "--step-time",
            "500ms",
            "--hot-size",
            "8m",
            "-q",
        ],
        dir.path(),
    );
    assert!(out.contains("five parameters:"), "{out}");
    for what in [
        "sequential write",
        "sequential read",
        "random write",
        "random read, cold",
        "random read, hot",
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("{what} missing:\n{out}"));
        assert!(line.contains("latency mean"), "{line}");
    }
    let list = json(&["runs", "list", "--json"], dir.path());
    assert_eq!(list[0]["kind"], "quick");
    assert_eq!(list[0]["status"], "ok");
    let id = list[0]["id"].as_i64().unwrap().to_string();
    // `runs show` gives the five figures again, from the store, exactly as
    // the run printed them.
    let shown = ok(&["runs", "show", &id], dir.path());
    let printed: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.contains("five parameters:"))
        .collect();
    let again: Vec<&str> = shown
        .lines()
        .skip_while(|l| !l.contains("five parameters:"))
        .collect();
    assert_eq!(again, printed, "runs show:\n{shown}");
    let show = json(&["runs", "show", &id, "--json"], dir.path());
    let hot = show["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "rand-read-hot")
        .unwrap();
    // 8 MiB of the 64 MiB target: the first 12.5 %.
    assert!((hot["range_end_pct"].as_f64().unwrap() - 12.5).abs() < 1e-9);
    assert!(hot["analysis"]["steady_state"]["rounds"].as_u64().unwrap() >= 1);
    // --json carries the five figures as typed records, taken from the
    // steps' summaries; the export has the same ones.
    assert_eq!(show["schema"], "iorig.run/1");
    let figures = show["figures"].as_array().unwrap();
    let names: Vec<&str> = figures
        .iter()
        .map(|f| f["step"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "seq-write",
            "seq-read",
            "rand-write",
            "rand-read-cold",
            "rand-read-hot"
        ]
    );
    for f in figures {
        let step = show["steps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == f["step"])
            .unwrap();
        assert_eq!(f["iops"], step["summary"]["total"]["iops"], "{f}");
        assert_eq!(
            f["lat_p99_ns"], step["summary"]["total"]["lat_ns"]["p99"],
            "{f}"
        );
    }
    assert_eq!(
        figures[4]["steady"]["rounds"],
        hot["analysis"]["steady_state"]["rounds"]
    );
    ok(
        &["export", &id, "--format", "json", "--out", "run.json"],
        dir.path(),
    );
    let exported: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(exported["figures"], show["figures"]);
    // The HTML report shows them too, each with its IOPS.
    ok(&["report", &id, "--out", "r"], dir.path());
    let html = std::fs::read_to_string(dir.path().join("r/index.html")).unwrap();
    let section = &html[html
        .find("<section id=\"figures\">")
        .expect("no five-figure section")..];
    let section = &section[..section.find("</section>").unwrap()];
    for f in figures {
        let iops = f["iops"].as_f64().unwrap().round() as i64;
        let mut grouped = String::new();
        let digits = iops.to_string();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                grouped.push(',');
            }
            grouped.push(c);
        }
        assert!(section.contains(f["what"].as_str().unwrap()), "{section}");
        assert!(section.contains(&grouped), "{grouped} not in {section}");
    }
}

/// /dev/zram0 set up for the test and reset afterwards.
struct Zram;

impl Zram {
    /// Sets /dev/zram0 up; only for tests `#[ignore]`d as needing root and
    /// zram, so anything missing here is a failure, not a skip.
    fn setup() -> Zram {
        let disksize = Path::new("/sys/block/zram0/disksize");
        assert!(disksize.exists(), "no /dev/zram0 (modprobe zram)");
        assert_eq!(
            std::fs::read_to_string(disksize).unwrap().trim(),
            "0",
            "/dev/zram0 is already set up by someone else"
        );
        std::fs::write(disksize, "256M").expect("configuring /dev/zram0 needs root");
        Zram
    }
}

impl Drop for Zram {
    fn drop(&mut self) {
        let _ = std::fs::write("/sys/block/zram0/reset", "1");
    }
}

fn generator_bound(doc_stderr: &str, store: &Store) -> bool {
    let flagged = store.analysis(RunId(1)).unwrap().iter().any(
        |a| matches!(&a.finding, iorig_result::Finding::GeneratorBound(g) if g.generator_bound),
    );
    assert_eq!(
        flagged,
        doc_stderr.contains("generator-bound"),
        "store and printed warning disagree: {doc_stderr}"
    );
    flagged
}

#[test]
fn generator_bound_warning_stays_silent_on_a_device_bound_run() {
    // Device-bound: one worker, qd 4, on a file; the CPU idles.
    let dir = tmp();
    let out = run(
        &["run", "--size", "64m", "--qd", "4", "--time", "2s", "-q"],
        dir.path(),
    );
    assert!(out.status.success());
    let store = Store::open(&dir.path().join("iorig.db")).unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let flagged = generator_bound(&err, &store);
    // Silent while the host and the worker had CPU to spare; on a machine
    // loaded by other work the verdict is right to speak, and then it says
    // why (the host's CPU or the worker's).
    let v = store
        .analysis(RunId(1))
        .unwrap()
        .into_iter()
        .find_map(|a| match a.finding {
            iorig_result::Finding::GeneratorBound(g) => Some(g),
            _ => None,
        })
        .unwrap();
    if v.cpu_busy_pct < 90.0 && v.worker_busy_pct < 90.0 {
        assert!(!flagged, "{v:?}\n{err}");
    } else if flagged {
        assert!(err.contains("CPU") || err.contains("worker"), "{err}");
    }
}

#[test]
#[ignore = "needs root: /dev/zram0"]
fn generator_bound_warning_fires_on_an_oversubscribed_host() {
    // Oversubscribed: 32 psync workers per CPU against zram, which is served
    // by the submitting CPUs themselves.
    let _zram = Zram::setup();
    let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
    let threads = (cpus * 32).min(512).to_string();
    let dir = tmp();
    let out = run(
        &[
            "run",
            "--target",
            "/dev/zram0",
            "--engine",
            "psync",
            "--threads",
            &threads,
            "--time",
            "2s",
            "-q",
        ],
        dir.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let store = Store::open(&dir.path().join("iorig.db")).unwrap();
    assert!(generator_bound(
        &String::from_utf8_lossy(&out.stderr),
        &store
    ));
}

/// A steady-state step says what it will do (rounds until steady, capped),
/// not its cap as if it were its length; a row of an interval the step
/// ended inside is marked and explained, exactly when the stored interval
/// is short.
#[test]
fn a_steady_state_step_says_its_rounds_and_marks_its_partial_row() {
    let dir = tmp();
    std::fs::write(
        dir.path().join("ss.toml"),
        "targets = [\"n\"]\nsize = \"1m\"\n[defaults]\nengine = \"null\"\nrate = 2000\n[[steps]]\nname = \"steady\"\nsteady_state = { round = \"1s\", max_rounds = 8, window = 2, rule = \"deviation:20%\" }\n",
    )
    .unwrap();
    let out = run(&["plan", "run", "ss.toml", "--db", "s.db"], dir.path());
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    let title = text
        .lines()
        .find(|l| l.starts_with("step 1/1 steady:"))
        .unwrap();
    assert!(
        title.contains("rate 2000 IOPS, until steady: rounds of 1s, at most 8s (8 rounds) on n"),
        "{title}"
    );
    ok(
        &[
            "export", "1", "--format", "json", "--out", "x.json", "--db", "s.db",
        ],
        dir.path(),
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("x.json")).unwrap()).unwrap();
    let intervals = doc["steps"][0]["intervals"].as_array().unwrap();
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| {
            l.len() > 18
                && l[8..]
                    .trim_start()
                    .starts_with(|c: char| c.is_ascii_digit())
        })
        .map(|l| l.split_whitespace().nth(1).unwrap())
        .collect();
    assert_eq!(rows.len(), intervals.len(), "{text}");
    for (k, (row, i)) in rows.iter().zip(intervals).enumerate() {
        let d = i["duration_s"].as_f64().unwrap();
        let marked = row.ends_with('*');
        assert_eq!(marked, d < 0.99, "row {row}: {d} s\n{text}");
        if marked {
            assert!(
                text.contains(&format!(
                    "  * interval {} lasted {d:.2}s of 1s: the step ended inside it",
                    k + 1
                )),
                "{text}"
            );
        }
    }
}

/// One numbering: the step a curve finding names (from 1) is the same step
/// in the plan's table, the report's heading and the JSON's `step`.
#[test]
fn a_findings_step_number_names_the_same_step_everywhere() {
    let dir = tmp();
    std::fs::write(
        dir.path().join("c.toml"),
        "targets = [\"c.dat\"]\nsize = \"8m\"\n[defaults]\nengine = \"psync\"\ntime = \"1s\"\n[[steps]]\nkind = \"curve\"\nrates_pct = [5, 10]\nthreshold_ms = 1000\n",
    )
    .unwrap();
    let out = run(&["plan", "run", "c.toml", "--db", "c.db"], dir.path());
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let doc = json(&["runs", "show", "1", "--json", "--db", "c.db"], dir.path());
    let curve = doc["analysis"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "curve")
        .unwrap();
    // The step the answer stands on, or one that missed its rate (a loaded
    // machine): either way a number the finding gives.
    let c = &curve["result"];
    let n = c["best_under_mean_step"]
        .as_u64()
        .or_else(|| c["off_rate"][0]["step"].as_u64())
        .unwrap_or_else(|| panic!("no step named: {c}"));
    // The JSON: the step numbered n.
    let step = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["step"].as_u64() == Some(n))
        .unwrap();
    assert_eq!(step["index"].as_u64(), Some(n - 1));
    let name = step["name"].as_str().unwrap();
    assert!(name.starts_with("curve rate="), "a rate step: {name}");
    // The text: the plan's table has it as row n, and the curve line says n.
    let row = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(n.to_string().as_str()))
        .unwrap_or_else(|| panic!("no row {n}:\n{text}"));
    assert!(row.contains(name), "{row}");
    assert!(
        text.contains(&format!("(step {n})")) || text.contains(&format!("step {n} ran")),
        "{text}"
    );
    // The HTML: its heading and its row in the steps table.
    ok(&["report", "1", "--db", "c.db", "--out", "rep"], dir.path());
    let html = std::fs::read_to_string(dir.path().join("rep/index.html")).unwrap();
    assert!(
        html.contains(&format!("<h3 id=\"step-{n}\">Step {n}: {name}</h3>")),
        "no heading for step {n}"
    );
    assert!(
        html.contains(&format!("<td>{n}</td><td>{name}</td>"))
            || html.contains(&format!(">{n}</td><td>{name}<")),
        "no table row for step {n}"
    );
    // `report --steps n` picks that step.
    ok(
        &[
            "report",
            "1",
            "--db",
            "c.db",
            "--out",
            "one",
            "--steps",
            &n.to_string(),
        ],
        dir.path(),
    );
    let one = std::fs::read_to_string(dir.path().join("one/index.html")).unwrap();
    assert!(one.contains(&format!("id=\"step-{n}\"")), "--steps {n}");
}
