//! The HTML report of a stored block-trace analysis (`iorig trace report`):
//! what the trace holds (counts, mix, sizes), how concentrated its
//! accesses are (the hot spot), what an LRU cache of each size would hit,
//! how long a cache takes to warm up at a backend's read rate, and how the
//! load and the hot set moved over time. The figures are worded as
//! `iorig trace analyse` prints them, so the page and the terminal read
//! alike.

use super::*;
use iorig_trace::analyse::{Analysis, HotShare, Spread, Warmup, Window, HOT_SHARES_PCT};
// The trace's point of an LRU curve (cache size, hit ratio), named apart
// from the IOPS–latency curve point the rest of the report draws.
use iorig_trace::analyse::CurvePoint as LruPoint;

/// A stored trace analysis, as the report shows it.
pub struct TraceReport {
    pub id: i64,
    pub created: String,
    pub host: String,
    /// The trace file as given.
    pub file: String,
    pub command_line: String,
    pub labels: std::collections::BTreeMap<String, String>,
    pub analysis: Analysis,
}

/// The report of one trace analysis.
pub fn render_trace_report(t: &TraceReport) -> Rendered {
    let a = &t.analysis;
    let mut page = Page::new();
    let title = format!("iorig report: trace analysis {}", t.id);
    let has_over_time =
        !a.windows.is_empty() || a.interarrival_ns.is_some() || a.latency_ns.is_some();
    let mut nav = vec![
        ("trace", "Trace"),
        ("sizes", "Sizes"),
        ("hot-spot", "Hot spot"),
        ("lru", "Cache size (LRU)"),
    ];
    if a.warmup.is_some() {
        nav.push(("warm-up", "Warm-up"));
    }
    if has_over_time {
        nav.push(("over-time", "Over time"));
    }
    page.push(html! {
        header {
            h1 { (title) }
            p.sub { (t.file) " · " (a.format) " · " (t.host) " · created " (t.created) }
        }
        nav { @for (id, name) in &nav { a href={ "#" (id) } { (name) } } }
    });

    trace_section(&mut page, t);
    sizes_section(&mut page, a);
    hot_spot_section(&mut page, a);
    lru_section(&mut page, a);
    if let Some(w) = &a.warmup {
        warmup_section(&mut page, a, w);
    }
    if has_over_time {
        over_time_section(&mut page, a);
    }
    page.finish(&title)
}

// ---------------------------------------------------------------- formatting

const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/// The largest binary unit `b` reaches: (bytes per unit, its name).
fn unit_of(b: u64) -> (u64, &'static str) {
    let (mut per, mut i) = (1u64, 0usize);
    while i + 1 < UNITS.len() && b >= per * 1024 {
        per *= 1024;
        i += 1;
    }
    (per, UNITS[i])
}

/// A size for people: whole in its unit when it is (cache sizes and hot
/// sets are mostly powers of two: `4 KiB`, `64 MiB`), three significant
/// digits when not (`29.4 MiB`).
fn size_text(b: u64) -> String {
    let (per, name) = unit_of(b);
    if b.is_multiple_of(per) {
        format!("{} {name}", b / per)
    } else {
        fmt_bytes(b)
    }
}

/// An I/O size, exactly: rounding would merge sizes the table is there to
/// tell apart (an I/O of 130,560 bytes is not one of 128 KiB).
fn io_size_text(b: u64) -> String {
    let (per, name) = unit_of(b);
    if b.is_multiple_of(per) {
        format!("{} {name}", b / per)
    } else {
        format!("{} B", count(b))
    }
}

/// A count with thousands separators.
fn count(n: u64) -> String {
    fmt_iops(n as f64)
}

fn pct_text(v: f64) -> String {
    format!("{v:.1} %")
}

/// `part` as a percentage of `whole`; 0 of nothing is 0, not NaN.
fn share_of(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

// ---------------------------------------------------------------- sections

fn trace_section(page: &mut Page, t: &TraceReport) {
    let a = &t.analysis;
    let labels: Vec<String> = t.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let or_dash = |s: String| if s.is_empty() { dash() } else { s.render() };
    let facts = facts_table(&[
        ("analysis", t.id.render()),
        ("file", t.file.render()),
        ("format", a.format.render()),
        ("devices", or_dash(a.devices.join(", "))),
        ("host", t.host.render()),
        ("created", t.created.render()),
        ("records", count(a.records).render()),
        ("skipped bad records", count(a.skipped_records).render()),
        (
            "duration",
            a.duration_s.map_or_else(
                || html! { span.muted { "no times in the trace" } },
                |d| fmt_duration_s(d).render(),
            ),
        ),
        ("IOPS", a.iops.map_or_else(dash, |v| fmt_iops(v).render())),
        (
            "reads",
            format!("{} ({})", count(a.reads), size_text(a.read_bytes)).render(),
        ),
        (
            "writes",
            format!("{} ({})", count(a.writes), size_text(a.write_bytes)).render(),
        ),
        ("trims", count(a.trims).render()),
        ("sequential", pct_text(a.sequential_pct).render()),
        ("block size", size_text(a.block_bytes).render()),
        ("extent size", size_text(a.extent_bytes).render()),
        ("labels", or_dash(labels.join(", "))),
        ("command", html! { code { (t.command_line) } }),
    ]);
    page.push(html! {
        section id="trace" { h2 { "Trace" } (facts) }
    });
}

fn sizes_section(page: &mut Page, a: &Analysis) {
    let rows: Vec<Vec<Markup>> = a
        .sizes
        .iter()
        .map(|s| {
            text_row(&[
                io_size_text(s.size_bytes),
                count(s.count),
                pct_text(share_of(s.count, a.records)),
            ])
        })
        .collect();
    // The analysis keeps the most frequent sizes only: say what the table
    // leaves out rather than let its shares look like they add up.
    let listed: u64 = a.sizes.iter().map(|s| s.count).sum();
    let other = a.records.saturating_sub(listed);
    page.push(html! {
        section id="sizes" {
            h2 { "Sizes" }
            @if a.sizes.is_empty() {
                p.note { "No I/Os in the trace." }
            } @else {
                p { "I/O sizes by how many I/Os had them, most frequent first." }
                (table("sizes", &["size", "I/Os", "% of I/Os"], &rows, 1..3))
                @if other > 0 {
                    p.note {
                        "Other sizes, not listed: " (count(other)) " I/Os ("
                        (pct_text(share_of(other, a.records))) ")."
                    }
                }
            }
        }
    });
}

/// A hot-spot line for the chart: (bytes, share %) from the origin; none
/// for a kind of access the trace does not have.
fn hot_line(name: &str, shares: &[HotShare]) -> Option<(String, Vec<(f64, f64)>)> {
    if shares.is_empty() {
        return None;
    }
    // The origin makes the line read as a curve from "no cache, no hits"
    // rather than starting in mid-air at the 50 % set.
    let points: Vec<(f64, f64)> = std::iter::once((0.0, 0.0))
        .chain(shares.iter().map(|h| (h.bytes as f64, h.share_pct)))
        .collect();
    Some((name.to_owned(), points))
}

/// The hot set taking `share` % of `shares`' accesses and its share of
/// the footprint, as `iorig trace analyse` words it.
fn hot_cell(shares: &[HotShare], share: f64) -> String {
    shares
        .iter()
        .find(|h| (h.share_pct - share).abs() < 1e-9)
        .map_or_else(
            || "–".to_owned(),
            |h| format!("{} ({:.1} %)", size_text(h.bytes), h.footprint_pct),
        )
}

fn hot_spot_section(page: &mut Page, a: &Analysis) {
    let footprint = format!(
        "Footprint: {} in {} blocks of {} ({} block accesses).",
        size_text(a.footprint_bytes),
        count(a.distinct_blocks),
        size_text(a.block_bytes),
        count(a.accesses)
    );
    if a.hot_spot.is_empty() {
        page.push(html! {
            section id="hot-spot" {
                h2 { "Hot spot" }
                p { (footprint) }
                p.note { "No block accesses: no hot spot." }
            }
        });
        return;
    }
    let extents = format!("{} extents", size_text(a.extent_bytes));
    let rows: Vec<Vec<Markup>> = HOT_SHARES_PCT
        .iter()
        .map(|s| {
            text_row(&[
                format!("{} %", fmt_pct(*s)),
                hot_cell(&a.hot_spot, *s),
                hot_cell(&a.hot_spot_reads, *s),
                hot_cell(&a.hot_spot_writes, *s),
                hot_cell(&a.hot_spot_extents, *s),
            ])
        })
        .collect();
    let lines: Vec<(String, Vec<(f64, f64)>)> = [
        hot_line("all accesses", &a.hot_spot),
        hot_line("reads", &a.hot_spot_reads),
        hot_line("writes", &a.hot_spot_writes),
    ]
    .into_iter()
    .flatten()
    .collect();
    let title = "Hot spot: share of accesses by hot set size";
    let chart = page.chart(
        "trace-hot-spot",
        title,
        charts::hot_spot_chart(title, &lines),
    );
    page.push(html! {
        section id="hot-spot" {
            h2 { "Hot spot" }
            p { (footprint) }
            p {
                "Each cell: the fewest blocks that take that share of the accesses, and their size \
                 as a share of the footprint (for extents: of the " (size_text(a.extent_bytes))
                " extents touched). Reads and writes are shares of the whole footprint."
            }
            (table(
                "hot-spot",
                &["share of accesses", "all accesses", "reads", "writes", extents.as_str()],
                &rows,
                1..5,
            ))
            (chart)
        }
    });
}

/// An LRU curve for the chart: (cache bytes, hit ratio); none when the
/// curve is empty (no accesses of that kind, or no curves computed).
fn lru_line(name: &str, curve: &[LruPoint]) -> Option<(String, Vec<(f64, f64)>)> {
    if curve.is_empty() {
        return None;
    }
    let points: Vec<(f64, f64)> = curve
        .iter()
        .map(|p| (p.cache_bytes as f64, p.hit_ratio))
        .collect();
    Some((name.to_owned(), points))
}

fn lru_section(page: &mut Page, a: &Analysis) {
    let curves = if a.lru_curve.is_empty() {
        let why = if a.accesses == 0 {
            "No block accesses: no LRU curve."
        } else {
            "LRU curves: not computed (--no-lru)."
        };
        html! { p.note { (why) } }
    } else {
        lru_curves(page, a)
    };
    let for_hit = a.cache_for_hit.as_ref().map(|c| match c.cache_bytes {
        Some(b) => format!(
            "Hit ratio {}: an LRU cache of {}.",
            c.hit_ratio,
            size_text(b)
        ),
        None => format!(
            "Hit ratio {}: no cache reaches it (at most {:.3}).",
            c.hit_ratio, a.max_hit_ratio
        ),
    });
    // `{}` of the rate, not three significant digits: a rate of 0.0001
    // must not read as 0.
    let sampling = a.lru_sampling.as_ref().map(|s| {
        format!(
            "SHARDS spatial sampling at rate {}: {} blocks sampled ({} accesses followed); \
             error bound ±{:.3} on the hit ratios.",
            s.rate,
            count(s.sampled_blocks),
            count(s.sampled_accesses),
            s.error_bound
        )
    });
    page.push(html! {
        section id="lru" {
            h2 { "Cache size (LRU)" }
            (curves)
            @if let Some(text) = &for_hit { p { (text) } }
            @if let Some(text) = &sampling { p.note { (text) } }
            p {
                "A cache of the whole footprint (" (size_text(a.footprint_bytes)) ") hits "
                (format!("{:.3}", a.max_hit_ratio)) ": every first access misses."
            }
        }
    });
}

/// The LRU curves: what they are, their chart and their table.
fn lru_curves(page: &mut Page, a: &Analysis) -> Markup {
    let lines: Vec<(String, Vec<(f64, f64)>)> = [
        lru_line("all accesses", &a.lru_curve),
        lru_line("reads", &a.lru_curve_reads),
        lru_line("writes", &a.lru_curve_writes),
    ]
    .into_iter()
    .flatten()
    .collect();
    let title = "LRU hit ratio by cache size";
    let chart = page.chart("trace-lru", title, charts::lru_chart(title, &lines));

    // The three curves share their cache sizes, but a table keyed by
    // size stays right should one of them stop short.
    let mut by_size: BTreeMap<u64, [Option<f64>; 3]> = BTreeMap::new();
    for (k, curve) in [&a.lru_curve, &a.lru_curve_reads, &a.lru_curve_writes]
        .into_iter()
        .enumerate()
    {
        for p in curve {
            by_size.entry(p.cache_bytes).or_default()[k] = Some(p.hit_ratio);
        }
    }
    let ratio = |r: Option<f64>| r.map_or_else(|| "–".to_owned(), |r| format!("{r:.3}"));
    let rows: Vec<Vec<Markup>> = by_size
        .iter()
        .map(|(bytes, r)| text_row(&[size_text(*bytes), ratio(r[0]), ratio(r[1]), ratio(r[2])]))
        .collect();
    html! {
        p {
            "The hit ratio of an LRU cache of " (size_text(a.block_bytes)) " blocks against its \
             size, at 1, 2, 4, … blocks up to the footprint. Reads and writes count their hits \
             in the same cache of all accesses (a read cache's hit ratio; the rewrites a \
             write-back cache absorbs)."
        }
        (chart)
        (table(
            "lru",
            &["cache size", "hit ratio: all accesses", "reads", "writes"],
            &rows,
            1..4,
        ))
    }
}

fn warmup_section(page: &mut Page, a: &Analysis, w: &Warmup) {
    let mut rows: Vec<Vec<Markup>> = w
        .hot_sets
        .iter()
        .map(|h| {
            text_row(&[
                h.share_pct.map_or_else(
                    || "–".to_owned(),
                    |s| format!("{} % of accesses", fmt_pct(s)),
                ),
                size_text(h.bytes),
                iorig_trace::analyse::duration_text(h.seconds),
            ])
        })
        .collect();
    if let Some(h) = &w.for_hit {
        let name = a.cache_for_hit.as_ref().map_or_else(
            || "the cache for the hit ratio asked".to_owned(),
            |c| format!("the cache for hit ratio {}", c.hit_ratio),
        );
        rows.push(text_row(&[
            name,
            size_text(h.bytes),
            iorig_trace::analyse::duration_text(h.seconds),
        ]));
    }
    page.push(html! {
        section id="warm-up" {
            h2 { "Warm-up" }
            p {
                "Warm-up at " (fmt_iops(w.backend_read_iops)) " backend reads/s of "
                (size_text(w.fill_bytes)) " (" (w.source) "): a cache that fills on a miss, one \
                 block per backend read, needs at least a read per hot block before it holds \
                 the hot set. The real cache may learn slower (when it admits a block only \
                 after several hits), not faster."
            }
            (table("warm-up", &["hot set", "size", "time to fill"], &rows, 1..3))
        }
    });
}

/// One figure of every window that has it, at the window's start.
fn window_series(windows: &[Window], f: impl Fn(&Window) -> Option<f64>) -> Vec<(f64, f64)> {
    windows
        .iter()
        .filter_map(|w| f(w).map(|v| (w.t_s, v)))
        .collect()
}

fn one_line_panel(
    y_desc: &str,
    name: &str,
    points: Vec<(f64, f64)>,
    count_axis: bool,
) -> SeriesPanel {
    SeriesPanel {
        y_desc: y_desc.to_owned(),
        lines: vec![(name.to_owned(), points)],
        count_axis,
    }
}

/// How the windows went, as `iorig trace analyse` sums them up.
fn windows_sentence(a: &Analysis) -> String {
    let Some(s) = a.windows_summary() else {
        return String::new();
    };
    let length = a
        .window_s
        .map(|w| format!(" of {}", fmt_duration_s(w)))
        .unwrap_or_default();
    // One window has nothing before it to overlap with: say nothing
    // rather than a median of no values.
    let overlap = match (s.overlap_median_pct, s.overlap_min_pct) {
        (Some(m), Some(lo)) => {
            format!(", {m:.0} % of it hot in the window before (median; lowest {lo:.0} %)")
        }
        _ => String::new(),
    };
    format!(
        "{} window{}{length}: IOPS {} to {} (median {}); hot set (80 % of a window's accesses) \
         median {}{overlap}.",
        a.windows.len(),
        if a.windows.len() == 1 { "" } else { "s" },
        fmt_iops(s.iops_min),
        fmt_iops(s.iops_max),
        fmt_iops(s.iops_median),
        size_text(s.hot_bytes_median)
    )
}

fn over_time_section(page: &mut Page, a: &Analysis) {
    let windows = if a.windows.is_empty() {
        Markup::default()
    } else {
        let chart = windows_chart(page, &a.windows);
        html! { p { (windows_sentence(a)) } (chart) }
    };
    let spreads: Vec<(&str, &Spread)> = [
        ("between issues", a.interarrival_ns.as_ref()),
        ("latency in the trace", a.latency_ns.as_ref()),
    ]
    .into_iter()
    .filter_map(|(name, s)| s.map(|s| (name, s)))
    .collect();
    let rows: Vec<Vec<Markup>> = spreads
        .iter()
        .map(|(name, s)| {
            text_row(&[
                (*name).to_owned(),
                count(s.count),
                fmt_lat_ns(s.mean),
                fmt_lat_ns(s.p50 as f64),
                fmt_lat_ns(s.p90 as f64),
                fmt_lat_ns(s.p99 as f64),
                fmt_lat_ns(s.max as f64),
            ])
        })
        .collect();
    page.push(html! {
        section id="over-time" {
            h2 { "Over time" }
            (windows)
            @if !rows.is_empty() {
                h3 { "Times in the trace" }
                (table("spreads", &["", "count", "mean", "p50", "p90", "p99", "max"], &rows, 1..7))
            }
        }
    });
}

/// The trace window by window: its load, mix, queue depth and how its hot
/// set moved.
fn windows_chart(page: &mut Page, w: &[Window]) -> Markup {
    let mut panels = vec![
        one_line_panel("IOPS", "IOPS", window_series(w, |x| Some(x.iops)), true),
        one_line_panel(
            "MB/s",
            "MB/s",
            window_series(w, |x| Some(charts::mb_per_s(x.bw_bytes_per_s))),
            false,
        ),
        // A window without I/O has no mix: leaving it out keeps a
        // silent stretch from reading as all writes.
        one_line_panel(
            "read (%)",
            "read %",
            window_series(w, |x| (x.records > 0).then_some(x.read_pct)),
            false,
        ),
    ];
    // Queue depth needs the records' latencies and overlap a window
    // before: a panel of neither would be an empty frame.
    let qd = window_series(w, |x| x.mean_qd);
    if !qd.is_empty() {
        panels.push(one_line_panel("queue depth", "mean queue depth", qd, false));
    }
    let overlap = window_series(w, |x| x.hot_overlap_pct);
    if !overlap.is_empty() {
        panels.push(one_line_panel(
            "hot set overlap (%)",
            "hot set also hot in the window before",
            overlap,
            false,
        ));
    }
    let title = "The trace over time, window by window (each at its start)";
    page.chart(
        "trace-over-time",
        title,
        charts::panels_chart(title, &panels),
    )
}
