//! Pure-logic analysis of measured figures: no I/O, no clocks, only numbers
//! in and verdicts out, so every rule can be tested on synthetic series and
//! every result stored as JSON beside the run it describes.
//!
//! - [`steady_state`]: SNIA PTS steady-state check over per-round figures.
//! - [`curve`]: IOPS–latency curve: best IOPS under a latency limit, knees.
//! - [`series`]: per-interval time series: write cliff and outages.
//! - [`little`]: Little's-law check for a load generator that, rather than
//!   the storage, limited the result.

pub mod curve;
pub mod little;
pub mod series;
pub mod steady_state;

pub use curve::{analyze_curve, CurveAnalysis, CurvePoint, Knee, DEFAULT_KNEE_FACTOR};
pub use little::{GeneratorBoundCheck, LittleInput, LittleVerdict};
pub use series::{
    detect_outages, detect_write_cliff, CliffVerdict, GeneratorDip, Outage, OutageReport,
    SeriesPoint, WriteCliff,
};
pub use steady_state::{SteadyStateDetector, SteadyStateVerdict};
