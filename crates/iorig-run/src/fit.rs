//! `iorig trace fit`: a synthetic workload fitted to a trace.
//!
//! The mix (sizes, read share, random share, rate, queue depth) is read off
//! the trace's analysis. The access distribution is chosen among candidates
//! (uniform; `hot:IO/SPACE` from each of the trace's hot sets; zipf and
//! pareto over a grid, zipf refined around its best) by how close each
//! one's LRU hit-ratio curve comes to the trace's. A candidate's curve is
//! not a formula: the engine's own offset generator ([`OffsetGen`]) draws
//! the offsets the workload would issue, without I/O, and iorig-trace's
//! analysis computes their curve exactly, as it did the trace's.
//!
//! Traces of many accesses are fitted at scale: the model draws
//! accesses/2^k over footprint/2^k blocks, and the trace's curve point at
//! 2^j blocks is compared with the model's at 2^(j-k) (the curve of an
//! access pattern depends on cache size relative to its footprint and on
//! accesses per block, both kept).

use crate::RunError;
use iorig_engine::gen::{AddressSpace, OffsetGen, Segment};
use iorig_spec::AccessDist;
use iorig_spec::{key, StrOrNum, WorkloadFile};
use iorig_trace::analyse::{Analysis, CurvePoint, Options};
use iorig_trace::{Op, Record};
use std::fmt::Write as _;
use std::sync::Arc;

/// How a fit is made.
#[derive(Clone, Debug)]
pub struct FitOptions {
    /// Accesses the model draws at most (the trace is fitted at scale
    /// beyond).
    pub max_accesses: u64,
    pub seed: u64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            max_accesses: 1_000_000,
            seed: 1,
        }
    }
}

/// One distribution tried and how far its curve was from the trace's.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Candidate {
    /// As the workload's `dist` key takes it.
    pub dist: String,
    /// Mean |hit ratio difference| over the compared cache sizes.
    pub error: f64,
}

/// The fitted workload and the evidence for it.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Fit {
    /// `iorig.trace-fit/1`.
    pub schema: &'static str,
    /// The workload, as TOML with comments.
    pub toml: String,
    /// The same as a plan measured in rounds until steady.
    pub plan_toml: String,
    pub best: Candidate,
    /// Every candidate, closest first.
    pub candidates: Vec<Candidate>,
    /// Cache sizes compared.
    pub points: usize,
    /// Accesses and blocks the model drew, and the scale (2^shift).
    pub model_accesses: u64,
    pub model_blocks: u64,
    pub scale_shift: u32,
    /// The trace's curve and the best candidate's, at the compared sizes
    /// (cache bytes at the trace's scale).
    pub trace_curve: Vec<CurvePoint>,
    pub model_curve: Vec<CurvePoint>,
}

/// The hit ratio of a curve at a cache of `blocks` blocks (a cache larger
/// than the curve's footprint hits as much as the whole footprint does).
fn hit_at(curve: &[CurvePoint], block_bytes: u64, blocks: u64) -> Option<f64> {
    let bytes = blocks.checked_mul(block_bytes)?;
    let last = curve.last()?;
    if bytes >= last.cache_bytes {
        return Some(last.hit_ratio);
    }
    curve
        .iter()
        .find(|p| p.cache_bytes == bytes)
        .map(|p| p.hit_ratio)
}

/// The LRU curve of `accesses` block accesses the engine's offset
/// generator draws over `blocks` blocks.
fn model_curve(
    dist: AccessDist,
    blocks: u64,
    accesses: u64,
    random_pct: f64,
    block_bytes: u64,
    seed: u64,
) -> Result<Vec<CurvePoint>, RunError> {
    let engine = |e: iorig_engine::EngineError| RunError::runtime(format!("trace fit: {e}"));
    let space = Arc::new(
        AddressSpace::new(
            vec![Segment {
                target: 0,
                start: 0,
                len: blocks * block_bytes,
            }],
            block_bytes,
            block_bytes,
        )
        .map_err(engine)?,
    );
    let mut gen =
        OffsetGen::new(space, dist, random_pct, block_bytes, 0, 1, seed).map_err(engine)?;
    let records = (0..accesses).map(|_| {
        let (_, offset_bytes) = gen.next(block_bytes);
        Ok(Record {
            t_ns: 0,
            op: Op::Read,
            device: 0,
            offset_bytes,
            size_bytes: block_bytes,
            latency_ns: None,
        })
    });
    let opts = Options {
        block_bytes,
        extent_bytes: block_bytes,
        ..Options::default()
    };
    let a = iorig_trace::analyse(records, false, &opts)
        .map_err(|e| RunError::runtime(format!("trace fit: {e}")))?;
    Ok(a.lru_curve)
}

/// Fits a workload to the trace at `path`, analysed at `block_bytes`
/// (sampling `sample` of its blocks when given).
pub fn fit_file(
    path: &std::path::Path,
    format: Option<iorig_trace::Format>,
    bad: iorig_trace::BadRecords,
    block_bytes: u64,
    sample: Option<f64>,
    opts: &FitOptions,
) -> Result<Fit, RunError> {
    let analyse = iorig_trace::analyse::Options {
        block_bytes,
        sample,
        ..iorig_trace::analyse::Options::default()
    };
    let (analysis, format, _) = iorig_trace::analyse::analyse_file(path, format, bad, &analyse)
        .map_err(|e| RunError::usage(e.to_string()))?;
    let source = format!("{} ({})", path.display(), format.name());
    fit(&analysis, &source, opts)
}

/// Fits a workload to `a` (analysed at its block size); `source` names the
/// trace in the file's comments.
pub fn fit(a: &Analysis, source: &str, opts: &FitOptions) -> Result<Fit, RunError> {
    let block = a.block_bytes;
    if a.accesses == 0 || a.distinct_blocks < 2 {
        return Err(RunError::usage(
            "the trace touches fewer than 2 blocks: there is no access pattern to fit",
        ));
    }
    // The scale: accesses/2^k at most max_accesses.
    let mut shift = 0u32;
    while (a.accesses >> shift) > opts.max_accesses.max(1) && (a.distinct_blocks >> shift) > 64 {
        shift += 1;
    }
    let model_accesses = (a.accesses >> shift).max(1);
    let model_blocks = (a.distinct_blocks >> shift).max(2);
    let random_pct = (100.0 - a.sequential_pct).clamp(0.0, 100.0);
    // The trace's power-of-two points the model reaches at this scale.
    let compared: Vec<&CurvePoint> = a
        .lru_curve
        .iter()
        .filter(|p| {
            let blocks = p.cache_bytes / block;
            blocks.is_power_of_two() && blocks >> shift >= 1 && blocks < a.distinct_blocks
        })
        .collect();
    if compared.is_empty() {
        return Err(RunError::usage(
            "the trace's LRU curve has no cache sizes to compare; give a smaller --block",
        ));
    }
    let score = |dist: AccessDist| -> Result<(f64, Vec<CurvePoint>), RunError> {
        let curve = model_curve(
            dist,
            model_blocks,
            model_accesses,
            random_pct,
            block,
            opts.seed,
        )?;
        let mut sum = 0.0;
        let mut at = Vec::with_capacity(compared.len());
        for p in &compared {
            let blocks = (p.cache_bytes / block) >> shift;
            let m = hit_at(&curve, block, blocks).unwrap_or(0.0);
            sum += (p.hit_ratio - m).abs();
            at.push(CurvePoint {
                cache_bytes: p.cache_bytes,
                hit_ratio: m,
            });
        }
        Ok((sum / compared.len() as f64, at))
    };
    let mut tried: Vec<(AccessDist, f64, Vec<CurvePoint>)> = Vec::new();
    let try_dist = |d: AccessDist, tried: &mut Vec<(AccessDist, f64, Vec<CurvePoint>)>| {
        if tried.iter().any(|(t, _, _)| *t == d) {
            return Ok::<(), RunError>(());
        }
        let (e, c) = score(d)?;
        tried.push((d, e, c));
        Ok(())
    };
    try_dist(AccessDist::Uniform, &mut tried)?;
    for h in &a.hot_spot {
        let space_pct = (h.footprint_pct * 100.0).round() / 100.0;
        if h.share_pct > 0.0 && h.share_pct < 100.0 && space_pct > 0.0 && space_pct < 100.0 {
            try_dist(
                AccessDist::Hot {
                    io_pct: h.share_pct,
                    space_pct,
                },
                &mut tried,
            )?;
        }
    }
    for h in [0.6, 0.7, 0.8, 0.9, 0.95, 0.99] {
        try_dist(AccessDist::Pareto { h }, &mut tried)?;
    }
    for theta in [0.3, 0.5, 0.7, 0.9, 1.1, 1.3, 1.5] {
        try_dist(AccessDist::Zipf { theta }, &mut tried)?;
    }
    // Zipf refined around its best grid point (golden-section steps).
    let zipf_best = tried
        .iter()
        .filter_map(|(d, e, _)| match d {
            AccessDist::Zipf { theta } => Some((*theta, *e)),
            _ => None,
        })
        .min_by(|x, y| x.1.total_cmp(&y.1));
    if let Some((t0, _)) = zipf_best {
        let (mut lo, mut hi) = ((t0 - 0.2).max(0.05), t0 + 0.2);
        let g = 0.618_033_988_75;
        for _ in 0..5 {
            let x1 = hi - g * (hi - lo);
            let x2 = lo + g * (hi - lo);
            let round = |v: f64| (v * 1000.0).round() / 1000.0;
            let (e1, c1) = score(AccessDist::Zipf { theta: round(x1) })?;
            let (e2, c2) = score(AccessDist::Zipf { theta: round(x2) })?;
            tried.push((AccessDist::Zipf { theta: round(x1) }, e1, c1));
            tried.push((AccessDist::Zipf { theta: round(x2) }, e2, c2));
            if e1 <= e2 {
                hi = x2;
            } else {
                lo = x1;
            }
        }
    }
    tried.sort_by(|x, y| x.1.total_cmp(&y.1));
    tried.dedup_by(|x, y| x.0 == y.0);
    let candidates: Vec<Candidate> = tried
        .iter()
        .map(|(d, e, _)| Candidate {
            dist: d.to_string(),
            error: *e,
        })
        .collect();
    let best = candidates[0].clone();
    let model_curve = tried[0].2.clone();
    let head = header(a, source, &best, &candidates, compared.len(), shift);
    let keys = keys(a, tried[0].0, random_pct);
    Ok(Fit {
        schema: "iorig.trace-fit/1",
        toml: workload_toml(&head, &keys),
        plan_toml: plan_toml(&head, &keys),
        best,
        candidates,
        points: compared.len(),
        model_accesses,
        model_blocks,
        scale_shift: shift,
        trace_curve: compared.into_iter().cloned().collect(),
        model_curve,
    })
}

/// The size mix as `bs`: sizes of at least 1 % of the I/Os, by weight.
fn bs_mix(a: &Analysis) -> String {
    let total: u64 = a.sizes.iter().map(|s| s.count).sum();
    let kept: Vec<(u64, u64)> = a
        .sizes
        .iter()
        .filter(|s| s.count * 100 >= total)
        .map(|s| (s.size_bytes, s.count))
        .collect();
    if kept.len() == 1 {
        return iorig_spec::format_size(kept[0].0);
    }
    let kept_total: u64 = kept.iter().map(|k| k.1).sum();
    kept.iter()
        .map(|(size, n)| {
            let w = ((*n as f64 / kept_total as f64) * 100.0).round().max(1.0);
            format!("{}:{w}", iorig_spec::format_size(*size))
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The fitted workload's keys, in file order: (key, TOML value, comment).
fn keys(
    a: &Analysis,
    best: AccessDist,
    random_pct: f64,
) -> Vec<(&'static str, String, &'static str)> {
    let one_decimal = |v: f64| Some(StrOrNum::Float((v * 10.0).round() / 10.0));
    let mut w = WorkloadFile {
        // The range is the footprint, so the distribution's shares of it
        // are the trace's shares of what it touched.
        size: Some(StrOrNum::Str(iorig_spec::format_size(
            a.footprint_bytes.div_ceil(1 << 20) * (1 << 20),
        ))),
        bs: Some(StrOrNum::Str(bs_mix(a))),
        read: one_decimal(100.0 * a.reads as f64 / a.records.max(1) as f64),
        random: one_decimal(random_pct),
        dist: Some(best),
        threads: Some(StrOrNum::Int(1)),
        ..WorkloadFile::default()
    };
    let mut notes = vec![(key::size, "the trace's footprint")];
    if let Some(iops) = a.iops.filter(|r| *r > 0.0) {
        w.rate = Some(StrOrNum::Int(iops.round().max(1.0) as i64));
        notes.push((key::rate, "the trace's mean"));
        if let Some(l) = &a.latency_ns {
            // Little's law: I/Os in flight = rate × latency.
            let qd = (iops * l.mean / 1e9).round().max(1.0);
            w.qd = Some(StrOrNum::Int(qd as i64));
            notes.push((key::qd, "the trace's mean in flight"));
        }
    }
    w.to_pairs()
        .into_iter()
        .map(|(k, v)| {
            let note = notes.iter().find(|(n, _)| *n == k).map_or("", |(_, c)| *c);
            (k, v.to_string(), note)
        })
        .collect()
}

fn header(
    a: &Analysis,
    source: &str,
    best: &Candidate,
    candidates: &[Candidate],
    points: usize,
    shift: u32,
) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "# Fitted by `iorig trace fit` to {source}");
    let _ = writeln!(
        t,
        "# ({} I/Os{}, footprint {} in {}-byte blocks).",
        a.records,
        a.duration_s
            .map(|d| format!(" over {d:.1} s"))
            .unwrap_or_default(),
        iorig_spec::format_size(a.footprint_bytes),
        a.block_bytes
    );
    let _ = writeln!(
        t,
        "# dist: the candidate whose LRU hit-ratio curve is closest to the trace's:"
    );
    let _ = writeln!(
        t,
        "# mean |hit ratio difference| {:.4} over {points} cache sizes, the curve of",
        best.error
    );
    let _ = writeln!(
        t,
        "# offsets drawn by iorig's own generator{}.",
        if shift > 0 {
            format!(" (at 1/{} scale: accesses and footprint)", 1u64 << shift)
        } else {
            String::new()
        }
    );
    let others: Vec<String> = candidates
        .iter()
        .skip(1)
        .take(5)
        .map(|c| format!("{} {:.4}", c.dist, c.error))
        .collect();
    let _ = writeln!(t, "# Next closest: {}.", others.join(", "));
    t
}

fn line(t: &mut String, key: &str, value: &str, comment: &str) {
    if comment.is_empty() {
        let _ = writeln!(t, "{key} = {value}");
    } else {
        let _ = writeln!(t, "{key} = {value}   # {comment}");
    }
}

/// The workload file: `iorig run FILE --target PATH`.
fn workload_toml(head: &str, keys: &[(&str, String, &str)]) -> String {
    let mut t = head.to_string();
    let _ = writeln!(t, "# Run it with: iorig run THIS_FILE --target PATH");
    for (k, v, c) in keys {
        line(&mut t, k, v, c);
    }
    let _ = writeln!(t, "time = \"60s\"");
    t
}

/// The same workload as a plan of one step measured in rounds until its
/// rate is steady: a cache in front of the target warms up to the hot set
/// (`iorig plan run FILE --target PATH`).
fn plan_toml(head: &str, keys: &[(&str, String, &str)]) -> String {
    let mut t = head.to_string();
    let _ = writeln!(
        t,
        "# Run it with: iorig plan run THIS_FILE --target PATH (rounds until steady: a cache warms up)"
    );
    for (k, v, c) in keys.iter().filter(|(k, _, _)| *k == key::size) {
        line(&mut t, k, v, c);
    }
    let _ = writeln!(t, "\n[[steps]]");
    let _ = writeln!(t, "name = \"fitted\"");
    for (k, v, c) in keys.iter().filter(|(k, _, _)| *k != key::size) {
        line(&mut t, k, v, c);
    }
    let _ = writeln!(
        t,
        "steady_state = {{ round = \"1m\", max_rounds = 30, window = 5 }}"
    );
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(dist: AccessDist, blocks: u64, accesses: u64) -> Analysis {
        let curve_records = {
            let space = Arc::new(
                AddressSpace::new(
                    vec![Segment {
                        target: 0,
                        start: 0,
                        len: blocks * 4096,
                    }],
                    4096,
                    4096,
                )
                .unwrap_or_else(|e| panic!("{e}")),
            );
            let mut g = OffsetGen::new(space, dist, 100.0, 4096, 0, 1, 77)
                .unwrap_or_else(|e| panic!("{e}"));
            (0..accesses)
                .map(|i| {
                    let (_, o) = g.next(4096);
                    Ok(Record {
                        t_ns: i * 1_000_000,
                        op: if i % 4 == 0 { Op::Write } else { Op::Read },
                        device: 0,
                        offset_bytes: o,
                        size_bytes: 4096,
                        latency_ns: Some(200_000),
                    })
                })
                .collect::<Vec<_>>()
        };
        iorig_trace::analyse(curve_records, true, &Options::default())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    /// A trace drawn from hot:90/10 is fitted by a hot distribution close to
    /// it, with a small curve error, and the workload says so.
    #[test]
    fn a_hot_trace_is_fitted_by_its_hot_set() {
        let a = trace(
            AccessDist::Hot {
                io_pct: 90.0,
                space_pct: 10.0,
            },
            4096,
            60_000,
        );
        let f = fit(&a, "t", &FitOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        assert!(f.best.error < 0.02, "{:?}", f.candidates);
        assert!(
            f.best.dist.starts_with("hot:") || f.best.dist.starts_with("pareto:"),
            "{:?}",
            f.candidates
        );
        let uniform = f
            .candidates
            .iter()
            .find(|c| c.dist == "uniform")
            .map(|c| c.error)
            .unwrap_or(0.0);
        assert!(uniform > 5.0 * f.best.error, "{:?}", f.candidates);
        assert!(f.toml.contains(&format!("dist = \"{}\"", f.best.dist)));
        assert!(f.toml.contains("read = 75.0"));
        assert!(f.toml.contains("rate = 1000"));
        // Little's law: 1000/s × 0.2 ms.
        assert!(f.toml.contains("qd = 1 "), "{}", f.toml);
    }

    /// At scale, a zipf trace is still fitted by a zipf near its theta.
    #[test]
    fn a_zipf_trace_fitted_at_scale() {
        let a = trace(AccessDist::Zipf { theta: 1.0 }, 8192, 80_000);
        let f = fit(
            &a,
            "t",
            &FitOptions {
                max_accesses: 20_000,
                seed: 5,
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.scale_shift, 2);
        // Scaled down, a zipf's curve shifts a little: theta within 0.15.
        let theta: f64 = f
            .best
            .dist
            .strip_prefix("zipf:")
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{:?}", f.candidates));
        assert!(
            (theta - 1.0).abs() < 0.15 && f.best.error < 0.05,
            "{:?}",
            f.candidates
        );
    }
}
