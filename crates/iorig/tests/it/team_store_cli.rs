//! Protects the team store from the command line: `--db postgres://...`
//! records runs and plans that `runs`, `report` and `export` read back;
//! several processes write one at once, whole; `runs push` copies local
//! runs up with new ids and adds nothing on a second push; a server that
//! cannot be reached is bad input (exit 2, one line, no password, nothing
//! written), and no password is stored with a run.
//!
//! The server is real: `iorig-testpg` starts one for each test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use iorig_testpg::PgServer;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

fn iorig(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iorig"))
        .env_remove("IORIG_DB")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap()
}

fn ok(dir: &Path, args: &[&str]) -> String {
    let out = iorig(dir, args);
    assert!(
        out.status.success(),
        "iorig {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn json(dir: &Path, args: &[&str]) -> Value {
    serde_json::from_str(&ok(dir, args)).unwrap()
}

/// `iorig export RUN --format json` from a store.
fn export(dir: &Path, run: &str, db: &str) -> Value {
    ok(
        dir,
        &[
            "export", run, "--format", "json", "--out", "e.json", "--db", db,
        ],
    );
    serde_json::from_str(&std::fs::read_to_string(dir.join("e.json")).unwrap()).unwrap()
}

/// A URL with a password the server does not need (trust), to see where
/// it shows.
fn with_password(url: &str) -> String {
    url.replacen("postgres://postgres@", "postgres://postgres:s3cret-pw@", 1)
}

const RUN: &[&str] = &[
    "run", "--engine", "null", "--size", "16m", "--time", "1s", "-q",
];

/// `runs show --json` without what differs between stores: the ids.
fn without_ids(mut v: Value) -> Value {
    v["run"]["id"] = Value::Null;
    if let Some(steps) = v["steps"].as_array_mut() {
        for s in steps {
            s["id"] = Value::Null;
            s["run_id"] = Value::Null;
        }
    }
    v
}

#[test]
#[ignore = "starts a PostgreSQL server: run by .ci/run with --ignored, where PostgreSQL is installed"]
fn runs_recorded_in_postgres_read_back_and_two_writers_at_once_stay_whole() {
    let server = PgServer::start().unwrap();
    let url = with_password(&server.new_database().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();

    // Two runs at once into the same new database: one makes the schema,
    // both are recorded whole.
    // (threads, so that the two processes overlap)
    let handles: Vec<_> = (0..2)
        .map(|i| {
            let (url, d) = (url.clone(), d.to_path_buf());
            std::thread::spawn(move || {
                let mut args: Vec<String> = RUN.iter().map(|s| s.to_string()).collect();
                args.extend([
                    "--interval".into(),
                    "250ms".into(),
                    "--db".into(),
                    url,
                    "--label".into(),
                    format!("writer=w{i}"),
                    "--target".into(),
                    format!("w{i}.dat"),
                ]);
                let a: Vec<&str> = args.iter().map(String::as_str).collect();
                ok(&d, &a);
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let runs = json(d, &["runs", "list", "--json", "--db", &url]);
    let runs = runs.as_array().unwrap();
    let writers: Vec<&str> = runs
        .iter()
        .filter_map(|r| r["labels"]["writer"].as_str())
        .filter(|w| w.starts_with('w'))
        .collect();
    assert_eq!(writers.len(), 2, "{runs:?}");
    for r in runs.iter().filter(|r| {
        r["labels"]["writer"]
            .as_str()
            .is_some_and(|w| w.starts_with('w'))
    }) {
        assert_eq!(r["status"], "ok");
        let id = r["id"].to_string();
        let doc = export(d, &id, &url);
        let intervals = doc["steps"][0]["intervals"].as_array().unwrap();
        assert!(
            intervals.len() >= 3,
            "run {id}: {} intervals",
            intervals.len()
        );
        assert_eq!(doc["steps"][0]["status"], "ok");
    }

    // No password with the run, in the store or anywhere the CLI shows.
    let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
    for row in c.query("SELECT command_line FROM iorig.runs", &[]).unwrap() {
        let line: String = row.get(0);
        assert!(!line.contains("s3cret-pw"), "{line}");
        assert!(line.contains("postgres:***@"), "{line}");
    }

    // A plan, a report and a step table from the database.
    std::fs::write(
        d.join("p.toml"),
        "size = '16m'\n[defaults]\nengine = 'null'\ntime = '1s'\n[[steps]]\nqd = [1, 4]\n",
    )
    .unwrap();
    ok(d, &["plan", "run", "p.toml", "--db", &url, "-q"]);
    let list = json(d, &["runs", "list", "--json", "--db", &url]);
    let plan = list.as_array().unwrap().last().unwrap()["id"].to_string();
    let shown = json(d, &["runs", "show", &plan, "--json", "--db", &url]);
    assert_eq!(shown["steps"].as_array().unwrap().len(), 2);
    ok(d, &["report", &plan, "--out", "rep", "--db", &url]);
    assert!(std::fs::read_to_string(d.join("rep/index.html"))
        .unwrap()
        .contains("qd"));
}

#[test]
#[ignore = "starts a PostgreSQL server: run by .ci/run with --ignored, where PostgreSQL is installed"]
fn push_copies_runs_up_with_new_ids_once() {
    let server = PgServer::start().unwrap();
    let team = with_password(&server.new_database().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // The team store has a run of someone else's, so ids differ.
    let mut args = RUN.to_vec();
    args.extend(["--db", &team]);
    ok(d, &args);
    for label in ["a", "b"] {
        let mut args = RUN.to_vec();
        let l = format!("who={label}");
        args.extend(["--db", "local.db", "--label", &l]);
        ok(d, &args);
    }

    let out = ok(
        d,
        &["runs", "push", "1", "2", "--db", "local.db", "--to", &team],
    );
    assert!(out.contains("run 1 -> run 2"), "{out}");
    assert!(out.contains("run 2 -> run 3"), "{out}");
    assert!(
        out.contains("pushed 2 runs to postgres://postgres:***@"),
        "{out}"
    );
    assert!(!out.contains("s3cret-pw"), "{out}");
    for (local, remote) in [("1", "2"), ("2", "3")] {
        let here = json(d, &["runs", "show", local, "--json", "--db", "local.db"]);
        let there = json(d, &["runs", "show", remote, "--json", "--db", &team]);
        assert_eq!(without_ids(here), without_ids(there));
        let here = export(d, local, "local.db");
        let there = export(d, remote, &team);
        assert_eq!(
            here["steps"][0]["intervals"], there["steps"][0]["intervals"],
            "intervals and their histograms copied as they are"
        );
    }

    // A second push adds nothing.
    let out = ok(
        d,
        &["runs", "push", "--all", "--db", "local.db", "--to", &team],
    );
    assert!(out.contains("run 1: already there as run 2"), "{out}");
    assert!(out.contains("pushed 0 runs"), "{out}");
    let runs = json(d, &["runs", "list", "--json", "--db", &team]);
    assert_eq!(runs.as_array().unwrap().len(), 3);

    // An unknown run: exit 2, nothing pushed.
    let out = iorig(d, &["runs", "push", "9", "--db", "local.db", "--to", &team]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no run 9"));
}

#[test]
fn a_store_that_cannot_be_reached_is_bad_input_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("postgres://ann:hunter2@127.0.0.1:{port}/team");
    let mut run = RUN.to_vec();
    run.extend(["--db", &url]);
    for args in [
        run,
        vec!["runs", "list", "--db", &url],
        vec!["report", "1", "--out", "r", "--db", &url],
        vec!["runs", "push", "1", "--db", "none.db", "--to", &url],
        vec!["runs", "list", "--db", "mysql://x/y"],
    ] {
        let out = iorig(d, &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(!err.contains("hunter2"), "{err}");
    }
    let out = iorig(d, &["runs", "list", "--db", &url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("cannot connect") && err.contains("ann:***@"),
        "{err}"
    );
    // No scratch file, no store, no report.
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0);
}

/// `iorig serve` over `url` on a loopback port: the process, its first
/// line (the banner) and the address it names.
fn serve(d: &Path, url: &str) -> (std::process::Child, String, String) {
    use std::io::{BufRead, BufReader};
    let mut serve = Command::new(env!("CARGO_BIN_EXE_iorig"))
        .env_remove("IORIG_DB")
        .current_dir(d)
        .args(["serve", "--listen", "127.0.0.1:0", "--db", url])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    BufReader::new(serve.stdout.take().unwrap())
        .read_line(&mut banner)
        .unwrap();
    let addr = banner
        .split(" at http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .unwrap_or_else(|| panic!("{banner}"))
        .to_owned();
    (serve, banner, addr)
}

/// `GET path` from a server: the whole answer, head and body.
fn get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}

#[test]
#[ignore = "starts a PostgreSQL server: run by .ci/run with --ignored, where PostgreSQL is installed"]
fn serve_shows_a_postgres_store_and_a_run_recorded_into_it() {
    let server = PgServer::start().unwrap();
    let url = with_password(&server.new_database().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut args = RUN.to_vec();
    args.extend(["--db", &url, "--label", "who=ann"]);
    ok(d, &args);
    let (mut serve, line, addr) = serve(d, &url);
    assert!(!line.contains("s3cret-pw"), "{line}");
    let get = |path: &str| get(&addr, path);
    // A database without a store is not made one by serving it.
    let empty = server.new_database().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_iorig"))
        .env_remove("IORIG_DB")
        .current_dir(d)
        .args(["serve", "--listen", "127.0.0.1:0", "--db", &empty])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an iorig result store"));
    let runs = get("/api/runs?label=who=ann");
    let result = std::panic::catch_unwind(|| {
        assert!(runs.starts_with("HTTP/1.1 200"), "{runs}");
        assert!(runs.contains("\"total\":1"), "{runs}");
        let page = get("/runs/1");
        assert!(page.contains("<svg"), "{page}");
    });
    let _ = serve.kill();
    let _ = serve.wait();
    result.unwrap();
}

/// Passwords the client reads whole although a URL usually splits at their
/// characters (`/`, `?`, a space, `%`-escapes, `:` and `#`) never show:
/// not in the stored command line, `runs show --json`, the report,
/// `runs push`'s output, serve's banner, its pages or its API. The server
/// trusts the connection, so any password connects: what matters here is
/// only where it shows. Each is checked as written and as the client
/// decodes it.
#[test]
#[ignore = "starts a PostgreSQL server: run by .ci/run with --ignored, where PostgreSQL is installed"]
fn awkward_passwords_never_show_anywhere() {
    let server = PgServer::start().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut local = RUN.to_vec();
    local.extend(["--db", "local.db"]);
    ok(d, &local);
    for (written, decoded) in [
        ("se/cr3t", "se/cr3t"),
        ("se?cr3t", "se?cr3t"),
        ("se cr3t", "se cr3t"),
        ("se%2Fc%40r3t", "se/c@r3t"),
        ("s3:cr#t", "s3:cr#t"),
    ] {
        let url = server.new_database().unwrap().replacen(
            "postgres://postgres@",
            &format!("postgres://postgres:{written}@"),
            1,
        );
        let seen = |what: &str, text: &str| {
            assert!(
                !text.contains(written) && !text.contains(decoded),
                "{written}: the password shows in {what}: {text}"
            );
        };
        let mut args = RUN.to_vec();
        args.extend(["--db", &url]);
        let out = iorig(d, &args);
        assert!(out.status.success(), "{written}: {out:?}");
        seen("run's output", &format!("{out:?}"));
        let mut c = postgres::Client::connect(&url, postgres::NoTls).unwrap();
        for row in c.query("SELECT command_line FROM iorig.runs", &[]).unwrap() {
            let line: String = row.get(0);
            seen("the stored command line", &line);
            assert!(line.contains("postgres:***@127.0.0.1"), "{line}");
        }
        seen(
            "runs show --json",
            &ok(d, &["runs", "show", "1", "--json", "--db", &url]),
        );
        ok(d, &["report", "1", "--out", "rep", "--db", &url]);
        seen(
            "the report",
            &std::fs::read_to_string(d.join("rep/index.html")).unwrap(),
        );
        let pushed = iorig(d, &["runs", "push", "1", "--db", "local.db", "--to", &url]);
        assert!(pushed.status.success(), "{pushed:?}");
        seen("runs push", &format!("{pushed:?}"));

        let (mut serve, banner, addr) = serve(d, &url);
        let result = std::panic::catch_unwind(|| {
            seen("serve's banner", &banner);
            for path in ["/", "/runs/1", "/api/runs/1", "/api/runs/2", "/plans"] {
                let text = get(&addr, path);
                assert!(text.starts_with("HTTP/1.1 200"), "{path}: {text}");
                seen(path, &text);
            }
        });
        let _ = serve.kill();
        let _ = serve.wait();
        result.unwrap();
    }
}

/// A store URL the PostgreSQL client cannot read, or would read a password
/// into a name from (an `@` in a parameter), or that is not UTF-8, is bad
/// input whose message never repeats it: given as `--db`, `--to` or
/// `IORIG_DB`.
#[test]
fn a_store_url_that_cannot_be_read_is_never_repeated() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let bad: Vec<std::ffi::OsString> = [
        &b"postgres://ann:hunter2@[/x"[..],
        b"postgres://srv/db?user=ann@srv&password=hunter2",
        b"postgres://ann:hunter2@db/x?password",
        b"POSTGRES://ann:hun\xffter2@db/x",
    ]
    .iter()
    .map(|b| std::ffi::OsStr::from_bytes(b).to_owned())
    .collect();
    for url in &bad {
        for how in ["--db", "--to", "IORIG_DB"] {
            let mut cmd = Command::new(env!("CARGO_BIN_EXE_iorig"));
            cmd.env_remove("IORIG_DB").current_dir(d);
            match how {
                "--db" => cmd.args(["runs", "list", "--db"]).arg(url),
                "--to" => cmd.args(["runs", "push", "--all", "--to"]).arg(url),
                _ => cmd.args(["runs", "list"]).env("IORIG_DB", url),
            };
            let out = cmd.output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{how} {url:?}: {err}");
            assert_eq!(err.trim_end().lines().count(), 1, "{err}");
            assert!(!err.contains("hun"), "{how}: the URL is repeated: {err}");
        }
    }
    assert_eq!(std::fs::read_dir(d).unwrap().count(), 0, "nothing written");
}
