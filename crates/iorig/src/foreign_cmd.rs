//! Other tools' files: `iorig import FILE` prints the iorig plan a fio job
//! file becomes, and `iorig run FILE` runs it as that plan (the same
//! translation, so what import shows is what runs); `--output-format
//! fio-json[+]` writes the result in fio's JSON shape.

use crate::output::Printer;
use crate::plan_cmd::{run_plan, RunOptions};
use crate::store::check_output;
use crate::{exit, Failure};
use iorig_cli::{ForeignArgs, RunArgs};
use iorig_import::fio::{self, JobMeta, Translation};
use iorig_import::{fio_json, Format, SystemLoader};
use iorig_run::plan::{Invocation, StepResult};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// The shape of `--json` (and of stdout when no --json is given for fio's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Iorig,
    FioJson,
    FioJsonPlus,
}

impl OutputFormat {
    pub fn parse(v: Option<&str>) -> Result<OutputFormat, Failure> {
        match v {
            None | Some("iorig") => Ok(OutputFormat::Iorig),
            Some("fio-json") | Some("json") => Ok(OutputFormat::FioJson),
            Some("fio-json+") | Some("json+") => Ok(OutputFormat::FioJsonPlus),
            Some(other) => Err(Failure::usage(format!(
                "--output-format {other}: unknown; give iorig, fio-json or fio-json+"
            ))),
        }
    }
    pub fn is_fio(self) -> bool {
        self != OutputFormat::Iorig
    }
}

/// The format of FILE: `--format`, else its content.
pub fn format_of(f: &ForeignArgs, text: &str) -> Result<Format, Failure> {
    match &f.input_format {
        Some(v) => Format::parse(v).map_err(|e| Failure::usage(e.to_string())),
        None => Ok(iorig_import::detect(text)),
    }
}

/// A job file or parameter file, held to a line's and a file's cap (a
/// line past 64 KiB is refused by its number, not read on).
fn read(path: &Path) -> Result<String, Failure> {
    iorig_import::read_text(path).map_err(|e| Failure::usage(format!("{}: {e}", path.display())))
}

fn translate_fio(path: &Path, text: &str, f: &ForeignArgs) -> Result<Translation, Failure> {
    fio::translate(
        path,
        text,
        &SystemLoader,
        &fio::Options {
            ignore_unsupported: f.ignore_unsupported,
        },
    )
    .map_err(|e| Failure::usage(e.to_string()))
}

/// `--set NAME=VALUE` as vdbench's variables.
fn vars(f: &ForeignArgs) -> Result<std::collections::BTreeMap<String, String>, Failure> {
    f.set
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.trim_start_matches('$').to_string(), v.to_string()))
                .ok_or_else(|| {
                    Failure::usage(format!(
                        "--set {kv}: write NAME=VALUE, e.g. --set lun=/dev/sdb"
                    ))
                })
        })
        .collect()
}

/// A job file or parameter file as an iorig plan.
struct Plan {
    toml: String,
    notices: Vec<String>,
    ignored: Vec<String>,
    /// The fio translation (its jobs and logs), for fio's shapes.
    fio: Option<Translation>,
    source: String,
    /// A vdbench file's `journal=yes` (or `--journal`).
    journal: bool,
}

fn translate(
    path: &Path,
    text: &str,
    format: Format,
    f: &ForeignArgs,
    verify: bool,
    journal: bool,
) -> Result<Plan, Failure> {
    match format {
        Format::Fio => {
            if !f.set.is_empty() {
                return Err(Failure::usage(
                    "--set gives a vdbench parameter file's $variables; a fio job file takes ${VAR} from the environment",
                ));
            }
            let t = translate_fio(path, text, f)?;
            Ok(Plan {
                toml: t.plan_toml.clone(),
                notices: t.notices.clone(),
                ignored: t.ignored.clone(),
                source: format!("fio:{}", path.display()),
                fio: Some(t),
                journal: false,
            })
        }
        Format::Vdbench => {
            let t = iorig_import::vdbench::translate(
                path,
                text,
                &iorig_import::vdbench::Options {
                    vars: vars(f)?,
                    ignore_unsupported: f.ignore_unsupported,
                    verify,
                    journal,
                },
            )
            .map_err(|e| Failure::usage(e.to_string()))?;
            Ok(Plan {
                toml: t.plan_toml,
                notices: t.notices,
                ignored: t.ignored,
                source: format!("vdbench:{}", path.display()),
                fio: None,
                journal: t.journal,
            })
        }
        Format::Iorig => Err(Failure::usage(format!(
            "{}: this is neither a fio job file nor a vdbench parameter file; give --format fio or --format vdbench if it is one",
            path.display()
        ))),
    }
}

fn tell_plan(printer: &Printer, p: &Plan) {
    for n in &p.notices {
        printer.notice(n);
    }
    if !p.ignored.is_empty() {
        printer.notice(&format!(
            "left out (--ignore-unsupported): {}",
            p.ignored.join("; ")
        ));
    }
}

/// `iorig import FILE`.
pub fn import(path: &Path, f: &ForeignArgs) -> Result<u8, Failure> {
    let text = read(path)?;
    let format = format_of(f, &text)?;
    let p = translate(path, &text, format, f, false, false)?;
    // The plan on stdout, what was said about it on stderr.
    let printer = Printer::new(true, false);
    tell_plan(&printer, &p);
    printer.json_stdout(p.toml.trim_end());
    Ok(exit::OK)
}

/// `iorig run FILE` with a fio job file or a vdbench parameter file: the
/// plan it becomes, run here (or on the parameter file's hosts).
pub fn run(a: &RunArgs, path: &Path, text: &str, format: Format) -> Result<u8, Failure> {
    refuse_flags(a, format)?;
    let out_format = OutputFormat::parse(a.output_format.as_deref())?;
    if out_format.is_fio() && format != Format::Fio {
        return Err(Failure::usage(
            "--output-format fio-json is written for fio job files and iorig workloads; drop it (--vdbench-out DIR writes vdbench's own files)",
        ));
    }
    if let Some(j) = a.json.as_deref().filter(|j| *j != "-") {
        check_output("--json", Path::new(j))?;
    }
    if (out_format == OutputFormat::Iorig && a.json.is_some() || a.foreign.vdbench_out.is_some())
        && a.record.no_db
    {
        return Err(Failure::usage(
            "--json (iorig's shape) and --vdbench-out of a job file's run are made from the stored run; drop --no-db",
        ));
    }
    if let Some(d) = &a.foreign.vdbench_out {
        crate::vdbench_out::check(d)?;
    }
    let verify = a.workload.verify == Some(true);
    let p = translate(path, text, format, &a.foreign, verify, a.journal.is_some())?;
    // fio's JSON goes to stdout unless --json names a file; the text then
    // goes to stderr, so stdout is one JSON document and nothing else.
    let json_stdout = a.json.as_deref() == Some("-") || (out_format.is_fio() && a.json.is_none());
    let printer = Printer::new(json_stdout, a.quiet);
    tell_plan(&printer, &p);
    let mut inv = Invocation::from_text(p.source.clone(), p.toml.clone());
    inv.allow_destroy = a.allow_destroy;
    // vdbench's journal: where --journal says, or beside the parameter
    // file (never on the storage under test).
    if p.journal {
        let j = match &a.journal {
            Some(j) => j.clone(),
            None => {
                let mut name = path.file_name().unwrap_or_default().to_os_string();
                name.push(".jnl");
                path.with_file_name(name)
            }
        };
        printer.notice(&format!("journal: {}", j.display()));
        inv.journal = Some(j);
    }
    // The stored run says where it came from and what was left out.
    let mut labels = crate::labels(&a.record.labels)?;
    labels
        .entry("source".into())
        .or_insert_with(|| p.source.clone());
    if !p.ignored.is_empty() {
        labels.insert("ignored".into(), p.ignored.join("; "));
    }
    let (code, results, run) = run_plan(
        inv,
        RunOptions {
            kind: iorig_store::RunKind::Plan,
            db: a.record.db.clone(),
            no_db: a.record.no_db,
            labels,
            dry_run: a.dry_run,
            // A job that ends by its bytes has no time to estimate.
            yes: true,
            quiet: a.quiet,
            hosts: iorig_cli::HostArgs::default(),
            metrics: a.metrics.clone(),
            collect: a.collect.collect.clone(),
            text_to_stderr: json_stdout,
        },
    )?;
    if a.dry_run {
        return Ok(code);
    }
    if let Some(t) = &p.fio {
        write_logs(&t.jobs, &results)?;
    }
    if let (Some(d), Some(id)) = (&a.foreign.vdbench_out, run) {
        let store = crate::store::open_existing(a.record.db.as_ref())?;
        crate::vdbench_out::write(&store, id, d)?;
        printer.notice(&format!(
            "vdbench files: {}/flatfile.html, {}/summary.html",
            d.display(),
            d.display()
        ));
    }
    let dest = a.json.clone().unwrap_or_else(|| "-".into());
    match (out_format, &p.fio) {
        (OutputFormat::Iorig, _) => {
            if let (Some(_), Some(id)) = (&a.json, run) {
                let store = crate::store::open_existing(a.record.db.as_ref())?;
                let doc = iorig_report::export::export_json(&store, id)
                    .map_err(|e| Failure::runtime(e.to_string()))?;
                crate::output::json::write_json_doc(&printer, &dest, &doc)?;
            }
        }
        (f, Some(t)) => {
            let doc = fio_document(t, &results, f == OutputFormat::FioJsonPlus);
            crate::output::json::write_json_doc(&printer, &dest, &doc)?;
        }
        (_, None) => {}
    }
    Ok(code)
}

/// One direction's figures of an interval.
type Pick = fn(&iorig_result::Interval) -> &iorig_result::OpSummary;

/// fio's `*_bw.1.log`, `*_iops.1.log` and `*_lat/_clat/_slat.1.log` of
/// the jobs that asked for them: one line per measured interval and
/// direction (`msec, value, ddir, 0, 0`, with `log_offset` `msec, value,
/// ddir, 0, 0, 0`), values averaged over the interval
/// as fio does with `log_avg_msec` (bandwidth in KiB/s, latency in ns).
fn write_logs(jobs: &[JobMeta], results: &[StepResult]) -> Result<(), Failure> {
    for m in jobs {
        let l = &m.logs;
        if l.bw.is_none() && l.lat.is_none() && l.iops.is_none() {
            continue;
        }
        let Some(part) = part_of(m, results) else {
            continue;
        };
        let r = &part.result;
        let w = &r.workload;
        // fio's directions: 0 read, 1 write.
        let mut dirs: Vec<(u8, Pick)> = Vec::new();
        if w.read_pct > 0.0 {
            dirs.push((0, |i| &i.read));
        }
        if w.read_pct + w.trim_pct < 100.0 {
            dirs.push((1, |i| &i.write));
        }
        let warm_end_s = r
            .intervals
            .iter()
            .filter(|i| i.warmup)
            .map(|i| i.t_s)
            .fold(0.0, f64::max);
        let lines = |value: &dyn Fn(&iorig_result::OpSummary) -> f64| -> String {
            let mut out = String::new();
            for i in r.intervals.iter().filter(|i| !i.warmup) {
                let ms = ((i.t_s - warm_end_s) * 1e3).round() as u64;
                for (d, pick) in &dirs {
                    // time, value, ddir, bs, [offset,] priority: an
                    // averaged line has no one block size or offset.
                    let offset = if l.offset { "0, " } else { "" };
                    out.push_str(&format!(
                        "{ms}, {}, {d}, 0, {offset}0\n",
                        value(pick(i)).round() as u64
                    ));
                }
            }
            out
        };
        let write = |name: &str, kind: &str, text: String| -> Result<(), Failure> {
            let path = format!("{name}_{kind}.1.log");
            crate::store::write_output("write_*_log", Path::new(&path), text.as_bytes())
        };
        if let Some(n) = &l.bw {
            write(n, "bw", lines(&|o| o.bw_bytes_per_s / 1024.0))?;
        }
        if let Some(n) = &l.iops {
            write(n, "iops", lines(&|o| o.iops))?;
        }
        if let Some(n) = &l.lat {
            write(n, "lat", lines(&|o| o.lat_ns.mean as f64))?;
            write(
                n,
                "clat",
                lines(&|o| o.service_lat_ns.map_or(o.lat_ns.mean, |s| s.mean) as f64),
            )?;
            write(n, "slat", lines(&|_| 0.0))?;
        }
    }
    Ok(())
}

/// Flags that describe a workload or its outputs belong to iorig's own
/// workloads; a job file says all of that itself. `--verify` and
/// `--journal` are vdbench's `-v` and `-j` for a parameter file.
fn refuse_flags(a: &RunArgs, format: Format) -> Result<(), Failure> {
    let mut w = a.workload.clone();
    if format == Format::Vdbench {
        w.verify = None;
    }
    let given = [
        (!a.targets.is_empty(), "--target"),
        (
            w != iorig_spec::WorkloadFile::default(),
            "workload flags (--bs, --read, ...)",
        ),
        (
            a.journal.is_some() && format != Format::Vdbench,
            "--journal",
        ),
        (a.csv.is_some(), "--csv"),
        (a.lat_log.is_some(), "--lat-log"),
        (a.trace_out.is_some(), "--trace-out"),
        (
            a.hosts.hosts.is_some() || a.hosts.hosts_file.is_some(),
            "--hosts",
        ),
    ];
    if let Some((_, flag)) = given.iter().find(|(g, _)| *g) {
        return Err(Failure::usage(format!(
            "{flag} does not apply to a job or parameter file, which sets its own targets and options; edit the file, or run iorig import FILE > plan.toml and change the plan"
        )));
    }
    if format == Format::Fio && !a.foreign.set.is_empty() {
        return Err(Failure::usage(
            "--set gives a vdbench parameter file's $variables; a fio job file takes ${VAR} from the environment",
        ));
    }
    Ok(())
}

/// fio's JSON document of the jobs that ran.
fn fio_document(t: &Translation, results: &[StepResult], plus: bool) -> serde_json::Value {
    let jobs = &t.jobs;
    let mut figures = Vec::new();
    let mut disks: Vec<fio_json::DiskUtil> = Vec::new();
    // fio's filecreate, filestat and filedelete count each file operation
    // as an I/O of the job's direction (read unless rw writes): iorig's
    // creates, stats or deletes go there.
    let mut tree_stats = std::collections::BTreeMap::new();
    for m in jobs {
        let Some(part) = part_of(m, results) else {
            continue;
        };
        let Some(fs) = &part.result.workload.fs else {
            continue;
        };
        let kind = fs.ops.split([':', ',']).next().unwrap_or("");
        let Some(op) = iorig_spec::FsOp::ALL.iter().find(|o| o.as_str() == kind) else {
            continue;
        };
        let Some(op_stats) = part.stats.fs_op(*op) else {
            continue;
        };
        let writes = m
            .options
            .iter()
            .any(|(k, v)| matches!(k.as_str(), "rw" | "readwrite") && v.contains("write"));
        let mut st = part.stats.clone();
        st.reset();
        st.meta.clear();
        if writes {
            st.write = op_stats.clone();
        } else {
            st.read = op_stats.clone();
        }
        tree_stats.insert((m.step, m.position), st);
    }
    for m in jobs {
        let Some(part) = part_of(m, results) else {
            // Not run (an earlier step failed or was interrupted).
            continue;
        };
        let r = &part.result;
        let measured: Vec<f64> = r
            .intervals
            .iter()
            .filter(|i| !i.warmup)
            .filter_map(|i| i.device.map(|d| d.util_pct))
            .collect();
        if !measured.is_empty() {
            let util = measured.iter().sum::<f64>() / measured.len() as f64;
            for t in &r.targets {
                if let Some(name) = &t.device {
                    match disks.iter_mut().find(|d| d.name == *name) {
                        Some(d) => d.util_pct = d.util_pct.max(util),
                        None => disks.push(fio_json::DiskUtil {
                            name: name.clone(),
                            util_pct: util,
                        }),
                    }
                }
            }
        }
        figures.push(fio_json::JobFigures {
            name: &m.name,
            groupid: m.groupid,
            options: &m.options,
            stats: tree_stats.get(&(m.step, m.position)).unwrap_or(&part.stats),
            intervals: &r.intervals,
            // fio's runtime of a delayed job starts after its delay.
            runtime_s: (r.summary.duration_s
                - (r.workload.start_delay_s.unwrap_or(0.0) - r.workload.warmup_s).max(0.0))
            .max(0.0),
            workers_cpu: r.summary.workers_cpu,
            host_usr_cpu_pct: r.summary.cpu.usr_pct,
            host_sys_cpu_pct: r.summary.cpu.sys_pct,
            errors: r.summary.errors,
            qd: r.workload.qd,
            latency: m.latency.as_ref().map(|c| fio_json::LatencyTarget {
                target_ns: c.threshold_ns,
                percentile: c.percentile,
                window_ns: c.window_ns,
            }),
        });
    }
    fio_json::document(&figures, &t.global_options, &disks, plus, now_ms())
}

/// The part of `results` that is fio job `m`: its job in the step of its
/// block. A latency_target job's block is a curve: fio reports the load it
/// settled on, so its part is the curve's best step under the target at the
/// percentile, or its lightest step when none kept under it.
fn part_of<'a>(m: &JobMeta, results: &'a [StepResult]) -> Option<&'a iorig_run::JobPart> {
    let block = m.step + 1;
    let mut of_block = results
        .iter()
        .filter(|r| r.step.block == block && r.summary.is_some());
    let r = match &m.latency {
        None => of_block.next()?,
        Some(_) => {
            let steps: Vec<&StepResult> = of_block.collect();
            let best = iorig_run::plan::curve_findings(results)
                .into_iter()
                .find(|c| steps.iter().any(|r| c.steps.contains(&r.step.index)))
                .and_then(|c| c.best_under_pct_step);
            match best.and_then(|n| steps.iter().find(|r| r.step.index + 1 == n)) {
                Some(r) => r,
                None => steps.into_iter().min_by(|a, b| {
                    let iops = |r: &StepResult| r.summary.as_ref().map_or(0.0, |s| s.total.iops);
                    iops(a).total_cmp(&iops(b))
                })?,
            }
        }
    };
    r.jobs.get(m.position)
}

/// fio's JSON document of one `iorig run` workload: one job, named after
/// the run, its options the workload's keys.
pub fn fio_document_of_run(
    layer: &iorig_spec::WorkloadFile,
    outcome: &iorig_run::single::SingleOutcome,
    f: OutputFormat,
) -> serde_json::Value {
    let options = layer_options(layer);
    let d = &outcome.doc;
    let figures = fio_json::JobFigures::of_workload(
        &options,
        &outcome.stats,
        &d.intervals,
        &d.summary,
        d.workload.qd,
    );
    fio_json::document(
        &[figures],
        &[],
        &[],
        f == OutputFormat::FioJsonPlus,
        now_ms(),
    )
}

/// fio's client-mode document of a run on several hosts: each host's part
/// in `client_stats` (with its hostname and port), then "All clients".
pub fn fio_document_of_hosts(
    layer: &iorig_spec::WorkloadFile,
    outcome: &iorig_run::single::SingleOutcome,
    f: OutputFormat,
) -> serde_json::Value {
    let options = layer_options(layer);
    let d = &outcome.doc;
    let job = |stats, intervals, summary| {
        fio_json::JobFigures::of_workload(&options, stats, intervals, summary, d.workload.qd)
    };
    let clients: Vec<fio_json::ClientFigures> = d
        .hosts
        .iter()
        .zip(&outcome.host_stats)
        .map(|(h, stats)| fio_json::ClientFigures {
            hostname: &h.hostname,
            port: h
                .address
                .rsplit(':')
                .next()
                .and_then(|p| p.parse().ok())
                .unwrap_or(0),
            job: job(stats, &h.intervals, &h.summary),
        })
        .collect();
    let all = job(&outcome.stats, &d.intervals, &d.summary);
    fio_json::client_document(&clients, &all, f == OutputFormat::FioJsonPlus, now_ms())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// A workload layer's keys as fio's `job options`.
fn layer_options(layer: &iorig_spec::WorkloadFile) -> Vec<(String, String)> {
    let mut options = Vec::new();
    if let Ok(serde_json::Value::Object(m)) = serde_json::to_value(layer) {
        for (k, v) in m {
            let text = match v {
                serde_json::Value::Null => continue,
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            };
            options.push((k, text));
        }
    }
    options
}
