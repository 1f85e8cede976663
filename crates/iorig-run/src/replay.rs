//! `iorig trace replay`: a block trace's I/Os issued against targets at
//! their original times (or scaled, or as fast as possible), through the
//! engine's one worker ([`iorig_engine::replay`]).
//!
//! The trace is read twice, streaming: once here before anything runs
//! ([`survey`]: its span per device, largest I/O, length, alignment), once by
//! the feed thread while the replay runs. Offsets are placed in the targets
//! by [`OffsetMap`]; trace device `d` goes to target `d mod targets`. The
//! timing error of every counted I/O (its issue minus its scheduled time)
//! is gathered from the engine's per-I/O records into an HDR histogram by
//! the run's per-I/O writer ([`crate::iolog::IssueTiming`]).

use crate::iolog::IssueTiming;
use crate::RunError;
use crossbeam_channel::SendTimeoutError;
use iorig_engine::gen::Segment;
use iorig_engine::replay::{ReplayIo, ReplayReceiver, CHUNK_IOS};
use iorig_engine::OpKind;
use iorig_result::ReplayReport;
use iorig_trace::{BadRecords, Format, Op};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// How trace offsets are placed in a target's working set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffsetMap {
    /// Offset modulo the working set: a trace from a larger device folds
    /// onto a smaller target; access locality within it is kept.
    Modulo,
    /// Offsets scaled by working set / the trace's span: the layout keeps
    /// its shape, squeezed or stretched.
    Scale,
    /// Offsets as they are; refused before any I/O when the trace reaches
    /// past the working set or is not aligned.
    Exact,
}

impl OffsetMap {
    pub fn parse(text: &str) -> Result<OffsetMap, String> {
        match text {
            "modulo" => Ok(OffsetMap::Modulo),
            "scale" => Ok(OffsetMap::Scale),
            "exact" => Ok(OffsetMap::Exact),
            other => Err(format!("--map {other}: give modulo, scale or exact")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            OffsetMap::Modulo => "modulo",
            OffsetMap::Scale => "scale",
            OffsetMap::Exact => "exact",
        }
    }
}

/// What a replay is asked to do.
#[derive(Clone, Debug)]
pub struct ReplaySetup {
    pub file: PathBuf,
    pub format: Option<Format>,
    pub bad: BadRecords,
    /// The trace's times divided by this; `None`: as fast as possible.
    pub speed: Option<f64>,
    pub map: OffsetMap,
    pub align_bytes: u64,
    /// io_uring hands every I/O to the kernel's async workers.
    pub async_submit: bool,
    /// What [`survey`] found.
    pub facts: TraceFacts,
}

/// A trace read once through: what a replay must know before it starts.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceFacts {
    pub format: String,
    pub records: u64,
    pub reads: u64,
    /// First to last issue time.
    pub duration_ns: u64,
    pub timed: bool,
    pub max_size_bytes: u64,
    /// Per trace device: the end of its furthest I/O.
    pub span_bytes: Vec<u64>,
    /// Records whose offset or size is not a multiple of the alignment.
    pub unaligned: u64,
    /// The first unaligned record's number, for the message.
    pub first_unaligned: Option<u64>,
    /// I/Os in flight on average (Little's law: Σ latency / duration), when
    /// the trace has latencies.
    pub mean_qd: Option<f64>,
}

/// A replay as the user asks for it: the trace, how to place and time its
/// I/Os, and the workload flags that still apply (targets, size, engine,
/// interval, labels). [`prepare`] fills in what the trace decides.
#[derive(Clone, Debug)]
pub struct Replay {
    /// The trace and how to replay it; its `facts` are [`survey`]'s, filled
    /// in by [`prepare`].
    pub setup: ReplaySetup,
    /// I/Os in flight at most; `None`: 256 when timed (the trace's own
    /// concurrency decides), the trace's mean when as fast as possible.
    pub qd: Option<u32>,
    /// How long at most; `None`: the trace's span plus a minute when timed.
    pub time: Option<String>,
    pub targets: Vec<String>,
    pub size: Option<String>,
    pub engine: Option<iorig_spec::EngineKind>,
    pub interval: String,
    pub labels: std::collections::BTreeMap<String, String>,
}

/// Surveys the trace and derives the run's workload from it: the block size
/// its largest I/O needs, its read share (a label only: the trace decides
/// each I/O), the queue depth and the time; then plans the targets and
/// checks the trace fits them. Nothing is created or written.
pub fn prepare(
    r: Replay,
    allow_destroy: bool,
) -> Result<(iorig_spec::Workload, ReplaySetup), RunError> {
    use iorig_spec::{OneOrMany, StrOrNum, WorkloadFile};
    let mut setup = r.setup;
    let facts = survey(&setup.file, setup.format, setup.bad, setup.align_bytes)?;
    if setup.speed.is_some() && !facts.timed {
        return Err(RunError::usage(format!(
            "{}: the trace has no times (an fio iolog v2 without wait lines); replay it with --afap",
            setup.file.display()
        )));
    }
    let qd = match (r.qd, setup.speed) {
        (Some(0), _) => return Err(RunError::usage("--qd 0: give at least 1")),
        (Some(q), _) => q,
        // Timed: enough slots that the trace's own concurrency is never
        // what holds an I/O back.
        (None, Some(_)) => 256,
        (None, None) => facts.mean_qd.map_or(1, |q| q.ceil().max(1.0) as u32),
    };
    let time = match (&r.time, setup.speed) {
        (Some(t), _) => t.clone(),
        (None, Some(x)) => format!(
            "{}ms",
            (facts.duration_ns as f64 / x / 1e6).ceil() as u64 + 60_000
        ),
        (None, None) => "1d".to_string(),
    };
    let reads_pct = 100.0 * facts.reads as f64 / facts.records.max(1) as f64;
    let bs = facts.max_size_bytes.div_ceil(setup.align_bytes) * setup.align_bytes;
    let text = |v: String| Some(StrOrNum::Str(v));
    let layer = WorkloadFile {
        target: (!r.targets.is_empty()).then(|| OneOrMany::Many(r.targets.clone())),
        size: r.size.clone().and_then(text),
        bs: text(bs.to_string()),
        read: text(format!("{reads_pct:.3}")),
        random: text("100".into()),
        align: text(setup.align_bytes.to_string()),
        qd: text(qd.to_string()),
        engine: r.engine,
        time: text(time),
        interval: text(r.interval.clone()),
        labels: (!r.labels.is_empty()).then(|| r.labels.clone()),
        ..WorkloadFile::default()
    };
    let w = layer
        .resolve(1)
        .map_err(|e| RunError::usage(e.to_string()))?;
    setup.facts = facts;
    // The trace against the targets' working sets, before anything is
    // created or written (planning only looks).
    let planned = iorig_engine::run::plan(&w, allow_destroy)?;
    if setup.async_submit && planned.engine != iorig_spec::EngineKind::IoUring {
        return Err(RunError::usage(format!(
            "--async-submit is for the io_uring engine; this replay runs on {} (drop --async-submit, or use --engine io_uring)",
            planned.engine.name()
        )));
    }
    check_fit(&setup, &planned.segments()?)?;
    Ok((w, setup))
}

fn trace_error(e: iorig_trace::TraceError) -> RunError {
    RunError::usage(e.to_string())
}

/// Reads the trace once: its span, sizes, times and alignment.
pub fn survey(
    file: &std::path::Path,
    format: Option<Format>,
    bad: BadRecords,
    align_bytes: u64,
) -> Result<TraceFacts, RunError> {
    let mut records = iorig_trace::open(file, format, bad).map_err(trace_error)?;
    let mut f = TraceFacts {
        format: records.format().name().to_string(),
        timed: records.timed(),
        ..TraceFacts::default()
    };
    let mut lat_sum_ns: u128 = 0;
    let mut with_lat = 0u64;
    for r in records.by_ref() {
        let r = r.map_err(trace_error)?;
        f.records += 1;
        f.reads += u64::from(r.op == Op::Read);
        f.duration_ns = r.t_ns;
        f.max_size_bytes = f.max_size_bytes.max(r.size_bytes);
        let d = r.device as usize;
        if f.span_bytes.len() <= d {
            f.span_bytes.resize(d + 1, 0);
        }
        let end = r.offset_bytes.saturating_add(r.size_bytes);
        f.span_bytes[d] = f.span_bytes[d].max(end);
        if r.offset_bytes % align_bytes != 0 || r.size_bytes % align_bytes != 0 {
            f.unaligned += 1;
            f.first_unaligned.get_or_insert(f.records);
        }
        if let Some(l) = r.latency_ns {
            lat_sum_ns += u128::from(l);
            with_lat += 1;
        }
    }
    // A v2 iolog is timed once a `wait` line has been read.
    f.timed = records.timed();
    if f.records == 0 {
        return Err(RunError::usage(format!(
            "{}: no I/Os to replay",
            file.display()
        )));
    }
    if with_lat == f.records && f.duration_ns > 0 {
        f.mean_qd = Some(lat_sum_ns as f64 / f.duration_ns as f64);
    }
    Ok(f)
}

/// Checks the trace against the targets' working sets before any I/O.
pub fn check_fit(setup: &ReplaySetup, segments: &[Segment]) -> Result<(), RunError> {
    let f = &setup.facts;
    let n = segments.len().max(1);
    for (d, span) in f.span_bytes.iter().enumerate() {
        let seg = &segments[d % n];
        let size = f.max_size_bytes.div_ceil(setup.align_bytes) * setup.align_bytes;
        if size > seg.len {
            return Err(RunError::usage(format!(
                "the trace's largest I/O ({} bytes) does not fit in target {}'s working set ({} bytes); give a larger target",
                f.max_size_bytes, seg.target, seg.len
            )));
        }
        if setup.map == OffsetMap::Exact && *span > seg.len {
            return Err(RunError::usage(format!(
                "--map exact: the trace's device {d} reaches byte {span} but target {} has {} bytes to test; give --map modulo or scale, or a larger target",
                seg.target, seg.len
            )));
        }
    }
    if setup.map == OffsetMap::Exact && f.unaligned > 0 {
        return Err(RunError::usage(format!(
            "--map exact: {} records (the first is record {}) have an offset or size that is not a multiple of --align {}; give --align 512 for a target that takes it, or --map modulo",
            f.unaligned,
            f.first_unaligned.unwrap_or(0),
            setup.align_bytes
        )));
    }
    Ok(())
}

/// Where an I/O of `len` bytes at trace offset `offset` goes in `seg`.
pub fn place(map: OffsetMap, align: u64, span: u64, seg: &Segment, offset: u64, len: u64) -> u64 {
    let room = seg.len.saturating_sub(len);
    let rel = match map {
        OffsetMap::Exact => offset,
        OffsetMap::Modulo => offset % seg.len,
        OffsetMap::Scale => ((offset as u128 * seg.len as u128) / u128::from(span.max(1))) as u64,
    };
    seg.start + (rel.min(room) / align) * align
}

/// The running feed: the thread and what it reports when done.
pub struct Feed {
    handle: JoinHandle<Result<FeedTotals, String>>,
    /// Set when the run has ended: the feed stops sending, without waiting
    /// for a worker the run abandoned (stuck on a hung device), which still
    /// holds the channel.
    closing: Arc<AtomicBool>,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct FeedTotals {
    pub sent: u64,
    pub realigned: u64,
}

/// Starts the thread that reads the trace and sends its I/Os, mapped onto
/// `segments`, to the worker.
pub fn start_feed(
    setup: &ReplaySetup,
    segments: Vec<Segment>,
) -> Result<(ReplayReceiver, Feed), RunError> {
    let (tx, rx) = iorig_engine::replay::channel();
    let records = iorig_trace::open(&setup.file, setup.format, setup.bad).map_err(trace_error)?;
    let setup = setup.clone();
    let closing = Arc::new(AtomicBool::new(false));
    let seen = closing.clone();
    // Hands a chunk over; false once nobody will take it (the run ended).
    let send = move |chunk: Vec<ReplayIo>| {
        let mut chunk = chunk;
        loop {
            match tx.send_timeout(chunk, SEND_POLL) {
                Ok(()) => return true,
                Err(SendTimeoutError::Disconnected(_)) => return false,
                Err(SendTimeoutError::Timeout(c)) if !seen.load(Ordering::Acquire) => chunk = c,
                Err(SendTimeoutError::Timeout(_)) => return false,
            }
        }
    };
    let handle = std::thread::Builder::new()
        .name("iorig-replay-feed".into())
        .spawn(move || {
            crate::iolog::lower_priority();
            let n = segments.len().max(1);
            let align = setup.align_bytes;
            let mut totals = FeedTotals::default();
            let mut chunk = Vec::with_capacity(CHUNK_IOS);
            for r in records {
                let r = r.map_err(|e| e.to_string())?;
                let d = r.device as usize;
                let seg = &segments[d % n];
                let len = r.size_bytes.div_ceil(align) * align;
                let span = setup.facts.span_bytes.get(d).copied().unwrap_or(seg.len);
                let offset = place(setup.map, align, span, seg, r.offset_bytes, len);
                if len != r.size_bytes || r.offset_bytes % align != 0 {
                    totals.realigned += 1;
                }
                chunk.push(ReplayIo {
                    due_ns: setup.speed.map(|x| (r.t_ns as f64 / x) as u64),
                    op: match r.op {
                        Op::Read => OpKind::Read,
                        Op::Write => OpKind::Write,
                        Op::Trim => OpKind::Trim,
                    },
                    target: seg.target,
                    offset,
                    len: len as u32,
                });
                if chunk.len() == CHUNK_IOS {
                    totals.sent += chunk.len() as u64;
                    let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK_IOS));
                    if !send(full) {
                        // The run ended (stopped, or its time limit).
                        return Ok(totals);
                    }
                }
            }
            totals.sent += chunk.len() as u64;
            send(chunk);
            Ok(totals)
        })
        .map_err(|e| RunError::runtime(format!("starting the replay feed: {e}")))?;
    // Read ahead before the run starts, so the first seconds' parsing does
    // not compete with the worker for a CPU.
    let until = std::time::Instant::now() + PREFILL_LIMIT;
    while rx.len() < iorig_engine::replay::CHANNEL_CHUNKS
        && !handle.is_finished()
        && std::time::Instant::now() < until
    {
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    Ok((rx, Feed { handle, closing }))
}

/// How often a feed waiting for room looks whether the run has ended.
const SEND_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// How long a replay waits for its feed to read ahead before it starts.
const PREFILL_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

impl Feed {
    /// Stops the feed (the run has ended) and says what it sent.
    pub fn finish(self) -> Result<FeedTotals, RunError> {
        self.closing.store(true, Ordering::Release);
        match self.handle.join() {
            Ok(Ok(t)) => Ok(t),
            Ok(Err(e)) => Err(RunError::runtime(format!("replay: {e}"))),
            Err(_) => Err(RunError::runtime("replay: the feed thread panicked")),
        }
    }
}

/// The report of a finished replay.
pub fn report(
    setup: &ReplaySetup,
    qd: u32,
    feed: FeedTotals,
    issued: u64,
    timing: &IssueTiming,
) -> ReplayReport {
    ReplayReport {
        trace: setup.file.display().to_string(),
        format: setup.facts.format.clone(),
        records: setup.facts.records,
        issued,
        speed: setup.speed,
        qd,
        map: setup.map.name().to_string(),
        align_bytes: setup.align_bytes,
        realigned: feed.realigned,
        timing_error_ns: (setup.speed.is_some() && !timing.hist.is_empty())
            .then(|| timing.hist.summary()),
        late_over_20us: timing.over_20us,
        late_over_1ms: timing.over_1ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_land_aligned_inside_the_working_set() {
        let seg = Segment {
            target: 0,
            start: 1 << 20,
            len: 64 << 20,
        };
        // Modulo folds, scale squeezes, both stay in and aligned.
        let m = place(
            OffsetMap::Modulo,
            4096,
            1 << 40,
            &seg,
            (64 << 20) + 5000,
            8192,
        );
        assert_eq!(m, (1 << 20) + 4096);
        let s = place(OffsetMap::Scale, 4096, 128 << 20, &seg, 64 << 20, 4096);
        assert_eq!(s, (1 << 20) + (32 << 20));
        // The last bytes of the span: the I/O still fits.
        let end = place(
            OffsetMap::Scale,
            4096,
            128 << 20,
            &seg,
            (128 << 20) - 512,
            4096,
        );
        assert!(end + 4096 <= seg.start + seg.len);
        assert_eq!(
            place(OffsetMap::Exact, 512, 0, &seg, 512, 512),
            (1 << 20) + 512
        );
    }
}
