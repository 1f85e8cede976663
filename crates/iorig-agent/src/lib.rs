//! Many hosts, one test: `iorig agent` (a load host that runs steps for a
//! controller over gRPC) and the controller that runs one workload on many
//! agents at once and merges what they measure into exact totals.
//!
//! - [`server`]: the agent. One run at a time; every request carries the
//!   token; a run waits for its absolute start time, streams its intervals
//!   (with their HDR histograms) and stops its I/O when its lease runs out.
//! - [`controller`]: hands every host its share of the workload, measures
//!   each agent's clock, starts them together, merges interval `k` of every
//!   host into the total's interval `k` (histograms merged, never
//!   percentiles averaged), and marks a host that stops answering as lost
//!   while the others go on.
//! - [`clock`]: the NTP-style offset estimate.
//! - [`wire`]: the protobuf messages (generated from `proto/`) to and from
//!   iorig's own types.
//!
//! Like `iorig-run`, nothing here prints or exits: events go to a
//! [`iorig_run::Sink`], results are `iorig-result` documents.

pub mod clock;
pub mod controller;
pub mod hosts;
pub mod options;
pub mod server;
pub mod wire;

/// The generated protobuf and gRPC code (never edited: change `proto/`).
#[allow(clippy::all, clippy::unwrap_used)]
pub mod proto {
    tonic::include_proto!("iorig.agent.v1");
}

/// The protocol this build speaks. A different major cannot talk; a
/// different minor can (proto3 peers skip fields they do not know).
pub const PROTOCOL_MAJOR: u32 = 1;
pub const PROTOCOL_MINOR: u32 = 1;

/// The metadata key that carries the token (`authorization: Bearer TOKEN`).
pub const AUTH_KEY: &str = "authorization";

/// What went wrong between a controller and its agents.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// Bad input (a host list, a token, a workload a host refuses): nothing
    /// ran on any host.
    #[error("{0}")]
    Usage(String),
    /// A fault while running.
    #[error("{0}")]
    Runtime(String),
}

impl From<AgentError> for iorig_run::RunError {
    fn from(e: AgentError) -> Self {
        match e {
            AgentError::Usage(m) => iorig_run::RunError::Usage(m),
            AgentError::Runtime(m) => iorig_run::RunError::Runtime(m),
        }
    }
}

/// PEM files for mutual TLS: this side's certificate and key, and the CA
/// the other side's certificate must be signed by.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    pub cert_pem: Vec<u8>,
    pub key_pem: Vec<u8>,
    pub ca_pem: Vec<u8>,
}

impl TlsFiles {
    /// `--tls-cert`, `--tls-key` and `--tls-ca` read: all three, or none
    /// (no TLS); some of them is bad input.
    pub fn given(
        cert: Option<&std::path::Path>,
        key: Option<&std::path::Path>,
        ca: Option<&std::path::Path>,
    ) -> Result<Option<TlsFiles>, AgentError> {
        match (cert, key, ca) {
            (None, None, None) => Ok(None),
            (Some(c), Some(k), Some(a)) => TlsFiles::read(c, k, a).map(Some),
            _ => Err(AgentError::Usage(
                "mutual TLS needs all of --tls-cert, --tls-key and --tls-ca".into(),
            )),
        }
    }

    /// Reads the three files; each must be PEM.
    pub fn read(
        cert: &std::path::Path,
        key: &std::path::Path,
        ca: &std::path::Path,
    ) -> Result<TlsFiles, AgentError> {
        let read = |flag: &str, p: &std::path::Path| -> Result<Vec<u8>, AgentError> {
            let bytes = std::fs::read(p)
                .map_err(|e| AgentError::Usage(format!("{flag} {}: {e}", p.display())))?;
            if !bytes.windows(10).any(|w| w == b"-----BEGIN") {
                return Err(AgentError::Usage(format!(
                    "{flag} {}: not a PEM file (no -----BEGIN line); give the PEM form",
                    p.display()
                )));
            }
            Ok(bytes)
        };
        Ok(TlsFiles {
            cert_pem: read("--tls-cert", cert)?,
            key_pem: read("--tls-key", key)?,
            ca_pem: read("--tls-ca", ca)?,
        })
    }
}

/// This build's version, as the handshake names it.
pub fn tool_version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Reads a token file: its first line, trimmed; empty is refused.
pub fn read_token(path: &std::path::Path) -> Result<String, AgentError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        AgentError::Usage(format!(
            "token file {}: {e}; give a file holding the shared token on its first line",
            path.display()
        ))
    })?;
    let token = text.lines().next().unwrap_or("").trim().to_string();
    if token.len() < 16 {
        return Err(AgentError::Usage(format!(
            "token file {}: the token is shorter than 16 characters; write a longer random one (e.g. `head -c 32 /dev/urandom | base64 > {}`)",
            path.display(),
            path.display()
        )));
    }
    Ok(token)
}
