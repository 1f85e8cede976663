//! Protects the code's shape:
//! - docs/ARCHITECTURE.md's dependency list: every arrow between iorig
//!   crates in a Cargo.toml's `[dependencies]` is in the list, and every
//!   arrow in the list is in a Cargo.toml. A crate that starts to use
//!   another (or stops) fails here until the document says so;
//! - a thin binary: at most 2,000 lines of argument wiring and printing,
//!   its modules importing each other in no circle (logic that grows goes
//!   into a library crate, where a second front end can use it);
//! - no circle between the top modules of any crate: shared parts stand
//!   apart from what orchestrates them.

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

/// The most lines the binary crate's sources may hold (bench/shape.sh
/// counts the same way: newlines in crates/iorig/src/**/*.rs).
const BINARY_LINES_MAX: usize = 2000;

/// Every `.rs` file under `dir`, with its text.
fn rust_files(dir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("a source directory") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("a UTF-8 source file");
                out.push((path, text));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_binary_is_argument_wiring_and_printing() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = rust_files(&src);
    let lines: usize = files.iter().map(|(_, t)| t.matches('\n').count()).sum();
    assert!(
        lines <= BINARY_LINES_MAX,
        "crates/iorig/src holds {lines} lines, more than {BINARY_LINES_MAX}: the binary parses \
         arguments, wires sinks and prints; move what grew (checks, derivations, text) into \
         the library crate it belongs to (iorig-run, iorig-text, iorig-report, iorig-cli, ...)"
    );
}

/// A crate's top modules (a file `src/x.rs` or a directory `src/x/`) and,
/// for each, the top modules its code names as `crate::y` (comments and
/// `#[cfg(test)] mod tests` left out). The root (`lib.rs`, `main.rs`) is
/// left out: it declares the modules and re-exports, and in the binary holds
/// the definitions every command shares (`Failure`, `exit`).
fn module_edges(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let top = |path: &Path| -> String {
        let rel = path.strip_prefix(src).expect("under src");
        let first = rel.components().next().expect("a component");
        first
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string()
    };
    let files = rust_files(src);
    let modules: BTreeSet<String> = files.iter().map(|(p, _)| top(p)).collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, text) in &files {
        let from = top(path);
        if from == "main" || from == "lib" {
            continue;
        }
        let code = text
            .split("#[cfg(test)]\nmod tests")
            .next()
            .unwrap_or_default();
        let entry = edges.entry(from.clone()).or_default();
        for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if name != from && name != "main" && name != "lib" && modules.contains(&name) {
                    entry.insert(name);
                }
            }
        }
    }
    edges
}

/// A circle in `edges`, as the modules around it, if there is one.
fn a_circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        n: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == n) {
            let mut circle = path[at..].to_vec();
            circle.push(n.to_string());
            return Some(circle);
        }
        if done.contains(n) {
            return None;
        }
        path.push(n.to_string());
        for m in edges.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(n.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|n| visit(n, edges, &mut Vec::new(), &mut done))
}

#[test]
fn the_binary_modules_import_each_other_in_no_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = module_edges(&src);
    assert!(
        edges["run_cmd"].contains("foreign_cmd"),
        "the imports are read: {edges:?}"
    );
    if let Some(c) = a_circle(&edges) {
        panic!(
            "the binary's modules import each other in a circle: {}; move what both need \
             into a library crate or into main.rs",
            c.join(" → ")
        );
    }
}

#[test]
fn a_circle_is_found_where_there_is_one() {
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    edges.entry("a".into()).or_default().insert("b".into());
    edges.entry("b".into()).or_default().insert("c".into());
    assert_eq!(a_circle(&edges), None);
    edges.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        a_circle(&edges),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

#[test]
fn no_crate_imports_its_own_modules_in_a_circle() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut circles = Vec::new();
    let mut read = 0;
    for entry in std::fs::read_dir(&crates).expect("crates/") {
        let src = entry.expect("a crate directory").path().join("src");
        if !src.is_dir() {
            continue;
        }
        read += 1;
        if let Some(c) = a_circle(&module_edges(&src)) {
            circles.push(format!("{}: {}", src.display(), c.join(" → ")));
        }
    }
    assert!(read > 10, "the crates are read");
    assert!(
        circles.is_empty(),
        "modules that import each other in a circle (move what both need into a \
         module of its own, apart from what orchestrates it):\n{}",
        circles.join("\n")
    );
}
