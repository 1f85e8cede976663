//! Rule sets: figures of a profile → verdicts, kept as data (TOML) the user
//! can read and edit.
//!
//! A rule looks at one summarised figure (`write_bw_bytes_per_s`, total,
//! mean) in a unit of its choice (`MB/s`) and puts it in the first of its
//! ordered zones that holds it. A zone is bounded above by `up_to` (≤) or
//! `below` (<); the last zone has no bound and takes everything above. Each
//! zone has a level (green, yellow, red) and says what it means. A verdict
//! names the figure, its value and the boundary that decided it.
//!
//! ```toml
//! name = "replication-link"
//! description = "..."
//! [[rule]]
//! name = "link bandwidth"
//! figure = "write_bw_bytes_per_s"
//! scope = "total"      # or a device name; default total
//! stat = "mean"        # mean, p95 or peak; default mean
//! unit = "MB/s"        # of the thresholds and the shown value
//! [[rule.zone]]
//! up_to = 35
//! level = "green"
//! says = "a faster link will not help"
//! [[rule.zone]]
//! level = "red"
//! says = "a faster link will help"
//! ```

use crate::figures::Figure;
use crate::ProfileError;
use serde::{Deserialize, Serialize};

const BUILTINS: [(&str, &str); 2] = [
    (
        "replication-link",
        include_str!("../rules/replication-link.toml"),
    ),
    (
        "storage-sizing",
        include_str!("../rules/storage-sizing.toml"),
    ),
];

/// Which summary statistic a rule reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stat {
    Mean,
    P95,
    Peak,
}

impl Stat {
    pub fn name(self) -> &'static str {
        match self {
            Stat::Mean => "mean",
            Stat::P95 => "p95",
            Stat::Peak => "peak",
        }
    }
}

/// How a zone is to be read: green fine, yellow borderline, red act.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Green,
    Yellow,
    Red,
}

impl Level {
    /// The stored spelling (`green`).
    pub fn name(self) -> &'static str {
        match self {
            Level::Green => "green",
            Level::Yellow => "yellow",
            Level::Red => "red",
        }
    }
}

/// The upper bound of a zone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// value ≤ x
    UpTo(f64),
    /// value < x
    Below(f64),
    /// everything (the last zone)
    None,
}

impl Bound {
    fn holds(self, v: f64) -> bool {
        match self {
            Bound::UpTo(x) => v <= x,
            Bound::Below(x) => v < x,
            Bound::None => true,
        }
    }

    fn limit(self) -> Option<f64> {
        match self {
            Bound::UpTo(x) | Bound::Below(x) => Some(x),
            Bound::None => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Zone {
    pub bound: Bound,
    pub level: Level,
    pub says: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub name: String,
    pub figure: Figure,
    pub scope: String,
    pub stat: Stat,
    pub unit: Unit,
    pub zones: Vec<Zone>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct RuleSet {
    pub name: String,
    pub description: String,
    pub rules: Vec<Rule>,
}

/// What one rule found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    pub rule: String,
    /// `None` when the figure has no value (no I/O of that kind, not
    /// reported, unknown device).
    pub level: Option<Level>,
    /// The zone's own words, with its bound (`≤ 35 MB/s`).
    pub zone: String,
    pub says: String,
    pub figure: Figure,
    pub scope: String,
    pub stat: Stat,
    /// In the figure's base unit.
    pub value: Option<f64>,
    /// The figure, its value and the boundary, for people.
    pub shown: String,
}

/// A rule set's verdicts.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Evaluation {
    pub rule_set: String,
    pub verdicts: Vec<Verdict>,
    /// The worst level among the verdicts with data.
    pub overall: Option<Level>,
}

// ------------------------------------------------------------------ units

/// A unit thresholds are written in: its factor to the figure's base unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Unit {
    pub name: &'static str,
    pub factor: f64,
}

/// The kind of quantity a figure is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Quantity {
    Bandwidth,
    Size,
    Rate,
    Percent,
    Millis,
    Depth,
}

fn quantity(figure: Figure) -> Quantity {
    use Figure as F;
    match figure {
        F::ReadBwBytesPerS | F::WriteBwBytesPerS | F::TotalBwBytesPerS | F::DiscardBwBytesPerS => {
            Quantity::Bandwidth
        }
        F::ReadAvgSizeBytes | F::WriteAvgSizeBytes => Quantity::Size,
        F::ReadIops | F::WriteIops | F::TotalIops | F::DiscardIops | F::FlushIops => Quantity::Rate,
        F::ReadPctOps | F::ReadPctBytes | F::UtilPct => Quantity::Percent,
        F::ReadAwaitMs | F::WriteAwaitMs => Quantity::Millis,
        F::QueueDepth => Quantity::Depth,
    }
}

const UNITS: [(Quantity, &str, f64); 18] = [
    (Quantity::Bandwidth, "bytes/s", 1.0),
    (Quantity::Bandwidth, "KB/s", 1e3),
    (Quantity::Bandwidth, "MB/s", 1e6),
    (Quantity::Bandwidth, "GB/s", 1e9),
    (Quantity::Bandwidth, "KiB/s", 1024.0),
    (Quantity::Bandwidth, "MiB/s", 1_048_576.0),
    (Quantity::Bandwidth, "GiB/s", 1_073_741_824.0),
    (Quantity::Size, "bytes", 1.0),
    (Quantity::Size, "k", 1024.0),
    (Quantity::Size, "KiB", 1024.0),
    (Quantity::Size, "MiB", 1_048_576.0),
    (Quantity::Rate, "IOPS", 1.0),
    (Quantity::Rate, "kIOPS", 1e3),
    (Quantity::Percent, "%", 1.0),
    (Quantity::Millis, "ms", 1.0),
    (Quantity::Millis, "us", 1e-3),
    (Quantity::Depth, "I/Os", 1.0),
    (Quantity::Depth, "", 1.0),
];

fn unit_for(figure: Figure, name: Option<&str>) -> Result<Unit, String> {
    let q = quantity(figure);
    let fits: Vec<&(Quantity, &str, f64)> = UNITS.iter().filter(|(uq, _, _)| *uq == q).collect();
    match name {
        None => Ok(Unit {
            name: fits[0].1,
            factor: fits[0].2,
        }),
        Some(n) => fits
            .iter()
            .find(|(_, un, _)| *un == n)
            .map(|(_, un, f)| Unit {
                name: un,
                factor: *f,
            })
            .ok_or_else(|| {
                let names: Vec<&str> = fits.iter().map(|u| u.1).filter(|u| !u.is_empty()).collect();
                format!(
                    "unit `{n}` does not fit `{figure}`; use one of {}",
                    names.join(", ")
                )
            }),
    }
}

fn fmt_in(v: f64, unit: &Unit) -> String {
    let x = v / unit.factor;
    let text = if x == x.trunc() && x.abs() < 1e15 {
        format!("{x:.0}")
    } else if x.abs() >= 100.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    };
    match unit.name {
        "" => text,
        "k" => format!("{text}k"),
        "%" => format!("{text} %"),
        n => format!("{text} {n}"),
    }
}

// ------------------------------------------------------------------ TOML

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileSet {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(rename = "rule", default)]
    rules: Vec<FileRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRule {
    name: String,
    figure: String,
    scope: Option<String>,
    stat: Option<Stat>,
    unit: Option<String>,
    #[serde(rename = "zone", default)]
    zones: Vec<FileZone>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileZone {
    up_to: Option<f64>,
    below: Option<f64>,
    level: Level,
    #[serde(default)]
    says: String,
}

impl RuleSet {
    /// Parses a rule file; `path` names it in errors.
    pub fn from_toml(path: &str, text: &str) -> Result<RuleSet, ProfileError> {
        let bad = |why: String| ProfileError::Rules {
            path: path.to_owned(),
            why,
        };
        let f: FileSet = toml::from_str(text).map_err(|e| bad(e.message().to_owned()))?;
        if f.rules.is_empty() {
            return Err(bad("no [[rule]]; a rule set needs at least one".to_owned()));
        }
        let mut rules = Vec::new();
        for r in f.rules {
            let at = |why: String| bad(format!("rule `{}`: {why}", r.name));
            let figure: Figure = r.figure.parse().map_err(|_| {
                let names: Vec<&str> = Figure::ALL.iter().map(|f| f.name()).collect();
                at(format!(
                    "unknown figure `{}`; figures are {}",
                    r.figure,
                    names.join(", ")
                ))
            })?;
            let unit = unit_for(figure, r.unit.as_deref()).map_err(at)?;
            if r.zones.is_empty() {
                return Err(at("no [[rule.zone]]".to_owned()));
            }
            let mut zones = Vec::new();
            let mut last_limit = f64::NEG_INFINITY;
            let n = r.zones.len();
            for (i, z) in r.zones.into_iter().enumerate() {
                let bound = match (z.up_to, z.below) {
                    (Some(_), Some(_)) => {
                        return Err(at(format!("zone {}: give up_to or below, not both", i + 1)))
                    }
                    (Some(x), None) => Bound::UpTo(x * unit.factor),
                    (None, Some(x)) => Bound::Below(x * unit.factor),
                    (None, None) => Bound::None,
                };
                match bound.limit() {
                    None if i + 1 < n => {
                        return Err(at(format!(
                            "zone {} has no bound but is not the last; only the last zone takes everything above",
                            i + 1
                        )))
                    }
                    Some(_) if i + 1 == n => {
                        return Err(at(
                            "the last zone has a bound; leave up_to/below out of it so every value has a zone".to_owned(),
                        ))
                    }
                    Some(x) if !x.is_finite() || x <= last_limit => {
                        return Err(at(format!(
                            "zone {}: bounds must increase from zone to zone",
                            i + 1
                        )))
                    }
                    Some(x) => last_limit = x,
                    None => {}
                }
                zones.push(Zone {
                    bound,
                    level: z.level,
                    says: z.says,
                });
            }
            rules.push(Rule {
                name: r.name,
                figure,
                scope: r.scope.unwrap_or_else(|| "total".to_owned()),
                stat: r.stat.unwrap_or(Stat::Mean),
                unit,
                zones,
            });
        }
        Ok(RuleSet {
            name: f.name,
            description: f.description,
            rules,
        })
    }

    /// A built-in rule set by name.
    pub fn builtin(name: &str) -> Option<RuleSet> {
        let (_, text) = BUILTINS.iter().find(|(n, _)| *n == name)?;
        RuleSet::from_toml(name, text).ok()
    }

    pub fn builtin_names() -> &'static [&'static str] {
        &["replication-link", "storage-sizing"]
    }

    /// Judges figures; `lookup(scope, figure, stat)` gives a value in the
    /// figure's base unit.
    pub fn evaluate(&self, lookup: &dyn Fn(&str, Figure, Stat) -> Option<f64>) -> Evaluation {
        let verdicts: Vec<Verdict> = self
            .rules
            .iter()
            .map(|r| r.judge(lookup(&r.scope, r.figure, r.stat)))
            .collect();
        Evaluation {
            rule_set: self.name.clone(),
            overall: verdicts.iter().filter_map(|v| v.level).max(),
            verdicts,
        }
    }
}

impl Rule {
    fn judge(&self, value: Option<f64>) -> Verdict {
        let what = format!("{} {} {}", self.scope, self.figure, self.stat.name());
        let Some(v) = value else {
            return Verdict {
                rule: self.name.clone(),
                level: None,
                zone: "no data".to_owned(),
                says: String::new(),
                figure: self.figure,
                scope: self.scope.clone(),
                stat: self.stat,
                value: None,
                shown: format!("{what}: no value"),
            };
        };
        // The last zone is unbounded, so one always holds.
        let i = self
            .zones
            .iter()
            .position(|z| z.bound.holds(v))
            .unwrap_or(self.zones.len() - 1);
        let z = &self.zones[i];
        let zone = match z.bound {
            Bound::UpTo(x) => format!("≤ {}", fmt_in(x, &self.unit)),
            Bound::Below(x) => format!("< {}", fmt_in(x, &self.unit)),
            Bound::None => match self.zones[..i].last().map(|p| p.bound) {
                Some(Bound::UpTo(x)) => format!("> {}", fmt_in(x, &self.unit)),
                Some(Bound::Below(x)) => format!("≥ {}", fmt_in(x, &self.unit)),
                _ => "any".to_owned(),
            },
        };
        Verdict {
            rule: self.name.clone(),
            level: Some(z.level),
            shown: format!("{what} = {} ({zone})", fmt_in(v, &self.unit)),
            zone,
            says: z.says.clone(),
            figure: self.figure,
            scope: self.scope.clone(),
            stat: self.stat,
            value: Some(v),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn judge(set: &RuleSet, figure: Figure, v: f64) -> Verdict {
        let e = set.evaluate(&|_, f, _| (f == figure).then_some(v));
        e.verdicts.into_iter().find(|x| x.figure == figure).unwrap()
    }

    #[test]
    fn builtins_parse_and_name_known_figures() {
        for name in RuleSet::builtin_names() {
            let set = RuleSet::builtin(name).unwrap();
            assert!(!set.rules.is_empty(), "{name}");
            for r in &set.rules {
                assert!(Figure::ALL.contains(&r.figure), "{name}: {}", r.figure);
            }
        }
    }

    #[test]
    fn replication_link_bandwidth_boundaries() {
        let set = RuleSet::builtin("replication-link").unwrap();
        let level = |mb: f64| {
            judge(&set, Figure::WriteBwBytesPerS, mb * 1e6)
                .level
                .unwrap()
        };
        assert_eq!(level(12.0), Level::Green);
        assert_eq!(level(35.0), Level::Green);
        assert_eq!(level(35.000_001), Level::Yellow);
        assert_eq!(level(50.0), Level::Yellow);
        assert_eq!(level(50.000_001), Level::Red);
        assert_eq!(level(80.0), Level::Red);
        let v = judge(&set, Figure::WriteBwBytesPerS, 12.3e6);
        assert_eq!(
            v.shown,
            "total write_bw_bytes_per_s mean = 12.300 MB/s (≤ 35 MB/s)"
        );
        let v = judge(&set, Figure::WriteBwBytesPerS, 80e6);
        assert_eq!(v.zone, "> 50 MB/s");
    }

    #[test]
    fn replication_link_write_size_boundaries() {
        let set = RuleSet::builtin("replication-link").unwrap();
        let level = |b: f64| judge(&set, Figure::WriteAvgSizeBytes, b).level.unwrap();
        assert_eq!(level(8191.0), Level::Green);
        assert_eq!(level(8192.0), Level::Yellow);
        assert_eq!(level(16384.0), Level::Yellow);
        assert_eq!(level(16385.0), Level::Red);
    }

    #[test]
    fn a_missing_figure_has_no_level_and_the_rest_decide() {
        let set = RuleSet::builtin("replication-link").unwrap();
        let e = set.evaluate(&|_, f, _| (f == Figure::WriteBwBytesPerS).then_some(60e6));
        assert_eq!(e.overall, Some(Level::Red));
        let size = e
            .verdicts
            .iter()
            .find(|v| v.figure == Figure::WriteAvgSizeBytes)
            .unwrap();
        assert_eq!(size.level, None);
        let none = set.evaluate(&|_, _, _| None);
        assert_eq!(none.overall, None);
    }

    #[test]
    fn bad_rule_files_are_named() {
        let zone = "[[rule.zone]]\nup_to = 1\nlevel = 'green'\n[[rule.zone]]\nlevel = 'red'\n";
        let bad = |body: &str| {
            RuleSet::from_toml("r.toml", &format!("name = 'x'\n{body}"))
                .unwrap_err()
                .to_string()
        };
        assert!(bad(&format!(
            "[[rule]]\nname = 'a'\nfigure = 'write_bw_bytes_per_s'\ncolour = 1\n{zone}"
        ))
        .contains("colour"));
        assert!(bad(&format!(
            "[[rule]]\nname = 'a'\nfigure = 'write_speed'\n{zone}"
        ))
        .contains("unknown figure `write_speed`"));
        assert!(bad(&format!(
            "[[rule]]\nname = 'a'\nfigure = 'read_pct_ops'\nunit = 'MB/s'\n{zone}"
        ))
        .contains("does not fit"));
        assert!(bad("[[rule]]\nname = 'a'\nfigure = 'util_pct'\n[[rule.zone]]\nup_to = 5\nlevel = 'green'\n[[rule.zone]]\nup_to = 5\nlevel = 'red'\n[[rule.zone]]\nlevel = 'red'\n").contains("increase"));
        assert!(bad("[[rule]]\nname = 'a'\nfigure = 'util_pct'\n[[rule.zone]]\nup_to = 5\nlevel = 'green'\n").contains("last zone has a bound"));
        assert!(bad("[[rule]]\nname = 'a'\nfigure = 'util_pct'\n[[rule.zone]]\nlevel = 'green'\n[[rule.zone]]\nlevel = 'red'\n").contains("not the last"));
        assert!(bad("").contains("at least one"));
        assert!(bad(&format!(
            "[[rule]]\nname = 'a'\nfigure = 'util_pct'\nstat = 'median'\n{zone}"
        ))
        .contains("median"));
    }

    #[test]
    fn below_is_exclusive_and_up_to_inclusive() {
        let set = RuleSet::from_toml(
            "r",
            "name = 'q'\n[[rule]]\nname = 'qd'\nfigure = 'queue_depth'\nstat = 'peak'\n\
             [[rule.zone]]\nbelow = 4\nlevel = 'green'\n[[rule.zone]]\nup_to = 32\nlevel = 'yellow'\n[[rule.zone]]\nlevel = 'red'\n",
        )
        .unwrap();
        let level = |v: f64| judge(&set, Figure::QueueDepth, v).level.unwrap();
        assert_eq!(level(3.99), Level::Green);
        assert_eq!(level(4.0), Level::Yellow);
        assert_eq!(level(32.0), Level::Yellow);
        assert_eq!(level(32.5), Level::Red);
        assert_eq!(judge(&set, Figure::QueueDepth, 2.0).stat, Stat::Peak);
    }
}
