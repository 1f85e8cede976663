//! How random offsets (and a tree's file picks) are spread: uniform, zipf,
//! pareto, normal, a hot share of the space, or zones (by share or by
//! size); read from `dist = "zipf:1.2"` and written back the same way. Its own module: both a block workload
//! (`workload`) and a tree's file selection (`fs`) use it.

use crate::SpecError;
use std::fmt;

/// How random offsets are spread over the working set.
// Zoned's fixed array (256 bytes) keeps the type Copy; a distribution is
// copied when a workload is set up, never per I/O.
#[allow(clippy::large_enum_variant)]
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
    /// Zones laid end to end from the start of the range, each taking a
    /// share of the I/Os over a share of the space (fio's `zoned:`, in
    /// which JEDEC's enterprise workload is written): the first `count`
    /// entries of `zones`, (io %, space %), each column adding up to 100.
    Zoned {
        zones: [(f64, f64); MAX_ZONES],
        count: usize,
    },
    /// Zones of absolute sizes laid end to end from the start of the range
    /// (fio's `zoned_abs:`): the first `count` entries of `zones`, (io %,
    /// bytes). The I/O shares add up to 100; the sizes must fit in the
    /// range, and what lies beyond them gets no I/O, as in fio.
    ZonedAbs {
        zones: [(f64, u64); MAX_ZONES],
        count: usize,
    },
    /// fio's `normal:DEV`: popularity ranks drawn as the mean of twelve
    /// uniform draws over the range (a bell of about 1/12 of it) plus a
    /// uniform spread of `dev_pct` % of it, and scattered over the range as
    /// zipf's ranks are (fio hashes them), so the hot blocks are not
    /// neighbours.
    Normal {
        dev_pct: f64,
    },
    /// vdbench's `hotband=`: offsets drawn from vdbench's cache-access
    /// curve (most I/Os near the start of the range, a long tail over the
    /// rest), wrapped over the range, writes a hundredth of the range
    /// further on than reads.
    Hotband,
}

/// The most zones a `zoned:` distribution has.
pub const MAX_ZONES: usize = 16;

impl AccessDist {
    /// The zones of a `zoned:` distribution, in order.
    pub fn zones(&self) -> &[(f64, f64)] {
        match self {
            AccessDist::Zoned { zones, count } => &zones[..*count],
            _ => &[],
        }
    }

    /// The zones of a `zoned_abs:` distribution, in order: (io %, bytes).
    pub fn abs_zones(&self) -> &[(f64, u64)] {
        match self {
            AccessDist::ZonedAbs { zones, count } => &zones[..*count],
            _ => &[],
        }
    }
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
            "zoned" => {
                let a = arg.ok_or_else(|| {
                    SpecError::bad(
                        "dist",
                        text,
                        "zoned needs IO%/SPACE%:..., e.g. zoned:60/10:30/20:10/70",
                    )
                })?;
                let mut zones = [(0.0, 0.0); MAX_ZONES];
                let mut count = 0;
                for z in a.split(':') {
                    let (io, space) = z.split_once('/').ok_or_else(|| {
                        SpecError::bad(
                            "dist",
                            text,
                            format!("zone '{z}': give IO%/SPACE%, e.g. 60/10"),
                        )
                    })?;
                    let zone = (num(Some(io), "IO%")?, num(Some(space), "SPACE%")?);
                    if zone.0 < 0.0 || zone.1 <= 0.0 {
                        return Err(SpecError::bad("dist", text, format!("zone '{z}': the I/O share may be 0, the space share must be above 0")));
                    }
                    let slot = zones.get_mut(count).ok_or_else(|| {
                        SpecError::bad("dist", text, format!("at most {MAX_ZONES} zones"))
                    })?;
                    *slot = zone;
                    count += 1;
                }
                let (io, space) = zones[..count]
                    .iter()
                    .fold((0.0, 0.0), |(a, b), (i, s)| (a + i, b + s));
                if (io - 100.0).abs() > 0.01 || (space - 100.0).abs() > 0.01 {
                    return Err(SpecError::bad(
                        "dist",
                        text,
                        format!("the zones' I/O shares add up to {io} % and their space shares to {space} %; each must add up to 100"),
                    ));
                }
                Ok(AccessDist::Zoned { zones, count })
            }
            "zoned_abs" => {
                let how = "zoned_abs needs IO%/SIZE:..., e.g. zoned_abs:60/20g:40/100g";
                let a = arg.ok_or_else(|| SpecError::bad("dist", text, how))?;
                let mut zones = [(0.0, 0); MAX_ZONES];
                let mut count = 0;
                for z in a.split(':') {
                    let (io, size) = z.split_once('/').ok_or_else(|| {
                        SpecError::bad("dist", text, format!("zone '{z}': give IO%/SIZE, e.g. 60/20g"))
                    })?;
                    let io = num(Some(io), "IO%")?;
                    let bytes = crate::units::parse_size(size)
                        .map_err(|e| SpecError::bad("dist", text, format!("zone '{z}': {e}")))?;
                    if io < 0.0 || bytes == 0 {
                        return Err(SpecError::bad("dist", text, format!("zone '{z}': the I/O share may be 0, the size must be above 0")));
                    }
                    let slot = zones.get_mut(count).ok_or_else(|| {
                        SpecError::bad("dist", text, format!("at most {MAX_ZONES} zones"))
                    })?;
                    *slot = (io, bytes);
                    count += 1;
                }
                let io: f64 = zones[..count].iter().map(|z| z.0).sum();
                if (io - 100.0).abs() > 0.01 {
                    return Err(SpecError::bad(
                        "dist",
                        text,
                        format!("the zones' I/O shares add up to {io} %; they must add up to 100"),
                    ));
                }
                Ok(AccessDist::ZonedAbs { zones, count })
            }
            "hotband" if arg.is_none() => Ok(AccessDist::Hotband),
            "normal" => {
                let dev_pct = num(arg, "a spread in % of the range, e.g. normal:10")?;
                if !(0.0..=100.0).contains(&dev_pct) {
                    return Err(SpecError::bad("dist", text, "the normal spread is 0 to 100 (% of the range)"));
                }
                Ok(AccessDist::Normal { dev_pct })
            }
            _ => Err(SpecError::bad(
                "dist",
                text,
                "use uniform, zipf:THETA, pareto:H, normal:DEV, hot:IOPCT/SPACEPCT, zoned:IOPCT/SPACEPCT:..., zoned_abs:IOPCT/SIZE:... or hotband",
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
            AccessDist::Zoned { .. } => {
                let zones: Vec<String> = self
                    .zones()
                    .iter()
                    .map(|(io, space)| format!("{io}/{space}"))
                    .collect();
                write!(f, "zoned:{}", zones.join(":"))
            }
            AccessDist::ZonedAbs { .. } => {
                let zones: Vec<String> = self
                    .abs_zones()
                    .iter()
                    .map(|(io, bytes)| format!("{io}/{}", crate::units::format_size(*bytes)))
                    .collect();
                write!(f, "zoned_abs:{}", zones.join(":"))
            }
            AccessDist::Normal { dev_pct } => write!(f, "normal:{dev_pct}"),
            AccessDist::Hotband => write!(f, "hotband"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_reads_back_and_keeps_its_spread_in_range() {
        let d = AccessDist::parse("normal:12.5").unwrap_or(AccessDist::Uniform);
        assert_eq!(d, AccessDist::Normal { dev_pct: 12.5 });
        assert_eq!(AccessDist::parse(&d.to_string()).ok(), Some(d));
        assert_eq!(AccessDist::parse("hotband").ok(), Some(AccessDist::Hotband));
        assert_eq!(AccessDist::Hotband.to_string(), "hotband");
        for bad in [
            "normal",
            "normal:-1",
            "normal:101",
            "normal:x",
            "gauss:5",
            "hotband:3",
        ] {
            assert!(AccessDist::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn zones_read_back_and_must_add_up() {
        let d = AccessDist::parse("zoned:50/5:30/15:15/20:5/60").unwrap_or(AccessDist::Uniform);
        assert_eq!(d.zones().len(), 4);
        assert_eq!(d.to_string(), "zoned:50/5:30/15:15/20:5/60");
        assert_eq!(AccessDist::parse(&d.to_string()).ok(), Some(d));
        for bad in ["zoned:60/10:30/20", "zoned:100/0", "zoned:", "zoned:50-50"] {
            assert!(AccessDist::parse(bad).is_err(), "{bad}");
        }
        let abs =
            AccessDist::parse("zoned_abs:60/20g:30/100G:10/1536m").unwrap_or(AccessDist::Uniform);
        assert_eq!(
            abs.abs_zones(),
            &[(60.0, 20 << 30), (30.0, 100 << 30), (10.0, 1536 << 20)]
        );
        assert_eq!(abs.to_string(), "zoned_abs:60/20g:30/100g:10/1536m");
        assert_eq!(AccessDist::parse(&abs.to_string()).ok(), Some(abs));
        for bad in [
            "zoned_abs:60/20g:30/1g",
            "zoned_abs:100/0",
            "zoned_abs:100/4x",
            "zoned_abs:",
        ] {
            assert!(AccessDist::parse(bad).is_err(), "{bad}");
        }
        let many = vec!["1/1"; 100].join(":");
        let e = AccessDist::parse(&format!("zoned:{many}")).unwrap_err();
        assert!(e.to_string().contains("at most 16 zones"), "{e}");
    }
}
