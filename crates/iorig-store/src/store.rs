//! The [`Store`]: one SQLite connection and the reads and writes of results.

use crate::schema;
use crate::types::{
    AnalysisRow, HistKind, IntervalRow, NewRun, NewStep, NewTraceAnalysis, Op, RunDetail, RunId,
    RunRow, StepId, StepRow, StepStatus, TargetFactsRow, TraceAnalysisRow,
};
use crate::StoreError;
use iorig_result::{
    Finding, HostResult, HostStatus, JobResult, RunStatus, StepSummary, TargetKind,
};
use iorig_stats::sampler::system::{SystemFacts, TargetFacts};
use iorig_stats::{DeviceUsage, LatSummary, LatencyHistogram};
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSqlOutput, Type, ValueRef};
use rusqlite::{params, params_from_iter, Connection, OptionalExtension, Row, ToSql};
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
    conn: Connection,
    /// The file's schema version. A store opened read-only is not migrated,
    /// so reads leave out what an older version lacks.
    version: i64,
}

impl Store {
    /// Opens the store at `path`, creating the file if missing and bringing
    /// its schema up to date.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        Store::with(schema::open(path)?)
    }

    /// Checks, writing nothing, that `path` could be opened as a store (a
    /// regular file or a new path; an existing file must be iorig's).
    pub fn check(path: &Path) -> Result<(), StoreError> {
        schema::check(path)
    }

    /// Opens an existing store for reading only (`runs list`, `report`,
    /// `export`, `compare`): a missing file is an error, nothing is created,
    /// migrated or written, and another program's database is refused.
    pub fn open_read_only(path: &Path) -> Result<Store, StoreError> {
        Store::with(schema::open_read_only(path)?)
    }

    /// A store that lives in memory only, for tests and dry runs.
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory().map_err(|source| StoreError::Open {
            path: ":memory:".to_owned(),
            source,
        })?;
        Store::with(schema::prepare(conn, ":memory:")?)
    }

    fn with(conn: Connection) -> Result<Store, StoreError> {
        let version = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        Ok(Store { conn, version })
    }

    /// The schema version of the open database.
    pub fn schema_version(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    /// SQLite's own check of the file; `"ok"` when sound, else its findings,
    /// one per line.
    pub fn integrity_check(&self) -> Result<String, StoreError> {
        let mut stmt = self.conn.prepare("PRAGMA integrity_check")?;
        let lines = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(lines.join("\n"))
    }

    // ----- writes -----

    /// Stores a new run with status `running` and its labels.
    pub fn create_run(&self, run: &NewRun) -> Result<RunId, StoreError> {
        for (k, v) in &run.labels {
            label_ok(k, v)?;
        }
        let tx = self.conn.unchecked_transaction()?;
        tx.execute(
            "INSERT INTO runs (kind, plan_json, status, started, host, tool_version, command_line)
             VALUES (?1, ?2, 'running', ?3, ?4, ?5, ?6)",
            params![
                SqlText(run.kind),
                run.plan_json,
                run.started,
                run.host,
                run.tool_version,
                run.command_line
            ],
        )?;
        let id = tx.last_insert_rowid();
        {
            let mut stmt =
                tx.prepare("INSERT INTO run_labels (run_id, key, value) VALUES (?1, ?2, ?3)")?;
            for (k, v) in &run.labels {
                stmt.execute(params![id, k, v])?;
            }
        }
        tx.commit()?;
        Ok(RunId(id))
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

    /// Stores the host's facts (replacing earlier ones of the run).
    pub fn record_system_facts(&self, run: RunId, facts: &SystemFacts) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO system_facts (run_id, json) VALUES (?1, ?2)
                 ON CONFLICT (run_id) DO UPDATE SET json = excluded.json",
                params![run.0, to_json(facts)?],
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
        self.conn
            .execute(
                "INSERT INTO target_facts (run_id, path, kind, size_bytes, json)
                 VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (run_id, path) DO UPDATE SET
                     kind = excluded.kind, size_bytes = excluded.size_bytes, json = excluded.json",
                params![run.0, path, kind, size_bytes.map(to_i64), to_json(facts)?],
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
        let id = self
            .conn
            .query_row(
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
                    step.role.to_string(),
                    params_json,
                    p.map(|p| p.bs_label()),
                    p.and_then(|p| p.single_bs_bytes()).map(to_i64),
                    p.map(|p| p.read_pct),
                    p.map(|p| p.random_pct),
                    p.map(|p| i64::from(p.qd)),
                    p.map(|p| i64::from(p.threads)),
                    p.and_then(|p| p.rate_iops),
                ],
                |r| r.get(0),
            )
            .map_err(|e| no_run(e, run))?;
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
        let n = self.conn.execute(
            "UPDATE steps SET status = ?1, started = COALESCE(?2, started),
                              ended = COALESCE(?3, ended)
             WHERE id = ?4",
            params![SqlText(status), started, ended, step.0],
        )?;
        expect_step(n, step)
    }

    /// Clears what an interrupted attempt of a step left (intervals,
    /// histograms, step analysis, summary, times) and sets it `pending`, so
    /// the step can be run again from its start.
    pub fn reset_step(&self, step: StepId) -> Result<(), StoreError> {
        let tx = self.conn.unchecked_transaction()?;
        tx.execute("DELETE FROM intervals WHERE step_id = ?1", [step.0])?;
        tx.execute("DELETE FROM histograms WHERE step_id = ?1", [step.0])?;
        tx.execute("DELETE FROM analysis WHERE step_id = ?1", [step.0])?;
        tx.execute("DELETE FROM step_hosts WHERE step_id = ?1", [step.0])?;
        let n = tx.execute(
            "UPDATE steps SET status = 'pending', started = NULL, ended = NULL,
                              summary_json = NULL
             WHERE id = ?1",
            [step.0],
        )?;
        expect_step(n, step)?;
        tx.commit()?;
        Ok(())
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
        let tx = self.conn.unchecked_transaction()?;
        for row in rows {
            insert_interval(&tx, step, host, row).map_err(|e| no_step(e, step))?;
        }
        tx.commit()?;
        Ok(())
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
        self.conn
            .execute(
                "INSERT INTO step_hosts (step_id, host, position, status, clock_offset_ns, start_skew_ns, result_json)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (step_id, host) DO UPDATE SET position = excluded.position,
                   status = excluded.status, clock_offset_ns = excluded.clock_offset_ns,
                   start_skew_ns = excluded.start_skew_ns, result_json = excluded.result_json",
                params![
                    step.0,
                    r.name,
                    position as i64,
                    match r.status {
                        HostStatus::Ok => "ok",
                        HostStatus::Lost => "lost",
                    },
                    r.clock_offset_ns,
                    r.start_skew_ns,
                    to_json(&r)?
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
        let mut stmt = self
            .conn
            .prepare("SELECT result_json FROM step_hosts WHERE step_id = ?1 ORDER BY position")?;
        let rows = stmt.query_map([step.0], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for text in rows {
            let text = text?;
            out.push(
                serde_json::from_str(&text).map_err(|_| StoreError::BadValue {
                    column: "step_hosts.result_json",
                    value: text.chars().take(80).collect(),
                })?,
            );
        }
        Ok(out)
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
        self.conn
            .execute(
                "INSERT INTO step_jobs (step_id, name, position, result_json)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (step_id, name) DO UPDATE SET position = excluded.position,
                   result_json = excluded.result_json",
                params![step.0, r.name, position as i64, to_json(&r)?],
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
        let mut stmt = self
            .conn
            .prepare("SELECT result_json FROM step_jobs WHERE step_id = ?1 ORDER BY position")?;
        let rows = stmt.query_map([step.0], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for text in rows {
            let text = text?;
            out.push(
                serde_json::from_str(&text).map_err(|_| StoreError::BadValue {
                    column: "step_jobs.result_json",
                    value: text.chars().take(80).collect(),
                })?,
            );
        }
        Ok(out)
    }

    /// Stores (or replaces) the measured-time histogram of a step.
    pub fn put_histogram(
        &self,
        step: StepId,
        op: Op,
        kind: HistKind,
        hist: &LatencyHistogram,
    ) -> Result<(), StoreError> {
        self.conn
            .execute(
                "INSERT INTO histograms (step_id, op, kind, scope, data) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (step_id, op, kind, scope) DO UPDATE SET data = excluded.data",
                params![step.0, SqlText(op), SqlText(kind), SCOPE_MEASURED, hist.to_bytes()],
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
        let n = self.conn.execute(
            "UPDATE steps SET status = ?1, summary_json = ?2, ended = ?3 WHERE id = ?4",
            params![SqlText(status), summary, ended, step.0],
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
            .execute(
                "INSERT INTO analysis (run_id, step_id, kind, json) VALUES (?1, ?2, ?3, ?4)",
                params![run.0, step.map(|s| s.0), kind, json],
            )
            .map_err(|e| match step {
                // The foreign key failure does not say which parent is
                // missing; name the run when it is the one.
                Some(s) if self.run_exists(run).unwrap_or(false) => no_step(e, s),
                _ => no_run(e, run),
            })?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Ends a run.
    pub fn finish_run(&self, run: RunId, status: RunStatus, ended: &str) -> Result<(), StoreError> {
        let n = self.conn.execute(
            "UPDATE runs SET status = ?1, ended = ?2 WHERE id = ?3",
            params![SqlText(status), ended, run.0],
        )?;
        expect_run(n, run)
    }

    /// Marks a run as running again (a resumed plan) and clears its end.
    pub fn reopen_run(&self, run: RunId) -> Result<(), StoreError> {
        let n = self.conn.execute(
            "UPDATE runs SET status = 'running', ended = NULL WHERE id = ?1",
            [run.0],
        )?;
        expect_run(n, run)
    }

    /// Deletes a run and everything stored under it.
    pub fn delete_run(&self, run: RunId) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute("DELETE FROM runs WHERE id = ?1", [run.0])?;
        expect_run(n, run)
    }

    // ----- reads -----

    /// Every run, oldest first.
    pub fn list_runs(&self) -> Result<Vec<RunRow>, StoreError> {
        let mut labels: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
        {
            let mut stmt = self
                .conn
                .prepare("SELECT run_id, key, value FROM run_labels")?;
            let rows = stmt.query_map([], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get(2)?))
            })?;
            for row in rows {
                let (id, k, v) = row?;
                labels.entry(id).or_default().insert(k, v);
            }
        }
        let mut stmt = self.conn.prepare(&format!("{RUN_COLUMNS} ORDER BY id"))?;
        let runs = stmt
            .query_map([], run_row)?
            .collect::<Result<Vec<_>, _>>()?;
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
        let found = self
            .conn
            .query_row(&format!("{RUN_COLUMNS} WHERE id = ?1"), [run.0], run_row)
            .optional()?;
        let Some((mut row, plan_json, command_line)) = found else {
            return Ok(None);
        };
        row.labels = self.labels(run)?;
        Ok(Some(RunDetail {
            run: row,
            plan_json,
            command_line,
        }))
    }

    /// The labels of a run.
    pub fn labels(&self, run: RunId) -> Result<BTreeMap<String, String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT key, value FROM run_labels WHERE run_id = ?1")?;
        let rows = stmt.query_map([run.0], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<Result<BTreeMap<_, _>, _>>()?)
    }

    /// The stored host facts of a run.
    pub fn system_facts(&self, run: RunId) -> Result<Option<SystemFacts>, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT json FROM system_facts WHERE run_id = ?1",
                [run.0],
                |r| json_col(r, 0),
            )
            .optional()?)
    }

    /// The stored target facts of a run, by path.
    pub fn target_facts(&self, run: RunId) -> Result<Vec<TargetFactsRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT path, kind, size_bytes, json FROM target_facts WHERE run_id = ?1 ORDER BY path",
        )?;
        let rows = stmt.query_map([run.0], |r| {
            Ok(TargetFactsRow {
                path: r.get(0)?,
                kind: r.get(1)?,
                size_bytes: r.get::<_, Option<i64>>(2)?.map(to_u64),
                facts: json_col(r, 3)?,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The steps of a run in plan order.
    pub fn steps(&self, run: RunId) -> Result<Vec<StepRow>, StoreError> {
        let mut stmt = self.conn.prepare(&format!(
            "{STEP_COLUMNS} WHERE run_id = ?1 ORDER BY step_index"
        ))?;
        let rows = stmt.query_map([run.0], step_row)?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// One step by id.
    pub fn step(&self, step: StepId) -> Result<Option<StepRow>, StoreError> {
        Ok(self
            .conn
            .query_row(&format!("{STEP_COLUMNS} WHERE id = ?1"), [step.0], step_row)
            .optional()?)
    }

    /// The index of the first step of a run that is neither `ok` nor
    /// `skipped`: where a resumed plan starts. `None` when every stored step
    /// is complete (a runner that stores all steps as `pending` up front gets
    /// "nothing left" from that).
    pub fn first_incomplete_step(&self, run: RunId) -> Result<Option<i64>, StoreError> {
        Ok(self.conn.query_row(
            "SELECT MIN(step_index) FROM steps
             WHERE run_id = ?1 AND status NOT IN ('ok', 'skipped')",
            [run.0],
            |r| r.get(0),
        )?)
    }

    /// The stored intervals of a step, in order (read, write, total within
    /// an interval).
    pub fn intervals(&self, step: StepId) -> Result<Vec<IntervalRow>, StoreError> {
        self.host_intervals(step, "")
    }

    /// One host's stored intervals of a multi-host step, in order (`host`
    /// empty: the step's own, its totals).
    pub fn host_intervals(&self, step: StepId, host: &str) -> Result<Vec<IntervalRow>, StoreError> {
        // Histograms per interval came with schema version 3.
        let lat_hist = if self.version >= 3 {
            "lat_hist"
        } else {
            "NULL"
        };
        // Hosts came with version 6; before, every row is the step's own.
        if self.version < 6 && !host.is_empty() {
            return Ok(Vec::new());
        }
        let host_filter = if self.version >= 6 {
            "AND host = ?2"
        } else {
            ""
        };
        let mut stmt = self.conn.prepare(&format!(
            "SELECT seq, t_s, duration_s, warmup, op, ops, bytes, iops, bw_bytes_per_s,
                    lat_min_ns, lat_mean_ns, lat_stddev_ns, lat_max_ns, lat_p50_ns,
                    lat_p90_ns, lat_p99_ns, lat_p99_9_ns, lat_p99_99_ns, errors,
                    cpu_usr_pct, cpu_sys_pct,
                    dev_util_pct, dev_queue_depth, dev_read_await_ns, dev_write_await_ns,
                    {lat_hist}
             FROM intervals WHERE step_id = ?1 {host_filter}
             ORDER BY seq, CASE op WHEN 'read' THEN 0 WHEN 'write' THEN 1 ELSE 2 END"
        ))?;
        let rows = stmt.query_map(
            params_from_iter(host_params(step, host, self.version)),
            |r| {
                let u = |i: usize| r.get::<_, i64>(i).map(to_u64);
                let device = match (
                    r.get::<_, Option<f64>>(21)?,
                    r.get::<_, Option<f64>>(22)?,
                    r.get::<_, Option<i64>>(23)?,
                    r.get::<_, Option<i64>>(24)?,
                ) {
                    (Some(util_pct), Some(queue_depth), Some(r_ns), Some(w_ns)) => {
                        Some(DeviceUsage {
                            util_pct,
                            queue_depth,
                            read_await_ns: to_u64(r_ns),
                            write_await_ns: to_u64(w_ns),
                        })
                    }
                    _ => None,
                };
                Ok(IntervalRow {
                    seq: u(0)?,
                    t_s: r.get(1)?,
                    duration_s: r.get(2)?,
                    warmup: r.get(3)?,
                    op: text_col(r, 4)?,
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
                    lat_hist: r.get(25)?,
                })
            },
        )?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
    }

    /// The measured-time histogram of a step; `None` when not stored.
    pub fn histogram(
        &self,
        step: StepId,
        op: Op,
        kind: HistKind,
    ) -> Result<Option<LatencyHistogram>, StoreError> {
        let data: Option<Vec<u8>> = self
            .conn
            .query_row(
                "SELECT data FROM histograms
                 WHERE step_id = ?1 AND op = ?2 AND kind = ?3 AND scope = ?4",
                params![step.0, SqlText(op), SqlText(kind), SCOPE_MEASURED],
                |r| r.get(0),
            )
            .optional()?;
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
        let mut stmt = self.conn.prepare(
            "SELECT id, run_id, step_id, kind, json FROM analysis WHERE run_id = ?1 ORDER BY id",
        )?;
        let rows = stmt.query_map([run.0], |r| {
            let kind: String = r.get(3)?;
            let json: String = r.get(4)?;
            let finding = Finding::from_stored(&kind, &json).map_err(|e| {
                rusqlite::Error::FromSqlConversionFailure(4, Type::Text, Box::new(e))
            })?;
            Ok(AnalysisRow {
                id: r.get(0)?,
                run_id: RunId(r.get(1)?),
                step_id: r.get::<_, Option<i64>>(2)?.map(StepId),
                finding,
            })
        })?;
        Ok(rows.collect::<Result<Vec<_>, _>>()?)
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
        self.conn.execute(
            "INSERT INTO trace_analyses (created, host, tool_version, command_line, file, format, records, labels_json, analysis_json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            params![
                t.created,
                t.host,
                t.tool_version,
                t.command_line,
                t.file,
                t.format,
                i64::try_from(t.records).unwrap_or(i64::MAX),
                labels,
                t.analysis_json
            ],
        )?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Every stored trace analysis, oldest first (without the analysis).
    pub fn trace_analyses(&self) -> Result<Vec<TraceAnalysisRow>, StoreError> {
        let mut stmt = self.conn.prepare(&format!("{TRACE_COLUMNS} ORDER BY id"))?;
        let rows = stmt.query_map([], trace_row)?;
        Ok(rows
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .map(|(r, _)| r)
            .collect())
    }

    /// One trace analysis and its analysis JSON; `None` when there is none.
    pub fn trace_analysis(
        &self,
        id: i64,
    ) -> Result<Option<(TraceAnalysisRow, String)>, StoreError> {
        Ok(self
            .conn
            .query_row(&format!("{TRACE_COLUMNS} WHERE id = ?1"), [id], trace_row)
            .optional()?)
    }

    fn run_exists(&self, run: RunId) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT 1 FROM runs WHERE id = ?1", [run.0], |_| Ok(()))
            .optional()?
            .is_some())
    }
}

const TRACE_COLUMNS: &str = "SELECT id, created, host, tool_version, command_line, file, format, records, labels_json, analysis_json FROM trace_analyses";

fn trace_row(r: &Row<'_>) -> rusqlite::Result<(TraceAnalysisRow, String)> {
    let labels: String = r.get(8)?;
    let labels = serde_json::from_str(&labels)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(8, Type::Text, Box::new(e)))?;
    Ok((
        TraceAnalysisRow {
            id: r.get(0)?,
            created: r.get(1)?,
            host: r.get(2)?,
            tool_version: r.get(3)?,
            command_line: r.get(4)?,
            file: r.get(5)?,
            format: r.get(6)?,
            records: r.get::<_, i64>(7)?.max(0) as u64,
            labels,
        },
        r.get(9)?,
    ))
}

const RUN_COLUMNS: &str =
    "SELECT id, kind, status, started, ended, host, tool_version, plan_json, command_line FROM runs";

/// A row of [`RUN_COLUMNS`]: the run (labels still empty), plan, command line.
fn run_row(r: &Row<'_>) -> rusqlite::Result<(RunRow, Option<String>, String)> {
    Ok((
        RunRow {
            id: RunId(r.get(0)?),
            kind: text_col(r, 1)?,
            status: text_col(r, 2)?,
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

fn step_row(r: &Row<'_>) -> rusqlite::Result<StepRow> {
    let summary = match r.get_ref(7)? {
        ValueRef::Null => None,
        _ => Some(json_col(r, 7)?),
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
                .map_err(|e| rusqlite::Error::FromSqlConversionFailure(6, Type::Text, Box::new(e)))?
                .with_effective_bs(),
        ),
    };
    Ok(StepRow {
        id: StepId(r.get(0)?),
        run_id: RunId(r.get(1)?),
        index: r.get(2)?,
        name: r.get(3)?,
        role: text_col(r, 4)?,
        status: text_col(r, 5)?,
        params,
        summary,
        started: r.get(8)?,
        ended: r.get(9)?,
    })
}

/// The parameters of an interval query: the step, and the host from
/// version 6 on.
fn host_params(step: StepId, host: &str, version: i64) -> Vec<rusqlite::types::Value> {
    let mut p = vec![rusqlite::types::Value::Integer(step.0)];
    if version >= 6 {
        p.push(rusqlite::types::Value::Text(host.to_string()));
    }
    p
}

fn insert_interval(
    conn: &Connection,
    step: StepId,
    host: &str,
    row: &IntervalRow,
) -> rusqlite::Result<()> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO intervals (step_id, seq, t_s, duration_s, warmup, op, ops, bytes, iops,
             bw_bytes_per_s, lat_min_ns, lat_mean_ns, lat_stddev_ns, lat_max_ns, lat_p50_ns,
             lat_p90_ns, lat_p99_ns, lat_p99_9_ns, lat_p99_99_ns, errors, cpu_usr_pct,
             cpu_sys_pct, dev_util_pct, dev_queue_depth, dev_read_await_ns, dev_write_await_ns,
             lat_hist, host)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28)",
    )?;
    let l = &row.lat_ns;
    let d = row.device.as_ref();
    stmt.execute(params![
        step.0,
        to_i64(row.seq),
        row.t_s,
        row.duration_s,
        row.warmup,
        SqlText(row.op),
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
        row.lat_hist,
        host,
    ])?;
    Ok(())
}

/// SQLite integers are signed 64-bit; counts beyond 2^63 (never reached by a
/// real run) saturate instead of wrapping negative.
fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The inverse of [`to_i64`]; a negative value (only from a hand-edited
/// database) reads as 0.
fn to_u64(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// A JSON column read into its type.
fn json_col<T: serde::de::DeserializeOwned>(r: &Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let text: String = r.get(idx)?;
    serde_json::from_str(&text)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, Box::new(e)))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(StoreError::Json)
}

/// A TEXT column holding one of a closed set of names.
fn text_col<T: FromStr>(r: &Row<'_>, idx: usize) -> rusqlite::Result<T> {
    Ok(r.get::<_, SqlText<T>>(idx)?.0)
}

fn is_foreign_key_error(e: &rusqlite::Error) -> bool {
    matches!(
        e,
        rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY
    )
}

/// A foreign key failure of a write under `run` means the run is missing.
fn no_run(e: rusqlite::Error, run: RunId) -> StoreError {
    if is_foreign_key_error(&e) {
        StoreError::NoSuchRun(run.0)
    } else {
        StoreError::Sqlite(e)
    }
}

/// A foreign key failure of a write under `step` means the step is missing.
fn no_step(e: rusqlite::Error, step: StepId) -> StoreError {
    if is_foreign_key_error(&e) {
        StoreError::NoSuchStep(step.0)
    } else {
        StoreError::Sqlite(e)
    }
}

fn expect_run(changed: usize, run: RunId) -> Result<(), StoreError> {
    if changed == 0 {
        Err(StoreError::NoSuchRun(run.0))
    } else {
        Ok(())
    }
}

fn expect_step(changed: usize, step: StepId) -> Result<(), StoreError> {
    if changed == 0 {
        Err(StoreError::NoSuchStep(step.0))
    } else {
        Ok(())
    }
}

/// A closed-set name (status, kind, op, ...) as a TEXT column. The schema
/// CHECKs the same sets, so a value that does not parse is a damaged or
/// foreign row.
struct SqlText<T>(T);

impl<T: Copy + Into<&'static str>> ToSql for SqlText<T> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        let text: &'static str = self.0.into();
        Ok(ToSqlOutput::from(text))
    }
}

impl<T: FromStr> FromSql for SqlText<T> {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let text = value.as_str()?;
        text.parse().map(SqlText).map_err(|_| {
            FromSqlError::Other(Box::new(StoreError::BadValue {
                column: "a name column",
                value: text.to_owned(),
            }))
        })
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
