//! Protects what `--help` says for every command: each subcommand's help is
//! snapshot-tested, so a flag that loses its description, a default shown
//! twice, or a renamed option shows up as a snapshot change in review; and
//! the shell completions and the manual page are generated from the same
//! tree and are well-formed.
#![allow(clippy::unwrap_used)]

use std::process::Command;

const COMMANDS: [&[&str]; 30] = [
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
    &["trace"],
    &["trace", "analyse"],
    &["trace", "record"],
    &["trace", "replay"],
    &["trace", "fit"],
    &["trace", "list"],
    &["trace", "report"],
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

/// What a shell completes after `line` (ending in a space: the next word).
fn completed(shell: &str, script: &str, line: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let out = match shell {
        "bash" => {
            let file = dir.path().join("iorig.bash");
            std::fs::write(&file, script).unwrap();
            let words: Vec<&str> = line.split_whitespace().collect();
            let prev = words.last().copied().unwrap_or("");
            // What bash's programmable completion sets before it calls the
            // function, as `complete -F _iorig` would.
            let call = format!(
                "source {}; COMP_WORDS=({} ''); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; _iorig iorig '' {prev} 2>/dev/null; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                file.display(),
                words.join(" "),
                words.len()
            );
            Command::new("timeout")
                .args(["20", "bash", "--norc", "-c", &call])
                .current_dir(dir.path())
                .output()
                .unwrap()
        }
        "zsh" => {
            std::fs::write(dir.path().join("_iorig"), script).unwrap();
            let capture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/complete.zsh");
            Command::new("timeout")
                .args(["20", "zsh", "-f", capture])
                .arg(dir.path())
                .arg(line)
                .current_dir(dir.path())
                .output()
                .unwrap()
        }
        "fish" => {
            let file = dir.path().join("iorig.fish");
            std::fs::write(&file, script).unwrap();
            let call = format!("source {}; complete -C '{line}'", file.display());
            Command::new("timeout")
                .args(["20", "fish", "--no-config", "-c", &call])
                .current_dir(dir.path())
                .output()
                .unwrap()
        }
        _ => unreachable!(),
    };
    assert!(out.status.success(), "{shell} completing '{line}': {out:?}");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        // fish prints "word<TAB>description".
        .map(|l| l.split('\t').next().unwrap_or("").trim().to_owned())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Each shell offers the values a flag takes, not the file names of the
/// working directory: the built-in plans, engines, output formats and the
/// forms of --dist; a size offers nothing.
fn offers_values_in(shell: &str) {
    let script = iorig(&["completions", shell]);
    let has = |line: &str, want: &[&str]| {
        let got = completed(shell, &script, line);
        for w in want {
            assert!(
                got.iter().any(|g| g.trim_end_matches(':') == *w),
                "{shell}: '{line}' does not offer {w}: {got:?}"
            );
        }
        got
    };
    has(
        "iorig plan run --builtin ",
        &["five-params", "curve", "qd-cycle"],
    );
    has("iorig run --engine ", &["io_uring", "psync", "null"]);
    has(
        "iorig run --output-format ",
        &["iorig", "fio-json", "fio-json+"],
    );
    has("iorig export 1 --format ", &["csv", "xlsx", "json", "hlog"]);
    has("iorig run --dist ", &["uniform", "zipf", "hot", "zoned"]);
    // A size completes to nothing, least of all a file name.
    let sizes = completed(shell, &script, "iorig run --bs ");
    assert!(
        sizes.iter().all(|w| !w.contains("iorig.")),
        "{shell}: --bs offers files: {sizes:?}"
    );
}

#[test]
fn bash_completes_values_not_file_names() {
    offers_values_in("bash");
}

#[test]
#[ignore = "needs zsh and fish; .ci/run installs them and runs the ignored tests"]
fn zsh_and_fish_complete_values_not_file_names() {
    for shell in ["zsh", "fish"] {
        assert!(crate::common::have(shell), "{shell} is not installed");
        offers_values_in(shell);
    }
}

/// `iorig completions zsh | head -3` and `iorig man | head`: the reader
/// goes away, iorig ends quietly (no panic, no backtrace).
#[test]
fn generated_text_to_a_closed_pipe_ends_quietly() {
    for args in [&["completions", "zsh"][..], &["man"], &["man", "run"]] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(env!("CARGO_BIN_EXE_iorig"))
            .args(args)
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("panicked") && out.status.code() != Some(101),
            "iorig {args:?} to a closed pipe: {:?} {err}",
            out.status
        );
    }
}

/// A page per command, installable with one command, each with its
/// options and examples; an unknown page is refused in one line.
#[test]
fn manual_pages_per_command_install_with_one_command() {
    let run = iorig(&["man", "run"]);
    assert!(
        run.contains(".TH iorig-run 1"),
        "{}",
        &run[..run.len().min(300)]
    );
    for want in [
        "\\-\\-target",
        "\\-\\-iodepth",
        ".SH EXAMPLES",
        "iorig run \\-\\-target",
    ] {
        assert!(run.contains(want), "iorig-run(1) lacks {want}");
    }
    let plan_run = iorig(&["man", "plan", "run"]);
    assert!(plan_run.contains(".TH iorig-plan-run 1"));
    let out = Command::new(env!("CARGO_BIN_EXE_iorig"))
        .args(["man", "nosuch"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no manual page for 'nosuch'"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let man1 = dir.path().join("man1");
    let said = iorig(&["man", "--install", man1.to_str().unwrap()]);
    assert!(said.starts_with("wrote "), "{said}");
    let mut names: Vec<String> = std::fs::read_dir(&man1)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for want in [
        "iorig.1",
        "iorig-run.1",
        "iorig-quick.1",
        "iorig-plan-run.1",
        "iorig-trace-analyse.1",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} not installed: {names:?}"
        );
    }
    // Every subcommand iorig(1) names has its page.
    let root = std::fs::read_to_string(man1.join("iorig.1")).unwrap();
    for n in &names {
        let page = n.trim_end_matches(".1");
        if page.matches('-').count() == 1 {
            assert!(
                root.contains(&format!("{}(1)", page.replace('-', "\\-"))),
                "iorig(1) does not name {page}"
            );
        }
    }
    // man itself renders a page without warnings, where man is installed.
    if crate::common::have("man") {
        let out = Command::new("man")
            .args(["--warnings", "-l"])
            .arg(man1.join("iorig-run.1"))
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("EXAMPLES"));
    }
}

/// Every container's `args` in deploy/k8s are a command line iorig takes:
/// a manifest whose flags went stale would fail in the cluster, not here.
/// (A plain reading of the manifests' `args:` lists; they hold no flow
/// style.)
#[test]
fn the_kubernetes_manifests_args_parse() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../deploy/k8s");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if l.trim() != "args:" {
                continue;
            }
            let mut args = vec!["iorig".to_owned()];
            for item in &lines[i + 1..] {
                let t = item.trim_start();
                if t.starts_with('#') {
                    continue;
                }
                let Some(v) = t.strip_prefix("- ") else { break };
                args.push(v.trim_matches('"').to_owned());
            }
            if let Err(e) = iorig_cli::generate::command().try_get_matches_from(&args) {
                panic!("{}: {args:?} does not parse: {e}", path.display());
            }
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} args lists found");
}
