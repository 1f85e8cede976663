//! iorig's typed result schema: a run, its resolved workload and targets,
//! every interval, the summaries and the findings (knee, best under a
//! latency target, steady state, write cliff, outages, generator-bound) as
//! Rust types with serde.
//!
//! These types are the one source of the `--json` documents
//! (`iorig.result/1`, docs/json-schema.md), of what the store keeps and
//! gives back, and of what the CSV, XLSX and HTML reports and `compare`
//! read. A field renamed here is a compile error everywhere, not a silent
//! wrong number. Every document type refuses unknown fields, so a document
//! that does not match the code fails to parse instead of losing fields.
//!
//! The per-operation figures ([`OpSummary`], [`LatSummary`]) and the host
//! figures ([`CpuUsage`], [`DeviceUsage`]) are computed by `iorig-stats`
//! and re-exported here, as is the resolved workload ([`WorkloadRecord`])
//! from `iorig-spec`.

/// Declares a closed set of snake_case names with its serde, `Display` and
/// `FromStr` spellings (all the same) and the list of every value.
macro_rules! names {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(
            Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord,
            Serialize, Deserialize,
            strum::Display, strum::EnumString, strum::IntoStaticStr, strum::VariantArray,
        )]
        #[serde(rename_all = "snake_case")]
        #[strum(serialize_all = "snake_case")]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// The stored and printed spelling.
            pub fn as_str(self) -> &'static str {
                self.into()
            }
        }
    };
}

mod doc;
mod figures;
mod finding;
pub mod live;
mod names;
mod profile;
mod run_doc;
mod status;
mod validation;

pub use doc::{
    FormatSummary, HostResult, HostStatus, Interval, JobResult, ReplayReport, ResultDoc, RunInfo,
    StepSummary, Summary, TargetEntry, ToolInfo, SCHEMA,
};
pub use figures::{five_figures, Figure, FigureStep, Headline, Steady, FIVE_FIGURES};
pub use finding::{
    CurveFinding, Finding, FindingError, FindingKind, OffRatePoint, PreconditionFinding, RateCheck,
    SkippedFinding, SteadyStateFinding, WriteCliffFinding,
};
pub use iorig_spec::{BsWeight, FsOp, FsRecord, WorkloadRecord};
pub use iorig_stats::{CpuUsage, DeviceUsage, LatSummary, OpSummary};
pub use names::TargetKind;
pub use profile::{FigureStat, ProfileInterval, ProfileSummary};
pub use run_doc::{
    step_figures, FindingEntry, IntervalCpu, IntervalDoc, RunDoc, RunHeader, StepDoc, TargetDoc,
    RUN_SCHEMA,
};
pub use status::{HistKind, Op, RunKind, RunStatus, StepRole, StepStatus, UnknownRole};
pub use validation::{Validation, ValidationErrorEntry};
