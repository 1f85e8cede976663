//! What a trace says to someone sizing a cache.
//!
//! Every I/O is cut into the blocks it touches (`block_bytes`, default 4 KiB;
//! an I/O of 64 KiB is 16 block accesses), block numbers kept apart per
//! device. From the block accesses, in trace order:
//!
//! - **Hot spot**: sort blocks by how often they were accessed; the hot spot
//!   for a share S is the fewest blocks whose accesses add up to S of all
//!   (`bytes` = those blocks × block size). The same for reads and writes
//!   alone, and at `extent_bytes` (default 1 MiB) granularity.
//! - **LRU curve**: an LRU cache of C blocks hits an access exactly when
//!   fewer than C distinct other blocks were accessed since the same block
//!   was last accessed (its *reuse distance*). Distances are exact: each
//!   block's last access is marked in a Fenwick tree over access positions,
//!   and the marks between two accesses of a block are the distinct blocks
//!   between them. The hit ratio of every cache size follows from the
//!   distance histogram; first accesses always miss (`max_hit_ratio`).
//!   Reads and writes get their own curves (a read cache's hit ratio; a
//!   write-back cache absorbing rewrites), each over the same cache of all
//!   accesses.

use crate::table::BlockTable;
use crate::{Op, Record, TraceError};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for integer keys: one multiply and a fold per key. The maps
/// here take one lookup per block access (tens of millions), where the
/// standard SipHash's resistance to chosen keys buys nothing (the keys are
/// a trace's block numbers) and costs most of the time.
#[derive(Default, Clone, Copy)]
struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }
    fn write_u64(&mut self, x: u64) {
        let m = u128::from(self.0 ^ x) * 0x9E37_79B9_7F4A_7C15;
        self.0 = (m as u64) ^ ((m >> 64) as u64);
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
}

type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// Records whose blocks are asked for (prefetched) together, a batch ahead
/// of their lookups; blocks prefetched per record at most (a large I/O's
/// later blocks are looked up unasked); records read ahead at a time.
const BATCH: usize = 16;
const CHUNK: usize = 4096;
const PREFETCH_BLOCKS: u64 = 16;

/// How to analyse.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    /// Cache and hot-spot block size.
    pub block_bytes: u64,
    /// The coarser hot-spot granularity.
    pub extent_bytes: u64,
    /// Also give the cache size this hit ratio needs (0 < hit ≤ 1).
    pub hit: Option<f64>,
    /// Block accesses the LRU computation takes before it refuses (its
    /// memory grows with them): all of them, or the sampled ones.
    pub max_accesses: u64,
    /// Compute the LRU curves from this share of the blocks (SHARDS'
    /// spatial sampling, 0 < rate < 1); `None`: exactly, from every block.
    pub sample: Option<f64>,
    /// The length of the windows the trace is followed over in time
    /// (timed traces only).
    pub window_ns: u64,
    /// Compute the LRU curves (false: counts, hot spot and windows only,
    /// the curves empty).
    pub lru: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            block_bytes: 4096,
            extent_bytes: 1 << 20,
            hit: None,
            max_accesses: 500_000_000,
            sample: None,
            window_ns: 60_000_000_000,
            lru: true,
        }
    }
}

/// The shares the hot spot is given for, percent.
pub const HOT_SHARES_PCT: [f64; 5] = [50.0, 80.0, 90.0, 95.0, 99.0];

/// The analysis of a trace (`iorig trace analyse --json`, schema
/// `iorig.trace/1`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Analysis {
    pub schema: String,
    /// The trace's format and devices as its reader told them (filled in by
    /// the caller: the analysis sees records only).
    pub format: String,
    pub devices: Vec<String>,
    /// Bad records left out (`--skip-bad`).
    pub skipped_records: u64,
    /// Records analysed (I/Os).
    pub records: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// First to last issue time; absent when the trace has no times.
    pub duration_s: Option<f64>,
    /// Records over the duration.
    pub iops: Option<f64>,
    /// I/O sizes by how many I/Os had them, most frequent first (at most 16).
    pub sizes: Vec<SizeCount>,
    /// I/Os that start where the device's previous I/O ended, percent.
    pub sequential_pct: f64,
    pub block_bytes: u64,
    pub extent_bytes: u64,
    /// Block accesses (each I/O counts once per block it touches).
    pub accesses: u64,
    pub distinct_blocks: u64,
    /// Bytes of the distinct blocks: the footprint.
    pub footprint_bytes: u64,
    pub hot_spot: Vec<HotShare>,
    pub hot_spot_reads: Vec<HotShare>,
    pub hot_spot_writes: Vec<HotShare>,
    pub hot_spot_extents: Vec<HotShare>,
    /// Hit ratio of all accesses against LRU cache size (block size
    /// `block_bytes`): 1, 2, 4, ... blocks up to the footprint.
    pub lru_curve: Vec<CurvePoint>,
    /// The same cache, hits among reads only.
    pub lru_curve_reads: Vec<CurvePoint>,
    /// The same cache, hits among writes only (rewrites a write-back cache
    /// absorbs).
    pub lru_curve_writes: Vec<CurvePoint>,
    /// The hit ratio of a cache holding every block: all but first accesses.
    pub max_hit_ratio: f64,
    /// The smallest cache that reaches `--hit`; `cache_bytes` is absent
    /// when no cache does (the ratio is above `max_hit_ratio`).
    pub cache_for_hit: Option<CacheForHit>,
    /// How the LRU curves were sampled; absent when they are exact.
    pub lru_sampling: Option<Sampling>,
    /// Gaps between consecutive issue times (timed traces).
    pub interarrival_ns: Option<Spread>,
    /// The records' latencies, when the trace has them (MSR's
    /// ResponseTime).
    pub latency_ns: Option<Spread>,
    /// The window length of `windows`, s.
    pub window_s: Option<f64>,
    /// The trace window by window (timed traces): its load and how its hot
    /// set moved. Empty without times.
    pub windows: Vec<Window>,
    /// How long a cache takes to fill with the hot sets at a backend's
    /// random-read rate (filled in by the caller with [`warmup`] when a rate
    /// is known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup: Option<Warmup>,
}

/// The warm-up estimate: a cache that fills on a miss, one block
/// (`block_bytes`) per backend read, needs at least a read per hot block
/// before it holds the hot set. This is the estimate the SSD-cache guide
/// tabulates by hand (e.g. a 30 GB hot spot on 3 disks: 20–30 min); the
/// real cache may learn slower (it admits blocks after several hits) but
/// not faster.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Warmup {
    /// The backend's random reads per second.
    pub backend_read_iops: f64,
    /// Where that rate came from (given, or a stored run's step).
    pub source: String,
    /// Bytes one backend read brings into the cache (the analysis block).
    pub fill_bytes: u64,
    /// The time to fill each hot set of `hot_spot`.
    pub hot_sets: Vec<WarmupTime>,
    /// The time to fill the cache `cache_for_hit` sized, when it did.
    pub for_hit: Option<WarmupTime>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WarmupTime {
    /// The hot set's share of all accesses (absent for the hit-ratio cache).
    pub share_pct: Option<f64>,
    pub bytes: u64,
    pub seconds: f64,
}

/// A time in the unit a cache's owner plans with: seconds for a cache warm
/// almost at once, minutes up to two hours, hours after.
pub fn duration_text(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1} s")
    } else if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// The windows over time summed up.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowsSummary {
    pub iops_min: f64,
    pub iops_max: f64,
    pub iops_median: f64,
    /// The median window's hot set (80 % of its block accesses).
    pub hot_bytes_median: u64,
    /// The share of a window's hot set that was hot in the window before,
    /// median and lowest; absent when no window had one before it.
    pub overlap_median_pct: Option<f64>,
    pub overlap_min_pct: Option<f64>,
}

/// The middle value (the upper one of an even count); 0 of none.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

impl Analysis {
    /// Forgets what came of the records' times, for a trace read as timed
    /// that turned out not to be (an fio iolog v2 without `wait` lines:
    /// [`crate::read::Records::may_be_timed`]).
    fn drop_times(&mut self) {
        self.duration_s = None;
        self.iops = None;
        self.window_s = None;
        self.windows.clear();
        self.interarrival_ns = None;
    }

    /// The windows summed up; `None` without windows (an untimed trace).
    pub fn windows_summary(&self) -> Option<WindowsSummary> {
        if self.windows.is_empty() {
            return None;
        }
        let iops: Vec<f64> = self.windows.iter().map(|w| w.iops).collect();
        let overlaps: Vec<f64> = self
            .windows
            .iter()
            .filter_map(|w| w.hot_overlap_pct)
            .collect();
        Some(WindowsSummary {
            iops_min: iops.iter().copied().fold(f64::INFINITY, f64::min),
            iops_max: iops.iter().copied().fold(0.0, f64::max),
            iops_median: median(iops),
            hot_bytes_median: median(self.windows.iter().map(|w| w.hot_bytes as f64).collect())
                as u64,
            overlap_min_pct: overlaps.iter().copied().reduce(f64::min),
            overlap_median_pct: (!overlaps.is_empty()).then(|| median(overlaps)),
        })
    }
}

/// The warm-up estimate of `a`'s hot sets (and its hit-ratio cache) at
/// `iops` backend reads of one block each.
pub fn warmup(a: &Analysis, iops: f64, source: String) -> Warmup {
    let time = |bytes: u64| bytes.div_ceil(a.block_bytes.max(1)) as f64 / iops;
    Warmup {
        backend_read_iops: iops,
        source,
        fill_bytes: a.block_bytes,
        hot_sets: a
            .hot_spot
            .iter()
            .map(|h| WarmupTime {
                share_pct: Some(h.share_pct),
                bytes: h.bytes,
                seconds: time(h.bytes),
            })
            .collect(),
        for_hit: a
            .cache_for_hit
            .as_ref()
            .and_then(|c| c.cache_bytes)
            .map(|bytes| WarmupTime {
                share_pct: None,
                bytes,
                seconds: time(bytes),
            }),
    }
}

/// A distribution of times, from an HDR histogram (3 significant digits).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub count: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub max: u64,
}

fn spread(h: &hdrhistogram::Histogram<u64>) -> Option<Spread> {
    (!h.is_empty()).then(|| Spread {
        count: h.len(),
        mean: h.mean(),
        p50: h.value_at_quantile(0.5),
        p90: h.value_at_quantile(0.9),
        p99: h.value_at_quantile(0.99),
        max: h.max(),
    })
}

fn new_hist() -> Result<hdrhistogram::Histogram<u64>, TraceError> {
    hdrhistogram::Histogram::new(3).map_err(|e| TraceError::Limit(e.to_string()))
}

/// One window of a timed trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Window {
    /// Its start from the trace's first record, s.
    pub t_s: f64,
    pub records: u64,
    pub iops: f64,
    pub bw_bytes_per_s: f64,
    pub read_pct: f64,
    /// Mean I/Os in flight (Little's law: the records' latency over the
    /// window), when the trace has latencies.
    pub mean_qd: Option<f64>,
    /// The fewest blocks taking 80 % of the window's block accesses.
    pub hot_bytes: u64,
    /// Of those blocks, the share that were also in the hot set of the
    /// last window before with I/O, percent: 100 is a hot spot that stays
    /// put, 0 one that moved entirely. Absent for the first window and
    /// for windows without I/O.
    pub hot_overlap_pct: Option<f64>,
}

/// What a window gathers while it is open.
#[derive(Default)]
struct WindowAcc {
    index: u64,
    records: u64,
    reads: u64,
    bytes: u64,
    latency_ns: u128,
    has_latency: bool,
    /// The blocks accessed in the window, each once (their counts in the
    /// window are in their [`BlockState`]).
    touched: Vec<u64>,
}

/// The fewest keys taking `share` of the counts: the most counted, and
/// among keys counted as often as the last one needed, the lowest.
fn hot_set(v: &[(u64, u32)], share: f64) -> Vec<u64> {
    let levels = Levels::of(v.iter().map(|(_, c)| u64::from(*c)));
    let need = (share * levels.total as f64).ceil() as u64;
    let mut walk = levels.walk();
    walk.take_to(need);
    if walk.units == 0 {
        return Vec::new();
    }
    // The count of the last unit taken, and how many of that count.
    let (last, ties) = if walk.taken_in_level > 0 {
        (levels.levels[walk.level].0, walk.taken_in_level)
    } else {
        let (c, n) = levels.levels[walk.level - 1];
        (c, n)
    };
    let mut out: Vec<u64> = v
        .iter()
        .filter(|(_, c)| u64::from(*c) > last)
        .map(|(k, _)| *k)
        .collect();
    let mut tied: Vec<u64> = v
        .iter()
        .filter(|(_, c)| u64::from(*c) == last)
        .map(|(k, _)| *k)
        .collect();
    let ties = ties as usize;
    if ties < tied.len() {
        tied.select_nth_unstable(ties);
        tied.truncate(ties);
    }
    out.extend(tied);
    out
}

impl WindowAcc {
    /// Closes the window: its figures, its rates over the `span_ns` it
    /// covers (the window's length, or less for the last one), and its hot
    /// set for the next.
    fn close(
        &mut self,
        window_ns: u64,
        span_ns: u64,
        block_bytes: u64,
        blocks: &BlockTable<BlockState>,
        prev_hot: &mut Option<std::collections::HashSet<u64, BuildHasherDefault<IntHasher>>>,
    ) -> Window {
        let secs = span_ns as f64 / 1e9;
        let mut counts = Vec::with_capacity(self.touched.len());
        for (i, k) in self.touched.iter().enumerate() {
            if let Some(ahead) = self.touched.get(i + BATCH) {
                blocks.prefetch(*ahead);
            }
            counts.push((*k, blocks.get(*k).map_or(0, |s| s.window_count)));
        }
        let hot = hot_set(&counts, 0.8);
        // A silent window has no hot set: the next one is compared with
        // the last window that had I/O.
        let overlap = prev_hot.as_ref().filter(|_| !hot.is_empty()).map(|p| {
            100.0 * hot.iter().filter(|k| p.contains(k)).count() as f64 / hot.len() as f64
        });
        let w = Window {
            t_s: (self.index * window_ns) as f64 / 1e9,
            records: self.records,
            iops: self.records as f64 / secs,
            bw_bytes_per_s: self.bytes as f64 / secs,
            read_pct: if self.records > 0 {
                100.0 * self.reads as f64 / self.records as f64
            } else {
                0.0
            },
            mean_qd: self
                .has_latency
                .then(|| self.latency_ns as f64 / span_ns as f64),
            hot_bytes: hot.len() as u64 * block_bytes,
            hot_overlap_pct: overlap,
        };
        if !hot.is_empty() {
            *prev_hot = Some(hot.into_iter().collect());
        }
        self.records = 0;
        self.reads = 0;
        self.bytes = 0;
        self.latency_ns = 0;
        self.has_latency = false;
        self.touched.clear();
        w
    }
}

/// SHARDS' spatial sampling of the LRU curves: the blocks whose hashed
/// number falls under the rate are followed, every access of theirs, and
/// their reuse distances scaled by 1 / rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    /// The share of blocks followed, as asked.
    pub rate: f64,
    pub sampled_blocks: u64,
    pub sampled_accesses: u64,
    /// About two standard errors of a curve's hit ratio, taking each
    /// sampled block's accesses as one cluster that hits or misses
    /// together (the worst case): √(Σ accesses²) / Σ accesses over the
    /// sampled blocks.
    pub error_bound: f64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeCount {
    pub size_bytes: u64,
    pub count: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HotShare {
    pub share_pct: f64,
    pub bytes: u64,
    /// The hot bytes as a share of the footprint at the same granularity
    /// (blocks, or the extents touched).
    pub footprint_pct: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CurvePoint {
    pub cache_bytes: u64,
    pub hit_ratio: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CacheForHit {
    pub hit_ratio: f64,
    pub cache_bytes: Option<u64>,
}

/// Per block: its last access position, its counts, and its count in the
/// open window (one entry for all: a block access is one random lookup in
/// memory, the analysis' main cost; 24 bytes, two table slots a line).
#[derive(Clone, Copy, Default)]
struct BlockState {
    last: u64,
    reads: u32,
    writes: u32,
    /// The window `window_count` is of, numbered from 1.
    window: u32,
    window_count: u32,
}

/// Marks over access positions: a bit per position, and a Fenwick tree of
/// the marks per 64-bit word, grown by doubling. Counting marks up to a
/// position walks the word tree (64 times smaller than a tree of positions,
/// so it stays in the CPU's caches) and counts bits in one word.
struct Marks {
    bits: Vec<u64>,
    tree: Vec<u32>,
}

impl Marks {
    fn with_capacity(n: usize) -> Marks {
        let words = n.max(64).div_ceil(64);
        Marks {
            bits: vec![0; words],
            tree: vec![0; words + 1],
        }
    }
    fn capacity(&self) -> u64 {
        self.bits.len() as u64 * 64
    }
    fn tree_add(&mut self, word: usize, delta: i32) {
        let mut i = word + 1;
        while i < self.tree.len() {
            self.tree[i] = self.tree[i].wrapping_add_signed(delta);
            i += i & i.wrapping_neg();
        }
    }
    fn set(&mut self, pos: u64) {
        let (w, bit) = ((pos / 64) as usize, pos % 64);
        self.bits[w] |= 1 << bit;
        self.tree_add(w, 1);
    }
    fn clear(&mut self, pos: u64) {
        let (w, bit) = ((pos / 64) as usize, pos % 64);
        self.bits[w] &= !(1 << bit);
        self.tree_add(w, -1);
    }
    /// Marks at positions `0..=pos`.
    fn prefix(&self, pos: u64) -> u64 {
        let (w, bit) = ((pos / 64) as usize, pos % 64);
        let mut i = w;
        let mut s = 0u64;
        while i > 0 {
            s += u64::from(self.tree[i]);
            i &= i - 1;
        }
        let upto = if bit == 63 {
            u64::MAX
        } else {
            (1u64 << (bit + 1)) - 1
        };
        s + u64::from((self.bits[w] & upto).count_ones())
    }
}

/// Reuse-distance histograms: `hist[d]` accesses at distance d.
/// (u32 counts: no distance has more accesses than the limit on accesses,
/// and half the memory keeps more of it in the caches.)
#[derive(Default)]
struct Distances {
    reads: Vec<u32>,
    writes: Vec<u32>,
}

fn bump(h: &mut Vec<u32>, d: u64) {
    let d = d as usize;
    if h.len() <= d {
        h.resize(d + 1, 0);
    }
    h[d] += 1;
}

/// Analyses a trace file's records to their end: as timed while they may
/// be (an fio iolog v2 is timed only if a `wait` line comes, anywhere in
/// it), their times dropped if they turned out not to be, and the file's
/// format, devices and skipped records filled in.
/// Opens the trace at `path` and analyses it; with the format it was read
/// as and the bad records left out.
pub fn analyse_file(
    path: &std::path::Path,
    format: Option<crate::Format>,
    bad: crate::BadRecords,
    opts: &Options,
) -> Result<(Analysis, crate::Format, u64), TraceError> {
    let mut records = crate::open(path, format, bad)?;
    let a = analyse_records(&mut records, opts)?;
    Ok((a, records.format(), records.skipped()))
}

pub fn analyse_records(
    records: &mut crate::read::Records,
    opts: &Options,
) -> Result<Analysis, TraceError> {
    let may_be_timed = records.may_be_timed();
    let mut a = analyse(records.by_ref(), may_be_timed, opts)?;
    if !records.timed() {
        a.drop_times();
    }
    a.format = records.format().name().to_string();
    a.devices = records.devices();
    a.skipped_records = records.skipped();
    Ok(a)
}

/// The sampling rate `opts` asks for (`None`: exact), once its sizes, hit
/// ratio, window and rate are checked.
fn checked_rate(opts: &Options) -> Result<Option<f64>, TraceError> {
    if opts.block_bytes == 0 || opts.extent_bytes == 0 {
        return Err(TraceError::Limit(
            "block and extent sizes must be above 0".into(),
        ));
    }
    if let Some(h) = opts.hit {
        if !(h > 0.0 && h <= 1.0) {
            return Err(TraceError::Limit(format!(
                "--hit {h}: give a hit ratio above 0 and at most 1, e.g. 0.9"
            )));
        }
    }
    if opts.window_ns == 0 {
        return Err(TraceError::Limit("the window must be longer than 0".into()));
    }
    match opts.sample {
        None | Some(1.0) => Ok(None),
        Some(r) if r > 0.0 && r < 1.0 => Ok(Some(r)),
        Some(r) => Err(TraceError::Limit(format!(
            "--sample {r}: give a share of the blocks above 0 and at most 1, e.g. 0.01"
        ))),
    }
}

/// Analyses `records` (in trace order) with `opts`; `timed` says whether
/// their times mean anything.
pub fn analyse<I>(records: I, timed: bool, opts: &Options) -> Result<Analysis, TraceError>
where
    I: IntoIterator<Item = Result<Record, TraceError>>,
    I::IntoIter: Send,
{
    let rate = checked_rate(opts)?;
    let b = opts.block_bytes;
    let mut a = Analysis {
        schema: "iorig.trace/1".to_string(),
        block_bytes: b,
        extent_bytes: opts.extent_bytes,
        ..Analysis::default()
    };
    let mut spreads = Spreads {
        gaps: new_hist()?,
        lats: new_hist()?,
    };
    let mut acc = Acc::new(opts, rate, timed);
    let records = records.into_iter();
    // The records are read (decompressed, parsed, their times and
    // latencies counted) on a thread of their own, a chunk ahead of the
    // analysis.
    let failed = std::thread::scope(|scope| -> Result<Option<TraceError>, TraceError> {
        let (ahead_tx, ahead) = std::sync::mpsc::sync_channel(2);
        let (spare, spare_rx) = std::sync::mpsc::channel();
        let spreads = &mut spreads;
        scope.spawn(move || read_ahead(records, timed, spreads, &ahead_tx, &spare_rx));
        for Ahead {
            records: chunk,
            failed,
        } in &ahead
        {
            for (i, batch) in chunk.chunks(BATCH).enumerate() {
                // The next batch's slots are asked for (prefetched) while this
                // one is analysed, so that they have arrived when looked up.
                let lookups = Lookups {
                    blocks: &acc.blocks,
                    extents: &acc.extents,
                };
                if i == 0 {
                    lookups.prefetch(batch, b, opts.extent_bytes);
                }
                let next = chunk.get((i + 1) * BATCH..).unwrap_or_default();
                lookups.prefetch(&next[..next.len().min(BATCH)], b, opts.extent_bytes);
                for r in batch {
                    acc.take(*r, &mut a)?;
                }
            }
            // A reader's error comes after the records before it are
            // analysed, so an error they hold is the one reported.
            if failed.is_some() {
                return Ok(failed);
            }
            spare.send(chunk).ok();
        }
        Ok(None)
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    if a.records == 0 {
        return Err(TraceError::Limit("the trace has no I/O records".into()));
    }
    a.interarrival_ns = spread(&spreads.gaps);
    a.latency_ns = spread(&spreads.lats);
    acc.finish(a)
}

/// Whether the LRU curves follow block `key`: every block when exact; when
/// sampled, those whose hashed number falls under the rate (24 bits of the
/// hash: rates down to 1 in 16 M).
#[inline]
fn follows(lru: bool, threshold: Option<u64>, key: u64) -> bool {
    lru && threshold.is_none_or(|t| (mix64(key) >> 40) < t)
}

/// What the analysis gathers record by record.
struct Acc<'o> {
    opts: &'o Options,
    timed: bool,
    rate: Option<f64>,
    threshold: Option<u64>,
    win: WindowAcc,
    prev_hot: Option<std::collections::HashSet<u64, BuildHasherDefault<IntHasher>>>,
    window_tag: u32,
    /// Followed accesses so far, and the distinct blocks among them.
    spos: u64,
    sdistinct: u64,
    sizes: IntMap<u64, u64>,
    last_end: IntMap<u32, u64>,
    sequential: u64,
    blocks: BlockTable<BlockState>,
    extents: BlockTable<u64>,
    marks: Marks,
    dist: Distances,
    first_t: Option<u64>,
    last_t: u64,
    sampled_reads: u64,
    sampled_writes: u64,
}

impl<'o> Acc<'o> {
    fn new(opts: &'o Options, rate: Option<f64>, timed: bool) -> Self {
        Acc {
            opts,
            timed,
            rate,
            threshold: rate.map(|r| (r * (1u64 << 24) as f64).round().max(1.0) as u64),
            win: WindowAcc::default(),
            prev_hot: None,
            window_tag: 0,
            spos: 0,
            sdistinct: 0,
            sizes: IntMap::default(),
            last_end: IntMap::default(),
            sequential: 0,
            blocks: BlockTable::new(),
            extents: BlockTable::new(),
            marks: Marks::with_capacity(1 << 16),
            dist: Distances::default(),
            first_t: None,
            last_t: 0,
            sampled_reads: 0,
            sampled_writes: 0,
        }
    }

    /// One record into the counts, the windows, the hot spot and the
    /// reuse distances.
    #[inline]
    fn take(&mut self, r: Record, a: &mut Analysis) -> Result<(), TraceError> {
        let (opts, b) = (self.opts, self.opts.block_bytes);
        a.records += 1;
        let t0 = *self.first_t.get_or_insert(r.t_ns);
        self.last_t = self.last_t.max(r.t_ns);
        if self.timed {
            self.window(&r, t0, a)?;
        }
        *self.sizes.entry(r.size_bytes).or_default() += 1;
        let end = r.offset_bytes.saturating_add(r.size_bytes);
        if self.last_end.insert(r.device, end) == Some(r.offset_bytes) {
            self.sequential += 1;
        }
        match r.op {
            Op::Read => {
                a.reads += 1;
                a.read_bytes += r.size_bytes;
            }
            Op::Write => {
                a.writes += 1;
                a.write_bytes += r.size_bytes;
            }
            // A trim moves no data through a cache.
            Op::Trim => {
                a.trims += 1;
                return Ok(());
            }
        }
        let dev = u64::from(r.device) << 48;
        let (first_block, last_block) = (r.offset_bytes / b, (end - 1) / b);
        if last_block >= (1 << 48) - 1 || r.device >= 1 << 16 {
            return Err(TraceError::Limit(format!(
                "record {}: offset {} (device {}) is past what iorig keeps apart (2^48 - 1 blocks, 2^16 devices); a damaged trace?",
                a.records, r.offset_bytes, r.device
            )));
        }
        for e in r.offset_bytes / opts.extent_bytes..=(end - 1) / opts.extent_bytes {
            *self.extents.entry(dev | e) += 1;
        }
        for blk in first_block..=last_block {
            self.access(dev | blk, r.op, a)?;
        }
        Ok(())
    }

    /// Closes the windows a timed record is past (empty ones too: a silence
    /// is a window with no I/O) and counts it in its own. The readers give
    /// records in issue order; one given earlier counts in the open window.
    #[inline]
    fn window(&mut self, r: &Record, t0: u64, a: &mut Analysis) -> Result<(), TraceError> {
        let window_ns = self.opts.window_ns;
        let index = r.t_ns.saturating_sub(t0) / window_ns;
        while self.win.index < index {
            let b = self.opts.block_bytes;
            let w = self
                .win
                .close(window_ns, window_ns, b, &self.blocks, &mut self.prev_hot);
            a.windows.push(w);
            self.win.index += 1;
        }
        self.window_tag = u32::try_from(self.win.index + 1).map_err(|_| {
            TraceError::Limit(format!(
                "record {}: more than 2^32 windows; give a longer --window",
                a.records
            ))
        })?;
        let win = &mut self.win;
        win.records += 1;
        if r.op == Op::Read {
            win.reads += 1;
        }
        if r.op != Op::Trim {
            win.bytes += r.size_bytes;
        }
        if let Some(l) = r.latency_ns {
            win.latency_ns += u128::from(l);
            win.has_latency = true;
        }
        Ok(())
    }

    /// One access to block `key`: its counts, its window, and (when the
    /// LRU curves follow it) its reuse distance.
    #[inline]
    fn access(&mut self, key: u64, op: Op, a: &mut Analysis) -> Result<(), TraceError> {
        let follow = follows(self.opts.lru, self.threshold, key);
        if follow && self.spos >= self.marks.capacity() {
            self.grow_marks()?;
        }
        let s = self.blocks.entry(key);
        if self.timed {
            // Windows are numbered from 1 in the blocks (0: none yet).
            if s.window != self.window_tag {
                s.window = self.window_tag;
                s.window_count = 0;
                self.win.touched.push(key);
            }
            s.window_count += 1;
        }
        let seen = s.reads + s.writes > 0;
        if follow {
            if seen {
                // Every followed block seen has one mark, at its last
                // access; the marks after this block's are the followed
                // blocks accessed since, which stand for 1 / rate blocks
                // each.
                let d = self.sdistinct - self.marks.prefix(s.last);
                let d = match self.rate {
                    Some(r) => (d as f64 / r).round() as u64,
                    None => d,
                };
                let dist = &mut self.dist;
                bump(
                    if op == Op::Read {
                        &mut dist.reads
                    } else {
                        &mut dist.writes
                    },
                    d,
                );
                self.marks.clear(s.last);
            } else {
                self.sdistinct += 1;
            }
            self.marks.set(self.spos);
            s.last = self.spos;
            self.spos += 1;
            if op == Op::Read {
                self.sampled_reads += 1;
            } else {
                self.sampled_writes += 1;
            }
        }
        if op == Op::Read {
            s.reads += 1;
        } else {
            s.writes += 1;
        }
        a.accesses += 1;
        Ok(())
    }

    /// Doubles the marks, marking each followed block's last access again;
    /// refused past the accesses the curves may follow.
    #[cold]
    fn grow_marks(&mut self) -> Result<(), TraceError> {
        let opts = self.opts;
        if self.spos >= opts.max_accesses {
            return Err(TraceError::Limit(format!(
                "more than {} block accesses to follow at {}-byte blocks: the LRU curve would not fit in memory; give --sample 0.01 (or a larger --block)",
                opts.max_accesses, opts.block_bytes
            )));
        }
        self.marks = Marks::with_capacity((self.marks.capacity() * 2) as usize);
        for (k, s) in self.blocks.iter() {
            if follows(opts.lru, self.threshold, k) {
                self.marks.set(s.last);
            }
        }
        Ok(())
    }

    /// The analysis from what was gathered: the last window, the spans,
    /// sizes, hot spots, LRU curves and the cache a hit ratio needs.
    fn finish(mut self, mut a: Analysis) -> Result<Analysis, TraceError> {
        let (opts, b) = (self.opts, self.opts.block_bytes);
        let (first_t, last_t) = (self.first_t, self.last_t);
        if self.timed {
            // The last window, over the time it covers (a partial window's
            // rates are over its own length, at least 1 ms, not the whole
            // window's).
            let start = self.win.index * opts.window_ns;
            let span = (last_t - first_t.unwrap_or(0))
                .saturating_sub(start)
                .max(1_000_000)
                .min(opts.window_ns);
            a.windows.push(self.win.close(
                opts.window_ns,
                span,
                b,
                &self.blocks,
                &mut self.prev_hot,
            ));
            a.window_s = Some(opts.window_ns as f64 / 1e9);
        }
        if let (true, Some(first)) = (self.timed, first_t) {
            let s = (last_t - first) as f64 / 1e9;
            a.duration_s = Some(s);
            a.iops = (s > 0.0).then(|| a.records as f64 / s);
        }
        let mut sizes: Vec<SizeCount> = std::mem::take(&mut self.sizes)
            .into_iter()
            .map(|(size_bytes, count)| SizeCount { size_bytes, count })
            .collect();
        sizes.sort_by(|x, y| y.count.cmp(&x.count).then(x.size_bytes.cmp(&y.size_bytes)));
        sizes.truncate(16);
        a.sizes = sizes;
        a.sequential_pct = 100.0 * self.sequential as f64 / a.records as f64;
        a.distinct_blocks = self.blocks.len() as u64;
        a.footprint_bytes = a.distinct_blocks * b;

        let blocks = &self.blocks;
        let counts = |f: fn(&BlockState) -> u64| blocks.iter().map(move |(_, s)| f(s));
        a.hot_spot = hot_spot(
            counts(|s| u64::from(s.reads + s.writes)),
            b,
            a.footprint_bytes,
        );
        a.hot_spot_reads = hot_spot(counts(|s| u64::from(s.reads)), b, a.footprint_bytes);
        a.hot_spot_writes = hot_spot(counts(|s| u64::from(s.writes)), b, a.footprint_bytes);
        // Extents against their own footprint (the extents touched).
        let extent_footprint = self.extents.len() as u64 * opts.extent_bytes;
        a.hot_spot_extents = hot_spot(
            self.extents.iter().map(|(_, n)| *n),
            opts.extent_bytes,
            extent_footprint,
        );

        // All accesses' distances: the reads' and the writes' together.
        let mut all = vec![0u64; self.dist.reads.len().max(self.dist.writes.len())];
        for (i, n) in all.iter_mut().enumerate() {
            *n = u64::from(self.dist.reads.get(i).copied().unwrap_or(0))
                + u64::from(self.dist.writes.get(i).copied().unwrap_or(0));
        }
        // Hit ratios over the accesses followed (all of them when exact).
        let (sampled_reads, sampled_writes) = (self.sampled_reads, self.sampled_writes);
        let sampled = sampled_reads + sampled_writes;
        a.lru_curve = curve(&all, sampled, a.distinct_blocks, b);
        a.lru_curve_reads = curve(&self.dist.reads, sampled_reads, a.distinct_blocks, b);
        a.lru_curve_writes = curve(&self.dist.writes, sampled_writes, a.distinct_blocks, b);
        // Exact in any case: all but each block's first access.
        a.max_hit_ratio = (a.accesses - a.distinct_blocks) as f64 / a.accesses.max(1) as f64;
        if let Some(h) = opts.hit {
            a.cache_for_hit = Some(CacheForHit {
                hit_ratio: h,
                cache_bytes: cache_for(&all, sampled, h).map(|c| c * b),
            });
        }
        if let Some(r) = self.rate {
            let (mut sum, mut sum_sq) = (0f64, 0f64);
            for (k, s) in blocks.iter() {
                if follows(opts.lru, self.threshold, k) {
                    let n = f64::from(s.reads + s.writes);
                    sum += n;
                    sum_sq += n * n;
                }
            }
            a.lru_sampling = Some(Sampling {
                rate: r,
                sampled_blocks: self.sdistinct,
                sampled_accesses: sampled,
                error_bound: if sum > 0.0 { sum_sq.sqrt() / sum } else { 1.0 },
            });
        }
        Ok(a)
    }
}

/// Records read ahead of the analysis, up to a reader's error.
struct Ahead {
    records: Vec<Record>,
    failed: Option<TraceError>,
}

/// The distributions of the records' times between issues and latencies.
struct Spreads {
    gaps: hdrhistogram::Histogram<u64>,
    lats: hdrhistogram::Histogram<u64>,
}

/// Reads `records` in chunks of [`CHUNK`] into `ahead` (reusing the chunks
/// given back on `spare`), to their end or the first error, and counts
/// their times between issues (when `timed`) and latencies in `spreads`;
/// stops early when the analysis has stopped listening.
fn read_ahead<I>(
    mut records: I,
    timed: bool,
    spreads: &mut Spreads,
    ahead: &std::sync::mpsc::SyncSender<Ahead>,
    spare: &std::sync::mpsc::Receiver<Vec<Record>>,
) where
    I: Iterator<Item = Result<Record, TraceError>>,
{
    let mut last_t: Option<u64> = None;
    loop {
        let mut chunk = spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(CHUNK));
        chunk.clear();
        let mut failed = None;
        for r in records.by_ref() {
            match r {
                Ok(r) => {
                    if let (true, Some(t)) = (timed, last_t) {
                        // Records are in issue order (the readers refuse
                        // others).
                        spreads.gaps.record(r.t_ns.saturating_sub(t)).ok();
                    }
                    last_t = Some(last_t.map_or(r.t_ns, |t| t.max(r.t_ns)));
                    if let Some(l) = r.latency_ns {
                        spreads.lats.record(l).ok();
                    }
                    chunk.push(r);
                    if chunk.len() == CHUNK {
                        break;
                    }
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        let last = failed.is_some() || chunk.len() < CHUNK;
        if chunk.is_empty() && failed.is_none() {
            return;
        }
        let sent = ahead.send(Ahead {
            records: chunk,
            failed,
        });
        if sent.is_err() || last {
            return;
        }
    }
}

/// The tables a record's blocks are looked up in.
struct Lookups<'a> {
    blocks: &'a BlockTable<BlockState>,
    extents: &'a BlockTable<u64>,
}

impl Lookups<'_> {
    /// Asks for the slots of `batch`'s blocks and extents (see table.rs:
    /// the lookups' waits for memory then overlap instead of adding up).
    fn prefetch(&self, batch: &[Record], block_bytes: u64, extent_bytes: u64) {
        for r in batch.iter().filter(|r| r.op != Op::Trim) {
            let dev = u64::from(r.device) << 48;
            let last_byte = r
                .offset_bytes
                .saturating_add(r.size_bytes)
                .saturating_sub(1);
            let first = r.offset_bytes / block_bytes;
            for blk in first..=(last_byte / block_bytes).min(first + PREFETCH_BLOCKS) {
                self.blocks.prefetch(dev | blk);
            }
            let first = r.offset_bytes / extent_bytes;
            for e in first..=(last_byte / extent_bytes).min(first + 1) {
                self.extents.prefetch(dev | e);
            }
        }
    }
}

/// splitmix64's finaliser: which blocks a sample follows.
fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The fewest units (of `unit_bytes`) that take each share of `counts`.
fn hot_spot(
    counts: impl Iterator<Item = u64>,
    unit_bytes: u64,
    footprint_bytes: u64,
) -> Vec<HotShare> {
    let levels = Levels::of(counts);
    let total = levels.total;
    if total == 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut walk = levels.walk();
    for share in HOT_SHARES_PCT {
        // Exact in integers: cum × 100 ≥ share × total.
        let need = (share * total as f64 / 100.0).ceil() as u64;
        walk.take_to(need);
        let bytes = walk.units * unit_bytes;
        out.push(HotShare {
            share_pct: share,
            bytes,
            footprint_pct: if footprint_bytes > 0 {
                100.0 * bytes as f64 / footprint_bytes as f64
            } else {
                0.0
            },
        });
    }
    out
}

/// Units by count: how many units (blocks, extents) were counted each
/// number of times. A trace's counts take few values, so taking units
/// from the most counted down is the walk of the units sorted by count,
/// without sorting millions of them.
struct Levels {
    /// (count, units with it), the most counted first.
    levels: Vec<(u64, u64)>,
    total: u64,
}

impl Levels {
    fn of(counts: impl Iterator<Item = u64>) -> Levels {
        let mut by_count: IntMap<u64, u64> = IntMap::default();
        let mut total = 0u64;
        for c in counts.filter(|c| *c > 0) {
            *by_count.entry(c).or_default() += 1;
            total += c;
        }
        let mut levels: Vec<(u64, u64)> = by_count.into_iter().collect();
        levels.sort_unstable_by_key(|l| std::cmp::Reverse(l.0));
        Levels { levels, total }
    }
    fn walk(&self) -> Walk<'_> {
        Walk {
            levels: &self.levels,
            level: 0,
            taken_in_level: 0,
            units: 0,
            cum: 0,
        }
    }
}

/// Units taken from the most counted down.
struct Walk<'a> {
    levels: &'a [(u64, u64)],
    level: usize,
    taken_in_level: u64,
    /// Units taken, and their counts' sum.
    units: u64,
    cum: u64,
}

impl Walk<'_> {
    /// Takes the fewest more units that bring the counts taken to `need`
    /// (or all of them).
    fn take_to(&mut self, need: u64) {
        while self.cum < need && self.level < self.levels.len() {
            let (count, n) = self.levels[self.level];
            let take = (need - self.cum)
                .div_ceil(count)
                .min(n - self.taken_in_level);
            self.cum += take * count;
            self.units += take;
            self.taken_in_level += take;
            if self.taken_in_level == n {
                self.level += 1;
                self.taken_in_level = 0;
            }
        }
    }
}

/// Hit ratio at 1, 2, 4, ... blocks and at the footprint.
fn curve<T: Copy + Into<u64>>(
    hist: &[T],
    accesses: u64,
    distinct: u64,
    block_bytes: u64,
) -> Vec<CurvePoint> {
    if accesses == 0 {
        return Vec::new();
    }
    let mut sizes: Vec<u64> = std::iter::successors(Some(1u64), |c| c.checked_mul(2))
        .take_while(|c| *c < distinct)
        .collect();
    sizes.push(distinct.max(1));
    // Hits of a cache of c blocks: accesses at distance < c.
    let mut cum = vec![0u64; hist.len() + 1];
    for (d, n) in hist.iter().enumerate() {
        cum[d + 1] = cum[d] + (*n).into();
    }
    sizes
        .into_iter()
        .map(|c| {
            let hits = cum[(c as usize).min(hist.len())];
            CurvePoint {
                cache_bytes: c * block_bytes,
                hit_ratio: hits as f64 / accesses as f64,
            }
        })
        .collect()
}

/// The fewest blocks whose LRU cache hits at least `h` of the accesses.
fn cache_for(hist: &[u64], accesses: u64, h: f64) -> Option<u64> {
    let need = (h * accesses as f64).ceil() as u64;
    let mut cum = 0u64;
    for (d, n) in hist.iter().enumerate() {
        cum += n;
        if cum >= need {
            return Some(d as u64 + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;

    fn rec(op: Op, block: u64) -> Result<Record, TraceError> {
        Ok(Record {
            t_ns: block,
            op,
            device: 0,
            offset_bytes: block * 4096,
            size_bytes: 4096,
            latency_ns: None,
        })
    }

    fn run(blocks: &[(Op, u64)], hit: Option<f64>) -> Analysis {
        let opts = Options {
            hit,
            ..Options::default()
        };
        analyse(blocks.iter().map(|&(op, b)| rec(op, b)), true, &opts).unwrap()
    }

    #[test]
    fn the_first_bad_record_is_the_one_reported_across_batches() {
        // Records are read a batch ahead of their analysis: a reader's
        // error after a record the analysis refuses must not win over it,
        // and a reader's error is still reported after whole batches.
        let bad = |n: u64| TraceError::Record {
            path: "t".into(),
            record: n,
            why: "damaged".into(),
        };
        let past = Record {
            offset_bytes: u64::MAX - 4096,
            ..rec(Op::Read, 0).unwrap()
        };
        for (refused_at, failed_at) in [(5, 9), (3, 3 + BATCH as u64), (40, 70)] {
            let records = (1..=100u64).map(|n| {
                if n == refused_at {
                    Ok(past)
                } else if n == failed_at {
                    Err(bad(n))
                } else {
                    rec(Op::Read, n)
                }
            });
            let e = analyse(records, true, &Options::default()).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with(&format!("record {refused_at}: offset")),
                "{e}"
            );
        }
        for failed_at in [1, 2, BATCH as u64, BATCH as u64 + 1, 3 * BATCH as u64 + 5] {
            let records = (1..=100u64).map(|n| {
                if n == failed_at {
                    Err(bad(n))
                } else {
                    rec(Op::Write, n)
                }
            });
            let e = analyse(records, true, &Options::default()).unwrap_err();
            assert_eq!(e.to_string(), format!("t: record {failed_at}: damaged"));
        }
    }

    proptest! {
        // The hot set and the hot spot walk counts by level instead of
        // sorting the units: the same answer as the sort, ties included.
        #[test]
        fn levels_give_what_sorting_gives(
            counts in prop::collection::vec(1u32..6, 0..300),
            share in 0.01f64..1.0,
        ) {
            let v: Vec<(u64, u32)> = counts
                .iter()
                .enumerate()
                .map(|(i, c)| ((i as u64 * 7919) % 1009, *c))
                .collect();
            let mut sorted = v.clone();
            sorted.sort_unstable_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
            let total: u64 = v.iter().map(|(_, c)| u64::from(*c)).sum();
            let need = (share * total as f64).ceil() as u64;
            let (mut cum, mut want) = (0u64, Vec::new());
            for (k, c) in &sorted {
                if cum >= need {
                    break;
                }
                cum += u64::from(*c);
                want.push(*k);
            }
            let mut got = hot_set(&v, share);
            got.sort_unstable();
            want.sort_unstable();
            prop_assert_eq!(got, want.clone());
            let shares = hot_spot(v.iter().map(|(_, c)| u64::from(*c)), 1, 1);
            for s in &shares {
                let need = (s.share_pct * total as f64 / 100.0).ceil() as u64;
                let (mut cum, mut n) = (0u64, 0u64);
                for (_, c) in &sorted {
                    if cum >= need {
                        break;
                    }
                    cum += u64::from(*c);
                    n += 1;
                }
                prop_assert_eq!(s.bytes, n);
            }
        }
    }

    /// The hit ratio of an LRU cache of `c` blocks, simulated access by
    /// access: the independent check of the reuse distances.
    fn brute_lru(seq: &[u64], c: usize) -> f64 {
        let mut cache: Vec<u64> = Vec::new();
        let mut hits = 0;
        for &b in seq {
            if let Some(i) = cache.iter().position(|x| *x == b) {
                hits += 1;
                cache.remove(i);
            } else if cache.len() == c {
                cache.remove(0);
            }
            cache.push(b);
        }
        hits as f64 / seq.len() as f64
    }

    #[test]
    fn a_cyclic_scan_has_its_lru_cliff_at_its_length() {
        // 5 passes over 1000 blocks: nothing hits below 1000 blocks, every
        // access after the first pass hits at 1000.
        let seq: Vec<(Op, u64)> = (0..5)
            .flat_map(|_| (0..1000).map(|b| (Op::Read, b)))
            .collect();
        let a = run(&seq, Some(0.5));
        assert_eq!(a.distinct_blocks, 1000);
        let at = |bytes: u64| {
            a.lru_curve
                .iter()
                .find(|p| p.cache_bytes == bytes)
                .unwrap()
                .hit_ratio
        };
        assert_eq!(at(512 * 4096), 0.0);
        assert_eq!(at(1000 * 4096), 0.8);
        assert_eq!(a.max_hit_ratio, 0.8);
        assert_eq!(a.cache_for_hit.unwrap().cache_bytes, Some(1000 * 4096));
        assert_eq!(
            run(&seq, Some(0.9)).cache_for_hit.unwrap().cache_bytes,
            None,
            "above the max hit ratio no cache does"
        );
        // A scan is sequential after its first I/O of each pass.
        assert!(a.sequential_pct > 99.0, "{}", a.sequential_pct);
    }

    #[test]
    fn a_hot_tenth_taking_nine_tenths_is_the_hot_spot() {
        // 1000 blocks; blocks 0..100 get 90 % of 100 000 accesses.
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut seq = Vec::new();
        for i in 0..100_000u64 {
            let b = if i % 10 < 9 {
                rng.random_range(0..100)
            } else {
                rng.random_range(100..1000)
            };
            seq.push((if i % 4 == 0 { Op::Write } else { Op::Read }, b));
        }
        let a = run(&seq, None);
        let ninety = a.hot_spot.iter().find(|h| h.share_pct == 90.0).unwrap();
        // Exactly 90 % went to the first 100 blocks; random counts over the
        // other 900 can only make a few of those hotter than the least hot
        // of the 100, so the answer is 100 blocks give or take a few.
        assert!((96..=101).contains(&(ninety.bytes / 4096)), "{ninety:?}");
        assert!((ninety.footprint_pct - 10.0).abs() < 0.2, "{ninety:?}");
        assert_eq!(a.reads + a.writes, 100_000);
        assert_eq!(a.hot_spot_reads.len(), 5);
    }

    #[test]
    fn large_ios_count_each_block_and_trims_none() {
        let recs = vec![
            Ok(Record {
                t_ns: 0,
                op: Op::Write,
                device: 0,
                offset_bytes: 0,
                size_bytes: 65536,
                latency_ns: None,
            }),
            Ok(Record {
                t_ns: 2_000_000_000,
                op: Op::Trim,
                device: 1,
                offset_bytes: 0,
                size_bytes: 4096,
                latency_ns: None,
            }),
        ];
        let a = analyse(recs, true, &Options::default()).unwrap();
        assert_eq!((a.accesses, a.distinct_blocks, a.trims), (16, 16, 1));
        assert_eq!(a.duration_s, Some(2.0));
        assert_eq!(a.iops, Some(1.0));
    }

    /// Windows: each one's rate, and how much of its hot set the previous
    /// window's held; a silence is a window of no I/O.
    #[test]
    fn windows_follow_the_load_and_a_moving_hot_set() {
        let at = |t_s: u64, block: u64, latency_ns: Option<u64>| {
            Ok(Record {
                t_ns: t_s * 1_000_000_000 + block,
                op: Op::Read,
                device: 0,
                offset_bytes: block * 4096,
                size_bytes: 4096,
                latency_ns,
            })
        };
        let mut recs = Vec::new();
        for _ in 0..10 {
            for b in 0..100 {
                recs.push(at(0, b, Some(1_000_000)));
                recs.push(at(1, b, Some(1_000_000)));
                // Second 3: the hot set moved; second 2 is silent.
                recs.push(at(3, 1000 + b, Some(1_000_000)));
            }
        }
        recs.sort_by_key(|r| r.as_ref().map(|r| r.t_ns).unwrap_or(0));
        let opts = Options {
            window_ns: 1_000_000_000,
            ..Options::default()
        };
        let a = analyse(recs, true, &opts).unwrap();
        assert_eq!(a.window_s, Some(1.0));
        let w = &a.windows;
        assert_eq!(w.len(), 4);
        assert_eq!(
            w.iter().map(|w| w.records).collect::<Vec<_>>(),
            [1000, 1000, 0, 1000]
        );
        assert_eq!(w[0].iops, 1000.0);
        // 1000 I/Os of 1 ms in one second: one in flight on average.
        assert_eq!(w[0].mean_qd, Some(1.0));
        assert_eq!(w[0].hot_bytes, 80 * 4096, "80 % of evenly hot blocks");
        assert_eq!(w[0].hot_overlap_pct, None);
        assert_eq!(w[1].hot_overlap_pct, Some(100.0));
        assert_eq!(w[2].hot_overlap_pct, None, "silent");
        assert_eq!(w[3].hot_overlap_pct, Some(0.0), "against second 1");
        // Without times there are no windows.
        let untimed = analyse((0..10).map(|b| at(0, b, None)), false, &Options::default()).unwrap();
        assert!(untimed.windows.is_empty() && untimed.window_s.is_none());
    }

    /// Past the marks' first capacity (65 536 positions), where they are
    /// rebuilt twice, the curve still equals the simulation.
    #[test]
    fn the_curve_holds_across_the_marks_growing() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let seq: Vec<u64> = (0..200_000)
            .map(|i| {
                if i % 5 == 0 {
                    rng.random_range(0..200u64)
                } else {
                    rng.random_range(0..40u64)
                }
            })
            .collect();
        let a = run(
            &seq.iter().map(|&b| (Op::Read, b)).collect::<Vec<_>>(),
            None,
        );
        for p in &a.lru_curve {
            let c = (p.cache_bytes / 4096) as usize;
            assert!((p.hit_ratio - brute_lru(&seq, c)).abs() < 1e-12, "at {c}");
        }
    }

    /// SHARDS at 1 %: the sampled curve's mean absolute error against the
    /// exact one is at most 0.01 hit ratio, and within the bound it states.
    #[test]
    fn a_one_percent_sample_follows_the_exact_curve() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
        // 400 000 blocks, a tenth of them taking 90 % of 2 M accesses
        // (evenly inside each part, as bench/trace.sh's trace): no block
        // alone weighs on the curve, as in the traces SHARDS was made for.
        let seq: Vec<(Op, u64)> = (0..2_000_000)
            .map(|_| {
                let u: f64 = rng.random();
                let v: f64 = rng.random();
                let b = if v < 0.9 {
                    40_000.0 * u
                } else {
                    40_000.0 + 360_000.0 * u
                };
                (Op::Read, b as u64)
            })
            .collect();
        let exact = run(&seq, None);
        let opts = Options {
            sample: Some(0.01),
            ..Options::default()
        };
        let sampled = analyse(seq.iter().map(|&(op, b)| rec(op, b)), true, &opts).unwrap();
        assert_eq!(exact.lru_curve.len(), sampled.lru_curve.len());
        let mae = exact
            .lru_curve
            .iter()
            .zip(&sampled.lru_curve)
            .map(|(e, s)| (e.hit_ratio - s.hit_ratio).abs())
            .sum::<f64>()
            / exact.lru_curve.len() as f64;
        let s = sampled.lru_sampling.clone().unwrap();
        assert!(mae <= 0.01, "MAE {mae}, sampling {s:?}");
        assert!(mae <= s.error_bound, "MAE {mae} beyond the stated {s:?}");
        assert!(
            (s.sampled_blocks as f64 - 0.01 * exact.distinct_blocks as f64).abs()
                < 0.3 * 0.01 * exact.distinct_blocks as f64
        );
        // What does not depend on the sample stays exact.
        assert_eq!(sampled.hot_spot, exact.hot_spot);
        assert_eq!(sampled.max_hit_ratio, exact.max_hit_ratio);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        /// The curve from reuse distances equals an LRU simulated access by
        /// access, at every size it gives.
        #[test]
        fn the_lru_curve_equals_a_simulated_lru(
            seq in prop::collection::vec(0u64..64, 1..400),
        ) {
            let a = run(&seq.iter().map(|&b| (Op::Read, b)).collect::<Vec<_>>(), None);
            for p in &a.lru_curve {
                let c = (p.cache_bytes / 4096) as usize;
                prop_assert!((p.hit_ratio - brute_lru(&seq, c)).abs() < 1e-12, "at {c}");
            }
        }
    }
}
