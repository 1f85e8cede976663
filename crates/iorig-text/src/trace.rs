//! The text of block-trace work: an analysis in a few lines (counts, sizes,
//! hot spot, LRU curve, warm-up), how a replay kept its times, what a fit
//! found, and the stored analyses as a table.

use iorig_trace::analyse::{Analysis, HotShare, Spread};
use iorig_trace::Format;

/// How a replay went: what was issued and how close to its times.
pub fn replay_line(r: &iorig_result::ReplayReport) -> String {
    let us = |ns: u64| format!("{:.1} µs", ns as f64 / 1000.0);
    let timing = match &r.timing_error_ns {
        Some(t) => format!(
            "; issued after their time by p50 {}, p99 {}, p99.9 {}, max {} ({} over 20 µs, {} over 1 ms)",
            us(t.p50),
            us(t.p99),
            us(t.p99_9),
            us(t.max),
            r.late_over_20us,
            r.late_over_1ms
        ),
        None => String::new(),
    };
    format!(
        "replay: {} of {} I/Os issued{}{timing}",
        r.issued,
        r.records,
        if r.realigned > 0 {
            format!(
                " ({} moved to {}-byte alignment)",
                r.realigned, r.align_bytes
            )
        } else {
            String::new()
        }
    )
}

/// The stored analyses, a line each under a head.
pub fn list_lines(rows: &[iorig_store::TraceAnalysisRow]) -> Vec<String> {
    let mut out = vec![format!(
        "{:>4}  {:<20}  {:<8}  {:>12}  file",
        "id", "created", "format", "records"
    )];
    for r in rows {
        out.push(format!(
            "{:>4}  {:<20}  {:<8}  {:>12}  {}",
            r.id, r.created, r.format, r.records, r.file
        ));
    }
    out
}

/// What a fit chose and how closely its curve follows the trace's.
pub fn fit_line(fitted: &iorig_run::fit::Fit) -> String {
    format!(
        "fit: dist = \"{}\", mean |hit ratio difference| {:.4} over {} cache sizes ({} candidates{})",
        fitted.best.dist,
        fitted.best.error,
        fitted.points,
        fitted.candidates.len(),
        if fitted.scale_shift > 0 {
            format!(", fitted at 1/{} scale", 1u64 << fitted.scale_shift)
        } else {
            String::new()
        }
    )
}

fn mib(bytes: u64) -> String {
    let m = bytes as f64 / (1 << 20) as f64;
    if m >= 10.0 {
        format!("{m:.0} MiB")
    } else {
        format!("{m:.2} MiB")
    }
}

/// A hot-spot line: each share of the accesses, the fewest bytes that take
/// it, and those bytes as a share of `of` (the footprint, or the extents
/// touched), said once per line so no two lines read alike with different
/// denominators.
fn hot(label: &str, shares: &[HotShare], of: &str) -> String {
    if shares.is_empty() {
        return format!("{label}: none (no such accesses)");
    }
    let parts: Vec<String> = shares
        .iter()
        .map(|h| {
            format!(
                "{}% of accesses in {} ({:.1}%)",
                h.share_pct,
                mib(h.bytes),
                h.footprint_pct
            )
        })
        .collect();
    format!("{label}: {} (% in brackets: of {of})", parts.join(", "))
}

fn spread(label: &str, s: &Spread) -> String {
    let us = |ns: f64| format!("{:.1} µs", ns / 1e3);
    format!(
        "{label}: mean {}, p50 {}, p99 {}, max {}",
        us(s.mean),
        us(s.p50 as f64),
        us(s.p99 as f64),
        us(s.max as f64)
    )
}

/// The text of an analysis, one line each; `skipped` bad records were left
/// out of it.
pub fn analysis_lines(a: &Analysis, format: Format, skipped: u64) -> Vec<String> {
    let mut out = Vec::new();
    let timing = match (a.duration_s, a.iops) {
        (Some(d), Some(iops)) => format!(" over {d:.3}s ({iops:.0} IOPS)"),
        (Some(d), None) => format!(" over {d:.3}s"),
        _ => " (no times in the trace)".to_string(),
    };
    out.push(format!(
        "trace ({}): {} I/Os{timing}; {} reads ({}), {} writes ({}), {} trims; {:.1}% sequential{}",
        format.name(),
        a.records,
        a.reads,
        mib(a.read_bytes),
        a.writes,
        mib(a.write_bytes),
        a.trims,
        a.sequential_pct,
        if skipped > 0 {
            format!("; {skipped} bad record(s) left out")
        } else {
            String::new()
        }
    ));
    let sizes: Vec<String> = a
        .sizes
        .iter()
        .take(6)
        .map(|s| {
            format!(
                "{} {:.1}%",
                iorig_spec::format_size(s.size_bytes),
                100.0 * s.count as f64 / a.records as f64
            )
        })
        .collect();
    out.push(format!("sizes: {}", sizes.join(", ")));
    if let Some(g) = &a.interarrival_ns {
        out.push(spread("between issues", g));
    }
    if let Some(l) = &a.latency_ns {
        out.push(spread("latency in the trace", l));
    }
    out.push(format!(
        "footprint: {} in {} blocks of {} ({} block accesses)",
        mib(a.footprint_bytes),
        a.distinct_blocks,
        iorig_spec::format_size(a.block_bytes),
        a.accesses
    ));
    let footprint = format!("the footprint, {}", mib(a.footprint_bytes));
    out.push(hot("hot spot", &a.hot_spot, &footprint));
    out.push(hot("hot spot, reads", &a.hot_spot_reads, &footprint));
    out.push(hot("hot spot, writes", &a.hot_spot_writes, &footprint));
    let extent = iorig_spec::format_size(a.extent_bytes);
    out.push(hot(
        &format!("hot spot, {extent} extents"),
        &a.hot_spot_extents,
        &format!("the {extent} extents touched"),
    ));
    let curve: Vec<String> = a
        .lru_curve
        .iter()
        .filter(|p| p.cache_bytes >= 1 << 20 || a.footprint_bytes < 1 << 20)
        .map(|p| format!("{} {:.3}", mib(p.cache_bytes), p.hit_ratio))
        .collect();
    if a.lru_curve.is_empty() {
        out.push("LRU curves: not computed (--no-lru)".to_string());
    } else {
        out.push(format!("LRU hit ratio by cache size: {}", curve.join(", ")));
    }
    if let Some(s) = &a.lru_sampling {
        out.push(format!(
            "LRU curves sampled: {} of the blocks ({} blocks, {} accesses followed); hit ratios within about ±{:.3}",
            s.rate, s.sampled_blocks, s.sampled_accesses, s.error_bound
        ));
    }
    out.push(format!(
        "a cache of the whole footprint hits {:.3} (every first access misses)",
        a.max_hit_ratio
    ));
    if let (Some(w), Some(s)) = (
        a.window_s.filter(|_| a.windows.len() > 1),
        a.windows_summary(),
    ) {
        // Windows after silent ones only have nothing to compare with.
        let overlap = match (s.overlap_median_pct, s.overlap_min_pct) {
            (Some(m), Some(lo)) => {
                format!(", {m:.0}% of it hot in the window before (median; lowest {lo:.0}%)")
            }
            _ => String::new(),
        };
        out.push(format!(
            "over time: {} windows of {w}s; IOPS {:.0} to {:.0} (median {:.0}); hot set (80 %) median {}{overlap}",
            a.windows.len(),
            s.iops_min,
            s.iops_max,
            s.iops_median,
            mib(s.hot_bytes_median),
        ));
    }
    if let Some(c) = &a.cache_for_hit {
        out.push(match c.cache_bytes {
            Some(b) => format!("hit ratio {}: an LRU cache of {}", c.hit_ratio, mib(b)),
            None => format!(
                "hit ratio {}: no cache reaches it (at most {:.3})",
                c.hit_ratio, a.max_hit_ratio
            ),
        });
    }
    if let Some(w) = &a.warmup {
        let sets: Vec<String> = w
            .hot_sets
            .iter()
            .map(|h| {
                format!(
                    "{:.0}% in {}",
                    h.share_pct.unwrap_or(0.0),
                    iorig_trace::analyse::duration_text(h.seconds)
                )
            })
            .collect();
        let hit = w
            .for_hit
            .as_ref()
            .map(|h| {
                format!(
                    "; the {} cache in {}",
                    mib(h.bytes),
                    iorig_trace::analyse::duration_text(h.seconds)
                )
            })
            .unwrap_or_default();
        out.push(format!(
            "warm-up at {:.0} backend reads/s of {} ({}): hot sets {}{hit}",
            w.backend_read_iops,
            iorig_spec::format_size(w.fill_bytes),
            w.source,
            sets.join(", ")
        ));
    }
    out
}

/// The notice a capture starts with.
pub fn recording_line(o: &iorig_trace::capture::CaptureOptions) -> String {
    format!(
        "recording {} for {} into {} (Ctrl-C ends it sooner)",
        o.device.display(),
        humantime::format_duration(o.duration),
        o.out.display()
    )
}

/// What a capture got: its line, and a notice when the kernel lost events.
pub fn recorded_lines(
    o: &iorig_trace::capture::CaptureOptions,
    s: &iorig_trace::capture::CaptureSummary,
) -> (String, Option<String>) {
    let line = format!(
        "recorded {}: {} I/Os from {} kernel events in {:.1}s ({}-based device: {} is the issue) into {} ({})",
        o.device.display(),
        s.ios,
        s.events,
        s.elapsed.as_secs_f64(),
        if s.bio_based { "bio" } else { "request" },
        if s.bio_based { "queue (Q)" } else { "driver issue (D)" },
        o.out.display(),
        o.format.name()
    );
    let lost = (s.lost_events > 0).then(|| format!(
        "the kernel lost {} events when its buffer was full: the trace misses I/Os; give a larger --buffer",
        s.lost_events
    ));
    (line, lost)
}

/// The notice a replay starts with: what, how fast, placed how.
pub fn replaying_line(s: &iorig_run::replay::ReplaySetup, qd: u32) -> String {
    format!(
        "replaying {} I/Os of {} ({}) {}, offsets by {} at {}-byte alignment, {} in flight at most",
        s.facts.records,
        s.file.display(),
        s.facts.format,
        match s.speed {
            Some(1.0) => "at their times".to_string(),
            Some(x) => format!("at {x}x their speed"),
            None => "as fast as possible".to_string(),
        },
        s.map.name(),
        s.align_bytes,
        qd
    )
}
