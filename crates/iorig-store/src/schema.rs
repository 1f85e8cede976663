//! The schema as an ordered list of migrations, and opening a connection.
//!
//! `PRAGMA user_version` holds the number of migrations applied. A new
//! version only ever appends a migration to [`MIGRATIONS`]; shipped entries
//! are never edited, because databases out there already ran them.

use crate::db::{pg_message, Conn};
use crate::location::PgUrl;
use crate::StoreError;
use rusqlite::{Connection, TransactionBehavior};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

/// `PRAGMA application_id` of an iorig store ("iorg" in ASCII), so that
/// another program's SQLite file is recognised instead of altered.
pub const APPLICATION_ID: i64 = 0x696f_7267;

/// How long a writer waits for another connection's lock before failing
/// (a `runs list` reading while a plan writes, for instance).
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// One step of the schema: SQL, or a repair of stored rows in Rust (for
/// rules SQL cannot express, such as re-deriving columns from typed JSON).
pub enum Migration {
    Sql(&'static str),
    Repair(fn(&Connection) -> rusqlite::Result<()>),
}

impl Migration {
    fn apply(&self, conn: &Connection) -> rusqlite::Result<()> {
        match self {
            Migration::Sql(sql) => conn.execute_batch(sql),
            Migration::Repair(f) => f(conn),
        }
    }
}

/// Migration `i` brings the schema from version `i` to `i + 1`.
pub const MIGRATIONS: &[Migration] = &[
    Migration::Sql(
        // Version 1: runs, their steps, per-interval figures, histograms, analysis.
        //
        // Every child row names its parent with ON DELETE CASCADE, so deleting a
        // run removes everything under it. Each child table's primary key or a
        // unique index starts with the parent column, which is the index the
        // cascade (and the usual lookups) need.
        r#"
CREATE TABLE runs (
    id           INTEGER PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('run', 'plan', 'quick', 'profile')),
    -- The plan as given, so that `plan resume` can rebuild the same steps.
    plan_json    TEXT,
    status       TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
    started      TEXT NOT NULL,
    ended        TEXT,
    host         TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    command_line TEXT NOT NULL
);

CREATE TABLE run_labels (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
) WITHOUT ROWID;

CREATE TABLE system_facts (
    run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    json   TEXT NOT NULL
);

CREATE TABLE target_facts (
    run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    path       TEXT NOT NULL,
    kind       TEXT,
    size_bytes INTEGER,
    json       TEXT NOT NULL,
    PRIMARY KEY (run_id, path)
) WITHOUT ROWID;

CREATE TABLE steps (
    id           INTEGER PRIMARY KEY,
    run_id       INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step_index   INTEGER NOT NULL,
    name         TEXT NOT NULL,
    role         TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'running', 'ok', 'failed', 'interrupted', 'skipped')),
    -- Every resolved parameter (a WorkloadRecord); the columns below copy the
    -- ones results are searched and compared by.
    params_json  TEXT NOT NULL,
    bs           TEXT,
    -- The block size when there is one; NULL for a mix of sizes.
    bs_bytes     INTEGER,
    read_pct     REAL,
    random_pct   REAL,
    qd           INTEGER,
    threads      INTEGER,
    -- NULL for an uncontrolled (max rate) step.
    rate_iops    REAL,
    started      TEXT,
    ended        TEXT,
    summary_json TEXT,
    -- Also serves as the index on run_id.
    UNIQUE (run_id, step_index)
);
CREATE INDEX steps_by_params ON steps (bs_bytes, read_pct, random_pct, qd, threads);

CREATE TABLE intervals (
    step_id            INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,
    t_s                REAL NOT NULL,
    duration_s         REAL NOT NULL,
    warmup             INTEGER NOT NULL CHECK (warmup IN (0, 1)),
    op                 TEXT NOT NULL CHECK (op IN ('read', 'write', 'total')),
    ops                INTEGER NOT NULL,
    bytes              INTEGER NOT NULL,
    iops               REAL NOT NULL,
    bw_bytes_per_s     REAL NOT NULL,
    lat_min_ns         INTEGER NOT NULL,
    lat_mean_ns        INTEGER NOT NULL,
    lat_stddev_ns      INTEGER NOT NULL,
    lat_max_ns         INTEGER NOT NULL,
    lat_p50_ns         INTEGER NOT NULL,
    lat_p90_ns         INTEGER NOT NULL,
    lat_p99_ns         INTEGER NOT NULL,
    lat_p99_9_ns       INTEGER NOT NULL,
    lat_p99_99_ns      INTEGER NOT NULL,
    errors             INTEGER NOT NULL,
    cpu_usr_pct        REAL NOT NULL,
    cpu_sys_pct        REAL NOT NULL,
    -- NULL when the target has no block device to sample.
    dev_util_pct       REAL,
    dev_queue_depth    REAL,
    dev_read_await_ns  INTEGER,
    dev_write_await_ns INTEGER,
    PRIMARY KEY (step_id, seq, op)
) WITHOUT ROWID;

CREATE TABLE histograms (
    step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    op      TEXT NOT NULL CHECK (op IN ('read', 'write', 'total')),
    kind    TEXT NOT NULL CHECK (kind IN ('lat', 'service_lat')),
    -- 'measured': the merge over the step's measured (non-warmup) time.
    scope   TEXT NOT NULL,
    -- HDR histogram, V2 encoding.
    data    BLOB NOT NULL,
    PRIMARY KEY (step_id, op, kind, scope)
) WITHOUT ROWID;

CREATE TABLE analysis (
    id      INTEGER PRIMARY KEY,
    run_id  INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step_id INTEGER REFERENCES steps(id) ON DELETE CASCADE,
    kind    TEXT NOT NULL,
    json    TEXT NOT NULL
);
CREATE INDEX analysis_by_run ON analysis (run_id);
CREATE INDEX analysis_by_step ON analysis (step_id);
"#,
    ),
    // Version 2: steps given `read_bs`/`write_bs` were recorded with the
    // default `bs` (4k) in their workload and their searchable columns, so
    // `runs show` and `compare` showed a 64k/64k run as 4k. Their rows are
    // re-derived from the stored workload by the rule new records follow.
    Migration::Repair(repair_direction_block_sizes),
    // Version 3: every interval row keeps its latency histogram (HDR V2),
    // for per-interval percentiles, histogram logs and exact merges across
    // hosts. NULL in rows stored before.
    Migration::Sql("ALTER TABLE intervals ADD COLUMN lat_hist BLOB;"),
    // Version 4: trims (`--trim`) are an operation of their own, with
    // interval rows and histograms: the `op` checks admit 'trim'. SQLite
    // cannot change a CHECK in place, so both tables are copied over.
    Migration::Sql(
        r#"
CREATE TABLE intervals_v4 (
    step_id            INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,
    t_s                REAL NOT NULL,
    duration_s         REAL NOT NULL,
    warmup             INTEGER NOT NULL CHECK (warmup IN (0, 1)),
    op                 TEXT NOT NULL CHECK (op IN ('read', 'write', 'trim', 'total')),
    ops                INTEGER NOT NULL,
    bytes              INTEGER NOT NULL,
    iops               REAL NOT NULL,
    bw_bytes_per_s     REAL NOT NULL,
    lat_min_ns         INTEGER NOT NULL,
    lat_mean_ns        INTEGER NOT NULL,
    lat_stddev_ns      INTEGER NOT NULL,
    lat_max_ns         INTEGER NOT NULL,
    lat_p50_ns         INTEGER NOT NULL,
    lat_p90_ns         INTEGER NOT NULL,
    lat_p99_ns         INTEGER NOT NULL,
    lat_p99_9_ns       INTEGER NOT NULL,
    lat_p99_99_ns      INTEGER NOT NULL,
    errors             INTEGER NOT NULL,
    cpu_usr_pct        REAL NOT NULL,
    cpu_sys_pct        REAL NOT NULL,
    dev_util_pct       REAL,
    dev_queue_depth    REAL,
    dev_read_await_ns  INTEGER,
    dev_write_await_ns INTEGER,
    lat_hist           BLOB,
    PRIMARY KEY (step_id, seq, op)
) WITHOUT ROWID;
INSERT INTO intervals_v4 SELECT * FROM intervals;
DROP TABLE intervals;
ALTER TABLE intervals_v4 RENAME TO intervals;

CREATE TABLE histograms_v4 (
    step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    op      TEXT NOT NULL CHECK (op IN ('read', 'write', 'trim', 'total')),
    kind    TEXT NOT NULL CHECK (kind IN ('lat', 'service_lat')),
    scope   TEXT NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (step_id, op, kind, scope)
) WITHOUT ROWID;
INSERT INTO histograms_v4 SELECT * FROM histograms;
DROP TABLE histograms;
ALTER TABLE histograms_v4 RENAME TO histograms;
"#,
    ),
    // Version 5: file-system workloads store a row and a histogram per
    // kind of operation (create, stat, …): the `op` checks admit them,
    // copying both tables over as version 4 did.
    Migration::Sql(
        r#"
CREATE TABLE intervals_v5 (
    step_id            INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,
    t_s                REAL NOT NULL,
    duration_s         REAL NOT NULL,
    warmup             INTEGER NOT NULL CHECK (warmup IN (0, 1)),
    op                 TEXT NOT NULL CHECK (op IN ('read', 'write', 'trim', 'total', 'create', 'delete', 'mkdir', 'rmdir', 'open', 'close', 'stat', 'setattr', 'rename', 'fsync', 'readdir')),
    ops                INTEGER NOT NULL,
    bytes              INTEGER NOT NULL,
    iops               REAL NOT NULL,
    bw_bytes_per_s     REAL NOT NULL,
    lat_min_ns         INTEGER NOT NULL,
    lat_mean_ns        INTEGER NOT NULL,
    lat_stddev_ns      INTEGER NOT NULL,
    lat_max_ns         INTEGER NOT NULL,
    lat_p50_ns         INTEGER NOT NULL,
    lat_p90_ns         INTEGER NOT NULL,
    lat_p99_ns         INTEGER NOT NULL,
    lat_p99_9_ns       INTEGER NOT NULL,
    lat_p99_99_ns      INTEGER NOT NULL,
    errors             INTEGER NOT NULL,
    cpu_usr_pct        REAL NOT NULL,
    cpu_sys_pct        REAL NOT NULL,
    dev_util_pct       REAL,
    dev_queue_depth    REAL,
    dev_read_await_ns  INTEGER,
    dev_write_await_ns INTEGER,
    lat_hist           BLOB,
    PRIMARY KEY (step_id, seq, op)
) WITHOUT ROWID;
INSERT INTO intervals_v5 SELECT * FROM intervals;
DROP TABLE intervals;
ALTER TABLE intervals_v5 RENAME TO intervals;

CREATE TABLE histograms_v5 (
    step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    op      TEXT NOT NULL CHECK (op IN ('read', 'write', 'trim', 'total', 'create', 'delete', 'mkdir', 'rmdir', 'open', 'close', 'stat', 'setattr', 'rename', 'fsync', 'readdir')),
    kind    TEXT NOT NULL CHECK (kind IN ('lat', 'service_lat')),
    scope   TEXT NOT NULL,
    data    BLOB NOT NULL,
    PRIMARY KEY (step_id, op, kind, scope)
) WITHOUT ROWID;
INSERT INTO histograms_v5 SELECT * FROM histograms;
DROP TABLE histograms;
ALTER TABLE histograms_v5 RENAME TO histograms;
"#,
    ),
    // Version 6: runs on several hosts. Interval rows gain a host column
    // (empty: the step's own rows, the totals of a multi-host step; a name:
    // that host's part), part of the key; `step_hosts` keeps each host's
    // outcome (status, loss, clock offset, start skew, its summary).
    Migration::Sql(
        r#"
CREATE TABLE intervals_v6 (
    step_id            INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,
    t_s                REAL NOT NULL,
    duration_s         REAL NOT NULL,
    warmup             INTEGER NOT NULL CHECK (warmup IN (0, 1)),
    op                 TEXT NOT NULL CHECK (op IN ('read', 'write', 'trim', 'total', 'create', 'delete', 'mkdir', 'rmdir', 'open', 'close', 'stat', 'setattr', 'rename', 'fsync', 'readdir')),
    ops                INTEGER NOT NULL,
    bytes              INTEGER NOT NULL,
    iops               REAL NOT NULL,
    bw_bytes_per_s     REAL NOT NULL,
    lat_min_ns         INTEGER NOT NULL,
    lat_mean_ns        INTEGER NOT NULL,
    lat_stddev_ns      INTEGER NOT NULL,
    lat_max_ns         INTEGER NOT NULL,
    lat_p50_ns         INTEGER NOT NULL,
    lat_p90_ns         INTEGER NOT NULL,
    lat_p99_ns         INTEGER NOT NULL,
    lat_p99_9_ns       INTEGER NOT NULL,
    lat_p99_99_ns      INTEGER NOT NULL,
    errors             INTEGER NOT NULL,
    cpu_usr_pct        REAL NOT NULL,
    cpu_sys_pct        REAL NOT NULL,
    dev_util_pct       REAL,
    dev_queue_depth    REAL,
    dev_read_await_ns  INTEGER,
    dev_write_await_ns INTEGER,
    lat_hist           BLOB,
    host               TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (step_id, host, seq, op)
) WITHOUT ROWID;
INSERT INTO intervals_v6 SELECT *, '' FROM intervals;
DROP TABLE intervals;
ALTER TABLE intervals_v6 RENAME TO intervals;

CREATE TABLE step_hosts (
    step_id          INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    host             TEXT NOT NULL,
    position         INTEGER NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('ok', 'lost')),
    clock_offset_ns  INTEGER NOT NULL,
    start_skew_ns    INTEGER,
    result_json      TEXT NOT NULL,
    PRIMARY KEY (step_id, host)
) WITHOUT ROWID;
"#,
    ),
    // Version 7: steps of several workloads at once (a plan step's jobs, a
    // fio file's concurrent jobs): each job's own result (its summary; the
    // step's intervals are the totals).
    Migration::Sql(
        r#"
CREATE TABLE step_jobs (
    step_id      INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    position     INTEGER NOT NULL,
    result_json  TEXT NOT NULL,
    PRIMARY KEY (step_id, name)
) WITHOUT ROWID;
"#,
    ),
    // Version 8: block-trace analyses (`iorig trace analyse`): not runs (no
    // I/O of iorig's own), kept beside them with the analysis whole.
    Migration::Sql(
        r#"
CREATE TABLE trace_analyses (
    id             INTEGER PRIMARY KEY,
    created        TEXT NOT NULL,
    host           TEXT NOT NULL,
    tool_version   TEXT NOT NULL,
    command_line   TEXT NOT NULL,
    file           TEXT NOT NULL,
    format         TEXT NOT NULL,
    records        INTEGER NOT NULL,
    labels_json    TEXT NOT NULL,
    analysis_json  TEXT NOT NULL
);
"#,
    ),
    // Version 9: a store shared by a team. Every run gets a uid, what
    // `runs push` knows it by in another store (so a second push adds
    // nothing); runs are listed by time and filtered by label, which the
    // two indexes serve.
    Migration::Sql(
        r#"
ALTER TABLE runs ADD COLUMN uid TEXT;
UPDATE runs SET uid = lower(hex(randomblob(16)));
CREATE UNIQUE INDEX runs_by_uid ON runs (uid);
CREATE INDEX runs_by_started ON runs (started);
CREATE INDEX run_labels_by_key ON run_labels (key, value);
"#,
    ),
    // Version 10: storage-side figures (`--collect`) beside each interval:
    // a series' value, or a source's failure for that interval (name
    // empty, value NULL, the error).
    Migration::Sql(
        r#"
CREATE TABLE external_series (
    step_id INTEGER NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    source  TEXT NOT NULL,
    name    TEXT NOT NULL,
    value   REAL,
    error   TEXT,
    PRIMARY KEY (step_id, seq, source, name)
) WITHOUT ROWID;
"#,
    ),
    // Version 11: command lines stored before it could keep a PostgreSQL
    // password holding `/`, `?` or a space (the URL was cut at the first of
    // them); every stored command line is redacted once more, by the rule
    // for text whose arguments can no longer be told apart. Done once, as a
    // migration, so lines written since are never rewritten.
    Migration::Repair(scrub_command_lines),
    // Version 12: every figure of an interval but its histogram, in an
    // index of their own. A row holds its histogram (kilobytes), so a
    // week's soak (1.8 million rows) spread its figures over gigabytes of
    // pages; the reports, charts and exports that read figures only read
    // this index instead ([`FIGURES_INDEX`]), a tenth of the size.
    Migration::Sql(
        r#"
CREATE INDEX intervals_figures ON intervals (
    step_id, host, seq, op, t_s, duration_s, warmup, ops, bytes, iops,
    bw_bytes_per_s, lat_min_ns, lat_mean_ns, lat_stddev_ns, lat_max_ns,
    lat_p50_ns, lat_p90_ns, lat_p99_ns, lat_p99_9_ns, lat_p99_99_ns, errors,
    cpu_usr_pct, cpu_sys_pct, dev_util_pct, dev_queue_depth,
    dev_read_await_ns, dev_write_await_ns
);
"#,
    ),
];

/// The index of every interval figure but the histogram (version 12 on
/// SQLite), named to the query planner by reads of figures only.
pub(crate) const FIGURES_INDEX: (&str, i64) = ("intervals_figures", 12);

/// The version from which stored command lines hold no password: a store
/// read below it (read-only, so not migrated) has its command lines
/// redacted as they are read.
pub(crate) const SCRUBBED_VERSION: i64 = 11;

/// Tables whose rows keep the command line that made them.
const COMMAND_LINE_TABLES: [&str; 2] = ["runs", "trace_analyses"];

/// A stored command line with every password hidden; `None` when it has
/// none to hide.
pub(crate) fn scrubbed(line: &str) -> Option<String> {
    let clean = crate::location::redact_urls(line);
    (clean != line).then_some(clean)
}

/// Version 11 on SQLite: see [`MIGRATIONS`].
fn scrub_command_lines(conn: &Connection) -> rusqlite::Result<()> {
    for table in COMMAND_LINE_TABLES {
        let rows: Vec<(i64, String)> = {
            let mut stmt = conn.prepare(&format!(
                "SELECT id, command_line FROM {table} WHERE lower(command_line) LIKE '%postgres%'"
            ))?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<Result<_, _>>()?
        };
        for (id, line) in rows {
            if let Some(clean) = scrubbed(&line) {
                conn.execute(
                    &format!("UPDATE {table} SET command_line = ?1 WHERE id = ?2"),
                    rusqlite::params![clean, id],
                )?;
            }
        }
    }
    Ok(())
}

/// Version 11 on PostgreSQL: the same as on SQLite.
fn scrub_command_lines_pg(conn: &Conn) -> Result<(), StoreError> {
    for table in COMMAND_LINE_TABLES {
        let rows = conn.query(
            &format!(
                "SELECT id, command_line FROM {table} WHERE lower(command_line) LIKE '%postgres%'"
            ),
            &[],
            |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
        )?;
        for (id, line) in rows {
            if let Some(clean) = scrubbed(&line) {
                conn.execute(
                    &format!("UPDATE {table} SET command_line = ?1 WHERE id = ?2"),
                    crate::db::params![clean.as_str(), id],
                )?;
            }
        }
    }
    Ok(())
}

/// Re-derives `bs`, `bs_bytes` and the workload's `bs` of steps whose
/// workload gave per-direction block sizes. A row whose workload cannot be
/// read is left as it is.
fn repair_direction_block_sizes(conn: &Connection) -> rusqlite::Result<()> {
    let rows: Vec<(i64, String)> = {
        let mut stmt = conn.prepare(
            "SELECT id, params_json FROM steps
             WHERE params_json LIKE '%\"read_bs\"%' OR params_json LIKE '%\"write_bs\"%'",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
        rows.collect::<Result<_, _>>()?
    };
    for (id, text) in rows {
        let Ok(record) = serde_json::from_str::<iorig_result::WorkloadRecord>(&text) else {
            continue;
        };
        let label = record.bs_label();
        let single = record.single_bs_bytes().and_then(|b| i64::try_from(b).ok());
        let Ok(json) = serde_json::to_string(&record.with_effective_bs()) else {
            continue;
        };
        conn.execute(
            "UPDATE steps SET params_json = ?1, bs = ?2, bs_bytes = ?3 WHERE id = ?4",
            rusqlite::params![json, label, single, id],
        )?;
    }
    Ok(())
}

/// The schema version this build writes: the number of migrations.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// Files SQLite keeps beside a database.
const SIDE_FILES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// A store lives in a regular file (or a new one in an existing directory),
/// and so do the log files SQLite keeps beside it: a device or FIFO given as
/// `--db` must never be opened, since SQLite would write its header there.
fn check_paths(path: &Path) -> Result<iorig_outfile::Existing, StoreError> {
    let refuse = |e: iorig_outfile::OutputError| StoreError::Path(e.to_string());
    let existing = iorig_outfile::check_file("result store", path).map_err(refuse)?;
    for suffix in SIDE_FILES {
        let side = side_file(path, suffix);
        if std::fs::symlink_metadata(&side).is_ok() {
            iorig_outfile::check_file("result store", &side).map_err(refuse)?;
        }
    }
    Ok(existing)
}

/// The side file SQLite keeps beside `path` (`-wal`, `-shm`, `-journal`).
fn side_file(path: &Path, suffix: &str) -> std::path::PathBuf {
    let mut side = path.as_os_str().to_owned();
    side.push(suffix);
    side.into()
}

/// Whether a `-wal` is beside `path`: in WAL mode, whether any connection
/// (of any process) has the database open.
fn has_wal(path: &Path) -> bool {
    std::fs::symlink_metadata(side_file(path, "-wal")).is_ok()
}

/// Whether the file at `path` is empty, so that iorig may make a new store
/// of it: no bytes in it and none in a `-wal` beside it (a database in WAL
/// mode can live wholly in its log until the first checkpoint). Only
/// `stat` is used: opening the file outside SQLite, even to read and close
/// it, would drop every POSIX lock this process holds on it (see
/// [`read_only_connection`]).
fn is_empty_file(path: &Path) -> Result<bool, StoreError> {
    let len = |p: &Path| std::fs::metadata(p).map(|m| m.len());
    let main = len(path).map_err(|e| StoreError::Path(format!("{}: {e}", path.display())))?;
    Ok(main == 0 && len(&side_file(path, "-wal")).unwrap_or(0) == 0)
}

/// The first 100 bytes of the file (SQLite's header), read through SQLite's
/// own file layer (the default VFS's open, read and close), never a
/// descriptor of ours: SQLite keeps a descriptor it closes open while a
/// connection of this process holds a lock on the file (see
/// [`read_only_connection`]). `None` when it cannot be read.
fn header_via_sqlite(path: &Path) -> Option<[u8; 100]> {
    use rusqlite::ffi;
    use std::os::unix::ffi::OsStrExt;
    let abs = std::fs::canonicalize(path).ok()?;
    let mut name = abs.as_os_str().as_bytes().to_vec();
    if name.contains(&0) {
        return None;
    }
    // A database name is followed by its URI parameters, none here: the
    // name, then empty key and value, then the end.
    name.extend_from_slice(&[0, 0, 0, 0]);
    // SAFETY: the VFS is SQLite's default one; `file` is zeroed, 8-aligned
    // memory of the size the VFS asks for, and `name` stays alive until the
    // file is closed. xClose is called exactly once, and only after an open
    // that set the methods.
    unsafe {
        let vfs = ffi::sqlite3_vfs_find(std::ptr::null());
        if vfs.is_null() {
            return None;
        }
        let x_open = (*vfs).xOpen?;
        let size = usize::try_from((*vfs).szOsFile).ok()?;
        let mut file = vec![0u64; size.div_ceil(8).max(1)];
        let f = file.as_mut_ptr().cast::<ffi::sqlite3_file>();
        let mut flags_out = 0;
        let rc = x_open(
            vfs,
            name.as_ptr().cast(),
            f,
            ffi::SQLITE_OPEN_MAIN_DB | ffi::SQLITE_OPEN_READONLY,
            &mut flags_out,
        );
        let methods = (*f).pMethods;
        if methods.is_null() {
            return None;
        }
        let mut header = [0u8; 100];
        let read = if rc == ffi::SQLITE_OK {
            (*methods)
                .xRead
                .map(|read| read(f, header.as_mut_ptr().cast(), 100, 0))
        } else {
            None
        };
        if let Some(close) = (*methods).xClose {
            close(f);
        }
        drop(file);
        (read == Some(ffi::SQLITE_OK)).then_some(header)
    }
}

/// A short look at a file that exists, to refuse or accept it: a read-only
/// connection, closed right after. A database in WAL mode that nothing has
/// open (no `-wal` beside it) is looked at `immutable`: SQLite would
/// otherwise make its `-wal` and `-shm` to read it, and a refused file is
/// left exactly as it was. That is safe here, and only here: a WAL
/// connection keeps its `-wal` while open, so no process (this one
/// included) has the file open, none holds a lock a close could drop, and
/// the look is over before a writer could change what it reads.
fn probe_connection(path: &Path, label: &str) -> Result<Connection, StoreError> {
    let closed_wal = !has_wal(path)
        && header_via_sqlite(path)
            .is_some_and(|h| h.starts_with(b"SQLite format 3\0") && h[18] == 2 && h[19] == 2);
    if closed_wal {
        immutable_connection(path, label)
    } else {
        read_only_connection(path, label)
    }
}

/// The flags of every read-only connection.
const READ_ONLY: rusqlite::OpenFlags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
    .union(rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX)
    .union(rusqlite::OpenFlags::SQLITE_OPEN_URI);

/// A read-only connection that takes no locks and makes no side files
/// (`immutable`): only for a file no writer has open (see its callers).
fn immutable_connection(path: &Path, label: &str) -> Result<Connection, StoreError> {
    let at = |source: rusqlite::Error| StoreError::Open {
        path: label.to_owned(),
        source,
    };
    let abs = std::fs::canonicalize(path).map_err(|e| StoreError::Path(format!("{label}: {e}")))?;
    let conn =
        Connection::open_with_flags(format!("file:{}?immutable=1", uri_path(&abs)), READ_ONLY)
            .map_err(at)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(at)?;
    Ok(conn)
}

/// Checks, without writing anything, that `path` could be opened as a
/// store to write: a new path or a 0-byte file (either becomes a new
/// store), or a file that is an iorig store of this version or an older
/// one. Anything else is refused and left as it is, side files and all.
/// Dry runs use it.
pub fn check(path: &Path) -> Result<(), StoreError> {
    if check_paths(path)? == iorig_outfile::Existing::Regular && !is_empty_file(path)? {
        let label = path.display().to_string();
        let probe = probe_connection(path, &label)?;
        check_store(&probe, &label)?;
    }
    Ok(())
}

/// Opens (creating if missing) and migrates the database at `path`. An
/// existing file is first looked at read-only, so another program's
/// database is refused before anything (even the journal mode) is changed.
pub fn open(path: &Path) -> Result<Connection, StoreError> {
    check(path)?;
    let conn = Connection::open(path).map_err(|source| StoreError::Open {
        path: path.display().to_string(),
        source,
    })?;
    prepare(conn, &path.display().to_string())
}

/// A read-only connection: SQLite's own open, never ours.
///
/// Why nothing else may open the file: on Linux, closing any descriptor of
/// a file drops every POSIX lock the process holds on it. SQLite knows this
/// and shares its descriptors between its connections, but a `File::open`
/// beside them (to peek at the header, say) would silently drop the shared
/// lock an open WAL connection holds; the next other client to close its
/// connection would then checkpoint and delete the `-wal` under it, and
/// the store would be corrupted. `iorig serve` opens several connections in
/// turn, so this is not hypothetical.
///
/// A WAL database read this way gets SQLite's `-wal` and `-shm` beside it
/// when there are none (they are how readers and writers agree). Only when
/// they cannot be made (a directory this user cannot write) and no writer
/// has the file open (no `-wal`) is it opened `immutable`, which needs
/// neither.
fn read_only_connection(path: &Path, label: &str) -> Result<Connection, StoreError> {
    let at = |source: rusqlite::Error| StoreError::Open {
        path: label.to_owned(),
        source,
    };
    let conn = Connection::open_with_flags(path, READ_ONLY).map_err(at)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(at)?;
    // SQLite opens lazily: the first read is where side files are needed.
    let first = conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    });
    let Err(e) = first else {
        return Ok(conn);
    };
    let cannot_open = matches!(
        &e,
        rusqlite::Error::SqliteFailure(f, _)
            if f.code == rusqlite::ErrorCode::CannotOpen || f.code == rusqlite::ErrorCode::ReadOnly
    );
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir_writable = rustix::fs::access(dir, rustix::fs::Access::WRITE_OK).is_ok();
    if !cannot_open || dir_writable || has_wal(path) {
        return Err(at(e));
    }
    drop(conn);
    immutable_connection(path, label)
}

/// A path escaped for an SQLite `file:` URI.
fn uri_path(p: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for &b in p.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Opens an existing store for reading only: nothing is migrated or
/// written (a read-only command must not alter whatever file it is given;
/// SQLite may add its `-wal` and `-shm` beside a WAL store).
pub fn open_read_only(path: &Path) -> Result<Connection, StoreError> {
    let label = path.display().to_string();
    if check_paths(path)? == iorig_outfile::Existing::New {
        return Err(StoreError::Path(format!(
            "no result store at {label}; run something first, or give --db PATH (or IORIG_DB)"
        )));
    }
    if is_empty_file(path)? {
        return Err(StoreError::NotAStore { path: label });
    }
    // Refused files are refused by the short look, which makes no side
    // files; SQLite's own come only for a store that is iorig's.
    check_store(&probe_connection(path, &label)?, &label)?;
    let conn = read_only_connection(path, &label)?;
    check_store(&conn, &label)?;
    Ok(conn)
}

/// Sets the connection up and migrates it; `label` names it in errors. A
/// file's connection comes from [`open`], which has refused another
/// program's database already.
pub fn prepare(mut conn: Connection, label: &str) -> Result<Connection, StoreError> {
    let at = |source: rusqlite::Error| StoreError::Open {
        path: label.to_owned(),
        source,
    };
    conn.busy_timeout(BUSY_TIMEOUT).map_err(at)?;
    // The migrations come first, in whatever journal mode the file has (a
    // new one: the rollback journal), so the file holds iorig's id and
    // tables from its first write on. Switching a new file to WAL first
    // would write a header with neither, which another iorig opening the
    // same new path at that moment would rightly refuse as not a store.
    migrate(&mut conn)?;
    // WAL: readers never block the writer, and a commit is one append to the
    // log. With synchronous=NORMAL a commit is not fsynced, but it is in the
    // OS page cache once the write returns, so killing iorig (even -9) loses
    // nothing committed; only a power loss or kernel crash can drop the last
    // commits, never corrupt the database.
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(at)?;
    if !mode.eq_ignore_ascii_case("wal") && !mode.eq_ignore_ascii_case("memory") {
        // Some filesystems cannot hold the shared-memory file WAL needs; the
        // rollback journal is slower but just as safe, so go on.
        conn.pragma_update(None, "journal_mode", "DELETE")
            .map_err(at)?;
    }
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(at)?;
    conn.pragma_update(None, "foreign_keys", "ON").map_err(at)?;
    Ok(conn)
}

/// Refuses whatever is not an iorig store this build can read and bring up
/// to date: another application id (or none), a schema version newer than
/// this build's (or none), or schema objects other than exactly those
/// iorig's migrations make up to the version the file says it has.
fn check_store(conn: &Connection, label: &str) -> Result<(), StoreError> {
    let at = |source: rusqlite::Error| StoreError::Open {
        path: label.to_owned(),
        source,
    };
    let id: i64 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(at)?;
    let present = schema_objects(conn).map_err(at)?;
    let shown = |names: Vec<String>| {
        let mut shown: Vec<String> = names.iter().take(5).cloned().collect();
        if names.len() > 5 {
            shown.push(format!("and {} more", names.len() - 5));
        }
        shown.join(", ")
    };
    if id != APPLICATION_ID {
        if id != 0 {
            return Err(StoreError::NotIorigDb {
                path: label.to_owned(),
                application_id: id,
            });
        }
        if !present.is_empty() {
            return Err(StoreError::ForeignTables {
                path: label.to_owned(),
                tables: shown(present),
            });
        }
        return Err(StoreError::NotAStore {
            path: label.to_owned(),
        });
    }
    let found = user_version(conn).map_err(at)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found,
            known: SCHEMA_VERSION,
        });
    }
    let expected = usize::try_from(found)
        .ok()
        .filter(|&v| v > 0)
        .and_then(|v| objects_by_version().get(v))
        .ok_or_else(|| StoreError::NotAStore {
            path: label.to_owned(),
        })?;
    let foreign: Vec<String> = present
        .iter()
        .filter(|n| !expected.contains(n))
        .cloned()
        .collect();
    if !foreign.is_empty() {
        return Err(StoreError::ForeignTables {
            path: label.to_owned(),
            tables: shown(foreign),
        });
    }
    let missing: Vec<String> = expected
        .iter()
        .filter(|n| !present.contains(n))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(StoreError::Incomplete {
            path: label.to_owned(),
            version: found,
            missing: shown(missing),
        });
    }
    Ok(())
}

/// Names of the schema objects in a database, SQLite's own left out.
fn schema_objects(conn: &Connection) -> Result<Vec<String>, rusqlite::Error> {
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name")?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    Ok(names)
}

/// The schema objects iorig's migrations make, by version: entry `v` holds
/// those of a store at version `v` (entry 0 is empty). Worked out once, on
/// an in-memory database.
fn objects_by_version() -> &'static [Vec<String>] {
    static OBJECTS: std::sync::OnceLock<Vec<Vec<String>>> = std::sync::OnceLock::new();
    OBJECTS.get_or_init(|| {
        let mut by_version = vec![Vec::new()];
        let Ok(conn) = Connection::open_in_memory() else {
            return by_version;
        };
        for m in MIGRATIONS {
            // The migrations are this build's own and tested: one that
            // failed here would leave every later version unknown, and
            // stores of those versions refused (never altered).
            if m.apply(&conn).is_err() {
                break;
            }
            match schema_objects(&conn) {
                Ok(names) => by_version.push(names),
                Err(_) => break,
            }
        }
        by_version
    })
}

fn user_version(conn: &Connection) -> Result<i64, rusqlite::Error> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Applies the migrations the database lacks, each in its own transaction
/// together with its version bump, so a crash leaves a whole version.
fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let known = SCHEMA_VERSION;
    loop {
        // IMMEDIATE takes the write lock before reading the version, so two
        // processes opening a new database at once cannot both migrate it.
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let found = user_version(&tx)?;
        if found > known {
            return Err(StoreError::NewerSchema { found, known });
        }
        let applied = usize::try_from(found).map_err(|_| StoreError::BadValue {
            column: "user_version",
            value: found.to_string(),
        })?;
        let Some(migration) = MIGRATIONS.get(applied) else {
            return Ok(());
        };
        let version = found + 1;
        let mig = |source| StoreError::Migration { version, source };
        migration.apply(&tx).map_err(mig)?;
        tx.pragma_update(None, "user_version", version)
            .map_err(mig)?;
        tx.pragma_update(None, "application_id", APPLICATION_ID)
            .map_err(mig)?;
        tx.commit().map_err(mig)?;
    }
}

/// The schema version of an open store.
pub(crate) fn version(conn: &Conn) -> Result<i64, StoreError> {
    match conn {
        Conn::Lite(c) => Ok(user_version(c)?),
        Conn::Pg(_) => pg_meta(conn, "schema_version")?
            .and_then(|v| v.parse().ok())
            .ok_or(StoreError::BadValue {
                column: "iorig_meta.schema_version",
                value: "missing".into(),
            }),
    }
}

// ----- PostgreSQL -----
//
// A PostgreSQL store keeps its tables in a schema of its own, `iorig`, so
// the database may hold other things beside it; its version and owner are
// rows of `iorig_meta` (PostgreSQL has no user_version). No PostgreSQL
// store ever lived through versions 1-8, so it starts at a baseline, the
// schema of version [`PG_BASELINE_VERSION`] in PostgreSQL's types, and
// follows the SQLite migrations from there, one PostgreSQL form each.

/// The schema PostgreSQL stores are created with.
pub const PG_BASELINE_VERSION: i64 = 9;

/// The PostgreSQL forms of the migrations after the baseline, in order:
/// entry `i` brings a PostgreSQL store from `PG_BASELINE_VERSION + i` to
/// the next version, as `MIGRATIONS[PG_BASELINE_VERSION + i]` does SQLite.
pub(crate) const PG_MIGRATIONS: &[PgMigration] = &[
    // Version 10 (external_series).
    PgMigration::Sql(
        r#"
CREATE TABLE external_series (
    step_id BIGINT NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    seq     BIGINT NOT NULL,
    source  TEXT NOT NULL,
    name    TEXT NOT NULL,
    value   DOUBLE PRECISION,
    error   TEXT,
    PRIMARY KEY (step_id, seq, source, name)
);
"#,
    ),
    // Version 11 (stored command lines scrubbed of passwords).
    PgMigration::Repair(scrub_command_lines_pg),
    // Version 12 (the index of interval figures): nothing to do, since
    // PostgreSQL keeps a row's large histogram out of line (TOAST), so its
    // interval rows are narrow already.
    PgMigration::Repair(figures_need_no_index_pg),
];

/// Version 12 on PostgreSQL: see [`PG_MIGRATIONS`].
fn figures_need_no_index_pg(_conn: &Conn) -> Result<(), StoreError> {
    Ok(())
}

/// One step of a PostgreSQL store's schema: SQL, or a repair in Rust.
pub(crate) enum PgMigration {
    Sql(&'static str),
    Repair(fn(&Conn) -> Result<(), StoreError>),
}

/// Where a PostgreSQL store's tables live.
const PG_SCHEMA: &str = "iorig";

/// The key of the advisory lock migrations hold ("iorg", as the SQLite
/// application id), so two processes opening a new database at once do
/// not both create the schema.
const PG_MIGRATION_LOCK: i64 = APPLICATION_ID;

/// The schema of version 9: SQLite's with BIGINT for INTEGER (the client
/// binds an i64 only to BIGINT), DOUBLE PRECISION for REAL, BYTEA for
/// BLOB and identity columns for the rowids.
const PG_BASELINE: &str = r#"
CREATE TABLE iorig_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE runs (
    id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    kind         TEXT NOT NULL CHECK (kind IN ('run', 'plan', 'quick', 'profile')),
    plan_json    TEXT,
    status       TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
    started      TEXT NOT NULL,
    ended        TEXT,
    host         TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    command_line TEXT NOT NULL,
    uid          TEXT
);
CREATE UNIQUE INDEX runs_by_uid ON runs (uid);
CREATE INDEX runs_by_started ON runs (started);

CREATE TABLE run_labels (
    run_id BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX run_labels_by_key ON run_labels (key, value);

CREATE TABLE system_facts (
    run_id BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    json   TEXT NOT NULL
);

CREATE TABLE target_facts (
    run_id     BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    path       TEXT NOT NULL,
    kind       TEXT,
    size_bytes BIGINT,
    json       TEXT NOT NULL,
    PRIMARY KEY (run_id, path)
);

CREATE TABLE steps (
    id           BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id       BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step_index   BIGINT NOT NULL,
    name         TEXT NOT NULL,
    role         TEXT NOT NULL,
    status       TEXT NOT NULL DEFAULT 'pending'
                 CHECK (status IN ('pending', 'running', 'ok', 'failed', 'interrupted', 'skipped')),
    params_json  TEXT NOT NULL,
    bs           TEXT,
    bs_bytes     BIGINT,
    read_pct     DOUBLE PRECISION,
    random_pct   DOUBLE PRECISION,
    qd           BIGINT,
    threads      BIGINT,
    rate_iops    DOUBLE PRECISION,
    started      TEXT,
    ended        TEXT,
    summary_json TEXT,
    UNIQUE (run_id, step_index)
);
CREATE INDEX steps_by_params ON steps (bs_bytes, read_pct, random_pct, qd, threads);

CREATE TABLE intervals (
    step_id            BIGINT NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    seq                BIGINT NOT NULL,
    t_s                DOUBLE PRECISION NOT NULL,
    duration_s         DOUBLE PRECISION NOT NULL,
    warmup             BIGINT NOT NULL CHECK (warmup IN (0, 1)),
    op                 TEXT NOT NULL CHECK (op IN ('read', 'write', 'trim', 'total', 'create', 'delete', 'mkdir', 'rmdir', 'open', 'close', 'stat', 'setattr', 'rename', 'fsync', 'readdir')),
    ops                BIGINT NOT NULL,
    bytes              BIGINT NOT NULL,
    iops               DOUBLE PRECISION NOT NULL,
    bw_bytes_per_s     DOUBLE PRECISION NOT NULL,
    lat_min_ns         BIGINT NOT NULL,
    lat_mean_ns        BIGINT NOT NULL,
    lat_stddev_ns      BIGINT NOT NULL,
    lat_max_ns         BIGINT NOT NULL,
    lat_p50_ns         BIGINT NOT NULL,
    lat_p90_ns         BIGINT NOT NULL,
    lat_p99_ns         BIGINT NOT NULL,
    lat_p99_9_ns       BIGINT NOT NULL,
    lat_p99_99_ns      BIGINT NOT NULL,
    errors             BIGINT NOT NULL,
    cpu_usr_pct        DOUBLE PRECISION NOT NULL,
    cpu_sys_pct        DOUBLE PRECISION NOT NULL,
    dev_util_pct       DOUBLE PRECISION,
    dev_queue_depth    DOUBLE PRECISION,
    dev_read_await_ns  BIGINT,
    dev_write_await_ns BIGINT,
    lat_hist           BYTEA,
    host               TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (step_id, host, seq, op)
);

CREATE TABLE histograms (
    step_id BIGINT NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    op      TEXT NOT NULL CHECK (op IN ('read', 'write', 'trim', 'total', 'create', 'delete', 'mkdir', 'rmdir', 'open', 'close', 'stat', 'setattr', 'rename', 'fsync', 'readdir')),
    kind    TEXT NOT NULL CHECK (kind IN ('lat', 'service_lat')),
    scope   TEXT NOT NULL,
    data    BYTEA NOT NULL,
    PRIMARY KEY (step_id, op, kind, scope)
);

CREATE TABLE analysis (
    id      BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    run_id  BIGINT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    step_id BIGINT REFERENCES steps(id) ON DELETE CASCADE,
    kind    TEXT NOT NULL,
    json    TEXT NOT NULL
);
CREATE INDEX analysis_by_run ON analysis (run_id);
CREATE INDEX analysis_by_step ON analysis (step_id);

CREATE TABLE step_hosts (
    step_id          BIGINT NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    host             TEXT NOT NULL,
    position         BIGINT NOT NULL,
    status           TEXT NOT NULL CHECK (status IN ('ok', 'lost')),
    clock_offset_ns  BIGINT NOT NULL,
    start_skew_ns    BIGINT,
    result_json      TEXT NOT NULL,
    PRIMARY KEY (step_id, host)
);

CREATE TABLE step_jobs (
    step_id      BIGINT NOT NULL REFERENCES steps(id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    position     BIGINT NOT NULL,
    result_json  TEXT NOT NULL,
    PRIMARY KEY (step_id, name)
);

CREATE TABLE trace_analyses (
    id             BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    created        TEXT NOT NULL,
    host           TEXT NOT NULL,
    tool_version   TEXT NOT NULL,
    command_line   TEXT NOT NULL,
    file           TEXT NOT NULL,
    format         TEXT NOT NULL,
    records        BIGINT NOT NULL,
    labels_json    TEXT NOT NULL,
    analysis_json  TEXT NOT NULL
);
"#;

/// The tables of a PostgreSQL store; any other table in its schema is not
/// iorig's, and the store is refused rather than altered.
const PG_TABLES: &[&str] = &[
    "analysis",
    "external_series",
    "histograms",
    "intervals",
    "iorig_meta",
    "run_labels",
    "runs",
    "step_hosts",
    "step_jobs",
    "steps",
    "system_facts",
    "target_facts",
    "trace_analyses",
];

/// Connects to a PostgreSQL store; a server that cannot be reached is
/// [`StoreError::Connect`] with the server's or the network's reason.
fn connect_pg(url: &PgUrl) -> Result<Conn, StoreError> {
    let refused = |e: postgres::Error| StoreError::Connect {
        url: url.to_string(),
        why: pg_message(&e),
    };
    let mut config = postgres::Config::from_str(url.as_secret_str()).map_err(refused)?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(BUSY_TIMEOUT);
    }
    if config.get_application_name().is_none() {
        config.application_name("iorig");
    }
    // As psql does: a password kept out of the URL (and so out of `ps`
    // and shell history) comes from PGPASSWORD.
    if config.get_password().is_none() {
        if let Ok(pw) = std::env::var("PGPASSWORD") {
            config.password(pw.as_bytes());
        }
    }
    let client = config.connect(postgres::NoTls).map_err(refused)?;
    let conn = Conn::pg(client);
    conn.batch(&format!("SET search_path TO {PG_SCHEMA}"))?;
    Ok(conn)
}

/// One row of `iorig_meta`.
fn pg_meta(conn: &Conn, key: &str) -> Result<Option<String>, StoreError> {
    conn.query_opt(
        "SELECT value FROM iorig_meta WHERE key = ?1",
        crate::db::params![key],
        |r| r.get::<String>(0),
    )
}

/// The version of the iorig schema in a PostgreSQL database, `None` when
/// it has none; refuses a schema of a newer iorig and one that holds
/// tables iorig did not make.
fn pg_found_version(conn: &Conn, url: &PgUrl) -> Result<Option<i64>, StoreError> {
    let tables: Vec<String> = conn.query(
        "SELECT table_name::text FROM information_schema.tables WHERE table_schema = ?1 ORDER BY 1",
        crate::db::params![PG_SCHEMA],
        |r| r.get::<String>(0),
    )?;
    if tables.is_empty() {
        return Ok(None);
    }
    let foreign = |tables: Vec<&String>| {
        let mut shown: Vec<String> = tables.iter().take(5).map(|t| t.to_string()).collect();
        if tables.len() > 5 {
            shown.push(format!("and {} more", tables.len() - 5));
        }
        StoreError::ForeignTables {
            path: format!("{url} (schema {PG_SCHEMA})"),
            tables: shown.join(", "),
        }
    };
    if !tables.iter().any(|t| t == "iorig_meta")
        || pg_meta(conn, "application")?.as_deref() != Some("iorig")
    {
        return Err(foreign(tables.iter().collect()));
    }
    let found = version(conn)?;
    if found > SCHEMA_VERSION {
        return Err(StoreError::NewerSchema {
            found,
            known: SCHEMA_VERSION,
        });
    }
    let unknown: Vec<&String> = tables
        .iter()
        .filter(|t| !PG_TABLES.contains(&t.as_str()))
        .collect();
    if !unknown.is_empty() {
        return Err(foreign(unknown));
    }
    Ok(Some(found))
}

/// Opens a PostgreSQL store: read-only (an existing iorig schema, every
/// transaction read-only), or to write, creating or migrating the schema.
pub(crate) fn open_pg(url: &PgUrl, read_only: bool) -> Result<Conn, StoreError> {
    let conn = connect_pg(url)?;
    if read_only {
        if pg_found_version(&conn, url)?.is_none() {
            return Err(StoreError::NotAStore {
                path: url.to_string(),
            });
        }
        conn.batch("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")?;
    } else {
        migrate_pg(&conn, url)?;
    }
    Ok(conn)
}

/// Checks, writing nothing, that a PostgreSQL database can be reached and
/// holds an iorig store or none.
pub(crate) fn check_pg(url: &PgUrl) -> Result<(), StoreError> {
    let conn = connect_pg(url)?;
    pg_found_version(&conn, url).map(drop)
}

/// Creates the schema in a database without one, or applies the
/// migrations it lacks: all in one transaction under the migration lock,
/// so a crash or a concurrent opener never sees half a version.
fn migrate_pg(conn: &Conn, url: &PgUrl) -> Result<(), StoreError> {
    conn.transaction(|| {
        conn.batch(&format!(
            "SELECT pg_advisory_xact_lock({PG_MIGRATION_LOCK}); CREATE SCHEMA IF NOT EXISTS {PG_SCHEMA}"
        ))?;
        let at = |version: i64| {
            move |e: StoreError| match e {
                StoreError::Postgres(source) => StoreError::PgMigration { version, source },
                e => e,
            }
        };
        let mut version = match pg_found_version(conn, url)? {
            Some(v) => v,
            None => {
                conn.batch(PG_BASELINE).map_err(at(PG_BASELINE_VERSION))?;
                conn.execute(
                    "INSERT INTO iorig_meta (key, value) VALUES ('application', 'iorig'), ('schema_version', ?1)",
                    crate::db::params![PG_BASELINE_VERSION.to_string().as_str()],
                )?;
                PG_BASELINE_VERSION
            }
        };
        while version < SCHEMA_VERSION {
            let index = usize::try_from(version - PG_BASELINE_VERSION).unwrap_or(usize::MAX);
            let Some(migration) = PG_MIGRATIONS.get(index) else {
                return Err(StoreError::BadValue {
                    column: "iorig_meta.schema_version",
                    value: format!("{version}: no PostgreSQL migration from it"),
                });
            };
            version += 1;
            match migration {
                PgMigration::Sql(sql) => conn.batch(sql).map_err(at(version))?,
                PgMigration::Repair(repair) => repair(conn).map_err(at(version))?,
            }
            conn.execute(
                "UPDATE iorig_meta SET value = ?1 WHERE key = 'schema_version'",
                crate::db::params![version.to_string().as_str()],
            )?;
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_version_after_the_postgres_baseline_has_a_postgres_form() {
        assert_eq!(
            PG_BASELINE_VERSION + PG_MIGRATIONS.len() as i64,
            SCHEMA_VERSION
        );
    }

    #[test]
    fn postgres_stores_have_the_tables_sqlite_stores_have() -> Result<(), StoreError> {
        let conn = Connection::open_in_memory()?;
        for m in MIGRATIONS {
            m.apply(&conn)?;
        }
        let mut stmt = conn.prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )?;
        let mut tables = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        tables.push("iorig_meta".into());
        tables.sort();
        assert_eq!(tables, PG_TABLES);
        for t in PG_TABLES {
            let create = format!("CREATE TABLE {t} (");
            assert!(
                PG_BASELINE.contains(&create)
                    || PG_MIGRATIONS
                        .iter()
                        .any(|m| matches!(m, PgMigration::Sql(sql) if sql.contains(&create))),
                "{t}"
            );
        }
        Ok(())
    }
}
