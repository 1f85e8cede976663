//! Helpers shared by the integration tests that run the real binary.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// `run --engine null --size 16m --time TIME --interval INTERVAL -q` and
/// `extra`: a short run of the null engine, the usual way a test fills a
/// store or drives a server.
pub fn null_run<'a>(time: &'a str, interval: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--engine",
        "null",
        "--size",
        "16m",
        "--time",
        time,
        "--interval",
        interval,
        "-q",
    ];
    args.extend_from_slice(extra);
    args
}

/// The binary, with no result store inherited from the environment.
pub fn iorig() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_iorig"));
    c.env_remove("IORIG_DB");
    c
}

/// A temporary directory under the target directory (O_DIRECT-capable in CI,
/// unlike a tmpfs /tmp).
pub fn tmp() -> tempfile::TempDir {
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

/// Runs the binary in `dir`.
pub fn run(args: &[&str], dir: &Path) -> Output {
    iorig().args(args).current_dir(dir).output().unwrap()
}

/// Runs the binary in `dir`, asserts that it succeeded (showing its
/// stderr when not), and gives its stdout.
pub fn ok(args: &[&str], dir: &Path) -> String {
    let out = run(args, dir);
    assert!(
        out.status.success(),
        "iorig {args:?}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Whether the tests run as root (loop devices, mkfs, mounts).
pub fn is_root() -> bool {
    extern "C" {
        fn geteuid() -> u32;
    }
    // SAFETY: geteuid has no preconditions.
    unsafe { geteuid() == 0 }
}

/// Whether a command is on PATH (root's PATH includes the sbin directories).
pub fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// A loop device over a sparse temp file, detached on drop. Only for tests
/// marked `#[ignore = "needs root ..."]`, which `.ci/run` runs as root: a
/// failure to attach is a test failure there, not a skip.
pub struct LoopDev {
    pub dev: String,
    pub backing: PathBuf,
    _dir: tempfile::TempDir,
}

impl LoopDev {
    pub fn new(size: u64) -> LoopDev {
        assert!(
            is_root(),
            "this test needs root (run it with --ignored as root)"
        );
        let dir = tmp();
        let backing = dir.path().join("disk.img");
        std::fs::File::create(&backing)
            .unwrap()
            .set_len(size)
            .unwrap();
        let out = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&backing)
            .output()
            .expect("losetup");
        assert!(
            out.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        LoopDev {
            dev: String::from_utf8_lossy(&out.stdout).trim().to_string(),
            backing,
            _dir: dir,
        }
    }

    /// Detaches the device and attaches the same backing file again,
    /// read-only (the new device is detached on drop as before).
    pub fn reattach_read_only(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
        let out = Command::new("losetup")
            .args(["--find", "--show", "--read-only"])
            .arg(&self.backing)
            .output()
            .expect("losetup");
        assert!(
            out.status.success(),
            "losetup --read-only: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.dev = String::from_utf8_lossy(&out.stdout).trim().to_string();
    }

    /// A digest of the whole device, read through the device itself.
    pub fn digest(&self) -> u64 {
        let _ = Command::new("blockdev")
            .args(["--flushbufs", &self.dev])
            .status();
        digest_file(Path::new(&self.dev))
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        let _ = Command::new("losetup").args(["-d", &self.dev]).status();
    }
}

/// A digest of a file's or device's bytes (md5sum: fast even in debug builds).
pub fn digest_file(path: &Path) -> u64 {
    let out = Command::new("md5sum").arg(path).output().expect("md5sum");
    assert!(out.status.success(), "md5sum {}", path.display());
    let hex = String::from_utf8_lossy(&out.stdout);
    u64::from_str_radix(&hex[..16], 16).unwrap()
}

/// Waits (at most `secs`) for a file to appear.
pub fn wait_for(path: &Path, secs: u64) -> bool {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while std::time::Instant::now() < end {
        if path.exists() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// Waits (at most `secs`) for a child; kills it if it does not end.
pub fn wait_child(child: &mut std::process::Child, secs: u64) -> std::process::ExitStatus {
    let end = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if std::time::Instant::now() > end {
            let _ = child.kill();
            panic!("iorig did not end within {secs} s");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Sends `sig` to a child process.
pub fn signal(child: &std::process::Child, sig: i32) {
    extern "C" {
        fn kill(pid: i32, sig: i32) -> i32;
    }
    // SAFETY: kill takes plain integers; the pid is our own child's.
    unsafe {
        kill(child.id() as i32, sig);
    }
}

/// Every file name in a directory, sorted.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A child process that is killed when the guard is dropped, so a failed
/// assertion never leaves an iorig run going (an open-ended precondition of
/// a regressed binary could eat the machine's memory).
pub struct Guard(pub std::process::Child);

impl std::ops::Deref for Guard {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Guard {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Starts `cmd` under a [`Guard`].
pub fn guarded(cmd: &mut Command) -> Guard {
    Guard(cmd.spawn().unwrap())
}

/// Starts the binary in `dir` with its output discarded.
pub fn spawn_quiet(args: &[&str], dir: &Path) -> Guard {
    guarded(
        iorig()
            .args(args)
            .current_dir(dir)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null()),
    )
}

/// `iorig ARGS` started in `dir`, its standard output piped to the caller
/// (its errors dropped).
fn piped(dir: &Path, args: &[&str]) -> (Guard, std::process::ChildStdout) {
    let mut cmd = iorig();
    cmd.args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    let mut guard = guarded(&mut cmd);
    let out = guard.0.stdout.take().unwrap();
    (guard, out)
}

/// Starts `iorig ARGS` in `dir` and waits (at most 30 s) until `lines` of
/// its standard output each name an address (`... at http://ADDR/...`);
/// returns the process and the addresses.
pub fn start_server(dir: &Path, args: &[&str], lines: usize) -> (Guard, Vec<String>) {
    use std::io::BufRead;
    let (guard, out) = piped(dir, args);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut found = Vec::new();
        for line in std::io::BufReader::new(out).lines().map_while(Result::ok) {
            if let Some(rest) = line.split(" at http://").nth(1) {
                found.push(rest.split('/').next().unwrap_or("").to_owned());
                if found.len() == lines {
                    let _ = tx.send(std::mem::take(&mut found));
                }
            }
            // Read on to the end: a server whose stdout is closed stops
            // (as a run does), so a line it prints later must find a reader.
        }
    });
    let found = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the server says where it listens");
    (guard, found)
}

/// Starts `iorig agent` on `ip` (a port the kernel picks) in `dir`; returns
/// it and the address it says it listens on (waited for 30 s at most).
pub fn start_agent(dir: &Path, ip: &str) -> (Guard, String) {
    use std::io::BufRead;
    let (guard, out) = piped(dir, &["agent", "--listen", &format!("{ip}:0")]);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = std::io::BufReader::new(out).read_line(&mut line);
        let _ = tx.send(line);
    });
    let line = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the agent says where it listens");
    let addr = line
        .split("listening on ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    (guard, addr)
}

/// Prometheus' own check of an exposition (`promtool check metrics`).
pub fn promtool_check(text: &str) {
    use std::io::Write;
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool: {}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Waits until run `run` of the store at `db` has at least `count` stored
/// intervals in all (its steps together), polling read-only: a test that
/// signals or kills a run once it has measured something waits for that,
/// never for a fixed time. Panics after `limit_s` seconds.
#[allow(dead_code)]
/// Waits until a step of run `run` whose name starts with `name` has
/// stored an interval (the run is inside that step), for at most `limit_s`.
pub fn wait_for_step(db: &Path, run: i64, name: &str, limit_s: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(limit_s);
    loop {
        let inside = (|| -> Option<bool> {
            let s = iorig_store::Store::open_read_only(db).ok()?;
            let steps = s.steps(iorig_store::RunId(run)).ok()?;
            Some(steps.iter().any(|st| {
                st.name.starts_with(name) && s.intervals(st.id).is_ok_and(|r| !r.is_empty())
            }))
        })();
        if inside == Some(true) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "run {run} in {} never stored an interval of a step {name}… in {limit_s} s",
            db.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub fn wait_for_intervals(db: &Path, run: i64, count: usize, limit_s: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(limit_s);
    loop {
        let stored = (|| -> Option<usize> {
            let s = iorig_store::Store::open_read_only(db).ok()?;
            let steps = s.steps(iorig_store::RunId(run)).ok()?;
            let mut n = 0;
            for st in steps {
                // One row per operation kind of an interval: count seqs.
                let mut seqs: Vec<u64> = s.intervals(st.id).ok()?.iter().map(|r| r.seq).collect();
                seqs.sort_unstable();
                seqs.dedup();
                n += seqs.len();
            }
            Some(n)
        })();
        if stored.is_some_and(|n| n >= count) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "run {run} in {} never stored {count} intervals in {limit_s} s (has {stored:?})",
            db.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
