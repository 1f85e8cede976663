//! The table of workload parameters: `WorkloadFile` is declared once, here,
//! and everything that names a parameter derives from that declaration.
//!
//! Each field is one parameter. Its name is the TOML key and (with dashes)
//! the long flag; its doc comment is the flag's help; the roles in brackets
//! after its type say how plans treat it (see [`Role`]). The `workload_file!`
//! macro writes the struct as given and, from the same list, the key
//! constants ([`key`]), the key table ([`WorkloadFile::KEYS`]), the layering
//! of files and flags ([`WorkloadFile::overlay`]), which keys a layer gives
//! and the keys and values a workload file would be written with
//! ([`WorkloadFile::to_pairs`]). A new parameter is one field here, its
//! meaning in `resolve` and its row in docs/workload.md (a test asks for
//! it); no other list names it.

use crate::fs::{FileIo, FileSelect, FormatMode};
use crate::workload::{
    AccessDist, Arrivals, CpuPolicy, DataPattern, EngineKind, OneOrMany, StrOrNum, TargetOrder,
};
use crate::SpecError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How plans treat a parameter (none: an ordinary workload key that any
/// step, job or precondition-free block may set and sweep).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Role {
    /// The plan's, not a step's: given once for the whole plan (the
    /// targets and their size).
    Plan,
    /// Never a sweep axis, even when written as a list (a list by nature,
    /// or a setting that must be one value in a step).
    Fixed,
    /// Its one value may be a list in a job (targets, fault rules).
    List,
    /// Data validation: set on a whole step, never on one of its jobs.
    Step,
    /// Means something only for a directory tree (needs an anchor).
    Fs,
    /// A precondition step may set it.
    Pre,
    /// A precondition takes it from `[defaults]`: how to do I/O, not what
    /// I/O to do.
    Inherit,
}

/// One row of the table: a key and its roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    pub key: &'static str,
    pub roles: &'static [Role],
}

impl Param {
    pub fn is(&self, role: Role) -> bool {
        self.roles.contains(&role)
    }
}

impl WorkloadFile {
    /// Whether `key` is a workload key.
    pub fn is_key(key: &str) -> bool {
        Self::KEYS.iter().any(|p| p.key == key)
    }

    /// Whether the workload key `key` has `role` in the declaration.
    pub fn has_role(key: &str, role: Role) -> bool {
        Self::KEYS.iter().any(|p| p.key == key && p.is(role))
    }
}

/// Pairs of flags of which a layer that gives either decides both
/// (`--direct` overrides a file's `buffered = true`).
pub const PAIRS: &[(&str, &str)] = &[(key::direct, key::buffered), (key::sync, key::dsync)];

/// The other key of `key`'s pair, if it is in one.
pub fn partner(k: &str) -> Option<&'static str> {
    PAIRS.iter().find_map(|&(a, b)| {
        if a == k {
            Some(b)
        } else if b == k {
            Some(a)
        } else {
            None
        }
    })
}

/// A choice among fixed names: each value with its name, its aliases and
/// whether it is offered (a hidden one is accepted, not offered).
pub trait Choice: Sized + Copy + PartialEq + 'static {
    const CHOICES: &'static [(Self, &'static str, &'static [&'static str], bool)];
}

/// A choice among fixed names, declared once: the names (with their
/// aliases; a `(hidden)` one is accepted but not offered) give the type's
/// `name` and `parse`, and the command line's parser, whose possible values
/// help, completions and errors list.
macro_rules! named_choice {
    ($t:ident, $key:expr, { $( $v:ident = $name:literal $(| $alias:literal)* $(($hidden:ident))? ),* $(,)? }) => {
        impl Choice for $t {
            const CHOICES: &'static [(Self, &'static str, &'static [&'static str], bool)] = &[
                $( ($t::$v, $name, &[$($alias),*], true $(&& { let _ = stringify!($hidden); false })?), )*
            ];
        }

        impl $t {
            pub fn name(self) -> &'static str {
                match self {
                    $( $t::$v => $name, )*
                }
            }

            pub fn parse(text: &str) -> Result<Self, SpecError> {
                let t = text.trim();
                <$t as Choice>::CHOICES
                    .iter()
                    .find(|(_, name, aliases, _)| *name == t || aliases.contains(&t))
                    .map(|(v, ..)| *v)
                    .ok_or_else(|| SpecError::bad($key, text, format!("use {}", offered::<$t>())))
            }
        }

        impl clap::builder::ValueParserFactory for $t {
            type Parser = ChoiceParser<$t>;
            fn value_parser() -> Self::Parser {
                ChoiceParser(std::marker::PhantomData)
            }
        }
    };
}

/// Reads a choice on the command line with its own `parse`, so a bad value
/// gets the words it gets in a file ("bad engine 'x': use io_uring, psync
/// or null"), while help and completions offer its names.
#[derive(Clone, Copy, Debug)]
pub struct ChoiceParser<T>(std::marker::PhantomData<T>);

impl<T> clap::builder::TypedValueParser for ChoiceParser<T>
where
    T: Choice + std::str::FromStr<Err = SpecError> + Clone + Send + Sync,
{
    type Value = T;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let refuse = |kind, why: String| flag_error(arg, kind, why);
        let text = value.to_str().ok_or_else(|| {
            refuse(
                clap::error::ErrorKind::InvalidUtf8,
                format!("not UTF-8 text; use {}", offered::<T>()),
            )
        })?;
        text.parse::<T>()
            .map_err(|e| refuse(clap::error::ErrorKind::ValueValidation, e.to_string()))
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(T::CHOICES.iter().map(
            |(_, name, aliases, shown)| {
                clap::builder::PossibleValue::new(*name)
                    .aliases(aliases.iter().copied())
                    .hide(!shown)
            },
        )))
    }
}

/// A flag's value refused in one line, "--flag: why", without clap's
/// "invalid value '...'", which would repeat the value (it may be a
/// secret, or it is said better in `why`).
pub fn flag_error(
    arg: Option<&clap::Arg>,
    kind: clap::error::ErrorKind,
    why: impl std::fmt::Display,
) -> clap::Error {
    let flag = arg
        .and_then(|a| a.get_long())
        .map(|l| format!("--{l}: "))
        .unwrap_or_default();
    clap::Error::raw(kind, format!("{flag}{why}\n"))
}

/// The names a choice offers, as a sentence: "a, b or c".
fn offered<T: Choice>() -> String {
    let names: Vec<&str> = T::CHOICES
        .iter()
        .filter(|(.., shown)| *shown)
        .map(|(_, name, ..)| *name)
        .collect();
    match names.split_last() {
        Some((last, [])) => (*last).to_string(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    }
}

named_choice!(EngineKind, key::engine, {
    IoUring = "io_uring" | "uring",
    Psync = "psync",
    Mmap = "mmap",
    Null = "null",
    // Real pread/pwrite with injected faults: for tests.
    Fault = "fault" (hidden),
});
named_choice!(Arrivals, key::arrivals, {
    Uniform = "uniform" | "linear",
    Poisson = "poisson",
});
named_choice!(CpuPolicy, key::cpus_policy, {
    Shared = "shared",
    Split = "split",
});
named_choice!(FileIo, key::fileio, {
    Sequential = "sequential" | "seq",
    Random = "random" | "rand",
});
named_choice!(FormatMode, key::format, {
    No = "no" | "false",
    Yes = "yes" | "true",
    Once = "once",
    Restart = "restart",
    Dirs = "dirs",
});

/// A choice read by name: the flag, the TOML key and an agent's copy of
/// the workload all read it with the type's own `parse` (so each says the
/// same thing about a bad value) and write it as it displays.
macro_rules! by_name {
    ($($t:ty),*) => {$(
        impl std::str::FromStr for $t {
            type Err = SpecError;
            fn from_str(text: &str) -> Result<Self, SpecError> {
                <$t>::parse(text)
            }
        }
        impl Serialize for $t {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_str(self)
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                <$t>::parse(&text).map_err(serde::de::Error::custom)
            }
        }
    )*};
}

by_name!(
    EngineKind,
    AccessDist,
    DataPattern,
    Arrivals,
    CpuPolicy,
    TargetOrder,
    FileIo,
    FileSelect,
    FormatMode
);

macro_rules! workload_file {
    (
        $(#[$smeta:meta])*
        pub struct WorkloadFile {
            $(
                $(#[$fmeta:meta])*
                pub $field:ident : $ty:ty [$($role:ident),*],
            )*
        }
    ) => {
        $(#[$smeta])*
        pub struct WorkloadFile {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        /// Every workload key as a constant, so code names a parameter by
        /// the declaration, not by a string of its own.
        #[allow(non_upper_case_globals)]
        pub mod key {
            $( pub const $field: &str = stringify!($field); )*
        }

        impl WorkloadFile {
            /// Every parameter in declaration order.
            pub const KEYS: &'static [Param] = &[
                $( Param { key: stringify!($field), roles: &[$(Role::$role),*] }, )*
            ];

            /// Values in `top` win over values in `self`; labels are merged
            /// key by key; a layer that gives either key of a pair
            /// ([`PAIRS`]) decides both.
            pub fn overlay(mut self, mut top: WorkloadFile) -> WorkloadFile {
                for (a, b) in PAIRS {
                    if top.is_given(a) || top.is_given(b) {
                        self.clear(a);
                        self.clear(b);
                    }
                }
                if let Some(theirs) = top.labels.take() {
                    let mut merged = self.labels.take().unwrap_or_default();
                    merged.extend(theirs);
                    top.labels = Some(merged);
                }
                $( if top.$field.is_some() { self.$field = top.$field; } )*
                self
            }

            /// Whether this layer gives `key`.
            pub fn is_given(&self, key: &str) -> bool {
                $( if key == stringify!($field) { return self.$field.is_some(); } )*
                false
            }

            /// Forgets `key`'s value in this layer.
            pub fn clear(&mut self, key: &str) {
                $( if key == stringify!($field) { self.$field = None; } )*
            }

            /// The keys this layer gives, in declaration order.
            pub fn given(&self) -> Vec<&'static str> {
                let mut out = Vec::new();
                $( if self.$field.is_some() { out.push(stringify!($field)); } )*
                out
            }

            /// The keys and values a workload TOML file would hold, in
            /// declaration order: how importers and emitters write what
            /// they built.
            pub fn to_pairs(&self) -> Vec<(&'static str, toml::Value)> {
                let mut out = Vec::new();
                $(
                    if let Some(v) = &self.$field {
                        if let Ok(v) = toml::Value::try_from(v) {
                            out.push((stringify!($field), v));
                        }
                    }
                )*
                out
            }
        }
    };
}

workload_file! {
/// Workload parameters as written: every field optional, so a TOML file and the
/// command line can each give some and be layered (`overlay`) before `resolve`.
/// This one declaration is both: the TOML keys are the field names and the
/// long flags are the same names with dashes (`read_bs` / `--read-bs`); the
/// doc comments are the flags' help. Values stay text until `resolve`, so a
/// flag and a key are parsed and checked by the same code.
// Serialize: a controller hands each agent its workload as these keys.
#[derive(Debug, Clone, Default, Deserialize, Serialize, PartialEq, clap::Args)]
#[serde(deny_unknown_fields)]
pub struct WorkloadFile {
    /// Files or block devices (the command line's repeatable `--target`).
    #[arg(skip)]
    pub target: Option<OneOrMany> [Plan, Fixed, List],
    /// Size of a new scratch file's test data (needed for any name but ./iorig-scratch.dat, which is 1g by default; the file is 1 MiB larger: the header that marks it as iorig's); an existing iorig file is grown or shrunk to it; a device or foreign file has its first SIZE bytes tested.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<StrOrNum> [Plan, Fixed],
    /// Block size, fixed (4k) or weighted (4k:50,8k:30,64k:20) [default: 4k].
    #[arg(long, value_name = "SIZE|SIZE:W,...", visible_alias = "blocksize")]
    pub bs: Option<StrOrNum> [],
    /// Block size of reads only, as --bs [default: --bs].
    #[arg(long, value_name = "SIZE|SIZE:W,...")]
    pub read_bs: Option<StrOrNum> [],
    /// Block size of writes only, as --bs [default: --bs].
    #[arg(long, value_name = "SIZE|SIZE:W,...")]
    pub write_bs: Option<StrOrNum> [],
    /// fio's access pattern in one word, for those who think in fio: read, write, trim, randread, randwrite, randtrim, rw (or readwrite) or randrw, with fio's :N (sequential: bytes skipped after each I/O, as --skip; random: I/Os per seek, as --run-length). It sets the defaults of --read (a mix reads 50 %), --trim, --random, --skip and --run-length; those flags given win [default: randread].
    #[arg(long, value_name = "MODE[:N]", visible_alias = "readwrite")]
    pub rw: Option<StrOrNum> [],
    /// Percentage of I/Os that are reads [default: 100].
    #[arg(long, value_name = "PCT", visible_alias = "rwmixread")]
    pub read: Option<StrOrNum> [],
    /// Percentage of I/Os that are trims (discards; writes take the rest) [default: 0].
    #[arg(long, value_name = "PCT")]
    pub trim: Option<StrOrNum> [],
    /// Percentage of I/Os at random offsets; 0 = sequential [default: 100].
    #[arg(long, value_name = "PCT")]
    pub random: Option<StrOrNum> [],
    /// I/Os per random seek: each random offset is followed by N-1 sequential I/Os (fio's randread:N) [default: 1].
    #[arg(long, value_name = "N")]
    pub run_length: Option<StrOrNum> [],
    /// Sequential I/O over several targets: sequential (one after another), roundrobin (each I/O at the next target) or random (each at a random one), each target read on from where it was left; :N makes N I/Os a turn (fio's file_service_type) [default: sequential].
    #[arg(long, value_name = "ORDER[:N]")]
    pub target_order: Option<TargetOrder> [],
    /// Bytes left out after every sequential I/O, e.g. 4k: a stride of bs + skip (fio's read:4k) [default: 0].
    #[arg(long, value_name = "SIZE")]
    pub skip: Option<StrOrNum> [],
    /// Zones of this size: the I/O stays in one zone for --zone-size bytes, then moves to the next (fio's zonemode=strided zonerange) [default: no zones].
    #[arg(long, value_name = "SIZE")]
    pub zone_range: Option<StrOrNum> [],
    /// Bytes of I/O in a zone before the next one [default: --zone-range].
    #[arg(long, value_name = "SIZE")]
    pub zone_size: Option<StrOrNum> [],
    /// Bytes left out between one zone and the next [default: 0].
    #[arg(long, value_name = "SIZE")]
    pub zone_skip: Option<StrOrNum> [],
    /// Offsets are multiples of this, e.g. 512 [default: the block size; 4k or smaller for mixed sizes].
    #[arg(long, value_name = "SIZE")]
    pub align: Option<StrOrNum> [],
    /// Outstanding I/Os per worker [default: 1].
    #[arg(long, value_name = "N", visible_alias = "iodepth")]
    pub qd: Option<StrOrNum> [Pre],
    /// Queued I/Os per submission call, 1 to --qd; 1 submits each I/O at once,
    /// as fio does [default: 1].
    #[arg(long, value_name = "N")]
    pub submit_batch: Option<StrOrNum> [Pre],
    /// Total workers [default: 1].
    #[arg(long, value_name = "N", visible_alias = "numjobs")]
    pub threads: Option<StrOrNum> [Pre],
    /// Run the workers on these CPUs only, e.g. 0-3,8 (fio's cpus_allowed) [default: any].
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String> [],
    /// How the workers use --cpus: shared (each may run on any of them) or split (worker i on the i-th CPU of the list alone, wrapping round; fio's cpus_allowed_policy) [default: shared].
    #[arg(long, value_name = "shared|split")]
    pub cpus_policy: Option<CpuPolicy> [],
    /// I/O engine [default: io_uring].
    #[arg(long, value_name = "ENGINE", visible_alias = "ioengine")]
    pub engine: Option<EngineKind> [Pre, Inherit],
    /// Open targets with O_DIRECT (the default).
    #[arg(
        long,
        num_args = 0,
        default_missing_value = "true",
        conflicts_with = "buffered"
    )]
    pub direct: Option<bool> [Pre, Inherit],
    /// Go through the page cache (no O_DIRECT).
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub buffered: Option<bool> [Pre, Inherit],
    /// Open for writing with O_SYNC.
    #[arg(
        long,
        num_args = 0,
        default_missing_value = "true",
        conflicts_with = "dsync"
    )]
    pub sync: Option<bool> [],
    /// Open for writing with O_DSYNC.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub dsync: Option<bool> [],
    /// Each worker calls fsync on the targets it wrote after every N writes, once they completed (fio's fsync=N) [default: never].
    #[arg(long, value_name = "N")]
    pub fsync_every: Option<StrOrNum> [],
    /// As --fsync-every with fdatasync (fio's fdatasync=N) [default: never].
    #[arg(long, value_name = "N")]
    pub fdatasync_every: Option<StrOrNum> [],
    /// Each worker calls fsync on every target it wrote once its I/O has ended and completed, timed as a sync operation of the last interval (fio's end_fsync, and fsync_on_close: iorig closes its targets at the end).
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub fsync_at_end: Option<bool> [],
    /// Remove the scratch files this run created once it ends (fio's unlink); files that existed before are kept.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub unlink: Option<bool> [],
    /// Keep what the page cache holds of the targets: by default each step starts with their cached pages written back and dropped (fdatasync, then POSIX_FADV_DONTNEED on a file, BLKFLSBUF on a device: fio's invalidate=1), so a buffered step reads the storage, not what the step before left in memory.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub keep_cache: Option<bool> [],
    /// Before the step, write back and drop all of the host's page cache, dentries and inodes (sync, then /proc/sys/vm/drop_caches = 3, as HCIBench does between tests); needs root.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub drop_caches: Option<bool> [],
    /// Total IOPS, paced on a schedule, or max [default: max].
    #[arg(long, value_name = "IOPS|max")]
    pub rate: Option<StrOrNum> [],
    /// A cap on the reads' IOPS alone (all workers together): while reads are ahead of it, each worker issues a write instead, or waits when writes are held too; the other direction runs unpaced unless capped (fio's rate_iops=R,W) [default: none].
    #[arg(long, value_name = "IOPS")]
    pub read_rate: Option<StrOrNum> [],
    /// A cap on the writes' IOPS alone, as --read-rate (fio's rate_iops=,W) [default: none].
    #[arg(long, value_name = "IOPS")]
    pub write_rate: Option<StrOrNum> [],
    /// Measured time [default: 30s].
    #[arg(long, value_name = "DUR", visible_alias = "runtime")]
    pub time: Option<StrOrNum> [],
    /// End once this many bytes were issued (reads, writes and trims together), or at --time, whichever comes first; N% is a share of the working set (200% = two passes).
    #[arg(long, value_name = "SIZE")]
    pub io_size: Option<StrOrNum> [],
    /// The run fails, and stops, once a measured interval's IOPS fall below this (fio's rate_iops_min) [default: no floor].
    #[arg(long, value_name = "IOPS")]
    pub min_iops: Option<StrOrNum> [],
    /// How I/Os arrive under --rate: uniform (evenly spaced) or poisson (random gaps of the same mean, as open-system traffic) [default: uniform].
    #[arg(long, value_name = "uniform|poisson")]
    pub arrivals: Option<Arrivals> [],
    /// Each worker pauses this long after every --think-every I/Os, once they have completed (fio's thinktime); under a rate, see --think-moves-rate [default: no pause].
    #[arg(long, value_name = "DUR")]
    pub think_time: Option<StrOrNum> [],
    /// I/Os a worker issues between two pauses of --think-time [default: 1].
    #[arg(long, value_name = "N")]
    pub think_every: Option<StrOrNum> [],
    /// The part of each --think-time pause spent spinning on the CPU instead of sleeping [default: 0s].
    #[arg(long, value_name = "DUR")]
    pub think_spin: Option<StrOrNum> [],
    /// Under --rate, --read-rate or --write-rate, each --think-time pause moves the schedule on by its length, so the pauses lower the rate (fio's rate_ignore_thinktime). By default the schedule stays: the I/Os that fell due during a pause go out after it, their latency counted from its end.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub think_moves_rate: Option<bool> [],
    /// Workers wait this long before their first I/O, counted from the start (--warmup included) [default: 0s].
    #[arg(long, value_name = "DUR")]
    pub start_delay: Option<StrOrNum> [],
    /// Time run before measuring, excluded from the summary [default: 0s].
    #[arg(long, value_name = "DUR")]
    pub warmup: Option<StrOrNum> [],
    /// Reporting interval [default: 1s].
    #[arg(long, value_name = "DUR")]
    pub interval: Option<StrOrNum> [Pre, Inherit],
    /// Working set as a share of each target, e.g. 0%-50% [default: 0%-100%].
    #[arg(long, value_name = "START%-END%")]
    pub range: Option<String> [Pre],
    /// Offset distribution: uniform, zipf:THETA, pareto:H, normal:DEV, hot:IOPCT/SPACEPCT, zoned:IOPCT/SPACEPCT:..., zoned_abs:IOPCT/SIZE:... or hotband (vdbench's curve)
    #[arg(long, value_name = "DIST")]
    pub dist: Option<AccessDist> [],
    /// Write data: random, zero, compress:RATIO, dedup:RATIO, dedup:RATIO,compress:RATIO or pattern:0xHEX (every buffer the pattern, as fio's buffer_pattern) [default: random].
    #[arg(long, value_name = "PATTERN")]
    pub data: Option<DataPattern> [],
    /// Seed of the offset, size and op sequences (printed with every result).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64> [Pre, Inherit],
    /// Labels of the run (the command line's repeatable `--label KEY=VALUE`).
    #[arg(skip)]
    pub labels: Option<BTreeMap<String, String>> [Fixed, Pre, Inherit],
    /// Fault-injection rule for --engine fault (tests), e.g. eio:after=1000.
    #[arg(long, value_name = "RULE", hide = true)]
    pub fault: Option<Vec<String>> [Fixed, List],
    /// Validate data: self-checking writes, reads of written blocks checked,
    /// writes over written blocks read and checked first.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub verify: Option<bool> [Fixed, Step],
    /// Also read back and check every block right after writing it (implies --verify).
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub verify_after: Option<bool> [Fixed, Step],
    /// Fill written blocks with this pattern and check what is read against it, byte for byte (fio's verify_pattern): 0x and hex digits, or a 'quoted' string. Implies --verify.
    #[arg(long, value_name = "PATTERN")]
    pub verify_pattern: Option<String> [Fixed, Step],
    /// Check every block read, written by this run or not: each must hold an intact iorig block of its own offset (or the --verify-pattern), as fio's verify_only. Implies --verify; reads only.
    #[arg(long, num_args = 0, default_missing_value = "true")]
    pub verify_only: Option<bool> [Fixed, Step],
    /// Stop the run after this many validation errors [default: 50].
    #[arg(long, value_name = "N")]
    pub max_errors: Option<StrOrNum> [Fixed, Step],
    /// Failed I/Os with these errors are counted and the worker goes on (fio's ignore_error), e.g. EIO,ENOSPC, or all [default: a failed I/O ends its worker].
    #[arg(long, value_name = "ERRNO,...|all")]
    pub ignore_errors: Option<String> [Fixed],
    /// Directory of a file-system workload (a directory given as --target is one too).
    #[arg(long, value_name = "DIR", help_heading = "File-system workloads")]
    pub anchor: Option<String> [Fixed],
    /// Directory levels below the anchor [default: 1].
    #[arg(long, value_name = "N", help_heading = "File-system workloads")]
    pub depth: Option<StrOrNum> [Fs],
    /// Directories per level; width^depth leaf directories [default: 4].
    #[arg(long, value_name = "N", help_heading = "File-system workloads")]
    pub width: Option<StrOrNum> [Fs],
    /// File slots per leaf directory [default: 256].
    #[arg(long, value_name = "N", help_heading = "File-system workloads")]
    pub files: Option<StrOrNum> [Fs],
    /// File sizes, fixed (128k) or weighted (4k:70,64k:30); 0 makes empty files [default: 64k].
    #[arg(
        long,
        value_name = "SIZE|SIZE:W,...",
        help_heading = "File-system workloads"
    )]
    pub file_size: Option<StrOrNum> [Fs],
    /// Stop filling slots once the files' sizes reach this total.
    #[arg(long, value_name = "SIZE", help_heading = "File-system workloads")]
    pub total_size: Option<StrOrNum> [Fs],
    /// Operations with their shares: read, write, create, delete, mkdir, rmdir, open, stat, setattr, rename, fsync, readdir (e.g. create:20,stat:80) [default: read].
    #[arg(
        long,
        value_name = "OP|OP:PCT,...",
        help_heading = "File-system workloads"
    )]
    pub ops: Option<String> [Fs],
    /// Offsets inside a file [default: sequential].
    #[arg(long, value_name = "MODE", help_heading = "File-system workloads")]
    pub fileio: Option<FileIo> [Fs],
    /// Which file an operation picks: random, sequential, or skewed like --dist (zipf:1.2, hot:90/10) [default: random].
    #[arg(long, value_name = "MODE", help_heading = "File-system workloads")]
    pub fileselect: Option<FileSelect> [Fs],
    /// Reads or writes per open-close [default: the file's size in --bs units].
    #[arg(long, value_name = "N", help_heading = "File-system workloads")]
    pub stopafter: Option<StrOrNum> [Fs],
    /// Each worker goes over its share of the files this many times, in order, then ends (fio's filestat and filecreate jobs without a runtime: each file once); needs --fileselect sequential [default: until --time].
    #[arg(long, value_name = "N", help_heading = "File-system workloads")]
    pub file_passes: Option<StrOrNum> [Fs],
    /// Before the operations: no (use the tree as it is), yes (create it anew), once (yes for the first step, restart after), restart (create what is missing), dirs (directories only) [default: restart].
    #[arg(long, value_name = "MODE", help_heading = "File-system workloads")]
    pub format: Option<FormatMode> [Fixed, Fs],
    /// Remove the tree when the run ends.
    #[arg(
        long,
        num_args = 0,
        default_missing_value = "true",
        help_heading = "File-system workloads"
    )]
    pub cleanup: Option<bool> [Fixed, Fs],
    /// Refuse a tree of more entries (directories and file slots) than this [default: 10000000].
    #[arg(long, value_name = "N", help_heading = "File-system workloads")]
    pub max_entries: Option<StrOrNum> [Fixed, Fs],
}

}

/// A headline parameter: one of the few every table of steps shows and the
/// store keeps as a searchable column of its own (the rest stay in each
/// step's parameters document). A new one needs an append-only store
/// migration besides its row here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Headline {
    /// Its workload key.
    pub key: &'static str,
    /// Its column in the store and in exports, with its unit.
    pub column: &'static str,
    /// Its head in a report's step table.
    pub head: &'static str,
    /// Its head in a narrow terminal table.
    pub narrow: &'static str,
}

/// The headline parameters, one constant each, so a table names its column
/// by the constant.
pub mod headline {
    use super::{key, Headline};

    pub const BS: Headline = Headline {
        key: key::bs,
        column: "bs_bytes",
        head: key::bs,
        narrow: key::bs,
    };
    pub const READ: Headline = Headline {
        key: key::read,
        column: "read_pct",
        head: "read %",
        narrow: key::read,
    };
    pub const RANDOM: Headline = Headline {
        key: key::random,
        column: "random_pct",
        head: "random %",
        narrow: key::random,
    };
    pub const QD: Headline = Headline {
        key: key::qd,
        column: key::qd,
        head: key::qd,
        narrow: key::qd,
    };
    pub const THREADS: Headline = Headline {
        key: key::threads,
        column: key::threads,
        head: key::threads,
        narrow: "thr",
    };
    pub const RATE: Headline = Headline {
        key: key::rate,
        column: "rate_iops",
        head: key::rate,
        narrow: key::rate,
    };
    /// In the order tables show them.
    pub const ALL: [Headline; 6] = [BS, READ, RANDOM, QD, THREADS, RATE];
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> WorkloadFile {
        WorkloadFile::from_toml("t", text).expect("a good workload file")
    }

    #[test]
    fn labels_of_the_top_layer_survive_a_base_without_any() {
        let top = file("labels = { a = '1' }\n");
        let w = WorkloadFile::default().overlay(top);
        assert_eq!(w.labels, Some([("a".into(), "1".into())].into()));
        let w = file("labels = { a = '0', b = '2' }\n").overlay(file("labels = { a = '1' }\n"));
        assert_eq!(
            w.labels,
            Some([("a".into(), "1".into()), ("b".into(), "2".into())].into())
        );
    }

    #[test]
    fn a_layer_that_gives_one_key_of_a_pair_decides_both() {
        let w = file("buffered = true\nsync = true\n").overlay(file("direct = true\n"));
        assert_eq!((w.direct, w.buffered), (Some(true), None));
        assert_eq!(w.sync, Some(true));
        for (a, b) in PAIRS {
            assert_eq!(partner(a), Some(*b));
            assert_eq!(partner(b), Some(*a));
        }
    }

    #[test]
    fn the_pairs_written_read_back_as_the_same_workload() {
        let text =
            "target = ['a', 'b']\nbs = '4k:50,8k:50'\nread = 70.5\nqd = 8\nengine = 'psync'\n\
                    dist = 'zipf:1.2'\ndata = 'compress:2'\narrivals = 'poisson'\nseed = 7\n\
                    labels = { k = 'v' }\nfault = ['eio:after=1']\ndirect = true\n";
        let w = file(text);
        let pairs = w.to_pairs();
        let keys: Vec<&str> = pairs.iter().map(|(k, _)| *k).collect();
        assert_eq!(keys, w.given());
        let table: toml::Table = pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let back: WorkloadFile = toml::Value::Table(table).try_into().expect("reads back");
        assert_eq!(back, w);
        // Every given key is in the table, in its order.
        let order: Vec<&str> = WorkloadFile::KEYS
            .iter()
            .map(|p| p.key)
            .filter(|k| w.is_given(k))
            .collect();
        assert_eq!(order, keys);
    }

    #[test]
    fn a_choice_is_read_by_its_type_and_written_by_name() {
        let w = file("engine = 'uring'\ndist = 'hot:90/10'\nfileio = 'rand'\n");
        assert_eq!(w.engine, Some(EngineKind::IoUring));
        assert_eq!(
            w.dist,
            Some(AccessDist::Hot {
                io_pct: 90.0,
                space_pct: 10.0
            })
        );
        let pairs = w.to_pairs();
        assert_eq!(pairs[0].1.as_str(), Some("io_uring"));
        let e = WorkloadFile::from_toml("t", "engine = 'spdk'\n").expect_err("refused");
        assert!(
            e.to_string().contains("use io_uring, psync, mmap or null"),
            "{e}"
        );
    }

    #[test]
    fn every_key_is_its_own_constant_and_clears() {
        let mut w = file("qd = 4\nthreads = 2\n");
        assert_eq!(key::qd, "qd");
        assert!(w.is_given(key::qd));
        w.clear(key::qd);
        assert_eq!(w.given(), vec![key::threads]);
        let mut seen = std::collections::BTreeSet::new();
        for p in WorkloadFile::KEYS {
            assert!(seen.insert(p.key), "{} twice", p.key);
        }
    }
}
