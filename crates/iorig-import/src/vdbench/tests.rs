#![allow(clippy::unwrap_used)]
//! What the translation protects: each vdbench parameter's meaning in
//! iorig's plan, `default` entries, wildcards, variables, and refusals
//! that name file, line and parameter.

use super::*;

fn tr_with(text: &str, vars: &[(&str, &str)]) -> Result<Translation, String> {
    let opts = Options {
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        ..Options::default()
    };
    translate(Path::new("parm"), text, &opts).map_err(|e| e.to_string())
}

fn plan(text: &str) -> toml::Table {
    let t = tr_with(text, &[]).unwrap();
    // Every translation is an iorig plan.
    let p = iorig_spec::Plan::from_toml("parm", &t.plan_toml)
        .unwrap_or_else(|e| panic!("{e}\n{}", t.plan_toml));
    p.expand()
        .unwrap_or_else(|e| panic!("{e}\n{}", t.plan_toml));
    toml::from_str(&t.plan_toml).unwrap()
}

fn parsed(text: &str) -> toml::Table {
    let t = tr_with(text, &[]).unwrap();
    iorig_spec::Plan::from_toml("parm", &t.plan_toml).unwrap();
    toml::from_str(&t.plan_toml).unwrap()
}

fn step(p: &toml::Table, i: usize) -> toml::Table {
    p["steps"].as_array().unwrap()[i]
        .as_table()
        .unwrap()
        .clone()
}

#[test]
fn the_guides_raw_example() {
    // The vdbench guide's first example: 100 % random 4k reads at max.
    let p = plan("sd=sd1,lun=/dev/sdb,openflags=o_direct\nwd=wd1,sd=sd1,xfersize=4096,rdpct=100\nrd=run1,wd=wd1,iorate=max,elapsed=10,interval=1\n");
    assert_eq!(
        p["targets"].as_array().unwrap()[0].as_str(),
        Some("/dev/sdb")
    );
    let s = step(&p, 0);
    assert_eq!(s["name"].as_str(), Some("run1"));
    assert_eq!(s["bs"].as_str(), Some("4k"));
    assert_eq!(s["read"].as_float(), Some(100.0));
    assert_eq!(s["random"].as_float(), Some(100.0));
    assert_eq!(s["time"].as_str(), Some("10s"));
    assert_eq!(s["interval"].as_str(), Some("1s"));
    assert_eq!(s["direct"].as_bool(), Some(true));
    // vdbench's 8 threads per sd, each one blocking I/O.
    assert_eq!(s["threads"].as_integer(), Some(8));
    assert_eq!(s["engine"].as_str(), Some("psync"));
}

#[test]
fn loops_sweep_and_curves_use_vdbenchs_points() {
    let p = plan("sd=sd1,lun=/tmp/f,size=1g\nwd=wd1,sd=sd1,seekpct=0\nrd=r1,wd=wd1,iorate=max,elapsed=5,forxfersize=(4k,64k),forthreads=(1,4),forrdpct=(0,100)\nrd=r2,wd=wd1,iorate=curve,elapsed=5\n");
    let s = step(&p, 0);
    assert_eq!(s["bs"].as_array().unwrap().len(), 2);
    assert_eq!(s["threads"].as_array().unwrap().len(), 2);
    assert_eq!(s["read"].as_array().unwrap().len(), 2);
    assert_eq!(s["random"].as_float(), Some(0.0));
    let c = step(&p, 1);
    assert_eq!(c["kind"].as_str(), Some("curve"));
    assert_eq!(p["size"].as_str(), Some("1g"));
    let t = tr_with("sd=sd1,lun=/tmp/f,size=1g\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,elapsed=5,forxfersize=(4k,64k),forthreads=(1,4),forrdpct=(0,100)\nrd=r2,wd=wd1,iorate=curve,elapsed=5\n", &[]).unwrap();
    // 8 combinations; a curve of max and vdbench's 6 points.
    assert_eq!(t.runs, [("r1".to_string(), 8), ("r2".to_string(), 7)]);
    // A curve over two wds: one curve step of two jobs, the threads
    // shared by skew (as at max), no rate of their own.
    let p = plan("sd=sd1,lun=/tmp/f,size=1g,threads=4\nwd=wa,sd=sd1,skew=75\nwd=wb,sd=sd1,skew=25,rdpct=0\nrd=c,wd=(wa,wb),iorate=curve,curve=(50,90),elapsed=5\n");
    let c = step(&p, 0);
    assert_eq!(c["kind"].as_str(), Some("curve"));
    let jobs = c["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["threads"].as_integer(), Some(3));
    assert_eq!(jobs[1]["threads"].as_integer(), Some(1));
    assert!(jobs.iter().all(|j| j.get("rate").is_none()));
}

#[test]
fn workloads_of_one_run_share_it_by_skew() {
    let p = plan("sd=default,size=64m\nsd=sd1,lun=/tmp/a\nsd=sd2,lun=/tmp/b\nwd=default,xfersize=(4k,50,64k,50)\nwd=wd1,sd=sd*,rdpct=70,skew=75\nwd=wd2,sd=sd2,rdpct=0,seekpct=0\nrd=r1,wd=(wd1,wd2),iorate=1000,elapsed=5,threads=4\n");
    let s = step(&p, 0);
    let jobs = s["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    let j1 = jobs[0].as_table().unwrap();
    let j2 = jobs[1].as_table().unwrap();
    assert_eq!(j1["target"].as_array().unwrap().len(), 2);
    assert_eq!(j1["bs"].as_str(), Some("4k:50,64k:50"));
    assert_eq!(j1["rate"].as_integer(), Some(750));
    assert_eq!(j2["rate"].as_integer(), Some(250));
    assert_eq!(j1["threads"].as_integer(), Some(8));
    assert_eq!(j2["threads"].as_integer(), Some(4));
    assert_eq!(j2["size"].as_str(), Some("64m"));
}

#[test]
fn variables_and_continuations() {
    let t = tr_with("* comment\nsd=sd1,lun=$lun,\n  size=1g\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,elapsed=$secs\n", &[("lun", "/tmp/x"), ("secs", "7")]).unwrap();
    assert!(t.plan_toml.contains("\"/tmp/x\""), "{}", t.plan_toml);
    assert!(t.plan_toml.contains("time = \"7s\""), "{}", t.plan_toml);
    let e = tr_with(
        "sd=sd1,lun=$lun\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max\n",
        &[],
    )
    .unwrap_err();
    assert!(
        e.starts_with("parm:1: $lun is not defined; give it with --set lun=VALUE"),
        "{e}"
    );
}

/// vdbench's hotband=(lo,hi): the range, skewed by vdbench's curve;
/// with range= or a hit share it is refused, naming why.
#[test]
fn a_hotband_is_its_range_with_vdbenchs_curve() {
    let p = plan("sd=sd1,lun=/tmp/x,size=1g\nwd=wd1,sd=sd1,hotband=(10,20),rdpct=70\nrd=r1,wd=wd1,iorate=max,elapsed=3\n");
    assert_eq!(step(&p, 0)["range"].as_str(), Some("10%-20%"));
    assert_eq!(step(&p, 0)["dist"].as_str(), Some("hotband"));
    for bad in ["range=(0,50),hotband=(10,20)", "hotband=(10,20),rhpct=50"] {
        let e = tr_with(
            &format!("sd=sd1,lun=/tmp/x,size=1g\nwd=wd1,sd=sd1,{bad}\nrd=r1,wd=wd1,iorate=max\n"),
            &[],
        )
        .unwrap_err();
        assert!(e.contains("give one of"), "{bad}: {e}");
    }
}

#[test]
fn validation_hit_areas_and_eof() {
    let p = plan("validate=yes\ndata_errors=5\nsd=sd1,lun=/tmp/x,size=100m\nwd=wd1,sd=sd1,rhpct=90,hitarea=10m\nwd=wd2,sd=sd1,seekpct=eof,rdpct=0\nrd=r1,wd=wd1,iorate=max,elapsed=3\nrd=r2,wd=wd2,iorate=max,elapsed=3\n");
    assert_eq!(p["defaults"]["verify"].as_bool(), Some(true));
    assert_eq!(p["defaults"]["max_errors"].as_integer(), Some(5));
    assert_eq!(step(&p, 0)["dist"].as_str(), Some("hot:90/10"));
    assert_eq!(step(&p, 1)["io_size"].as_str(), Some("100m"));
    // Every read hits the area: the I/O stays in it.
    let p = plan("sd=sd1,lun=/tmp/x,size=64m,hitarea=1m\nwd=wd1,sd=sd1,rdpct=100,rhpct=100\nrd=r1,wd=wd1,iorate=max,elapsed=3\n");
    assert_eq!(step(&p, 0)["range"].as_str(), Some("0%-1.5625%"));
    assert!(step(&p, 0).get("dist").is_none());
    // vdbench reads its keywords in any case.
    let p = plan("SD=sd1,LUN=/tmp/x,SIZE=64m\nWD=wd1,SD=sd1,XFERSIZE=8k,RDPCT=50\nRD=rd1,WD=wd1,IORATE=MAX,ELAPSED=3\n");
    assert_eq!(step(&p, 0)["read"].as_float(), Some(50.0));
}

#[test]
fn file_system_runs_mix_their_operations_by_skew() {
    // The anchor becomes the plan's when the directory exists (at run
    // time); here the plan is only parsed.
    let p = parsed("fsd=fsd1,anchor=/tmp/dir,depth=2,width=3,files=10,size=64k\nfwd=fwd1,fsd=fsd1,operation=read,xfersize=4k,fileio=sequential,fileselect=random,threads=2,skew=60\nfwd=fwd2,fsd=fsd1,operation=getattr,xfersize=4k,fileio=sequential,fileselect=random,threads=2,skew=40\nrd=rd1,fwd=fwd*,fwdrate=max,format=yes,elapsed=5,interval=1\n");
    assert_eq!(
        p["targets"].as_array().unwrap()[0].as_str(),
        Some("/tmp/dir")
    );
    let s = step(&p, 0);
    assert_eq!(s["ops"].as_str(), Some("read:60,stat:40"));
    assert_eq!(s["depth"].as_integer(), Some(2));
    assert_eq!(s["file_size"].as_str(), Some("64k"));
    assert_eq!(s["format"].as_str(), Some("yes"));
    assert_eq!(s["fileio"].as_str(), Some("sequential"));
    // vdbench's file system I/O is buffered unless openflags=o_direct.
    assert_eq!(s["direct"].as_bool(), Some(false));
    let p = parsed("fsd=fsd1,anchor=/tmp/dir,depth=1,width=1,files=2,size=64k,openflags=o_direct\nfwd=fwd1,fsd=fsd1,operation=read,xfersize=4k\nrd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=5,interval=1\n");
    assert_eq!(step(&p, 0)["direct"].as_bool(), Some(true));
    // fwds over two fsds: a job per tree, with its anchor, its own
    // operations (scaled to its fwds' skews) and its share of the rate;
    // a later rd on one tree makes that tree the plan's.
    let two = "fsd=fsd1,anchor=/tmp/d1,depth=1,width=2,files=4,size=16k\nfsd=fsd2,anchor=/tmp/d2,depth=1,width=2,files=4,size=64k\n\
        fwd=fwd1,fsd=fsd1,operation=read,xfersize=4k,threads=2,skew=60\nfwd=fwd2,fsd=fsd1,operation=getattr,threads=2,skew=20\n\
        fwd=fwd3,fsd=fsd2,operation=write,xfersize=16k,threads=1,skew=20\n\
        rd=rd1,fwd=fwd*,fwdrate=1000,format=yes,elapsed=5,interval=1\nrd=rd2,fwd=fwd3,fwdrate=max,format=no,elapsed=5,interval=1\n";
    let p = parsed(two);
    let s = step(&p, 0);
    let jobs = s["jobs"].as_array().unwrap();
    assert_eq!(jobs.len(), 2);
    assert_eq!(jobs[0]["anchor"].as_str(), Some("/tmp/d1"));
    assert_eq!(jobs[0]["ops"].as_str(), Some("read:75,stat:25"));
    assert_eq!(jobs[0]["rate"].as_integer(), Some(800));
    assert_eq!(jobs[0]["format"].as_str(), Some("yes"));
    assert_eq!(jobs[1]["anchor"].as_str(), Some("/tmp/d2"));
    assert_eq!(jobs[1]["ops"].as_str(), Some("write:100"));
    assert_eq!(jobs[1]["rate"].as_integer(), Some(200));
    assert_eq!(jobs[1]["bs"].as_str(), Some("16k"));
    assert!(
        s.get("rate").is_none() && s.get("format").is_none(),
        "{s:?}"
    );
    assert_eq!(
        p["targets"].as_array().unwrap()[0].as_str(),
        Some("/tmp/d2")
    );
    assert!(step(&p, 1).get("jobs").is_none());
    // fwds of one fsd: reads at one xfersize, writes (and creates) at
    // another, become read_bs and write_bs of one mix.
    let p = parsed("fsd=fsd1,anchor=/tmp/d1,depth=1,width=2,files=4,size=64k\nfwd=default,fsd=fsd1,threads=2\nfwd=r,operation=read,xfersize=4k,skew=60\nfwd=c,operation=create,xfersize=64k,skew=20\nfwd=w,operation=write,xfersize=64k,skew=20\nrd=rd1,fwd=*,fwdrate=max,format=yes,elapsed=5\n");
    let s = step(&p, 0);
    assert_eq!(s["read_bs"].as_str(), Some("4k"), "{s:?}");
    assert_eq!(s["write_bs"].as_str(), Some("64k"), "{s:?}");
    assert!(s.get("bs").is_none());
    for (bad, says) in [
        (
            "fwd=r2,operation=read,xfersize=8k,skew=10\n",
            "that read must share one xfersize",
        ),
        (
            "fwd=r2,operation=getattr,threads=4,skew=10\n",
            "fileselect and threads",
        ),
    ] {
        let text = format!("fsd=fsd1,anchor=/tmp/d1,depth=1,width=2,files=4,size=64k\nfwd=default,fsd=fsd1,threads=2\nfwd=r,operation=read,xfersize=4k,skew=60\n{bad}rd=rd1,fwd=*,fwdrate=max,format=yes,elapsed=5\n");
        let e = tr_with(&text, &[]).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
    // For-loops over several trees are refused, naming what to do.
    let e = tr_with(
        &two.replace("fwdrate=1000,", "fwdrate=1000,forthreads=(1,2),"),
        &[],
    )
    .unwrap_err();
    assert!(e.contains("give each fsd its own rd"), "{e}");
}

#[test]
fn hosts_become_the_plans_hosts() {
    let p = plan("hd=default,vdbench=/opt/vdbench,user=root,shell=ssh\nhd=hd1,system=10.0.0.1\nhd=hd2,system=10.0.0.2\nsd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,elapsed=5\n");
    let list: Vec<&str> = p["hosts"]["list"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(list, ["10.0.0.1", "10.0.0.2"]);
}

#[test]
fn refusals_name_file_line_and_parameter() {
    let e = tr_with(
        "sd=sd1,lun=/x\nwd=wd1,sd=sd9\nrd=r1,wd=wd1,iorate=max\n",
        &[],
    )
    .unwrap_err();
    assert!(e.starts_with("parm:2: sd=sd9 is not defined"), "{e}");
    let e = tr_with(
        "sd=sd1,lun=/x\nwd=wd1,sd=sd1\nrd=r1,wd=wd2,iorate=max\n",
        &[],
    )
    .unwrap_err();
    assert!(e.starts_with("parm:3: wd=wd2 is not defined"), "{e}");
    let e = tr_with(
        "sd=sd1,lun=/x\nwd=wd1,sd=sd1,bogus=1\nrd=r1,wd=wd1,iorate=max\n",
        &[],
    )
    .unwrap_err();
    assert!(e.contains("unknown wd parameter 'bogus'"), "{e}");
    let e = tr_with(
        "sd=sd1,lun=/x\nwd=wd1,sd=sd1,streams=(2,4)\nrd=r1,wd=wd1,iorate=max\n",
        &[],
    )
    .unwrap_err();
    assert!(
        e.contains("'streams' is not supported") && e.starts_with("parm:2:"),
        "{e}"
    );
    let e = tr_with("sd=sd1,lun=/x\nwd=wd1,sd=sd1\nrd=r1,wd=wd1\n", &[]).unwrap_err();
    assert!(e.contains("iorate: missing"), "{e}");
    let e = tr_with("sd=sd1,lun=/x\nwd=wd1,sd=sd1\n", &[]).unwrap_err();
    assert!(e.contains("no run definition"), "{e}");
    let e = tr_with(
        "sd=sd1,lun=/x\nsd=sd1,lun=/y\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max\n",
        &[],
    )
    .unwrap_err();
    assert!(e.contains("defined twice"), "{e}");
}

/// docs/vdbench.md names every parameter this translation knows, in a
/// table row.
#[test]
fn the_docs_list_every_parameter() {
    let doc = include_str!("../../../../docs/vdbench.md");
    let missing: Vec<&str> = MAPPED
        .iter()
        .copied()
        .chain(NO_EFFECT.iter().map(|(k, _)| *k))
        .chain(UNSUPPORTED.iter().map(|(k, _)| *k))
        .filter(|k| {
            !doc.lines()
                .any(|l| l.starts_with('|') && l.contains(&format!("`{k}`")))
        })
        .collect();
    assert!(missing.is_empty(), "docs/vdbench.md lacks {missing:?}");
}

/// The parameter file HCIBench writes for every test (its shape: a comment
/// header, debug=, data_errors=, the dedup and compression defaults, an sd
/// per disk with openflags, hitarea, range and threads, one wd over them
/// all, one rd with a warmup), here with uppercase keywords, which vdbench
/// reads in any case. It runs as it is: no validation (data_errors is a
/// limit, not a switch), no data reduction (ratios of 1).
#[test]
fn an_hcibench_parameter_file_runs_as_it_is() {
    let text = "*vdbench workload written by HCIBench\n*4k-70rdpct-100randompct\ndebug=86\ndata_errors=10000\ndedupratio=1\ndedupunit=4k\ncompratio=1\nSD=sd1,lun=/tmp/hci1,size=64m,openflags=O_DIRECT,hitarea=0,range=(0,100),threads=2\nsd=sd2,lun=/tmp/hci2,size=64m,openflags=o_direct,hitarea=0,range=(0,100),threads=2\nwd=wd1,sd=(sd1,sd2),xfersize=4K,rdpct=70,seekpct=100\nrd=run1,wd=wd1,iorate=MAX,elapsed=3600,warmup=1800,interval=30\n";
    let p = plan(text);
    let d = p["defaults"].as_table().unwrap();
    assert!(d.get("verify").is_none(), "{d:?}");
    assert!(d.get("max_errors").is_none(), "{d:?}");
    assert!(d.get("data").is_none(), "{d:?}");
    let s = step(&p, 0);
    assert_eq!(s["bs"].as_str(), Some("4k"));
    assert_eq!(s["read"].as_float(), Some(70.0));
    assert_eq!(s["threads"].as_integer(), Some(4));
    assert_eq!(s["direct"].as_bool(), Some(true));
    assert!(
        s.get("rate").is_none_or(|r| r.as_str() == Some("max")),
        "{s:?}"
    );
    let t = tr_with(text, &[]).unwrap();
    assert!(
        t.notices.iter().any(|n| n.contains("data_errors=10000")),
        "{:?}",
        t.notices
    );
}

/// compratio and dedupratio above 1 are iorig's compressible and dedupable
/// data, both at once dedupable chunks that compress; dedup options iorig
/// does not have are refused.
#[test]
fn data_reduction_ratios_become_iorig_s_data() {
    let run =
        "sd=sd1,lun=/tmp/x,size=10m\nwd=wd1,sd=sd1,rdpct=0\nrd=r1,wd=wd1,iorate=max,elapsed=3\n";
    let p = plan(&format!("compratio=2\n{run}"));
    assert_eq!(p["defaults"]["data"].as_str(), Some("compress:2"));
    let p = plan(&format!("dedupratio=3\ndedupunit=4k\n{run}"));
    assert_eq!(p["defaults"]["data"].as_str(), Some("dedup:3"));
    // Both: dedupable data whose every chunk compresses too, as vdbench's.
    let p = plan(&format!("compratio=2\ndedupratio=3\n{run}"));
    assert_eq!(p["defaults"]["data"].as_str(), Some("dedup:3,compress:2"));
    let unit = tr_with(&format!("dedupratio=2\ndedupunit=8k\n{run}"), &[]).unwrap_err();
    assert!(
        unit.contains("dedupunit=8k") && unit.contains("4 KiB"),
        "{unit}"
    );
}

/// maxdata ends a run by its bytes or at elapsed, whichever first: bytes
/// (999t) or, below 100, passes over the storage.
#[test]
fn maxdata_is_the_run_s_io_size() {
    let run = |m: &str| {
        plan(&format!(
            "sd=sd1,lun=/tmp/x,size=10m\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,elapsed=60,maxdata={m}\n"
        ))
    };
    assert_eq!(step(&run("999t"), 0)["io_size"].as_str(), Some("999t"));
    assert_eq!(step(&run("2"), 0)["io_size"].as_str(), Some("200%"));
}

/// host= that means every host (local, default, the one host of a
/// single-host file) is taken; one host of several is refused.
#[test]
fn a_host_that_means_every_host_is_taken() {
    let body = "wd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,elapsed=3\n";
    for host in ["local", "default", "*"] {
        parsed(&format!("sd=sd1,lun=/tmp/x,size=10m,host={host}\n{body}"));
    }
    parsed(&format!(
        "hd=h1,system=127.0.0.1\nsd=sd1,lun=/tmp/x,size=10m,host=h1\n{body}"
    ));
    let e = tr_with(
        &format!("hd=h1,system=127.0.0.1\nhd=h2,system=127.0.0.2\nsd=sd1,lun=/tmp/x,size=10m,host=h1\n{body}"),
        &[],
    )
    .unwrap_err();
    assert!(
        e.contains("host=h1") && e.contains("all of the file's hosts"),
        "{e}"
    );
}

/// A misspelt parameter is refused with the nearest known one.
#[test]
fn a_misspelt_parameter_gets_a_did_you_mean() {
    let e = tr_with(
        "sd=sd1,lun=/tmp/x,size=10m\nwd=wd1,sd=sd1,rdpcnt=70\nrd=r1,wd=wd1,iorate=max,elapsed=3\n",
        &[],
    )
    .unwrap_err();
    assert!(
        e.contains("'rdpcnt'") && e.contains("Did you mean 'rdpct'"),
        "{e}"
    );
}

/// vdbench's abbreviations (any beginning of a keyword, in a wd as its
/// parser tries them), its aliases, numbered ranges of definitions, and
/// include= files read in place.
#[test]
fn abbreviations_ranges_and_includes_read_as_vdbench_reads_them() {
    let p = plan("sd=sd1,lun=/tmp/x,size=10m,th=4\nwd=wd1,sd=sd1,xf=8k,r=30,se=0\nrd=r1,wd=wd1,io=max,el=3,in=1\n");
    let s = step(&p, 0);
    assert_eq!(s["bs"].as_str(), Some("8k"));
    assert_eq!(s["read"].as_float(), Some(30.0));
    assert_eq!(s["random"].as_float(), Some(0.0));
    assert_eq!(s["threads"].as_integer(), Some(4));
    assert_eq!(s["time"].as_str(), Some("3s"));
    // writepct=W is rdpct=100-W.
    let p = plan("sd=sd1,lun=/tmp/x,size=10m\nwd=wd1,sd=sd1,writepct=30\nrd=r1,wd=wd1,iorate=max,elapsed=3\n");
    assert_eq!(step(&p, 0)["read"].as_float(), Some(70.0));
    // Ambiguous outside a wd: refused, naming the keywords.
    let e = tr_with(
        "sd=sd1,lun=/tmp/x,size=10m\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max,e=3\n",
        &[],
    )
    .unwrap_err();
    assert!(
        e.contains("begins several keywords") && e.contains("elapsed"),
        "{e}"
    );
    // sd=(sd2-sd3): the numbered ones in the range.
    let p = plan("sd=sd1,lun=/tmp/a,size=10m\nsd=sd2,lun=/tmp/b,size=10m\nsd=sd3,lun=/tmp/c,size=10m\nwd=wd1,sd=(sd2-sd3)\nrd=r1,wd=wd1,iorate=max,elapsed=3\n");
    let targets: Vec<&str> = p["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(targets, ["/tmp/b", "/tmp/c"]);
    // include=: in place, beside the including file; a loop refused.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("sds.inc"), "sd=sd1,lun=/tmp/x,size=10m\n").unwrap();
    let main = dir.path().join("main.parm");
    let text = "include=sds.inc\nwd=wd1,sd=sd1,xfersize=16k\nrd=r1,wd=wd1,iorate=max,elapsed=3\n";
    let t = translate(&main, text, &Options::default()).unwrap();
    assert!(t.plan_toml.contains("bs = \"16k\""), "{}", t.plan_toml);
    std::fs::write(dir.path().join("loop.inc"), "include=loop.inc\n").unwrap();
    let e = translate(&main, "include=loop.inc\n", &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("loop"), "{e}");
    // hitarea without size=: the lun's own size (a 64 MiB file here).
    let lun = dir.path().join("lun.dat");
    std::fs::File::create(&lun)
        .unwrap()
        .set_len(64 << 20)
        .unwrap();
    let p = plan(&format!(
        "sd=sd1,lun={},hitarea=16m\nwd=wd1,sd=sd1,rhpct=90\nrd=r1,wd=wd1,iorate=max,elapsed=3\n",
        lun.display()
    ));
    assert_eq!(step(&p, 0)["dist"].as_str(), Some("hot:90/25"));
    // A bad line of an included file is named, never shown.
    std::fs::write(dir.path().join("bad.inc"), "secret-text-here\n").unwrap();
    let e = translate(&main, "include=bad.inc\n", &Options::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("bad.inc:1") && !e.contains("secret"), "{e}");
    // A file an included file includes is named by the line that pulls it
    // in, never by the path in its text.
    std::fs::write(dir.path().join("SECRETNAME.inc"), "oops\n").unwrap();
    std::fs::write(dir.path().join("outer.inc"), "include=SECRETNAME.inc\n").unwrap();
    let e = translate(&main, "include=outer.inc\n", &Options::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("outer.inc:1 (its include):1") && !e.contains("SECRETNAME"),
        "{e}"
    );
}

/// The fwds of one run share the transfer's shape among those that move
/// data, the xfersize per direction (reads one, writes and creates
/// another); metadata operations keep their own.
#[test]
fn fwds_share_the_transfer_shape_among_those_that_move_data() {
    let base = "fsd=fsd1,anchor=/tmp/dir,depth=1,width=2,files=8,size=64k\n";
    let ok = parsed(&format!("{base}fwd=f1,fsd=fsd1,operation=mkdir,xfersize=1k\nfwd=f2,fsd=fsd1,operation=read,xfersize=8k,fileio=random\nrd=r1,fwd=(f1,f2),fwdrate=max,format=yes,elapsed=5\n"));
    assert_eq!(step(&ok, 0)["bs"].as_str(), Some("8k"));
    // A create writes at its xfersize, a read reads at its own.
    let p = parsed(&format!("{base}fwd=f1,fsd=fsd1,operation=create,xfersize=4k\nfwd=f2,fsd=fsd1,operation=read,xfersize=8k\nrd=r1,fwd=(f1,f2),fwdrate=max,format=yes,elapsed=5\n"));
    assert_eq!(step(&p, 0)["read_bs"].as_str(), Some("8k"));
    assert_eq!(step(&p, 0)["write_bs"].as_str(), Some("4k"));
    // Two fwds that write at different sizes are refused.
    let e = tr_with(&format!("{base}fwd=f1,fsd=fsd1,operation=create,xfersize=4k\nfwd=f2,fsd=fsd1,operation=write,xfersize=8k\nrd=r1,fwd=(f1,f2),fwdrate=max,format=yes,elapsed=5\n"), &[]).unwrap_err();
    assert!(
        e.contains("that write or create must share one xfersize"),
        "{e}"
    );
}

/// An rd's for-loops over the fsd's shape (forsizes, forfiles, forwidth,
/// fordepth) sweep the tree, one run per value, each made anew.
#[test]
fn for_loops_over_the_tree_sweep_it() {
    let base = "fsd=fsd1,anchor=/tmp/dir,depth=1,width=2,files=8,size=64k\nfwd=f1,fsd=fsd1,operation=read,xfersize=4k\n";
    let p = parsed(&format!(
        "{base}rd=r1,fwd=f1,fwdrate=max,format=yes,elapsed=5,forsizes=(16k,1m),forfiles=(4,8)\n"
    ));
    let s = step(&p, 0);
    let sizes: Vec<&str> = s["file_size"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(sizes, ["16k", "1m"]);
    let files: Vec<i64> = s["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_integer().unwrap())
        .collect();
    assert_eq!(files, [4, 8]);
    let e = tr_with(
        &format!("{base}rd=r1,fwd=f1,fwdrate=max,format=restart,elapsed=5,forsizes=(16k,1m)\n"),
        &[],
    )
    .unwrap_err();
    assert!(e.contains("give format=yes"), "{e}");
}

/// vdbench's sharing of files (fileio=(random,shared), fsd shared=yes) is
/// refused with its reason, not read as something else.
#[test]
fn shared_files_are_refused_with_the_reason() {
    let base = "fsd=fsd1,anchor=/tmp/dir,depth=1,width=2,files=8,size=64k\n";
    let e = tr_with(&format!("{base}fwd=f1,fsd=fsd1,operation=read,fileio=(random,shared)\nrd=r1,fwd=f1,fwdrate=max,format=yes,elapsed=5\n"), &[]).unwrap_err();
    assert!(e.contains("a file of its own at a time"), "{e}");
    let e = tr_with("fsd=fsd1,anchor=/tmp/dir,depth=1,width=2,files=8,size=64k,shared=yes\nfwd=f1,fsd=fsd1,operation=read\nrd=r1,fwd=f1,fwdrate=max,format=yes,elapsed=5\n", &[]).unwrap_err();
    assert!(e.contains("a tree of its own"), "{e}");
}

/// An sd's (or fsd's) journal=DIR says where the run's one journal goes,
/// with journal=yes; without it, nothing (as in vdbench), said; a raw
/// journal device is refused; a second directory is said.
#[test]
fn an_sds_journal_directory_holds_the_journal() {
    let sd = "sd=sd1,lun=/tmp/x,size=8m,journal=/tmp/jd\nsd=sd2,lun=/tmp/y,size=8m,journal=/tmp/other\nwd=wd1,sd=(sd1,sd2)\nrd=r1,wd=wd1,iorate=max,elapsed=2\n";
    let t = tr_with(&format!("journal=yes\n{sd}"), &[]).unwrap();
    assert!(t.journal);
    assert_eq!(t.journal_dir.as_deref(), Some("/tmp/jd"));
    assert!(
        t.notices
            .iter()
            .any(|n| n.contains("one journal for the run, in /tmp/jd")),
        "{:?}",
        t.notices
    );
    let t = tr_with(sd, &[]).unwrap();
    assert_eq!(t.journal_dir, None);
    assert!(
        t.notices
            .iter()
            .any(|n| n.contains("no effect without journal=yes")),
        "{:?}",
        t.notices
    );
    let e = tr_with("journal=yes\nsd=sd1,lun=/tmp/x,size=8m,journal=/dev/sdj\nwd=wd1,sd=sd1\nrd=r1,wd=wd1,iorate=max\n", &[])
        .unwrap_err();
    assert!(e.contains("raw journal device"), "{e}");
}
