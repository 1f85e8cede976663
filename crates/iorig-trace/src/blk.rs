//! blktrace's binary records (`struct blk_io_trace`, version 7) as I/Os.
//!
//! The kernel writes one record per event of a request's life: queued (Q),
//! merged (M/F), got a request (G), plugged (P/U), inserted (I), issued to
//! the driver (D), completed (C), requeued (R). An I/O of the trace is an
//! issue paired with its completion by device and sector: its time is the
//! issue's, its latency the completion's minus the issue's (blkparse's D2C).
//! Devices without a request queue (bio-based: zram, device-mapper, md)
//! have no D: for them the queue event (Q) is the issue. Which kind a device
//! is shows in the trace itself: a D before its first C makes it
//! request-based; a C with no D before it, bio-based.
//!
//! I/Os are handed on in issue order: a completed one waits until every
//! I/O issued before it has completed too (or the trace ends, when the rest
//! go on without a latency). Records are 48 bytes plus a payload the
//! record states (`pdu_len`), in the byte order of the host that wrote
//! them; blktrace's per-CPU files are merged in time order by
//! `blkparse -i NAME -d FILE`, and the kernel's ftrace `blk` tracer in `bin`
//! mode writes them merged already (what `iorig trace record` reads).

use crate::stream::Bad;
use crate::{Op, Record};
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::io::Read;

/// `BLK_IO_TRACE_MAGIC`: the top 24 bits of a record's first word.
pub const MAGIC: u32 = 0x6561_7400;
pub const VERSION: u32 = 7;
pub const RECORD_BYTES: usize = 48;

// Action codes (the low 16 bits of `action`).
const TA_QUEUE: u32 = 1;
const TA_REQUEUE: u32 = 6;
const TA_ISSUE: u32 = 7;
const TA_COMPLETE: u32 = 8;
// Categories (the high 16 bits).
const TC_WRITE: u32 = 1 << 1;
const TC_PC: u32 = 1 << 9;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;

/// Whether `head` starts like a blktrace record (in this host's byte order).
pub fn looks_like(head: &[u8]) -> bool {
    head.len() >= 4
        && u32::from_le_bytes([head[0], head[1], head[2], head[3]]) & 0xffff_ff00 == MAGIC
}

/// Whether `head` is a blktrace record written by a host of the other byte
/// order.
pub fn looks_swapped(head: &[u8]) -> bool {
    head.len() >= 4
        && u32::from_be_bytes([head[0], head[1], head[2], head[3]]) & 0xffff_ff00 == MAGIC
}

/// One event, as much of it as the pairing needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub time_ns: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub device: u32,
    pub error: u16,
}

impl Event {
    fn code(&self) -> u32 {
        self.action & 0xffff
    }
    fn category(&self) -> u32 {
        self.action >> 16
    }
}

/// Decodes one record's fixed part; `Err` says why it is no record.
pub fn decode(b: &[u8; RECORD_BYTES]) -> Result<(Event, u16), String> {
    let u32_at = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let u64_at = |at: usize| {
        let mut v = [0u8; 8];
        v.copy_from_slice(&b[at..at + 8]);
        u64::from_le_bytes(v)
    };
    let magic = u32_at(0);
    if magic & 0xffff_ff00 != MAGIC {
        return Err(format!(
            "magic {magic:#010x} is not blktrace's ({MAGIC:#010x} | version): a damaged file, or records not merged whole"
        ));
    }
    if magic & 0xff != VERSION {
        return Err(format!(
            "blktrace record version {}; this iorig reads version {VERSION}",
            magic & 0xff
        ));
    }
    Ok((
        Event {
            time_ns: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            device: u32_at(36),
            error: u16::from_le_bytes([b[44], b[45]]),
        },
        u16::from_le_bytes([b[46], b[47]]),
    ))
}

/// A device number as `MAJOR:MINOR` (the kernel's 12:20 split).
pub fn device_name(dev: u32) -> String {
    format!("{}:{}", dev >> 20, dev & 0xf_ffff)
}

#[derive(Clone, Copy)]
enum Kind {
    /// Not known yet: only Q events seen.
    Unknown,
    /// Has D events: D is the issue.
    Request,
    /// Has C without D: Q is the issue.
    Bio,
}

struct Pending {
    issue_ns: u64,
    op: Op,
    device: u32,
    sector: u64,
    bytes: u32,
    complete_ns: Option<u64>,
    /// Left out (requeued, or a Q of a device that turned out request-based).
    dropped: bool,
    /// The issue event's record number, for an error about it.
    record: u64,
}

/// Pairs issues with completions and hands I/Os on in issue order.
pub struct Pairing {
    kinds: HashMap<u32, Kind>,
    /// Every pending issue by id; ids grow by one per issue.
    pending: HashMap<u64, Pending>,
    /// Issue order: (issue time, id), earliest first.
    order: BinaryHeap<std::cmp::Reverse<(u64, u64)>>,
    /// Outstanding issues by (device, sector), oldest first.
    by_place: HashMap<(u32, u64), VecDeque<u64>>,
    /// Q events of devices whose kind is not known yet, by device.
    unknown: HashMap<u32, Vec<u64>>,
    next_id: u64,
    first_ns: Option<u64>,
    /// The last issue time handed on: later issues must not be earlier.
    last_out_ns: u64,
    /// Pending issues beyond which the oldest goes on without a latency (a
    /// completion the trace lost must not hold every later I/O forever).
    max_pending: usize,
    /// Completions with no issue in the trace (issued before it began).
    pub unmatched_completions: u64,
    /// Completions with an error status.
    pub errors: u64,
    devices: Vec<u32>,
}

impl Default for Pairing {
    fn default() -> Self {
        Pairing {
            kinds: HashMap::new(),
            pending: HashMap::new(),
            order: BinaryHeap::new(),
            by_place: HashMap::new(),
            unknown: HashMap::new(),
            next_id: 0,
            first_ns: None,
            last_out_ns: 0,
            max_pending: 1 << 20,
            unmatched_completions: 0,
            errors: 0,
            devices: Vec::new(),
        }
    }
}

impl Pairing {
    /// Device numbers in order of first appearance ([`Record::device`]
    /// indexes this list).
    pub fn devices(&self) -> &[u32] {
        &self.devices
    }

    fn device_index(&mut self, dev: u32) -> u32 {
        match self.devices.iter().position(|d| *d == dev) {
            Some(i) => i as u32,
            None => {
                self.devices.push(dev);
                (self.devices.len() - 1) as u32
            }
        }
    }

    fn add(&mut self, e: &Event, record: u64) {
        let op = if e.category() & TC_DISCARD != 0 {
            Op::Trim
        } else if e.category() & TC_WRITE != 0 {
            Op::Write
        } else {
            Op::Read
        };
        let id = self.next_id;
        self.next_id += 1;
        self.pending.insert(
            id,
            Pending {
                issue_ns: e.time_ns,
                op,
                device: e.device,
                sector: e.sector,
                bytes: e.bytes,
                complete_ns: None,
                dropped: false,
                record,
            },
        );
        self.order.push(std::cmp::Reverse((e.time_ns, id)));
        self.by_place
            .entry((e.device, e.sector))
            .or_default()
            .push_back(id);
        if matches!(self.kinds.get(&e.device), None | Some(Kind::Unknown)) {
            let waiting = self.unknown.entry(e.device).or_default();
            waiting.push(id);
            if waiting.len() > self.max_pending {
                // So many queue events with neither an issue nor a
                // completion: they are all this trace has of the device.
                self.settle(e.device, Kind::Bio);
            }
        }
    }

    fn take_place(&mut self, dev: u32, sector: u64) -> Option<u64> {
        let q = self.by_place.get_mut(&(dev, sector))?;
        let id = q.pop_front();
        if q.is_empty() {
            self.by_place.remove(&(dev, sector));
        }
        id
    }

    /// Sets a device's kind once known; a request-based device's pending Qs
    /// are left out (their Ds are the issues).
    fn settle(&mut self, dev: u32, kind: Kind) {
        self.kinds.insert(dev, kind);
        let ids = self.unknown.remove(&dev).unwrap_or_default();
        if let Kind::Request = kind {
            for id in ids {
                if let Some(p) = self.pending.get_mut(&id) {
                    p.dropped = true;
                    let (d, s) = (p.device, p.sector);
                    if let Some(q) = self.by_place.get_mut(&(d, s)) {
                        q.retain(|x| *x != id);
                        if q.is_empty() {
                            self.by_place.remove(&(d, s));
                        }
                    }
                }
            }
        }
    }

    /// Takes event number `record` (1-based, for errors); data-less events
    /// (flushes, passthrough commands, notes) are passed over.
    pub fn event(&mut self, e: &Event, record: u64) {
        let cat = e.category();
        if cat & (TC_NOTIFY | TC_PC) != 0 {
            return;
        }
        let kind = self.kinds.get(&e.device).copied().unwrap_or(Kind::Unknown);
        match e.code() {
            TA_QUEUE if e.bytes > 0 && !matches!(kind, Kind::Request) => self.add(e, record),
            TA_ISSUE if e.bytes > 0 => {
                if !matches!(kind, Kind::Request) {
                    self.settle(e.device, Kind::Request);
                }
                self.add(e, record);
            }
            TA_REQUEUE => {
                // Issued again later with a D of its own.
                if let Some(id) = self.take_place(e.device, e.sector) {
                    if let Some(p) = self.pending.get_mut(&id) {
                        p.dropped = true;
                    }
                }
            }
            // A flush's completion carries no data and names no I/O's sector.
            TA_COMPLETE if e.bytes > 0 => {
                if e.error != 0 {
                    self.errors += 1;
                }
                match self.take_place(e.device, e.sector) {
                    Some(id) => {
                        // A completion of a queue event before any issue
                        // event: the device has no request queue. (One
                        // without a match was issued before the trace
                        // began and says nothing of the kind.)
                        if matches!(kind, Kind::Unknown) {
                            self.settle(e.device, Kind::Bio);
                        }
                        if let Some(p) = self.pending.get_mut(&id) {
                            p.complete_ns = Some(e.time_ns);
                        }
                    }
                    None => self.unmatched_completions += 1,
                }
            }
            _ => {}
        }
    }

    /// The next I/O whose turn has come; with `end`, also those whose
    /// completion the trace does not hold. `Err` (with the issue's record
    /// number) for an issue earlier than one already handed on (records out
    /// of time order).
    pub fn pop(&mut self, end: bool) -> Option<Result<Record, (u64, String)>> {
        loop {
            let std::cmp::Reverse((t, id)) = *self.order.peek()?;
            // A device not known yet holds its Qs back until it is: they
            // might be left out.
            let p = self.pending.get(&id)?;
            let undecided = matches!(
                self.kinds.get(&p.device).copied().unwrap_or(Kind::Unknown),
                Kind::Unknown
            );
            let ready = p.dropped
                || (p.complete_ns.is_some() && !undecided)
                || end
                || self.pending.len() > self.max_pending;
            if !ready {
                return None;
            }
            self.order.pop();
            let Some(p) = self.pending.remove(&id) else {
                continue;
            };
            if p.dropped {
                continue;
            }
            if p.complete_ns.is_none() {
                // Handed on without its completion: no longer completable.
                if let Some(q) = self.by_place.get_mut(&(p.device, p.sector)) {
                    q.retain(|x| *x != id);
                    if q.is_empty() {
                        self.by_place.remove(&(p.device, p.sector));
                    }
                }
            }
            if t < self.last_out_ns {
                return Some(Err((
                    p.record,
                    format!(
                        "issued at {t} ns, before an I/O already read ({} ns): records out of time order; merge blktrace's per-CPU files with blkparse -i NAME -d FILE",
                        self.last_out_ns
                    ),
                )));
            }
            self.last_out_ns = t;
            let first = *self.first_ns.get_or_insert(t);
            let device = self.device_index(p.device);
            return Some(Ok(Record {
                t_ns: t - first,
                op: p.op,
                device,
                offset_bytes: p.sector * 512,
                size_bytes: p.bytes as u64,
                latency_ns: p.complete_ns.map(|c| c.saturating_sub(p.issue_ns)),
            }));
        }
    }
}

/// Record reading for [`crate::read`]: events in, I/Os out.
pub(crate) struct BlkBody {
    pub(crate) stream: Box<dyn Read + Send>,
    pub(crate) pairing: Pairing,
    /// Events read (for record numbers).
    pub(crate) record: u64,
    pub(crate) ended: bool,
}

impl BlkBody {
    pub(crate) fn next(&mut self) -> Option<Result<Record, Bad>> {
        let fatal = |record: u64, why: String| Bad {
            record,
            why,
            fatal: true,
        };
        loop {
            if let Some(r) = self.pairing.pop(self.ended) {
                return Some(r.map_err(|(record, why)| Bad {
                    record,
                    why,
                    fatal: false,
                }));
            }
            if self.ended {
                return None;
            }
            let mut b = [0u8; RECORD_BYTES];
            match crate::stream::read_full(&mut self.stream, &mut b) {
                Ok(0) => {
                    self.ended = true;
                    continue;
                }
                Ok(n) if n < RECORD_BYTES => {
                    self.ended = true;
                    return Some(Err(fatal(
                        self.record + 1,
                        format!("cut off after {n} of its {RECORD_BYTES} bytes: a truncated file"),
                    )));
                }
                Ok(_) => {}
                Err(e) => {
                    self.ended = true;
                    return Some(Err(fatal(
                        self.record + 1,
                        format!("cannot be read ({e}); a truncated or damaged file?"),
                    )));
                }
            }
            self.record += 1;
            let (event, pdu_len) = match decode(&b) {
                Ok(v) => v,
                Err(why) => {
                    // The stream has lost its record boundaries: nothing after
                    // this can be trusted.
                    self.ended = true;
                    return Some(Err(fatal(self.record, why)));
                }
            };
            if pdu_len > 0 {
                let mut skip = (&mut self.stream).take(pdu_len as u64);
                match std::io::copy(&mut skip, &mut std::io::sink()) {
                    Ok(n) if n == pdu_len as u64 => {}
                    _ => {
                        self.ended = true;
                        return Some(Err(fatal(
                            self.record,
                            format!("its {pdu_len}-byte payload is cut off: a truncated file"),
                        )));
                    }
                }
            }
            self.pairing.event(&event, self.record);
        }
    }
}

/// Encodes an event as the kernel does (for tests and generated traces).
pub fn encode(e: &Event) -> [u8; RECORD_BYTES] {
    let mut b = [0u8; RECORD_BYTES];
    b[0..4].copy_from_slice(&(MAGIC | VERSION).to_le_bytes());
    b[8..16].copy_from_slice(&e.time_ns.to_le_bytes());
    b[16..24].copy_from_slice(&e.sector.to_le_bytes());
    b[24..28].copy_from_slice(&e.bytes.to_le_bytes());
    b[28..32].copy_from_slice(&e.action.to_le_bytes());
    b[36..40].copy_from_slice(&e.device.to_le_bytes());
    b[44..46].copy_from_slice(&e.error.to_le_bytes());
    b
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const DEV: u32 = 7 << 20;
    const TC_QUEUE: u32 = 1 << 4;
    const TC_ISSUE: u32 = 1 << 6;
    const TC_COMPLETE: u32 = 1 << 7;

    fn ev(t: u64, code: u32, cat: u32, sector: u64, bytes: u32) -> Event {
        Event {
            time_ns: t,
            sector,
            bytes,
            action: code | (cat << 16),
            device: DEV,
            error: 0,
        }
    }

    fn drain(p: &mut Pairing, end: bool) -> Vec<Record> {
        std::iter::from_fn(|| p.pop(end))
            .map(|r| r.unwrap())
            .collect()
    }

    #[test]
    fn request_based_ios_are_d_to_c_in_issue_order() {
        let mut p = Pairing::default();
        let w = TC_WRITE;
        for e in [
            ev(100, TA_QUEUE, w | TC_QUEUE, 0, 4096),
            ev(150, TA_ISSUE, w | TC_ISSUE, 0, 4096),
            ev(160, TA_QUEUE, TC_QUEUE, 80, 8192),
            ev(170, TA_ISSUE, TC_ISSUE, 80, 8192),
        ] {
            p.event(&e, 0);
        }
        // The second completes first: it waits for the first.
        p.event(&ev(200, TA_COMPLETE, TC_COMPLETE, 80, 8192), 0);
        assert!(drain(&mut p, false).is_empty());
        p.event(&ev(400, TA_COMPLETE, w | TC_COMPLETE, 0, 4096), 0);
        let r = drain(&mut p, false);
        assert_eq!(r.len(), 2);
        assert_eq!(
            (r[0].t_ns, r[0].op, r[0].latency_ns),
            (0, Op::Write, Some(250))
        );
        assert_eq!(
            (r[1].t_ns, r[1].op, r[1].offset_bytes, r[1].latency_ns),
            (20, Op::Read, 80 * 512, Some(30))
        );
    }

    #[test]
    fn bio_based_ios_are_q_to_c() {
        let mut p = Pairing::default();
        p.event(&ev(10, TA_QUEUE, TC_QUEUE, 8, 4096), 0);
        assert!(drain(&mut p, false).is_empty(), "kind not known yet");
        p.event(&ev(30, TA_COMPLETE, TC_COMPLETE, 8, 4096), 0);
        let r = drain(&mut p, false);
        assert_eq!((r.len(), r[0].latency_ns), (1, Some(20)));
    }

    #[test]
    fn a_completion_from_before_the_trace_does_not_decide_the_device() {
        let mut p = Pairing::default();
        // Issued before the capture began: no match, and no verdict.
        p.event(&ev(5, TA_COMPLETE, TC_COMPLETE, 800, 4096), 1);
        p.event(&ev(10, TA_QUEUE, TC_QUEUE, 8, 4096), 2);
        p.event(&ev(12, TA_ISSUE, TC_ISSUE, 8, 4096), 3);
        // A flush's completion (no data, sector 0 or any) completes nothing.
        p.event(&ev(15, TA_COMPLETE, TC_COMPLETE, 8, 0), 4);
        p.event(&ev(20, TA_COMPLETE, TC_COMPLETE, 8, 4096), 5);
        let r = drain(&mut p, true);
        assert_eq!(r.len(), 1, "the I/O once, D to C: {r:?}");
        assert_eq!((r[0].t_ns, r[0].latency_ns), (0, Some(8)));
        assert_eq!(p.unmatched_completions, 1);
    }

    #[test]
    fn requeues_and_lost_completions() {
        let mut p = Pairing::default();
        p.event(&ev(10, TA_ISSUE, TC_ISSUE, 8, 4096), 0);
        p.event(&ev(20, TA_REQUEUE, 0, 8, 4096), 0);
        p.event(&ev(30, TA_ISSUE, TC_ISSUE, 8, 4096), 0);
        p.event(&ev(40, TA_ISSUE, TC_ISSUE, 16, 4096), 0);
        p.event(&ev(50, TA_COMPLETE, TC_COMPLETE, 16, 4096), 0);
        p.event(&ev(60, TA_COMPLETE, TC_COMPLETE, 999, 4096), 0);
        assert!(
            drain(&mut p, false).is_empty(),
            "sector 8 has not completed"
        );
        let r = drain(&mut p, true);
        assert_eq!(r.len(), 2, "the requeued issue is left out");
        assert_eq!((r[0].t_ns, r[0].latency_ns), (0, None));
        assert_eq!((r[1].t_ns, r[1].latency_ns), (10, Some(10)));
        assert_eq!(p.unmatched_completions, 1);
    }
}
