//! One connection to either database the store lives in: an SQLite file
//! (rusqlite) or a PostgreSQL server (the `postgres` client). The store's
//! SQL is written once, with SQLite's `?N` parameters, and rewritten to
//! PostgreSQL's `$N` here; values go in as typed [`Value`]s and come out
//! through [`DbRow::get`], so the store's methods never name a backend.
//!
//! Everything here is synchronous: the `postgres` client drives its own
//! small runtime. It must not be called from inside an async task (that
//! would start a runtime within a runtime); callers that serve requests
//! keep their stores on threads of their own.

use crate::StoreError;
use std::cell::RefCell;
use std::collections::HashMap;

/// A parameter of a statement. Nulls carry their type, because PostgreSQL
/// checks every parameter's type against the column it goes to.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Value<'a> {
    Int(Option<i64>),
    Real(Option<f64>),
    Text(Option<&'a str>),
    Blob(Option<&'a [u8]>),
}

impl From<i64> for Value<'_> {
    fn from(v: i64) -> Self {
        Value::Int(Some(v))
    }
}
impl From<Option<i64>> for Value<'_> {
    fn from(v: Option<i64>) -> Self {
        Value::Int(v)
    }
}
impl From<bool> for Value<'_> {
    fn from(v: bool) -> Self {
        Value::Int(Some(i64::from(v)))
    }
}
impl From<f64> for Value<'_> {
    fn from(v: f64) -> Self {
        Value::Real(Some(v))
    }
}
impl From<Option<f64>> for Value<'_> {
    fn from(v: Option<f64>) -> Self {
        Value::Real(v)
    }
}
impl<'a> From<&'a str> for Value<'a> {
    fn from(v: &'a str) -> Self {
        Value::Text(Some(v))
    }
}
impl<'a> From<&'a String> for Value<'a> {
    fn from(v: &'a String) -> Self {
        Value::Text(Some(v))
    }
}
impl<'a> From<Option<&'a str>> for Value<'a> {
    fn from(v: Option<&'a str>) -> Self {
        Value::Text(v)
    }
}
impl<'a> From<&'a Option<String>> for Value<'a> {
    fn from(v: &'a Option<String>) -> Self {
        Value::Text(v.as_deref())
    }
}
impl<'a> From<&'a [u8]> for Value<'a> {
    fn from(v: &'a [u8]) -> Self {
        Value::Blob(Some(v))
    }
}
impl<'a> From<&'a Option<Vec<u8>>> for Value<'a> {
    fn from(v: &'a Option<Vec<u8>>) -> Self {
        Value::Blob(v.as_deref())
    }
}

/// The parameters of a statement, each converted with `Value::from`.
macro_rules! params {
    ($($v:expr),* $(,)?) => {
        &[$($crate::db::Value::from($v)),*][..]
    };
}
pub(crate) use params;

/// A value as a column of a row gives it, in either database.
pub(crate) trait Column: Sized {
    fn lite(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Self>;
    fn pg(row: &postgres::Row, i: usize) -> Result<Self, postgres::Error>;
}

macro_rules! column_as_is {
    ($($t:ty),*) => {$(
        impl Column for $t {
            fn lite(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Self> {
                row.get(i)
            }
            fn pg(row: &postgres::Row, i: usize) -> Result<Self, postgres::Error> {
                row.try_get(i)
            }
        }
    )*};
}
column_as_is!(
    i64,
    Option<i64>,
    f64,
    Option<f64>,
    String,
    Option<String>,
    Vec<u8>,
    Option<Vec<u8>>
);

/// 0/1 columns (`warmup`): INTEGER in SQLite, BIGINT in PostgreSQL.
impl Column for bool {
    fn lite(row: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Self> {
        row.get(i)
    }
    fn pg(row: &postgres::Row, i: usize) -> Result<Self, postgres::Error> {
        Ok(row.try_get::<_, i64>(i)? != 0)
    }
}

/// One row of a result, from either database.
pub(crate) enum DbRow<'a> {
    Lite(&'a rusqlite::Row<'a>),
    Pg(&'a postgres::Row),
}

impl DbRow<'_> {
    pub(crate) fn get<T: Column>(&self, i: usize) -> Result<T, StoreError> {
        match self {
            DbRow::Lite(r) => T::lite(r, i).map_err(StoreError::Sqlite),
            DbRow::Pg(r) => T::pg(r, i).map_err(StoreError::Postgres),
        }
    }

    /// Whether column `i` is NULL.
    pub(crate) fn is_null(&self, i: usize) -> Result<bool, StoreError> {
        match self {
            DbRow::Lite(r) => Ok(matches!(
                r.get_ref(i).map_err(StoreError::Sqlite)?,
                rusqlite::types::ValueRef::Null
            )),
            // Every nullable column read this way is TEXT.
            DbRow::Pg(r) => Ok(r
                .try_get::<_, Option<String>>(i)
                .map_err(StoreError::Postgres)?
                .is_none()),
        }
    }
}

/// A PostgreSQL connection and the statements it has prepared (by SQL
/// text), since preparing is a round trip of its own.
pub(crate) struct PgConn {
    client: RefCell<postgres::Client>,
    prepared: RefCell<HashMap<String, postgres::Statement>>,
}

impl std::fmt::Debug for PgConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PgConn")
    }
}

/// The connection a [`crate::Store`] works through.
#[derive(Debug)]
pub(crate) enum Conn {
    Lite(rusqlite::Connection),
    Pg(Box<PgConn>),
}

impl Conn {
    pub(crate) fn pg(client: postgres::Client) -> Conn {
        Conn::Pg(Box::new(PgConn {
            client: RefCell::new(client),
            prepared: RefCell::new(HashMap::new()),
        }))
    }

    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self, Conn::Pg(_))
    }

    /// Runs a statement; returns the number of rows it changed.
    pub(crate) fn execute(&self, sql: &str, params: &[Value<'_>]) -> Result<u64, StoreError> {
        match self {
            Conn::Lite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let n = stmt.execute(rusqlite::params_from_iter(params.iter().map(lite_value)))?;
                Ok(n as u64)
            }
            Conn::Pg(p) => {
                let stmt = p.statement(sql)?;
                let values = pg_values(params);
                Ok(p.client.borrow_mut().execute(&stmt, &pg_refs(&values))?)
            }
        }
    }

    /// Runs a query and maps every row it returns.
    pub(crate) fn query<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        mut f: impl FnMut(&DbRow<'_>) -> Result<T, StoreError>,
    ) -> Result<Vec<T>, StoreError> {
        match self {
            Conn::Lite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let mut rows =
                    stmt.query(rusqlite::params_from_iter(params.iter().map(lite_value)))?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    out.push(f(&DbRow::Lite(r))?);
                }
                Ok(out)
            }
            Conn::Pg(p) => {
                let stmt = p.statement(sql)?;
                let values = pg_values(params);
                // The borrow ends before the rows are mapped, so a mapping
                // may not reach the connection, but nothing here needs to.
                let rows = p.client.borrow_mut().query(&stmt, &pg_refs(&values))?;
                rows.iter().map(|r| f(&DbRow::Pg(r))).collect()
            }
        }
    }

    /// The first row of a query, mapped; `None` when it returns none.
    pub(crate) fn query_opt<T>(
        &self,
        sql: &str,
        params: &[Value<'_>],
        mut f: impl FnMut(&DbRow<'_>) -> Result<T, StoreError>,
    ) -> Result<Option<T>, StoreError> {
        match self {
            Conn::Lite(c) => {
                let mut stmt = c.prepare_cached(sql)?;
                let mut rows =
                    stmt.query(rusqlite::params_from_iter(params.iter().map(lite_value)))?;
                match rows.next()? {
                    Some(r) => Ok(Some(f(&DbRow::Lite(r))?)),
                    None => Ok(None),
                }
            }
            Conn::Pg(_) => Ok(self.query(sql, params, f)?.into_iter().next()),
        }
    }

    /// Runs `f` in one transaction: committed when it returns `Ok`, rolled
    /// back when it fails. SQLite takes the write lock at the start
    /// (IMMEDIATE), so a transaction never fails halfway for a lock another
    /// writer took after it began.
    pub(crate) fn transaction<T>(
        &self,
        f: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.batch(match self {
            Conn::Lite(_) => "BEGIN IMMEDIATE",
            Conn::Pg(_) => "BEGIN",
        })?;
        match f() {
            Ok(v) => {
                self.batch("COMMIT")?;
                Ok(v)
            }
            Err(e) => {
                // The failure is what the caller needs to know; a rollback
                // that fails too leaves the connection to be dropped.
                let _ = self.batch("ROLLBACK");
                Err(e)
            }
        }
    }

    /// Runs statements without parameters.
    pub(crate) fn batch(&self, sql: &str) -> Result<(), StoreError> {
        match self {
            Conn::Lite(c) => Ok(c.execute_batch(sql)?),
            Conn::Pg(p) => Ok(p.client.borrow_mut().batch_execute(sql)?),
        }
    }
}

impl PgConn {
    fn statement(&self, sql: &str) -> Result<postgres::Statement, StoreError> {
        if let Some(s) = self.prepared.borrow().get(sql) {
            return Ok(s.clone());
        }
        let stmt = self.client.borrow_mut().prepare(&dollar_params(sql))?;
        self.prepared
            .borrow_mut()
            .insert(sql.to_owned(), stmt.clone());
        Ok(stmt)
    }
}

fn lite_value<'a>(v: &'a Value<'a>) -> &'a dyn rusqlite::ToSql {
    match v {
        Value::Int(x) => x,
        Value::Real(x) => x,
        Value::Text(x) => x,
        Value::Blob(x) => x,
    }
}

fn pg_values<'a>(params: &[Value<'a>]) -> Vec<PgValue<'a>> {
    params.iter().map(|v| PgValue(*v)).collect()
}

fn pg_refs<'a>(values: &'a [PgValue<'_>]) -> Vec<&'a (dyn postgres::types::ToSql + Sync)> {
    values
        .iter()
        .map(|v| v as &(dyn postgres::types::ToSql + Sync))
        .collect()
}

/// A [`Value`] as a PostgreSQL parameter: its typed option's encoding, so
/// a mismatch with the column's type is the client's usual error.
#[derive(Debug)]
struct PgValue<'a>(Value<'a>);

impl postgres::types::ToSql for PgValue<'_> {
    fn to_sql(
        &self,
        ty: &postgres::types::Type,
        out: &mut postgres::types::private::BytesMut,
    ) -> Result<postgres::types::IsNull, Box<dyn std::error::Error + Sync + Send>> {
        match self.0 {
            Value::Int(x) => x.to_sql_checked(ty, out),
            Value::Real(x) => x.to_sql_checked(ty, out),
            Value::Text(x) => x.to_sql_checked(ty, out),
            Value::Blob(x) => x.to_sql_checked(ty, out),
        }
    }

    // Each variant's own `to_sql_checked` checks the type above.
    fn accepts(_: &postgres::types::Type) -> bool {
        true
    }

    postgres::types::to_sql_checked!();
}

/// `?N` parameters (SQLite) as `$N` (PostgreSQL); text in quotes is left
/// alone.
pub(crate) fn dollar_params(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quoted = false;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            quoted = !quoted;
        }
        if c == '?' && !quoted && chars.peek().is_some_and(char::is_ascii_digit) {
            out.push('$');
        } else {
            out.push(c);
        }
    }
    out
}

/// A PostgreSQL error as one line: the server's message (and its detail)
/// rather than the client's bare "db error".
pub(crate) fn pg_message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        let mut s = format!("{}: {}", db.severity(), db.message());
        if let Some(d) = db.detail() {
            s.push_str(" (");
            s.push_str(d);
            s.push(')');
        }
        return s.replace('\n', " ");
    }
    let mut s = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_marks_become_dollars_outside_quotes() {
        assert_eq!(
            dollar_params("SELECT ?1, '?2', x FROM t WHERE a = ?12 AND b LIKE '%?%' AND c = ?"),
            "SELECT $1, '?2', x FROM t WHERE a = $12 AND b LIKE '%?%' AND c = ?"
        );
    }
}
