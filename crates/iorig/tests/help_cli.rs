//! Protects what `--help` says for every command: each subcommand's help is
//! snapshot-tested, so a flag that loses its description, a default shown
//! twice, or a renamed option shows up as a snapshot change in review.
#![allow(clippy::unwrap_used)]

use std::process::Command;

const COMMANDS: [&[&str]; 17] = [
    &[],
    &["run"],
    &["quick"],
    &["plan"],
    &["plan", "run"],
    &["plan", "resume"],
    &["plan", "builtins"],
    &["runs"],
    &["runs", "list"],
    &["runs", "show"],
    &["runs", "label"],
    &["runs", "delete"],
    &["verify"],
    &["profile"],
    &["report"],
    &["export"],
    &["compare"],
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
