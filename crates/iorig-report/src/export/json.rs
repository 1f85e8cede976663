//! The whole run as one JSON document, schema `iorig.run/1`
//! ([`iorig_result::RunDoc`]): the shape of `iorig runs show --json` with
//! every step's intervals added, each interval shaped like an `intervals`
//! entry of iorig.result/1. [`write_json`] writes it with each step's
//! intervals read from the store while they are serialized, a page at a
//! time, so the document of a week-long soak is never in memory.

use super::{RunData, StepData};
use crate::ReportError;
use iorig_result::{
    step_figures, FindingEntry, IntervalDoc, RunDoc, RunHeader, RunKind, StepDoc, RUN_SCHEMA,
};
use iorig_store::{interval_docs, IntervalPages, Store, StoreError, INTERVAL_PAGE};
use serde::ser::{Error as _, SerializeSeq as _, SerializeStruct as _};
use serde::{Serialize, Serializer};
use serde_json::Value;
use std::cell::RefCell;
use std::io::Write;

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
            let mut doc = s.step.doc(&s.analysis, None);
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

/// A file-system step's intervals are documented with their kinds.
fn is_fs(s: &StepData) -> bool {
    s.step.params.as_ref().is_some_and(|p| p.fs.is_some())
}

/// A step's intervals as the document shows them, all in memory.
pub(super) fn interval_docs_of(
    store: &Store,
    s: &StepData,
) -> Result<Vec<IntervalDoc>, ReportError> {
    let mut out = Vec::new();
    for page in IntervalPages::of(store, s.step.id, INTERVAL_PAGE).figures_only() {
        out.extend(interval_docs(&page?, is_fs(s)));
    }
    Ok(out)
}

/// Writes the document (pretty, as `serde_json::to_string_pretty`, and a
/// line end) to `w`.
pub(super) fn write_json<W: Write>(
    store: &Store,
    data: &RunData,
    mut w: W,
) -> Result<(), ReportError> {
    let doc = run_doc(data);
    // A store error met while serializing is kept whole here; serde only
    // carries its text.
    let failed = RefCell::new(None);
    let lazy = LazyDoc {
        doc: &doc,
        store,
        data,
        failed: &failed,
    };
    let written = lazy.serialize(&mut serde_json::Serializer::pretty(&mut w));
    if let Some(e) = failed.into_inner() {
        return Err(e.into());
    }
    written.map_err(|e| ReportError::Export(format!("writing JSON: {e}")))?;
    w.write_all(b"\n")
        .map_err(|e| ReportError::Export(format!("writing JSON: {e}")))
}

/// [`RunDoc`] with each step's intervals read as they are written.
struct LazyDoc<'a> {
    /// The document without intervals.
    doc: &'a RunDoc,
    store: &'a Store,
    data: &'a RunData,
    failed: &'a RefCell<Option<StoreError>>,
}

impl Serialize for LazyDoc<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // The fields of `RunDoc` in its order, with its rule for `figures`.
        let d = self.doc;
        let mut st = s.serialize_struct("RunDoc", 5)?;
        st.serialize_field("schema", &d.schema)?;
        st.serialize_field("run", &d.run)?;
        st.serialize_field("steps", &LazySteps(self))?;
        st.serialize_field("analysis", &d.analysis)?;
        if d.figures.is_empty() {
            st.skip_field("figures")?;
        } else {
            st.serialize_field("figures", &d.figures)?;
        }
        st.end()
    }
}

struct LazySteps<'a>(&'a LazyDoc<'a>);

impl Serialize for LazySteps<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let l = self.0;
        let mut seq = s.serialize_seq(Some(l.doc.steps.len()))?;
        for (doc, data) in l.doc.steps.iter().zip(&l.data.steps) {
            seq.serialize_element(&LazyStep { doc, data, lazy: l })?;
        }
        seq.end()
    }
}

struct LazyStep<'a> {
    doc: &'a StepDoc,
    data: &'a StepData,
    lazy: &'a LazyDoc<'a>,
}

impl Serialize for LazyStep<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.doc.serialize_with_intervals(
            s,
            &LazyIntervals {
                data: self.data,
                lazy: self.lazy,
            },
        )
    }
}

struct LazyIntervals<'a> {
    data: &'a StepData,
    lazy: &'a LazyDoc<'a>,
}

impl Serialize for LazyIntervals<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let fs = is_fs(self.data);
        let mut seq = s.serialize_seq(None)?;
        for page in
            IntervalPages::of(self.lazy.store, self.data.step.id, INTERVAL_PAGE).figures_only()
        {
            let page = match page {
                Ok(p) => p,
                Err(e) => {
                    let why = S::Error::custom(&e);
                    *self.lazy.failed.borrow_mut() = Some(e);
                    return Err(why);
                }
            };
            for doc in interval_docs(&page, fs) {
                seq.serialize_element(&doc)?;
            }
        }
        seq.end()
    }
}
