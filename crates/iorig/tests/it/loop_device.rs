//! Protects `iorig run` on real block devices: O_DIRECT I/O through io_uring to a
//! loop device this test attaches works and reports the device's own counters,
//! and a loop device holding an ext4 filesystem is refused without
//! --allow-destroy and left byte-for-byte unchanged; a write run may follow
//! another at once (the device is not still claimed by the first), and a
//! journaled validation run on a device verifies clean. Needs root, losetup and
//! mkfs.ext4: the tests are `#[ignore]`d with that reason, and `.ci/run` runs
//! them with `--ignored` as root, where a missing tool is a failure.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use crate::common::{digest_file as digest, LoopDev};
use serde_json::Value;
use std::process::Command;

/// Runs the binary in a fresh temp directory, so a run that records lands
/// in its own store there, never in the caller's (`IORIG_DB` is cleared).
fn iorig(args: &[&str]) -> std::process::Output {
    let dir = common::tmp();
    common::iorig()
        .args(args)
        .current_dir(dir.path())
        .output()
        .unwrap()
}

#[test]
#[ignore = "needs root: loop devices, losetup, mkfs.ext4"]
fn direct_io_to_a_loop_device() {
    let lo = LoopDev::new(64 << 20);
    let out = iorig(&[
        "run",
        "--target",
        &lo.dev,
        "--read",
        "50",
        "--qd",
        "8",
        "--time",
        "2s",
        "--interval",
        "500ms",
        "--json",
        "-",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["targets"][0]["kind"], "block");
    assert_eq!(doc["targets"][0]["size_bytes"], 64 << 20);
    assert_eq!(doc["workload"]["direct"], true);
    let s = &doc["summary"];
    assert!(s["read"]["ops"].as_u64().unwrap() > 0 && s["write"]["ops"].as_u64().unwrap() > 0);
    assert_eq!(s["errors"], 0);
    // The device's own counters were sampled and saw the load.
    let busy = doc["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["device"]["util_pct"].as_f64().unwrap_or(0.0) > 1.0)
        .count();
    assert!(
        busy >= 1,
        "no interval shows the loop device busy: {}",
        doc["intervals"]
    );
}

#[test]
#[ignore = "needs root: loop devices, losetup, mkfs.ext4"]
fn back_to_back_validated_writes_then_verify_on_a_loop_device() {
    let lo = LoopDev::new(64 << 20);
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let journal = dir.path().join("lo.journal");
    let journal = journal.to_str().unwrap();
    // The first run leaves nothing to tell a later one; each of these starts
    // the moment the one before has exited, and each opens the device O_EXCL.
    for read in ["0", "30", "0"] {
        let out = iorig(&[
            "run",
            "--target",
            &lo.dev,
            "--read",
            read,
            "--qd",
            "16",
            "--time",
            "1s",
            "--no-db",
            "--quiet",
            "--journal",
            journal,
        ]);
        assert!(
            out.status.success(),
            "run with --read {read}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = iorig(&["verify", "--journal", journal, "--json", "-"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["errors"], 0);
    assert!(doc["units_checked"].as_u64().unwrap() > 1000, "{doc}");
}

#[test]
#[ignore = "needs root: loop devices, losetup, mkfs.ext4"]
fn ext4_loop_device_is_refused_and_unchanged() {
    let lo = LoopDev::new(64 << 20);
    assert!(common::have("mkfs.ext4"), "mkfs.ext4 is not installed");
    let mk = Command::new("mkfs.ext4")
        .args(["-q", "-F", &lo.dev])
        .output()
        .unwrap();
    assert!(
        mk.status.success(),
        "{}",
        String::from_utf8_lossy(&mk.stderr)
    );
    let _ = Command::new("sync").status();
    let before = digest(&lo.backing);
    for args in [
        vec![
            "run",
            "--target",
            lo.dev.as_str(),
            "--read",
            "0",
            "--time",
            "1s",
        ],
        vec![
            "run",
            "--target",
            lo.dev.as_str(),
            "--read",
            "70",
            "--random",
            "0",
            "--time",
            "1s",
        ],
    ] {
        let out = iorig(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("ext4") && err.contains("--allow-destroy"),
            "{err}"
        );
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
    assert_eq!(digest(&lo.backing), before, "the refused device changed");
    // Reading is harmless and allowed.
    let out = iorig(&["run", "--target", &lo.dev, "--time", "500ms", "-q"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(digest(&lo.backing), before);
    // With --allow-destroy the user gets what they asked for.
    let out = iorig(&[
        "run",
        "--target",
        &lo.dev,
        "--read",
        "0",
        "--time",
        "500ms",
        "-q",
        "--allow-destroy",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_ne!(digest(&lo.backing), before);
}

#[test]
#[ignore = "needs root: loop devices, losetup, mkfs.ext4"]
fn writes_to_a_read_only_device_are_bad_input() {
    let mut ro = LoopDev::new(16 << 20);
    // Re-attach the same backing file read-only.
    ro.reattach_read_only();
    let before = digest(&ro.backing);
    let out = iorig(&[
        "run", "--target", &ro.dev, "--read", "50", "--time", "500ms",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("read-only"), "{err}");
    assert_eq!(digest(&ro.backing), before);
    // Reads are fine.
    let out = iorig(&["run", "--target", &ro.dev, "--time", "300ms", "-q"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Issue 15, item 5: `--size` on a block device tests its first SIZE bytes and
/// the run records that size; a `--size` beyond the device is refused with
/// exit 2 before anything is written.
#[test]
#[ignore = "needs root: loop devices, losetup"]
fn size_limits_a_block_device_and_larger_is_refused() {
    let lo = LoopDev::new(64 << 20);
    let before = lo.digest();
    let out = iorig(&[
        "run",
        "--target",
        &lo.dev,
        "--size",
        "16m",
        "--read",
        "0",
        "--time",
        "1s",
        "--json",
        "-",
        "--allow-destroy",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["targets"][0]["size_bytes"], 16 << 20);
    assert_eq!(doc["workload"]["size_bytes"], 16 << 20);
    // Only the first 16 MiB changed: the rest of the device reads as before.
    let tail = |d: &str| {
        let mut f = std::fs::File::open(d).unwrap();
        let mut b = vec![0u8; 48 << 20];
        use std::io::{Read, Seek};
        f.seek(std::io::SeekFrom::Start(16 << 20)).unwrap();
        f.read_exact(&mut b).unwrap();
        b.iter().all(|&x| x == 0)
    };
    assert!(tail(&lo.dev), "bytes past --size were written");
    assert_ne!(lo.digest(), before, "the first 16 MiB were not written");

    let big = iorig(&[
        "run", "--target", &lo.dev, "--size", "128m", "--read", "100", "--time", "1s",
    ]);
    assert_eq!(big.status.code(), Some(2));
    let err = String::from_utf8_lossy(&big.stderr);
    assert!(
        err.contains("--size 128m is larger than the device") && err.contains("64m"),
        "{err}"
    );
}

/// `--size` limits what is tested, not what is checked: a signature at the
/// device's end (a backup GPT header alone, which wipefs and blkid do not
/// report) still refuses a write run that tests only the first MiB.
#[test]
#[ignore = "needs root: loop devices, losetup"]
fn size_does_not_narrow_the_signature_check() {
    let lo = LoopDev::new(64 << 20);
    {
        use std::io::{Seek, SeekFrom, Write};
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&lo.backing)
            .unwrap();
        f.seek(SeekFrom::Start((64 << 20) - 512)).unwrap();
        f.write_all(b"EFI PART").unwrap();
    }
    let before = lo.digest();
    let out = iorig(&[
        "run", "--target", &lo.dev, "--size", "1m", "--read", "0", "--time", "1s", "--no-db",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("GPT"), "{err}");
    assert_eq!(lo.digest(), before);
}

/// Sectors read from a block device so far (/sys/block/NAME/stat, field 3).
fn read_sectors(dev: &str) -> u64 {
    let name = dev.trim_start_matches("/dev/");
    let stat = std::fs::read_to_string(format!("/sys/block/{name}/stat")).unwrap();
    stat.split_whitespace().nth(2).unwrap().parse().unwrap()
}

/// A buffered read step after a buffered write step reads the device, not
/// what the write step left in the page cache (fio's invalidate=1: BLKFLSBUF
/// before each step); with keep_cache it reads memory and the device sees
/// nothing. Another process holds the device open throughout, as a mounted
/// or otherwise used device is: the kernel drops a device's cache by itself
/// only when its last opener closes it.
#[test]
#[ignore = "needs root: loop devices, losetup, BLKFLSBUF"]
fn a_buffered_read_step_reads_the_device_not_the_last_steps_cache() {
    const SIZE: u64 = 64 << 20;
    for keep in [false, true] {
        let lo = LoopDev::new(SIZE);
        let _holder = common::guarded(
            Command::new("sleep")
                .arg("600")
                .stdin(std::fs::File::open(&lo.dev).unwrap()),
        );
        let dir = common::tmp();
        std::fs::write(
            dir.path().join("p.toml"),
            format!(
                "targets = [\"{}\"]\n[defaults]\ndirect = false\nrandom = 0\nio_size = \"100%\"\nbs = \"128k\"\ntime = \"60s\"\nkeep_cache = {keep}\n[[steps]]\nread = 0\n[[steps]]\nread = 100\n",
                lo.dev
            ),
        )
        .unwrap();
        let before = read_sectors(&lo.dev);
        let out = common::iorig()
            .args(["plan", "run", "p.toml", "--allow-destroy", "--no-db"])
            .current_dir(dir.path())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}{text}",
            String::from_utf8_lossy(&out.stderr)
        );
        let read_bytes = (read_sectors(&lo.dev) - before) * 512;
        if keep {
            assert!(
                read_bytes < SIZE / 8,
                "kept: {read_bytes} bytes read from the device"
            );
            assert!(
                text.contains("the targets' cached pages kept (--keep-cache)"),
                "{text}"
            );
        } else {
            assert!(
                read_bytes >= SIZE,
                "dropped: only {read_bytes} bytes read from the device"
            );
            assert!(
                text.contains("buffered (the targets' cached pages dropped first)"),
                "{text}"
            );
        }
    }
}
