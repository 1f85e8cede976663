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
    let _ = writeln!(
        page.body,
        "<header><h1>{}</h1><p class=\"sub\">{} · {} · {} · created {}</p></header>",
        esc(&title),
        esc(&t.file),
        esc(&a.format),
        esc(&t.host),
        esc(&t.created)
    );

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
    page.push("<nav>");
    for (id, name) in &nav {
        let _ = write!(page.body, "<a href=\"#{id}\">{}</a>", esc(name));
    }
    page.push("</nav>\n");

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
    page.push("<section id=\"trace\"><h2>Trace</h2>\n");
    let labels: Vec<String> = t.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let or_dash = |s: String| {
        if s.is_empty() {
            "–".to_owned()
        } else {
            esc(&s)
        }
    };
    page.push(&facts_table(&[
        ("analysis", t.id.to_string()),
        ("file", esc(&t.file)),
        ("format", esc(&a.format)),
        ("devices", or_dash(a.devices.join(", "))),
        ("host", esc(&t.host)),
        ("created", esc(&t.created)),
        ("records", esc(&count(a.records))),
        ("skipped bad records", esc(&count(a.skipped_records))),
        (
            "duration",
            a.duration_s.map_or_else(
                || "<span class=\"muted\">no times in the trace</span>".to_owned(),
                |d| esc(&fmt_duration_s(d)),
            ),
        ),
        (
            "IOPS",
            a.iops.map_or_else(|| "–".to_owned(), |v| esc(&fmt_iops(v))),
        ),
        (
            "reads",
            esc(&format!("{} ({})", count(a.reads), size_text(a.read_bytes))),
        ),
        (
            "writes",
            esc(&format!(
                "{} ({})",
                count(a.writes),
                size_text(a.write_bytes)
            )),
        ),
        ("trims", esc(&count(a.trims))),
        ("sequential", esc(&pct_text(a.sequential_pct))),
        ("block size", esc(&size_text(a.block_bytes))),
        ("extent size", esc(&size_text(a.extent_bytes))),
        ("labels", or_dash(labels.join(", "))),
        ("command", format!("<code>{}</code>", esc(&t.command_line))),
    ]));
    page.push("</section>\n");
}

fn sizes_section(page: &mut Page, a: &Analysis) {
    page.push("<section id=\"sizes\"><h2>Sizes</h2>\n");
    if a.sizes.is_empty() {
        page.push("<p class=\"note\">No I/Os in the trace.</p>\n</section>\n");
        return;
    }
    page.push("<p>I/O sizes by how many I/Os had them, most frequent first.</p>\n");
    let rows: Vec<Vec<String>> = a
        .sizes
        .iter()
        .map(|s| {
            vec![
                esc(&io_size_text(s.size_bytes)),
                esc(&count(s.count)),
                esc(&pct_text(share_of(s.count, a.records))),
            ]
        })
        .collect();
    page.push(&table("sizes", &["size", "I/Os", "% of I/Os"], &rows, 1..3));
    // The analysis keeps the most frequent sizes only: say what the table
    // leaves out rather than let its shares look like they add up.
    let listed: u64 = a.sizes.iter().map(|s| s.count).sum();
    if listed < a.records {
        let other = a.records - listed;
        let _ = writeln!(
            page.body,
            "<p class=\"note\">{}</p>",
            esc(&format!(
                "Other sizes, not listed: {} I/Os ({}).",
                count(other),
                pct_text(share_of(other, a.records))
            ))
        );
    }
    page.push("</section>\n");
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
            |h| {
                esc(&format!(
                    "{} ({:.1} %)",
                    size_text(h.bytes),
                    h.footprint_pct
                ))
            },
        )
}

fn hot_spot_section(page: &mut Page, a: &Analysis) {
    page.push("<section id=\"hot-spot\"><h2>Hot spot</h2>\n");
    let _ = writeln!(
        page.body,
        "<p>{}</p>",
        esc(&format!(
            "Footprint: {} in {} blocks of {} ({} block accesses).",
            size_text(a.footprint_bytes),
            count(a.distinct_blocks),
            size_text(a.block_bytes),
            count(a.accesses)
        ))
    );
    if a.hot_spot.is_empty() {
        page.push("<p class=\"note\">No block accesses: no hot spot.</p>\n</section>\n");
        return;
    }
    let _ = writeln!(
        page.body,
        "<p>{}</p>",
        esc(&format!(
            "Each cell: the fewest blocks that take that share of the accesses, and their size \
             as a share of the footprint (for extents: of the {} extents touched). Reads and \
             writes are shares of the whole footprint.",
            size_text(a.extent_bytes)
        ))
    );
    let extents = format!("{} extents", size_text(a.extent_bytes));
    let rows: Vec<Vec<String>> = HOT_SHARES_PCT
        .iter()
        .map(|s| {
            vec![
                esc(&format!("{} %", fmt_pct(*s))),
                hot_cell(&a.hot_spot, *s),
                hot_cell(&a.hot_spot_reads, *s),
                hot_cell(&a.hot_spot_writes, *s),
                hot_cell(&a.hot_spot_extents, *s),
            ]
        })
        .collect();
    page.push(&table(
        "hot-spot",
        &[
            "share of accesses",
            "all accesses",
            "reads",
            "writes",
            extents.as_str(),
        ],
        &rows,
        1..5,
    ));
    let lines: Vec<(String, Vec<(f64, f64)>)> = [
        hot_line("all accesses", &a.hot_spot),
        hot_line("reads", &a.hot_spot_reads),
        hot_line("writes", &a.hot_spot_writes),
    ]
    .into_iter()
    .flatten()
    .collect();
    let title = "Hot spot: share of accesses by hot set size";
    page.chart(
        "trace-hot-spot",
        title,
        charts::hot_spot_chart(title, &lines),
    );
    page.push("</section>\n");
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
    page.push("<section id=\"lru\"><h2>Cache size (LRU)</h2>\n");
    if a.lru_curve.is_empty() {
        let why = if a.accesses == 0 {
            "No block accesses: no LRU curve."
        } else {
            "LRU curves: not computed (--no-lru)."
        };
        let _ = writeln!(page.body, "<p class=\"note\">{}</p>", esc(why));
    } else {
        let _ = writeln!(
            page.body,
            "<p>{}</p>",
            esc(&format!(
                "The hit ratio of an LRU cache of {} blocks against its size, at 1, 2, 4, … \
                 blocks up to the footprint. Reads and writes count their hits in the same \
                 cache of all accesses (a read cache's hit ratio; the rewrites a write-back \
                 cache absorbs).",
                size_text(a.block_bytes)
            ))
        );
        let lines: Vec<(String, Vec<(f64, f64)>)> = [
            lru_line("all accesses", &a.lru_curve),
            lru_line("reads", &a.lru_curve_reads),
            lru_line("writes", &a.lru_curve_writes),
        ]
        .into_iter()
        .flatten()
        .collect();
        let title = "LRU hit ratio by cache size";
        page.chart("trace-lru", title, charts::lru_chart(title, &lines));

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
        let rows: Vec<Vec<String>> = by_size
            .iter()
            .map(|(bytes, r)| {
                vec![
                    esc(&size_text(*bytes)),
                    esc(&ratio(r[0])),
                    esc(&ratio(r[1])),
                    esc(&ratio(r[2])),
                ]
            })
            .collect();
        page.push(&table(
            "lru",
            &["cache size", "hit ratio: all accesses", "reads", "writes"],
            &rows,
            1..4,
        ));
    }
    if let Some(c) = &a.cache_for_hit {
        let text = match c.cache_bytes {
            Some(b) => format!(
                "Hit ratio {}: an LRU cache of {}.",
                c.hit_ratio,
                size_text(b)
            ),
            None => format!(
                "Hit ratio {}: no cache reaches it (at most {:.3}).",
                c.hit_ratio, a.max_hit_ratio
            ),
        };
        let _ = writeln!(page.body, "<p>{}</p>", esc(&text));
    }
    if let Some(s) = &a.lru_sampling {
        // `{}` of the rate, not three significant digits: a rate of 0.0001
        // must not read as 0.
        let _ = writeln!(
            page.body,
            "<p class=\"note\">{}</p>",
            esc(&format!(
                "SHARDS spatial sampling at rate {}: {} blocks sampled ({} accesses followed); \
                 error bound ±{:.3} on the hit ratios.",
                s.rate,
                count(s.sampled_blocks),
                count(s.sampled_accesses),
                s.error_bound
            ))
        );
    }
    let _ = writeln!(
        page.body,
        "<p>{}</p>",
        esc(&format!(
            "A cache of the whole footprint ({}) hits {:.3}: every first access misses.",
            size_text(a.footprint_bytes),
            a.max_hit_ratio
        ))
    );
    page.push("</section>\n");
}

fn warmup_section(page: &mut Page, a: &Analysis, w: &Warmup) {
    page.push("<section id=\"warm-up\"><h2>Warm-up</h2>\n");
    let _ = writeln!(
        page.body,
        "<p>{}</p>",
        esc(&format!(
            "Warm-up at {} backend reads/s of {} ({}): a cache that fills on a miss, one block \
             per backend read, needs at least a read per hot block before it holds the hot \
             set. The real cache may learn slower (when it admits a block only after several \
             hits), not faster.",
            fmt_iops(w.backend_read_iops),
            size_text(w.fill_bytes),
            w.source
        ))
    );
    let mut rows: Vec<Vec<String>> = w
        .hot_sets
        .iter()
        .map(|h| {
            vec![
                esc(&h.share_pct.map_or_else(
                    || "–".to_owned(),
                    |s| format!("{} % of accesses", fmt_pct(s)),
                )),
                esc(&size_text(h.bytes)),
                esc(&iorig_trace::analyse::duration_text(h.seconds)),
            ]
        })
        .collect();
    if let Some(h) = &w.for_hit {
        let name = a.cache_for_hit.as_ref().map_or_else(
            || "the cache for the hit ratio asked".to_owned(),
            |c| format!("the cache for hit ratio {}", c.hit_ratio),
        );
        rows.push(vec![
            esc(&name),
            esc(&size_text(h.bytes)),
            esc(&iorig_trace::analyse::duration_text(h.seconds)),
        ]);
    }
    page.push(&table(
        "warm-up",
        &["hot set", "size", "time to fill"],
        &rows,
        1..3,
    ));
    page.push("</section>\n");
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
    page.push("<section id=\"over-time\"><h2>Over time</h2>\n");
    if !a.windows.is_empty() {
        let _ = writeln!(page.body, "<p>{}</p>", esc(&windows_sentence(a)));
        let w = &a.windows;
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
        );
    }
    let spreads: Vec<(&str, &Spread)> = [
        ("between issues", a.interarrival_ns.as_ref()),
        ("latency in the trace", a.latency_ns.as_ref()),
    ]
    .into_iter()
    .filter_map(|(name, s)| s.map(|s| (name, s)))
    .collect();
    if !spreads.is_empty() {
        page.push("<h3>Times in the trace</h3>\n");
        let rows: Vec<Vec<String>> = spreads
            .iter()
            .map(|(name, s)| {
                vec![
                    esc(name),
                    esc(&count(s.count)),
                    esc(&fmt_lat_ns(s.mean)),
                    esc(&fmt_lat_ns(s.p50 as f64)),
                    esc(&fmt_lat_ns(s.p90 as f64)),
                    esc(&fmt_lat_ns(s.p99 as f64)),
                    esc(&fmt_lat_ns(s.max as f64)),
                ]
            })
            .collect();
        page.push(&table(
            "spreads",
            &["", "count", "mean", "p50", "p90", "p99", "max"],
            &rows,
            1..7,
        ));
    }
    page.push("</section>\n");
}
