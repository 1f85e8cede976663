//! Protects `iorig serve`: the runs page filters and pages the store, a
//! run's page carries the report's charts and its labels (escaped, and
//! editable, but not from another site), compare takes 2 to 8 runs, the
//! API answers the documents `--json` writes and the downloads are the
//! files `export` writes, a run recorded by another process shows up live
//! over Server-Sent Events, bad requests get 400/404 and bad stores exit 2;
//! with a token every page and API call needs it (401), and off loopback a
//! token is required.
//!
//! Every server is started by the test on 127.0.0.1 with a port the kernel
//! picks (it prints where) and is killed when its guard drops.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::{guarded, iorig, ok, tmp, Guard};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// An HTTP/1.1 request: method, path, extra header lines, body; the
/// status, the headers and the body back.
fn http(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[&str],
    body: &str,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n");
    for h in headers {
        req.push_str(h);
        req.push_str("\r\n");
    }
    if !body.is_empty() {
        req.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

fn get(addr: &str, path: &str) -> (u16, String) {
    let (status, _, body) = http(addr, "GET", path, &[], "");
    (status, body)
}

fn get_json(addr: &str, path: &str) -> Value {
    let (status, body) = get(addr, path);
    assert_eq!(status, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

/// Starts `iorig serve ARGS` in `dir` and waits for its address.
fn serve(dir: &Path, args: &[&str]) -> (Guard, String) {
    let mut all = vec!["serve"];
    all.extend_from_slice(args);
    let (guard, mut addrs) = common::start_server(dir, &all, 1);
    (guard, addrs.remove(0))
}

/// Two runs and a plan of two steps in `dir/iorig.db`.
fn make_runs(dir: &Path) {
    for (fw, note) in [("1.2", "<script>alert(1)</script>"), ("1.3", "plain")] {
        let l1 = format!("fw={fw}");
        let l2 = format!("note={note}");
        ok(
            &common::null_run("1s", "250ms", &["--label", &l1, "--label", &l2]),
            dir,
        );
    }
    std::fs::write(
        dir.join("p.toml"),
        "size = '16m'\n[defaults]\nengine = 'null'\ntime = '500ms'\ninterval = '100ms'\n[[steps]]\nqd = [1, 4]\n",
    )
    .unwrap();
    ok(&["plan", "run", "p.toml", "-q"], dir);
}

#[test]
fn pages_api_and_downloads_over_a_store() {
    let dir = tmp();
    let d = dir.path();
    make_runs(d);
    let (_serve, addr) = serve(d, &["--listen", "127.0.0.1:0"]);

    // The runs page: every run, the label escaped.
    let (status, page) = get(&addr, "/");
    assert_eq!(status, 200);
    for id in ["/runs/1\"", "/runs/2\"", "/runs/3\""] {
        assert!(page.contains(id), "{id}");
    }
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!page.contains("<script>alert"));
    // Filters.
    let (_, only) = get(&addr, "/?label=fw=1.3");
    assert!(only.contains("/runs/2\"") && !only.contains("/runs/1\""));
    let (_, plans) = get(&addr, "/?kind=plan&status=ok");
    assert!(plans.contains("/runs/3\"") && !plans.contains("/runs/2\""));
    let (_, paged) = get(&addr, "/?limit=1&offset=1");
    assert!(
        paged.contains("/runs/2\"") && !paged.contains("/runs/3\""),
        "{paged}"
    );
    assert!(paged.contains("older") && paged.contains("newer"));
    for bad in [
        "/?status=bogus",
        "/?limit=x",
        "/?limit=0",
        "/?nope=1",
        "/?since=yesterday",
    ] {
        let (status, body) = get(&addr, bad);
        assert_eq!(status, 400, "{bad}: {body}");
    }

    // A run's page: the report's charts, the bar, the labels.
    let (status, run) = get(&addr, "/runs/3");
    assert_eq!(status, 200);
    assert!(run.matches("<svg").count() >= 2, "charts on the run page");
    assert!(run.contains("/runs/3/download/run.xlsx"));
    // A step's intervals.
    let (status, step) = get(&addr, "/runs/3/steps/1");
    assert_eq!(status, 200);
    assert!(
        step.contains("id=\"intervals\"") && step.matches("<tr>").count() >= 5,
        "{step}"
    );
    assert!(run.contains("/runs/3/steps/1\""));
    assert_eq!(get(&addr, "/runs/3/steps/9").0, 404);
    let (status, run1) = get(&addr, "/runs/1");
    assert_eq!(status, 200);
    assert!(
        !run1.contains("<script>alert"),
        "a label is escaped on the run's page"
    );
    let (status, missing) = get(&addr, "/runs/999");
    assert_eq!(status, 404);
    assert!(missing.contains("no run 999"));
    assert_eq!(get(&addr, "/runs/abc").0, 400);
    assert_eq!(get(&addr, "/nowhere").0, 404);

    // Compare: 2 to 8 runs.
    let (status, cmp) = get(&addr, "/compare?runs=1,2");
    assert_eq!(status, 200);
    assert!(cmp.contains("<svg") || cmp.contains("<table"));
    assert_eq!(get(&addr, "/compare?r=1&r=2").0, 200);
    assert_eq!(get(&addr, "/compare?runs=1").0, 400);
    assert_eq!(get(&addr, "/compare?runs=1,999").0, 404);
    assert_eq!(get(&addr, "/plans").0, 200);

    // The API: the documents the CLI writes.
    let runs = get_json(&addr, "/api/runs?label=fw");
    assert_eq!(runs["total"], 2);
    let shown = get_json(&addr, "/api/runs/3");
    let cli: Value = serde_json::from_str(&ok(&["runs", "show", "3", "--json"], d)).unwrap();
    assert_eq!(shown, cli);
    let exported = get_json(&addr, "/api/runs/3/export");
    ok(&["export", "3", "--format", "json", "--out", "e.json"], d);
    let file: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("e.json")).unwrap()).unwrap();
    assert_eq!(exported, file);
    let (status, err) = get(&addr, "/api/runs/999");
    assert_eq!(status, 404);
    assert!(serde_json::from_str::<Value>(&err).unwrap()["error"].is_string());
    let rows = get_json(&addr, "/api/runs/3/intervals?after_step=0&after_seq=-1");
    assert!(rows
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["step"] == 0 || r["step"] == 1));

    // Downloads are the files export writes.
    let (status, head, body) = http(&addr, "GET", "/runs/3/download/steps.csv", &[], "");
    assert_eq!(status, 200);
    assert!(head.contains("attachment"));
    ok(&["export", "3", "--format", "csv", "--out", "s.csv"], d);
    assert_eq!(body, std::fs::read_to_string(d.join("s.csv")).unwrap());
    let (status, _, xlsx) = http(&addr, "GET", "/runs/3/download/run.xlsx", &[], "");
    assert_eq!(status, 200);
    assert!(xlsx.starts_with("PK"));
    assert_eq!(get(&addr, "/runs/3/download/secrets").0, 404);

    // Labels from the page and the API; not from another site.
    let form = "key=site&value=lab+2&action=set";
    let ct = "Content-Type: application/x-www-form-urlencoded";
    let (status, head, _) = http(&addr, "POST", "/runs/2/labels", &[ct], form);
    assert_eq!(status, 303, "{head}");
    assert_eq!(
        get_json(&addr, "/api/runs/2")["run"]["labels"]["site"],
        "lab 2"
    );
    let (status, _, _) = http(
        &addr,
        "POST",
        "/runs/2/labels",
        &[ct, "Origin: http://evil.example"],
        "key=x&value=y",
    );
    assert_eq!(status, 403);
    let (status, _, _) = http(
        &addr,
        "POST",
        "/runs/2/labels",
        &[ct, "Sec-Fetch-Site: cross-site"],
        "key=x&value=y",
    );
    assert_eq!(status, 403);
    let js = "Content-Type: application/json";
    let (status, _, body) = http(
        &addr,
        "POST",
        "/api/runs/2/labels",
        &[js],
        r#"{"key":"bad","value":"a\nb"}"#,
    );
    assert_eq!(status, 400, "{body}");
    let (status, _, body) = http(
        &addr,
        "POST",
        "/api/runs/2/labels",
        &[js],
        r#"{"key":"site","action":"remove"}"#,
    );
    assert_eq!(status, 200, "{body}");
    assert!(serde_json::from_str::<Value>(&body)
        .unwrap()
        .get("site")
        .is_none());
}

#[test]
fn a_run_recorded_elsewhere_shows_up_live() {
    let dir = tmp();
    let d = dir.path();
    make_runs(d);
    let (_serve, addr) = serve(d, &["--listen", "127.0.0.1:0"]);
    let mut run = iorig();
    run.args(common::null_run("3s", "250ms", &["--db", "iorig.db"]))
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _run = guarded(&mut run);
    // It appears as run 4, running.
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let runs = get_json(&addr, "/api/runs?status=running");
        if runs["total"] == 1 {
            assert_eq!(runs["runs"][0]["id"], 4);
            break;
        }
        assert!(Instant::now() < deadline, "run 4 never showed up running");
        std::thread::sleep(Duration::from_millis(50));
    }
    let (status, plans) = get(&addr, "/plans");
    assert_eq!(status, 200);
    assert!(plans.contains("/runs/4/live"));
    // A single run's length is known: elapsed of its 3 s, and a time left.
    assert!(plans.contains(" / 3.00 s<"), "no total on /plans: {plans}");
    let eta = plans
        .split("<td class=\"num\">")
        .nth(3)
        .and_then(|c| c.split('<').next())
        .unwrap_or_default();
    assert_ne!(eta, "-", "no ETA on /plans: {plans}");
    assert_eq!(get(&addr, "/runs/4/live").0, 200);
    // The event stream: intervals as they come, then the end.
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET /api/runs/4/events HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\nConnection: close\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    assert!(text.contains("text/event-stream"), "{text}");
    let intervals = text.matches("event: interval").count();
    assert!(intervals >= 10, "{intervals} intervals:\n{text}");
    assert!(text.contains("event: end\ndata: ok"), "{text}");
    let ids: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("id: "))
        .collect();
    assert_eq!(ids.first(), Some(&"0:0"));
    // Resuming after the last seen gives nothing new.
    let last = ids.last().unwrap();
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "GET /api/runs/4/events HTTP/1.1\r\nHost: {addr}\r\nLast-Event-ID: {last}\r\nConnection: close\r\n\r\n").unwrap();
    let mut again = String::new();
    s.read_to_string(&mut again).unwrap();
    assert_eq!(again.matches("event: interval").count(), 0, "{again}");
    assert!(again.contains("event: end"));
}

#[test]
fn a_token_guards_every_page_and_call() {
    let dir = tmp();
    let d = dir.path();
    make_runs(d);
    std::fs::write(d.join("token"), "serve-test-token-0123456789\n").unwrap();
    let (_serve, addr) = serve(d, &["--listen", "127.0.0.1:0", "--token-file", "token"]);
    for path in [
        "/",
        "/runs/1",
        "/api/runs",
        "/api/runs/1/events",
        "/plans",
        "/runs/1/download/run.json",
    ] {
        let (status, head, _) = http(&addr, "GET", path, &[], "");
        assert_eq!(status, 401, "{path}");
        assert!(
            head.to_ascii_lowercase()
                .contains("www-authenticate: bearer"),
            "{path}"
        );
    }
    let bearer = "Authorization: Bearer serve-test-token-0123456789";
    assert_eq!(http(&addr, "GET", "/api/runs", &[bearer], "").0, 200);
    assert_eq!(
        http(
            &addr,
            "GET",
            "/api/runs",
            &["Authorization: Bearer wrong-token-0123456789"],
            ""
        )
        .0,
        401
    );
    // The sign-in page sets the cookie a browser then sends.
    assert_eq!(get(&addr, "/login").0, 200);
    let ct = "Content-Type: application/x-www-form-urlencoded";
    let (status, _, _) = http(&addr, "POST", "/login", &[ct], "token=nope");
    assert_eq!(status, 401);
    let (status, head, _) = http(
        &addr,
        "POST",
        "/login",
        &[ct],
        "token=serve-test-token-0123456789",
    );
    assert_eq!(status, 303);
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: "))
        .expect("a cookie");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
    let pair = cookie.split(';').next().unwrap();
    assert_eq!(
        http(&addr, "GET", "/", &[&format!("Cookie: {pair}")], "").0,
        200
    );
}

#[test]
fn bad_stores_and_addresses_exit_2() {
    let dir = tmp();
    let d = dir.path();
    make_runs(d);
    // A store of a newer iorig.
    std::fs::copy(d.join("iorig.db"), d.join("newer.db")).unwrap();
    let c = rusqlite::Connection::open(d.join("newer.db")).unwrap();
    c.pragma_update(None, "user_version", 99).unwrap();
    drop(c);
    for (args, says) in [
        (vec!["serve", "--listen", "0.0.0.0:0"], "token"),
        (vec!["serve", "--db", "missing.db"], "no result store"),
        (
            vec!["serve", "--db", "newer.db", "--listen", "127.0.0.1:0"],
            "99",
        ),
        (
            vec![
                "serve",
                "--db",
                "postgres://ann:pw@127.0.0.1:1/x",
                "--listen",
                "127.0.0.1:0",
            ],
            "cannot connect",
        ),
        (vec!["serve", "--listen", "nowhere"], "nowhere"),
    ] {
        let out = iorig().args(&args).current_dir(d).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
    assert!(!d.join("missing.db").exists());
}

/// Starts `iorig serve --metrics-listen` and gives both addresses.
fn serve_with_metrics(dir: &Path) -> (Guard, String, String) {
    let (guard, addrs) = common::start_server(
        dir,
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
        ],
        2,
    );
    (guard, addrs[0].clone(), addrs[1].clone())
}

/// The store's metrics while a run is in progress.
fn store_metrics_during_a_run(dir: &Path) -> String {
    let (_serve, _, metrics) = serve_with_metrics(dir);
    let mut run = iorig();
    run.args(common::null_run("20s", "200ms", &["--label", "array=a1"]))
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _run = guarded(&mut run);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, text) = get(&metrics, "/metrics");
        assert_eq!(status, 200, "{text}");
        if text.contains("iorig_iops{run=\"4\"") {
            return text;
        }
        assert!(Instant::now() < deadline, "no figures of run 4:\n{text}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn serve_metrics_show_the_runs_in_progress() {
    let dir = tmp();
    make_runs(dir.path());
    let text = store_metrics_during_a_run(dir.path());
    assert!(
        text.contains("iorig_store_runs{status=\"running\"} 1"),
        "{text}"
    );
    assert!(text.contains("iorig_store_runs{status=\"ok\"} 3"), "{text}");
    assert!(
        text.contains("iorig_iops{run=\"4\",label_array=\"a1\"}"),
        "{text}"
    );
    assert!(text.contains("percentile=\"99.9\""), "{text}");
}

#[test]
#[ignore = "needs promtool (Debian's prometheus package): .ci/run installs it and runs this with --ignored"]
fn promtool_accepts_serve_metrics() {
    let dir = tmp();
    make_runs(dir.path());
    let text = store_metrics_during_a_run(dir.path());
    common::promtool_check(&text);
}

/// The POSIX locks process `pid` holds on the file at `path`, as the
/// kernel lists them (`/proc/locks`).
fn posix_locks(pid: u32, path: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    let ino = std::fs::metadata(path).unwrap().ino();
    std::fs::read_to_string("/proc/locks")
        .unwrap()
        .lines()
        .filter(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            f.get(1) == Some(&"POSIX")
                && f.get(4) == Some(&pid.to_string().as_str())
                && f.get(5).and_then(|d| d.rsplit(':').next()) == Some(ino.to_string().as_str())
        })
        .map(str::to_owned)
        .collect()
}

/// Another SQLite client (the sqlite3 shell, a script, a backup job) that
/// opens the served store and closes it must not checkpoint and delete the
/// log under `serve`: serve holds its shared lock on the file for as long
/// as it runs. On Linux, closing any descriptor of a file drops every POSIX
/// lock the process holds on it, so serve must never open the store outside
/// SQLite (it used to peek at the header that way, and the next client to
/// close deleted the log, taking later edits with it). The other clients
/// here are this test process (rusqlite) and Python's sqlite3, whose
/// SQLite checkpoints and deletes the log on close whenever it can.
#[test]
fn another_client_closing_the_store_leaves_serve_its_log() {
    let dir = tmp();
    let d = dir.path();
    ok(&common::null_run("300ms", "100ms", &[]), d);
    let (serve_guard, addr) = serve(d, &["--listen", "127.0.0.1:0"]);
    let db = d.join("iorig.db");
    let wal = d.join("iorig.db-wal");
    let edit = |i: usize| {
        let body = format!(r#"{{"key":"k{i}","value":"v{i}"}}"#);
        let (status, _, answer) = http(
            &addr,
            "POST",
            "/api/runs/1/labels",
            &["Content-Type: application/json"],
            &body,
        );
        assert_eq!(status, 200, "edit {i}: {answer}");
    };
    let foreign_clients = || {
        let c = rusqlite::Connection::open(&db).unwrap();
        let runs: i64 = c
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        assert_eq!(runs, 1);
        c.close().unwrap();
        let python = std::env::var("IORIG_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
        let out = std::process::Command::new(&python)
            .args([
                "-c",
                "import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); print(c.execute('SELECT count(*) FROM runs').fetchone()[0]); c.close()",
            ])
            .arg(&db)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "1");
    };
    for i in 0..5 {
        edit(i);
    }
    assert!(wal.exists(), "serve works in WAL mode");
    let held = posix_locks(serve_guard.0.id(), &db);
    assert!(
        !held.is_empty(),
        "serve holds no lock on the store file, so any other client may delete its log"
    );
    foreign_clients();
    assert!(
        wal.exists(),
        "another client's close checkpointed and deleted the log under serve"
    );
    for i in 5..10 {
        edit(i);
    }
    foreign_clients();
    assert!(wal.exists());
    let labels = get_json(&addr, "/api/runs/1")["run"]["labels"].clone();
    for i in 0..10 {
        assert_eq!(labels[format!("k{i}")], format!("v{i}"), "{labels}");
    }
    drop(serve_guard);
    let c = rusqlite::Connection::open(&db).unwrap();
    let check: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let stored: i64 = c
        .query_row(
            "SELECT count(*) FROM run_labels WHERE run_id = 1 AND key LIKE 'k%'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(stored, 10, "every edit serve answered 200 is in the file");
}

/// DNS rebinding: a web page the user visits can point a name of its own at
/// 127.0.0.1 and have the browser send requests there with that name as
/// `Host`. Without a token, serve (pages, API, label edits and its
/// `--metrics-listen`) answers only its own address or `localhost` with its
/// port, and 421 to any other name; with a token, the token decides.
#[test]
fn other_names_for_the_server_are_refused_without_a_token() {
    let dir = tmp();
    let d = dir.path();
    make_runs(d);
    let mut all = vec![
        "serve",
        "--listen",
        "127.0.0.1:0",
        "--metrics-listen",
        "127.0.0.1:0",
    ];
    let (guard, addrs) = common::start_server(d, &all, 2);
    let host =
        |addr: &str, name: &str| format!("Host: {name}:{}", addr.rsplit(':').next().unwrap());
    let ask = |addr: &str, method: &str, path: &str, extra: &[&str], body: &str| {
        // `http` sends its own Host first; a second one would be a bad
        // request, so these requests are written here.
        let mut s = TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut req = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
        for h in extra {
            req.push_str(h);
            req.push_str("\r\n");
        }
        req.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
        s.write_all(req.as_bytes()).unwrap();
        let mut raw = String::new();
        s.read_to_string(&mut raw).unwrap();
        raw.split_whitespace()
            .nth(1)
            .and_then(|c| c.parse::<u16>().ok())
            .unwrap_or(0)
    };
    let (web, metrics) = (addrs[0].as_str(), addrs[1].as_str());
    let js = "Content-Type: application/json";
    let edit = r#"{"key":"via","value":"rebinding"}"#;
    for addr in [web, metrics] {
        let path = if addr == web { "/api/runs" } else { "/metrics" };
        assert_eq!(ask(addr, "GET", path, &[&format!("Host: {addr}")], ""), 200);
        assert_eq!(ask(addr, "GET", path, &[&host(addr, "localhost")], ""), 200);
        assert_eq!(
            ask(addr, "GET", path, &[&host(addr, "rebind.example")], ""),
            421
        );
        assert_eq!(ask(addr, "GET", path, &["Host: rebind.example"], ""), 421);
        assert_eq!(ask(addr, "GET", path, &[], ""), 421, "no Host at all");
    }
    assert_eq!(
        ask(
            web,
            "POST",
            "/api/runs/1/labels",
            &[&host(web, "rebind.example"), js],
            edit
        ),
        421
    );
    assert_eq!(
        get_json(web, "/api/runs/1")["run"]["labels"]["via"],
        Value::Null,
        "the refused edit was not made"
    );
    drop(guard);

    // With a token, the token decides, whatever the name.
    std::fs::write(d.join("token"), "0123456789abcdef0123\n").unwrap();
    all.extend(["--token-file", "token"]);
    let (_guard, addrs) = common::start_server(d, &all, 2);
    let web = addrs[0].as_str();
    let other = host(web, "array-lab.example");
    assert_eq!(ask(web, "GET", "/api/runs", &[&other], ""), 401);
    assert_eq!(
        ask(
            web,
            "GET",
            "/api/runs",
            &[&other, "Authorization: Bearer 0123456789abcdef0123"],
            ""
        ),
        200
    );
}

/// A long step's intervals come a page at a time: 2,000 a page, with
/// links between pages and where the page stands.
#[test]
fn a_long_step_s_intervals_are_paged() {
    use iorig_store::{IntervalRow, NewRun, NewStep, Op, RunKind, StepRole, Store};
    let dir = tmp();
    let d = dir.path();
    let store = Store::open(&d.join("iorig.db")).unwrap();
    let run = store
        .create_run(&NewRun {
            kind: RunKind::Run,
            plan_json: None,
            host: "h".into(),
            tool_version: "0".into(),
            command_line: "iorig run".into(),
            labels: Default::default(),
            started: "2026-01-01T00:00:00Z".into(),
        })
        .unwrap();
    let step = store
        .upsert_step(
            run,
            &NewStep {
                index: 0,
                name: "soak",
                role: StepRole::Run,
                params: None,
            },
        )
        .unwrap();
    let rows: Vec<IntervalRow> = (0..5000u64)
        .flat_map(|seq| {
            [Op::Read, Op::Write, Op::Total].map(|op| {
                let figures = iorig_stats::OpSummary::default();
                IntervalRow::from_op(seq, (seq + 1) as f64, 1.0, false, op, &figures)
            })
        })
        .collect();
    store.add_intervals(step, &rows).unwrap();
    drop(store);
    let (_serve, addr) = serve(d, &["--listen", "127.0.0.1:0"]);

    let (status, first) = get(&addr, "/runs/1/steps/1");
    assert_eq!(status, 200, "{first}");
    assert!(first.contains("intervals 0–1,999 of 5,000"), "{first}");
    assert!(first.contains("page 1 of 3"));
    assert!(first.contains("href=\"/runs/1/steps/1?page=2\""));
    assert!(first.contains("href=\"/runs/1/steps/1?page=3\">last"));
    // One row per interval of the page, and the header.
    assert_eq!(first.matches("<tr>").count(), 2001);
    let (status, last) = get(&addr, "/runs/1/steps/1?page=3");
    assert_eq!(status, 200);
    assert!(last.contains("intervals 4,000–4,999 of 5,000"), "{last}");
    assert_eq!(last.matches("<tr>").count(), 1001);
    assert!(last.contains("href=\"/runs/1/steps/1?page=2\">prev"));
    assert!(first.len() < 1_000_000 && last.len() < 1_000_000);
    assert_eq!(get(&addr, "/runs/1/steps/1?page=4").0, 404);
    assert_eq!(get(&addr, "/runs/1/steps/1?page=0").0, 404);
    assert_eq!(get(&addr, "/runs/1/steps/1?page=x").0, 400);
}
