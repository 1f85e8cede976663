//! Protects how a workload spaces its I/Os beyond a plain rate (issue 18,
//! fio's `rate_process`, `thinktime*` and `startdelay`): `--arrivals poisson`
//! draws exponential gaps of the rate's mean, `--think-time` pauses each
//! worker after every `--think-every` I/Os once they completed, and
//! `--start-delay` issues nothing before its time; and where they go:
//! `--zone-range`/`--zone-size`/`--zone-skip` (fio's strided zones) keep the
//! I/O in one zone at a time. Each is read from the per-I/O log
//! (`--lat-log`), i.e. from what was actually submitted.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{ok, run, tmp};
use std::path::Path;

/// Scheduled start of every I/O in the log, in order.
fn starts(path: &Path) -> Vec<u64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = head.iter().position(|h| *h == "start_ns").unwrap();
    let mut v: Vec<u64> = lines
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
        .collect();
    v.sort_unstable();
    v
}

fn gaps(starts: &[u64]) -> Vec<f64> {
    starts.windows(2).map(|w| (w[1] - w[0]) as f64).collect()
}

fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / n;
    (m, var.sqrt())
}

#[test]
fn poisson_arrivals_have_exponential_gaps_of_the_rates_mean() {
    let dir = tmp();
    let d = dir.path();
    let base = [
        "run", "--target", "t.dat", "--size", "16m", "--bs", "4k", "--rate", "2000", "--qd", "8",
        "--time", "3s", "--no-db", "-q",
    ];
    let mut uni = base.to_vec();
    uni.extend(["--lat-log", "u.csv"]);
    ok(&uni, d);
    let mut poi = base.to_vec();
    poi.extend(["--arrivals", "poisson", "--seed", "7", "--lat-log", "p.csv"]);
    ok(&poi, d);

    let (um, usd) = mean_sd(&gaps(&starts(&d.join("u.csv"))));
    assert!((um - 500_000.0).abs() < 1_000.0, "uniform mean gap {um}");
    assert!(usd / um < 0.01, "uniform gaps vary: cv {}", usd / um);

    let g = gaps(&starts(&d.join("p.csv")));
    let n = g.len() as f64;
    assert!(n > 4_000.0, "{n} gaps");
    let (pm, psd) = mean_sd(&g);
    // The mean of n exponential gaps has sd mean/sqrt(n); the sample cv of an
    // exponential has sd about sqrt(2/n) (kurtosis 9). 5 sd each.
    assert!(
        (pm - 500_000.0).abs() < 5.0 * 500_000.0 / n.sqrt(),
        "poisson mean gap {pm}"
    );
    let cv = psd / pm;
    assert!((cv - 1.0).abs() < 5.0 * (2.0 / n).sqrt(), "poisson cv {cv}");
}

#[test]
fn think_time_pauses_after_every_n_ios_and_start_delay_holds_the_first() {
    let dir = tmp();
    let d = dir.path();
    let out = run(
        &[
            "run",
            "--target",
            "t.dat",
            "--size",
            "16m",
            "--bs",
            "4k",
            "--qd",
            "4",
            "--think-time",
            "5ms",
            "--think-every",
            "4",
            "--start-delay",
            "300ms",
            "--time",
            "2s",
            "--no-db",
            "--json",
            "r.json",
            "--lat-log",
            "l.csv",
        ],
        d,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    // Idle by design is not a slow generator.
    assert!(!err.contains("generator-bound"), "{err}");
    let s = starts(&d.join("l.csv"));
    assert!(s[0] >= 300_000_000, "first I/O at {} ns", s[0]);
    // Batches of 4 go out together; between batches at least the think time.
    let g = gaps(&s);
    let long: Vec<usize> = (0..g.len()).filter(|&i| g[i] >= 5e6).collect();
    assert!(long.len() >= 20, "only {} pauses", long.len());
    for (k, i) in long.iter().enumerate() {
        assert_eq!(*i, 4 * k + 3, "pause after I/O {i}, not after each 4th");
    }
    // At most one batch per think time over the 1.7 s after the delay.
    assert!(s.len() <= 4 * (1700 / 5 + 1), "{} I/Os", s.len());

    // A deeper queue than the batch: still a pause after every 4 I/Os (the
    // queue is not filled past the batch, as fio quiesces).
    ok(
        &[
            "run",
            "--target",
            "t.dat",
            "--size",
            "16m",
            "--bs",
            "4k",
            "--qd",
            "8",
            "--think-time",
            "5ms",
            "--think-every",
            "4",
            "--time",
            "1s",
            "--no-db",
            "-q",
            "--lat-log",
            "q8.csv",
        ],
        d,
    );
    let g = gaps(&starts(&d.join("q8.csv")));
    let long: Vec<usize> = (0..g.len()).filter(|&i| g[i] >= 5e6).collect();
    assert!(long.len() >= 10, "only {} pauses", long.len());
    for (k, i) in long.iter().enumerate() {
        assert_eq!(
            *i,
            4 * k + 3,
            "qd 8: pause after I/O {i}, not after each 4th"
        );
    }

    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(r["workload"]["think_time_s"], 0.005);
    assert_eq!(r["workload"]["think_every"], 4);
    assert_eq!(r["workload"]["start_delay_s"], 0.3);
}

/// Think time under a rate, as fio has it. By default the schedule stays:
/// at 200 IOPS with a 10 ms pause after every 4 I/Os (20 ms of schedule),
/// the I/O due during each pause goes out after it, so the run keeps its
/// 400 I/Os in 2 s, and that I/O's latency counts from the pause's end,
/// not from its place in the schedule (it would be 5 ms late: one in four
/// I/Os). With --think-moves-rate (fio's rate_ignore_thinktime) each pause
/// moves the schedule on: 4 I/Os per 30 ms, at most 268 in 2 s, and no
/// "rate not met" for the lower rate asked for. The null engine keeps the
/// storage out of the latency.
#[test]
fn think_time_under_a_rate_keeps_or_moves_the_schedule() {
    let dir = tmp();
    let d = dir.path();
    let base = [
        "run",
        "--engine",
        "null",
        "--rate",
        "200",
        "--think-time",
        "10ms",
        "--think-every",
        "4",
        "--time",
        "2s",
        "--no-db",
        "-q",
    ];
    let ops = |json: &str| -> u64 {
        let r: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(d.join(json)).unwrap()).unwrap();
        r["summary"]["total"]["ops"].as_u64().unwrap()
    };
    let mut keep = base.to_vec();
    keep.extend(["--json", "k.json", "--lat-log", "k.csv"]);
    let out = run(&keep, d);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kept = ops("k.json");
    assert!(
        (360..=404).contains(&kept),
        "{kept} I/Os with the schedule kept"
    );
    let text = std::fs::read_to_string(d.join("k.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = head.iter().position(|h| *h == "lat_ns").unwrap();
    let lats: Vec<u64> = lines
        .map(|l| l.split(',').nth(col).unwrap().parse().unwrap())
        .collect();
    // Counted from the schedule, the I/O due in each pause would be 5 ms
    // late: one position in every four, all of its I/Os. A loaded machine
    // makes I/Os late too, but at every position alike.
    let late_at = |k: usize| {
        lats.iter()
            .skip(k)
            .step_by(4)
            .filter(|l| **l >= 4_000_000)
            .count()
    };
    for k in 0..4 {
        let (late, of) = (late_at(k), lats.iter().skip(k).step_by(4).count());
        assert!(
            late * 2 < of,
            "{late} of {of} I/Os at position {k} of 4 count a pause in their latency"
        );
    }
    let mut moved = base.to_vec();
    moved.extend(["--think-moves-rate", "--json", "m.json"]);
    let out = run(&moved, d);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!err.contains("rate not met"), "{err}");
    let m = ops("m.json");
    assert!((100..=272).contains(&m), "{m} I/Os with the schedule moved");
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("m.json")).unwrap()).unwrap();
    assert_eq!(r["workload"]["think_moves_rate"], true);
}

#[test]
fn pacing_options_that_contradict_are_refused() {
    let dir = tmp();
    let d = dir.path();
    for (args, says) in [
        (&["--arrivals", "poisson"][..], "add --rate"),
        (&["--arrivals", "bursty"][..], "uniform or poisson"),
        (&["--think-every", "4"][..], "add --think-time"),
        (
            &["--think-time", "1ms", "--think-spin", "2ms"][..],
            "at most",
        ),
        (
            &["--think-time", "1ms", "--think-moves-rate"][..],
            "give one, or leave it out",
        ),
        (&["--think-moves-rate"][..], "add --think-time"),
        (&["--start-delay", "5s", "--time", "2s"][..], "shorter"),
    ] {
        let mut a = vec!["run", "--target", "t.dat", "--size", "1m", "--db", "x.db"];
        a.extend(args);
        let out = run(&a, d);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(!d.join("x.db").exists() && !d.join("t.dat").exists());
}

#[test]
fn strided_zones_hold_the_io_in_one_zone_at_a_time() {
    let dir = tmp();
    let d = dir.path();
    ok(
        &[
            "run",
            "--target",
            "t.dat",
            "--size",
            "64m",
            "--bs",
            "4k",
            "--zone-range",
            "4m",
            "--zone-size",
            "256k",
            "--zone-skip",
            "4m",
            "--time",
            "1s",
            "--no-db",
            "-q",
            "--lat-log",
            "z.csv",
        ],
        d,
    );
    let text = std::fs::read_to_string(d.join("z.csv")).unwrap();
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let (o, s) = (col("offset_bytes"), col("start_ns"));
    let mut rows: Vec<(u64, u64)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[s].parse().unwrap(), f[o].parse().unwrap())
        })
        .collect();
    rows.sort_unstable();
    assert!(rows.len() > 128, "{} I/Os", rows.len());
    // 64 I/Os of 4k (256k) per zone; zones start every 8 MiB (4m + 4m
    // skipped) of the data area, wrapping at its 64 MiB.
    // The data area of iorig's scratch file starts after its 1 MiB header.
    let data_start = 1u64 << 20;
    for (k, chunk) in rows.chunks(64).enumerate() {
        let zone = (k as u64 * (8 << 20)) % (64 << 20);
        for (_, off) in chunk {
            let rel = off - data_start;
            assert!(
                (zone..zone + (4 << 20)).contains(&rel),
                "I/O of zone {k} at {rel}"
            );
        }
    }
}

#[test]
fn an_interval_under_min_iops_fails_and_stops_the_run() {
    let dir = tmp();
    let d = dir.path();
    let started = std::time::Instant::now();
    // Paced at 200 IOPS with a floor of 400: the first interval is under it.
    let out = run(
        &[
            "run",
            "--engine",
            "null",
            "--rate",
            "200",
            "--min-iops",
            "400",
            "--time",
            "20s",
            "--interval",
            "500ms",
            "--no-db",
            "--json",
            "r.json",
        ],
        d,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("below the floor of 400"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let r: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("r.json")).unwrap()).unwrap();
    assert_eq!(r["summary"]["errors"], 1);
    assert!(r["intervals"].as_array().unwrap().len() <= 3);
    // Intervals inside a start delay are idle by design, not under the floor.
    let out = run(
        &[
            "run",
            "--engine",
            "null",
            "--rate",
            "1000",
            "--min-iops",
            "100",
            "--start-delay",
            "1s",
            "--time",
            "2s",
            "--no-db",
            "-q",
        ],
        d,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A floor the run keeps (a tenth of its rate, which a loaded machine
    // holds too): no error.
    let out = run(
        &[
            "run",
            "--engine",
            "null",
            "--rate",
            "1000",
            "--min-iops",
            "100",
            "--time",
            "1s",
            "--no-db",
            "-q",
        ],
        d,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
