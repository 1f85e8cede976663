//! Where a store lives: an SQLite file, or a PostgreSQL database shared by
//! a team (`postgres://user:password@host:port/database`). `--db`, `--to`
//! and `IORIG_DB` all parse into a [`Location`], so "is this a URL?" is
//! answered once, and a URL's password never reaches a message or the
//! command line the store records.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A store's place.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Location {
    /// An SQLite file (the path checks of output files apply).
    File(PathBuf),
    /// A PostgreSQL database.
    Postgres(PgUrl),
}

/// A `postgres://` URL, checked by the client's own parser.
#[derive(Clone, PartialEq, Eq)]
pub struct PgUrl(String);

impl PgUrl {
    /// The URL as given (with its password): only for connecting.
    pub fn as_secret_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PgUrl({self})")
    }
}

/// The URL with its password replaced by `***`.
impl fmt::Display for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact_urls(&self.0))
    }
}

impl Location {
    /// The file, when the store is one.
    pub fn as_path(&self) -> Option<&Path> {
        match self {
            Location::File(p) => Some(p),
            Location::Postgres(_) => None,
        }
    }
}

impl From<PathBuf> for Location {
    fn from(p: PathBuf) -> Self {
        Location::File(p)
    }
}

impl From<&Path> for Location {
    fn from(p: &Path) -> Self {
        Location::File(p.to_path_buf())
    }
}

/// A path as it is, a URL without its password.
impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File(p) => write!(f, "{}", p.display()),
            Location::Postgres(u) => write!(f, "{u}"),
        }
    }
}

impl FromStr for Location {
    type Err = String;

    /// `postgres://` and `postgresql://` URLs name a PostgreSQL database;
    /// any other `scheme://` is refused rather than taken for a file name;
    /// everything else is a file path.
    fn from_str(s: &str) -> Result<Self, String> {
        if s.is_empty() {
            return Err("the store is empty; give a file path or a postgres:// URL".into());
        }
        let lower = s.to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            let config = postgres::Config::from_str(s).map_err(|e| {
                format!(
                    "{} is not a PostgreSQL URL the client reads ({e}); write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE",
                    redact_urls(s)
                )
            })?;
            if config.get_ssl_mode() == postgres::config::SslMode::Require {
                return Err(format!(
                    "{}: sslmode=require asks for TLS, which iorig's PostgreSQL client does not speak yet; reach the server over a trusted network or an SSH tunnel and drop sslmode",
                    redact_urls(s)
                ));
            }
            if config.get_hosts().is_empty() {
                return Err(format!(
                    "{} names no host; write it as postgres://USER@HOST:PORT/DATABASE",
                    redact_urls(s)
                ));
            }
            return Ok(Location::Postgres(PgUrl(s.to_owned())));
        }
        if let Some((scheme, _)) = s.split_once("://") {
            if !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '+')
            {
                return Err(format!(
                    "{scheme}:// is not a kind of store iorig knows; give a file path or a postgres:// URL"
                ));
            }
        }
        Ok(Location::File(PathBuf::from(s)))
    }
}

/// `text` with the password of every `postgres://` or `postgresql://` URL
/// in it replaced by `***` (`user:secret@host` and `?password=secret`), for
/// messages and the command line a run records.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let lower = rest.to_ascii_lowercase();
        let found = ["postgresql://", "postgres://"]
            .iter()
            .filter_map(|p| lower.find(p).map(|i| (i, p.len())))
            .min();
        let Some((at, scheme_len)) = found else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at + scheme_len]);
        let url = &rest[at + scheme_len..];
        let end = url.find(char::is_whitespace).unwrap_or(url.len());
        out.push_str(&redact_one(&url[..end]));
        rest = &url[end..];
    }
}

/// One URL after its scheme: the password in the user part and any
/// `password=` parameter hidden.
fn redact_one(url: &str) -> String {
    let authority_end = url.find(['/', '?']).unwrap_or(url.len());
    let (authority, tail) = url.split_at(authority_end);
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => format!("{user}@{host}"),
        },
        None => authority.to_owned(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => kv.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    authority + &tail
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_urls_are_told_apart() {
        assert_eq!(
            "./runs.db".parse::<Location>(),
            Ok(Location::File(PathBuf::from("./runs.db")))
        );
        let pg: Location = "postgres://me:pw@127.0.0.1:5433/team"
            .parse()
            .expect("a URL");
        assert!(matches!(pg, Location::Postgres(_)));
        assert_eq!(pg.to_string(), "postgres://me:***@127.0.0.1:5433/team");
        assert!("mysql://x/y".parse::<Location>().is_err());
        assert!("".parse::<Location>().is_err());
        let tls = "postgres://me@db/x?sslmode=require".parse::<Location>();
        assert!(tls.is_err_and(|e| e.contains("sslmode=require")));
    }

    #[test]
    fn passwords_are_redacted_wherever_a_url_appears() {
        assert_eq!(
            redact_urls("iorig run --db postgres://ann:s3cr@t@db:5432/x --time 1s"),
            "iorig run --db postgres://ann:***@db:5432/x --time 1s"
        );
        assert_eq!(
            redact_urls("a POSTGRESQL://h/d?user=u&password=zz b postgres://u@h/d"),
            "a POSTGRESQL://h/d?user=u&password=*** b postgres://u@h/d"
        );
        assert_eq!(redact_urls("no url here"), "no url here");
        let bad = "postgres://ann:hunter2@[/x".parse::<Location>();
        assert!(bad.is_err_and(|e| !e.contains("hunter2")));
    }
}
