//! Protects what `--help` says for every command: each subcommand's help is
//! snapshot-tested, so a flag that loses its description, a default shown
//! twice, or a renamed option shows up as a snapshot change in review; and
//! the shell completions and the manual page are generated from the same
//! tree and are well-formed.
#![allow(clippy::unwrap_used)]

use std::process::Command;

const COMMANDS: [&[&str]; 23] = [
    &[],
    &["run"],
    &["quick"],
    &["import"],
    &["plan"],
    &["plan", "run"],
    &["plan", "resume"],
    &["plan", "builtins"],
    &["runs"],
    &["runs", "list"],
    &["runs", "show"],
    &["runs", "label"],
    &["runs", "delete"],
    &["runs", "push"],
    &["verify"],
    &["profile"],
    &["report"],
    &["export"],
    &["compare"],
    &["completions"],
    &["man"],
    &["agent"],
    &["serve"],
];

#[test]
fn every_command_help_reads_as_recorded() {
    for path in COMMANDS {
        let out = Command::new(env!("CARGO_BIN_EXE_iorig"))
            .args(path)
            .arg("--help")
            .env_remove("IORIG_DB")
            .output()
            .unwrap();
        assert!(out.status.success(), "iorig {path:?} --help failed");
        let name = if path.is_empty() {
            "iorig".to_owned()
        } else {
            format!("iorig-{}", path.join("-"))
        };
        insta::assert_snapshot!(name, String::from_utf8_lossy(&out.stdout));
    }
}

fn iorig(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_iorig"))
        .args(args)
        .env_remove("IORIG_DB")
        .output()
        .unwrap();
    assert!(out.status.success(), "iorig {args:?} failed");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn completions_and_the_manual_page_cover_every_command() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let script = iorig(&["completions", shell]);
        for sub in [
            "run", "quick", "plan", "runs", "report", "export", "compare", "profile",
        ] {
            assert!(script.contains(sub), "{shell} completion lacks {sub}");
        }
        assert!(
            script.contains("--target"),
            "{shell} completion lacks run's flags"
        );
    }
    // bash itself checks the bash script's syntax.
    let bash = iorig(&["completions", "bash"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("iorig.bash");
    std::fs::write(&file, bash).unwrap();
    let check = Command::new("bash").arg("-n").arg(&file).status().unwrap();
    assert!(check.success(), "bash -n rejects the completion script");

    let man = iorig(&["man"]);
    assert!(
        man.contains(".TH iorig 1"),
        "{}",
        &man[..man.len().min(300)]
    );
    for sub in ["quick", "plan", "report", "completions"] {
        assert!(man.contains(sub), "the manual page lacks {sub}");
    }
}
