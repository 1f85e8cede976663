#![allow(clippy::unwrap_used)]
//! What the translation protects: each fio option's meaning in iorig's
//! keys, fio's grouping by stonewall, and refusals that name file, line
//! and option.

use super::*;
use std::collections::BTreeMap;

struct Mem(BTreeMap<String, String>, BTreeMap<String, String>);

impl crate::Loader for Mem {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        self.0
            .get(&path.display().to_string())
            .cloned()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::NotFound))
    }
    fn env(&self, name: &str) -> Option<String> {
        self.1.get(name).cloned()
    }
    /// Every target exists but those named "missing".
    fn exists(&self, path: &Path) -> bool {
        !path.to_string_lossy().contains("missing")
    }
    /// A machine of 6 CPUs, 4 KiB pages and 2 GiB.
    fn keyword(&self, name: &str) -> Option<u64> {
        match name {
            "ncpus" => Some(6),
            "pagesize" => Some(4096),
            "mb_memory" => Some(2048),
            _ => None,
        }
    }
}

fn mem() -> Mem {
    Mem(BTreeMap::new(), BTreeMap::new())
}

fn tr(text: &str) -> Result<Translation, String> {
    translate(Path::new("t.fio"), text, &mem(), &Options::default()).map_err(|e| e.to_string())
}

fn plan(text: &str) -> toml::Table {
    toml::from_str(&tr(text).unwrap().plan_toml).unwrap()
}

fn job(p: &toml::Table, step: usize, j: usize) -> toml::Table {
    p["steps"].as_array().unwrap()[step]["jobs"]
        .as_array()
        .unwrap()[j]
        .as_table()
        .unwrap()
        .clone()
}

#[test]
fn a_random_read_job_maps_to_iorig_keys() {
    let p = plan(
        "[global]\nioengine=libaio\ndirect=1\nbs=4k\nsize=1g\nruntime=30\ntime_based\n\n[rr]\nrw=randread\niodepth=32\nnumjobs=4\nfilename=/dev/loop7\n",
    );
    let j = job(&p, 0, 0);
    assert_eq!(j["name"].as_str(), Some("rr"));
    assert_eq!(
        j["target"].as_array().unwrap()[0].as_str(),
        Some("/dev/loop7")
    );
    assert_eq!(j["engine"].as_str(), Some("io_uring"));
    assert_eq!(j["qd"].as_integer(), Some(32));
    assert_eq!(j["threads"].as_integer(), Some(4));
    assert_eq!(j["read"].as_float(), Some(100.0));
    assert_eq!(j["random"].as_float(), Some(100.0));
    assert_eq!(j["direct"].as_bool(), Some(true));
    assert_eq!(j["time"].as_str(), Some("30s"));
    assert_eq!(j["size"].as_str(), Some("1g"));
    assert!(j.get("io_size").is_none());
}

#[test]
fn without_time_based_a_job_ends_by_its_bytes() {
    let p = plan("[w]\nrw=write\nbs=1m\nsize=64m\nloops=2\nnumjobs=2\n");
    let j = job(&p, 0, 0);
    // Two clones, each its own file of 64m, each written twice.
    assert_eq!(j["io_size"].as_str(), Some("256m"));
    assert_eq!(j["time"].as_str(), Some("1000h"));
    let t: Vec<&str> = j["target"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(t, ["./w.0.0", "./w.1.0"]);
    // fio's defaults: psync, buffered, sequential.
    assert_eq!(j["engine"].as_str(), Some("psync"));
    assert_eq!(j["buffered"].as_bool(), Some(true));
    assert_eq!(j["random"].as_float(), Some(0.0));
    assert_eq!(j["read"].as_float(), Some(0.0));
}

#[test]
fn stonewall_starts_a_new_step_and_jobs_between_run_together() {
    let t = tr("[global]\nsize=16m\n[a]\nrw=read\n[b]\nrw=write\n[c]\nstonewall\nrw=randread\n[d]\nnew_group\nrw=randwrite\n").unwrap();
    let at: Vec<(usize, usize, u32)> = t
        .jobs
        .iter()
        .map(|j| (j.step, j.position, j.groupid))
        .collect();
    assert_eq!(at, [(0, 0, 0), (0, 1, 0), (1, 0, 1), (1, 1, 2)]);
    let p: toml::Table = toml::from_str(&t.plan_toml).unwrap();
    assert_eq!(p["steps"].as_array().unwrap().len(), 2);
}

#[test]
fn mixes_sizes_rates_and_distributions() {
    let p = plan("[m]\nrw=randrw\nrwmixwrite=30\nbssplit=4k/10:64k/50:32k/\nsize=10%\nrate_iops=500\nnumjobs=2\nioengine=io_uring\niodepth=8\nruntime=10s\ntime_based\nrandom_distribution=zipf:1.2\nrandseed=42\nbuffer_compress_percentage=50\nfilename=/tmp/x\n");
    let j = job(&p, 0, 0);
    assert_eq!(j["bs"].as_str(), Some("4k:10,64k:50,32k:40"));
    assert_eq!(j["range"].as_str(), Some("0%-10%"));
    // rate_iops is per clone and per direction in fio (500 reads and 500
    // writes a second, whatever rwmixwrite: fio 3.33 on its null engine);
    // iorig's caps are the job's totals.
    assert_eq!(j["read_rate"].as_integer(), Some(1000));
    assert_eq!(j["write_rate"].as_integer(), Some(1000));
    assert!(j.get("rate").is_none());
    assert_eq!(j["read"].as_float(), Some(70.0));
    let j = job(
        &plan("[m]\nrw=randrw\nrwmixread=70\nsize=1g\nrate_iops=1000,500\n"),
        0,
        0,
    );
    assert_eq!(
        (j["read_rate"].as_integer(), j["write_rate"].as_integer()),
        (Some(1000), Some(500))
    );
    // Bytes/s per direction by each direction's mean block size.
    let j = job(
        &plan("[m]\nrw=randrw\nsize=1g\nbs=4k,16k\nrate=4m,8m\n"),
        0,
        0,
    );
    assert_eq!(
        (j["read_rate"].as_integer(), j["write_rate"].as_integer()),
        (Some(1024), Some(512))
    );
    // A direction the mix never issues gets no cap.
    let j = job(
        &plan("[m]\nrw=randrw\nrwmixread=100\nsize=1g\nrate_iops=300\n"),
        0,
        0,
    );
    assert_eq!(
        (j["read_rate"].as_integer(), j.get("write_rate")),
        (Some(300), None)
    );
    // end_fsync and fsync_on_close are each their own: a job's 0 undoes
    // [global]'s 1 of the same option only.
    let pe = plan("[global]\nsize=1m\nrw=write\nend_fsync=1\n[a]\nend_fsync=0\n[b]\nend_fsync=0\nfsync_on_close=1\n");
    assert!(job(&pe, 0, 0).get("fsync_at_end").is_none());
    assert_eq!(job(&pe, 0, 1)["fsync_at_end"].as_bool(), Some(true));
    // A later dedupe_percentage keeps the compression given before it.
    let j = job(&plan("[j]\nsize=1g\nrw=write\nbuffer_compress_percentage=75\ndedupe_percentage=50\ndedupe_percentage=75\n"), 0, 0);
    assert_eq!(j["data"].as_str(), Some("dedup:4,compress:4"));
    // A rate for one direction: the other runs unpaced, as in fio.
    let j = job(&plan("[m]\nrw=randrw\nsize=1g\nrate_iops=,500\n"), 0, 0);
    assert_eq!(
        (j.get("read_rate"), j["write_rate"].as_integer()),
        (None, Some(500))
    );
    let j = job(&plan("[m]\nrw=randrw\nrwmixwrite=30\nsize=1g\n"), 0, 0);
    assert_eq!(j["read"].as_float(), Some(70.0));
    let j = job(&p, 0, 0);
    assert_eq!(j["dist"].as_str(), Some("zipf:1.2"));
    assert_eq!(j["seed"].as_integer(), Some(42));
    assert_eq!(j["data"].as_str(), Some("compress:2"));
    let p = plan("[r]\nrw=read\nbs=64k\nrate=1m\nsize=1g\nfilename=/tmp/x\n");
    assert_eq!(job(&p, 0, 0)["rate"].as_integer(), Some(16));
}

#[test]
fn offsets_env_and_includes() {
    let mut m = mem();
    m.0.insert("./inc.fio".into(), "[global]\nbs=8k\n".into());
    m.1.insert("DEV".into(), "/tmp/dev1".into());
    let t = translate(
        Path::new("./t.fio"),
        "include inc.fio\n[j]\nfilename=${DEV}\nsize=1g\noffset=1g\nrw=randread\n",
        &m,
        &Options::default(),
    )
    .unwrap();
    let p: toml::Table = toml::from_str(&t.plan_toml).unwrap();
    let j = job(&p, 0, 0);
    assert_eq!(
        j["target"].as_array().unwrap()[0].as_str(),
        Some("/tmp/dev1")
    );
    assert_eq!(j["bs"].as_str(), Some("8k"));
    assert_eq!(j["size"].as_str(), Some("2g"));
    assert_eq!(j["range"].as_str(), Some("50%-100%"));
}

#[test]
fn refusals_name_file_line_and_option() {
    let e = tr("[j]\nsize=1g\nprio=3\n").unwrap_err();
    assert!(e.starts_with("t.fio:3: prio is not supported"), "{e}");
    assert!(e.contains("--ignore-unsupported"), "{e}");
    let e = tr("[j]\nsize=1g\nrw=randred\n").unwrap_err();
    assert!(e.starts_with("t.fio:3: rw: 'randred'"), "{e}");
    let e = tr("[j]\nsize=1g\niodepht=4\n").unwrap_err();
    assert!(
        e.contains("unknown fio option 'iodepht'") && e.contains("iodepth"),
        "{e}"
    );
    let e = tr("[j]\nfilename=${NOPE}\n").unwrap_err();
    assert!(e.starts_with("t.fio:2: ${NOPE} is not set"), "{e}");
    let e = tr("rw=read\n").unwrap_err();
    assert!(e.contains("before any section"), "{e}");
    let e = tr("[j]\nioengine=rbd\nsize=1g\n").unwrap_err();
    assert!(e.contains("engine 'rbd' is not supported"), "{e}");
    let e = tr("[j]\nrw=read\n").unwrap_err();
    assert!(e.contains("without size="), "{e}");
    let e = tr("[global]\nbs=4k\n").unwrap_err();
    assert!(e.contains("no job sections"), "{e}");
    let mut m = mem();
    m.0.insert("./a.fio".into(), "include b.fio\n".into());
    m.0.insert("./b.fio".into(), "include a.fio\n".into());
    let e = translate(
        Path::new("./a.fio"),
        "include b.fio\n",
        &m,
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    // Said at b.fio's line, whose text (the path) is not shown.
    assert_eq!(
        e,
        "./b.fio:1: this include loops back to the job file ./a.fio; remove one of the includes"
    );
    let e = translate(
        Path::new("./a.fio"),
        "include c.fio\n",
        &m,
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("./a.fio:1: include ./c.fio"), "{e}");
}

#[test]
fn ignore_unsupported_lists_what_it_left_out() {
    let t = translate(
        Path::new("t.fio"),
        "[j]\nsize=1g\nprio=3\nnice=5\n",
        &mem(),
        &Options {
            ignore_unsupported: true,
        },
    )
    .unwrap();
    assert_eq!(t.ignored, ["t.fio:3 prio", "t.fio:4 nice"]);
    assert!(t.plan_toml.contains("t.fio:3 prio; t.fio:4 nice"));
}

#[test]
fn every_translated_plan_is_an_iorig_plan() {
    for text in [
        "[a]\nrw=randread\nsize=16m\n",
        "[global]\nsize=16m\nioengine=libaio\niodepth=4\ndirect=1\n[a]\nrw=randrw\n[b]\nrw=write\nbs=4k,64k\n[c]\nstonewall\nrw=read\nruntime=2\ntime_based\n",
    ] {
        let t = tr(text).unwrap();
        let p = iorig_spec::Plan::from_toml("t.fio", &t.plan_toml).unwrap();
        let steps = p.expand().unwrap();
        assert!(steps.iter().all(|s| !s.jobs.is_empty()), "{}", t.plan_toml);
    }
}

#[test]
fn bssplit_shares() {
    assert_eq!(bssplit("4k/50:64k/50", 1024).unwrap(), "4k:50,64k:50");
    assert_eq!(bssplit("4k/10:8k:16k", 1024).unwrap(), "4k:10,8k:45,16k:45");
    assert!(bssplit("4k/60:8k/60", 1024).is_err());
    assert!(bssplit("4k/50:8k/40", 1024).is_err());
}

/// The option names in the first column of the table rows under the
/// docs/fio.md heading that starts with `title` (`rw=...` forms and
/// other prose left out).
fn doc_rows(doc: &'static str, title: &str) -> Vec<&'static str> {
    let mut names = Vec::new();
    let mut inside = false;
    for line in doc.lines() {
        if line.starts_with("#") {
            inside = line
                .strip_prefix("### ")
                .is_some_and(|t| t.starts_with(title));
            continue;
        }
        let Some(cell) = line.strip_prefix('|').and_then(|l| l.split('|').next()) else {
            continue;
        };
        if !inside {
            continue;
        }
        for (i, piece) in cell.split('`').enumerate() {
            let plain = piece
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
            if i % 2 == 1 && plain && !piece.is_empty() {
                names.push(piece);
            }
        }
    }
    names
}

/// docs/fio.md and the option table agree both ways: every option (and
/// alias) has a row in the section of its treatment, and every option a
/// section's rows name is in the table with that treatment.
#[test]
fn the_docs_and_the_option_table_agree() {
    let doc = include_str!("../../../../docs/fio.md");
    let kind = |t: &options::Treatment| match t {
        options::Treatment::Mapped(_) => "Mapped to iorig",
        options::Treatment::NoEffect(_) => "Accepted with no effect",
        options::Treatment::Refused(_) => "Refused",
    };
    let mut wrong = Vec::new();
    for title in ["Mapped to iorig", "Accepted with no effect", "Refused"] {
        let rows = doc_rows(doc, title);
        assert!(!rows.is_empty(), "docs/fio.md has no rows under '{title}'");
        for name in &rows {
            match options::lookup(name) {
                Some(o) if kind(&o.treatment) == title => {}
                Some(o) => wrong.push(format!(
                    "{name}: documented under '{title}', {}",
                    kind(&o.treatment)
                )),
                None => wrong.push(format!(
                    "{name}: documented under '{title}', not in the table"
                )),
            }
        }
        for o in options::OPTIONS
            .iter()
            .filter(|o| kind(&o.treatment) == title)
        {
            for name in o.names {
                if !rows.contains(name) {
                    wrong.push(format!("{name}: no row under '{title}'"));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "docs/fio.md and the option table disagree:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn cpus_and_exitall() {
    let p = plan("[a]\nsize=1m\ncpus_allowed=0-1,3\nexitall\n[b]\nsize=1m\ncpumask=0x5\n");
    assert_eq!(job(&p, 0, 0)["cpus"].as_str(), Some("0-1,3"));
    assert_eq!(job(&p, 0, 0)["exitall"].as_bool(), Some(true));
    assert_eq!(job(&p, 0, 1)["cpus"].as_str(), Some("0,2"));
    // Decimal unless 0x: fio's own example, 34 = CPUs 1 and 5.
    let p = plan("[a]\nsize=1m\ncpumask=34\n");
    assert_eq!(job(&p, 0, 0)["cpus"].as_str(), Some("1,5"));
    let e = tr("[a]\nsize=1m\ncpus_allowed=3-1\n").unwrap_err();
    assert!(e.contains("backwards"), "{e}");
}

#[test]
fn bsrange_gets_fios_odds_and_rw_suffixes_become_runs_and_skips() {
    let p = plan("[j]\nsize=1g\nrw=randread\nbsrange=4k-16k\n");
    assert_eq!(job(&p, 0, 0)["bs"].as_str(), Some("4k:1,8k:1,12k:1,16k:1"));
    // Draws in [4k, 14k): 12k and above are capped at 10k.
    let p = plan("[j]\nsize=1g\nrw=randread\nbsrange=4k-10k\n");
    assert_eq!(job(&p, 0, 0)["bs"].as_str(), Some("4k:2,8k:2,10k:1"));
    // bs_unaligned: any 512-byte multiple, the cap taking min/max.
    let p = plan("[j]\nsize=1g\nrw=randread\nbsrange=1k-2k\nbs_unaligned\n");
    assert_eq!(job(&p, 0, 0)["bs"].as_str(), Some("1k:1,1536:1,2k:2"));
    // fio aligns to the smallest size by default.
    let p = plan("[j]\nsize=1g\nrw=randread\nbsrange=64k-256k\n");
    assert_eq!(job(&p, 0, 0)["align"].as_str(), Some("64k"));
    let p = plan("[j]\nsize=1g\nrw=randread:8\nblockalign=512\n");
    assert_eq!(job(&p, 0, 0)["run_length"].as_integer(), Some(8));
    assert_eq!(job(&p, 0, 0)["align"].as_str(), Some("512"));
    let p = plan("[j]\nsize=1g\nrw=write:8k\n");
    assert_eq!(job(&p, 0, 0)["skip"].as_str(), Some("8k"));
    let e = tr("[j]\nsize=1g\nbsrange=4k\n").unwrap_err();
    assert!(e.contains("give MIN-MAX"), "{e}");
}

#[test]
fn without_size_a_job_covers_its_existing_files() {
    let p = plan("[j]\nfilename=/dev/sdz\nrw=randread\nnumjobs=2\nloops=3\n");
    assert_eq!(job(&p, 0, 0)["io_size"].as_str(), Some("600%"));
    assert!(job(&p, 0, 0).get("size").is_none());
    let p = plan("[j]\nfilename=/dev/sdz\nrw=write\nfill_device=1\n");
    assert_eq!(job(&p, 0, 0)["io_size"].as_str(), Some("100%"));
    let e = tr("[j]\nfilename=/tmp/missing\nrw=read\n").unwrap_err();
    assert!(e.contains("does not exist and no size="), "{e}");
    let e = tr("[j]\ndirectory=/tmp\nsize=1g\nfill_device=1\n").unwrap_err();
    assert!(e.contains("fill_device on files"), "{e}");
}

#[test]
fn cpus_split_gives_each_clone_a_cpu() {
    let j = job(
        &plan("[j]\nsize=1g\nnumjobs=4\ncpus_allowed=2-3\ncpus_allowed_policy=split\n"),
        0,
        0,
    );
    assert_eq!(j["cpus"].as_str(), Some("2-3"));
    assert_eq!(j["cpus_policy"].as_str(), Some("split"));
    // Without cpus_allowed, every CPU of the machine (6 here).
    let j = job(&plan("[j]\nsize=1g\ncpus_allowed_policy=split\n"), 0, 0);
    assert_eq!(j["cpus"].as_str(), Some("0-5"));
    let e = tr("[j]\nsize=1g\ncpus_allowed_policy=spread\n").unwrap_err();
    assert!(e.contains("give shared or split"), "{e}");
}

#[test]
fn a_later_size_less_job_reads_the_file_an_earlier_one_made() {
    // fio runs the second job on the file the first one wrote; so does iorig.
    let p = plan("[w]\nfilename=/tmp/missing.dat\nrw=write\nsize=8m\nbs=1m\n[r]\nstonewall\nfilename=/tmp/missing.dat\nrw=read\nbs=1m\n");
    let r = job(&p, 1, 0);
    assert_eq!(r["size"].as_str(), Some("8m"));
    assert_eq!(r["io_size"].as_str(), Some("8m"));
    // A file no job makes still needs a size.
    let e = tr("[w]\nfilename=/tmp/missing.a\nrw=write\nsize=8m\n[r]\nstonewall\nfilename=/tmp/missing.b\nrw=read\n").unwrap_err();
    assert!(e.contains("missing.b does not exist"), "{e}");
}

#[test]
fn import_says_that_its_plan_writes_no_fio_logs() {
    let t = tr("[j]\nsize=1m\nwrite_bw_log=x\nwrite_lat_log\n").unwrap();
    let p = crate::foreign::Plan {
        toml: t.plan_toml.clone(),
        notices: vec![],
        ignored: vec![],
        fio: Some(t),
        source: String::new(),
        journal: false,
        journal_dir: None,
    };
    let told = p.told_on_import().join("\n");
    assert!(told.contains("job j: write_bw_log, write_lat_log: fio-format logs are written when the job file itself runs"), "{told}");
    assert!(p.told().is_empty());
}

#[test]
fn steady_state_follows_fios_rules() {
    let p = plan("[j]\nsize=1g\nrw=randread\nruntime=60\ntime_based\nss=iops_slope:0.5%\nss_dur=10s\nss_ramp=5\n");
    let ss = p["steps"].as_array().unwrap()[0]["steady_state"]
        .as_table()
        .unwrap()
        .clone();
    assert_eq!(ss["round"].as_str(), Some("1s"));
    assert_eq!(ss["window"].as_integer(), Some(10));
    assert_eq!(ss["max_rounds"].as_integer(), Some(60));
    assert_eq!(ss["rule"].as_str(), Some("slope:0.5%"));
    assert_eq!(ss["ramp"].as_str(), Some("5s"));
    let p = plan("[j]\nsize=1g\nrw=randread\nruntime=60\ntime_based\nss=bw:10%\nss_dur=10\n");
    let ss = p["steps"].as_array().unwrap()[0]["steady_state"]
        .as_table()
        .unwrap()
        .clone();
    assert_eq!(ss["rule"].as_str(), Some("deviation:10%"));
    for (text, says) in [
        ("ss=iops:300\nss_dur=10\n", "as a percentage"),
        ("ss=iops:10%\n", "give ss_dur"),
        ("ss=iops:10%\nss_dur=50\nss_ramp=20\n", "exceed the runtime"),
        (
            "ss=bw:10%\nss_dur=10\nbssplit=4k/50:8k/50\n",
            "mixed block sizes",
        ),
        ("ss=lat:10%\nss_dur=10\n", "give iops"),
    ] {
        let e = tr(&format!(
            "[j]\nsize=1g\nrw=randread\nruntime=60\ntime_based\n{text}"
        ))
        .unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
    }
    let e = tr("[a]\nsize=1g\nruntime=60\ntime_based\nss=iops:10%\nss_dur=10\n[b]\nsize=1g\n")
        .unwrap_err();
    assert!(e.contains("runs at once with others"), "{e}");
}

#[test]
fn everyday_options_map_or_refuse_with_reason() {
    // Clones side by side over a quarter each: one job over the whole.
    let p = plan("[j]\nfilename=/dev/sdz\nsize=25%\noffset_increment=25%\nnumjobs=4\nrw=read\n");
    assert_eq!(job(&p, 0, 0)["range"].as_str(), Some("0%-100%"));
    assert_eq!(job(&p, 0, 0)["threads"].as_integer(), Some(4));
    // Each clone reads its quarter once: the union once, not four times.
    assert_eq!(job(&p, 0, 0)["io_size"].as_str(), Some("100%"));
    let p = plan("[j]\nfilename=/tmp/f\nsize=1g\noffset_increment=1g\nnumjobs=2\nrw=read\n");
    assert_eq!(job(&p, 0, 0)["size"].as_str(), Some("2g"));
    let e = tr("[j]\nfilename=/tmp/f\nsize=1g\noffset_increment=2g\nnumjobs=2\n").unwrap_err();
    assert!(
        e.contains("offset_increment is supported when it equals size"),
        "{e}"
    );
    let e = tr("[j]\nfilename=/dev/sdz\nsize=50%\noffset_increment=50%\nnumjobs=3\n").unwrap_err();
    assert!(e.contains("pass the end"), "{e}");
    // unlink, continue_on_error=verify, exit_what.
    let p = plan("[j]\nsize=1g\nrw=randwrite\nunlink=1\nverify=crc32c\ncontinue_on_error=verify\nexitall\nexit_what=stonewall\n");
    assert_eq!(job(&p, 0, 0)["unlink"].as_bool(), Some(true));
    // fio's invalidate=0 keeps the page cache; invalidate=1 is iorig's default.
    let inv =
        plan("[j]\nsize=1g\nrw=randread\ninvalidate=0\n[k]\nsize=1g\nrw=randread\ninvalidate=1\n");
    assert_eq!(job(&inv, 0, 0)["keep_cache"].as_bool(), Some(true));
    assert_eq!(job(&inv, 0, 1).get("keep_cache"), None);
    assert_eq!(
        p["steps"].as_array().unwrap()[0]["max_errors"].as_integer(),
        Some(i64::from(u32::MAX))
    );
    for (text, says) in [
        ("continue_on_error=sometimes\n", "give none"),
        ("exitall\nexit_what=all\n", "all is not supported"),
        (
            "nrfiles=2\nrw=randread\nfile_service_type=sequential\n",
            "give file_service_type=random",
        ),
        ("nrfiles=2\nfile_service_type=zipf:1.2\n", "'zipf'"),
        ("io_submit_mode=later\n", "inline or offload"),
    ] {
        let e = tr(&format!("[j]\nsize=1g\n{text}")).unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
    }
    // Fewer open files than files: the same I/Os, said once.
    let t = tr("[j]\nsize=1g\nnrfiles=4\nopenfiles=2\n").unwrap();
    assert!(
        t.notices
            .iter()
            .any(|n| n.contains("openfiles=2: iorig opens all 4 files")),
        "{:?}",
        t.notices
    );
    // A compress chunk that divides 4k gives each 4 KiB block the share.
    let t =
        tr("[j]\nsize=1g\nrw=write\nbuffer_compress_percentage=50\nbuffer_compress_chunk=512\n")
            .unwrap();
    assert!(
        t.plan_toml.contains("data = \"compress:2\""),
        "{}",
        t.plan_toml
    );
    assert!(t
        .notices
        .iter()
        .any(|n| n.contains("buffer_compress_chunk=512")));
    let j = job(
        &plan("[j]\nsize=1g\nrw=write\ndedupe_percentage=50\nbuffer_compress_percentage=75\n"),
        0,
        0,
    );
    assert_eq!(j["data"].as_str(), Some("dedup:2,compress:4"));
    let e = tr("[j]\nsize=1g\nbuffer_compress_chunk=64k\n").unwrap_err();
    assert!(e.contains("divides 4k"), "{e}");
    // A sequential job takes its files in fio's order: roundrobin by
    // default, or as file_service_type says.
    let j = job(&plan("[j]\nsize=1g\nnrfiles=2\nrw=read\n"), 0, 0);
    assert_eq!(j["target_order"].as_str(), Some("roundrobin"));
    let j = job(
        &plan("[j]\nsize=1g\nnrfiles=2\nrw=write\nfile_service_type=random:4\n"),
        0,
        0,
    );
    assert_eq!(j["target_order"].as_str(), Some("random:4"));
    let j = job(
        &plan("[j]\nsize=1g\nnrfiles=2\nrw=write\nfile_service_type=sequential\n"),
        0,
        0,
    );
    assert!(j.get("target_order").is_none());
    let j = job(&plan("[j]\nsize=1g\nnrfiles=2\nrw=randread\n"), 0, 0);
    assert!(j.get("target_order").is_none());
    assert!(tr("[j]\nsize=1g\nnrfiles=2\nrw=randread\nfile_service_type=roundrobin:4\nopenfiles=2\nio_submit_mode=offload\n").is_ok());
}

#[test]
fn metadata_engines_become_a_tree_workload() {
    let p = plan("[c]\nioengine=filecreate\ndirectory=/t\nnrfiles=50\nnumjobs=4\nfilesize=4k\n");
    let j = job(&p, 0, 0);
    assert_eq!(j["anchor"].as_str(), Some("/t"));
    assert_eq!(j["depth"].as_integer(), Some(0));
    assert_eq!(j["files"].as_integer(), Some(200));
    assert_eq!(j["threads"].as_integer(), Some(4));
    assert_eq!(j["ops"].as_str(), Some("create"));
    // filecreate writes no data; the tree starts with every file removed.
    assert_eq!(j["file_size"].as_str(), Some("0"));
    assert_eq!(j["format"].as_str(), Some("dirs"));
    // filestat without a runtime stats each file once: one pass.
    let j = job(
        &plan("[s]\nioengine=filestat\ndirectory=/t\nnrfiles=10\n"),
        0,
        0,
    );
    assert_eq!(j["file_passes"].as_integer(), Some(1));
    assert_eq!(j["fileselect"].as_str(), Some("sequential"));
    let p = plan("[d]\nioengine=filedelete\ndirectory=/t\nnrfiles=10\nfilesize=8k\n");
    assert_eq!(job(&p, 0, 0)["file_size"].as_str(), Some("8k"));
    assert_eq!(job(&p, 0, 0)["format"].as_str(), Some("restart"));
    for (text, says) in [
        (
            "ioengine=filecreate\nnrfiles=10\n",
            "give an empty directory",
        ),
        (
            "ioengine=filestat\ndirectory=/t\ntime_based\nruntime=5\nstat_type=statx\n",
            "stat_type=stat",
        ),
    ] {
        let e = tr(&format!("[j]\n{text}")).unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
    }
    // size with filesize as fio 3.33 reads them: files at filesize, the
    // I/O size over them (each file's first size ÷ files), at most theirs.
    let j = job(
        &plan("[j]\nnrfiles=2\nfilesize=4m\nsize=2m\nrw=read\n"),
        0,
        0,
    );
    assert_eq!(j["size"].as_str(), Some("4m"));
    assert_eq!(j["range"].as_str(), Some("0%-25%"));
    assert_eq!(j["io_size"].as_str(), Some("2m"));
    let j = job(
        &plan("[j]\nnrfiles=2\nfilesize=1m\nsize=8m\nrw=read\n"),
        0,
        0,
    );
    assert_eq!(j["size"].as_str(), Some("1m"));
    assert!(j.get("range").is_none());
    assert_eq!(j["io_size"].as_str(), Some("2m"));
    let p = plan("[j]\nnrfiles=4\nfilesize=1m\nrw=read\n");
    assert_eq!(job(&p, 0, 0)["size"].as_str(), Some("1m"));
}

#[test]
fn strided_zones() {
    let p = plan(
        "[j]\nsize=1g\nrw=randread\nzonemode=strided\nzonerange=64m\nzonesize=16m\nzoneskip=64m\n",
    );
    let j = job(&p, 0, 0);
    assert_eq!(j["zone_range"].as_str(), Some("64m"));
    assert_eq!(j["zone_size"].as_str(), Some("16m"));
    assert_eq!(j["zone_skip"].as_str(), Some("64m"));
    // zonesize alone is both, as fio fills zonerange from it; zonerange
    // alone makes no zones.
    let p = plan("[j]\nsize=1g\nrw=read\nzonesize=8m\n");
    assert_eq!(job(&p, 0, 0)["zone_range"].as_str(), Some("8m"));
    assert!(job(&p, 0, 0).get("zone_size").is_none());
    let p = plan("[j]\nsize=1g\nrw=read\nzonerange=8m\n");
    assert!(job(&p, 0, 0).get("zone_range").is_none());
    for (text, says) in [
        ("zonemode=zbd\n", "give strided"),
        ("zonemode=strided\n", "needs zonesize"),
        ("zonemode=strided\nzonerange=8m\n", "needs zonesize"),
        ("zonemode=none\nzonesize=8m\n", "fio refuses this too"),
    ] {
        let e = tr(&format!("[j]\nsize=1g\n{text}")).unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
    }
}

#[test]
fn rate_floors_per_clone_and_cycle() {
    let p = plan("[j]\nsize=1g\nrw=randread\nnumjobs=2\nrate_iops_min=300\nratecycle=500\n");
    let j = job(&p, 0, 0);
    assert_eq!(j["min_iops"].as_integer(), Some(600));
    assert_eq!(j["interval"].as_str(), Some("500ms"));
    let p = plan("[j]\nsize=1g\nrw=read\nbs=64k\nrate_min=64m\n");
    assert_eq!(job(&p, 0, 0)["min_iops"].as_integer(), Some(1024));
    let e = tr("[j]\nsize=1g\nrate_iops_min=10\nratecycle=500\nlog_avg_msec=250\nwrite_bw_log=x\n")
        .unwrap_err();
    assert!(e.contains("give them the same value"), "{e}");
    let e = tr("[j]\nsize=1g\nrw=randrw\nrate_iops_min=10\n").unwrap_err();
    assert!(e.contains("mixed job"), "{e}");
}

#[test]
fn continue_on_error_and_ignore_error_as_fio_reads_them() {
    // io: fio's non-fatal errors by default; ignore_error replaces the list.
    let p = plan("[j]\nsize=1g\nrw=randread\ncontinue_on_error=io\n");
    assert_eq!(job(&p, 0, 0)["ignore_errors"].as_str(), Some("EIO,EILSEQ"));
    let p = plan("[j]\nsize=1g\nrw=randwrite\ncontinue_on_error=write\nignore_error=,ENOSPC:EIO\n");
    assert_eq!(job(&p, 0, 0)["ignore_errors"].as_str(), Some("ENOSPC,EIO"));
    // Not covered: no effect, as in fio.
    let t = tr("[j]\nsize=1g\nrw=randread\nignore_error=EIO\n").unwrap();
    assert!(!t.plan_toml.contains("ignore_errors"));
    assert!(
        t.notices.iter().any(|n| n.contains("no effect")),
        "{:?}",
        t.notices
    );
    for (text, says) in [
        ("rw=randrw\ncontinue_on_error=read\n", "differently"),
        ("rw=randread\ncontinue_on_error=bogus\n", "give none"),
        (
            "rw=randread\ncontinue_on_error=io\nignore_error=EIO,EIO,EIO\n",
            "verify error list",
        ),
        (
            "rw=randwrite\nverify=crc32c\ncontinue_on_error=all\n",
            "together with verify",
        ),
    ] {
        let e = tr(&format!("[j]\nsize=1g\n{text}")).unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
    }
}

/// fio's latency profiling becomes iorig's max-under-target method: a curve
/// step judged at the job's percentile, each rate run for one window.
#[test]
fn latency_target_is_a_curve_judged_at_the_percentile() {
    let text = "[global]\nsize=16m\nfilename=/tmp/x\nrw=randread\niodepth=32\nlatency_percentile=99.9\n\n[a]\nlatency_target=500\nlatency_window=2s\nruntime=60\n";
    let t = tr(text).unwrap();
    let p: toml::Table = toml::from_str(&t.plan_toml).unwrap();
    let step = p["steps"].as_array().unwrap()[0].as_table().unwrap();
    assert_eq!(step["kind"].as_str(), Some("curve"));
    // 500 (µs, fio's unit) is 0.5 ms.
    assert_eq!(step["threshold_ms"].as_float(), Some(0.5));
    assert_eq!(step["threshold_percentile"].as_float(), Some(99.9));
    let j = job(&p, 0, 0);
    assert_eq!(j["time"].as_str(), Some("2s"));
    assert!(!j.contains_key("io_size"), "{j:?}");
    let c = t.jobs[0].latency.clone().unwrap();
    assert_eq!(
        (c.threshold_ns, c.percentile, c.window_ns),
        (500_000, 99.9, 2_000_000_000)
    );
    // It expands to the max, the default rates and five bisection
    // rounds, each one job.
    assert_eq!(step["refine"].as_integer(), Some(5));
    let expanded = iorig_spec::Plan::from_toml("t.fio", &t.plan_toml).unwrap();
    let steps = expanded.expand().unwrap();
    assert_eq!(steps.len(), 12);
    assert!(matches!(
        steps[11].role,
        iorig_spec::plan::StepRole::CurveRefine { round: 5, .. }
    ));
    assert_eq!(steps[7].label, "a refine=1");
    assert!(steps.iter().all(|s| s.jobs.len() == 1
        && s.threshold_percentile == Some(99.9)
        && s.threshold_ms == Some(0.5)));
    // Without a window each rate runs the runtime; fio's default
    // percentile is 100 (the maximum).
    let p = plan("[a]\nsize=16m\nlatency_target=1ms\nruntime=3\n");
    let step = p["steps"].as_array().unwrap()[0].as_table().unwrap();
    assert_eq!(step["threshold_percentile"].as_integer(), Some(100));
    assert_eq!(job(&p, 0, 0)["time"].as_str(), Some("3s"));
}

#[test]
fn latency_target_refuses_what_a_curve_cannot_hold() {
    let base = "[a]\nsize=16m\nlatency_target=1ms\nlatency_window=1s\n";
    for (extra, why) in [
        ("rate_iops=100\n", "the curve sets the rate itself"),
        (
            "latency_percentile=95\n",
            "give 50, 90, 99, 99.9, 99.99 or 100",
        ),
        ("latency_run=1\n", "remove latency_run"),
        ("write_lat_log=x\n", "write_*_log"),
        (
            "verify=crc32c\nrw=randwrite\n",
            "latency_target with verify is not supported",
        ),
    ] {
        let e = tr(&format!("{base}{extra}")).unwrap_err();
        assert!(e.contains(why), "{extra}: {e}");
        assert!(e.starts_with("t.fio:"), "{e}");
    }
    // Without a target fio ignores the percentile, and so does iorig.
    assert!(tr("[global]\nlatency_percentile=95\n[a]\nsize=16m\n").is_ok());
    let e = tr("[a]\nsize=16m\nlatency_target=1ms\n").unwrap_err();
    assert!(e.contains("give latency_window"), "{e}");
    // Beside another job, as fio's own example has them: refused with the
    // line of the target.
    let e = tr("[a]\nsize=16m\nlatency_target=1ms\nruntime=2\n[b]\nsize=16m\n").unwrap_err();
    assert!(
        e.starts_with("t.fio:3:") && e.contains("put stonewall before and after it"),
        "{e}"
    );
}

/// Every option fio 3.33 knows (its `--cmdhelp=all`, and `--enghelp` of
/// the engines iorig maps, kept as a fixture) has a row in the option
/// table: mapped, accepted with no effect, or refused with its reason. So
/// "unknown fio option" means a typo, and `--ignore-unsupported` can leave
/// out any option fio would run.
#[test]
fn every_option_fio_knows_is_in_the_table() {
    let list = include_str!("../../tests/fixtures/fio-3.33-options.txt");
    let mut seen = 0;
    let mut missing = Vec::new();
    for line in list.lines().filter(|l| !l.starts_with('#')) {
        let Some((name, _help)) = line.split_once(':') else {
            continue;
        };
        let name = name.trim();
        seen += 1;
        if options::lookup(name).is_none() {
            missing.push(name);
        }
    }
    assert!(seen > 200, "the fixture lists {seen} options");
    assert!(
        missing.is_empty(),
        "fio options with no row in the table: {}",
        missing.join(" ")
    );
}

/// fio cuts a line at its first `#` or `;` wherever it stands (checked
/// with `fio --showcmd`): a comment after a value, and a `#` inside one.
#[test]
fn a_comment_after_a_value_is_cut_as_fio_cuts_it() {
    let p = plan(
        "[j]  ; the job\nfilename=/tmp/a#b\nbs=8k   # eight\nsize=1m;x\nrw=randread ; c\nruntime=2 # s\ntime_based\n",
    );
    let j = job(&p, 0, 0);
    assert_eq!(j.get("bs").and_then(|v| v.as_str()), Some("8k"), "{j:?}");
    assert_eq!(j.get("size").and_then(|v| v.as_str()), Some("1m"), "{j:?}");
    assert_eq!(
        j.get("random").and_then(|v| v.as_float()),
        Some(100.0),
        "{j:?}"
    );
    let target = j.get("target").map(|v| v.to_string()).unwrap_or_default();
    assert!(target.contains("/tmp/a") && !target.contains('#'), "{j:?}");
}

/// fio names a job after its section: a `[global] name=` does not name
/// every job, and a job's own `name=` renames it but not its files (fio
/// made `a.0.0` and `b.0.0` for this file, jobs `a` and `bee`).
#[test]
fn jobs_are_named_after_their_sections_as_fio_names_them() {
    let p = plan(
        "[global]\nname=baseline\nsize=1m\ndirectory=/tmp/d\n[a]\nrw=read\n[b]\nrw=write\nname=bee\n",
    );
    let a = job(&p, 0, 0);
    let b = job(&p, 0, 1);
    assert_eq!(a.get("name").and_then(|v| v.as_str()), Some("a"), "{a:?}");
    assert_eq!(b.get("name").and_then(|v| v.as_str()), Some("bee"), "{b:?}");
    let files = |j: &toml::Table| j.get("target").map(|v| v.to_string()).unwrap_or_default();
    assert!(files(&a).contains("/tmp/d/a.0.0"), "{a:?}");
    assert!(files(&b).contains("/tmp/d/b.0.0"), "{b:?}");
}

/// fio's keywords take this machine's figures (the loader's): numjobs=$ncpus
/// is one worker per CPU.
#[test]
fn fio_s_keywords_take_the_machine_s_figures() {
    let p = plan("[j]\nfilename=/tmp/k\nnumjobs=$ncpus\nbs=$pagesize\nsize=$mb_memorym\n");
    let j = job(&p, 0, 0);
    assert_eq!(
        j.get("threads").and_then(|v| v.as_integer()),
        Some(6),
        "{j:?}"
    );
    assert_eq!(j.get("bs").and_then(|v| v.as_str()), Some("4k"), "{j:?}");
}

/// filename_format names a job's own files as fio does: $jobname,
/// $jobnum, $filenum; clones share files without $jobnum.
#[test]
fn filename_format_names_the_files_as_fio_does() {
    let p = plan("[global]\ndirectory=/tmp/ff\nsize=1m\nfilename_format=$jobname-$filenum.dat\n[w]\nrw=write\nnumjobs=2\nnrfiles=2\n");
    let j = job(&p, 0, 0);
    let targets: Vec<String> = j["target"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str().map(String::from))
        .collect();
    assert_eq!(targets, ["/tmp/ff/w-0.dat", "/tmp/ff/w-1.dat"], "{j:?}");
    let e = tr("[j]\nsize=1m\nfilename_format=$clientuid.$jobnum\n").unwrap_err();
    assert!(e.contains("client/server"), "{e}");
}

/// fio's zoned, zoned_abs and normal distributions are iorig's; zones per
/// direction and zones over several files are refused with the reason.
#[test]
fn zoned_random_distribution_maps_to_iorig_s_zones() {
    let p = plan("[j]\nfilename=/tmp/z\nsize=1m\nrw=randread\nrandom_distribution=zoned:50/5:30/15:15/20:5/60\n");
    let j = job(&p, 0, 0);
    assert_eq!(
        j.get("dist").and_then(|v| v.as_str()),
        Some("zoned:50/5:30/15:15/20:5/60"),
        "{j:?}"
    );
    // zoned_abs keeps its sizes (read as fio reads them); several files
    // are refused, as fio lays zones in each file.
    let p = plan("[j]\nfilename=/tmp/z\nsize=1g\nrw=randread\nrandom_distribution=zoned_abs:60/20M:40/100Mi\n");
    assert_eq!(
        job(&p, 0, 0).get("dist").and_then(|v| v.as_str()),
        Some("zoned_abs:60/20m:40/100m")
    );
    let e =
        tr("[j]\nnrfiles=2\nsize=1g\nrandom_distribution=zoned_abs:60/20M:40/100M\n").unwrap_err();
    assert!(e.contains("give each file a job of its own"), "{e}");
    let e = tr("[j]\nfilename=/tmp/z\nsize=1m\nrandom_distribution=zoned:50/50:50/50,100/100\n")
        .unwrap_err();
    assert!(e.contains("per direction"), "{e}");
    // normal:DEV is iorig's; a center is left out with a notice.
    let t = tr("[j]\nfilename=/tmp/z\nsize=1m\nrw=randread\nrandom_distribution=normal:5:0.25\n")
        .unwrap();
    let p: toml::Table = toml::from_str(&t.plan_toml).unwrap();
    assert_eq!(
        job(&p, 0, 0).get("dist").and_then(|v| v.as_str()),
        Some("normal:5")
    );
    assert!(
        t.notices.iter().any(|n| n.contains("center")),
        "{:?}",
        t.notices
    );
    let e = tr("[j]\nfilename=/tmp/z\nsize=1m\nrandom_distribution=zipf:1.2:3\n").unwrap_err();
    assert!(e.contains("give 0 to 1"), "{e}");
    let e =
        tr("[j]\nfilename=/tmp/z\nsize=1m\nrandom_distribution=zoned:60/10:30/20\n").unwrap_err();
    assert!(e.contains("add up to 100"), "{e}");
}

/// Think time under a rate, as fio runs it: the schedule kept through the
/// pauses, or moved by each with rate_ignore_thinktime; the option alone
/// has no effect, as in fio, and says so.
#[test]
fn thinktime_under_a_rate_keeps_or_moves_the_schedule() {
    let base = "[j]\nfilename=/tmp/t\nsize=1m\nrw=randread\nrate_iops=100\nthinktime=2ms\nthinktime_blocks=4\n";
    let j = job(&plan(base), 0, 0);
    assert_eq!(
        j.get("rate").and_then(|v| v.as_integer()),
        Some(100),
        "{j:?}"
    );
    assert_eq!(
        j.get("think_time").and_then(|v| v.as_str()),
        Some("2ms"),
        "{j:?}"
    );
    assert_eq!(j.get("think_moves_rate"), None, "{j:?}");
    let j = job(&plan(&format!("{base}rate_ignore_thinktime=1\n")), 0, 0);
    assert_eq!(
        j.get("think_moves_rate").and_then(|v| v.as_bool()),
        Some(true),
        "{j:?}"
    );
    let t =
        tr("[j]\nfilename=/tmp/t\nsize=1m\nrw=randread\nthinktime=2ms\nrate_ignore_thinktime=1\n")
            .unwrap();
    assert!(!t.plan_toml.contains("think_moves_rate"), "{}", t.plan_toml);
    assert!(
        t.notices
            .iter()
            .any(|n| n.contains("rate_ignore_thinktime: no effect")),
        "{:?}",
        t.notices
    );
}

/// fio's buffer_pattern fills every buffer, wins over zero_buffers, and
/// leaves compression and validation to shape the data, with a notice.
#[test]
fn buffer_pattern_fills_every_buffer_unless_data_is_shaped() {
    let base = "[j]\nfilename=/tmp/p\nsize=1m\nrw=write\n";
    for (extra, want) in [
        ("buffer_pattern=0xdeadbeef\n", "pattern:0xdeadbeef"),
        (
            "zero_buffers=1\nbuffer_pattern=\"ab,c\"\n",
            "pattern:0x61622c63",
        ),
        (
            "buffer_pattern=0xab\nbuffer_compress_percentage=50\n",
            "compress:2",
        ),
    ] {
        let t = tr(&format!("{base}{extra}")).unwrap();
        let p: toml::Table = toml::from_str(&t.plan_toml).unwrap();
        assert_eq!(
            job(&p, 0, 0).get("data").and_then(|v| v.as_str()),
            Some(want),
            "{extra}"
        );
        if want.starts_with("compress") {
            assert!(
                t.notices
                    .iter()
                    .any(|n| n.contains("both compress the same")),
                "{:?}",
                t.notices
            );
        }
    }
    let e = tr(&format!("{base}buffer_pattern=0xzz\n")).unwrap_err();
    assert!(e.contains("hex digits"), "{e}");
}
