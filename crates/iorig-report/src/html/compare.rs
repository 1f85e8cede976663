//! The comparison of several runs: steps matched by parameters, the %
//! change of each figure against the first run, and its page.

use super::*;

/// What identifies "the same step" across runs: the workload's shape, not
/// its seed or duration. Curve steps match by their role (`curve-50%`),
/// since their absolute rate follows each run's own maximum.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StepKey {
    pub bs: String,
    /// Per mille, so the key can be compared exactly.
    pub read_permille: i64,
    /// Trims per mille (0 without `--trim`).
    pub trim_permille: i64,
    pub random_permille: i64,
    pub qd: u32,
    pub threads: u32,
    /// `max`, `5000 IOPS`, or the curve role.
    pub rate: String,
    /// A file-system step's operations and tree (`create in 1x8x1250 of 0`).
    pub tree: Option<String>,
    /// Which repetition of the same shape in its run (0 for the first).
    pub occurrence: u32,
}

impl StepKey {
    pub(super) fn of(s: &StepReport) -> StepKey {
        let p = &s.params;
        let rate = if matches!(
            s.role,
            StepRole::CurveMax | StepRole::CurveRate { .. } | StepRole::CurveRefine
        ) {
            s.role.to_string()
        } else {
            rate_text(p)
        };
        StepKey {
            bs: p.bs.clone(),
            read_permille: (p.read_pct * 10.0).round() as i64,
            trim_permille: (p.trim_pct * 10.0).round() as i64,
            random_permille: (p.random_pct * 10.0).round() as i64,
            qd: p.qd,
            threads: p.threads,
            rate,
            tree: s.workload.as_ref().and_then(|w| w.fs.as_ref()).map(|f| {
                format!(
                    "{} in {}x{}x{} of {} {} {}",
                    f.ops, f.depth, f.width, f.files, f.file_size, f.fileio, f.fileselect
                )
            }),
            occurrence: 0,
        }
    }

    /// `4k read 70% random 100% qd 8 t4 max`.
    pub fn label(&self) -> String {
        let trim = if self.trim_permille > 0 {
            format!(" trim {}%", fmt_pct(self.trim_permille as f64 / 10.0))
        } else {
            String::new()
        };
        let mut s = match &self.tree {
            Some(tree) => format!("{tree} bs {} t{} {}", self.bs, self.threads, self.rate),
            None => format!(
                "{} read {}%{trim} random {}% qd {} t{} {}",
                self.bs,
                fmt_pct(self.read_permille as f64 / 10.0),
                fmt_pct(self.random_permille as f64 / 10.0),
                self.qd,
                self.threads,
                self.rate
            ),
        };
        if self.occurrence > 0 {
            let _ = write!(s, " #{}", self.occurrence + 1);
        }
        s
    }
}

/// The figures of one step of one run in a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct StepMetrics {
    pub step_index: i64,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub mean_lat_ns: f64,
    pub p99_lat_ns: f64,
    /// Against the first run; `None` for the first run itself or when the
    /// first run lacks the step.
    pub change: Option<Changes>,
    /// A step run on several hosts: each host's own figures.
    pub hosts: Vec<HostMetrics>,
    /// Storage-side series (`--collect`): name and mean over the step.
    pub external: Vec<(String, f64)>,
    /// Each figure per measured interval (IOPS, MB/s, mean and p99
    /// latency), for telling a change from the step's own noise.
    pub per_interval: [Vec<f64>; 4],
}

/// One host's part of a multi-host step in a comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct HostMetrics {
    pub name: String,
    /// `ok`, or `lost at interval N`.
    pub status: String,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub mean_lat_ns: f64,
    pub p99_lat_ns: f64,
    /// Against the same host (by name) in the first run's step.
    pub change: Option<Changes>,
    /// Its figures per measured interval, as [`StepMetrics::per_interval`].
    pub per_interval: [Vec<f64>; 4],
}

/// Changes against the first run (`None` when its figure is 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Changes {
    pub iops: Option<Change>,
    pub bw: Option<Change>,
    pub mean_lat: Option<Change>,
    pub p99_lat: Option<Change>,
}

/// One figure's change against the first run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Change {
    pub pct: f64,
    /// Beyond the noise of the two steps' intervals ([`beyond_noise`]);
    /// only such a change is coloured as better or worse.
    pub beyond_noise: bool,
}

/// The rule a change is judged by, as the page and the terminal state it.
pub const NOISE_RULE: &str = "a change counts when |Δ mean| > 2·√(s₁²/n₁ + s₂²/n₂) over the two steps' measured intervals (s: the figure's standard deviation from interval to interval, n: intervals); smaller ones are within noise";

/// Whether the means of two series of interval figures differ by more
/// than twice the standard error of their difference (Welch's,
/// √(s₁²/n₁ + s₂²/n₂)): about a 95 % two-sided test when the interval
/// figures are near normal and there are tens of intervals (with a handful
/// it is looser). Fewer than two intervals on either side give no spread to
/// judge by: not beyond noise. The % shown is of the steps' own figures
/// (p99 from the merged histogram); the test is of the intervals' means.
pub fn beyond_noise(a: &[f64], b: &[f64]) -> bool {
    fn mean_var(x: &[f64]) -> Option<(f64, f64, f64)> {
        let n = x.len() as f64;
        if x.len() < 2 {
            return None;
        }
        let m = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0);
        Some((m, var, n))
    }
    let (Some((m1, v1, n1)), Some((m2, v2, n2))) = (mean_var(a), mean_var(b)) else {
        return false;
    };
    (m2 - m1).abs() > 2.0 * (v1 / n1 + v2 / n2).sqrt()
}

/// One matched step: its figures in each run (`None` where a run lacks it).
#[derive(Clone, Debug, PartialEq)]
pub struct ComparedStep {
    pub key: StepKey,
    /// The step's name when every run that has it names it the same (quick's
    /// `seq-write`, a plan's labels); `None` when they differ or it is a
    /// single run's `run`.
    pub name: Option<String>,
    pub per_run: Vec<Option<StepMetrics>>,
}

impl ComparedStep {
    /// How the step is shown: its name, else its shape.
    pub fn label(&self) -> String {
        self.name.clone().unwrap_or_else(|| self.key.label())
    }
}

/// Steps matched across runs, in the first run's order (steps only other
/// runs have follow).
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub runs: Vec<RunId>,
    pub steps: Vec<ComparedStep>,
}

/// IOPS, MB/s, mean and p99 latency of each measured interval.
fn per_interval(intervals: &[crate::model::IntervalPoint]) -> [Vec<f64>; 4] {
    let measured: Vec<_> = intervals.iter().filter(|i| !i.warmup).collect();
    [
        measured.iter().map(|i| i.total.iops).collect(),
        measured.iter().map(|i| i.total.bw_bytes_per_s).collect(),
        measured
            .iter()
            .map(|i| i.total.lat_ns.mean as f64)
            .collect(),
        measured.iter().map(|i| i.total.lat_ns.p99 as f64).collect(),
    ]
}

/// The four figures' changes from `base` to `now` (IOPS, MB/s, mean and
/// p99 latency), each judged against the two sides' interval noise.
fn changes(
    base: [f64; 4],
    base_iv: &[Vec<f64>; 4],
    now: [f64; 4],
    now_iv: &[Vec<f64>; 4],
) -> Changes {
    let change = |k: usize| {
        pct_change(base[k], now[k]).map(|pct| Change {
            pct,
            beyond_noise: beyond_noise(&base_iv[k], &now_iv[k]),
        })
    };
    Changes {
        iops: change(0),
        bw: change(1),
        mean_lat: change(2),
        p99_lat: change(3),
    }
}

pub(super) fn pct_change(base: f64, v: f64) -> Option<f64> {
    (base.abs() > 0.0 && base.is_finite() && v.is_finite()).then(|| (v - base) / base * 100.0)
}

pub(super) fn fmt_change(c: Option<f64>) -> String {
    match c {
        Some(v) => format!("{v:+.1}%"),
        None => String::new(),
    }
}

impl Comparison {
    /// Matches the steps with results of `runs` by [`StepKey`].
    pub fn of(runs: &[RunReport]) -> Comparison {
        let mut order: Vec<StepKey> = Vec::new();
        let mut found: BTreeMap<StepKey, Vec<Option<StepMetrics>>> = BTreeMap::new();
        let mut names: BTreeMap<StepKey, Vec<String>> = BTreeMap::new();
        for (ri, r) in runs.iter().enumerate() {
            let mut seen: BTreeMap<StepKey, u32> = BTreeMap::new();
            for s in r.steps.iter().filter(|s| s.has_results()) {
                let Some(sum) = s.summary else { continue };
                let mut key = StepKey::of(s);
                let n = seen.entry(key.clone()).or_insert(0);
                key.occurrence = *n;
                *n += 1;
                names.entry(key.clone()).or_default().push(s.name.clone());
                let slot = found.entry(key.clone()).or_insert_with(|| {
                    order.push(key.clone());
                    vec![None; runs.len()]
                });
                slot[ri] = Some(StepMetrics {
                    step_index: s.index,
                    iops: sum.total.iops,
                    bw_bytes_per_s: sum.total.bw_bytes_per_s,
                    mean_lat_ns: sum.total.lat_ns.mean as f64,
                    p99_lat_ns: sum.total.lat_ns.p99 as f64,
                    change: None,
                    per_interval: per_interval(&s.intervals),
                    external: s
                        .external
                        .iter()
                        .filter(|e| !e.points.is_empty())
                        .map(|e| {
                            let mean =
                                e.points.iter().map(|p| p.1).sum::<f64>() / e.points.len() as f64;
                            (e.name.clone(), mean)
                        })
                        .collect(),
                    hosts: s
                        .hosts
                        .iter()
                        .map(|h| {
                            let r = &h.result;
                            let t = &r.summary.total;
                            HostMetrics {
                                name: r.name.clone(),
                                status: match r.status {
                                    iorig_result::HostStatus::Ok => "ok".into(),
                                    iorig_result::HostStatus::Lost => format!(
                                        "lost at interval {}",
                                        r.lost_at_interval.map_or(0, |i| i + 1)
                                    ),
                                },
                                iops: t.iops,
                                bw_bytes_per_s: t.bw_bytes_per_s,
                                mean_lat_ns: t.lat_ns.mean as f64,
                                p99_lat_ns: t.lat_ns.p99 as f64,
                                change: None,
                                per_interval: per_interval(&h.intervals),
                            }
                        })
                        .collect(),
                });
            }
        }
        let steps = order
            .into_iter()
            .map(|key| {
                let mut per_run = found.remove(&key).unwrap_or_default();
                let base = per_run.first().cloned().flatten();
                if let Some(b) = base {
                    for m in per_run.iter_mut().skip(1).flatten() {
                        m.change = Some(changes(
                            [b.iops, b.bw_bytes_per_s, b.mean_lat_ns, b.p99_lat_ns],
                            &b.per_interval,
                            [m.iops, m.bw_bytes_per_s, m.mean_lat_ns, m.p99_lat_ns],
                            &m.per_interval,
                        ));
                        // Each host against itself in the first run.
                        for h in &mut m.hosts {
                            if let Some(bh) = b.hosts.iter().find(|bh| bh.name == h.name) {
                                h.change = Some(changes(
                                    [bh.iops, bh.bw_bytes_per_s, bh.mean_lat_ns, bh.p99_lat_ns],
                                    &bh.per_interval,
                                    [h.iops, h.bw_bytes_per_s, h.mean_lat_ns, h.p99_lat_ns],
                                    &h.per_interval,
                                ));
                            }
                        }
                    }
                }
                let given = names.remove(&key).unwrap_or_default();
                let name = given
                    .first()
                    .filter(|n| *n != "run" && given.iter().all(|g| g == *n))
                    .cloned();
                ComparedStep { key, name, per_run }
            })
            .collect();
        Comparison {
            runs: runs.iter().map(RunReport::id).collect(),
            steps,
        }
    }

    /// A plain-text table for a terminal: one line per step and run, the
    /// change against the first run beside each figure.
    pub fn table_lines(&self) -> Vec<String> {
        let width = self
            .steps
            .iter()
            .map(|s| s.label().chars().count())
            .max()
            .unwrap_or(4)
            .max(4);
        let mut out = vec![format!(
            "{:<width$}  {:>6}  {:>11} {:>8}  {:>9} {:>8}  {:>10} {:>8}  {:>10} {:>8}",
            "step", "run", "IOPS", "Δ", "MB/s", "Δ", "mean lat", "Δ", "p99 lat", "Δ"
        )];
        for s in &self.steps {
            let label = s.label();
            for (i, (run, m)) in self.runs.iter().zip(&s.per_run).enumerate() {
                let name = if i == 0 { label.as_str() } else { "" };
                let line = match m {
                    Some(m) => {
                        let c = m.change;
                        format!(
                            "{:<width$}  {:>6}  {:>11} {:>8}  {:>9} {:>8}  {:>10} {:>8}  {:>10} {:>8}",
                            name,
                            run.0,
                            fmt_iops(m.iops),
                            change_text(c.and_then(|c| c.iops)),
                            fmt_mb_s(m.bw_bytes_per_s),
                            change_text(c.and_then(|c| c.bw)),
                            fmt_lat_ns(m.mean_lat_ns),
                            change_text(c.and_then(|c| c.mean_lat)),
                            fmt_lat_ns(m.p99_lat_ns),
                            change_text(c.and_then(|c| c.p99_lat)),
                        )
                    }
                    None => format!("{:<width$}  {:>6}  {:>11}", name, run.0, "–"),
                };
                out.push(line.trim_end().to_owned());
                // A multi-host step: each host below its run's line.
                for h in m.iter().flat_map(|m| &m.hosts) {
                    let c = h.change;
                    out.push(format!(
                        "{:<width$}  {:>6}  {:>11} {:>8}  {:>9} {:>8}  {:>10} {:>8}  {:>10} {:>8}  host {} ({})",
                        "",
                        "",
                        fmt_iops(h.iops),
                        change_text(c.and_then(|c| c.iops)),
                        fmt_mb_s(h.bw_bytes_per_s),
                        change_text(c.and_then(|c| c.bw)),
                        fmt_lat_ns(h.mean_lat_ns),
                        change_text(c.and_then(|c| c.mean_lat)),
                        fmt_lat_ns(h.p99_lat_ns),
                        change_text(c.and_then(|c| c.p99_lat)),
                        h.name,
                        h.status
                    ));
                }
            }
        }
        if self.runs.len() > 1 {
            out.push(String::new());
            out.push(format!(
                "Δ against run {}; in brackets: within noise ({NOISE_RULE})",
                self.runs.first().map_or(0, |r| r.0)
            ));
        }
        out
    }
}

/// A change in the terminal: "+12.4%" beyond noise, "(+3.0%)" within it.
fn change_text(c: Option<Change>) -> String {
    match c {
        Some(c) if c.beyond_noise => format!("{:+.1}%", c.pct),
        Some(c) => format!("({:+.1}%)", c.pct),
        None => String::new(),
    }
}

/// A change cell: coloured by whether it is better (`up`) or worse when it
/// is beyond noise, muted and said to be within noise otherwise.
pub(super) fn change_cell(c: Option<Change>, higher_is_better: bool) -> Markup {
    match c {
        Some(c) if c.beyond_noise => {
            // Under 0.05 % it reads +0.0 %: beyond noise, but no colour.
            let good = (c.pct > 0.0) == higher_is_better;
            let class = (c.pct.abs() >= 0.05).then_some(if good { "up" } else { "down" });
            html! { span class=[class] { (format!("{:+.1} %", c.pct)) } }
        }
        Some(c) => html! {
            span.muted title="within noise" { (format!("{:+.1} %", c.pct)) " within noise" }
        },
        None => Markup::default(),
    }
}

/// The comparison page of several runs (the first is the baseline) and
/// the matched figures behind it.
pub fn render_compare(runs: &[RunReport]) -> (Rendered, Comparison) {
    let cmp = Comparison::of(runs);
    let mut page = Page::new();
    let ids: Vec<String> = runs.iter().map(|r| r.id().to_string()).collect();
    let title = format!("iorig comparison: runs {}", ids.join(", "));
    page.push(html! {
        header {
            h1 { (title) }
            p.sub {
                "Changes are against run " (ids.first().map(String::as_str).unwrap_or("–")) "."
            }
        }
        nav {
            a href="#runs" { "Runs" }
            a href="#compared" { "Steps compared" }
            a href="#compare-charts" { "Charts" }
        }
    });
    page.push(html! {
        section id="runs" { h2 { "Runs" } (runs_table(runs)) }
    });
    compared_section(&mut page, &cmp);
    external_section(&mut page, &cmp);
    let figures = comparison_charts(&mut page, runs, &cmp);
    let none_drawn = page.charts.is_empty();
    page.push(html! {
        section id="compare-charts" {
            h2 { "Charts" }
            @for f in &figures { (f) }
            @if none_drawn {
                p.note {
                    "No charts: the runs share no curve, scaling series or step with latency \
                     histograms."
                }
            }
        }
        footer { "Made by iorig from the result store." }
    });
    (page.finish(&title), cmp)
}

/// The compared runs, a row each.
fn runs_table(runs: &[RunReport]) -> Markup {
    let rows: Vec<Vec<Markup>> = runs
        .iter()
        .map(|r| {
            let run = &r.run.run;
            let labels: Vec<String> = run.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            vec![
                run.id.0.render(),
                run.kind.as_str().render(),
                status_markup(run.status.as_str()),
                run.host.render(),
                run.started.render(),
                run.tool_version.render(),
                r.steps.len().render(),
                labels.join(", ").render(),
            ]
        })
        .collect();
    table(
        "runs",
        &[
            "run", "kind", "status", "host", "started", "version", "steps", "labels",
        ],
        &rows,
        6..7,
    )
}

/// The matched steps: each run's figures and changes, then each host of a
/// step run on several.
fn compared_section(page: &mut Page, cmp: &Comparison) {
    let mut rows = Vec::new();
    for s in &cmp.steps {
        for (i, (run, m)) in cmp.runs.iter().zip(&s.per_run).enumerate() {
            let name = if i == 0 { s.label() } else { String::new() };
            let mut row = vec![name.render(), run.0.render()];
            match m {
                Some(m) => {
                    let c = m.change;
                    row.extend([
                        fmt_iops(m.iops).render(),
                        change_cell(c.and_then(|c| c.iops), true),
                        fmt_mb_s(m.bw_bytes_per_s).render(),
                        change_cell(c.and_then(|c| c.bw), true),
                        fmt_lat_ns(m.mean_lat_ns).render(),
                        change_cell(c.and_then(|c| c.mean_lat), false),
                        fmt_lat_ns(m.p99_lat_ns).render(),
                        change_cell(c.and_then(|c| c.p99_lat), false),
                    ]);
                }
                None => {
                    row.push(html! { span.muted { "not run" } });
                    row.extend((1..8).map(|_| Markup::default()));
                }
            }
            rows.push(row);
        }
    }
    // Steps run on several hosts: each run's hosts side by side.
    let mut host_rows: Vec<Vec<Markup>> = Vec::new();
    for s in &cmp.steps {
        for (run, m) in cmp.runs.iter().zip(&s.per_run) {
            for h in m.iter().flat_map(|m| &m.hosts) {
                let c = h.change;
                host_rows.push(vec![
                    s.label().render(),
                    run.0.render(),
                    h.name.render(),
                    h.status.render(),
                    fmt_iops(h.iops).render(),
                    change_cell(c.and_then(|c| c.iops), true),
                    fmt_mb_s(h.bw_bytes_per_s).render(),
                    change_cell(c.and_then(|c| c.bw), true),
                    fmt_lat_ns(h.mean_lat_ns).render(),
                    change_cell(c.and_then(|c| c.mean_lat), false),
                    fmt_lat_ns(h.p99_lat_ns).render(),
                    change_cell(c.and_then(|c| c.p99_lat), false),
                ]);
            }
        }
    }
    page.push(html! {
        section id="compared" {
            h2 { "Steps compared" }
            @if cmp.steps.is_empty() {
                p.note { "No step with results in these runs." }
            } @else {
                p.note {
                    "Green: better, red: worse, each against the first run. "
                    "Colour only where the change is beyond noise: " (NOISE_RULE) "."
                }
                (table("compare wide", &COMPARE_TABLE_HEAD, &rows, 2..10))
                @if !host_rows.is_empty() {
                    h3 { "Per host" }
                    p.note { "Each host against itself (by name) in the first run." }
                    (table(
                        "compare hosts",
                        &["step", "run", "host", "status", "IOPS", "Δ", "MB/s", "Δ", "mean lat", "Δ", "p99 lat", "Δ"],
                        &host_rows,
                        4..12,
                    ))
                }
            }
        }
    });
}

/// The comparison's charts: each curve, each scaling series and each
/// matched step's percentiles, a line per run.
fn comparison_charts(page: &mut Page, runs: &[RunReport], cmp: &Comparison) -> Vec<Markup> {
    let mut figures = Vec::new();
    let run_label = |r: &RunReport| format!("run {}", r.id());
    // Curves: the n-th curve of each run.
    let max_curves = runs.iter().map(|r| r.curves.len()).max().unwrap_or(0);
    for ci in 0..max_curves {
        let lines: Vec<CurveLine> = runs
            .iter()
            .filter_map(|r| r.curves.get(ci).map(|c| curve_line(run_label(r), c)))
            .collect();
        let threshold_ms = runs
            .iter()
            .find_map(|r| r.curves.get(ci).map(|c| c.threshold_ms))
            .unwrap_or(1.0);
        let title = format!("IOPS–latency curve {} by run", ci + 1);
        figures.push(page.chart(
            &format!("compare-curve-{}", ci + 1),
            &title,
            charts::curve_chart(&title, threshold_ms, &lines),
        ));
    }
    // Scaling: one chart per (axis, fixed parameters, block size), a line per run.
    let mut scaling: BTreeMap<(Axis, String, BsKey), Vec<ScalingLine>> = BTreeMap::new();
    for r in runs {
        for g in scaling_groups(&r.steps) {
            for (bs, pts) in g.lines {
                scaling
                    .entry((g.axis, g.fixed.clone(), bs))
                    .or_default()
                    .push(ScalingLine {
                        label: run_label(r),
                        points: pts,
                    });
            }
        }
    }
    for (i, ((axis, fixed, bs), lines)) in scaling.iter().take(MAX_SCALING_CHARTS).enumerate() {
        let title = format!(
            "Scaling with {} by run: bs {}, {fixed}",
            axis.name(),
            bs.label
        );
        figures.push(page.chart(
            &format!("compare-scaling-{}-{}", axis.name(), i + 1),
            &title,
            charts::scaling_chart(&title, axis.description(), lines),
        ));
    }
    // Percentiles of matched steps, a line per run.
    let mut drawn = 0;
    for s in &cmp.steps {
        if drawn >= MAX_STEP_DETAILS {
            break;
        }
        let lines: Vec<PercentileLine> = runs
            .iter()
            .zip(&s.per_run)
            .filter_map(|(r, m)| {
                let m = m.as_ref()?;
                let step = r.steps.iter().find(|x| x.index == m.step_index)?;
                let p = step.percentiles.first()?;
                Some(PercentileLine {
                    label: run_label(r),
                    points: p.points.clone(),
                })
            })
            .collect();
        if lines.len() < 2 {
            continue;
        }
        drawn += 1;
        let title = format!("Latency percentiles by run: {}", s.label());
        figures.push(page.chart(
            &format!("compare-percentiles-{drawn}"),
            &title,
            charts::percentile_chart(&title, &lines),
        ));
    }
    figures
}

/// The comparison table's header row.
pub const COMPARE_TABLE_HEAD: [&str; 10] = [
    "step", "run", "IOPS", "Δ IOPS", "MB/s", "Δ MB/s", "mean lat", "Δ mean", "p99 lat", "Δ p99",
];

/// The storage-side series (`--collect`) of the compared steps: each
/// series' mean per run and its change against the first run.
fn external_section(page: &mut Page, cmp: &Comparison) {
    let mut rows: Vec<(String, &str, Vec<String>)> = Vec::new();
    for step in &cmp.steps {
        let mut names: Vec<&str> = Vec::new();
        for m in step.per_run.iter().flatten() {
            for (n, _) in &m.external {
                if !names.contains(&n.as_str()) {
                    names.push(n);
                }
            }
        }
        for name in names {
            let means: Vec<Option<f64>> = step
                .per_run
                .iter()
                .map(|m| {
                    m.as_ref()
                        .and_then(|m| m.external.iter().find(|(n, _)| n == name))
                        .map(|(_, v)| *v)
                })
                .collect();
            let cells = means
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Some(v) => {
                        let change = match (i, means[0]) {
                            (0, _) | (_, None) => String::new(),
                            (_, Some(base)) => format!(" ({})", fmt_change(pct_change(base, *v))),
                        };
                        format!("{}{change}", iorig_spec::sig3(*v))
                    }
                    None => "–".into(),
                })
                .collect();
            rows.push((step.label(), name, cells));
        }
    }
    if rows.is_empty() {
        return;
    }
    // Not `table`: the run columns' figures are right-aligned, their
    // headers are not.
    page.push(html! {
        section id="external" {
            h2 { "Storage side" }
            p.sub {
                "Each series collected with " code { "--collect" }
                ", its mean over the step, against the first run."
            }
            div.scroll {
                table.compare {
                    thead {
                        tr {
                            th { "step" }
                            th { "series" }
                            @for r in &cmp.runs { th { "run " (r.0) } }
                        }
                    }
                    tbody {
                        @for (step, name, cells) in &rows {
                            tr {
                                td { (step) }
                                td { code { (name) } }
                                @for c in cells { td.num { (c) } }
                            }
                        }
                    }
                }
            }
        }
    });
}
