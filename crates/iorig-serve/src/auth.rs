//! Who may talk to an iorig server: anyone on this machine when it listens
//! on loopback without a token; with a token, only a request carrying it
//! (`Authorization: Bearer TOKEN`, or the session cookie a page login
//! sets). Off loopback a token is required, so no address reachable from
//! a network ever serves without one.

use crate::ServeError;
use axum::http::{header, HeaderMap};
use std::net::SocketAddr;
use subtle::ConstantTimeEq;

/// The name of the session cookie that carries the token.
pub const COOKIE: &str = "iorig_token";

/// A server's access rule.
#[derive(Clone, Debug, Default)]
pub struct Auth {
    token: Option<String>,
}

impl Auth {
    /// `token`: what every request must carry (None: none needed, which
    /// [`Auth::check_listen`] allows on loopback only).
    pub fn new(token: Option<String>) -> Auth {
        Auth { token }
    }

    /// Whether requests need the token.
    pub fn required(&self) -> bool {
        self.token.is_some()
    }

    /// Refuses to listen off loopback without a token. `flag` names the
    /// option in the message.
    pub fn check_listen(&self, flag: &str, addr: SocketAddr) -> Result<(), ServeError> {
        let token_flag = if flag == "--listen" {
            "--token-file"
        } else {
            "--metrics-token-file"
        };
        self.check_listen_with(flag, token_flag, addr)
    }

    /// As [`Auth::check_listen`], naming `token_flag` as the way to give a
    /// token (`iorig serve --metrics-listen` takes serve's --token-file).
    pub fn check_listen_with(
        &self,
        flag: &str,
        token_flag: &str,
        addr: SocketAddr,
    ) -> Result<(), ServeError> {
        if !addr.ip().is_loopback() && self.token.is_none() {
            return Err(ServeError::Usage(format!(
                "{flag} {addr}: a server off the loopback address needs a token; give {token_flag} FILE (a line of at least 16 random characters), or listen on 127.0.0.1"
            )));
        }
        Ok(())
    }

    /// Whether a request that names `host` (its `Host` header, or the
    /// authority of its URI) may be answered by a server listening at
    /// `local`. With a token, any: the token is the guard. Without one,
    /// only this server's own names: its address or `localhost`, with its
    /// port. Otherwise a web page the user visits could point a name of
    /// its own at 127.0.0.1 (DNS rebinding) and read or change the store
    /// through the user's browser, which sends that name as `Host`.
    pub fn host_allowed(&self, host: Option<&str>, local: SocketAddr) -> bool {
        if self.token.is_some() {
            return true;
        }
        let Some(host) = host.map(str::trim) else {
            return false;
        };
        let (name, port) = match host.strip_prefix('[') {
            Some(rest) => match rest.split_once(']') {
                Some((name, after)) => (name, after.strip_prefix(':')),
                None => return false,
            },
            None => match host.rsplit_once(':') {
                Some((name, port)) => (name, Some(port)),
                None => (host, None),
            },
        };
        let port_ok = match port {
            Some(p) => p.parse::<u16>() == Ok(local.port()),
            None => local.port() == 80,
        };
        let name = name.trim_end_matches('.');
        let name_ok = name.eq_ignore_ascii_case("localhost")
            || name.parse::<std::net::IpAddr>() == Ok(local.ip());
        port_ok && name_ok
    }

    /// Whether a request with these headers may be served.
    pub fn allows(&self, headers: &HeaderMap) -> bool {
        let Some(token) = &self.token else {
            return true;
        };
        let bearer = headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .filter_map(|v| v.strip_prefix("Bearer "))
            .any(|t| same(t.trim(), token));
        let cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().strip_prefix(COOKIE)?.strip_prefix('='))
            .any(|t| same(t, token));
        bearer || cookie
    }
}

/// Whether a token given equals ours, compared in constant time so the time
/// taken says nothing about how much of a guess was right.
fn same(given: &str, token: &str) -> bool {
    bool::from(given.as_bytes().ct_eq(token.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn a_token_is_needed_off_loopback_and_checked_when_set() {
        let open = Auth::new(None);
        assert!(open
            .check_listen(
                "--listen",
                "127.0.0.1:1".parse().unwrap_or_else(|_| unreachable!())
            )
            .is_ok());
        assert!(open
            .check_listen(
                "--listen",
                "[::1]:1".parse().unwrap_or_else(|_| unreachable!())
            )
            .is_ok());
        let e = open.check_listen(
            "--metrics-listen",
            "0.0.0.0:9100".parse().unwrap_or_else(|_| unreachable!()),
        );
        assert!(e.is_err_and(|e| e.to_string().contains("--metrics-token-file")));
        assert!(open.allows(&HeaderMap::new()));

        let locked = Auth::new(Some("0123456789abcdef".into()));
        assert!(locked
            .check_listen(
                "--listen",
                "0.0.0.0:8080".parse().unwrap_or_else(|_| unreachable!())
            )
            .is_ok());
        let with = |name, value: &str| {
            let mut h = HeaderMap::new();
            h.insert(
                name,
                HeaderValue::from_str(value).unwrap_or_else(|_| unreachable!()),
            );
            h
        };
        assert!(!locked.allows(&HeaderMap::new()));
        assert!(locked.allows(&with(header::AUTHORIZATION, "Bearer 0123456789abcdef")));
        assert!(!locked.allows(&with(header::AUTHORIZATION, "Bearer 0123456789abcdeX")));
        assert!(!locked.allows(&with(header::AUTHORIZATION, "Basic 0123456789abcdef")));
        assert!(locked.allows(&with(header::COOKIE, "a=b; iorig_token=0123456789abcdef")));
        assert!(!locked.allows(&with(header::COOKIE, "iorig_token=wrong")));
    }

    #[test]
    fn without_a_token_only_this_servers_own_names_are_answered() {
        let at = |s: &str| s.parse::<SocketAddr>().unwrap_or_else(|_| unreachable!());
        let open = Auth::new(None);
        let v4 = at("127.0.0.1:8080");
        for good in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "localhost.:8080",
        ] {
            assert!(open.host_allowed(Some(good), v4), "{good}");
        }
        for bad in [
            "evil.example:8080",
            "evil.example",
            "127.0.0.1:8081",
            "127.0.0.2:8080",
            "127.0.0.1",
            "localhost",
            "[::1]:8080",
            "127.0.0.1:8080@evil",
            "",
        ] {
            assert!(!open.host_allowed(Some(bad), v4), "{bad}");
        }
        assert!(!open.host_allowed(None, v4));
        let v6 = at("[::1]:9100");
        assert!(open.host_allowed(Some("[::1]:9100"), v6));
        assert!(open.host_allowed(Some("localhost:9100"), v6));
        assert!(!open.host_allowed(Some("127.0.0.1:9100"), v6));
        assert!(open.host_allowed(Some("localhost"), at("127.0.0.1:80")));
        let locked = Auth::new(Some("0123456789abcdef".into()));
        assert!(locked.host_allowed(Some("array-lab.example:8080"), v4));
    }
}
