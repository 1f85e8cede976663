//! `iorig runs list|show|label|delete`: reading and curating the result store.

use crate::cli::parse_labels;
use crate::cli::RunsCommand;
use crate::output::{table, Printer};
use crate::store::{open_existing, open_read_only};
use crate::{exit, Failure};
use iorig_result::Finding;
use iorig_store::{AnalysisRow, RunId, Store, StoreError};
use serde_json::{json, Map, Value};

fn store_err(e: StoreError) -> Failure {
    Failure::runtime(format!("result store: {e}"))
}

fn no_run(id: i64) -> Failure {
    Failure::usage(format!(
        "no run {id} in the result store; iorig runs list shows the runs"
    ))
}

pub fn runs(cmd: RunsCommand) -> Result<u8, Failure> {
    let printer = Printer::new(false, false);
    match cmd {
        RunsCommand::List { store, json } => {
            let s = open_read_only(store.db.as_deref())?;
            list(&printer, &s, json)
        }
        RunsCommand::Show { id, store, json } => {
            let s = open_read_only(store.db.as_deref())?;
            show(&printer, &s, id, json)
        }
        RunsCommand::Label { id, labels, store } => {
            let labels = parse_labels(&labels)?;
            let s = open_existing(store.db.as_deref())?;
            if s.get_run(RunId(id)).map_err(store_err)?.is_none() {
                return Err(no_run(id));
            }
            for (k, v) in &labels {
                s.set_label(RunId(id), k, v).map_err(store_err)?;
            }
            Ok(exit::OK)
        }
        RunsCommand::Delete { id, store } => {
            let s = open_existing(store.db.as_deref())?;
            if s.get_run(RunId(id)).map_err(store_err)?.is_none() {
                return Err(no_run(id));
            }
            s.delete_run(RunId(id)).map_err(store_err)?;
            printer.line(&format!("deleted run {id}"));
            Ok(exit::OK)
        }
    }
}

fn labels_text(labels: &std::collections::BTreeMap<String, String>) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

fn list(printer: &Printer, s: &Store, as_json: bool) -> Result<u8, Failure> {
    let runs = s.list_runs().map_err(store_err)?;
    if as_json {
        let text = serde_json::to_string_pretty(&runs)
            .map_err(|e| Failure::runtime(format!("encoding JSON: {e}")))?;
        printer.line(&text);
        return Ok(exit::OK);
    }
    printer.line(&format!(
        "{:>5}  {:<7} {:<11} {:<20} {:>5}  labels",
        "id", "kind", "status", "started", "steps"
    ));
    for r in runs {
        let steps = s.steps(r.id).map_err(store_err)?.len();
        printer.line(&format!(
            "{:>5}  {:<7} {:<11} {:<20} {:>5}  {}",
            r.id.0,
            r.kind.as_str(),
            r.status.as_str(),
            r.started,
            steps,
            labels_text(&r.labels)
        ));
    }
    Ok(exit::OK)
}

/// One step as `runs show --json` gives it: its parameters, then index, name,
/// role, status, summary (as in iorig.result/1) and analysis.
fn step_json(step: &iorig_store::StepRow, analysis: &[&AnalysisRow]) -> Value {
    // Serialising the typed rows here is the JSON boundary: the workload's
    // fields become the step object's top level, as documented.
    let mut m: Map<String, Value> = match serde_json::to_value(&step.params) {
        Ok(Value::Object(o)) => o,
        _ => Map::new(),
    };
    m.insert("index".into(), json!(step.index));
    m.insert("name".into(), json!(step.name));
    m.insert("role".into(), json!(step.role));
    m.insert("status".into(), json!(step.status));
    m.insert("started".into(), json!(step.started));
    m.insert("ended".into(), json!(step.ended));
    m.insert("summary".into(), json!(step.summary));
    let mut a = Map::new();
    for row in analysis {
        let f = &row.finding;
        a.insert(
            f.kind().as_str().to_owned(),
            f.body_value().unwrap_or(Value::Null),
        );
    }
    m.insert("analysis".into(), Value::Object(a));
    Value::Object(m)
}

fn show(printer: &Printer, s: &Store, id: i64, as_json: bool) -> Result<u8, Failure> {
    let run = s
        .get_run(RunId(id))
        .map_err(store_err)?
        .ok_or_else(|| no_run(id))?;
    let steps = s.steps(RunId(id)).map_err(store_err)?;
    let analysis = s.analysis(RunId(id)).map_err(store_err)?;
    if as_json {
        let run_json = json!({
            "id": run.run.id,
            "kind": run.run.kind,
            "status": run.run.status,
            "started": run.run.started,
            "ended": run.run.ended,
            "host": run.run.host,
            "tool_version": run.run.tool_version,
            "labels": run.run.labels,
            "command_line": run.command_line,
            "system": s.system_facts(RunId(id)).map_err(store_err)?,
            "targets": s.target_facts(RunId(id)).map_err(store_err)?,
            "analysis": analysis.iter().filter(|a| a.step_id.is_none())
                .map(|a| finding_entry(&a.finding)).collect::<Vec<_>>(),
        });
        let steps_json: Vec<Value> = steps
            .iter()
            .map(|st| {
                let mine: Vec<&iorig_store::AnalysisRow> = analysis
                    .iter()
                    .filter(|a| a.step_id == Some(st.id))
                    .collect();
                step_json(st, &mine)
            })
            .collect();
        let doc = json!({"run": run_json, "steps": steps_json});
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| Failure::runtime(format!("encoding JSON: {e}")))?;
        printer.line(&text);
        return Ok(exit::OK);
    }
    printer.line(&format!(
        "run {} ({}, {}): started {}{}, host {}, iorig {}",
        run.run.id,
        run.run.kind,
        run.run.status,
        run.run.started,
        run.run
            .ended
            .as_deref()
            .map(|e| format!(", ended {e}"))
            .unwrap_or_default(),
        run.run.host,
        run.run.tool_version
    ));
    if !run.run.labels.is_empty() {
        printer.line(&format!("labels: {}", labels_text(&run.run.labels)));
    }
    if run.run.kind == iorig_store::RunKind::Profile {
        for st in &steps {
            let mine: Vec<&AnalysisRow> = analysis
                .iter()
                .filter(|a| a.step_id == Some(st.id))
                .collect();
            let summary = match &st.summary {
                Some(iorig_result::StepSummary::Profile(p)) => Some(p),
                _ => None,
            };
            crate::profile_cmd::print_stored(printer, summary, &mine);
        }
        return Ok(exit::OK);
    }
    for t in s.target_facts(RunId(id)).map_err(store_err)? {
        printer.line(&format!(
            "target: {} ({}, {} bytes)",
            t.path,
            t.kind.unwrap_or_default(),
            t.size_bytes.unwrap_or(0)
        ));
    }
    printer.line(&format!(
        "{:>5}  {:<36} {:<12} {:>6} {:>5} {:>6} {:>4} {:>4} {:>10} {:>9} {:>9} {:>9}",
        "step",
        "name",
        "status",
        "bs",
        "read",
        "random",
        "qd",
        "thr",
        "IOPS",
        "MB/s",
        "mean ms",
        "p99 ms"
    ));
    for st in &steps {
        let p = st.params.as_ref();
        let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or("-".into());
        let [iops, mbs, mean, p99] = table::summary_cells(st.summary.as_ref().and_then(|s| s.io()));
        printer.line(&format!(
            "{:>5}  {:<36} {:<12} {:>6} {:>5} {:>6} {:>4} {:>4} {:>10} {:>9} {:>9} {:>9}",
            st.index + 1,
            st.name,
            st.status.as_str(),
            p.map_or_else(|| "-".to_owned(), |p| p.bs_label()),
            num(p.map(|p| p.read_pct)),
            num(p.map(|p| p.random_pct)),
            num(p.map(|p| f64::from(p.qd))),
            num(p.map(|p| f64::from(p.threads))),
            iops,
            mbs,
            mean,
            p99
        ));
    }
    for a in &analysis {
        let Finding::GeneratorBound(g) = &a.finding else {
            continue;
        };
        if g.generator_bound {
            let step = steps
                .iter()
                .find(|s| Some(s.id) == a.step_id)
                .map(|s| s.index + 1)
                .unwrap_or(0);
            printer.line(&format!(
                "step {step}: {}",
                g.message.as_deref().unwrap_or("generator-bound")
            ));
        }
    }
    for st in &steps {
        let Some(v) = st
            .summary
            .as_ref()
            .and_then(|s| s.io())
            .and_then(|s| s.validation.as_ref())
        else {
            continue;
        };
        let kinds: Vec<String> = v
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        printer.line(&format!(
            "step {}: validation: {} block(s) checked, {} error(s){}",
            st.index + 1,
            v.blocks_checked,
            v.errors,
            if kinds.is_empty() {
                String::new()
            } else {
                format!(" ({})", kinds.join(", "))
            }
        ));
    }
    Ok(exit::OK)
}

/// A run-level finding as `runs show --json` lists it: its kind and body.
fn finding_entry(f: &Finding) -> Value {
    let body = f.body_value().unwrap_or(Value::Null);
    json!({"kind": f.kind(), "result": body})
}
