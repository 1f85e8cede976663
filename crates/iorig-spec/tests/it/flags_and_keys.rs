//! Protects the one declaration of the workload parameters: every long flag
//! of `WorkloadFile` is its TOML key with dashes, and the same values given
//! either way give the same layer (so `iorig run --read-bs 64k` and a file's
//! `read_bs = "64k"` cannot drift apart).

use clap::{CommandFactory, Parser};
use iorig_spec::WorkloadFile;

#[derive(Parser)]
struct Flags {
    #[command(flatten)]
    w: WorkloadFile,
}

#[test]
fn every_flag_is_a_toml_key_and_both_give_the_same_layer() {
    let cmd = Flags::command();
    let mut args = vec!["test".to_string()];
    let mut toml = String::new();
    for a in cmd.get_arguments() {
        let Some(long) = a.get_long() else { continue };
        if long == "help" {
            continue;
        }
        let key = long.replace('-', "_");
        let takes_value = a.get_num_args().is_none_or(|n| n.takes_values());
        // A value each parameter accepts at parse time (resolve checks it).
        let value = match key.as_str() {
            "engine" => "psync",
            "range" => "0%-50%",
            "dist" => "zipf:1.2",
            "data" => "zero",
            "seed" => "7",
            "fault" => "eio:after=1",
            "arrivals" => "poisson",
            "fileio" => "random",
            "fileselect" => "zipf:1.2",
            "format" => "dirs",
            "target_order" => "roundrobin:2",
            "cpus_policy" => "split",
            "rw" => "randrw",
            _ => "64k",
        };
        if takes_value {
            args.push(format!("--{long}"));
            args.push(value.to_string());
            if key == "fault" {
                toml.push_str(&format!("{key} = [\"{value}\"]\n"));
            } else if key == "seed" {
                toml.push_str(&format!("{key} = {value}\n"));
            } else {
                toml.push_str(&format!("{key} = \"{value}\"\n"));
            }
        } else if !["buffered", "dsync"].contains(&key.as_str()) {
            // Flags that conflict with their pair are given one of each.
            args.push(format!("--{long}"));
            toml.push_str(&format!("{key} = true\n"));
        }
    }
    let from_flags = Flags::try_parse_from(&args).expect("flags parse").w;
    let from_toml = WorkloadFile::from_toml("keys", &toml).expect("keys parse");
    assert_eq!(from_flags, from_toml, "flags {args:?} vs keys:\n{toml}");
    assert!(from_flags.read_bs.is_some() && from_flags.direct == Some(true));
}

/// A choice's bad value on the command line is said in the words a file
/// gets, and its names are offered (help, completions).
#[test]
fn a_bad_choice_on_the_command_line_says_what_to_give() {
    let err = Flags::try_parse_from(["test", "--engine", "spdk"])
        .err()
        .expect("refused")
        .to_string();
    assert!(
        err.contains("bad engine 'spdk': use io_uring, psync, mmap or null"),
        "{err}"
    );
    let cmd = Flags::command();
    let engine = cmd
        .get_arguments()
        .find(|a| a.get_long() == Some("engine"))
        .expect("--engine");
    let names: Vec<String> = engine
        .get_possible_values()
        .iter()
        .filter(|p| !p.is_hide_set())
        .map(|p| p.get_name().to_string())
        .collect();
    assert_eq!(names, ["io_uring", "psync", "mmap", "null"]);
}

/// fio's names of the same parameters are aliases of iorig's flags, so a
/// fio user's `--iodepth 8 --numjobs 2` means what it says.
#[test]
fn fio_s_flag_names_are_aliases() {
    let fio = Flags::try_parse_from([
        "t",
        "--iodepth",
        "8",
        "--numjobs",
        "2",
        "--blocksize",
        "8k",
        "--rwmixread",
        "70",
        "--ioengine",
        "psync",
        "--runtime",
        "5",
    ])
    .expect("fio's names parse")
    .w;
    let ours = Flags::try_parse_from([
        "t",
        "--qd",
        "8",
        "--threads",
        "2",
        "--bs",
        "8k",
        "--read",
        "70",
        "--engine",
        "psync",
        "--time",
        "5",
    ])
    .expect("iorig's names parse")
    .w;
    assert_eq!(fio, ours);
}
