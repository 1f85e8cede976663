//! Protects docs/ARCHITECTURE.md's dependency list: every arrow between
//! iorig crates in a Cargo.toml's `[dependencies]` is in the list, and
//! every arrow in the list is in a Cargo.toml. A crate that starts to use
//! another (or stops) fails here until the document says so.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Each workspace crate's iorig dependencies, from its Cargo.toml's
/// `[dependencies]` table (dev-dependencies are not arrows).
fn cargo_arrows(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    let crates = std::fs::read_dir(root.join("crates")).expect("crates/");
    for entry in crates {
        let dir = entry.expect("a crate directory").path();
        let Ok(text) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        let name = dir
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 crate name")
            .to_string();
        let mut deps = BTreeSet::new();
        let mut in_deps = false;
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                in_deps = line == "[dependencies]";
            } else if in_deps && line.starts_with("iorig-") {
                let dep = line.split(['.', ' ', '=']).next().unwrap_or_default();
                deps.insert(dep.to_string());
            }
        }
        out.insert(name, deps);
    }
    out
}

/// The arrows docs/ARCHITECTURE.md states under "Dependencies point one
/// way": a bullet "- `a` → `b`, `c` ..." (iorig names in backticks; other
/// names there are explanations), and the bullet of crates that "depend on
/// no other iorig crate".
fn doc_arrows(root: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(root.join("docs/ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let start = text
        .find("Dependencies point one way")
        .expect("the dependency list's heading");
    // The bullets, up to the first paragraph after them.
    let from = start + text[start..].find("\n- ").expect("the list's bullets");
    let end = text[from + 1..]
        .find("\n\n")
        .map_or(text.len(), |e| from + 1 + e);
    let list = &text[from + 1..end];
    let mut bullets: Vec<String> = Vec::new();
    for line in list.lines() {
        if let Some(b) = line.strip_prefix("- ") {
            bullets.push(b.to_string());
        } else if let Some(last) = bullets.last_mut() {
            last.push(' ');
            last.push_str(line.trim());
        }
    }
    let names = |s: &str| -> Vec<String> {
        s.split('`')
            .skip(1)
            .step_by(2)
            .filter(|n| *n == "iorig" || n.starts_with("iorig-"))
            .map(str::to_string)
            .collect()
    };
    let mut out = BTreeMap::new();
    for b in bullets {
        if b.contains("depend on no other iorig crate") {
            for n in names(&b) {
                out.insert(n, BTreeSet::new());
            }
        } else if let Some((from, to)) = b.split_once('→') {
            let from = names(from).into_iter().next().expect("a crate before →");
            out.insert(from, names(to).into_iter().collect());
        }
    }
    out
}

#[test]
fn the_dependency_list_is_the_cargo_manifests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cargo = cargo_arrows(&root);
    let doc = doc_arrows(&root);
    let mut wrong = Vec::new();
    for (krate, deps) in &cargo {
        match doc.get(krate) {
            None => wrong.push(format!("{krate}: not in the list")),
            Some(said) => {
                for d in deps.difference(said) {
                    wrong.push(format!("{krate} → {d}: in Cargo.toml, not in the list"));
                }
                for d in said.difference(deps) {
                    wrong.push(format!("{krate} → {d}: in the list, not in Cargo.toml"));
                }
            }
        }
    }
    for krate in doc.keys().filter(|k| !cargo.contains_key(*k)) {
        wrong.push(format!("{krate}: in the list, no such crate"));
    }
    assert!(
        wrong.is_empty(),
        "docs/ARCHITECTURE.md's dependency list and the Cargo.toml files differ:\n{}",
        wrong.join("\n")
    );
}
