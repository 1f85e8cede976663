//! Lines for a test as it runs and ends: the workload title, the plan's
//! progress, what a finding says, validation errors and summaries, the plan
//! listing and closing table, the quick figures.

use crate::table::{self, human_bytes};
use iorig_result::live::{TargetInfo, ValidationError, ValidationSummary};
use iorig_result::{CurveFinding, Figure, Finding, Headline, SteadyStateFinding};
use iorig_run::plan::StepResult;
use iorig_run::PlanProgress;
use iorig_spec::headline;
use iorig_spec::plan::{Plan, PlanStep, StepRole};
use iorig_spec::{HostSizing, Rate, StrOrNum, SyncMode, Workload};
use iorig_verify::Expected;
use std::time::Duration;

/// The plan's line above the live line.
pub fn progress_line(p: &PlanProgress) -> String {
    let bar_w = 20usize;
    let filled = (p.position * bar_w) / p.steps.max(1);
    format!(
        "plan [{}{}] step {}/{} {}{} | elapsed {} | ETA {}\n",
        "=".repeat(filled),
        " ".repeat(bar_w - filled),
        p.position + 1,
        p.steps,
        p.label,
        p.fill_pct
            .map(|f| format!(" fill {f:.0}%"))
            .unwrap_or_default(),
        iorig_spec::format_duration(p.elapsed),
        iorig_spec::format_duration(p.eta)
    )
}

/// One line naming the workload, for the table's title; `sizing`: what
/// each host sizes from its own targets and cache (a plan step's).
pub fn describe(
    w: &Workload,
    engine_name: &str,
    targets: &[TargetInfo],
    sizing: &HostSizing,
) -> String {
    describe_for(w, engine_name, targets, &secs(w.time), sizing)
}

/// How long a steady-state step runs, for its title: it stops at the first
/// steady window, so its time is a cap, not what it will do.
pub fn steady_time(round: std::time::Duration, max_rounds: u32) -> String {
    format!(
        "until steady: rounds of {}, at most {} ({max_rounds} rounds)",
        secs(round),
        secs(round * max_rounds)
    )
}

/// [`describe`] with the run's length said as `time`.
pub fn describe_for(
    w: &Workload,
    engine_name: &str,
    targets: &[TargetInfo],
    time: &str,
    sizing: &HostSizing,
) -> String {
    let cache = cache_fact(w, targets);
    let targets: Vec<String> = targets
        .iter()
        .map(|t| format!("{} ({}, {})", t.path, t.kind, human_bytes(t.size_bytes)))
        .collect();
    if let Some(f) = &w.fs {
        return format!(
            "ops {} in a tree of depth {} width {} files {} (file size {}), fileio {}, fileselect {}, bs {} x {} thread(s), {}{}{}, rate {}, {}{} on {}, seed {}",
            f.ops,
            f.depth,
            f.width,
            f.files,
            f.file_sizes,
            f.fileio.name(),
            f.fileselect,
            w.bs,
            w.threads,
            if w.direct { "direct" } else { "buffered" },
            match w.sync {
                SyncMode::None => "",
                SyncMode::Sync => "+sync",
                SyncMode::Dsync => "+dsync",
            },
            cache,
            match w.rate {
                Rate::Max => "max".to_string(),
                Rate::Iops(r) => format!("{r:.0} ops/s"),
            },
            time,
            if w.warmup.is_zero() {
                String::new()
            } else {
                format!(" after {} warmup", secs(w.warmup))
            },
            targets.join(", "),
            w.seed
        );
    }
    // Workers per target when each host sets them from its target count.
    let workers = match sizing.threads_per_target {
        Some(k) => format!("{k} worker(s) per target"),
        None => format!("{} worker(s)", w.threads),
    };
    format!(
        "bs {} read {}%{} random {}% qd {} x {workers}, {}, {}{}{}, rate {}, {}{} on {}, seed {}{}",
        w.bs_text(),
        w.read_pct,
        if w.trim_pct > 0.0 {
            format!(" trim {}%", w.trim_pct)
        } else {
            String::new()
        },
        w.random_pct,
        w.qd,
        engine_name,
        if w.direct { "direct" } else { "buffered" },
        match w.sync {
            SyncMode::None => "",
            SyncMode::Sync => "+sync",
            SyncMode::Dsync => "+dsync",
        },
        cache,
        match w.rate {
            Rate::Max => "max".to_string(),
            Rate::Iops(r) => format!("{r:.0} IOPS"),
        },
        time,
        if w.warmup.is_zero() {
            String::new()
        } else {
            format!(" after {} warmup", secs(w.warmup))
        },
        targets.join(", "),
        w.seed,
        working_set_text(sizing)
    )
}

/// `, working set 75% of each host's cache` for a step whose working set
/// each host sizes from its cache (empty otherwise): the sizes themselves
/// are each host's, and `--dry-run` lists them.
pub fn working_set_text(s: &HostSizing) -> String {
    match s.cache_pct {
        Some(p) => format!(", working set {p}% of each host's cache"),
        None => String::new(),
    }
}

/// What the page cache held of the targets when a buffered step began
/// (direct I/O does not read it): one of the step's facts.
fn cache_fact(w: &Workload, targets: &[TargetInfo]) -> String {
    use iorig_result::live::CacheState;
    if w.direct {
        return String::new();
    }
    let has = |c: CacheState| targets.iter().any(|t| t.cache == c);
    let mut facts = Vec::new();
    if w.drop_caches {
        facts.push("host's page cache dropped first");
    }
    if has(CacheState::NotDropped) {
        facts.push("a device's cached pages could not be dropped (BLKFLSBUF needs root): reads may come from memory");
    } else if has(CacheState::Kept) {
        facts.push("the targets' cached pages kept (--keep-cache): reads may come from memory");
    } else if has(CacheState::Dropped) {
        facts.push("the targets' cached pages dropped first");
    }
    if facts.is_empty() {
        String::new()
    } else {
        format!(" ({})", facts.join("; "))
    }
}

/// `30s`, `1.5s`, `1.667s`: seconds with at most three decimals.
fn secs(d: std::time::Duration) -> String {
    let t = format!("{:.3}", d.as_secs_f64());
    let t = t.trim_end_matches('0').trim_end_matches('.');
    format!("{t}s")
}

pub fn steady_state_line(label: &str, v: &SteadyStateFinding) -> String {
    if v.reached {
        format!(
            "{label}: steady state reached after {} round(s) ({:.0} s measured)",
            v.rounds,
            v.time_needed_s.unwrap_or(0.0)
        )
    } else {
        let why = v.verdict.reason.as_deref().unwrap_or("");
        format!(
            "{label}: steady state not reached in {} round(s): {why}",
            v.rounds
        )
    }
}

pub fn curve_lines(v: &CurveFinding) -> Vec<String> {
    let a = &v.analysis;
    // "curve 2 (bs=64k)": which curve, by what differs from the others.
    let group = match &v.name {
        Some(n) => format!("{} ({n})", v.group + 1),
        None => (v.group + 1).to_string(),
    };
    let th = v.threshold_ms;
    let f = |x: Option<f64>| match x {
        Some(n) => format!("{n:.0}"),
        None => "none".to_string(),
    };
    // A best between two steps is no step's measurement: say so.
    let at = |step: Option<usize>, toward: Option<usize>| match (step, toward) {
        (Some(step), Some(next)) => format!(" (interpolated between steps {step} and {next})"),
        (Some(step), None) => format!(" (step {step})"),
        (None, _) => String::new(),
    };
    let mut out = vec![format!(
        "curve {group}: max {} IOPS; best with mean latency <= {th} ms: {}{}; with p99 <= {th} ms: {}{}",
        f(Some(a.max_iops)),
        f(a.best_under_mean),
        at(v.best_under_mean_step, v.best_under_mean_toward_step),
        f(a.best_under_p99),
        at(v.best_under_p99_step, v.best_under_p99_toward_step),
    )];
    if let Some(p) = v.threshold_percentile {
        // The percentile the curve was asked to judge (fio's
        // latency_percentile): 100 is the maximum.
        let which = if p >= 100.0 {
            "max latency".to_string()
        } else {
            format!("p{p}")
        };
        out.push(format!(
            "curve {group}: best with {which} <= {th} ms: {}{}",
            f(a.best_under_pct),
            at(v.best_under_pct_step, v.best_under_pct_toward_step),
        ));
    }
    for o in &v.off_rate {
        out.push(format!(
            "curve {group}: step {} ran {} IOPS of {} requested ({:+.1} %): off its rate, so it does not count for the best under {th} ms",
            o.step.unwrap_or(0),
            f(Some(o.achieved_iops)),
            f(o.requested_iops),
            o.error_pct.unwrap_or(0.0)
        ));
    }
    for (&i, &step) in a.non_monotone_points.iter().zip(&v.non_monotone_steps) {
        let (Some(p), next) = (v.points.get(i), next_rate_point(v, i)) else {
            continue;
        };
        out.push(format!(
            "curve {group}: not monotone: step {step} (mean {:.3} ms, p99 {:.3} ms) is slower than the next higher-rate step{} beyond their spread: a disturbance, not the storage's curve; rerun before trusting the best above",
            p.mean_lat_ns / 1e6,
            p.p99_lat_ns / 1e6,
            next.map(|n| format!(" (mean {:.3} ms, p99 {:.3} ms)", n.mean_lat_ns / 1e6, n.p99_lat_ns / 1e6))
                .unwrap_or_default()
        ));
    }
    if let Some(k) = &a.knee {
        out.push(format!(
            "curve {group}: knee at {} IOPS (mean latency {:.3} ms, over 2x the low-load latency)",
            f(Some(k.iops)),
            k.lat_ns / 1e6
        ));
    }
    out
}

/// The paced point with the next higher requested rate after point `i`.
fn next_rate_point(v: &CurveFinding, i: usize) -> Option<&iorig_stats::analysis::CurvePoint> {
    let rate = v.points.get(i)?.requested_iops?;
    v.points
        .iter()
        .filter_map(|p| p.requested_iops.filter(|r| *r > rate).map(|r| (r, p)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, p)| p)
}

/// One line for a validation error.
pub fn validation_error_text(e: &ValidationError) -> String {
    let u = &e.error;
    let expected = match u.expected {
        Expected::Unwritten => "never written".to_string(),
        Expected::Key(k) => format!("key {k}"),
        Expected::Either { old, new } => format!("key {old} or {new}"),
        Expected::Any => "any intact block".to_string(),
        Expected::Pattern => "the pattern".to_string(),
    };
    let found = match (u.found_key, u.expected) {
        (Some(k), _) => format!("key {k}"),
        (None, Expected::Pattern) => "other bytes".to_string(),
        (None, _) => "no iorig data".to_string(),
    };
    let written = u
        .found_time_ns
        .map(|ns| {
            let t = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(ns);
            format!(", found written {}", humantime::format_rfc3339_millis(t))
        })
        .unwrap_or_default();
    format!(
        "{} at {} offset {} (t={:.3}s): expected {expected}, found {found}{written}; {}",
        u.kind.name().replace('_', " "),
        e.target_path,
        u.offset_bytes,
        e.t_s,
        u.detail
    )
}

/// The validation lines of a summary.
pub fn validation_lines(v: &ValidationSummary) -> Vec<String> {
    let mut out = vec![format!(
        "validation: {} block(s) checked ({} unit(s) of {} bytes; {} pre-read(s), {} read-back(s)), {} error(s)",
        v.blocks_checked, v.units_checked, v.unit_bytes, v.pre_reads, v.after_reads, v.errors
    )];
    if v.errors > 0 {
        let kinds: Vec<String> = v
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{} {n}", k.replace('_', " ")))
            .collect();
        out.push(format!("  errors by kind: {}", kinds.join(", ")));
    }
    if v.stopped_at_max_errors {
        out.push("  the run stopped at --max-errors".to_string());
    }
    if v.journal_batches > 0 {
        out.push(format!(
            "  journal: {} synced batch(es), {:.3} ms each on average (kept out of the I/O latency above)",
            v.journal_batches,
            v.journal_ns as f64 / v.journal_batches as f64 / 1e6
        ));
    }
    out
}

/// The warning a finding deserves, if any (`label`: the step's).
pub fn finding_notice(f: &Finding, label: &str) -> Option<String> {
    match f {
        Finding::GeneratorBound(v) if v.generator_bound => v.message.clone(),
        Finding::Rate(r) if !r.met => Some(format!(
            "rate not met: {:.0} IOPS achieved of {:.0} requested ({:+.1} %); the latency figures are for that load, not the one asked",
            r.achieved_iops, r.requested_iops, r.error_pct
        )),
        Finding::Outages(o) if o.outage_intervals > 0 => Some(format!(
            "outage: {} interval(s) without a completed I/O, {:.1} s in total, longest {:.1} s from t={:.1} s; no I/O completed for {:.3} s from t={:.3} s",
            o.outage_intervals,
            o.total_outage_s,
            o.longest_outage_s,
            o.longest_start_t_s.unwrap_or(0.0),
            o.longest_gap_ns.unwrap_or(0) as f64 / 1e9,
            o.longest_gap_start_t_s.unwrap_or(0.0)
        )),
        Finding::WriteCliff(w) => match (&w.cliff, &w.generator_dip) {
            (Some(c), _) => Some(format!(
                "write cliff at t={:.0} s: IOPS fell from {:.0} to {:.0} on average from there to the end ({:.0} % lower) and stayed down",
                c.onset_t_s, c.level_before_iops, c.level_after_iops, c.drop_pct
            )),
            (None, Some(g)) => Some(format!(
                "IOPS fell from {:.0} to {:.0} from t={:.0} s to t={:.0} s while the host's CPU was up to {:.0} % busy and iorig's busiest worker up to {:.0} %: the load generator set that limit, not the storage (no write cliff); use a faster host or fewer workers per CPU",
                g.level_before_iops,
                g.level_during_iops,
                g.start_t_s,
                g.end_t_s,
                g.cpu_busy_max_pct,
                g.worker_busy_max_pct
            )),
            (None, None) => None,
        },
        Finding::SteadyState(v) => Some(steady_state_line(label, v)),
        Finding::Skipped(s) => Some(format!("{label} skipped: {}", s.why)),
        _ => None,
    }
}

/// The report lines a finding adds to a step's or a plan's output.
pub fn finding_lines(f: &Finding) -> Vec<String> {
    match f {
        Finding::Precondition(p) => vec![format!(
            "precondition: wrote {} in {} ({:.1} MB/s)",
            human_bytes(p.written_bytes),
            table::human_secs(p.duration_s),
            p.bw_bytes_per_s / 1e6
        )],
        Finding::Curve(c) => curve_lines(c),
        _ => Vec::new(),
    }
}

fn text_of(v: &Option<StrOrNum>) -> String {
    match v {
        None => "-".into(),
        Some(StrOrNum::Str(s)) => s.clone(),
        Some(StrOrNum::Int(i)) => i.to_string(),
        Some(StrOrNum::Float(f)) => f.to_string(),
    }
}

/// The `--dry-run` listing of one workload: what would run with `engine`
/// on which targets, the files it would create (path, data bytes), and how
/// long.
pub fn dry_run_lines_single(
    w: &Workload,
    engine: &str,
    targets: &[TargetInfo],
    to_create: Vec<(String, u64)>,
) -> Vec<String> {
    let mut out = vec![format!(
        "would run: {}",
        describe(w, engine, targets, &HostSizing::default())
    )];
    for (path, bytes) in to_create {
        out.push(format!(
            "would create {path} and fill it with {} of random data first",
            human_bytes(bytes)
        ));
    }
    out.push(format!(
        "estimated time: {:.0} s; every target and output checked: ok (nothing was run or written)",
        (w.warmup + w.time).as_secs_f64()
    ));
    out
}

/// The line `iorig verify` starts with: the journal's targets and units.
pub fn verify_opening_line(
    journal: &std::path::Path,
    state: &iorig_verify::JournalState,
) -> String {
    let (written, unknown) = iorig_run::verify_scan::unit_counts(state);
    let unknown = match unknown {
        0 => String::new(),
        n => format!(", {n} unchecked (their loss was reported by a run)"),
    };
    format!(
        "iorig verify {}: {} target(s), {}-byte units, {} written{unknown}, {} write(s) in flight at the end of the log",
        journal.display(),
        state.targets.len(),
        state.unit_bytes,
        written,
        state.in_flight.len()
    )
}

/// What `iorig verify` read and found.
pub fn verify_done_line(doc: &iorig_run::verify_scan::VerifyDoc) -> String {
    format!(
        "verify: {} unit(s) read ({:.1} MiB in {:.1}s), {} with known data checked, {} error(s)",
        doc.units_read,
        doc.bytes_read as f64 / (1 << 20) as f64,
        doc.duration_s,
        doc.units_checked,
        doc.errors
    )
}

/// The `--dry-run` listing of a plan, checked here or on `hosts` agents.
pub fn dry_run_lines(
    plan: &Plan,
    steps: &[PlanStep],
    estimate: Duration,
    hosts: Option<usize>,
) -> Vec<String> {
    let mut out = vec![format!(
        "plan {} ({}): {} step(s), estimated {}",
        plan.name,
        plan.path,
        steps.len(),
        iorig_spec::format_duration(estimate)
    )];
    // Cells first, widths from them: a role or label longer than a fixed
    // width would run into the next column.
    let mut rows: Vec<([String; 10], String)> = vec![(
        [
            "step".into(),
            "role".into(),
            "label".into(),
            headline::BS.narrow.into(),
            headline::READ.narrow.into(),
            headline::RANDOM.narrow.into(),
            headline::QD.narrow.into(),
            headline::THREADS.head.into(),
            headline::RATE.narrow.into(),
            "time".into(),
        ],
        String::new(),
    )];
    for s in steps {
        let w = &s.workload;
        let time = match (&s.role, s.time, s.steady_state) {
            (StepRole::Precondition(p), _, _) => format!("{}x fill", p.passes),
            (_, _, Some(ss)) => format!(
                "{}x{}",
                ss.max_rounds,
                iorig_spec::format_duration(ss.round)
            ),
            (_, Some(t), None) => iorig_spec::format_duration(t),
            (_, None, None) => "-".into(),
        };
        let rate = match s.role {
            StepRole::CurveRate { pct, .. } => format!("{pct}%max"),
            StepRole::CurveRefine { .. } => "bisect".into(),
            _ => text_of(&w.rate),
        };
        rows.push((
            [
                (s.index + 1).to_string(),
                iorig_result::StepRole::from(&s.role).to_string(),
                s.label.clone(),
                text_of(&w.bs),
                text_of(&w.read),
                text_of(&w.random),
                text_of(&w.qd),
                match s.sizing.threads_per_target {
                    Some(k) => format!("{k}/target"),
                    None => text_of(&w.threads),
                },
                rate,
                time,
            ],
            String::new(),
        ));
        // A step of several jobs: each job's own keys and targets.
        for j in &s.jobs {
            let jw = &j.workload;
            let targets = match &jw.target {
                Some(iorig_spec::OneOrMany::One(t)) => t.clone(),
                Some(iorig_spec::OneOrMany::Many(v)) => v.join(","),
                None => plan
                    .targets
                    .as_ref()
                    .map(|t| t.join(","))
                    .unwrap_or_else(|| "./iorig-scratch.dat".into()),
            };
            let mut extra = String::new();
            if let Some(io) = &jw.io_size {
                extra.push_str(&format!(" io_size {}", text_of(&Some(io.clone()))));
            }
            rows.push((
                [
                    String::new(),
                    "  job".into(),
                    j.name.clone(),
                    text_of(&jw.bs),
                    text_of(&jw.read),
                    text_of(&jw.random),
                    text_of(&jw.qd),
                    text_of(&jw.threads),
                    text_of(&jw.rate),
                    text_of(&jw.time),
                ],
                format!("  {targets}{extra}"),
            ));
        }
    }
    let mut widths = [0usize; 10];
    for (cells, _) in &rows {
        for (w, c) in widths.iter_mut().zip(cells) {
            *w = (*w).max(c.chars().count());
        }
    }
    for (cells, tail) in rows {
        // Step, role and label read left to right; the figures right-aligned.
        let line: Vec<String> = cells
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (c, w))| match i {
                0 => format!("{c:>w$}"),
                1 | 2 => format!("{c:<w$}"),
                _ => format!("{c:>w$}"),
            })
            .collect();
        out.push(format!("{}{tail}", line.join("  ")).trim_end().to_string());
    }
    if let Some(t) = &plan.targets {
        out.push(format!("targets: {}", t.join(", ")));
    }
    out.push(match hosts {
        Some(n) => {
            format!("every step checked on each of {n} hosts: ok (nothing was run or written)")
        }
        None => "every step and target checked: ok (nothing was run or written)".to_string(),
    });
    out
}

/// The closing table of a plan: one line per step (`run`: its store id).
pub fn plan_table_lines(name: &str, results: &[StepResult], run: Option<i64>) -> Vec<String> {
    let mut out = vec![
        String::new(),
        format!(
            "plan {name}{}: {} step(s)",
            run.map(|r| format!(" (run {r})")).unwrap_or_default(),
            results.len()
        ),
        format!(
            "{:>5}  {:<40} {:<11} {:>10} {:>9} {:>9} {:>9}",
            "step", "label", "status", "IOPS", "MB/s", "mean ms", "p99 ms"
        ),
    ];
    let mut off_rate = false;
    for r in results {
        let [iops, mbs, mean, p99] = table::summary_cells(r.summary.as_ref());
        // A paced step more than 3 % off its rate is marked: its latency is
        // for another load than the one asked.
        let missed = r
            .analysis
            .iter()
            .any(|f| matches!(f, Finding::Rate(rate) if !rate.met));
        off_rate |= missed;
        out.push(format!(
            "{:>5}  {:<40} {:<11} {:>10} {:>9} {:>9} {:>9}",
            r.step.index + 1,
            r.step.label,
            r.status.as_str(),
            if missed { format!("{iops}*") } else { iops },
            mbs,
            mean,
            p99
        ));
    }
    if off_rate {
        out.push("    * rate not met: more than 3 % off the step's requested IOPS".into());
    }
    out
}

/// The closing lines of `iorig quick` (and of `runs show` for a quick run):
/// the five figures.
pub fn five_figures_lines(figures: &[Figure]) -> Vec<String> {
    let mut out = vec![String::new(), "five parameters:".to_owned()];
    for f in figures {
        let what = &f.what;
        let (Some(iops), Some(bw), Some(mean), Some(p99)) =
            (f.iops, f.bw_bytes_per_s, f.lat_mean_ns, f.lat_p99_ns)
        else {
            out.push(format!("  {what:<34} {}", f.status.as_str()));
            continue;
        };
        let mbs = bw / 1e6;
        let mean_ms = mean as f64 / 1e6;
        let p99_ms = p99 as f64 / 1e6;
        let headline = match f.headline {
            Headline::Bandwidth => format!("{mbs:>9.1} MB/s ({iops:.0} IOPS)"),
            Headline::Iops => format!("{iops:>9.0} IOPS ({mbs:.1} MB/s)"),
        };
        let mut line =
            format!("  {what:<34} {headline:<28} latency mean {mean_ms:.3} ms, p99 {p99_ms:.3} ms");
        if let Some(v) = &f.steady {
            if v.reached {
                line.push_str(&format!(
                    "; steady after {} round(s), {:.0} s",
                    v.rounds,
                    v.time_needed_s.unwrap_or(0.0)
                ));
            } else {
                line.push_str(&format!("; not steady after {} round(s)", v.rounds));
            }
        }
        if f.status != iorig_result::StepStatus::Ok {
            line.push_str(&format!(" [{}]", f.status.as_str()));
        }
        out.push(line);
    }
    out
}

/// What a file-system workload's format phase did, in one line.
pub fn format_line(path: &str, f: &iorig_result::FormatSummary) -> String {
    let mut parts = Vec::new();
    if f.files_removed > 0 {
        parts.push(format!("removed {} files", f.files_removed));
    }
    if f.dirs_created > 0 {
        parts.push(format!("created {} directories", f.dirs_created));
    }
    if f.files_created > 0 {
        parts.push(format!(
            "created {} files ({}) at {:.0} files/s, {:.2} MB/s",
            f.files_created,
            human_bytes(f.bytes_written),
            f.files_per_s,
            f.bw_bytes_per_s / 1e6
        ));
    }
    if f.files_kept > 0 {
        parts.push(format!("kept {} files", f.files_kept));
    }
    if parts.is_empty() {
        parts.push("nothing to do".to_string());
    }
    format!(
        "format {} of {path}: {} in {:.2} s{}",
        f.mode,
        parts.join(", "),
        f.duration_s,
        if f.interrupted { " (interrupted)" } else { "" }
    )
}

/// What the steps of a plan sized on each host, under a heading that
/// states the rule: steps that sized the same on a host share a line
/// (`steps 2, 3: host node1: ...`), each host's lines together.
pub fn sizing_lines(sized: &[iorig_run::sizing::SizedStep]) -> Vec<String> {
    let mut groups: Vec<(String, String, Vec<String>)> = Vec::new();
    for s in sized {
        let host = s.host.clone().unwrap_or_default();
        match groups
            .iter_mut()
            .find(|(h, t, _)| *h == host && *t == s.text)
        {
            Some(g) => g.2.push(s.step.to_string()),
            None => groups.push((host, s.text.clone(), vec![s.step.to_string()])),
        }
    }
    if groups.is_empty() {
        return Vec::new();
    }
    // Each host's lines together, in the order the hosts came.
    let mut hosts: Vec<&str> = Vec::new();
    for (h, _, _) in &groups {
        if !hosts.contains(&h.as_str()) {
            hosts.push(h);
        }
    }
    let mut out = vec![
        "sized from each host's targets and cache (a working set of N% of cache is that share of the host's cache, over its targets; the cache is --cache-size, else bcache's, else a third of the targets' capacity):".to_owned(),
    ];
    for h in hosts {
        for (_, text, steps) in groups.iter().filter(|g| g.0 == h) {
            let which = match steps.as_slice() {
                [one] => format!("step {one}"),
                many => format!("steps {}", many.join(", ")),
            };
            let host = if h.is_empty() {
                String::new()
            } else {
                format!("host {h}: ")
            };
            out.push(format!("  {which}: {host}{text}"));
        }
    }
    out
}
