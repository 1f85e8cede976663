//! Pure workload types for iorig.
//!
//! This crate says *what* a run should do, never *how*: it parses sizes and
//! durations, reads workload TOML files, merges them with command-line values and
//! validates the result into a [`Workload`] that the engine can execute without
//! further checks, and reads test plans ([`Plan`]) and expands their sweeps into
//! concrete steps. It does no I/O besides what the caller hands it as text, so
//! every rule here is unit-testable.

mod dist;
mod error;
pub mod foreign;
pub mod fs;
mod labels;
mod mix;
mod params;
pub mod plan;
pub mod suggest;
mod units;
mod workload;

pub use error::SpecError;
pub use fs::{
    FileIo, FileSelect, FileSizes, FormatMode, FsOp, FsRecord, FsWorkload, OpMix,
    DEFAULT_MAX_ENTRIES,
};
pub use labels::{
    check_label, check_name, printable, shown_label, LABEL_KEY_MAX_BYTES, LABEL_VALUE_MAX_BYTES,
};
pub use params::{
    flag_error, headline, key, partner, Choice, ChoiceParser, Headline, Param, Role, WorkloadFile,
    PAIRS,
};
pub use plan::{
    builtin, builtin_text, builtins, estimate_duration, HostSizing, HotSize, Pause, Plan, PlanJob,
    PlanStep, PreconditionSpec, SteadyRule, SteadyStateSpec, StepRole,
};
pub use units::{
    format_bytes, format_duration, format_duration_exact, format_size, parse_count, parse_duration,
    parse_size, sig3,
};
pub use workload::{
    format_pattern, parse_cpu_list, parse_pattern, AccessDist, Arrivals, BsSpec, BsWeight,
    CpuPolicy, DataPattern, DirectionCaps, EngineKind, IgnoreErrors, OneOrMany, RangePct, Rate,
    StrOrNum, SyncEvery, SyncMode, TargetOrder, Think, Workload, WorkloadRecord, Zones,
    DEFAULT_MAX_ERRORS, DEFAULT_SIZE_BYTES, DEFAULT_TARGET, MAX_ZONES,
};
