//! The hosts of a multi-host run: `--hosts a:7420,b:7420`, a hosts file
//! (per-host names, targets, labels and tokens), or `k8s:SERVICE.NAMESPACE`
//! (every address behind a Kubernetes headless service).

use crate::AgentError;
use serde::Deserialize;
use std::collections::{BTreeMap, HashSet};
use std::net::ToSocketAddrs;
use std::path::{Path, PathBuf};

/// The port `iorig agent` listens on unless told otherwise.
pub const DEFAULT_PORT: u16 = 7420;

/// One host to run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostSpec {
    /// How results name it.
    pub name: String,
    /// `HOST:PORT` of its agent.
    pub address: String,
    /// Its token (else the run's `--token-file`).
    pub token: Option<String>,
    /// Its own targets (else the workload's).
    pub targets: Option<Vec<String>>,
    pub labels: BTreeMap<String, String>,
}

/// `HOST` or `HOST:PORT` (the default port added).
fn with_port(a: &str) -> String {
    let a = a.trim();
    if a.starts_with('[') {
        // [v6] or [v6]:port
        if a.contains("]:") {
            a.to_string()
        } else {
            format!("{a}:{DEFAULT_PORT}")
        }
    } else if a.contains(':') {
        a.to_string()
    } else {
        format!("{a}:{DEFAULT_PORT}")
    }
}

/// `--hosts`: a comma-separated list of `HOST[:PORT]`, or
/// `k8s:SERVICE.NAMESPACE[:PORT]`.
pub fn parse_list(text: &str) -> Result<Vec<HostSpec>, AgentError> {
    if let Some(svc) = text.strip_prefix("k8s:") {
        return from_k8s(svc);
    }
    let mut hosts = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part.is_empty() {
            return Err(AgentError::Usage(format!(
                "--hosts {text}: an empty entry; give HOST:PORT,HOST:PORT"
            )));
        }
        let address = with_port(part);
        hosts.push(HostSpec {
            name: address.clone(),
            address,
            token: None,
            targets: None,
            labels: BTreeMap::new(),
        });
    }
    check_unique(&hosts)?;
    Ok(hosts)
}

/// Every address of a Kubernetes headless service: its DNS name resolves
/// to one address per ready pod.
fn from_k8s(svc: &str) -> Result<Vec<HostSpec>, AgentError> {
    let (name, port) = match svc.rsplit_once(':') {
        Some((n, p)) => (
            n,
            p.parse::<u16>().map_err(|_| {
                AgentError::Usage(format!("--hosts k8s:{svc}: '{p}' is not a port"))
            })?,
        ),
        None => (svc, DEFAULT_PORT),
    };
    if !name.contains('.') {
        return Err(AgentError::Usage(format!(
            "--hosts k8s:{svc}: give SERVICE.NAMESPACE (e.g. k8s:iorig-agent.storage-test)"
        )));
    }
    let fqdn = if name.ends_with(".svc") || name.contains(".svc.") {
        name.to_string()
    } else {
        format!("{name}.svc")
    };
    let addrs: Vec<_> = (fqdn.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| {
            AgentError::Usage(format!(
                "--hosts k8s:{svc}: {fqdn} does not resolve ({e}); run the controller inside the cluster, next to the agents' headless service"
            ))
        })?
        .collect();
    let mut seen = HashSet::new();
    let mut hosts: Vec<HostSpec> = addrs
        .into_iter()
        .filter(|a| seen.insert(*a))
        .map(|a| HostSpec {
            name: a.to_string(),
            address: a.to_string(),
            token: None,
            targets: None,
            labels: BTreeMap::new(),
        })
        .collect();
    hosts.sort_by(|a, b| a.address.cmp(&b.address));
    if hosts.is_empty() {
        return Err(AgentError::Usage(format!(
            "--hosts k8s:{svc}: {fqdn} has no addresses (no agent pod is ready)"
        )));
    }
    Ok(hosts)
}

/// A hosts file as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HostsFile {
    /// The token of every host without its own.
    token_file: Option<PathBuf>,
    host: Vec<HostEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HostEntry {
    name: Option<String>,
    address: String,
    token_file: Option<PathBuf>,
    targets: Option<Vec<String>>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

/// `--hosts-file FILE`: `[[host]]` tables with `address` and optional
/// `name`, `targets`, `labels`, `token_file`. Relative token paths are
/// taken from the file's directory.
pub fn parse_file(path: &Path) -> Result<Vec<HostSpec>, AgentError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| AgentError::Usage(format!("--hosts-file {}: {e}", path.display())))?;
    let file: HostsFile = toml::from_str(&text).map_err(|e| {
        AgentError::Usage(format!(
            "--hosts-file {}: {}",
            path.display(),
            e.to_string().lines().collect::<Vec<_>>().join(" ")
        ))
    })?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let token_at = |p: &Path| crate::read_token(&dir.join(p));
    let shared = file.token_file.as_deref().map(token_at).transpose()?;
    let mut hosts = Vec::new();
    for h in file.host {
        let address = with_port(&h.address);
        let token = match &h.token_file {
            Some(p) => Some(token_at(p)?),
            None => shared.clone(),
        };
        if matches!(&h.targets, Some(t) if t.is_empty()) {
            return Err(AgentError::Usage(format!(
                "--hosts-file {}: host {address} has an empty targets list; give its targets or leave the key out",
                path.display()
            )));
        }
        for (k, v) in &h.labels {
            iorig_spec::check_label(k, v).map_err(|why| {
                AgentError::Usage(format!(
                    "--hosts-file {}: host {address}, label '{}': {why}",
                    path.display(),
                    iorig_spec::shown_label(k, 40)
                ))
            })?;
        }
        hosts.push(HostSpec {
            name: h.name.unwrap_or_else(|| address.clone()),
            address,
            token,
            targets: h.targets,
            labels: h.labels,
        });
    }
    if hosts.is_empty() {
        return Err(AgentError::Usage(format!(
            "--hosts-file {}: no [[host]] entries",
            path.display()
        )));
    }
    check_unique(&hosts)?;
    Ok(hosts)
}

/// One host named twice would run the workload twice over.
fn check_unique(hosts: &[HostSpec]) -> Result<(), AgentError> {
    let mut names = HashSet::new();
    let mut addrs = HashSet::new();
    for h in hosts {
        if !addrs.insert(h.address.as_str()) {
            return Err(AgentError::Usage(format!(
                "host {} is given twice; name each agent once",
                h.address
            )));
        }
        if !names.insert(h.name.as_str()) {
            return Err(AgentError::Usage(format!(
                "two hosts are named '{}'; give each a name of its own",
                h.name
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_gets_default_ports_and_refuses_a_host_twice() {
        let h = parse_list("a,b:9000,[::1]").expect("parses");
        let addrs: Vec<_> = h.iter().map(|h| h.address.as_str()).collect();
        assert_eq!(addrs, ["a:7420", "b:9000", "[::1]:7420"]);
        let e = parse_list("a:1,a:1").expect_err("twice");
        assert!(e.to_string().contains("given twice"), "{e}");
        assert!(parse_list("a,,b").is_err());
        assert!(parse_list("k8s:nodots").is_err());
    }

    #[test]
    fn a_hosts_file_names_its_typo() {
        let dir = std::env::temp_dir().join(format!("iorig-hosts-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let f = dir.join("hosts.toml");
        std::fs::write(&f, "[[host]]\naddress = \"a\"\ntargest = [\"/x\"]\n").expect("write");
        let e = parse_file(&f).expect_err("typo");
        assert!(e.to_string().contains("targest"), "{e}");
        std::fs::write(&f, "token_file = \"tok\"\n[[host]]\nname = \"n1\"\naddress = \"a\"\ntargets = [\"/x\"]\n[[host]]\naddress = \"b:1\"\n").expect("write");
        std::fs::write(dir.join("tok"), "0123456789abcdef0123\n").expect("write");
        let h = parse_file(&f).expect("parses");
        assert_eq!(h[0].name, "n1");
        assert_eq!(h[0].targets.as_deref(), Some(&["/x".to_string()][..]));
        assert_eq!(h[1].token.as_deref(), Some("0123456789abcdef0123"));
        // A label the store would not take is refused with the file.
        std::fs::write(
            &f,
            "[[host]]\naddress = \"a\"\nlabels = { rack = \"r1\\u001b[2J\" }\n",
        )
        .expect("write");
        let e = parse_file(&f).expect_err("control character");
        assert!(e.to_string().contains("label 'rack'"), "{e}");
        assert!(e.to_string().contains("U+001B"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
