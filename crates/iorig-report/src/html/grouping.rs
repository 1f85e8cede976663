//! Which steps form a chart together: scaling groups (steps that differ
//! only in threads or qd, one line per block size) and heatmap grids
//! (read % × block size).

use super::*;
use iorig_spec::key;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Axis {
    Threads,
    Qd,
}

impl Axis {
    pub(super) fn name(self) -> &'static str {
        match self {
            Axis::Threads => key::threads,
            Axis::Qd => key::qd,
        }
    }

    pub(super) fn description(self) -> &'static str {
        match self {
            Axis::Threads => "threads (workers)",
            Axis::Qd => "queue depth per worker",
        }
    }

    pub(super) fn of(self, p: &StepParams) -> u32 {
        match self {
            Axis::Threads => p.threads,
            Axis::Qd => p.qd,
        }
    }
}

/// A block size for ordering: by bytes when single, else by text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct BsKey {
    pub(super) bytes: u64,
    pub(super) label: String,
}

impl BsKey {
    pub(super) fn of(p: &StepParams) -> BsKey {
        BsKey {
            bytes: p.bs_bytes.unwrap_or(u64::MAX),
            label: p.bs.clone(),
        }
    }
}

/// The steps that take part in scaling and heatmaps: measured, with
/// results, not a curve's rate steps (their rate differs by design) nor a
/// precondition.
pub(super) fn comparable(s: &StepReport) -> bool {
    s.has_results()
        && !matches!(
            s.role,
            StepRole::CurveMax
                | StepRole::CurveRate { .. }
                | StepRole::CurveRefine
                | StepRole::Precondition
        )
}

/// Text of the parameters that are neither the chart's axes nor its lines.
pub(super) fn fixed_text(p: &StepParams, leave_out: &[&str]) -> String {
    let mut parts = Vec::new();
    let mut add = |name: &str, text: String| {
        if !leave_out.contains(&name) {
            parts.push(text);
        }
    };
    add(key::bs, format!("bs {}", p.bs));
    add(key::read, format!("read {} %", fmt_pct(p.read_pct)));
    if p.trim_pct > 0.0 {
        add(key::trim, format!("trim {} %", fmt_pct(p.trim_pct)));
    }
    add(key::random, format!("random {} %", fmt_pct(p.random_pct)));
    add(key::qd, format!("qd {}", p.qd));
    add(
        key::threads,
        format!(
            "{} thread{}",
            p.threads,
            if p.threads == 1 { "" } else { "s" }
        ),
    );
    add(key::rate, format!("rate {}", rate_text(p)));
    parts.join(", ")
}

/// What groups steps for a chart: the shown parameters plus the engine
/// (steps of different engines do not belong on one line, but naming the
/// engine in every title would be noise).
pub(super) fn group_key(p: &StepParams, leave_out: &[&str]) -> String {
    format!("{}\u{1f}{}", fixed_text(p, leave_out), p.engine)
}

/// The shown part of a [`group_key`].
pub(super) fn shown(key: &str) -> String {
    key.split('\u{1f}').next().unwrap_or_default().to_owned()
}

pub(super) struct ScalingGroup {
    pub(super) axis: Axis,
    /// The parameters shared by every line (title and grouping key).
    pub(super) fixed: String,
    pub(super) lines: Vec<(BsKey, Vec<ScalingPoint>)>,
}

pub(super) fn point_of(s: &StepReport, axis: Axis) -> Option<ScalingPoint> {
    let t = s.summary?.total;
    Some(ScalingPoint {
        x: axis.of(&s.params),
        iops: t.iops,
        bw_bytes_per_s: t.bw_bytes_per_s,
        mean_lat_ns: t.lat_ns.mean as f64,
        p99_lat_ns: t.lat_ns.p99 as f64,
    })
}

/// Steps that differ only in threads (or qd) and block size: one group per
/// combination of the other parameters, one line per block size with at
/// least two points.
pub(super) fn scaling_groups(steps: &[StepReport]) -> Vec<ScalingGroup> {
    let mut out = Vec::new();
    for axis in [Axis::Threads, Axis::Qd] {
        let mut groups: BTreeMap<String, BTreeMap<BsKey, BTreeMap<u32, ScalingPoint>>> =
            BTreeMap::new();
        for s in steps.iter().filter(|s| comparable(s)) {
            let Some(pt) = point_of(s, axis) else {
                continue;
            };
            let fixed = group_key(&s.params, &["bs", axis.name()]);
            // The first step at a point wins; repeats do not make a line.
            groups
                .entry(fixed)
                .or_default()
                .entry(BsKey::of(&s.params))
                .or_default()
                .entry(pt.x)
                .or_insert(pt);
        }
        for (fixed, lines) in groups {
            let lines: Vec<(BsKey, Vec<ScalingPoint>)> = lines
                .into_iter()
                .filter(|(_, pts)| pts.len() >= 2)
                .map(|(bs, pts)| (bs, pts.into_values().collect()))
                .collect();
            if !lines.is_empty() {
                let fixed = shown(&fixed);
                out.push(ScalingGroup { axis, fixed, lines });
            }
        }
    }
    out
}

pub(super) struct HeatGroup {
    pub(super) fixed: String,
    pub(super) reads: Vec<f64>,
    pub(super) bs: Vec<BsKey>,
    /// `cells[read][bs]` = (IOPS, p99 ns).
    pub(super) cells: Vec<Vec<Option<(f64, f64)>>>,
}

/// Steps forming a read % × block size grid (at least 2 × 2) with every
/// other parameter equal: one group per thread count, qd, random %, rate.
pub(super) fn heatmap_groups(steps: &[StepReport]) -> Vec<HeatGroup> {
    // Read percentages as integer per-mille so they can be map keys.
    // Per group: (read per mille, block size) → (IOPS, p99 ns).
    type Cells = BTreeMap<(i64, BsKey), (f64, f64)>;
    let mut groups: BTreeMap<String, Cells> = BTreeMap::new();
    for s in steps.iter().filter(|s| comparable(s)) {
        let Some(sum) = s.summary else { continue };
        let fixed = group_key(&s.params, &["bs", "read"]);
        let read_key = (s.params.read_pct * 10.0).round() as i64;
        groups
            .entry(fixed)
            .or_default()
            .entry((read_key, BsKey::of(&s.params)))
            .or_insert((sum.total.iops, sum.total.lat_ns.p99 as f64));
    }
    let mut out = Vec::new();
    for (fixed, cells) in groups {
        let mut reads: Vec<i64> = cells.keys().map(|k| k.0).collect();
        reads.sort_unstable();
        reads.dedup();
        let mut bs: Vec<BsKey> = cells.keys().map(|k| k.1.clone()).collect();
        bs.sort();
        bs.dedup();
        if reads.len() < 2 || bs.len() < 2 {
            continue;
        }
        let grid = reads
            .iter()
            .map(|r| {
                bs.iter()
                    .map(|b| cells.get(&(*r, b.clone())).copied())
                    .collect()
            })
            .collect();
        out.push(HeatGroup {
            fixed: shown(&fixed),
            reads: reads.iter().map(|r| *r as f64 / 10.0).collect(),
            bs,
            cells: grid,
        });
    }
    out
}
