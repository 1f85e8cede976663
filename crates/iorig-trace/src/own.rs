//! iorig's own trace format: fixed-size binary records, read and written
//! without parsing text, so a trace of 100 M I/Os reads in seconds.
//!
//! ```text
//! header   "IORIGTRC"  8 bytes
//!          version     u16 LE (1)
//!          devices     u16 LE, then per device: name length u16 LE + UTF-8
//! record   t_ns        u64 LE  issue time from the trace's start
//!          latency_ns  u64 LE  completion − issue; u64::MAX: not known
//!          offset      u64 LE  bytes
//!          size        u32 LE  bytes
//!          device      u16 LE  index into the header's devices
//!          op          u8      0 read, 1 write, 2 trim
//!          reserved    u8      0
//! ```
//!
//! Records are in issue order. [`SortingWriter`] takes them in any order (a
//! run's workers complete I/Os out of their issue order) and sorts them in
//! bounded memory: sorted runs spill to temporary files beside the output and
//! are merged at the end.

use crate::stream::Bad;
use crate::{Op, Record};
use std::collections::BinaryHeap;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

pub const MAGIC: &[u8; 8] = b"IORIGTRC";
pub const VERSION: u16 = 1;
pub const RECORD_BYTES: usize = 32;
const NO_LATENCY: u64 = u64::MAX;

fn encode(r: &Record) -> [u8; RECORD_BYTES] {
    let mut b = [0u8; RECORD_BYTES];
    b[0..8].copy_from_slice(&r.t_ns.to_le_bytes());
    b[8..16].copy_from_slice(&r.latency_ns.unwrap_or(NO_LATENCY).to_le_bytes());
    b[16..24].copy_from_slice(&r.offset_bytes.to_le_bytes());
    // Sizes above 4 GiB are refused by the writer before they get here.
    b[24..28].copy_from_slice(&(r.size_bytes as u32).to_le_bytes());
    b[28..30].copy_from_slice(&(r.device as u16).to_le_bytes());
    b[30] = match r.op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Trim => 2,
    };
    b
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(v)
}

/// A record's bytes, or why they are no record.
pub(crate) fn decode(b: &[u8; RECORD_BYTES], devices: usize) -> Result<Record, String> {
    let op = match b[30] {
        0 => Op::Read,
        1 => Op::Write,
        2 => Op::Trim,
        other => {
            return Err(format!(
                "op byte {other} is none of 0 (read), 1 (write), 2 (trim)"
            ))
        }
    };
    let device = u16::from_le_bytes([b[28], b[29]]) as u32;
    if device as usize >= devices {
        return Err(format!(
            "device {device} but the header names {devices} device(s)"
        ));
    }
    let lat = u64_at(b, 8);
    Ok(Record {
        t_ns: u64_at(b, 0),
        latency_ns: (lat != NO_LATENCY).then_some(lat),
        offset_bytes: u64_at(b, 16),
        size_bytes: u32::from_le_bytes([b[24], b[25], b[26], b[27]]) as u64,
        device,
        op,
    })
}

/// Reads the header after the magic: the device names.
pub(crate) fn read_header(r: &mut dyn Read) -> Result<Vec<String>, String> {
    let mut m = [0u8; 8];
    r.read_exact(&mut m)
        .map_err(|e| format!("header cut off ({e})"))?;
    if &m != MAGIC {
        return Err("not an iorig trace (no IORIGTRC magic)".into());
    }
    let mut two = [0u8; 2];
    r.read_exact(&mut two)
        .map_err(|e| format!("header cut off ({e})"))?;
    let version = u16::from_le_bytes(two);
    if version != VERSION {
        return Err(format!(
            "iorig trace version {version}; this iorig reads version {VERSION}"
        ));
    }
    r.read_exact(&mut two)
        .map_err(|e| format!("header cut off ({e})"))?;
    let n = u16::from_le_bytes(two);
    let mut names = Vec::with_capacity(n as usize);
    // 65 535 names of up to 64 KiB each would be 4 GiB (a few kilobytes of
    // zstd): the names are held to what a trace may name.
    let mut total = 0usize;
    for _ in 0..n {
        r.read_exact(&mut two)
            .map_err(|e| format!("header cut off ({e})"))?;
        let len = u16::from_le_bytes(two) as usize;
        total += len;
        if total > crate::stream::MAX_DEVICE_NAME_BYTES {
            return Err(format!(
                "the header's device names pass {} MiB: a damaged file",
                crate::stream::MAX_DEVICE_NAME_BYTES >> 20
            ));
        }
        let mut name = vec![0u8; len];
        r.read_exact(&mut name)
            .map_err(|e| format!("header cut off ({e})"))?;
        names.push(String::from_utf8(name).map_err(|_| "a device name is not UTF-8".to_string())?);
    }
    Ok(names)
}

/// Writes records, in issue order, to an iorig trace.
pub struct Writer<W: Write> {
    out: W,
    devices: usize,
    last_t_ns: u64,
    written: u64,
}

impl<W: Write> Writer<W> {
    /// Writes the header naming `devices` (at most 65 535, names at most
    /// 65 535 bytes).
    pub fn new(mut out: W, devices: &[String]) -> std::io::Result<Self> {
        let bad = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
        let n = u16::try_from(devices.len()).map_err(|_| {
            bad(format!(
                "{} devices; a trace holds at most 65535",
                devices.len()
            ))
        })?;
        let total: usize = devices.iter().map(String::len).sum();
        if total > crate::stream::MAX_DEVICE_NAME_BYTES {
            // The reader refuses such a header.
            return Err(bad(format!(
                "{} MiB of device names; a trace holds at most {}",
                total >> 20,
                crate::stream::MAX_DEVICE_NAME_BYTES >> 20
            )));
        }
        out.write_all(MAGIC)?;
        out.write_all(&VERSION.to_le_bytes())?;
        out.write_all(&n.to_le_bytes())?;
        for d in devices {
            let len = u16::try_from(d.len()).map_err(|_| {
                bad(format!(
                    "a device name of {} bytes; a trace's names are at most 65535",
                    d.len()
                ))
            })?;
            out.write_all(&len.to_le_bytes())?;
            out.write_all(d.as_bytes())?;
        }
        Ok(Writer {
            out,
            devices: devices.len(),
            last_t_ns: 0,
            written: 0,
        })
    }

    pub fn write(&mut self, r: &Record) -> std::io::Result<()> {
        let bad = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, why);
        if r.t_ns < self.last_t_ns {
            return Err(bad(format!(
                "record at {} ns after one at {} ns: records must be in issue order",
                r.t_ns, self.last_t_ns
            )));
        }
        if r.size_bytes > u32::MAX as u64 || r.device as usize >= self.devices {
            return Err(bad(format!(
                "record of {} bytes on device {}: sizes above 4 GiB or unnamed devices cannot be written",
                r.size_bytes, r.device
            )));
        }
        self.last_t_ns = r.t_ns;
        self.written += 1;
        self.out.write_all(&encode(r))
    }

    pub fn written(&self) -> u64 {
        self.written
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Takes records in any order and writes them, sorted by issue time (ties
/// keep their arrival order), to an iorig trace at `path`.
///
/// Up to `run_records` records are held in memory; each full run is sorted
/// and spilled to a temporary file beside `path`, and [`finish`] merges the
/// runs into `path.part`, renamed to `path` when whole. A crash leaves
/// `path.runN` files behind, named after the output.
///
/// [`finish`]: SortingWriter::finish
pub struct SortingWriter {
    path: PathBuf,
    devices: Vec<String>,
    run: Vec<(u64, Record)>,
    run_records: usize,
    spilled: Vec<PathBuf>,
    arrived: u64,
}

impl SortingWriter {
    pub fn new(path: &Path, devices: Vec<String>, run_records: usize) -> Self {
        SortingWriter {
            path: path.to_path_buf(),
            devices,
            run: Vec::new(),
            run_records: run_records.max(1),
            spilled: Vec::new(),
            arrived: 0,
        }
    }

    pub fn push(&mut self, r: Record) -> std::io::Result<()> {
        self.run.push((self.arrived, r));
        self.arrived += 1;
        if self.run.len() >= self.run_records {
            self.spill()?;
        }
        Ok(())
    }

    fn spill(&mut self) -> std::io::Result<()> {
        self.run.sort_unstable_by_key(|(seq, r)| (r.t_ns, *seq));
        let p = PathBuf::from(format!("{}.run{}", self.path.display(), self.spilled.len()));
        // Named before it is written, so a failure still removes it.
        self.spilled.push(p.clone());
        let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(&p)?);
        for (seq, r) in self.run.drain(..) {
            w.write_all(&seq.to_le_bytes())?;
            w.write_all(&encode(&r))?;
        }
        w.flush()?;
        Ok(())
    }

    /// Writes the trace; returns the records written.
    pub fn finish(mut self) -> std::io::Result<u64> {
        // The runs go when `self` is dropped, whatever the merge did.
        self.merge()
    }

    /// Merges into a file beside the trace, renamed over it when whole.
    fn merge(&mut self) -> std::io::Result<u64> {
        let part = PathBuf::from(format!("{}.part", self.path.display()));
        let n = self.merge_into(&part);
        match n {
            Ok(n) => {
                std::fs::rename(&part, &self.path)?;
                Ok(n)
            }
            Err(e) => {
                let _ = std::fs::remove_file(&part);
                Err(e)
            }
        }
    }

    fn merge_into(&mut self, part: &Path) -> std::io::Result<u64> {
        let out = BufWriter::with_capacity(1 << 20, std::fs::File::create(part)?);
        let mut w = Writer::new(out, &self.devices)?;
        if self.spilled.is_empty() {
            self.run.sort_unstable_by_key(|(seq, r)| (r.t_ns, *seq));
            for (_, r) in &self.run {
                w.write(r)?;
            }
            let n = w.written();
            w.finish()?;
            return Ok(n);
        }
        if !self.run.is_empty() {
            self.spill()?;
        }
        let mut runs = Vec::with_capacity(self.spilled.len());
        for p in &self.spilled {
            runs.push(BufReader::with_capacity(1 << 18, std::fs::File::open(p)?));
        }
        let devices = self.devices.len();
        let next = |r: &mut BufReader<std::fs::File>| -> std::io::Result<Option<(u64, Record)>> {
            let mut b = [0u8; 8 + RECORD_BYTES];
            match r.read_exact(&mut b) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
                Err(e) => return Err(e),
            }
            let mut rec = [0u8; RECORD_BYTES];
            rec.copy_from_slice(&b[8..]);
            let r = decode(&rec, devices)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            Ok(Some((u64_at(&b, 0), r)))
        };
        // A min-heap over each run's head: (time, arrival, run).
        let mut heads = BinaryHeap::new();
        let mut held: Vec<Option<Record>> = vec![None; runs.len()];
        for (i, run) in runs.iter_mut().enumerate() {
            if let Some((seq, r)) = next(run)? {
                heads.push(std::cmp::Reverse((r.t_ns, seq, i)));
                held[i] = Some(r);
            }
        }
        while let Some(std::cmp::Reverse((_, _, i))) = heads.pop() {
            if let Some(r) = held[i].take() {
                w.write(&r)?;
            }
            if let Some((seq, r)) = next(&mut runs[i])? {
                heads.push(std::cmp::Reverse((r.t_ns, seq, i)));
                held[i] = Some(r);
            }
        }
        let n = w.written();
        w.finish()?;
        Ok(n)
    }
}

impl Drop for SortingWriter {
    /// Spilled runs are removed, also when the writer is abandoned (a run
    /// whose per-I/O writer failed).
    fn drop(&mut self) {
        for p in &self.spilled {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Record reading for [`crate::read`]: fixed-size records after the header.
pub(crate) struct OwnBody {
    pub(crate) stream: Box<dyn Read + Send>,
    pub(crate) devices: Vec<String>,
    pub(crate) record: u64,
}

impl OwnBody {
    pub(crate) fn next(&mut self) -> Option<Result<Record, Bad>> {
        let mut b = [0u8; RECORD_BYTES];
        let got = match crate::stream::read_full(&mut self.stream, &mut b) {
            Ok(n) => n,
            Err(e) => {
                return Some(Err(Bad {
                    record: self.record + 1,
                    why: format!("cannot be read ({e}); a truncated or damaged file?"),
                    fatal: true,
                }))
            }
        };
        if got == 0 {
            return None;
        }
        self.record += 1;
        if got < RECORD_BYTES {
            return Some(Err(Bad {
                record: self.record,
                why: format!("cut off after {got} of its {RECORD_BYTES} bytes: a truncated file"),
                fatal: false,
            }));
        }
        Some(decode(&b, self.devices.len()).map_err(|why| Bad {
            record: self.record,
            why,
            fatal: false,
        }))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    fn rec(t_ns: u64, offset_bytes: u64) -> Record {
        Record {
            t_ns,
            op: Op::Write,
            device: 0,
            offset_bytes,
            size_bytes: 4096,
            latency_ns: Some(t_ns / 3),
        }
    }

    #[test]
    fn writer_refuses_records_out_of_order() {
        let mut w = Writer::new(Vec::new(), &["d".into()]).unwrap();
        w.write(&rec(10, 0)).unwrap();
        let e = w.write(&rec(5, 0)).unwrap_err().to_string();
        assert!(e.contains("issue order"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// The sorted trace is the input's records, each once, in time order
        /// with ties in arrival order, whether or not runs spilled.
        #[test]
        fn sorting_writer_sorts_in_bounded_runs(
            times in proptest::collection::vec(0u64..1000, 0..400),
            run in 1usize..64,
        ) {
            let d = tempfile::tempdir().unwrap();
            let p = d.path().join("t.iotrace");
            let mut w = SortingWriter::new(&p, vec!["dev".into()], run);
            for (i, t) in times.iter().enumerate() {
                w.push(rec(*t, i as u64)).unwrap();
            }
            prop_assert_eq!(w.finish().unwrap(), times.len() as u64);
            let got: Vec<Record> = crate::open(&p, None, crate::BadRecords::Refuse)
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap();
            let mut want: Vec<Record> = times.iter().enumerate().map(|(i, t)| rec(*t, i as u64)).collect();
            want.sort_by_key(|r| (r.t_ns, r.offset_bytes));
            prop_assert_eq!(got, want);
            // The runs are gone.
            prop_assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        }
    }
}
