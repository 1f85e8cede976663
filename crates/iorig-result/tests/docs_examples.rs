//! Protects the documentation against drifting from the code: every JSON
//! example in docs/ that shows a result document (or a part of one) parses
//! into the typed schema, which refuses unknown fields, and serialises back
//! to the same JSON value. A field renamed, added or dropped in the code or
//! in the docs fails here.

#![allow(clippy::unwrap_used)]

use iorig_result::{ResultDoc, RunDoc, Validation, RUN_SCHEMA};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

fn doc(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The ```json blocks of a page, in order.
fn json_blocks(page: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = page;
    while let Some(start) = rest.find("```json\n") {
        let body = &rest[start + 8..];
        let end = body.find("```").unwrap();
        out.push(body[..end].to_owned());
        rest = &body[end + 3..];
    }
    out
}

/// Parses `text` as `T` and checks that it serialises back to the same value.
fn round_trips<T: Serialize + for<'de> Deserialize<'de>>(text: &str, what: &str) {
    let original: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: not JSON: {e}"));
    let typed: T = serde_json::from_value(original.clone())
        .unwrap_or_else(|e| panic!("{what}: does not match the schema: {e}"));
    let back = serde_json::to_value(&typed).unwrap();
    assert_eq!(back, original, "{what}: does not serialise back the same");
}

#[test]
fn the_result_document_example_is_a_result_document() {
    let blocks = json_blocks(&doc("json-schema.md"));
    assert_eq!(blocks.len(), 1, "json-schema.md has one example");
    round_trips::<ResultDoc>(&blocks[0], "json-schema.md");
}

#[test]
fn the_validation_example_is_a_summary_validation() {
    #[derive(Serialize, Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Part {
        validation: Validation,
    }
    let blocks = json_blocks(&doc("verify.md"));
    assert_eq!(blocks.len(), 1, "verify.md has one example");
    // The page shows the `"validation": {...}` member of a summary.
    round_trips::<Part>(&format!("{{{}}}", blocks[0]), "verify.md");
}

#[test]
fn the_run_document_example_is_a_run_document() {
    let blocks = json_blocks(&doc("export.md"));
    assert_eq!(blocks.len(), 1, "export.md has one example");
    round_trips::<RunDoc>(&blocks[0], "export.md");
    let d: RunDoc = serde_json::from_str(&blocks[0]).unwrap();
    assert_eq!(d.schema, RUN_SCHEMA);
    assert!(!d.steps.is_empty() && d.steps[0].params.is_some());
    assert!(d.steps[0].intervals.as_ref().is_some_and(|i| !i.is_empty()));
}

#[test]
fn every_json_example_in_docs_is_checked() {
    // A page that gains a JSON example must gain a test above.
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    let mut pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "md"))
        .filter(|e| !json_blocks(&std::fs::read_to_string(e.path()).unwrap()).is_empty())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    pages.sort();
    assert_eq!(pages, ["export.md", "json-schema.md", "verify.md"]);
}
