//! The five figures of the five-parameter characterisation (`iorig quick`):
//! sequential write and read, random write, random read cold and hot, each
//! taken from its step's summary. One function derives them, so the
//! terminal at the end of a run, `runs show`, the HTML report and the JSON
//! export give the same figures.

use crate::{Finding, StepStatus, Summary};
use serde::{Deserialize, Serialize};

/// Which of a figure's numbers is its headline.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Headline {
    /// Bytes per second (the sequential figures).
    Bandwidth,
    /// I/Os per second (the random figures).
    Iops,
}

/// The five figures: the step of the built-in `five-params` plan each comes
/// from, what it measures, and its headline.
pub const FIVE_FIGURES: [(&str, &str, Headline); 5] = [
    ("seq-write", "sequential write", Headline::Bandwidth),
    ("seq-read", "sequential read", Headline::Bandwidth),
    ("rand-write", "random write", Headline::Iops),
    (
        "rand-read-cold",
        "random read, cold (whole target)",
        Headline::Iops,
    ),
    (
        "rand-read-hot",
        "random read, hot (working set)",
        Headline::Iops,
    ),
];

/// A step as the five figures read it.
pub struct FigureStep<'a> {
    pub name: &'a str,
    pub status: StepStatus,
    pub summary: Option<&'a Summary>,
    pub findings: Vec<&'a Finding>,
}

/// One of the five figures.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure {
    /// The step it comes from (`seq-write`, …).
    pub step: String,
    /// What it measures (`sequential write`, …).
    pub what: String,
    pub headline: Headline,
    pub status: StepStatus,
    /// The step's figures; null when it measured nothing (failed, skipped,
    /// interrupted before its first interval).
    pub iops: Option<f64>,
    pub bw_bytes_per_s: Option<f64>,
    pub lat_mean_ns: Option<u64>,
    pub lat_p99_ns: Option<u64>,
    /// For a step that ran in steady-state rounds: whether it got steady,
    /// after how many rounds and how much time.
    pub steady: Option<Steady>,
}

/// A figure's steady-state outcome.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Steady {
    pub reached: bool,
    pub rounds: u64,
    pub time_needed_s: Option<f64>,
}

/// The five figures of the steps given, in their fixed order; a figure whose
/// step is not among them is left out.
pub fn five_figures(steps: &[FigureStep<'_>]) -> Vec<Figure> {
    FIVE_FIGURES
        .iter()
        .filter_map(|&(name, what, headline)| {
            let r = steps.iter().find(|r| r.name == name)?;
            let t = r.summary.map(|s| &s.total);
            let steady = r.findings.iter().find_map(|f| match f {
                Finding::SteadyState(v) => Some(Steady {
                    reached: v.reached,
                    rounds: v.rounds,
                    time_needed_s: v.time_needed_s,
                }),
                _ => None,
            });
            Some(Figure {
                step: name.to_owned(),
                what: what.to_owned(),
                headline,
                status: r.status,
                iops: t.map(|t| t.iops),
                bw_bytes_per_s: t.map(|t| t.bw_bytes_per_s),
                lat_mean_ns: t.map(|t| t.lat_ns.mean),
                lat_p99_ns: t.map(|t| t.lat_ns.p99),
                steady,
            })
        })
        .collect()
}
