//! The controller's options, from the command line's multi-host flags
//! ([`options`]) or from a plan's `[hosts]` table ([`plan_options`]).

use crate::controller::{ControllerOptions, RateShare};
use crate::hosts::{parse_file, parse_list};
use crate::AgentError;
use std::path::{Path, PathBuf};

/// The multi-host flags as given (`--hosts`, `--hosts-file`,
/// `--token-file`, `--rate-per-host`, `--lease`, `--skew-limit`, the TLS
/// files read), for [`options`] and [`plan_options`].
#[derive(Debug, Default, Clone)]
pub struct Flags {
    pub hosts: Option<String>,
    pub hosts_file: Option<PathBuf>,
    pub token_file: Option<PathBuf>,
    pub rate_per_host: Option<String>,
    pub lease: Option<String>,
    pub skew_limit: Option<String>,
    pub tls: Option<crate::TlsFiles>,
}

fn usage(e: impl ToString) -> AgentError {
    AgentError::Usage(e.to_string())
}

/// The controller's options from the command line; `rate_given`: the
/// workload has a `--rate` (the total), which `--rate-per-host` excludes.
pub fn options(f: &Flags, rate_given: bool) -> Result<ControllerOptions, AgentError> {
    let hosts = match (&f.hosts, &f.hosts_file) {
        (Some(list), None) => parse_list(list)?,
        (None, Some(file)) => parse_file(file)?,
        _ => return Err(usage("give --hosts or --hosts-file, not both")),
    };
    let mut o = ControllerOptions::new(hosts);
    if let Some(t) = &f.token_file {
        o.token = Some(crate::read_token(t)?);
    }
    if let Some(r) = &f.rate_per_host {
        if rate_given {
            return Err(usage(
                "give --rate (the total of all hosts) or --rate-per-host (each host's), not both",
            ));
        }
        let iops = iorig_spec::parse_count(r)
            .filter(|v| *v > 0.0)
            .ok_or_else(|| usage(format!("--rate-per-host {r}: give IOPS, e.g. 1000 or 5k")))?;
        o.rate = RateShare::PerHost(iops);
    }
    if let Some(l) = &f.lease {
        o.lease = iorig_spec::parse_duration(l).map_err(usage)?;
        if o.lease < std::time::Duration::from_secs(1) {
            return Err(usage(format!("--lease {l}: give at least 1s")));
        }
    }
    if let Some(s) = &f.skew_limit {
        o.skew_limit = iorig_spec::parse_duration(s).map_err(usage)?;
    }
    o.tls = f.tls.clone();
    Ok(o)
}

/// The agents a plan runs on: the command line's, else the plan's `[hosts]`
/// (paths relative to the plan file), else none. The command line's token,
/// TLS, lease and skew limit win over the plan's.
pub fn plan_options(
    f: &Flags,
    plan: &iorig_spec::Plan,
) -> Result<Option<ControllerOptions>, AgentError> {
    if f.rate_per_host.is_some() {
        return Err(usage(
            "--rate-per-host is for iorig run; a plan's rates are in its steps (each the total of all hosts)",
        ));
    }
    if f.hosts.is_some() || f.hosts_file.is_some() {
        return options(f, false).map(Some);
    }
    let Some(ph) = &plan.hosts else {
        return Ok(None);
    };
    let dir = Path::new(&plan.path)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let at = |f: &str| dir.join(f);
    let fail = |e: AgentError| usage(format!("plan {} [hosts]: {e}", plan.path));
    let hosts = match (&ph.list, &ph.file) {
        (Some(list), _) => parse_list(&list.join(",")).map_err(fail)?,
        (None, Some(file)) => parse_file(&at(file)).map_err(fail)?,
        (None, None) => return Ok(None),
    };
    let mut o = ControllerOptions::new(hosts);
    o.token = match (&f.token_file, &ph.token_file) {
        (Some(t), _) => Some(crate::read_token(t).map_err(fail)?),
        (None, Some(t)) => Some(crate::read_token(&at(t)).map_err(fail)?),
        (None, None) => None,
    };
    o.tls = f.tls.clone();
    let dur = |key: &str, v: &str| {
        iorig_spec::parse_duration(v)
            .map_err(|e| usage(format!("plan {} [hosts] {key}: {e}", plan.path)))
    };
    if let Some(l) = f.lease.as_deref().or(ph.lease.as_deref()) {
        o.lease = dur("lease", l)?;
    }
    if let Some(s) = f.skew_limit.as_deref().or(ph.skew_limit.as_deref()) {
        o.skew_limit = dur("skew_limit", s)?;
    }
    Ok(Some(o))
}
