//! Protects what iorig writes besides its targets and when it gives up: output
//! paths that are devices, FIFOs or directories are refused before anything
//! runs; existing output files are replaced, never written through; commands
//! that read the store open it read-only and never create it; another
//! program's SQLite database is never adopted; every step of a plan is
//! validated (and `--dry-run` finds the same errors) before the first I/O;
//! `plan resume` asks for `--allow-destroy` again; SIGTERM and a closed
//! stdout end a run as an interruption with its intervals kept.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use crate::common::{digest_file, iorig, names, run, signal, spawn_quiet, tmp, wait_child};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;

fn mkfifo(path: &Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success());
}

/// A store with one run of the null engine in it.
/// A store `s.db` holding two short runs (1 and 2), so compare has two.
fn store_with_a_run(dir: &Path) {
    for _ in 0..2 {
        let out = run(
            &[
                "run", "--engine", "null", "--time", "1s", "--db", "s.db", "-q",
            ],
            dir,
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn refused(out: &std::process::Output, what: &str) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{what}: one line: {err}");
    err
}

#[test]
fn outputs_that_are_not_regular_files_are_refused_before_anything_runs() {
    let d = tmp();
    std::fs::create_dir(d.path().join("dir")).unwrap();
    mkfifo(&d.path().join("fifo"));
    let cases: &[&[&str]] = &[
        &["--json", "dir"],
        &["--csv", "dir"],
        &["--json", "fifo"],
        &["--csv", "/dev/null"],
        &["--db", "fifo"],
        &["--db", "dir"],
        &["--json", "no/such/dir/r.json"],
        &["--journal", "dir"],
    ];
    for extra in cases {
        let mut args = vec!["run", "--read", "0", "--size", "4m", "--time", "1s"];
        args.extend_from_slice(extra);
        let err = refused(&run(&args, d.path()), &extra.join(" "));
        assert!(err.contains(extra[1]), "{err}");
        assert_eq!(
            names(d.path()),
            ["dir", "fifo"],
            "{extra:?} wrote something"
        );
    }
    // The journal must not be a target.
    let err = refused(
        &run(
            &[
                "run",
                "--read",
                "0",
                "--size",
                "4m",
                "--journal",
                "t.dat",
                "--target",
                "t.dat",
            ],
            d.path(),
        ),
        "journal = target",
    );
    assert!(err.contains("also a target"), "{err}");
    assert_eq!(names(d.path()), ["dir", "fifo"]);

    store_with_a_run(d.path());
    for (args, what) in [
        (
            vec!["export", "1", "--format", "json", "--out", "fifo"],
            "FIFO",
        ),
        (
            vec!["export", "1", "--format", "csv", "--out", "dir"],
            "directory",
        ),
        (
            vec!["export", "1", "--format", "xlsx", "--out", "/dev/null"],
            "character device",
        ),
        (vec!["report", "1", "--out", "s.db"], "not a directory"),
        (
            vec!["compare", "1", "2", "--out", "fifo"],
            "not a directory",
        ),
    ] {
        let mut args = args.clone();
        args.extend(["--db", "s.db"]);
        let err = refused(&run(&args, d.path()), what);
        assert!(err.contains(what), "{err}");
    }
}

#[test]
fn an_existing_output_file_is_replaced_not_written_through() {
    let d = tmp();
    let json = d.path().join("r.json");
    std::fs::write(&json, b"previous result").unwrap();
    let other_name = d.path().join("linked");
    std::fs::hard_link(&json, &other_name).unwrap();
    let out = run(
        &[
            "run", "--engine", "null", "--time", "1s", "--no-db", "--json", "r.json", "--csv",
            "linked",
        ],
        d.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(doc["schema"], "iorig.result/1");
    let csv = std::fs::read_to_string(&other_name).unwrap();
    assert!(csv.starts_with("t_s,"), "{csv}");
    // Neither was written in place: the shared inode kept its bytes.
    use std::os::unix::fs::MetadataExt;
    assert_ne!(
        std::fs::metadata(&json).unwrap().ino(),
        std::fs::metadata(&other_name).unwrap().ino()
    );
    assert_eq!(names(d.path()), ["linked", "r.json"], "no temp file left");
}

#[test]
fn read_only_commands_never_create_or_change_the_store() {
    let d = tmp();
    let out = run(&["runs", "list", "--db", "missing.db"], d.path());
    refused(&out, "runs list on a missing store");
    assert!(names(d.path()).is_empty());
    // An empty file is not made into a store by reading it.
    std::fs::write(d.path().join("empty.db"), b"").unwrap();
    let err = refused(
        &run(&["runs", "list", "--db", "empty.db"], d.path()),
        "empty file",
    );
    assert!(err.contains("not an iorig result store"), "{err}");
    assert_eq!(
        std::fs::metadata(d.path().join("empty.db")).unwrap().len(),
        0
    );
    std::fs::remove_file(d.path().join("empty.db")).unwrap();
    store_with_a_run(d.path());
    let before = digest_file(&d.path().join("s.db"));
    for args in [
        vec!["runs", "list", "--db", "s.db"],
        vec!["runs", "show", "1", "--db", "s.db", "--json"],
        vec![
            "export", "1", "--format", "json", "--out", "e.json", "--db", "s.db",
        ],
        vec!["report", "1", "--out", "rep", "--db", "s.db"],
        vec!["compare", "1", "2", "--out", "cmp", "--db", "s.db"],
    ] {
        let out = run(&args, d.path());
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            digest_file(&d.path().join("s.db")),
            before,
            "{args:?} changed the store"
        );
        // SQLite's -wal and -shm may appear: they are how readers and
        // writers of one file agree, and opening a store immutable to avoid
        // them let another client's close delete the log under a running
        // serve. Nothing is written to them: the log stays empty.
        for side in names(d.path()).iter().filter(|n| n.starts_with("s.db-")) {
            assert!(
                side == "s.db-wal" || side == "s.db-shm",
                "{args:?} left {side} beside the store"
            );
        }
        let wal = d.path().join("s.db-wal");
        assert!(
            !wal.exists() || std::fs::metadata(&wal).unwrap().len() == 0,
            "{args:?} wrote to the store's log"
        );
    }
}

#[test]
fn another_programs_database_is_never_adopted() {
    let d = tmp();
    let db = d.path().join("app.db");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('keep me');")
            .unwrap();
    }
    let before = digest_file(&db);
    for args in [
        vec!["run", "--engine", "null", "--time", "1s", "--db", "app.db"],
        vec!["runs", "list", "--db", "app.db"],
        vec![
            "plan",
            "run",
            "--builtin",
            "curve",
            "--dry-run",
            "--db",
            "app.db",
        ],
    ] {
        let err = refused(&run(&args, d.path()), &args.join(" "));
        assert!(
            err.contains("not iorig's") && err.contains("notes"),
            "{err}"
        );
        assert_eq!(digest_file(&db), before, "{args:?} changed the database");
    }
    assert_eq!(names(d.path()), ["app.db"]);
}

#[test]
fn every_plan_step_is_checked_before_the_first_io() {
    let d = tmp();
    std::fs::write(
        d.path().join("p.toml"),
        "name = \"p\"\n[defaults]\ntime = \"1s\"\n\n[[steps]]\nname = \"w\"\nread = 0\n\n[[steps]]\nname = \"hot\"\nhot_size = \"4k\"\nbs = \"64k\"\n",
    )
    .unwrap();
    for dry in [true, false] {
        let mut args = vec!["plan", "run", "p.toml", "--size", "8m", "--db", "p.db"];
        if dry {
            args.push("--dry-run");
        }
        let err = refused(&run(&args, d.path()), "invalid step 2");
        assert!(err.contains("step 2 (hot)"), "{err}");
        assert_eq!(
            names(d.path()),
            ["p.toml"],
            "dry {dry}: something was written"
        );
    }
    // Target safety in a dry run: a file iorig did not create.
    std::fs::write(d.path().join("user.dat"), vec![7u8; 1 << 20]).unwrap();
    let err = refused(
        &run(
            &[
                "plan",
                "run",
                "--builtin",
                "five-params",
                "--target",
                "user.dat",
                "--dry-run",
            ],
            d.path(),
        ),
        "dry run on a user file",
    );
    assert!(err.contains("not an iorig scratch file"), "{err}");
    let err = refused(
        &run(
            &["run", "--target", "user.dat", "--read", "0", "--dry-run"],
            d.path(),
        ),
        "run --dry-run on a user file",
    );
    assert!(err.contains("not an iorig scratch file"), "{err}");
    // A good dry run says what would happen and writes nothing.
    let out = run(
        &["run", "--size", "8m", "--read", "30", "--dry-run"],
        d.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("would run") && text.contains("would create"),
        "{text}"
    );
    assert_eq!(names(d.path()), ["p.toml", "user.dat"]);
}

#[test]
fn plan_resume_asks_for_allow_destroy_again() {
    let d = tmp();
    let user = vec![0x5au8; 8 << 20];
    std::fs::write(d.path().join("user.dat"), &user).unwrap();
    std::fs::write(
        d.path().join("p.toml"),
        "name = \"p\"\n[defaults]\ntime = \"3s\"\nread = 0\nengine = \"psync\"\n\n[[steps]]\nname = \"a\"\n\n[[steps]]\nname = \"b\"\n",
    )
    .unwrap();
    let mut child = spawn_quiet(
        &[
            "plan",
            "run",
            "p.toml",
            "--target",
            "user.dat",
            "--allow-destroy",
            "--db",
            "p.db",
            "-q",
        ],
        d.path(),
    );
    // Interrupted once the first step has stored an interval.
    common::wait_for_intervals(&d.path().join("p.db"), 1, 1, 60);
    signal(&child, 2);
    assert_eq!(wait_child(&mut child, 30).code(), Some(130));
    // The user's file was written (they allowed it); restore it and resume.
    std::fs::write(d.path().join("user.dat"), &user).unwrap();
    let out = run(&["plan", "resume", "1", "--db", "p.db"], d.path());
    let err = refused(&out, "resume without --allow-destroy");
    assert!(err.contains("--allow-destroy"), "{err}");
    assert_eq!(std::fs::read(d.path().join("user.dat")).unwrap(), user);
    let out = run(
        &[
            "plan",
            "resume",
            "1",
            "--db",
            "p.db",
            "--allow-destroy",
            "-q",
        ],
        d.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn sigterm_is_an_interruption_that_keeps_the_intervals() {
    let d = tmp();
    let mut child = spawn_quiet(
        &[
            "run",
            "--engine",
            "null",
            "--time",
            "30s",
            "--interval",
            "200ms",
            "--db",
            "s.db",
            "-q",
        ],
        d.path(),
    );
    // Terminated once the run has stored an interval.
    common::wait_for_intervals(&d.path().join("s.db"), 1, 1, 60);
    signal(&child, 15);
    assert_eq!(wait_child(&mut child, 20).code(), Some(130));
    let out = run(&["runs", "show", "1", "--db", "s.db", "--json"], d.path());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["run"]["status"], "interrupted", "{doc}");
    let text = doc.to_string();
    assert!(text.contains("\"interrupted\""), "{text}");
}

#[test]
fn a_closed_stdout_is_an_interruption_not_a_panic() {
    let d = tmp();
    let mut child = common::guarded(
        iorig()
            .current_dir(d.path())
            .args([
                "run",
                "--engine",
                "null",
                "--time",
                "30s",
                "--interval",
                "100ms",
                "--db",
                "s.db",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    // Read the title and a row, then go away as `| head -3` would.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for _ in 0..3 {
        lines.next().unwrap().unwrap();
    }
    drop(lines);
    let status = wait_child(&mut child, 20);
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(status.code(), Some(130), "{err}");
    let out = run(&["runs", "list", "--db", "s.db", "--json"], d.path());
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc[0]["status"], "interrupted", "{doc}");

    // A listing whose reader is gone ends quietly.
    let mut child = common::guarded(
        iorig()
            .current_dir(d.path())
            .args(["runs", "list", "--db", "s.db"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    );
    drop(child.stdout.take());
    let status = wait_child(&mut child, 20);
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(
        !err.contains("panicked") && status.code() != Some(101),
        "{status}: {err}"
    );
}

/// A directory nothing can be created in: immutable (`chattr +i`) as root,
/// whom file modes do not stop; read-only for anyone else. Unlocked when
/// dropped, so the temp dir can go.
struct Locked(std::path::PathBuf);

impl Locked {
    fn new(path: std::path::PathBuf) -> Locked {
        std::fs::create_dir(&path).unwrap();
        if common::is_root() {
            let st = std::process::Command::new("chattr")
                .arg("+i")
                .arg(&path)
                .status();
            assert!(st.map(|s| s.success()).unwrap_or(false), "chattr +i");
        } else {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o555)).unwrap();
        }
        Locked(path)
    }
}

impl Drop for Locked {
    fn drop(&mut self) {
        let _ = std::process::Command::new("chattr")
            .arg("-i")
            .arg(&self.0)
            .status();
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&self.0, std::fs::Permissions::from_mode(0o755));
    }
}

/// An output that cannot be written is found before any I/O, not after the
/// target was created and filled and the run stored: in `/proc` (where no
/// file can be made) and in a locked directory, for run (`--json`, `--csv`,
/// `--db`), plan run and quick (`--db`) and the agent's `--results-dir`.
/// Each is exit 2 with one line, and nothing is written.
#[test]
fn unwritable_outputs_are_refused_before_any_io() {
    let dir = tmp();
    let d = dir.path();
    std::fs::write(
        d.join("p.toml"),
        "size = '4m'\n[defaults]\ntime = '200ms'\n[[steps]]\nqd = [1]\n",
    )
    .unwrap();
    let locked = Locked::new(d.join("locked"));
    let before = names(d);
    for place in ["/proc".to_owned(), locked.0.display().to_string()] {
        let run_args = [
            "run", "--target", "t.dat", "--size", "4m", "--time", "200ms", "-q",
        ];
        let cases: Vec<Vec<String>> = vec![
            [&run_args[..], &["--json", &format!("{place}/x.json")]].concat(),
            [&run_args[..], &["--csv", &format!("{place}/x.csv")]].concat(),
            [&run_args[..], &["--db", &format!("{place}/x.db")]].concat(),
            vec![
                "plan",
                "run",
                "p.toml",
                "--target",
                "t.dat",
                "-q",
                "--db",
                &format!("{place}/x.db"),
            ],
            vec![
                "quick",
                "t.dat",
                "--size",
                "4m",
                "--step-time",
                "1s",
                "-q",
                "--db",
                &format!("{place}/x.db"),
            ],
            vec!["agent", "--listen", "127.0.0.1:0", "--results-dir", &place],
        ]
        .into_iter()
        .map(|c| c.into_iter().map(str::to_owned).collect())
        .collect();
        for args in cases {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = run(&a, d);
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
            assert!(err.contains(&place), "{args:?}: {err}");
            assert_eq!(names(d), before, "{args:?}: nothing is written");
        }
    }
}

/// A name with terminal control sequences in it (here a target file's
/// name, the kind of string iorig prints as it is) never reaches the
/// terminal raw: not while running, not from the store in `runs show`, not
/// in JSON, where the characters a terminal would act on are escaped.
#[test]
fn control_characters_in_names_never_reach_the_terminal() {
    let dir = tmp();
    let d = dir.path();
    let target = "t\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m.dat";
    let outs = [
        run(
            &[
                "run", "--target", target, "--size", "4m", "--time", "200ms", "--db", "s.db",
            ],
            d,
        ),
        run(&["runs", "show", "1", "--db", "s.db"], d),
        run(&["runs", "show", "1", "--json", "--db", "s.db"], d),
        run(&["runs", "list", "--db", "s.db"], d),
    ];
    for out in outs {
        assert!(out.status.success(), "{out:?}");
        for stream in [&out.stdout, &out.stderr] {
            let text = String::from_utf8_lossy(stream);
            assert!(
                !text.contains(['\u{1b}', '\u{7}', '\u{9b}']),
                "a control character reached the terminal: {text:?}"
            );
        }
    }
}

/// A store `long.db` with one run of one step of `intervals` intervals
/// (read, write and total rows each), written through the store's API in
/// one transaction: a long soak in well under a second.
fn store_with_a_long_run(dir: &Path, intervals: u64) {
    use iorig_store::{IntervalRow, NewRun, NewStep, Op, RunKind, StepRole, Store};
    let store = Store::open(&dir.join("long.db")).unwrap();
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
    let rows: Vec<IntervalRow> = (0..intervals)
        .flat_map(|seq| {
            [Op::Read, Op::Write, Op::Total].map(|op| {
                let figures = iorig_stats::OpSummary {
                    ops: seq,
                    ..Default::default()
                };
                IntervalRow::from_op(seq, (seq + 1) as f64, 1.0, false, op, &figures)
            })
        })
        .collect();
    store.add_intervals(step, &rows).unwrap();
}

#[test]
fn a_long_run_is_exported_whole_a_page_at_a_time() {
    let dir = tmp();
    let d = dir.path();
    // A whole page of the store's (4,096 intervals) and a short last one.
    let intervals = 4_500;
    store_with_a_long_run(d, intervals);
    let out = run(
        &[
            "export", "1", "--format", "csv", "--out", "long.csv", "--db", "long.db",
        ],
        d,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(d.join("long.intervals.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("run_id,step_index,step_name,seq,"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len() as u64, 3 * intervals);
    // In order, each interval's read, write and total rows together.
    for (i, r) in rows.iter().enumerate() {
        let f: Vec<&str> = r.split(',').collect();
        assert_eq!(f[3], (i / 3).to_string(), "{r}");
        assert_eq!(f[7], ["read", "write", "total"][i % 3], "{r}");
    }
    // The JSON document holds every interval once, in order.
    let out = run(
        &[
            "export",
            "1",
            "--format",
            "json",
            "--out",
            "long.json",
            "--db",
            "long.db",
        ],
        d,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("long.json")).unwrap()).unwrap();
    let got = doc["steps"][0]["intervals"].as_array().unwrap();
    assert_eq!(got.len() as u64, intervals);
    assert!(got.iter().enumerate().all(|(i, v)| v["seq"] == i as u64));
    // And fits one XLSX sheet (13,500 rows), which is read back whole.
    let out = run(
        &[
            "export",
            "1",
            "--format",
            "xlsx",
            "--out",
            "long.xlsx",
            "--db",
            "long.db",
        ],
        d,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(d.join("long.xlsx")).unwrap().len() > 100_000);
}
