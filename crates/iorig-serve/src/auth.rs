//! Who may talk to an iorig server: anyone on this machine when it listens
//! on loopback without a token; with a token, only a request carrying it
//! (`Authorization: Bearer TOKEN`, or the session cookie a page login
//! sets). Off loopback a token is required, so no address reachable from
//! a network ever serves without one.

use crate::ServeError;
use axum::http::{header, HeaderMap};
use std::net::SocketAddr;

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
        if !addr.ip().is_loopback() && self.token.is_none() {
            return Err(ServeError::Usage(format!(
                "{flag} {addr}: a server off the loopback address needs a token; give {} FILE (a line of at least 16 random characters), or listen on 127.0.0.1",
                if flag == "--listen" { "--token-file" } else { "--metrics-token-file" }
            )));
        }
        Ok(())
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
            .any(|t| iorig_agent::server::same_bytes(t.trim().as_bytes(), token.as_bytes()));
        let cookie = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().strip_prefix(COOKIE)?.strip_prefix('='))
            .any(|t| iorig_agent::server::same_bytes(t.as_bytes(), token.as_bytes()));
        bearer || cookie
    }
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
}
