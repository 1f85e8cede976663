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
    // A user or host name holding what a URL separates with was taken from
    // a part the user meant otherwise (a parameter, a password): hidden.
    let clean = |s: &str| {
        if s.contains(|c: char| "/?&=@:#%".contains(c) || c.is_whitespace() || c.is_control()) {
            "***".to_owned()
        } else {
            s.to_owned()
        }
    };
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
                Host::Tcp(name) if name.parse::<std::net::Ipv6Addr>().is_ok() => {
                    format!("[{name}]")
                }
                Host::Tcp(name) => clean(name),
                Host::Unix(path) => {
                    let path = path.to_string_lossy();
                    if path.contains(|c: char| c.is_control() || c.is_whitespace()) {
                        "***".to_owned()
                    } else {
                        path.replace('%', "%25").replace('/', "%2F")
                    }
                }
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

/// A `postgres://` URL read as the client reads it, and how it is shown.
/// The client ends the user part at the first `@` anywhere in the URL, so
/// an `@` after a `/` or `?` (in the database name, or a parameter such as
/// `user=ann@server`) would make it read a password, or a parameter, as a
/// user or host name, and show it where a name is shown: refused. The
/// reasons never repeat the URL.
fn parse_pg(url: &str) -> Result<(postgres::Config, String), String> {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    if let Some(at) = after_scheme.find('@') {
        // The user name runs to the first `:`, and the host from the `@` to
        // the next `/` or `?`: neither holds these unless the `@` was meant
        // for a later part.
        let user = after_scheme[..at].split(':').next().unwrap_or("");
        let rest = &after_scheme[at + 1..];
        let host = &rest[..rest.find(['/', '?']).unwrap_or(rest.len())];
        if user.contains(['/', '?', '&', '=']) || host.contains(['&', '=', '@']) {
            return Err("the store URL has an @ after its host (in the database name or a parameter), which the PostgreSQL client takes for the end of the user name; write that @ as %40".into());
        }
    }
    let config = postgres::Config::from_str(url).map_err(|e| {
        format!(
            "the store URL is not one the PostgreSQL client reads ({e}); write it as postgres://USER:PASSWORD@HOST:PORT/DATABASE, with characters such as @ / ? # % and spaces in the password written %XX"
        )
    })?;
    let shown = shown_config(&config);
    Ok((config, shown))
}

/// Whether `bytes` start as a PostgreSQL URL, any case: such a value is
/// never taken for a file path (whose messages would repeat it), even when
/// it is not UTF-8.
pub fn looks_like_pg_url(bytes: &[u8]) -> bool {
    let lower = bytes
        .iter()
        .take(13)
        .map(u8::to_ascii_lowercase)
        .collect::<Vec<u8>>();
    lower.starts_with(b"postgres://") || lower.starts_with(b"postgresql://")
}

/// Why a store URL that is not UTF-8 is refused (without repeating it).
pub const NOT_UTF8_URL: &str =
    "the store URL is not UTF-8 text; write its password's bytes as %XX escapes";

impl Location {
    /// The store a command uses: `given` (`--db`), else `IORIG_DB`, else
    /// `./iorig.db`. `IORIG_DB` reads as `--db` does, so a URL there is a
    /// URL; the refusal names it.
    pub fn chosen(given: Option<&Location>) -> Result<Location, String> {
        if let Some(l) = given {
            return Ok(l.clone());
        }
        match std::env::var("IORIG_DB") {
            Ok(v) if !v.is_empty() => v.parse().map_err(|e: String| format!("IORIG_DB: {e}")),
            Err(std::env::VarError::NotUnicode(v)) => {
                use std::os::unix::ffi::OsStrExt;
                if looks_like_pg_url(v.as_bytes()) {
                    return Err(format!("IORIG_DB: {NOT_UTF8_URL}"));
                }
                Ok(Location::File(v.into()))
            }
            _ => Ok(Location::File("iorig.db".into())),
        }
    }

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
        if looks_like_pg_url(s.as_bytes()) {
            // The message never repeats a URL the client could not read: the
            // password in it cannot be told apart.
            let (config, shown) = parse_pg(s)?;
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
    let shown = parse_pg(url)
        .map(|(_, shown)| shown)
        .unwrap_or_else(|_| "postgres://***".to_owned());
    format!("{head}{shown}")
}

/// `text` with the password of every `postgres://` URL in it hidden, for
/// text whose arguments can no longer be told apart: command lines stored
/// by versions before schema version 11, which joined the arguments with
/// spaces first and could keep a password holding `/`, `?` or a space.
/// It errs toward hiding: as the client does, a URL's user part runs to the
/// first `@` after the scheme (here: anywhere in the rest of the text), and
/// its password from the first `:` to that `@`; every `password=` value runs
/// to the next `&` or the end. An old line may lose text that was no
/// secret; no password stays.
pub fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = find_scheme(rest) {
        let scheme_len = rest[at..].find("://").map_or(0, |i| i + 3);
        out.push_str(&rest[..at + scheme_len]);
        rest = &rest[at + scheme_len..];
        if let Some(end_of_user) = rest.find('@') {
            let creds = &rest[..end_of_user];
            if let Some((user, _)) = creds.split_once(':') {
                out.push_str(user);
                out.push_str(":***");
                rest = &rest[end_of_user..];
            }
        }
    }
    out.push_str(rest);
    hide_password_params(&out)
}

/// Every `password=VALUE` (the key in any case, `%`-escaped or not) with its
/// value up to the next `&` or the end replaced by `***`.
fn hide_password_params(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        // A key starts after `?`, `&` or a space and ends at `=`.
        let found = rest.char_indices().find_map(|(i, c)| {
            if !(c == '?' || c == '&' || c.is_whitespace()) {
                return None;
            }
            let key_start = i + c.len_utf8();
            let eq = key_start + rest[key_start..].find('=')?;
            let key = &rest[key_start..eq];
            // Decoded as the client decodes keys (`pass%77ord` is `password`).
            let decoded = percent_encoding::percent_decode_str(key).decode_utf8_lossy();
            decoded
                .trim()
                .eq_ignore_ascii_case("password")
                .then_some(eq + 1)
        });
        let Some(value_start) = found else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..value_start]);
        out.push_str("***");
        rest = &rest[value_start..];
        rest = &rest[rest.find('&').unwrap_or(rest.len())..];
    }
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
        }
        // A URL the client cannot read, or would read a password into a
        // name from, is never repeated.
        for bad in [
            "postgres://ann:hunter2@[/x",
            "postgres://ann:hunter2@db/x?password",
            "postgres://srv/db?user=ann@srv&password=hunter2",
            "postgres://srv/db@x?password=hunter2",
        ] {
            let e = bad.parse::<Location>().expect_err(bad);
            assert!(!e.contains("hunter2"), "{e}");
            assert_eq!(redact_args([bad]), "postgres://***");
            assert!(
                !redact_urls(bad).contains("hunter2"),
                "{}",
                redact_urls(bad)
            );
        }
        assert!(looks_like_pg_url(b"PostgreSQL://a\xff@b/c"));
        assert!(!looks_like_pg_url(b"./postgres://x"));
    }

    #[test]
    fn old_command_lines_lose_every_password() {
        for (line, password) in [
            (
                "iorig run --db postgres://ann:se -cret@db/x --time 1s",
                "se -cret",
            ),
            (
                "iorig run --db postgres://ann:se postgres://x@db/x -q",
                "se postgres://x",
            ),
            (
                "iorig run --db postgres://ann@db/x?pass%77ord=hunter2 -q",
                "hunter2",
            ),
            (
                "iorig run --db postgres://ann@db/x?a=1&PASSWORD=hunter2&b=2 -q",
                "hunter2",
            ),
            (
                "iorig run --db postgres://ann:s3cr@t@db:5432/x --time 1s",
                "s3cr",
            ),
        ] {
            let clean = redact_urls(line);
            assert!(!clean.contains(password), "{line} -> {clean}");
            assert!(clean.starts_with("iorig run --db postgres://"), "{clean}");
        }
        assert_eq!(redact_urls("no url here"), "no url here");
        assert_eq!(
            redact_urls("iorig run --db postgres://ann:***@db:5432/x --time 1s"),
            "iorig run --db postgres://ann:***@db:5432/x --time 1s",
            "what this version writes stays as it is"
        );
        assert_eq!(
            redact_args(["x", "postgres://u@h:5433/d", "--label", "a@b"]),
            "x postgres://u@h:5433/d --label a@b"
        );
    }
}
