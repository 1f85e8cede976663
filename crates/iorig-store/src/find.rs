//! Finding runs: the runs page and `/api/runs` of `iorig serve` filter by
//! label, status, kind, target and start time, newest first, a page at a
//! time, without reading every run.

use crate::db::Value;
use crate::{RunId, RunKind, RunRow, RunStatus, Store, StoreError};
use std::collections::BTreeMap;

/// Which runs, and which page of them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunFilter {
    /// Each `(key, value)` must be a label of the run; a `None` value asks
    /// only that the key be there.
    pub labels: Vec<(String, Option<String>)>,
    pub status: Option<RunStatus>,
    pub kind: Option<RunKind>,
    /// Part of the path of one of the run's targets.
    pub target: Option<String>,
    /// Runs started at or after this (RFC 3339, or any prefix of it such as
    /// a date).
    pub since: Option<String>,
    /// Runs started at or before this (a prefix: `2026-11-25` takes the
    /// whole day).
    pub until: Option<String>,
    /// At most this many runs (newest first) after skipping `offset`.
    pub limit: u64,
    pub offset: u64,
}

impl Store {
    /// The runs `filter` asks for, newest first, with their labels, and
    /// how many runs match in all.
    pub fn find_runs(&self, filter: &RunFilter) -> Result<(Vec<RunRow>, u64), StoreError> {
        // Times are compared as text, byte by byte: RFC 3339 in UTC sorts
        // so. PostgreSQL would otherwise use the database's collation.
        let collate = if self.conn.is_postgres() {
            " COLLATE \"C\""
        } else {
            ""
        };
        let mut clauses: Vec<String> = Vec::new();
        let mut texts: Vec<String> = Vec::new();
        let next = |clauses: &mut Vec<String>, texts: &mut Vec<String>, sql: &str, v: String| {
            texts.push(v);
            clauses.push(sql.replace('#', &format!("?{}", texts.len())));
        };
        for (k, v) in &filter.labels {
            match v {
                Some(v) => {
                    texts.push(k.clone());
                    let k_at = texts.len();
                    next(
                        &mut clauses,
                        &mut texts,
                        &format!(
                            "EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = runs.id AND l.key = ?{k_at} AND l.value = #)"
                        ),
                        v.clone(),
                    );
                }
                None => next(
                    &mut clauses,
                    &mut texts,
                    "EXISTS (SELECT 1 FROM run_labels l WHERE l.run_id = runs.id AND l.key = #)",
                    k.clone(),
                ),
            }
        }
        if let Some(s) = filter.status {
            let s: &'static str = s.into();
            next(&mut clauses, &mut texts, "status = #", s.to_owned());
        }
        if let Some(k) = filter.kind {
            let k: &'static str = k.into();
            next(&mut clauses, &mut texts, "kind = #", k.to_owned());
        }
        if let Some(t) = &filter.target {
            let pattern = format!("%{}%", like_escaped(t));
            next(
                &mut clauses,
                &mut texts,
                "EXISTS (SELECT 1 FROM target_facts t WHERE t.run_id = runs.id AND t.path LIKE # ESCAPE '\\')",
                pattern,
            );
        }
        if let Some(s) = &filter.since {
            next(
                &mut clauses,
                &mut texts,
                &format!("started{collate} >= #"),
                s.clone(),
            );
        }
        if let Some(u) = &filter.until {
            // '~' sorts after every character of an RFC 3339 time, so a
            // prefix takes every time that starts with it.
            next(
                &mut clauses,
                &mut texts,
                &format!("started{collate} <= #"),
                format!("{u}~"),
            );
        }
        let filter_sql = if clauses.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", clauses.join(" AND "))
        };
        let mut values: Vec<Value<'_>> = texts.iter().map(Value::from).collect();
        let total = self
            .conn
            .query_opt(
                &format!("SELECT COUNT(*) FROM runs{filter_sql}"),
                &values,
                |r| r.get::<i64>(0),
            )?
            .unwrap_or(0);
        let n = values.len();
        values.push(Value::from(i64::try_from(filter.limit).unwrap_or(i64::MAX)));
        values.push(Value::from(
            i64::try_from(filter.offset).unwrap_or(i64::MAX),
        ));
        let runs = self.conn.query(
            &format!(
                "{} {filter_sql} ORDER BY id DESC LIMIT ?{} OFFSET ?{}",
                crate::store::RUN_COLUMNS,
                n + 1,
                n + 2
            ),
            &values,
            crate::store::run_row,
        )?;
        let mut rows: Vec<RunRow> = runs.into_iter().map(|(r, _, _)| r).collect();
        if !rows.is_empty() {
            // Ids are integers from the store: safe to write into the SQL.
            let ids: Vec<String> = rows.iter().map(|r| r.id.0.to_string()).collect();
            let mut labels: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
            for (id, k, v) in self.conn.query(
                &format!(
                    "SELECT run_id, key, value FROM run_labels WHERE run_id IN ({})",
                    ids.join(", ")
                ),
                &[],
                |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?, r.get::<String>(2)?)),
            )? {
                labels.entry(id).or_default().insert(k, v);
            }
            for r in &mut rows {
                r.labels = labels.remove(&r.id.0).unwrap_or_default();
            }
        }
        Ok((rows, u64::try_from(total).unwrap_or(0)))
    }

    /// The last stored total row of each running step of a run after
    /// `(after_step, after_seq)` (step index, interval seq), in order, at
    /// most `limit`: what a live view has not shown yet.
    pub fn intervals_after(
        &self,
        run: RunId,
        after_step: i64,
        after_seq: i64,
        limit: u64,
    ) -> Result<Vec<(i64, crate::IntervalRow)>, StoreError> {
        self.total_rows(run, after_step, after_seq, limit, "ASC")
    }

    /// [`Store::intervals_after`] of every host of a multi-host run (each
    /// host's totals, in the run's order): (step index, host, row).
    pub fn host_intervals_after(
        &self,
        run: RunId,
        after_step: i64,
        after_seq: i64,
        limit: u64,
    ) -> Result<Vec<(i64, String, crate::IntervalRow)>, StoreError> {
        self.conn.query(
            &format!(
                "SELECT {INTERVAL_COLUMNS}, NULL, s.step_index, i.host
                 FROM intervals i JOIN steps s ON s.id = i.step_id
                 WHERE s.run_id = ?1 AND i.op = 'total' AND i.host != ''
                   AND (s.step_index > ?2 OR (s.step_index = ?2 AND i.seq > ?3))
                 ORDER BY s.step_index, i.seq, i.host LIMIT ?4"
            ),
            crate::db::params![
                run.0,
                after_step,
                after_seq,
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            |r| {
                Ok((
                    r.get::<i64>(26)?,
                    r.get::<String>(27)?,
                    crate::store::interval_row(r)?,
                ))
            },
        )
    }

    /// The last stored total row of a run (its step's index with it).
    pub fn last_interval(
        &self,
        run: RunId,
    ) -> Result<Option<(i64, crate::IntervalRow)>, StoreError> {
        Ok(self.total_rows(run, -1, -1, 1, "DESC")?.pop())
    }

    fn total_rows(
        &self,
        run: RunId,
        after_step: i64,
        after_seq: i64,
        limit: u64,
        order: &str,
    ) -> Result<Vec<(i64, crate::IntervalRow)>, StoreError> {
        let lat_hist = "NULL";
        self.conn.query(
            &format!(
                "SELECT {INTERVAL_COLUMNS}, {lat_hist}, s.step_index
                 FROM intervals i JOIN steps s ON s.id = i.step_id
                 WHERE s.run_id = ?1 AND i.op = 'total' AND i.host = ''
                   AND (s.step_index > ?2 OR (s.step_index = ?2 AND i.seq > ?3))
                 ORDER BY s.step_index {order}, i.seq {order} LIMIT ?4"
            ),
            crate::db::params![
                run.0,
                after_step,
                after_seq,
                i64::try_from(limit).unwrap_or(i64::MAX)
            ],
            |r| Ok((r.get::<i64>(26)?, crate::store::interval_row(r)?)),
        )
    }
}

/// The columns [`crate::store::interval_row`] reads, in its order (the
/// histogram column follows them).
const INTERVAL_COLUMNS: &str = "i.seq, i.t_s, i.duration_s, i.warmup, i.op, i.ops, i.bytes, i.iops, i.bw_bytes_per_s,
                        i.lat_min_ns, i.lat_mean_ns, i.lat_stddev_ns, i.lat_max_ns, i.lat_p50_ns,
                        i.lat_p90_ns, i.lat_p99_ns, i.lat_p99_9_ns, i.lat_p99_99_ns, i.errors,
                        i.cpu_usr_pct, i.cpu_sys_pct,
                        i.dev_util_pct, i.dev_queue_depth, i.dev_read_await_ns, i.dev_write_await_ns";

/// `text` for a LIKE pattern with `\` as the escape: its `%`, `_` and `\`
/// match themselves.
fn like_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}
