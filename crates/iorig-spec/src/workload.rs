//! The workload: every parameter of one run, as read from a TOML file and the
//! command line, and its validated, fully resolved form.

pub use crate::dist::{AccessDist, MAX_ZONES};
use crate::fs::{
    FileIo, FileSelect, FileSizes, FormatMode, FsOp, FsRecord, FsWorkload, OpMix,
    DEFAULT_MAX_ENTRIES,
};
use crate::units::{format_size, parse_duration, parse_size};
use crate::{key, SpecError, WorkloadFile};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

/// Where `iorig run` puts its scratch file when no target is given.
pub const DEFAULT_TARGET: &str = "./iorig-scratch.dat";
/// Size of the default scratch file, and of any new file without `--size`.
pub const DEFAULT_SIZE_BYTES: u64 = 1 << 30;
/// Validation errors after which a run stops (vdbench stops after 50 too).
pub const DEFAULT_MAX_ERRORS: u32 = 50;

/// Block sizes with weights: `4k` or `4k:50,8k:30,64k:20`.
#[derive(Debug, Clone, PartialEq)]
pub struct BsSpec {
    /// (size in bytes, relative weight); weights need not sum to 100.
    pub sizes: Vec<(u64, u32)>,
}

impl BsSpec {
    /// The block sizes' rules of the one size-mix grammar ([`crate::mix`]):
    /// above 0, at most 4 GiB.
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let rules = crate::mix::MixRules {
            key: "bs",
            example: "4k:50,8k:50",
            zero_ok: false,
            max: Some((u64::from(u32::MAX), "4 GiB")),
        };
        Ok(BsSpec {
            sizes: crate::mix::parse(text, &rules)?,
        })
    }

    pub fn single(bytes: u64) -> Self {
        BsSpec {
            sizes: vec![(bytes, 1)],
        }
    }

    pub fn max_bytes(&self) -> u64 {
        self.sizes.iter().map(|s| s.0).max().unwrap_or(0)
    }

    pub fn min_bytes(&self) -> u64 {
        self.sizes.iter().map(|s| s.0).min().unwrap_or(0)
    }

    /// Offset alignment: the block size when it is fixed; for mixed sizes 4k, or
    /// the largest common divisor of the sizes when that is smaller.
    pub fn alignment_bytes(&self) -> u64 {
        if self.sizes.len() == 1 {
            return self.sizes[0].0;
        }
        let g = self.sizes.iter().fold(0, |acc, s| gcd(acc, s.0));
        g.min(4096)
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl fmt::Display for BsSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::mix::format(&self.sizes))
    }
}

/// What written blocks contain.
#[derive(Debug, Clone, PartialEq)]
pub enum DataPattern {
    /// Incompressible, never deduplicable (default).
    Random,
    Zero,
    /// Compresses about RATIO:1.
    Compress {
        ratio: f64,
    },
    /// About RATIO:1 of written 4 KiB chunks duplicate one another; every
    /// chunk, unique or not, compresses about `compress`:1 (1: not at all).
    Dedup {
        ratio: f64,
        compress: f64,
    },
    /// Every written buffer holds these bytes over and over from its start
    /// (fio's buffer_pattern): no stamps, so every block alike.
    Fill(std::sync::Arc<[u8]>),
}

impl DataPattern {
    /// The bytes a `Fill` repeats; empty for the other patterns.
    pub fn fill_bytes(&self) -> &[u8] {
        match self {
            DataPattern::Fill(bytes) => bytes,
            _ => &[],
        }
    }

    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let t = text.trim();
        let ratio = |a: &str| -> Result<f64, SpecError> {
            let r: f64 = a.trim().parse().map_err(|_| {
                SpecError::bad("data", text, format!("ratio '{a}' is not a number"))
            })?;
            if !(r.is_finite() && r >= 1.0) {
                return Err(SpecError::bad(
                    "data",
                    text,
                    "ratio must be 1 or more, e.g. compress:2",
                ));
            }
            Ok(r)
        };
        // A pattern first: a quoted one may hold a comma.
        if let Some(a) = t.strip_prefix("pattern:") {
            let p = parse_pattern(a).map_err(|why| SpecError::bad("data", text, why))?;
            return Ok(DataPattern::Fill(p.into()));
        }
        // Both reductions at once: dedup:R,compress:C (either order).
        if let Some((a, b)) = t.split_once(',') {
            let (dedup, compress) = match (a.trim().split_once(':'), b.trim().split_once(':')) {
                (Some(("dedup", d)), Some(("compress", c)))
                | (Some(("compress", c)), Some(("dedup", d))) => (ratio(d)?, ratio(c)?),
                _ => {
                    return Err(SpecError::bad(
                        "data",
                        text,
                        "two reductions are written dedup:RATIO,compress:RATIO",
                    ))
                }
            };
            return Ok(DataPattern::Dedup {
                ratio: dedup,
                compress,
            });
        }
        match t.split_once(':') {
            None if t == "random" => Ok(DataPattern::Random),
            None if t == "zero" => Ok(DataPattern::Zero),
            Some(("compress", a)) => Ok(DataPattern::Compress { ratio: ratio(a)? }),
            Some(("dedup", a)) => Ok(DataPattern::Dedup {
                ratio: ratio(a)?,
                compress: 1.0,
            }),
            _ => Err(SpecError::bad(
                "data",
                text,
                "use random, zero, compress:RATIO, dedup:RATIO, dedup:RATIO,compress:RATIO or pattern:0xHEX",
            )),
        }
    }
}

impl fmt::Display for DataPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataPattern::Random => write!(f, "random"),
            DataPattern::Zero => write!(f, "zero"),
            DataPattern::Compress { ratio } => write!(f, "compress:{ratio}"),
            DataPattern::Dedup { ratio, compress } if *compress == 1.0 => {
                write!(f, "dedup:{ratio}")
            }
            DataPattern::Dedup { ratio, compress } => {
                write!(f, "dedup:{ratio},compress:{compress}")
            }
            DataPattern::Fill(bytes) => write!(f, "pattern:{}", format_pattern(bytes)),
        }
    }
}

/// Which I/O engine carries the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EngineKind {
    IoUring,
    Psync,
    /// Copies to and from shared mappings of the targets (fio's mmap).
    Mmap,
    /// No syscalls, no target: measures iorig's own overhead.
    Null,
    /// Real pread/pwrite with injected faults; for tests.
    Fault,
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Extra open flags for writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMode {
    None,
    /// O_SYNC
    Sync,
    /// O_DSYNC
    Dsync,
}

impl SyncMode {
    pub fn name(self) -> &'static str {
        match self {
            SyncMode::None => "none",
            SyncMode::Sync => "sync",
            SyncMode::Dsync => "dsync",
        }
    }
}

/// Total I/O rate across all workers.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rate {
    Max,
    Iops(f64),
}

impl Rate {
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let t = text.trim();
        if t == "max" {
            return Ok(Rate::Max);
        }
        let v = crate::units::parse_count(t).ok_or_else(|| {
            SpecError::bad("rate", text, "use a number of IOPS (5000 or 5k) or max")
        })?;
        if !(v.is_finite() && v > 0.0) {
            return Err(SpecError::bad(
                "rate",
                text,
                "the rate must be above 0 IOPS",
            ));
        }
        Ok(Rate::Iops(v))
    }
}

/// The working set as a share of each target: `--range 10%-60%`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangePct {
    pub start_pct: f64,
    pub end_pct: f64,
}

impl RangePct {
    pub const FULL: RangePct = RangePct {
        start_pct: 0.0,
        end_pct: 100.0,
    };

    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let (a, b) = text
            .split_once('-')
            .ok_or_else(|| SpecError::bad("range", text, "write START%-END%, e.g. 0%-50%"))?;
        let pct = |s: &str| -> Result<f64, SpecError> {
            let s = s.trim().trim_end_matches('%');
            let v: f64 = s
                .parse()
                .map_err(|_| SpecError::bad("range", text, format!("'{s}' is not a percentage")))?;
            if !(0.0..=100.0).contains(&v) {
                return Err(SpecError::PercentOutOfRange {
                    field: "range",
                    value: text.to_string(),
                });
            }
            Ok(v)
        };
        let r = RangePct {
            start_pct: pct(a)?,
            end_pct: pct(b)?,
        };
        if r.end_pct <= r.start_pct {
            return Err(SpecError::bad(
                "range",
                text,
                "the range is empty; END% must be above START%",
            ));
        }
        Ok(r)
    }
}

impl fmt::Display for RangePct {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}%-{}%", self.start_pct, self.end_pct)
    }
}

/// The deepest queue one worker may keep (io_uring ring limits).
pub const MAX_QD: u32 = 16384;

/// A value that TOML may give as a string or a number (`size = "1g"`, `time = 30`).
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum StrOrNum {
    Str(String),
    Int(i64),
    Float(f64),
}

/// A command-line value is always text (parsed later, like a TOML string).
impl std::str::FromStr for StrOrNum {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(StrOrNum::Str(s.to_owned()))
    }
}

impl StrOrNum {
    /// A count as a workload writes it. One past i64 is written as i64's
    /// largest, which `resolve` refuses as too large (a plain cast would
    /// wrap to a negative number).
    pub fn count(v: u64) -> Self {
        StrOrNum::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }

    /// The value as text, as a flag would give it.
    pub fn text(&self) -> String {
        match self {
            StrOrNum::Str(s) => s.clone(),
            StrOrNum::Int(i) => i.to_string(),
            StrOrNum::Float(f) => f.to_string(),
        }
    }
}

/// One target or a list of them.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

// The declaration of `WorkloadFile` is the table of parameters: params.rs.

impl WorkloadFile {
    /// Reads a workload TOML file's text; `path` is only used in messages.
    pub fn from_toml(path: &str, text: &str) -> Result<Self, SpecError> {
        toml::from_str(text).map_err(|e| SpecError::BadFile {
            path: path.to_string(),
            why: crate::foreign::foreign_hint("workload", text)
                .unwrap_or_else(|| crate::suggest::unknown_field_hint(e.message())),
        })
    }

    /// Applies defaults and validates every parameter that can be checked without
    /// looking at a target. `default_seed` is used when no seed is given.
    pub fn resolve(&self, default_seed: u64) -> Result<Workload, SpecError> {
        for (k, v) in self.labels.iter().flatten() {
            crate::check_label(k, v).map_err(|why| SpecError::BadValue {
                field: "label",
                value: crate::shown_label(k, 40),
                why,
            })?;
        }
        let fs = self.resolve_fs()?;
        if let Some(f) = &fs {
            self.check_fs_keys(f)?;
        }
        let targets = self.resolve_targets(&fs)?;
        let (size_bytes, bs, read_bs, write_bs) = self.resolve_sizes()?;
        let (read_pct, trim_pct, random_pct) = self.resolve_mix()?;
        let (qd, submit_batch, threads, engine, direct, sync) = self.resolve_queue(&fs)?;
        let rate = match &self.rate {
            None => Rate::Max,
            Some(r) => Rate::parse(&r.text())?,
        };
        let direction_caps = self.resolve_direction_caps(&rate, read_pct, trim_pct)?;
        let time = dur(&self.time, Duration::from_secs(30))?;
        let warmup = dur(&self.warmup, Duration::ZERO)?;
        let interval = dur(&self.interval, Duration::from_secs(1))?;
        if time.is_zero() {
            return Err(SpecError::bad(
                "time",
                "0",
                "the run needs a time above 0, e.g. 30s",
            ));
        }
        if interval < Duration::from_millis(10) {
            return Err(SpecError::bad(
                "interval",
                format!("{interval:?}"),
                "the reporting interval must be at least 10ms",
            ));
        }
        let range = match &self.range {
            None => RangePct::FULL,
            Some(r) => RangePct::parse(r)?,
        };
        let dist = self.dist.unwrap_or(AccessDist::Uniform);
        let data = self.data.clone().unwrap_or(DataPattern::Random);
        let fault = self.fault.clone().unwrap_or_default();
        // A tree's workers take stall rules themselves (tests).
        if !fault.is_empty() && engine != EngineKind::Fault && fs.is_none() {
            return Err(SpecError::bad(
                "fault",
                fault.join(","),
                "fault rules need --engine fault",
            ));
        }

        let (verify, verify_after, verify_pattern, verify_only, max_errors) =
            self.resolve_verify()?;
        let (io_size_bytes, io_size_pct) = self.resolve_io_size()?;
        let cpus = match &self.cpus {
            None => Vec::new(),
            Some(text) => parse_cpu_list(text)?,
        };
        let target_order = self.target_order.unwrap_or(TargetOrder::Sequential);
        if target_order != TargetOrder::Sequential && random_pct > 0.0 {
            return Err(SpecError::bad(
                "target-order",
                target_order,
                "the order is of sequential I/O over several targets; random offsets already spread over all of them, so give --random 0 or drop --target-order",
            ));
        }
        let cpus_policy = self.cpus_policy.unwrap_or(CpuPolicy::Shared);
        if cpus_policy == CpuPolicy::Split && cpus.is_empty() {
            return Err(SpecError::bad(
                "cpus-policy",
                "split",
                "split hands out the CPUs of --cpus; give --cpus too, e.g. --cpus 0-3",
            ));
        }
        let arrivals = self.arrivals.unwrap_or(Arrivals::Uniform);
        // Without a rate there is no schedule to shape: a plan's step may
        // carry arrivals for its paced steps (a curve's rates, a list of
        // rates); `iorig run` refuses them alone (`arrivals_without_rate`).
        let think = self.resolve_think(rate)?;
        let start_delay = dur(&self.start_delay, Duration::ZERO)?;
        if start_delay >= warmup + time {
            return Err(SpecError::bad(
                "start-delay",
                format!("{start_delay:?}"),
                "the delay counts from the start, inside --warmup and --time, so it must be shorter than both together; lengthen --time",
            ));
        }
        let (run_length, skip_bytes, align_bytes) = self.resolve_offsets(random_pct)?;
        let sync_every = self.resolve_sync_every(engine)?;
        let zones = self.resolve_zones(dist, run_length)?;
        let min_iops = self.resolve_min_iops()?;
        let ignore_errors = match &self.ignore_errors {
            None => IgnoreErrors::None,
            Some(t) => IgnoreErrors::parse(t)?,
        };
        if ignore_errors != IgnoreErrors::None && verify {
            return Err(SpecError::bad(
                "ignore-errors",
                self.ignore_errors.as_deref().unwrap_or(""),
                "a failed write leaves its block unknown to validation; drop --ignore-errors or --verify",
            ));
        }
        let w = Workload {
            ignore_errors,
            min_iops,
            zones,
            sync_every,
            fsync_at_end: self.fsync_at_end.unwrap_or(false),
            unlink: self.unlink.unwrap_or(false),
            keep_cache: self.keep_cache.unwrap_or(false),
            drop_caches: self.drop_caches.unwrap_or(false),
            io_size_bytes,
            io_size_pct,
            run_length,
            skip_bytes,
            align_bytes,
            arrivals,
            think,
            start_delay,
            cpus,
            cpus_policy,
            target_order,
            verify,
            verify_after,
            verify_pattern,
            verify_only,
            max_errors,
            targets,
            size_bytes,
            bs,
            read_bs,
            write_bs,
            read_pct,
            trim_pct,
            random_pct,
            qd,
            submit_batch,
            threads,
            engine,
            direct,
            sync,
            rate,
            direction_caps,
            time,
            warmup,
            interval,
            range,
            dist,
            data,
            seed: self.seed.unwrap_or(default_seed),
            labels: self.labels.clone().unwrap_or_default(),
            fault,
            fs,
        };
        w.validate()?;
        Ok(w)
    }

    /// The targets: a tree's anchor, the default scratch file or those given.
    fn resolve_targets(&self, fs: &Option<FsWorkload>) -> Result<Vec<String>, SpecError> {
        let targets = match (&self.target, &fs) {
            (_, Some(f)) => vec![f.anchor.clone()],
            (None, None) => vec![DEFAULT_TARGET.to_string()],
            (Some(OneOrMany::One(t)), None) => vec![t.clone()],
            (Some(OneOrMany::Many(v)), None) if v.is_empty() => {
                return Err(SpecError::bad("target", "[]", "give at least one target"))
            }
            (Some(OneOrMany::Many(v)), None) => v.clone(),
        };
        for t in &targets {
            if t.trim().is_empty() {
                return Err(SpecError::bad("target", t, "empty path"));
            }
        }
        Ok(targets)
    }

    /// The size of new files and the block sizes (both directions, then each).
    fn resolve_sizes(&self) -> Result<BlockSizes, SpecError> {
        let size_bytes = match &self.size {
            None => None,
            Some(s) => {
                let v = parse_size(&s.text())?;
                if v == 0 {
                    return Err(SpecError::bad("size", s.text(), "size 0; give e.g. 1g"));
                }
                Some(v)
            }
        };
        let bs = match &self.bs {
            None => BsSpec::single(4096),
            Some(s) => BsSpec::parse(&s.text())?,
        };
        let direction =
            |v: &Option<StrOrNum>, key: &'static str| -> Result<Option<BsSpec>, SpecError> {
                v.as_ref()
                    .map(|s| {
                        BsSpec::parse(&s.text()).map_err(|e| match e {
                            SpecError::BadValue { value, why, .. } => SpecError::BadValue {
                                field: key,
                                value,
                                why,
                            },
                            other => other,
                        })
                    })
                    .transpose()
            };
        let read_bs = direction(&self.read_bs, "read-bs")?;
        let write_bs = direction(&self.write_bs, "write-bs")?;
        Ok((size_bytes, bs, read_bs, write_bs))
    }

    /// `read_rate` and `write_rate`: caps of one direction's IOPS.
    fn resolve_direction_caps(
        &self,
        rate: &Rate,
        read_pct: f64,
        trim_pct: f64,
    ) -> Result<DirectionCaps, SpecError> {
        let cap = |v: &Option<StrOrNum>, key: &'static str, share: f64, what: &str| {
            let Some(v) = v else { return Ok(None) };
            let bad =
                || SpecError::bad(key, v.text(), "give the direction's IOPS, a number above 0");
            let iops: f64 = v.text().trim().parse().map_err(|_| bad())?;
            if !(iops.is_finite() && iops > 0.0) {
                return Err(bad());
            }
            if share <= 0.0 {
                return Err(SpecError::bad(
                    key,
                    v.text(),
                    format!("the workload {what}; drop it"),
                ));
            }
            if *rate != Rate::Max {
                return Err(SpecError::bad(
                    key,
                    v.text(),
                    "--rate paces the whole workload; give --rate, or caps per direction, not both",
                ));
            }
            Ok(Some(iops))
        };
        Ok(DirectionCaps {
            read_iops: cap(&self.read_rate, "read-rate", read_pct, "reads nothing")?,
            write_iops: cap(
                &self.write_rate,
                "write-rate",
                100.0 - read_pct - trim_pct,
                "writes nothing",
            )?,
        })
    }

    /// fio's `rw` word, when given.
    fn rw_mode(&self) -> Result<Option<RwMode>, SpecError> {
        self.rw
            .as_ref()
            .map(|v| RwMode::parse(&v.text()))
            .transpose()
    }

    /// The shares of reads, trims and random offsets.
    fn resolve_mix(&self) -> Result<(f64, f64, f64), SpecError> {
        let rw = self.rw_mode()?;
        let (read_default, trim_default, random_default) =
            rw.map_or((100.0, 0.0, 100.0), |m| m.shares());
        let read_pct = pct(&self.read, "read", read_default)?;
        if let Some(m) = rw.filter(|m| !m.mixed() && self.read.is_some()) {
            if (read_pct - read_default).abs() > 1e-9 {
                return Err(SpecError::bad(
                    "read",
                    read_pct,
                    format!(
                        "--rw {} does not mix reads and writes; give --rw {} with --read, or drop --rw",
                        m.word,
                        if m.random { "randrw" } else { "rw" }
                    ),
                ));
            }
        }
        let trim_pct = pct(&self.trim, "trim", trim_default)?;
        if read_pct + trim_pct > 100.0 {
            return Err(SpecError::bad(
                "trim",
                self.trim.as_ref().map(StrOrNum::text).unwrap_or_default(),
                format!(
                    "reads ({read_pct}%) and trims together are over 100%; writes take what is left, so give --trim {} or less",
                    100.0 - read_pct
                ),
            ));
        }
        let random_pct = pct(&self.random, "random", random_default)?;
        Ok((read_pct, trim_pct, random_pct))
    }

    /// How I/O is issued: depth, batch, workers, engine, O_DIRECT and O_SYNC.
    fn resolve_queue(
        &self,
        fs: &Option<FsWorkload>,
    ) -> Result<(u32, u32, u32, EngineKind, bool, SyncMode), SpecError> {
        // io_uring rings hold at most 32768 entries and iorig sizes the CQ at
        // twice the depth; deeper queues per worker are better made with threads.
        let qd = count(&self.qd, key::qd, 1, MAX_QD)?;
        let submit_batch = count(&self.submit_batch, "submit-batch", 1, MAX_QD)?;
        if submit_batch > qd {
            return Err(SpecError::bad(
                "submit-batch",
                submit_batch,
                format!("larger than qd {qd}; give a value from 1 to {qd}"),
            ));
        }
        let threads = count(&self.threads, "threads", 1, 4096)?;
        let engine = match (&self.engine, &fs) {
            // File-system operations are system calls, one at a time per
            // thread (check_fs_keys refuses any other engine).
            (_, Some(_)) => EngineKind::Psync,
            (None, None) => EngineKind::IoUring,
            (Some(e), None) => *e,
        };
        let direct = match (self.direct, self.buffered) {
            (Some(true), Some(true)) => {
                return Err(SpecError::bad(
                    "direct",
                    "direct and buffered",
                    "choose one of --direct and --buffered",
                ))
            }
            (Some(d), _) => d,
            (None, Some(b)) => !b,
            // A mapping is the page cache's: mmap is buffered unless told.
            (None, None) => engine != EngineKind::Mmap,
        };
        let sync = match (self.sync.unwrap_or(false), self.dsync.unwrap_or(false)) {
            (true, true) => {
                return Err(SpecError::bad(
                    "sync",
                    "sync and dsync",
                    "choose one of --sync and --dsync",
                ))
            }
            (true, false) => SyncMode::Sync,
            (false, true) => SyncMode::Dsync,
            (false, false) => SyncMode::None,
        };
        Ok((qd, submit_batch, threads, engine, direct, sync))
    }

    /// Data validation: whether it is on, its forms and its error limit.
    fn resolve_verify(&self) -> Result<Validation, SpecError> {
        let verify_after = self.verify_after.unwrap_or(false);
        let verify_pattern = self
            .verify_pattern
            .as_deref()
            .map(|p| parse_pattern(p).map_err(|why| SpecError::bad("verify-pattern", p, why)))
            .transpose()?;
        let verify_only = self.verify_only.unwrap_or(false);
        let verify =
            verify_after || verify_only || verify_pattern.is_some() || self.verify.unwrap_or(false);
        let max_errors = count(&self.max_errors, "max-errors", DEFAULT_MAX_ERRORS, u32::MAX)?;
        if !verify {
            if let Some(m) = &self.max_errors {
                return Err(SpecError::bad(
                    "max-errors",
                    m.text(),
                    "it counts data validation errors; add --verify (or verify = true) or drop it",
                ));
            }
        }
        Ok((
            verify,
            verify_after,
            verify_pattern,
            verify_only,
            max_errors,
        ))
    }

    /// The bytes after which the run ends, or that share of the working set.
    fn resolve_io_size(&self) -> Result<(Option<u64>, Option<f64>), SpecError> {
        let mut io_size_pct = None;
        let io_size_bytes = match &self.io_size {
            None => None,
            Some(s) if s.text().trim().ends_with('%') => {
                let t = s.text();
                let v: f64 = t.trim().trim_end_matches('%').trim().parse().map_err(|_| {
                    SpecError::bad(
                        "io-size",
                        &t,
                        "give bytes (10g) or a share of the working set (100%)",
                    )
                })?;
                if !(v.is_finite() && v > 0.0 && v <= 1e6) {
                    return Err(SpecError::bad(
                        "io-size",
                        &t,
                        "a share of the working set above 0%, e.g. 100% for one pass",
                    ));
                }
                io_size_pct = Some(v);
                None
            }
            Some(s) => {
                let v = parse_size(&s.text())?;
                if v == 0 {
                    return Err(SpecError::bad(
                        "io-size",
                        s.text(),
                        "0 bytes; give e.g. 10g, or drop it to run for --time",
                    ));
                }
                Some(v)
            }
        };
        Ok((io_size_bytes, io_size_pct))
    }

    /// The pauses of think time, and whether they move a rate's schedule.
    fn resolve_think(&self, rate: Rate) -> Result<Option<Think>, SpecError> {
        let paced = rate != Rate::Max || self.read_rate.is_some() || self.write_rate.is_some();
        let think = match &self.think_time {
            None => {
                if self.think_every.is_some()
                    || self.think_spin.is_some()
                    || self.think_moves_rate.is_some()
                {
                    return Err(SpecError::bad(
                        "think-time",
                        "missing",
                        "--think-every, --think-spin and --think-moves-rate shape the pauses of --think-time; add --think-time DUR",
                    ));
                }
                None
            }
            Some(t) => {
                let time = parse_duration(&t.text())?;
                let spin = dur(&self.think_spin, Duration::ZERO)?;
                if spin > time {
                    return Err(SpecError::bad(
                        "think-spin",
                        format!("{spin:?}"),
                        "it is the spinning part of --think-time, so at most that long",
                    ));
                }
                let moves_rate = self.think_moves_rate.unwrap_or(false);
                if moves_rate && !paced {
                    return Err(SpecError::bad(
                        "think-moves-rate",
                        "true",
                        "it moves the schedule of --rate, --read-rate or --write-rate; give one, or leave it out",
                    ));
                }
                let every = count(&self.think_every, "think-every", 1, u32::MAX)?;
                (!time.is_zero()).then_some(Think {
                    time,
                    spin,
                    every,
                    moves_rate,
                })
            }
        };
        Ok(think)
    }

    /// How offsets follow each other: runs after a seek, skips, alignment.
    fn resolve_offsets(&self, random_pct: f64) -> Result<(u32, u64, Option<u64>), SpecError> {
        // fio's rw=randread:8 (I/Os per seek) and rw=read:8k (a skip).
        let suffix = self.rw_mode()?.and_then(|m| m.suffix);
        let run_length = match (&self.run_length, suffix) {
            (None, Some(RwSuffix::PerSeek(n))) => n,
            _ => count(&self.run_length, "run-length", 1, u32::MAX)?,
        };
        if run_length > 1 && random_pct < 100.0 {
            return Err(SpecError::bad(
                "run-length",
                run_length,
                "runs follow each random seek of a fully random workload; drop --random or --run-length",
            ));
        }
        let skip_bytes = match &self.skip {
            None => match suffix {
                Some(RwSuffix::Skip(b)) => b,
                _ => 0,
            },
            Some(v) => parse_size(&v.text())?,
        };
        if skip_bytes > 0 && random_pct >= 100.0 && run_length <= 1 {
            return Err(SpecError::bad(
                "skip",
                format_size(skip_bytes),
                "skips lie between sequential I/Os; add --random 0 (or --run-length N)",
            ));
        }
        let align_bytes = match &self.align {
            None => None,
            Some(v) => {
                let a = parse_size(&v.text())?;
                if a == 0 || !a.is_multiple_of(512) || a > 1 << 30 {
                    return Err(SpecError::bad(
                        "align",
                        v.text(),
                        "offsets align to a multiple of 512 bytes, e.g. 512 or 4k",
                    ));
                }
                Some(a)
            }
        };
        Ok((run_length, skip_bytes, align_bytes))
    }

    /// fsync or fdatasync after every N writes.
    fn resolve_sync_every(&self, engine: EngineKind) -> Result<Option<SyncEvery>, SpecError> {
        let sync_every = match (&self.fsync_every, &self.fdatasync_every) {
            (Some(_), Some(_)) => {
                return Err(SpecError::bad(
                    "fsync-every",
                    "and fdatasync-every",
                    "give one of --fsync-every and --fdatasync-every",
                ))
            }
            (Some(_), None) => Some(SyncEvery {
                writes: count(&self.fsync_every, "fsync-every", 1, u32::MAX)?,
                data_only: false,
            }),
            (None, Some(_)) => Some(SyncEvery {
                writes: count(&self.fdatasync_every, "fdatasync-every", 1, u32::MAX)?,
                data_only: true,
            }),
            (None, None) => None,
        };
        if (sync_every.is_some() || self.fsync_at_end == Some(true)) && engine == EngineKind::Null {
            let given = match sync_every {
                Some(s) if s.data_only => "fdatasync-every",
                Some(_) => "fsync-every",
                None => "fsync-at-end",
            };
            return Err(SpecError::bad(
                given,
                "with --engine null",
                "the null engine writes nothing to sync; use io_uring or psync",
            ));
        }
        Ok(sync_every)
    }

    /// Zones (fio's zonemode=strided).
    fn resolve_zones(&self, dist: AccessDist, run_length: u32) -> Result<Option<Zones>, SpecError> {
        let zones = match (&self.zone_range, &self.zone_size) {
            (None, None) => {
                if self.zone_skip.is_some() {
                    return Err(SpecError::bad(
                        "zone-skip",
                        "without zones",
                        "it is the gap between zones; add --zone-range",
                    ));
                }
                None
            }
            (r, s) => {
                let size_of = |v: &Option<StrOrNum>| -> Result<Option<u64>, SpecError> {
                    v.as_ref().map(|v| parse_size(&v.text())).transpose()
                };
                // Either alone gives both, as fio fills one from the other.
                let range_bytes = size_of(r)?.or(size_of(s)?).unwrap_or(0);
                let size_bytes = size_of(s)?.unwrap_or(range_bytes);
                let skip_bytes = size_of(&self.zone_skip)?.unwrap_or(0);
                if range_bytes == 0 || size_bytes == 0 {
                    return Err(SpecError::bad(
                        "zone-range",
                        "0",
                        "a zone needs a size above 0, e.g. --zone-range 64m",
                    ));
                }
                if dist != AccessDist::Uniform || run_length > 1 {
                    return Err(SpecError::bad(
                        "zone-range",
                        format_size(range_bytes),
                        "I/O inside a zone is uniform or sequential; drop --dist and --run-length",
                    ));
                }
                Some(Zones {
                    range_bytes,
                    size_bytes,
                    skip_bytes,
                })
            }
        };
        Ok(zones)
    }

    /// The IOPS floor below which the run fails.
    fn resolve_min_iops(&self) -> Result<Option<f64>, SpecError> {
        let min_iops = match &self.min_iops {
            None => None,
            Some(v) => {
                let t = v.text();
                let n = crate::units::parse_count(&t)
                    .filter(|n| n.is_finite() && *n > 0.0)
                    .ok_or_else(|| {
                        SpecError::bad("min-iops", &t, "give IOPS above 0, e.g. 5000 or 5k")
                    })?;
                Some(n)
            }
        };
        Ok(min_iops)
    }

    /// Moves a lone target that is a directory (`is_dir` says) to `anchor`:
    /// a directory given as the target makes a file-system workload.
    pub fn take_directory_target(&mut self, is_dir: impl Fn(&str) -> bool) {
        if self.anchor.is_some() {
            return;
        }
        let lone = match &self.target {
            Some(OneOrMany::One(t)) => Some(t.clone()),
            Some(OneOrMany::Many(v)) if v.len() == 1 => Some(v[0].clone()),
            _ => None,
        };
        if let Some(t) = lone.filter(|t| is_dir(t)) {
            self.anchor = Some(t);
            self.target = None;
        }
    }

    /// The keys that only mean something for a directory tree, given.
    fn fs_keys_given(&self) -> Vec<&'static str> {
        self.given()
            .into_iter()
            .filter(|k| WorkloadFile::has_role(k, crate::Role::Fs))
            .collect()
    }

    /// The tree and its operations, when the workload has an anchor.
    fn resolve_fs(&self) -> Result<Option<FsWorkload>, SpecError> {
        let Some(anchor) = &self.anchor else {
            if let Some(key) = self.fs_keys_given().first() {
                return Err(SpecError::bad(
                    "anchor",
                    "(none)",
                    format!(
                        "{key} describes a directory tree; give the tree's directory with --anchor DIR (or as --target)"
                    ),
                ));
            }
            return Ok(None);
        };
        if anchor.trim().is_empty() {
            return Err(SpecError::bad("anchor", anchor, "empty path"));
        }
        if self.target.is_some() {
            return Err(SpecError::bad(
                "target",
                anchor,
                "a file-system workload has one directory; give it once, as --anchor or as --target",
            ));
        }
        let whole = |v: &Option<StrOrNum>, field: &'static str, default: u64, min: u64| {
            let Some(v) = v else { return Ok(default) };
            let text = v.text();
            let n: u64 = text
                .trim()
                .parse()
                .map_err(|_| SpecError::bad(field, &text, "not a whole number"))?;
            if n < min {
                return Err(SpecError::bad(
                    field,
                    &text,
                    format!("must be at least {min}"),
                ));
            }
            Ok(n)
        };
        let depth = whole(&self.depth, "depth", 1, 0)?;
        let width = whole(&self.width, "width", 4, 1)?;
        let files = whole(&self.files, "files", 256, 0)?;
        let (Ok(depth), Ok(width)) = (u32::try_from(depth), u32::try_from(width)) else {
            return Err(SpecError::bad(
                "depth",
                depth,
                "depth and width are far too large; give a tree you can hold",
            ));
        };
        let file_sizes = match &self.file_size {
            None => FileSizes::single(64 << 10),
            Some(s) => FileSizes::parse(&s.text())?,
        };
        let total_size_bytes = match &self.total_size {
            None => None,
            Some(s) => {
                let v = parse_size(&s.text())?;
                if v == 0 {
                    return Err(SpecError::bad(
                        "total-size",
                        s.text(),
                        "a total of 0 holds no file; give e.g. 1g or leave it out",
                    ));
                }
                Some(v)
            }
        };
        let ops = match &self.ops {
            None => OpMix::single(FsOp::Read),
            Some(o) => OpMix::parse(o)?,
        };
        let fileio = self.fileio.unwrap_or(FileIo::Sequential);
        let fileselect = self.fileselect.unwrap_or(FileSelect::Random);
        let stopafter = match &self.stopafter {
            None => None,
            Some(_) => Some(count(&self.stopafter, "stopafter", 1, u32::MAX)?),
        };
        let passes = match &self.file_passes {
            None => None,
            Some(_) => {
                if fileselect != FileSelect::Sequential {
                    return Err(SpecError::bad(
                        "file-passes",
                        self.file_passes
                            .as_ref()
                            .map(StrOrNum::text)
                            .unwrap_or_default(),
                        "a pass goes over the files in order; add --fileselect sequential",
                    ));
                }
                Some(u64::from(count(
                    &self.file_passes,
                    "file-passes",
                    1,
                    u32::MAX,
                )?))
            }
        };
        let format = self.format.unwrap_or(FormatMode::Restart);
        let max_entries = whole(&self.max_entries, "max-entries", DEFAULT_MAX_ENTRIES, 1)?;
        let f = FsWorkload {
            anchor: anchor.clone(),
            depth,
            width,
            files,
            file_sizes,
            total_size_bytes,
            ops,
            fileio,
            fileselect,
            stopafter,
            passes,
            format,
            cleanup: self.cleanup.unwrap_or(false),
            max_entries,
        };
        if f.file_slots() == 0 {
            return Err(SpecError::bad(
                "files",
                files,
                "the tree holds no file slot; give --files 1 or more",
            ));
        }
        let entries = f.entries();
        if entries > max_entries {
            return Err(SpecError::bad(
                "files",
                format!("depth {depth}, width {width}, files {files}"),
                format!(
                    "the tree would hold {entries} entries, over the limit of {max_entries}; make it smaller or raise --max-entries"
                ),
            ));
        }
        Ok(Some(f))
    }

    /// Block-workload keys have no meaning in a tree: refused, with what to
    /// give instead.
    fn check_fs_keys(&self, f: &FsWorkload) -> Result<(), SpecError> {
        let refuse = |key: &'static str, given: bool, instead: &str| {
            if given {
                Err(SpecError::bad(
                    key,
                    "(given)",
                    format!("a file-system workload has no {key}; {instead}"),
                ))
            } else {
                Ok(())
            }
        };
        refuse("size", self.size.is_some(), "give --file-size and --files")?;
        refuse(
            "read",
            self.read.is_some(),
            "give the operations with --ops",
        )?;
        refuse(
            "trim",
            self.trim.is_some(),
            "give the operations with --ops",
        )?;
        refuse("random", self.random.is_some(), "give --fileio random")?;
        refuse(
            "read-rate",
            self.read_rate.is_some(),
            "pace a tree's operations with --rate",
        )?;
        refuse(
            "write-rate",
            self.write_rate.is_some(),
            "pace a tree's operations with --rate",
        )?;
        refuse(
            "cpus-policy",
            self.cpus_policy == Some(CpuPolicy::Split),
            "a tree's workers share --cpus",
        )?;
        refuse(
            "target-order",
            self.target_order.is_some(),
            "give --fileselect",
        )?;
        refuse(
            "rw",
            self.rw.is_some(),
            "give the operations with --ops and --fileio",
        )?;
        refuse("range", self.range.is_some(), "give --total-size")?;
        refuse(
            "dist",
            self.dist.is_some(),
            "give --fileselect with the distribution, e.g. zipf:1.2",
        )?;
        refuse(
            "io-size",
            self.io_size.is_some(),
            "end it with --time (or --stopafter per open file)",
        )?;
        refuse(
            "think-time",
            self.think_time.is_some()
                || self.think_every.is_some()
                || self.think_spin.is_some()
                || self.think_moves_rate.is_some(),
            "pace a tree's operations with --rate",
        )?;
        refuse(
            "start-delay",
            self.start_delay.is_some(),
            "a tree's workers start together; put a pause step before it",
        )?;
        refuse(
            "arrivals",
            self.arrivals.is_some(),
            "a tree's operations are paced evenly",
        )?;
        refuse(
            "run-length",
            self.run_length.is_some() || self.skip.is_some(),
            "give --fileio sequential or random",
        )?;
        refuse("align", self.align.is_some(), "a file's I/Os align to --bs")?;
        refuse(
            "zone-range",
            self.zone_range.is_some() || self.zone_size.is_some() || self.zone_skip.is_some(),
            "a tree has files, not zones",
        )?;
        refuse(
            "fsync-every",
            self.fsync_every.is_some() || self.fdatasync_every.is_some(),
            "give fsync among --ops",
        )?;
        refuse(
            "fsync-at-end",
            self.fsync_at_end == Some(true),
            "give fsync among --ops",
        )?;
        refuse(
            "ignore-errors",
            self.ignore_errors.is_some(),
            "it is for block workloads",
        )?;
        refuse(
            "unlink",
            self.unlink.is_some(),
            "give --cleanup to remove the tree",
        )?;
        refuse(
            "keep-cache",
            self.keep_cache.is_some(),
            "a tree's files are not invalidated one by one; --drop-caches drops the whole page cache before a step",
        )?;
        refuse(
            "submit-batch",
            self.submit_batch.is_some(),
            "operations are one at a time per thread",
        )?;
        if let Some(q) = &self.qd {
            if q.text().trim() != "1" {
                return Err(SpecError::bad(
                    key::qd,
                    q.text(),
                    "file-system operations are one at a time per thread; give more --threads",
                ));
            }
        }
        if let Some(e) = self.engine {
            if e != EngineKind::Psync {
                return Err(SpecError::bad(
                    "engine",
                    e,
                    "file-system operations are system calls, one at a time per thread; drop --engine (or give psync)",
                ));
            }
        }
        if self.verify.unwrap_or(false) || self.verify_after.unwrap_or(false) {
            if let Some((op, _)) = f.ops.ops.iter().find(|(o, _)| o.changes_names()) {
                return Err(SpecError::bad(
                    "verify",
                    "true",
                    format!(
                        "validation follows the data of a fixed set of files, and {op} changes the set; drop {op} from --ops or drop --verify"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Most bytes of a `verify_pattern` (fio's limit).
pub const MAX_PATTERN_BYTES: usize = 512;

/// A `verify_pattern`: `0x` and hex digits (an odd count gets a leading
/// zero, as fio reads it), or a string in single or double quotes.
pub fn parse_pattern(text: &str) -> Result<Vec<u8>, String> {
    let t = text.trim();
    let bytes = if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err("write 0x and hex digits, e.g. 0xdeadbeef, or a 'quoted' string".into());
        }
        let padded = if hex.len() % 2 == 1 {
            format!("0{hex}")
        } else {
            hex.to_string()
        };
        (0..padded.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&padded[i..i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|e| e.to_string())?
    } else if let Some(q) = t
        .strip_prefix('\'')
        .and_then(|r| r.strip_suffix('\''))
        .or_else(|| t.strip_prefix('"').and_then(|r| r.strip_suffix('"')))
    {
        q.as_bytes().to_vec()
    } else {
        return Err(
            "write 0x and hex digits, e.g. 0xdeadbeef, or a 'quoted' string (fio's offset and number formats are not supported)"
                .into(),
        );
    };
    if bytes.is_empty() || bytes.len() > MAX_PATTERN_BYTES {
        return Err(format!("a pattern holds 1 to {MAX_PATTERN_BYTES} bytes"));
    }
    Ok(bytes)
}

/// A pattern as `0x` and hex digits.
pub fn format_pattern(bytes: &[u8]) -> String {
    let mut t = String::from("0x");
    for b in bytes {
        t.push_str(&format!("{b:02x}"));
    }
    t
}

/// The size of new files, the block sizes, and those of reads and of
/// writes when they differ.
type BlockSizes = (Option<u64>, BsSpec, Option<BsSpec>, Option<BsSpec>);

/// Data validation: on, read back after writing, the pattern, read only, the
/// error limit.
type Validation = (bool, bool, Option<Vec<u8>>, bool, u32);

/// A duration given, or `default`.
fn dur(v: &Option<StrOrNum>, default: Duration) -> Result<Duration, SpecError> {
    match v {
        None => Ok(default),
        Some(s) => parse_duration(&s.text()),
    }
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// fio's `rw` word: which directions, random or sequential, and its `:N`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct RwMode {
    /// The word as fio spells it (for messages).
    word: &'static str,
    read_pct: f64,
    trim_pct: f64,
    random: bool,
    suffix: Option<RwSuffix>,
}

/// What fio's `:N` after the word means: I/Os per seek when random, bytes
/// skipped after each I/O when sequential.
#[derive(Debug, Clone, Copy, PartialEq)]
enum RwSuffix {
    PerSeek(u32),
    Skip(u64),
}

impl RwMode {
    /// Every word fio 3.33 takes, with its shares (read, trim, random).
    const WORDS: &'static [(&'static str, f64, f64, bool)] = &[
        ("read", 100.0, 0.0, false),
        ("write", 0.0, 0.0, false),
        ("trim", 0.0, 100.0, false),
        ("randread", 100.0, 0.0, true),
        ("randwrite", 0.0, 0.0, true),
        ("randtrim", 0.0, 100.0, true),
        ("rw", 50.0, 0.0, false),
        ("readwrite", 50.0, 0.0, false),
        ("randrw", 50.0, 0.0, true),
    ];

    fn parse(text: &str) -> Result<RwMode, SpecError> {
        let t = text.trim().to_ascii_lowercase();
        let (word, n) = match t.split_once(':') {
            Some((w, n)) => (w.trim(), Some(n.trim())),
            None => (t.as_str(), None),
        };
        let Some(&(word, read_pct, trim_pct, random)) =
            Self::WORDS.iter().find(|(w, ..)| *w == word)
        else {
            let why = if word.contains("trimwrite") {
                "fio's trimwrite (trim each block, then write it) is not supported; give --rw write with --trim PCT".to_string()
            } else {
                format!(
                    "give one of {}, optionally with :N",
                    Self::WORDS
                        .iter()
                        .map(|w| w.0)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return Err(SpecError::bad("rw", text, why));
        };
        let suffix = match n {
            None => None,
            Some(n) if random => {
                let per_seek: u32 = n.parse().ok().filter(|&k| k >= 1).ok_or_else(|| {
                    SpecError::bad("rw", text, "after a random word, :N is the I/Os per seek, a whole number of 1 or more (randread:8)")
                })?;
                Some(RwSuffix::PerSeek(per_seek))
            }
            Some(n) => Some(RwSuffix::Skip(parse_size(n)?)),
        };
        Ok(RwMode {
            word,
            read_pct,
            trim_pct,
            random,
            suffix,
        })
    }

    /// The defaults it gives --read, --trim and --random.
    fn shares(&self) -> (f64, f64, f64) {
        (
            self.read_pct,
            self.trim_pct,
            if self.random { 100.0 } else { 0.0 },
        )
    }

    /// Whether it mixes reads and writes (fio's rwmixread applies).
    fn mixed(&self) -> bool {
        self.read_pct > 0.0 && self.read_pct < 100.0
    }
}

fn pct(v: &Option<StrOrNum>, field: &'static str, default: f64) -> Result<f64, SpecError> {
    let Some(v) = v else { return Ok(default) };
    let text = v.text();
    let p: f64 = text
        .trim()
        .trim_end_matches('%')
        .parse()
        .map_err(|_| SpecError::bad(field, &text, "not a number; give a percentage 0-100"))?;
    if !(0.0..=100.0).contains(&p) {
        return Err(SpecError::PercentOutOfRange { field, value: text });
    }
    Ok(p)
}

fn count(
    v: &Option<StrOrNum>,
    field: &'static str,
    default: u32,
    max: u32,
) -> Result<u32, SpecError> {
    let Some(v) = v else { return Ok(default) };
    let text = v.text();
    let n: i64 = text
        .trim()
        .parse()
        .map_err(|_| SpecError::bad(field, &text, "not a whole number"))?;
    if n < 1 || n > max as i64 {
        return Err(SpecError::bad(
            field,
            &text,
            format!("must be between 1 and {max}"),
        ));
    }
    Ok(n as u32)
}

/// Most CPUs a `cpus` list may name (a CPU number's bound, as glibc's
/// cpu_set_t).
const MAX_CPUS: usize = 1024;

/// `0-3,8,10-11` as CPU numbers, sorted, each once.
pub fn parse_cpu_list(text: &str) -> Result<Vec<usize>, SpecError> {
    let bad = |why: &str| SpecError::bad("cpus", text, why.to_string());
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(bad("an empty entry; write e.g. 0-3,8"));
        }
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let n = |v: &str| -> Result<usize, SpecError> {
            v.parse::<usize>()
                .ok()
                .filter(|n| *n < MAX_CPUS)
                .ok_or_else(|| {
                    bad(&format!(
                        "'{v}' is not a CPU number (0 to {})",
                        MAX_CPUS - 1
                    ))
                })
        };
        let (a, b) = (n(a)?, n(b)?);
        if a > b {
            return Err(bad(&format!(
                "'{part}' runs backwards; write the lower CPU first"
            )));
        }
        out.extend(a..=b);
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// The order sequential I/O takes over several targets (fio's
/// file_service_type): one after another, or each I/O (or each `per_turn`
/// I/Os) at the next or a random one of them, each read on from where it
/// was left.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetOrder {
    Sequential,
    RoundRobin { per_turn: u32 },
    Random { per_turn: u32 },
}

impl TargetOrder {
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let t = text.trim().to_ascii_lowercase();
        let (word, n) = match t.split_once(':') {
            Some((w, n)) => (w.trim(), Some(n.trim())),
            None => (t.as_str(), None),
        };
        let per_turn = match n {
            None => 1,
            Some(n) => n.parse::<u32>().ok().filter(|&k| k >= 1).ok_or_else(|| {
                SpecError::bad(
                    "target-order",
                    text,
                    "after the order, :N is the I/Os per turn, a whole number of 1 or more (roundrobin:4)",
                )
            })?,
        };
        match word {
            "sequential" if n.is_none() => Ok(TargetOrder::Sequential),
            "roundrobin" => Ok(TargetOrder::RoundRobin { per_turn }),
            "random" => Ok(TargetOrder::Random { per_turn }),
            _ => Err(SpecError::bad(
                "target-order",
                text,
                "give sequential, roundrobin[:N] or random[:N]",
            )),
        }
    }
}

impl fmt::Display for TargetOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (word, n) = match self {
            TargetOrder::Sequential => return f.write_str("sequential"),
            TargetOrder::RoundRobin { per_turn } => ("roundrobin", *per_turn),
            TargetOrder::Random { per_turn } => ("random", *per_turn),
        };
        if n == 1 {
            f.write_str(word)
        } else {
            write!(f, "{word}:{n}")
        }
    }
}

/// Caps on one direction's IOPS, all workers together (fio's `rate=R,W`
/// pacing each direction on its own): a worker whose next I/O is of a
/// direction ahead of its cap issues one of the other direction instead,
/// or waits when both are held.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DirectionCaps {
    pub read_iops: Option<f64>,
    pub write_iops: Option<f64>,
}

impl DirectionCaps {
    pub fn any(&self) -> bool {
        self.read_iops.is_some() || self.write_iops.is_some()
    }
}

/// How workers use the CPUs they may run on (fio's cpus_allowed_policy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuPolicy {
    /// Each worker may run on any CPU of the list.
    Shared,
    /// Worker i runs on the i-th CPU of the list alone, wrapping round.
    Split,
}

/// How I/Os arrive under a rate limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrivals {
    /// Evenly spaced: one every 1/rate seconds.
    Uniform,
    /// A Poisson process: exponential gaps with mean 1/rate.
    Poisson,
}

impl fmt::Display for CpuPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Arrivals {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The failed I/Os a worker counts and goes on past (fio's ignore_error and
/// continue_on_error); others end the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IgnoreErrors {
    None,
    All,
    /// These errno values.
    Listed(Vec<i32>),
}

/// Linux errno names a failed I/O may carry.
const ERRNOS: &[(&str, i32)] = &[
    ("EPERM", 1),
    ("ENOENT", 2),
    ("EINTR", 4),
    ("EIO", 5),
    ("ENXIO", 6),
    ("EBADF", 9),
    ("EAGAIN", 11),
    ("ENOMEM", 12),
    ("EACCES", 13),
    ("EFAULT", 14),
    ("EBUSY", 16),
    ("ENODEV", 19),
    ("EINVAL", 22),
    ("EFBIG", 27),
    ("ENOSPC", 28),
    ("ESPIPE", 29),
    ("EROFS", 30),
    ("ENODATA", 61),
    ("ETIME", 62),
    ("ENOLINK", 67),
    ("EPROTO", 71),
    ("EBADMSG", 74),
    ("EOVERFLOW", 75),
    ("EILSEQ", 84),
    ("EOPNOTSUPP", 95),
    ("ETIMEDOUT", 110),
    ("ESTALE", 116),
    ("EREMOTEIO", 121),
    ("EDQUOT", 122),
    ("ECANCELED", 125),
];

impl IgnoreErrors {
    /// `all`, or errno names and numbers separated by `,` or `:`
    /// (`EIO,ENOSPC`, `5:28`).
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("all") {
            return Ok(IgnoreErrors::All);
        }
        let mut v = Vec::new();
        for item in t.split([',', ':']).map(str::trim).filter(|i| !i.is_empty()) {
            let n = match item.parse::<i32>() {
                Ok(n) if n > 0 && n < 4096 => n,
                Ok(_) => {
                    return Err(SpecError::bad("ignore-errors", text, format!("'{item}' is not an errno")))
                }
                Err(_) => ERRNOS
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(item))
                    .map(|(_, n)| *n)
                    .ok_or_else(|| {
                        SpecError::bad(
                            "ignore-errors",
                            text,
                            format!("'{item}' is not an errno iorig knows; give its number, e.g. 5 for EIO"),
                        )
                    })?,
            };
            if !v.contains(&n) {
                v.push(n);
            }
        }
        if v.is_empty() {
            return Err(SpecError::bad(
                "ignore-errors",
                text,
                "give errno names or numbers (EIO,ENOSPC) or all",
            ));
        }
        Ok(IgnoreErrors::Listed(v))
    }

    /// Whether a failed I/O with `errno` is gone on past.
    pub fn covers(&self, errno: i32) -> bool {
        match self {
            IgnoreErrors::None => false,
            IgnoreErrors::All => true,
            IgnoreErrors::Listed(v) => v.contains(&errno),
        }
    }
}

impl fmt::Display for IgnoreErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IgnoreErrors::None => write!(f, "none"),
            IgnoreErrors::All => write!(f, "all"),
            IgnoreErrors::Listed(v) => {
                let names: Vec<String> = v
                    .iter()
                    .map(|n| {
                        ERRNOS
                            .iter()
                            .find(|(_, e)| e == n)
                            .map_or_else(|| n.to_string(), |(name, _)| name.to_string())
                    })
                    .collect();
                write!(f, "{}", names.join(","))
            }
        }
    }
}

/// Zoned access (fio's zonemode=strided): each worker's I/O stays in one
/// zone of `range_bytes` until it has done `size_bytes` there, then moves
/// `range_bytes + skip_bytes` further (wrapping at the end).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Zones {
    pub range_bytes: u64,
    pub size_bytes: u64,
    pub skip_bytes: u64,
}

/// Periodic syncs (fio's fsync=N and fdatasync=N).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncEvery {
    /// Writes of a worker between two syncs.
    pub writes: u32,
    /// fdatasync instead of fsync.
    pub data_only: bool,
}

/// Pauses a worker takes between I/Os (fio's thinktime).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Think {
    /// The whole pause.
    pub time: Duration,
    /// The part of it spent spinning rather than asleep.
    pub spin: Duration,
    /// I/Os issued between pauses.
    pub every: u32,
    /// Under a rate, each pause moves the schedule on by its length (fio's
    /// rate_ignore_thinktime); otherwise the schedule stays and the I/Os
    /// due in a pause go out after it.
    pub moves_rate: bool,
}

/// A validated workload: everything the engine needs, nothing left to default.
#[derive(Debug, Clone, PartialEq)]
pub struct Workload {
    pub targets: Vec<String>,
    /// Size for files iorig creates; `None` uses an existing file's size or 1 GiB.
    pub size_bytes: Option<u64>,
    pub bs: BsSpec,
    /// Sizes of reads when they differ from `bs` (`read_bs`).
    pub read_bs: Option<BsSpec>,
    /// Sizes of writes when they differ from `bs` (`write_bs`).
    pub write_bs: Option<BsSpec>,
    pub read_pct: f64,
    /// Trims (discards) among the I/Os; writes are `100 - read - trim`.
    pub trim_pct: f64,
    pub random_pct: f64,
    /// I/Os per random seek (the rest follow sequentially).
    pub run_length: u32,
    /// Bytes left out after each sequential I/O.
    pub skip_bytes: u64,
    /// Offset alignment when given (`align`); otherwise from the sizes.
    pub align_bytes: Option<u64>,
    /// Outstanding I/Os per worker.
    pub qd: u32,
    /// I/Os queued before one submission call; 1 submits each at once.
    pub submit_batch: u32,
    /// Total workers.
    pub threads: u32,
    pub engine: EngineKind,
    pub direct: bool,
    pub sync: SyncMode,
    pub rate: Rate,
    /// Caps of one direction's IOPS (all workers together), when not paced
    /// as a whole.
    pub direction_caps: DirectionCaps,
    pub time: Duration,
    /// End once this many bytes were issued (`io_size`), or at `time`.
    pub io_size_bytes: Option<u64>,
    /// `io_size` as a share of the working set (100 = one pass), instead.
    pub io_size_pct: Option<f64>,
    /// Failed I/Os a worker counts and goes on past (`ignore_errors`).
    pub ignore_errors: IgnoreErrors,
    /// The floor under each measured interval's IOPS (`min_iops`).
    pub min_iops: Option<f64>,
    /// Zoned access (fio's zonemode=strided).
    pub zones: Option<Zones>,
    /// fsync or fdatasync after every so many writes of a worker.
    pub sync_every: Option<SyncEvery>,
    /// fsync each written target once the worker's I/O has ended.
    pub fsync_at_end: bool,
    /// Remove the scratch files the run created when it ends.
    pub unlink: bool,
    /// Leave the targets' cached pages as the step before left them
    /// (default: written back and dropped before the step).
    pub keep_cache: bool,
    /// Drop the host's whole page cache before the step (root).
    pub drop_caches: bool,
    /// How I/Os arrive under a rate.
    pub arrivals: Arrivals,
    /// Pauses between I/Os (`think_time`), none when absent.
    pub think: Option<Think>,
    /// Idle time before the first I/O, inside `time`.
    pub start_delay: Duration,
    /// The CPUs the workers may run on (`cpus`); empty: any.
    pub cpus: Vec<usize>,
    /// Whether each worker takes one CPU of `cpus` for itself.
    pub cpus_policy: CpuPolicy,
    /// The order sequential I/O takes over several targets.
    pub target_order: TargetOrder,
    pub warmup: Duration,
    pub interval: Duration,
    pub range: RangePct,
    pub dist: AccessDist,
    pub data: DataPattern,
    pub seed: u64,
    pub labels: BTreeMap<String, String>,
    pub fault: Vec<String>,
    /// Data validation (every write self-checking, reads of known blocks checked,
    /// writes to known blocks read and checked first).
    pub verify: bool,
    /// Each written block is read back and checked at once.
    pub verify_after: bool,
    /// Written blocks hold this pattern instead of iorig's stamped blocks,
    /// and reads are compared with it (fio's verify_pattern).
    pub verify_pattern: Option<Vec<u8>>,
    /// Every block read is checked, known to this run or not (fio's
    /// verify_only); the workload only reads.
    pub verify_only: bool,
    /// Validation errors after which the run stops.
    pub max_errors: u32,
    /// The tree and its operations, for a file-system workload (`targets`
    /// then holds its anchor).
    pub fs: Option<FsWorkload>,
}

impl Workload {
    /// Poisson arrivals asked for with no rate to shape: a single run
    /// refuses this (a plan's unpaced steps just have none).
    pub fn arrivals_without_rate(&self) -> Result<(), SpecError> {
        if self.arrivals == Arrivals::Poisson && self.rate == Rate::Max {
            return Err(SpecError::bad(
                "arrivals",
                "poisson",
                "arrivals shape a paced rate; add --rate IOPS or drop --arrivals",
            ));
        }
        Ok(())
    }

    /// The bytes after which the workload ends (`io_size`), given the bytes
    /// of its working set over all targets.
    pub fn io_limit_bytes(&self, working_set_bytes: u64) -> Option<u64> {
        match (self.io_size_bytes, self.io_size_pct) {
            (Some(b), _) => Some(b),
            (None, Some(p)) => Some(((working_set_bytes as f64 * p / 100.0).round() as u64).max(1)),
            (None, None) => None,
        }
    }

    /// Rules between parameters that need no target.
    pub fn validate(&self) -> Result<(), SpecError> {
        if matches!(self.engine, EngineKind::Psync | EngineKind::Mmap) && self.qd > 1 {
            return Err(SpecError::bad(
                key::qd,
                self.qd,
                format!("{} keeps one I/O in flight per worker; use --qd 1 or --engine io_uring, or more --threads", self.engine),
            ));
        }
        if self.engine == EngineKind::Mmap && self.direct {
            return Err(SpecError::bad(
                "engine",
                "mmap",
                "a mapping goes through the page cache, so O_DIRECT has no meaning; add --buffered",
            ));
        }
        if self.direct {
            for (size, _) in &self.all_sizes().sizes {
                if size % 512 != 0 {
                    return Err(SpecError::bad(
                        "bs",
                        format_size(*size),
                        "direct I/O needs block sizes that are multiples of 512; change --bs or use --buffered",
                    ));
                }
            }
        }
        if let (true, Some(f)) = (self.direct, &self.fs) {
            if let Some((odd, _)) = f.file_sizes.sizes.iter().find(|(s, _)| s % 512 != 0) {
                return Err(SpecError::bad(
                    "file-size",
                    format_size(*odd),
                    "direct I/O needs file sizes that are multiples of 512; change --file-size or use --buffered",
                ));
            }
        }
        if let Some(z) = self.zones {
            if self.targets.len() > 1 {
                return Err(SpecError::bad(
                    "zone-range",
                    format_size(z.range_bytes),
                    "zones lie in one target (fio turns them off for a job of several files); give one target",
                ));
            }
            let a = self.offset_align_bytes().max(1);
            if !z.range_bytes.is_multiple_of(a) || !z.skip_bytes.is_multiple_of(a) {
                return Err(SpecError::bad(
                    "zone-range",
                    format_size(z.range_bytes),
                    format!(
                        "zones and the skips between them keep offsets aligned only as multiples of {}; round them",
                        format_size(a)
                    ),
                ));
            }
            if z.range_bytes < self.max_bs_bytes() {
                return Err(SpecError::bad(
                    "zone-range",
                    format_size(z.range_bytes),
                    "a zone must hold the largest block; make it larger or --bs smaller",
                ));
            }
        }
        if !self
            .skip_bytes
            .is_multiple_of(self.offset_align_bytes().max(1))
        {
            return Err(SpecError::bad(
                "skip",
                format_size(self.skip_bytes),
                format!(
                    "a skip keeps offsets aligned only as a multiple of {}; round it",
                    format_size(self.offset_align_bytes())
                ),
            ));
        }
        if self.verify {
            if let Some(a) = self.align_bytes {
                return Err(SpecError::bad(
                    "align",
                    format_size(a),
                    "validation aligns I/Os to its own unit (the smallest block size); drop --align",
                ));
            }
            self.validate_verify()?;
        }
        if let Rate::Iops(r) = self.rate {
            if r > 1e9 {
                return Err(SpecError::bad("rate", r, "above 1e9 IOPS; use --rate max"));
            }
        }
        Ok(())
    }

    /// The unit validation tracks keys in: the smallest block size. Every block
    /// size must be a multiple of it, so each I/O covers whole units.
    pub fn verify_unit_bytes(&self) -> u64 {
        self.all_sizes()
            .sizes
            .iter()
            .map(|s| s.0)
            .min()
            .unwrap_or(4096)
    }

    /// The sizes reads are made with.
    pub fn read_sizes(&self) -> &BsSpec {
        self.read_bs.as_ref().unwrap_or(&self.bs)
    }

    /// The sizes writes are made with.
    pub fn write_sizes(&self) -> &BsSpec {
        self.write_bs.as_ref().unwrap_or(&self.bs)
    }

    /// Every block size either direction may use (weights not meaningful):
    /// what buffers, alignment and range checks must allow for.
    pub fn all_sizes(&self) -> BsSpec {
        let mut sizes: Vec<(u64, u32)> = Vec::new();
        for (s, w) in self
            .read_sizes()
            .sizes
            .iter()
            .chain(&self.write_sizes().sizes)
        {
            if !sizes.iter().any(|(x, _)| x == s) {
                sizes.push((*s, *w));
            }
        }
        BsSpec { sizes }
    }

    /// The largest block size of either direction.
    pub fn max_bs_bytes(&self) -> u64 {
        self.all_sizes().max_bytes()
    }

    /// The block sizes the I/Os are made with: `64k`, or `r4k/w64k` style
    /// when the directions in use differ (the rule of
    /// [`WorkloadRecord::bs_label`]).
    pub fn bs_text(&self) -> String {
        if self.read_bs.is_none() && self.write_bs.is_none() {
            return self.bs.to_string();
        }
        self.record().bs_label()
    }

    /// The alignment of every offset: the block-size alignment, or the
    /// validation unit under `verify` (so no I/O covers part of a unit).
    pub fn offset_align_bytes(&self) -> u64 {
        if let Some(a) = self.align_bytes {
            return a;
        }
        if self.verify {
            self.verify_unit_bytes()
        } else {
            self.all_sizes().alignment_bytes()
        }
    }

    fn validate_verify(&self) -> Result<(), SpecError> {
        if self.engine == EngineKind::Null {
            return Err(SpecError::bad(
                "verify",
                "true",
                "the null engine moves no data; use --engine io_uring or psync to validate data",
            ));
        }
        if self.data != DataPattern::Random {
            return Err(SpecError::bad(
                "data",
                self.data.to_string(),
                "--verify writes its own self-checking data; drop --data",
            ));
        }
        let unit = self.verify_unit_bytes();
        if self.verify_only && self.writes() {
            return Err(SpecError::bad(
                "verify-only",
                "true",
                "it reads and checks what is there; give --read 100 (no writes or trims)",
            ));
        }
        if self.verify_only && self.verify_after {
            return Err(SpecError::bad(
                "verify-only",
                "true",
                "there are no writes to read back; drop --verify-after",
            ));
        }
        if (self.verify_only || self.verify_pattern.is_some()) && self.fs.is_some() {
            let (flag, value) = match &self.verify_pattern {
                Some(p) => ("verify-pattern", format_pattern(p)),
                None => ("verify-only", "true".to_string()),
            };
            return Err(SpecError::bad(
                flag,
                value,
                format!("a tree validates with iorig's own blocks; drop --{flag} for a tree"),
            ));
        }
        if let Some(p) = &self.verify_pattern {
            if !unit.is_multiple_of(p.len() as u64) {
                return Err(SpecError::bad(
                    "verify-pattern",
                    format_pattern(p),
                    format!(
                        "its {} bytes do not divide the {}-byte block, so blocks would not start with its first byte; give a pattern of 1, 2, 4, 8, ... bytes",
                        p.len(),
                        unit
                    ),
                ));
            }
        }
        let unit = self.verify_unit_bytes();
        if unit < 512 || !unit.is_multiple_of(512) {
            return Err(SpecError::bad(
                "bs",
                self.all_sizes().to_string(),
                "--verify needs block sizes that are multiples of 512 (one header per 512-byte multiple)",
            ));
        }
        if let Some(f) = &self.fs {
            if let Some((odd, _)) = f.file_sizes.sizes.iter().find(|(s, _)| s % unit != 0) {
                return Err(SpecError::bad(
                    "file-size",
                    format_size(*odd),
                    format!(
                        "--verify checks whole blocks of {}: give file sizes that are multiples of it",
                        format_size(unit)
                    ),
                ));
            }
        }
        let all = self.all_sizes();
        if let Some((odd, _)) = all.sizes.iter().find(|(s, _)| s % unit != 0) {
            return Err(SpecError::bad(
                "bs",
                all.to_string(),
                format!(
                    "--verify needs every block size to be a multiple of the smallest ({}), but {} is not; choose sizes such as 4k,8k,64k",
                    format_size(unit),
                    format_size(*odd)
                ),
            ));
        }
        Ok(())
    }

    /// Whether the workload changes what its targets hold (so target
    /// safety rules apply).
    pub fn writes(&self) -> bool {
        match &self.fs {
            Some(f) => {
                f.ops.ops.iter().any(|(o, _)| {
                    !matches!(o, FsOp::Read | FsOp::Stat | FsOp::Readdir | FsOp::Open)
                })
            }
            None => self.read_pct < 100.0,
        }
    }

    /// The flat record of every resolved parameter, for JSON and the store.
    pub fn record(&self) -> WorkloadRecord {
        WorkloadRecord {
            targets: self.targets.clone(),
            size_bytes: self.size_bytes,
            bs: self.bs.to_string(),
            bs_bytes: self
                .bs
                .sizes
                .iter()
                .map(|(s, w)| BsWeight {
                    size_bytes: *s,
                    weight: *w,
                })
                .collect(),
            read_bs: self.read_bs.as_ref().map(BsSpec::to_string),
            write_bs: self.write_bs.as_ref().map(BsSpec::to_string),
            align_bytes: self.offset_align_bytes(),
            read_pct: self.read_pct,
            trim_pct: self.trim_pct,
            random_pct: self.random_pct,
            run_length: (self.run_length > 1).then_some(self.run_length),
            min_iops: self.min_iops,
            ignore_errors: (self.ignore_errors != IgnoreErrors::None)
                .then(|| self.ignore_errors.to_string()),
            zone_range_bytes: self.zones.map(|z| z.range_bytes),
            zone_size_bytes: self.zones.map(|z| z.size_bytes),
            zone_skip_bytes: self.zones.map(|z| z.skip_bytes),
            skip_bytes: (self.skip_bytes > 0).then_some(self.skip_bytes),
            qd: self.qd,
            submit_batch: self.submit_batch,
            threads: self.threads,
            engine: self.engine.name().to_string(),
            direct: self.direct,
            sync: self.sync.name().to_string(),
            rate_iops: match self.rate {
                Rate::Max => None,
                Rate::Iops(r) => Some(r),
            },
            read_rate_iops: self.direction_caps.read_iops,
            write_rate_iops: self.direction_caps.write_iops,
            time_s: self.time.as_secs_f64(),
            io_size_bytes: self.io_size_bytes,
            io_size_pct: self.io_size_pct,
            cpus: self.cpus.clone(),
            cpus_split: self.cpus_policy == CpuPolicy::Split,
            target_order: (self.target_order != TargetOrder::Sequential)
                .then(|| self.target_order.to_string()),
            unlink: self.unlink,
            keep_cache: self.keep_cache,
            drop_caches: self.drop_caches,
            fsync_at_end: self.fsync_at_end,
            fsync_every: self.sync_every.filter(|s| !s.data_only).map(|s| s.writes),
            fdatasync_every: self.sync_every.filter(|s| s.data_only).map(|s| s.writes),
            arrivals: (self.arrivals != Arrivals::Uniform)
                .then(|| self.arrivals.name().to_string()),
            think_time_s: self.think.map(|t| t.time.as_secs_f64()),
            think_every: self.think.map(|t| t.every),
            think_moves_rate: self.think.is_some_and(|t| t.moves_rate),
            think_spin_s: self.think.map(|t| t.spin.as_secs_f64()),
            start_delay_s: (!self.start_delay.is_zero()).then_some(self.start_delay.as_secs_f64()),
            warmup_s: self.warmup.as_secs_f64(),
            interval_s: self.interval.as_secs_f64(),
            range_start_pct: self.range.start_pct,
            range_end_pct: self.range.end_pct,
            dist: self.dist.to_string(),
            data: self.data.to_string(),
            seed: self.seed,
            fault: self.fault.clone(),
            verify: self.verify,
            verify_after: self.verify_after,
            verify_pattern: self.verify_pattern.as_deref().map(format_pattern),
            verify_only: self.verify_only,
            max_errors: self.max_errors,
            fs: self.fs.as_ref().map(FsWorkload::record),
        }
        .with_effective_bs()
    }
}

/// One entry of a weighted block-size list.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BsWeight {
    pub size_bytes: u64,
    pub weight: u32,
}

/// Every resolved parameter, flat, with units in the names (`rate_iops` is null
/// for an uncontrolled run).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct WorkloadRecord {
    pub targets: Vec<String>,
    pub size_bytes: Option<u64>,
    pub bs: String,
    pub bs_bytes: Vec<BsWeight>,
    /// Sizes of reads, when given apart from `bs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_bs: Option<String>,
    /// Sizes of writes, when given apart from `bs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bs: Option<String>,
    pub align_bytes: u64,
    pub read_pct: f64,
    /// Absent (0) for workloads without trims, and in records stored
    /// before trims existed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub trim_pct: f64,
    pub random_pct: f64,
    /// I/Os per random seek, when runs follow each seek.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_length: Option<u32>,
    /// The floor under each measured interval's IOPS, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_iops: Option<f64>,
    /// The errors a worker went on past, when any were given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_errors: Option<String>,
    /// Zoned access, when there were zones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_range_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_skip_bytes: Option<u64>,
    /// Bytes left out after each sequential I/O, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_bytes: Option<u64>,
    pub qd: u32,
    pub submit_batch: u32,
    pub threads: u32,
    pub engine: String,
    pub direct: bool,
    pub sync: String,
    pub rate_iops: Option<f64>,
    /// The cap on the reads' IOPS alone, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_rate_iops: Option<f64>,
    /// The cap on the writes' IOPS alone, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_rate_iops: Option<f64>,
    pub time_s: f64,
    /// The bytes after which the workload ends (`io_size`), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_size_bytes: Option<u64>,
    /// `io_size` as a share of the working set, when given so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_size_pct: Option<f64>,
    /// The CPUs the workers ran on (`cpus`); absent: any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpus: Vec<usize>,
    /// Each worker ran on one CPU of `cpus` alone (`cpus_policy = "split"`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cpus_split: bool,
    /// The order of sequential I/O over the targets, when not one after
    /// another.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_order: Option<String>,
    /// Each worker synced the targets it wrote at its end (fio's end_fsync).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fsync_at_end: bool,
    /// Writes between fsync calls, when there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync_every: Option<u32>,
    /// Writes between fdatasync calls, when there were any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fdatasync_every: Option<u32>,
    /// The scratch files the run created were removed at its end.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unlink: bool,
    /// The targets' cached pages were left as they were before the step
    /// (absent: written back and dropped).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keep_cache: bool,
    /// The host's whole page cache was dropped before the step.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drop_caches: bool,
    /// The arrival process under a rate, when not uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<String>,
    /// The pause after every `think_every` I/Os, when there were pauses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_time_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_every: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think_spin_s: Option<f64>,
    /// Each pause moved the rate's schedule on (fio's rate_ignore_thinktime).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub think_moves_rate: bool,
    /// The idle time before the first I/O, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_delay_s: Option<f64>,
    pub warmup_s: f64,
    pub interval_s: f64,
    pub range_start_pct: f64,
    pub range_end_pct: f64,
    pub dist: String,
    pub data: String,
    pub seed: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fault: Vec<String>,
    // Added after the first stored results: absent there, default here.
    #[serde(default)]
    pub verify: bool,
    #[serde(default)]
    pub verify_after: bool,
    /// The pattern written blocks held (hex), when not iorig's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify_pattern: Option<String>,
    /// Every block read was checked (fio's verify_only).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub verify_only: bool,
    #[serde(default)]
    pub max_errors: u32,
    /// The tree and its operations of a file-system workload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs: Option<FsRecord>,
}

impl WorkloadRecord {
    /// The sizes of the directions the workload uses: reads when it reads,
    /// writes when it writes.
    fn used_sizes(&self) -> Option<(Option<BsSpec>, Option<BsSpec>)> {
        let bs = BsSpec::parse(&self.bs).ok()?;
        let dir = |given: &Option<String>| match given {
            Some(t) => BsSpec::parse(t).ok(),
            None => Some(bs.clone()),
        };
        let reads = (self.read_pct > 0.0).then(|| dir(&self.read_bs)).flatten();
        let writes = (self.read_pct < 100.0)
            .then(|| dir(&self.write_bs))
            .flatten();
        Some((reads, writes))
    }

    /// The one set of block sizes every I/O of the workload is made with,
    /// when there is one: `bs`, or `read_bs`/`write_bs` when those are what
    /// the used directions take (both `64k`, or a read-only run's
    /// `read_bs`). `None` when reads and writes use different sizes.
    pub fn effective_bs(&self) -> Option<BsSpec> {
        match self.used_sizes()? {
            (Some(r), None) => Some(r),
            (None, Some(w)) => Some(w),
            (Some(r), Some(w)) if r == w => Some(r),
            _ => None,
        }
    }

    /// The block sizes as results are searched, shown and compared by:
    /// `64k`, `4k:50,8k:50`, or `r4k/w64k` when reads and writes differ.
    pub fn bs_label(&self) -> String {
        if let Some(e) = self.effective_bs() {
            return e.to_string();
        }
        match self.used_sizes() {
            Some((Some(r), Some(w))) => format!("r{r}/w{w}"),
            _ => self.bs.clone(),
        }
    }

    /// The block size when every I/O has the same one.
    pub fn single_bs_bytes(&self) -> Option<u64> {
        match self.effective_bs()?.sizes.as_slice() {
            [(size, _)] => Some(*size),
            _ => None,
        }
    }

    /// `bs` and `bs_bytes` set to the sizes actually used when reads and
    /// writes share them (a run given `read_bs = write_bs = 64k` has a block
    /// size of 64k, whatever `bs` defaulted to); unchanged otherwise.
    /// Records stored before this rule are repaired with it.
    pub fn with_effective_bs(mut self) -> WorkloadRecord {
        if self.read_bs.is_none() && self.write_bs.is_none() {
            return self;
        }
        if let Some(e) = self.effective_bs() {
            self.bs = e.to_string();
            self.bs_bytes = e
                .sizes
                .iter()
                .map(|(s, w)| BsWeight {
                    size_bytes: *s,
                    weight: *w,
                })
                .collect();
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_carries_the_block_size_every_io_used() {
        let rec = |t: &str| file(t).resolve(1).unwrap().record();
        // Both directions 64k: the block size is 64k, whatever bs says.
        let r = rec("read = 50\nread_bs = '64k'\nwrite_bs = '64k'\n");
        assert_eq!((r.bs.as_str(), r.bs_label()), ("64k", "64k".to_owned()));
        assert_eq!(r.single_bs_bytes(), Some(65536));
        assert_eq!(r.bs_bytes.len(), 1);
        // A read-only run with read_bs: reads decide.
        let r = rec("read = 100\nread_bs = '16k'\n");
        assert_eq!(r.bs_label(), "16k");
        // Different directions: labelled apart, no single size.
        let r = rec("read = 70\nread_bs = '4k'\nwrite_bs = '64k'\n");
        assert_eq!(r.bs_label(), "r4k/w64k");
        assert_eq!(r.single_bs_bytes(), None);
        assert_eq!(r.bs, "4k");
        // Nothing per direction: bs as given.
        let r = rec("bs = '4k:50,8k:50'\n");
        assert_eq!(
            (r.bs_label(), r.single_bs_bytes()),
            ("4k:50,8k:50".to_owned(), None)
        );
    }

    fn file(text: &str) -> WorkloadFile {
        WorkloadFile::from_toml("t.toml", text).unwrap()
    }

    #[test]
    fn defaults_match_the_design() {
        let w = WorkloadFile::default().resolve(7).unwrap();
        assert_eq!(w.targets, vec![DEFAULT_TARGET.to_string()]);
        assert_eq!(w.bs, BsSpec::single(4096));
        assert_eq!(
            (w.read_pct, w.random_pct, w.qd, w.threads),
            (100.0, 100.0, 1, 1)
        );
        assert_eq!(w.engine, EngineKind::IoUring);
        assert!(w.direct);
        assert_eq!(w.rate, Rate::Max);
        assert_eq!(w.time, Duration::from_secs(30));
        assert_eq!(w.warmup, Duration::ZERO);
        assert_eq!(w.interval, Duration::from_secs(1));
        assert_eq!(w.seed, 7);
    }

    #[test]
    fn toml_keys_and_overlay() {
        let f = file("target = ['a', 'b']\nsize = '64m'\nbs = '4k:50,8k:50'\nread = 70\nqd = 8\ntime = '5s'\nrate = 2000\nlabels = { array = 'x' }\n");
        let cli = WorkloadFile {
            qd: Some(StrOrNum::Int(16)),
            labels: Some([("k".to_string(), "v".to_string())].into()),
            ..Default::default()
        };
        let w = f.overlay(cli).resolve(1).unwrap();
        assert_eq!(w.targets, vec!["a", "b"]);
        assert_eq!(w.size_bytes, Some(64 << 20));
        assert_eq!(w.bs.sizes, vec![(4096, 50), (8192, 50)]);
        assert_eq!(w.read_pct, 70.0);
        assert_eq!(w.qd, 16);
        assert_eq!(w.rate, Rate::Iops(2000.0));
        assert_eq!(w.labels.len(), 2);
    }

    #[test]
    fn verify_keys_resolve_and_their_limits_are_checked() {
        let w = file("verify_after = true\nbs = '4k:50,16k:30,64k:20'\n")
            .resolve(1)
            .unwrap();
        assert!(w.verify && w.verify_after, "verify_after implies verify");
        assert_eq!(w.max_errors, DEFAULT_MAX_ERRORS);
        assert_eq!(w.verify_unit_bytes(), 4096, "the smallest block size");
        let w = file("verify = true\nmax_errors = 7\n").resolve(1).unwrap();
        assert_eq!(w.max_errors, 7);
        // A value is refused when it is read (a choice: by its type) or when
        // the workload resolves (the rest); either way with the same words.
        let bad = |text: &str| match WorkloadFile::from_toml("t.toml", text) {
            Ok(f) => f.resolve(1).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(bad("verify = true\nengine = 'null'\n").contains("null engine"));
        assert!(bad("verify = true\ndata = 'zero'\n").contains("drop --data"));
        assert!(bad("verify = true\nbs = '4k:50,6k:50'\n").contains("6k is not"));
        assert!(bad("max_errors = 5\n").contains("add --verify"));
        assert!(bad("verify = true\nmax_errors = 0\n").contains("between 1"));
    }

    #[test]
    fn a_pattern_and_verify_only_imply_validation_and_keep_to_their_limits() {
        assert_eq!(
            parse_pattern("0xdeadbeef"),
            Ok(vec![0xde, 0xad, 0xbe, 0xef])
        );
        assert_eq!(parse_pattern("0xabc"), Ok(vec![0x0a, 0xbc]));
        assert_eq!(parse_pattern("'ab'"), Ok(b"ab".to_vec()));
        assert!(parse_pattern("255").is_err());
        assert!(parse_pattern("0x").is_err());
        assert!(parse_pattern("0xzz").is_err());
        assert_eq!(format_pattern(&[0xde, 0xad]), "0xdead");
        let w = file("verify_pattern = '0xdeadbeef'\nread = 0\n")
            .resolve(1)
            .unwrap();
        assert!(w.verify, "a pattern implies verify");
        assert_eq!(w.record().verify_pattern.as_deref(), Some("0xdeadbeef"));
        let w = file("verify_only = true\n").resolve(1).unwrap();
        assert!(w.verify && w.verify_only);
        // A value is refused when it is read (a choice: by its type) or when
        // the workload resolves (the rest); either way with the same words.
        let bad = |text: &str| match WorkloadFile::from_toml("t.toml", text) {
            Ok(f) => f.resolve(1).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(bad("verify_only = true\nread = 70\n").contains("--read 100"));
        assert!(bad("verify_only = true\nverify_after = true\n").contains("drop --verify-after"));
        assert!(bad("verify_pattern = \"'abc'\"\n").contains("do not divide"));
    }

    #[test]
    fn sizes_per_direction() {
        let w = file("bs = '8k'\nwrite_bs = '4k:50,64k:50'\n")
            .resolve(1)
            .unwrap();
        assert_eq!(w.read_sizes(), &BsSpec::single(8192));
        assert_eq!(w.write_sizes().sizes, vec![(4096, 50), (65536, 50)]);
        assert_eq!(w.max_bs_bytes(), 65536);
        assert_eq!(w.offset_align_bytes(), 4096);
        // Reads only (the default): the write sizes are never used.
        assert_eq!(w.bs_text(), "8k");
        let mixed = file("bs = '8k'\nread = 50\nwrite_bs = '4k:50,64k:50'\n")
            .resolve(1)
            .unwrap();
        assert_eq!(mixed.bs_text(), "r8k/w4k:50,64k:50");
        assert_eq!(w.record().write_bs.as_deref(), Some("4k:50,64k:50"));
        assert_eq!(w.record().read_bs, None);
        let cli = WorkloadFile {
            read_bs: Some(StrOrNum::Str("16k".into())),
            ..Default::default()
        };
        let w = file("read_bs = '4k'\n").overlay(cli).resolve(1).unwrap();
        assert_eq!(w.read_sizes(), &BsSpec::single(16384));
        let w = file("verify = true\nread_bs = '16k'\nwrite_bs = '4k'\n")
            .resolve(1)
            .unwrap();
        assert_eq!(
            w.verify_unit_bytes(),
            4096,
            "the smallest of both directions"
        );
        // A value is refused when it is read (a choice: by its type) or when
        // the workload resolves (the rest); either way with the same words.
        let bad = |text: &str| match WorkloadFile::from_toml("t.toml", text) {
            Ok(f) => f.resolve(1).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(bad("write_bs = '0'").contains("write-bs"));
        assert!(bad("verify = true\nread_bs = '4k'\nwrite_bs = '6k'\n").contains("6k is not"));
        assert!(bad("read_bs = '1000'").contains("multiples of 512"));
    }

    #[test]
    fn fios_rw_word_sets_the_mix_defaults() {
        let r = |text: &str| file(text).resolve(1);
        let w = r("rw = 'randrw'\n").unwrap();
        assert_eq!((w.read_pct, w.random_pct), (50.0, 100.0));
        let w = r("rw = 'rw'\nread = 70\n").unwrap();
        assert_eq!((w.read_pct, w.random_pct), (70.0, 0.0));
        let w = r("rw = 'write'\n").unwrap();
        assert_eq!((w.read_pct, w.random_pct), (0.0, 0.0));
        let w = r("rw = 'randtrim'\n").unwrap();
        assert_eq!((w.read_pct, w.trim_pct, w.random_pct), (0.0, 100.0, 100.0));
        let w = r("rw = 'read:8k'\n").unwrap();
        assert_eq!((w.random_pct, w.skip_bytes), (0.0, 8192));
        let w = r("rw = 'randread:8'\n").unwrap();
        assert_eq!(w.run_length, 8);
        // The flags given win over the word's defaults.
        let w = r("rw = 'randwrite'\nrandom = 30\n").unwrap();
        assert_eq!((w.read_pct, w.random_pct), (0.0, 30.0));
        let bad = |text: &str| r(text).unwrap_err().to_string();
        assert!(bad("rw = 'randread'\nread = 70\n").contains("give --rw randrw with --read"));
        assert!(bad("rw = 'trimwrite'\n").contains("trimwrite"));
        assert!(bad("rw = 'randomread'\n").contains("give one of read, write"));
        assert!(bad("rw = 'randread:0'\n").contains("I/Os per seek"));
    }

    #[test]
    fn unknown_toml_key_is_named() {
        let e = WorkloadFile::from_toml("t.toml", "blocksize = '4k'\n").unwrap_err();
        assert!(e.to_string().contains("blocksize"), "{e}");
    }

    #[test]
    fn bad_values_are_rejected() {
        // A value is refused when it is read (a choice: by its type) or when
        // the workload resolves (the rest); either way with the same words.
        let bad = |text: &str| match WorkloadFile::from_toml("t.toml", text) {
            Ok(f) => f.resolve(1).unwrap_err().to_string(),
            Err(e) => e.to_string(),
        };
        assert!(bad("read = 101").contains("outside 0-100"));
        assert!(bad("random = -1").contains("outside 0-100"));
        assert!(bad("bs = '1000'").contains("multiples of 512"));
        assert!(bad("engine = 'psync'\nqd = 4").contains("psync"));
        assert!(bad("range = '50%-10%'").contains("empty"));
        assert!(bad("range = '50%-50%'").contains("empty"));
        assert!(bad("time = '5x'").contains("bad duration"));
        assert!(bad("size = '1q'").contains("bad size"));
        assert!(bad("qd = 0").contains("between 1"));
        assert!(bad("dist = 'zipf:0'").contains("theta"));
        assert!(bad("dist = 'hot:90'").contains("IO%/SPACE%"));
        assert!(bad("data = 'compress:0.5'").contains("ratio"));
        assert!(bad("rate = 0").contains("above 0"));
        assert!(bad("direct = true\nbuffered = true").contains("choose one"));
        // Buffered I/O lifts the 512-byte rule.
        assert!(file("bs = '1000'\nbuffered = true").resolve(1).is_ok());
    }

    #[test]
    fn bs_alignment() {
        assert_eq!(BsSpec::parse("8k").unwrap().alignment_bytes(), 8192);
        assert_eq!(
            BsSpec::parse("4k:50,8k:30,64k:20")
                .unwrap()
                .alignment_bytes(),
            4096
        );
        assert_eq!(BsSpec::parse("512:1,1k:1").unwrap().alignment_bytes(), 512);
        assert_eq!(
            BsSpec::parse("64k:1,128k:1").unwrap().alignment_bytes(),
            4096
        );
        assert_eq!(
            BsSpec::parse("4k:50,8k:30,64k:20").unwrap().to_string(),
            "4k:50,8k:30,64k:20"
        );
    }

    #[test]
    fn a_fill_pattern_reads_back() {
        let d = DataPattern::parse("pattern:'a,b'").unwrap();
        assert_eq!(d.fill_bytes(), b"a,b");
        assert_eq!(d.to_string(), "pattern:0x612c62");
        assert_eq!(DataPattern::parse(&d.to_string()).unwrap(), d);
        for bad in ["pattern:", "pattern:0x", "pattern:abc", "pattern:0xgg"] {
            assert!(DataPattern::parse(bad).is_err(), "{bad}");
        }
        let long = format!("pattern:0x{}", "ab".repeat(513));
        assert!(DataPattern::parse(&long).is_err());
    }

    #[test]
    fn dist_parse_and_display() {
        for s in ["uniform", "zipf:1.2", "pareto:0.9", "hot:90/10"] {
            assert_eq!(AccessDist::parse(s).unwrap().to_string(), s);
        }
        assert!(AccessDist::parse("gauss").is_err());
    }

    #[test]
    fn a_flag_decides_its_pair_over_the_file() {
        let base = file("buffered = true\nsync = true\n");
        let flags = WorkloadFile {
            direct: Some(true),
            dsync: Some(true),
            ..Default::default()
        };
        let w = base.clone().overlay(flags).resolve(1).unwrap();
        assert!(w.direct);
        assert_eq!(w.sync, SyncMode::Dsync);
        // Without flags the file stands.
        let w = base.overlay(WorkloadFile::default()).resolve(1).unwrap();
        assert!(!w.direct);
        assert_eq!(w.sync, SyncMode::Sync);
    }

    #[test]
    fn submit_batch_is_bounded_by_qd() {
        let w = file("qd = 8\nsubmit_batch = 4\n").resolve(1).unwrap();
        assert_eq!((w.qd, w.submit_batch), (8, 4));
        assert_eq!(WorkloadFile::default().resolve(1).unwrap().submit_batch, 1);
        let e = file("qd = 4\nsubmit_batch = 8\n").resolve(1).unwrap_err();
        assert!(e.to_string().contains("larger than qd"), "{e}");
        let e = file("qd = 20000\n").resolve(1).unwrap_err();
        assert!(e.to_string().contains("16384"), "{e}");
    }
}
