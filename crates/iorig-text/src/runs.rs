//! `iorig runs list` and `iorig runs show`: the stored runs as text.

use iorig_result::{Finding, ProfileSummary, StepSummary};
use iorig_spec::headline;
use iorig_store::{AnalysisRow, RunDetail, RunKind, RunRow, StepRow, TargetFactsRow};
use std::collections::BTreeMap;

/// Labels as `key=value,...`.
pub fn labels_text(labels: &BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// A stored run as `runs list` shows it.
pub struct ListedRun {
    pub run: RunRow,
    pub steps: Vec<StepRow>,
    pub targets: Vec<TargetFactsRow>,
}

/// The figure a run is known by: IOPS for small blocks, MB/s for large ones
/// (128 KiB and up), of its one measured step, or the best of a plan's.
pub fn headline(steps: &[StepRow]) -> String {
    let measured: Vec<(&StepRow, &iorig_result::Summary)> = steps
        .iter()
        .filter_map(|s| Some((s, s.summary.as_ref()?.io()?)))
        .filter(|(_, sum)| sum.total.ops > 0)
        .collect();
    let large = |s: &StepRow| {
        s.params
            .as_ref()
            .and_then(|p| p.single_bs_bytes())
            .is_some_and(|b| b >= 128 << 10)
    };
    let iops = |v: f64| {
        if v >= 1e6 {
            format!("{:.2}M IOPS", v / 1e6)
        } else if v >= 1e4 {
            format!("{:.1}k IOPS", v / 1e3)
        } else {
            format!("{v:.0} IOPS")
        }
    };
    match measured.as_slice() {
        [] => "-".to_owned(),
        [(s, sum)] if large(s) => {
            let mb = sum.total.bw_bytes_per_s / 1e6;
            if mb >= 1e4 {
                format!("{:.1} GB/s", mb / 1e3)
            } else {
                format!("{mb:.1} MB/s")
            }
        }
        [(_, sum)] => iops(sum.total.iops),
        many => {
            let best = many
                .iter()
                .map(|(_, sum)| sum.total.iops)
                .fold(0.0, f64::max);
            format!("max {}", iops(best))
        }
    }
}

/// The first target and how many more.
pub fn targets_text(targets: &[TargetFactsRow]) -> String {
    match targets {
        [] => "-".to_owned(),
        [one] => one.path.clone(),
        [first, rest @ ..] => format!("{} +{}", first.path, rest.len()),
    }
}

/// One line per run: id, kind, status, start, steps, target, the headline
/// figure and the labels.
pub fn list_lines(runs: &[ListedRun]) -> Vec<String> {
    let mut out = vec![format!(
        "{:>5}  {:<7} {:<11} {:<20} {:>5}  {:<28} {:>16}  labels",
        "id", "kind", "status", "started", "steps", "target", "result"
    )];
    for l in runs {
        let r = &l.run;
        out.push(format!(
            "{:>5}  {:<7} {:<11} {:<20} {:>5}  {:<28} {:>16}  {}",
            r.id.0,
            r.kind.as_str(),
            r.status.as_str(),
            r.started,
            l.steps.len(),
            targets_text(&l.targets),
            headline(&l.steps),
            labels_text(&r.labels)
        ));
    }
    out
}

/// A stored profile: its summary and the rule sets' verdicts.
pub fn profile_lines(summary: Option<&ProfileSummary>, analysis: &[&AnalysisRow]) -> Vec<String> {
    let Some(summary) = summary else {
        return vec!["profile: no summary stored (it ended before its first interval)".into()];
    };
    let mut out = crate::profile::stored_lines(summary);
    for a in analysis {
        if let Finding::Rules(evals) = &a.finding {
            out.extend(crate::profile::verdict_lines(evals));
        }
    }
    out
}

/// A run: its header, targets, one line per step, and what its findings
/// and validation say.
pub fn show_lines(
    run: &RunDetail,
    targets: &[TargetFactsRow],
    steps: &[StepRow],
    analysis: &[AnalysisRow],
) -> Vec<String> {
    let mut out = Vec::new();
    out.push(format!(
        "run {} ({}, {}): started {}{}, host {}, iorig {}",
        run.run.id,
        run.run.kind,
        run.run.status,
        run.run.started,
        run.run
            .ended
            .as_deref()
            .map(|e| format!(", ended {e}"))
            .unwrap_or_default(),
        run.run.host,
        run.run.tool_version
    ));
    if !run.run.labels.is_empty() {
        out.push(format!("labels: {}", labels_text(&run.run.labels)));
    }
    if run.run.kind == RunKind::Profile {
        for st in steps {
            let mine: Vec<&AnalysisRow> = analysis
                .iter()
                .filter(|a| a.step_id == Some(st.id))
                .collect();
            let summary = match &st.summary {
                Some(StepSummary::Profile(p)) => Some(p),
                _ => None,
            };
            out.extend(profile_lines(summary, &mine));
        }
        return out;
    }
    for t in targets {
        out.push(format!(
            "target: {} ({}, {} bytes)",
            t.path,
            t.kind.as_deref().unwrap_or_default(),
            t.size_bytes.unwrap_or(0)
        ));
    }
    out.push(format!(
        "{:>5}  {:<36} {:<12} {:>6} {:>5} {:>6} {:>4} {:>4} {:>10} {:>9} {:>9} {:>9}",
        "step",
        "name",
        "status",
        headline::BS.narrow,
        headline::READ.narrow,
        headline::RANDOM.narrow,
        headline::QD.narrow,
        headline::THREADS.narrow,
        "IOPS",
        "MB/s",
        "mean ms",
        "p99 ms"
    ));
    for st in steps {
        let p = st.params.as_ref();
        let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or("-".into());
        let [iops, mbs, mean, p99] =
            crate::table::summary_cells(st.summary.as_ref().and_then(|s| s.io()));
        out.push(format!(
            "{:>5}  {:<36} {:<12} {:>6} {:>5} {:>6} {:>4} {:>4} {:>10} {:>9} {:>9} {:>9}",
            st.index + 1,
            st.name,
            st.status.as_str(),
            p.map_or_else(|| "-".to_owned(), |p| p.bs_label()),
            num(p.map(|p| p.read_pct)),
            num(p.map(|p| p.random_pct)),
            num(p.map(|p| f64::from(p.qd))),
            num(p.map(|p| f64::from(p.threads))),
            iops,
            mbs,
            mean,
            p99
        ));
    }
    for a in analysis {
        let Finding::GeneratorBound(g) = &a.finding else {
            continue;
        };
        if g.generator_bound {
            let step = steps
                .iter()
                .find(|s| Some(s.id) == a.step_id)
                .map(|s| s.index + 1)
                .unwrap_or(0);
            out.push(format!(
                "step {step}: {}",
                g.message.as_deref().unwrap_or("generator-bound")
            ));
        }
    }
    for st in steps {
        if let Some(l) = st
            .summary
            .as_ref()
            .and_then(|s| s.io())
            .and_then(|s| s.issue_lag_ns.as_ref())
        {
            out.push(format!(
                "step {}: {}",
                st.index + 1,
                crate::table::issue_lag_line(l).trim_start()
            ));
        }
    }
    for st in steps {
        let Some(v) = st
            .summary
            .as_ref()
            .and_then(|s| s.io())
            .and_then(|s| s.validation.as_ref())
        else {
            continue;
        };
        let kinds: Vec<String> = v
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        out.push(format!(
            "step {}: validation: {} block(s) checked, {} error(s){}",
            st.index + 1,
            v.blocks_checked,
            v.errors,
            if kinds.is_empty() {
                String::new()
            } else {
                format!(" ({})", kinds.join(", "))
            }
        ));
    }
    // What the run printed at its end: the curves, and quick's five figures.
    for a in analysis.iter().filter(|a| a.step_id.is_none()) {
        if let Finding::Curve(c) = &a.finding {
            out.extend(crate::run::curve_lines(c));
        }
    }
    if run.run.kind == RunKind::Quick {
        let docs: Vec<_> = steps.iter().map(|st| st.doc(analysis, None)).collect();
        out.extend(crate::run::five_figures_lines(&iorig_result::step_figures(
            &docs,
        )));
    }
    out
}
/// `iorig runs list` read from a store: a line per run under a head.
pub fn list(store: &iorig_store::Store) -> Result<Vec<String>, iorig_store::StoreError> {
    let mut listed = Vec::new();
    for run in store.list_runs()? {
        listed.push(ListedRun {
            steps: store.steps(run.id)?,
            targets: store.target_facts(run.id)?,
            run,
        });
    }
    Ok(list_lines(&listed))
}

/// `iorig runs show ID` of a run read with the store's one loader: the
/// run, its steps, and each step's jobs and hosts where it had several.
pub fn show(run: &iorig_store::StoredRun) -> Vec<String> {
    let steps: Vec<StepRow> = run.steps.iter().map(|s| s.row.clone()).collect();
    let analysis = run.all_analysis();
    let mut out = show_lines(&run.detail, &run.targets, &steps, &analysis);
    // Every step's jobs first, then every step's hosts, each under its step.
    type Part = fn(&iorig_store::StoredStep) -> Option<Vec<String>>;
    let parts: [(&str, Part); 2] = [
        ("jobs", |s| {
            (!s.jobs.is_empty()).then(|| crate::hosts::jobs_lines(&s.jobs))
        }),
        ("hosts", |s| {
            (!s.hosts.is_empty()).then(|| crate::hosts::hosts_lines(&s.hosts))
        }),
    ];
    for (what, lines) in parts {
        for step in &run.steps {
            if let Some(lines) = lines(step) {
                out.push(format!(
                    "{what} of step {} ({}):",
                    step.row.index + 1,
                    step.row.name
                ));
                out.extend(lines.into_iter().map(|l| format!("  {l}")));
            }
        }
    }
    out
}

/// What `iorig runs push` did with one run (`running`: it had not ended
/// when pushed).
pub fn pushed_line(run: iorig_store::RunId, pushed: &iorig_store::Pushed, running: bool) -> String {
    use iorig_store::Pushed;
    let note = if running {
        " (still running: push it again when it has ended)"
    } else {
        ""
    };
    match pushed {
        Pushed::Copied(id) => format!("run {run} -> run {id}{note}"),
        Pushed::Replaced(id) => {
            format!("run {run} -> run {id} (replaces the copy pushed while it ran)")
        }
        Pushed::AlreadyThere(id) => format!("run {run}: already there as run {id}"),
        _ => format!("run {run}: pushed"),
    }
}
/// The line `iorig runs push` ends with.
pub fn pushed_total_line(copied: usize, there: usize, to: &iorig_store::Location) -> String {
    format!(
        "pushed {copied} run{} to {to}{}",
        if copied == 1 { "" } else { "s" },
        if there > 0 {
            format!(", {there} already there")
        } else {
            String::new()
        }
    )
}
