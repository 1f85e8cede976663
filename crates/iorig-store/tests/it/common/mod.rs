//! Checks of the store that hold for either database: the SQLite tests
//! (roundtrip.rs) and the PostgreSQL tests (postgres.rs) run them alike.
#![allow(clippy::unwrap_used, dead_code)]

use iorig_result::{Finding, SkippedFinding, StepSummary, Summary, TargetKind, WorkloadRecord};
use iorig_spec::WorkloadFile;
use iorig_stats::sampler::system::{SystemFacts, TargetFacts};
use iorig_stats::{CpuUsage, DeviceUsage, IntervalStats, LatencyHistogram};
use iorig_store::{
    HistKind, IntervalRow, NewRun, NewStep, Op, RunId, RunKind, RunStatus, StepId, StepRole,
    StepStatus, Store, StoreError,
};
use std::collections::BTreeMap;

/// A finding to store (any kind will do).
pub fn finding(why: &str) -> Finding {
    Finding::Skipped(SkippedFinding { why: why.into() })
}

/// A step summary to store.
pub fn summary(duration_s: f64) -> StepSummary {
    StepSummary::Io(Box::new(Summary {
        duration_s,
        ..Summary::default()
    }))
}

pub fn new_run(kind: RunKind, started: &str) -> NewRun {
    NewRun {
        kind,
        plan_json: (kind == RunKind::Plan).then(|| r#"{"steps":[]}"#.to_owned()),
        host: "rig1".into(),
        tool_version: "0.1.0".into(),
        command_line: "iorig plan run p.toml".into(),
        labels: BTreeMap::from([
            ("array".to_owned(), "a1".to_owned()),
            ("fw".to_owned(), "1.2".to_owned()),
        ]),
        started: started.into(),
    }
}

/// The WorkloadRecord of a workload TOML.
pub fn params(toml: &str) -> WorkloadRecord {
    let w = WorkloadFile::from_toml("t.toml", toml)
        .unwrap()
        .resolve(1)
        .unwrap();
    w.record()
}

pub fn stats(seed: u64) -> IntervalStats {
    let mut s = IntervalStats::default();
    for i in 0..1000u64 {
        let lat = 10_000 + (i * 7919 + seed * 104_729) % 500_000;
        if i % 3 == 0 {
            s.write.ops += 1;
            s.write.bytes += 4096;
            s.write.lat.record(lat * 2);
        } else {
            s.read.ops += 1;
            s.read.bytes += 4096;
            s.read.lat.record(lat);
        }
    }
    s.errors = seed % 2;
    s
}

pub fn system() -> SystemFacts {
    SystemFacts {
        kernel: Some("6.1".into()),
        cpu_count: Some(2),
        ..SystemFacts::default()
    }
}

pub fn rotational() -> TargetFacts {
    TargetFacts {
        rotational: Some(false),
        ..TargetFacts::default()
    }
}

pub fn runs_are_listed_oldest_first_with_labels(store: &Store) {
    let a = store
        .create_run(&new_run(RunKind::Run, "2026-01-01T00:00:00Z"))
        .unwrap();
    let mut quick = new_run(RunKind::Quick, "2026-01-02T00:00:00Z");
    quick.labels.clear();
    let b = store.create_run(&quick).unwrap();
    store
        .finish_run(a, RunStatus::Ok, "2026-01-01T00:01:00Z")
        .unwrap();
    let runs = store.list_runs().unwrap();
    assert_eq!(runs.iter().map(|r| r.id).collect::<Vec<_>>(), [a, b]);
    assert_eq!(runs[0].status, RunStatus::Ok);
    assert_eq!(runs[0].labels.len(), 2);
    assert_eq!(runs[1].kind, RunKind::Quick);
    assert_eq!(runs[1].status, RunStatus::Running);
    assert_eq!(runs[1].ended, None);
    assert!(runs[1].labels.is_empty());
    assert!(store.get_run(RunId(999)).unwrap().is_none());
    // The JSON form uses the stored spellings.
    let j = serde_json::to_value(&runs[1]).unwrap();
    assert_eq!(j["kind"], "quick");
    assert_eq!(j["status"], "running");
    assert_eq!(j["id"], b.0);
}

pub fn upsert_reuses_the_step_and_resume_finds_the_first_incomplete(store: &Store) {
    let run = store
        .create_run(&new_run(RunKind::Plan, "2026-01-01T00:00:00Z"))
        .unwrap();
    let p = params("qd = 4\n");
    let names = ["precondition", "qd4", "qd8", "qd16"];
    let ids: Vec<_> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            store
                .upsert_step(
                    run,
                    &NewStep {
                        index: i as i64,
                        name,
                        role: StepRole::Run,
                        params: Some(&p),
                    },
                )
                .unwrap()
        })
        .collect();
    assert_eq!(store.first_incomplete_step(run).unwrap(), Some(0));
    store
        .finish_step(ids[0], StepStatus::Ok, Some(&summary(1.0)), "t")
        .unwrap();
    store
        .set_step_status(ids[1], StepStatus::Skipped, None, Some("t"))
        .unwrap();
    store
        .set_step_status(ids[2], StepStatus::Running, Some("t"), None)
        .unwrap();
    let rows = IntervalRow::rows_of(0, 1.0, 1.0, false, &stats(1), CpuUsage::default(), None);
    store.add_intervals(ids[2], &rows).unwrap();
    store
        .put_histogram(ids[2], Op::Read, HistKind::Lat, &stats(1).read.lat)
        .unwrap();
    store
        .put_analysis(run, Some(ids[2]), &finding("partial"))
        .unwrap();
    assert_eq!(store.first_incomplete_step(run).unwrap(), Some(2));

    // Resume: storing the same index again gives the same row, with its
    // status kept; resetting it clears what the interrupted attempt left.
    let again = store
        .upsert_step(
            run,
            &NewStep {
                index: 2,
                name: "qd8 (resumed)",
                role: StepRole::Run,
                params: Some(&p),
            },
        )
        .unwrap();
    assert_eq!(again, ids[2]);
    let step = store.step(again).unwrap().unwrap();
    assert_eq!(step.name, "qd8 (resumed)");
    assert_eq!(step.status, StepStatus::Running);
    assert_eq!(store.steps(run).unwrap().len(), 4);
    store.reset_step(again).unwrap();
    let step = store.step(again).unwrap().unwrap();
    assert_eq!((step.status, step.started), (StepStatus::Pending, None));
    assert!(store.intervals(again).unwrap().is_empty());
    assert!(store
        .histogram(again, Op::Read, HistKind::Lat)
        .unwrap()
        .is_none());
    assert!(store.analysis(run).unwrap().is_empty());
    // The reset attempt can write its intervals again from seq 0.
    store.add_intervals(again, &rows).unwrap();

    for id in &ids[2..] {
        store
            .finish_step(*id, StepStatus::Ok, Some(&summary(1.0)), "t")
            .unwrap();
    }
    assert_eq!(store.first_incomplete_step(run).unwrap(), None);
    store.reopen_run(run).unwrap();
    assert_eq!(
        store.get_run(run).unwrap().unwrap().run.status,
        RunStatus::Running
    );
}

pub fn stored_histograms_merge_like_the_originals(store: &Store) {
    let run = store
        .create_run(&new_run(RunKind::Plan, "2026-01-01T00:00:00Z"))
        .unwrap();
    let p = params("");
    let mut a = LatencyHistogram::new();
    let mut b = LatencyHistogram::new();
    for v in 1..=20_000u64 {
        a.record(v * 50); // 50 ns .. 1 ms, uniform
    }
    for v in 1..=5_000u64 {
        b.record(2_000_000 + v * 3_000); // 2 ms .. 17 ms: b owns the tail
    }
    b.record(3_000_000_000); // one 3 s outage
    let mut steps = Vec::new();
    for (i, h) in [&a, &b].into_iter().enumerate() {
        let step = store
            .upsert_step(
                run,
                &NewStep {
                    index: i as i64,
                    name: "s",
                    role: StepRole::Run,
                    params: Some(&p),
                },
            )
            .unwrap();
        store
            .put_histogram(step, Op::Total, HistKind::Lat, h)
            .unwrap();
        steps.push(step);
    }
    // Replacing a stored histogram keeps one row.
    store
        .put_histogram(steps[1], Op::Total, HistKind::Lat, &b)
        .unwrap();

    let mut expected = a.clone();
    expected.merge(&b);
    let mut merged = LatencyHistogram::new();
    for step in &steps {
        let h = store
            .histogram(*step, Op::Total, HistKind::Lat)
            .unwrap()
            .unwrap();
        merged.merge(&h);
    }
    let (m, e) = (merged.summary(), expected.summary());
    assert_eq!(merged.count(), 25_001);
    assert_eq!((m.p50, m.p99, m.max), (e.p50, e.p99, e.max));
    assert_eq!(m, e);
    assert!(m.max >= 3_000_000_000 - 3_000_000, "{m:?}");
    // Other ops and kinds were not stored.
    assert!(store
        .histogram(steps[0], Op::Read, HistKind::Lat)
        .unwrap()
        .is_none());
    assert!(store
        .histogram(steps[0], Op::Total, HistKind::ServiceLat)
        .unwrap()
        .is_none());
}

pub fn writes_under_a_missing_run_or_step_say_so(store: &Store) {
    let ghost = RunId(42);
    let err = |r: Result<(), StoreError>| r.unwrap_err();
    assert!(matches!(
        err(store.set_label(ghost, "k", "v")),
        StoreError::NoSuchRun(42)
    ));
    assert!(matches!(
        err(store.record_system_facts(ghost, &SystemFacts::default())),
        StoreError::NoSuchRun(42)
    ));
    assert!(matches!(
        store.upsert_step(
            ghost,
            &NewStep {
                index: 0,
                name: "s",
                role: StepRole::Run,
                params: None
            }
        ),
        Err(StoreError::NoSuchRun(42))
    ));
    assert!(matches!(
        err(store.finish_run(ghost, RunStatus::Ok, "t")),
        StoreError::NoSuchRun(42)
    ));

    let run = store
        .create_run(&new_run(RunKind::Run, "2026-01-01T00:00:00Z"))
        .unwrap();
    let step = iorig_store::StepId(7);
    let rows = IntervalRow::rows_of(0, 1.0, 1.0, false, &stats(1), CpuUsage::default(), None);
    assert!(matches!(
        err(store.add_intervals(step, &rows)),
        StoreError::NoSuchStep(7)
    ));
    assert!(matches!(
        err(store.set_step_status(step, StepStatus::Running, Some("t"), None)),
        StoreError::NoSuchStep(7)
    ));
    assert!(matches!(
        err(store.put_histogram(step, Op::Read, HistKind::Lat, &LatencyHistogram::new())),
        StoreError::NoSuchStep(7)
    ));
    assert!(matches!(
        store.put_analysis(run, Some(step), &finding("1")),
        Err(StoreError::NoSuchStep(7))
    ));
    assert!(matches!(
        store.put_analysis(ghost, None, &finding("1")),
        Err(StoreError::NoSuchRun(42))
    ));
    // Nothing of the failed writes is left.
    assert!(store.steps(run).unwrap().is_empty());
    assert!(store.analysis(run).unwrap().is_empty());
}

pub fn a_label_the_store_does_not_take_writes_nothing(store: &Store) {
    // Every way labels come in (CLI, workload and hosts files, later the
    // web page) meets this one rule in the store: bounded, no control
    // characters; refused whole, before any row is written.
    let mut run = new_run(RunKind::Run, "2026-11-25T10:00:00Z");
    run.labels.insert("note".into(), "line\nbreak".into());
    let e = store.create_run(&run).unwrap_err();
    assert!(matches!(e, StoreError::BadLabel { .. }), "{e}");
    assert!(e.to_string().contains("U+000A"), "{e}");
    assert!(store.list_runs().unwrap().is_empty());
    let id = store
        .create_run(&new_run(RunKind::Run, "2026-11-25T10:00:00Z"))
        .unwrap();
    let e = store.set_label(id, "note", &"x".repeat(2000)).unwrap_err();
    assert!(e.to_string().contains("at most 1024"), "{e}");
    store.set_label(id, "note", "<b>bold</b>").unwrap();
    assert_eq!(store.labels(id).unwrap()["note"], "<b>bold</b>");
}

/// Writes a run of every kind of row, then reads it back through a store
/// `reopen` gives (a new connection). Returns the run and its two steps.
pub fn round_trip(store: Store, reopen: impl Fn() -> Store) -> (RunId, StepId, StepId) {
    let run = store
        .create_run(&new_run(RunKind::Plan, "2026-03-01T10:00:00Z"))
        .unwrap();
    store.record_system_facts(run, &system()).unwrap();
    store
        .record_target_facts(
            run,
            "/dev/zram0",
            Some(TargetKind::Block),
            Some(1 << 30),
            &rotational(),
        )
        .unwrap();
    store.set_label(run, "fw", "1.3").unwrap();
    store.set_label(run, "note", "after fw update").unwrap();

    let single = params("bs = '8k'\nread = 70\nrandom = 50\nqd = 16\nthreads = 4\nrate = 2000\n");
    let mixed = params("bs = '4k:50,64k:50'\nread = 0\n");
    let s0 = store
        .upsert_step(
            run,
            &NewStep {
                index: 0,
                name: "8k 70/30 qd16",
                role: StepRole::Run,
                params: Some(&single),
            },
        )
        .unwrap();
    let s1 = store
        .upsert_step(
            run,
            &NewStep {
                index: 1,
                name: "mixed writes",
                role: StepRole::Run,
                params: Some(&mixed),
            },
        )
        .unwrap();
    assert_ne!(s0, s1);

    // Intervals: three rows per interval, warmup first.
    store
        .set_step_status(s0, StepStatus::Running, Some("2026-03-01T10:00:01Z"), None)
        .unwrap();
    let cpu = CpuUsage {
        usr_pct: 12.5,
        sys_pct: 30.25,
        steal_pct: 0.0,
    };
    let dev = DeviceUsage {
        util_pct: 99.5,
        queue_depth: 15.75,
        read_await_ns: 120_000,
        write_await_ns: 340_000,
    };
    let mut written = Vec::new();
    for seq in 0..4u64 {
        let device = (seq != 2).then_some(dev);
        let rows = IntervalRow::rows_of(
            seq,
            (seq + 1) as f64,
            1.0,
            seq == 0,
            &stats(seq),
            cpu,
            device,
        );
        store.add_intervals(s0, &rows).unwrap();
        written.extend(rows);
    }
    let back = store.intervals(s0).unwrap();
    assert_eq!(back, written);
    assert_eq!(back[2].op, Op::Total);
    assert_eq!(back[2].errors, 0);
    assert_eq!(back[5].errors, 1, "errors go on the total row");
    assert_eq!(back[6].device, None);
    assert!(back[0].warmup && !back[3].warmup);
    assert_eq!(back[0].op_summary(), stats(0).read.summary(1.0));
    assert!(store.intervals(s1).unwrap().is_empty());

    // A single row, and a duplicate (same seq and op) is refused.
    let extra = IntervalRow::from_op(4, 5.0, 1.0, false, Op::Read, &stats(4).read.summary(1.0));
    store.add_interval(s0, &extra).unwrap();
    assert!(store.add_interval(s0, &extra).is_err());

    let summary = summary(3.0);
    store
        .finish_step(s0, StepStatus::Ok, Some(&summary), "2026-03-01T10:00:05Z")
        .unwrap();
    let a1 = store.put_analysis(run, Some(s0), &finding("a")).unwrap();
    let a2 = store.put_analysis(run, None, &finding("b")).unwrap();
    store
        .finish_run(run, RunStatus::Interrupted, "2026-03-01T10:00:06Z")
        .unwrap();
    drop(store);

    // Everything reads back after a reopen.
    let store = reopen();
    let detail = store.get_run(run).unwrap().unwrap();
    assert_eq!(detail.run.kind, RunKind::Plan);
    assert_eq!(detail.run.status, RunStatus::Interrupted);
    assert_eq!(detail.run.started, "2026-03-01T10:00:00Z");
    assert_eq!(detail.run.ended.as_deref(), Some("2026-03-01T10:00:06Z"));
    assert_eq!(detail.run.host, "rig1");
    assert_eq!(detail.plan_json.as_deref(), Some(r#"{"steps":[]}"#));
    assert_eq!(detail.command_line, "iorig plan run p.toml");
    assert_eq!(
        detail.run.labels,
        BTreeMap::from([
            ("array".to_owned(), "a1".to_owned()),
            ("fw".to_owned(), "1.3".to_owned()),
            ("note".to_owned(), "after fw update".to_owned()),
        ])
    );
    assert_eq!(store.system_facts(run).unwrap(), Some(system()));
    let targets = store.target_facts(run).unwrap();
    assert_eq!(targets.len(), 1);
    assert_eq!(targets[0].path, "/dev/zram0");
    assert_eq!(targets[0].size_bytes, Some(1 << 30));
    assert_eq!(targets[0].facts, rotational());
    assert_eq!(targets[0].kind.as_deref(), Some("block"));

    let steps = store.steps(run).unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].id, s0);
    assert_eq!(steps[0].index, 0);
    assert_eq!(steps[0].name, "8k 70/30 qd16");
    assert_eq!(steps[0].role, StepRole::Run);
    assert_eq!(steps[0].status, StepStatus::Ok);
    assert_eq!(steps[0].params, Some(single));
    assert_eq!(steps[0].summary, Some(summary));
    assert_eq!(steps[0].started.as_deref(), Some("2026-03-01T10:00:01Z"));
    assert_eq!(steps[0].ended.as_deref(), Some("2026-03-01T10:00:05Z"));
    assert_eq!(steps[1].status, StepStatus::Pending);
    assert_eq!(steps[1].summary, None);
    assert_eq!(store.step(s1).unwrap().unwrap(), steps[1]);
    assert_eq!(store.intervals(s0).unwrap().len(), 13);

    let analysis = store.analysis(run).unwrap();
    assert_eq!(analysis.len(), 2);
    assert_eq!((analysis[0].id, analysis[1].id), (a1, a2));
    assert_eq!(analysis[0].step_id, Some(s0));
    assert_eq!(analysis[0].finding, finding("a"));
    assert_eq!(analysis[1].step_id, None);
    assert_eq!(analysis[1].finding, finding("b"));

    assert_eq!(store.integrity_check().unwrap(), "ok");
    (run, s0, s1)
}

/// `push_run`: the copy reads back as the original (new ids), a second push
/// adds nothing, and a copy made while the run was running is replaced
/// once it has ended.
pub fn push_copies_once_and_replaces_a_running_copy(src: &Store, dst: &Store) {
    use iorig_store::Pushed;
    // Something in the target first, so ids differ.
    let other = dst
        .create_run(&new_run(RunKind::Run, "2026-01-01T00:00:00Z"))
        .unwrap();
    let run = src
        .create_run(&new_run(RunKind::Plan, "2026-01-02T00:00:00Z"))
        .unwrap();
    let p = params("qd = 4\n");
    let step = src
        .upsert_step(
            run,
            &NewStep {
                index: 0,
                name: "qd4",
                role: StepRole::Run,
                params: Some(&p),
            },
        )
        .unwrap();
    let rows = IntervalRow::rows_of(0, 1.0, 1.0, false, &stats(2), CpuUsage::default(), None);
    src.add_intervals(step, &rows).unwrap();
    src.put_analysis(run, Some(step), &finding("step")).unwrap();
    let external = vec![
        iorig_store::ExternalRow {
            seq: 0,
            source: "cmd: array-cli".into(),
            name: "cache_hit_ratio".into(),
            value: Some(0.97),
            error: None,
        },
        iorig_store::ExternalRow {
            seq: 0,
            source: "http://array:9100/metrics".into(),
            name: String::new(),
            value: None,
            error: Some("connecting: refused".into()),
        },
    ];
    src.add_external(step, &external).unwrap();

    let Pushed::Copied(copy) = src.push_run(run, dst).unwrap() else {
        panic!("not copied")
    };
    assert_ne!(copy, run);
    assert_ne!(copy, other);
    assert_eq!(dst.run_uid(copy).unwrap(), src.run_uid(run).unwrap());
    assert_eq!(
        src.push_run(run, dst).unwrap(),
        Pushed::AlreadyThere(copy),
        "running on both sides: nothing to replace"
    );

    // The run ends; the next push replaces the partial copy.
    src.finish_step(step, StepStatus::Ok, Some(&summary(1.0)), "t")
        .unwrap();
    src.put_histogram(step, Op::Total, HistKind::Lat, &stats(2).total().lat)
        .unwrap();
    src.finish_run(run, RunStatus::Ok, "2026-01-02T00:01:00Z")
        .unwrap();
    let Pushed::Replaced(copy) = src.push_run(run, dst).unwrap() else {
        panic!("not replaced")
    };
    assert_eq!(src.push_run(run, dst).unwrap(), Pushed::AlreadyThere(copy));
    assert_eq!(dst.list_runs().unwrap().len(), 2);

    let (a, b) = (
        src.get_run(run).unwrap().unwrap(),
        dst.get_run(copy).unwrap().unwrap(),
    );
    assert_eq!(b.run.status, RunStatus::Ok);
    assert_eq!(
        (&a.run.labels, &a.plan_json, &a.command_line),
        (&b.run.labels, &b.plan_json, &b.command_line)
    );
    let (sa, sb) = (src.steps(run).unwrap(), dst.steps(copy).unwrap());
    assert_eq!(sb.len(), 1);
    assert_eq!(
        (&sa[0].params, &sa[0].summary, sa[0].status),
        (&sb[0].params, &sb[0].summary, sb[0].status)
    );
    assert_eq!(
        src.intervals(sa[0].id).unwrap(),
        dst.intervals(sb[0].id).unwrap()
    );
    let hist = |s: &Store, id| {
        s.histogram(id, Op::Total, HistKind::Lat)
            .unwrap()
            .unwrap()
            .to_bytes()
    };
    assert_eq!(hist(src, sa[0].id), hist(dst, sb[0].id));
    assert_eq!(dst.external(sb[0].id).unwrap(), external);
    let found = dst.analysis(copy).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].step_id, Some(sb[0].id));
    assert!(matches!(
        src.push_run(RunId(999), dst),
        Err(StoreError::NoSuchRun(999))
    ));
}
