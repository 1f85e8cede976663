//! What this protects: a job file or parameter file iorig did not write
//! cannot make it use memory by the size of a line, print another file's
//! text, put escape sequences into names, or import values a run refuses.
//!
//! - Lines past 64 KiB and files past 16 MiB are refused by line number as
//!   they are read, whatever the stream holds (no newline at all, endless).
//! - A file pulled in by fio's `include` is never quoted: its errors name
//!   the file and line only (vdbench's `include=` is refused unread).
//! - Control characters (C0, DEL, C1) are dropped from fio section and job
//!   names and vdbench definition names, from the names and labels the
//!   plan takes from the file's path, and from every import error.
//! - The translated plan is checked as `iorig run` checks a plan, so a
//!   time past iorig's longest (vdbench `elapsed=`, fio `runtime=`) or a
//!   count past its limits is refused at import with the run's reason.
#![allow(clippy::unwrap_used)]

use iorig_import::{fio, vdbench, ImportError, SystemLoader};
use std::path::{Path, PathBuf};

const SECRET_LINE: &str = "root:SECRETHASH:19000:0:99999:7:::\n";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// The message as the importer made it, before the filter every shown
/// error passes (which would hide a line break here).
fn raw(e: ImportError) -> String {
    match e {
        ImportError::Usage(s) => s,
        other => other.to_string(),
    }
}

fn fio_tr(path: &Path, text: &str) -> Result<fio::Translation, String> {
    fio::translate(path, text, &SystemLoader, &fio::Options::default()).map_err(raw)
}

fn vd_tr(text: &str) -> Result<vdbench::Translation, String> {
    vdbench::translate(Path::new("p.parm"), text, &vdbench::Options::default()).map_err(raw)
}

/// One line, no newline in it or in what it says.
fn one_line(e: &str) {
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn a_long_line_is_refused_by_its_number_not_shown() {
    let d = tempfile::tempdir().unwrap();
    // A comment: harmless but for its length.
    let long = format!("[j]\n#{}\nsize=1m\n", "x".repeat(100 << 10));
    let e = fio_tr(&d.path().join("t.fio"), &long).unwrap_err();
    assert!(e.contains("t.fio:2: the line is longer than 64 KiB"), "{e}");
    assert!(!e.contains("xxxx"), "{e}");
    // The same line in an included file, read from disk.
    write(d.path(), "big.inc", &long);
    let e = fio_tr(&d.path().join("t.fio"), "include big.inc\n[j]\nsize=1m\n").unwrap_err();
    assert!(
        e.contains("t.fio:1: include ") && e.contains("big.inc: line 2 is longer than 64 KiB"),
        "{e}"
    );
    assert!(!e.contains("xxxx"), "{e}");
    one_line(&e);
    // A parameter file.
    let e = vd_tr(&format!(
        "sd=sd1,lun=/dev/sdb\n*{}\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,elapsed=5\n",
        "x".repeat(100 << 10)
    ))
    .unwrap_err();
    assert!(
        e.contains("p.parm:2: the line is longer than 64 KiB"),
        "{e}"
    );
    assert!(!e.contains("xxxx"), "{e}");
}

#[test]
fn a_line_without_end_is_refused_within_the_cap() {
    // An endless stream with no newline: refused once the line passes the
    // cap (read_to_string would never return).
    let e = iorig_import::read_capped(std::io::repeat(b'a'))
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 1 is longer than 64 KiB"), "{e}");
    // Endless short lines: refused at the file's cap.
    let e = iorig_import::read_capped(std::io::repeat(b'\n'))
        .unwrap_err()
        .to_string();
    assert!(e.contains("larger than 16 MiB"), "{e}");
    // A sparse file of 64 MiB of zero bytes (valid UTF-8, one line), as an
    // include: refused at its first line.
    let d = tempfile::tempdir().unwrap();
    let z = d.path().join("zeros.inc");
    std::fs::File::create(&z)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let e = fio_tr(&d.path().join("t.fio"), "include zeros.inc\n[j]\nsize=1m\n").unwrap_err();
    assert!(e.contains("zeros.inc: line 1 is longer than 64 KiB"), "{e}");
    assert!(!e.contains('\0'), "{e}");
    // Text within the caps reads as it is.
    let t = iorig_import::read_capped("[j]\r\nsize=1m\n".as_bytes()).unwrap();
    assert_eq!(t, "[j]\r\nsize=1m\n");
    let e = iorig_import::read_capped(&b"[j]\nsize=\xff\n"[..])
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2 is not UTF-8"), "{e}");
}

#[test]
fn an_included_file_is_named_never_quoted() {
    let d = tempfile::tempdir().unwrap();
    let secret = write(d.path(), "shadow", SECRET_LINE);
    let shown = secret.display().to_string();
    let job = d.path().join("t.fio");
    // Before any section, after one (a bare flag), and as a value of an
    // option iorig knows.
    for text in [
        format!("include {shown}\n[j]\nsize=1m\n"),
        format!("[j]\nsize=1m\ninclude {shown}\n"),
    ] {
        let e = fio_tr(&job, &text).unwrap_err();
        assert!(e.starts_with(&format!("{shown}:1: ")), "{e}");
        assert!(!e.to_ascii_lowercase().contains("secrethash"), "{e}");
        one_line(&e);
    }
    let secret = write(d.path(), "values", "bs=SECRETHASH\n");
    let e = fio_tr(
        &job,
        &format!("[j]\nsize=1m\ninclude {}\n", secret.display()),
    )
    .unwrap_err();
    assert!(
        e.starts_with(&format!("{}:1: bs: ", secret.display())),
        "{e}"
    );
    assert!(!e.to_ascii_lowercase().contains("secrethash"), "{e}");
    // An include in an included file names no path from its text.
    write(d.path(), "outer.inc", "include SECRETHASH.inc\n");
    let e = fio_tr(&job, "include outer.inc\n[j]\nsize=1m\n").unwrap_err();
    assert!(
        e.contains("outer.inc:1: the file this line includes cannot be read"),
        "{e}"
    );
    assert!(!e.contains("SECRETHASH"), "{e}");
    // The job file given is quoted as before.
    let e = fio_tr(&job, "[j]\nsize=1m\nbs=4q\n").unwrap_err();
    assert!(e.contains("'4q'"), "{e}");
    // vdbench's include= reads the file in place, under the same rule: its
    // bad line is named by file and line, never quoted, and an include in
    // an included file names no path from its text.
    let e = vd_tr(&format!(
        "include={shown}\nsd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,elapsed=5\n"
    ))
    .unwrap_err();
    assert!(e.starts_with(&format!("{shown}:1: ")), "{e}");
    assert!(!e.to_ascii_lowercase().contains("secrethash"), "{e}");
    write(d.path(), "outer.parm", "include=SECRETHASH.parm\n");
    let e = vd_tr(&format!(
        "include={}\n",
        d.path().join("outer.parm").display()
    ))
    .unwrap_err();
    assert!(
        e.contains("outer.parm:1: the file this line includes cannot be read"),
        "{e}"
    );
    assert!(!e.contains("SECRETHASH"), "{e}");
}

/// No control character in the plan, raw or as a TOML escape.
fn printable_plan(toml: &str) {
    assert!(!toml.chars().any(|c| c.is_control() && c != '\n'), "{toml}");
    assert!(!toml.to_ascii_lowercase().contains("\\u00"), "{toml}");
    assert!(!toml.contains("\\e") && !toml.contains("\\b"), "{toml}");
}

#[test]
fn names_lose_their_control_characters() {
    let d = tempfile::tempdir().unwrap();
    let t = fio_tr(
        &d.path().join("t\u{1b}]0;x\u{7}.fio"),
        "[job\u{1b}[2Jx]\nsize=1m\n[two]\nname=b\u{9b}31m\u{7f}\nsize=1m\nstonewall\n",
    )
    .unwrap();
    let names: Vec<&str> = t.jobs.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["job[2Jx", "b31m"]);
    printable_plan(&t.plan_toml);
    assert!(t.plan_toml.contains("name = \"t]0;x\""), "{}", t.plan_toml);
    // A name of control characters only is no name.
    let e = fio_tr(Path::new("t.fio"), "[\u{1b}]\nsize=1m\n").unwrap_err();
    assert!(e.contains("t.fio:1: a section needs a name"), "{e}");
    // A message quoting the job file's text is shown without them.
    let e = fio::translate(
        Path::new("t.fio"),
        "[j\u{1b}[2J\nsize=1m\n",
        &SystemLoader,
        &fio::Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("'[j[2J' opens a section"), "{e}");

    let t = vd_tr(
        "sd=s\u{1b}[2Jd1,lun=/dev/sdb\nwd=w\u{1b}d1,sd=s\u{1b}[2Jd1\nrd=r\u{9b}1,wd=w\u{1b}d1,iorate=max,elapsed=5\n",
    )
    .unwrap();
    printable_plan(&t.plan_toml);
    assert_eq!(t.runs[0].0, "r1");
    let p: toml::Table = toml::from_str(&t.plan_toml).unwrap();
    assert_eq!(
        p["steps"][0]["name"].as_str(),
        Some("r1"),
        "{}",
        t.plan_toml
    );
}

#[test]
fn values_a_run_refuses_are_refused_at_import() {
    // vdbench: seconds past iorig's longest time, not u64::MAX seconds.
    let e = vd_tr("sd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,elapsed=99999999999999999999\n")
        .unwrap_err();
    assert!(
        e.contains("p.parm:3: rd=r1: elapsed: '99999999999999999999': too large"),
        "{e}"
    );
    assert!(!e.contains("18446744073709551615"), "{e}");
    one_line(&e);
    // A count the translation passes on is checked by the plan's rules.
    let e = vd_tr("sd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,elapsed=5,threads=99999999999999999999\n")
        .unwrap_err();
    assert!(e.contains("plan p.parm step 1"), "{e}");
    assert!(e.contains("threads"), "{e}");
    one_line(&e);
    // fio: a runtime of ~317 years fits fio's nanoseconds, not a run.
    let e = fio_tr(
        Path::new("t.fio"),
        "[j]\nsize=1m\nruntime=10000000000\ntime_based\n",
    )
    .unwrap_err();
    assert!(
        e.contains("t.fio:3: runtime: '10000000000': too large"),
        "{e}"
    );
    one_line(&e);
    // Times each within the bound whose sum is not: the plan's check.
    let e = fio_tr(
        Path::new("t.fio"),
        "[j]\nsize=1m\nruntime=10\ntime_based\nstartdelay=600000000\nramp_time=600000000\n",
    )
    .unwrap_err();
    assert!(e.contains("plan t.fio step 1 (j)"), "{e}");
    assert!(e.contains("too large"), "{e}");
    one_line(&e);
}
