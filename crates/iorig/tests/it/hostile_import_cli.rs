//! What this protects: files iorig did not write (a fio job file, a vdbench
//! parameter file, a trace, a plan) reach the user's terminal and memory
//! only within bounds, through the commands a user types:
//!
//! - a line past the cap (64 KiB in a job or parameter file, 1 MiB in a
//!   text trace) is refused with exit 2 by its number, not read on: a
//!   gigabyte line (a sparse job file, a small gzip trace) costs megabytes;
//! - a file pulled in by fio's `include` is named, never quoted;
//! - escape sequences in fio section names reach neither the printed plan
//!   nor the run's output, and a plan's step name holding one is refused;
//! - a value `iorig run` refuses (vdbench `elapsed=`, fio `runtime=` past
//!   iorig's longest time) is refused by `iorig import` as well.
#![allow(clippy::unwrap_used)]

use crate::common::{iorig, tmp};
use std::path::Path;
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Refused with exit 2 and one line on stderr; that line.
fn refused(out: &Output) -> String {
    let e = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert_eq!(e.trim_end().lines().count(), 1, "{e}");
    e
}

fn iorig_in(dir: &Path, args: &[&str]) -> Output {
    iorig().args(args).current_dir(dir).output().unwrap()
}

/// The largest peak resident size (KiB) of any child this test binary has
/// waited for.
fn children_peak_rss_kib() -> i64 {
    #[repr(C)]
    struct Rusage {
        times: [i64; 4],
        longs: [i64; 14],
    }
    extern "C" {
        fn getrusage(who: i32, usage: *mut Rusage) -> i32;
    }
    const RUSAGE_CHILDREN: i32 = -1;
    let mut u = Rusage {
        times: [0; 4],
        longs: [0; 14],
    };
    // SAFETY: `u` is a writable struct laid out as Linux's struct rusage
    // on 64-bit targets (two timevals, then fourteen longs).
    let rc = unsafe { getrusage(RUSAGE_CHILDREN, &mut u) };
    assert_eq!(rc, 0);
    let _ = u.times;
    u.longs[0]
}

#[test]
fn gigabyte_lines_are_refused_by_number_in_little_memory() {
    let dir = tmp();
    // A job file of 1 GiB of zero bytes (sparse): one line with no end.
    let big = dir.path().join("big.fio");
    std::fs::File::create(&big)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    for args in [
        &["import", "big.fio", "--format", "fio"][..],
        &["run", "big.fio", "--dry-run", "--no-db"][..],
    ] {
        let e = refused(&iorig_in(dir.path(), args));
        assert!(e.contains("big.fio: line 1 is longer than 64 KiB"), "{e}");
        assert!(!e.contains('\0'), "{e:?}");
    }
    // A gzip trace of a few megabytes holding a 900 MiB line: gzip members
    // of 1 MiB each, as many as it takes (the reader joins them).
    let mut member = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    std::io::Write::write_all(&mut member, &vec![b'a'; 1 << 20]).unwrap();
    let member = member.finish().unwrap();
    let mut head = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut head, b"fio version 3 iolog\n10 /dev/x read 0 4096\n").unwrap();
    let mut gz = head.finish().unwrap();
    for _ in 0..900 {
        gz.extend_from_slice(&member);
    }
    assert!(gz.len() < 8 << 20, "{}", gz.len());
    std::fs::write(dir.path().join("t.log.gz"), &gz).unwrap();
    let e = refused(&iorig_in(dir.path(), &["trace", "analyse", "t.log.gz"]));
    assert!(e.contains("line 3 is longer than 1 MiB"), "{e}");
    assert!(!e.contains("aaaa"), "{e}");
    // Every command above (and every other test here) stayed far below
    // the gigabyte its input held.
    let peak = children_peak_rss_kib();
    assert!(peak < 256 << 10, "a child peaked at {peak} KiB");
}

#[test]
fn an_included_file_is_named_never_quoted() {
    let dir = tmp();
    let shadow = dir.path().join("shadow");
    std::fs::write(&shadow, "root:SECRETHASH:19000:0:99999:7:::\n").unwrap();
    let shadow = shadow.display().to_string();
    std::fs::write(
        dir.path().join("t.fio"),
        format!("[j]\nsize=1m\ninclude {shadow}\n"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("first.fio"),
        format!("include {shadow}\n[j]\nsize=1m\n"),
    )
    .unwrap();
    for args in [
        &["import", "t.fio"][..],
        &["import", "first.fio"][..],
        &["run", "t.fio", "--dry-run", "--no-db"][..],
    ] {
        let e = refused(&iorig_in(dir.path(), args));
        assert!(e.starts_with(&format!("iorig: {shadow}:1: ")), "{e}");
        assert!(!e.to_ascii_lowercase().contains("secrethash"), "{e}");
    }
    // vdbench's include= reads the file, under the same rule: its bad line
    // is named by file and line, never quoted.
    std::fs::write(
        dir.path().join("p.parm"),
        format!("include={shadow}\nsd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,elapsed=5\n"),
    )
    .unwrap();
    let e = refused(&iorig_in(
        dir.path(),
        &["import", "p.parm", "--format", "vdbench"],
    ));
    assert!(e.starts_with(&format!("iorig: {shadow}:1: ")), "{e}");
    assert!(!e.to_ascii_lowercase().contains("secrethash"), "{e}");
}

#[test]
fn escape_sequences_in_names_reach_no_terminal() {
    let dir = tmp();
    std::fs::write(
        dir.path().join("t.fio"),
        "[job\u{1b}[2Jx]\nrw=read\nsize=1m\nruntime=1\ntime_based\n",
    )
    .unwrap();
    let plan = iorig_in(dir.path(), &["import", "t.fio"]);
    assert!(plan.status.success(), "{}", stderr(&plan));
    let text = String::from_utf8(plan.stdout).unwrap();
    assert!(text.contains("name = \"job[2Jx\""), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.to_ascii_lowercase().contains("\\u001b"),
        "{text}"
    );
    let dry = iorig_in(dir.path(), &["run", "t.fio", "--dry-run", "--no-db"]);
    let all = format!("{}{}", String::from_utf8_lossy(&dry.stdout), stderr(&dry));
    assert!(dry.status.success(), "{all}");
    assert!(all.contains("job[2Jx"), "{all}");
    assert!(!all.contains('\u{1b}'), "{all:?}");
    // A plan written by hand: a step name with an escape is refused.
    std::fs::write(
        dir.path().join("p.toml"),
        "[[steps]]\nname = \"seq\\u001b[2Jread\"\ntime = \"1s\"\n",
    )
    .unwrap();
    let e = refused(&iorig_in(
        dir.path(),
        &["plan", "run", "p.toml", "--dry-run", "--no-db"],
    ));
    assert!(
        e.contains("step 1: name: holds a control character (U+001B)"),
        "{e}"
    );
    assert!(!e.contains('\u{1b}'), "{e:?}");
}

#[test]
fn values_a_run_refuses_are_refused_at_import() {
    let dir = tmp();
    std::fs::write(
        dir.path().join("p.parm"),
        "sd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,elapsed=99999999999999999999\n",
    )
    .unwrap();
    let e = refused(&iorig_in(
        dir.path(),
        &["import", "p.parm", "--format", "vdbench"],
    ));
    assert!(
        e.contains("p.parm:3: rd=r1: elapsed: '99999999999999999999': too large"),
        "{e}"
    );
    std::fs::write(
        dir.path().join("t.fio"),
        "[j]\nsize=1m\nruntime=10000000000\ntime_based\n",
    )
    .unwrap();
    for args in [
        &["import", "t.fio"][..],
        &["run", "t.fio", "--dry-run", "--no-db"][..],
    ] {
        let e = refused(&iorig_in(dir.path(), args));
        assert!(
            e.contains("t.fio:3: runtime: '10000000000': too large"),
            "{e}"
        );
    }
}
