//! The HTML report of a profile (`iorig profile`) and the comparison of
//! profiles: the run, the rule verdicts, the figure statistics per scope
//! and the figures over time; compared, each figure's statistics side by
//! side with the change against the first profile.

use super::*;
use crate::model::ProfileReport;
use iorig_profile::figures::Figure;
use iorig_profile::rules::Level;
use iorig_result::FigureStat;

fn level_span(level: Option<Level>) -> Markup {
    match level {
        Some(Level::Red) => html! { span.warn { "red" } },
        Some(Level::Yellow) => html! { span.yellow { "yellow" } },
        Some(Level::Green) => html! { span.status-ok { "green" } },
        None => html! { span.muted { "no data" } },
    }
}

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), charts::sig3)
}

/// The series of one figure over time in one scope.
fn series(p: &ProfileReport, scope: &str, figure: Figure) -> Vec<(f64, f64)> {
    p.intervals
        .iter()
        .filter_map(|i| {
            let figs = if scope == "total" {
                Some(&i.total)
            } else {
                i.devices.get(scope)
            }?;
            figs.get(figure.name())
                .copied()
                .flatten()
                .map(|v| (i.t_s, v))
        })
        .collect()
}

fn panel(
    p: &ProfileReport,
    scope: &str,
    y: &str,
    figs: &[(&str, Figure)],
    scale: f64,
) -> SeriesPanel {
    SeriesPanel {
        y_desc: y.to_owned(),
        lines: figs
            .iter()
            .map(|(name, f)| {
                let pts = series(p, scope, *f)
                    .into_iter()
                    .map(|(t, v)| (t, v / scale))
                    .collect();
                ((*name).to_owned(), pts)
            })
            .collect(),
        count_axis: scale == 1.0 && y == "IOPS",
    }
}

/// The report of one profile.
pub fn render_profile_report(p: &ProfileReport) -> Rendered {
    let mut page = Page::new();
    let run = &p.run.run;
    let title = format!("iorig report: profile {}", run.id);
    page.push(html! {
        header {
            h1 { (title) }
            p.sub {
                "profile · " (status_markup(run.status.as_str())) " · " (run.host)
                " · started " (run.started)
            }
        }
        nav {
            a href="#run" { "Run" }
            a href="#verdicts" { "Verdicts" }
            a href="#figures" { "Figures" }
            a href="#over-time" { "Over time" }
        }
    });
    profile_run_section(&mut page, p);
    verdicts_section(&mut page, p);
    page.push(html! {
        section id="figures" {
            h2 { "Figures: mean, p95 and peak over the intervals" }
            @for (scope, stats) in p.scopes() {
                h3 { (scope) }
                (figures_table(stats))
            }
        }
    });
    over_time_section(&mut page, p);
    page.finish(&title)
}

fn profile_run_section(page: &mut Page, p: &ProfileReport) {
    let run = &p.run.run;
    let s = &p.summary;
    let devices: Vec<&str> = s.devices.keys().map(String::as_str).collect();
    let labels: Vec<String> = run.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    page.push(html! {
        section id="run" {
            h2 { "Run" }
            (facts_table(&[
                ("run", run.id.0.render()),
                ("status", status_markup(run.status.as_str())),
                ("host", run.host.render()),
                ("started", run.started.render()),
                ("ended", opt_text(run.ended.as_deref())),
                ("source", opt_text(s.source.as_deref())),
                (
                    "interval",
                    s.interval_s.map_or_else(dash, |v| fmt_duration_s(v).render()),
                ),
                ("observed", fmt_duration_s(s.duration_s).render()),
                ("intervals", s.intervals.render()),
                ("devices", devices.join(", ").render()),
                ("labels", labels.join(", ").render()),
                ("command", html! { code { (p.run.command_line) } }),
            ]))
        }
    });
}

fn verdicts_section(page: &mut Page, p: &ProfileReport) {
    let tables: Vec<Markup> = p
        .evaluations
        .iter()
        .map(|e| {
            let rows: Vec<Vec<Markup>> = e
                .verdicts
                .iter()
                .map(|v| {
                    vec![
                        v.rule.render(),
                        level_span(v.level),
                        v.shown.render(),
                        v.says.render(),
                    ]
                })
                .collect();
            html! {
                h3 { (e.rule_set) " — overall " (level_span(e.overall)) }
                (table("verdicts", &["rule", "level", "measured", "says"], &rows, 0..0))
            }
        })
        .collect();
    page.push(html! {
        section id="verdicts" {
            h2 { "Verdicts" }
            @if tables.is_empty() {
                p.note { "No rule set judged this profile." }
            }
            @for t in &tables { (t) }
        }
    });
}

/// A scope's figures: mean, p95 and peak of each.
fn figures_table(stats: &BTreeMap<String, FigureStat>) -> Markup {
    let rows: Vec<Vec<Markup>> = Figure::ALL
        .iter()
        .map(|f| {
            let st = stats.get(f.name()).copied().unwrap_or_default();
            text_row(&[f.name().to_owned(), num(st.mean), num(st.p95), num(st.peak)])
        })
        .collect();
    table("figures", &["figure", "mean", "p95", "peak"], &rows, 1..4)
}

fn over_time_section(page: &mut Page, p: &ProfileReport) {
    let mut figures: Vec<Markup> = Vec::new();
    for (i, (scope, _)) in p.scopes().into_iter().enumerate() {
        if p.intervals.is_empty() {
            break;
        }
        let panels = [
            panel(
                p,
                scope,
                "IOPS",
                &[("read", Figure::ReadIops), ("write", Figure::WriteIops)],
                1.0,
            ),
            panel(
                p,
                scope,
                "MB/s",
                &[
                    ("read", Figure::ReadBwBytesPerS),
                    ("write", Figure::WriteBwBytesPerS),
                ],
                1e6,
            ),
            panel(
                p,
                scope,
                "await (ms)",
                &[
                    ("read", Figure::ReadAwaitMs),
                    ("write", Figure::WriteAwaitMs),
                ],
                1.0,
            ),
            panel(
                p,
                scope,
                "busy (%) / queue depth",
                &[
                    ("util %", Figure::UtilPct),
                    ("queue depth", Figure::QueueDepth),
                ],
                1.0,
            ),
        ];
        let title = format!("{scope}: IOPS, MB/s, await and utilisation over time");
        figures.push(page.chart(
            &format!("profile-{}", i + 1),
            &title,
            charts::panels_chart(&title, &panels),
        ));
    }
    page.push(html! {
        section id="over-time" {
            h2 { "Over time" }
            @if p.intervals.is_empty() {
                p.note { "No intervals stored." }
            }
            @for f in &figures { (f) }
        }
    });
}

/// Figures compared between profiles: their `total` statistics.
const COMPARED: [Figure; 9] = [
    Figure::ReadIops,
    Figure::WriteIops,
    Figure::TotalIops,
    Figure::ReadBwBytesPerS,
    Figure::WriteBwBytesPerS,
    Figure::ReadAwaitMs,
    Figure::WriteAwaitMs,
    Figure::QueueDepth,
    Figure::UtilPct,
];

/// One compared row: figure, statistic, and each profile's value.
struct ComparedRow {
    figure: &'static str,
    stat: &'static str,
    values: Vec<Option<f64>>,
}

fn compared_rows(runs: &[ProfileReport]) -> Vec<ComparedRow> {
    let mut rows = Vec::new();
    for f in COMPARED {
        for (stat, pick) in [
            (
                "mean",
                (|s: &FigureStat| s.mean) as fn(&FigureStat) -> Option<f64>,
            ),
            ("p95", |s: &FigureStat| s.p95),
            ("peak", |s: &FigureStat| s.peak),
        ] {
            rows.push(ComparedRow {
                figure: f.name(),
                stat,
                values: runs
                    .iter()
                    .map(|r| r.summary.total.get(f.name()).and_then(pick))
                    .collect(),
            });
        }
    }
    rows
}

/// A compared row's value for profile `i`, with its change against the
/// first profile's.
fn compared_cell(row: &ComparedRow, i: usize) -> String {
    let v = num(row.values[i]);
    if i == 0 {
        return v;
    }
    match row.values[0]
        .zip(row.values[i])
        .and_then(|(b, x)| pct_change(b, x))
    {
        Some(c) => format!("{v} ({})", fmt_change(Some(c))),
        None => v,
    }
}

/// The terminal table of the compared profiles, then each one's overall
/// verdicts.
fn compared_lines(runs: &[ProfileReport], ids: &[String], rows: &[ComparedRow]) -> Vec<String> {
    let mut head = vec!["figure (total)".to_owned(), "stat".to_owned()];
    head.extend(ids.iter().map(|i| format!("profile {i}")));
    let mut grid: Vec<Vec<String>> = vec![head];
    for row in rows {
        let mut line = vec![row.figure.to_owned(), row.stat.to_owned()];
        line.extend((0..runs.len()).map(|i| compared_cell(row, i)));
        grid.push(line);
    }
    let widths: Vec<usize> = (0..grid[0].len())
        .map(|c| grid.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    std::iter::once(format!("changes against profile {}:", ids[0]))
        .chain(grid.iter().map(|r| {
            r.iter()
                .zip(&widths)
                .enumerate()
                .map(|(c, (s, w))| {
                    if c < 2 {
                        format!("{s:<w$}")
                    } else {
                        format!("{s:>w$}")
                    }
                })
                .collect::<Vec<_>>()
                .join("  ")
                .trim_end()
                .to_owned()
        }))
        .chain(runs.iter().map(|r| {
            let verdicts: Vec<String> = r
                .evaluations
                .iter()
                .map(|e| {
                    format!(
                        "{} {}",
                        e.rule_set,
                        e.overall.map_or("no data", |l| l.name())
                    )
                })
                .collect();
            format!("profile {} overall: {}", r.id(), verdicts.join(", "))
        }))
        .collect()
}

/// Profiles compared: the terminal table's lines and the HTML page.
pub fn render_profile_compare(runs: &[ProfileReport]) -> (Rendered, Vec<String>) {
    let ids: Vec<String> = runs.iter().map(|r| r.id().to_string()).collect();
    let rows = compared_rows(runs);
    let lines = compared_lines(runs, &ids, &rows);

    // The page.
    let mut page = Page::new();
    let title = format!("iorig comparison: profiles {}", ids.join(", "));
    page.push(html! {
        header {
            h1 { (title) }
            p.sub { "Changes are against profile " (ids[0]) "." }
        }
        section id="runs" { h2 { "Profiles" } (profiles_table(runs)) }
    });
    let html_rows: Vec<Vec<Markup>> = rows
        .iter()
        .map(|row| {
            let mut r = vec![row.figure.render(), row.stat.render()];
            r.extend((0..runs.len()).map(|i| compared_cell(row, i).render()));
            r
        })
        .collect();
    let mut head: Vec<String> = vec!["figure".into(), "stat".into()];
    head.extend(ids.iter().map(|i| format!("profile {i}")));
    let head_refs: Vec<&str> = head.iter().map(String::as_str).collect();
    page.push(html! {
        section id="compared" {
            h2 { "Figures compared (all covered devices)" }
            (table("compared wide", &head_refs, &html_rows, 2..2 + runs.len()))
        }
    });
    let panel = SeriesPanel {
        y_desc: "IOPS".into(),
        lines: runs
            .iter()
            .map(|r| {
                (
                    format!("profile {}", r.id()),
                    series(r, "total", Figure::TotalIops),
                )
            })
            .collect(),
        count_axis: true,
    };
    let chart_title = "Total IOPS over time, by profile";
    let chart = page.chart(
        "compare-profile-iops",
        chart_title,
        charts::panels_chart(chart_title, &[panel]),
    );
    page.push(html! {
        section id="compare-charts" { h2 { "Total IOPS over time" } (chart) }
    });
    (page.finish(&title), lines)
}

/// The compared profiles, a row each.
fn profiles_table(runs: &[ProfileReport]) -> Markup {
    let rows: Vec<Vec<Markup>> = runs
        .iter()
        .map(|r| {
            let run = &r.run.run;
            let devices: Vec<&str> = r.summary.devices.keys().map(String::as_str).collect();
            vec![
                run.id.0.render(),
                status_markup(run.status.as_str()),
                run.host.render(),
                run.started.render(),
                fmt_duration_s(r.summary.duration_s).render(),
                devices.join(", ").render(),
                html! {
                    @for (i, e) in r.evaluations.iter().enumerate() {
                        @if i > 0 { br; }
                        (e.rule_set) ": " (level_span(e.overall))
                    }
                },
            ]
        })
        .collect();
    table(
        "runs",
        &[
            "profile",
            "status",
            "host",
            "started",
            "observed",
            "devices",
            "overall verdicts",
        ],
        &rows,
        0..0,
    )
}
