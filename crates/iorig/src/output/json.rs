//! The result document, schema `iorig.result/1` (docs/json-schema.md).

use iorig_engine::run::{IntervalSample, TargetInfo};
use iorig_spec::WorkloadRecord;
use iorig_stats::{CpuUsage, DeviceUsage, IntervalStats, OpSummary};
use serde::Serialize;
use std::collections::BTreeMap;

pub const SCHEMA: &str = "iorig.result/1";

#[derive(Debug, Serialize)]
pub struct ResultDoc {
    pub schema: &'static str,
    pub tool: ToolInfo,
    pub run: RunInfo,
    pub workload: WorkloadRecord,
    pub targets: Vec<TargetJson>,
    pub intervals: Vec<IntervalJson>,
    pub summary: SummaryJson,
}

#[derive(Debug, Serialize)]
pub struct ToolInfo {
    pub name: &'static str,
    pub version: &'static str,
}

#[derive(Debug, Serialize)]
pub struct RunInfo {
    pub id: String,
    pub started: String,
    pub host: String,
    pub labels: BTreeMap<String, String>,
    /// The engine that ran (io_uring may have fallen back to psync).
    pub engine: String,
    /// ok, failed (I/O errors) or interrupted (Ctrl-C).
    pub status: String,
}

#[derive(Debug, Serialize)]
pub struct TargetJson {
    pub path: String,
    pub kind: String,
    pub size_bytes: u64,
    pub device: Option<String>,
}

impl From<&TargetInfo> for TargetJson {
    fn from(t: &TargetInfo) -> Self {
        TargetJson {
            path: t.path.clone(),
            kind: t.kind.to_string(),
            size_bytes: t.size_bytes,
            device: t.device.clone(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct IntervalJson {
    pub t_s: f64,
    pub duration_s: f64,
    pub warmup: bool,
    pub read: OpSummary,
    pub write: OpSummary,
    pub total: OpSummary,
    pub cpu: CpuUsage,
    pub device: Option<DeviceUsage>,
    pub errors: u64,
    /// Longest time in the interval without any completed I/O, measured
    /// from the completions themselves.
    pub longest_gap_ns: u64,
    /// iorig's busiest worker thread's CPU time, percent of one CPU.
    pub worker_busy_max_pct: f64,
}

impl From<&IntervalSample> for IntervalJson {
    fn from(s: &IntervalSample) -> Self {
        IntervalJson {
            t_s: s.t_s,
            duration_s: s.duration_s,
            warmup: s.warmup,
            read: s.stats.read.summary(s.duration_s),
            write: s.stats.write.summary(s.duration_s),
            total: s.stats.total().summary(s.duration_s),
            cpu: s.cpu,
            device: s.device,
            errors: s.stats.errors,
            longest_gap_ns: s.longest_gap_ns,
            worker_busy_max_pct: s.worker_busy_max_pct,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct SummaryJson {
    pub duration_s: f64,
    pub read: OpSummary,
    pub write: OpSummary,
    pub total: OpSummary,
    pub cpu: CpuUsage,
    pub errors: u64,
    pub error_messages: Vec<String>,
    /// Data validation (`--verify`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub validation: Option<crate::verify_cmd::ValidationJson>,
}

impl SummaryJson {
    pub fn new(
        stats: &IntervalStats,
        duration_s: f64,
        cpu: CpuUsage,
        errors: u64,
        messages: &[String],
    ) -> Self {
        SummaryJson {
            duration_s,
            read: stats.read.summary(duration_s),
            write: stats.write.summary(duration_s),
            total: stats.total().summary(duration_s),
            cpu,
            errors,
            error_messages: messages.to_vec(),
            validation: None,
        }
    }

    /// Adds the validation results of a `verify` run.
    pub fn with_validation(
        mut self,
        v: Option<&iorig_engine::verify::ValidationSummary>,
        targets: &[TargetInfo],
    ) -> Self {
        let names: Vec<String> = targets.iter().map(|t| t.path.clone()).collect();
        self.validation = v.map(|v| crate::verify_cmd::ValidationJson::new(v, &names));
        self
    }
}

/// Writes a `--json` document: pretty-printed to FILE, or alone on stdout for `-`.
pub fn write_json_doc<T: Serialize>(
    printer: &super::Printer,
    dest: &str,
    doc: &T,
) -> Result<(), crate::Failure> {
    let text = serde_json::to_string_pretty(doc)
        .map_err(|e| crate::Failure::runtime(format!("encoding JSON: {e}")))?;
    if dest == "-" {
        printer.json_stdout(&text);
        Ok(())
    } else {
        crate::record::write_output(
            "--json",
            std::path::Path::new(dest),
            (text + "\n").as_bytes(),
        )
    }
}
