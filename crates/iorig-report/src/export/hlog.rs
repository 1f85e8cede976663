//! A run's latency histograms for HdrHistogram's own tools: every measured
//! interval's histogram in the HdrHistogram interval log format (what
//! `HistogramLogProcessor`, HdrHistogram's Python `hdrh.log` and its Rust
//! `interval_log` read), and each step's percentile spectrum as CSV (the
//! columns of HdrHistogram's `outputPercentileDistribution`).
//!
//! In the log, untagged lines carry all operations, so a reader that merges
//! untagged lines (the Java processor's default) gets the whole run; lines
//! tagged `read` and `write` carry one direction each. Values are latencies
//! in nanoseconds; the `Interval_Max` column is in milliseconds (divisor
//! 1,000,000, as the Java writer does for nanosecond data).

use super::RunData;
use crate::ReportError;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use iorig_result::{HistKind, Op};
use iorig_store::{RunId, Store};
use std::fmt::Write as _;
use std::io::Write as _;
use std::time::{Duration, SystemTime};

/// The two files of the histogram export.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HlogExport {
    /// The interval log (text).
    pub log: Vec<u8>,
    /// One row per step, operation and percentile step.
    pub percentiles_csv: String,
}

/// Percentile steps per halving of the distance to 100 %, as HdrHistogram's
/// `outputPercentileDistribution` prints by default.
const TICKS_PER_HALF_DISTANCE: u32 = 5;

/// Nanoseconds per unit of the log's `Interval_Max` column (milliseconds).
const MAX_VALUE_DIVISOR: f64 = 1e6;

fn epoch(text: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(text).ok()
}

fn export_err(e: impl std::fmt::Display) -> ReportError {
    ReportError::Export(format!("histogram log: {e}"))
}

/// The interval log and percentile CSV of a run (docs/export.md).
pub fn export_hlog(store: &Store, run: RunId) -> Result<HlogExport, ReportError> {
    let data = RunData::load(store, run)?;
    let d = &data.detail;
    let run_start = epoch(&d.run.started).unwrap_or(SystemTime::UNIX_EPOCH);
    let mut log = Vec::new();
    // The header: what the file is, then the lines HdrHistogram's readers
    // use to place intervals in time.
    let mut head = String::new();
    let _ = writeln!(
        head,
        "#iorig run {} ({}) on {}, started {}: latency in nanoseconds, one histogram per measured interval",
        d.run.id.0, d.run.kind, d.run.host, d.run.started
    );
    head.push_str("#Untagged lines: all operations; Tag=read, Tag=write and Tag=trim: one operation each. Warmup intervals are left out.\n");
    head.push_str("#[Histogram log format version 1.3]\n");
    let start_s = run_start
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let _ = writeln!(head, "#[StartTime: {start_s:.3} (seconds since epoch)]");
    let _ = writeln!(head, "#[BaseTime: {start_s:.3} (seconds since epoch)]");
    head.push_str(
        "\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
    );
    log.extend_from_slice(head.as_bytes());

    let mut serializer = V2DeflateSerializer::new();
    {
        let mut writer = IntervalLogWriterBuilder::new()
            .with_max_value_divisor(MAX_VALUE_DIVISOR)
            .begin_log_with(&mut log, &mut serializer)
            .map_err(export_err)?;
        for s in &data.steps {
            // Every row with its histogram: the log is made in memory.
            let intervals = store.intervals(s.step.id)?;
            // The store's step times are whole seconds, and `started` is
            // taken before the targets are opened (a fill or trim pass may
            // follow); `ended` comes right after the last interval, so the
            // I/O started about that long before it.
            let last_t_s = intervals.iter().map(|i| i.t_s).fold(0.0, f64::max);
            let step_start = s
                .step
                .ended
                .as_deref()
                .and_then(epoch)
                .and_then(|t| t.checked_sub(Duration::from_secs_f64(last_t_s)))
                .or_else(|| s.step.started.as_deref().and_then(epoch))
                .and_then(|t| t.duration_since(run_start).ok())
                .unwrap_or_default();
            writer
                .write_comment(&format!(
                    "step {} {} ({}): {}",
                    s.step.index + 1,
                    s.step.name,
                    s.step.role,
                    s.step.status
                ))
                .map_err(export_err)?;
            for i in intervals.iter().filter(|i| !i.warmup) {
                let tag = match i.op {
                    Op::Total => None,
                    Op::Read => Tag::new("read"),
                    Op::Write => Tag::new("write"),
                    Op::Trim => Tag::new("trim"),
                    // A file-system workload's other kinds, by name.
                    other => Tag::new(other.as_str()),
                };
                // A direction with no I/O in an interval has nothing to say.
                if i.op != Op::Total && i.ops == 0 {
                    continue;
                }
                let Some(hist) = i.histogram() else {
                    writer
                        .write_comment(&format!(
                            "step {} interval {} {}: no histogram stored (recorded before iorig kept them)",
                            s.step.index + 1,
                            i.seq,
                            i.op
                        ))
                        .map_err(export_err)?;
                    continue;
                };
                let hist = hist.map_err(export_err)?;
                let start = step_start + Duration::from_secs_f64((i.t_s - i.duration_s).max(0.0));
                writer
                    .write_histogram(
                        hist.inner(),
                        start,
                        Duration::from_secs_f64(i.duration_s.max(0.0)),
                        tag,
                    )
                    .map_err(export_err)?;
            }
        }
    }

    let mut csv = csv::Writer::from_writer(Vec::new());
    let csv_err = |e: csv::Error| ReportError::Export(format!("percentile CSV: {e}"));
    csv.write_record([
        "run_id",
        "step_index",
        "step",
        "op",
        "value_ns",
        "percentile",
        "total_count",
        "one_over_one_minus_percentile",
    ])
    .map_err(csv_err)?;
    for s in &data.steps {
        for op in [Op::Read, Op::Write, Op::Trim, Op::Total] {
            let Some(h) = store.histogram(s.step.id, op, HistKind::Lat)? else {
                continue;
            };
            if h.is_empty() {
                continue;
            }
            let mut total = 0u64;
            for v in h.inner().iter_quantiles(TICKS_PER_HALF_DISTANCE) {
                total += v.count_since_last_iteration();
                let q = v.quantile_iterated_to();
                let inverse = if q < 1.0 {
                    format!("{:.2}", 1.0 / (1.0 - q))
                } else {
                    String::new()
                };
                csv.write_record([
                    d.run.id.0.to_string(),
                    s.step.index.to_string(),
                    s.step.name.clone(),
                    op.to_string(),
                    v.value_iterated_to().to_string(),
                    format!("{:.12}", q * 100.0),
                    total.to_string(),
                    inverse,
                ])
                .map_err(csv_err)?;
            }
        }
    }
    csv.flush()
        .map_err(|e| ReportError::Export(format!("percentile CSV: {e}")))?;
    let bytes = csv
        .into_inner()
        .map_err(|e| ReportError::Export(format!("percentile CSV: {e}")))?;
    let percentiles_csv = String::from_utf8(bytes).map_err(export_err)?;
    log.flush().map_err(export_err)?;
    Ok(HlogExport {
        log,
        percentiles_csv,
    })
}
