//! The whole run as one JSON document, schema `iorig.run/1`: the shape of
//! `iorig runs show --json` with every step's intervals added, each interval
//! shaped like an `intervals` entry of iorig.result/1.

use super::{RunData, StepData};
use iorig_store::{AnalysisRow, IntervalRow, Op, TargetFactsRow};
use serde_json::{json, Map, Value};

/// The `schema` of the document; fields may be added, none renamed or
/// removed without a new version.
pub const RUN_SCHEMA: &str = "iorig.run/1";

pub(super) fn run_json(data: &RunData) -> Value {
    let d = &data.detail;
    // The plan as invoked is stored as text; give it back as JSON when it is
    // (it always is when iorig wrote it).
    let plan = d.plan_json.as_deref().map(|text| {
        serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_owned()))
    });
    json!({
        "schema": RUN_SCHEMA,
        "run": {
            "id": d.run.id,
            "kind": d.run.kind,
            "status": d.run.status,
            "started": d.run.started,
            "ended": d.run.ended,
            "host": d.run.host,
            "tool_version": d.run.tool_version,
            "command_line": d.command_line,
            "labels": d.run.labels,
            "plan": plan,
            "system": data.system,
            "targets": data.targets.iter().map(target_json).collect::<Vec<_>>(),
        },
        "steps": data.steps.iter().map(step_json).collect::<Vec<_>>(),
        "analysis": data.plan_analysis.iter().map(analysis_json).collect::<Vec<_>>(),
    })
}

/// A target: path, kind and size, then its facts flattened beside them (a
/// fact never replaces one of the three).
fn target_json(t: &TargetFactsRow) -> Value {
    let mut m = Map::new();
    m.insert("path".into(), json!(t.path));
    m.insert("kind".into(), json!(t.kind));
    m.insert("size_bytes".into(), json!(t.size_bytes));
    if let Ok(Value::Object(facts)) = serde_json::to_value(&t.facts) {
        for (k, v) in facts {
            m.entry(k).or_insert(v);
        }
    }
    Value::Object(m)
}

fn analysis_json(a: &AnalysisRow) -> Value {
    let f = &a.finding;
    json!({"kind": f.kind(), "result": f.body_value().unwrap_or(Value::Null)})
}

/// A step: its parameters, then what `runs show --json` adds, then its
/// intervals. The added keys win over parameters of the same name.
fn step_json(s: &StepData) -> Value {
    let st = &s.step;
    // The workload's fields at the step's top level (the JSON boundary).
    let mut m = match serde_json::to_value(&st.params) {
        Ok(Value::Object(o)) => o,
        _ => Map::new(),
    };
    m.insert("index".into(), json!(st.index));
    m.insert("name".into(), json!(st.name));
    m.insert("role".into(), json!(st.role));
    m.insert("status".into(), json!(st.status));
    m.insert("started".into(), json!(st.started));
    m.insert("ended".into(), json!(st.ended));
    m.insert("summary".into(), json!(st.summary));
    let mut a = Map::new();
    for row in &s.analysis {
        let f = &row.finding;
        a.insert(
            f.kind().as_str().to_owned(),
            f.body_value().unwrap_or(Value::Null),
        );
    }
    m.insert("analysis".into(), Value::Object(a));
    m.insert(
        "intervals".into(),
        Value::Array(intervals_json(&s.intervals)),
    );
    Value::Object(m)
}

/// The stored rows (read, write, total per interval) regrouped into one
/// object per interval.
fn intervals_json(rows: &[IntervalRow]) -> Vec<Value> {
    let mut out = Vec::new();
    for group in rows.chunk_by(|a, b| a.seq == b.seq) {
        let Some(first) = group.first() else { continue };
        let mut m = Map::new();
        m.insert("seq".into(), json!(first.seq));
        m.insert("t_s".into(), json!(first.t_s));
        m.insert("duration_s".into(), json!(first.duration_s));
        m.insert("warmup".into(), json!(first.warmup));
        for row in group {
            m.insert(row.op.as_str().into(), json!(row.op_summary()));
        }
        m.insert(
            "cpu".into(),
            json!({"usr_pct": first.cpu_usr_pct, "sys_pct": first.cpu_sys_pct}),
        );
        m.insert("device".into(), json!(first.device));
        // Errors are stored on the total row only.
        let errors = group
            .iter()
            .find(|r| r.op == Op::Total)
            .map_or(0, |r| r.errors);
        m.insert("errors".into(), json!(errors));
        out.push(Value::Object(m));
    }
    out
}
