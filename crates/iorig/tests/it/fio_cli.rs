//! What this protects: fio job files run as they are. Every job file of
//! the corpus in `tests/fio/run` runs and shows its options' effect in the
//! fio-shaped JSON it writes (read share, block sizes, bytes, rate, groups,
//! logs); every file in `tests/fio/refused` is refused with exit 2, its
//! file, line and option (snapshot), and nothing written. The tests that
//! need fio itself, fio-plot or a loop device are `#[ignore]`d with the
//! reason and run by `.ci/run` as root.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::{iorig, tmp};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fio")
        .join(name)
}

/// Runs a corpus job file with `${T}` = a fresh directory; gives the
/// directory and fio's JSON of the run.
fn run_job(name: &str, extra: &[&str]) -> (tempfile::TempDir, Value) {
    let dir = tmp();
    let out = iorig()
        .arg("run")
        .arg(corpus(&format!("run/{name}")))
        .args(["--output-format", "fio-json+", "--no-db", "-q"])
        .args(extra)
        .env("T", dir.path())
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{name}: stdout is not one JSON document ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (dir, doc)
}

/// Runs a corpus job file into a store of its own: its fio-json document and
/// the stored run (`runs show --json`).
fn run_job_stored(name: &str) -> (tempfile::TempDir, Value, Value) {
    let dir = tmp();
    let out = iorig()
        .arg("run")
        .arg(corpus(&format!("run/{name}")))
        .args(["--output-format", "fio-json", "-q", "--db", "t.db"])
        .env("T", dir.path())
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let show = common::ok(&["runs", "show", "1", "--json", "--db", "t.db"], dir.path());
    let run: Value = serde_json::from_str(&show).unwrap();
    (dir, doc, run)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Each I/O of iorig's per-I/O log (`--lat-log`), in order: its target and
/// its offset in the target's data (iorig's scratch files hold their data
/// after a 1 MiB header).
fn logged_places(path: &Path) -> Vec<(usize, u64)> {
    let lat = std::fs::read_to_string(path).unwrap();
    let mut rows = lat.lines();
    let head: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = |name: &str| head.iter().position(|h| *h == name).unwrap();
    let (t, o) = (col("target"), col("offset_bytes"));
    rows.map(|r| {
        let f: Vec<&str> = r.split(',').collect();
        (
            f[t].parse().unwrap(),
            f[o].parse::<u64>().unwrap() - (1 << 20),
        )
    })
    .collect()
}

/// Writes `job` as `j.fio` in `d` and runs fio on it there, which must
/// succeed.
fn fio_in(d: &Path, job: &str) {
    std::fs::write(d.join("j.fio"), job).unwrap();
    let out = Command::new("fio")
        .args(["j.fio", "--output=/dev/null"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn random_reads_at_a_queue_depth() {
    let (_d, doc) = run_job("randread.fio", &[]);
    let j = &doc["jobs"][0];
    assert_eq!(j["jobname"], "randread");
    assert!(doc["fio version"].as_str().unwrap().starts_with("iorig-"));
    let r = &j["read"];
    assert!(u(&r["total_ios"]) > 0);
    assert_eq!(u(&r["io_bytes"]), u(&r["total_ios"]) * 4096);
    assert_eq!(u(&j["write"]["total_ios"]), 0);
    assert_eq!(f(&j["iodepth_level"]["8"]), 100.0);
    // Percentiles keyed as fio keys them, from the histogram.
    let p = &r["clat_ns"]["percentile"];
    assert!(u(&p["50.000000"]) <= u(&p["99.000000"]));
    assert!(u(&p["99.000000"]) <= u(&r["clat_ns"]["max"]));
    assert!(r["clat_ns"]["bins"].as_object().unwrap().len() > 1);
}

#[test]
fn a_job_without_time_based_ends_by_its_bytes() {
    let (d, doc) = run_job("seqwrite-size.fio", &[]);
    let w = &doc["jobs"][0]["write"];
    // Two clones, each its own 4m file written once.
    assert_eq!(u(&w["io_bytes"]), 8 << 20);
    assert_eq!(u(&w["total_ios"]), 128);
    assert!(d.path().join("seqwrite.0.0").is_file());
    assert!(d.path().join("seqwrite.1.0").is_file());
    let (_d, doc) = run_job("loops.fio", &[]);
    assert_eq!(u(&doc["jobs"][0]["read"]["io_bytes"]), 3 << 20);
    let (_d, doc) = run_job("mixed-io-size.fio", &[]);
    let j = &doc["jobs"][0];
    let (r, w) = (u(&j["read"]["total_ios"]), u(&j["write"]["total_ios"]));
    assert_eq!((r + w) * 4096, 16 << 20);
    // 4096 draws at 70 %: the share's standard deviation is 0.72 points;
    // 4 of them is a failure once in 15,000 runs.
    let share = r as f64 / (r + w) as f64;
    assert!((share - 0.7).abs() < 0.029, "read share {share}");
}

#[test]
fn block_sizes_split_and_per_direction() {
    let (_d, doc) = run_job("bssplit.fio", &[]);
    let r = &doc["jobs"][0]["read"];
    let mean = u(&r["io_bytes"]) as f64 / u(&r["total_ios"]) as f64;
    // Half 4k, half 64k: 34,816 bytes on average; the share of 64k over n
    // I/Os has a standard deviation of 0.5/sqrt(n).
    let n = u(&r["total_ios"]) as f64;
    let tol = 4.0 * 0.5 / n.sqrt() * 61_440.0;
    assert!((mean - 34_816.0).abs() < tol, "mean {mean} ± {tol}");
    let (_d, doc) = run_job("bs-per-direction.fio", &[]);
    let j = &doc["jobs"][0];
    assert_eq!(u(&j["read"]["io_bytes"]), u(&j["read"]["total_ios"]) * 4096);
    assert_eq!(
        u(&j["write"]["io_bytes"]),
        u(&j["write"]["total_ios"]) * 65536
    );
}

#[test]
fn rate_iops_is_per_clone() {
    // Two clones at rate_iops=200: one job of two workers paced at 400 in
    // all. Checked from what was asked and counted, not from the speed a
    // loaded machine reached.
    let (_d, doc, run) = run_job_stored("rate.fio");
    let step = &run["steps"][0];
    assert_eq!(
        (f(&step["rate_iops"]), u(&step["threads"])),
        (400.0, 2),
        "{step}"
    );
    // Never ahead of 400 a second over the 2 s (plus each worker's first).
    let ios = u(&doc["jobs"][0]["read"]["total_ios"]);
    assert!(ios > 0 && ios <= 800 + 2, "{ios} I/Os");
}

#[test]
fn jobs_run_together_until_a_stonewall() {
    let (_d, doc, run) = run_job_stored("groups.fio");
    let jobs = doc["jobs"].as_array().unwrap();
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    let groups: Vec<u64> = jobs.iter().map(|j| u(&j["groupid"])).collect();
    assert_eq!(groups, [0, 0, 1]);
    assert!(u(&jobs[0]["read"]["total_ios"]) > 0 && u(&jobs[1]["write"]["total_ios"]) > 0);
    // Stored as a run of two steps, the first with both jobs.
    let steps = run["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    let step_jobs: Vec<&str> = steps[0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["name"].as_str().unwrap())
        .collect();
    assert_eq!(step_jobs, ["a", "b"]);
    // The step's total is its jobs' sum (ops exactly; both ran at once).
    let total = u(&steps[0]["summary"]["total"]["ops"]);
    let parts: u64 = steps[0]["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| u(&j["summary"]["total"]["ops"]))
        .sum();
    assert_eq!(total, parts);
    let source = run["run"]["labels"]["source"].as_str().unwrap_or_default();
    assert!(source.starts_with("fio:"), "{}", run["run"]);
}

#[test]
fn includes_ramp_null_and_accepted_options() {
    let (d, doc) = run_job("include.fio", &[]);
    let r = &doc["jobs"][0]["read"];
    assert_eq!(u(&r["io_bytes"]), 4 << 20);
    assert_eq!(u(&r["total_ios"]), 256);
    assert!(d.path().join("inc.0.0").is_file());
    let (_d, doc) = run_job("ramp.fio", &[]);
    let rt = u(&doc["jobs"][0]["job_runtime"]);
    assert!((900..=1100).contains(&rt), "measured {rt} ms");
    let (d, doc) = run_job("null.fio", &[]);
    assert!(u(&doc["jobs"][0]["read"]["total_ios"]) > 1000);
    assert!(
        common::names(d.path()).is_empty(),
        "{:?}",
        common::names(d.path())
    );
    let (_d, doc) = run_job("accepted.fio", &[]);
    assert!(u(&doc["jobs"][0]["read"]["total_ios"]) > 0);
    let (_d, doc) = run_job("ssd-test.fio", &[]);
    let names: Vec<&str> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["jobname"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["seq-read", "rand-read", "seq-write", "rand-write"]);
    let groups: Vec<u64> = doc["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| u(&j["groupid"]))
        .collect();
    assert_eq!(groups, [0, 1, 2, 3]);
}

#[test]
fn logs_in_fios_format() {
    let (d, _doc) = run_job("logs.fio", &[]);
    for kind in ["bw", "iops", "lat", "clat", "slat"] {
        let text = std::fs::read_to_string(d.path().join(format!("logged_{kind}.1.log")))
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        let lines: Vec<&str> = text.lines().collect();
        // Four 250 ms intervals, a read and a write line each.
        assert_eq!(lines.len(), 8, "{kind}: {text}");
        let fields: Vec<&str> = lines[0].split(", ").collect();
        assert_eq!(fields.len(), 5, "{kind}: {}", lines[0]);
        assert_eq!(fields[0], "250");
        assert!(["0", "1"].contains(&fields[2]));
    }
}

#[test]
fn import_prints_the_plan_that_runs() {
    let dir = tmp();
    let out = iorig()
        .arg("import")
        .arg(corpus("run/groups.fio"))
        .env("T", "/data")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // The printed plan runs as a plan, with the same steps.
    let plan = dir.path().join("p.toml");
    std::fs::write(&plan, text.replace("/data", dir.path().to_str().unwrap())).unwrap();
    let dry = common::ok(
        &["plan", "run", plan.to_str().unwrap(), "--dry-run"],
        dir.path(),
    );
    assert!(dry.contains("2 step"), "{dry}");
    // --dry-run of the job file itself: no I/O, nothing written.
    let out = iorig()
        .arg("run")
        .arg(corpus("run/groups.fio"))
        .args(["--dry-run"])
        .env("T", dir.path())
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names = common::names(dir.path());
    assert_eq!(names, ["p.toml"], "{names:?}");
}

#[test]
fn refused_job_files_name_file_line_and_option() {
    let dir = tmp();
    let base = corpus("refused");
    let mut files: Vec<_> = std::fs::read_dir(&base)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio") && !p.ends_with("loop-b.fio"))
        .collect();
    files.sort();
    assert!(files.len() >= 8);
    // Run from a copy, so a file that is not refused writes nowhere but here.
    let work = tmp();
    let copy = work.path().join("tests/fio/refused");
    std::fs::create_dir_all(&copy).unwrap();
    for e in std::fs::read_dir(&base).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), copy.join(e.file_name())).unwrap();
    }
    for p in files {
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let out = iorig()
            .arg("run")
            .arg(format!("tests/fio/refused/{name}"))
            .args(["--db", dir.path().join("t.db").to_str().unwrap()])
            .current_dir(work.path())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{name}");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(err.lines().count(), 1, "{name}: one line: {err}");
        insta::assert_snapshot!(
            format!("fio_refused_{}", name.trim_end_matches(".fio")),
            err
        );
        assert!(
            common::names(dir.path()).is_empty(),
            "{name} wrote something"
        );
        assert_eq!(
            common::names(work.path()),
            ["tests"],
            "{name} wrote something"
        );
    }
    // --ignore-unsupported runs it, saying what it left out.
    let out = iorig()
        .arg("run")
        .arg(corpus("refused/nice.fio"))
        .args([
            "--ignore-unsupported",
            "--no-db",
            "-q",
            "--output-format",
            "fio-json",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("left out (--ignore-unsupported)") && err.contains("nice"),
        "{err}"
    );
    // Workload flags do not mix with a job file.
    let out = iorig()
        .arg("run")
        .arg(corpus("run/randread.fio"))
        .args(["--bs", "8k", "--no-db"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Every key fio writes under `jobs[]`, `jobs[].read` and `jobs[].write`
/// is in iorig's fio-json for the same job file.
#[test]
#[ignore = "needs fio; .ci/run installs it and runs the ignored tests as root"]
fn fio_json_has_every_key_fio_writes() {
    assert!(common::have("fio"), "fio is not installed");
    let (d, ours) = run_job("randread.fio", &[]);
    let out = Command::new("fio")
        .arg(corpus("run/randread.fio"))
        .args(["--output-format=json+"])
        .env("T", d.path())
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys = |v: &Value| -> Vec<String> {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    for path in [
        &[][..],
        &["read"][..],
        &["write"][..],
        &["read", "clat_ns"][..],
    ] {
        let mut a = &theirs["jobs"][0];
        let mut b = &ours["jobs"][0];
        for p in path {
            a = &a[*p];
            b = &b[*p];
        }
        let missing: Vec<String> = keys(a).into_iter().filter(|k| b.get(k).is_none()).collect();
        assert!(missing.is_empty(), "jobs[0].{path:?} lacks {missing:?}");
    }
    let missing: Vec<String> = keys(&theirs)
        .into_iter()
        .filter(|k| ours.get(k).is_none())
        .collect();
    assert!(missing.is_empty(), "top level lacks {missing:?}");
}

/// fio-plot (PyPI) draws its standard graphs from iorig's fio-json and
/// logs.
#[test]
#[ignore = "needs fio-plot in the CI venv (IORIG_TEST_PYTHON); .ci/run installs it"]
fn fio_plot_reads_iorigs_json_and_logs() {
    let python = std::env::var("IORIG_TEST_PYTHON").expect("IORIG_TEST_PYTHON (set by .ci/run)");
    let fio_plot = Path::new(&python).with_file_name("fio-plot");
    assert!(fio_plot.is_file(), "{} missing", fio_plot.display());
    let dir = tmp();
    let json_dir = dir.path().join("json");
    std::fs::create_dir(&json_dir).unwrap();
    let job = dir.path().join("randread.fio");
    std::fs::write(
        &job,
        format!(
            "[randread-iodepth-4-numjobs-1]\nfilename={}/data\nsize=8m\nrw=randread\nbs=4k\nioengine=libaio\niodepth=4\nnumjobs=1\nruntime=2\ntime_based\nwrite_bw_log=randread-iodepth-4-numjobs-1\nwrite_iops_log=randread-iodepth-4-numjobs-1\nwrite_lat_log=randread-iodepth-4-numjobs-1\nlog_avg_msec=500\n",
            dir.path().display()
        ),
    )
    .unwrap();
    let out = iorig()
        .arg("run")
        .arg(&job)
        .args(["--no-db", "-q", "--output-format", "fio-json+", "--json"])
        .arg(json_dir.join("randread-iodepth-4-numjobs-1.json"))
        .current_dir(&json_dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (mode, extra) in [
        ("-l", &["-d", "4", "-n", "1"][..]),
        ("-H", &["-d", "4", "-n", "1"][..]),
        ("-g", &["-d", "4", "-n", "1", "-t", "bw", "iops", "lat"][..]),
    ] {
        // With the extension: fio-plot writes its metadata to the name as given.
        let png = dir
            .path()
            .join(format!("graph{}.png", mode.trim_start_matches('-')));
        let out = Command::new(&fio_plot)
            .arg("-i")
            .arg(&json_dir)
            .args(["-T", "iorig", mode, "-r", "randread"])
            .args(extra)
            .arg("-o")
            .arg(&png)
            .env("MPLBACKEND", "Agg")
            .output()
            .unwrap();
        assert!(
            out.status.success()
                && png.is_file()
                && std::fs::metadata(&png).unwrap().len() > 10_000,
            "fio-plot {mode}: {}\n{}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// What a loop device saw from fio and from iorig running the same job
/// file: I/O sizes, read share and total bytes agree within 1 %.
#[test]
#[ignore = "needs root (a loop device) and fio; .ci/run runs it as root"]
fn fio_and_iorig_send_the_same_io_to_a_device() {
    assert!(common::have("fio"), "fio is not installed");
    let dev = common::LoopDev::new(512 << 20);
    let name = Path::new(&dev.dev)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string();
    let stat = || -> [u64; 4] {
        let s = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
        let v: Vec<u64> = s.split_whitespace().map(|x| x.parse().unwrap()).collect();
        // reads completed, sectors read, writes completed, sectors written
        [v[0], v[2], v[4], v[6]]
    };
    let dir = tmp();
    for (label, body) in [
        ("randrw 70/30 4k", "rw=randrw\nrwmixread=70\nbs=4k\nsize=256m\nioengine=libaio\niodepth=8\n"),
        ("seq write 128k", "rw=write\nbs=128k\nsize=256m\nioengine=libaio\niodepth=4\n"),
        // Without norandommap fio shrinks I/Os to fit holes in its map; iorig
        // draws with replacement, as fio does with norandommap.
        ("bssplit reads", "rw=randread\nbssplit=4k/50:64k/50\nnorandommap\nsize=256m\nio_size=128m\nioengine=psync\n"),
        ("bsrange reads", "rw=randread\nbsrange=4k-16k\nnorandommap\nsize=256m\nio_size=64m\nioengine=psync\n"),
        ("reads with holes", "rw=read:12k\nbs=4k\nsize=256m\nio_size=32m\nioengine=psync\n"),
        ("runs of 8 per seek", "rw=randread:8\nbs=4k\nnorandommap\nsize=256m\nio_size=32m\nioengine=libaio\niodepth=4\n"),
    ] {
        let job = dir.path().join("j.fio");
        std::fs::write(&job, format!("[j]\nfilename={}\ndirect=1\n{body}", dev.dev)).unwrap();
        let measure = |cmd: &mut Command| -> [u64; 4] {
            let before = stat();
            let out = cmd.output().unwrap();
            assert!(out.status.success(), "{label}: {}", String::from_utf8_lossy(&out.stderr));
            let after = stat();
            [0, 1, 2, 3].map(|i| after[i] - before[i])
        };
        let fio = measure(Command::new("fio").arg(&job).arg("--output=/dev/null"));
        let ours = measure(
            iorig()
                .arg("run")
                .arg(&job)
                .args(["--no-db", "-q", "--allow-destroy"])
                .current_dir(dir.path()),
        );
        let bytes = |s: &[u64; 4]| (s[1] + s[3]) * 512;
        let close = |a: f64, b: f64| (a - b).abs() <= 0.01 * b.abs().max(1.0);
        assert!(close(bytes(&ours) as f64, bytes(&fio) as f64), "{label}: bytes {ours:?} vs fio {fio:?}");
        let read_share = |s: &[u64; 4]| s[1] as f64 / (s[1] + s[3]).max(1) as f64;
        assert!(
            (read_share(&ours) - read_share(&fio)).abs() <= 0.01,
            "{label}: read share {ours:?} vs fio {fio:?}"
        );
        let size = |ios: u64, sectors: u64| if ios == 0 { 0.0 } else { sectors as f64 * 512.0 / ios as f64 };
        // Random sizes: each tool's mean read size is the sizes' mean with a
        // standard deviation of sd / sqrt(n); 4 of them is a failure once in
        // 15,000 runs. bssplit: 4k or 64k, mean 34,816, sd 30,720.
        // bsrange 4k-16k: 4, 8, 12 or 16k, mean 10,240, sd 4096 × sqrt(1.25).
        let random_sizes = match label {
            "bssplit reads" => Some((34_816.0, 30_720.0)),
            "bsrange reads" => Some((10_240.0, 4096.0 * 1.25f64.sqrt())),
            _ => None,
        };
        if let Some((mean_bytes, sd_bytes)) = random_sizes {
            for (who, s) in [("iorig", &ours), ("fio", &fio)] {
                let n = s[0] as f64;
                let tol = 4.0 * sd_bytes / n.sqrt();
                let mean = size(s[0], s[1]);
                assert!((mean - mean_bytes).abs() <= tol, "{label}: {who}'s mean read size {mean} ± {tol}");
            }
        } else {
            assert!(close(size(ours[0], ours[1]), size(fio[0], fio[1])), "{label}: read sizes {ours:?} vs {fio:?}");
            assert!(close(size(ours[2], ours[3]), size(fio[2], fio[3])), "{label}: write sizes {ours:?} vs {fio:?}");
        }
    }
}

/// The fio-shaped figures are iorig's own: ops, bytes, IOPS and p99 equal
/// the stored run's for the same run.
#[test]
fn fio_json_equals_the_native_result() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    let db = db.to_str().unwrap();
    let fio = common::ok(
        &[
            "run",
            "--target",
            "s.dat",
            "--size",
            "8m",
            "--time",
            "1s",
            "--read",
            "70",
            "--bs",
            "4k",
            "--qd",
            "4",
            "--db",
            db,
            "-q",
            "--output-format",
            "fio-json",
        ],
        dir.path(),
    );
    let fio: Value = serde_json::from_str(&fio).unwrap();
    let out = dir.path().join("x.json");
    common::ok(
        &[
            "export",
            "1",
            "--format",
            "json",
            "--out",
            out.to_str().unwrap(),
            "--db",
            db,
        ],
        dir.path(),
    );
    let native: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let s = &native["steps"][0]["summary"];
    for (dir_fio, dir_native) in [("read", "read"), ("write", "write")] {
        let a = &fio["jobs"][0][dir_fio];
        let b = &s[dir_native];
        assert_eq!(u(&a["total_ios"]), u(&b["ops"]), "{dir_fio} ops");
        assert_eq!(u(&a["io_bytes"]), u(&b["bytes"]), "{dir_fio} bytes");
        let (ia, ib) = (f(&a["iops"]), f(&b["iops"]));
        assert!(
            (ia - ib).abs() <= 1e-6 * ib.max(1.0),
            "{dir_fio} iops {ia} vs {ib}"
        );
        assert_eq!(
            u(&a["clat_ns"]["percentile"]["99.000000"]),
            u(&b["lat_ns"]["p99"]),
            "{dir_fio} p99"
        );
        assert_eq!(
            u(&a["clat_ns"]["max"]),
            u(&b["lat_ns"]["max"]),
            "{dir_fio} max"
        );
    }
    // fio's CPU keys mean fio's: the job's own threads (getrusage), percent
    // of one CPU over its runtime, with their context switches and faults;
    // the host's share of all CPUs is iorig's own key.
    let job = &fio["jobs"][0];
    let w = &s["workers_cpu"];
    let runtime_s = f(&s["duration_s"]);
    for (key, ns) in [("usr_cpu", "usr_ns"), ("sys_cpu", "sys_ns")] {
        let want = 100.0 * u(&w[ns]) as f64 / 1e9 / runtime_s;
        assert!((f(&job[key]) - want).abs() < 1e-9, "{key}: {job} vs {w}");
    }
    // One worker thread is at most one CPU.
    assert!(
        f(&job["usr_cpu"]) + f(&job["sys_cpu"]) <= 100.0 + 1.0,
        "{job}"
    );
    assert!(u(&w["usr_ns"]) + u(&w["sys_ns"]) > 0, "it did work: {w}");
    assert_eq!(
        (u(&job["ctx"]), u(&job["minf"]), u(&job["majf"])),
        (u(&w["ctx"]), u(&w["minflt"]), u(&w["majflt"]))
    );
    assert_eq!(f(&job["iorig_host_usr_cpu"]), f(&s["cpu"]["usr_pct"]));
}

/// fio's verify is iorig's validation of the step: every write read back.
#[test]
fn verify_is_iorigs_validation() {
    let dir = tmp();
    let db = dir.path().join("t.db");
    let out = iorig()
        .arg("run")
        .arg(corpus("run/verify.fio"))
        .args(["-q", "--db"])
        .arg(&db)
        .env("T", dir.path())
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
    let v = &run["steps"][0]["summary"]["validation"];
    // 1024 writes of 4k, read back and checked as they complete.
    assert_eq!(u(&v["errors"]), 0, "{v}");
    // (the last few read-backs may be in flight when the budget ends it)
    assert!(u(&v["after_reads"]) >= 1000, "{v}");
    assert_eq!(run["steps"][0]["verify_after"], true);
}

/// exitall ends the step when its job ends; cpus_allowed pins the workers.
#[test]
fn exitall_ends_the_step_and_cpus_pin_the_workers() {
    let started = std::time::Instant::now();
    let (_d, doc) = run_job("exitall.fio", &[]);
    let jobs = doc["jobs"].as_array().unwrap();
    let long = u(&jobs[1]["job_runtime"]);
    assert!(long < 5_000, "the long job ran {long} ms");
    assert!(started.elapsed() < std::time::Duration::from_secs(20));
    assert_eq!(jobs[1]["job options"]["cpus_allowed"], "0");
}

#[test]
fn thinktime_poisson_arrivals_and_startdelay_shape_each_job() {
    let (_d, doc) = run_job("pacing.fio", &[]);
    let job = |name: &str| {
        doc["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["jobname"] == name)
            .unwrap_or_else(|| panic!("no job {name}"))
            .clone()
    };
    // 4 I/Os, then 2 ms of thinking: at most one batch per 2 ms of the 2 s.
    // (Counts are bounded from above by the schedule; a loaded machine may
    // fall behind it, never ahead.)
    let think = u(&job("think")["read"]["total_ios"]);
    assert!((40..=4 * 1001).contains(&think), "think: {think} I/Os");
    // 500 IOPS for 2 s as a Poisson process: 1000 arrivals, sd sqrt(1000).
    let poisson = u(&job("poisson")["read"]["total_ios"]) as f64;
    assert!(
        poisson > 0.0 && poisson < 1000.0 + 5.0 * 1000f64.sqrt(),
        "poisson: {poisson}"
    );
    // 200 IOPS from 1 s on: at most 200, not the 400 of the whole 2 s, and
    // fio's runtime of the job starts after its delay.
    let late = u(&job("late")["read"]["total_ios"]);
    assert!(late > 0 && late <= 201, "late: {late}");
    assert_eq!(u(&job("late")["job_runtime"]), 1000);
}

#[test]
fn without_size_a_job_reads_its_whole_file_each_loop() {
    let dir = tmp();
    let d = dir.path();
    std::fs::write(d.join("data.bin"), vec![7u8; 2 << 20]).unwrap();
    std::fs::write(
        d.join("j.fio"),
        "[whole]\nfilename=data.bin\nrw=read\nbs=64k\nloops=2\n",
    )
    .unwrap();
    let out = iorig()
        .args([
            "run",
            "j.fio",
            "--output-format",
            "fio-json",
            "--no-db",
            "-q",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(u(&doc["jobs"][0]["read"]["io_bytes"]), 2 * (2 << 20));
    assert_eq!(u(&doc["jobs"][0]["read"]["total_ios"]), 2 * 32);
}

#[test]
fn steadystate_ends_the_job_once_its_iops_settle() {
    let started = std::time::Instant::now();
    let (_d, doc) = run_job("steadystate.fio", &[]);
    let ms = u(&doc["jobs"][0]["job_runtime"]);
    // A ramp second and a 3 s window: 4 s, not the 30 s runtime.
    assert!((3_500..=10_000).contains(&ms), "ran {ms} ms");
    assert!(started.elapsed() < std::time::Duration::from_secs(25));
}

#[test]
fn clones_side_by_side_unlink_and_log_offset() {
    let dir = tmp();
    let d = dir.path();
    std::fs::write(d.join("shared.dat"), vec![1u8; 8 << 20]).unwrap();
    let out = iorig()
        .arg("run")
        .arg(corpus("run/housekeeping.fio"))
        .args(["--output-format", "fio-json", "--no-db", "-q"])
        .env("T", d)
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Four clones of 2 MiB each: the whole 8 MiB file once.
    assert_eq!(u(&doc["jobs"][0]["read"]["io_bytes"]), 8 << 20);
    // unlink removes what the job created, never a file that was there.
    assert!(d.join("shared.dat").exists());
    for f in ["own.0.0", "own.0.1"] {
        assert!(!d.join(f).exists(), "{f} is still there");
    }
    assert!(
        err.contains("unlink: removed the 2 scratch file(s)"),
        "{err}"
    );
    let log = std::fs::read_to_string(d.join("own_bw.1.log")).unwrap();
    let first = log.lines().next().unwrap();
    assert_eq!(first.split(", ").count(), 6, "{first}");
}

#[test]
fn fsync_and_fdatasync_every_n_writes_and_at_the_end() {
    let (_d, doc) = run_job("fsync.fio", &[]);
    let jobs = doc["jobs"].as_array().unwrap();
    // 256 writes of 4k: 64 fsyncs, then 32 fdatasyncs, each timed.
    assert_eq!(u(&jobs[0]["write"]["total_ios"]), 256);
    assert_eq!(u(&jobs[0]["sync"]["total_ios"]), 64);
    assert_eq!(u(&jobs[0]["sync"]["lat_ns"]["N"]), 64);
    assert!(u(&jobs[0]["sync"]["lat_ns"]["min"]) > 0);
    assert_eq!(u(&jobs[1]["sync"]["total_ios"]), 32);
    // end_fsync: one fsync per clone, after the last write, timed in the
    // last interval, whether the job ends by its time or by its bytes.
    assert_eq!(u(&jobs[2]["sync"]["total_ios"]), 2);
    assert!(u(&jobs[2]["sync"]["lat_ns"]["min"]) > 0);
    assert_eq!(u(&jobs[3]["sync"]["total_ios"]), 1);
    assert_eq!(u(&jobs[3]["write"]["total_ios"]), 256);
    assert_eq!(u(&jobs[4]["sync"]["total_ios"]), 0);
}

#[test]
fn filecreate_filestat_filedelete_work_on_a_tree() {
    let (d, doc) = run_job("metadata.fio", &[]);
    let jobs = doc["jobs"].as_array().unwrap();
    // Every file once: created, then deleted; stats for the second between,
    // and one pass of stats (each file once, as fio's filestat does).
    assert_eq!(u(&jobs[0]["read"]["total_ios"]), 200);
    assert!(u(&jobs[1]["read"]["total_ios"]) > 200);
    assert_eq!(u(&jobs[2]["read"]["total_ios"]), 200);
    assert_eq!(u(&jobs[3]["read"]["total_ios"]), 200);
    assert!(f(&jobs[0]["read"]["clat_ns"]["mean"]) > 0.0);
    // What is left is iorig's tree marker, no file.
    assert_eq!(common::names(d.path()), [".iorig-tree"]);
}

#[test]
fn rate_iops_min_fails_the_job_at_its_first_short_cycle() {
    let dir = tmp();
    let out = iorig()
        .arg("run")
        .arg(corpus("run/ratemin.fio"))
        .args(["--output-format", "fio-json", "--no-db", "-q"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("below the floor of 400"), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["jobs"][0]["error"], 5);
    assert!(u(&doc["jobs"][0]["job_runtime"]) < 5_000);
}

#[test]
fn latency_target_reports_the_best_load_under_the_target() {
    let dir = tmp();
    let out = iorig()
        .arg("run")
        .arg(corpus("run/latency.fio"))
        .args(["--output-format", "fio-json", "--no-db"])
        .env("T", dir.path())
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Each job is a curve of 12 steps (max, 6 rates, 5 bisection rounds),
    // judged at its percentile. The tight one bisects down toward 0 IOPS
    // until its bracket is within 1 % of its max, and skips what is left.
    assert!(err.contains("24 step(s)"), "{err}");
    assert!(
        err.contains("(tight refine=5) skipped: the answer lies between 0 and"),
        "{err}"
    );
    assert!(
        err.contains("curve 1: best with p99.9 <= 0.000001 ms: none"),
        "{err}"
    );
    assert!(
        err.contains("curve 2: best with p99.9 <= 10000 ms: "),
        "{err}"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let jobs = doc["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    for j in jobs {
        assert_eq!(f(&j["latency_percentile"]), 99.9);
        // fio's units: the window in µs.
        assert_eq!(u(&j["latency_window"]), 500_000);
    }
    assert_eq!(u(&jobs[0]["latency_target"]), 1);
    assert_eq!(u(&jobs[1]["latency_target"]), 10_000_000_000);
    // The tight job stands on its lightest step, paced at 10 % of its own
    // max; the loose one on the step its curve names best. (Which step and
    // its pace, never one run's speed against another's: the suite runs
    // other I/O beside this test.)
    let figure = |prefix: &str, after: &str| -> f64 {
        let line = err
            .lines()
            .find(|l| l.starts_with(prefix) && l.contains(after))
            .unwrap_or_else(|| panic!("{prefix}: {err}"));
        let rest = &line[line.find(after).unwrap() + after.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    let max1 = figure("curve 1: max", "max ");
    let (tight, loose) = (f(&jobs[0]["read"]["iops"]), f(&jobs[1]["read"]["iops"]));
    assert!(
        tight > 0.0 && tight <= 0.15 * max1,
        "tight {tight} of max {max1}"
    );
    let best2 = figure("curve 2: best with p99.9", "ms: ");
    assert!(
        (loose - best2).abs() <= 0.01 * best2 + 1.0,
        "loose {loose} vs best {best2}"
    );
}

/// verify_pattern: blocks hold the pattern and are checked byte for byte;
/// verify_only checks what is there without writing, and finds a flipped
/// byte; the same for iorig's own stamped blocks.
#[test]
fn verify_pattern_and_verify_only_check_what_is_there() {
    let dir = tmp();
    let d = dir.path();
    let run = |file: &Path| {
        iorig()
            .arg("run")
            .arg(file)
            .args(["--output-format", "fio-json", "--no-db", "-q"])
            .env("T", d)
            .current_dir(d)
            .output()
            .unwrap()
    };
    let out = run(&corpus("run/verify-pattern.fio"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The check wrote nothing and read the whole 4 MiB.
    assert_eq!(u(&doc["jobs"][1]["write"]["io_bytes"]), 0);
    assert_eq!(u(&doc["jobs"][1]["read"]["io_bytes"]), 4 << 20);
    // Every block holds the pattern (the data area follows iorig's header).
    let data = std::fs::read(d.join("pat.dat")).unwrap();
    let area = &data[data.len() - (4 << 20)..];
    assert!(area.chunks(4).all(|c| c == [0xde, 0xad, 0xbe, 0xef]));
    // A flipped byte: the check alone finds it and fails (exit 3).
    let mut damaged = data.clone();
    let at = data.len() - (4 << 20) + 8192 + 5;
    damaged[at] ^= 0xff;
    std::fs::write(d.join("pat.dat"), &damaged).unwrap();
    let check = d.join("check.fio");
    std::fs::write(
        &check,
        "[check]\ndirectory=${T}\nfilename=pat.dat\nsize=4m\nbs=4k\nioengine=psync\nrw=write\nverify_pattern=0xdeadbeef\nverify_only=1\n",
    )
    .unwrap();
    let out = run(&check);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("expected the pattern, found other bytes; byte 5 is"),
        "{err}"
    );
    // A read job with the pattern checks every block it reads, as fio's.
    let read = d.join("read.fio");
    std::fs::write(
        &read,
        "[read]\ndirectory=${T}\nfilename=pat.dat\nsize=4m\nbs=4k\nioengine=psync\nrw=read\nverify_pattern=0xdeadbeef\n",
    )
    .unwrap();
    let out = run(&read);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // After random writes (drawn with replacement, so blocks are left
    // out), the check in the same file reads only what was written.
    let random = d.join("random.fio");
    std::fs::write(
        &random,
        "[global]\ndirectory=${T}\nfilename=rnd.dat\nsize=4m\nbs=4k\nioengine=psync\nrw=randwrite\nverify=crc32c\n[w]\n[c]\nstonewall\nverify_only=1\n",
    )
    .unwrap();
    let out = run(&random);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // iorig's own blocks: written with a checksum method, then checked.
    let stamped = d.join("stamped.fio");
    std::fs::write(
        &stamped,
        "[global]\ndirectory=${T}\nfilename=st.dat\nsize=4m\nbs=4k\nioengine=psync\nrw=write\nverify=crc32c\n[w]\n[c]\nstonewall\nverify_only=1\n",
    )
    .unwrap();
    let out = run(&stamped);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data = std::fs::read(d.join("st.dat")).unwrap();
    let mut damaged = data.clone();
    let at = data.len() - (4 << 20) + 4096 * 3 + 700;
    damaged[at] ^= 1;
    std::fs::write(d.join("st.dat"), &damaged).unwrap();
    let only = d.join("only.fio");
    std::fs::write(
        &only,
        "[c]\ndirectory=${T}\nfilename=st.dat\nsize=4m\nbs=4k\nioengine=psync\nrw=write\nverify=crc32c\nverify_only=1\n",
    )
    .unwrap();
    let out = run(&only);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(err.contains("corrupted at"), "{err}");
    assert!(err.contains("expected any intact block"), "{err}");
}

/// fio's file_service_type over a sequential job's files, against fio
/// itself: the files and offsets of fio's own I/O log (`write_iolog`) are
/// those of iorig's per-I/O log, I/O for I/O, for fio's default
/// (roundrobin), roundrobin:2 and sequential.
#[test]
fn sequential_files_take_turns_as_fio_takes_them() {
    assert!(common::have("fio"), "fio is not installed");
    for (order, fio_opt) in [
        ("roundrobin", ""),
        ("roundrobin:2", "file_service_type=roundrobin:2\n"),
        ("sequential", "file_service_type=sequential\n"),
    ] {
        let dir = tmp();
        let d = dir.path();
        fio_in(
            d,
            &format!("[j]\nfilename=a.dat:b.dat\nsize=64k\nrw=write\nbs=4k\nioengine=psync\nwrite_iolog=fio.log\n{fio_opt}"),
        );
        let log = std::fs::read_to_string(d.join("fio.log")).unwrap();
        // "TIME FILE write OFFSET LEN"
        let theirs: Vec<(usize, u64)> = log
            .lines()
            .filter_map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                (f.len() == 5 && f[2] == "write")
                    .then(|| (usize::from(f[1] == "b.dat"), f[3].parse().unwrap()))
            })
            .collect();
        assert_eq!(theirs.len(), 16, "{order}: {log}");
        for f in ["a.dat", "b.dat"] {
            std::fs::remove_file(d.join(f)).unwrap();
        }
        let out = iorig()
            .args([
                "run", "--target", "a.dat", "--target", "b.dat", "--size", "32k",
            ])
            .args([
                "--rw",
                "write",
                "--target-order",
                order,
                "--engine",
                "psync",
            ])
            .args([
                "--buffered",
                "--io-size",
                "64k",
                "--no-db",
                "-q",
                "--lat-log",
                "lat.csv",
            ])
            .current_dir(d)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ours = logged_places(&d.join("lat.csv"));
        assert_eq!(ours, theirs, "{order}");
    }
}

/// fio's `zoned_abs:` and iorig's: 3,000 random reads over an 8 MiB file
/// with 70 % of them in the first MiB and 30 % in the next 2 MiB, from
/// fio's own I/O log and iorig's per-I/O log. Both keep every read inside
/// the zones' 3 MiB; the first zone's share lies within 4 standard errors
/// (3.3 points at 3,000 reads) of 70 % for each, and the two within 4
/// standard errors of their difference.
#[test]
fn absolute_zones_take_the_shares_fio_gives_them() {
    assert!(common::have("fio"), "fio is not installed");
    let dir = tmp();
    let d = dir.path();
    fio_in(
        d,
        "[j]\nfilename=z.dat\nsize=8m\nrw=randread\nbs=4k\nioengine=psync\nnorandommap\nio_size=12000k\nrandom_distribution=zoned_abs:70/1m:30/2m\nwrite_iolog=fio.log\n",
    );
    let log = std::fs::read_to_string(d.join("fio.log")).unwrap();
    let theirs: Vec<u64> = log
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[2] == "read").then(|| f[3].parse().unwrap())
        })
        .collect();
    assert_eq!(theirs.len(), 3000, "{log}");
    let out = iorig()
        .args([
            "run", "--target", "mine.dat", "--size", "8m", "--rw", "randread",
        ])
        .args(["--dist", "zoned_abs:70/1m:30/2m", "--io-size", "12000k"])
        .args(["--engine", "psync", "--buffered", "--no-db", "-q"])
        .args(["--lat-log", "lat.csv"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ours: Vec<u64> = logged_places(&d.join("lat.csv"))
        .into_iter()
        .map(|(_, o)| o)
        .collect();
    assert_eq!(ours.len(), 3000);
    let share = |offs: &[u64]| {
        assert!(
            offs.iter().all(|o| *o + 4096 <= 3 << 20),
            "a read past the zones"
        );
        offs.iter().filter(|o| **o < 1 << 20).count() as f64 / offs.len() as f64
    };
    let (f, i) = (share(&theirs), share(&ours));
    let se = (0.7f64 * 0.3 / 3000.0).sqrt();
    assert!((f - 0.7).abs() < 4.0 * se, "fio: {f}");
    assert!((i - 0.7).abs() < 4.0 * se, "iorig: {i}");
    assert!((f - i).abs() < 4.0 * se * 2f64.sqrt(), "fio {f}, iorig {i}");
}

/// fio's `buffer_pattern` and iorig's `pattern:`: a 1 MiB sequential write
/// of 4k blocks with a 5-byte pattern (which does not divide a block, so
/// a pattern laid over the file would not start each block) leaves the
/// same bytes in fio's file and in the data region of iorig's: every
/// block the pattern from its start.
#[test]
fn a_buffer_pattern_is_written_as_fio_writes_it() {
    assert!(common::have("fio"), "fio is not installed");
    let dir = tmp();
    let d = dir.path();
    fio_in(
        d,
        "[j]\nfilename=fio.dat\nsize=1m\nrw=write\nbs=4k\nioengine=psync\nbuffer_pattern=0x0102030405\n",
    );
    let out = iorig()
        .args([
            "run", "--target", "mine.dat", "--size", "1m", "--rw", "write",
        ])
        .args(["--data", "pattern:0x0102030405", "--io-size", "1m"])
        .args(["--engine", "psync", "--buffered", "--no-db", "-q"])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs = std::fs::read(d.join("fio.dat")).unwrap();
    let ours = std::fs::read(d.join("mine.dat")).unwrap();
    // iorig's scratch files hold their data after a 1 MiB header.
    let ours = &ours[1 << 20..(2 << 20)];
    let block: Vec<u8> = [1u8, 2, 3, 4, 5]
        .iter()
        .copied()
        .cycle()
        .take(4096)
        .collect();
    assert!(theirs.chunks(4096).all(|b| b == &block[..]), "fio's blocks");
    assert_eq!(theirs.len(), ours.len());
    assert!(theirs == ours, "iorig's blocks differ from fio's");
}

/// The ten runnable files of the import corpus
/// (`crates/iorig-import/tests/corpus/fio`, third-party styles) run by fio
/// and by iorig for 2 s each on a scratch file of their own: the same jobs
/// in the same order, the same read/write split and the same block sizes
/// per direction (exact for fixed sizes; within the sampling error for
/// mixes), and paced jobs the same I/O counts.
#[test]
fn corpus_files_run_by_fio_and_iorig_agree() {
    assert!(common::have("fio"), "fio is not installed");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../iorig-import/tests/corpus/fio");
    let e2e = [
        "01-cloud-randread-4k-qd32.fio",
        "02-cloud-seqwrite-1m.fio",
        "03-fstest-seqwrite-128k-buffered.fio",
        "04-poc-oltp-randrw-70-30.fio",
        "05-paper-bssplit-mix.fio",
        "06-poc-concurrent-jobs.fio",
        "07-autotest-two-phase.fio",
        "08-autotest-numjobs-group.fio",
        "09-cloud-rate-limited.fio",
        "10-fstest-bs-per-job-buffered.fio",
    ];
    let json = |out: &std::process::Output, who: &str, name: &str| -> Value {
        assert!(
            out.status.success(),
            "{who} {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let start = text
            .find('{')
            .unwrap_or_else(|| panic!("{who} {name}: no JSON: {text}"));
        serde_json::from_str(&text[start..]).unwrap()
    };
    for name in e2e {
        let job = corpus.join(name);
        let run = |cmd: &mut Command, dir: &Path| {
            cmd.current_dir(dir)
                .env("TARGET", dir.join("target.dat"))
                .env("SIZE", "64m")
                .env("RUNTIME", "1")
                .output()
                .unwrap()
        };
        // Both at once, each on its own scratch file: the suite's time.
        let (fio_dir, our_dir) = (tmp(), tmp());
        let (theirs, ours) = std::thread::scope(|s| {
            let fio = s.spawn(|| {
                run(
                    Command::new("fio").arg(&job).arg("--output-format=json"),
                    fio_dir.path(),
                )
            });
            let ours = run(
                iorig()
                    .arg("run")
                    .arg(&job)
                    .args(["--output-format", "json", "--no-db", "-q"]),
                our_dir.path(),
            );
            (fio.join().unwrap(), ours)
        });
        let (theirs, ours) = (json(&theirs, "fio", name), json(&ours, "iorig", name));
        let jobs = |doc: &Value| doc["jobs"].as_array().unwrap().clone();
        let (a, b) = (jobs(&ours), jobs(&theirs));
        let names = |j: &[Value]| {
            j.iter()
                .map(|j| j["jobname"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&a), names(&b), "{name}: jobs");
        for (o, t) in a.iter().zip(&b) {
            let label = format!("{name} job {}", o["jobname"]);
            let ios = |j: &Value, d: &str| j[d]["total_ios"].as_f64().unwrap();
            let bytes = |j: &Value, d: &str| j[d]["io_bytes"].as_f64().unwrap();
            let (or, ow, tr, tw) = (
                ios(o, "read"),
                ios(o, "write"),
                ios(t, "read"),
                ios(t, "write"),
            );
            assert!(
                or + ow > 0.0 && tr + tw > 0.0,
                "{label}: no I/O ({or}+{ow} vs fio {tr}+{tw})"
            );
            // The read share: a binomial share of each tool's I/Os, so 4
            // standard errors of the difference (once in 15,000 runs).
            let (po, pt) = (or / (or + ow), tr / (tr + tw));
            let p = (or + tr) / (or + ow + tr + tw);
            let tol = 4.0 * (p * (1.0 - p) * (1.0 / (or + ow) + 1.0 / (tr + tw))).sqrt() + 1e-9;
            assert!(
                (po - pt).abs() <= tol,
                "{label}: read share {po:.4} vs fio {pt:.4} (± {tol:.4})"
            );
            // fio's options for the job, its own over the global ones.
            let opt = |k: &str| {
                t["job options"]
                    .get(k)
                    .or_else(|| theirs["global options"].get(k))
                    .and_then(Value::as_str)
            };
            // Random I/O of mixed sizes under fio's random map shrinks to
            // fit its holes (the import says so); iorig keeps the mix.
            let map_shrinks = opt("rw").is_some_and(|rw| rw.starts_with("rand"))
                && (opt("bssplit").is_some() || opt("bsrange").is_some())
                && opt("norandommap").is_none();
            for d in ["read", "write"] {
                let (n_o, n_t) = (ios(o, d), ios(t, d));
                if n_o == 0.0 || n_t == 0.0 {
                    assert_eq!(n_o == 0.0, n_t == 0.0, "{label}: {d}s {n_o} vs fio {n_t}");
                    continue;
                }
                if map_shrinks {
                    continue;
                }
                let (m_o, m_t) = (bytes(o, d) / n_o, bytes(t, d) / n_t);
                // A mix's mean size varies by its coefficient of variation
                // over √n (under 1.5 for these mixes): 4 of them; a fixed
                // size is exact.
                let tol = 4.0 * 1.5 * m_t * (1.0 / n_o + 1.0 / n_t).sqrt();
                assert!(
                    (m_o - m_t).abs() <= tol.max(0.5),
                    "{label}: mean {d} size {m_o} vs fio {m_t}"
                );
            }
            // Paced jobs: never ahead of the schedule both tools keep (the
            // rate for the job's 1 s; fio's `read,write` rates add up), and
            // not far behind it. A loaded machine (the suite runs six tests
            // on two cores) may leave either tool's direct I/O late at the
            // end of its second, so fio's own count is no yardstick.
            let rate = o["job options"]
                .get("rate_iops")
                .or_else(|| ours["global options"].get("rate_iops"));
            if let Some(rate) = rate {
                let due: f64 = rate
                    .as_str()
                    .unwrap()
                    .split(',')
                    .filter_map(|r| r.trim().parse::<f64>().ok())
                    .sum();
                let n_o = or + ow;
                assert!(
                    n_o <= 1.1 * due + 5.0 && n_o >= 0.5 * due,
                    "{label}: {n_o} I/Os where {due} were due (fio {})",
                    tr + tw
                );
            }
        }
    }
}

/// ioengine=mmap against fio's own: the same jobs do the same I/O (counts
/// and bytes per direction; the mix's read share within its sampling
/// error), through a mapping of the file.
#[test]
fn the_mmap_engine_does_fios_mmap_jobs() {
    assert!(common::have("fio"), "fio is not installed");
    let (_d, ours) = run_job("mmap.fio", &[]);
    let dir = tmp();
    let out = Command::new("fio")
        .arg(corpus("run/mmap.fio"))
        .arg("--output-format=json")
        .env("T", dir.path())
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let theirs: Value = serde_json::from_str(&text[text.find('{').unwrap()..]).unwrap();
    let (a, b) = (
        ours["jobs"].as_array().unwrap(),
        theirs["jobs"].as_array().unwrap(),
    );
    assert_eq!(a.len(), 2);
    for (o, t) in a.iter().zip(b) {
        let n = |j: &Value, d: &str| u(&j[d]["total_ios"]) as f64;
        let (total_o, total_t) = (n(o, "read") + n(o, "write"), n(t, "read") + n(t, "write"));
        assert_eq!(total_o, total_t, "{}", o["jobname"]);
        // 1024 I/Os at 70 % reads: 4 standard errors of the difference.
        let tol = 4.0 * (0.21f64 * 2.0 / total_t).sqrt() * total_t;
        assert!(
            (n(o, "read") - n(t, "read")).abs() <= tol.max(0.5),
            "{}: reads {} vs fio {}",
            o["jobname"],
            n(o, "read"),
            n(t, "read")
        );
        assert_eq!(u(&o["read"]["io_bytes"]) / 4096, n(o, "read") as u64);
    }
    assert_eq!(u(&a[1]["read"]["io_bytes"]), 8 << 20);
}
