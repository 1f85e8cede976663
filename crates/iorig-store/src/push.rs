//! Copying a run from one store to another (`iorig runs push`): a local
//! SQLite file up to the team's PostgreSQL store, or between any two.
//!
//! A run is known across stores by its uid, not its id: the target gives
//! the copy ids of its own (the run's, its steps', its findings'), and a
//! run whose uid the target has already is not copied again. A copy of a
//! run that was still running when pushed is replaced once the run has
//! ended, so pushing during a long plan and again after it leaves one
//! whole copy. Each run is copied in one transaction of the target: it is
//! there whole or not at all.

use crate::db::{params, Conn, DbRow, Value};
use crate::{RunId, Store, StoreError};
use iorig_spec::headline;
use std::collections::HashMap;

/// What pushing one run did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Pushed {
    /// Copied; its id in the target.
    Copied(RunId),
    /// The target has it already (its id there); nothing was written.
    AlreadyThere(RunId),
    /// The target had it as still running; that copy was replaced by the
    /// ended run.
    Replaced(RunId),
}

/// A column's type, so a copied value is bound as the target expects.
#[derive(Clone, Copy)]
enum Kind {
    Int,
    Real,
    Text,
    Blob,
}

/// A value read from the source, held until it is written.
enum Owned {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<String>),
    Blob(Option<Vec<u8>>),
}

impl Owned {
    fn read(r: &DbRow<'_>, i: usize, kind: Kind) -> Result<Owned, StoreError> {
        Ok(match kind {
            Kind::Int => Owned::Int(r.get(i)?),
            Kind::Real => Owned::Real(r.get(i)?),
            Kind::Text => Owned::Text(r.get(i)?),
            Kind::Blob => Owned::Blob(r.get(i)?),
        })
    }

    fn value(&self) -> Value<'_> {
        match self {
            Owned::Int(v) => Value::Int(*v),
            Owned::Real(v) => Value::Real(*v),
            Owned::Text(v) => Value::Text(v.as_deref()),
            Owned::Blob(v) => Value::Blob(v.as_deref()),
        }
    }
}

use Kind::{Blob, Int, Real, Text};

/// A table under a run or a step: its name, the column naming the parent
/// (always copied first, remapped), and the columns copied as they are.
struct Child {
    table: &'static str,
    parent: &'static str,
    columns: &'static [(&'static str, Kind)],
}

const RUN_CHILDREN: &[Child] = &[
    Child {
        table: "run_labels",
        parent: "run_id",
        columns: &[("key", Text), ("value", Text)],
    },
    Child {
        table: "system_facts",
        parent: "run_id",
        columns: &[("json", Text)],
    },
    Child {
        table: "target_facts",
        parent: "run_id",
        columns: &[
            ("path", Text),
            ("kind", Text),
            ("size_bytes", Int),
            ("json", Text),
        ],
    },
];

const STEP_COLUMNS: &[(&str, Kind)] = &[
    ("step_index", Int),
    ("name", Text),
    ("role", Text),
    ("status", Text),
    ("params_json", Text),
    ("bs", Text),
    (headline::BS.column, Int),
    (headline::READ.column, Real),
    (headline::RANDOM.column, Real),
    (headline::QD.column, Int),
    (headline::THREADS.column, Int),
    (headline::RATE.column, Real),
    ("started", Text),
    ("ended", Text),
    ("summary_json", Text),
];

const STEP_CHILDREN: &[Child] = &[
    Child {
        table: "intervals",
        parent: "step_id",
        columns: &[
            ("host", Text),
            ("seq", Int),
            ("t_s", Real),
            ("duration_s", Real),
            ("warmup", Int),
            ("op", Text),
            ("ops", Int),
            ("bytes", Int),
            ("iops", Real),
            ("bw_bytes_per_s", Real),
            ("lat_min_ns", Int),
            ("lat_mean_ns", Int),
            ("lat_stddev_ns", Int),
            ("lat_max_ns", Int),
            ("lat_p50_ns", Int),
            ("lat_p90_ns", Int),
            ("lat_p99_ns", Int),
            ("lat_p99_9_ns", Int),
            ("lat_p99_99_ns", Int),
            ("errors", Int),
            ("cpu_usr_pct", Real),
            ("cpu_sys_pct", Real),
            ("dev_util_pct", Real),
            ("dev_queue_depth", Real),
            ("dev_read_await_ns", Int),
            ("dev_write_await_ns", Int),
            ("lat_hist", Blob),
        ],
    },
    Child {
        table: "histograms",
        parent: "step_id",
        columns: &[
            ("op", Text),
            ("kind", Text),
            ("scope", Text),
            ("data", Blob),
        ],
    },
    Child {
        table: "step_hosts",
        parent: "step_id",
        columns: &[
            ("host", Text),
            ("position", Int),
            ("status", Text),
            ("clock_offset_ns", Int),
            ("start_skew_ns", Int),
            ("result_json", Text),
        ],
    },
    Child {
        table: "step_jobs",
        parent: "step_id",
        columns: &[("name", Text), ("position", Int), ("result_json", Text)],
    },
    Child {
        table: "external_series",
        parent: "step_id",
        columns: &[
            ("seq", Int),
            ("source", Text),
            ("name", Text),
            ("value", Real),
            ("error", Text),
        ],
    },
];

const RUN_COPIED: &[(&str, Kind)] = &[
    ("kind", Text),
    ("plan_json", Text),
    ("status", Text),
    ("started", Text),
    ("ended", Text),
    ("host", Text),
    ("tool_version", Text),
    ("command_line", Text),
    ("uid", Text),
];

fn names(columns: &[(&str, Kind)]) -> String {
    columns
        .iter()
        .map(|(n, _)| *n)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `?1, ?2, ... ?n`.
fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("?{i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Reads `columns` of the rows of `table` where `key = id`.
fn read_rows(
    conn: &Conn,
    table: &str,
    key: &str,
    id: i64,
    columns: &[(&str, Kind)],
    order: &str,
) -> Result<Vec<Vec<Owned>>, StoreError> {
    conn.query(
        &format!(
            "SELECT {} FROM {table} WHERE {key} = ?1{order}",
            names(columns)
        ),
        params![id],
        |r| {
            columns
                .iter()
                .enumerate()
                .map(|(i, (_, kind))| Owned::read(r, i, *kind))
                .collect()
        },
    )
}

/// Inserts one row: the parent id first, then the copied values.
fn insert(
    conn: &Conn,
    table: &str,
    parent: &str,
    parent_id: i64,
    columns: &[(&str, Kind)],
    row: &[Owned],
    returning: bool,
) -> Result<Option<i64>, StoreError> {
    let sql = format!(
        "INSERT INTO {table} ({parent}, {}) VALUES ({}){}",
        names(columns),
        placeholders(columns.len() + 1),
        if returning { " RETURNING id" } else { "" }
    );
    let mut values = Vec::with_capacity(row.len() + 1);
    values.push(Value::from(parent_id));
    values.extend(row.iter().map(Owned::value));
    if returning {
        conn.query_opt(&sql, &values, |r| r.get::<i64>(0))
    } else {
        conn.execute(&sql, &values).map(|_| None)
    }
}

fn returned(id: Option<i64>, table: &'static str) -> Result<i64, StoreError> {
    id.ok_or(StoreError::BadValue {
        column: table,
        value: "no id returned".into(),
    })
}

impl Store {
    /// The uid of a run (what other stores know it by); `None` for no such
    /// run.
    pub fn run_uid(&self, run: RunId) -> Result<Option<String>, StoreError> {
        Ok(self
            .conn
            .query_opt("SELECT uid FROM runs WHERE id = ?1", params![run.0], |r| {
                r.get::<Option<String>>(0)
            })?
            .flatten())
    }

    /// Copies run `run` of this store into `target`, with everything under
    /// it (labels, facts, steps, intervals, histograms, hosts, jobs,
    /// findings), unless `target` has it already (see [`Pushed`]).
    pub fn push_run(&self, run: RunId, target: &Store) -> Result<Pushed, StoreError> {
        let src = &self.conn;
        let mut runs = read_rows(src, "runs", "id", run.0, RUN_COPIED, "")?;
        let Some(mut run_row) = runs.pop() else {
            return Err(StoreError::NoSuchRun(run.0));
        };
        // A line from an older store goes over without the passwords it
        // could hold (see Store::shown_command_line).
        if let Some(Owned::Text(Some(line))) = run_row.get_mut(7) {
            *line = self.shown_command_line(std::mem::take(line));
        }
        let (uid, status) = match (&run_row[8], &run_row[2]) {
            (Owned::Text(Some(uid)), Owned::Text(Some(status))) => (uid.clone(), status.clone()),
            _ => {
                return Err(StoreError::BadValue {
                    column: "runs.uid",
                    value: format!("run {} has none", run.0),
                })
            }
        };
        // Everything is read before the target's transaction begins, so
        // the target is locked no longer than the writes take.
        let children: Vec<(&Child, Vec<Vec<Owned>>)> = RUN_CHILDREN
            .iter()
            .map(|c| Ok((c, read_rows(src, c.table, c.parent, run.0, c.columns, "")?)))
            .collect::<Result<_, StoreError>>()?;
        let mut step_cols = vec![("id", Int)];
        step_cols.extend_from_slice(STEP_COLUMNS);
        let steps = read_rows(
            src,
            "steps",
            "run_id",
            run.0,
            &step_cols,
            " ORDER BY step_index",
        )?;
        let mut step_rows = Vec::with_capacity(steps.len());
        for step in steps {
            let Owned::Int(Some(old)) = step[0] else {
                continue;
            };
            let under: Vec<(&Child, Vec<Vec<Owned>>)> = STEP_CHILDREN
                .iter()
                .map(|c| Ok((c, read_rows(src, c.table, c.parent, old, c.columns, "")?)))
                .collect::<Result<_, StoreError>>()?;
            step_rows.push((old, step, under));
        }
        let analysis = read_rows(
            src,
            "analysis",
            "run_id",
            run.0,
            &[("step_id", Int), ("kind", Text), ("json", Text)],
            " ORDER BY id",
        )?;

        let dst = &target.conn;
        dst.transaction(|| {
            let existing = dst.query_opt(
                "SELECT id, status FROM runs WHERE uid = ?1",
                params![uid.as_str()],
                |r| Ok((r.get::<i64>(0)?, r.get::<String>(1)?)),
            )?;
            let replacing = match existing {
                Some((id, there)) if there == "running" && status != "running" => {
                    dst.execute("DELETE FROM runs WHERE id = ?1", params![id])?;
                    true
                }
                Some((id, _)) => return Ok(Pushed::AlreadyThere(RunId(id))),
                None => false,
            };
            let values: Vec<Value<'_>> = run_row.iter().map(Owned::value).collect();
            let new_run = dst.query_opt(
                &format!(
                    "INSERT INTO runs ({}) VALUES ({}) ON CONFLICT (uid) DO NOTHING RETURNING id",
                    names(RUN_COPIED),
                    placeholders(RUN_COPIED.len())
                ),
                &values,
                |r| r.get::<i64>(0),
            )?;
            let Some(new_run) = new_run else {
                // Another pusher copied it since the look above.
                let id = dst.query_opt(
                    "SELECT id FROM runs WHERE uid = ?1",
                    params![uid.as_str()],
                    |r| r.get::<i64>(0),
                )?;
                return Ok(Pushed::AlreadyThere(RunId(returned(id, "runs.id")?)));
            };
            for (child, rows) in &children {
                for row in rows {
                    insert(
                        dst,
                        child.table,
                        child.parent,
                        new_run,
                        child.columns,
                        row,
                        false,
                    )?;
                }
            }
            let mut step_ids: HashMap<i64, i64> = HashMap::new();
            for (old, step, under) in &step_rows {
                let new = returned(
                    insert(
                        dst,
                        "steps",
                        "run_id",
                        new_run,
                        STEP_COLUMNS,
                        &step[1..],
                        true,
                    )?,
                    "steps.id",
                )?;
                step_ids.insert(*old, new);
                for (child, rows) in under {
                    for row in rows {
                        insert(
                            dst,
                            child.table,
                            child.parent,
                            new,
                            child.columns,
                            row,
                            false,
                        )?;
                    }
                }
            }
            for row in &analysis {
                let step = match row[0] {
                    Owned::Int(Some(old)) => {
                        Some(step_ids.get(&old).copied().ok_or(StoreError::BadValue {
                            column: "analysis.step_id",
                            value: format!("{old}, not a step of run {}", run.0),
                        })?)
                    }
                    _ => None,
                };
                dst.execute(
                    "INSERT INTO analysis (run_id, step_id, kind, json) VALUES (?1, ?2, ?3, ?4)",
                    &[
                        Value::from(new_run),
                        Value::from(step),
                        row[1].value(),
                        row[2].value(),
                    ],
                )?;
            }
            Ok(if replacing {
                Pushed::Replaced(RunId(new_run))
            } else {
                Pushed::Copied(RunId(new_run))
            })
        })
    }
}
