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
pub struct PgUrl {
    secret: String,
    /// How it is shown: rebuilt from what the client parsed, so whatever
    /// the client takes for the password is never in it.
    shown: String,
}

impl PgUrl {
    /// The URL as given (with its password): only for connecting.
    pub fn as_secret_str(&self) -> &str {
        &self.secret
    }
}

impl fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PgUrl({self})")
    }
}

/// The URL without its password (`postgres://USER:***@HOST:PORT/DATABASE`).
impl fmt::Display for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

/// A URL as the client parsed it, for messages and pages: the user, the
/// hosts with their ports and the database, the password as `***`, other
/// parameters left out. Control characters are dropped, since it is shown.
fn shown_config(config: &postgres::Config) -> String {
    use postgres::config::Host;
    let clean = |s: &str| s.chars().filter(|c| !c.is_control()).collect::<String>();
    let mut out = String::from("postgres://");
    if let Some(user) = config.get_user() {
        out.push_str(&clean(user));
        if config.get_password().is_some() {
            out.push_str(":***");
        }
        out.push('@');
    } else if config.get_password().is_some() {
        out.push_str(":***@");
    }
    let ports = config.get_ports();
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let name = match h {
                Host::Tcp(name) if name.contains(':') => format!("[{}]", clean(name)),
                Host::Tcp(name) => clean(name),
                Host::Unix(path) => clean(&path.to_string_lossy()).replace('/', "%2F"),
            };
            match ports.get(i).or(if ports.len() == 1 {
                ports.first()
            } else {
                None
            }) {
                Some(port) => format!("{name}:{port}"),
                None => name,
            }
        })
        .collect();
    out.push_str(&hosts.join(","));
    if let Some(db) = config.get_dbname() {
        out.push('/');
        out.push_str(&clean(db));
    }
    out
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
            // The message never repeats a URL the client could not read: the
            // password in it cannot be told apart.
            let config = postgres::Config::from_str(s).map_err(|e| {
                format!(
                    "the store URL is not one the PostgreSQL client reads ({e}); write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE, with characters such as @ / ? # % and spaces in the password written %XX"
                )
            })?;
            let shown = shown_config(&config);
            if config.get_ssl_mode() == postgres::config::SslMode::Require {
                return Err(format!(
                    "{shown}: sslmode=require asks for TLS, which iorig's PostgreSQL client does not speak yet; reach the server over a trusted network or an SSH tunnel and drop sslmode"
                ));
            }
            if config.get_hosts().is_empty() {
                return Err(format!(
                    "{shown} names no host; write it as postgres://USER@HOST:PORT/DATABASE"
                ));
            }
            return Ok(Location::Postgres(PgUrl {
                secret: s.to_owned(),
                shown,
            }));
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

/// The command line a run records, from its arguments: every argument
/// holding a `postgres://` URL has the URL replaced by what the client
/// parsed of it, password left out ([`PgUrl`]'s display), or by
/// `postgres://***` when the client cannot read it. Arguments are taken
/// one by one, so a password with spaces or `@` in it is found whole.
pub fn redact_args<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<str>,
{
    args.into_iter()
        .map(|a| redact_arg(a.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where a `postgres://` or `postgresql://` URL starts in `text`, any case.
fn find_scheme(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    ["postgresql://", "postgres://"]
        .iter()
        .filter_map(|p| lower.find(p))
        .min()
}

fn redact_arg(arg: &str) -> String {
    let Some(at) = find_scheme(arg) else {
        return arg.to_owned();
    };
    let (head, url) = arg.split_at(at);
    let shown = postgres::Config::from_str(url)
        .map(|c| shown_config(&c))
        .unwrap_or_else(|_| "postgres://***".to_owned());
    format!("{head}{shown}")
}

/// `text` with the password of every `postgres://` URL in it replaced by
/// `***`, for text whose arguments can no longer be told apart (command
/// lines stored by older versions, which joined them with spaces first).
/// It follows the client's rule that the user part runs to the first `@`,
/// taking a URL to end where a new option (` -`) begins: a password is
/// hidden even where that makes the rest of the line read oddly.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_scheme(rest) {
        let scheme_len = if rest[at..].to_ascii_lowercase().starts_with("postgresql://") {
            13
        } else {
            11
        };
        out.push_str(&rest[..at + scheme_len]);
        let url = &rest[at + scheme_len..];
        let end = url_end(url);
        out.push_str(&redact_one(&url[..end]));
        rest = &url[end..];
    }
    out.push_str(rest);
    out
}

/// Where a URL (after its scheme) ends in free text: at the next option
/// (whitespace, then `-`), the next URL, or the end.
fn url_end(url: &str) -> usize {
    let mut end = url.len();
    if let Some(next) = find_scheme(url) {
        // The next URL's word starts after the last space before it.
        end = url[..next].rfind(char::is_whitespace).unwrap_or(next);
    }
    for (i, c) in url.char_indices() {
        if i >= end {
            break;
        }
        if c.is_whitespace() {
            let after = url[i..].trim_start();
            if after.starts_with('-') || after.is_empty() {
                end = end.min(i);
                break;
            }
        }
    }
    end
}

/// One URL after its scheme: the password in the user part (up to the
/// first `@`, as the client reads it) and any `password=` parameter hidden.
fn redact_one(url: &str) -> String {
    let (creds, tail) = match url.find('@') {
        Some(i) => (Some(&url[..i]), &url[i..]),
        None => (None, url),
    };
    let creds = match creds {
        Some(c) => match c.split_once(':') {
            Some((user, _)) => format!("{user}:***"),
            None => c.to_owned(),
        },
        None => String::new(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if k.trim().eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => kv.to_owned(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_owned(),
    };
    creds + &tail
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

    /// Passwords the client reads whole although they hold the characters
    /// a URL usually splits at.
    pub(crate) const AWKWARD: [(&str, &str); 7] = [
        ("postgres://ann:se/cret@db:5432/x", "se/cret"),
        ("postgres://ann:se?cret@db/x", "se?cret"),
        ("postgres://ann:se cret@db/x", "se cret"),
        ("postgres://ann:se%2Fc%40ret@db/x", "se%2Fc%40ret"),
        ("postgres://ann:s3:cr#t@db/x", "s3:cr#t"),
        ("postgresql://ann:p&w=1@db/x?application_name=a", "p&w=1"),
        (
            "postgres://ann@db/x?password=hunt%20er2&user=ann",
            "hunt%20er2",
        ),
    ];

    #[test]
    fn awkward_passwords_never_show() {
        for (url, password) in AWKWARD {
            let loc: Location = url.parse().expect(url);
            let shown = loc.to_string();
            assert!(!shown.contains(password), "{url} shown as {shown}");
            assert!(shown.contains("@db") && shown.ends_with("/x"), "{shown}");
            assert!(shown.contains("ann"), "{shown}");
            let line = redact_args(["iorig", "run", "--db", url, "--time", "1s"]);
            assert!(!line.contains(password), "{line}");
            assert!(line.ends_with("--time 1s"), "{line}");
            let eq = redact_args([format!("--db={url}")]);
            assert!(
                eq.starts_with("--db=postgres://ann") && !eq.contains(password),
                "{eq}"
            );
            // The same command line as older versions stored it.
            let old = redact_urls(&format!("iorig run --db {url} --time 1s"));
            assert!(!old.contains(password), "{old}");
            assert!(old.ends_with(" --time 1s"), "{old}");
        }
        // A URL the client cannot read is never repeated.
        for bad in [
            "postgres://ann:hunter2@[/x",
            "postgres://ann:hunter2@db/x?password",
        ] {
            let e = bad.parse::<Location>().expect_err(bad);
            assert!(!e.contains("hunter2"), "{e}");
            assert_eq!(redact_args([bad]), "postgres://***");
        }
    }

    #[test]
    fn passwords_are_redacted_wherever_a_url_appears() {
        assert_eq!(
            redact_urls("iorig run --db postgres://ann:s3cr@t@db:5432/x --time 1s"),
            "iorig run --db postgres://ann:***@t@db:5432/x --time 1s"
        );
        assert_eq!(
            redact_urls("a POSTGRESQL://h/d?user=u&password=zz b postgres://u@h/d"),
            "a POSTGRESQL://h/d?user=u&password=*** postgres://u@h/d",
            "in free text a password runs to the next option or URL"
        );
        assert_eq!(redact_urls("no url here"), "no url here");
        assert_eq!(
            redact_args(["x", "postgres://u@h:5433/d", "--label", "a@b"]),
            "x postgres://u@h:5433/d --label a@b"
        );
    }
}
