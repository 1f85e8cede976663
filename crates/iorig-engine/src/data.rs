//! What writes carry.
//!
//! Producing data must cost far less than the I/O it feeds, yet no two written
//! 4 KiB chunks may be identical (or compressible) unless the pattern asks for it:
//! storage that compresses or deduplicates would otherwise report fantasy
//! numbers. So each worker keeps a pre-generated pool in the chosen pattern,
//! copies from it at a random place when a slot's buffer needs fresh contents
//! (first use, or after a read left disk data in it), and otherwise only stamps
//! 16 unique bytes (target, offset, sequence number) at the start of each chunk.

use crate::gen::rng_for;
use iorig_spec::DataPattern;
use rand::Rng;
use rand_xoshiro::Xoshiro256PlusPlus;
use std::sync::Arc;

/// Granularity at which uniqueness, compressibility and duplication are shaped;
/// the usual dedup and compression block of storage arrays.
pub const CHUNK_BYTES: usize = 4096;
const POOL_SLACK_BYTES: usize = 256 << 10;
/// Distinct chunks that duplicated data is drawn from (dedup pattern).
const DEDUP_POOL_CHUNKS: usize = 64;

/// The pattern data every worker copies from: built once per run and
/// shared, so memory does not grow with the number of workers (a pool per
/// worker cost 256 KiB each, 64 MiB at 256 workers). Chunks stay unique: each
/// worker copies from a place of its own choosing and stamps every chunk.
#[derive(Debug)]
pub struct DataPool {
    pattern: DataPattern,
    pool: Vec<u8>,
    dedup_pool: Vec<u8>,
    /// Probability threshold (of 2^64) that a chunk is a duplicate.
    dup_threshold: u64,
}

impl DataPool {
    pub fn new(pattern: DataPattern, max_bs: usize, seed: u64) -> Self {
        let mut rng = rng_for(seed, u32::MAX - 1, 5);
        let pool_len = max_bs + POOL_SLACK_BYTES;
        let mut pool = vec![0u8; pool_len];
        // Each chunk: 1/ratio random bytes, the rest zeros.
        let shaped = |rng: &mut Xoshiro256PlusPlus, buf: &mut [u8], ratio: f64| {
            let random_len = ((CHUNK_BYTES as f64 / ratio).ceil() as usize).clamp(16, CHUNK_BYTES);
            for chunk in buf.chunks_mut(CHUNK_BYTES) {
                let n = random_len.min(chunk.len());
                rng.fill_bytes(&mut chunk[..n]);
            }
        };
        match pattern {
            DataPattern::Zero => {}
            // The pattern over and over from the pool's start, so any
            // buffer copied from there begins with it, as fio's do.
            DataPattern::Fill(_) => {
                let p = pattern.fill_bytes();
                for (i, b) in pool.iter_mut().enumerate() {
                    *b = p[i % p.len()];
                }
            }
            DataPattern::Random => rng.fill_bytes(&mut pool),
            DataPattern::Compress { ratio }
            | DataPattern::Dedup {
                compress: ratio, ..
            } => shaped(&mut rng, &mut pool, ratio),
        }
        let (dedup_pool, dup_threshold) = match pattern {
            DataPattern::Dedup { ratio, compress } => {
                // The same seed for every worker: duplicates match across workers.
                let mut shared = rng_for(seed, u32::MAX, 6);
                let mut p = vec![0u8; DEDUP_POOL_CHUNKS * CHUNK_BYTES];
                shaped(&mut shared, &mut p, compress);
                let dup = 1.0 - 1.0 / ratio;
                (p, (dup * u64::MAX as f64) as u64)
            }
            _ => (Vec::new(), 0),
        };
        DataPool {
            pattern,
            pool,
            dedup_pool,
            dup_threshold,
        }
    }
}

/// Fills write buffers for one worker.
#[derive(Debug)]
pub struct DataFiller {
    shared: Arc<DataPool>,
    rng: Xoshiro256PlusPlus,
    /// Unique per worker and write: worker id in the top 16 bits.
    sequence: u64,
}

impl DataFiller {
    /// A filler with a pool of its own (tests, single workers).
    pub fn new(pattern: DataPattern, max_bs: usize, seed: u64, worker: u32) -> Self {
        Self::with_pool(Arc::new(DataPool::new(pattern, max_bs, seed)), seed, worker)
    }

    /// A worker's filler over the run's shared pool.
    pub fn with_pool(shared: Arc<DataPool>, seed: u64, worker: u32) -> Self {
        DataFiller {
            shared,
            rng: rng_for(seed, worker, 5),
            sequence: (worker as u64 & 0xFFFF) << 48,
        }
    }

    /// Gives `buf` fresh pattern contents (a slot's first use, or after a read).
    pub fn refresh(&mut self, buf: &mut [u8]) {
        let pool = &self.shared.pool;
        let len = buf.len().min(pool.len());
        match self.shared.pattern {
            DataPattern::Zero => {
                buf[..len].fill(0);
                return;
            }
            // Every buffer alike: the pattern from its start.
            DataPattern::Fill(_) => {
                buf[..len].copy_from_slice(&pool[..len]);
                return;
            }
            _ => {}
        }
        let room = pool.len() - len;
        // Chunk-aligned start keeps compress chunks intact.
        let chunks = room / CHUNK_BYTES + 1;
        let start = (((self.rng.next_u64() as u128 * chunks as u128) >> 64) as usize) * CHUNK_BYTES;
        let start = start.min(room);
        buf[..len].copy_from_slice(&pool[start..start + len]);
    }

    /// Prepares `buf` (exactly the bytes to write) for a write at `offset` of
    /// `target`. `stale` says the buffer last held read data.
    #[inline]
    pub fn fill(&mut self, buf: &mut [u8], target: u32, offset: u64, stale: bool) {
        if stale {
            self.refresh(buf);
        }
        match self.shared.pattern {
            DataPattern::Zero | DataPattern::Fill(_) => {}
            DataPattern::Random | DataPattern::Compress { .. } => {
                for (i, chunk) in buf.chunks_mut(CHUNK_BYTES).enumerate() {
                    self.stamp(chunk, target, offset + (i * CHUNK_BYTES) as u64);
                }
            }
            DataPattern::Dedup { .. } => {
                for (i, chunk) in buf.chunks_mut(CHUNK_BYTES).enumerate() {
                    if self.rng.next_u64() < self.shared.dup_threshold && chunk.len() == CHUNK_BYTES
                    {
                        let k = (self.rng.next_u64() % DEDUP_POOL_CHUNKS as u64) as usize;
                        chunk.copy_from_slice(
                            &self.shared.dedup_pool[k * CHUNK_BYTES..(k + 1) * CHUNK_BYTES],
                        );
                    } else {
                        self.stamp(chunk, target, offset + (i * CHUNK_BYTES) as u64);
                    }
                }
            }
        }
    }

    #[inline]
    fn stamp(&mut self, chunk: &mut [u8], target: u32, offset: u64) {
        if chunk.len() < 16 {
            return;
        }
        self.sequence = self.sequence.wrapping_add(1);
        let a = offset ^ ((target as u64) << 56);
        chunk[..8].copy_from_slice(&a.to_le_bytes());
        chunk[8..16].copy_from_slice(&self.sequence.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn written_chunks(pattern: DataPattern, writes: usize) -> Vec<Vec<u8>> {
        let mut f = DataFiller::new(pattern, 65536, 1, 0);
        let mut buf = vec![0u8; 16384];
        f.refresh(&mut buf);
        let mut out = Vec::new();
        for i in 0..writes {
            f.fill(&mut buf, 0, (i * 16384) as u64, i % 3 == 0);
            out.extend(buf.chunks(CHUNK_BYTES).map(|c| c.to_vec()));
        }
        out
    }

    /// fio's buffer_pattern: every written buffer holds the pattern from its
    /// start, after reads too, with no stamp breaking it.
    #[test]
    fn a_fill_pattern_repeats_from_every_buffers_start() {
        let pattern = DataPattern::parse("pattern:0xdeadbeef01").unwrap();
        let want: Vec<u8> = [0xde, 0xad, 0xbe, 0xef, 0x01]
            .iter()
            .copied()
            .cycle()
            .take(16384)
            .collect();
        let chunks = written_chunks(pattern, 30);
        let whole: Vec<u8> = chunks.concat();
        for write in whole.chunks(16384) {
            assert_eq!(write, &want[..], "a written buffer strays from the pattern");
        }
    }

    #[test]
    fn random_chunks_are_all_distinct() {
        let chunks = written_chunks(DataPattern::Random, 500);
        let unique: HashSet<_> = chunks.iter().collect();
        assert_eq!(unique.len(), chunks.len());
    }

    #[test]
    fn zero_is_zero() {
        assert!(written_chunks(DataPattern::Zero, 10)
            .iter()
            .all(|c| c.iter().all(|&b| b == 0)));
    }

    #[test]
    fn compress_ratio_shapes_zero_share() {
        let chunks = written_chunks(DataPattern::Compress { ratio: 4.0 }, 100);
        let zeros: usize = chunks
            .iter()
            .map(|c| c.iter().filter(|&&b| b == 0).count())
            .sum();
        let share = zeros as f64 / (chunks.len() * CHUNK_BYTES) as f64;
        // 3/4 zero by construction, plus the random bytes that happen to be 0.
        assert!((share - 0.75).abs() < 0.01, "zero share {share}");
    }

    #[test]
    fn dedup_ratio_is_about_right() {
        for compress in [1.0, 4.0] {
            let chunks = written_chunks(
                DataPattern::Dedup {
                    ratio: 3.0,
                    compress,
                },
                3000,
            );
            let unique: HashSet<_> = chunks.iter().collect();
            let ratio = chunks.len() as f64 / unique.len() as f64;
            // 12000 chunks; unique ~ 4000 + 64 pool chunks.
            assert!((ratio - 3.0).abs() < 0.15, "dedup ratio {ratio}");
            // vdbench's dedupratio with compratio: every chunk, duplicate
            // or not, is 1/compress random bytes and zeros after them.
            let zeros: usize = chunks
                .iter()
                .map(|c| c.iter().filter(|&&b| b == 0).count())
                .sum();
            let share = zeros as f64 / (chunks.len() * CHUNK_BYTES) as f64;
            let want = 1.0 - 1.0 / compress;
            assert!(
                (share - want).abs() < 0.01,
                "zero share {share}, want {want}"
            );
        }
    }
}
