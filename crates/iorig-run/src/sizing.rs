//! Sizing a step from the host that runs it: its targets (how many, how
//! large) and its cache tier, as HCIBench's easy run sizes its VMs and disks
//! from the cluster (`HCIBench/automation/lib/easy-run.rb`). The same code
//! runs on this machine for local steps and on each agent for its own part
//! of a multi-host step, so every host is sized from what it has.
//!
//! The rules (written out in `docs/plans.md`, "Sizing from the cache"):
//! - the cache is the one given (`cache_size`, `--cache-size`), else the
//!   cache tier the kernel shows in front of the targets (bcache), else a
//!   third of the targets' capacity, which is what HCIBench assumes for a
//!   datastore without a cache tier;
//! - a working set of `P% of cache` is P % of that cache, at most the
//!   targets' capacity, laid over every target as the same share of each
//!   (so the bytes add up to the working set);
//! - `threads_per_target = N` runs N workers per target.

use crate::RunError;
use iorig_engine::run as engine_run;
use iorig_spec::{format_bytes, HostSizing, Workload};

/// Where a host's cache size came from.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheSource {
    Given,
    /// The kernel's view: a bcache cache set on this device.
    Found(String),
    /// None given or found: a third of the targets' capacity.
    Assumed,
}

/// What sizing decided on one host, for the dry run and the log.
#[derive(Debug, Clone, PartialEq)]
pub struct Sized {
    pub targets: usize,
    pub capacity_bytes: u64,
    pub cache: Option<(u64, CacheSource)>,
    pub working_set_bytes: Option<u64>,
    /// The working set reached the targets' capacity (it could not be the
    /// share of the cache asked for).
    pub capped: bool,
    pub threads: Option<u32>,
}

impl Sized {
    /// One line: `4 targets, 64 GiB; cache 8 GiB (given); working set 75% of
    /// cache = 6 GiB (9.4 % of each target); 16 workers (4 per target)`.
    pub fn line(&self, pct: Option<f64>, per_target: Option<u32>) -> String {
        let mut parts = vec![format!(
            "{} target{}, {}",
            self.targets,
            if self.targets == 1 { "" } else { "s" },
            format_bytes(self.capacity_bytes)
        )];
        if let Some((bytes, src)) = &self.cache {
            let from = match src {
                CacheSource::Given => "given".to_string(),
                CacheSource::Found(dev) => format!("bcache on {dev}"),
                CacheSource::Assumed => {
                    "assumed: a third of the capacity, as HCIBench does without a cache tier; give --cache-size".to_string()
                }
            };
            parts.push(format!("cache {} ({from})", format_bytes(*bytes)));
        }
        if let (Some(ws), Some(p)) = (self.working_set_bytes, pct) {
            let share = ws as f64 / self.capacity_bytes.max(1) as f64 * 100.0;
            parts.push(format!(
                "working set {p}% of cache = {} ({share:.1} % of each target{})",
                format_bytes(ws),
                match (&self.cache, self.capped) {
                    (Some((c, _)), true) if *c >= self.capacity_bytes => {
                        "; capped, and the targets hold no more than the cache: this cannot exceed it"
                    }
                    (_, true) => "; capped: the targets are smaller than that",
                    _ => "",
                }
            ));
        }
        if let (Some(t), Some(k)) = (self.threads, per_target) {
            let s = if t == 1 { "" } else { "s" };
            parts.push(format!("{t} worker{s} ({k} per target)"));
        }
        parts.join("; ")
    }
}

/// What one step sized on one host, as `--dry-run` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct SizedStep {
    /// The step's number (from 1).
    pub step: usize,
    /// The host's name in the host list; `None`: this machine.
    pub host: Option<String>,
    /// [`Sized::line`].
    pub text: String,
}

impl SizedStep {
    /// `step 2: host node1: TEXT` (`step 2: TEXT` on this machine).
    pub fn notice(&self) -> String {
        match &self.host {
            Some(h) => format!("step {}: host {h}: {}", self.step, self.text),
            None => format!("step {}: {}", self.step, self.text),
        }
    }
}

/// `w` sized for this host by `s`, and what was decided (`None` when `s`
/// asks for nothing). Looks at the targets only (nothing is written).
pub fn apply(
    mut w: Workload,
    s: &HostSizing,
    allow_destroy: bool,
) -> Result<(Workload, Option<Sized>), RunError> {
    if s.is_empty() {
        return Ok((w, None));
    }
    let planned = engine_run::plan(&w, allow_destroy)?;
    let targets = planned.targets.len();
    let capacity_bytes: u64 = planned.targets.iter().map(|t| t.size_bytes).sum();
    let mut sized = Sized {
        targets,
        capacity_bytes,
        cache: None,
        working_set_bytes: None,
        capped: false,
        threads: None,
    };
    if let Some(k) = s.threads_per_target {
        let t = (k as usize * targets.max(1)).min(4096) as u32;
        w.threads = t;
        sized.threads = Some(t);
    }
    if let (Some(pct), true) = (s.cache_pct, capacity_bytes > 0) {
        let devices: Vec<&str> = planned
            .targets
            .iter()
            .filter_map(|t| t.device.as_deref())
            .collect();
        let cache = cache_of(s.cache_bytes, &devices, capacity_bytes);
        let (ws, capped) = working_set(pct, cache.0, capacity_bytes);
        w.range = iorig_spec::RangePct {
            start_pct: 0.0,
            end_pct: (ws as f64 / capacity_bytes as f64 * 100.0).min(100.0),
        };
        sized.cache = Some(cache);
        sized.working_set_bytes = Some(ws);
        sized.capped = capped;
    }
    w.validate().map_err(|e| RunError::usage(e.to_string()))?;
    Ok((w, Some(sized)))
}

/// The cache: given, else found on the targets' devices (the first that
/// has one), else a third of the capacity.
fn cache_of(given: Option<u64>, devices: &[&str], capacity_bytes: u64) -> (u64, CacheSource) {
    if let Some(b) = given {
        return (b, CacheSource::Given);
    }
    if let Some((b, dev)) = devices.iter().find_map(|d| iorig_blockdev::cache_tier(d)) {
        return (b, CacheSource::Found(dev));
    }
    (capacity_bytes / 3, CacheSource::Assumed)
}

/// `pct` % of `cache_bytes`, in whole MiB, at most `capacity_bytes`; and
/// whether the capacity capped it.
pub fn working_set(pct: f64, cache_bytes: u64, capacity_bytes: u64) -> (u64, bool) {
    const MIB: u64 = 1 << 20;
    let want = (cache_bytes as f64 * pct / 100.0) as u64;
    let want = (want / MIB).max(1) * MIB;
    if want >= capacity_bytes {
        (capacity_bytes, want > capacity_bytes)
    } else {
        (want, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_working_set_is_its_share_of_the_cache_capped_at_the_capacity() {
        const GIB: u64 = 1 << 30;
        // 75 % of an 8 GiB cache over 64 GiB of targets: 6 GiB.
        assert_eq!(working_set(75.0, 8 * GIB, 64 * GIB), (6 * GIB, false));
        // 400 % of 8 GiB is 32 GiB, within 64.
        assert_eq!(working_set(400.0, 8 * GIB, 64 * GIB), (32 * GIB, false));
        // 400 % of 32 GiB would be 128 GiB: capped at the 64 GiB there is.
        assert_eq!(working_set(400.0, 32 * GIB, 64 * GIB), (64 * GIB, true));
        // Whole MiB, never 0.
        assert_eq!(working_set(1.0, 1000, 64 * GIB), (1 << 20, false));
    }

    #[test]
    fn a_line_says_when_the_working_set_was_capped_and_when_it_cannot_exceed_the_cache() {
        const MIB: u64 = 1 << 20;
        let sized = |cache: u64, ws: u64, capped: bool| Sized {
            targets: 2,
            capacity_bytes: 64 * MIB,
            cache: Some((cache, CacheSource::Given)),
            working_set_bytes: Some(ws),
            capped,
            threads: Some(8),
        };
        let l = sized(8 * MIB, 6 * MIB, false).line(Some(75.0), Some(4));
        assert_eq!(
            l,
            "2 targets, 64.0 MiB; cache 8.00 MiB (given); working set 75% of cache = 6.00 MiB (9.4 % of each target); 8 workers (4 per target)"
        );
        let l = sized(32 * MIB, 64 * MIB, true).line(Some(400.0), None);
        assert!(
            l.ends_with("(100.0 % of each target; capped: the targets are smaller than that)"),
            "{l}"
        );
        let l = sized(64 * MIB, 64 * MIB, true).line(Some(400.0), None);
        assert!(l.contains("this cannot exceed it"), "{l}");
    }

    #[test]
    fn without_a_cache_given_or_found_a_third_of_the_capacity_is_assumed() {
        assert_eq!(cache_of(Some(5), &[], 300), (5, CacheSource::Given));
        assert_eq!(
            cache_of(None, &["no-such-device"], 300),
            (100, CacheSource::Assumed)
        );
    }
}
