//! Protects the documentation of the workload's parameters: every key of
//! `WorkloadFile` (the one declaration the CLI flags and the TOML keys come
//! from) has its row in docs/workload.md's key table, or in
//! docs/filesystem.md's for a tree's keys, and every row there names a key
//! that exists. A parameter added without its row, or a row left behind by
//! one removed, fails here.

use clap::CommandFactory;
use iorig_spec::{Role, WorkloadFile};
use std::collections::BTreeSet;
use std::path::Path;

#[derive(clap::Parser)]
struct Flags {
    #[command(flatten)]
    w: WorkloadFile,
}

/// The keys the rows of a doc's tables start with: "| `key`" (a row may
/// name its flag too: "| `key` (`--key`)" or "| `key` / `--key N`").
fn row_keys(doc: &str, from_heading: &str, to_heading: &str) -> BTreeSet<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../docs")
        .join(doc);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let start = text
        .find(from_heading)
        .unwrap_or_else(|| panic!("{doc}: no '{from_heading}'"));
    let end = text[start + from_heading.len()..]
        .find(to_heading)
        .map_or(text.len(), |e| start + from_heading.len() + e);
    let part = &text[start..end];
    let mut keys: BTreeSet<String> = part
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('`').next())
        .filter(|k| k.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .map(str::to_owned)
        .collect();
    // A key introduced in prose with its flag: "`ops` / `--ops` gives ...".
    for piece in part.split("` / `--").skip(1) {
        if let Some(flag) = piece.split(['`', ' ']).next() {
            keys.insert(flag.replace('-', "_"));
        }
    }
    keys
}

#[test]
fn every_workload_key_has_its_row_in_the_docs_and_every_row_a_key() {
    // The keys, from the declaration's table.
    let keys: BTreeSet<String> = WorkloadFile::KEYS
        .iter()
        .map(|p| p.key.to_string())
        .collect();
    // The same keys as the flags, but the two the command line gives
    // another way (repeatable --target, --label).
    let mut flags: BTreeSet<String> = Flags::command()
        .get_arguments()
        .filter_map(|a| a.get_long())
        .filter(|l| *l != "help")
        .map(|l| l.replace('-', "_"))
        .collect();
    flags.extend(["target".to_string(), "labels".to_string()]);
    assert_eq!(keys, flags, "WorkloadFile::KEYS and the flags differ");
    let block = row_keys("workload.md", "## Keys", "\n## ");
    let tree = row_keys("filesystem.md", "## The tree", "\n## Outputs");
    let documented: BTreeSet<String> = block.union(&tree).cloned().collect();
    let missing: Vec<&String> = keys.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "keys without a row in docs/workload.md or docs/filesystem.md: {missing:?}"
    );
    // A tree's keys are documented with the tree.
    let misplaced: Vec<&str> = WorkloadFile::KEYS
        .iter()
        .filter(|p| p.is(Role::Fs) && !tree.contains(p.key))
        .map(|p| p.key)
        .collect();
    assert!(
        misplaced.is_empty(),
        "a tree's keys without a row in docs/filesystem.md: {misplaced:?}"
    );
    let stale: Vec<&String> = block.difference(&keys).collect();
    assert!(
        stale.is_empty(),
        "rows of docs/workload.md's key table that are no key: {stale:?}"
    );
}
