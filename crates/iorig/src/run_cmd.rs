//! `iorig run`: one workload, from flags and/or a workload file to the interval
//! table, JSON and CSV.

use crate::cli::RunArgs;
use crate::output::json::{
    IntervalJson, ResultDoc, RunInfo, SummaryJson, TargetJson, ToolInfo, SCHEMA,
};
use crate::output::{csv, table, Printer};
use crate::{exit, Failure};
use crossbeam_channel::unbounded;
use iorig_engine::run::{self, RunEvent};
use iorig_engine::EngineError;
use iorig_spec::{OneOrMany, Rate, StrOrNum, WorkloadFile};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

fn s(v: &Option<String>) -> Option<StrOrNum> {
    v.as_ref().map(|x| StrOrNum::Str(x.clone()))
}

/// The command line as a workload layer.
fn cli_layer(a: &RunArgs) -> Result<WorkloadFile, Failure> {
    let mut labels = BTreeMap::new();
    for l in &a.labels {
        let (k, v) = l.split_once('=').ok_or_else(|| {
            Failure::usage(format!(
                "bad --label '{l}': write KEY=VALUE, e.g. --label array=A"
            ))
        })?;
        if k.trim().is_empty() {
            return Err(Failure::usage(format!(
                "bad --label '{l}': the key is empty"
            )));
        }
        labels.insert(k.trim().to_string(), v.to_string());
    }
    Ok(WorkloadFile {
        target: if a.targets.is_empty() {
            None
        } else {
            Some(OneOrMany::Many(a.targets.clone()))
        },
        size: s(&a.size),
        bs: s(&a.bs),
        read: s(&a.read),
        random: s(&a.random),
        qd: s(&a.qd),
        submit_batch: s(&a.submit_batch),
        threads: s(&a.threads),
        engine: a.engine.clone(),
        direct: a.direct.then_some(true),
        buffered: a.buffered.then_some(true),
        sync: a.sync.then_some(true),
        dsync: a.dsync.then_some(true),
        rate: s(&a.rate),
        time: s(&a.time),
        warmup: s(&a.warmup),
        interval: s(&a.interval),
        range: a.range.clone(),
        dist: a.dist.clone(),
        data: a.data.clone(),
        seed: a.seed,
        labels: if labels.is_empty() {
            None
        } else {
            Some(labels)
        },
        fault: if a.faults.is_empty() {
            None
        } else {
            Some(a.faults.clone())
        },
    })
}

fn check_output_path(flag: &str, path: &Path) -> Result<(), Failure> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(Failure::usage(format!(
            "{flag} {}: directory {} does not exist; create it or choose another path",
            path.display(),
            parent.display()
        )));
    }
    Ok(())
}

fn engine_failure(e: EngineError) -> Failure {
    if e.is_usage() {
        Failure::usage(e.to_string())
    } else {
        Failure::runtime(e.to_string())
    }
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

fn run_id(now: SystemTime) -> String {
    let ts = humantime::format_rfc3339_seconds(now).to_string();
    let compact: String = ts.chars().filter(|c| c.is_ascii_digit()).take(14).collect();
    let nanos = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mix =
        (nanos as u64 ^ (std::process::id() as u64) << 20).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    format!(
        "{}-{}-{:06x}",
        &compact[..8.min(compact.len())],
        &compact[8.min(compact.len())..],
        mix >> 40
    )
}

pub fn run(a: RunArgs) -> Result<u8, Failure> {
    // 1. The workload: file, then flags on top.
    let mut layer = WorkloadFile::default();
    if let Some(path) = &a.file {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::usage(format!("workload file {}: {e}", path.display())))?;
        layer = WorkloadFile::from_toml(&path.display().to_string(), &text)
            .map_err(|e| Failure::usage(e.to_string()))?;
    }
    let layer = layer.overlay(cli_layer(&a)?);
    let now = SystemTime::now();
    let default_seed = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1);
    let w = layer
        .resolve(default_seed)
        .map_err(|e| Failure::usage(e.to_string()))?;
    if let Some(db) = &a.db {
        return Err(Failure::usage(format!(
            "--db {}: the result store is not available yet in this version; use --json or --csv (or --no-db)",
            db.display()
        )));
    }
    let json_to_stdout = a.json.as_deref() == Some("-");
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        check_output_path("--json", Path::new(j))?;
    }
    if let Some(c) = &a.csv {
        check_output_path("--csv", c)?;
    }

    // 2. Decide everything without writing.
    let planned = run::plan(&w, a.allow_destroy).map_err(engine_failure)?;
    let mut printer = Printer::new(json_to_stdout, a.quiet);
    for n in &planned.notices {
        printer.notice(n);
    }

    // Ctrl-C: the first stops the run cleanly, a second one exits at once.
    let stop = Arc::new(AtomicBool::new(false));
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        let interrupted = interrupted.clone();
        let _ = ctrlc::set_handler(move || {
            if interrupted.swap(true, Ordering::SeqCst) {
                std::process::exit(exit::INTERRUPTED as i32);
            }
            stop.store(true, Ordering::SeqCst);
        });
    }

    // 3. Create and open targets.
    let engine_name = planned.engine.name().to_string();
    let mut bar: Option<indicatif::ProgressBar> = None;
    let mut bar_path: Option<String> = None;
    let prepared = run::open(planned, &mut |p| {
        let path = p.path.display().to_string();
        if bar_path.as_deref() != Some(path.as_str()) {
            if let Some(b) = bar.take() {
                b.finish_and_clear();
            }
            bar = printer.fill_bar(&path, p.total_bytes);
            bar_path = Some(path);
        }
        if let Some(b) = &bar {
            b.set_position(p.done_bytes);
        }
    })
    .map_err(engine_failure)?;
    if let Some(b) = bar.take() {
        b.finish_and_clear();
    }

    let started = humantime::format_rfc3339_seconds(now).to_string();
    let id = run_id(now);
    if !a.quiet {
        let targets: Vec<String> = prepared
            .info
            .iter()
            .map(|t| {
                format!(
                    "{} ({}, {})",
                    t.path,
                    t.kind,
                    table::human_bytes(t.size_bytes)
                )
            })
            .collect();
        printer.line(&format!(
            "iorig run {id}: bs {} read {}% random {}% qd {} x {} worker(s), {}, {}{}, rate {}, {}s{} on {}, seed {}",
            w.bs,
            w.read_pct,
            w.random_pct,
            w.qd,
            w.threads,
            engine_name,
            if w.direct { "direct" } else { "buffered" },
            match w.sync {
                iorig_spec::SyncMode::None => "",
                iorig_spec::SyncMode::Sync => "+sync",
                iorig_spec::SyncMode::Dsync => "+dsync",
            },
            match w.rate {
                Rate::Max => "max".to_string(),
                Rate::Iops(r) => format!("{r} IOPS"),
            },
            w.time.as_secs_f64(),
            if w.warmup.is_zero() {
                String::new()
            } else {
                format!(" after {}s warmup", w.warmup.as_secs_f64())
            },
            targets.join(", "),
            w.seed
        ));
        for l in table::HEADER {
            printer.line(l);
        }
    }

    let mut csv_out = match &a.csv {
        Some(path) => {
            let mut f = std::fs::File::create(path)
                .map_err(|e| Failure::runtime(format!("--csv {}: {e}", path.display())))?;
            let _ = writeln!(f, "{}", csv::header());
            Some(f)
        }
        None => None,
    };

    // 4. Run, printing intervals as they complete.
    printer.start_live();
    let (tx, rx) = unbounded::<RunEvent>();
    let total_s = (w.warmup + w.time).as_secs_f64();
    let mut intervals: Vec<IntervalJson> = Vec::new();
    let outcome = std::thread::scope(|scope| {
        let worker = scope.spawn(|| {
            let r = run::execute(&prepared, stop.clone(), &tx);
            drop(tx);
            r
        });
        for ev in rx.iter() {
            match ev {
                RunEvent::Interval(sample) => {
                    let clock = wall_clock();
                    if !printer.quiet {
                        printer.line(&table::interval_row(&sample, &clock));
                    }
                    printer.set_live(table::live_line(&sample, total_s));
                    let j = IntervalJson::from(&*sample);
                    if let Some(f) = csv_out.as_mut() {
                        let _ = writeln!(f, "{}", csv::row(&j));
                        let _ = f.flush();
                    }
                    intervals.push(j);
                }
                RunEvent::WorkerError { worker, message } => {
                    printer.notice(&format!("worker {worker} stopped: {message}"));
                }
            }
        }
        worker.join()
    });
    printer.end_live();
    let outcome = match outcome {
        Ok(r) => r.map_err(engine_failure)?,
        Err(_) => return Err(Failure::runtime("the run thread panicked")),
    };

    // 5. Average line, summary, JSON.
    let was_interrupted = interrupted.load(Ordering::SeqCst);
    if !a.quiet {
        printer.line(&table::row(
            &wall_clock(),
            "avg",
            &outcome.summary,
            outcome.measured_s,
            outcome.cpu,
        ));
    }
    for l in table::summary_lines(
        &outcome.summary,
        outcome.measured_s,
        outcome.cpu,
        outcome.summary.errors,
    ) {
        printer.line(&l);
    }
    let status = if was_interrupted {
        "interrupted"
    } else if outcome.errors > 0 {
        "failed"
    } else {
        "ok"
    };
    if outcome.errors > 0 {
        printer.notice(&format!(
            "{} I/O error(s); first: {}",
            outcome.errors,
            outcome
                .error_messages
                .first()
                .map(String::as_str)
                .unwrap_or("?")
        ));
    }
    if was_interrupted {
        printer.notice("interrupted: results of the completed intervals are kept");
    }
    if let Some(j) = &a.json {
        let doc = ResultDoc {
            schema: SCHEMA,
            tool: ToolInfo {
                name: "iorig",
                version: env!("CARGO_PKG_VERSION"),
            },
            run: RunInfo {
                id,
                started,
                host: host_name(),
                labels: w.labels.clone(),
                engine: engine_name,
                status: status.to_string(),
            },
            workload: w.record(),
            targets: prepared.info.iter().map(TargetJson::from).collect(),
            intervals,
            summary: SummaryJson::new(
                &outcome.summary,
                outcome.measured_s,
                outcome.cpu,
                outcome.summary.errors,
                &outcome.error_messages,
            ),
        };
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| Failure::runtime(format!("encoding JSON: {e}")))?;
        if j == "-" {
            printer.json_stdout(&text);
        } else {
            std::fs::write(j, text + "\n")
                .map_err(|e| Failure::runtime(format!("--json {j}: {e}")))?;
        }
    }
    Ok(if was_interrupted {
        exit::INTERRUPTED
    } else if outcome.errors > 0 {
        exit::RUNTIME
    } else {
        exit::OK
    })
}

fn wall_clock() -> String {
    // HH:MM:SS in UTC from the RFC 3339 form; enough to line up with other logs.
    let t = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    t.get(11..19).unwrap_or("").to_string()
}
