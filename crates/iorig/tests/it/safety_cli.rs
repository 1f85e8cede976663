//! Protects the promise that iorig writes only where it may: targets are
//! checked on the very object that is written (a path swapped or a device
//! formatted between the checks and the first write is never overwritten),
//! every signature the system's own probes know is refused on a block device,
//! a file backing a loop device is refused, output paths are regular files or
//! new paths, another program's database is never adopted, and permission to
//! destroy is never taken from a stored run. Tests that need root and loop
//! devices are `#[ignore]`d and run by `.ci/run` with `--ignored` as root.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use crate::common::{iorig, run, tmp, wait_child, wait_for, LoopDev};
use std::path::Path;
use std::process::{Command, Stdio};

fn pseudo_random(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// Starts a write run that pauses (test builds only) after its targets were
/// checked and before they are opened for I/O; returns once it is paused.
fn paused_write_run(dir: &Path, pause: &Path, targets: &[&str]) -> common::Guard {
    let mut cmd = iorig();
    cmd.current_dir(dir)
        .env("IORIG_TEST_PAUSE_DIR", pause)
        .args([
            "run", "--read", "0", "--time", "1s", "--size", "4m", "--no-db", "-q",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for t in targets {
        cmd.args(["--target", t]);
    }
    let mut child = common::guarded(&mut cmd);
    if !wait_for(&pause.join("open.ready"), 30) {
        let _ = child.kill();
        panic!("iorig never reached the pause point");
    }
    child
}

#[test]
fn a_user_file_moved_over_a_checked_target_is_not_written() {
    let d = tmp();
    let pause = d.path().join("pause");
    std::fs::create_dir(&pause).unwrap();
    // An iorig scratch file that passes every check...
    let out = run(
        &[
            "run", "--target", "b.dat", "--size", "4m", "--time", "1s", "--no-db", "-q",
        ],
        d.path(),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // ...is replaced by a user's file after the checks, while the run
    // creates and fills its first target.
    let user = pseudo_random(6 << 20, 7);
    std::fs::write(d.path().join("user.doc"), &user).unwrap();
    let mut child = paused_write_run(d.path(), &pause, &["a.dat", "b.dat"]);
    std::fs::rename(d.path().join("user.doc"), d.path().join("b.dat")).unwrap();
    std::fs::write(pause.join("open.go"), b"").unwrap();
    let status = wait_child(&mut child, 60);
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(
        std::fs::read(d.path().join("b.dat")).unwrap(),
        user,
        "the user's file was written to (exit {status}, {err})"
    );
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(
        err.contains("b.dat") && err.contains("changed since it was checked"),
        "{err}"
    );
}

#[test]
#[ignore = "needs root: loop devices"]
fn a_device_formatted_after_the_checks_is_not_written() {
    let lo = LoopDev::new(64 << 20);
    let d = tmp();
    let pause = d.path().join("pause");
    std::fs::create_dir(&pause).unwrap();
    let mut child = paused_write_run(d.path(), &pause, &["a.dat", &lo.dev]);
    // While iorig holds the device (it must, exclusively), mkfs has to fail;
    // if it got through, iorig must notice before its first write.
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F", &lo.dev])
        .output()
        .unwrap();
    let formatted = mkfs.status.success();
    let after_mkfs = lo.digest();
    std::fs::write(pause.join("open.go"), b"").unwrap();
    let status = wait_child(&mut child, 60);
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    if formatted {
        assert_eq!(
            lo.digest(),
            after_mkfs,
            "the new filesystem was written over ({err})"
        );
        assert_eq!(status.code(), Some(2), "{err}");
    } else {
        assert!(
            String::from_utf8_lossy(&mkfs.stderr).contains("in use"),
            "mkfs failed for another reason: {}",
            String::from_utf8_lossy(&mkfs.stderr)
        );
        assert!(status.success(), "{err}");
    }
}

/// Runs a shell command, panicking with its output when it fails.
fn sh(cmd: &str) {
    let out = Command::new("sh").args(["-c", cmd]).output().unwrap();
    assert!(
        out.status.success(),
        "{cmd}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs root: loop devices and the mkfs tools"]
fn every_signature_the_system_can_make_is_refused() {
    // (tool that must exist, shell command with DEV (and IMG, SRC) to make it)
    let cases: &[(&str, &str, &str)] = &[
        ("ext2", "mkfs.ext2", "mkfs.ext2 -q -F DEV"),
        ("ext3", "mkfs.ext3", "mkfs.ext3 -q -F DEV"),
        ("ext4", "mkfs.ext4", "mkfs.ext4 -q -F DEV"),
        ("xfs", "mkfs.xfs", "mkfs.xfs -q -f DEV"),
        ("btrfs", "mkfs.btrfs", "mkfs.btrfs -q -f DEV"),
        ("vfat", "mkfs.vfat", "mkfs.vfat DEV >/dev/null"),
        ("exfat", "mkfs.exfat", "mkfs.exfat DEV >/dev/null"),
        ("f2fs", "mkfs.f2fs", "mkfs.f2fs -q -f DEV"),
        ("minix", "mkfs.minix", "mkfs.minix DEV >/dev/null"),
        ("bfs", "mkfs.bfs", "mkfs.bfs DEV >/dev/null 2>&1"),
        ("cramfs", "mkfs.cramfs", "mkfs.cramfs SRC IMG >/dev/null && dd if=IMG of=DEV conv=notrunc status=none"),
        ("squashfs", "mksquashfs", "mksquashfs SRC IMG -quiet -noappend >/dev/null && dd if=IMG of=DEV conv=notrunc status=none"),
        ("swap", "mkswap", "mkswap DEV >/dev/null"),
        ("LUKS", "cryptsetup", "printf pass | cryptsetup luksFormat -q --type luks2 --pbkdf pbkdf2 --pbkdf-force-iterations 1000 DEV -"),
        ("LVM PV", "pvcreate", "pvcreate -q -ff -y --devicesfile '' DEV >/dev/null"),
        ("md RAID", "mdadm", "mdadm --create /dev/md/iorig-test --run --quiet --level=1 --raid-devices=2 --metadata=1.2 DEV missing && mdadm --stop --quiet /dev/md/iorig-test"),
    ];
    let mut missing = Vec::new();
    let mut impossible = Vec::new();
    for (name, tool, make) in cases {
        if !common::have(tool) {
            missing.push(*tool);
            continue;
        }
        // mdadm writes its superblock only through a running array, which
        // needs the kernel's md driver (absent in some VMs and containers).
        if *tool == "mdadm" && !Path::new("/sys/module/md_mod").exists() {
            impossible.push("md RAID (no md driver in this kernel)");
            continue;
        }
        // Each device as small as its format allows (every case reads the
        // whole device twice to prove it unchanged): xfs needs 300 MiB,
        // btrfs over 109 MiB, the rest fit in 64 MiB.
        let mib: u64 = match *name {
            "xfs" => 320,
            "btrfs" => 160,
            _ => 64,
        };
        let lo = LoopDev::new(mib << 20);
        let d = tmp();
        let src = d.path().join("src");
        std::fs::create_dir(&src).unwrap();
        std::fs::write(src.join("file"), b"some content\n").unwrap();
        let img = d.path().join("img");
        sh(&make
            .replace("DEV", &lo.dev)
            .replace("SRC", src.to_str().unwrap())
            .replace("IMG", img.to_str().unwrap()));
        let before = lo.digest();
        let out = run(
            &[
                "run", "--target", &lo.dev, "--read", "0", "--time", "1s", "--no-db",
            ],
            d.path(),
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: not refused: {err}");
        assert!(
            err.contains("carries") && err.contains("--allow-destroy"),
            "{name}: {err}"
        );
        assert_eq!(lo.digest(), before, "{name}: the device changed");
        let _ = Command::new("wipefs").args(["-a", "-q", &lo.dev]).status();
    }
    if !impossible.is_empty() {
        eprintln!("not possible here: {impossible:?}");
    }
    if std::env::var_os("CI").is_some() {
        assert!(
            missing.is_empty(),
            "CI must install the tools for {missing:?}"
        );
    } else if !missing.is_empty() {
        eprintln!("not tried (tool not installed): {missing:?}");
    }
}

#[test]
#[ignore = "needs root: loop devices"]
fn a_file_backing_a_loop_device_is_refused() {
    let d = tmp();
    let out = run(
        &[
            "run", "--target", "s.dat", "--size", "8m", "--time", "1s", "--no-db", "-q",
        ],
        d.path(),
    );
    assert!(out.status.success());
    let path = d.path().join("s.dat");
    let attach = Command::new("losetup")
        .args(["--find", "--show"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(attach.status.success());
    let dev = String::from_utf8_lossy(&attach.stdout).trim().to_string();
    let before = common::digest_file(&path);
    let out = run(
        &[
            "run", "--target", "s.dat", "--read", "0", "--time", "1s", "--no-db",
        ],
        d.path(),
    );
    let _ = Command::new("losetup").args(["-d", &dev]).status();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("backing file") && err.contains(&dev), "{err}");
    assert_eq!(common::digest_file(&path), before);
}

#[test]
#[ignore = "needs root: loop devices"]
fn output_paths_on_a_device_holding_a_filesystem_are_refused_and_it_is_unchanged() {
    let lo = LoopDev::new(64 << 20);
    sh(&format!("mkfs.ext2 -q -F {}", lo.dev));
    let before = lo.digest();
    let d = tmp();
    let out = run(
        &[
            "run", "--engine", "null", "--time", "1s", "--db", "s.db", "-q",
        ],
        d.path(),
    );
    assert!(out.status.success());
    let dev = lo.dev.as_str();
    let cases: Vec<Vec<&str>> = vec![
        vec!["run", "--engine", "null", "--time", "1s", "--csv", dev],
        vec!["run", "--engine", "null", "--time", "1s", "--json", dev],
        vec!["run", "--engine", "null", "--time", "1s", "--db", dev],
        vec!["runs", "list", "--db", dev],
        vec![
            "export", "1", "--db", "s.db", "--format", "json", "--out", dev,
        ],
        vec![
            "export", "1", "--db", "s.db", "--format", "xlsx", "--out", dev,
        ],
        vec!["report", "1", "--db", "s.db", "--out", dev],
        vec![
            "run",
            "--engine",
            "null",
            "--time",
            "1s",
            "--read",
            "0",
            "--journal",
            dev,
        ],
        vec!["profile", "--time", "1s", "--interval", "1s", "--csv", dev],
    ];
    for args in cases {
        let out = iorig().current_dir(d.path()).args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(lo.digest(), before, "{args:?} changed the device");
    }
}

#[test]
#[ignore = "needs root: loop devices"]
fn one_device_under_two_names_is_named_as_given_twice() {
    let lo = LoopDev::new(16 << 20);
    let d = tmp();
    std::os::unix::fs::symlink(&lo.dev, d.path().join("alias")).unwrap();
    let out = run(
        &[
            "run", "--target", &lo.dev, "--target", "alias", "--read", "0", "--time", "1s",
            "--no-db",
        ],
        d.path(),
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("given twice"), "{err}");
}

/// Alternating fio and iorig on one file: fio writes from offset 0 over
/// iorig's header, and the file stays iorig's by the mark beside its data
/// (the extended attribute user.iorig). A foreign file is refused with the
/// way to hand it over; --allow-destroy is for one run and leaves no mark;
/// once marked (as the refusal says) the file is iorig's for good.
#[test]
fn a_file_handed_to_iorig_stays_iorigs_after_fio_overwrites_its_header() {
    use std::os::unix::fs::FileExt;
    let d = tmp();
    let write = |file: &str, extra: &[&str]| {
        let mut args = vec![
            "run",
            "--target",
            file,
            "--rw",
            "randwrite",
            "--time",
            "200ms",
            "--rate",
            "500",
            "--no-db",
        ];
        args.extend_from_slice(extra);
        run(&args, d.path())
    };
    // What fio does to a file's start: `len` bytes written from offset 0.
    let overwrite_start = |file: &str, len: usize, seed: u64| {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(d.path().join(file))
            .unwrap();
        f.write_all_at(&pseudo_random(len, seed), 0).unwrap();
    };
    // iorig's own scratch file, then fio's writes from offset 0 over its header.
    let out = write("ours.dat", &["--size", "4m"]);
    assert!(out.status.success(), "{out:?}");
    overwrite_start("ours.dat", 2 << 20, 5);
    let out = write("ours.dat", &[]);
    assert!(
        out.status.success(),
        "iorig's file after fio wrote over its header: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A file iorig never had: refused, and told how to hand it over.
    std::fs::write(d.path().join("theirs.dat"), pseudo_random(4 << 20, 9)).unwrap();
    let out = write("theirs.dat", &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("--allow-destroy")
            && err.contains("for good")
            && err.contains("setfattr -n user.iorig -v scratch"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(d.path().join("theirs.dat")).unwrap(),
        pseudo_random(4 << 20, 9),
        "a refused run wrote to the file"
    );
    // --allow-destroy is for this run only: the next one is refused again.
    assert!(write("theirs.dat", &["--allow-destroy"]).status.success());
    assert_eq!(write("theirs.dat", &[]).status.code(), Some(2));
    // Handed over as the refusal says (setfattr's call, made from Python:
    // the attr package may be missing); from then on it is iorig's,
    // whatever writes its start.
    let set = Command::new("python3")
        .args([
            "-c",
            "import os,sys; os.setxattr(sys.argv[1], 'user.iorig', b'scratch')",
        ])
        .arg(d.path().join("theirs.dat"))
        .status()
        .unwrap();
    assert!(set.success());
    assert!(write("theirs.dat", &[]).status.success());
    overwrite_start("theirs.dat", 1 << 20, 11);
    let out = write("theirs.dat", &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The mark is no licence to overwrite what the file has become: made
    // a file system since, it is refused as a device with one is.
    assert!(
        crate::common::have("mkfs.ext4"),
        "mkfs.ext4 is not installed"
    );
    let mkfs = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(d.path().join("theirs.dat"))
        .status()
        .unwrap();
    assert!(mkfs.success());
    let out = write("theirs.dat", &[]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ext4"), "{err}");
}
