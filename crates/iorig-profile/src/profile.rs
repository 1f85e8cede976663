//! From a series of snapshots to a profile: per-interval figures per device
//! and in total, and their summary (mean, p95, peak).
//!
//! The mean of a figure is taken over the whole time, from summed counters
//! (the average write size is all bytes written over all writes, not the
//! mean of the intervals' averages); p95 and peak are over the intervals.
//! A device that appears during the profile starts with its first snapshot as
//! a baseline; one that disappears simply stops. Counter wrap and reset are
//! handled by [`DiskStat::delta`].

use crate::devices::{cover, Covered, Selection};
use crate::figures::{Delta, Figure, Figures};
use crate::snapshot::{DeviceCounters, Snapshot};
use crate::ProfileError;
use iorig_stats::DiskStat;
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;

/// The figures of one interval.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct IntervalFigures {
    /// Start and end, ms on the snapshots' clock.
    pub start_ms: u64,
    pub end_ms: u64,
    pub total: Figures,
    /// Covered devices present at both ends of the interval.
    pub devices: BTreeMap<String, Figures>,
}

impl IntervalFigures {
    pub fn duration_s(&self) -> f64 {
        (self.end_ms - self.start_ms) as f64 / 1e3
    }
}

/// Mean, p95 and peak of one figure.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct FigureStat {
    pub mean: Option<f64>,
    pub p95: Option<f64>,
    pub peak: Option<f64>,
}

/// Every figure's [`FigureStat`], serialised as `{figure: {mean, p95, peak}}`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Indexed by [`Figure`] (in the order of [`Figure::ALL`]).
    pub stats: [FigureStat; Figure::ALL.len()],
}

impl Summary {
    pub fn get(&self, figure: Figure) -> &FigureStat {
        &self.stats[figure as usize]
    }
}

impl Serialize for Summary {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(Figure::ALL.len()))?;
        for (figure, stat) in Figure::ALL.iter().zip(&self.stats) {
            m.serialize_entry(figure.name(), stat)?;
        }
        m.end()
    }
}

/// The p95 of `values` by nearest rank; `None` when empty.
pub fn p95(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let rank = (0.95 * v.len() as f64).ceil() as usize;
    v.get(rank.saturating_sub(1)).copied()
}

fn summarise(mean: &Figures, series: &[&Figures]) -> Summary {
    let mut out = Summary::default();
    for &figure in Figure::ALL {
        let values: Vec<f64> = series.iter().filter_map(|f| f.get(figure)).collect();
        out.stats[figure as usize] = FigureStat {
            mean: mean.get(figure),
            p95: p95(&values),
            peak: values.iter().copied().reduce(f64::max),
        };
    }
    out
}

/// A finished profile.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Profile {
    pub start_ms: u64,
    pub end_ms: u64,
    /// Every device covered at some point, as last seen.
    pub devices: Vec<Covered>,
    pub intervals: Vec<IntervalFigures>,
    pub total: Summary,
    pub per_device: BTreeMap<String, Summary>,
}

impl Profile {
    pub fn duration_s(&self) -> f64 {
        self.end_ms.saturating_sub(self.start_ms) as f64 / 1e3
    }

    /// A summarised figure: `scope` is `total` or a device name.
    pub fn stat(&self, scope: &str, figure: Figure) -> Option<&FigureStat> {
        if scope == "total" {
            Some(self.total.get(figure))
        } else {
            Some(self.per_device.get(scope)?.get(figure))
        }
    }
}

/// Builds a profile one snapshot at a time (live) or from a recording.
#[derive(Debug)]
pub struct ProfileBuilder {
    selection: Selection,
    members: BTreeMap<String, Vec<String>>,
    prev: Option<Snapshot>,
    start_ms: Option<u64>,
    intervals: Vec<IntervalFigures>,
    devices: BTreeMap<String, Covered>,
    device_order: Vec<String>,
    /// Whole-profile sums per device and for the total.
    sums: BTreeMap<String, Delta>,
    total_sum: Delta,
    /// The total's util is the busiest device's, so its mean is the
    /// time-weighted mean of the intervals' values.
    total_util_weighted: f64,
}

impl ProfileBuilder {
    /// `members`: stacked devices' members where known (live), else empty.
    pub fn new(selection: Selection, members: BTreeMap<String, Vec<String>>) -> Self {
        ProfileBuilder {
            selection,
            members,
            prev: None,
            start_ms: None,
            intervals: Vec::new(),
            devices: BTreeMap::new(),
            device_order: Vec::new(),
            sums: BTreeMap::new(),
            total_sum: Delta::default(),
            total_util_weighted: 0.0,
        }
    }

    /// Named devices missing from a snapshot (to refuse a typo at the start).
    pub fn missing_named(&self, snap: &Snapshot) -> Vec<String> {
        self.selection
            .named
            .iter()
            .filter(|n| !snap.devices.iter().any(|d| &d.name == *n))
            .cloned()
            .collect()
    }

    /// Adds a snapshot; returns the interval it closes (none for the first).
    pub fn push(&mut self, snap: Snapshot) -> Result<Option<&IntervalFigures>, ProfileError> {
        let names: Vec<&str> = snap.devices.iter().map(|d| d.name.as_str()).collect();
        let covered = cover(&names, &self.selection, &self.members);
        for c in &covered {
            if !self.devices.contains_key(&c.name) {
                self.device_order.push(c.name.clone());
            }
            self.devices.insert(c.name.clone(), c.clone());
        }
        let Some(prev) = self.prev.take() else {
            self.start_ms = Some(snap.t_ms);
            self.prev = Some(snap);
            return Ok(None);
        };
        if snap.t_ms <= prev.t_ms {
            let (a, b) = (prev.t_ms, snap.t_ms);
            self.prev = Some(prev);
            return Err(ProfileError::Snapshot {
                path: format!("snapshot at {b} ms"),
                why: format!(
                    "not after the one before it ({a} ms); snapshots must advance in time"
                ),
            });
        }
        let elapsed_ms = (snap.t_ms - prev.t_ms) as f64;
        let before: BTreeMap<&str, &DeviceCounters> =
            prev.devices.iter().map(|d| (d.name.as_str(), d)).collect();
        let mut total = Delta::default();
        let mut busiest: f64 = 0.0;
        let mut devices = BTreeMap::new();
        for c in &covered {
            let (Some(old), Some(new)) = (
                before.get(c.name.as_str()),
                snap.devices.iter().find(|d| d.name == c.name),
            ) else {
                continue; // appeared in this snapshot: a baseline only
            };
            let delta = Delta {
                stat: DiskStat::delta(&old.stat, &new.stat),
                elapsed_ms,
                has_discard: new.has_discard(),
                has_flush: new.has_flush(),
            };
            let f = Figures::of(&delta);
            if c.in_total {
                total.add_device(&delta);
                busiest = busiest.max(f.util_pct.unwrap_or(0.0));
            }
            self.sums
                .entry(c.name.clone())
                .or_default()
                .add_span(&delta);
            devices.insert(c.name.clone(), f);
        }
        total.elapsed_ms = elapsed_ms;
        let mut total_fig = Figures::of(&total);
        total_fig.util_pct = Some(busiest);
        self.total_sum.add_span(&total);
        self.total_util_weighted += busiest * elapsed_ms;
        self.intervals.push(IntervalFigures {
            start_ms: prev.t_ms,
            end_ms: snap.t_ms,
            total: total_fig,
            devices,
        });
        self.prev = Some(snap);
        Ok(self.intervals.last())
    }

    pub fn intervals(&self) -> &[IntervalFigures] {
        &self.intervals
    }

    /// The profile of everything pushed so far.
    pub fn finish(&self) -> Profile {
        let start_ms = self.start_ms.unwrap_or(0);
        let end_ms = self.intervals.last().map_or(start_ms, |i| i.end_ms);
        let mut mean = Figures::of(&self.total_sum);
        if self.total_sum.elapsed_ms > 0.0 {
            mean.util_pct = Some(self.total_util_weighted / self.total_sum.elapsed_ms);
        }
        let series: Vec<&Figures> = self.intervals.iter().map(|i| &i.total).collect();
        let total = summarise(&mean, &series);
        let per_device = self
            .sums
            .iter()
            .map(|(name, sum)| {
                let series: Vec<&Figures> = self
                    .intervals
                    .iter()
                    .filter_map(|i| i.devices.get(name))
                    .collect();
                (name.clone(), summarise(&Figures::of(sum), &series))
            })
            .collect();
        Profile {
            start_ms,
            end_ms,
            devices: self
                .device_order
                .iter()
                .filter_map(|n| self.devices.get(n).cloned())
                .collect(),
            intervals: self.intervals.clone(),
            total,
            per_device,
        }
    }
}

/// A profile of a whole recording.
pub fn profile_recording(
    snaps: Vec<Snapshot>,
    selection: Selection,
) -> Result<Profile, ProfileError> {
    let mut b = ProfileBuilder::new(selection, BTreeMap::new());
    if let Some(missing) = snaps
        .iter()
        .map(|s| b.missing_named(s))
        .reduce(|a, b| a.into_iter().filter(|n| b.contains(n)).collect())
        .filter(|m| !m.is_empty())
    {
        return Err(ProfileError::Usage(format!(
            "no device {} in the recording; name devices as in /proc/diskstats (e.g. sda, nvme0n1, dm-0)",
            missing.join(", ")
        )));
    }
    for s in snaps {
        b.push(s)?;
    }
    Ok(b.finish())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn dev(
        name: &str,
        r_ios: u64,
        r_sec: u64,
        w_ios: u64,
        w_sec: u64,
        io_ms: u64,
    ) -> DeviceCounters {
        DeviceCounters {
            name: name.to_owned(),
            stat: DiskStat {
                read_ios: r_ios,
                read_sectors: r_sec,
                write_ios: w_ios,
                write_sectors: w_sec,
                io_ticks_ms: io_ms,
                ..Default::default()
            },
            fields: 17,
        }
    }

    #[test]
    fn p95_is_nearest_rank() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(p95(&v), Some(19.0));
        assert_eq!(p95(&[5.0]), Some(5.0));
        assert_eq!(p95(&[]), None);
    }

    #[test]
    fn means_come_from_summed_counters_peaks_from_intervals() {
        // Interval 1 (1 s): 100 writes of 4 KiB. Interval 2 (3 s): 100 writes
        // of 64 KiB. Mean write size: (400 KiB + 6400 KiB) / 200.
        let snaps = vec![
            Snapshot {
                t_ms: 0,
                devices: vec![dev("sda", 0, 0, 0, 0, 0)],
            },
            Snapshot {
                t_ms: 1000,
                devices: vec![dev("sda", 0, 0, 100, 800, 500)],
            },
            Snapshot {
                t_ms: 4000,
                devices: vec![dev("sda", 0, 0, 200, 800 + 12800, 3500)],
            },
        ];
        let p = profile_recording(snaps, Selection::default()).unwrap();
        let w = p.stat("total", Figure::WriteAvgSizeBytes).unwrap();
        assert_eq!(w.mean, Some((409_600.0 + 6_553_600.0) / 200.0));
        assert_eq!(w.peak, Some(65_536.0));
        let iops = p.stat("total", Figure::WriteIops).unwrap();
        assert_eq!(iops.mean, Some(50.0));
        assert_eq!(iops.peak, Some(100.0));
        let util = p.stat("total", Figure::UtilPct).unwrap();
        assert_eq!(util.mean, Some((50.0 * 1000.0 + 100.0 * 3000.0) / 4000.0));
        assert_eq!(p.stat("sda", Figure::WriteIops).unwrap().mean, Some(50.0));
        assert_eq!(p.duration_s(), 4.0);
    }

    #[test]
    fn out_of_order_snapshots_are_refused() {
        let mut b = ProfileBuilder::new(Selection::default(), BTreeMap::new());
        b.push(Snapshot {
            t_ms: 10,
            devices: vec![],
        })
        .unwrap();
        assert!(b
            .push(Snapshot {
                t_ms: 10,
                devices: vec![]
            })
            .is_err());
    }

    #[test]
    fn a_named_device_absent_throughout_is_refused() {
        let snaps = vec![
            Snapshot {
                t_ms: 0,
                devices: vec![dev("sda", 0, 0, 0, 0, 0)],
            },
            Snapshot {
                t_ms: 1000,
                devices: vec![dev("sda", 0, 0, 0, 0, 0)],
            },
        ];
        let e = profile_recording(snaps, Selection::named(&["sdz"])).unwrap_err();
        assert!(e.to_string().contains("no device sdz"), "{e}");
    }
}
