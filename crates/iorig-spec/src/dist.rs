//! How random offsets (and a tree's file picks) are spread: uniform, zipf,
//! pareto, or a hot share of the space; read from `dist = "zipf:1.2"` and
//! written back the same way. Its own module: both a block workload
//! (`workload`) and a tree's file selection (`fs`) use it.

use crate::SpecError;
use std::fmt;

/// How random offsets are spread over the working set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AccessDist {
    Uniform,
    /// Zipf with exponent theta over the blocks of the range (theta > 0).
    Zipf {
        theta: f64,
    },
    /// Pareto power law: a share `h` of I/Os go to a share `1 - h` of the range.
    Pareto {
        h: f64,
    },
    /// `io_pct` % of I/Os go to the first `space_pct` % of the range.
    Hot {
        io_pct: f64,
        space_pct: f64,
    },
}

impl AccessDist {
    pub fn parse(text: &str) -> Result<Self, SpecError> {
        let t = text.trim();
        let (kind, arg) = match t.split_once(':') {
            Some((k, a)) => (k, Some(a)),
            None => (t, None),
        };
        let num = |a: Option<&str>, what: &str| -> Result<f64, SpecError> {
            let a =
                a.ok_or_else(|| SpecError::bad("dist", text, format!("{kind} needs {what}")))?;
            a.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| SpecError::bad("dist", text, format!("'{a}' is not a number")))
        };
        match kind {
            "uniform" if arg.is_none() => Ok(AccessDist::Uniform),
            "zipf" => {
                let theta = num(arg, "a theta, e.g. zipf:1.2")?;
                if theta <= 0.0 {
                    return Err(SpecError::bad("dist", text, "zipf theta must be above 0"));
                }
                Ok(AccessDist::Zipf { theta })
            }
            "pareto" => {
                let h = num(arg, "an h, e.g. pareto:0.9")?;
                if !(h > 0.0 && h < 1.0) || h == 0.5 {
                    return Err(SpecError::bad(
                        "dist",
                        text,
                        "pareto h must lie between 0 and 1 and not be 0.5 (0.9 = 90% of I/O to 10% of the range)",
                    ));
                }
                Ok(AccessDist::Pareto { h })
            }
            "hot" => {
                let a = arg.ok_or_else(|| {
                    SpecError::bad("dist", text, "hot needs IO%/SPACE%, e.g. hot:90/10")
                })?;
                let (io, space) = a.split_once('/').ok_or_else(|| {
                    SpecError::bad("dist", text, "hot needs IO%/SPACE%, e.g. hot:90/10")
                })?;
                let io_pct = num(Some(io), "IO%")?;
                let space_pct = num(Some(space), "SPACE%")?;
                if !(io_pct > 0.0 && io_pct < 100.0 && space_pct > 0.0 && space_pct < 100.0) {
                    return Err(SpecError::bad(
                        "dist",
                        text,
                        "both hot percentages must lie strictly between 0 and 100",
                    ));
                }
                Ok(AccessDist::Hot { io_pct, space_pct })
            }
            _ => Err(SpecError::bad(
                "dist",
                text,
                "use uniform, zipf:THETA, pareto:H or hot:IOPCT/SPACEPCT",
            )),
        }
    }
}

impl fmt::Display for AccessDist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AccessDist::Uniform => write!(f, "uniform"),
            AccessDist::Zipf { theta } => write!(f, "zipf:{theta}"),
            AccessDist::Pareto { h } => write!(f, "pareto:{h}"),
            AccessDist::Hot { io_pct, space_pct } => write!(f, "hot:{io_pct}/{space_pct}"),
        }
    }
}
