//! Protects `iorig agent` and `iorig run --hosts`: totals that are the exact
//! merge of what each agent measured (each agent's own local result is the
//! reference, not the controller's copy), refusals before any I/O (token,
//! version, bad host lists, a host without the target), a host lost
//! mid-step without the controller hanging, agents that stop on their own
//! when the controller is gone, and clock offsets measured and corrected.
//!
//! Every agent listens on its own loopback address (127.0.0.2, .3, ...) on
//! a port the kernel picks; every process is killed when its guard drops.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::{guarded, iorig, tmp, wait_child, Guard};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The protocol's minor version this build speaks (the agent crate's).
const PROTOCOL_MINOR: u32 = iorig_agent::PROTOCOL_MINOR;

/// A running agent: its address and the directory of its own results.
struct Agent {
    guard: Guard,
    addr: String,
    results: PathBuf,
    db: PathBuf,
}

/// Starts an agent on `ip` (a port picked by the kernel) with a results
/// directory and a store of its own under `dir`; `env` for test settings.
fn agent(dir: &Path, ip: &str, extra: &[&str], env: &[(&str, &str)]) -> Agent {
    let results = dir.join(format!("agent-{ip}"));
    std::fs::create_dir_all(&results).unwrap();
    let db = results.join("agent.db");
    let mut cmd = iorig();
    cmd.args(["agent", "--listen", &format!("{ip}:0"), "--results-dir"])
        .arg(&results)
        .arg("--db")
        .arg(&db)
        .args(extra)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut guard = guarded(&mut cmd);
    let line = first_line(&mut guard);
    let addr = line
        .split_whitespace()
        .skip_while(|w| *w != "on")
        .nth(1)
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    Agent {
        guard,
        addr,
        results,
        db,
    }
}

/// An agent's first line of output, which says where it listens (waited
/// for 30 s at most).
fn first_line(guard: &mut Guard) -> String {
    let stdout = guard.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the agent says where it listens")
}

fn hosts_arg(agents: &[&Agent]) -> String {
    agents
        .iter()
        .map(|a| a.addr.as_str())
        .collect::<Vec<_>>()
        .join(",")
}

/// The one local result an agent wrote.
fn local_doc(a: &Agent) -> Value {
    let files: Vec<_> = std::fs::read_dir(&a.results)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    assert_eq!(
        files.len(),
        1,
        "one local result in {}",
        a.results.display()
    );
    serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap()
}

fn json_files(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .count()
}

fn ops(v: &Value) -> u64 {
    v["total"]["ops"].as_u64().unwrap()
}

/// Runs the controller to its end (at most two minutes).
fn controller(dir: &Path, args: &[&str]) -> (i32, String, Value) {
    controller_with_store(dir, args, None)
}

/// [`controller`], with its results in the store `db` (`None`: none).
fn controller_with_store(dir: &Path, args: &[&str], db: Option<&Path>) -> (i32, String, Value) {
    let json = dir.join("out.json");
    let _ = std::fs::remove_file(&json);
    let mut cmd = iorig();
    cmd.arg("run").args(args).arg("--json").arg(&json);
    match db {
        Some(db) => cmd.arg("--db").arg(db),
        None => cmd.arg("--no-db"),
    };
    cmd.current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut g = guarded(&mut cmd);
    let status = wait_child(&mut g, 120);
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut g.stderr.take().unwrap(), &mut err);
    let doc = std::fs::read_to_string(&json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (status.code().unwrap_or(-1), err, doc)
}

/// The merged histogram of a run's one step in an agent's own store.
fn stored_total_hist(db: &Path) -> iorig_stats::LatencyHistogram {
    let store = iorig_store::Store::open_read_only(db).unwrap();
    let step = &store.steps(iorig_store::RunId(1)).unwrap()[0];
    store
        .histogram(step.id, iorig_store::Op::Total, iorig_store::HistKind::Lat)
        .unwrap()
        .unwrap()
}

#[test]
fn two_and_four_agents_merge_to_the_exact_sum_of_their_own_results() {
    for n in [2usize, 4] {
        let d = tmp();
        let agents: Vec<Agent> = (0..n)
            .map(|i| agent(d.path(), &format!("127.0.0.{}", i + 2), &[], &[]))
            .collect();
        let refs: Vec<&Agent> = agents.iter().collect();
        let (code, err, doc) = controller(
            d.path(),
            &[
                "--engine",
                "null",
                "--time",
                "3s",
                "--interval",
                "1s",
                "--rate",
                &format!("{}", 2000 * n),
                "--qd",
                "4",
                "--hosts",
                &hosts_arg(&refs),
            ],
        );
        assert_eq!(code, 0, "{err}");
        assert!(
            err.contains(&format!("rate: {} IOPS in total", 2000 * n)),
            "{err}"
        );
        let hosts = doc["hosts"].as_array().unwrap();
        assert_eq!(hosts.len(), n);
        let locals: Vec<Value> = agents.iter().map(local_doc).collect();
        // Totals: ops and bytes are the sums of each agent's own result.
        let sum_ops: u64 = locals.iter().map(|l| ops(&l["summary"])).sum();
        assert_eq!(ops(&doc["summary"]), sum_ops);
        assert!(sum_ops > 0);
        let sum_bytes: u64 = locals
            .iter()
            .map(|l| l["summary"]["total"]["bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(
            doc["summary"]["total"]["bytes"].as_u64().unwrap(),
            sum_bytes
        );
        // Each rate share is the total's n-th.
        for l in &locals {
            assert_eq!(l["workload"]["rate_iops"].as_f64(), Some(2000.0), "{l}");
        }
        // Interval k of the total is interval k of every host, summed.
        let intervals = doc["intervals"].as_array().unwrap();
        for (k, iv) in intervals.iter().enumerate() {
            let s: u64 = locals.iter().map(|l| ops(&l["intervals"][k])).sum();
            assert_eq!(ops(iv), s, "interval {k}");
        }
        for l in &locals {
            assert_eq!(l["intervals"].as_array().unwrap().len(), intervals.len());
        }
        // p99 of the total is the p99 of the agents' stored histograms
        // merged, not an average of their p99s.
        let mut merged = iorig_stats::LatencyHistogram::new();
        for a in &agents {
            merged.merge(&stored_total_hist(&a.db));
        }
        assert_eq!(merged.count(), sum_ops);
        let s = merged.summary();
        assert_eq!(
            doc["summary"]["total"]["lat_ns"]["p99"].as_u64(),
            Some(s.p99)
        );
        assert_eq!(
            doc["summary"]["total"]["lat_ns"]["max"].as_u64(),
            Some(s.max)
        );
        // Each host's part is its own result.
        for (h, l) in hosts.iter().zip(&locals) {
            assert_eq!(h["status"], "ok");
            assert_eq!(h["summary"], l["summary"], "host {}", h["name"]);
            assert!(h["start_skew_ns"].is_i64());
        }
    }
}

#[test]
fn a_wrong_token_or_another_protocol_is_refused_before_any_io() {
    let d = tmp();
    let tok = d.path().join("token");
    std::fs::write(&tok, "0123456789abcdef0123456789abcdef\n").unwrap();
    let bad = d.path().join("bad");
    std::fs::write(&bad, "ffffffffffffffffffffffffffffffff\n").unwrap();
    let a = agent(
        d.path(),
        "127.0.0.2",
        &["--token-file", tok.to_str().unwrap()],
        &[],
    );
    let base = ["--engine", "null", "--time", "1s", "--hosts", &a.addr];
    let mut args = base.to_vec();
    args.extend(["--token-file", bad.to_str().unwrap()]);
    let (code, err, _) = controller(d.path(), &args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&a.addr) && err.contains("token"), "{err}");
    let (code, err, _) = controller(d.path(), &base);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs a token"), "{err}");
    assert_eq!(json_files(&a.results), 0, "nothing ran");
    // The right token runs.
    let mut args = base.to_vec();
    args.extend(["--token-file", tok.to_str().unwrap()]);
    let (code, err, _) = controller(d.path(), &args);
    assert_eq!(code, 0, "{err}");

    // An agent of another protocol major: both versions named.
    let b = agent(
        d.path(),
        "127.0.0.3",
        &[],
        &[("IORIG_TEST_PROTOCOL_MAJOR", "2")],
    );
    let (code, err, _) = controller(
        d.path(),
        &["--engine", "null", "--time", "1s", "--hosts", &b.addr],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&format!("protocol 2.{PROTOCOL_MINOR}"))
            && err.contains(&format!("speaking 1.{PROTOCOL_MINOR}")),
        "{err}"
    );
    assert_eq!(json_files(&b.results), 0);
}

#[test]
fn bad_host_lists_exit_2_naming_the_host() {
    let d = tmp();
    let a = agent(d.path(), "127.0.0.2", &[], &[]);
    let b = agent(d.path(), "127.0.0.3", &[], &[]);
    let both = format!("{},{}", a.addr, b.addr);
    // A port nothing listens on (an agent's, stopped).
    let gone = {
        let mut c = agent(d.path(), "127.0.0.4", &[], &[]);
        let addr = c.addr.clone();
        let _ = c.guard.kill();
        let _ = c.guard.wait();
        addr
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--hosts".into(), format!("{},{gone}", a.addr)],
            "cannot connect",
        ),
        (
            vec!["--hosts".into(), format!("{},{}", a.addr, a.addr)],
            "given twice",
        ),
        (
            vec![
                "--hosts".into(),
                both.clone(),
                "--target".into(),
                "/nonexistent-iorig-dir/f".into(),
                "--size".into(),
                "1m".into(),
            ],
            "/nonexistent-iorig-dir",
        ),
        (
            vec![
                "--hosts".into(),
                both.clone(),
                "--rate-per-host".into(),
                "x".into(),
            ],
            "--rate-per-host",
        ),
    ];
    for (args, needle) in cases {
        let mut full: Vec<&str> = vec!["--engine", "null", "--time", "1s"];
        if args.iter().any(|a| a == "--target") {
            full = vec!["--engine", "psync", "--time", "1s"];
        }
        full.extend(args.iter().map(String::as_str));
        let (code, err, doc) = controller(d.path(), &full);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
        assert!(doc.is_null());
    }
    // A hosts file with a typo names the key.
    let f = d.path().join("hosts.toml");
    std::fs::write(&f, format!("[[host]]\naddres = \"{}\"\n", a.addr)).unwrap();
    let (code, err, _) = controller(
        d.path(),
        &[
            "--engine",
            "null",
            "--time",
            "1s",
            "--hosts-file",
            f.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("addres"), "{err}");
    assert_eq!(
        json_files(&a.results) + json_files(&b.results),
        0,
        "nothing ran"
    );
}

#[test]
fn the_same_agent_under_two_addresses_is_refused() {
    let d = tmp();
    // An agent on 127.0.0.1 is reached as 127.0.0.1 and as localhost.
    let a = agent(d.path(), "127.0.0.1", &[], &[]);
    let port = a.addr.rsplit(':').next().unwrap();
    let (code, err, _) = controller(
        d.path(),
        &[
            "--engine",
            "null",
            "--time",
            "1s",
            "--hosts",
            &format!("127.0.0.1:{port},localhost:{port}"),
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("are the same agent"), "{err}");
}

#[test]
fn a_killed_agent_is_lost_and_the_others_go_on() {
    let d = tmp();
    let a = agent(d.path(), "127.0.0.2", &[], &[]);
    let mut b = agent(d.path(), "127.0.0.3", &[], &[]);
    let json = d.path().join("out.json");
    let mut cmd = iorig();
    cmd.args([
        "run",
        "--engine",
        "null",
        "--time",
        "8s",
        "--interval",
        "1s",
        "--rate",
        "2000",
        "--hosts",
    ])
    .arg(format!("{},{}", a.addr, b.addr))
    .arg("--json")
    .arg(&json)
    .arg("--no-db")
    .current_dir(d.path())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    let t0 = Instant::now();
    let mut c = guarded(&mut cmd);
    // Host b is killed once it has stored two intervals of its own.
    common::wait_for_intervals(&b.db, 1, 2, 60);
    let _ = b.guard.kill();
    let status = wait_child(&mut c, 60);
    assert!(t0.elapsed() < Duration::from_secs(40), "no hang");
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut c.stderr.take().unwrap(), &mut err);
    assert_eq!(status.code(), Some(1), "degraded: {err}");
    assert!(err.contains("lost at interval"), "{err}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let hosts = doc["hosts"].as_array().unwrap();
    assert_eq!(hosts[0]["status"], "ok");
    assert_eq!(hosts[1]["status"], "lost");
    let lost_at = hosts[1]["lost_at_interval"].as_u64().unwrap() as usize;
    assert!((1..=6).contains(&lost_at), "{lost_at}");
    // Every interval is there; after the loss the total is host a's alone.
    let intervals = doc["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 8, "{}", intervals.len());
    let la = local_doc(&a);
    for k in lost_at + 1..intervals.len() {
        assert_eq!(ops(&intervals[k]), ops(&la["intervals"][k]), "interval {k}");
    }
    for k in 0..lost_at {
        assert!(
            ops(&intervals[k]) > ops(&la["intervals"][k]),
            "interval {k} has both"
        );
    }
}

#[test]
fn agents_stop_on_their_own_when_the_controller_is_gone() {
    let d = tmp();
    let a = agent(d.path(), "127.0.0.2", &[], &[]);
    let b = agent(d.path(), "127.0.0.3", &[], &[]);
    let hosts = format!("{},{}", a.addr, b.addr);
    // A frozen controller keeps its connections open: only the lease can
    // stop the agents.
    let mut cmd = iorig();
    cmd.args([
        "run", "--engine", "null", "--time", "300s", "--rate", "1000", "--lease", "2s", "--no-db",
        "--hosts", &hosts,
    ])
    .current_dir(d.path())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let mut c = guarded(&mut cmd);
    // Frozen once both agents have stored two intervals (their run 1).
    for db in [&a.db, &b.db] {
        common::wait_for_intervals(db, 1, 2, 60);
    }
    common::signal(&c, 19); // SIGSTOP
    let t = Instant::now();
    while (json_files(&a.results) < 1 || json_files(&b.results) < 1)
        && t.elapsed() < Duration::from_secs(30)
    {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        json_files(&a.results),
        1,
        "agent a stopped within the lease"
    );
    assert_eq!(
        json_files(&b.results),
        1,
        "agent b stopped within the lease"
    );
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    let la = local_doc(&a);
    assert!(la["summary"]["duration_s"].as_f64().unwrap() < 60.0);
    assert_eq!(la["run"]["status"], "interrupted");
    common::signal(&c, 9);
    let _ = wait_child(&mut c, 10);

    // Ctrl-C on a controller stops every agent at once; the run is
    // interrupted (130) with the completed intervals kept.
    let json = d.path().join("int.json");
    let mut cmd = iorig();
    cmd.args([
        "run",
        "--engine",
        "null",
        "--time",
        "300s",
        "--interval",
        "1s",
        "--rate",
        "1000",
        "--no-db",
        "--hosts",
        &hosts,
        "--json",
    ])
    .arg(&json)
    .current_dir(d.path())
    .stdout(Stdio::null())
    .stderr(Stdio::piped());
    let mut c = guarded(&mut cmd);
    // Interrupted once both agents have stored two intervals of this run
    // (their run 2: run 1 was the frozen controller's).
    for db in [&a.db, &b.db] {
        common::wait_for_intervals(db, 2, 2, 60);
    }
    common::signal(&c, 2);
    let status = wait_child(&mut c, 30);
    let mut err = String::new();
    let _ = std::io::Read::read_to_string(&mut c.stderr.take().unwrap(), &mut err);
    assert_eq!(status.code(), Some(130), "{err}");
    assert_eq!(json_files(&a.results), 2);
    assert_eq!(json_files(&b.results), 2);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(doc["intervals"].as_array().unwrap().len() >= 2);
    assert_eq!(doc["run"]["status"], "interrupted");
}

#[test]
fn a_clock_offset_is_measured_and_the_start_corrected() {
    let d = tmp();
    let a = agent(
        d.path(),
        "127.0.0.2",
        &[],
        &[("IORIG_TEST_CLOCK_OFFSET_NS", "2000000000")],
    );
    let b = agent(
        d.path(),
        "127.0.0.3",
        &[],
        &[("IORIG_TEST_CLOCK_OFFSET_NS", "-1500000000")],
    );
    let t0 = Instant::now();
    let (code, err, doc) = controller(
        d.path(),
        &[
            "--engine",
            "null",
            "--time",
            "2s",
            "--interval",
            "1s",
            "--hosts",
            &format!("{},{}", a.addr, b.addr),
        ],
    );
    assert_eq!(code, 0, "{err}");
    // Uncorrected, one host would wait 1.5 s past the other.
    assert!(t0.elapsed() < Duration::from_secs(30));
    let hosts = doc["hosts"].as_array().unwrap();
    for (h, want) in hosts.iter().zip([2_000_000_000i64, -1_500_000_000]) {
        let off = h["clock_offset_ns"].as_i64().unwrap();
        let rtt = h["clock_rtt_ns"].as_u64().unwrap() as i64;
        // NTP's bound: the error is at most half the round trip (plus a
        // little for the clock reads themselves).
        assert!(
            (off - want).abs() <= rtt / 2 + 2_000_000,
            "{off} vs {want} (rtt {rtt})"
        );
        let skew = h["start_skew_ns"].as_i64().unwrap();
        // Coarse: uncorrected, the hosts would start 1.5 s or 2 s off.
        assert!(skew.abs() < 1_000_000_000, "started {skew} ns off");
    }
    // Both hosts delivered the same intervals.
    let la = local_doc(&a);
    let lb = local_doc(&b);
    assert_eq!(
        la["intervals"].as_array().unwrap().len(),
        lb["intervals"].as_array().unwrap().len()
    );
}

#[test]
fn a_multi_host_run_is_stored_with_each_hosts_part() {
    let d = tmp();
    let a = agent(d.path(), "127.0.0.2", &[], &[]);
    let b = agent(d.path(), "127.0.0.3", &[], &[]);
    let db = d.path().join("c.db");
    let out = common::run(
        &[
            "run",
            "--engine",
            "null",
            "--time",
            "3s",
            "--interval",
            "1s",
            "--rate-per-host",
            "1500",
            "--qd",
            "2",
            "--hosts",
            &format!("{},{}", a.addr, b.addr),
            "--db",
            db.to_str().unwrap(),
        ],
        d.path(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("rate: 1500 IOPS on each host (--rate-per-host), 3000 in total"),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&a.addr) && stdout.contains(&b.addr),
        "{stdout}"
    );

    // The store: each host's interval rows merge exactly into the total's.
    let store = iorig_store::Store::open_read_only(&db).unwrap();
    let step = &store.steps(iorig_store::RunId(1)).unwrap()[0];
    let hosts = store.step_hosts(step.id).unwrap();
    assert_eq!(hosts.len(), 2);
    let totals = store.intervals(step.id).unwrap();
    let per_host: Vec<_> = hosts
        .iter()
        .map(|h| store.host_intervals(step.id, &h.name).unwrap())
        .collect();
    let total_rows: Vec<_> = totals
        .iter()
        .filter(|r| r.op == iorig_store::Op::Total)
        .collect();
    assert!(total_rows.len() >= 3);
    for t in &total_rows {
        let mut merged = iorig_stats::LatencyHistogram::new();
        let mut ops = 0;
        for rows in &per_host {
            let r = rows
                .iter()
                .find(|r| r.seq == t.seq && r.op == iorig_store::Op::Total)
                .expect("each host has the interval");
            ops += r.ops;
            merged.merge(&r.histogram().unwrap().unwrap());
        }
        assert_eq!(t.ops, ops, "interval {}", t.seq);
        assert_eq!(
            t.histogram().unwrap().unwrap().summary(),
            merged.summary(),
            "interval {}",
            t.seq
        );
    }
    // Shown and exported per host.
    let show = common::ok(
        &["runs", "show", "1", "--db", db.to_str().unwrap()],
        d.path(),
    );
    assert!(show.contains("hosts of step 1"), "{show}");
    let csv = d.path().join("e.csv");
    common::ok(
        &[
            "export",
            "1",
            "--format",
            "csv",
            "--out",
            csv.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        d.path(),
    );
    let hosts_csv = std::fs::read_to_string(d.path().join("e.hosts.csv")).unwrap();
    assert_eq!(hosts_csv.lines().count(), 3, "{hosts_csv}");
    assert!(hosts_csv.contains(&a.addr));
    let json = d.path().join("e.json");
    common::ok(
        &[
            "export",
            "1",
            "--format",
            "json",
            "--out",
            json.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        d.path(),
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["steps"][0]["hosts"].as_array().unwrap().len(), 2);
    assert_eq!(doc["steps"][0]["hosts"][1]["status"], "ok");
    // The HTML report and a comparison show each host.
    let rep = d.path().join("rep");
    common::ok(
        &[
            "report",
            "1",
            "--db",
            db.to_str().unwrap(),
            "--out",
            rep.to_str().unwrap(),
        ],
        d.path(),
    );
    let page = std::fs::read_to_string(rep.join("index.html")).unwrap();
    assert!(page.contains(&a.addr) && page.contains("per host over time"));
    assert!(rep.join("step-0001-hosts.svg").exists());
    // The same step again (so it is matched), shorter.
    common::ok(
        &[
            "run",
            "--engine",
            "null",
            "--time",
            "2s",
            "--interval",
            "1s",
            "--rate-per-host",
            "1500",
            "--qd",
            "2",
            "--hosts",
            &format!("{},{}", a.addr, b.addr),
            "--db",
            db.to_str().unwrap(),
        ],
        d.path(),
    );
    let cmp = common::ok(
        &[
            "compare",
            "1",
            "2",
            "--db",
            db.to_str().unwrap(),
            "--out",
            d.path().join("cmp").to_str().unwrap(),
        ],
        d.path(),
    );
    // Each host in each run; in the second, its change against itself in
    // the first (beyond noise or, in brackets, within it).
    let host_lines: Vec<&str> = cmp
        .lines()
        .filter(|l| l.contains(&format!("host {}", b.addr)))
        .collect();
    assert_eq!(host_lines.len(), 2, "{cmp}");
    assert!(!host_lines[0].contains('%'), "{cmp}");
    assert!(host_lines[1].matches('%').count() >= 3, "{cmp}");
    let page = std::fs::read_to_string(d.path().join("cmp/index.html")).unwrap();
    assert!(
        page.contains("Each host against itself"),
        "per-host changes"
    );
}

/// A CA, an agent certificate for `ip` and a controller certificate, made
/// with openssl in `dir`; a second CA's controller certificate as a
/// stranger's. Returns None (the caller says it skips) without openssl.
fn certificates(dir: &Path, ip: &str) -> Option<()> {
    if !common::have("openssl") {
        return None;
    }
    let sh = |script: &str| {
        let st = std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap();
        assert!(st.success(), "{script}");
    };
    for ca in ["ca", "other-ca"] {
        sh(&format!(
            "openssl req -x509 -newkey rsa:2048 -nodes -keyout {ca}.key -out {ca}.pem -days 2 -subj /CN={ca}"
        ));
    }
    let issue = |name: &str, ca: &str, ext: &str| {
        sh(&format!(
            "openssl req -newkey rsa:2048 -nodes -keyout {name}.key -out {name}.csr -subj /CN={name} && \
             printf '{ext}' > {name}.ext && \
             openssl x509 -req -in {name}.csr -CA {ca}.pem -CAkey {ca}.key -CAcreateserial -out {name}.pem -days 2 -extfile {name}.ext"
        ));
    };
    issue(
        "agent",
        "ca",
        &format!("subjectAltName=IP:{ip}\\nextendedKeyUsage=serverAuth\\n"),
    );
    issue("controller", "ca", "extendedKeyUsage=clientAuth\\n");
    issue("stranger", "other-ca", "extendedKeyUsage=clientAuth\\n");
    Some(())
}

#[test]
fn mutual_tls_lets_in_only_a_controller_of_the_ca() {
    let d = tmp();
    if certificates(d.path(), "127.0.0.2").is_none() {
        panic!("openssl is needed to make the test's certificates (apt-get install openssl)");
    }
    let p = |f: &str| d.path().join(f).to_str().unwrap().to_owned();
    let a = agent(
        d.path(),
        "127.0.0.2",
        &[
            "--tls-cert",
            &p("agent.pem"),
            "--tls-key",
            &p("agent.key"),
            "--tls-ca",
            &p("ca.pem"),
        ],
        &[],
    );
    let base = ["--engine", "null", "--time", "1s", "--hosts", &a.addr];
    let with = |cert: &str, key: &str| -> Vec<String> {
        base.iter()
            .map(|s| s.to_string())
            .chain([
                "--tls-cert".into(),
                p(cert),
                "--tls-key".into(),
                p(key),
                "--tls-ca".into(),
                p("ca.pem"),
            ])
            .collect()
    };
    let args = with("controller.pem", "controller.key");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, err, doc) = controller(d.path(), &args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(doc["hosts"][0]["status"], "ok");
    // Without TLS, or with a certificate of another CA: refused, nothing run.
    let (code, err, _) = controller(d.path(), &base);
    assert_eq!(code, 2, "{err}");
    let args = with("stranger.pem", "stranger.key");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, err, _) = controller(d.path(), &args);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains(&a.addr), "{err}");
    assert_eq!(
        json_files(&a.results),
        1,
        "only the controller of the CA ran"
    );
    // Half the TLS flags is refused.
    let (code, err, _) = controller(d.path(), &[&base[..], &["--tls-ca", &p("ca.pem")]].concat());
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("needs all of"), "{err}");
}

#[test]
fn a_plan_and_quick_run_every_step_on_every_host() {
    let d = tmp();
    // Each agent works in a directory of its own: quick's scratch file is
    // ./iorig-scratch.dat on each host.
    let mk = |ip: &str| {
        let dir = d.path().join(format!("host-{ip}"));
        std::fs::create_dir_all(&dir).unwrap();
        agent(&dir, ip, &[], &[])
    };
    let a = mk("127.0.0.2");
    let b = mk("127.0.0.3");
    // A plan whose [hosts] table names the agents: the curve's rates come
    // from the measured total, and every step has both hosts.
    let plan = d.path().join("p.toml");
    std::fs::write(
        &plan,
        format!(
            "name = \"hp\"\n[hosts]\nlist = [\"{}\", \"{}\"]\n[defaults]\nengine = \"null\"\ntime = \"1s\"\ninterval = \"500ms\"\n[[steps]]\nkind = \"curve\"\nqd = 2\nrates_pct = [50]\n",
            a.addr, b.addr
        ),
    )
    .unwrap();
    let db = d.path().join("p.db");
    let dry = common::ok(
        &["plan", "run", plan.to_str().unwrap(), "--dry-run"],
        d.path(),
    );
    assert!(dry.contains("checked on each of 2 hosts"), "{dry}");
    let out = common::ok(
        &[
            "plan",
            "run",
            plan.to_str().unwrap(),
            "--db",
            db.to_str().unwrap(),
        ],
        d.path(),
    );
    // Each step's hosts in a table under its summary, not only the totals.
    let tables = out
        .lines()
        .filter(|l| l.trim_start().starts_with("host ") && l.contains("status"))
        .count();
    assert_eq!(tables, 2, "a host table per step: {out}");
    for h in [&a.addr, &b.addr] {
        assert_eq!(
            out.lines()
                .filter(|l| l.trim_start().starts_with(h.as_str()))
                .count(),
            2,
            "host {h} once per step: {out}"
        );
    }
    // The XLSX: the pivot-ready hosts sheet and a sheet per host, each
    // with its host's row of every step.
    common::ok(
        &[
            "export",
            "1",
            "--format",
            "xlsx",
            "-o",
            "run.xlsx",
            "--db",
            db.to_str().unwrap(),
        ],
        d.path(),
    );
    {
        use calamine::Reader;
        let mut book: calamine::Xlsx<_> =
            calamine::open_workbook(d.path().join("run.xlsx")).unwrap();
        let names = book.sheet_names();
        assert!(names.contains(&"hosts".to_owned()), "{names:?}");
        for agent in [&a, &b] {
            let sheet = format!("host {}", agent.addr.replace(':', "_"));
            assert!(names.contains(&sheet), "{sheet} not in {names:?}");
            let range = book.worksheet_range(&sheet).unwrap();
            // The header and one row per step, each this host's.
            assert_eq!(range.height(), 3, "{sheet}");
            let host_col = range
                .rows()
                .next()
                .unwrap()
                .iter()
                .position(|c| *c == "host")
                .unwrap();
            for row in range.rows().skip(1) {
                assert_eq!(row[host_col].to_string(), agent.addr, "{sheet}");
            }
        }
    }
    let store = iorig_store::Store::open_read_only(&db).unwrap();
    let steps = store.steps(iorig_store::RunId(1)).unwrap();
    assert_eq!(steps.len(), 2);
    let max_iops = steps[0].summary.as_ref().unwrap().io().unwrap().total.iops;
    let half = steps[1].params.as_ref().unwrap().rate_iops.unwrap();
    assert!((half - max_iops / 2.0).abs() < 1.0, "{half} vs {max_iops}");
    for s in &steps {
        let hosts = store.step_hosts(s.id).unwrap();
        assert_eq!(hosts.len(), 2, "step {}", s.index);
        // Each host was asked for half of the step's total rate: checked
        // from what each host was given, not from the rate it achieved,
        // which a busy machine misses at the null engine's millions of IOPS.
        if s.index == 1 {
            for h in &hosts {
                let asked = h
                    .findings
                    .iter()
                    .find_map(|f| match f {
                        iorig_result::Finding::Rate(r) => Some(r.requested_iops),
                        _ => None,
                    })
                    .unwrap_or_else(|| panic!("no rate finding on {}", h.name));
                assert!(
                    (asked - half / 2.0).abs() <= 1e-9 * half,
                    "{asked} vs {half}"
                );
                assert!(h.summary.total.ops > 0, "{} ran nothing", h.name);
            }
        }
    }

    // quick on both hosts: every step on each host's own scratch file.
    let out = common::ok(
        &[
            "quick",
            "--size",
            "16m",
            "--step-time",
            "500ms",
            "--no-db",
            "--hosts",
            &format!("{},{}", a.addr, b.addr),
        ],
        d.path(),
    );
    assert!(out.contains("five parameters:"), "{out}");
    for h in ["127.0.0.2", "127.0.0.3"] {
        let f = d.path().join(format!("host-{h}")).join("iorig-scratch.dat");
        assert!(f.exists(), "{}", f.display());
    }
    assert!(
        !d.path().join("iorig-scratch.dat").exists(),
        "nothing on the controller"
    );
}

#[test]
fn a_host_without_io_uring_is_refused_before_any_io() {
    let d = tmp();
    let a = agent(d.path(), "127.0.0.2", &[], &[]);
    let b = agent(
        d.path(),
        "127.0.0.3",
        &[],
        &[("IORIG_TEST_NO_IO_URING", "1")],
    );
    let hosts = format!("{},{}", a.addr, b.addr);
    // At qd 1 host b would fall back to psync: not the same test.
    let (code, err, _) = controller(
        d.path(),
        &[
            "--target", "t.dat", "--size", "1m", "--time", "1s", "--hosts", &hosts,
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("same engine") && err.contains(&b.addr),
        "{err}"
    );
    // Deeper queues need io_uring: host b refuses.
    let (code, err, _) = controller(
        d.path(),
        &[
            "--target", "t.dat", "--size", "1m", "--qd", "8", "--time", "1s", "--hosts", &hosts,
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&b.addr) && err.contains("io_uring is unavailable"),
        "{err}"
    );
    assert_eq!(
        json_files(&a.results) + json_files(&b.results),
        0,
        "nothing ran"
    );
    assert!(!d.path().join("t.dat").exists(), "nothing was created");
}

#[test]
fn a_killed_controller_stops_its_agents() {
    let d = tmp();
    let a = agent(d.path(), "127.0.0.2", &[], &[]);
    let mut cmd = iorig();
    cmd.args([
        "run", "--engine", "null", "--time", "300s", "--rate", "1000", "--lease", "60s", "--no-db",
        "--hosts", &a.addr,
    ])
    .current_dir(d.path())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let mut c = guarded(&mut cmd);
    // Killed once the agent's run has stored an interval.
    common::wait_for_intervals(&a.db, 1, 1, 60);
    common::signal(&c, 9);
    let _ = wait_child(&mut c, 10);
    let t = Instant::now();
    while json_files(&a.results) < 1 && t.elapsed() < Duration::from_secs(40) {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(json_files(&a.results), 1, "the agent stopped");
    // Its connection closed: well before its 60 s lease would have run out
    // (a coarse bound, far from either).
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    assert_eq!(local_doc(&a)["run"]["status"], "interrupted");
}

#[test]
fn allow_destroy_needs_the_agents_own_permission() {
    let d = tmp();
    let a = agent(d.path(), "127.0.0.2", &[], &[]);
    let (code, err, _) = controller(
        d.path(),
        &[
            "--engine",
            "null",
            "--time",
            "1s",
            "--allow-destroy",
            "--hosts",
            &a.addr,
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains(&a.addr) && err.contains("does not allow --allow-destroy"),
        "{err}"
    );
    assert_eq!(json_files(&a.results), 0);
    let b = agent(d.path(), "127.0.0.3", &["--allow-destroy"], &[]);
    let (code, err, _) = controller(
        d.path(),
        &[
            "--engine",
            "null",
            "--time",
            "1s",
            "--allow-destroy",
            "--hosts",
            &b.addr,
        ],
    );
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_file_system_workload_runs_on_each_hosts_own_tree() {
    let d = tmp();
    let a = agent(d.path(), "127.0.0.2", &[], &[]);
    let b = agent(d.path(), "127.0.0.3", &[], &[]);
    let (ta, tb) = (d.path().join("tree-a"), d.path().join("tree-b"));
    std::fs::create_dir_all(&ta).unwrap();
    std::fs::create_dir_all(&tb).unwrap();
    let hosts = d.path().join("hosts.toml");
    std::fs::write(
        &hosts,
        format!(
            "[[host]]\nname = \"a\"\naddress = \"{}\"\ntargets = [\"{}\"]\n[[host]]\nname = \"b\"\naddress = \"{}\"\ntargets = [\"{}\"]\n",
            a.addr,
            ta.display(),
            b.addr,
            tb.display()
        ),
    )
    .unwrap();
    let (code, err, doc) = controller(
        d.path(),
        &[
            "--anchor",
            ta.to_str().unwrap(),
            "--files",
            "10",
            "--file-size",
            "4k",
            "--ops",
            "stat:50,read:50",
            "--time",
            "2s",
            "--interval",
            "1s",
            "--hosts-file",
            hosts.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    // Each host built and used its own tree; the totals have both.
    for t in [&ta, &tb] {
        assert!(t.join(".iorig-tree").exists(), "{}", t.display());
    }
    let stat: u64 = doc["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["summary"]["fs_ops"]["stat"]["ops"].as_u64().unwrap())
        .sum();
    assert!(stat > 0);
    assert_eq!(doc["summary"]["fs_ops"]["stat"]["ops"].as_u64(), Some(stat));
}

#[test]
fn a_plan_run_on_hosts_is_not_resumed_here() {
    let d = tmp();
    let a = agent(d.path(), "127.0.0.2", &[], &[]);
    let plan = d.path().join("p.toml");
    std::fs::write(
        &plan,
        "name = \"hp\"\n[defaults]\nengine = \"null\"\ntime = \"30s\"\n[[steps]]\nqd = 1\n[[steps]]\nqd = 2\n",
    )
    .unwrap();
    let db = d.path().join("p.db");
    let mut cmd = iorig();
    cmd.args([
        "plan",
        "run",
        plan.to_str().unwrap(),
        "--db",
        db.to_str().unwrap(),
    ])
    .args(["--hosts", &a.addr])
    .current_dir(d.path())
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let mut c = guarded(&mut cmd);
    // Interrupted once the agent has stored an interval of the first step
    // (its run 1).
    common::wait_for_intervals(&a.db, 1, 1, 60);
    common::signal(&c, 2);
    assert_eq!(wait_child(&mut c, 30).code(), Some(130));
    let out = common::run(
        &["plan", "resume", "1", "--db", db.to_str().unwrap()],
        d.path(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ran on several hosts") && err.contains(&a.addr),
        "{err}"
    );
}

#[test]
fn fio_json_of_a_multi_host_run_has_client_stats_and_all_clients() {
    let d = tmp();
    let a = agent(d.path(), "127.0.0.2", &[], &[]);
    let b = agent(d.path(), "127.0.0.3", &[], &[]);
    let (code, err, doc) = controller(
        d.path(),
        &[
            "--engine",
            "null",
            "--time",
            "2s",
            "--rate",
            "2000",
            "--output-format",
            "fio-json",
            "--hosts",
            &hosts_arg(&[&a, &b]),
        ],
    );
    assert_eq!(code, 0, "{err}");
    // fio's client mode: no jobs array; each host, then "All clients".
    assert!(doc.get("jobs").is_none(), "{doc}");
    let clients = doc["client_stats"].as_array().unwrap();
    assert_eq!(clients.len(), 3);
    let ios = |c: &Value| c["read"]["total_ios"].as_u64().unwrap();
    for (c, agent) in clients.iter().zip([&a, &b]) {
        let port = agent.addr.rsplit(':').next().unwrap();
        assert_eq!(c["port"].to_string(), port, "{c}");
        assert!(c["hostname"].as_str().is_some_and(|h| !h.is_empty()));
        assert!(ios(c) > 0);
    }
    assert_eq!(clients[2]["jobname"], "All clients");
    assert_eq!(ios(&clients[2]), ios(&clients[0]) + ios(&clients[1]));
    // The total's percentiles come from the merged histograms: p99 of all
    // lies between the hosts' own.
    let p99 = |c: &Value| {
        c["read"]["clat_ns"]["percentile"]["99.000000"]
            .as_u64()
            .unwrap()
    };
    let (lo, hi) = (
        p99(&clients[0]).min(p99(&clients[1])),
        p99(&clients[0]).max(p99(&clients[1])),
    );
    assert!(
        (lo..=hi).contains(&p99(&clients[2])),
        "{lo} {hi} {}",
        p99(&clients[2])
    );
}

/// A parameter file of HCIBench's shape runs on two agents given with
/// `--hosts`, as a plan does: each host runs the file on its own storage
/// (each agent's relative luns in its own directory), and the run's total
/// is the sum of what each agent measured. Without agents the same file
/// names its hosts with `hd=` lines.
#[test]
fn an_hcibench_parameter_file_runs_on_two_agents() {
    let d = tmp();
    let dirs = [d.path().join("a"), d.path().join("b")];
    for dir in &dirs {
        std::fs::create_dir_all(dir).unwrap();
    }
    let agents = [
        agent(&dirs[0], "127.0.0.2", &[], &[]),
        agent(&dirs[1], "127.0.0.3", &[], &[]),
    ];
    let parm = d.path().join("hci.parm");
    std::fs::write(
        &parm,
        "*SD:    Storage Definition\n*WD:    Workload Definition\n*RD:    Run Definition\n*\n\
         debug=86\ndata_errors=10000\n\
         sd=sd1,lun=hci1.dat,openflags=o_direct,hitarea=0,range=(0,100),threads=2,size=16m\n\
         sd=sd2,lun=hci2.dat,openflags=o_direct,hitarea=0,range=(0,100),threads=2,size=16m\n\
         wd=wd1,sd=(sd1,sd2),xfersize=4k,rdpct=70,seekpct=100\n\
         rd=run1,wd=wd1,iorate=400,elapsed=2,warmup=0,interval=1\n",
    )
    .unwrap();
    let refs: Vec<&Agent> = agents.iter().collect();
    let list = hosts_arg(&refs);
    // A job file's JSON is made from the stored run: a store of its own.
    let db = d.path().join("parm.db");
    let run = |file: &Path, extra: &[&str]| {
        let mut args = vec![file.to_str().unwrap()];
        args.extend_from_slice(extra);
        controller_with_store(d.path(), &args, Some(&db))
    };
    let (code, err, doc) = run(&parm, &["--hosts", &list]);
    assert_eq!(code, 0, "{err}");
    // Each agent made its own luns and measured its share.
    for dir in &dirs {
        assert!(
            dir.join("hci1.dat").exists() && dir.join("hci2.dat").exists(),
            "{}",
            dir.display()
        );
    }
    let locals: Vec<Value> = agents.iter().map(local_doc).collect();
    let sum: u64 = locals.iter().map(|l| ops(&l["summary"])).sum();
    assert!(sum > 0);
    let total = doc.to_string();
    assert!(
        total.contains(&format!("\"ops\":{sum}")),
        "the total is the agents' sum {sum}: {total}"
    );
    // hd= lines name the same hosts from inside the file.
    let with_hd = d.path().join("hd.parm");
    let text = std::fs::read_to_string(&parm).unwrap();
    let hd: String = refs
        .iter()
        .enumerate()
        .map(|(i, a)| format!("hd=hd{i},system={}\n", a.addr))
        .collect();
    let text = text.replace(
        "data_errors=10000\n",
        &format!(
            "data_errors=10000\nhd=default,vdbench=/opt/vdbench,user=root,shell=vdbench\n{hd}"
        ),
    );
    std::fs::write(&with_hd, text).unwrap();
    let (code, err, _) = run(&with_hd, &[]);
    assert_eq!(code, 0, "{err}");
}

/// `agent --results-dir DIR` makes a missing DIR, as other output
/// directories are made: one new directory in one that exists; a missing
/// parent is refused in one line, nothing made.
#[test]
fn a_missing_results_dir_is_made_and_a_missing_parent_refused() {
    let dir = tmp();
    let d = dir.path();
    let out = common::run(
        &[
            "agent",
            "--listen",
            "127.0.0.1:0",
            "--results-dir",
            "no/such",
        ],
        d,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("--results-dir"), "{err}");
    assert!(!d.join("no").exists());

    let mut cmd = iorig();
    cmd.args(["agent", "--listen", "127.0.0.1:0", "--results-dir", "made"])
        .current_dir(d)
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut guard = guarded(&mut cmd);
    let line = first_line(&mut guard);
    assert!(line.contains("127.0.0.1:"), "{line}");
    assert!(
        d.join("made").is_dir(),
        "the results directory was not made"
    );
}

#[test]
fn the_cluster_plan_sizes_each_host_from_its_cache_and_its_targets() {
    let d = tmp();
    // Three agents with one, two and three targets each, in directories of
    // their own (the hosts file's relative targets are each host's).
    let agents: Vec<Agent> = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        .iter()
        .map(|ip| {
            let dir = d.path().join(format!("host-{ip}"));
            std::fs::create_dir_all(&dir).unwrap();
            agent(&dir, ip, &[], &[])
        })
        .collect();
    let mut hosts = String::new();
    for (i, a) in agents.iter().enumerate() {
        let targets: Vec<String> = (1..=i + 1).map(|t| format!("\"./t{t}.dat\"")).collect();
        hosts.push_str(&format!(
            "[[host]]\nname = \"n{}\"\naddress = \"{}\"\ntargets = [{}]\n",
            i + 1,
            a.addr,
            targets.join(", ")
        ));
    }
    std::fs::write(d.path().join("hosts.toml"), hosts).unwrap();
    let args = |extra: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = [
            "plan",
            "run",
            "--builtin",
            "cluster",
            "--hosts-file",
            "hosts.toml",
            "--size",
            "16m",
            "--cache-size",
            "8m",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        v.extend(extra.iter().map(|s| s.to_string()));
        v
    };
    let dry_args = args(&["--dry-run"]);
    let dry_refs: Vec<&str> = dry_args.iter().map(String::as_str).collect();
    let dry = common::ok(&dry_refs, d.path());
    assert!(
        dry.contains("sized from each host's targets and cache ("),
        "{dry}"
    );
    // `steps 2, 3: host n1: ...`: the steps that sized alike on a host.
    let line = |step: usize, host: usize| -> &str {
        dry.lines()
            .find(|l| {
                let Some((steps, rest)) = l.trim_start().split_once(": host ") else {
                    return false;
                };
                let steps = steps
                    .trim_start_matches("steps ")
                    .trim_start_matches("step ");
                rest.starts_with(&format!("n{host}: "))
                    && steps.split(", ").any(|s| s == step.to_string())
            })
            .unwrap_or_else(|| panic!("no sizing of step {step} on n{host}:\n{dry}"))
    };
    // Alike steps share a line: 5 per host (fill, fits random, fits
    // sequential, exceeds random, exceeds sequential).
    assert_eq!(
        dry.lines().filter(|l| l.contains(": host n")).count(),
        15,
        "{dry}"
    );
    for h in 1..=3usize {
        let mib = 16 * h;
        // 75 % of an 8 MiB cache fits: 6 MiB over the host's targets, 4
        // random workers per target.
        let fits = line(2, h);
        assert!(
            fits.contains(&format!("{h} target")) && fits.contains(&format!("{mib}.0 MiB")),
            "{fits}"
        );
        assert!(fits.contains("cache 8.00 MiB (given)"), "{fits}");
        assert!(
            fits.contains("working set 75% of cache = 6.00 MiB"),
            "{fits}"
        );
        assert!(
            fits.contains(&format!("{} workers (4 per target)", 4 * h)),
            "{fits}"
        );
        // Sequential steps: one worker per target.
        let seq = line(4, h);
        let workers = if h == 1 { "worker" } else { "workers" };
        assert!(
            seq.contains(&format!("{h} {workers} (1 per target)")),
            "{seq}"
        );
        // 400 % (32 MiB) does not fit one 16 MiB target: capped there.
        let exceeds = line(6, h);
        if h == 1 {
            assert!(
                exceeds.contains("= 16.0 MiB") && exceeds.contains("capped"),
                "{exceeds}"
            );
        } else {
            assert!(
                exceeds.contains("= 32.0 MiB") && !exceeds.contains("capped"),
                "{exceeds}"
            );
        }
    }
    // The dry run wrote nothing on any host.
    for a in &agents {
        let dir = a.results.parent().unwrap();
        assert!(!dir.join("t1.dat").exists(), "{}", dir.display());
    }

    // Run: 9 steps on 3 hosts, each host as sized.
    let run_args = args(&["--step-time", "300ms", "--db", "c.db", "-q"]);
    let run_refs: Vec<&str> = run_args.iter().map(String::as_str).collect();
    common::ok(&run_refs, d.path());
    let store = iorig_store::Store::open_read_only(&d.path().join("c.db")).unwrap();
    let steps = store.steps(iorig_store::RunId(1)).unwrap();
    assert_eq!(steps.len(), 9);
    for s in &steps {
        assert_eq!(store.step_hosts(s.id).unwrap().len(), 3, "step {}", s.index);
    }
    // Each agent's own store: run k is step k; step 2 (fits, random) and
    // step 6 (exceeds) as that host sized them.
    for (i, a) in agents.iter().enumerate() {
        let own = iorig_store::Store::open_read_only(&a.db).unwrap();
        let params = |run: i64| {
            own.steps(iorig_store::RunId(run)).unwrap()[0]
                .params
                .clone()
                .unwrap()
        };
        let targets = i as u32 + 1;
        let capacity = f64::from(16 * targets);
        let fits = params(2);
        assert_eq!(fits.threads, 4 * targets, "n{targets}");
        assert!(
            (fits.range_end_pct - 6.0 / capacity * 100.0).abs() < 1e-9,
            "{}",
            fits.range_end_pct
        );
        let exceeds = params(6);
        let want = (32.0 / capacity * 100.0).min(100.0);
        assert!(
            (exceeds.range_end_pct - want).abs() < 1e-9,
            "{}",
            exceeds.range_end_pct
        );
        assert_eq!(params(4).threads, targets);
    }
    // The XLSX: a sheet per host, with that host's row of every step.
    common::ok(
        &[
            "export", "1", "--format", "xlsx", "-o", "c.xlsx", "--db", "c.db",
        ],
        d.path(),
    );
    {
        use calamine::Reader;
        let mut book: calamine::Xlsx<_> = calamine::open_workbook(d.path().join("c.xlsx")).unwrap();
        for n in ["n1", "n2", "n3"] {
            let range = book.worksheet_range(&format!("host {n}")).unwrap();
            assert_eq!(range.height(), 10, "host {n}: a header and 9 steps");
            let first = range.rows().next().unwrap();
            let col = first.iter().position(|c| *c == "host").unwrap();
            assert!(range.rows().skip(1).all(|r| r[col] == n), "host {n}");
        }
    }
    // The JSON export: each host's machine with its part of every step.
    common::ok(
        &[
            "export", "1", "--format", "json", "-o", "c.json", "--db", "c.db",
        ],
        d.path(),
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("c.json")).unwrap()).unwrap();
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    for h in doc["steps"][1]["hosts"].as_array().unwrap() {
        assert_eq!(h["system"]["kernel"], kernel.trim(), "{h}");
        assert!(h["system"]["mem_total_bytes"].as_u64().unwrap() > 0, "{h}");
    }
    // The report has each host's machine besides its figures.
    common::ok(&["report", "1", "--db", "c.db", "-o", "rep"], d.path());
    let html = std::fs::read_to_string(d.path().join("rep/index.html")).unwrap();
    let at = html
        .find("id=\"host-systems\"")
        .expect("a Hosts facts table");
    let table = &html[at..at + html[at..].find("</table>").unwrap()];
    for n in ["n1", "n2", "n3"] {
        let row = table
            .split("<tr>")
            .find(|r| r.contains(&format!("<td>{n}</td>")))
            .unwrap_or_else(|| panic!("no row of {n} in {table}"));
        assert!(row.contains(kernel.trim()), "{n}'s kernel: {row}");
    }
}
