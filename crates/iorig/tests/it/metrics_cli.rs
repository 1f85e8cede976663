//! Protects `--metrics-listen` on `run`, `plan run` and `agent`: a
//! Prometheus endpoint that serves the run's counters while it runs (they
//! grow, they carry the run's id and labels, escaped), that promtool
//! accepts, that answers 401 without the token when one is set, and that
//! is refused off loopback without a token (exit 2, nothing written); an
//! agent's series carry the controller's run id and the host's name there,
//! and the Grafana dashboard under deploy/ queries only metrics and labels
//! that a real exposition has (promtool parses every query).
//!
//! Every server is started by the test on 127.0.0.1 with a port the kernel
//! picks (the command says which on stderr) and stops with its process.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::{guarded, iorig, tmp, Guard};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// A plan of two 20 s steps on the null engine: long enough to scrape.
const PLAN: &str = "size = '16m'\n[defaults]\nengine = 'null'\ntime = '20s'\ninterval = '200ms'\n[[steps]]\nqd = [1, 2]\n";

/// `GET path` over HTTP/1.1: the status code and the body.
fn get(addr: &str, path: &str, token: Option<&str>) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (status, body.to_owned())
}

/// `GET /metrics` naming the server `host` (a rebinding page's name, say):
/// the status code.
fn status_as(addr: &str, host: &str, token: Option<&str>) -> u16 {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let auth = token.map_or(String::new(), |t| format!("Authorization: Bearer {t}\r\n"));
    write!(
        s,
        "GET /metrics HTTP/1.1\r\nHost: {host}\r\n{auth}Connection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Starts `iorig ARGS` and waits for the line naming its metrics address;
/// returns the process, that address, and the lines before it.
fn start(dir: &Path, args: &[&str], stream_is_stdout: bool) -> (Guard, String, Vec<String>) {
    let mut cmd = iorig();
    cmd.args(args).current_dir(dir);
    if stream_is_stdout {
        cmd.stdout(Stdio::piped()).stderr(Stdio::null());
    } else {
        cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    }
    let mut guard = guarded(&mut cmd);
    let out: Box<dyn Read + Send> = if stream_is_stdout {
        Box::new(guard.0.stdout.take().unwrap())
    } else {
        Box::new(guard.0.stderr.take().unwrap())
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut before = Vec::new();
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            if let Some(rest) = line.split("metrics at http://").nth(1) {
                let _ = tx.send((rest.trim_end_matches("/metrics").to_owned(), before));
                return;
            }
            before.push(line);
        }
    });
    let (addr, before) = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the command names its metrics address");
    (guard, addr, before)
}

/// An agent on `ip` serving its metrics there: the process, the metrics'
/// address and the agent's own.
fn agent_with_metrics(dir: &Path, ip: &str) -> (Guard, String, String) {
    let (agent, metrics, before) = start(
        dir,
        &[
            "agent",
            "--listen",
            &format!("{ip}:0"),
            "--metrics-listen",
            &format!("{ip}:0"),
        ],
        true,
    );
    // "iorig agent VERSION listening on ADDR (...)".
    let addr = before
        .iter()
        .find_map(|l| l.split("listening on ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .expect("the agent's address")
        .to_owned();
    (agent, metrics, addr)
}

/// The value of the first sample whose line starts with `prefix`.
fn value(text: &str, prefix: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no {prefix} in\n{text}"))
}

/// Scrapes until `ok` holds (at most 20 s).
fn scrape_until(addr: &str, token: Option<&str>, ok: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, body) = get(addr, "/metrics", token);
        assert_eq!(status, 200, "{body}");
        if ok(&body) {
            return body;
        }
        assert!(Instant::now() < deadline, "never:\n{body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_run_serves_growing_counters_with_its_labels() {
    let dir = tmp();
    let (mut run, addr, _) = start(
        dir.path(),
        &common::null_run(
            "30s",
            "200ms",
            &[
                "--no-db",
                "--metrics-listen",
                "127.0.0.1:0",
                "--label",
                "fw=1.2",
                "--label",
                "note=<script>\"x\\",
            ],
        ),
        false,
    );
    let ops = r#"iorig_ops_total{run="#;
    let first = scrape_until(&addr, None, |t| t.contains(ops) && value(t, ops) > 0.0);
    let second = scrape_until(&addr, None, |t| value(t, ops) > value(&first, ops));
    for l in [
        "label_fw=\"1.2\"",
        r#"label_note="<script>\"x\\""#,
        "op=\"read\"",
        "target=\"./iorig-scratch.dat\"",
    ] {
        assert!(second.contains(l), "{l} in\n{second}");
    }
    assert_eq!(value(&second, "iorig_running"), 1.0);
    assert_eq!(get(&addr, "/other", None).0, 404);
    // Without a token, only this server's own names are answered (no DNS
    // rebinding): a page at another name gets 421.
    let port = addr.rsplit(':').next().unwrap();
    assert_eq!(status_as(&addr, &format!("localhost:{port}"), None), 200);
    assert_eq!(
        status_as(&addr, &format!("rebind.example:{port}"), None),
        421
    );
    assert_eq!(status_as(&addr, "rebind.example", None), 421);
    // Stopping the run stops the server.
    common::signal(&run.0, 2);
    common::wait_child(&mut run.0, 20);
    assert!(TcpStream::connect(&addr).is_err());
}

#[test]
fn a_plan_serves_its_progress_under_its_store_id_and_a_token_is_required_when_set() {
    let dir = tmp();
    std::fs::write(dir.path().join("token"), "0123456789abcdef0123\n").unwrap();
    std::fs::write(dir.path().join("p.toml"), PLAN).unwrap();
    let (_plan, addr, _) = start(
        dir.path(),
        &[
            "plan",
            "run",
            "p.toml",
            "-q",
            "--metrics-listen",
            "127.0.0.1:0",
            "--metrics-token-file",
            "token",
        ],
        false,
    );
    let (status, body) = get(&addr, "/metrics", None);
    assert_eq!(status, 401, "{body}");
    assert_eq!(get(&addr, "/metrics", Some("0123456789abcdef0124")).0, 401);
    let t = scrape_until(&addr, Some("0123456789abcdef0123"), |t| {
        t.contains("iorig_ops_total{")
    });
    assert_eq!(value(&t, "iorig_plan_steps"), 2.0);
    // With a token the token is the guard, whatever name the server goes by.
    assert_eq!(status_as(&addr, "array-lab.example:9100", None), 401);
    assert_eq!(
        status_as(
            &addr,
            "array-lab.example:9100",
            Some("0123456789abcdef0123")
        ),
        200
    );
    assert!(t.contains("iorig_ops_total{run=\"1\","), "{t}");
}

#[test]
fn off_loopback_without_a_token_is_refused_before_anything_is_written() {
    let dir = tmp();
    for args in [
        vec![
            "run",
            "--engine",
            "null",
            "--time",
            "1s",
            "--metrics-listen",
            "0.0.0.0:0",
        ],
        vec!["agent", "--metrics-listen", "0.0.0.0:0"],
        vec![
            "run",
            "--engine",
            "null",
            "--time",
            "1s",
            "--metrics-listen",
            "nowhere",
        ],
        vec![
            "run",
            "--engine",
            "null",
            "--time",
            "1s",
            "--metrics-token-file",
            "t",
        ],
    ] {
        let out = iorig()
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    let out = iorig()
        .args([
            "run",
            "--engine",
            "null",
            "--time",
            "1s",
            "--metrics-listen",
            "0.0.0.0:0",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("--metrics-token-file"));
    assert_eq!(common::names(dir.path()), Vec::<String>::new());
}

#[test]
fn an_agent_keeps_serving_the_figures_of_its_last_run() {
    let dir = tmp();
    let (_agent, metrics, agent_addr) = agent_with_metrics(dir.path(), "127.0.0.1");
    let (status, first) = get(&metrics, "/metrics", None);
    assert_eq!(status, 200);
    assert!(!first.contains("iorig_ops_total{"), "{first}");
    let out = iorig()
        .args([
            "run",
            "--hosts",
            &agent_addr,
            "--engine",
            "null",
            "--size",
            "16m",
            "--time",
            "1s",
            "--no-db",
            "-q",
        ])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let t = scrape_until(&metrics, None, |t| {
        t.contains("iorig_running") && value(t, "iorig_running") == 0.0
    });
    assert!(value(&t, "iorig_ops_total{") > 0.0, "{t}");
}

/// Every query of the shipped Grafana dashboard (panels and variables).
fn dashboard_queries() -> Vec<String> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../deploy/grafana/iorig-dashboard.json");
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut out: Vec<String> = d["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .map(|t| t["expr"].as_str().unwrap().to_owned())
        .collect();
    for v in d["templating"]["list"].as_array().unwrap() {
        if let Some(q) = v["query"]["query"].as_str() {
            out.push(q.to_owned());
        }
    }
    assert!(out.len() >= 10, "{out:?}");
    out
}

/// The metric names (`iorig_...`) and label names a query uses.
fn names_in(query: &str) -> (Vec<String>, Vec<String>) {
    let word = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let metrics = query
        .match_indices("iorig_")
        .map(|(i, _)| word(&query[i..]))
        .collect();
    let mut labels = Vec::new();
    // Matchers inside braces, and `by (...)` lists.
    for part in query.split('{').skip(1) {
        let inner = part.split('}').next().unwrap_or("");
        for m in inner.split(',') {
            let name = word(m.trim());
            if !name.is_empty() {
                labels.push(name);
            }
        }
    }
    for part in query.split("by (").skip(1) {
        for l in part.split(')').next().unwrap_or("").split(',') {
            labels.push(word(l.trim()));
        }
    }
    (metrics, labels)
}

#[test]
fn an_agents_series_join_the_controllers_and_the_dashboard_asks_for_nothing_else() {
    let dir = tmp();
    // Three agents, each on an address of its own.
    let agents: Vec<(Guard, String, String)> = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        .iter()
        .map(|ip| agent_with_metrics(dir.path(), ip))
        .collect();
    let addrs: Vec<&str> = agents.iter().map(|a| a.2.as_str()).collect();
    // A plan (its progress is the dashboard's too) from a controller with
    // a store (its run is 1), serving its own metrics.
    std::fs::write(
        dir.path().join("p.toml"),
        "size = '16m'\n[defaults]\nengine = 'null'\ntime = '20s'\ninterval = '200ms'\nread = 70\n[[steps]]\nqd = 2\n",
    )
    .unwrap();
    let (_ctl, ctl_metrics, _) = start(
        dir.path(),
        &[
            "plan",
            "run",
            "p.toml",
            "--hosts",
            &addrs.join(","),
            "--db",
            "c.db",
            "-q",
            "--metrics-listen",
            "127.0.0.1:0",
        ],
        false,
    );
    let host = |addr: &str| format!("host=\"{addr}\"");
    // Once an interval came: the plan's progress gauges and every host's.
    let ctl = scrape_until(&ctl_metrics, None, |t| {
        t.contains("iorig_latency_seconds_bucket{")
            && addrs.iter().all(|a| t.contains(&host(a)))
            && t.contains("\niorig_plan_eta_seconds{")
    });
    let mut exposed_texts = vec![ctl.clone()];
    for (_, metrics, addr) in &agents {
        assert!(
            ctl.contains(&format!("iorig_ops_total{{run=\"1\",{},", host(addr))),
            "{ctl}"
        );
        // Each agent's own series: the controller's run id and this
        // host's name there, on every line (the agent's own id never
        // shows).
        let agent = scrape_until(metrics, None, |t| t.contains("iorig_ops_total{"));
        let samples: Vec<&str> = agent
            .lines()
            .filter(|l| l.starts_with("iorig_") && l.contains('{'))
            .collect();
        assert!(!samples.is_empty(), "{agent}");
        for l in &samples {
            assert!(
                l.contains(&format!("{{run=\"1\",{}", host(addr))),
                "an agent series without the controller's run and its host: {l}"
            );
        }
        exposed_texts.push(agent);
    }
    // Every metric and label the dashboard queries is in one of them.
    let exposed = |name: &str| {
        exposed_texts.iter().any(|t| {
            t.lines()
                .any(|l| l.starts_with(&format!("{name}{{")) || l.starts_with(&format!("{name} ")))
        })
    };
    for q in dashboard_queries() {
        let (metrics, labels) = names_in(&q);
        assert!(!metrics.is_empty(), "a query of no iorig metric: {q}");
        for m in metrics {
            assert!(
                exposed(&m),
                "the dashboard asks for {m}, which iorig does not expose: {q}"
            );
        }
        for l in labels {
            // Prometheus adds job; le is every histogram bucket's.
            let known = l == "job" || exposed_texts.iter().any(|t| t.contains(&format!("{l}=\"")));
            assert!(
                known,
                "the dashboard asks for label {l}, which no series has: {q}"
            );
        }
    }
}

#[test]
#[ignore = "needs promtool (Debian's prometheus package): .ci/run installs it and runs this with --ignored"]
fn promtool_parses_every_dashboard_query() {
    // Each query as a recording rule, its variables as Grafana fills them
    // for "All" and a one-minute rate window.
    let dir = tmp();
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    for (i, q) in dashboard_queries().iter().enumerate() {
        let expr = q
            .replace("$__rate_interval", "1m")
            .replace("$job", ".*")
            .replace("$run", ".*");
        let expr = if expr.starts_with("label_values(") {
            // A variable's query is Grafana's, not PromQL: its metric and
            // matchers are.
            expr.trim_start_matches("label_values(")
                .rsplit_once(',')
                .unwrap()
                .0
                .to_owned()
        } else {
            expr
        };
        rules.push_str(&format!(
            "      - record: dashboard:q{i}\n        expr: '{}'\n",
            expr.replace('\'', "''")
        ));
    }
    let file = dir.path().join("rules.yml");
    std::fs::write(&file, &rules).unwrap();
    let out = std::process::Command::new("promtool")
        .args(["check", "rules"])
        .arg(&file)
        .output()
        .expect("promtool");
    assert!(
        out.status.success(),
        "promtool: {}{}\n{rules}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs promtool (Debian's prometheus package): .ci/run installs it and runs this with --ignored"]
fn promtool_accepts_the_exposition() {
    let dir = tmp();
    std::fs::write(dir.path().join("p.toml"), PLAN).unwrap();
    let (_plan, addr, _) = start(
        dir.path(),
        &[
            "plan",
            "run",
            "p.toml",
            "-q",
            "--metrics-listen",
            "127.0.0.1:0",
            "--label",
            "a b=c\"d",
        ],
        false,
    );
    let text = scrape_until(&addr, None, |t| t.contains("iorig_latency_seconds_bucket{"));
    common::promtool_check(&text);
}
