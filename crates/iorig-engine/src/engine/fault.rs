//! The fault engine, for tests: real synchronous `pread`/`pwrite` like psync,
//! plus faults injected by rules.
//!
//! I/Os are numbered per engine instance from 1, in the order they are carried
//! out (every I/O counts, including one that a rule failed and the worker's
//! retry of it). Rules:
//!
//! | rule | effect |
//! |------|--------|
//! | `eio:after=N` | I/Os N+1, N+2, ... (all after the first N) complete with `-EIO`, doing no I/O |
//! | `eio:at=DUR` | every I/O started `DUR` or later after the run's start completes with `-EIO` |
//! | `enospc:after=N`, `enospc:at=DUR` | the same with `-ENOSPC`, for writes only (reads go through) |
//! | `short:every=N` | I/Os N, 2N, 3N, ... transfer half their length rounded down to 512 bytes (at least 512) and report that; I/Os of 512 bytes or less are not shortened |
//! | `eagain:every=N` | I/Os N, 2N, 3N, ... complete with `-EAGAIN`, doing no I/O |
//! | `stall:after=N:ms=M` | I/O N+1 sleeps M ms before it is carried out (once) |
//! | `stall:at=DUR:ms=M` | the first I/O started `DUR` or later after the run's start sleeps M ms (once) |
//! | `drop:every=N` | writes N, 2N, 3N, ... (counting writes only) report their full length but write nothing |
//!
//! When several rules hit one I/O, a stall happens first, then the first that
//! applies of: EIO, ENOSPC, EAGAIN, drop, short.

use super::psync::{check_request, sync_io};
use super::{Completion, InlineQueue, IoEngine, IoRequest, OpKind};
use crate::buffers::AlignedBuffers;
use crate::EngineError;
use std::fmt;
use std::os::fd::RawFd;
use std::str::FromStr;
use std::time::{Duration, Instant};

const FORMS: &str = "eio:after=N, eio:at=DUR, enospc:after=N, enospc:at=DUR, \
short:every=N, eagain:every=N, stall:after=N:ms=M, stall:at=DUR:ms=M, drop:every=N";

/// When a one-point rule starts to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultTrigger {
    /// After this many I/Os: I/O number N+1 is the first hit.
    After(u64),
    /// At this time since the run's start (the engine's creation until
    /// [`IoEngine::clock_started`] is called).
    At(Duration),
}

impl FaultTrigger {
    #[inline]
    fn hits(self, io_number: u64, elapsed: Duration) -> bool {
        match self {
            FaultTrigger::After(n) => io_number > n,
            FaultTrigger::At(d) => elapsed >= d,
        }
    }
}

impl fmt::Display for FaultTrigger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultTrigger::After(n) => write!(f, "after={n}"),
            FaultTrigger::At(d) => write!(f, "at={}ms", d.as_millis()),
        }
    }
}

/// One fault-injection rule; see the module documentation for the forms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultRule {
    Eio(FaultTrigger),
    Enospc(FaultTrigger),
    Short { every: u64 },
    Eagain { every: u64 },
    Stall { when: FaultTrigger, ms: u64 },
    Drop { every: u64 },
}

impl FaultRule {
    /// Parses a rule such as `eio:after=100` or `stall:at=2s:ms=500`.
    pub fn parse(text: &str) -> Result<FaultRule, EngineError> {
        let bad = |why: &str| {
            EngineError::Usage(format!(
                "fault rule '{text}': {why}; accepted forms: {FORMS}"
            ))
        };
        let mut parts = text.trim().split(':');
        let kind = parts.next().unwrap_or("").trim();
        let mut after = None;
        let mut at = None;
        let mut every = None;
        let mut ms = None;
        for part in parts {
            let (key, value) = part
                .split_once('=')
                .ok_or_else(|| bad(&format!("'{part}' is not KEY=VALUE")))?;
            let (key, value) = (key.trim(), value.trim());
            let number = || {
                value
                    .parse::<u64>()
                    .map_err(|_| bad(&format!("{key}={value}: not a whole number")))
            };
            let dup = match key {
                "after" => after.replace(number()?).is_some(),
                "every" => every.replace(number()?).is_some(),
                "ms" => ms.replace(number()?).is_some(),
                "at" => {
                    let d = iorig_spec::parse_duration(value)
                        .map_err(|e| bad(&format!("at={value}: {e}")))?;
                    at.replace(d).is_some()
                }
                _ => return Err(bad(&format!("unknown key '{key}'"))),
            };
            if dup {
                return Err(bad(&format!("'{key}' given twice")));
            }
        }
        let trigger = || match (after, at) {
            (Some(n), None) => Ok(FaultTrigger::After(n)),
            (None, Some(d)) => Ok(FaultTrigger::At(d)),
            (Some(_), Some(_)) => Err(bad("give after= or at=, not both")),
            (None, None) => Err(bad(&format!("{kind} needs after=N or at=DUR"))),
        };
        let period = || match every {
            Some(0) => Err(bad("every=0; use every=1 or more")),
            Some(n) => Ok(n),
            None => Err(bad(&format!("{kind} needs every=N"))),
        };
        let only = |allowed: &[&str]| {
            let given = [
                ("after", after.is_some()),
                ("at", at.is_some()),
                ("every", every.is_some()),
                ("ms", ms.is_some()),
            ];
            match given.iter().find(|(k, set)| *set && !allowed.contains(k)) {
                Some((k, _)) => Err(bad(&format!("{kind} takes no {k}="))),
                None => Ok(()),
            }
        };
        match kind {
            "eio" | "enospc" => {
                only(&["after", "at"])?;
                let t = trigger()?;
                Ok(if kind == "eio" {
                    FaultRule::Eio(t)
                } else {
                    FaultRule::Enospc(t)
                })
            }
            "short" | "eagain" | "drop" => {
                only(&["every"])?;
                let every = period()?;
                Ok(match kind {
                    "short" => FaultRule::Short { every },
                    "eagain" => FaultRule::Eagain { every },
                    _ => FaultRule::Drop { every },
                })
            }
            "stall" => {
                only(&["after", "at", "ms"])?;
                let when = trigger()?;
                let ms = ms.ok_or_else(|| bad("stall needs ms=M"))?;
                Ok(FaultRule::Stall { when, ms })
            }
            "" => Err(bad("empty rule")),
            other => Err(bad(&format!("unknown fault '{other}'"))),
        }
    }
}

impl FromStr for FaultRule {
    type Err = EngineError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FaultRule::parse(s)
    }
}

impl fmt::Display for FaultRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FaultRule::Eio(t) => write!(f, "eio:{t}"),
            FaultRule::Enospc(t) => write!(f, "enospc:{t}"),
            FaultRule::Short { every } => write!(f, "short:every={every}"),
            FaultRule::Eagain { every } => write!(f, "eagain:every={every}"),
            FaultRule::Stall { when, ms } => write!(f, "stall:{when}:ms={ms}"),
            FaultRule::Drop { every } => write!(f, "drop:every={every}"),
        }
    }
}

/// How many faults an engine has injected, and how many I/Os it has seen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// I/Os carried out or failed (the I/O number of the last one).
    pub ios: u64,
    /// Writes among them.
    pub writes: u64,
    pub eio: u64,
    pub enospc: u64,
    pub short: u64,
    pub eagain: u64,
    pub stall: u64,
    pub dropped: u64,
}

/// Synchronous engine that injects faults; see the module documentation.
///
/// Like [`PsyncEngine`](super::psync::PsyncEngine) it does not own the file
/// descriptors. Any number of I/Os may be queued; all of them complete inside
/// [`IoEngine::submit_and_wait`].
#[derive(Debug)]
pub struct FaultEngine {
    fds: Vec<RawFd>,
    buffers: AlignedBuffers,
    queue: InlineQueue,
    rules: Vec<FaultRule>,
    /// Per rule: a one-shot rule (stall) has fired.
    fired: Vec<bool>,
    start: Instant,
    counts: FaultCounts,
}

impl FaultEngine {
    pub fn new(
        fds: Vec<RawFd>,
        slots: u32,
        slot_bytes: usize,
        rules: Vec<FaultRule>,
    ) -> Result<Self, EngineError> {
        let buffers = AlignedBuffers::new(slots, slot_bytes)?;
        Ok(FaultEngine {
            fds,
            buffers,
            queue: InlineQueue::new(slots),
            fired: vec![false; rules.len()],
            rules,
            start: Instant::now(),
            counts: FaultCounts::default(),
        })
    }

    /// Faults injected so far.
    pub fn counts(&self) -> FaultCounts {
        self.counts
    }

    /// The rules this engine applies.
    pub fn rules(&self) -> &[FaultRule] {
        &self.rules
    }

    fn run_one(&mut self, req: &IoRequest) -> i64 {
        self.counts.ios += 1;
        let n = self.counts.ios;
        let write = req.op == OpKind::Write;
        if write {
            self.counts.writes += 1;
        }
        let writes = self.counts.writes;

        for (rule, fired) in self.rules.iter().zip(self.fired.iter_mut()) {
            if let FaultRule::Stall { when, ms } = *rule {
                if !*fired && when.hits(n, self.start.elapsed()) {
                    *fired = true;
                    self.counts.stall += 1;
                    std::thread::sleep(Duration::from_millis(ms));
                }
            }
        }

        let elapsed = self.start.elapsed();
        let hit = |f: &dyn Fn(&FaultRule) -> bool| self.rules.iter().any(f);
        if hit(&|r| matches!(r, FaultRule::Eio(t) if t.hits(n, elapsed))) {
            self.counts.eio += 1;
            return -(libc::EIO as i64);
        }
        if write && hit(&|r| matches!(r, FaultRule::Enospc(t) if t.hits(n, elapsed))) {
            self.counts.enospc += 1;
            return -(libc::ENOSPC as i64);
        }
        if hit(&|r| matches!(r, FaultRule::Eagain { every } if n.is_multiple_of(*every))) {
            self.counts.eagain += 1;
            return -(libc::EAGAIN as i64);
        }
        if write
            && hit(&|r| matches!(r, FaultRule::Drop { every } if writes.is_multiple_of(*every)))
        {
            self.counts.dropped += 1;
            return req.len as i64;
        }
        let Some(&fd) = self.fds.get(req.target as usize) else {
            return -(libc::EBADF as i64);
        };
        if req.len > 512
            && hit(&|r| matches!(r, FaultRule::Short { every } if n.is_multiple_of(*every)))
        {
            self.counts.short += 1;
            let short = ((req.len / 2) & !511).max(512);
            return sync_io(fd, &self.buffers, req, short);
        }
        sync_io(fd, &self.buffers, req, req.len)
    }
}

impl IoEngine for FaultEngine {
    fn name(&self) -> &'static str {
        "fault"
    }

    fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        self.buffers.slot_mut(slot)
    }

    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        check_request(self.name(), &req, &self.buffers, self.fds.len())?;
        self.queue.push(req);
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        _min_complete: u32,
        _timeout: Option<Duration>,
    ) -> Result<(), EngineError> {
        // run_one takes the whole engine (its counts and rules): the queue
        // is taken out meanwhile and handed back with its capacity.
        let mut queue = std::mem::take(&mut self.queue);
        queue.run(|req| self.run_one(req));
        self.queue = queue;
        Ok(())
    }

    fn clock_started(&mut self, start: Instant) {
        self.start = start;
    }

    fn reap(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        self.queue.reap(out);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::psync::tests::{one, pattern, req, temp_target};
    use std::os::fd::AsRawFd;

    fn rules(list: &[&str]) -> Vec<FaultRule> {
        list.iter().map(|r| FaultRule::parse(r).unwrap()).collect()
    }

    #[test]
    fn parses_every_form_and_round_trips() {
        for text in [
            "eio:after=10",
            "eio:at=1500ms",
            "enospc:after=0",
            "enospc:at=2000ms",
            "short:every=3",
            "eagain:every=1",
            "stall:after=5:ms=100",
            "stall:at=500ms:ms=20",
            "drop:every=4",
        ] {
            let r = FaultRule::parse(text).unwrap();
            assert_eq!(r.to_string(), text);
            assert_eq!(text.parse::<FaultRule>().unwrap(), r);
        }
        assert_eq!(
            FaultRule::parse("eio:at=2s").unwrap(),
            FaultRule::Eio(FaultTrigger::At(Duration::from_secs(2)))
        );
        assert_eq!(
            FaultRule::parse(" stall:ms=7:after=3 ").unwrap(),
            FaultRule::Stall {
                when: FaultTrigger::After(3),
                ms: 7
            }
        );
    }

    #[test]
    fn rejects_bad_rules_naming_the_rule() {
        for text in [
            "",
            "eio",
            "eio:after=x",
            "eio:after=1:at=1s",
            "eio:every=2",
            "eio:after=1:after=2",
            "short:every=0",
            "short",
            "stall:after=3",
            "drop:every=2:ms=3",
            "explode:every=2",
            "eio:at=soon",
            "eagain:every",
        ] {
            let e = FaultRule::parse(text).unwrap_err();
            assert!(e.is_usage(), "{text}");
            let msg = e.to_string();
            assert!(msg.contains(&format!("'{text}'")), "{msg}");
            assert!(msg.contains("stall:after=N:ms=M"), "{msg}");
        }
    }

    #[test]
    fn without_rules_it_is_psync_and_completes_many_queued() {
        let (_dir, f, _) = temp_target(1 << 20);
        let mut e = FaultEngine::new(vec![f.as_raw_fd()], 8, 4096, vec![]).unwrap();
        for s in 0..8u32 {
            e.buffer_mut(s).copy_from_slice(&pattern(s as u64, 4096));
            e.queue(req(s, OpKind::Write, s as u64 * 4096, 4096))
                .unwrap();
        }
        e.submit_and_wait(8, None).unwrap();
        let mut out = Vec::new();
        e.reap(&mut out).unwrap();
        assert_eq!(out.len(), 8);
        assert!(out.iter().all(|c| c.result == 4096));
        for s in 0..8u32 {
            e.buffer_mut(s).fill(0);
            e.queue(req(s, OpKind::Read, (7 - s) as u64 * 4096, 4096))
                .unwrap();
        }
        e.submit_and_wait(8, None).unwrap();
        out.clear();
        e.reap(&mut out).unwrap();
        assert_eq!(out.len(), 8);
        for s in 0..8u32 {
            assert_eq!(e.buffer_mut(s), &pattern((7 - s) as u64, 4096)[..]);
        }
        assert_eq!(e.counts().ios, 16);
        assert_eq!(e.counts().writes, 8);
    }

    #[test]
    fn eio_after_fails_that_io_and_all_later() {
        let (_dir, f, _) = temp_target(1 << 20);
        let mut e =
            FaultEngine::new(vec![f.as_raw_fd()], 1, 4096, rules(&["eio:after=3"])).unwrap();
        let results: Vec<i64> = (0..6)
            .map(|i| one(&mut e, req(0, OpKind::Read, i * 4096, 4096)))
            .collect();
        let eio = -(libc::EIO as i64);
        assert_eq!(results, vec![4096, 4096, 4096, eio, eio, eio]);
        assert_eq!(e.counts().eio, 3);
    }

    #[test]
    fn eio_at_counts_time_since_creation() {
        let (_dir, f, _) = temp_target(1 << 20);
        let mut e = FaultEngine::new(vec![f.as_raw_fd()], 1, 4096, rules(&["eio:at=1s"])).unwrap();
        // (The first read comes well within 1 s of creation, loaded or not.)
        assert_eq!(one(&mut e, req(0, OpKind::Read, 0, 4096)), 4096);
        std::thread::sleep(Duration::from_millis(1100));
        assert_eq!(
            one(&mut e, req(0, OpKind::Read, 0, 4096)),
            -(libc::EIO as i64)
        );
    }

    #[test]
    fn enospc_hits_writes_only() {
        let (_dir, f, _) = temp_target(1 << 20);
        let mut e =
            FaultEngine::new(vec![f.as_raw_fd()], 1, 4096, rules(&["enospc:after=0"])).unwrap();
        assert_eq!(
            one(&mut e, req(0, OpKind::Write, 0, 4096)),
            -(libc::ENOSPC as i64)
        );
        assert_eq!(one(&mut e, req(0, OpKind::Read, 0, 4096)), 4096);
        assert_eq!(e.counts().enospc, 1);
    }

    #[test]
    fn short_every_transfers_half_rounded_to_512() {
        let (_dir, f, _) = temp_target(1 << 20);
        let mut e =
            FaultEngine::new(vec![f.as_raw_fd()], 1, 8192, rules(&["short:every=2"])).unwrap();
        e.buffer_mut(0).fill(0xAB);
        assert_eq!(one(&mut e, req(0, OpKind::Write, 0, 8192)), 8192);
        // I/O 2: short; 8192 / 2 = 4096.
        e.buffer_mut(0).fill(0);
        assert_eq!(one(&mut e, req(0, OpKind::Read, 0, 8192)), 4096);
        assert!(e.buffer_mut(0)[..4096].iter().all(|&b| b == 0xAB));
        assert!(e.buffer_mut(0)[4096..].iter().all(|&b| b == 0));
        assert_eq!(one(&mut e, req(0, OpKind::Read, 0, 3072)), 3072);
        // I/O 4: 3072 / 2 = 1536, already a multiple of 512.
        assert_eq!(one(&mut e, req(0, OpKind::Read, 0, 3072)), 1536);
        assert_eq!(one(&mut e, req(0, OpKind::Read, 0, 1024)), 1024);
        // I/O 6: 1024 / 2 = 512.
        assert_eq!(one(&mut e, req(0, OpKind::Read, 0, 1024)), 512);
        assert_eq!(one(&mut e, req(0, OpKind::Read, 0, 512)), 512);
        // I/O 8: 512 bytes cannot be shortened.
        assert_eq!(one(&mut e, req(0, OpKind::Read, 0, 512)), 512);
        assert_eq!(e.counts().short, 3);
        // A short write writes only the reported bytes.
        let (_dir2, f2, _) = temp_target(1 << 20);
        let mut e =
            FaultEngine::new(vec![f2.as_raw_fd()], 1, 8192, rules(&["short:every=1"])).unwrap();
        e.buffer_mut(0).fill(0xCD);
        assert_eq!(one(&mut e, req(0, OpKind::Write, 0, 8192)), 4096);
        let mut back = vec![0u8; 8192];
        use std::os::unix::fs::FileExt;
        let plain = std::fs::File::open(_dir2.path().join("t.dat")).unwrap();
        plain.read_exact_at(&mut back, 0).unwrap();
        assert!(back[..4096].iter().all(|&b| b == 0xCD));
        assert!(back[4096..].iter().all(|&b| b == 0));
    }

    #[test]
    fn eagain_every_fails_without_io() {
        let (_dir, f, _) = temp_target(1 << 20);
        let mut e =
            FaultEngine::new(vec![f.as_raw_fd()], 1, 4096, rules(&["eagain:every=3"])).unwrap();
        let results: Vec<i64> = (0..7)
            .map(|_| one(&mut e, req(0, OpKind::Read, 0, 4096)))
            .collect();
        let a = -(libc::EAGAIN as i64);
        assert_eq!(results, vec![4096, 4096, a, 4096, 4096, a, 4096]);
        assert_eq!(e.counts().eagain, 2);
    }

    #[test]
    fn drop_every_reports_success_but_writes_nothing() {
        let (_dir, f, _) = temp_target(1 << 20);
        let mut e =
            FaultEngine::new(vec![f.as_raw_fd()], 1, 4096, rules(&["drop:every=2"])).unwrap();
        for b in 0..4u64 {
            e.buffer_mut(0).copy_from_slice(&pattern(b + 1, 4096));
            assert_eq!(one(&mut e, req(0, OpKind::Write, b * 4096, 4096)), 4096);
            // Reads in between do not advance the write count.
            assert_eq!(one(&mut e, req(0, OpKind::Read, b * 4096, 4096)), 4096);
        }
        for b in 0..4u64 {
            assert_eq!(one(&mut e, req(0, OpKind::Read, b * 4096, 4096)), 4096);
            if b % 2 == 0 {
                assert_eq!(e.buffer_mut(0), &pattern(b + 1, 4096)[..], "block {b}");
            } else {
                assert!(e.buffer_mut(0).iter().all(|&x| x == 0), "block {b}");
            }
        }
        assert_eq!(e.counts().dropped, 2);
    }

    #[test]
    fn stall_sleeps_once() {
        let (_dir, f, _) = temp_target(1 << 20);
        let mut e = FaultEngine::new(
            vec![f.as_raw_fd()],
            1,
            4096,
            rules(&["stall:after=1:ms=1000"]),
        )
        .unwrap();
        let mut took = Vec::new();
        for _ in 0..4 {
            let t = Instant::now();
            assert_eq!(one(&mut e, req(0, OpKind::Read, 0, 4096)), 4096);
            took.push(t.elapsed());
        }
        // A plain 4k read is far below the 1 s stall even on a loaded host.
        assert!(took[0] < Duration::from_millis(1000));
        assert!(took[1] >= Duration::from_millis(1000));
        assert!(took[2] < Duration::from_millis(1000));
        assert!(took[3] < Duration::from_millis(1000));
        assert_eq!(e.counts().stall, 1);
    }
}
