//! Protects what a newcomer reads and types in a first afternoon (issue
//! 39): the dry-run table's columns line up, curves are named by what sets
//! them apart and an interpolated best says so, a fast precondition gives
//! its real time, the trace text says what each share is of, `compare`
//! tells noise from change, the step summary names its block device, and
//! every command that writes results takes the same output flags. Texts are
//! insta snapshots; measured numbers are masked (`#`) so a snapshot holds
//! the words and the layout, not one machine's speed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{self, iorig, ok, run, tmp};
use serde_json::Value;
use std::path::Path;

/// Every run of digits (with its decimal point) as `#`: the shape of a
/// line without the figures a run measured.
fn masked(text: &str) -> String {
    let mut out = String::new();
    let mut in_number = false;
    for c in text.chars() {
        if c.is_ascii_digit() || (in_number && c == '.') {
            if !in_number {
                out.push('#');
            }
            in_number = true;
        } else {
            in_number = false;
            out.push(c);
        }
    }
    out
}

/// Two curves that differ only by block size, on the null engine.
const TWO_CURVES: &str = "name = \"two\"\n[defaults]\nengine = \"null\"\ninterval = \"100ms\"\n\n\
[[steps]]\nkind = \"curve\"\nbs = [\"4k\", \"64k\"]\nrates_pct = [50, 90]\ntime = \"300ms\"\n";

#[test]
fn the_dry_run_table_lines_up() {
    let d = tmp();
    std::fs::write(d.path().join("p.toml"), TWO_CURVES).unwrap();
    let out = ok(&["plan", "run", "p.toml", "--dry-run", "--no-db"], d.path());
    insta::assert_snapshot!("dry_run_two_curves", out);
    // Every row's cells start where the header's do.
    let lines: Vec<&str> = out.lines().collect();
    let head = lines[1];
    let col = |line: &str, word: &str| line.find(word).unwrap();
    let label_at = col(head, "label");
    for row in &lines[2..8] {
        assert_eq!(row.find("curve "), Some(label_at), "{row}\n{head}");
    }
}

#[test]
fn curves_are_named_and_an_interpolated_best_says_so() {
    let d = tmp();
    std::fs::write(d.path().join("p.toml"), TWO_CURVES).unwrap();
    let out = ok(&["plan", "run", "p.toml", "--no-db", "-q"], d.path());
    let curve_lines: Vec<&str> = out.lines().filter(|l| l.starts_with("curve ")).collect();
    assert!(
        curve_lines
            .iter()
            .any(|l| l.starts_with("curve 1 (bs=4k): max"))
            && curve_lines
                .iter()
                .any(|l| l.starts_with("curve 2 (bs=64k): max")),
        "{out}"
    );
    // A best under the limit is a step's own figure "(step N)" or lies
    // between two steps and says which.
    for l in curve_lines.iter().filter(|l| l.contains(": max ")) {
        for part in l.split("; ").skip(1) {
            assert!(
                part.ends_with(')') || part.ends_with("none"),
                "a best without its step: {l}"
            );
            if let Some((_, at)) = part.rsplit_once(" (") {
                assert!(
                    at.starts_with("step ") || at.starts_with("interpolated between steps "),
                    "{l}"
                );
            }
        }
    }
}

#[test]
fn a_fast_precondition_gives_its_real_time() {
    let d = tmp();
    std::fs::write(
        d.path().join("p.toml"),
        "name = \"fill\"\nsize = \"8m\"\n[defaults]\ninterval = \"100ms\"\n\n\
         [[steps]]\nkind = \"precondition\"\nname = \"fill\"\n",
    )
    .unwrap();
    let out = ok(
        &["plan", "run", "p.toml", "--target", "t.dat", "--no-db"],
        d.path(),
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("precondition: wrote"))
        .unwrap();
    // Written in well under a second on most machines: said in ms, never
    // rounded to nothing ("0.0 s").
    assert!(
        !line.contains(" 0.0 s") && !line.contains(" 0 ms"),
        "{line}"
    );
    let summary = out.lines().find(|l| l.starts_with("summary over")).unwrap();
    assert!(!summary.contains("over 0 ms"), "{summary}");
    // A slow machine may take over a second: the unit is masked too.
    let unit = |t: &str| masked(t).replace("# ms", "# UNIT").replace("# s", "# UNIT");
    insta::assert_snapshot!(
        "precondition_lines",
        unit(&format!("{line}\n{}", summary.split(':').next().unwrap()))
    );
}

#[test]
fn the_trace_text_says_what_each_share_is_of() {
    let d = tmp();
    // 100 blocks: the first 10 read 10 times each, the rest once.
    let mut t = String::new();
    let mut ts = 128_166_372_003_061_629u64;
    for b in 0..100u64 {
        let times = if b < 10 { 10 } else { 1 };
        for _ in 0..times {
            t.push_str(&format!("{ts},web,1,Read,{},4096,55\n", b * 4096));
            ts += 100;
        }
    }
    std::fs::write(d.path().join("t.csv"), t).unwrap();
    let out = ok(&["trace", "analyse", "t.csv", "--no-db"], d.path());
    let hot: Vec<&str> = out.lines().filter(|l| l.starts_with("hot spot")).collect();
    insta::assert_snapshot!("trace_hot_spot_lines", hot.join("\n"));
}

#[test]
fn compare_tells_change_from_noise() {
    let d = tmp();
    for _ in 0..2 {
        ok(
            &common::null_run("1s", "100ms", &["--rate", "2000"]),
            d.path(),
        );
    }
    let out = ok(&["compare", "1", "2", "-o", "cmp"], d.path());
    // Every Δ is either beyond noise or in brackets; which one a null
    // run's figures land on is chance.
    let row = out
        .lines()
        .find(|l| l.trim_start().starts_with('2'))
        .unwrap_or("");
    let deltas: Vec<&str> = row
        .split_whitespace()
        .filter(|w| w.ends_with('%') || w.ends_with("%)"))
        .collect();
    assert_eq!(deltas.len(), 4, "{row}");
    for d in &deltas {
        let bracketed = d.starts_with("(+") || d.starts_with("(-");
        let plain = d.starts_with('+') || d.starts_with('-');
        assert!(bracketed || plain, "{d} in {row}");
    }
    assert!(out.contains("in brackets: within noise"), "{out}");
    let page = std::fs::read_to_string(d.path().join("cmp/index.html")).unwrap();
    assert!(page.contains("within noise") && page.contains("2·√(s₁²/n₁ + s₂²/n₂)"));
    let legend = out.lines().find(|l| l.contains("in brackets")).unwrap();
    insta::assert_snapshot!("compare_legend", legend);
}

#[test]
fn commands_that_write_results_take_the_same_output_flags() {
    let d = tmp();
    std::fs::write(
        d.path().join("p.toml"),
        "name = \"p\"\n[defaults]\nengine = \"null\"\ntime = \"300ms\"\ninterval = \"100ms\"\n\n[[steps]]\nqd = [1, 2]\n",
    )
    .unwrap();
    // plan run --json -: the run as stored, alone on stdout.
    let out = iorig()
        .args(["plan", "run", "p.toml", "--json", "-", "-q"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["schema"], "iorig.run/1");
    assert_eq!(doc["steps"].as_array().unwrap().len(), 2);
    // --json FILE, and refused beside --no-db in one line.
    ok(
        &["plan", "run", "p.toml", "--json", "run.json", "-q"],
        d.path(),
    );
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("run.json")).unwrap()).unwrap();
    assert_eq!(file["schema"], "iorig.run/1");
    let refused = run(
        &["plan", "run", "p.toml", "--json", "x.json", "--no-db"],
        d.path(),
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(!d.path().join("x.json").exists());
    // -o on report, export and compare.
    ok(&["report", "1", "-o", "rep"], d.path());
    assert!(d.path().join("rep/index.html").exists());
    ok(
        &["export", "1", "--format", "json", "-o", "e.json"],
        d.path(),
    );
    assert!(d.path().join("e.json").exists());
    ok(&["compare", "1", "2", "-o", "cmp"], d.path());
    assert!(d.path().join("cmp/index.html").exists());
    // trace report has a default directory, as report has.
    std::fs::write(
        d.path().join("t.csv"),
        "128166372003061629,web,1,Read,0,4096,55\n128166372003061729,web,1,Read,4096,4096,55\n",
    )
    .unwrap();
    let said = ok(&["trace", "analyse", "t.csv"], d.path());
    assert!(said.contains("iorig trace report 1"), "{said}");
    ok(&["trace", "report", "1"], d.path());
    assert!(d.path().join("iorig-trace-report-1/index.html").exists());
}

/// fio's JSON lists [global]'s options once, under "global options"; a
/// job's "job options" hold its own section's.
#[test]
fn fio_json_job_options_hold_the_jobs_own() {
    let d = tmp();
    std::fs::write(
        d.path().join("j.fio"),
        "[global]\nioengine=null\nbs=4k\nrw=randread\nsize=1m\nruntime=300ms\ntime_based\n\n[a]\niodepth=2\n",
    )
    .unwrap();
    let out = ok(
        &[
            "run",
            "j.fio",
            "--output-format",
            "fio-json",
            "--no-db",
            "-q",
        ],
        d.path(),
    );
    let doc: Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    let global = doc["global options"].as_object().unwrap();
    assert_eq!(global["bs"], "4k", "{doc}");
    let job = doc["jobs"][0]["job options"].as_object().unwrap();
    assert_eq!(
        job.get("iodepth").and_then(Value::as_str),
        Some("2"),
        "{job:?}"
    );
    for k in global.keys() {
        assert!(
            !job.contains_key(k),
            "global {k} repeated in job options: {job:?}"
        );
    }
}

#[test]
fn vdbench_output_paths_print_without_doubled_slashes() {
    let d = tmp();
    let parm = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vdbench/run/hcibench.parm");
    let out = iorig()
        .arg("run")
        .arg(&parm)
        .args(["--set", &format!("dir={}", d.path().display()), "-q"])
        .args(["--db", "t.db", "--vdbench-out", "vdb/"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("vdb/flatfile.html"), "{err}");
    assert!(!err.contains("//"), "{err}");
}

/// The summary names the block device under the target, as fio's "Disk
/// stats" do: util, await and queue size over the measured intervals.
#[test]
#[ignore = "needs root (a loop device); .ci/run runs it as root"]
fn the_summary_names_the_block_device() {
    let dev = common::LoopDev::new(64 << 20);
    let d = tmp();
    let out = ok(
        &[
            "run",
            "--target",
            &dev.dev,
            "--time",
            "1s",
            "--interval",
            "250ms",
            "--rw",
            "randread",
            "--no-db",
        ],
        d.path(),
    );
    let name = dev.dev.trim_start_matches("/dev/");
    let line = out
        .lines()
        .find(|l| l.trim_start().starts_with("device "))
        .unwrap_or_else(|| panic!("no device line: {out}"));
    assert!(line.contains(&format!("device {name}: util ")), "{line}");
    insta::assert_snapshot!("device_line", masked(line));
}
