//! fio's outputs of a run: the JSON document (`--output-format json` and
//! `json+`, one job, a plan's jobs, or fio's client mode for many hosts) and
//! the `write_bw_log`/`write_iops_log`/`write_lat_log` files, from iorig's
//! typed results. The figures' shapes are [`iorig_import::fio_json`]'s.

use crate::plan::StepResult;
use crate::single::SingleOutcome;
use crate::RunError;
use iorig_import::fio::{JobMeta, Translation};
use iorig_import::fio_json;
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
    /// `--output-format`'s value; none is iorig's own.
    pub fn parse(v: Option<&str>) -> Result<OutputFormat, RunError> {
        match v {
            None | Some("iorig") => Ok(OutputFormat::Iorig),
            Some("fio-json") | Some("json") => Ok(OutputFormat::FioJson),
            Some("fio-json+") | Some("json+") => Ok(OutputFormat::FioJsonPlus),
            Some(other) => Err(RunError::usage(format!(
                "--output-format {other}: unknown; give iorig, fio-json or fio-json+"
            ))),
        }
    }

    pub fn is_fio(self) -> bool {
        self != OutputFormat::Iorig
    }

    fn plus(self) -> bool {
        self == OutputFormat::FioJsonPlus
    }
}

/// One direction's figures of an interval.
type Pick = fn(&iorig_result::Interval) -> &iorig_result::OpSummary;

/// fio's `*_bw.1.log`, `*_iops.1.log` and `*_lat/_clat/_slat.1.log` of
/// the jobs that asked for them: one line per measured interval and
/// direction (`msec, value, ddir, 0, 0`, with `log_offset` `msec, value,
/// ddir, 0, 0, 0`), values averaged over the interval
/// as fio does with `log_avg_msec` (bandwidth in KiB/s, latency in ns).
pub fn write_logs(jobs: &[JobMeta], results: &[StepResult]) -> Result<(), RunError> {
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
        let write = |name: &str, kind: &str, text: String| -> Result<(), RunError> {
            let path = format!("{name}_{kind}.1.log");
            Ok(iorig_outfile::write_atomic(
                "write_*_log",
                Path::new(&path),
                text.as_bytes(),
            )?)
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

/// fio's JSON document of the jobs that ran.
pub fn document_of_plan(
    t: &Translation,
    results: &[StepResult],
    f: OutputFormat,
) -> serde_json::Value {
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
        // The job's own rw, else [global]'s.
        let writes = m
            .options
            .iter()
            .chain(&t.global_options)
            .find(|(k, _)| matches!(k.as_str(), "rw" | "readwrite"))
            .is_some_and(|(_, v)| v.contains("write"));
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
    fio_json::document(&figures, &t.global_options, &disks, f.plus(), now_ms())
}

/// The part of `results` that is fio job `m`: its job in the step of its
/// block. A latency_target job's block is a curve: fio reports the load it
/// settled on, so its part is the curve's best step under the target at the
/// percentile, or its lightest step when none kept under it.
fn part_of<'a>(m: &JobMeta, results: &'a [StepResult]) -> Option<&'a crate::JobPart> {
    let block = m.step + 1;
    let mut of_block = results
        .iter()
        .filter(|r| r.step.block == block && r.summary.is_some());
    let r = match &m.latency {
        None => of_block.next()?,
        Some(_) => {
            let steps: Vec<&StepResult> = of_block.collect();
            let best = crate::plan::curve_findings(results)
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
pub fn document_of_run(
    layer: &iorig_spec::WorkloadFile,
    outcome: &SingleOutcome,
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
    fio_json::document(&[figures], &[], &[], f.plus(), now_ms())
}

/// fio's client-mode document of a run on several hosts: each host's part
/// in `client_stats` (with its hostname and port), then "All clients".
pub fn document_of_hosts(
    layer: &iorig_spec::WorkloadFile,
    outcome: &SingleOutcome,
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
    fio_json::client_document(&clients, &all, f.plus(), now_ms())
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
