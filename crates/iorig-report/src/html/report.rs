//! The report of one run, the answer first: the five figures and the
//! findings (with each curve's answer), the step table, the curve, scaling
//! and heatmap charts, each step in detail, and last the facts about the
//! run, the host and the targets.

use super::*;
use iorig_spec::headline;

/// The report of one run, with the default choice of detailed steps.
pub fn render_report(r: &RunReport) -> Rendered {
    render_report_with(r, &Details::Auto)
}

/// Whether a step's results carry a warning worth its detail charts.
fn needs_a_look(s: &StepReport) -> bool {
    let f = &s.findings;
    s.status != iorig_result::StepStatus::Ok
        || f.generator_bound
            .as_ref()
            .is_some_and(|g| g.generator_bound)
        || f.rate.as_ref().is_some_and(|r| !r.met)
        || f.outages.as_ref().is_some_and(|o| !o.spans_s.is_empty())
        || matches!(f.write_cliff, Some(Some(_)))
        || f.generator_dip.is_some()
        || f.steady_state.as_ref().is_some_and(|v| !v.reached)
        || f.validation.as_ref().is_some_and(|v| v.errors > 0)
}

/// The steps drawn in detail, in step order.
fn detailed_steps<'a>(r: &'a RunReport, details: &Details) -> Vec<&'a StepReport> {
    let with_results = r.steps.iter().filter(|s| s.has_results());
    match details {
        Details::Steps(numbers) => with_results
            .filter(|s| numbers.contains(&(s.index + 1)))
            .collect(),
        Details::Auto => {
            let all: Vec<&StepReport> = with_results.collect();
            if all.len() <= MAX_STEP_DETAILS {
                return all;
            }
            let mut chosen: Vec<&StepReport> = all
                .iter()
                .copied()
                .filter(|s| needs_a_look(s))
                .take(MAX_STEP_DETAILS)
                .collect();
            for s in &all {
                if chosen.len() >= MAX_STEP_DETAILS {
                    break;
                }
                if !chosen.iter().any(|c| c.index == s.index) {
                    chosen.push(s);
                }
            }
            chosen.sort_by_key(|s| s.index);
            chosen
        }
    }
}

/// The report of one run, with detail charts for the steps `details` names.
pub fn render_report_with(r: &RunReport, details: &Details) -> Rendered {
    let mut page = Page::new();
    let run = &r.run.run;
    let title = format!("iorig report: run {}", run.id);
    page.push(html! {
        header {
            h1 { (title) }
            p.sub {
                (run.kind.as_str()) " · " (status_markup(run.status.as_str()))
                " · " (run.host) " · started " (run.started)
            }
        }
    });

    let detailed = detailed_steps(r, details);
    let scaling = scaling_groups(&r.steps);
    let heatmaps = heatmap_groups(&r.steps);
    // The answer first (figures, findings with the curves' answers), then
    // the steps, then the charts; the facts about host and targets last.
    let mut nav = Vec::new();
    if !r.figures.is_empty() {
        nav.push(("figures", "Five figures"));
    }
    nav.extend([("findings", "Findings"), ("steps", "Steps")]);
    if !r.curves.is_empty() {
        nav.push(("curves", "Curves"));
    }
    if !scaling.is_empty() {
        nav.push(("scaling", "Scaling"));
    }
    if !heatmaps.is_empty() {
        nav.push(("heatmaps", "Heatmaps"));
    }
    if !detailed.is_empty() {
        nav.push(("details", "Step details"));
    }
    nav.push(("run", "Run, system and targets"));
    page.push(html! {
        nav { @for (id, name) in &nav { a href={ "#" (id) } { (name) } } }
    });

    figures_section(&mut page, &r.figures);
    findings_section(&mut page, r);
    steps_section(&mut page, r);
    curves_section(&mut page, r);
    scaling_section(&mut page, &scaling);
    heatmaps_section(&mut page, &heatmaps);
    details_section(&mut page, r, details, &detailed);
    run_section(&mut page, r);
    page.push(html! {
        footer { "Made by iorig " (run.tool_version) " from the result store." }
    });
    page.finish(&title)
}

fn curves_section(page: &mut Page, r: &RunReport) {
    if r.curves.is_empty() {
        return;
    }
    let curves: Vec<Markup> = r.curves.iter().map(|c| curve_section(page, r, c)).collect();
    page.push(html! {
        section id="curves" {
            h2 { "IOPS–latency curves" }
            @for c in &curves { (c) }
        }
    });
}

fn scaling_section(page: &mut Page, scaling: &[ScalingGroup]) {
    if scaling.is_empty() {
        return;
    }
    let figures: Vec<Markup> = scaling
        .iter()
        .take(MAX_SCALING_CHARTS)
        .enumerate()
        .map(|(i, g)| {
            let title = format!("Scaling with {}: {}", g.axis.name(), g.fixed);
            let lines: Vec<ScalingLine> = g
                .lines
                .iter()
                .map(|(bs, pts)| ScalingLine {
                    label: bs.label.clone(),
                    points: pts.clone(),
                })
                .collect();
            page.chart(
                &format!("scaling-{}-{}", g.axis.name(), i + 1),
                &title,
                charts::scaling_chart(&title, g.axis.description(), &lines),
            )
        })
        .collect();
    let left_out = scaling.len().saturating_sub(MAX_SCALING_CHARTS);
    page.push(html! {
        section id="scaling" {
            h2 { "Scaling" }
            @for f in &figures { (f) }
            @if left_out > 0 {
                p.note { (left_out) " more scaling charts left out." }
            }
        }
    });
}

fn heatmaps_section(page: &mut Page, heatmaps: &[HeatGroup]) {
    if heatmaps.is_empty() {
        return;
    }
    let mut figures: Vec<Markup> = Vec::new();
    for (i, h) in heatmaps.iter().take(MAX_HEATMAPS).enumerate() {
        for (kind, what, high_is_good) in [
            (HeatValue::Iops, "IOPS", true),
            (HeatValue::LatencyNs, "p99 latency", false),
        ] {
            let title = format!("{what}: {}", h.fixed);
            let values = h
                .cells
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|c| {
                            c.map(|(iops, p99)| match kind {
                                HeatValue::Iops => iops,
                                HeatValue::LatencyNs => p99,
                            })
                        })
                        .collect()
                })
                .collect();
            let map = Heatmap {
                title: title.clone(),
                x_desc: "block size".to_owned(),
                x_cats: h.bs.iter().map(|b| b.label.clone()).collect(),
                y_desc: "read %".to_owned(),
                y_cats: h.reads.iter().map(|r| fmt_pct(*r)).collect(),
                values,
                high_is_good,
                kind,
            };
            let stem = match kind {
                HeatValue::Iops => format!("heatmap-{}-iops", i + 1),
                HeatValue::LatencyNs => format!("heatmap-{}-p99", i + 1),
            };
            figures.push(page.chart(&stem, &title, charts::heatmap_chart(&map)));
        }
    }
    page.push(html! {
        section id="heatmaps" {
            h2 { "Heatmaps: read % × block size" }
            @for f in &figures { (f) }
        }
    });
}

fn details_section(page: &mut Page, r: &RunReport, details: &Details, detailed: &[&StepReport]) {
    if detailed.is_empty() {
        return;
    }
    let with_results = r.steps.iter().filter(|s| s.has_results()).count();
    let how = match details {
        Details::Auto => "those with warnings first, then in step order",
        Details::Steps(_) => "the steps asked for",
    };
    let steps: Vec<Markup> = detailed.iter().map(|s| step_detail(page, s)).collect();
    page.push(html! {
        section id="details" {
            h2 { "Step details" }
            @if with_results > detailed.len() {
                p.note {
                    "Charts of " (detailed.len()) " of " (with_results)
                    " steps with results (" (how) "); the step table lists all, and "
                    code { "iorig report " (r.run.run.id.0) " --steps 5,10-20" }
                    " draws the ones you name."
                }
            }
            @for s in &steps { (s) }
        }
    });
}

pub(super) fn run_section(page: &mut Page, r: &RunReport) {
    let run = &r.run.run;
    let mut rows = vec![
        ("id", run.id.0.render()),
        ("kind", run.kind.as_str().render()),
        ("status", status_markup(run.status.as_str())),
        ("host", run.host.render()),
        ("tool version", run.tool_version.render()),
        ("command line", html! { code { (r.run.command_line) } }),
        ("started", run.started.render()),
        ("ended", opt_text(run.ended.as_deref())),
        (
            "duration",
            r.duration_s()
                .map_or_else(dash, |d| fmt_duration_s(d).render()),
        ),
    ];
    if !run.labels.is_empty() {
        let labels: Vec<String> = run.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
        rows.push(("labels", labels.join(", ").render()));
    }
    let system = match &r.system {
        Some(sys) => facts_table(&[
            ("hostname", opt_text(sys.hostname.as_deref())),
            ("OS", opt_text(sys.os.as_deref())),
            ("kernel", opt_text(sys.kernel.as_deref())),
            ("CPU", opt_text(sys.cpu_model.as_deref())),
            (
                "CPUs",
                opt_text(sys.cpu_count.map(|n| n.to_string()).as_deref()),
            ),
            (
                "memory",
                sys.mem_total_bytes
                    .map_or_else(dash, |b| fmt_bytes(b).render()),
            ),
        ]),
        None => html! { p.note { "No system facts recorded." } },
    };
    page.push(html! {
        section id="run" {
            h2 { "Run" }
            (facts_table(&rows))
            h3 { "System" }
            (system)
            @if let Some(hosts) = host_systems(r) {
                h3 id="host-systems" { "Hosts" }
                (hosts)
            }
            h3 { "Targets" }
            (targets_table(r))
        }
    });
}

/// Each host's machine, as its agent described it (a multi-host run; the
/// System table above is the controller's): from the first step that has
/// the host.
fn host_systems(r: &RunReport) -> Option<Markup> {
    let mut seen: Vec<&str> = Vec::new();
    let mut rows: Vec<Vec<Markup>> = Vec::new();
    for h in r.steps.iter().flat_map(|s| &s.hosts) {
        let h = &h.result;
        if seen.contains(&h.name.as_str()) {
            continue;
        }
        seen.push(&h.name);
        let sys = h.system.clone().unwrap_or_default();
        rows.push(vec![
            h.name.render(),
            h.hostname.render(),
            opt_text(sys.os.as_deref()),
            opt_text(sys.kernel.as_deref()),
            opt_text(sys.cpu_model.as_deref()),
            opt_text(sys.cpu_count.map(|n| n.to_string()).as_deref()),
            sys.mem_total_bytes
                .map_or_else(dash, |b| fmt_bytes(b).render()),
            h.tool_version.render(),
        ]);
    }
    (!rows.is_empty()).then(|| {
        table(
            "host-systems",
            &[
                "host", "hostname", "OS", "kernel", "CPU", "CPUs", "memory", "iorig",
            ],
            &rows,
            5..7,
        )
    })
}

/// The run's targets and what the system told of each.
fn targets_table(r: &RunReport) -> Markup {
    if r.targets.is_empty() {
        return html! { p.note { "No targets recorded (the null engine uses none)." } };
    }
    let rows: Vec<Vec<Markup>> = r
        .targets
        .iter()
        .map(|t| {
            let j = &t.facts;
            let blocks = match (j.logical_block_bytes, j.physical_block_bytes) {
                (Some(l), Some(p)) => format!("{l} / {p}").render(),
                _ => dash(),
            };
            vec![
                html! { code { (t.path) } },
                opt_text(t.kind.as_deref()),
                t.size_bytes.map_or_else(dash, |b| fmt_bytes(b).render()),
                opt_text(j.device.as_deref()),
                opt_text(j.model.as_deref()),
                opt_text(j.rotational.map(|r| if r { "yes" } else { "no" })),
                opt_text(j.scheduler.as_deref()),
                blocks,
                opt_text(j.filesystem.as_deref()),
            ]
        })
        .collect();
    table(
        "targets",
        &[
            "path",
            "kind",
            "size",
            "device",
            "model",
            "rotational",
            "scheduler",
            "logical / physical block (B)",
            "filesystem",
        ],
        &rows,
        0..0,
    )
}

/// One line per thing worth a reader's attention.
pub(super) fn findings_section(page: &mut Page, r: &RunReport) {
    // A big matrix can have thousands of notes; the step table has them all.
    const MAX_ITEMS: usize = 200;
    let mut items: Vec<Markup> = r
        .curves
        .iter()
        .map(|c| curve_sentence(c).render())
        .collect();
    for s in &r.steps {
        items.extend(step_findings(s));
    }
    let judged = r
        .steps
        .iter()
        .filter(|s| s.findings.steady_state.is_some())
        .count();
    if judged > 0 {
        let reached = r
            .steps
            .iter()
            .filter(|s| {
                s.findings
                    .steady_state
                    .as_ref()
                    .is_some_and(|ss| ss.reached)
            })
            .count();
        items.push(html! {
            "Steady state reached in " (reached) " of " (judged) " step(s) measured in rounds."
        });
    }
    for a in &r.plan_findings {
        items.push(html! {
            (a.finding.kind().as_str()) ": " code { (a.finding.body_json().unwrap_or_default()) }
        });
    }
    let done = r.steps.iter().filter(|s| s.has_results()).count();
    page.push(html! {
        section id="findings" {
            h2 { "Findings" }
            p { (r.steps.len()) " step(s), " (done) " with results." }
            @if items.is_empty() {
                p.note { "Nothing notable: no outages, write cliffs or generator limits found." }
            } @else {
                ul.findings { @for i in items.iter().take(MAX_ITEMS) { li { (i) } } }
                @if items.len() > MAX_ITEMS {
                    p.note { (items.len() - MAX_ITEMS) " more in the step table." }
                }
            }
        }
    });
}

/// The findings of one step, each a line of the findings list.
fn step_findings(s: &StepReport) -> Vec<Markup> {
    let f = &s.findings;
    let who = format!("Step {} ({})", s.number(), s.name);
    let mut items = Vec::new();
    if let Some(g) = f.generator_bound.as_ref().filter(|g| g.generator_bound) {
        // A paced step is judged by its issue lag, which the message gives.
        items.push(html! {
            span.warn { (who) ": generator-bound" }
            @if !g.issued_late { (format!(" (in-flight ratio {:.2})", g.in_flight_ratio)) }
            @if let Some(m) = &g.message { ": " (m) }
        });
    }
    if let Some(r) = f.rate.as_ref().filter(|r| !r.met) {
        items.push(html! {
            span.warn { (who) ": rate not met" }
            (format!(
                ": {} of {} IOPS requested ({:+.1} %); its latency is for that load",
                fmt_iops(r.achieved_iops),
                fmt_iops(r.requested_iops),
                r.error_pct
            ))
        });
    }
    if let Some(o) = f.outages.as_ref().filter(|o| !o.spans_s.is_empty()) {
        items.push(html! {
            span.warn { (who) ": " (o.spans_s.len()) " outage(s)" }
            (format!(
                ", {} s in total, longest {} s",
                charts::sig3(o.total_outage_s),
                charts::sig3(o.longest_outage_s)
            ))
        });
    }
    if let Some(Some(c)) = &f.write_cliff {
        items.push(html! {
            span.warn { (who) ": write cliff" }
            (format!(
                " at {} s: {} → {} IOPS ({:.0} % lower)",
                charts::sig3(c.onset_t_s),
                fmt_iops(c.level_before_iops),
                fmt_iops(c.level_after_iops),
                c.drop_pct
            ))
        });
    }
    if let Some(g) = &f.generator_dip {
        items.push(html! {
            span.warn { (who) ": IOPS fell while the load generator was the limit" }
            (format!(
                " from {} s to {} s: {} → {} IOPS, host CPU up to {:.0} %, busiest worker up to {:.0} % (not a write cliff)",
                charts::sig3(g.start_t_s),
                charts::sig3(g.end_t_s),
                fmt_iops(g.level_before_iops),
                fmt_iops(g.level_during_iops),
                g.cpu_busy_max_pct,
                g.worker_busy_max_pct
            ))
        });
    }
    // Reached steady states are counted below; only misses are news.
    if let Some(ss) = f.steady_state.as_ref().filter(|ss| !ss.reached) {
        items.push(html! { (who) ": " (steady_text(ss)) });
    }
    if let Some(s_) = s.summary.filter(|s_| s_.errors > 0) {
        items.push(html! { span.warn { (who) ": " (s_.errors) " I/O error(s)" } });
    }
    items
}

pub(super) fn steady_text(ss: &crate::model::SteadyState) -> Markup {
    if ss.reached {
        html! {
            "steady state reached after " (ss.rounds_needed.unwrap_or(ss.rounds)) " round(s)"
        }
    } else {
        html! {
            span.warn { "steady state not reached" } " in " (ss.rounds) " round(s)"
            @if let Some(r) = &ss.reason { ": " (r) }
        }
    }
}

/// "Curve 2 (bs=64k)": the curve's number and what sets it apart.
pub(super) fn curve_title(c: &CurveReport) -> String {
    match &c.name {
        Some(n) => format!("{} ({n})", c.group + 1),
        None => (c.group + 1).to_string(),
    }
}

pub(super) fn curve_sentence(c: &CurveReport) -> String {
    let Some(a) = &c.analysis else {
        return format!("Curve {}: no analysis stored.", curve_title(c));
    };
    // The plan step a point stands for (shown from 1, as the step table).
    let step_no = |i: usize| c.step_indexes.get(i).map(|s| s + 1);
    let step_of = |point: Option<usize>| {
        point
            .and_then(step_no)
            .map(|n| format!(" (step {n})"))
            .unwrap_or_default()
    };
    // A best between two steps is no step's measurement: say so.
    let best = |v: Option<f64>, point: Option<usize>, toward: Option<usize>| {
        let at = match (point.and_then(step_no), toward.and_then(step_no)) {
            (Some(a), Some(b)) => format!(" (interpolated between steps {a} and {b})"),
            _ => step_of(point),
        };
        v.map(|x| format!("{} IOPS{at}", fmt_iops(x)))
            .unwrap_or_else(|| "none (no paced step met its rate within the limit)".to_owned())
    };
    let mut s = format!(
        "Curve {}: max {} IOPS; best with mean latency ≤ {} ms: {}; with p99 ≤ {} ms: {}",
        curve_title(c),
        fmt_iops(a.max_iops),
        charts::axis_num(c.threshold_ms),
        best(
            a.best_under_mean,
            a.best_under_mean_point,
            a.best_under_mean_toward
        ),
        charts::axis_num(c.threshold_ms),
        best(
            a.best_under_p99,
            a.best_under_p99_point,
            a.best_under_p99_toward
        )
    );
    // Points (indexes as given) as the step numbers they stand on.
    let steps_of = |points: &[usize]| -> String {
        points
            .iter()
            .filter_map(|&i| step_no(i))
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !a.off_rate_points.is_empty() {
        let _ = write!(
            s,
            "; steps off their requested rate by more than 3 % (not counted for the best): {}",
            steps_of(&a.off_rate_points)
        );
    }
    if !a.non_monotone_points.is_empty() {
        let _ = write!(
            s,
            "; not monotone: step(s) {} slower than the next higher-rate step beyond their spread — a disturbance, not the storage's curve: rerun before trusting the answer",
            steps_of(&a.non_monotone_points)
        );
    }
    if let Some(k) = &a.knee {
        let _ = write!(
            s,
            "; knee at {} IOPS (mean {})",
            fmt_iops(k.iops),
            fmt_lat_ns(k.lat_ns)
        );
    }
    s
}

pub(super) fn step_notes(s: &StepReport) -> Markup {
    let f = &s.findings;
    let mut notes: Vec<Markup> = Vec::new();
    if let Some(why) = &f.skipped_why {
        notes.push(html! {
            "skipped" @if !why.is_empty() { ": " (why) }
        });
    }
    let lag = s.summary.and_then(|sum| sum.issue_lag_ns);
    match (
        f.generator_bound.as_ref().filter(|g| g.generator_bound),
        lag,
    ) {
        (Some(g), Some(l)) if g.issued_late => notes.push(html! {
            span.warn { "issued late" }
            (format!(
                " (lag p99 {}, {:.0} % of the latency p99)",
                fmt_lat_ns(l.p99 as f64),
                g.issue_lag_share_pct.unwrap_or(0.0)
            ))
        }),
        (Some(g), _) => notes.push(html! {
            span.warn { "generator-bound" } (format!(" (ratio {:.2})", g.in_flight_ratio))
        }),
        // How late a paced step issued, shown when it kept its schedule.
        (None, Some(l)) => notes.push(html! {
            (format!("issue lag p99 {}", fmt_lat_ns(l.p99 as f64)))
        }),
        (None, None) => {}
    }
    if let Some(r) = f.rate.as_ref().filter(|r| !r.met) {
        notes.push(html! {
            span.warn { "rate not met" }
            (format!(" ({:+.1} % of {} IOPS)", r.error_pct, fmt_iops(r.requested_iops)))
        });
    }
    if let Some(o) = f.outages.as_ref().filter(|o| !o.spans_s.is_empty()) {
        notes.push(html! {
            span.warn { (o.spans_s.len()) " outage(s)" } ", " (charts::sig3(o.total_outage_s)) " s"
        });
    }
    if let Some(Some(c)) = &f.write_cliff {
        notes.push(html! {
            span.warn { "write cliff" }
            (format!(" at {} s (−{:.0} %)", charts::sig3(c.onset_t_s), c.drop_pct))
        });
    }
    if let Some(g) = &f.generator_dip {
        notes.push(html! {
            span.warn { "generator-limited dip" }
            " at " (charts::sig3(g.start_t_s)) " s (not a write cliff)"
        });
    }
    if let Some(p) = &f.precondition {
        notes.push(html! {
            (format!(
                "precondition: {} written in {} ({} MB/s)",
                fmt_bytes(p.written_bytes),
                fmt_duration_s(p.duration_s),
                fmt_mb_s(p.bw_bytes_per_s)
            ))
        });
    }
    if let Some(v) = &f.validation {
        if v.errors == 0 {
            notes.push(html! {
                "validated: " (v.blocks_checked) " block(s) checked, no errors"
            });
        } else {
            let kinds: Vec<String> = v
                .errors_by_kind
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            notes.push(html! {
                span.warn { (v.errors) " validation error(s)" }
                " (" (kinds.join(", ")) ") in " (v.blocks_checked) " block(s) checked"
            });
        }
    }
    if let Some(sum) = s.summary.filter(|x| x.errors > 0) {
        notes.push(html! { span.warn { (sum.errors) " error(s)" } });
    }
    html! {
        @for (i, n) in notes.iter().enumerate() {
            @if i > 0 { "; " }
            (n)
        }
    }
}

/// A quick run's five figures, as the terminal printed them at its end.
fn figures_section(page: &mut Page, figures: &[iorig_result::Figure]) {
    if figures.is_empty() {
        return;
    }
    let rows: Vec<Vec<Markup>> = figures
        .iter()
        .map(|f| {
            let headline = match (f.headline, f.iops, f.bw_bytes_per_s) {
                (iorig_result::Headline::Bandwidth, _, Some(bw)) => {
                    (fmt_mb_s(bw) + " MB/s").render()
                }
                (iorig_result::Headline::Iops, Some(iops), _) => {
                    (fmt_iops(iops) + " IOPS").render()
                }
                _ => dash(),
            };
            let steady = match &f.steady {
                Some(v) if v.reached => html! {
                    "after " (v.rounds) " round(s), "
                    (fmt_duration_s(v.time_needed_s.unwrap_or(0.0)))
                },
                Some(v) => html! {
                    span.warn { "not steady" } " after " (v.rounds) " round(s)"
                },
                None => dash(),
            };
            vec![
                f.what.render(),
                f.step.render(),
                status_markup(f.status.as_str()),
                headline,
                f.iops.map_or_else(dash, |v| fmt_iops(v).render()),
                f.bw_bytes_per_s.map_or_else(dash, |v| fmt_mb_s(v).render()),
                f.lat_mean_ns
                    .map_or_else(dash, |n| fmt_lat_ns(n as f64).render()),
                f.lat_p99_ns
                    .map_or_else(dash, |n| fmt_lat_ns(n as f64).render()),
                steady,
            ]
        })
        .collect();
    page.push(html! {
        section id="figures" {
            h2 { "Five parameters" }
            (table("figures", &FIGURE_TABLE_HEAD, &rows, 3..8))
        }
    });
}

/// The five-figure table's header row.
pub const FIGURE_TABLE_HEAD: [&str; 9] = [
    "figure",
    "step",
    "status",
    "headline",
    "IOPS",
    "MB/s",
    "mean lat",
    "p99 lat",
    "steady state",
];

pub(super) fn steps_section(page: &mut Page, r: &RunReport) {
    page.push(html! {
        section id="steps" {
            h2 { "Steps" }
            @if r.steps.is_empty() {
                p.note { "No steps recorded." }
            } @else {
                (steps_table(&r.steps))
            }
        }
    });
}

/// The step table: a row of figures per step, and under it, across the
/// whole width, its notes when it has any (a column of notes made rows
/// tall and pushed the table past the page).
fn steps_table(steps: &[StepReport]) -> Markup {
    let num = |i: usize| (5..16).contains(&i).then_some("num");
    let head = &STEP_TABLE_HEAD[..STEP_TABLE_HEAD.len() - 1];
    html! {
        div.scroll {
            table.steps.wide.step-table {
                thead {
                    tr { @for (i, h) in head.iter().enumerate() { th class=[num(i)] { (h) } } }
                }
                @for s in steps {
                    @let mut row = step_row(s);
                    @let notes = row.pop().filter(|n| !n.0.is_empty());
                    tbody {
                        tr { @for (i, c) in row.iter().enumerate() { td class=[num(i)] { (c) } } }
                        @if let Some(n) = notes {
                            tr.notes { td {} td colspan=(head.len() - 1) { (n) } }
                        }
                    }
                    "\n"
                }
            }
        }
    }
}

/// A step's row of the step table.
fn step_row(s: &StepReport) -> Vec<Markup> {
    let p = &s.params;
    let mut row = vec![
        s.number().render(),
        s.name.render(),
        s.role.to_string().render(),
        status_markup(s.status.as_str()),
        p.bs.render(),
        fmt_pct(p.read_pct).render(),
        fmt_pct(p.random_pct).render(),
        p.qd.render(),
        p.threads.render(),
        rate_text(p).render(),
    ];
    match s.summary.filter(|_| s.has_results()) {
        Some(sum) => {
            let t = &sum.total;
            row.extend(
                [
                    fmt_iops(t.iops),
                    fmt_mb_s(t.bw_bytes_per_s),
                    fmt_lat_ns(t.lat_ns.mean as f64),
                    fmt_lat_ns(t.lat_ns.p99 as f64),
                    fmt_lat_ns(t.lat_ns.max as f64),
                    format!("{:.0} / {:.0}", sum.cpu_usr_pct, sum.cpu_sys_pct),
                ]
                .map(|v| v.render()),
            );
        }
        None => row.extend((0..6).map(|_| dash())),
    }
    row.push(match &s.findings.steady_state {
        Some(ss) if ss.reached => html! {
            "reached (" (ss.rounds_needed.unwrap_or(ss.rounds)) " rounds)"
        },
        Some(ss) => html! { span.warn { "not reached" } " (" (ss.rounds) " rounds)" },
        None => dash(),
    });
    row.push(step_notes(s));
    row
}

/// The step table's header row (kept public for the CLI and tests).
pub const STEP_TABLE_HEAD: [&str; 18] = [
    "#",
    "step",
    "role",
    "status",
    headline::BS.head,
    headline::READ.head,
    headline::RANDOM.head,
    headline::QD.head,
    headline::THREADS.head,
    headline::RATE.head,
    "IOPS",
    "MB/s",
    "mean lat",
    "p99 lat",
    "max lat",
    "CPU usr / sys %",
    "steady state",
    "notes",
];

pub(super) fn curve_line(label: String, c: &CurveReport) -> CurveLine {
    let a = c.analysis.as_ref();
    CurveLine {
        label,
        points: c.points.clone(),
        best_under_mean: a.and_then(|a| a.best_under_mean),
        best_under_p99: a.and_then(|a| a.best_under_p99),
        knee: a.and_then(|a| a.knee.as_ref()).map(|k| (k.iops, k.lat_ns)),
    }
}

/// The parameters a curve was measured with, from its first step.
pub(super) fn curve_params(r: &RunReport, c: &CurveReport) -> Option<String> {
    let first = c.step_indexes.first()?;
    let s = r.steps.iter().find(|s| s.index == *first)?;
    // The rate differs from step to step of a curve.
    Some(fixed_text(&s.params, &["rate"]))
}

/// One curve: what it found, its chart and its points.
pub(super) fn curve_section(page: &mut Page, r: &RunReport, c: &CurveReport) -> Markup {
    let n = c.group + 1;
    let title = match curve_params(r, c) {
        // The parameters say what the name would.
        Some(p) => format!("IOPS–latency curve {n}: {p}"),
        None => format!("IOPS–latency curve {}", curve_title(c)),
    };
    let chart = page.chart(
        &format!("curve-{n}"),
        &title,
        charts::curve_chart(
            &title,
            c.threshold_ms,
            &[curve_line(format!("curve {}", curve_title(c)), c)],
        ),
    );
    let rows: Vec<Vec<Markup>> = c
        .points
        .iter()
        .zip(
            c.step_indexes
                .iter()
                .map(Some)
                .chain(std::iter::repeat(None)),
        )
        .map(|(p, idx)| {
            let role = idx
                .and_then(|i| r.steps.iter().find(|s| s.index == *i))
                .map(|s| s.role.to_string())
                .unwrap_or_default();
            vec![
                idx.map(i64::to_string).unwrap_or_default().render(),
                role.render(),
                fmt_iops(p.iops).render(),
                fmt_lat_ns(p.mean_lat_ns).render(),
                fmt_lat_ns(p.p99_lat_ns).render(),
            ]
        })
        .collect();
    html! {
        h3 { "Curve " (n) }
        p { (curve_sentence(c)) }
        (chart)
        (table("curve", &["step", "load", "IOPS", "mean lat", "p99 lat"], &rows, 2..5))
    }
}

pub(super) fn time_series_of(s: &StepReport) -> TimeSeries {
    let iv = &s.intervals;
    let pts = |f: &dyn Fn(&crate::model::IntervalPoint) -> f64| -> Vec<(f64, f64)> {
        iv.iter().map(|i| (i.t_s, f(i))).collect()
    };
    let measured_start = s.measured_start_s();
    TimeSeries {
        iops: pts(&|i| i.total.iops),
        bw_bytes_per_s: pts(&|i| i.total.bw_bytes_per_s),
        mean_lat_ns: pts(&|i| i.total.lat_ns.mean as f64),
        p99_lat_ns: pts(&|i| i.total.lat_ns.p99 as f64),
        cpu_usr_pct: pts(&|i| i.cpu_usr_pct),
        cpu_sys_pct: pts(&|i| i.cpu_sys_pct),
        dev_util_pct: iv
            .iter()
            .filter_map(|i| i.dev_util_pct.map(|u| (i.t_s, u)))
            .collect(),
        warmup_end_s: (measured_start > 0.0).then_some(measured_start),
        steady_window_s: s.findings.steady_state.as_ref().and_then(|ss| ss.window_s),
        cliff_onset_s: s
            .findings
            .write_cliff
            .as_ref()
            .and_then(|c| c.as_ref().map(|c| c.onset_t_s)),
        outages_s: s
            .findings
            .outages
            .as_ref()
            .map(|o| o.spans_s.clone())
            .unwrap_or_default(),
    }
}

/// A multi-host step's breakdown: every host's status, clock and figures,
/// and its IOPS and p99 latency over time beside the others'.
fn hosts_detail(page: &mut Page, s: &StepReport, stem: &str) -> Markup {
    let rows: Vec<Vec<Markup>> = s
        .hosts
        .iter()
        .map(|h| {
            let r = &h.result;
            let t = &r.summary.total;
            let status = match r.status {
                iorig_result::HostStatus::Ok => "ok".to_owned(),
                iorig_result::HostStatus::Lost => format!(
                    "lost at interval {}{}",
                    r.lost_at_interval.map_or(0, |i| i + 1),
                    r.lost_reason
                        .as_deref()
                        .map(|w| format!(" ({w})"))
                        .unwrap_or_default()
                ),
            };
            let skew = r.start_skew_ns.map_or("-".to_owned(), |k| {
                format!(
                    "{:.3}{}",
                    k as f64 / 1e6,
                    if r.start_skew_flagged {
                        " (over the limit)"
                    } else {
                        ""
                    }
                )
            });
            text_row(&[
                r.name.clone(),
                status,
                fmt_iops(t.iops),
                fmt_mb_s(t.bw_bytes_per_s),
                fmt_lat_ns(t.lat_ns.mean as f64),
                fmt_lat_ns(t.lat_ns.p99 as f64),
                format!("{:+.3}", r.clock_offset_ns as f64 / 1e6),
                skew,
            ])
        })
        .collect();
    let table = table(
        "hosts",
        &[
            "host",
            "status",
            "IOPS",
            "MB/s",
            "mean",
            "p99",
            "clock offset ms",
            "start skew ms",
        ],
        &rows,
        2..8,
    );
    if s.hosts.iter().all(|h| h.intervals.is_empty()) {
        return table;
    }
    let lines = |f: fn(&crate::model::IntervalPoint) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
        s.hosts
            .iter()
            .map(|h| {
                (
                    h.result.name.clone(),
                    h.intervals.iter().map(|i| (i.t_s, f(i))).collect(),
                )
            })
            .collect()
    };
    let title = format!("Step {} per host over time: {}", s.number(), s.name);
    let panels = [
        charts::SeriesPanel {
            y_desc: "IOPS".into(),
            lines: lines(|i| i.total.iops),
            count_axis: true,
        },
        charts::SeriesPanel {
            y_desc: "p99 latency (ms)".into(),
            lines: lines(|i| i.total.lat_ns.p99 as f64 / 1e6),
            count_axis: false,
        },
    ];
    let chart = page.chart(
        &format!("{stem}-hosts"),
        &title,
        charts::panels_chart(&title, &panels),
    );
    html! { (table) (chart) }
}

/// Storage-side series drawn per step (the rest are in the exports).
const MAX_EXTERNAL_PANELS: usize = 6;

/// A step in detail: its figures by kind of operation, then its charts
/// (over time, per host, per operation, storage side, percentiles).
pub(super) fn step_detail(page: &mut Page, s: &StepReport) -> Markup {
    let mut parts = vec![html! {
        h3 id={ "step-" (s.number()) } { "Step " (s.number()) ": " (s.name) }
        p.sub {
            (s.role.to_string()) " · " (status_markup(s.status.as_str()))
            " · " (params_text(&s.params))
        }
    }];
    if let Some(sum) = &s.summary {
        parts.push(ops_table(s, sum));
    }
    let stem = format!("step-{:04}", s.number());
    if !s.intervals.is_empty() {
        let title = format!("Step {} over time: {}", s.number(), s.name);
        parts.push(page.chart(
            &format!("{stem}-timeseries"),
            &title,
            charts::time_series_chart(&title, &time_series_of(s)),
        ));
    }
    if !s.hosts.is_empty() {
        parts.push(hosts_detail(page, s, &stem));
    }
    if s.fs_ops.iter().any(|k| k.intervals.len() > 1) {
        parts.push(operations_chart(page, s, &stem));
    }
    if !s.external.is_empty() {
        parts.push(external_chart(page, s, &stem));
    }
    for f in &s.findings.external_failures {
        parts.push(html! {
            p.warn {
                "--collect " (f.source) ": no figures for " (f.intervals)
                " interval(s); first: " (f.first)
            }
        });
    }
    if !s.percentiles.is_empty() {
        let title = format!("Step {} latency percentiles: {}", s.number(), s.name);
        let lines: Vec<PercentileLine> = s
            .percentiles
            .iter()
            .map(|p| PercentileLine {
                label: p.label.clone(),
                points: p.points.clone(),
            })
            .collect();
        parts.push(page.chart(
            &format!("{stem}-percentiles"),
            &title,
            charts::percentile_chart(&title, &lines),
        ));
    }
    html! { @for p in &parts { (p) } }
}

/// A step's figures by kind of operation, and in total.
fn ops_table(s: &StepReport, sum: &crate::model::StepSummary) -> Markup {
    // A tree's step lists every kind of operation it counted.
    let kinds: Vec<(&str, &crate::model::OpFigures)> = if s.fs_ops.is_empty() {
        vec![("read", &sum.read), ("write", &sum.write)]
    } else {
        s.fs_ops
            .iter()
            .map(|k| (k.op.as_str(), &k.summary))
            .collect()
    };
    let rows: Vec<Vec<Markup>> = kinds
        .into_iter()
        .chain([("total", &sum.total)])
        .filter(|(name, o)| o.ops > 0 || *name == "total")
        .map(|(name, o)| {
            let l = &o.lat_ns;
            let mut row = vec![name.render()];
            row.extend(
                [
                    fmt_iops(o.iops),
                    fmt_mb_s(o.bw_bytes_per_s),
                    fmt_lat_ns(l.min as f64),
                    fmt_lat_ns(l.mean as f64),
                    fmt_lat_ns(l.p50 as f64),
                    fmt_lat_ns(l.p99 as f64),
                    fmt_lat_ns(l.p99_9 as f64),
                    fmt_lat_ns(l.max as f64),
                ]
                .map(|v| v.render()),
            );
            row
        })
        .collect();
    table(
        "ops",
        &[
            "op", "IOPS", "MB/s", "min", "mean", "p50", "p99", "p99.9", "max",
        ],
        &rows,
        1..9,
    )
}

/// A file-system step's operations over time, a line per kind.
fn operations_chart(page: &mut Page, s: &StepReport, stem: &str) -> Markup {
    let title = format!("Step {} operations over time: {}", s.number(), s.name);
    let lines = |f: fn(&crate::model::OpFigures) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
        s.fs_ops
            .iter()
            .map(|k| {
                (
                    k.op.as_str().to_owned(),
                    k.intervals.iter().map(|(t, o)| (*t, f(o))).collect(),
                )
            })
            .collect()
    };
    let panels = [
        charts::SeriesPanel {
            y_desc: "operations/s".into(),
            lines: lines(|o| o.iops),
            count_axis: true,
        },
        charts::SeriesPanel {
            y_desc: "mean latency (ms)".into(),
            lines: lines(|o| o.lat_ns.mean as f64 / 1e6),
            count_axis: false,
        },
    ];
    page.chart(
        &format!("{stem}-operations"),
        &title,
        charts::panels_chart(&title, &panels),
    )
}

/// Beside IOPS and latency on the same time axis: the storage's own
/// figures, one panel a series (the first few).
fn external_chart(page: &mut Page, s: &StepReport, stem: &str) -> Markup {
    let title = format!("Step {} storage side: {}", s.number(), s.name);
    let mut panels = vec![charts::SeriesPanel {
        y_desc: "IOPS (iorig)".into(),
        lines: vec![(
            "IOPS".into(),
            s.intervals.iter().map(|p| (p.t_s, p.total.iops)).collect(),
        )],
        count_axis: true,
    }];
    panels.extend(
        s.external
            .iter()
            .take(MAX_EXTERNAL_PANELS)
            .map(|e| charts::SeriesPanel {
                y_desc: e.name.clone(),
                lines: vec![(e.name.clone(), e.points.clone())],
                count_axis: true,
            }),
    );
    let chart = page.chart(
        &format!("{stem}-external"),
        &title,
        charts::panels_chart(&title, &panels),
    );
    let more = s.external.len().saturating_sub(MAX_EXTERNAL_PANELS);
    html! {
        (chart)
        @if more > 0 {
            p.note {
                (more) " more storage-side series are in the store (table external_series); \
                         the first " (MAX_EXTERNAL_PANELS) " are drawn."
            }
        }
    }
}
