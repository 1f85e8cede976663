//! Protects `--collect`: a command's and an exporter's figures are stored
//! beside every interval (the same seqs), only the series `match` asks
//! for; a source that fails, answers garbage, is too slow or goes away
//! mid-run gives a failure per interval and the test goes on (exit 0); the
//! report draws the series beside IOPS and compare lists their means; a
//! bad source is refused before anything runs.
//!
//! The exporter is a thread of this test on a loopback port it picks.
#![allow(clippy::unwrap_used)]

use crate::common;

use crate::common::{iorig, ok, tmp};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Rows of the store's external_series: (seq, source, name, value, error).
type Row = (i64, String, String, Option<f64>, Option<String>);

fn rows(db: &Path) -> Vec<Row> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT seq, source, name, value, error FROM external_series ORDER BY seq, source, name")
        .unwrap();
    s.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

fn seqs(db: &Path) -> Vec<i64> {
    let c = rusqlite::Connection::open(db).unwrap();
    let mut s = c
        .prepare("SELECT DISTINCT seq FROM intervals ORDER BY seq")
        .unwrap();
    s.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The storage-side rows of run 1's first step stored so far, read (read
/// only) while the run writes them; none while there is no store, run or
/// step yet, or the store cannot be read at this moment (polled again).
fn external_so_far(db: &Path) -> Vec<iorig_store::ExternalRow> {
    let Ok(store) = iorig_store::Store::open_read_only(db) else {
        return Vec::new();
    };
    let Ok(steps) = store.steps(iorig_store::RunId(1)) else {
        return Vec::new();
    };
    steps
        .first()
        .and_then(|s| store.external(s.id).ok())
        .unwrap_or_default()
}

/// A server on 127.0.0.1 that answers every request with `answer(n)` (the
/// n-th request, from 1) until `stop`, then closes; bounded to a minute.
fn loopback_server(
    stop: Arc<AtomicBool>,
    answer: impl Fn(u64) -> Vec<u8> + Send + 'static,
) -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    l.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let mut n = 0u64;
        for _ in 0..6000 {
            if stop.load(Ordering::SeqCst) {
                return;
            }
            match l.accept() {
                Ok((mut s, _)) => {
                    s.set_nonblocking(false).unwrap();
                    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                    let mut buf = [0u8; 2048];
                    let _ = s.read(&mut buf);
                    n += 1;
                    let _ = s.write_all(&answer(n));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    });
    addr
}

/// An exporter whose counter grows by 1000 at every scrape.
fn exporter(stop: Arc<AtomicBool>) -> String {
    loopback_server(stop, |n| {
        let body = format!(
            "# HELP array_ops_total ops\n# TYPE array_ops_total counter\narray_ops_total{{pool=\"p1\"}} {}\narray_latency_seconds 0.0005\nother_thing 7\n",
            n * 1000
        );
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    })
}

#[test]
fn figures_are_stored_beside_every_interval_and_failures_never_stop_the_test() {
    let dir = tmp();
    let d = dir.path();
    std::fs::write(
        d.join("array.sh"),
        "n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n\necho \"cache_hit_ratio 0.9\"\necho \"backend_iops $((n*10))\"\n",
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let addr = exporter(Arc::clone(&stop));
    let prom = format!("prometheus=http://{addr}/metrics,match=array_*");
    // Intervals of 1 s: each needs a shell script and an HTTP scrape, which
    // a loaded machine may not finish within a shorter one.
    let out = iorig()
        .args(common::null_run("4s", "1s", &[]))
        .args([
            "--db",
            "c.db",
            "--collect",
            "cmd=sh array.sh",
            "--collect",
            &prom,
            "--collect",
            "cmd=exit 3",
            "--collect",
            "cmd=echo not a number here",
            "--collect",
            "cmd=sleep 5",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // One notice per failing source, not per interval.
    assert_eq!(err.matches("--collect cmd: exit 3").count(), 1, "{err}");
    let db = d.join("c.db");
    let all = rows(&db);
    let iv = seqs(&db);
    assert!(iv.len() >= 4, "{iv:?}");
    let of = |source: &str, name: &str| -> Vec<&Row> {
        all.iter()
            .filter(|r| r.1 == source && r.2 == name)
            .collect()
    };
    // The command: every interval, its own count.
    let backend = of("cmd: sh array.sh", "backend_iops");
    assert_eq!(backend.iter().map(|r| r.0).collect::<Vec<_>>(), iv);
    assert!(backend.windows(2).all(|w| w[1].3 > w[0].3), "{backend:?}");
    assert_eq!(of("cmd: sh array.sh", "cache_hit_ratio").len(), iv.len());
    // The exporter: what match asked for, every interval.
    let source = format!("http://{addr}/metrics");
    assert_eq!(of(&source, "array_ops_total{pool=\"p1\"}").len(), iv.len());
    assert_eq!(of(&source, "array_latency_seconds").len(), iv.len());
    assert!(of(&source, "other_thing").is_empty());
    // Failures: one row per interval, with the reason.
    for (source, why) in [
        ("cmd: exit 3", "exit status: 3"),
        ("cmd: echo not a number here", "not a number"),
    ] {
        let failed = of(source, "");
        assert_eq!(failed.len(), iv.len(), "{source}");
        assert!(
            failed
                .iter()
                .all(|r| r.3.is_none() && r.4.as_deref().is_some_and(|e| e.contains(why))),
            "{failed:?}"
        );
    }
    let slow = of("cmd: sleep 5", "");
    assert!(!slow.is_empty());
    assert!(slow.iter().all(|r| r.4.is_some()), "{slow:?}");

    // The exporter goes away mid-run: failures from then on, and the test
    // goes on until it is interrupted (130, not a failure of the run).
    let stop2 = Arc::new(AtomicBool::new(false));
    let addr2 = exporter(Arc::clone(&stop2));
    let prom2 = format!("prometheus=http://{addr2}/metrics");
    let source2 = format!("http://{addr2}/metrics");
    let db2 = d.join("d.db");
    let mut child = common::guarded(
        iorig()
            .args(common::null_run("30s", "1s", &[]))
            .args(["--db", "d.db", "--collect", &prom2])
            .current_dir(d)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
    );
    // Figures while the exporter answers...
    let deadline = Instant::now() + Duration::from_secs(60);
    let last_figure = loop {
        let got = external_so_far(&db2);
        let figured = got
            .iter()
            .filter(|r| r.source == source2 && r.value.is_some())
            .map(|r| r.seq)
            .max();
        if let Some(seq) = figured {
            break seq;
        }
        assert!(Instant::now() < deadline, "no figures yet: {got:?}");
        std::thread::sleep(Duration::from_millis(50));
    };
    stop2.store(true, Ordering::SeqCst);
    // ...failures for the intervals after it went away...
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let got = external_so_far(&db2);
        if got
            .iter()
            .any(|r| r.source == source2 && r.seq > last_figure && r.error.is_some())
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no failures after interval {last_figure}: {got:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // ...and the run still going: interrupted, not failed.
    common::signal(&child, 2);
    assert_eq!(common::wait_child(&mut child, 30).code(), Some(130));
    let later = rows(&db2);
    assert!(
        later.iter().any(|r| r.1 == source2 && r.3.is_some()),
        "figures before"
    );
    assert!(
        later.iter().any(|r| r.1 == source2 && r.4.is_some()),
        "failures after"
    );
    stop.store(true, Ordering::SeqCst);

    // The report draws them; compare lists their means.
    ok(
        &common::null_run(
            "1s",
            "250ms",
            &["--db", "c.db", "--collect", "cmd=sh array.sh"],
        ),
        d,
    );
    ok(&["report", "1", "--db", "c.db", "--out", "rep"], d);
    assert!(d.join("rep/step-0001-external.svg").exists());
    let html = std::fs::read_to_string(d.join("rep/index.html")).unwrap();
    assert!(html.contains("storage side"));
    assert!(html.contains("--collect cmd: exit 3: no figures for"));
    ok(&["compare", "1", "2", "--db", "c.db", "--out", "cmp"], d);
    let cmp = std::fs::read_to_string(d.join("cmp/index.html")).unwrap();
    assert!(
        cmp.contains("Storage side") && cmp.contains("backend_iops"),
        "compare lists the series"
    );
}

#[test]
fn a_bad_source_is_refused_before_anything_runs() {
    let dir = tmp();
    for spec in [
        "snmp=x",
        "prometheus=https://a/metrics",
        "prometheus=a:9100",
        "cmd=",
        "prometheus=http://a/m,every=1",
    ] {
        let out = iorig()
            .args(["run", "--engine", "null", "--time", "1s", "--collect", spec])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{spec}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{spec}: {err}");
    }
    assert_eq!(common::names(dir.path()), Vec::<String>::new());
}

/// An exporter that answers in chunks, one boundary falling inside a
/// two-byte character (`ü`): read whole by the HTTP client, not sliced
/// mid-character (the hand-written client panicked there, which stopped
/// collection).
fn chunked_exporter(stop: Arc<AtomicBool>) -> String {
    loopback_server(stop, |_| {
        let body = "array_temp{site=\"Z\u{fc}rich\"} 21\n".as_bytes();
        let split = body.iter().position(|&b| b == 0xC3).unwrap_or(0) + 1;
        let mut answer = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n".to_vec();
        for chunk in [&body[..split], &body[split..]] {
            answer.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
            answer.extend_from_slice(chunk);
            answer.extend_from_slice(b"\r\n");
        }
        answer.extend_from_slice(b"0\r\n\r\n");
        answer
    })
}

/// A chunked answer split inside a character is read whole; a command that
/// pours out more than a source may give (16 MiB) is cut off and killed at
/// the cap, a failure for that interval said once, and the test goes on.
#[test]
fn awkward_answers_are_read_or_cut_off_and_never_stop_the_test() {
    let dir = tmp();
    let d = dir.path();
    let stop = Arc::new(AtomicBool::new(false));
    let addr = chunked_exporter(stop.clone());
    let source = format!("prometheus=http://{addr}/metrics");
    // Intervals of 2 s: the command's 16 MiB must reach the cap before the
    // interval's deadline even when the suite's doc tests compile beside
    // it on two cores (at 500 ms it was killed by the deadline first).
    let out = iorig()
        .args(common::null_run("4s", "2s", &[]))
        .args([
            "--db",
            "c.db",
            "--collect",
            &source,
            "--collect",
            "cmd=yes 'flood 1' | head -c 300000000",
        ])
        .current_dir(d)
        .output()
        .unwrap();
    stop.store(true, Ordering::SeqCst);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let rows = rows(&d.join("c.db"));
    let temps: Vec<&Row> = rows.iter().filter(|r| r.1.starts_with("http://")).collect();
    assert!(!temps.is_empty(), "{rows:?}");
    for r in &temps {
        assert_eq!(r.2, "array_temp{site=\"Z\u{fc}rich\"}", "{r:?}");
        assert_eq!(r.3, Some(21.0), "{r:?}");
    }
    let floods: Vec<&Row> = rows.iter().filter(|r| r.1.starts_with("cmd:")).collect();
    assert!(!floods.is_empty(), "{rows:?}");
    for r in &floods {
        assert_eq!(r.3, None, "{r:?}");
        assert!(
            r.4.as_deref().is_some_and(|e| e.contains("over 16 MiB")),
            "{r:?}"
        );
    }
    assert_eq!(err.matches("over 16 MiB").count(), 1, "said once: {err}");
}
