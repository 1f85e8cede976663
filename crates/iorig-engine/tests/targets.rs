//! Protects iorig's data-safety promise for targets: planning never writes to an
//! existing file or device, refuses foreign files and devices that carry data
//! (naming what was found and how to override), turns bad input into usage
//! errors with nothing left behind, and creates fully allocated, iorig-marked
//! scratch files. Block-device cases use only loop devices this test attaches
//! itself (root and losetup required: those tests are `#[ignore]`d with the
//! reason, and `.ci/run` runs them with `--ignored` as root, where anything
//! missing is a failure).
#![allow(clippy::unwrap_used, clippy::print_stderr)]

use iorig_engine::target::{
    open_targets, plan_targets, usable_range, FileHeader, FillProgress, TargetKind,
    FILE_HEADER_BYTES,
};
use iorig_engine::EngineError;
use iorig_spec::{OneOrMany, StrOrNum, Workload, WorkloadFile};
use std::fs;
use std::hash::{DefaultHasher, Hasher};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;

fn workload(targets: &[&Path], f: WorkloadFile) -> Workload {
    WorkloadFile {
        target: Some(OneOrMany::Many(
            targets.iter().map(|t| t.display().to_string()).collect(),
        )),
        ..f
    }
    .resolve(1)
    .unwrap()
}

fn s(text: &str) -> Option<StrOrNum> {
    Some(StrOrNum::Str(text.to_string()))
}

fn writes() -> WorkloadFile {
    WorkloadFile {
        read: Some(StrOrNum::Int(50)),
        ..Default::default()
    }
}

fn usage_msg(r: Result<Vec<iorig_engine::target::TargetPlan>, EngineError>) -> String {
    match r {
        Err(EngineError::Usage(m)) => m,
        Err(e) => panic!("expected a usage error, got {e:?}"),
        Ok(p) => panic!("expected a usage error, got a plan: {p:?}"),
    }
}

fn hash_file(path: &Path) -> u64 {
    let mut f = fs::File::open(path).unwrap();
    let mut h = DefaultHasher::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).unwrap();
        if n == 0 {
            return h.finish();
        }
        h.write(&buf[..n]);
    }
}

fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn target_creating_a_file_gives_a_marked_fully_allocated_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scratch.dat");
    let w = workload(
        &[&path],
        WorkloadFile {
            size: s("8m"),
            ..writes()
        },
    );
    let plans = plan_targets(&w, false).unwrap();
    assert_eq!(plans.len(), 1);
    let plan = &plans[0];
    assert_eq!(plan.kind, TargetKind::File);
    assert!(!plan.exists);
    assert_eq!(plan.size_bytes, 8 << 20);
    assert_eq!(plan.data_start, FILE_HEADER_BYTES);
    assert!(!path.exists(), "planning must not create the file");
    assert_eq!(
        entries(dir.path()),
        Vec::<String>::new(),
        "probe file left behind"
    );

    let mut seen: Vec<FillProgress> = Vec::new();
    let open = open_targets(&plans, &w, &mut |p| seen.push(p.clone())).unwrap();
    assert_eq!(open.len(), 1);
    let md = fs::metadata(&path).unwrap();
    assert_eq!(md.len(), FILE_HEADER_BYTES + (8 << 20));
    assert!(
        md.blocks() * 512 >= 8 << 20,
        "file is sparse: {} bytes allocated",
        md.blocks() * 512
    );
    let bytes = fs::read(&path).unwrap();
    let header = FileHeader::decode(&bytes[..4096]).expect("iorig marker");
    assert_eq!(header.header_bytes, FILE_HEADER_BYTES);
    assert_eq!(header.created_size_bytes, 8 << 20);
    // The data area is random-looking: no all-zero 4 KiB block, and blocks differ.
    let data = &bytes[FILE_HEADER_BYTES as usize..];
    for block in data.chunks(4096) {
        assert!(block.iter().any(|&b| b != 0), "zero block in the data area");
    }
    assert_ne!(data[..4096], data[4096..8192]);
    let last = seen.last().unwrap();
    assert_eq!((last.done_bytes, last.total_bytes), (8 << 20, 8 << 20));
    assert!(seen.windows(2).all(|p| p[0].done_bytes <= p[1].done_bytes));

    // Planned again, the file is recognised as iorig's own.
    let again = plan_targets(&w, false).unwrap();
    assert!(again[0].exists);
    assert_eq!(again[0].data_start, FILE_HEADER_BYTES);
    assert_eq!(again[0].size_bytes, 8 << 20);
    assert_eq!(again[0].resize_to, None);
    let (start, len) = usable_range(&again[0], &w);
    assert_eq!((start, len), (FILE_HEADER_BYTES, 8 << 20));
}

#[test]
fn target_foreign_file_is_refused_for_writes_and_left_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("precious.db");
    let content: Vec<u8> = (0..(256u32 << 10)).map(|i| (i * 7 % 251) as u8).collect();
    fs::write(&path, &content).unwrap();
    let before = fs::metadata(&path).unwrap().modified().unwrap();

    let w = workload(&[&path], writes());
    let msg = usage_msg(plan_targets(&w, false));
    assert!(msg.contains("precious.db"), "{msg}");
    assert!(msg.contains("not an iorig scratch file"), "{msg}");
    assert!(msg.contains("--allow-destroy"), "{msg}");
    assert_eq!(fs::read(&path).unwrap(), content);
    assert_eq!(fs::metadata(&path).unwrap().modified().unwrap(), before);

    // --size does not count as permission either.
    let w = workload(
        &[&path],
        WorkloadFile {
            size: s("1m"),
            ..writes()
        },
    );
    assert!(plan_targets(&w, false).is_err());
    assert_eq!(fs::read(&path).unwrap(), content);

    // With --allow-destroy the whole file is the data area.
    let plan = plan_targets(&workload(&[&path], writes()), true).unwrap();
    assert_eq!((plan[0].data_start, plan[0].size_bytes), (0, 256 << 10));
    assert_eq!(fs::read(&path).unwrap(), content);
}

#[test]
fn target_foreign_file_read_only_workload_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.bin");
    let content = vec![0x5au8; 1 << 20];
    fs::write(&path, &content).unwrap();
    let w = workload(&[&path], WorkloadFile::default());
    assert!(!w.writes());
    let plans = plan_targets(&w, false).unwrap();
    assert_eq!(plans[0].kind, TargetKind::File);
    assert!(plans[0].exists);
    assert_eq!((plans[0].data_start, plans[0].size_bytes), (0, 1 << 20));
    let open = open_targets(&plans, &w, &mut |_| {}).unwrap();
    assert_eq!(open.len(), 1);
    assert_eq!(fs::read(&path).unwrap(), content);
}

#[test]
fn target_missing_directory_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope").join("x.dat");
    let msg = usage_msg(plan_targets(&workload(&[&path], writes()), false));
    assert!(msg.contains("does not exist"), "{msg}");
    assert!(msg.contains("--target"), "{msg}");
    assert!(msg.contains("nope"), "{msg}");
    assert!(!dir.path().join("nope").exists());
}

/// True when files in `dir` can be opened with O_DIRECT (kernel 6.6+ tmpfs can).
fn direct_works(dir: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let p = dir.join("direct-check");
    fs::write(&p, b"").unwrap();
    let ok = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT)
        .open(&p)
        .is_ok();
    fs::remove_file(&p).unwrap();
    ok
}

/// Checks the O_DIRECT probe in `dir`: refused with a --buffered hint when the
/// filesystem lacks O_DIRECT, accepted otherwise; never leaves a file behind.
fn check_direct_probe(dir: &Path) {
    let path = dir.join("scratch.dat");
    let direct = workload(
        &[&path],
        WorkloadFile {
            size: s("1m"),
            direct: Some(true),
            ..writes()
        },
    );
    if direct_works(dir) {
        eprintln!(
            "note: {} supports O_DIRECT on this kernel; checking the probe accepts it",
            dir.display()
        );
        plan_targets(&direct, false).unwrap();
    } else {
        let msg = usage_msg(plan_targets(&direct, false));
        assert!(msg.contains("O_DIRECT"), "{msg}");
        assert!(msg.contains("--buffered"), "{msg}");
        assert!(msg.contains("scratch.dat"), "{msg}");
    }
    assert_eq!(entries(dir), Vec::<String>::new(), "file left behind");
    let buffered = workload(
        &[&path],
        WorkloadFile {
            size: s("1m"),
            buffered: Some(true),
            ..writes()
        },
    );
    plan_targets(&buffered, false).unwrap();
    assert_eq!(entries(dir), Vec::<String>::new(), "file left behind");
}

#[test]
fn target_tmpfs_with_direct() {
    assert!(Path::new("/dev/shm").is_dir(), "no /dev/shm");
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    check_direct_probe(dir.path());
}

/// ramfs never supports O_DIRECT, so it exercises the refusal on any kernel.
#[test]
#[ignore = "needs root: mounts a ramfs"]
fn target_ramfs_with_direct_is_refused() {
    assert!(is_root(), "mounting ramfs needs root");
    let dir = tempfile::tempdir().unwrap();
    let _mount =
        Mount::new(&["-t", "ramfs", "iorig-test"], dir.path()).expect("cannot mount ramfs");
    assert!(!direct_works(dir.path()));
    check_direct_probe(dir.path());
}

#[test]
fn target_bs_larger_than_the_range_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.dat");
    let w = workload(
        &[&path],
        WorkloadFile {
            size: s("1m"),
            bs: s("64k"),
            range: Some("0%-5%".to_string()),
            ..writes()
        },
    );
    let msg = usage_msg(plan_targets(&w, false));
    assert!(msg.contains("bs 64k is larger than the range of"), "{msg}");
    assert!(msg.contains("small.dat"), "{msg}");
    assert!(msg.contains("--range"), "{msg}");

    // Without a range: bs larger than the whole target.
    let w = workload(
        &[&path],
        WorkloadFile {
            size: s("32k"),
            bs: s("64k"),
            ..writes()
        },
    );
    let msg = usage_msg(plan_targets(&w, false));
    assert!(msg.contains("bs 64k is larger than"), "{msg}");
    assert_eq!(entries(dir.path()), Vec::<String>::new());

    // An existing foreign file smaller than bs, read-only.
    let foreign = dir.path().join("tiny.bin");
    fs::write(&foreign, [1u8; 1000]).unwrap();
    let w = workload(&[&foreign], WorkloadFile::default());
    let msg = usage_msg(plan_targets(&w, false));
    assert!(msg.contains("bs 4k is larger than"), "{msg}");
}

// ---- loop devices -------------------------------------------------------

fn is_root() -> bool {
    fs::metadata("/proc/self")
        .map(|m| m.uid() == 0)
        .unwrap_or(false)
}

fn have(tool: &str) -> bool {
    // Spawning proves the tool exists; `--help` makes none of them act.
    Command::new(tool).arg("--help").output().is_ok()
}

/// A loop device attached to a backing file in a temp dir; detached on drop.
struct Loop {
    dev: PathBuf,
    backing: PathBuf,
    _dir: tempfile::TempDir,
}

impl Loop {
    /// `init` may write to the backing file before it is attached.
    fn attach(size: u64, partscan: bool, init: impl FnOnce(&Path)) -> Loop {
        assert!(is_root(), "loop-device tests need root");
        assert!(have("losetup"), "losetup not found");
        let dir = tempfile::tempdir().unwrap();
        let backing = dir.path().join("backing.img");
        fs::File::create(&backing).unwrap().set_len(size).unwrap();
        init(&backing);
        let mut cmd = Command::new("losetup");
        if partscan {
            cmd.arg("--partscan");
        }
        let out = cmd
            .args(["--find", "--show"])
            .arg(&backing)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "losetup failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        let dev = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        let l = Loop {
            dev,
            backing,
            _dir: dir,
        };
        // Never go on with anything but a loop device we attached.
        assert!(
            l.dev.to_string_lossy().starts_with("/dev/loop"),
            "losetup returned {}",
            l.dev.display()
        );
        l
    }

    fn name(&self) -> String {
        self.dev.file_name().unwrap().to_string_lossy().into_owned()
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = Command::new("losetup").arg("-d").arg(&self.dev).status();
    }
}

/// A mount on a temp dir; unmounted on drop.
struct Mount {
    at: PathBuf,
}

impl Mount {
    fn new(args: &[&str], at: &Path) -> Option<Mount> {
        let out = Command::new("mount").args(args).arg(at).output().ok()?;
        if !out.status.success() {
            eprintln!(
                "mount failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return None;
        }
        Some(Mount {
            at: at.to_path_buf(),
        })
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.at).status();
    }
}

#[test]
#[ignore = "needs root: loop devices, mkfs.ext4, mount"]
fn target_loop_device_fresh_then_ext4() {
    let lo = Loop::attach(64 << 20, false, |_| {});
    let dev = lo.dev.as_path();

    // (a) A fresh, zeroed device plans fine for writes.
    let w = workload(&[dev], writes());
    let plans = plan_targets(&w, false).unwrap();
    assert_eq!(plans[0].kind, TargetKind::Block);
    assert_eq!(plans[0].size_bytes, 64 << 20);
    assert_eq!(plans[0].data_start, 0);
    assert_eq!(plans[0].device.as_deref(), Some(lo.name().as_str()));
    assert_eq!(usable_range(&plans[0], &w), (0, 64 << 20));
    // A plan holds a device it will write to exclusively: mkfs must fail now.
    let busy = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(dev)
        .output()
        .unwrap();
    assert!(!busy.status.success(), "mkfs ran on a device a plan holds");
    drop(plans);

    // (b) With an ext4 filesystem it is refused, and left unchanged.
    assert!(have("mkfs.ext4"), "mkfs.ext4 not found");
    let st = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(dev)
        .status()
        .unwrap();
    assert!(st.success());
    let before = hash_file(&lo.backing);
    let msg = usage_msg(plan_targets(&w, false));
    eprintln!("refused as expected: {msg}");
    assert!(msg.contains("ext4"), "{msg}");
    assert!(msg.contains(&*dev.to_string_lossy()), "{msg}");
    assert!(msg.contains("--allow-destroy"), "{msg}");
    assert_eq!(
        hash_file(&lo.backing),
        before,
        "planning changed the device"
    );

    // Reading is always allowed; --allow-destroy allows writing.
    plan_targets(&workload(&[dev], WorkloadFile::default()), false).unwrap();
    plan_targets(&w, true).unwrap();
    assert_eq!(
        hash_file(&lo.backing),
        before,
        "planning changed the device"
    );

    // Mounted: refused, and --allow-destroy does not override a mount.
    let mnt = tempfile::tempdir().unwrap();
    let _m = Mount::new(&[&*dev.to_string_lossy()], mnt.path()).expect("cannot mount the device");
    let msg = usage_msg(plan_targets(&w, false));
    eprintln!("refused as expected: {msg}");
    assert!(msg.contains("mounted at"), "{msg}");
    let msg = usage_msg(plan_targets(&w, true));
    eprintln!("refused as expected: {msg}");
    assert!(msg.contains("in use"), "{msg}");
}

#[test]
#[ignore = "needs root: loop devices"]
fn target_loop_device_with_partition_table_is_refused() {
    // An MBR with one Linux partition (sectors 2048..18432).
    let lo = Loop::attach(64 << 20, true, |backing| {
        let mut mbr = [0u8; 512];
        mbr[446 + 4] = 0x83;
        mbr[446 + 8..446 + 12].copy_from_slice(&2048u32.to_le_bytes());
        mbr[446 + 12..446 + 16].copy_from_slice(&16384u32.to_le_bytes());
        mbr[510] = 0x55;
        mbr[511] = 0xAA;
        let mut img = fs::read(backing).unwrap();
        img[..512].copy_from_slice(&mbr);
        fs::write(backing, img).unwrap();
    });
    let before = hash_file(&lo.backing);
    let w = workload(&[&lo.dev], writes());
    let msg = usage_msg(plan_targets(&w, false));
    eprintln!("refused as expected: {msg}");
    assert!(msg.contains("partition"), "{msg}");
    assert!(msg.contains("--allow-destroy"), "{msg}");
    assert_eq!(
        hash_file(&lo.backing),
        before,
        "planning changed the device"
    );
}
