//! Turning a finished step (or a plan's curve steps) into answers: the
//! generator-bound check, outages, the write cliff, steady state, and the
//! IOPS–latency curve. The arithmetic lives in `iorig_stats::analysis`; this
//! module feeds it and returns typed findings (a front end decides which
//! are worth a warning).

use crate::results::StepResult;
use crate::step::StepOutput;
use iorig_result::{
    CurveFinding, Finding, OffRatePoint, RateCheck, SteadyStateFinding, WriteCliffFinding,
};
use iorig_spec::plan::{SteadyRule, SteadyStateSpec, StepRole};
use iorig_spec::{EngineKind, Rate, Workload};
use iorig_stats::analysis::curve::{analyze_curve, CurvePoint, RATE_TOLERANCE_PCT};
use iorig_stats::analysis::little::{GeneratorBoundCheck, LittleInput};
use iorig_stats::analysis::series::{
    detect_outages, detect_write_cliff, CliffVerdict, SeriesPoint,
};
use iorig_stats::analysis::steady_state::SteadyStateDetector;
use std::collections::BTreeMap;

/// The first minute is the level a write cliff falls from (the flash document
/// sees the drop after 2–3 minutes).
const CLIFF_BASELINE_S: f64 = 60.0;
const CLIFF_DROP_PCT: f64 = 30.0;

fn host_cpus() -> u32 {
    std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1)
}

/// The load a step offered: one workload's, or its jobs' together.
struct Load {
    /// Outstanding I/Os it could keep (workers × qd, summed over jobs).
    slots: u32,
    /// Worker threads, summed over jobs.
    threads: u32,
    /// Paced by design (a rate, think times or a start delay): idle slots
    /// are then no sign of a slow generator.
    paced: bool,
    /// The rate asked for, when all of the load was paced by rate, as an
    /// average over the measured time (a start delay's idle part left out).
    rate_iops: Option<f64>,
    /// Whether the engine was null; None when jobs mixed engines.
    engine_null: Option<bool>,
}

impl Load {
    fn of(w: &Workload, out: &StepOutput) -> Load {
        if out.jobs.len() <= 1 {
            return Load {
                slots: w.threads.saturating_mul(w.qd),
                threads: w.threads,
                // Think times and a start delay idle the queue by design,
                // as a rate does.
                paced: matches!(w.rate, Rate::Iops(_))
                    || w.think.is_some()
                    || !w.start_delay.is_zero(),
                // Pauses that move the schedule lower the rate by design.
                rate_iops: match w.rate {
                    Rate::Iops(_) if w.think.is_some_and(|t| t.moves_rate) => None,
                    Rate::Iops(r) => Some(
                        r * active_share(
                            out.outcome.measured_s,
                            w.start_delay.as_secs_f64(),
                            w.warmup.as_secs_f64(),
                        ),
                    ),
                    Rate::Max => None,
                },
                engine_null: Some(w.engine == EngineKind::Null),
            };
        }
        let recs = out.jobs.iter().map(|j| &j.result.workload);
        let nulls: Vec<bool> = recs.clone().map(|r| r.engine == "null").collect();
        Load {
            slots: recs
                .clone()
                .map(|r| r.threads.saturating_mul(r.qd))
                .fold(0u32, u32::saturating_add),
            threads: recs
                .clone()
                .map(|r| r.threads)
                .fold(0u32, u32::saturating_add),
            paced: recs.clone().any(|r| {
                r.rate_iops.is_some() || r.think_time_s.is_some() || r.start_delay_s.is_some()
            }),
            rate_iops: recs
                .clone()
                .map(|r| {
                    r.rate_iops.filter(|_| !r.think_moves_rate).map(|rate| {
                        rate * active_share(
                            out.outcome.measured_s,
                            r.start_delay_s.unwrap_or(0.0),
                            r.warmup_s,
                        )
                    })
                })
                .sum(),
            engine_null: if nulls.iter().all(|n| *n) {
                Some(true)
            } else if nulls.iter().all(|n| !*n) {
                Some(false)
            } else {
                None
            },
        }
    }
}

/// The share of the measured time a workload issued I/O in: a start delay
/// (counted from the start, warmup included) idles the first part.
fn active_share(measured_s: f64, delay_s: f64, warmup_s: f64) -> f64 {
    if measured_s <= 0.0 {
        return 1.0;
    }
    let idle = (delay_s - warmup_s).clamp(0.0, measured_s);
    (measured_s - idle) / measured_s
}

/// Every check that applies to any step. `trace_paced`: a trace replay at
/// the trace's times, whose worker waits (spinning at the end) for each
/// I/O's time: its idle queue and busy worker are the pacing, not a slow
/// generator; it is judged, as a rate is, by how late it issued.
pub(crate) fn analyse_step(w: &Workload, out: &StepOutput, trace_paced: bool) -> Vec<Finding> {
    let mut found = Vec::new();
    let outcome = &out.outcome;
    let total = outcome.summary.total().summary(outcome.measured_s);

    // Little's law: were the I/Os really in flight? Latency here is from the
    // actual submission: the reported latency also covers the time an I/O
    // waited in the generator to be submitted, which is what this check is
    // looking for.
    // On several hosts each agent checks its own workers (the totals have
    // hosts × workers in flight, on no one machine's CPUs).
    let load = Load::of(w, out);
    // A paced step (a rate, a timed replay) is judged by how late iorig
    // issued its I/Os instead: its idle slots and spinning worker are the
    // pacing.
    let lag = &outcome.summary.issue_lag;
    let issue_lag_p99_ns = (!lag.is_empty()).then(|| lag.value_at_quantile(0.99));
    if load.engine_null == Some(false)
        && total.ops > 0
        && out.hosts.is_empty()
        && (!trace_paced || issue_lag_p99_ns.is_some())
    {
        let verdict = GeneratorBoundCheck::default().evaluate(LittleInput {
            iops: total.iops,
            mean_lat_ns: outcome.summary.total().service_mean_ns(),
            workers: load.slots,
            qd: 1,
            threads: load.threads,
            rate_limited: load.paced,
            cpu_busy_pct: outcome.cpu.usr_pct + outcome.cpu.sys_pct,
            host_cpus: host_cpus(),
            worker_busy_max_pct: outcome.worker_busy_pct.iter().copied().fold(0.0, f64::max),
            steal_pct: outcome.cpu.steal_pct,
            issue_lag_p99_ns,
            lat_p99_ns: total.lat_ns.p99,
        });
        let mut verdict = verdict;
        if verdict.generator_bound {
            // Under validation the generator is slower by design: say why
            // rather than suggest a faster host.
            let why = match &out.verify {
                Some(v) if v.journal.is_some() => Some(" (here the journal's synced records between I/Os are the limit: the price of --journal)"),
                Some(_) => Some(" (here stamping and checking blocks for --verify takes part of that time)"),
                None => None,
            };
            if let (Some(m), Some(why)) = (verdict.message.as_mut(), why) {
                m.push_str(why);
            }
        }
        found.push(Finding::GeneratorBound(verdict));
    }

    // A paced run that did not run at its rate says so: its latency is
    // that of another load than the one asked for.
    if let Some(requested) = load.rate_iops {
        if outcome.measured_s > 0.0 {
            let error_pct = 100.0 * (total.iops / requested - 1.0);
            let met = error_pct.abs() <= RATE_TOLERANCE_PCT;
            found.push(Finding::Rate(RateCheck {
                requested_iops: requested,
                achieved_iops: total.iops,
                error_pct,
                met,
                tolerance_pct: RATE_TOLERANCE_PCT,
            }));
        }
    }

    // The time series of the measured intervals.
    let points: Vec<SeriesPoint> = out
        .intervals
        .iter()
        .filter(|i| !i.warmup)
        // A start delay's intervals are idle by design, not an outage.
        .filter(|i| i.t_s - i.duration_s + 1e-9 >= w.start_delay.as_secs_f64())
        .map(|i| SeriesPoint {
            // `t_s` of an interval is its end; the analysis wants its start.
            t_s: i.t_s - i.duration_s,
            duration_s: i.duration_s,
            ops: i.total.ops,
            iops: i.total.iops,
            max_gap_ns: Some(i.longest_gap_ns),
            cpu_busy_pct: Some(i.cpu.usr_pct + i.cpu.sys_pct + i.cpu.steal_pct),
            // A dip while a worker never waited for the storage is the
            // generator's.
            worker_busy_pct: Some(i.worker_busy_max_pct),
        })
        .collect();
    if !points.is_empty() {
        let mut outages = detect_outages(&points);
        // The exact longest stretch without a completion, from the
        // completions' own timestamps (not whole intervals).
        outages.longest_gap_ns = Some(outcome.longest_gap_ns);
        outages.longest_gap_start_t_s = Some(outcome.longest_gap_start_s);
        found.push(Finding::Outages(outages));
        if w.writes() {
            let mut f = WriteCliffFinding {
                found: false,
                cliff: None,
                needs_s: None,
                generator_dip: None,
            };
            match detect_write_cliff(&points, CLIFF_BASELINE_S, CLIFF_DROP_PCT, None) {
                CliffVerdict::TooShort { needed_s, .. } => f.needs_s = Some(needed_s),
                CliffVerdict::NoCliff => {}
                CliffVerdict::Cliff(c) => {
                    f.found = true;
                    f.cliff = Some(c);
                }
                CliffVerdict::GeneratorLimited(g) => f.generator_dip = Some(g),
            }
            found.push(Finding::WriteCliff(f));
        }
    }
    found
}

/// The judge of a step's rounds under its rule.
pub(crate) fn detector(spec: &SteadyStateSpec) -> SteadyStateDetector {
    let w = spec.window as usize;
    let pct = |m: u32| f64::from(m) / 1000.0;
    match spec.rule {
        SteadyRule::Pts => SteadyStateDetector::new(w, 20.0, 10.0),
        SteadyRule::DeviationMilliPct(m) => SteadyStateDetector::fio(w, pct(m), f64::INFINITY),
        SteadyRule::SlopeMilliPct(m) => SteadyStateDetector::fio(w, f64::INFINITY, pct(m)),
    }
}

/// The steady-state verdict of a step measured in rounds.
pub fn steady_state_verdict(
    rounds: &[f64],
    spec: SteadyStateSpec,
    steady_at_round: Option<usize>,
) -> SteadyStateFinding {
    let judged = &rounds[spec.ramp_rounds().min(rounds.len())..];
    let mut verdict = detector(&spec).check(judged);
    // Round numbers count from the step's first round, ramp included.
    verdict.rounds_used = rounds.len();
    verdict.window_start_round += rounds.len() - judged.len();
    SteadyStateFinding {
        reached: verdict.reached,
        rounds: rounds.len() as u64,
        round_s: spec.round.as_secs_f64(),
        max_rounds: u64::from(spec.max_rounds),
        window: u64::from(spec.window),
        rounds_needed: steady_at_round.map(|r| r as u64),
        time_needed_s: steady_at_round.map(|r| r as f64 * spec.round.as_secs_f64()),
        round_iops: rounds.to_vec(),
        verdict,
        rule: (spec.rule != SteadyRule::Pts).then(|| spec.rule.to_string()),
        ramp_rounds: spec.ramp_rounds().min(rounds.len()) as u64,
    }
}

/// The latency at percentile `p` of a step's summary: one of the
/// percentiles it keeps ([`iorig_spec::plan::THRESHOLD_PERCENTILES`], 100 is
/// the maximum); `None` for any other.
fn stored_percentile(lat: &iorig_stats::LatSummary, p: f64) -> Option<u64> {
    [
        (50.0, lat.p50),
        (90.0, lat.p90),
        (99.0, lat.p99),
        (99.9, lat.p99_9),
        (99.99, lat.p99_99),
        (100.0, lat.max),
    ]
    .into_iter()
    .find(|(at, _)| *at == p)
    .map(|(_, ns)| ns)
}

/// A curve group's points in load order, its threshold (ms), the plan
/// indexes of the steps behind the points, and its threshold percentile.
type Group = (Vec<CurvePoint>, f64, Vec<usize>, Option<f64>);

/// The rate of curve `group`'s next refinement step, from its steps in
/// `results` so far, or why none is needed ([`iorig_stats::analysis::curve::refine_rate`]).
pub(crate) fn refine_rate(results: &[StepResult], group: u32) -> Result<f64, String> {
    let (groups, max_of) = curve_groups(results);
    let (Some((pts, threshold_ms, _, pct)), Some(max)) = (groups.get(&group), max_of.get(&group))
    else {
        return Err("the curve's max run measured no IOPS".into());
    };
    iorig_stats::analysis::curve::refine_rate(pts, threshold_ms * 1e6, pct.is_some(), *max)
}

/// Every curve group's points, and each group's max IOPS.
fn curve_groups(results: &[StepResult]) -> (BTreeMap<u32, Group>, BTreeMap<u32, f64>) {
    let mut groups: BTreeMap<u32, Group> = BTreeMap::new();
    let mut max_of: BTreeMap<u32, f64> = BTreeMap::new();
    for r in results {
        let Some(group) = r.step.role.curve_group() else {
            continue;
        };
        let Some(s) = &r.summary else { continue };
        let t = &s.total;
        let (iops, mean, p99) = (t.iops, t.lat_ns.mean as f64, t.lat_ns.p99 as f64);
        let pct_lat_ns = r
            .step
            .threshold_percentile
            .and_then(|p| stored_percentile(&t.lat_ns, p))
            .map(|ns| ns as f64);
        if iops <= 0.0 {
            continue;
        }
        let e = groups.entry(group).or_insert_with(|| {
            (
                Vec::new(),
                r.step.threshold_ms.unwrap_or(1.0),
                Vec::new(),
                r.step.threshold_percentile,
            )
        });
        // A rate step ran at its share of the max step's IOPS, exactly as
        // the runner computed it.
        let requested_iops = match r.step.role {
            StepRole::CurveMax { .. } => {
                max_of.insert(group, iops);
                None
            }
            StepRole::CurveRate { pct, .. } => {
                max_of.get(&group).map(|max| curve_step_rate(*max, pct))
            }
            // The runner bisected from the points before it, as here.
            StepRole::CurveRefine { .. } => max_of.get(&group).and_then(|max| {
                iorig_stats::analysis::curve::refine_rate(&e.0, e.1 * 1e6, e.3.is_some(), *max)
                    .ok()
                    .map(|rate| curve_step_rate(*max, 100.0 * rate / max))
            }),
            _ => None,
        };
        let (mean_lat_se_ns, p99_lat_se_ns) = r.lat_se_ns;
        e.0.push(CurvePoint {
            iops,
            mean_lat_ns: mean,
            p99_lat_ns: p99,
            requested_iops,
            pct_lat_ns,
            mean_lat_se_ns,
            p99_lat_se_ns,
        });
        e.2.push(r.step.index);
    }
    (groups, max_of)
}

/// One analysis per curve group: its max run, rate runs and refinements,
/// in load order.
pub(crate) fn curves(results: &[StepResult]) -> Vec<CurveFinding> {
    let (groups, _) = curve_groups(results);
    let names = curve_names(results, &groups);
    groups
        .into_iter()
        .filter(|(_, (pts, ..))| pts.len() >= 2)
        .map(|(g, (pts, threshold_ms, steps, threshold_percentile))| {
            let a = analyze_curve(&pts, threshold_ms * 1e6, 2.0);
            let step_of = |i: Option<usize>| i.and_then(|i| steps.get(i)).map(|s| s + 1);
            let off_rate: Vec<OffRatePoint> = a
                .off_rate_points
                .iter()
                .map(|&i| OffRatePoint {
                    step: steps.get(i).map(|s| s + 1),
                    requested_iops: pts[i].requested_iops,
                    achieved_iops: pts[i].iops,
                    error_pct: pts[i].rate_error_pct(),
                })
                .collect();
            let non_monotone_steps = a
                .non_monotone_points
                .iter()
                .filter_map(|&i| step_of(Some(i)))
                .collect();
            CurveFinding {
                name: names.get(&g).cloned().flatten(),
                group: g,
                non_monotone_steps,
                threshold_ms,
                best_under_mean_step: step_of(a.best_under_mean_point),
                best_under_p99_step: step_of(a.best_under_p99_point),
                threshold_percentile,
                best_under_pct_step: step_of(a.best_under_pct_point),
                best_under_mean_toward_step: step_of(a.best_under_mean_toward),
                best_under_p99_toward_step: step_of(a.best_under_p99_toward),
                best_under_pct_toward_step: step_of(a.best_under_pct_toward),
                steps,
                points: pts,
                analysis: a,
                off_rate,
            }
        })
        .collect()
}

/// Each curve's name by what differs between the curves' first steps
/// ("bs=64k", "bs=4k, read=70"), so "curve 2" says which it is; None for a
/// lone curve, or where nothing but the rate differs.
fn curve_names(
    results: &[StepResult],
    groups: &BTreeMap<u32, Group>,
) -> BTreeMap<u32, Option<String>> {
    // Each curve's first step's workload as flat key = value text.
    let firsts: BTreeMap<u32, BTreeMap<String, String>> = groups
        .iter()
        .filter_map(|(g, (_, _, steps, _))| {
            let first = steps.first()?;
            let r = results.iter().find(|r| r.step.index == *first)?;
            let serde_json::Value::Object(map) = serde_json::to_value(&r.step.workload).ok()?
            else {
                return None;
            };
            let flat = map
                .into_iter()
                .filter(|(k, v)| !v.is_null() && !k.starts_with("rate") && k != "label")
                .map(|(k, v)| {
                    let text = match v {
                        serde_json::Value::String(t) => t,
                        v => v.to_string(),
                    };
                    (k, text)
                })
                .collect();
            Some((*g, flat))
        })
        .collect();
    let mut keys: Vec<&String> = firsts.values().flat_map(|m| m.keys()).collect();
    keys.sort();
    keys.dedup();
    let differing: Vec<&String> = keys
        .into_iter()
        .filter(|k| {
            let mut values = firsts.values().map(|m| m.get(*k));
            let first = values.next().flatten();
            values.any(|v| v != first)
        })
        .collect();
    groups
        .keys()
        .map(|g| {
            let name = firsts.get(g).filter(|_| firsts.len() > 1).map(|m| {
                differing
                    .iter()
                    .map(|k| format!("{k}={}", m.get(*k).map_or("-", String::as_str)))
                    .collect::<Vec<_>>()
                    .join(", ")
            });
            (*g, name.filter(|n| !n.is_empty()))
        })
        .collect()
}

/// The rate a curve step runs at: its share of the curve's measured max,
/// in whole IOPS, at least 1. The curve analysis reads it back the same way.
pub(crate) fn curve_step_rate(max_iops: f64, pct: f64) -> f64 {
    (max_iops * pct / 100.0).max(1.0).round()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::results::StepResult;
    use iorig_result::{StepStatus, Summary};

    /// A step's summary with the given IOPS and mean/p99 latency (ms).
    fn summary(iops: f64, mean_ms: f64, p99_ms: f64) -> Summary {
        let op = serde_json::json!({
            "ops": (iops * 10.0) as u64, "bytes": (iops * 10.0) as u64 * 4096,
            "iops": iops, "bw_bytes_per_s": iops * 4096.0,
            "lat_ns": {
                "min": 1, "mean": (mean_ms * 1e6) as u64, "stddev": 1,
                "max": (p99_ms * 2e6) as u64, "p50": (mean_ms * 1e6) as u64,
                "p90": (p99_ms * 1e6) as u64, "p99": (p99_ms * 1e6) as u64,
                "p99_9": (p99_ms * 1e6) as u64, "p99_99": (p99_ms * 1e6) as u64
            }
        });
        serde_json::from_value(serde_json::json!({
            "duration_s": 10.0, "read": op, "write": op, "total": op,
            "cpu": {"usr_pct": 1.0, "sys_pct": 1.0}, "errors": 0
        }))
        .unwrap()
    }

    /// A curve whose 80 % step was disturbed: mean 35 ms against the 90 %
    /// step's 0.85 ms, far beyond their spread. The best under 1 ms stands,
    /// but the finding names the step; the knee is not placed on a step
    /// that missed its rate.
    #[test]
    fn a_disturbed_curve_step_is_named_beside_the_answer() {
        let plan = iorig_spec::plan::Plan::from_toml(
            "c.toml",
            "targets = [\"f\"]\nsize = \"1m\"\n[[steps]]\nkind = \"curve\"\nrates_pct = [10, 50, 80, 90]\n",
        )
        .unwrap();
        let steps = plan.expand().unwrap();
        assert_eq!(steps.len(), 5);
        // max 100 k; rates 10, 50, 80, 90 k.
        let figures = [
            (100_000.0, 1.2, 3.0, (0.05, 0.2)),
            (10_000.0, 0.30, 0.6, (0.01, 0.05)),
            (50_000.0, 0.40, 0.8, (0.01, 0.05)),
            (80_000.0, 35.0, 90.0, (10.0, 30.0)),
            (90_000.0, 0.85, 1.6, (0.02, 0.1)),
        ];
        let results: Vec<StepResult> = steps
            .iter()
            .zip(figures)
            .map(|(step, (iops, mean, p99, (se_mean, se_p99)))| StepResult {
                step: step.clone(),
                status: StepStatus::Ok,
                summary: Some(summary(iops, mean, p99)),
                analysis: Vec::new(),
                jobs: Vec::new(),
                lat_se_ns: (Some(se_mean * 1e6), Some(se_p99 * 1e6)),
            })
            .collect();
        let c = &curves(&results)[0];
        // Step 4 of the plan is the 80 % step.
        assert_eq!(c.non_monotone_steps, vec![4], "{c:?}");
        assert_eq!(c.analysis.non_monotone_points, vec![3]);
        // The answer is still given: 90 k at 0.85 ms.
        assert_eq!(c.best_under_mean_step, Some(5));
        // Same spread but the 80 % step only a little slower: no flag.
        let mut calm = results;
        calm[3].summary = Some(summary(80_000.0, 0.86, 1.6));
        calm[3].lat_se_ns = (Some(0.02e6), Some(0.1e6));
        assert!(curves(&calm)[0].non_monotone_steps.is_empty());
    }

    /// Refinement steps bisect between the rates that held and failed the
    /// target; the analysis reads each one's rate back as the runner set it,
    /// so the answer can stand on a refinement step.
    #[test]
    fn refinement_steps_bisect_and_count_in_the_answer() {
        let plan = iorig_spec::plan::Plan::from_toml(
            "c.toml",
            "targets = [\"f\"]\nsize = \"1m\"\n[[steps]]\nkind = \"curve\"\nrates_pct = [50, 70]\nthreshold_ms = 1\nrefine = 2\n",
        )
        .unwrap();
        let steps = plan.expand().unwrap();
        assert_eq!(steps.len(), 5);
        let g = steps[0].role.curve_group().unwrap();
        let result = |i: usize, iops: f64, p99: f64| StepResult {
            step: steps[i].clone(),
            status: StepStatus::Ok,
            summary: Some(summary(iops, p99 / 2.0, p99)),
            analysis: Vec::new(),
            jobs: Vec::new(),
            lat_se_ns: (None, None),
        };
        // max 100 k; 50 k held 1 ms at p99, 70 k did not.
        let mut results = vec![
            result(0, 100_000.0, 5.0),
            result(1, 50_000.0, 0.8),
            result(2, 70_000.0, 1.4),
        ];
        assert_eq!(refine_rate(&results, g), Ok(60_000.0));
        results.push(result(3, 60_000.0, 0.9));
        assert_eq!(refine_rate(&results, g), Ok(65_000.0));
        results.push(result(4, 65_000.0, 1.2));
        let c = &curves(&results)[0];
        assert_eq!(c.points[3].requested_iops, Some(60_000.0));
        assert_eq!(c.points[4].requested_iops, Some(65_000.0));
        // The answer interpolates between the 60 k refinement (step 4) and
        // the 65 k one: 60 k + 5 k × (1 − 0.9) / (1.2 − 0.9).
        assert_eq!(c.best_under_p99_step, Some(4));
        let best = c.analysis.best_under_p99.unwrap();
        assert!((best - 61_666.7).abs() < 1.0, "{best}");
        // A curve whose target held everywhere has nothing to refine.
        let held = vec![
            result(0, 100_000.0, 0.5),
            result(1, 50_000.0, 0.2),
            result(2, 70_000.0, 0.3),
        ];
        assert!(refine_rate(&held, g)
            .unwrap_err()
            .contains("nothing to refine"));
    }
}
