//! `iorig trace analyse FILE`: a block trace's counts, hot spot and LRU
//! curve (iorig-trace), printed and optionally written as JSON; `iorig trace
//! record DEV`: a capture with the kernel's block tracing; `iorig trace
//! replay FILE`: the trace's I/Os issued again at their times.

use crate::cli::{
    TraceAnalyseArgs, TraceFitArgs, TraceListArgs, TraceRecordArgs, TraceReplayArgs,
    TraceReportArgs,
};
use crate::output::Printer;
use crate::{exit, Failure};
use iorig_trace::analyse::{Analysis, HotShare, Options, Spread};
use iorig_trace::{BadRecords, Format};
use std::path::Path;

pub fn analyse(a: &TraceAnalyseArgs) -> Result<u8, Failure> {
    let size = |flag: &str, v: &str| {
        iorig_spec::parse_size(v)
            .ok()
            .filter(|b| *b > 0)
            .ok_or_else(|| Failure::usage(format!("--{flag} {v}: give a size such as 4k or 1m")))
    };
    let opts = Options {
        block_bytes: size("block", &a.block)?,
        extent_bytes: size("extent", &a.extent)?,
        hit: a.hit,
        sample: a.sample,
        window_ns: iorig_spec::parse_duration(&a.window)
            .ok()
            .map(|d| d.as_nanos() as u64)
            .filter(|ns| *ns > 0)
            .ok_or_else(|| {
                Failure::usage(format!(
                    "--window {}: give a duration such as 10s or 5m",
                    a.window
                ))
            })?,
        lru: !a.no_lru,
        ..Options::default()
    };
    // --hit and --sample are checked by the analysis, before any record
    // is read and before anything is written.
    let format = trace_format(a.format.as_deref())?;
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        crate::store::check_output("--json", Path::new(j))?;
    }
    let bad = bad_records(a.skip_bad);
    if a.backend_iops.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
        return Err(Failure::usage(
            "--backend-iops: give the backend's random reads per second, above 0, e.g. 450",
        ));
    }
    let backend = match (a.backend_iops, a.backend_run) {
        (Some(iops), _) => Some((iops, "given with --backend-iops".to_string())),
        (None, Some(run)) => Some(backend_of_run(a.record.db.as_ref(), run)?),
        (None, None) => None,
    };
    let labels = crate::cli::parse_labels(&a.record.labels)?;
    if !a.record.no_db {
        crate::store::check_store(a.record.db.as_ref())?;
    }
    let mut records =
        iorig_trace::open(&a.file, format, bad).map_err(|e| Failure::usage(e.to_string()))?;
    let mut analysis = iorig_trace::analyse_records(&mut records, &opts)
        .map_err(|e| Failure::usage(e.to_string()))?;
    if let Some((iops, source)) = backend {
        analysis.warmup = Some(iorig_trace::analyse::warmup(&analysis, iops, source));
    }
    let printer = Printer::new(a.json.as_deref() == Some("-"), false);
    for l in lines(&analysis, records.format(), records.skipped()) {
        printer.line(&l);
    }
    if !a.record.no_db {
        let json = serde_json::to_string(&analysis)
            .map_err(|e| Failure::runtime(format!("the analysis as JSON: {e}")))?;
        let store = crate::store::open_for_write(a.record.db.as_ref())?;
        let id = store
            .put_trace_analysis(&iorig_store::NewTraceAnalysis {
                created: iorig_run::now_rfc3339(),
                host: iorig_run::host_name(),
                tool_version: env!("CARGO_PKG_VERSION").to_string(),
                command_line: crate::store::origin().command_line,
                file: a.file.display().to_string(),
                format: analysis.format.clone(),
                records: analysis.records,
                labels,
                analysis_json: json,
            })
            .map_err(|e| Failure::runtime(format!("result store: {e}")))?;
        printer.line(&format!(
            "stored as trace analysis {id} in {} (iorig trace report {id} --out DIR)",
            crate::store::location(a.record.db.as_ref())?
        ));
    }
    if let Some(dest) = &a.json {
        crate::output::json::write_json_doc(&printer, dest, &analysis)?;
    }
    Ok(exit::OK)
}

pub fn record(a: &TraceRecordArgs) -> Result<u8, Failure> {
    use iorig_trace::capture::{self, CaptureError, CaptureOptions, OutFormat};
    let duration = iorig_spec::parse_duration(&a.time)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            Failure::usage(format!(
                "--time {}: give a duration such as 30s or 10m",
                a.time
            ))
        })?;
    let format = match a.format.as_str() {
        "iorig" => OutFormat::Iorig,
        "blktrace" => OutFormat::Blktrace,
        other => {
            return Err(Failure::usage(format!(
                "--format {other}: give iorig (I/Os with times and latency) or blktrace (the kernel's records, for blkparse)"
            )))
        }
    };
    let buffer_kib = iorig_spec::parse_size(&a.buffer)
        .ok()
        .map(|b| b / 1024)
        .filter(|k| (64..=(4 << 20)).contains(k))
        .ok_or_else(|| {
            Failure::usage(format!(
                "--buffer {}: give a size per CPU from 64k to 4g, e.g. 16m",
                a.buffer
            ))
        })?;
    crate::store::check_output("--out", &a.out)?;
    // The device and the host's tracing are checked before the file is
    // made, so a refused capture writes nothing.
    capture::block_device(&a.device).map_err(|e| Failure::usage(e.to_string()))?;
    let stop = crate::signals::install();
    let printer = Printer::new(false, false);
    let opts = CaptureOptions {
        device: a.device.clone(),
        duration,
        out: a.out.clone(),
        format,
        buffer_kib,
    };
    let failed = |e: CaptureError| match e {
        CaptureError::Setup(why) => Failure::usage(why),
        other => Failure::runtime(other.to_string()),
    };
    // Tracing is the host's: a second Ctrl-C must not leave it switched on.
    crate::signals::be_patient();
    let running = capture::start(&opts).map_err(failed)?;
    printer.notice(&format!(
        "recording {} for {} into {} (Ctrl-C ends it sooner)",
        a.device.display(),
        a.time,
        a.out.display()
    ));
    let s = running.run(&stop.step).map_err(failed)?;
    printer.line(&format!(
        "recorded {}: {} I/Os from {} kernel events in {:.1}s ({}-based device: {} is the issue) into {} ({})",
        a.device.display(),
        s.ios,
        s.events,
        s.elapsed.as_secs_f64(),
        if s.bio_based { "bio" } else { "request" },
        if s.bio_based { "queue (Q)" } else { "driver issue (D)" },
        a.out.display(),
        a.format
    ));
    if s.lost_events > 0 {
        printer.notice(&format!(
            "the kernel lost {} events when its buffer was full: the trace misses I/Os; give a larger --buffer",
            s.lost_events
        ));
    }
    Ok(exit::OK)
}

pub fn replay(a: &TraceReplayArgs) -> Result<u8, Failure> {
    use iorig_run::replay::{survey, OffsetMap, ReplaySetup};
    use iorig_spec::{OneOrMany, StrOrNum, WorkloadFile};
    let format = trace_format(a.format.as_deref())?;
    let map = OffsetMap::parse(&a.map).map_err(Failure::usage)?;
    let align_bytes = iorig_spec::parse_size(&a.align)
        .ok()
        .filter(|b| *b >= 512 && b.is_power_of_two())
        .ok_or_else(|| {
            Failure::usage(format!(
                "--align {}: give a power of two from 512, e.g. 4k",
                a.align
            ))
        })?;
    let speed = match (a.speed, a.afap) {
        (_, true) => None,
        (Some(x), false) if x.is_finite() && x > 0.0 => Some(x),
        (Some(x), false) => {
            return Err(Failure::usage(format!(
                "--speed {x}: give a factor above 0, e.g. 2 for twice as fast"
            )))
        }
        (None, false) => Some(1.0),
    };
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        crate::store::check_output("--json", Path::new(j))?;
    }
    let bad = bad_records(a.skip_bad);
    let facts = survey(&a.file, format, bad, align_bytes)?;
    if speed.is_some() && !facts.timed {
        return Err(Failure::usage(format!(
            "{}: the trace has no times (an fio iolog v2 without wait lines); replay it with --afap",
            a.file.display()
        )));
    }
    let qd = match (a.qd, speed) {
        (Some(0), _) => return Err(Failure::usage("--qd 0: give at least 1")),
        (Some(q), _) => q,
        // Timed: enough slots that the trace's own concurrency is never
        // what holds an I/O back.
        (None, Some(_)) => 256,
        (None, None) => facts.mean_qd.map_or(1, |q| q.ceil().max(1.0) as u32),
    };
    let time = match (&a.time, speed) {
        (Some(t), _) => t.clone(),
        (None, Some(x)) => format!(
            "{}ms",
            (facts.duration_ns as f64 / x / 1e6).ceil() as u64 + 60_000
        ),
        (None, None) => "1d".to_string(),
    };
    let reads = {
        // The read share is only a label of the run here: the trace decides
        // each I/O.
        100.0 * facts.reads as f64 / facts.records.max(1) as f64
    };
    let bs = facts.max_size_bytes.div_ceil(align_bytes) * align_bytes;
    let str_ = |v: String| Some(StrOrNum::Str(v));
    let mut layer = WorkloadFile {
        target: (!a.targets.is_empty()).then(|| OneOrMany::Many(a.targets.clone())),
        size: a.size.clone().and_then(str_),
        bs: str_(bs.to_string()),
        read: str_(format!("{reads:.3}")),
        random: str_("100".into()),
        align: str_(align_bytes.to_string()),
        qd: str_(qd.to_string()),
        engine: a.engine,
        time: str_(time),
        interval: str_(a.interval.clone()),
        ..WorkloadFile::default()
    };
    let labels = crate::cli::parse_labels(&a.record.labels)?;
    layer.labels = (!labels.is_empty()).then_some(labels);
    let w = layer
        .resolve(1)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let setup = ReplaySetup {
        file: a.file.clone(),
        format,
        bad,
        speed,
        map,
        align_bytes,
        async_submit: a.async_submit,
        facts,
    };
    // The trace against the targets' working sets, before anything is
    // created or written (planning only looks).
    let planned =
        iorig_engine::run::plan(&w, a.allow_destroy).map_err(iorig_run::RunError::from)?;
    if a.async_submit && planned.engine != iorig_spec::EngineKind::IoUring {
        return Err(Failure::usage(format!(
            "--async-submit is for the io_uring engine; this replay runs on {} (drop --async-submit, or use --engine io_uring)",
            planned.engine.name()
        )));
    }
    let segments = planned.segments().map_err(iorig_run::RunError::from)?;
    iorig_run::replay::check_fit(&setup, &segments)?;
    let mut store = crate::store::writer(crate::store::StoreChoice {
        db: a.record.db.as_ref(),
        no_db: a.record.no_db,
    })?;
    let json_to_stdout = a.json.as_deref() == Some("-");
    let printer = Printer::new(json_to_stdout, a.quiet);
    let stop = crate::signals::install();
    printer.notice(&format!(
        "replaying {} I/Os of {} ({}) {}, offsets by {} at {}-byte alignment, {} in flight at most",
        setup.facts.records,
        a.file.display(),
        setup.facts.format,
        match speed {
            Some(1.0) => "at their times".to_string(),
            Some(x) => format!("at {x}x their speed"),
            None => "as fast as possible".to_string(),
        },
        map.name(),
        align_bytes,
        qd
    ));
    let mut term = crate::output::term::TermSink::new(printer);
    let opts = iorig_run::single::SingleOptions {
        allow_destroy: a.allow_destroy,
        replay: Some(setup),
        ..iorig_run::single::SingleOptions::default()
    };
    let outcome = iorig_run::single::run(&w, &opts, &mut store, &mut term, &stop)?;
    if let Some(r) = &outcome.doc.replay {
        term.printer.line(&replay_line(r));
    }
    if let Some(j) = &a.json {
        crate::output::json::write_json_doc(&term.printer, j, &outcome.doc)?;
    }
    Ok(crate::run_cmd::exit_code(&outcome))
}

pub fn fit(a: &TraceFitArgs) -> Result<u8, Failure> {
    let block_bytes = iorig_spec::parse_size(&a.block)
        .ok()
        .filter(|b| *b >= 512)
        .ok_or_else(|| Failure::usage(format!("--block {}: give a size such as 4k", a.block)))?;
    if a.accesses < 1000 {
        return Err(Failure::usage(format!(
            "--accesses {}: give at least 1000 (a model of fewer accesses has no curve to speak of)",
            a.accesses
        )));
    }
    let format = trace_format(a.format.as_deref())?;
    if let Some(o) = &a.out {
        crate::store::check_output("--out", o)?;
    }
    if let Some(p) = &a.plan {
        crate::store::check_output("--plan", p)?;
    }
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        crate::store::check_output("--json", Path::new(j))?;
    }
    if a.out.is_none() && a.json.as_deref() == Some("-") {
        return Err(Failure::usage(
            "--json - and the workload would both go to stdout; give --out FILE for the workload",
        ));
    }
    let bad = bad_records(a.skip_bad);
    let opts = Options {
        block_bytes,
        sample: a.sample,
        ..Options::default()
    };
    let mut records =
        iorig_trace::open(&a.file, format, bad).map_err(|e| Failure::usage(e.to_string()))?;
    let analysis = iorig_trace::analyse_records(&mut records, &opts)
        .map_err(|e| Failure::usage(e.to_string()))?;
    let source = format!("{} ({})", a.file.display(), records.format().name());
    let fitted = iorig_run::fit::fit(
        &analysis,
        &source,
        &iorig_run::fit::FitOptions {
            max_accesses: a.accesses,
            ..iorig_run::fit::FitOptions::default()
        },
    )?;
    let printer = Printer::new(true, false);
    printer.line(&format!(
        "fit: dist = \"{}\", mean |hit ratio difference| {:.4} over {} cache sizes ({} candidates{})",
        fitted.best.dist,
        fitted.best.error,
        fitted.points,
        fitted.candidates.len(),
        if fitted.scale_shift > 0 {
            format!(", fitted at 1/{} scale", 1u64 << fitted.scale_shift)
        } else {
            String::new()
        }
    ));
    match &a.out {
        Some(o) => {
            crate::store::write_output("--out", o, fitted.toml.as_bytes())?;
            printer.line(&format!("wrote {}", o.display()));
        }
        None => printer.document_stdout(&fitted.toml),
    }
    if let Some(p) = &a.plan {
        crate::store::write_output("--plan", p, fitted.plan_toml.as_bytes())?;
        printer.line(&format!("wrote {}", p.display()));
    }
    if let Some(dest) = &a.json {
        crate::output::json::write_json_doc(&printer, dest, &fitted)?;
    }
    Ok(exit::OK)
}

/// How a replay went: what was issued and how close to its times.
fn replay_line(r: &iorig_result::ReplayReport) -> String {
    let us = |ns: u64| format!("{:.1} µs", ns as f64 / 1000.0);
    let timing = match &r.timing_error_ns {
        Some(t) => format!(
            "; issued after their time by p50 {}, p99 {}, p99.9 {}, max {} ({} over 20 µs, {} over 1 ms)",
            us(t.p50),
            us(t.p99),
            us(t.p99_9),
            us(t.max),
            r.late_over_20us,
            r.late_over_1ms
        ),
        None => String::new(),
    };
    format!(
        "replay: {} of {} I/Os issued{}{timing}",
        r.issued,
        r.records,
        if r.realigned > 0 {
            format!(
                " ({} moved to {}-byte alignment)",
                r.realigned, r.align_bytes
            )
        } else {
            String::new()
        }
    )
}

pub fn list(a: &TraceListArgs) -> Result<u8, Failure> {
    let store = crate::store::open_read_only(a.db.as_ref())?;
    let rows = store
        .trace_analyses()
        .map_err(|e| Failure::runtime(format!("result store: {e}")))?;
    let printer = Printer::new(false, false);
    if a.json {
        let text = serde_json::to_string_pretty(&rows)
            .map_err(|e| Failure::runtime(format!("the list as JSON: {e}")))?;
        printer.json_stdout(&text);
        return Ok(exit::OK);
    }
    if rows.is_empty() {
        printer.line("no trace analyses stored; iorig trace analyse FILE stores one");
        return Ok(exit::OK);
    }
    printer.line(&format!(
        "{:>4}  {:<20}  {:<8}  {:>12}  file",
        "id", "created", "format", "records"
    ));
    for r in rows {
        printer.line(&format!(
            "{:>4}  {:<20}  {:<8}  {:>12}  {}",
            r.id, r.created, r.format, r.records, r.file
        ));
    }
    Ok(exit::OK)
}

pub fn report(a: &TraceReportArgs) -> Result<u8, Failure> {
    crate::store::check_output_dir("--out", &a.out)?;
    let store = crate::store::open_read_only(a.db.as_ref())?;
    let (row, json) = store
        .trace_analysis(a.id)
        .map_err(|e| Failure::runtime(format!("result store: {e}")))?
        .ok_or_else(|| {
            Failure::usage(format!(
                "no trace analysis {} in the result store; iorig trace list shows them",
                a.id
            ))
        })?;
    let analysis: Analysis = serde_json::from_str(&json).map_err(|e| {
        Failure::runtime(format!(
            "trace analysis {}: stored JSON unreadable: {e}",
            a.id
        ))
    })?;
    let rendered = iorig_report::html::render_trace_report(&iorig_report::html::TraceReport {
        id: row.id,
        created: row.created,
        host: row.host,
        file: row.file,
        command_line: row.command_line,
        labels: row.labels,
        analysis,
    });
    let printer = Printer::new(false, false);
    crate::report_cmd::write_rendered(&a.out, &rendered, &printer)?;
    Ok(exit::OK)
}

/// The read IOPS a stored run measured: its step with the most.
fn backend_of_run(db: Option<&iorig_store::Location>, run: i64) -> Result<(f64, String), Failure> {
    let store = crate::store::open_read_only(db)?;
    let steps = store
        .steps(iorig_store::RunId(run))
        .map_err(|e| Failure::runtime(format!("result store: {e}")))?;
    let best = steps
        .iter()
        .filter_map(|s| {
            let io = s.summary.as_ref()?.io()?;
            (io.read.ops > 0).then_some((s, io.read.iops))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1));
    match best {
        Some((step, iops)) => {
            let bs = step
                .params
                .as_ref()
                .map(|p| format!(" of {} reads", p.bs))
                .unwrap_or_default();
            Ok((
                iops,
                format!("run {run} step {} ({}){bs}", step.index, step.name),
            ))
        }
        None => Err(Failure::usage(format!(
            "--backend-run {run}: no step of that run measured reads (iorig runs list shows the runs); run random reads on the backing device, or give --backend-iops"
        ))),
    }
}

/// `--format`, when given.
fn trace_format(flag: Option<&str>) -> Result<Option<Format>, Failure> {
    flag.map(Format::parse).transpose().map_err(Failure::usage)
}

/// `--skip-bad`: bad records left out (counted), else refused.
fn bad_records(skip_bad: bool) -> BadRecords {
    if skip_bad {
        BadRecords::Skip
    } else {
        BadRecords::Refuse
    }
}

fn mib(bytes: u64) -> String {
    let m = bytes as f64 / (1 << 20) as f64;
    if m >= 10.0 {
        format!("{m:.0} MiB")
    } else {
        format!("{m:.2} MiB")
    }
}

fn hot(label: &str, shares: &[HotShare]) -> String {
    let parts: Vec<String> = shares
        .iter()
        .map(|h| {
            format!(
                "{}% in {} ({:.1}%)",
                h.share_pct,
                mib(h.bytes),
                h.footprint_pct
            )
        })
        .collect();
    format!("{label}: {}", parts.join(", "))
}

fn spread(label: &str, s: &Spread) -> String {
    let us = |ns: f64| format!("{:.1} µs", ns / 1e3);
    format!(
        "{label}: mean {}, p50 {}, p99 {}, max {}",
        us(s.mean),
        us(s.p50 as f64),
        us(s.p99 as f64),
        us(s.max as f64)
    )
}

/// The text of an analysis, one line each.
fn lines(a: &Analysis, format: Format, skipped: u64) -> Vec<String> {
    let mut out = Vec::new();
    let timing = match (a.duration_s, a.iops) {
        (Some(d), Some(iops)) => format!(" over {d:.3}s ({iops:.0} IOPS)"),
        (Some(d), None) => format!(" over {d:.3}s"),
        _ => " (no times in the trace)".to_string(),
    };
    out.push(format!(
        "trace ({}): {} I/Os{timing}; {} reads ({}), {} writes ({}), {} trims; {:.1}% sequential{}",
        format.name(),
        a.records,
        a.reads,
        mib(a.read_bytes),
        a.writes,
        mib(a.write_bytes),
        a.trims,
        a.sequential_pct,
        if skipped > 0 {
            format!("; {skipped} bad record(s) left out")
        } else {
            String::new()
        }
    ));
    let sizes: Vec<String> = a
        .sizes
        .iter()
        .take(6)
        .map(|s| {
            format!(
                "{} {:.1}%",
                iorig_spec::format_size(s.size_bytes),
                100.0 * s.count as f64 / a.records as f64
            )
        })
        .collect();
    out.push(format!("sizes: {}", sizes.join(", ")));
    if let Some(g) = &a.interarrival_ns {
        out.push(spread("between issues", g));
    }
    if let Some(l) = &a.latency_ns {
        out.push(spread("latency in the trace", l));
    }
    out.push(format!(
        "footprint: {} in {} blocks of {} ({} block accesses)",
        mib(a.footprint_bytes),
        a.distinct_blocks,
        iorig_spec::format_size(a.block_bytes),
        a.accesses
    ));
    out.push(hot("hot spot", &a.hot_spot));
    out.push(hot("hot spot, reads", &a.hot_spot_reads));
    out.push(hot("hot spot, writes", &a.hot_spot_writes));
    out.push(hot(
        &format!(
            "hot spot, {} extents",
            iorig_spec::format_size(a.extent_bytes)
        ),
        &a.hot_spot_extents,
    ));
    let curve: Vec<String> = a
        .lru_curve
        .iter()
        .filter(|p| p.cache_bytes >= 1 << 20 || a.footprint_bytes < 1 << 20)
        .map(|p| format!("{} {:.3}", mib(p.cache_bytes), p.hit_ratio))
        .collect();
    if a.lru_curve.is_empty() {
        out.push("LRU curves: not computed (--no-lru)".to_string());
    } else {
        out.push(format!("LRU hit ratio by cache size: {}", curve.join(", ")));
    }
    if let Some(s) = &a.lru_sampling {
        out.push(format!(
            "LRU curves sampled: {} of the blocks ({} blocks, {} accesses followed); hit ratios within about ±{:.3}",
            s.rate, s.sampled_blocks, s.sampled_accesses, s.error_bound
        ));
    }
    out.push(format!(
        "a cache of the whole footprint hits {:.3} (every first access misses)",
        a.max_hit_ratio
    ));
    if let (Some(w), Some(s)) = (
        a.window_s.filter(|_| a.windows.len() > 1),
        a.windows_summary(),
    ) {
        // Windows after silent ones only have nothing to compare with.
        let overlap = match (s.overlap_median_pct, s.overlap_min_pct) {
            (Some(m), Some(lo)) => {
                format!(", {m:.0}% of it hot in the window before (median; lowest {lo:.0}%)")
            }
            _ => String::new(),
        };
        out.push(format!(
            "over time: {} windows of {w}s; IOPS {:.0} to {:.0} (median {:.0}); hot set (80 %) median {}{overlap}",
            a.windows.len(),
            s.iops_min,
            s.iops_max,
            s.iops_median,
            mib(s.hot_bytes_median),
        ));
    }
    if let Some(c) = &a.cache_for_hit {
        out.push(match c.cache_bytes {
            Some(b) => format!("hit ratio {}: an LRU cache of {}", c.hit_ratio, mib(b)),
            None => format!(
                "hit ratio {}: no cache reaches it (at most {:.3})",
                c.hit_ratio, a.max_hit_ratio
            ),
        });
    }
    if let Some(w) = &a.warmup {
        let sets: Vec<String> = w
            .hot_sets
            .iter()
            .map(|h| {
                format!(
                    "{:.0}% in {}",
                    h.share_pct.unwrap_or(0.0),
                    iorig_trace::analyse::duration_text(h.seconds)
                )
            })
            .collect();
        let hit = w
            .for_hit
            .as_ref()
            .map(|h| {
                format!(
                    "; the {} cache in {}",
                    mib(h.bytes),
                    iorig_trace::analyse::duration_text(h.seconds)
                )
            })
            .unwrap_or_default();
        out.push(format!(
            "warm-up at {:.0} backend reads/s of {} ({}): hot sets {}{hit}",
            w.backend_read_iops,
            iorig_spec::format_size(w.fill_bytes),
            w.source,
            sets.join(", ")
        ));
    }
    out
}
