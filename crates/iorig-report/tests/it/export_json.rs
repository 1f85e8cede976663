//! Protects the JSON export's documented shape (docs/export.md, schema
//! `iorig.run/1`): the run header with labels, host and target facts and the
//! plan; each step as its parameters plus index, name, role, status, summary,
//! analysis keyed by kind and its intervals regrouped one object per
//! interval (read, write, total, cpu, device, errors, warmup flag); the
//! plan-level analysis at the top.

#![allow(clippy::unwrap_used)]

use crate::export_fixture;

use iorig_report::export::{export_json, RUN_SCHEMA};
use serde_json::json;

#[test]
fn json_has_the_documented_shape() {
    let (store, run) = export_fixture::store_with_run();
    let v = serde_json::to_value(export_json(&store, run).unwrap()).unwrap();

    assert_eq!(v["schema"], RUN_SCHEMA);
    assert_eq!(RUN_SCHEMA, "iorig.run/1");
    let r = &v["run"];
    assert_eq!(r["id"], json!(run.0));
    assert_eq!(r["kind"], "plan");
    assert_eq!(r["status"], "interrupted");
    assert_eq!(r["started"], "2026-03-01T10:00:00Z");
    assert_eq!(r["ended"], "2026-03-01T10:00:12Z");
    assert_eq!(r["host"], "rig1");
    assert_eq!(r["tool_version"], "0.1.0");
    assert!(r["command_line"]
        .as_str()
        .unwrap()
        .starts_with("iorig plan run"));
    assert_eq!(r["labels"], json!({"array": "a1", "fw": "2.1, beta"}));
    assert_eq!(r["plan"], json!({"name": "export-test", "steps": 3}));
    assert_eq!(r["system"]["cpu_count"], 16);
    let t = &r["targets"][0];
    assert_eq!(t["path"], "/dev/zram0");
    assert_eq!(t["kind"], "block");
    assert_eq!(t["size_bytes"], 1u64 << 30);
    assert_eq!(t["rotational"], false);

    let steps = v["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 3);
    for (i, s) in steps.iter().enumerate() {
        assert_eq!(s["index"], i);
        assert_eq!(s["name"], export_fixture::STEP_NAMES[i]);
        assert!(s["summary"]["total"]["lat_ns"]["p99"].is_u64());
        assert!(s["analysis"].is_object());
        assert!(s["intervals"].is_array());
        // The parameters sit at the top of the step, as in `runs show --json`.
        assert_eq!(s["engine"], "io_uring");
    }
    assert_eq!(steps[0]["role"], "precondition");
    assert_eq!(steps[2]["status"], "interrupted");
    assert_eq!(steps[2]["rate_iops"], 50000.0);
    assert_eq!(steps[1]["analysis"]["steady_state"]["reached"], true);
    assert_eq!(
        steps[2]["analysis"]["write_cliff"]["cliff"]["onset_t_s"],
        2.0
    );
    assert_eq!(
        steps[2]["summary"]["total"]["service_lat_ns"]["p99"],
        240_000
    );

    let iv = steps[1]["intervals"].as_array().unwrap();
    assert_eq!(iv.len(), 4);
    assert_eq!(iv[0]["warmup"], true);
    assert_eq!(iv[1]["warmup"], false);
    assert_eq!(iv[0]["seq"], 0);
    assert_eq!(iv[0]["t_s"], 1.0);
    assert_eq!(iv[0]["duration_s"], 1.0);
    assert_eq!(iv[1]["read"]["ops"], 100_010);
    assert_eq!(iv[1]["total"]["lat_ns"]["mean"], 320_500);
    assert!(iv[1]["write"].is_object());
    assert_eq!(iv[1]["cpu"], json!({"usr_pct": 13.5, "sys_pct": 30.25}));
    assert_eq!(iv[1]["device"]["util_pct"], 99.5);
    assert!(steps[0]["intervals"][0]["device"].is_null());
    assert_eq!(steps[2]["intervals"][2]["errors"], 2);

    let plan = v["analysis"].as_array().unwrap();
    assert_eq!(plan.len(), 1);
    assert_eq!(plan[0]["kind"], "curve");
    assert_eq!(plan[0]["result"]["analysis"]["max_iops"], 100020.0);
}

/// The streamed file is byte for byte the document built whole (as a
/// `serde_json::Value`, the way every step object used to be made) and
/// pretty-printed, with a line end.
#[test]
fn the_streamed_document_is_the_whole_one() {
    let (store, run) = export_fixture::store_with_run();
    let whole = serde_json::to_value(export_json(&store, run).unwrap()).unwrap();
    let mut streamed = Vec::new();
    iorig_report::export::write_json(&store, run, &mut streamed).unwrap();
    let want = serde_json::to_string_pretty(&whole).unwrap() + "\n";
    assert_eq!(String::from_utf8(streamed).unwrap(), want);
    assert!(want.contains("\"intervals\": ["));
}
