#![allow(clippy::unwrap_used)]
//! What this protects: the translation of job files and parameter files
//! in the shapes people really write (`tests/corpus/`, written for this
//! project in the styles of cloud docs, file-system test suites, vendor
//! kits, papers, HCIBench and the vdbench guide). Each file's plan, the
//! notices that come with it, or its refusal is a snapshot in
//! `tests/corpus/expected/`; every accepted plan must load and expand as
//! an iorig plan; and the shares accepted must stay at the goal
//! (95 % of fio files, 90 % of vdbench files).

use iorig_import::{fio, vdbench, Loader};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The corpus's variables, fixed so the snapshots do not depend on the
/// machine: targets exist (size-less jobs size by them), 4 CPUs; the
/// directory is a real one (a tree's plan expands only over one), shown
/// as `[DIR]` in the snapshots.
struct Fixed(String);

impl Loader for Fixed {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        std::fs::read_to_string(path)
    }
    fn env(&self, name: &str) -> Option<String> {
        let v = match name {
            "TARGET" => "/corpus/target.dat",
            "DIR" => self.0.as_str(),
            "SIZE" => "64m",
            "RUNTIME" => "2",
            _ => return None,
        };
        Some(v.to_string())
    }
    fn exists(&self, _path: &Path) -> bool {
        true
    }
    fn keyword(&self, name: &str) -> Option<u64> {
        match name {
            "ncpus" => Some(4),
            "pagesize" => Some(4096),
            "mb_memory" => Some(8192),
            _ => None,
        }
    }
}

fn corpus(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(kind);
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fio" || e == "parm"))
        .collect();
    files.sort();
    files
}

/// The snapshot of one file: its plan and notices, or why it was refused.
fn outcome(
    name: &str,
    result: Result<(String, Vec<String>), iorig_import::ImportError>,
) -> (bool, String) {
    match result {
        Ok((toml, notices)) => {
            let mut plan = iorig_spec::Plan::from_toml(name, &toml)
                .unwrap_or_else(|e| panic!("{name}: the plan does not load: {e}\n{toml}"));
            // As `iorig run` takes it: a lone directory as the target is
            // the anchor of the plan's file-system steps.
            if let Some([one]) = plan.targets.as_deref() {
                if Path::new(one).is_dir() {
                    plan.anchor = Some(one.clone());
                    plan.targets = None;
                }
            }
            plan.expand()
                .unwrap_or_else(|e| panic!("{name}: the plan does not expand: {e}\n{toml}"));
            let mut out = String::from("accepted\n");
            for n in notices {
                out.push_str(&format!("notice: {n}\n"));
            }
            out.push('\n');
            out.push_str(&toml);
            (true, out)
        }
        Err(e) => (false, format!("refused: {e}\n")),
    }
}

fn check(
    kind: &str,
    dir: &str,
    translate: impl Fn(&Path, &str) -> Result<(String, Vec<String>), iorig_import::ImportError>,
) -> (usize, usize, Vec<String>) {
    let mut accepted = 0;
    let mut refused = Vec::new();
    let files = corpus(kind);
    for path in &files {
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let text = std::fs::read_to_string(path).unwrap();
        // Messages name the file as given: its name alone, the same here
        // and in CI.
        let (ok, snap) = outcome(&name, translate(Path::new(&name), &text));
        let snap = snap.replace(dir, "[DIR]");
        if ok {
            accepted += 1;
        } else {
            refused.push(format!("{name}: {snap}"));
        }
        insta::with_settings!({
            snapshot_path => Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/expected"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
        }, {
            insta::assert_snapshot!(format!("{kind}__{name}"), snap);
        });
    }
    (accepted, files.len(), refused)
}

#[test]
fn fio_files_translate_as_expected() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().to_str().unwrap().to_string();
    let loader = Fixed(dir.clone());
    let (accepted, all, refused) = check("fio", &dir, |path, text| {
        fio::translate(path, text, &loader, &fio::Options::default())
            .map(|t| (t.plan_toml, t.notices))
    });
    assert!(all >= 30, "{all} fio files");
    // The goal: 95 % of the files run; every refusal has a reason.
    assert!(
        accepted * 100 >= all * 95,
        "{accepted} of {all} fio files accepted; refused:\n{}",
        refused.join("")
    );
}

#[test]
fn vdbench_files_translate_as_expected() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_str().unwrap().to_string();
    let vars: BTreeMap<String, String> = [
        ("target".to_string(), "/corpus/target.dat".to_string()),
        ("dir".to_string(), dir.clone()),
    ]
    .into();
    let (accepted, all, refused) = check("vdbench", &dir, |path, text| {
        vdbench::translate(
            path,
            text,
            &vdbench::Options {
                vars: vars.clone(),
                ..vdbench::Options::default()
            },
        )
        .map(|t| (t.plan_toml, t.notices))
    });
    assert!(all >= 15, "{all} vdbench files");
    assert!(
        accepted * 100 >= all * 90,
        "{accepted} of {all} vdbench files accepted; refused:\n{}",
        refused.join("")
    );
}
