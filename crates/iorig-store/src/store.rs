//! The [`Store`]: one connection (an SQLite file or a PostgreSQL database)
//! and the reads and writes of results, written once for both.

use crate::db::{params, Conn, DbRow, Value};
use crate::location::Location;
use crate::schema;
use crate::types::{
    AnalysisRow, ExternalRow, HistKind, IntervalRow, NewRun, NewStep, NewTraceAnalysis, Op,
    RunDetail, RunId, RunRow, StepId, StepRow, StepStatus, TargetFactsRow, TraceAnalysisRow,
};
use crate::StoreError;
use iorig_result::{
    Finding, HostResult, HostStatus, JobResult, RunStatus, StepSummary, TargetKind,
};
use iorig_stats::sampler::system::{SystemFacts, TargetFacts};
use iorig_stats::{DeviceUsage, LatSummary, LatencyHistogram};
use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

/// Scope of the one histogram per step, op and kind stored today: the merge
/// over the step's measured time. The column leaves room for others (per
/// round, warmup) without a schema change.
const SCOPE_MEASURED: &str = "measured";

/// The result store. Every write is its own short transaction, committed
/// before the call returns, so a crash or kill loses at most the write in
/// flight.
#[derive(Debug)]
pub struct Store {
    pub(crate) conn: Conn,
    /// The store's schema version. A store opened read-only is not
    /// migrated, so reads leave out what an older version lacks.
    version: i64,
}

impl Store {
    /// Opens the store at `path`, creating the file if missing and bringing
    /// its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::with(Conn::Lite(schema::open(path)?))
    }

    /// Opens the store at `location` to read and write it: a file is
    /// created when missing, a PostgreSQL database gets iorig's schema when
    /// it has none; either is brought up to date.
    pub fn open_at(location: &Location) -> Result<Store, StoreError> {
        match location {
            Location::File(p) => Store::open(p),
            Location::Postgres(url) => Store::with(schema::open_pg(url, false)?),
        }
    }

    /// Checks, writing nothing, that `path` could be opened as a store (a
    /// regular file or a new path; an existing file must be iorig's).
    pub fn check(path: &Path) -> Result<(), StoreError> {
        schema::check(path)
    }

    /// [`Store::check`] for any location: a PostgreSQL database is
    /// connected to and its schema looked at, nothing written.
    pub fn check_at(location: &Location) -> Result<(), StoreError> {
        match location {
            Location::File(p) => schema::check(p),
            Location::Postgres(url) => schema::check_pg(url),
        }
    }

    /// Opens an existing store for reading only (`runs list`, `report`,
    /// `export`, `compare`): a missing file is an error, nothing is created,
    /// migrated or written, and another program's database is refused.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        Store::with(Conn::Lite(schema::open_read_only(path)?))
    }

    /// [`Store::open_read_only`] for any location: a PostgreSQL database
    /// without iorig's schema is an error, and the session is read-only.
    pub fn open_read_only_at(location: &Location) -> Result<Store, StoreError> {
        match location {
            Location::File(p) => Store::open_read_only(p),
            Location::Postgres(url) => Store::with(schema::open_pg(url, true)?),
        }
    }

    /// A store that lives in memory only, for tests and dry runs.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = rusqlite::Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: ":memory:".to_owned(),
            source,
        })?;
        Store::with(Conn::Lite(schema::prepare(conn, ":memory:")?))
    }

    /// A stored command line as it may be shown or copied: from a store
    /// older than [`schema::SCRUBBED_VERSION`] (opened read-only, so not
    /// migrated), with the passwords older versions could leave in it
    /// hidden.
    pub(crate) fn shown_command_line(&self, line: String) -> String {
        if self.version >= schema::SCRUBBED_VERSION {
            return line;
        }
        schema::scrubbed(&line).unwrap_or(line)
    }

    fn with(conn: Conn) -> Result<Store, StoreError> {
        let version = schema::version(&conn)?;
        Ok(Store { conn, version })
    }

    /// Whether the store is a PostgreSQL database.
    pub fn is_postgres(&self) -> bool {
        self.conn.is_postgres()
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        schema::version(&self.conn)
    }

    /// The database's own check; `"ok"` when sound, else its findings, one
    /// per line. (PostgreSQL keeps its own consistency: `"ok"` once the
    /// server answers.)
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        let sql = match self.conn {
            Conn::Lite(_) => "PRAGMA integrity_check",
            Conn::Pg(_) => "SELECT 'ok'",
        };
        let lines = self.conn.query(sql, &[], |r| r.get::<String>(0))?;
        Ok(lines.join("\n"))
    }

    // ----- writes -----

    /// Stores a new run with status `running` and its labels.
    pub fn create_run(&self, run: &NewRun) -> Result<RunId, StoreError> {
        self.create_run_with_uid(run, &new_uid()?)
    }

    fn create_run_with_uid(&self, run: &NewRun, uid: &str) -> Result<RunId, StoreError> {
        for (k, v) in &run.labels {
            label_ok(k, v)?;
        }
        let kind: &'static str = run.kind.into();
        self.conn.transaction(|| {
            let id = self
                .conn
                .query_opt(
                    "INSERT INTO runs (kind, plan_json, status, started, host, tool_version, command_line, uid)
                     VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6, ?7) RETURNING id",
                    params![
                        kind,
                        &run.plan_json,
                        &run.started,
                        &run.host,
                        &run.tool_version,
                        &run.command_line,
                        uid
                    ],
                    |r| r.get::<i64>(0),
                )?
                .ok_or(StoreError::BadValue {
                    column: "runs.id",
                    value: "none returned".into(),
                })?;
            for (k, v) in &run.labels {
                self.conn.execute(
                    "INSERT INTO run_labels (run_id, key, value) VALUES (?1, ?2, ?3)",
                    params![id, k, v],
                )?;
            }
            Ok(RunId(id))
        })
    }

    /// Sets (or replaces) one label of a run.
    pub fn set_label(&self, run: RunId, key: &str, value: &str) -> Result<(), StoreError> {
        label_ok(key, value)?;
        self.conn
            .execute(
                "INSERT INTO run_labels (run_id, key, value) VALUES (?1, ?2, ?3)
                 ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value",
                params![run.0, key, value],
            )
            .map_err(|e| no_run(e, run))?;
        Ok(())
    }

    /// Removes one label of a run; whether it had it.
    pub fn remove_label(&self, run: RunId, key: &str) -> Result<bool, StoreError> {
        if !self.run_exists(run)? {
            return Err(StoreError::NoSuchRun(run.0));
        }
        let n = self.conn.execute(
            "DELETE FROM run_labels WHERE run_id = ?1 AND key = ?2",
            params![run.0, key],
        )?;
        Ok(n > 0)
    }

    /// Stores the host's facts (replacing earlier ones of the run).
    pub fn record_system_facts(&self, run: RunId, facts: &SystemFacts) -> Result<(), StoreError> {
        let json = to_json(facts)?;
        self.conn
            .execute(
                "INSERT INTO system_facts (run_id, json) VALUES (?1, ?2)
                 ON CONFLICT (run_id) DO UPDATE SET json = excluded.json",
                params![run.0, &json],
            )
            .map_err(|e| no_run(e, run))?;
        Ok(())
    }

    /// Stores one target's facts (replacing earlier ones of the same path).
    pub fn record_target_facts(
        &self,
        run: RunId,
        path: &str,
        kind: Option<TargetKind>,
        size_bytes: Option<u64>,
        facts: &TargetFacts,
    ) -> Result<(), StoreError> {
        let kind: Option<&'static str> = kind.map(Into::into);
        let json = to_json(facts)?;
        self.conn
            .execute(
                "INSERT INTO target_facts (run_id, path, kind, size_bytes, json)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (run_id, path) DO UPDATE SET
                     kind = excluded.kind, size_bytes = excluded.size_bytes, json = excluded.json",
                params![run.0, path, kind, size_bytes.map(to_i64), &json],
            )
            .map_err(|e| no_run(e, run))?;
        Ok(())
    }

    /// Stores a step, or updates the name, role and parameters of the step
    /// already stored at the same index of the run (a resumed plan reuses
    /// its rows). Status, times, intervals and summary are left as they are.
    pub fn upsert_step(&self, run: RunId, step: &NewStep<'_>) -> Result<StepId, StoreError> {
        let p = step.params;
        let params_json = match p {
            Some(p) => to_json(p)?,
            None => "{}".to_owned(),
        };
        let role = step.role.to_string();
        let bs = p.map(|p| p.bs_label());
        let id = self
            .conn
            .query_opt(
                "INSERT INTO steps (run_id, step_index, name, role, params_json,
                                    bs, bs_bytes, read_pct, random_pct, qd, threads, rate_iops)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)
                 ON CONFLICT (run_id, step_index) DO UPDATE SET
                     name = excluded.name, role = excluded.role,
                     params_json = excluded.params_json, bs = excluded.bs,
                     bs_bytes = excluded.bs_bytes, read_pct = excluded.read_pct,
                     random_pct = excluded.random_pct, qd = excluded.qd,
                     threads = excluded.threads, rate_iops = excluded.rate_iops
                 RETURNING id",
                params![
                    run.0,
                    step.index,
                    step.name,
                    &role,
                    &params_json,
                    &bs,
                    p.and_then(|p| p.single_bs_bytes()).map(to_i64),
                    p.map(|p| p.read_pct),
                    p.map(|p| p.random_pct),
                    p.map(|p| i64::from(p.qd)),
                    p.map(|p| i64::from(p.threads)),
                    p.and_then(|p| p.rate_iops),
                ],
                |r| r.get::<i64>(0),
            )
            .map_err(|e| no_run(e, run))?
            .ok_or(StoreError::BadValue {
                column: "steps.id",
                value: "none returned".into(),
            })?;
        Ok(StepId(id))
    }

    /// Sets a step's status; `started`/`ended` (RFC 3339) replace the stored
    /// times when given and leave them when `None`.
    pub fn set_step_status(
        &self,
        step: StepId,
        status: StepStatus,
        started: Option<&str>,
        ended: Option<&str>,
    ) -> Result<(), StoreError> {
        let status: &'static str = status.into();
        let n = self.conn.execute(
            "UPDATE steps SET status = ?1, started = COALESCE(?2, started),
                              ended = COALESCE(?3, ended)
             WHERE id = ?4",
            params![status, started, ended, step.0],
        )?;
        expect_step(n, step)
    }

    /// Clears what an interrupted attempt of a step left (intervals,
    /// histograms, step analysis, summary, times) and sets it `pending`, so
    /// the step can be run again from its start.
    pub fn reset_step(&self, step: StepId) -> Result<(), StoreError> {
        self.conn.transaction(|| {
            for sql in [
                "DELETE FROM intervals WHERE step_id = ?1",
                "DELETE FROM histograms WHERE step_id = ?1",
                "DELETE FROM analysis WHERE step_id = ?1",
                "DELETE FROM step_hosts WHERE step_id = ?1",
            ] {
                self.conn.execute(sql, params![step.0])?;
            }
            let n = self.conn.execute(
                "UPDATE steps SET status = 'pending', started = NULL, ended = NULL,
                                  summary_json = NULL
                 WHERE id = ?1",
                params![step.0],
            )?;
            expect_step(n, step)
        })
    }

    /// Stores one row of one interval.
    pub fn add_interval(&self, step: StepId, row: &IntervalRow) -> Result<(), StoreError> {
        insert_interval(&self.conn, step, "", row).map_err(|e| no_step(e, step))
    }

    /// Stores several rows (usually the read, write and total rows of one
    /// interval, see [`IntervalRow::rows_of`]) in one transaction: after a
    /// crash either all of them are there or none.
    pub fn add_intervals(&self, step: StepId, rows: &[IntervalRow]) -> Result<(), StoreError> {
        self.add_host_intervals(step, "", rows)
    }

    /// Stores one host's part of an interval of a multi-host step (`host`
    /// empty: the step's own rows, as [`Store::add_intervals`]).
    pub fn add_host_intervals(
        &self,
        step: StepId,
        host: &str,
        rows: &[IntervalRow],
    ) -> Result<(), StoreError> {
        self.conn.transaction(|| {
            for row in rows {
                insert_interval(&self.conn, step, host, row).map_err(|e| no_step(e, step))?;
            }
            Ok(())
        })
    }

    /// Stores (or replaces) how one host of a multi-host step ended; its
    /// intervals are the host's interval rows, not part of `result`.
    pub fn put_step_host(
        &self,
        step: StepId,
        position: usize,
        result: &HostResult,
    ) -> Result<(), StoreError> {
        let mut r = result.clone();
        r.intervals.clear();
        let json = to_json(&r)?;
        self.conn
            .execute(
                "INSERT INTO step_hosts (step_id, host, position, status, clock_offset_ns, start_skew_ns, result_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (step_id, host) DO UPDATE SET position = excluded.position,
                   status = excluded.status, clock_offset_ns = excluded.clock_offset_ns,
                   start_skew_ns = excluded.start_skew_ns, result_json = excluded.result_json",
                params![
                    step.0,
                    &r.name,
                    position as i64,
                    match r.status {
                        HostStatus::Ok => "ok",
                        HostStatus::Lost => "lost",
                    },
                    r.clock_offset_ns,
                    r.start_skew_ns,
                    &json
                ],
            )
            .map_err(|e| no_step(e, step))?;
        Ok(())
    }

    /// The hosts of a multi-host step in their order (none for a step run
    /// on this machine), without their intervals.
    pub fn step_hosts(&self, step: StepId) -> Result<Vec<HostResult>, StoreError> {
        if self.version < 6 {
            return Ok(Vec::new());
        }
        self.conn.query(
            "SELECT result_json FROM step_hosts WHERE step_id = ?1 ORDER BY position",
            params![step.0],
            |r| json_col(r, 0, "step_hosts.result_json"),
        )
    }

    /// Stores (or replaces) one job's result of a step of several jobs,
    /// without its intervals.
    pub fn put_step_job(
        &self,
        step: StepId,
        position: usize,
        result: &JobResult,
    ) -> Result<(), StoreError> {
        let mut r = result.clone();
        r.intervals.clear();
        let json = to_json(&r)?;
        self.conn
            .execute(
                "INSERT INTO step_jobs (step_id, name, position, result_json)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (step_id, name) DO UPDATE SET position = excluded.position,
                   result_json = excluded.result_json",
                params![step.0, &r.name, position as i64, &json],
            )
            .map_err(|e| no_step(e, step))?;
        Ok(())
    }

    /// The jobs of a step of several, in their order (empty for any other
    /// step).
    pub fn step_jobs(&self, step: StepId) -> Result<Vec<JobResult>, StoreError> {
        if self.version < 7 {
            return Ok(Vec::new());
        }
        self.conn.query(
            "SELECT result_json FROM step_jobs WHERE step_id = ?1 ORDER BY position",
            params![step.0],
            |r| json_col(r, 0, "step_jobs.result_json"),
        )
    }

    /// Stores (or replaces) the measured-time histogram of a step.
    pub fn put_histogram(
        &self,
        step: StepId,
        op: Op,
        kind: HistKind,
        hist: &LatencyHistogram,
    ) -> Result<(), StoreError> {
        let (op, kind): (&'static str, &'static str) = (op.into(), kind.into());
        let data = hist.to_bytes();
        self.conn
            .execute(
                "INSERT INTO histograms (step_id, op, kind, scope, data) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (step_id, op, kind, scope) DO UPDATE SET data = excluded.data",
                params![step.0, op, kind, SCOPE_MEASURED, &data[..]],
            )
            .map_err(|e| no_step(e, step))?;
        Ok(())
    }

    /// Ends a step: its final status, its summary (none for a step that
    /// ended before any I/O) and its end time.
    pub fn finish_step(
        &self,
        step: StepId,
        status: StepStatus,
        summary: Option<&StepSummary>,
        ended: &str,
    ) -> Result<(), StoreError> {
        let summary = summary.map(to_json).transpose()?;
        let status: &'static str = status.into();
        let n = self.conn.execute(
            "UPDATE steps SET status = ?1, summary_json = ?2, ended = ?3 WHERE id = ?4",
            params![status, &summary, ended, step.0],
        )?;
        expect_step(n, step)
    }

    /// Stores one finding about a run, or about one of its steps; returns
    /// its id.
    pub fn put_analysis(
        &self,
        run: RunId,
        step: Option<StepId>,
        finding: &Finding,
    ) -> Result<i64, StoreError> {
        let json = finding.body_json().map_err(StoreError::Json)?;
        let kind: &'static str = finding.kind().into();
        self.conn
            .query_opt(
                "INSERT INTO analysis (run_id, step_id, kind, json) VALUES (?1, ?2, ?3, ?4)
                 RETURNING id",
                params![run.0, step.map(|s| s.0), kind, &json],
                |r| r.get::<i64>(0),
            )
            .map_err(|e| match step {
                // The foreign key failure does not say which parent is
                // missing; name the run when it is the one.
                Some(s) if self.run_exists(run).unwrap_or(false) => no_step(e, s),
                _ => no_run(e, run),
            })?
            .ok_or(StoreError::BadValue {
                column: "analysis.id",
                value: "none returned".into(),
            })
    }

    /// Ends a run.
    pub fn finish_run(&self, run: RunId, status: RunStatus, ended: &str) -> Result<(), StoreError> {
        let status: &'static str = status.into();
        let n = self.conn.execute(
            "UPDATE runs SET status = ?1, ended = ?2 WHERE id = ?3",
            params![status, ended, run.0],
        )?;
        expect_run(n, run)
    }

    /// Marks a run as running again (a resumed plan) and clears its end.
    pub fn reopen_run(&self, run: RunId) -> Result<(), StoreError> {
        let n = self.conn.execute(
            "UPDATE runs SET status = 'running', ended = NULL WHERE id = ?1",
            params![run.0],
        )?;
        expect_run(n, run)
    }

    /// Deletes a run and everything stored under it.
    pub fn delete_run(&self, run: RunId) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute("DELETE FROM runs WHERE id = ?1", params![run.0])?;
        expect_run(n, run)
    }

    // ----- reads -----

    /// Every run, oldest first.
    pub fn list_runs(&self) -> Result<Vec<RunRow>, StoreError> {
        let mut labels: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
        for (id, k, v) in
            self.conn
                .query("SELECT run_id, key, value FROM run_labels", &[], |r| {
                    Ok((r.get::<i64>(0)?, r.get::<String>(1)?, r.get::<String>(2)?))
                })?
        {
            labels.entry(id).or_default().insert(k, v);
        }
        let runs = self
            .conn
            .query(&format!("{RUN_COLUMNS} ORDER BY id"), &[], run_row)?;
        Ok(runs
            .into_iter()
            .map(|(mut r, _, _)| {
                r.labels = labels.remove(&r.id.0).unwrap_or_default();
                r
            })
            .collect())
    }

    /// One run with its plan and command line; `None` when there is none.
    pub fn get_run(&self, run: RunId) -> Result<Option<RunDetail>, StoreError> {
        let found = self.conn.query_opt(
            &format!("{RUN_COLUMNS} WHERE id = ?1"),
            params![run.0],
            run_row,
        )?;
        let Some((mut row, plan_json, command_line)) = found else {
            return Ok(None);
        };
        row.labels = self.labels(run)?;
        Ok(Some(RunDetail {
            run: row,
            plan_json,
            command_line: self.shown_command_line(command_line),
        }))
    }

    /// The labels of a run.
    pub fn labels(&self, run: RunId) -> Result<BTreeMap<String, String>, StoreError> {
        Ok(self
            .conn
            .query(
                "SELECT key, value FROM run_labels WHERE run_id = ?1",
                params![run.0],
                |r| Ok((r.get::<String>(0)?, r.get::<String>(1)?)),
            )?
            .into_iter()
            .collect())
    }

    /// The stored host facts of a run.
    pub fn system_facts(&self, run: RunId) -> Result<Option<SystemFacts>, StoreError> {
        self.conn.query_opt(
            "SELECT json FROM system_facts WHERE run_id = ?1",
            params![run.0],
            |r| json_col(r, 0, "system_facts.json"),
        )
    }

    /// The stored target facts of a run, by path.
    pub fn target_facts(&self, run: RunId) -> Result<Vec<TargetFactsRow>, StoreError> {
        self.conn.query(
            "SELECT path, kind, size_bytes, json FROM target_facts WHERE run_id = ?1 ORDER BY path",
            params![run.0],
            |r| {
                Ok(TargetFactsRow {
                    path: r.get(0)?,
                    kind: r.get(1)?,
                    size_bytes: r.get::<Option<i64>>(2)?.map(to_u64),
                    facts: json_col(r, 3, "target_facts.json")?,
                })
            },
        )
    }

    /// The read IOPS a stored run measured at best, with where it was
    /// measured ("run 4 step 2 (randread) of 4k reads"), for a backend's
    /// speed; `None` when no step of the run read.
    pub fn best_read_iops(&self, run: RunId) -> Result<Option<(f64, String)>, StoreError> {
        let steps = self.steps(run)?;
        let best = steps
            .iter()
            .filter_map(|s| {
                let io = s.summary.as_ref()?.io()?;
                (io.read.ops > 0).then_some((s, io.read.iops))
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        Ok(best.map(|(step, iops)| {
            let bs = step
                .params
                .as_ref()
                .map(|p| format!(" of {} reads", p.bs))
                .unwrap_or_default();
            (
                iops,
                format!("run {} step {} ({}){bs}", run.0, step.index, step.name),
            )
        }))
    }

    /// The steps of a run in plan order.
    pub fn steps(&self, run: RunId) -> Result<Vec<StepRow>, StoreError> {
        self.conn.query(
            &format!("{STEP_COLUMNS} WHERE run_id = ?1 ORDER BY step_index"),
            params![run.0],
            step_row,
        )
    }

    /// One step by id.
    pub fn step(&self, step: StepId) -> Result<Option<StepRow>, StoreError> {
        self.conn.query_opt(
            &format!("{STEP_COLUMNS} WHERE id = ?1"),
            params![step.0],
            step_row,
        )
    }

    /// The index of the first step of a run that is neither `ok` nor
    /// `skipped`: where a resumed plan starts. `None` when every stored step
    /// is complete (a runner that stores all steps as `pending` up front gets
    /// "nothing left" from that).
    pub fn first_incomplete_step(&self, run: RunId) -> Result<Option<i64>, StoreError> {
        Ok(self
            .conn
            .query_opt(
                "SELECT MIN(step_index) FROM steps
                 WHERE run_id = ?1 AND status NOT IN ('ok', 'skipped')",
                params![run.0],
                |r| r.get::<Option<i64>>(0),
            )?
            .flatten())
    }

    /// The stored intervals of a step, in order (read, write, total within
    /// an interval).
    pub fn intervals(&self, step: StepId) -> Result<Vec<IntervalRow>, StoreError> {
        self.host_intervals(step, "")
    }

    /// One host's stored intervals of a multi-host step, in order (`host`
    /// empty: the step's own, its totals).
    pub fn host_intervals(&self, step: StepId, host: &str) -> Result<Vec<IntervalRow>, StoreError> {
        self.interval_range(step, host, 0..i64::MAX as u64)
    }

    /// The stored rows of the intervals of `step` whose position is in
    /// `seqs` (`host` empty: the step's own), in order: a page of a long
    /// run, read without reading the rest.
    pub fn interval_range(
        &self,
        step: StepId,
        host: &str,
        seqs: std::ops::Range<u64>,
    ) -> Result<Vec<IntervalRow>, StoreError> {
        self.interval_rows(step, host, seqs, true)
    }

    /// As [`Store::interval_range`] but without each row's histogram
    /// (`lat_hist` is `None`): what a reader of the figures alone (a CSV,
    /// a chart, a table) asks for, since the blobs are most of a row's
    /// bytes and all of its decoding.
    pub fn interval_range_figures(
        &self,
        step: StepId,
        host: &str,
        seqs: std::ops::Range<u64>,
    ) -> Result<Vec<IntervalRow>, StoreError> {
        self.interval_rows(step, host, seqs, false)
    }

    fn interval_rows(
        &self,
        step: StepId,
        host: &str,
        seqs: std::ops::Range<u64>,
        with_hist: bool,
    ) -> Result<Vec<IntervalRow>, StoreError> {
        // Histograms per interval came with schema version 3.
        let lat_hist = if with_hist && self.version >= 3 {
            "lat_hist"
        } else {
            "NULL"
        };
        // Hosts came with version 6; before, every row is the step's own.
        if self.version < 6 && !host.is_empty() {
            return Ok(Vec::new());
        }
        let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        let mut values = vec![
            Value::from(step.0),
            Value::from(clamp(seqs.start)),
            Value::from(clamp(seqs.end)),
        ];
        let host_filter = if self.version >= 6 {
            values.push(Value::from(host));
            "AND host = ?4"
        } else {
            ""
        };
        // Figures only: from their own index on SQLite, not the rows that
        // hold kilobytes of histogram each.
        let (figures_index, since) = crate::schema::FIGURES_INDEX;
        let indexed = if !with_hist && self.version >= since && matches!(self.conn, Conn::Lite(_)) {
            format!("INDEXED BY {figures_index}")
        } else {
            String::new()
        };
        self.conn.query(
            &format!(
                "SELECT seq, t_s, duration_s, warmup, op, ops, bytes, iops, bw_bytes_per_s,
                        lat_min_ns, lat_mean_ns, lat_stddev_ns, lat_max_ns, lat_p50_ns,
                        lat_p90_ns, lat_p99_ns, lat_p99_9_ns, lat_p99_99_ns, errors,
                        cpu_usr_pct, cpu_sys_pct,
                        dev_util_pct, dev_queue_depth, dev_read_await_ns, dev_write_await_ns,
                        {lat_hist}
                 FROM intervals {indexed} WHERE step_id = ?1 AND seq >= ?2 AND seq < ?3 {host_filter}
                 ORDER BY seq, CASE op WHEN 'read' THEN 0 WHEN 'write' THEN 1 ELSE 2 END"
            ),
            &values,
            if with_hist {
                interval_row
            } else {
                interval_row_no_hist
            },
        )
    }

    /// One past the highest interval position stored for `step` (0 when
    /// none): where paging over its intervals ends.
    pub fn interval_end(&self, step: StepId) -> Result<u64, StoreError> {
        // With the host named, the maximum is read off the primary key
        // (step, host, seq) at once; without, every row of the step is
        // looked at (a week's soak: 1.8 million).
        let sql = format!(
            "SELECT MAX(seq) FROM intervals WHERE {}",
            self.own_intervals()
        );
        let max = self
            .conn
            .query_opt(&sql, &[Value::from(step.0)], |r| r.get::<Option<i64>>(0))?;
        Ok(max
            .flatten()
            .map_or(0, |m| u64::try_from(m).unwrap_or(0) + 1))
    }

    /// How many rows the step's own intervals have (read, write, total and
    /// the other kinds of each): the rows of its intervals table.
    pub fn interval_row_count(&self, step: StepId) -> Result<u64, StoreError> {
        let sql = format!(
            "SELECT COUNT(*) FROM intervals WHERE {}",
            self.own_intervals()
        );
        let n = self
            .conn
            .query_opt(&sql, &[Value::from(step.0)], |r| r.get::<i64>(0))?;
        Ok(n.map_or(0, to_u64))
    }

    /// The condition on the rows of step `?1`'s own intervals, its totals
    /// rather than a host's (hosts came with schema version 6; before,
    /// every row is the step's own).
    fn own_intervals(&self) -> &'static str {
        if self.version >= 6 {
            "step_id = ?1 AND host = ''"
        } else {
            "step_id = ?1"
        }
    }

    /// The measured-time histogram of a step; `None` when not stored.
    pub fn histogram(
        &self,
        step: StepId,
        op: Op,
        kind: HistKind,
    ) -> Result<Option<LatencyHistogram>, StoreError> {
        let (op_name, kind_name): (&'static str, &'static str) = (op.into(), kind.into());
        let data = self.conn.query_opt(
            "SELECT data FROM histograms
             WHERE step_id = ?1 AND op = ?2 AND kind = ?3 AND scope = ?4",
            params![step.0, op_name, kind_name, SCOPE_MEASURED],
            |r| r.get::<Vec<u8>>(0),
        )?;
        data.map(|bytes| {
            LatencyHistogram::from_bytes(&bytes).map_err(|e| StoreError::BadHistogram {
                step: step.0,
                op: op.to_string(),
                kind: kind.to_string(),
                why: e.to_string(),
            })
        })
        .transpose()
    }

    /// The analysis results of a run (its own and its steps'), in the order
    /// they were stored.
    pub fn analysis(&self, run: RunId) -> Result<Vec<AnalysisRow>, StoreError> {
        self.conn.query(
            "SELECT id, run_id, step_id, kind, json FROM analysis WHERE run_id = ?1 ORDER BY id",
            params![run.0],
            |r| {
                let kind: String = r.get(3)?;
                let json: String = r.get(4)?;
                let finding =
                    Finding::from_stored(&kind, &json).map_err(|_| StoreError::BadValue {
                        column: "analysis.json",
                        value: json.chars().take(80).collect(),
                    })?;
                Ok(AnalysisRow {
                    id: r.get(0)?,
                    run_id: RunId(r.get(1)?),
                    step_id: r.get::<Option<i64>>(2)?.map(StepId),
                    finding,
                })
            },
        )
    }

    // ----- storage-side figures -----

    /// Stores the storage-side figures of interval `seq` of a step (in one
    /// transaction; a figure stored again replaces the earlier one).
    pub fn add_external(&self, step: StepId, rows: &[ExternalRow]) -> Result<(), StoreError> {
        self.conn.transaction(|| {
            for r in rows {
                self.conn
                    .execute(
                        "INSERT INTO external_series (step_id, seq, source, name, value, error)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                         ON CONFLICT (step_id, seq, source, name) DO UPDATE SET
                             value = excluded.value, error = excluded.error",
                        params![
                            step.0,
                            to_i64(r.seq),
                            &r.source,
                            &r.name,
                            r.value,
                            r.error.as_deref()
                        ],
                    )
                    .map_err(|e| no_step(e, step))?;
            }
            Ok(())
        })
    }

    /// A step's storage-side figures, by interval, then source and name
    /// (none before schema version 10).
    pub fn external(&self, step: StepId) -> Result<Vec<ExternalRow>, StoreError> {
        self.external_range(step, 0..i64::MAX as u64)
    }

    /// A step's storage-side figures of the intervals whose position is in
    /// `seqs` (a page of a long step), in the order of [`Store::external`].
    pub fn external_range(
        &self,
        step: StepId,
        seqs: std::ops::Range<u64>,
    ) -> Result<Vec<ExternalRow>, StoreError> {
        if self.version < 10 {
            return Ok(Vec::new());
        }
        let clamp = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        self.conn.query(
            "SELECT seq, source, name, value, error FROM external_series
             WHERE step_id = ?1 AND seq >= ?2 AND seq < ?3 ORDER BY seq, source, name",
            params![step.0, clamp(seqs.start), clamp(seqs.end)],
            |r| {
                Ok(ExternalRow {
                    seq: to_u64(r.get(0)?),
                    source: r.get(1)?,
                    name: r.get(2)?,
                    value: r.get(3)?,
                    error: r.get(4)?,
                })
            },
        )
    }

    // ----- trace analyses -----

    /// Stores a trace analysis; returns its id.
    pub fn put_trace_analysis(&self, t: &NewTraceAnalysis) -> Result<i64, StoreError> {
        for (k, v) in &t.labels {
            label_ok(k, v)?;
        }
        let labels = serde_json::to_string(&t.labels).map_err(|e| StoreError::BadValue {
            column: "labels_json",
            value: e.to_string(),
        })?;
        self.conn
            .query_opt(
                "INSERT INTO trace_analyses (created, host, tool_version, command_line, file, format, records, labels_json, analysis_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) RETURNING id",
                params![
                    &t.created,
                    &t.host,
                    &t.tool_version,
                    &t.command_line,
                    &t.file,
                    &t.format,
                    i64::try_from(t.records).unwrap_or(i64::MAX),
                    &labels,
                    &t.analysis_json
                ],
                |r| r.get::<i64>(0),
            )?
            .ok_or(StoreError::BadValue {
                column: "trace_analyses.id",
                value: "none returned".into(),
            })
    }

    /// Every stored trace analysis, oldest first (without the analysis).
    pub fn trace_analyses(&self) -> Result<Vec<TraceAnalysisRow>, StoreError> {
        Ok(self
            .conn
            .query(&format!("{TRACE_COLUMNS} ORDER BY id"), &[], trace_row)?
            .into_iter()
            .map(|(mut r, _)| {
                r.command_line = self.shown_command_line(std::mem::take(&mut r.command_line));
                r
            })
            .collect())
    }

    /// One trace analysis and its analysis JSON; `None` when there is none.
    pub fn trace_analysis(
        &self,
        id: i64,
    ) -> Result<Option<(TraceAnalysisRow, String)>, StoreError> {
        Ok(self
            .conn
            .query_opt(
                &format!("{TRACE_COLUMNS} WHERE id = ?1"),
                params![id],
                trace_row,
            )?
            .map(|(mut r, json)| {
                r.command_line = self.shown_command_line(std::mem::take(&mut r.command_line));
                (r, json)
            }))
    }

    fn run_exists(&self, run: RunId) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_opt("SELECT id FROM runs WHERE id = ?1", params![run.0], |_| {
                Ok(())
            })?
            .is_some())
    }
}

const TRACE_COLUMNS: &str = "SELECT id, created, host, tool_version, command_line, file, format, records, labels_json, analysis_json FROM trace_analyses";

fn trace_row(r: &DbRow<'_>) -> Result<(TraceAnalysisRow, String), StoreError> {
    Ok((
        TraceAnalysisRow {
            id: r.get(0)?,
            created: r.get(1)?,
            host: r.get(2)?,
            tool_version: r.get(3)?,
            command_line: r.get(4)?,
            file: r.get(5)?,
            format: r.get(6)?,
            records: r.get::<i64>(7)?.max(0) as u64,
            labels: json_col(r, 8, "trace_analyses.labels_json")?,
        },
        r.get(9)?,
    ))
}

pub(crate) const RUN_COLUMNS: &str =
    "SELECT id, kind, status, started, ended, host, tool_version, plan_json, command_line FROM runs";

/// A row of [`RUN_COLUMNS`]: the run (labels still empty), plan, command line.
pub(crate) fn run_row(r: &DbRow<'_>) -> Result<(RunRow, Option<String>, String), StoreError> {
    Ok((
        RunRow {
            id: RunId(r.get(0)?),
            kind: text_col(r, 1, "runs.kind")?,
            status: text_col(r, 2, "runs.status")?,
            started: r.get(3)?,
            ended: r.get(4)?,
            host: r.get(5)?,
            tool_version: r.get(6)?,
            labels: BTreeMap::new(),
        },
        r.get(7)?,
        r.get(8)?,
    ))
}

const STEP_COLUMNS: &str = "SELECT id, run_id, step_index, name, role, status, params_json,
        summary_json, started, ended FROM steps";

fn step_row(r: &DbRow<'_>) -> Result<StepRow, StoreError> {
    let summary = if r.is_null(7)? {
        None
    } else {
        Some(json_col(r, 7, "steps.summary_json")?)
    };
    // Pending and skipped steps carry no workload (`{}`).
    let params_text: String = r.get(6)?;
    let params = match params_text.trim() {
        "{}" => None,
        // Read as new records are written: a store opened read-only is
        // not migrated, and its older rows may carry the default `bs`
        // where per-direction sizes were given (migration 2).
        text => Some(
            serde_json::from_str::<iorig_result::WorkloadRecord>(text)
                .map_err(|_| StoreError::BadValue {
                    column: "steps.params_json",
                    value: text.chars().take(80).collect(),
                })?
                .with_effective_bs(),
        ),
    };
    Ok(StepRow {
        id: StepId(r.get(0)?),
        run_id: RunId(r.get(1)?),
        index: r.get(2)?,
        name: r.get(3)?,
        role: text_col(r, 4, "steps.role")?,
        status: text_col(r, 5, "steps.status")?,
        params,
        summary,
        started: r.get(8)?,
        ended: r.get(9)?,
    })
}

/// A row of the interval query of [`Store::host_intervals`].
pub(crate) fn interval_row(r: &DbRow<'_>) -> Result<IntervalRow, StoreError> {
    let mut row = interval_row_no_hist(r)?;
    row.lat_hist = r.get(25)?;
    Ok(row)
}

/// Columns 0–24 of an interval row: everything but its histogram (which a
/// query may leave out as a bare `NULL`, typed text by PostgreSQL, so
/// column 25 is not read here).
fn interval_row_no_hist(r: &DbRow<'_>) -> Result<IntervalRow, StoreError> {
    let u = |i: usize| r.get::<i64>(i).map(to_u64);
    let device = match (
        r.get::<Option<f64>>(21)?,
        r.get::<Option<f64>>(22)?,
        r.get::<Option<i64>>(23)?,
        r.get::<Option<i64>>(24)?,
    ) {
        (Some(util_pct), Some(queue_depth), Some(r_ns), Some(w_ns)) => Some(DeviceUsage {
            util_pct,
            queue_depth,
            read_await_ns: to_u64(r_ns),
            write_await_ns: to_u64(w_ns),
        }),
        _ => None,
    };
    Ok(IntervalRow {
        seq: u(0)?,
        t_s: r.get(1)?,
        duration_s: r.get(2)?,
        warmup: r.get(3)?,
        op: text_col(r, 4, "intervals.op")?,
        ops: u(5)?,
        bytes: u(6)?,
        iops: r.get(7)?,
        bw_bytes_per_s: r.get(8)?,
        lat_ns: LatSummary {
            min: u(9)?,
            mean: u(10)?,
            stddev: u(11)?,
            max: u(12)?,
            p50: u(13)?,
            p90: u(14)?,
            p99: u(15)?,
            p99_9: u(16)?,
            p99_99: u(17)?,
        },
        errors: u(18)?,
        cpu_usr_pct: r.get(19)?,
        cpu_sys_pct: r.get(20)?,
        device,
        lat_hist: None,
    })
}

fn insert_interval(
    conn: &Conn,
    step: StepId,
    host: &str,
    row: &IntervalRow,
) -> Result<(), StoreError> {
    let l = &row.lat_ns;
    let d = row.device.as_ref();
    let op: &'static str = row.op.into();
    conn.execute(
        "INSERT INTO intervals (step_id, seq, t_s, duration_s, warmup, op, ops, bytes, iops,
             bw_bytes_per_s, lat_min_ns, lat_mean_ns, lat_stddev_ns, lat_max_ns, lat_p50_ns,
             lat_p90_ns, lat_p99_ns, lat_p99_9_ns, lat_p99_99_ns, errors, cpu_usr_pct,
             cpu_sys_pct, dev_util_pct, dev_queue_depth, dev_read_await_ns, dev_write_await_ns,
             lat_hist, host)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)",
        params![
            step.0,
            to_i64(row.seq),
            row.t_s,
            row.duration_s,
            row.warmup,
            op,
            to_i64(row.ops),
            to_i64(row.bytes),
            row.iops,
            row.bw_bytes_per_s,
            to_i64(l.min),
            to_i64(l.mean),
            to_i64(l.stddev),
            to_i64(l.max),
            to_i64(l.p50),
            to_i64(l.p90),
            to_i64(l.p99),
            to_i64(l.p99_9),
            to_i64(l.p99_99),
            to_i64(row.errors),
            row.cpu_usr_pct,
            row.cpu_sys_pct,
            d.map(|d| d.util_pct),
            d.map(|d| d.queue_depth),
            d.map(|d| to_i64(d.read_await_ns)),
            d.map(|d| to_i64(d.write_await_ns)),
            &row.lat_hist,
            host,
        ],
    )?;
    Ok(())
}

/// A new run's uid: 128 random bits in hex, what `runs push` knows a run
/// by in another store.
fn new_uid() -> Result<String, StoreError> {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| StoreError::BadValue {
            column: "runs.uid",
            value: format!("no random bytes from /dev/urandom: {e}"),
        })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Database integers are signed 64-bit; counts beyond 2^63 (never reached
/// by a real run) saturate instead of wrapping negative.
pub(crate) fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The inverse of [`to_i64`]; a negative value (only from a hand-edited
/// database) reads as 0.
fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// A JSON column read into its type.
fn json_col<T: serde::de::DeserializeOwned>(
    r: &DbRow<'_>,
    idx: usize,
    column: &'static str,
) -> Result<T, StoreError> {
    let text: String = r.get(idx)?;
    serde_json::from_str(&text).map_err(|_| StoreError::BadValue {
        column,
        value: text.chars().take(80).collect(),
    })
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::Json)
}

/// A TEXT column holding one of a closed set of names. The schema CHECKs
/// the same sets, so a value that does not parse is a damaged or foreign
/// row.
fn text_col<T: FromStr>(r: &DbRow<'_>, idx: usize, column: &'static str) -> Result<T, StoreError> {
    let text: String = r.get(idx)?;
    text.parse().map_err(|_| StoreError::BadValue {
        column,
        value: text,
    })
}

/// A foreign key failure of a write under `run` means the run is missing.
fn no_run(e: StoreError, run: RunId) -> StoreError {
    if e.is_foreign_key_violation() {
        StoreError::NoSuchRun(run.0)
    } else {
        e
    }
}

/// A foreign key failure of a write under `step` means the step is missing.
fn no_step(e: StoreError, step: StepId) -> StoreError {
    if e.is_foreign_key_violation() {
        StoreError::NoSuchStep(step.0)
    } else {
        e
    }
}

fn expect_run(changed: u64, run: RunId) -> Result<(), StoreError> {
    if changed == 0 {
        Err(StoreError::NoSuchRun(run.0))
    } else {
        Ok(())
    }
}

fn expect_step(changed: u64, step: StepId) -> Result<(), StoreError> {
    if changed == 0 {
        Err(StoreError::NoSuchStep(step.0))
    } else {
        Ok(())
    }
}

/// A label as the store takes it, or why not (the key shortened for the
/// message).
fn label_ok(key: &str, value: &str) -> Result<(), StoreError> {
    crate::check_label(key, value).map_err(|why| StoreError::BadLabel {
        key: iorig_spec::shown_label(key, 40),
        why,
    })
}
