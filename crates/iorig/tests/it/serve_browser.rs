//! Protects what people see of `iorig serve` in a browser: the runs page, a
//! run's page and a comparison load in headless Chromium with no console
//! errors and with their charts drawn; the live view of a run recorded by
//! another process fills its charts as the intervals come (a multi-host
//! run's with a line and a row per host beside the total); a server with a
//! token answers a browser without it with 401. Each page is screenshot
//! into the test's output directory (`target/tmp/serve-browser/`).
//!
//! Chromium is driven through chromedriver's WebDriver API on a loopback
//! port this test picks, and every process it starts is killed when its
//! guard drops. Needs chromium and chromium-driver: `#[ignore]`d with that
//! reason; `.ci/run` installs them and runs it with `--ignored` as root.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use crate::common::{guarded, iorig, ok, tmp, Guard};
use base64::Engine as _;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A JSON request to chromedriver.
fn wd(port: u16, method: &str, path: &str, body: Option<&Value>) -> Value {
    let addr = format!("127.0.0.1:{port}");
    let mut s = TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // The answer's length comes in its headers; chromedriver may keep the
    // connection open after it.
    let mut r = BufReader::new(s);
    let mut length = 0usize;
    let mut head = String::new();
    loop {
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        head.push_str(&line);
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap();
            }
        }
    }
    let mut body = vec![0u8; length];
    r.read_exact(&mut body).unwrap();
    serde_json::from_slice(&body)
        .unwrap_or_else(|e| panic!("{e}: {head}{}", String::from_utf8_lossy(&body)))
}

/// chromedriver and every Chromium process it starts: a process group of
/// their own, killed whole on drop (a test that fails before the session
/// is closed leaves no browser behind).
struct DriverGroup(std::process::Child);

impl Drop for DriverGroup {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.0.id())])
            .status();
        let _ = self.0.wait();
    }
}

/// A browser session; deleted and its driver's group killed on drop.
struct Browser {
    port: u16,
    session: String,
    _driver: DriverGroup,
}

impl Browser {
    fn start(profile: &Path) -> Browser {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = DriverGroup(
            Command::new("chromedriver")
                .arg(format!("--port={port}"))
                .process_group(0)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": "/usr/bin/chromium",
                "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--disable-background-networking", "--disable-component-update",
                         "--disable-sync", "--no-first-run", "--window-size=1280,1600",
                         format!("--user-data-dir={}", profile.display())]
            },
            "goog:loggingPrefs": {"browser": "ALL"}
        }}});
        let v = wd(port, "POST", "/session", Some(&caps));
        let session = v["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {v}"))
            .to_owned();
        Browser {
            port,
            session,
            _driver: driver,
        }
    }

    fn open(&self, url: &str) {
        let v = wd(
            self.port,
            "POST",
            &format!("/session/{}/url", self.session),
            Some(&json!({"url": url})),
        );
        assert!(v["value"].is_null(), "{url}: {v}");
    }

    fn eval(&self, script: &str) -> Value {
        let v = wd(
            self.port,
            "POST",
            &format!("/session/{}/execute/sync", self.session),
            Some(&json!({"script": script, "args": []})),
        );
        v["value"].clone()
    }

    /// The console's errors since the last call.
    fn errors(&self) -> Vec<String> {
        let v = wd(
            self.port,
            "POST",
            &format!("/session/{}/se/log", self.session),
            Some(&json!({"type": "browser"})),
        );
        v["value"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|e| e["level"] == "SEVERE")
                    .map(|e| e["message"].to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn screenshot(&self, to: &Path) {
        let v = wd(
            self.port,
            "GET",
            &format!("/session/{}/screenshot", self.session),
            None,
        );
        let png = base64::engine::general_purpose::STANDARD
            .decode(v["value"].as_str().unwrap())
            .unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        std::fs::write(to, png).unwrap();
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(|| {
            wd(
                self.port,
                "DELETE",
                &format!("/session/{}", self.session),
                None,
            )
        });
    }
}

fn serve(dir: &Path, args: &[&str]) -> (Guard, String) {
    let mut all = vec!["serve"];
    all.extend_from_slice(args);
    let (guard, mut addrs) = common::start_server(dir, &all, 1);
    (guard, addrs.remove(0))
}

fn shots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("serve-browser");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
#[ignore = "needs chromium and chromium-driver (apt-get install chromium chromium-driver); CI runs it as root"]
fn pages_and_the_live_view_work_in_chromium() {
    let dir = tmp();
    let d = dir.path();
    for fw in ["1.2", "1.3"] {
        let l = format!("fw={fw}");
        ok(
            &common::null_run(
                "2s",
                "200ms",
                &["--label", &l, "--label", "note=<script>x</script>"],
            ),
            d,
        );
    }
    std::fs::write(
        d.join("p.toml"),
        "size = '16m'\n[defaults]\nengine = 'null'\ntime = '500ms'\ninterval = '100ms'\n[[steps]]\nqd = [1, 2, 4]\nbs = ['4k', '64k']\n",
    )
    .unwrap();
    ok(&["plan", "run", "p.toml", "-q"], d);
    let (_serve, addr) = serve(d, &["--listen", "127.0.0.1:0"]);
    let profile = tmp();
    let b = Browser::start(profile.path());
    let out = shots();

    for (path, name, min_charts) in [
        ("/", "runs", 0),
        ("/runs/3", "run", 2),
        ("/compare?runs=1,2", "compare", 1),
        ("/plans", "plans", 0),
    ] {
        b.open(&format!("http://{addr}{path}"));
        let charts = b.eval("return document.querySelectorAll('svg.chart').length;");
        assert!(
            charts.as_u64().unwrap() >= min_charts,
            "{path}: {charts} charts"
        );
        // Charts with data: drawn paths in them.
        if min_charts > 0 {
            let drawn = b.eval("return document.querySelectorAll('svg.chart path, svg.chart polyline, svg.chart rect').length;");
            assert!(drawn.as_u64().unwrap() > 10, "{path}: {drawn} shapes");
        }
        // The label is text, not markup.
        if path == "/" {
            let scripts = b.eval("return document.querySelectorAll('script').length;");
            assert_eq!(scripts, 0, "no script on the runs page");
            let shown = b.eval("return document.body.textContent.includes('<script>x</script>');");
            assert_eq!(shown, true);
        }
        b.screenshot(&out.join(format!("{name}.png")));
        assert_eq!(b.errors(), Vec::<String>::new(), "{path}");
    }

    // A run recorded by another process, watched live.
    let mut run = iorig();
    run.args(common::null_run("6s", "250ms", &["--label", "live=yes"]))
        .current_dir(d)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let _run = guarded(&mut run);
    let deadline = Instant::now() + Duration::from_secs(20);
    while serde_json::from_str::<Value>(&ok(&["runs", "list", "--json"], d))
        .unwrap()
        .as_array()
        .unwrap()
        .len()
        < 4
    {
        assert!(Instant::now() < deadline, "the live run never appeared");
        std::thread::sleep(Duration::from_millis(100));
    }
    b.open(&format!("http://{addr}/runs/4/live"));
    let deadline = Instant::now() + Duration::from_secs(30);
    let points = loop {
        let n = b
            .eval("var l = document.querySelector('#iops polyline'); return l ? Number(l.getAttribute('data-points')) : 0;")
            .as_u64()
            .unwrap_or(0);
        if n >= 8 {
            break n;
        }
        assert!(Instant::now() < deadline, "only {n} intervals drawn");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(points >= 8);
    let lat_lines = b.eval("return document.querySelectorAll('#lat polyline').length;");
    assert_eq!(lat_lines, 3);
    let iops = b.eval("return document.querySelector('#now td:nth-child(3)').textContent;");
    assert_ne!(iops, "-");
    // Both axes carry numbers and their units; the clock says how far of
    // the run's known 6 s it is and what is left.
    let ticks = b.eval("return [document.querySelectorAll('#iops .tick.x').length, document.querySelectorAll('#iops .tick.y').length, document.querySelector('#iops .title.x').textContent, document.querySelector('#lat .title.y').textContent];");
    assert_eq!(ticks[0], 5, "{ticks}");
    assert_eq!(ticks[1], 5, "{ticks}");
    assert!(ticks[2].as_str().unwrap().contains("(s)"), "{ticks}");
    assert!(ticks[3].as_str().unwrap().contains("ms"), "{ticks}");
    let clock = b.eval("return document.getElementById('clock').textContent;");
    let clock = clock.as_str().unwrap_or_default();
    assert!(
        (clock.contains("of 6 s") && clock.contains("ETA")) || clock.starts_with("ended"),
        "clock: {clock}"
    );
    b.screenshot(&out.join("live.png"));
    assert_eq!(b.errors(), Vec::<String>::new(), "live view");

    // A token-protected server: 401 for a browser without it.
    std::fs::write(d.join("token"), "browser-test-token-0123456789\n").unwrap();
    let (_locked, locked) = serve(d, &["--listen", "127.0.0.1:0", "--token-file", "token"]);
    let status = {
        let mut s = TcpStream::connect(&locked).unwrap();
        write!(
            s,
            "GET / HTTP/1.1\r\nHost: {locked}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        s.read_to_string(&mut text).unwrap();
        text.split_whitespace().nth(1).unwrap_or("").to_owned()
    };
    assert_eq!(status, "401");
    b.open(&format!("http://{locked}/"));
    let title = b.eval("return document.title;");
    assert_eq!(title, "iorig: sign in");
    b.screenshot(&out.join("login.png"));
}

#[test]
#[ignore = "needs chromium and chromium-driver (apt-get install chromium chromium-driver); CI runs it as root"]
fn the_live_view_draws_each_host_beside_the_total() {
    let dir = tmp();
    let d = dir.path();
    let agents: Vec<(Guard, String)> = ["127.0.0.2", "127.0.0.3", "127.0.0.4"]
        .iter()
        .map(|ip| common::start_agent(d, ip))
        .collect();
    let hosts: Vec<&str> = agents.iter().map(|(_, a)| a.as_str()).collect();
    let mut run = iorig();
    run.args([
        "run",
        "--hosts",
        &hosts.join(","),
        "--engine",
        "null",
        "--rate",
        "3000",
        "--time",
        "8s",
        "--interval",
        "250ms",
        "-q",
    ])
    .current_dir(d)
    .stdout(Stdio::null())
    .stderr(Stdio::null());
    let _run = guarded(&mut run);
    let deadline = Instant::now() + Duration::from_secs(20);
    // The store exists once the controller's run entered it.
    while !common::run(&["runs", "list", "--json"], d).status.success() {
        assert!(Instant::now() < deadline, "the run never appeared");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_serve, addr) = serve(d, &["--listen", "127.0.0.1:0"]);
    let profile = tmp();
    let b = Browser::start(profile.path());
    b.open(&format!("http://{addr}/runs/1/live"));
    // Every host's dashed line (IOPS and p99) with points, and its row.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let drawn = b.eval(
            "return Array.from(document.querySelectorAll('#iops polyline.host')).map(function (l) { return Number(l.getAttribute('data-points')); });",
        );
        let drawn: Vec<u64> = drawn
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_u64).collect())
            .unwrap_or_default();
        if drawn.len() == 3 && drawn.iter().all(|n| *n >= 4) {
            break;
        }
        assert!(Instant::now() < deadline, "host lines drawn: {drawn:?}");
        std::thread::sleep(Duration::from_millis(200));
    }
    let seen = b.eval(
        "return [document.querySelectorAll('#iops polyline.iops').length, document.querySelectorAll('#lat polyline.host').length, Array.from(document.querySelectorAll('#iops polyline.host')).map(function (l) { return l.getAttribute('data-host'); }), Array.from(document.querySelectorAll('#hosts-now tr td:first-child')).map(function (c) { return c.textContent; }), Array.from(document.querySelectorAll('#iops text.legend')).map(function (t) { return t.textContent; }), document.getElementById('hosts-figures').hidden];",
    );
    assert_eq!(seen[0], 1, "the total's line: {seen}");
    assert_eq!(seen[1], 3, "a p99 line per host: {seen}");
    for h in &hosts {
        for k in [2, 3, 4] {
            assert!(
                seen[k].as_array().unwrap().iter().any(|v| v == h),
                "{h} missing from {}: {seen}",
                ["", "", "lines", "rows", "legend"][k]
            );
        }
    }
    assert_eq!(seen[5], false, "the hosts' table is shown");
    // Both axes still carry numbers with the hosts' lines on them.
    let ticks = b.eval("return [document.querySelectorAll('#iops .tick.x').length, document.querySelectorAll('#iops .tick.y').length];");
    assert_eq!(ticks, json!([5, 5]));
    b.screenshot(&shots().join("live-hosts.png"));
    assert_eq!(b.errors(), Vec::<String>::new(), "live view of hosts");

    // Once it ended, its report: each host's row and line in the step, and
    // each host's machine.
    let deadline = Instant::now() + Duration::from_secs(30);
    while b.eval("return document.getElementById('status').textContent;") == "running" {
        assert!(Instant::now() < deadline, "the run never ended");
        std::thread::sleep(Duration::from_millis(200));
    }
    b.open(&format!("http://{addr}/runs/1"));
    let seen = b.eval(
        "return [document.querySelectorAll('table.hosts tbody tr').length, document.querySelectorAll('table.host-systems tbody tr').length, Array.from(document.querySelectorAll('table.host-systems tbody tr td:first-child')).map(function (c) { return c.textContent; }), document.body.textContent.includes('per host over time')];",
    );
    assert_eq!(seen[0], 3, "a row per host in the step: {seen}");
    assert_eq!(seen[1], 3, "a machine per host: {seen}");
    for h in &hosts {
        assert!(
            seen[2].as_array().unwrap().iter().any(|v| v == h),
            "{h}: {seen}"
        );
    }
    assert_eq!(seen[3], true, "the hosts' chart: {seen}");
    b.eval("document.querySelector('table.hosts').scrollIntoView(); return null;");
    b.screenshot(&shots().join("run-hosts.png"));
    assert_eq!(b.errors(), Vec::<String>::new(), "report of hosts");
}
