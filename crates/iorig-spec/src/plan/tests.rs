//! Tests of plan parsing, expansion, built-ins and the duration estimate.

use super::*;
use crate::{EngineKind, Rate, StrOrNum};

fn plan(text: &str) -> Plan {
    Plan::from_toml("t.toml", text).unwrap()
}

fn expand(text: &str) -> Vec<PlanStep> {
    plan(text).expand().unwrap()
}

fn parse_err(text: &str) -> String {
    Plan::from_toml("t.toml", text).unwrap_err().to_string()
}

fn expand_err(text: &str) -> String {
    plan(text).expand().unwrap_err().to_string()
}

fn axis<'a>(step: &'a PlanStep, key: &str) -> &'a str {
    step.axes
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .unwrap()
}

#[test]
fn matrix_is_132_steps_read_outermost_then_bs_then_threads() {
    let steps = builtin("matrix").unwrap().expand().unwrap();
    assert_eq!(steps.len(), 132);
    let keys: Vec<&str> = steps[0].axes.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["read", "bs", "threads"]);
    assert_eq!(steps[0].label, "read=0 bs=4k threads=2");
    assert_eq!(steps[1].label, "read=0 bs=4k threads=4");
    assert_eq!(steps[4].label, "read=0 bs=8k threads=2");
    assert_eq!(steps[12].label, "read=10 bs=4k threads=2");
    assert_eq!(steps[131].label, "read=100 bs=16k threads=16");
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s.index, i);
        assert_eq!(s.time, Some(Duration::from_secs(60)));
        let w = s.workload.resolve(1).unwrap();
        assert_eq!(w.read_pct.to_string(), axis(s, "read"));
        assert_eq!(w.threads.to_string(), axis(s, "threads"));
        assert_eq!(w.qd, 1);
    }
}

#[test]
fn axes_follow_the_written_order() {
    let steps = expand("[[steps]]\nthreads = [1, 2]\nbs = ['4k', '8k']\nread = [0, 100]\n");
    let labels: Vec<&str> = steps.iter().map(|s| s.label.as_str()).collect();
    assert_eq!(labels[0], "threads=1 bs=4k read=0");
    assert_eq!(labels[1], "threads=1 bs=4k read=100");
    assert_eq!(labels[2], "threads=1 bs=8k read=0");
    assert_eq!(labels[4], "threads=2 bs=4k read=0");
}

#[test]
fn step_values_beat_defaults_and_default_lists_sweep_outside() {
    let steps = expand(
        "[defaults]\nbs = '4k'\nqd = 8\nread = [0, 100]\ntime = '10s'\n\
         [[steps]]\nname = 'a'\nqd = 16\nthreads = [1, 2]\n\
         [[steps]]\nname = 'b'\nread = 50\n",
    );
    assert_eq!(steps.len(), 4 + 1);
    // [defaults] axes are outer loops, the step's own inner.
    assert_eq!(steps[0].label, "a read=0 threads=1");
    assert_eq!(steps[1].label, "a read=0 threads=2");
    assert_eq!(steps[2].label, "a read=100 threads=1");
    let w = steps[0].workload.resolve(1).unwrap();
    assert_eq!((w.qd, w.bs.max_bytes()), (16, 4096));
    assert_eq!(w.time, Duration::from_secs(10));
    // A step's scalar replaces a [defaults] list: no axis left.
    assert_eq!(steps[4].label, "b");
    assert!(steps[4].axes.is_empty());
    assert_eq!(steps[4].workload.resolve(1).unwrap().read_pct, 50.0);
}

#[test]
fn a_step_setting_one_of_a_pair_hides_the_defaults_other() {
    let steps = expand("[defaults]\ndirect = [true, false]\n[[steps]]\nbuffered = true\n");
    assert_eq!(steps.len(), 1);
    assert!(!steps[0].workload.resolve(1).unwrap().direct);
}

#[test]
fn unknown_keys_are_named_with_their_step() {
    let e = parse_err("[[steps]]\nbs = '4k'\n[[steps]]\nblocksize = '4k'\n");
    assert!(e.contains("step 2") && e.contains("'blocksize'"), "{e}");
    let e = parse_err("[defaults]\nbogus = 1\n[[steps]]\n");
    assert!(e.contains("[defaults]") && e.contains("'bogus'"), "{e}");
    let e = parse_err("bs = '4k'\n[[steps]]\n");
    assert!(e.contains("unknown key 'bs'"), "{e}");
    let e = parse_err("[[steps]]\nsteady_state = { rounds = 3 }\n");
    assert!(e.contains("steady_state.rounds"), "{e}");
    let e = parse_err("[[steps]]\npasses = 2\n");
    assert!(e.contains("does not belong to a run step"), "{e}");
}

#[test]
fn target_and_size_in_a_step_are_rejected() {
    let e = parse_err("[[steps]]\ntarget = '/dev/sda'\n");
    assert!(e.contains("step 1") && e.contains("targets = [...]"), "{e}");
    let e = parse_err("[defaults]\nsize = '1g'\n[[steps]]\n");
    assert!(e.contains("[defaults]") && e.contains("'size'"), "{e}");
    let e = parse_err("target = 'x'\n[[steps]]\n");
    assert!(e.contains("targets = "), "{e}");
}

#[test]
fn plan_level_targets_and_size_reach_every_step() {
    let steps = expand(
        "targets = ['/dev/loop0', '/dev/loop1']\nsize = '64m'\n\
         [[steps]]\nkind = 'precondition'\n[[steps]]\nbs = ['4k', '8k']\n",
    );
    for s in &steps {
        let w = s.workload.resolve(1).unwrap();
        assert_eq!(w.targets, ["/dev/loop0", "/dev/loop1"]);
        assert_eq!(w.size_bytes, Some(64 << 20));
    }
}

#[test]
fn bad_values_fail_at_expand_naming_the_step() {
    let e = expand_err("[[steps]]\nread = [50, 101]\n");
    assert!(
        e.contains("step 1 (read=101)") && e.contains("outside 0-100"),
        "{e}"
    );
    let e = expand_err("[[steps]]\nengine = 'psync'\nqd = [1, 4]\n");
    assert!(e.contains("qd=4") && e.contains("psync"), "{e}");
    let e = parse_err("[[steps]]\nqd = 'many'\nthreads = [[1]]\n");
    assert!(e.contains("list of lists"), "{e}");
    let e = parse_err("[[steps]]\nbs = []\n");
    assert!(e.contains("sweeps over nothing"), "{e}");
    let e = parse_err("[[steps]]\ndirect = 'yes'\n");
    assert!(e.contains("'direct'"), "{e}");
    let e = parse_err("[[steps]]\npause = '5s'\npause_mb_per_s = 100\n");
    assert!(e.contains("not both"), "{e}");
    let e = parse_err("[[steps]]\ntime = '1m'\nsteady_state = true\n");
    assert!(e.contains("steady_state"), "{e}");
    let e = parse_err("[[steps]]\nsteady_state = { max_rounds = 3, window = 5 }\n");
    assert!(e.contains("window"), "{e}");
    let e = parse_err("[[steps]]\nkind = 'soak'\n");
    assert!(e.contains("unknown kind 'soak'"), "{e}");
    let e = parse_err("name = 'x'\n");
    assert!(e.contains("no steps"), "{e}");
    let e = parse_err("[[steps]\n");
    assert!(e.contains("line 1"), "{e}");
}

#[test]
fn curve_is_max_then_one_step_per_pct() {
    let steps = expand(
        "[[steps]]\nkind = 'curve'\nbs = '8k'\nread = 70\n\
         [[steps]]\nkind = 'curve'\nrates_pct = [50, 100]\nstop_latency_ms = 5\n",
    );
    assert_eq!(steps.len(), 7 + 3);
    assert_eq!(steps[0].role, StepRole::CurveMax { group: 0 });
    assert_eq!(steps[0].workload.resolve(1).unwrap().rate, Rate::Max);
    let pcts: Vec<f64> = steps[1..7]
        .iter()
        .map(|s| match &s.role {
            StepRole::CurveRate { group: 0, pct } => *pct,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(pcts, [10.0, 50.0, 70.0, 80.0, 90.0, 100.0]);
    assert!(steps[1..7].iter().all(|s| s.workload.rate.is_none()));
    assert_eq!(steps[0].label, "curve max");
    assert_eq!(steps[1].label, "curve rate=10%");
    assert_eq!(steps[0].threshold_ms, Some(1.0));
    assert_eq!(steps[0].stop_latency_ms, None);
    assert_eq!(steps[7].role, StepRole::CurveMax { group: 1 });
    assert_eq!(
        steps[9].role,
        StepRole::CurveRate {
            group: 1,
            pct: 100.0
        }
    );
    assert_eq!(steps[9].stop_latency_ms, Some(5.0));
    let e = parse_err("[[steps]]\nkind = 'curve'\nrate = 100\n");
    assert!(e.contains("a curve sets the rate itself"), "{e}");
}

#[test]
fn a_curve_refines_in_whole_rounds_after_its_rates() {
    let steps = expand("[[steps]]\nkind = 'curve'\nrates_pct = [50, 90]\nrefine = 3\n");
    assert_eq!(steps.len(), 6);
    let rounds: Vec<u32> = steps
        .iter()
        .filter_map(|s| match s.role {
            StepRole::CurveRefine { round, .. } => Some(round),
            _ => None,
        })
        .collect();
    assert_eq!(rounds, [1, 2, 3]);
    assert_eq!(steps[5].label, "curve refine=3");
    assert!(steps[5].workload.rate.is_none(), "the runner sets it");
    for bad in ["refine = 9", "refine = -1", "refine = 1.5"] {
        let e = parse_err(&format!("[[steps]]\nkind = 'curve'\n{bad}\n"));
        assert!(e.contains("refine:"), "{bad}: {e}");
    }
    let e = parse_err("[[steps]]\nkind = 'run'\nrefine = 2\n");
    assert!(e.contains("refine"), "{e}");
}

#[test]
fn a_curve_of_one_job_judges_a_kept_percentile() {
    let steps = expand(
        "[[steps]]\nkind = 'curve'\nrates_pct = [50]\nthreshold_percentile = 99.9\n\
         [[steps.jobs]]\nname = 'j'\ntarget = ['/tmp/a']\nsize = '1m'\n",
    );
    assert_eq!(steps.len(), 2);
    for s in &steps {
        assert_eq!(s.jobs.len(), 1);
        assert_eq!(s.threshold_percentile, Some(99.9));
    }
    // The job inherits the max step's rate and none on a rate step (the
    // runner sets it).
    let max = steps[0].jobs[0].workload.resolve(1).unwrap();
    assert_eq!(max.rate, Rate::Max);
    assert!(steps[1].jobs[0].workload.rate.is_none());
    let e = parse_err("[[steps]]\nkind = 'curve'\nthreshold_percentile = 95\n");
    assert!(e.contains("give 50, 90, 99, 99.9, 99.99 or 100"), "{e}");
    // Several jobs make one curve; none may carry a rate.
    let e = parse_err(
        "[[steps]]\nkind = 'curve'\n[[steps.jobs]]\nname = 'a'\n[[steps.jobs]]\nname = 'b'\nrate = 10\n",
    );
    assert!(
        e.contains("job 'b'") && e.contains("a curve sets the rate itself"),
        "{e}"
    );
    let e = parse_err("[[steps]]\nkind = 'curve'\n[[steps.jobs]]\nname = 'a'\nrate = 10\n");
    assert!(e.contains("a curve sets the rate itself"), "{e}");
    let e = parse_err("[[steps]]\nkind = 'qd_cycle'\n[[steps.jobs]]\nname = 'a'\n");
    assert!(e.contains("'jobs' belongs to a run step"), "{e}");
}

#[test]
fn a_swept_curve_is_one_curve_per_combination() {
    let steps = expand(
        "[defaults]\nrate = 500\n[[steps]]\nkind = 'curve'\nbs = ['4k', '8k']\nrates_pct = [50]\n",
    );
    assert_eq!(steps.len(), 4);
    assert_eq!(steps[2].role, StepRole::CurveMax { group: 1 });
    assert_eq!(steps[3].label, "curve rate=50% bs=8k");
    // A [defaults] rate does not reach a curve.
    assert_eq!(steps[0].workload.resolve(1).unwrap().rate, Rate::Max);
}

#[test]
fn qd_cycle_doubles_to_qd_max() {
    let steps = builtin("qd-cycle").unwrap().expand().unwrap();
    assert_eq!(steps.len(), 10);
    let qds: Vec<u32> = steps
        .iter()
        .map(|s| s.workload.resolve(1).unwrap().qd)
        .collect();
    assert_eq!(qds, [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]);
    assert!(steps
        .iter()
        .all(|s| s.role == StepRole::QdCycle { group: 0 }));
    assert_eq!(steps[3].label, "qd=8");
    let steps = expand("[[steps]]\nkind = 'qd_cycle'\nqd_max = 12\n");
    assert_eq!(steps.len(), 5);
    assert_eq!(steps[4].workload.qd, Some(StrOrNum::Int(12)));
    let steps = expand("[defaults]\nqd = 4\n[[steps]]\nkind = 'qd_cycle'\nqd_list = [3, 7]\n");
    assert_eq!(steps[1].workload.qd, Some(StrOrNum::Int(7)));
    let e = parse_err("[[steps]]\nkind = 'qd_cycle'\nqd = 4\n");
    assert!(e.contains("qd_max or qd_list"), "{e}");
}

#[test]
fn precondition_is_one_step_without_time() {
    let steps = expand(
        "[defaults]\nbs = '4k'\nthreads = 16\nengine = 'psync'\nread = [0, 100]\npause = '30s'\n\
         [[steps]]\nkind = 'precondition'\npasses = 3\npattern = 'random'\nbs = '16k'\ndata = 'zero'\n\
         [[steps]]\nkind = 'precondition'\nengine = 'io_uring'\ntrim = true\n",
    );
    assert_eq!(steps.len(), 2);
    let spec = PreconditionSpec {
        passes: 3,
        random: true,
        bs_bytes: 16 << 10,
        data: DataPattern::Zero,
        trim: false,
    };
    assert_eq!(steps[0].role, StepRole::Precondition(spec));
    assert_eq!(steps[0].time, None);
    assert!(steps[0].workload.time.is_none());
    assert_eq!(steps[0].pause, Pause::Fixed(Duration::from_secs(30)));
    assert_eq!(steps[0].label, "precondition 3x random 16k");
    let w = steps[0].workload.resolve(1).unwrap();
    // bs and threads from [defaults] do not reach a precondition; engine does,
    // and psync gets one I/O per worker.
    assert_eq!((w.read_pct, w.random_pct), (0.0, 100.0));
    assert_eq!((w.bs.max_bytes(), w.threads, w.qd), (16 << 10, 1, 1));
    assert_eq!(w.engine, EngineKind::Psync);
    let w = steps[1].workload.resolve(1).unwrap();
    assert_eq!((w.random_pct, w.bs.max_bytes(), w.qd), (0.0, 128 << 10, 32));
    assert_eq!(w.data, DataPattern::Random);
    assert_eq!(
        steps[1].role,
        StepRole::Precondition(PreconditionSpec {
            passes: 2,
            random: false,
            bs_bytes: 128 << 10,
            data: DataPattern::Random,
            trim: true,
        })
    );
    assert_eq!(steps[1].label, "precondition trim + 2x seq 128k");
    let e = parse_err("[[steps]]\nkind = 'precondition'\ntrim = 'yes'\n");
    assert!(e.contains("trim: use true or false"), "{e}");
    let e = parse_err("[[steps]]\nkind = 'precondition'\nread = 50\n");
    assert!(e.contains("does not apply to a precondition"), "{e}");
    let e = parse_err("[[steps]]\nkind = 'precondition'\nsteady_state = true\n");
    assert!(e.contains("does not apply to a precondition"), "{e}");
}

#[test]
fn pause_hot_size_and_steady_state() {
    let steps = expand(
        "hot_size = '25%'\n[defaults]\npause_mb_per_s = 200\n\
         [[steps]]\nhot = true\nsteady_state = { round = '30s', max_rounds = 8, window = 4 }\n\
         [[steps]]\nhot_size = '8g'\npause = '5s'\n\
         [[steps]]\npause = 0\n",
    );
    assert_eq!(steps[0].pause, Pause::WrittenBytesAt { bytes_per_s: 200e6 });
    assert_eq!(steps[0].workload.range.as_deref(), Some("0%-25%"));
    assert_eq!(steps[0].hot_size_bytes, None);
    assert_eq!(
        steps[0].steady_state,
        Some(SteadyStateSpec {
            round: Duration::from_secs(30),
            max_rounds: 8,
            window: 4,
            ..SteadyStateSpec::DEFAULT
        })
    );
    assert_eq!(steps[0].time, Some(Duration::from_secs(30)));
    assert_eq!(steps[1].hot_size_bytes, Some(8 << 30));
    assert_eq!(steps[1].workload.range, None);
    assert_eq!(steps[1].pause, Pause::Fixed(Duration::from_secs(5)));
    assert_eq!(steps[2].pause, Pause::None);
    let e = expand_err("[defaults]\nrange = '0%-50%'\n[[steps]]\nhot = true\n");
    assert!(e.contains("keep one"), "{e}");
    let e = parse_err("[[steps]]\nhot_size = '0%'\n");
    assert!(e.contains("hot_size"), "{e}");
}

#[test]
fn every_builtin_parses_expands_and_resolves() {
    let names: Vec<&str> = builtins().iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "five-params",
            "matrix",
            "curve",
            "qd-cycle",
            "flash-cliff",
            "flash-matrix",
            "cluster",
            "fs-metadata",
            "fs-smallfile",
            "fs-stream"
        ]
    );
    for (name, description) in builtins() {
        let mut plan = builtin(name)
            .unwrap_or_else(|| panic!("{:?}", Plan::from_toml(name, builtin_text(name).unwrap())));
        if name.starts_with("fs-") {
            // The runner sets the anchor from a directory target.
            plan.anchor = Some("/some/dir".into());
        }
        assert_eq!(plan.name, name);
        assert_eq!(plan.description.as_deref(), Some(description));
        let steps = plan.expand().unwrap();
        assert!(!steps.is_empty());
        for s in &steps {
            s.workload.resolve(1).unwrap();
        }
    }
    assert!(builtin("nope").is_none());
}

#[test]
fn builtin_shapes() {
    let five = builtin("five-params").unwrap().expand().unwrap();
    assert_eq!(five.len(), 6);
    assert!(matches!(five[0].role, StepRole::Precondition(_)));
    let hot = &five[5];
    assert_eq!(hot.workload.range.as_deref(), Some("0%-10%"));
    assert!(hot.steady_state.is_some());
    assert_eq!(hot.warmup, Duration::from_secs(900));

    let curve = builtin("curve").unwrap().expand().unwrap();
    assert_eq!(curve.len(), 7);

    let cliff = builtin("flash-cliff").unwrap().expand().unwrap();
    assert_eq!(cliff.len(), 1 + 6 + 12);
    assert_eq!(cliff[1].time, Some(Duration::from_secs(40 * 60)));
    assert_eq!(cliff[1].label, "write bs=4k");

    let fm = builtin("flash-matrix").unwrap().expand().unwrap();
    assert_eq!(fm.len(), 1 + 3 * 6 * 9 + 3 * 6 * 2 * 9);
    let last = fm.last().unwrap().workload.resolve(1).unwrap();
    assert_eq!(
        (last.qd, last.threads, last.engine),
        (64, 256, EngineKind::IoUring)
    );
    assert!(matches!(fm[1].pause, Pause::WrittenBytesAt { .. }));
}

#[test]
fn with_step_time_scales_time_warmup_round_and_pause() {
    let text = "[defaults]\ntime = '60s'\nwarmup = '30s'\npause = '2m'\n\
                [[steps]]\nkind = 'precondition'\n\
                [[steps]]\nbs = ['4k', '8k']\n\
                [[steps]]\nwarmup = '15m'\nsteady_state = { round = '1m', max_rounds = 30 }\n";
    let steps = plan(text)
        .with_step_time(Duration::from_secs(6))
        .expand()
        .unwrap();
    assert_eq!(steps[0].time, None);
    assert_eq!(steps[0].pause, Pause::Fixed(Duration::from_secs(6)));
    assert_eq!(steps[1].time, Some(Duration::from_secs(6)));
    assert_eq!(steps[1].warmup, Duration::from_secs(3));
    assert_eq!(steps[1].pause, Pause::Fixed(Duration::from_secs(6)));
    assert_eq!(steps[3].time, Some(Duration::from_secs(6)));
    assert_eq!(steps[3].steady_state.unwrap().round, Duration::from_secs(6));
    assert_eq!(steps[3].steady_state.unwrap().max_rounds, 30);
    // 15 min × 0.1 = 90 s, capped at the step time.
    assert_eq!(steps[3].warmup, Duration::from_secs(6));
    let short = builtin("flash-cliff")
        .unwrap()
        .with_step_time(Duration::from_millis(1500))
        .expand()
        .unwrap();
    assert!(short[1..]
        .iter()
        .all(|s| s.time == Some(Duration::from_millis(1500))));
}

#[test]
fn estimate_is_the_hand_sum() {
    let steps = expand(
        "size = '1g'\n[defaults]\ntime = '60s'\nwarmup = '10s'\n\
         [[steps]]\nkind = 'precondition'\npasses = 2\npause = '30s'\n\
         [[steps]]\nbs = ['4k', '8k']\npause = '5s'\n\
         [[steps]]\nsteady_state = { round = '1m', max_rounds = 10, window = 5 }\n\
         [[steps]]\npause_mb_per_s = 100\n",
    );
    // Precondition: 2 × 2^30 B ÷ 100 MB/s + 30 s pause.
    let pre_s = 2.0 * (1u64 << 30) as f64 / 100e6 + 30.0;
    let runs_s = 2.0 * (10.0 + 60.0 + 5.0) + (10.0 + 600.0) + (10.0 + 60.0);
    let got = estimate_duration(&steps, None, 100.0).as_secs_f64();
    assert!((got - (pre_s + runs_s)).abs() < 1e-6, "{got}");
    // A known target size replaces the step's size.
    let got = estimate_duration(&steps, Some(4 << 30), 100.0).as_secs_f64();
    let pre_s = 2.0 * (4u64 << 30) as f64 / 100e6 + 30.0;
    assert!((got - (pre_s + runs_s)).abs() < 1e-6, "{got}");
}

#[test]
fn names_default_to_the_file_name() {
    let p = Plan::from_toml("dir/nightly.toml", "[[steps]]\n").unwrap();
    assert_eq!(p.name, "nightly");
    assert_eq!(p.block_count(), 1);
    let steps = p.expand().unwrap();
    assert_eq!(steps[0].label, "step 1");
    assert_eq!(steps[0].time, Some(Duration::from_secs(30)));
}

#[test]
fn names_with_control_characters_are_refused() {
    // A step's, job's or plan's name reaches terminals (the run's output,
    // runs show) and the store: an escape sequence in it is refused with
    // its place, as a label's is.
    let e = parse_err("[[steps]]\nname = \"seq\\u001b[2Jread\"\n");
    assert!(
        e.contains("step 1: name: holds a control character (U+001B)"),
        "{e}"
    );
    assert!(!e.contains('\u{1b}'), "{e}");
    let e = parse_err("name = \"n\\u009b31m\"\n[[steps]]\n");
    assert!(
        e.contains("name: holds a control character (U+009B)"),
        "{e}"
    );
    let e = parse_err("[[steps]]\n[[steps.jobs]]\nname = \"a\\nb\"\n");
    assert!(
        e.contains("job 1: name: holds a control character (U+000A)"),
        "{e}"
    );
    assert_eq!(
        plan("[[steps]]\nname = \"read 4k <b> ü\"\n").steps[0]
            .name
            .as_deref(),
        Some("read 4k <b> ü")
    );
}

#[test]
fn hot_size_parse() {
    assert_eq!(HotSize::parse("10%"), Ok(HotSize::Pct(10.0)));
    assert_eq!(HotSize::parse("8g"), Ok(HotSize::Bytes(8 << 30)));
    assert!(HotSize::parse("101%").is_err());
    assert!(HotSize::parse("0").is_err());
}

#[test]
fn a_mistyped_key_gets_the_nearest_name() {
    let e = Plan::from_toml("p.toml", "[[steps]]\ntreads = 4\n")
        .and_then(|p| p.expand().map(|_| p))
        .expect_err("refused")
        .to_string();
    assert!(
        e.contains("unknown key 'treads'; Did you mean 'threads'?"),
        "{e}"
    );
    let e = Plan::from_toml("p.toml", "nmae = 'x'\n[[steps]]\nqd = 1\n")
        .expect_err("refused")
        .to_string();
    assert!(e.contains("Did you mean 'name'?"), "{e}");
    let e = crate::WorkloadFile::from_toml("w.toml", "treads = 4\n")
        .expect_err("refused")
        .to_string();
    assert!(e.contains("Did you mean 'threads'?"), "{e}");
}

#[test]
fn steady_state_rules_and_ramp() {
    use super::SteadyRule;
    assert_eq!(SteadyRule::parse("pts"), Ok(SteadyRule::Pts));
    assert_eq!(
        SteadyRule::parse("deviation:10%"),
        Ok(SteadyRule::DeviationMilliPct(10_000))
    );
    assert_eq!(
        SteadyRule::parse("slope:0.25%"),
        Ok(SteadyRule::SlopeMilliPct(250))
    );
    assert_eq!(SteadyRule::SlopeMilliPct(250).to_string(), "slope:0.25%");
    assert!(SteadyRule::parse("slope:0.25").is_err());
    assert!(SteadyRule::parse("range:5%").is_err());
    let spec = SteadyStateSpec {
        round: Duration::from_secs(1),
        ramp: Duration::from_millis(2500),
        ..SteadyStateSpec::DEFAULT
    };
    assert_eq!(spec.ramp_rounds(), 3);
    let e = Plan::from_toml(
        "p",
        "[[steps]]\nsteady_state = { round = \"1s\", window = 5, max_rounds = 6, ramp = \"2s\" }\n",
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("raise max_rounds"), "{e}");
}

#[test]
fn a_share_of_the_cache_and_workers_per_target_are_left_to_each_host() {
    let steps = expand(
        "cache_size = '8g'\n[defaults]\nthreads_per_target = 4\n[[steps]]\nkind = 'precondition'\nhot_size = '400% of cache'\n[[steps]]\nhot_size = '75% of cache'\n[[steps]]\nthreads_per_target = 1\n",
    );
    // The precondition fills the larger working set; [defaults]' workers
    // per target are not its.
    assert_eq!(
        steps[0].sizing,
        HostSizing {
            cache_pct: Some(400.0),
            cache_bytes: Some(8 << 30),
            threads_per_target: None
        }
    );
    assert_eq!(steps[1].sizing.cache_pct, Some(75.0));
    assert_eq!(steps[1].sizing.threads_per_target, Some(4));
    // Nothing became a range here: it depends on each host's targets.
    assert!(steps[1].workload.range.is_none());
    assert_eq!(steps[2].sizing.threads_per_target, Some(1));
    assert_eq!(steps[2].sizing.cache_pct, None);
    // Without a cache size the host finds or assumes one.
    assert_eq!(
        expand("[[steps]]\nhot_size = '50% of cache'\n")[0]
            .sizing
            .cache_bytes,
        None
    );

    assert_eq!(
        HotSize::parse("75% of cache").unwrap(),
        HotSize::OfCache(75.0)
    );
    for bad in [
        "0% of cache",
        "75 of cache",
        "x% of cache",
        "20000% of cache",
    ] {
        assert!(HotSize::parse(bad).is_err(), "{bad}");
    }
    let e = parse_err("[[steps]]\nthreads = 4\nthreads_per_target = 2\n");
    assert!(e.contains("not both"), "{e}");
    let e = parse_err("[[steps]]\nthreads_per_target = 0\n");
    assert!(e.contains("1 to 4096"), "{e}");
    // A precondition takes a share of the cache, never a plain hot size.
    let e = parse_err("[[steps]]\nkind = 'precondition'\nhot_size = '10%'\n");
    assert!(e.contains("does not apply to a precondition"), "{e}");
    let e = parse_err("[[steps]]\nkind = 'precondition'\nthreads_per_target = 2\n");
    assert!(e.contains("does not apply to a precondition"), "{e}");
    let e = parse_err("cache_size = '0'\n[[steps]]\n");
    assert!(e.contains("cache_size 0"), "{e}");
}
