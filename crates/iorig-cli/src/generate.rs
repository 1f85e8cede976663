//! What is generated from the command tree besides parsing: shell completion
//! scripts and manual pages, made in memory (the binary prints them as it
//! prints every other line, so `iorig completions zsh | head -3` ends
//! quietly), and the examples that `--help` and the manual pages show.
//!
//! Completion hints live here, not on the flags, because most of them are
//! only hints: `--builtin` takes the name of a plan file's built-in, `--dist`
//! a form with numbers in it. The parser keeps its own checks and messages.

use clap::builder::PossibleValue;
use clap::{Arg, Command, CommandFactory, ValueHint};
use std::io::Write;

/// Examples per command (its path below `iorig`), shown under `--help` and
/// in the manual page. A test parses every line, so none goes stale.
const EXAMPLES: &[(&[&str], &[&str])] = &[
    (&[], &["iorig quick", "iorig run --target /dev/nvme0n1 --rw randread --bs 4k --iodepth 32 --time 60s", "iorig plan run --builtin curve --target ./scratch.dat --size 4g", "iorig report 1"]),
    (&["run"], &[
        "iorig run --target ./scratch.dat --size 1g --rw randread --bs 4k --iodepth 32 --time 30s",
        "iorig run --target /dev/nvme0n1 --rw randrw --read 70 --bs 4k:60,64k:40 --rate 20000 --allow-destroy",
        "iorig run --target ./scratch.dat --size 1g --output-format fio-json --json result.json",
        "iorig run job.fio",
        "iorig run --anchor /mnt/test/tree --files 1000 --ops create:20,read:60,stat:20 --time 1m",
    ]),
    (&["quick"], &["iorig quick", "iorig quick /dev/nvme0n1 --allow-destroy", "iorig quick ./big.dat --size 16g --step-time 30s"]),
    (&["import"], &["iorig import job.fio > plan.toml", "iorig import parmfile --set lun=/dev/sdb"]),
    (&["plan"], &["iorig plan builtins", "iorig plan run --builtin curve --target ./scratch.dat --size 4g --dry-run"]),
    (&["plan", "run"], &[
        "iorig plan run --builtin curve --target ./scratch.dat --size 4g",
        "iorig plan run my-plan.toml --step-time 5s --dry-run",
        "iorig plan run --builtin five-params --target /dev/sdb --allow-destroy --label array=a1",
        "iorig plan run --builtin cluster --hosts-file hosts.toml --cache-size 400g --dry-run",
    ]),
    (&["plan", "resume"], &["iorig plan resume 7"]),
    (&["plan", "builtins"], &["iorig plan builtins"]),
    (&["runs"], &["iorig runs list", "iorig runs show 3 --json"]),
    (&["runs", "list"], &["iorig runs list", "iorig runs list --json --db team.db"]),
    (&["runs", "show"], &["iorig runs show 3", "iorig runs show 3 --json"]),
    (&["runs", "label"], &["iorig runs label 3 array=a1 firmware=2.1"]),
    (&["runs", "delete"], &["iorig runs delete 3"]),
    (&["runs", "push"], &["iorig runs push 3 --to postgres://iorig@db.example/iorig"]),
    (&["verify"], &["iorig verify --journal run.journal"]),
    (&["trace"], &["iorig trace record /dev/sdb --time 1m --out sdb.trace", "iorig trace analyse sdb.trace"]),
    (&["trace", "analyse"], &["iorig trace analyse sdb.trace", "iorig trace analyse blk.out --format blktrace --json analysis.json"]),
    (&["trace", "record"], &["iorig trace record /dev/sdb --time 1m --out sdb.trace"]),
    (&["trace", "replay"], &["iorig trace replay sdb.trace --target ./scratch.dat --size 4g"]),
    (&["trace", "fit"], &["iorig trace fit sdb.trace"]),
    (&["trace", "list"], &["iorig trace list"]),
    (&["trace", "report"], &["iorig trace report 2", "iorig trace report 2 -o trace-report"]),
    (&["profile"], &["iorig profile --time 10m", "iorig profile --device sda --time 1h --emit-workload mix.toml"]),
    (&["report"], &["iorig report 1", "iorig report 1 -o ./report --steps 5,10-20"]),
    (&["export"], &["iorig export 1 --format csv -o run1.csv", "iorig export 1 --format hlog -o run1.hlog"]),
    (&["compare"], &["iorig compare 1 2", "iorig compare 1 2 3 -o ./before-after"]),
    (&["serve"], &["iorig serve", "iorig serve --listen 127.0.0.1:8080 --db team.db"]),
    (&["agent"], &["iorig agent", "iorig agent --listen 0.0.0.0:7420 --token-file /etc/iorig/token"]),
    (&["completions"], &["iorig completions bash > ~/.local/share/bash-completion/completions/iorig", "iorig completions zsh > ~/.zfunc/_iorig", "iorig completions fish > ~/.config/fish/completions/iorig.fish"]),
    (&["man"], &["iorig man --install ~/.local/share/man/man1", "iorig man run | man -l -"]),
];

/// Every example line, with the command it belongs to (for the test that
/// parses them).
pub fn examples() -> impl Iterator<Item = (&'static [&'static str], &'static str)> {
    EXAMPLES
        .iter()
        .flat_map(|(path, lines)| lines.iter().map(move |l| (*path, *l)))
}

fn examples_text(lines: &[&str]) -> String {
    let mut text = String::from("Examples:");
    for l in lines {
        text.push_str("\n  ");
        text.push_str(l);
    }
    text
}

/// The command tree with each command's examples under its long help.
pub fn command() -> Command {
    let mut cmd = crate::Cli::command();
    for (path, lines) in EXAMPLES {
        cmd = with_sub(cmd, path, &|c| c.after_long_help(examples_text(lines)));
    }
    // The record flags are shared with the commands that store runs; what
    // trace analyse stores is an analysis.
    with_sub(cmd, &["trace", "analyse"], &|c| {
        c.mut_arg("no_db", |a| a.help("Do not store the analysis"))
            .mut_arg("labels", |a| {
                a.help("Label the stored analysis (repeatable)")
            })
    })
}

/// `f` applied to the subcommand at `path` (the command itself when empty).
fn with_sub(cmd: Command, path: &[&str], f: &dyn Fn(Command) -> Command) -> Command {
    match path.split_first() {
        None => f(cmd),
        Some((first, rest)) => {
            if cmd.find_subcommand(first).is_none() {
                return cmd;
            }
            let first = first.to_string();
            cmd.mut_subcommand(first, |s| with_sub(s, rest, f))
        }
    }
}

/// A value's forms offered as completions, each with what it means (zsh and
/// fish show the words; bash completes the names).
fn offered(values: &[(&str, &str)]) -> Vec<PossibleValue> {
    values
        .iter()
        .map(|(name, help)| PossibleValue::new(name.to_string()).help(help.to_string()))
        .collect()
}

/// What a flag's value completes to, by the flag's id: known names, or a
/// hint that it is a path. A flag not named here completes to paths only
/// when its value name says it is one (FILE, DIR, PATH), else to nothing:
/// `--bs <TAB>` offering file names helps nobody.
fn hint(arg: Arg) -> Arg {
    let id = arg.get_id().as_str().to_owned();
    let values: Option<Vec<PossibleValue>> = match id.as_str() {
        "builtin" => Some(
            iorig_spec::plan::builtins()
                .into_iter()
                .map(|(name, about)| PossibleValue::new(name).help(about))
                .collect(),
        ),
        "output_format" => Some(offered(&[
            ("iorig", "iorig.result/1"),
            ("fio-json", "fio's --output-format=json"),
            ("fio-json+", "fio's json+, with latency buckets"),
        ])),
        "input_format" => Some(offered(&[
            ("fio", "a fio job file"),
            ("vdbench", "a vdbench parameter file"),
            ("iorig", "an iorig workload or plan TOML"),
        ])),
        "dist" => Some(offered(&[
            ("uniform", "every offset alike"),
            ("zipf:", "zipf:THETA, e.g. zipf:1.2"),
            ("pareto:", "pareto:H, e.g. pareto:0.9"),
            (
                "normal:",
                "normal:DEV, spread in % of the range, e.g. normal:10",
            ),
            ("hot:", "hot:IO%/SPACE%, e.g. hot:90/10"),
            (
                "zoned:",
                "zoned:IO%/SPACE%:..., e.g. zoned:60/10:30/20:10/70",
            ),
            (
                "zoned_abs:",
                "zoned_abs:IO%/SIZE:..., e.g. zoned_abs:60/20g:40/100g",
            ),
            ("hotband", "vdbench's hot band"),
        ])),
        "rw" => Some(offered(&[
            ("read", "sequential reads"),
            ("write", "sequential writes"),
            ("trim", "sequential trims"),
            ("randread", "random reads"),
            ("randwrite", "random writes"),
            ("randtrim", "random trims"),
            ("rw", "sequential mix, 50 % reads unless --read"),
            ("randrw", "random mix, 50 % reads unless --read"),
        ])),
        "data" => Some(offered(&[
            ("random", "incompressible"),
            ("zero", "zeroes"),
            ("compress:", "compress:RATIO, e.g. compress:2"),
            ("dedup:", "dedup:RATIO, e.g. dedup:3"),
            ("pattern:", "pattern:0xHEX"),
        ])),
        _ => None,
    };
    if let Some(values) = values {
        return arg.value_parser(values);
    }
    if !arg.get_action().takes_values()
        || arg.get_value_hint() != ValueHint::Unknown
        || arg.get_possible_values().iter().any(|_| true)
    {
        return arg;
    }
    let names = arg
        .get_value_names()
        .map(|n| n.iter().map(|s| s.as_str().to_owned()).collect::<Vec<_>>())
        .unwrap_or_default();
    let has = |w: &str| names.iter().any(|n| n.split('|').any(|p| p == w));
    let kind = if has("DIR") {
        ValueHint::DirPath
    } else if has("FILE") || has("PATH") || has("TARGET") || has("TRACE") {
        ValueHint::AnyPath
    } else if arg.is_positional() && names.is_empty() {
        // A positional without a value name is a path (`plan run FILE`).
        return arg;
    } else {
        ValueHint::Other
    };
    arg.value_hint(kind)
}

/// Every argument of `cmd` and of its subcommands given its hint.
fn hinted(mut cmd: Command) -> Command {
    let ids: Vec<String> = cmd
        .get_arguments()
        .map(|a| a.get_id().as_str().to_owned())
        .collect();
    for id in ids {
        cmd = cmd.mut_arg(id, hint);
    }
    let subs: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    for s in subs {
        cmd = cmd.mut_subcommand(s, hinted);
    }
    cmd
}

/// The completion script for `shell`.
pub fn completion_script(shell: clap_complete::Shell) -> Vec<u8> {
    let mut cmd = hinted(command());
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cmd, "iorig", &mut script);
    script
}

/// The commands that have a manual page, each as its path below `iorig`
/// (empty: iorig(1) itself), depth first.
fn page_paths(cmd: &Command, path: Vec<String>, into: &mut Vec<Vec<String>>) {
    into.push(path.clone());
    for s in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if s.get_name() == "help" {
            continue;
        }
        let mut p = path.clone();
        p.push(s.get_name().to_owned());
        page_paths(s, p, into);
    }
}

/// The file name of the page of the command at `path`: `iorig-plan-run.1`.
pub fn page_name(path: &[String]) -> String {
    let mut name = String::from("iorig");
    for p in path {
        name.push('-');
        name.push_str(p);
    }
    name + ".1"
}

/// The built command tree the pages are made from (no `help` subcommand)
/// and the path of every command that has a page.
fn page_tree() -> (Command, Vec<Vec<String>>) {
    let mut root = command().disable_help_subcommand(true);
    root.build();
    let mut paths = Vec::new();
    page_paths(&root, Vec::new(), &mut paths);
    (root, paths)
}

/// Every manual page: iorig(1) and one per subcommand, as (file name, roff).
pub fn man_pages() -> Result<Vec<(String, Vec<u8>)>, std::io::Error> {
    let (root, paths) = page_tree();
    paths
        .iter()
        .map(|p| Ok((page_name(p), render_page(&root, p)?)))
        .collect()
}

/// Every page written into `dir` (made if missing); the line that says so.
pub fn install_pages(dir: &std::path::Path) -> Result<String, String> {
    let pages = man_pages().map_err(|e| format!("rendering the manual pages: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| {
        format!(
            "creating {}: {e}; give a directory you can write, e.g. ~/.local/share/man/man1",
            dir.display()
        )
    })?;
    for (name, page) in &pages {
        let path = dir.join(name);
        std::fs::write(&path, page).map_err(|e| format!("writing {}: {e}", path.display()))?;
    }
    Ok(format!(
        "wrote {} manual pages to {} (read one with: man iorig-run; the directory above it must be on MANPATH, as ~/.local/share/man is)",
        pages.len(),
        dir.display()
    ))
}

/// The manual page of the command at `path` (`["plan", "run"]`), or the
/// line that says which pages there are.
pub fn man_page(path: &[String]) -> Result<Vec<u8>, String> {
    let (root, paths) = page_tree();
    if !paths.iter().any(|p| p.as_slice() == path) {
        let known: Vec<String> = paths
            .iter()
            .filter(|p| p.len() == 1)
            .map(|p| p[0].clone())
            .collect();
        return Err(format!(
            "no manual page for '{}': give one of {} (or a subcommand after it, e.g. iorig man plan run)",
            path.join(" "),
            known.join(", ")
        ));
    }
    render_page(&root, path).map_err(|e| format!("rendering the manual page: {e}"))
}

/// One page: clap_mangen's, then EXAMPLES and SEE ALSO (the examples are
/// taken out of the long help, which clap_mangen would print as "EXTRA").
fn render_page(root: &Command, path: &[String]) -> Result<Vec<u8>, std::io::Error> {
    let mut cmd = root.clone();
    for p in path {
        cmd = cmd
            .find_subcommand(p)
            .cloned()
            .ok_or_else(|| std::io::Error::other(format!("no subcommand {p}")))?;
    }
    let name = page_name(path);
    let name = name.trim_end_matches(".1").to_owned();
    let mut cmd = cmd
        .name(name.clone())
        .display_name(name.clone())
        .bin_name(path_words(path));
    let examples = cmd.get_after_long_help().map(|t| t.to_string());
    cmd = cmd.after_long_help(None::<&str>).after_help(None::<&str>);
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd).render(&mut page)?;
    if let Some(text) = examples {
        writeln!(page, ".SH EXAMPLES")?;
        for line in text.lines().skip(1) {
            writeln!(page, ".TP\n.B {}", roff_escape(line.trim()))?;
        }
    }
    writeln!(page, ".SH SEE ALSO")?;
    let parent = if path.is_empty() {
        "docs/ in iorig's repository; iorig <command> --help".to_string()
    } else {
        let up = page_name(&path[..path.len() - 1]);
        format!("{}(1)", up.trim_end_matches(".1"))
    };
    writeln!(page, "{}", roff_escape(&parent))?;
    Ok(page)
}

fn path_words(path: &[String]) -> String {
    std::iter::once("iorig".to_string())
        .chain(path.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Text made safe for roff: backslashes and hyphens escaped, and a line
/// that would start with a control character shielded.
fn roff_escape(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_parses() {
        let mut bad = Vec::new();
        for (path, line) in examples() {
            let words: Vec<&str> = line
                .split_whitespace()
                .take_while(|w| *w != ">" && *w != "|")
                .collect();
            assert_eq!(words.first(), Some(&"iorig"), "{line}");
            assert!(
                words[1..].starts_with(path),
                "example of {path:?} runs another command: {line}"
            );
            // A built-in named in an example exists.
            if let Some(i) = words.iter().position(|w| *w == "--builtin") {
                let name = words.get(i + 1).copied().unwrap_or("");
                if !iorig_spec::plan::builtins().iter().any(|(n, _)| *n == name) {
                    bad.push(format!("`{line}`: no built-in plan {name}"));
                }
            }
            if let Err(e) = command().try_get_matches_from(&words) {
                bad.push(format!("`{line}`: {}", crate::one_line(&e.to_string())));
            }
        }
        assert!(
            bad.is_empty(),
            "examples that do not parse:\n{}",
            bad.join("\n")
        );
    }

    #[test]
    fn every_command_has_a_page_and_examples() {
        let pages = man_pages().unwrap();
        let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
        for want in [
            "iorig.1",
            "iorig-run.1",
            "iorig-plan-run.1",
            "iorig-trace-analyse.1",
        ] {
            assert!(names.contains(&want), "{want} missing from {names:?}");
        }
        for (name, page) in &pages {
            let text = String::from_utf8_lossy(page);
            assert!(text.contains(".SH EXAMPLES"), "{name} has no examples");
        }
        // A page lists its subcommands under names that exist.
        let root = String::from_utf8_lossy(&pages[0].1).to_string();
        for (name, _) in &pages[1..] {
            let short = name.trim_end_matches(".1");
            if short.matches('-').count() == 1 {
                assert!(
                    root.contains(&short.replace('-', "\\-")),
                    "iorig(1) does not list {short}"
                );
            }
        }
    }

    #[test]
    fn an_unknown_page_is_refused_with_the_known_ones() {
        let e = man_page(&["nope".to_string()]).unwrap_err();
        assert!(e.contains("'nope'") && e.contains("run"), "{e}");
    }
}
