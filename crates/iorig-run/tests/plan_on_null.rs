//! Protects running a plan as a library, with no terminal: the built-in
//! curve plan on the null engine reports through a collecting sink every
//! step in order with its role, each measured interval, the per-step rate
//! checks and the plan's curve finding; the store writer, fed the same
//! events, holds the same steps, intervals and findings; an interrupt before
//! the first step ends the plan as interrupted with nothing run.

use iorig_result::{Finding, Op, RunKind, RunStatus, StepRole, StepStatus};
use iorig_run::plan::{Invocation, PlanRun};
use iorig_run::store::Origin;
use iorig_run::{Collector, Stop, StoreWriter};
use iorig_store::Store;
use std::collections::BTreeMap;

/// The built-in curve plan, on the null engine, without warmup, one second
/// a step, on a scratch file in `dir`.
fn curve_on_null(dir: &std::path::Path) -> Invocation {
    let mut inv = Invocation::from_builtin("curve").expect("built-in curve");
    inv.text = inv
        .text
        .replace("[defaults]\n", "[defaults]\nengine = \"null\"\n")
        .replace("warmup = \"10s\"", "warmup = \"0s\"");
    assert!(
        inv.text.contains("engine = \"null\""),
        "the plan has [defaults]"
    );
    inv.targets = Some(vec![dir.join("scratch").display().to_string()]);
    inv.size = Some("4m".into());
    inv.step_time = Some("1s".into());
    inv
}

#[test]
fn a_builtin_plan_runs_on_the_null_engine_into_a_collecting_sink_and_the_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("iorig.db");
    let run = PlanRun::new(curve_on_null(dir.path())).expect("plan checks");
    assert_eq!(run.steps.len(), 7, "max and six rates");
    let mut store = StoreWriter::at(&iorig_store::Location::File(db.clone()), Origin::default())
        .expect("store");
    let mut sink = Collector::default();
    let outcome = run
        .run(
            RunKind::Plan,
            &BTreeMap::new(),
            &mut store,
            &mut sink,
            &Stop::new(),
        )
        .expect("plan runs");

    assert_eq!(outcome.status, RunStatus::Ok);
    assert_eq!(sink.run_status, Some(RunStatus::Ok));
    let roles: Vec<String> = sink.begun.iter().map(|s| s.role.to_string()).collect();
    assert_eq!(
        roles,
        [
            "curve-max",
            "curve-10%",
            "curve-50%",
            "curve-70%",
            "curve-80%",
            "curve-90%",
            "curve-100%"
        ]
    );
    assert_eq!(
        sink.pending.len(),
        7,
        "every step pending before the first runs"
    );
    assert_eq!(sink.ended.len(), 7);
    assert!(sink.ended.iter().all(|(_, s, _)| *s == StepStatus::Ok));
    for (i, (index, _, summary)) in sink.ended.iter().enumerate() {
        assert_eq!(*index, i);
        assert!(summary.total.ops > 0, "step {i} did I/O");
        let measured = sink
            .intervals
            .iter()
            .filter(|(s, iv)| s == index && !iv.warmup)
            .count();
        assert!(measured >= 1, "step {i} has its intervals");
    }
    // Each rate step was checked against its rate; the null engine is not
    // judged for generator limits (it has no device to wait for).
    let rate_checks = sink
        .findings
        .iter()
        .filter(|(_, f)| matches!(f, Finding::Rate(_)))
        .count();
    assert_eq!(rate_checks, 6);
    assert!(!sink
        .findings
        .iter()
        .any(|(_, f)| matches!(f, Finding::GeneratorBound(_))));
    let curves: Vec<_> = sink
        .findings
        .iter()
        .filter_map(|(i, f)| match f {
            Finding::Curve(c) => Some((i, c)),
            _ => None,
        })
        .collect();
    assert_eq!(curves.len(), 1, "one curve finding for the plan");
    assert_eq!(curves[0].0, &None, "of the plan, not a step");
    assert_eq!(curves[0].1.steps.len(), 7);

    // The store holds what the sink saw.
    let run_id = outcome.run.expect("recorded");
    drop(store);
    let db = Store::open_read_only(&db).expect("store opens");
    let steps = db.steps(run_id).expect("steps");
    assert_eq!(steps.len(), 7);
    for row in &steps {
        assert_eq!(row.status, StepStatus::Ok);
        assert!(matches!(
            row.role,
            StepRole::CurveMax | StepRole::CurveRate { .. }
        ));
        let stored = db
            .intervals(row.id)
            .expect("intervals")
            .into_iter()
            .filter(|r| r.op == Op::Total)
            .count();
        let seen = sink
            .intervals
            .iter()
            .filter(|(s, _)| *s as i64 == row.index)
            .count();
        assert_eq!(stored, seen, "step {} stored every interval", row.index);
        let summary = row.summary.as_ref().and_then(|s| s.io()).expect("summary");
        assert_eq!(
            Some(summary),
            sink.ended.get(row.index as usize).map(|e| &e.2)
        );
    }
    let findings = db.analysis(run_id).expect("analysis");
    assert_eq!(findings.len(), sink.findings.len());
    assert_eq!(
        db.get_run(run_id).expect("run").expect("run").run.status,
        RunStatus::Ok
    );
}

#[test]
fn an_interrupt_before_the_first_step_runs_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = PlanRun::new(curve_on_null(dir.path())).expect("plan checks");
    let stop = Stop::new();
    stop.interrupt();
    let mut sink = Collector::default();
    let outcome = run
        .run(
            RunKind::Plan,
            &BTreeMap::new(),
            &mut StoreWriter::none(),
            &mut sink,
            &stop,
        )
        .expect("plan ends");
    assert_eq!(outcome.status, RunStatus::Interrupted);
    assert!(sink.begun.is_empty());
    assert!(sink.intervals.is_empty());
    assert_eq!(outcome.run, None, "nothing recorded without a store");
}

/// A curve of two jobs (vdbench's iorate=curve over two wds): the max step
/// runs both unpaced, and each rate step paces each job at its share of
/// its own max (its IOPS there × pct, rounded), so the rates add up to the
/// curve's share of the max. Think times hold the max to rates any machine
/// keeps; the check is on the rates asked, not on what was reached.
#[test]
fn a_curve_of_two_jobs_paces_each_at_its_share_of_its_own_max() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text = "name = 'two'\n[defaults]\nengine = 'null'\ntime = '1s'\nwarmup = '0s'\n\
        [[steps]]\nkind = 'curve'\nrates_pct = [50, 80]\n\
        [[steps.jobs]]\nname = 'a'\nthink_time = '2ms'\n\
        [[steps.jobs]]\nname = 'b'\nthink_time = '1ms'\nthreads = 2\n";
    let inv = Invocation::from_text("two.toml".into(), text.into());
    let run = PlanRun::new(inv).expect("plan checks");
    assert_eq!(run.steps.len(), 3);
    let mut store = StoreWriter::at(
        &iorig_store::Location::File(dir.path().join("t.db")),
        Origin::default(),
    )
    .expect("store");
    let outcome = run
        .run(
            RunKind::Plan,
            &BTreeMap::new(),
            &mut store,
            &mut Collector::default(),
            &Stop::new(),
        )
        .expect("plan runs");
    assert_eq!(outcome.status, RunStatus::Ok);
    let jobs = |k: usize| -> Vec<(String, f64, Option<f64>)> {
        outcome.results[k]
            .jobs
            .iter()
            .map(|j| {
                let r = &j.result;
                (r.name.clone(), r.summary.total.iops, r.workload.rate_iops)
            })
            .collect()
    };
    let max = jobs(0);
    assert_eq!(max.len(), 2);
    assert!(
        max.iter()
            .all(|(_, iops, rate)| *iops > 0.0 && rate.is_none()),
        "{max:?}"
    );
    for (k, pct) in [(1, 50.0), (2, 80.0)] {
        let paced = jobs(k);
        for ((name, at_max, _), (_, _, rate)) in max.iter().zip(&paced) {
            let want = (at_max * pct / 100.0).max(1.0).round();
            assert_eq!(*rate, Some(want), "job {name} at {pct}%: {paced:?}");
        }
    }
}
