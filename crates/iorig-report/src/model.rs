//! What a report shows about one run, read once from the result store:
//! the run header, host and target facts, and per step its parameters,
//! summary, interval series, latency percentiles (from the stored HDR
//! histograms) and findings; plus the plan-level curve analyses.
//!
//! Everything is read through the store's public API and turned into plain
//! typed values here, so the charts and the HTML never parse JSON and a
//! field missing from an older store shows as absent instead of failing.

use iorig_result::{
    CurveFinding, Finding, OpSummary, PreconditionFinding, RateCheck, StepRole, Summary,
    Validation, WorkloadRecord,
};
use iorig_stats::analysis::{CurveAnalysis, CurvePoint, LittleVerdict, WriteCliff};
use iorig_stats::sampler::system::SystemFacts;
use iorig_stats::{LatSummary, LatencyHistogram};
use iorig_store::{
    AnalysisRow, HistKind, IntervalPages, IntervalRow, Op, RunDetail, RunId, StepId, StepStatus,
    Store, StoredRun, StoredStep, TargetFactsRow, INTERVAL_PAGE,
};
use std::collections::BTreeMap;

use crate::ReportError;

/// The highest "nines" the percentile plot reaches: 5 = 99.999 %.
pub const MAX_NINES: f64 = 5.0;
/// Points per nine on the percentile plot (the x axis is -log10(1 - q)).
const PERCENTILE_POINTS_PER_NINE: u32 = 20;

/// Everything a report needs about one run.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Header as stored (id, kind, status, host, times, labels, command line).
    pub run: RunDetail,
    /// Host facts, as stored.
    pub system: Option<SystemFacts>,
    pub targets: Vec<TargetFactsRow>,
    /// Steps in plan order.
    pub steps: Vec<StepReport>,
    /// The plan-level `curve` analyses, by group.
    pub curves: Vec<CurveReport>,
    /// Plan-level findings other than curves, as stored.
    pub plan_findings: Vec<AnalysisRow>,
    /// A quick run's five figures; empty for other runs.
    pub figures: Vec<iorig_result::Figure>,
}

/// One step of a run.
#[derive(Clone, Debug)]
pub struct StepReport {
    pub id: StepId,
    pub index: i64,
    pub name: String,
    pub role: StepRole,
    pub status: StepStatus,
    pub params: StepParams,
    /// The stored parameters (the result JSON's `workload` object); `None`
    /// for a step that was never planned or was skipped.
    pub workload: Option<WorkloadRecord>,
    /// `None` for a step that did not run (pending, skipped, failed early).
    pub summary: Option<StepSummary>,
    pub started: Option<String>,
    pub ended: Option<String>,
    /// One point per stored interval (warmup included, flagged).
    pub intervals: Vec<IntervalPoint>,
    /// Latency against percentile from the step's merged histograms.
    pub percentiles: Vec<PercentileSeries>,
    pub findings: StepFindings,
    /// A file-system workload's operations by kind (reads and writes
    /// included): the summary's figures and, per interval, (t_s, figures).
    /// Empty for a block workload.
    pub fs_ops: Vec<FsOpReport>,
    /// A step run on several hosts: each host's outcome and intervals (the
    /// step's own figures are their totals). Empty for one host.
    pub hosts: Vec<HostReport>,
    /// Storage-side series collected beside the step (`--collect`).
    pub external: Vec<ExternalSeries>,
}

/// One storage-side series of a step: (t_s, value) per interval it was
/// given, and the intervals its source failed.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalSeries {
    pub source: String,
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

/// A source's failures over a step.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalFailures {
    pub source: String,
    pub intervals: usize,
    /// The first failure's reason.
    pub first: String,
}

/// The step's storage-side figures as series by source and name (in
/// their stored order), each point at its interval's end, and each
/// failing source's count.
pub fn external_series(
    rows: &[iorig_store::ExternalRow],
    intervals: &[IntervalPoint],
) -> (Vec<ExternalSeries>, Vec<ExternalFailures>) {
    let t_of: std::collections::HashMap<u64, f64> =
        intervals.iter().map(|p| (p.seq, p.t_s)).collect();
    let mut series: Vec<ExternalSeries> = Vec::new();
    let mut failures: Vec<ExternalFailures> = Vec::new();
    for r in rows {
        if let Some(e) = &r.error {
            match failures.iter_mut().find(|f| f.source == r.source) {
                Some(f) => f.intervals += 1,
                None => failures.push(ExternalFailures {
                    source: r.source.clone(),
                    intervals: 1,
                    first: e.clone(),
                }),
            }
            continue;
        }
        let (Some(v), Some(&t)) = (r.value, t_of.get(&r.seq)) else {
            continue;
        };
        match series
            .iter_mut()
            .find(|s| s.source == r.source && s.name == r.name)
        {
            Some(s) => s.points.push((t, v)),
            None => series.push(ExternalSeries {
                source: r.source.clone(),
                name: r.name.clone(),
                points: vec![(t, v)],
            }),
        }
    }
    for s in &mut series {
        s.points.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    (series, failures)
}

/// One host of a multi-host step.
#[derive(Clone, Debug, PartialEq)]
pub struct HostReport {
    pub result: iorig_result::HostResult,
    pub intervals: Vec<IntervalPoint>,
}

/// One kind of a file-system workload's operations in a step.
#[derive(Clone, Debug, PartialEq)]
pub struct FsOpReport {
    pub op: Op,
    pub summary: OpFigures,
    pub intervals: Vec<(f64, OpFigures)>,
}

/// The parameters that identify a step, from its stored `workload` object.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepParams {
    /// As given (`4k`, `4k:50,8k:50`).
    pub bs: String,
    /// The block size when there is only one.
    pub bs_bytes: Option<u64>,
    pub read_pct: f64,
    /// Trims (`--trim`); 0 without.
    pub trim_pct: f64,
    pub random_pct: f64,
    pub qd: u32,
    pub threads: u32,
    /// `None` = as fast as possible.
    pub rate_iops: Option<f64>,
    pub engine: String,
    pub time_s: f64,
    pub warmup_s: f64,
}

/// The figures of one operation kind, as in the result JSON's summary.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OpFigures {
    pub ops: u64,
    pub bytes: u64,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub lat_ns: LatSummary,
}

/// A step's measured-time summary (`summary` of iorig.result/1).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepSummary {
    pub duration_s: f64,
    pub total: OpFigures,
    pub read: OpFigures,
    pub write: OpFigures,
    pub cpu_usr_pct: f64,
    pub cpu_sys_pct: f64,
    pub errors: u64,
    /// A paced step's issue lag (`summary.issue_lag_ns`).
    pub issue_lag_ns: Option<LatSummary>,
}

/// One interval of a step (the `total` row, plus the read/write split).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IntervalPoint {
    /// Position of the interval in its step, from 0.
    pub seq: u64,
    /// End of the interval, seconds from the step's start.
    pub t_s: f64,
    pub duration_s: f64,
    pub warmup: bool,
    pub total: OpFigures,
    pub read_iops: f64,
    pub write_iops: f64,
    pub errors: u64,
    pub cpu_usr_pct: f64,
    pub cpu_sys_pct: f64,
    /// `None` without a sampled block device.
    pub dev_util_pct: Option<f64>,
}

/// Latency at a run of percentiles, for the percentile plot.
#[derive(Clone, Debug, PartialEq)]
pub struct PercentileSeries {
    /// `all I/O`, `read`, `write`, `service time`.
    pub label: String,
    /// (percentile 0..100, latency ns), percentiles ascending.
    pub points: Vec<(f64, u64)>,
}

/// What the analysis found about a step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepFindings {
    pub generator_bound: Option<LittleVerdict>,
    pub outages: Option<Outages>,
    /// `Some(None)`: looked for and not found; `None`: not looked for.
    pub write_cliff: Option<Option<WriteCliff>>,
    /// A lasting drop while the load generator was the limit (never a
    /// write cliff).
    pub generator_dip: Option<iorig_stats::analysis::GeneratorDip>,
    pub steady_state: Option<SteadyState>,
    pub precondition: Option<PreconditionFinding>,
    /// Why the step was skipped.
    pub skipped_why: Option<String>,
    /// Data validation (`--verify`), from the step's summary.
    pub validation: Option<Validation>,
    /// A paced step's achieved rate against the requested one.
    pub rate: Option<RateCheck>,
    /// `--collect` sources that failed for some intervals.
    pub external_failures: Vec<ExternalFailures>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Outages {
    pub total_outage_s: f64,
    pub longest_outage_s: f64,
    /// (start, end) in seconds from the step's start.
    pub spans_s: Vec<(f64, f64)>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SteadyState {
    pub reached: bool,
    pub rounds: u64,
    pub round_s: f64,
    pub window: u64,
    pub rounds_needed: Option<u64>,
    pub reason: Option<String>,
    /// The judged window (the last `window` rounds up to the verdict), in
    /// seconds from the step's start; `None` with fewer rounds than `window`.
    pub window_s: Option<(f64, f64)>,
}

/// One IOPS–latency curve of a plan and its analysis.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveReport {
    pub group: u64,
    /// What sets it apart from the run's other curves ("bs=64k").
    pub name: Option<String>,
    pub threshold_ms: f64,
    /// The plan indexes of its steps, in load order.
    pub step_indexes: Vec<i64>,
    pub points: Vec<CurvePoint>,
    pub analysis: Option<CurveAnalysis>,
}

impl RunReport {
    /// Reads everything a report of `run` needs, through the store's one
    /// loader of a run ([`StoredRun`]).
    pub fn load(store: &Store, run: RunId) -> Result<RunReport, ReportError> {
        let stored = StoredRun::load(store, run)?.ok_or(ReportError::NoSuchRun(run.0))?;
        let mut curves = Vec::new();
        let mut plan_findings = Vec::new();
        for a in &stored.plan_analysis {
            match &a.finding {
                Finding::Curve(c) => curves.push(curve_of(c)),
                _ => plan_findings.push(a.clone()),
            }
        }
        curves.sort_by_key(|c| c.group);

        let figures = if stored.detail.run.kind == iorig_result::RunKind::Quick {
            // A step's document holds its own findings: the loader grouped them.
            let docs: Vec<_> = stored
                .steps
                .iter()
                .map(|s| s.row.doc(&s.analysis, None))
                .collect();
            iorig_result::step_figures(&docs)
        } else {
            Vec::new()
        };
        let steps = stored
            .steps
            .into_iter()
            .map(|s| step_of(store, s))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(RunReport {
            run: stored.detail,
            system: stored.system,
            targets: stored.targets,
            steps,
            curves,
            plan_findings,
            figures,
        })
    }

    pub fn id(&self) -> RunId {
        self.run.run.id
    }

    /// Wall time from start to end; `None` while running or unparsable.
    pub fn duration_s(&self) -> Option<f64> {
        let started = humantime::parse_rfc3339_weak(&self.run.run.started).ok()?;
        let ended = humantime::parse_rfc3339_weak(self.run.run.ended.as_deref()?).ok()?;
        Some(ended.duration_since(started).ok()?.as_secs_f64())
    }
}

impl StepReport {
    /// The step's number as every page and message shows it: from 1 (the
    /// store's index counts from 0).
    pub fn number(&self) -> i64 {
        self.index + 1
    }

    /// Seconds from the step's start at which measured time begins.
    pub fn measured_start_s(&self) -> f64 {
        self.intervals
            .iter()
            .filter(|i| i.warmup)
            .map(|i| i.t_s)
            .fold(0.0, f64::max)
    }

    /// A step whose figures take part in tables and charts.
    pub fn has_results(&self) -> bool {
        self.summary.is_some_and(|s| s.total.ops > 0)
    }
}

fn step_of(store: &Store, stored: StoredStep) -> Result<StepReport, ReportError> {
    let StoredStep {
        row,
        analysis,
        hosts,
        ..
    } = stored;
    let findings: Vec<&AnalysisRow> = analysis.iter().collect();
    let params = row.params.as_ref().map(params_of).unwrap_or_default();
    let io = row.summary.as_ref().and_then(|s| s.io());
    let summary = io.map(summary_of);
    let validation = io.and_then(|s| s.validation.as_ref()).cloned();
    // A page of rows at a time, without their histograms (the report's
    // percentiles come from the step's merged ones): a week-long soak is
    // 1.8 million rows, of which only the folded points are kept, and of
    // a file-system step the rows of its kinds.
    let fs_kinds: Vec<Op> = io.map_or_else(Vec::new, |s| {
        s.fs_ops.keys().map(|f| Op::of_fs(*f)).collect()
    });
    let mut intervals = Vec::new();
    let mut fs_rows = Vec::new();
    for page in IntervalPages::of(store, row.id, INTERVAL_PAGE).figures_only() {
        let page = page?;
        fold_intervals(&mut intervals, &page);
        fs_rows.extend(page.into_iter().filter(|r| fs_kinds.contains(&r.op)));
    }
    let fs_ops = fs_ops_of(io, &fs_rows);
    let mut percentiles = Vec::new();
    let total = store.histogram(row.id, Op::Total, HistKind::Lat)?;
    let read = store.histogram(row.id, Op::Read, HistKind::Lat)?;
    let write = store.histogram(row.id, Op::Write, HistKind::Lat)?;
    let service = store.histogram(row.id, Op::Total, HistKind::ServiceLat)?;
    let has = |h: &Option<LatencyHistogram>| h.as_ref().is_some_and(|h| h.count() > 0);
    if let Some(h) = total.as_ref().filter(|h| h.count() > 0) {
        percentiles.push(percentile_series("all I/O", h));
    }
    // The split only adds information when both kinds ran.
    if has(&read) && has(&write) {
        for (label, h) in [("read", &read), ("write", &write)] {
            if let Some(h) = h {
                percentiles.push(percentile_series(label, h));
            }
        }
    }
    if let Some(h) = service.as_ref().filter(|h| h.count() > 0) {
        percentiles.push(percentile_series("service time (from submission)", h));
    }
    let hosts = hosts
        .into_iter()
        .map(|result| {
            // Figures only, as the step's own intervals above.
            let rows = store.interval_range_figures(row.id, &result.name, 0..u64::MAX)?;
            let mut intervals = Vec::new();
            fold_intervals(&mut intervals, &rows);
            Ok(HostReport { intervals, result })
        })
        .collect::<Result<Vec<_>, iorig_store::StoreError>>()?;
    let (external, external_failures) = external_series(&store.external(row.id)?, &intervals);
    let mut report = StepReport {
        hosts,
        external,
        id: row.id,
        index: row.index,
        name: row.name,
        role: row.role,
        status: row.status,
        params,
        workload: row.params,
        summary,
        started: row.started,
        ended: row.ended,
        intervals,
        fs_ops,
        percentiles,
        findings: StepFindings::default(),
    };
    let measured_start_s = report.measured_start_s();
    report.findings = findings_of(&findings, measured_start_s);
    report.findings.validation = validation;
    report.findings.external_failures = external_failures;
    Ok(report)
}

fn params_of(p: &WorkloadRecord) -> StepParams {
    StepParams {
        bs: p.bs_label(),
        bs_bytes: p.single_bs_bytes(),
        read_pct: p.read_pct,
        trim_pct: p.trim_pct,
        random_pct: p.random_pct,
        qd: p.qd,
        threads: p.threads,
        rate_iops: p.rate_iops,
        engine: p.engine.clone(),
        time_s: p.time_s,
        warmup_s: p.warmup_s,
    }
}

fn op_of(o: &OpSummary) -> OpFigures {
    OpFigures {
        ops: o.ops,
        bytes: o.bytes,
        iops: o.iops,
        bw_bytes_per_s: o.bw_bytes_per_s,
        lat_ns: o.lat_ns,
    }
}

fn summary_of(s: &Summary) -> StepSummary {
    StepSummary {
        duration_s: s.duration_s,
        total: op_of(&s.total),
        read: op_of(&s.read),
        write: op_of(&s.write),
        cpu_usr_pct: s.cpu.usr_pct,
        cpu_sys_pct: s.cpu.sys_pct,
        errors: s.errors,
        issue_lag_ns: s.issue_lag_ns,
    }
}

fn figures_of(r: &IntervalRow) -> OpFigures {
    OpFigures {
        ops: r.ops,
        bytes: r.bytes,
        iops: r.iops,
        bw_bytes_per_s: r.bw_bytes_per_s,
        lat_ns: r.lat_ns,
    }
}

/// A file-system step's kinds of operation: each kind its summary has,
/// with its interval rows.
fn fs_ops_of(io: Option<&Summary>, rows: &[IntervalRow]) -> Vec<FsOpReport> {
    let Some(io) = io else { return Vec::new() };
    io.fs_ops
        .iter()
        .map(|(f, o)| {
            let op = Op::of_fs(*f);
            FsOpReport {
                op,
                summary: op_of(o),
                intervals: rows
                    .iter()
                    .filter(|r| r.op == op)
                    .map(|r| (r.t_s, figures_of(r)))
                    .collect(),
            }
        })
        .collect()
}

/// Folds the read/write/total rows of each interval into one point, onto
/// the end of `out` (a page at a time: an interval's rows share a page).
fn fold_intervals(out: &mut Vec<IntervalPoint>, rows: &[IntervalRow]) {
    for r in rows {
        if out.last().map(|p| p.seq) != Some(r.seq) {
            out.push(IntervalPoint {
                seq: r.seq,
                t_s: r.t_s,
                duration_s: r.duration_s,
                warmup: r.warmup,
                cpu_usr_pct: r.cpu_usr_pct,
                cpu_sys_pct: r.cpu_sys_pct,
                dev_util_pct: r.device.map(|d| d.util_pct),
                ..IntervalPoint::default()
            });
        }
        let Some(p) = out.last_mut() else { continue };
        match r.op {
            Op::Read => p.read_iops = r.iops,
            Op::Write => p.write_iops = r.iops,
            Op::Total => {
                p.total = figures_of(r);
                p.errors = r.errors;
            }
            // Trims and a tree's metadata kinds have no series of their own.
            _ => {}
        }
    }
}

/// Latency at percentiles evenly spaced on the "nines" scale
/// (x = -log10(1 - q)), from 0 to 99.999 %, in one pass over the histogram:
/// `value_at_quantile` walks the bucket array per call, which over thousands
/// of steps and a hundred percentiles each would dominate report time.
fn percentile_series(label: &str, h: &LatencyHistogram) -> PercentileSeries {
    let total = h.count();
    let n = (MAX_NINES * f64::from(PERCENTILE_POINTS_PER_NINE)) as u32;
    let targets: Vec<f64> = (0..=n)
        .map(|i| 1.0 - 10f64.powf(-f64::from(i) / f64::from(PERCENTILE_POINTS_PER_NINE)))
        .collect();
    let mut points = Vec::with_capacity(targets.len());
    let mut next = 0;
    let mut seen: u64 = 0;
    let mut last_value = 0;
    for v in h.inner().iter_recorded() {
        seen += v.count_since_last_iteration();
        last_value = v.value_iterated_to();
        // The value at quantile q is the first whose cumulative count
        // reaches q × total (at least one I/O, so q = 0 is the minimum).
        while next < targets.len() {
            let need = ((targets[next] * total as f64).ceil() as u64).max(1);
            if seen < need {
                break;
            }
            points.push((targets[next] * 100.0, last_value));
            next += 1;
        }
    }
    // Rounding can leave the top targets unmet: they are the maximum.
    while next < targets.len() {
        points.push((targets[next] * 100.0, last_value));
        next += 1;
    }
    PercentileSeries {
        label: label.to_owned(),
        points,
    }
}

fn findings_of(rows: &[&AnalysisRow], measured_start_s: f64) -> StepFindings {
    let mut f = StepFindings::default();
    for a in rows {
        match &a.finding {
            Finding::GeneratorBound(g) => f.generator_bound = Some(g.clone()),
            Finding::Outages(o) => {
                f.outages = Some(Outages {
                    total_outage_s: o.total_outage_s,
                    longest_outage_s: o.longest_outage_s,
                    spans_s: o.outages.iter().map(|o| (o.start_t_s, o.end_t_s)).collect(),
                });
            }
            Finding::WriteCliff(w) => {
                f.write_cliff = Some(w.cliff.clone());
                f.generator_dip = w.generator_dip.clone();
            }
            Finding::SteadyState(ss) => {
                f.steady_state = Some(SteadyState {
                    reached: ss.reached,
                    rounds: ss.rounds,
                    round_s: ss.round_s,
                    window: ss.window,
                    rounds_needed: ss.rounds_needed,
                    reason: ss.verdict.reason.clone(),
                    window_s: ss.window_s(measured_start_s),
                })
            }
            Finding::Precondition(p) => f.precondition = Some(p.clone()),
            Finding::Skipped(sk) => f.skipped_why = Some(sk.why.clone()),
            Finding::Rate(r) => f.rate = Some(r.clone()),
            _ => {}
        }
    }
    f
}

fn curve_of(c: &CurveFinding) -> CurveReport {
    CurveReport {
        group: u64::from(c.group),
        name: c.name.clone(),
        threshold_ms: c.threshold_ms,
        step_indexes: c.steps.iter().map(|&s| s as i64).collect(),
        points: c.points.clone(),
        analysis: Some(c.analysis.clone()),
    }
}

/// A stored profile (`iorig profile`): its summary, its intervals and the
/// verdicts of its rule sets, read from its one step.
#[derive(Clone, Debug)]
pub struct ProfileReport {
    pub run: RunDetail,
    pub summary: iorig_result::ProfileSummary,
    pub intervals: Vec<iorig_result::ProfileInterval>,
    pub evaluations: Vec<iorig_profile::rules::Evaluation>,
}

impl ProfileReport {
    /// Reads the profile `run`.
    pub fn load(store: &Store, run: RunId) -> Result<ProfileReport, ReportError> {
        let stored = StoredRun::load(store, run)?.ok_or(ReportError::NoSuchRun(run.0))?;
        let step = stored
            .steps
            .first()
            .ok_or_else(|| ReportError::Export(format!("profile {} has no step", run.0)))?;
        ProfileReport::from_rows(stored.detail.clone(), &step.row, &step.analysis)
    }

    /// The profile of a run's header, its step and the step's findings.
    pub fn from_rows(
        run: RunDetail,
        step: &iorig_store::StepRow,
        analysis: &[AnalysisRow],
    ) -> Result<ProfileReport, ReportError> {
        let Some(iorig_result::StepSummary::Profile(summary)) = &step.summary else {
            return Err(ReportError::Export(format!(
                "profile {} has no summary (it ended before its first interval)",
                run.run.id.0
            )));
        };
        let mut intervals = Vec::new();
        let mut evaluations = Vec::new();
        for a in analysis.iter().filter(|a| a.step_id == Some(step.id)) {
            match &a.finding {
                Finding::ProfileIntervals(v) => {
                    intervals = iorig_result::ProfileInterval::list_from(v)
                        .map_err(|e| ReportError::Export(format!("stored intervals: {e}")))?;
                }
                Finding::Rules(evals) => evaluations.extend(evals.iter().cloned()),
                _ => {}
            }
        }
        Ok(ProfileReport {
            summary: summary.clone(),
            run,
            intervals,
            evaluations,
        })
    }

    pub fn id(&self) -> RunId {
        self.run.run.id
    }

    /// The figure statistics by scope: `total` first, then each device by
    /// name.
    pub fn scopes(&self) -> Vec<(&str, &BTreeMap<String, iorig_result::FigureStat>)> {
        std::iter::once(("total", &self.summary.total))
            .chain(self.summary.devices.iter().map(|(d, s)| (d.as_str(), s)))
            .collect()
    }
}
