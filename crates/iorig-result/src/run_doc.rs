//! The whole stored run as one document, schema `iorig.run/1` (`iorig
//! export --format json`), and its step objects, which `iorig runs show
//! --json` shares. A step object carries the step's workload fields at its
//! top level beside its own keys, so its (de)serialisation is written out
//! here: the workload part still refuses unknown fields.

use crate::{
    five_figures, DeviceUsage, FigureStep, Finding, OpSummary, RunKind, RunStatus, StepRole,
    StepStatus, StepSummary, WorkloadRecord,
};
use iorig_spec::FsOp;
use iorig_stats::sampler::system::SystemFacts;
use serde::de::Error as _;
use serde::ser::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// The `schema` of the document; fields may be added, none renamed or
/// removed without a new version.
pub const RUN_SCHEMA: &str = "iorig.run/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunDoc {
    pub schema: String,
    pub run: RunHeader,
    pub steps: Vec<StepDoc>,
    /// Findings of the whole run (curves).
    pub analysis: Vec<FindingEntry>,
    /// A quick run's five figures ([`crate::five_figures`]); absent for
    /// other runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub figures: Vec<crate::Figure>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunHeader {
    pub id: i64,
    pub kind: RunKind,
    pub status: RunStatus,
    pub started: String,
    pub ended: Option<String>,
    pub host: String,
    pub tool_version: String,
    pub command_line: String,
    pub labels: BTreeMap<String, String>,
    /// The plan as invoked (its source, text and overrides), for plans.
    pub plan: Option<Value>,
    pub system: Option<SystemFacts>,
    pub targets: Vec<TargetDoc>,
}

/// A target and what lies under it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDoc {
    pub path: String,
    pub kind: Option<String>,
    pub size_bytes: Option<u64>,
    pub device: Option<String>,
    pub model: Option<String>,
    pub rotational: Option<bool>,
    pub scheduler: Option<String>,
    pub logical_block_bytes: Option<u64>,
    pub physical_block_bytes: Option<u64>,
    pub filesystem: Option<String>,
}

/// A finding of the run: its kind and body.
#[derive(Debug, Clone, PartialEq)]
pub struct FindingEntry(pub Finding);

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FindingEntryRepr {
    kind: String,
    result: Value,
}

impl Serialize for FindingEntry {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        FindingEntryRepr {
            kind: self.0.kind().as_str().to_owned(),
            result: self.0.body_value().map_err(S::Error::custom)?,
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for FindingEntry {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let r = FindingEntryRepr::deserialize(d)?;
        Finding::from_stored(&r.kind, &r.result.to_string())
            .map(FindingEntry)
            .map_err(D::Error::custom)
    }
}

/// One interval of a stored step: the shape of an `intervals` entry of
/// iorig.result/1, with its position.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntervalDoc {
    pub seq: u64,
    pub t_s: f64,
    pub duration_s: f64,
    pub warmup: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<OpSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<OpSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim: Option<OpSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<OpSummary>,
    /// A file-system workload's operations by kind (reads and writes
    /// included), as `Interval::fs_ops`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub fs_ops: BTreeMap<FsOp, OpSummary>,
    pub cpu: IntervalCpu,
    pub device: Option<DeviceUsage>,
    pub errors: u64,
}

/// Host CPU over an interval, percent of all CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IntervalCpu {
    pub usr_pct: f64,
    pub sys_pct: f64,
}

/// A stored step: its workload's fields, then its own keys, then its
/// findings by kind and (in the export) its intervals.
#[derive(Debug, Clone, PartialEq)]
pub struct StepDoc {
    /// None for a step stored before it was planned, or skipped.
    pub params: Option<WorkloadRecord>,
    pub index: i64,
    pub name: String,
    pub role: StepRole,
    pub status: StepStatus,
    pub started: Option<String>,
    pub ended: Option<String>,
    pub summary: Option<StepSummary>,
    /// At most one finding of each kind.
    pub analysis: Vec<Finding>,
    /// The export has them; `runs show --json` does not.
    pub intervals: Option<Vec<IntervalDoc>>,
    /// A step run on several hosts: how each host ended and its own
    /// summary (its intervals are the export's per-host rows, not here).
    pub hosts: Vec<crate::HostResult>,
    /// A step of several workloads at once: each one's own part (without
    /// intervals).
    pub jobs: Vec<crate::JobResult>,
}

/// The step's own keys; they win over workload fields of the same name.
const STEP_KEYS: [&str; 12] = [
    "index",
    "name",
    "role",
    "status",
    "started",
    "ended",
    "summary",
    "analysis",
    "intervals",
    "hosts",
    "jobs",
    // Written (index + 1), not read back.
    "step",
];

fn to_value<T: Serialize, E: serde::ser::Error>(v: &T) -> Result<Value, E> {
    serde_json::to_value(v).map_err(E::custom)
}

impl Serialize for StepDoc {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.serialize_parts(s, self.intervals.as_ref())
    }
}

impl StepDoc {
    /// Serializes the step with `intervals` as its `intervals` (whatever
    /// `self.intervals` holds), in the place and form the step's own would
    /// take: the export streams a long step's intervals this way, read
    /// from the store while they are written, and its bytes stay those of
    /// the whole document built first.
    pub fn serialize_with_intervals<S: Serializer, I: Serialize + ?Sized>(
        &self,
        s: S,
        intervals: &I,
    ) -> Result<S::Ok, S::Error> {
        self.serialize_parts(s, Some(intervals))
    }

    fn serialize_parts<S: Serializer, I: Serialize + ?Sized>(
        &self,
        s: S,
        intervals: Option<&I>,
    ) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;
        let mut m = match to_value(&self.params)? {
            Value::Object(o) => o,
            _ => Map::new(),
        };
        m.insert("index".into(), to_value(&self.index)?);
        // The number every page and message gives the step (from 1).
        m.insert("step".into(), to_value(&(self.index + 1))?);
        m.insert("name".into(), to_value(&self.name)?);
        m.insert("role".into(), to_value(&self.role)?);
        m.insert("status".into(), to_value(&self.status)?);
        m.insert("started".into(), to_value(&self.started)?);
        m.insert("ended".into(), to_value(&self.ended)?);
        m.insert("summary".into(), to_value(&self.summary)?);
        let mut a = Map::new();
        for f in &self.analysis {
            a.insert(
                f.kind().as_str().to_owned(),
                f.body_value().map_err(S::Error::custom)?,
            );
        }
        m.insert("analysis".into(), Value::Object(a));
        // A place held for the intervals, written below from `intervals`
        // itself, so a long step's are never one value in memory.
        if intervals.is_some() {
            m.insert("intervals".into(), Value::Null);
        }
        if !self.hosts.is_empty() {
            m.insert("hosts".into(), to_value(&self.hosts)?);
        }
        if !self.jobs.is_empty() {
            m.insert("jobs".into(), to_value(&self.jobs)?);
        }
        let mut map = s.serialize_map(Some(m.len()))?;
        for (k, v) in &m {
            match intervals {
                Some(i) if k == "intervals" => map.serialize_entry(k, i)?,
                _ => map.serialize_entry(k, v)?,
            }
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for StepDoc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut m = Map::deserialize(d)?;
        let mut take = |k: &str| m.remove(k).unwrap_or(Value::Null);
        let own: Vec<Value> = STEP_KEYS.iter().map(|k| take(k)).collect();
        let typed = |i: usize| own.get(i).cloned().unwrap_or(Value::Null);
        fn of<T: for<'a> Deserialize<'a>, E: serde::de::Error>(
            key: &str,
            v: Value,
        ) -> Result<T, E> {
            serde_json::from_value(v).map_err(|e| E::custom(format!("{key}: {e}")))
        }
        let analysis_map: Option<BTreeMap<String, Value>> = of("analysis", typed(7))?;
        let mut analysis = Vec::new();
        for (kind, body) in analysis_map.unwrap_or_default() {
            analysis
                .push(Finding::from_stored(&kind, &body.to_string()).map_err(D::Error::custom)?);
        }
        // What is left is the workload; an unknown key fails there.
        let params = if m.is_empty() {
            None
        } else {
            Some(of("workload", Value::Object(m))?)
        };
        Ok(StepDoc {
            params,
            index: of("index", typed(0))?,
            name: of("name", typed(1))?,
            role: of("role", typed(2))?,
            status: of("status", typed(3))?,
            started: of("started", typed(4))?,
            ended: of("ended", typed(5))?,
            summary: of("summary", typed(6))?,
            analysis,
            intervals: of("intervals", typed(8))?,
            hosts: of::<Option<Vec<crate::HostResult>>, _>("hosts", typed(9))?.unwrap_or_default(),
            jobs: of::<Option<Vec<crate::JobResult>>, _>("jobs", typed(10))?.unwrap_or_default(),
        })
    }
}

/// The five figures of stored steps (a quick run's).
pub fn step_figures(steps: &[StepDoc]) -> Vec<crate::Figure> {
    let steps: Vec<FigureStep<'_>> = steps
        .iter()
        .map(|s| FigureStep {
            name: &s.name,
            status: s.status,
            summary: s.summary.as_ref().and_then(|s| s.io()),
            findings: s.analysis.iter().collect(),
        })
        .collect();
    five_figures(&steps)
}
