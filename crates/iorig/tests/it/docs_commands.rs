//! Protects the docs (issue 15, item 16): every `iorig` command shown in a
//! code block of README.md or docs/*.md runs, in doc order, and gives what
//! the docs say it gives (exit 0, and where the docs promise a file or JSON
//! of a schema, that file and that schema).
//!
//! Commands run as written but for a few rewrites that keep them on things
//! this test made and short: paths under /var/tmp go to a temp directory,
//! every device named becomes a loop device the test attaches, times become
//! 600 ms and plans' steps a quarter second (warmups none, profile
//! intervals 200 ms), sizes 16 MiB, built-in tree plans 50 files a directory, every `postgres://` URL a database of a PostgreSQL server the test starts, shell
//! redirections are captured instead, and `runs delete` works on a copy of
//! the store. Usage lines (`iorig run [FILE] [--target PATH]...`) run with
//! their optional groups left out, and with those that have no placeholder
//! put in; what still has a placeholder (`PLAN.toml|--builtin NAME`) is a
//! synopsis and is listed as skipped, as is every entry of [`SKIPS`].
//!
//! The docs run in a few groups, a test each, side by side (each group on a
//! fixture of its own, its commands in doc order). The tests need root for
//! the loop devices: they are `#[ignore]`d with that reason, and `.ci/run`
//! runs them as root with their output shown, so the list of commands run
//! and skipped is in CI's output. Two quick tests keep the groups whole: a
//! doc with commands is in a group, and every skip still matches a command.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use crate::common;

use crate::common::{tmp, LoopDev};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Each step of a plan the docs run: plans of a dozen steps and more
/// (fs-metadata, a fitted trace's rounds) are most of the tests' time.
const STEP_TIME: &str = "250ms";

/// Every run the docs show, and every profile: long enough for I/O and a
/// few of a profile's intervals, short enough for a hundred commands.
const RUN_TIME: &str = "600ms";

/// Commands the test does not run, by a piece of their text, and why.
const SKIPS: &[(&str, &str)] = &[
    (
        "iorig plan resume 7",
        "needs an interrupted plan; plan_cli.rs kill_9_then_resume_finishes_the_plan runs it",
    ),
    (
        "iorig agent",
        "a server that runs until stopped; hosts_cli.rs starts agents on loopback addresses and stops them",
    ),
    (
        "iorig serve",
        "a server that runs until stopped; serve_cli.rs and serve_browser.rs start it on loopback and stop it",
    ),
    (
        "iorig man --install",
        "writes into the reader's own man directory; help_cli.rs installs every page into a temp directory",
    ),
    (
        "--hosts",
        "needs agents on other hosts; hosts_cli.rs runs the controller against agents it starts",
    ),
];

/// A command as the docs show it.
#[derive(Debug)]
struct DocCommand {
    file: String,
    line: usize,
    text: String,
}

/// The `iorig` commands of every fenced code block in `text`: continuation
/// lines joined, `;` splitting two commands, trailing comments dropped.
fn commands_in(file: &str, text: &str) -> Vec<DocCommand> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        if raw.trim_start().starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if !in_block {
            continue;
        }
        let line = strip_comment(raw);
        let (start, joined) = match pending.take() {
            Some((start, mut so_far)) => {
                so_far.push(' ');
                so_far.push_str(line.trim());
                (start, so_far)
            }
            None => {
                let t = line.trim().trim_start_matches("$ ");
                if !t.starts_with("iorig ") && t != "iorig" {
                    continue;
                }
                (i + 1, t.to_owned())
            }
        };
        if let Some(head) = joined.strip_suffix('\\') {
            pending = Some((start, head.trim_end().to_owned()));
            continue;
        }
        for part in joined.split(" ; ") {
            out.push(DocCommand {
                file: file.to_owned(),
                line: start,
                text: part.trim().to_owned(),
            });
        }
    }
    out
}

/// A line without its trailing `# comment`.
fn strip_comment(line: &str) -> &str {
    match line.find(" #") {
        Some(at) => &line[..at],
        None => line,
    }
}

/// Whether a word is a placeholder of a usage line (`FILE`, `RUN_ID`,
/// `PLAN.toml|--builtin`, `SIZE|PCT%`).
fn is_placeholder(word: &str) -> bool {
    let core = word.trim_matches(|c: char| "[]().,".contains(c));
    let caps = core.len() >= 2
        && core.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && core
            .split(['.', '|', ':', '%'])
            .next()
            .is_some_and(|s| s.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
    caps || core.contains('|')
}

/// The forms a usage line runs as: optional groups with a placeholder left
/// out; those without one left out in the first form and put in the second.
fn forms(text: &str) -> Vec<String> {
    let mut plain = String::new();
    let mut full = String::new();
    let mut has_optional = false;
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        plain.push_str(&rest[..open]);
        full.push_str(&rest[..open]);
        let Some(close) = rest[open..].find(']') else {
            break;
        };
        let group = &rest[open + 1..open + close];
        if !group.split_whitespace().any(is_placeholder) {
            full.push_str(group);
            has_optional = true;
        }
        rest = rest[open + close + 1..].trim_start_matches("...");
    }
    plain.push_str(rest);
    full.push_str(rest);
    let tidy = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut v = vec![tidy(&plain)];
    if has_optional {
        v.push(tidy(&full));
    }
    v
}

/// Everything the commands run against.
struct Fixture {
    dir: tempfile::TempDir,
    lo: LoopDev,
    /// The team store every `postgres://` URL of the docs goes to: a
    /// server started when a command first names one (most groups never
    /// do, and initdb takes seconds).
    team: std::cell::OnceCell<(iorig_testpg::PgServer, String)>,
}

impl Fixture {
    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn team(&self) -> &str {
        &self
            .team
            .get_or_init(|| {
                let pg = iorig_testpg::PgServer::start()
                    .expect("a PostgreSQL server for the team-store pages");
                let url = pg.new_database().expect("a database");
                (pg, url)
            })
            .1
    }

    fn iorig(&self, args: &[&str]) -> std::process::Output {
        common::iorig()
            .args(args)
            .env("IORIG_DB", self.path().join("iorig.db"))
            .current_dir(self.path())
            .output()
            .unwrap()
    }

    fn must(&self, args: &[&str]) {
        let out = self.iorig(args);
        assert!(
            out.status.success(),
            "fixture: iorig {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The first ```toml block after `after` in a doc.
fn toml_block(doc: &str, after: &str) -> String {
    let from = doc.find(after).expect("section");
    let rest = &doc[from..];
    let start = rest.find("```toml\n").expect("toml block") + "```toml\n".len();
    let end = rest[start..].find("```").expect("block end");
    rest[start..start + end].to_owned()
}

fn setup(with_runs: bool) -> Fixture {
    let f = Fixture {
        dir: tmp(),
        lo: LoopDev::new(64 << 20),
        team: std::cell::OnceCell::new(),
    };
    let root = docs_dir();
    // A small default scratch file, so commands without --target are quick.
    f.must(&[
        "run",
        "--target",
        "iorig-scratch.dat",
        "--size",
        "16m",
        "--time",
        "200ms",
        "--no-db",
        "-q",
    ]);
    // Runs 1..=9 in the store, for the docs that name stored runs: 7, 8
    // and 9 are plans of 20 steps (the docs draw steps 5 and 10-20 of run
    // 7), the rest single runs; each step two intervals.
    if with_runs {
        std::fs::write(
            f.path().join("plan20.toml"),
            "[defaults]\nengine = \"null\"\ntime = \"20ms\"\ninterval = \"10ms\"\nqd = [1, 2, 4, 8]\nbs = [\"4k\", \"8k\", \"16k\", \"32k\", \"64k\"]\n[[steps]]\nname = \"grid\"\n",
        )
        .unwrap();
        for id in 1..=9 {
            if id >= 7 {
                f.must(&["plan", "run", "plan20.toml", "-q"]);
            } else {
                f.must(&[
                    "run",
                    "--engine",
                    "null",
                    "--time",
                    "50ms",
                    "--interval",
                    "25ms",
                    "-q",
                ]);
            }
        }
    }
    // The files the docs' commands name.
    std::fs::write(f.path().join("iorig.token"), "docs-test-token-0123456789\n").unwrap();
    std::fs::write(
        f.path().join("my-plan.toml"),
        "[defaults]\ntime = \"1s\"\n[[steps]]\nname = \"reads\"\nread = 100\n[[steps]]\nname = \"mixed\"\nread = 70\n",
    )
    .unwrap();
    let workload = std::fs::read_to_string(root.join("docs/workload.md")).unwrap();
    let example = toml_block(&workload, "## Example");
    std::fs::write(f.path().join("example.toml"), rewrite_toml(&example, &f)).unwrap();
    let fs_doc = std::fs::read_to_string(root.join("docs/filesystem.md")).unwrap();
    let fs_example = toml_block(&fs_doc, "## A workload file");
    std::fs::write(f.path().join("fs.toml"), rewrite_toml(&fs_example, &f)).unwrap();
    std::fs::create_dir_all(f.path().join("fsd1")).unwrap();
    // The job file and the parameter file the fio and vdbench pages run.
    std::fs::write(
        f.path().join("job.fio"),
        "[global]\nsize=16m\nruntime=1\ntime_based\n[reader]\nfilename=job.dat\nrw=randread\nbs=4k\n[writer]\nfilename=job.dat\nrw=randwrite\nbs=64k\nrate_iops=50\n",
    )
    .unwrap();
    std::fs::write(
        f.path().join("parmfile"),
        "sd=sd1,lun=$lun,size=16m\nwd=wd1,sd=sd1,xfersize=4k,rdpct=100\nrd=run1,wd=wd1,iorate=max,elapsed=1,interval=1\n",
    )
    .unwrap();
    // The traces the trace page analyses: MSR CSV and fio's iolog v3.
    let mut msr = String::new();
    let mut io_log = String::from("fio version 3 iolog\n0 data add\n");
    for i in 0..2000u64 {
        let block = (i * 7919) % 300;
        msr.push_str(&format!(
            "{},web,1,{},{},4096,50\n",
            128_166_372_003_061_629 + i * 100,
            if i % 3 == 0 { "Write" } else { "Read" },
            block * 4096
        ));
        io_log.push_str(&format!("{} data read {} 4096\n", i * 10, block * 4096));
    }
    std::fs::write(f.path().join("web_1.csv"), &msr).unwrap();
    std::fs::write(f.path().join("io.log"), io_log).unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, msr.as_bytes()).unwrap();
    std::fs::write(f.path().join("web_1.csv.gz"), gz.finish().unwrap()).unwrap();
    // A blktrace capture merged into one file (the kernel's records of a
    // loop device), and an iorig trace with I/O in it: the page's captures
    // run too, into files of their own (an idle device's capture is empty).
    std::fs::copy(
        concat!(env!("CARGO_MANIFEST_DIR"), "/tests/trace/loop0-dd.blktrace"),
        f.path().join("sdb.bin"),
    )
    .unwrap();
    f.must(&[
        "run",
        "--target",
        "traced.dat",
        "--size",
        "16m",
        "--read",
        "70",
        "--random",
        "100",
        "--time",
        "300ms",
        "--no-db",
        "-q",
        "--trace-out",
        "sdb.iotrace",
    ]);
    let rules = std::fs::read_to_string(root.join("docs/profile-rules.md")).unwrap();
    std::fs::write(f.path().join("my-rules.toml"), toml_block(&rules, "")).unwrap();
    f
}

/// The example workload file on this test's paths and times.
fn rewrite_toml(text: &str, f: &Fixture) -> String {
    text.lines()
        .map(|l| {
            let key = l.split('=').next().unwrap_or("").trim();
            match key {
                "size" => "size = \"16m\"".to_owned(),
                "time" => format!("time = \"{RUN_TIME}\""),
                "warmup" => "warmup = \"0s\"".to_owned(),
                _ => l.replace("/var/tmp/", &format!("{}/", f.path().display())),
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The command as this test runs it, and where its stdout goes when the
/// docs redirect it.
fn rewrite(text: &str, f: &Fixture) -> (Vec<String>, Option<String>) {
    let dir = format!("{}/", f.path().display());
    let mut text = text.replace("/var/tmp/", &dir);
    // Every team store is the test's own server.
    let mut from = 0;
    while let Some(at) = text[from..].find("postgres://").map(|a| from + a) {
        let end = text[at..]
            .find(char::is_whitespace)
            .map_or(text.len(), |e| at + e);
        let team = f.team();
        text.replace_range(at..end, team);
        from = at + team.len();
    }
    // `iorig man > FILE && man iorig`, `iorig man run | man -l -`: the
    // second command is not iorig's.
    for sep in [" && ", " | "] {
        if let Some(at) = text.find(sep) {
            text.truncate(at);
        }
    }
    let mut redirect = None;
    if let Some(at) = text.find(" > ") {
        redirect = Some(text[at + 3..].trim().to_owned());
        text.truncate(at);
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    let sub = words.get(1).copied().unwrap_or("");
    let loop_name = f.lo.dev.trim_start_matches("/dev/").to_owned();
    let mut args: Vec<String> = Vec::new();
    let mut i = 1;
    let mut seen_device = false;
    while i < words.len() {
        let w = words[i];
        let value = words.get(i + 1).copied();
        match (w, value) {
            ("--time", Some(_)) => {
                args.extend(["--time".into(), RUN_TIME.into()]);
                i += 2;
            }
            ("--step-time", Some(_)) => {
                args.extend(["--step-time".into(), STEP_TIME.into()]);
                i += 2;
            }
            ("--warmup", Some(_)) => {
                args.extend(["--warmup".into(), "0s".into()]);
                i += 2;
            }
            ("--size", Some(_)) => {
                args.extend(["--size".into(), "16m".into()]);
                i += 2;
            }
            ("--interval", Some(_)) if sub == "profile" => {
                args.extend(["--interval".into(), "200ms".into()]);
                i += 2;
            }
            // A tree's anchor must exist: the docs make it with mkdir.
            ("--anchor", Some(v)) => {
                std::fs::create_dir_all(v).unwrap();
                args.extend(["--anchor".into(), v.into()]);
                i += 2;
            }
            ("--target", Some(v)) if text.contains("--builtin fs-") => {
                std::fs::create_dir_all(v).unwrap();
                args.extend(["--target".into(), v.into()]);
                i += 2;
            }
            ("--out", Some(v)) if sub == "trace" && words.get(2) == Some(&"record") => {
                args.extend(["--out".into(), format!("recorded-{v}")]);
                i += 2;
            }
            ("--device", Some(_)) => {
                // Every device named is the loop device, once.
                if !seen_device {
                    args.extend(["--device".into(), loop_name.clone()]);
                    seen_device = true;
                }
                i += 2;
            }
            ("runs", Some("delete")) => {
                // On a copy: the commands after it still read the run.
                std::fs::copy(f.path().join("iorig.db"), f.path().join("copy.db")).unwrap();
                args.extend(["runs".into(), "delete".into()]);
                args.extend(words[i + 2..].iter().map(|s| s.to_string()));
                args.extend(["--db".into(), "copy.db".into()]);
                break;
            }
            _ if w.starts_with("/dev/") => {
                args.push(f.lo.dev.clone());
                i += 1;
            }
            // `--set lun=/dev/sdb`: a vdbench variable naming a device.
            _ if w.contains("=/dev/") => {
                let (k, _) = w.split_once('=').unwrap();
                args.push(format!("{k}={}", f.lo.dev));
                i += 1;
            }
            _ => {
                args.push(w.to_owned());
                i += 1;
            }
        }
    }
    let has = |args: &[String], flag: &str| args.iter().any(|a| a == flag);
    let mut add = |flag: &str, value: &str| {
        if !has(&args, flag) {
            args.extend([flag.to_owned(), value.to_owned()]);
        }
    };
    // A job file or parameter file sets its own time (the fixture's are short).
    let job_file = words
        .get(2)
        .is_some_and(|w| w.ends_with(".fio") || w.starts_with("parmfile"));
    match sub {
        "run" if !job_file => add("--time", RUN_TIME),
        "profile" if !text.contains("--diskstats") => {
            add("--time", RUN_TIME);
            add("--interval", "200ms");
        }
        "quick" => add("--step-time", STEP_TIME),
        "plan" if words.get(2) == Some(&"run") && !text.contains("--dry-run") => {
            add("--step-time", STEP_TIME);
            // A built-in tree plan's 10 000 files: formatting them before
            // each step was most of the docs' time.
            if text.contains("--builtin fs-") && !text.contains("--file-size") {
                add("--files", "50");
            }
        }
        _ => {}
    }
    (args, redirect)
}

/// What the docs promise of a command's result, checked.
fn check(args: &[String], stdout: &str, f: &Fixture) -> Result<(), String> {
    let value_of = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|p| args.get(p + 1))
            .cloned()
    };
    let schema_of = |path: &str| -> Result<String, String> {
        let text = if path == "-" {
            stdout.to_owned()
        } else {
            std::fs::read_to_string(f.path().join(path)).map_err(|e| format!("{path}: {e}"))?
        };
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
        Ok(v["schema"].as_str().unwrap_or("").to_owned())
    };
    let sub: Vec<&str> = args.iter().take(2).map(String::as_str).collect();
    let fio_shape = value_of("--output-format").is_some_and(|f| f.starts_with("fio-json"));
    if let Some(j) = value_of("--json") {
        if fio_shape {
            // fio's shape: no schema key, a version and jobs.
            let text =
                std::fs::read_to_string(f.path().join(&j)).map_err(|e| format!("{j}: {e}"))?;
            let v: Value = serde_json::from_str(&text).map_err(|e| format!("{j}: {e}"))?;
            if !(v["fio version"].is_string() && v["jobs"].is_array()) {
                return Err(format!("--json {j}: not fio's JSON shape"));
            }
        } else {
            let want = match sub.as_slice() {
                ["profile", ..] => "iorig.profile/1",
                ["trace", "replay"] => "iorig.result/1",
                ["trace", "fit"] => "iorig.trace-fit/1",
                ["trace", ..] => "iorig.trace/1",
                // A plan's or quick's run as stored, as export writes it.
                ["plan", "run"] | ["quick", ..] => "iorig.run/1",
                _ => "iorig.result/1",
            };
            let got = schema_of(&j)?;
            if got != want {
                return Err(format!("--json {j}: schema {got:?}, the docs say {want}"));
            }
        }
    }
    match sub.as_slice() {
        ["runs", "list"] if args.iter().any(|a| a == "--json") => {
            let v: Value = serde_json::from_str(stdout).map_err(|e| e.to_string())?;
            if !v
                .as_array()
                .is_some_and(|a| a.iter().all(|r| r["id"].is_i64()))
            {
                return Err("runs list --json: not an array of runs with integer ids".into());
            }
        }
        ["runs", "show"] if args.iter().any(|a| a == "--json") => {
            let v: Value = serde_json::from_str(stdout).map_err(|e| e.to_string())?;
            if v["schema"] != "iorig.run/1" {
                return Err("runs show --json: not an iorig.run/1 document".into());
            }
        }
        ["export", _] => {
            let out = value_of("--out").unwrap_or_default();
            let p = f.path().join(&out);
            let bytes = std::fs::read(&p).map_err(|e| format!("{out}: {e}"))?;
            let ok = match value_of("--format").as_deref() {
                Some("xlsx") => bytes.starts_with(b"PK"),
                Some("csv") => {
                    bytes.starts_with(b"run_id,")
                        && f.path()
                            .join(Path::new(&out).with_extension("intervals.csv"))
                            .exists()
                }
                Some("json") => schema_of(&out)? == "iorig.run/1",
                Some("hlog") => {
                    String::from_utf8_lossy(&bytes).contains("#[StartTime: ")
                        && f.path()
                            .join(Path::new(&out).with_extension("percentiles.csv"))
                            .exists()
                }
                _ => false,
            };
            if !ok {
                return Err(format!("{out} is not what --format promises"));
            }
        }
        ["report", id] => {
            let dir = value_of("--out").unwrap_or(format!("iorig-report-{id}"));
            if !f.path().join(&dir).join("index.html").exists() {
                return Err(format!("no {dir}/index.html"));
            }
        }
        ["plan", "builtins"] => {
            for name in [
                "five-params",
                "matrix",
                "curve",
                "qd-cycle",
                "flash-cliff",
                "flash-matrix",
            ] {
                if !stdout.contains(name) {
                    return Err(format!("plan builtins does not list {name}"));
                }
            }
        }
        ["completions", _] | ["man"] if stdout.len() < 100 => {
            return Err("printed (almost) nothing".into());
        }
        _ => {}
    }
    if let Some(w) = value_of("--emit-workload") {
        if !f.path().join(&w).exists() {
            return Err(format!("no {w}"));
        }
    }
    Ok(())
}

/// The docs whose commands run, in groups a test each: the groups run side
/// by side, each on a fixture of its own; within a group the commands run in
/// doc order. `every_doc_with_commands_is_run` keeps the list whole.
macro_rules! doc_groups {
    ($($test:ident => [$($file:literal),+ $(,)?],)+) => {
        $(
            #[test]
            #[ignore = "needs root: loop devices stand in for the devices the docs name"]
            fn $test() {
                run_docs(&[$($file),+]);
            }
        )+
        /// Every doc a test above runs.
        const DOCS: &[&str] = &[$($($file),+),+];
    };
}

doc_groups! {
    commands_in_the_readme_run => ["README.md"],
    commands_in_the_trace_docs_run => ["docs/trace.md"],
    commands_in_the_vdbench_and_file_system_docs_run => ["docs/vdbench.md", "docs/filesystem.md"],
    commands_in_the_other_docs_run => [
        "docs/collect.md",
        "docs/fio.md",
        "docs/hosts.md",
        "docs/json-schema.md",
        "docs/metrics.md",
        "docs/plans.md",
        "docs/profile.md",
        "docs/serve.md",
        "docs/team-store.md",
        "docs/verify.md",
        "docs/workload.md",
    ],
}

/// The commands of every doc: README.md, then docs/*.md in name order.
fn all_doc_commands() -> Vec<DocCommand> {
    let root = docs_dir();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut commands = Vec::new();
    for p in &files {
        let name = p.strip_prefix(&root).unwrap().display().to_string();
        commands.extend(commands_in(&name, &std::fs::read_to_string(p).unwrap()));
    }
    commands
}

#[test]
fn every_doc_with_commands_is_run() {
    let commands = all_doc_commands();
    assert!(
        commands.len() > 30,
        "found only {} commands",
        commands.len()
    );
    let with_commands: std::collections::BTreeSet<&str> =
        commands.iter().map(|c| c.file.as_str()).collect();
    let run: std::collections::BTreeSet<&str> = DOCS.iter().copied().collect();
    assert_eq!(
        with_commands.difference(&run).collect::<Vec<_>>(),
        Vec::<&&str>::new(),
        "docs with commands that no test runs: add them to doc_groups!"
    );
    assert_eq!(
        run.difference(&with_commands).collect::<Vec<_>>(),
        Vec::<&&str>::new(),
        "docs in doc_groups! without commands: remove them"
    );
}

#[test]
fn every_skip_matches_a_command() {
    let commands = all_doc_commands();
    for (piece, _) in SKIPS {
        assert!(
            commands.iter().any(|c| c.text.contains(piece)),
            "SKIPS entry {piece:?} matches no command in the docs: remove it"
        );
    }
}

/// Whether a command reads a run by its number (`report 7`, `runs push 1
/// 2`, `--backend-run 12`), which the fixture then makes beforehand.
fn names_a_stored_run(text: &str) -> bool {
    if text.contains("--backend-run ") {
        return true;
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    match words.get(1..3) {
        Some([cmd, id]) if ["report", "export", "compare"].contains(cmd) => {
            id.parse::<u64>().is_ok()
        }
        Some(["runs", verb]) => ["show", "label", "delete", "push"].contains(verb),
        _ => false,
    }
}

/// Runs the commands of `docs` in doc order on one fixture, lists what ran
/// and what was skipped (with why), and fails with every command that failed.
fn run_docs(docs: &[&str]) {
    let root = docs_dir();
    let mut commands = Vec::new();
    for name in docs {
        let text = std::fs::read_to_string(root.join(name)).unwrap();
        commands.extend(commands_in(name, &text));
    }
    assert!(!commands.is_empty(), "no commands in {docs:?}");

    let f = setup(commands.iter().any(|c| names_a_stored_run(&c.text)));
    let mut ran = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    let mut failures = Vec::new();
    for c in &commands {
        let at = format!("{}:{}", c.file, c.line);
        if let Some(k) = SKIPS.iter().position(|(piece, _)| c.text.contains(piece)) {
            skipped.push((format!("{at} {}", c.text), SKIPS[k].1.to_owned()));
            continue;
        }
        for form in forms(&c.text) {
            if let Some(p) = form.split_whitespace().find(|w| is_placeholder(w)) {
                skipped.push((
                    format!("{at} {}", c.text),
                    format!("usage line: {p} is a placeholder"),
                ));
                break;
            }
            let (args, redirect) = rewrite(&form, &f);
            let argv: Vec<&str> = args.iter().map(String::as_str).collect();
            let started = std::time::Instant::now();
            let out = f.iorig(&argv);
            let took = started.elapsed().as_secs_f64();
            let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
            let shown = format!(
                "({took:4.1} s) {at} iorig {}{}",
                args.join(" "),
                redirect
                    .map(|r| format!(" > ({r}: captured)"))
                    .unwrap_or_default()
            );
            if !out.status.success() {
                failures.push(format!(
                    "{shown}: {}\n{}",
                    out.status,
                    String::from_utf8_lossy(&out.stderr)
                ));
            } else if let Err(e) = check(&args, &stdout, &f) {
                failures.push(format!("{shown}: {e}"));
            }
            ran.push(shown);
        }
    }
    eprintln!(
        "docs commands of {}: {} run, {} skipped",
        docs.join(", "),
        ran.len(),
        skipped.len()
    );
    for r in &ran {
        eprintln!("  ran  {r}");
    }
    for (c, why) in &skipped {
        eprintln!("  skip {c}: {why}");
    }
    assert!(
        failures.is_empty(),
        "{} doc command(s) failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn usage_lines_expand_to_runnable_forms() {
    assert_eq!(
        forms("iorig runs list [--json]"),
        ["iorig runs list", "iorig runs list --json"]
    );
    assert_eq!(forms("iorig report 7 [--out DIR]"), ["iorig report 7"]);
    assert_eq!(
        forms("iorig run [FILE] [--target PATH]... [--size SIZE] --qd 4"),
        ["iorig run --qd 4"]
    );
    assert!(is_placeholder("PLAN.toml|--builtin"));
    assert!(is_placeholder("RUN_ID"));
    assert!(!is_placeholder("--json"));
    assert!(!is_placeholder("7"));
    let cmds = commands_in(
        "x.md",
        "text\n```sh\niorig run --a \\\n   --b # note\niorig runs label 7 k=v ; iorig runs delete 7\nrm x\n```\niorig outside\n",
    );
    let texts: Vec<&str> = cmds.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "iorig run --a --b",
            "iorig runs label 7 k=v",
            "iorig runs delete 7"
        ]
    );
}
