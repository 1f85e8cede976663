//! Offset, block-size and read/write generators.
//!
//! Everything a worker decides per I/O comes from here, from seeded xoshiro
//! streams, so a given `--seed` repeats the same sequence. Each decision (op, size,
//! offset, sequential-or-random) has its own stream: changing the read share does
//! not change which offsets are visited.
//!
//! Offsets live in a *virtual* address space: the working sets of all targets laid
//! end to end ([`AddressSpace`]). Random offsets are drawn over the whole space, so
//! the access distribution applies to it as one; sequential streams walk it in
//! order, one region per worker.

use crate::{EngineError, OpKind};
use iorig_spec::{AccessDist, BsSpec, Workload, MAX_ZONES};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;

/// The working set of one target: `len` bytes from absolute offset `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub target: u32,
    pub start: u64,
    pub len: u64,
}

/// The working sets of all targets, concatenated.
#[derive(Clone, Debug)]
pub struct AddressSpace {
    segs: Vec<Segment>,
    /// Virtual offset where each segment begins.
    begins: Vec<u64>,
    total: u64,
    align: u64,
}

impl AddressSpace {
    /// `segs` must each start and span a multiple of `align` and hold at least
    /// one block of `max_bs` bytes.
    pub fn new(segs: Vec<Segment>, align: u64, max_bs: u64) -> Result<Self, EngineError> {
        if align == 0 || segs.is_empty() {
            return Err(EngineError::Usage(
                "no working set: no target or zero alignment".into(),
            ));
        }
        let mut begins = Vec::with_capacity(segs.len());
        let mut total = 0u64;
        for s in &segs {
            if s.start % align != 0 || s.len % align != 0 || s.len < max_bs {
                return Err(EngineError::Usage(format!(
                    "working set of target {} ({} bytes at {}) does not hold an aligned {}-byte block; use a smaller --bs or a wider --range",
                    s.target, s.len, s.start, max_bs
                )));
            }
            begins.push(total);
            total += s.len;
        }
        Ok(AddressSpace {
            segs,
            begins,
            total,
            align,
        })
    }

    pub fn total_bytes(&self) -> u64 {
        self.total
    }

    pub fn align(&self) -> u64 {
        self.align
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segs
    }

    /// The segment holding virtual offset `v` (< total) and the offset inside it.
    #[inline]
    fn locate(&self, v: u64) -> (usize, u64) {
        if self.segs.len() == 1 {
            return (0, v);
        }
        let i = match self.begins.binary_search(&v) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        (i, v - self.begins[i])
    }

    /// A block of `len` bytes at virtual offset `v`: its segment and the
    /// offset inside it, pulled back to the last aligned position that fits
    /// when it would run past the end of that target's range.
    #[inline]
    fn fit(&self, v: u64, len: u64) -> (usize, u64) {
        let (i, off) = self.locate(v);
        let seg_len = self.segs[i].len;
        if off + len > seg_len {
            return (i, (seg_len - len) / self.align * self.align);
        }
        (i, off)
    }
}

/// A seeded stream; `stream` separates the decisions of one worker.
pub fn rng_for(seed: u64, worker: u32, stream: u64) -> Xoshiro256PlusPlus {
    // splitmix-style mixing so that neighbouring seeds give unrelated streams.
    let mut z = seed
        ^ (worker as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ stream.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Xoshiro256PlusPlus::seed_from_u64(z ^ (z >> 31))
}

/// Uniform integer in [0, n) by multiply-shift (Lemire); bias below 2^-64 * n.
#[inline]
pub(crate) fn below(rng: &mut Xoshiro256PlusPlus, n: u64) -> u64 {
    ((rng.next_u64() as u128 * n as u128) >> 64) as u64
}

/// Uniform float in [0, 1).
#[inline]
pub(crate) fn unit_f64(rng: &mut Xoshiro256PlusPlus) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// A bijection of [0, n) that spreads the hottest ranks of zipf and pareto over
/// the range instead of piling them at its start (as fio scrambles its zipf).
#[derive(Clone, Copy, Debug)]
struct Permutation {
    n: u64,
    mul: u64,
    add: u64,
}

impl Permutation {
    fn new(n: u64, seed: u64) -> Self {
        fn gcd(a: u64, b: u64) -> u64 {
            if b == 0 {
                a
            } else {
                gcd(b, a % b)
            }
        }
        // A multiplier near n/phi, moved until coprime with n, makes the map a
        // bijection that scatters neighbours far apart.
        let mut mul = ((n as f64 * 0.618_033_988_75) as u64).max(1);
        while n > 1 && gcd(mul, n) != 1 {
            mul += 1;
        }
        Permutation {
            n,
            mul: mul % n.max(1),
            add: seed % n.max(1),
        }
    }

    #[inline]
    fn apply(&self, x: u64) -> u64 {
        if self.n <= 1 {
            return 0;
        }
        ((x as u128 * self.mul as u128 + self.add as u128) % self.n as u128) as u64
    }
}

/// Draws block indexes in [0, n) under an access distribution.
#[derive(Clone, Debug)]
pub struct DistSampler {
    n: u64,
    kind: DistKind,
    perm: Permutation,
}

#[derive(Clone, Debug)]
enum DistKind {
    Uniform,
    Zipf(Zipf<f64>),
    Pareto {
        pow: f64,
    },
    Hot {
        io_frac: f64,
        hot_n: u64,
    },
    Zoned(Box<ZoneTable>),
    /// fio's normal: ranks as the mean of twelve uniform draws over
    /// `0..=n`, plus a uniform spread of `spread` ranks.
    Normal {
        spread: u64,
    },
    /// vdbench's hotband over `n_band` blocks of `block_bytes`.
    Hotband {
        n_band: u64,
        block_bytes: u64,
    },
}

/// vdbench's hotband curve (`HotBand.java`): a uniform draw u falls in
/// the segment i with `HOTBAND_P[i] <= u < HOTBAND_P[i + 1]` and reads as
/// `HOTBAND_AT[i] + (u - HOTBAND_P[i]) × HOTBAND_SLOPE[i]`, a cache size
/// that vdbench turns into bytes as whole units of 1,000 bytes. The
/// points are vdbench's (a measured cache-access curve out to 10 PB); its
/// last slope does not join the last two points, and is kept as vdbench
/// has it, since it decides where the tail's I/Os go.
const HOTBAND_AT: [f64; 29] = [
    0.0,
    16.0,
    32.0,
    64.0,
    128.0,
    256.0,
    512.0,
    1024.0,
    2048.0,
    4096.0,
    8192.0,
    16384.0,
    32768.0,
    65536.0,
    131072.0,
    262144.0,
    524288.0,
    1048576.0,
    2097152.0,
    4194304.0,
    8388608.0,
    16777216.0,
    33554432.0,
    67108864.0,
    134217728.0,
    268435456.0,
    536870912.0,
    1073741824.0,
    10737418240.0,
];
const HOTBAND_P: [f64; 29] = [
    0.0, 0.087217, 0.10101, 0.132206, 0.159946, 0.201713, 0.262602, 0.32645, 0.366902, 0.386175,
    0.436941, 0.482631, 0.523752, 0.56076, 0.594068, 0.624045, 0.651024, 0.675305, 0.697159,
    0.716827, 0.734528, 0.750459, 0.764797, 0.777701, 0.789314, 0.799767, 0.809174, 0.81764, 1.0,
];
const HOTBAND_SLOPE: [f64; 29] = [
    183.4511752,
    1159.945628,
    1025.778015,
    2307.172362,
    3064.644852,
    4204.331611,
    8019.055699,
    25313.90019,
    106263.1067,
    80683.52498,
    179296.7222,
    398437.1604,
    885415.912,
    1967590.916,
    4372424.257,
    9716498.348,
    21592218.55,
    47982707.89,
    106628239.8,
    236951643.9,
    526559208.7,
    1170131575.0,
    2600292389.0,
    5778427530.0,
    12840950067.0,
    28535444594.0,
    63412099098.0,
    1313220630.0,
    10737418240.0,
];

/// The block of a hotband draw `u` in [0, 1), before the band wraps it:
/// the curve's value cut to a whole number, times 1,000 bytes, in blocks.
fn hotband_block(u: f64, block_bytes: u64) -> u64 {
    // The segment by bisection, as vdbench's pb_lookup: once per I/O.
    let i = HOTBAND_P[1..]
        .partition_point(|p| *p <= u)
        .min(HOTBAND_P.len() - 2);
    let units = (HOTBAND_AT[i] + (u - HOTBAND_P[i]) * HOTBAND_SLOPE[i]) as u64;
    units.saturating_mul(1000) / block_bytes
}

/// Each zone's upper bound of a uniform draw (cumulative I/O share) and its
/// blocks `starts[i]..starts[i + 1]` (boxed: the other kinds stay small).
#[derive(Clone, Debug)]
struct ZoneTable {
    cum: [f64; MAX_ZONES],
    starts: [u64; MAX_ZONES + 1],
    count: usize,
}

impl DistSampler {
    /// `n` blocks; the permutation is seeded so all workers agree on where the hot
    /// blocks are. Zones of sizes (`zoned_abs`) need the block's bytes:
    /// [`DistSampler::over_blocks`].
    pub fn new(dist: AccessDist, n: u64, seed: u64) -> Result<Self, EngineError> {
        if let AccessDist::ZonedAbs { .. } = dist {
            return Err(EngineError::Usage(format!(
                "{dist}: zones of sizes apply to the offsets of a range, not to a list of files"
            )));
        }
        Self::over_blocks(dist, n, 1, seed)
    }

    /// `n` blocks of `block_bytes` each.
    pub fn over_blocks(
        dist: AccessDist,
        n: u64,
        block_bytes: u64,
        seed: u64,
    ) -> Result<Self, EngineError> {
        let n = n.max(1);
        let kind = match dist {
            AccessDist::Uniform => DistKind::Uniform,
            AccessDist::Zipf { theta } => DistKind::Zipf(
                Zipf::new(n as f64, theta)
                    .map_err(|e| EngineError::Usage(format!("zipf:{theta}: {e}")))?,
            ),
            AccessDist::Pareto { h } => DistKind::Pareto {
                pow: h.ln() / (1.0 - h).ln(),
            },
            AccessDist::Hot { io_pct, space_pct } => DistKind::Hot {
                io_frac: io_pct / 100.0,
                hot_n: ((n as f64 * space_pct / 100.0).round() as u64).clamp(1, n),
            },
            AccessDist::Zoned { .. } => zoned(dist.zones(), n),
            AccessDist::ZonedAbs { .. } => zoned_abs(&dist, n, block_bytes.max(1))?,
            // fio: ceil(n × dev / 100), at most half the range.
            AccessDist::Normal { dev_pct } => DistKind::Normal {
                spread: ((n as f64 * dev_pct / 100.0).ceil() as u64).min(n / 2),
            },
            // vdbench counts the band in whole millions of bytes and
            // refuses one under a million.
            AccessDist::Hotband => {
                let block_bytes = block_bytes.max(1);
                let band = n.saturating_mul(block_bytes) / 1_000_000 * 1_000_000;
                if band == 0 {
                    return Err(EngineError::Usage(format!(
                        "hotband over {}: the band needs at least 1,000,000 bytes (vdbench's minimum); give a larger range",
                        iorig_spec::format_size(n.saturating_mul(block_bytes))
                    )));
                }
                DistKind::Hotband {
                    n_band: (band / block_bytes).max(1),
                    block_bytes,
                }
            }
        };
        Ok(DistSampler {
            n,
            kind,
            perm: Permutation::new(n, seed.rotate_left(17)),
        })
    }

    /// The popularity rank of the next access: 0 is the hottest block. For `hot`
    /// the hot set is ranks `0..hot_n`, kept contiguous at the start of the range.
    #[inline]
    pub fn sample_rank(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        match &self.kind {
            DistKind::Uniform => below(rng, self.n),
            DistKind::Zipf(z) => {
                let k: f64 = z.sample(rng);
                (k as u64).saturating_sub(1).min(self.n - 1)
            }
            DistKind::Pareto { pow } => {
                // x = u^pow puts a share h of the mass above h; rank from the top.
                let u = 1.0 - unit_f64(rng); // (0, 1]
                let x = u.powf(*pow);
                (((1.0 - x) * self.n as f64) as u64).min(self.n - 1)
            }
            DistKind::Hot { io_frac, hot_n } => {
                if unit_f64(rng) < *io_frac || *hot_n == self.n {
                    below(rng, *hot_n)
                } else {
                    hot_n + below(rng, self.n - hot_n)
                }
            }
            DistKind::Zoned(t) => {
                let ZoneTable { cum, starts, count } = &**t;
                let u = unit_f64(rng);
                let i = cum[..*count]
                    .iter()
                    .position(|c| u < *c)
                    .unwrap_or(count - 1);
                // A zone of no blocks (more zones than blocks) takes the
                // last one.
                let from = starts[i].min(self.n - 1);
                let to = starts[i + 1].clamp(from + 1, self.n);
                from + below(rng, to - from)
            }
            DistKind::Hotband {
                n_band,
                block_bytes,
            } => hotband_block(unit_f64(rng), *block_bytes) % n_band,
            DistKind::Normal { spread } => {
                // As fio's gauss_next draws a rank: the rounded-up mean of
                // twelve draws over 0..=n, then a spread draw, halved
                // (toward zero) until the rank stays inside the range.
                let n = self.n;
                let sum: u64 = (0..12).map(|_| below(rng, n + 1)).sum();
                let mean = sum.div_ceil(12) as i128;
                let mut dev = 0i128;
                if *spread > 0 {
                    dev = (*spread as f64 * unit_f64(rng)) as i128 - (*spread / 2) as i128;
                    while dev != 0 && (mean + dev >= n as i128 || mean + dev < 0) {
                        dev /= 2;
                    }
                }
                ((mean + dev).max(0) as u64).min(n - 1)
            }
        }
    }

    /// The block index of the next access.
    #[inline]
    pub fn sample(&self, rng: &mut Xoshiro256PlusPlus) -> u64 {
        self.sample_for(rng, false)
    }

    /// The block index of the next access, a write or not: vdbench's
    /// hotband puts writes a hundredth of the band further on than reads,
    /// "to step away from the hottest portion" (the other kinds ignore it).
    #[inline]
    pub fn sample_for(&self, rng: &mut Xoshiro256PlusPlus, write: bool) -> u64 {
        if let (
            DistKind::Hotband {
                n_band,
                block_bytes,
            },
            true,
        ) = (&self.kind, write)
        {
            return (hotband_block(unit_f64(rng), *block_bytes) + n_band / 100) % n_band;
        }
        let rank = self.sample_rank(rng);
        match self.kind {
            DistKind::Zipf(_) | DistKind::Pareto { .. } | DistKind::Normal { .. } => {
                self.perm.apply(rank)
            }
            DistKind::Uniform
            | DistKind::Hot { .. }
            | DistKind::Zoned(_)
            | DistKind::Hotband { .. } => rank,
        }
    }
}

/// The sampler of `zones` (io %, space %) over `n` blocks: zones laid from
/// the first block, each at least one block while blocks remain, the last
/// ending at `n`.
fn zoned(zones: &[(f64, f64)], n: u64) -> DistKind {
    let count = zones.len().clamp(1, MAX_ZONES);
    let mut cum = [1.0; MAX_ZONES];
    let mut starts = [n; MAX_ZONES + 1];
    let (mut io, mut space) = (0.0, 0.0);
    starts[0] = 0;
    for (i, (z_io, z_space)) in zones.iter().take(count).enumerate() {
        io += z_io / 100.0;
        space += z_space / 100.0;
        cum[i] = if i + 1 == count { 1.0 } else { io };
        let end = if i + 1 == count {
            n
        } else {
            ((n as f64 * space).round() as u64)
                .max(starts[i] + 1)
                .min(n)
        };
        starts[i + 1] = end;
    }
    DistKind::Zoned(Box::new(ZoneTable { cum, starts, count }))
}

/// The sampler of zones of sizes over `n` blocks of `block_bytes`: each
/// zone's blocks from where the one before ended; what lies beyond the
/// last gets no I/O. Zones past the range are refused, as fio refuses them
/// ("zoned_abs sizes exceed file size").
fn zoned_abs(dist: &AccessDist, n: u64, block_bytes: u64) -> Result<DistKind, EngineError> {
    let zones = dist.abs_zones();
    let count = zones.len().clamp(1, MAX_ZONES);
    let total: u64 = zones.iter().map(|z| z.1).sum();
    if total > n.saturating_mul(block_bytes) {
        return Err(EngineError::Usage(format!(
            "{dist}: the zones cover {} but the range holds {}; give zones that fit in it",
            iorig_spec::format_size(total),
            iorig_spec::format_size(n.saturating_mul(block_bytes)),
        )));
    }
    let mut cum = [1.0; MAX_ZONES];
    let mut starts = [n; MAX_ZONES + 1];
    starts[0] = 0;
    let (mut io, mut bytes) = (0.0, 0u64);
    for (i, (z_io, z_bytes)) in zones.iter().take(count).enumerate() {
        io += z_io / 100.0;
        bytes += z_bytes;
        cum[i] = if i + 1 == count { 1.0 } else { io };
        starts[i + 1] = (bytes / block_bytes).max(starts[i] + 1).min(n);
    }
    Ok(DistKind::Zoned(Box::new(ZoneTable { cum, starts, count })))
}

/// Where the next I/O goes: (target index, absolute byte offset).
#[derive(Clone, Debug)]
pub struct OffsetGen {
    space: Arc<AddressSpace>,
    dist: DistSampler,
    /// Probability threshold (of 2^64) that an I/O is random; u64::MAX = always.
    random_threshold: u64,
    always_random: bool,
    never_random: bool,
    /// This worker's sequential region of the virtual space.
    region_start: u64,
    region_end: u64,
    pos: u64,
    rng_offset: Xoshiro256PlusPlus,
    rng_seek: Xoshiro256PlusPlus,
    /// I/Os per random seek (fio's `randread:N`): a seek, then N-1
    /// sequential I/Os.
    run_length: u32,
    /// I/Os left in the current run.
    run_left: u32,
    /// Bytes left out after each sequential I/O (fio's `read:SIZE`).
    skip: u64,
    /// Zoned access: the zones and this worker's place in them.
    zones: Option<ZoneCursor>,
    /// Sequential I/O taking turns over the targets (fio's
    /// file_service_type roundrobin or random).
    turns: Option<Turns>,
}

/// Sequential I/O in turns over a worker's targets, each with its own
/// place: the segments of its region, where each is, and whose turn it is.
#[derive(Clone, Debug)]
struct Turns {
    random: bool,
    per_turn: u32,
    /// Indices into the space's segments.
    segs: Vec<usize>,
    /// Offset within each segment where its next I/O goes.
    at: Vec<u64>,
    current: usize,
    left_in_turn: u32,
}

/// A worker's zone (fio's zonemode=strided): where it starts in the
/// virtual space and the bytes done there.
#[derive(Clone, Copy, Debug)]
struct ZoneCursor {
    z: iorig_spec::Zones,
    start: u64,
    done: u64,
}

impl OffsetGen {
    /// `worker` of `workers`; `max_bs` is the largest block size.
    pub fn new(
        space: Arc<AddressSpace>,
        dist: AccessDist,
        random_pct: f64,
        max_bs: u64,
        worker: u32,
        workers: u32,
        seed: u64,
    ) -> Result<Self, EngineError> {
        let align = space.align();
        let total = space.total_bytes();
        let dist = DistSampler::over_blocks(dist, total / align, align, seed)?;
        let never_random = random_pct <= 0.0;
        let always_random = random_pct >= 100.0;
        // Purely sequential workers each get their own stretch of the space; when
        // the stretches would be smaller than a block, or when random seeks mix in,
        // every worker ranges over the whole space from a staggered start.
        let chunk = (total / workers.max(1) as u64) / align * align;
        let (region_start, region_end) = if never_random && chunk >= max_bs {
            let s = chunk * worker as u64;
            (
                s,
                if worker + 1 == workers {
                    total
                } else {
                    s + chunk
                },
            )
        } else {
            (0, total)
        };
        let start = if region_start == 0 && region_end == total {
            (total / workers.max(1) as u64 * worker as u64) / align * align
        } else {
            region_start
        };
        Ok(OffsetGen {
            space,
            dist,
            random_threshold: (random_pct / 100.0 * u64::MAX as f64) as u64,
            always_random,
            never_random,
            region_start,
            region_end,
            pos: start,
            rng_offset: rng_for(seed, worker, 1),
            rng_seek: rng_for(seed, worker, 2),
            run_length: 1,
            run_left: 0,
            skip: 0,
            zones: None,
            turns: None,
        })
    }

    /// Sequential I/O over several targets in turns (fio's
    /// file_service_type): each I/O (or each `per_turn`) at the next or a
    /// random one of the targets in this worker's stretch, each read on
    /// from where it was left. A worker whose stretch holds no target's
    /// start (more workers than targets) takes turns over all of them,
    /// each started at its own share of the way in, so workers do not
    /// repeat one another in step.
    pub fn with_target_order(mut self, order: iorig_spec::TargetOrder) -> Self {
        let (random, per_turn) = match order {
            iorig_spec::TargetOrder::Sequential => return self,
            iorig_spec::TargetOrder::RoundRobin { per_turn } => (false, per_turn),
            iorig_spec::TargetOrder::Random { per_turn } => (true, per_turn),
        };
        if !self.never_random || self.zones.is_some() || self.space.segs.len() < 2 {
            return self;
        }
        let mut segs: Vec<usize> = (0..self.space.segs.len())
            .filter(|&i| {
                let b = self.space.begins[i];
                b >= self.region_start && b < self.region_end
            })
            .collect();
        let mut at = vec![0; segs.len()];
        if segs.is_empty() {
            segs = (0..self.space.segs.len()).collect();
            // This worker's place in the whole space, as a share of it.
            let share = self.pos as f64 / self.space.total.max(1) as f64;
            let align = self.space.align.max(1);
            at = segs
                .iter()
                .map(|&i| ((self.space.segs[i].len as f64 * share) as u64) / align * align)
                .collect();
        }
        self.turns = Some(Turns {
            random,
            per_turn: per_turn.max(1),
            // The first turn is the first target's.
            current: segs.len() - 1,
            segs,
            at,
            left_in_turn: 0,
        });
        self
    }

    /// The next I/O of `len` bytes in turns over the targets.
    fn next_in_turn(&mut self, len: u64) -> (u32, u64) {
        let Some(t) = self.turns.as_mut() else {
            return (0, 0);
        };
        if t.left_in_turn == 0 {
            t.current = if t.random {
                below(&mut self.rng_offset, t.segs.len() as u64) as usize
            } else {
                (t.current + 1) % t.segs.len()
            };
            t.left_in_turn = t.per_turn;
        }
        t.left_in_turn -= 1;
        let k = t.current;
        let seg = self.space.segs[t.segs[k]];
        if t.at[k] + len > seg.len {
            t.at[k] = 0;
        }
        let off = t.at[k];
        t.at[k] += len + self.skip;
        (seg.target, seg.start + off)
    }

    /// Zoned access: every worker starts in the first zone, as each fio
    /// clone does.
    pub fn with_zones(mut self, zones: Option<iorig_spec::Zones>) -> Self {
        self.zones = zones.map(|z| ZoneCursor {
            z,
            start: 0,
            done: 0,
        });
        if self.zones.is_some() {
            self.pos = 0;
        }
        self
    }

    /// The next I/O of `len` bytes inside the current zone, moving to the
    /// next zone once this one had its bytes.
    fn next_in_zone(&mut self, len: u64, random: bool) -> (u32, u64) {
        let total = self.space.total;
        let align = self.space.align;
        let Some(c) = self.zones.as_mut() else {
            return (0, 0);
        };
        if c.done >= c.z.size_bytes {
            c.done = 0;
            c.start += c.z.range_bytes + c.z.skip_bytes;
            if c.start + len > total {
                c.start = 0;
            }
            self.pos = c.start;
        }
        c.done += len;
        let end = (c.start + c.z.range_bytes).min(total);
        let v = if random {
            let units = (end - c.start).saturating_sub(len) / align + 1;
            c.start + below(&mut self.rng_offset, units) * align
        } else {
            if self.pos < c.start || self.pos + len > end {
                self.pos = c.start;
            }
            let p = self.pos;
            self.pos += len + self.skip;
            p
        };
        let (i, off) = self.space.fit(v, len);
        let seg = self.space.segs[i];
        (seg.target, seg.start + off)
    }

    /// Runs of `run_length` I/Os per random seek, and `skip` bytes left out
    /// after each sequential I/O.
    pub fn with_runs(mut self, run_length: u32, skip: u64) -> Self {
        self.run_length = run_length.max(1);
        self.skip = skip;
        self
    }

    /// The next I/O of `len` bytes: (target index, absolute byte offset).
    #[inline]
    pub fn next(&mut self, len: u64) -> (u32, u64) {
        self.next_for(len, false)
    }

    /// As [`OffsetGen::next`], for a write or not (vdbench's hotband puts
    /// writes apart from reads).
    pub fn next_for(&mut self, len: u64, write: bool) -> (u32, u64) {
        let random = if self.run_length > 1 {
            let seek = self.run_left == 0;
            self.run_left = if seek {
                self.run_length - 1
            } else {
                self.run_left - 1
            };
            seek
        } else {
            self.always_random
                || (!self.never_random && self.rng_seek.next_u64() < self.random_threshold)
        };
        if self.zones.is_some() {
            return self.next_in_zone(len, random);
        }
        if self.turns.is_some() {
            return self.next_in_turn(len);
        }
        if random {
            let unit = self.dist.sample_for(&mut self.rng_offset, write);
            let v = unit * self.space.align;
            let (i, off) = self.space.fit(v, len);
            let seg = self.space.segs[i];
            // A later sequential I/O continues after this one (vdbench seekpct).
            self.pos = self.space.begins[i] + off + len + self.skip;
            if self.pos >= self.region_end {
                self.pos = self.region_start;
            }
            return (seg.target, seg.start + off);
        }
        self.next_sequential(len)
    }

    fn next_sequential(&mut self, len: u64) -> (u32, u64) {
        // Bounded: each step moves to a later segment or wraps once.
        for _ in 0..self.space.segs.len() + 2 {
            if self.pos + len > self.region_end {
                self.pos = self.region_start;
            }
            let (i, off) = self.space.locate(self.pos);
            let seg = self.space.segs[i];
            if off + len <= seg.len {
                self.pos += len + self.skip;
                if self.pos >= self.region_end {
                    self.pos = self.region_start;
                }
                return (seg.target, seg.start + off);
            }
            // Not enough room left in this target: continue at the next one.
            self.pos = self
                .space
                .begins
                .get(i + 1)
                .copied()
                .unwrap_or(self.region_end);
        }
        // Unreachable with valid segments (each holds max_bs); stay in range anyway.
        let seg = self.space.segs[0];
        (seg.target, seg.start)
    }
}

/// Picks block sizes by weight.
#[derive(Clone, Debug)]
pub struct BsGen {
    sizes: Vec<u64>,
    /// Cumulative weights.
    cum: Vec<u64>,
    total: u64,
    rng: Xoshiro256PlusPlus,
}

impl BsGen {
    pub fn new(bs: &BsSpec, seed: u64, worker: u32) -> Self {
        let mut cum = Vec::with_capacity(bs.sizes.len());
        let mut total = 0u64;
        for (_, w) in &bs.sizes {
            total += *w as u64;
            cum.push(total);
        }
        BsGen {
            sizes: bs.sizes.iter().map(|s| s.0).collect(),
            cum,
            total,
            rng: rng_for(seed, worker, 3),
        }
    }

    #[inline]
    pub fn next_bs(&mut self) -> u64 {
        if self.sizes.len() == 1 {
            return self.sizes[0];
        }
        let r = below(&mut self.rng, self.total);
        // Binary search: a bsrange can list hundreds of sizes.
        let i = self
            .cum
            .partition_point(|&c| c <= r)
            .min(self.sizes.len() - 1);
        self.sizes[i]
    }
}

impl BsGen {
    fn on_stream(bs: &BsSpec, seed: u64, worker: u32, stream: u64) -> Self {
        let mut g = BsGen::new(bs, seed, worker);
        g.rng = rng_for(seed, worker, stream);
        g
    }
}

/// Block sizes for both directions: one generator when reads and writes share
/// `bs` (the sequence is then the same as ever for a given seed), one per
/// direction when `read_bs` or `write_bs` sets them apart.
#[derive(Clone, Debug)]
pub enum SizeGen {
    Shared(BsGen),
    Split { read: BsGen, write: BsGen },
}

impl SizeGen {
    pub fn new(w: &Workload, worker: u32) -> Self {
        if w.read_bs.is_none() && w.write_bs.is_none() {
            return SizeGen::Shared(BsGen::new(&w.bs, w.seed, worker));
        }
        SizeGen::Split {
            read: BsGen::new(w.read_sizes(), w.seed, worker),
            write: BsGen::on_stream(w.write_sizes(), w.seed, worker, 7),
        }
    }

    /// The size of the next I/O, a read or a write.
    #[inline]
    pub fn next_bs(&mut self, read: bool) -> u64 {
        match self {
            SizeGen::Shared(g) => g.next_bs(),
            SizeGen::Split { read: r, write: w } => {
                if read {
                    r.next_bs()
                } else {
                    w.next_bs()
                }
            }
        }
    }
}

/// Decides read or write by the read share.
#[derive(Clone, Debug)]
pub struct OpGen {
    /// Draws below this are reads.
    threshold: u64,
    /// Draws at or above `threshold` and below this are trims.
    trim_threshold: u64,
    mode: u8, // 0 mixed, 1 all reads, 2 all writes
    rng: Xoshiro256PlusPlus,
}

impl OpGen {
    /// Reads `read_pct` %, trims `trim_pct` %, writes the rest. Without
    /// trims a draw below the read threshold is a read and anything else a
    /// write, as before trims existed, so a seed gives the same run.
    pub fn new(read_pct: f64, trim_pct: f64, seed: u64, worker: u32) -> Self {
        let mode = if read_pct >= 100.0 {
            1
        } else if read_pct <= 0.0 && trim_pct <= 0.0 {
            2
        } else {
            0
        };
        let at = |pct: f64| (pct.clamp(0.0, 100.0) / 100.0 * u64::MAX as f64) as u64;
        OpGen {
            threshold: at(read_pct),
            trim_threshold: at(read_pct + trim_pct),
            mode,
            rng: rng_for(seed, worker, 4),
        }
    }

    /// The next operation.
    #[inline]
    pub fn next_op(&mut self) -> OpKind {
        match self.mode {
            1 => OpKind::Read,
            2 => OpKind::Write,
            _ => {
                let x = self.rng.next_u64();
                if x < self.threshold {
                    OpKind::Read
                } else if x < self.trim_threshold {
                    OpKind::Trim
                } else {
                    OpKind::Write
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn space(lens: &[u64], align: u64, max_bs: u64) -> Arc<AddressSpace> {
        let segs = lens
            .iter()
            .enumerate()
            .map(|(i, &len)| Segment {
                target: i as u32,
                start: 1 << 20,
                len,
            })
            .collect();
        Arc::new(AddressSpace::new(segs, align, max_bs).unwrap())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// Every offset lies inside its target's working set, aligned, with the
        /// whole block inside, whatever the sizes, mix and distribution.
        #[test]
        fn offsets_in_range_and_aligned(
            lens_units in prop::collection::vec(1u64..5000, 1..4),
            align_pow in 9u32..14,
            bs_units in prop::collection::vec(1u64..9, 1..4),
            random_pct in prop_oneof![Just(0.0), Just(100.0), 0.0f64..100.0],
            dist_i in 0usize..4,
            workers in 1u32..9,
            seed in any::<u64>(),
        ) {
            let align = 1u64 << align_pow;
            let sizes: Vec<(u64, u32)> = bs_units.iter().map(|u| (u * align, 1)).collect();
            let bs = BsSpec { sizes };
            let max_bs = bs.max_bytes();
            let lens: Vec<u64> = lens_units.iter().map(|u| (u + 8) * align).collect();
            prop_assume!(lens.iter().all(|&l| l >= max_bs));
            let sp = space(&lens, align, max_bs);
            let dist = [AccessDist::Uniform, AccessDist::Zipf{theta: 1.1},
                        AccessDist::Pareto{h: 0.8}, AccessDist::Hot{io_pct: 90.0, space_pct: 10.0}][dist_i];
            for w in 0..workers {
                let mut g = OffsetGen::new(sp.clone(), dist, random_pct, max_bs, w, workers, seed).unwrap();
                let mut b = BsGen::new(&bs, seed, w);
                for _ in 0..300 {
                    let len = b.next_bs();
                    let (t, off) = g.next(len);
                    let seg = sp.segments()[t as usize];
                    prop_assert!(off >= seg.start, "offset {off} below {}", seg.start);
                    prop_assert!(off + len <= seg.start + seg.len, "{off}+{len} past {}", seg.start + seg.len);
                    prop_assert_eq!(off % align, 0);
                }
            }
        }
    }

    #[test]
    fn sequential_streams_are_contiguous_and_separate() {
        let sp = space(&[64 * 4096], 4096, 4096);
        let workers = 4;
        let mut regions = Vec::new();
        for w in 0..workers {
            let mut g =
                OffsetGen::new(sp.clone(), AccessDist::Uniform, 0.0, 4096, w, workers, 9).unwrap();
            let (_, first) = g.next(4096);
            let mut prev = first;
            for _ in 0..15 {
                let (_, off) = g.next(4096);
                assert_eq!(off, prev + 4096, "worker {w} not contiguous");
                prev = off;
            }
            // The 17th I/O wraps to the start of the worker's own region.
            assert_eq!(g.next(4096).1, first);
            regions.push((first, prev + 4096));
        }
        for pair in regions.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "regions overlap: {regions:?}");
        }
    }

    #[test]
    fn sequential_crosses_targets_in_order() {
        let sp = space(&[4 * 4096, 4 * 4096], 4096, 8192);
        let mut g = OffsetGen::new(sp, AccessDist::Uniform, 0.0, 8192, 0, 1, 1).unwrap();
        let got: Vec<(u32, u64)> = (0..5).map(|_| g.next(8192)).collect();
        let base = 1 << 20;
        assert_eq!(
            got,
            vec![
                (0, base),
                (0, base + 8192),
                (1, base),
                (1, base + 8192),
                (0, base)
            ]
        );
    }

    #[test]
    fn targets_take_turns_each_read_on_from_where_it_was() {
        let base = 1 << 20;
        let sp = space(&[3 * 4096, 3 * 4096, 3 * 4096], 4096, 4096);
        // fio's file_service_type=roundrobin: one I/O at each file in turn.
        let mut g = OffsetGen::new(sp.clone(), AccessDist::Uniform, 0.0, 4096, 0, 1, 1)
            .unwrap()
            .with_target_order(iorig_spec::TargetOrder::RoundRobin { per_turn: 1 });
        let got: Vec<(u32, u64)> = (0..7).map(|_| g.next(4096)).collect();
        assert_eq!(
            got,
            vec![
                (0, base),
                (1, base),
                (2, base),
                (0, base + 4096),
                (1, base + 4096),
                (2, base + 4096),
                (0, base + 8192),
            ]
        );
        // roundrobin:2: two I/Os a turn; a file wraps at its end.
        let mut g = OffsetGen::new(sp.clone(), AccessDist::Uniform, 0.0, 4096, 0, 1, 1)
            .unwrap()
            .with_target_order(iorig_spec::TargetOrder::RoundRobin { per_turn: 2 });
        let got: Vec<(u32, u64)> = (0..8).map(|_| g.next(4096)).collect();
        assert_eq!(got[0..2], [(0, base), (0, base + 4096)]);
        assert_eq!(got[6..8], [(0, base + 8192), (0, base)]);
        // random: each I/O at a random file, sequential within each.
        let mut g = OffsetGen::new(sp, AccessDist::Uniform, 0.0, 4096, 0, 1, 1)
            .unwrap()
            .with_target_order(iorig_spec::TargetOrder::Random { per_turn: 1 });
        let mut next = [base; 3];
        let mut seen = [0; 3];
        for _ in 0..300 {
            let (t, off) = g.next(4096);
            assert_eq!(off, next[t as usize]);
            next[t as usize] = if off + 4096 >= base + 3 * 4096 {
                base
            } else {
                off + 4096
            };
            seen[t as usize] += 1;
        }
        assert!(seen.iter().all(|&n| n > 60), "{seen:?}");
    }

    #[test]
    fn runs_follow_each_seek_and_skips_leave_holes() {
        let sp = space(&[1 << 24], 4096, 4096);
        // fio's randread:4: a random offset, then three that follow it.
        let mut g = OffsetGen::new(sp.clone(), AccessDist::Uniform, 100.0, 4096, 0, 1, 5)
            .unwrap()
            .with_runs(4, 0);
        let offs: Vec<u64> = (0..400).map(|_| g.next(4096).1).collect();
        for run in offs.chunks(4) {
            for k in 1..4 {
                assert_eq!(run[k], run[0] + 4096 * k as u64, "{run:?}");
            }
        }
        let seeks: std::collections::BTreeSet<u64> = offs.iter().step_by(4).copied().collect();
        assert!(seeks.len() > 90, "seeks repeat: {}", seeks.len());
        // fio's read:8k: each sequential I/O leaves 8k out after itself.
        let mut g = OffsetGen::new(sp, AccessDist::Uniform, 0.0, 4096, 0, 1, 5)
            .unwrap()
            .with_runs(1, 8192);
        let offs: Vec<u64> = (0..5).map(|_| g.next(4096).1).collect();
        let base = 1 << 20;
        assert_eq!(offs, (0..5).map(|k| base + k * 12288).collect::<Vec<u64>>());
    }

    #[test]
    fn strided_zones_keep_io_in_a_zone_then_move_on() {
        let sp = space(&[1 << 24], 4096, 4096);
        let base = 1 << 20;
        // 1 MiB zones, 64k of I/O in each, 1 MiB skipped between them.
        let z = iorig_spec::Zones {
            range_bytes: 1 << 20,
            size_bytes: 64 << 10,
            skip_bytes: 1 << 20,
        };
        let mut g = OffsetGen::new(sp.clone(), AccessDist::Uniform, 100.0, 4096, 0, 1, 3)
            .unwrap()
            .with_zones(Some(z));
        for k in 0..20u64 {
            // 16 I/Os of 4k per zone; zone k starts at 2k MiB (wrapping).
            let start = (k * (2 << 20)) % (1 << 24);
            for _ in 0..16 {
                let off = g.next(4096).1 - base;
                assert!((start..start + (1 << 20)).contains(&off), "zone {k}: {off}");
                assert_eq!(off % 4096, 0);
            }
        }
        // Sequential: the zone's first 64k in order, then the next zone.
        let mut g = OffsetGen::new(sp, AccessDist::Uniform, 0.0, 4096, 0, 1, 3)
            .unwrap()
            .with_zones(Some(z));
        let offs: Vec<u64> = (0..18).map(|_| g.next(4096).1 - base).collect();
        assert_eq!(&offs[..3], &[0, 4096, 8192]);
        assert_eq!(offs[15], 15 * 4096);
        assert_eq!(&offs[16..], &[2 << 20, (2 << 20) + 4096]);
    }

    #[test]
    fn read_share_within_one_percent() {
        let mut g = OpGen::new(70.0, 0.0, 42, 0);
        let reads = (0..100_000).filter(|_| g.next_op() == OpKind::Read).count();
        let pct = reads as f64 / 1000.0;
        assert!((pct - 70.0).abs() <= 1.0, "read {pct}%");
        let mut r = OpGen::new(100.0, 0.0, 1, 0);
        assert!((0..1000).all(|_| r.next_op() == OpKind::Read));
        let mut w = OpGen::new(0.0, 0.0, 1, 0);
        assert!((0..1000).all(|_| w.next_op() == OpKind::Write));
    }

    fn workload(toml: &str) -> Workload {
        iorig_spec::WorkloadFile::from_toml("t", toml)
            .unwrap()
            .resolve(9)
            .unwrap()
    }

    #[test]
    fn sizes_follow_the_direction_and_the_seed() {
        let w = workload("read = 50\nread_bs = '4k'\nwrite_bs = '16k:50,64k:50'\n");
        let draw = || {
            let mut ops = OpGen::new(w.read_pct, w.trim_pct, w.seed, 0);
            let mut sizes = SizeGen::new(&w, 0);
            (0..2000)
                .map(|_| {
                    let read = ops.next_op() == OpKind::Read;
                    (read, sizes.next_bs(read))
                })
                .collect::<Vec<_>>()
        };
        let seq = draw();
        assert!(seq.iter().filter(|(r, _)| *r).all(|(_, s)| *s == 4096));
        assert!(seq
            .iter()
            .filter(|(r, _)| !*r)
            .all(|(_, s)| *s == 16384 || *s == 65536));
        assert!(seq.iter().any(|(r, s)| !*r && *s == 65536));
        assert_eq!(seq, draw(), "same seed, same sequence");
        // Without read_bs/write_bs the sequence is the shared generator's.
        let w = workload("read = 50\nbs = '4k:50,8k:50'\n");
        let mut shared = SizeGen::new(&w, 0);
        let mut plain = BsGen::new(&w.bs, w.seed, 0);
        assert!((0..1000).all(|i| shared.next_bs(i % 2 == 0) == plain.next_bs()));
    }

    #[test]
    fn bs_proportions_within_one_percent() {
        let bs = BsSpec::parse("4k:50,8k:30,64k:20").unwrap();
        let mut g = BsGen::new(&bs, 42, 0);
        let mut counts = [0u32; 3];
        for _ in 0..100_000 {
            match g.next_bs() {
                4096 => counts[0] += 1,
                8192 => counts[1] += 1,
                65536 => counts[2] += 1,
                other => panic!("unexpected size {other}"),
            }
        }
        for (c, want) in counts.iter().zip([50.0, 30.0, 20.0]) {
            let pct = *c as f64 / 1000.0;
            assert!((pct - want).abs() <= 1.0, "{counts:?}");
        }
    }

    #[test]
    fn hot_90_10_sends_90_percent_to_the_hot_tenth() {
        let n_blocks = 262_144u64; // 1 GiB of 4k blocks
        let sp = space(&[n_blocks * 4096], 4096, 4096);
        let dist = AccessDist::Hot {
            io_pct: 90.0,
            space_pct: 10.0,
        };
        let mut g = OffsetGen::new(sp, dist, 100.0, 4096, 0, 1, 42).unwrap();
        let hot_end = (1 << 20) + n_blocks * 4096 / 10;
        let hits = (0..100_000).filter(|_| g.next(4096).1 < hot_end).count();
        let pct = hits as f64 / 1000.0;
        assert!((pct - 90.0).abs() <= 1.0, "{pct}% to the hot range");
    }

    /// JEDEC's enterprise workload (fio's zoned:50/5:30/15:15/20:5/60):
    /// each zone gets its share of I/Os, uniformly over its own blocks. Over
    /// 200,000 draws a share's standard error is at most 0.11 %, so 1 % is
    /// over 9 of them.
    #[test]
    fn zoned_gives_each_zone_its_share() {
        let n = 100_000u64;
        let dist = AccessDist::parse("zoned:50/5:30/15:15/20:5/60").unwrap();
        let d = DistSampler::new(dist, n, 1).unwrap();
        let mut rng = rng_for(42, 0, 0);
        let bounds = [0, 5_000, 20_000, 40_000, 100_000];
        let mut hits = [0u64; 4];
        let draws = 200_000;
        for _ in 0..draws {
            let b = d.sample(&mut rng);
            assert!(b < n);
            let z = bounds
                .windows(2)
                .position(|w| b >= w[0] && b < w[1])
                .unwrap();
            hits[z] += 1;
        }
        for (z, want) in [50.0, 30.0, 15.0, 5.0].iter().enumerate() {
            let pct = 100.0 * hits[z] as f64 / draws as f64;
            assert!(
                (pct - want).abs() <= 1.0,
                "zone {z}: {pct}% of I/Os, want {want}%"
            );
        }
        // More zones than blocks: every draw still lands in range.
        let d = DistSampler::new(dist, 2, 1).unwrap();
        assert!((0..1000).all(|_| d.sample(&mut rng) < 2));
    }

    /// fio's zoned_abs:60/40m:40/100m over a range of 390 MiB: each zone
    /// its share (1 % is over 9 standard errors at 200,000 draws), nothing
    /// past the zones' 140 MiB, and zones past the range refused.
    #[test]
    fn zones_of_sizes_get_their_shares_and_nothing_beyond() {
        let n = 100_000u64;
        let dist = AccessDist::parse("zoned_abs:60/40m:40/100m").unwrap();
        let d = DistSampler::over_blocks(dist, n, 4096, 1).unwrap();
        let mut rng = rng_for(42, 0, 0);
        let draws = 200_000;
        let (first, end) = (10_240u64, 35_840u64);
        let mut in_first = 0u64;
        for _ in 0..draws {
            let b = d.sample(&mut rng);
            assert!(b < end, "block {b} lies past the zones");
            in_first += u64::from(b < first);
        }
        let pct = 100.0 * in_first as f64 / draws as f64;
        assert!((pct - 60.0).abs() <= 1.0, "first zone: {pct}% of I/Os");
        let big = AccessDist::parse("zoned_abs:60/40m:40/400m").unwrap();
        let e = DistSampler::over_blocks(big, n, 4096, 1).unwrap_err();
        assert!(e.to_string().contains("give zones that fit"), "{e}");
        assert!(DistSampler::new(dist, n, 1).is_err(), "sizes over files");
    }

    /// vdbench's hotband: over a band too large to wrap, a read's block is
    /// below k exactly when the curve's value is below ceil(4.096 k) (whole
    /// units of 1,000 bytes in 4 KiB blocks), whose probability the curve's
    /// segment gives: P = p_i + (m - at_i) / slope_i. Over 200,000 draws a
    /// share's standard error is at most 0.11 %, so 0.6 % is over 5 of
    /// them. Writes lie a hundredth of the band further on; a small band
    /// wraps the curve into it; a band under 1,000,000 bytes is refused.
    #[test]
    fn hotband_follows_vdbenchs_curve() {
        let n = 400_000_000u64;
        let d = DistSampler::over_blocks(AccessDist::Hotband, n, 4096, 1).unwrap();
        let mut rng = rng_for(5, 0, 0);
        let draws = 200_000;
        let reads: Vec<u64> = (0..draws).map(|_| d.sample_for(&mut rng, false)).collect();
        let writes: Vec<u64> = (0..draws).map(|_| d.sample_for(&mut rng, true)).collect();
        for (k, m) in [
            (1u64, 5.0),
            (4, 17.0),
            (1000, 4096.0),
            (250_000, 1_024_000.0),
        ] {
            let i = HOTBAND_AT.iter().rposition(|a| *a <= m).unwrap();
            let want = HOTBAND_P[i] + (m - HOTBAND_AT[i]) / HOTBAND_SLOPE[i];
            let share = |v: &[u64], shift: u64| {
                v.iter().filter(|b| **b >= shift && **b - shift < k).count() as f64 / draws as f64
            };
            let (r, w) = (share(&reads, 0), share(&writes, n / 100));
            assert!(
                (r - want).abs() < 0.006,
                "reads below block {k}: {r}, want {want}"
            );
            assert!(
                (w - want).abs() < 0.006,
                "writes below block {k}: {w}, want {want}"
            );
        }
        let small = DistSampler::over_blocks(AccessDist::Hotband, 2560, 4096, 1).unwrap();
        assert!((0..10_000).all(|_| small.sample_for(&mut rng, true) < 2560));
        let e = DistSampler::over_blocks(AccessDist::Hotband, 200, 4096, 1).unwrap_err();
        assert!(e.to_string().contains("1,000,000 bytes"), "{e}");
    }

    /// fio's normal:DEV draws a rank as the rounded-up mean of twelve
    /// uniform draws over 0..=n (mean n/2, standard deviation n/12) plus a
    /// uniform spread of s = DEV % of n (variance s²/12). Over 200,000 draws
    /// the sample mean's standard error is under 0.03 % of n and the sample
    /// deviation's under 0.2 % of itself, so the bounds below are over 10 of
    /// them; the share within one deviation of the mean is 68.3 % for the
    /// sum of twelve uniforms (1 % is 10 standard errors).
    #[test]
    fn normal_ranks_have_fios_mean_and_spread() {
        let n = 1_000_000u64;
        for (dev_pct, want_sd) in [
            (0.0, 1.0 / 12.0),
            (20.0, (1.0f64 / 144.0 + 0.04 / 12.0).sqrt()),
        ] {
            let d = DistSampler::new(AccessDist::Normal { dev_pct }, n, 1).unwrap();
            let mut rng = rng_for(7, 0, 0);
            let draws = 200_000;
            let ranks: Vec<f64> = (0..draws)
                .map(|_| d.sample_rank(&mut rng) as f64 / n as f64)
                .collect();
            let mean = ranks.iter().sum::<f64>() / draws as f64;
            let sd = (ranks.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / draws as f64).sqrt();
            assert!((mean - 0.5).abs() < 0.003, "dev {dev_pct}: mean {mean}");
            assert!(
                (sd / want_sd - 1.0).abs() < 0.02,
                "dev {dev_pct}: sd {sd}, want {want_sd}"
            );
            if dev_pct == 0.0 {
                let within = ranks.iter().filter(|r| (*r - 0.5).abs() < want_sd).count();
                let share = within as f64 / draws as f64;
                assert!((share - 0.683).abs() < 0.01, "share within 1 sd: {share}");
            }
            // Every block drawn, after the scattering, lies in the range.
            let mut hits = std::collections::HashMap::new();
            for _ in 0..20_000 {
                *hits.entry(d.sample(&mut rng)).or_insert(0u32) += 1;
            }
            assert!(hits.keys().all(|b| *b < n));
        }
        // A spread that would leave the range is halved back into it.
        let d = DistSampler::new(AccessDist::Normal { dev_pct: 100.0 }, 3, 1).unwrap();
        let mut rng = rng_for(1, 0, 0);
        assert!((0..10_000).all(|_| d.sample_rank(&mut rng) < 3));
    }

    #[test]
    fn zipf_concentrates_as_its_math_says() {
        // P(rank < k) = H(k, theta) / H(n, theta), the generalised harmonic numbers.
        let n = 100_000u64;
        let theta = 1.2;
        let h = |k: u64| (1..=k).map(|i| (i as f64).powf(-theta)).sum::<f64>();
        let d = DistSampler::new(AccessDist::Zipf { theta }, n, 1).unwrap();
        let mut rng = rng_for(42, 0, 0);
        let samples = 200_000;
        for k in [1u64, 10, 100, 1000] {
            let expect = h(k) / h(n);
            let mut rng2 = rng.clone();
            let got = (0..samples)
                .filter(|_| d.sample_rank(&mut rng2) < k)
                .count() as f64
                / samples as f64;
            // Binomial standard error; 5 sigma.
            let tol = 5.0 * (expect * (1.0 - expect) / samples as f64).sqrt();
            assert!(
                (got - expect).abs() <= tol,
                "k={k}: {got} vs {expect} ± {tol}"
            );
        }
        let _ = d.sample(&mut rng);
    }

    #[test]
    fn pareto_sends_h_of_io_to_one_minus_h_of_space() {
        let n = 1_000_000u64;
        for h in [0.8, 0.9] {
            let d = DistSampler::new(AccessDist::Pareto { h }, n, 1).unwrap();
            let mut rng = rng_for(7, 0, 0);
            let samples = 100_000;
            let hot = ((1.0 - h) * n as f64) as u64;
            let got = (0..samples)
                .filter(|_| d.sample_rank(&mut rng) < hot)
                .count() as f64
                / samples as f64;
            let tol = 5.0 * (h * (1.0 - h) / samples as f64).sqrt();
            assert!((got - h).abs() <= tol, "pareto:{h}: {got}");
        }
    }

    #[test]
    fn permutation_is_a_bijection() {
        for n in [1u64, 2, 10, 97, 1000, 4096] {
            let p = Permutation::new(n, 12345);
            let mut seen = vec![false; n as usize];
            for x in 0..n {
                let y = p.apply(x) as usize;
                assert!(!seen[y], "n={n}: {y} twice");
                seen[y] = true;
            }
        }
    }

    #[test]
    fn same_seed_same_offsets() {
        let sp = space(&[1 << 30], 4096, 4096);
        let run = |seed| {
            let mut g =
                OffsetGen::new(sp.clone(), AccessDist::Uniform, 100.0, 4096, 0, 1, seed).unwrap();
            (0..100).map(|_| g.next(4096).1).collect::<Vec<_>>()
        };
        assert_eq!(run(5), run(5));
        assert_ne!(run(5), run(6));
    }

    /// Reads, trims and writes come in their shares: with n draws each count
    /// is binomial, so 5 standard deviations bound it for any fixed seed.
    #[test]
    fn trims_take_their_share_and_leave_reads_and_writes_as_before() {
        let n = 100_000u32;
        let mut g = OpGen::new(50.0, 20.0, 42, 0);
        let (mut r, mut t, mut w) = (0f64, 0f64, 0f64);
        for _ in 0..n {
            match g.next_op() {
                OpKind::Read => r += 1.0,
                OpKind::Trim => t += 1.0,
                OpKind::Write => w += 1.0,
            }
        }
        let n = f64::from(n);
        for (count, p) in [(r, 0.5), (t, 0.2), (w, 0.3)] {
            let sd = (n * p * (1.0 - p)).sqrt();
            assert!((count - n * p).abs() < 5.0 * sd, "{count} of {n} for p {p}");
        }
        // Without trims the draws are exactly those of the read/write rule
        // from before trims existed: a read below the threshold, else a write.
        let mut b = OpGen::new(70.0, 0.0, 7, 3);
        let mut raw = rng_for(7, 3, 4);
        let threshold = (0.7 * u64::MAX as f64) as u64;
        for _ in 0..10_000 {
            let read = raw.next_u64() < threshold;
            assert_eq!(read, b.next_op() == OpKind::Read);
        }
        // All trims.
        let mut all = OpGen::new(0.0, 100.0, 1, 0);
        assert!((0..1000).all(|_| all.next_op() == OpKind::Trim));
    }
}
