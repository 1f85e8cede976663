//! The whole run as one JSON document, schema `iorig.run/1`
//! ([`iorig_result::RunDoc`]): the shape of `iorig runs show --json` with
//! every step's intervals added, each interval shaped like an `intervals`
//! entry of iorig.result/1.

use super::RunData;
use iorig_result::{step_figures, FindingEntry, RunDoc, RunHeader, RunKind, StepDoc, RUN_SCHEMA};
use serde_json::Value;

pub(super) fn run_doc(data: &RunData) -> RunDoc {
    let d = &data.detail;
    // The plan as invoked is stored as text; give it back as JSON when it is
    // (it always is when iorig wrote it).
    let plan = d.plan_json.as_deref().map(|text| {
        serde_json::from_str::<Value>(text).unwrap_or_else(|_| Value::String(text.to_owned()))
    });
    let steps: Vec<StepDoc> = data
        .steps
        .iter()
        .map(|s| {
            let mut doc = s.step.doc(&s.analysis, s.intervals.as_deref());
            doc.hosts = s.hosts.clone();
            doc.jobs = s.jobs.clone();
            doc
        })
        .collect();
    RunDoc {
        schema: RUN_SCHEMA.to_owned(),
        run: RunHeader {
            id: d.run.id.0,
            kind: d.run.kind,
            status: d.run.status,
            started: d.run.started.clone(),
            ended: d.run.ended.clone(),
            host: d.run.host.clone(),
            tool_version: d.run.tool_version.clone(),
            command_line: d.command_line.clone(),
            labels: d.run.labels.clone(),
            plan,
            system: data.system.clone(),
            targets: data.targets.iter().map(|t| t.doc()).collect(),
        },
        figures: if d.run.kind == RunKind::Quick {
            step_figures(&steps)
        } else {
            Vec::new()
        },
        steps,
        analysis: data
            .plan_analysis
            .iter()
            .map(|a| FindingEntry(a.finding.clone()))
            .collect(),
    }
}
