//! The HTML report of a profile (`iorig profile`) and the comparison of
//! profiles: the run, the rule verdicts, the figure statistics per scope
//! and the figures over time; compared, each figure's statistics side by
//! side with the change against the first profile.

use super::*;
use crate::model::ProfileReport;
use iorig_profile::figures::Figure;
use iorig_profile::rules::Level;
use iorig_result::FigureStat;

fn level_span(level: Option<Level>) -> String {
    match level {
        Some(Level::Red) => "<span class=\"warn\">red</span>".to_owned(),
        Some(Level::Yellow) => "<span class=\"yellow\">yellow</span>".to_owned(),
        Some(Level::Green) => "<span class=\"status-ok\">green</span>".to_owned(),
        None => "<span class=\"muted\">no data</span>".to_owned(),
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
    let _ = writeln!(
        page.body,
        "<header><h1>{}</h1><p class=\"sub\">profile · {} · {} · started {}</p></header>",
        esc(&title),
        status_span(run.status.as_str()),
        esc(&run.host),
        esc(&run.started)
    );
    page.push("<nav><a href=\"#run\">Run</a><a href=\"#verdicts\">Verdicts</a><a href=\"#figures\">Figures</a><a href=\"#over-time\">Over time</a></nav>\n");

    page.push("<section id=\"run\"><h2>Run</h2>\n");
    let s = &p.summary;
    let devices: Vec<&str> = s.devices.keys().map(String::as_str).collect();
    let labels: Vec<String> = run.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    page.push(&facts_table(&[
        ("run", run.id.to_string()),
        ("status", status_span(run.status.as_str())),
        ("host", esc(&run.host)),
        ("started", esc(&run.started)),
        ("ended", opt_text(run.ended.as_deref())),
        ("source", opt_text(s.source.as_deref())),
        (
            "interval",
            s.interval_s.map_or_else(|| "–".to_owned(), fmt_duration_s),
        ),
        ("observed", fmt_duration_s(s.duration_s)),
        ("intervals", s.intervals.to_string()),
        ("devices", esc(&devices.join(", "))),
        ("labels", esc(&labels.join(", "))),
        (
            "command",
            format!("<code>{}</code>", esc(&p.run.command_line)),
        ),
    ]));
    page.push("</section>\n");

    page.push("<section id=\"verdicts\"><h2>Verdicts</h2>\n");
    if p.evaluations.is_empty() {
        page.push("<p class=\"note\">No rule set judged this profile.</p>\n");
    }
    for e in &p.evaluations {
        let _ = writeln!(
            page.body,
            "<h3>{} — overall {}</h3>",
            esc(&e.rule_set),
            level_span(e.overall)
        );
        let rows: Vec<Vec<String>> = e
            .verdicts
            .iter()
            .map(|v| {
                vec![
                    esc(&v.rule),
                    level_span(v.level),
                    esc(&v.shown),
                    esc(&v.says),
                ]
            })
            .collect();
        page.push(&table(
            "verdicts",
            &["rule", "level", "measured", "says"],
            &rows,
            0..0,
        ));
    }
    page.push("</section>\n");

    page.push("<section id=\"figures\"><h2>Figures: mean, p95 and peak over the intervals</h2>\n");
    for (scope, stats) in p.scopes() {
        let _ = writeln!(page.body, "<h3>{}</h3>", esc(scope));
        let rows: Vec<Vec<String>> = Figure::ALL
            .iter()
            .map(|f| {
                let st = stats.get(f.name()).copied().unwrap_or_default();
                vec![esc(f.name()), num(st.mean), num(st.p95), num(st.peak)]
            })
            .collect();
        page.push(&table(
            "figures",
            &["figure", "mean", "p95", "peak"],
            &rows,
            1..4,
        ));
    }
    page.push("</section>\n");

    page.push("<section id=\"over-time\"><h2>Over time</h2>\n");
    if p.intervals.is_empty() {
        page.push("<p class=\"note\">No intervals stored.</p>\n");
    }
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
        page.chart(
            &format!("profile-{}", i + 1),
            &title,
            charts::panels_chart(&title, &panels),
        );
    }
    page.push("</section>\n");
    page.finish(&title)
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

/// Profiles compared: the terminal table's lines and the HTML page.
pub fn render_profile_compare(runs: &[ProfileReport]) -> (Rendered, Vec<String>) {
    let ids: Vec<String> = runs.iter().map(|r| r.id().to_string()).collect();
    let rows = compared_rows(runs);
    let cell = |row: &ComparedRow, i: usize| -> String {
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
    };

    // The terminal table.
    let mut head = vec!["figure (total)".to_owned(), "stat".to_owned()];
    head.extend(ids.iter().map(|i| format!("profile {i}")));
    let mut grid: Vec<Vec<String>> = vec![head];
    for row in &rows {
        let mut line = vec![row.figure.to_owned(), row.stat.to_owned()];
        line.extend((0..runs.len()).map(|i| cell(row, i)));
        grid.push(line);
    }
    let widths: Vec<usize> = (0..grid[0].len())
        .map(|c| grid.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let lines: Vec<String> = std::iter::once(format!("changes against profile {}:", ids[0]))
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
        .collect();

    // The page.
    let mut page = Page::new();
    let title = format!("iorig comparison: profiles {}", ids.join(", "));
    let _ = writeln!(
        page.body,
        "<header><h1>{}</h1><p class=\"sub\">Changes are against profile {}.</p></header>",
        esc(&title),
        esc(&ids[0])
    );
    page.push("<section id=\"runs\"><h2>Profiles</h2>\n");
    let run_rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| {
            let run = &r.run.run;
            vec![
                run.id.to_string(),
                status_span(run.status.as_str()),
                esc(&run.host),
                esc(&run.started),
                fmt_duration_s(r.summary.duration_s),
                esc(&r
                    .summary
                    .devices
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")),
                r.evaluations
                    .iter()
                    .map(|e| format!("{}: {}", esc(&e.rule_set), level_span(e.overall)))
                    .collect::<Vec<_>>()
                    .join("<br>"),
            ]
        })
        .collect();
    page.push(&table(
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
        &run_rows,
        0..0,
    ));
    page.push(
        "</section>\n<section id=\"compared\"><h2>Figures compared (all covered devices)</h2>\n",
    );
    let html_rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| {
            let mut r = vec![esc(row.figure), esc(row.stat)];
            r.extend((0..runs.len()).map(|i| esc(&cell(row, i))));
            r
        })
        .collect();
    let mut head: Vec<String> = vec!["figure".into(), "stat".into()];
    head.extend(ids.iter().map(|i| format!("profile {i}")));
    let head_refs: Vec<&str> = head.iter().map(String::as_str).collect();
    page.push(&table(
        "compared wide",
        &head_refs,
        &html_rows,
        2..2 + runs.len(),
    ));
    page.push("</section>\n<section id=\"compare-charts\"><h2>Total IOPS over time</h2>\n");
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
    page.chart(
        "compare-profile-iops",
        chart_title,
        charts::panels_chart(chart_title, &[panel]),
    );
    page.push("</section>\n");
    (page.finish(&title), lines)
}
