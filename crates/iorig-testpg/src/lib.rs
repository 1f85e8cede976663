//! A real PostgreSQL server for iorig's tests.
//!
//! [`PgServer::start`] runs the PostgreSQL server binaries of this machine
//! (Debian's, the newest version under `/usr/lib/postgresql`, or the
//! directory in `IORIG_PG_BIN`): `initdb` into a temp dir, then `postgres`
//! listening on 127.0.0.1 only, at a free port, with trust authentication
//! for the `postgres` role. Reachable from this machine only, for the
//! test's life only. [`PgServer::new_database`] gives each test a database
//! of its own. Dropping the server stops it (SIGTERM, SIGKILL after 10 s)
//! and removes its directory.
//!
//! `initdb` refuses to run as root, so as root both programs run as the
//! `postgres` user through `setpriv`, which execs in place: the child held
//! here is the server itself, and the signal that stops it reaches it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Why there is no server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PgError {
    /// This machine has no PostgreSQL server binaries (a test may skip,
    /// saying so).
    #[error("no PostgreSQL server here: {0}")]
    Missing(String),
    /// The binaries are there and the server did not start.
    #[error("PostgreSQL: {0}")]
    Failed(String),
}

/// A running PostgreSQL server of a test's own.
pub struct PgServer {
    // Field order: the server is stopped (Drop) before its directory goes.
    child: Child,
    bin: PathBuf,
    port: u16,
    databases: AtomicU32,
    dir: tempfile::TempDir,
}

/// How long the server may take to start, or to stop on SIGTERM.
const START_WITHIN: Duration = Duration::from_secs(30);
const STOP_WITHIN: Duration = Duration::from_secs(10);

impl PgServer {
    /// Initialises a cluster in a temp dir and starts a server on it.
    pub fn start() -> Result<PgServer, PgError> {
        let bin = server_bin()?;
        let owner = if rustix::process::geteuid().is_root() {
            Some(postgres_ids()?)
        } else {
            None
        };
        let dir = tempfile::Builder::new()
            .prefix("iorig-pg-")
            .tempdir()
            .map_err(|e| PgError::Failed(format!("a temp dir: {e}")))?;
        if let Some((uid, gid)) = owner {
            rustix::fs::chown(
                dir.path(),
                Some(rustix::fs::Uid::from_raw(uid)),
                Some(rustix::fs::Gid::from_raw(gid)),
            )
            .map_err(|e| PgError::Failed(format!("chown {}: {e}", dir.path().display())))?;
        }
        let data = dir.path().join("data");
        let out = as_owner(owner, &bin.join("initdb"))
            .arg("-D")
            .arg(&data)
            .args(["-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C"])
            .arg("--no-sync")
            .output()
            .map_err(|e| PgError::Failed(format!("initdb: {e}")))?;
        if !out.status.success() {
            return Err(PgError::Failed(format!(
                "initdb failed ({}): {}",
                out.status,
                tail(&String::from_utf8_lossy(&out.stderr))
            )));
        }
        // A port found free can be taken before the server binds it: try
        // again on another.
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port()?;
            match start_server(owner, &bin, dir.path(), &data, port)? {
                Ok(child) => {
                    return Ok(PgServer {
                        child,
                        bin,
                        port,
                        databases: AtomicU32::new(0),
                        dir,
                    })
                }
                Err(why) => last = why,
            }
        }
        Err(PgError::Failed(format!("the server did not start: {last}")))
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of database `name` as the `postgres` role.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Creates a new empty database; its URL.
    pub fn new_database(&self) -> Result<String, PgError> {
        let name = format!("t{}", self.databases.fetch_add(1, Ordering::Relaxed));
        let out = Command::new(self.bin.join("createdb"))
            .args(["-h", "127.0.0.1", "-U", "postgres", "-p"])
            .arg(self.port.to_string())
            .arg(&name)
            .output()
            .map_err(|e| PgError::Failed(format!("createdb: {e}")))?;
        if !out.status.success() {
            return Err(PgError::Failed(format!(
                "createdb {name} failed: {}",
                tail(&String::from_utf8_lossy(&out.stderr))
            )));
        }
        Ok(self.url(&name))
    }

    /// The server's data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // SIGINT is PostgreSQL's fast shutdown: it ends the sessions still
        // open and stops (SIGTERM would wait for every client to leave).
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
        let until = Instant::now() + STOP_WITHIN;
        while Instant::now() < until {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server binaries' directory.
fn server_bin() -> Result<PathBuf, PgError> {
    if let Some(dir) = std::env::var_os("IORIG_PG_BIN") {
        let dir = PathBuf::from(dir);
        return if dir.join("initdb").is_file() {
            Ok(dir)
        } else {
            Err(PgError::Missing(format!(
                "IORIG_PG_BIN={} has no initdb",
                dir.display()
            )))
        };
    }
    let root = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(root)
        .map_err(|e| {
            PgError::Missing(format!(
                "{}: {e} (apt-get install postgresql, or set IORIG_PG_BIN)",
                root.display()
            ))
        })?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((v, bin))
        })
        .collect();
    versions.sort();
    versions.pop().map(|(_, bin)| bin).ok_or_else(|| {
        PgError::Missing(format!(
            "no {}/VERSION/bin/initdb (apt-get install postgresql)",
            root.display()
        ))
    })
}

/// The `postgres` user's uid and gid, from /etc/passwd.
fn postgres_ids() -> Result<(u32, u32), PgError> {
    let passwd = std::fs::read_to_string("/etc/passwd")
        .map_err(|e| PgError::Failed(format!("/etc/passwd: {e}")))?;
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.len() > 3 && f[0] == "postgres")
                .then(|| Some((f[2].parse().ok()?, f[3].parse().ok()?)))?
        })
        .ok_or_else(|| {
            PgError::Missing(
                "running as root, and there is no postgres user to run the server as".into(),
            )
        })
}

/// `program`, run as `owner` when given.
fn as_owner(owner: Option<(u32, u32)>, program: &Path) -> Command {
    match owner {
        None => Command::new(program),
        Some((uid, gid)) => {
            let mut c = Command::new("setpriv");
            c.arg(format!("--reuid={uid}"))
                .arg(format!("--regid={gid}"))
                .arg("--clear-groups")
                .arg("--")
                .arg(program);
            c
        }
    }
}

/// A port no one listens on at this moment.
fn free_port() -> Result<u16, PgError> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| PgError::Failed(format!("a free loopback port: {e}")))
}

/// Starts the server on `port`: the child once it accepts connections, or
/// why it did not (Err of the outer result: give up; of the inner: try
/// another port).
fn start_server(
    owner: Option<(u32, u32)>,
    bin: &Path,
    dir: &Path,
    data: &Path,
    port: u16,
) -> Result<Result<Child, String>, PgError> {
    let log_path = dir.join(format!("server-{port}.log"));
    let log = std::fs::File::create(&log_path)
        .map_err(|e| PgError::Failed(format!("{}: {e}", log_path.display())))?;
    let log_err = log
        .try_clone()
        .map_err(|e| PgError::Failed(format!("{}: {e}", log_path.display())))?;
    let mut child = as_owner(owner, &bin.join("postgres"))
        .arg("-D")
        .arg(data)
        // The socket in the test's own directory, TCP on loopback only;
        // durability off: a test's database dies with the test.
        .arg("-k")
        .arg(dir)
        .args(["-h", "127.0.0.1", "-p"])
        .arg(port.to_string())
        .args(["-c", "fsync=off", "-c", "synchronous_commit=off"])
        .args(["-c", "full_page_writes=off", "-c", "max_connections=50"])
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn()
        .map_err(|e| PgError::Failed(format!("postgres: {e}")))?;
    let until = Instant::now() + START_WITHIN;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            return Ok(Err(format!("postgres exited ({status}): {}", tail(&log))));
        }
        // postmaster.pid's last line says "ready" once it accepts
        // connections.
        let pid_file = std::fs::read_to_string(data.join("postmaster.pid")).unwrap_or_default();
        if pid_file.lines().count() >= 8 && pid_file.lines().last().map(str::trim) == Some("ready")
        {
            return Ok(Ok(child));
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            return Err(PgError::Failed(format!(
                "not ready within {}s: {}",
                START_WITHIN.as_secs(),
                tail(&log)
            )));
        }
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// The last lines of a program's output, for an error message.
fn tail(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(3)..].join(" / ")
}
