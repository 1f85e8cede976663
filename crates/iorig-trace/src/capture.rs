//! Capturing a block device's I/Os with the kernel's own block tracing.
//!
//! The kernel's blktrace machinery is reached through tracefs, without the
//! blktrace tool: the ftrace `blk` tracer, switched on for one device
//! (`/sys/dev/block/M:m/trace/enable`), writes blktrace's binary records to
//! `trace_pipe` when the `bin` trace option is set and the per-line context
//! is off. Those are the records blkparse reads, merged across CPUs in time
//! order. Only the events an I/O's time and latency need are asked for
//! (`act_mask`): issue, complete and requeue on a device with a request
//! queue; queue and complete on a bio-based one (zram, device-mapper, md),
//! which has no issue event.
//!
//! The device itself is never opened: its number comes from `stat`, and the
//! tracing is switched on and off in sysfs and tracefs. Tracing is global
//! state, so a capture refuses to start while another tracer or event is in
//! use, and puts back every setting it changed when it ends, however it
//! ends.

use crate::blk::{self, Pairing};
use crate::own::Writer;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Why a capture could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CaptureError {
    /// Something on this host is missing or in the way; the text says what
    /// and how to fix it.
    #[error("{0}")]
    Setup(String),
    #[error("{what}: {source}")]
    Io {
        what: String,
        source: std::io::Error,
    },
}

/// What the capture file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutFormat {
    /// iorig's trace format: I/Os with issue time and latency.
    Iorig,
    /// The kernel's blktrace records as they came (for blkparse).
    Blktrace,
}

impl OutFormat {
    pub fn name(self) -> &'static str {
        match self {
            OutFormat::Iorig => "iorig",
            OutFormat::Blktrace => "blktrace",
        }
    }
}

pub struct CaptureOptions {
    pub device: PathBuf,
    pub duration: Duration,
    pub out: PathBuf,
    pub format: OutFormat,
    /// Ring buffer per CPU while capturing, KiB.
    pub buffer_kib: u64,
}

/// What a capture saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CaptureSummary {
    /// blktrace events read from the kernel.
    pub events: u64,
    /// I/Os written (iorig format) or paired (blktrace format).
    pub ios: u64,
    /// Events the kernel dropped because its buffer was full (`overrun`).
    pub lost_events: u64,
    pub elapsed: Duration,
    /// Whether the device is bio-based (Q is the issue).
    pub bio_based: bool,
}

/// The device, checked and described: (major, minor, sysfs directory).
pub fn block_device(path: &Path) -> Result<(u32, u32, PathBuf), CaptureError> {
    let st = rustix::fs::stat(path).map_err(|e| {
        CaptureError::Setup(format!(
            "{}: {e}; give the block device to trace, e.g. /dev/sdb",
            path.display()
        ))
    })?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::BlockDevice {
        return Err(CaptureError::Setup(format!(
            "{} is not a block device; block tracing follows a device such as /dev/sdb (for a file, trace the device under its file system)",
            path.display()
        )));
    }
    let (major, minor) = (rustix::fs::major(st.st_rdev), rustix::fs::minor(st.st_rdev));
    let sys = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
    if !sys.join("trace/enable").exists() {
        return Err(CaptureError::Setup(format!(
            "{}: {} has no trace/enable: this kernel was built without block tracing (CONFIG_BLK_DEV_IO_TRACE); capture on a host whose kernel has it",
            path.display(),
            sys.display()
        )));
    }
    Ok((major, minor, sys))
}

/// The mounted tracefs.
fn tracefs() -> Result<PathBuf, CaptureError> {
    for dir in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        let p = PathBuf::from(dir);
        if p.join("trace_pipe").exists() {
            return Ok(p);
        }
    }
    Err(CaptureError::Setup(
        "tracefs is not mounted; mount it (as root) with: mount -t tracefs nodev /sys/kernel/tracing".into(),
    ))
}

fn read_setting(p: &Path) -> Result<String, CaptureError> {
    std::fs::read_to_string(p)
        .map(|s| s.trim().to_string())
        .map_err(|e| setting_error(p, e))
}

fn write_setting(p: &Path, value: &str) -> Result<(), CaptureError> {
    std::fs::write(p, value).map_err(|e| setting_error(p, e))
}

fn setting_error(p: &Path, e: std::io::Error) -> CaptureError {
    if matches!(e.kind(), std::io::ErrorKind::PermissionDenied) || e.raw_os_error() == Some(1) {
        CaptureError::Setup(format!(
            "{}: {e}: tracing needs root (or CAP_SYS_ADMIN); run iorig trace record as root",
            p.display()
        ))
    } else {
        CaptureError::Io {
            what: p.display().to_string(),
            source: e,
        }
    }
}

/// Settings a capture changed, put back when it is dropped.
struct Restore {
    items: Vec<(PathBuf, String)>,
}

impl Restore {
    fn set(&mut self, p: PathBuf, value: &str, old: String) -> Result<(), CaptureError> {
        write_setting(&p, value)?;
        self.items.push((p, old));
        Ok(())
    }
}

impl Drop for Restore {
    fn drop(&mut self) {
        // Latest first: the tracer goes off before its options change back.
        for (p, old) in self.items.drain(..).rev() {
            let _ = std::fs::write(&p, &old);
        }
    }
}

/// The trace options as they are now: `bin` and `context-info` are set or
/// prefixed with `no`.
fn option_is_set(t: &Path, name: &str) -> Result<bool, CaptureError> {
    let all = read_setting(&t.join("trace_options"))?;
    Ok(all.lines().any(|l| l.trim() == name))
}

/// A capture whose tracing is on: [`Capture::run`] reads it until the
/// duration has passed or `stop` is set. Dropped unrun, it puts every
/// setting back.
pub struct Capture {
    restore: Restore,
    pipe: std::fs::File,
    sink: Sink,
    tracefs: PathBuf,
    dev_number: u32,
    bio_based: bool,
    duration: Duration,
    out: PathBuf,
    started: Instant,
}

/// Checks the device and the host's tracing, makes the output file and
/// switches tracing on for the device.
pub fn start(opts: &CaptureOptions) -> Result<Capture, CaptureError> {
    let (major, minor, sys) = block_device(&opts.device)?;
    let t = tracefs()?;
    let tracers = read_setting(&t.join("available_tracers"))?;
    if !tracers.split_whitespace().any(|x| x == "blk") {
        return Err(CaptureError::Setup(format!(
            "the kernel offers no blk tracer ({}: {tracers}); it was built without CONFIG_BLK_DEV_IO_TRACE",
            t.join("available_tracers").display()
        )));
    }
    let current = read_setting(&t.join("current_tracer"))?;
    if current != "nop" {
        return Err(CaptureError::Setup(format!(
            "tracing is in use: current_tracer is {current}; stop that tracer (echo nop > {}) and try again",
            t.join("current_tracer").display()
        )));
    }
    let events = read_setting(&t.join("set_event"))?;
    if !events.is_empty() {
        return Err(CaptureError::Setup(format!(
            "tracing is in use: events are enabled ({}); disable them (echo > {}) and try again",
            events.lines().take(3).collect::<Vec<_>>().join(", "),
            t.join("set_event").display()
        )));
    }
    if read_setting(&sys.join("trace/enable"))? != "0" {
        return Err(CaptureError::Setup(format!(
            "{} is being traced already (a blktrace running?); stop it and try again",
            opts.device.display()
        )));
    }
    // A device with a request queue has one for its blk-mq hardware queues
    // (a partition's queue is its disk's, one directory up).
    let disk = if sys.join("partition").exists() {
        sys.join("..")
    } else {
        sys.clone()
    };
    let bio_based = !disk.join("mq").exists();
    // The kernel traces a partition in its disk's sectors; iorig's format
    // gives offsets in the device traced, as a replay onto it wants them.
    let offset_base = if sys.join("partition").exists() {
        read_setting(&sys.join("start"))?
            .parse::<u64>()
            .map_err(|e| {
                CaptureError::Setup(format!(
                    "{}: the partition's start is unreadable ({e})",
                    sys.join("start").display()
                ))
            })?
            * 512
    } else {
        0
    };
    let dev_number = (major << 20) | minor;

    let mut restore = Restore { items: Vec::new() };
    let tracing_on = t.join("tracing_on");
    restore.set(tracing_on.clone(), "0", read_setting(&tracing_on)?)?;
    let buffer = t.join("buffer_size_kb");
    let old_buffer = read_setting(&buffer)?;
    // A buffer not used since boot reads "7 (expanded: 1408)": the size it
    // takes when used is the one to put back.
    let old_buffer = match old_buffer.split_once("expanded:") {
        Some((_, n)) => n.trim().trim_end_matches(')').trim().to_string(),
        None => old_buffer
            .split_whitespace()
            .next()
            .unwrap_or("1408")
            .to_string(),
    };
    restore.set(buffer, &opts.buffer_kib.to_string(), old_buffer)?;
    // Clears what the (idle) top-level buffer held.
    write_setting(&t.join("trace"), "")?;
    for (name, want) in [("bin", true), ("context-info", false)] {
        let set = option_is_set(&t, name)?;
        if set != want {
            let (on, off) = (name.to_string(), format!("no{name}"));
            let (value, old) = if want { (on, off) } else { (off, on) };
            restore.set(t.join("trace_options"), &value, old)?;
        }
    }
    let mask = if bio_based {
        "queue,complete"
    } else {
        "issue,complete,requeue"
    };
    restore.set(t.join("current_tracer"), "blk", "nop".into())?;
    // Switching tracing off for the device removes its settings, the mask
    // among them (a mask written before would set tracing up by itself).
    restore.set(sys.join("trace/enable"), "1", "0".into())?;
    write_setting(&sys.join("trace/act_mask"), mask)?;

    let pipe = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags_nonblock()
        .open(t.join("trace_pipe"))
        .map_err(|e| setting_error(&t.join("trace_pipe"), e))?;
    // The output is made once everything else is in place, and taken away
    // again if tracing cannot start: a refused capture leaves no file.
    let out_error = |e| CaptureError::Io {
        what: opts.out.display().to_string(),
        source: e,
    };
    let out = std::fs::File::create(&opts.out).map_err(out_error)?;
    let made = Sink::new(
        opts.format,
        BufWriter::with_capacity(1 << 20, out),
        &opts.device,
        offset_base,
    )
    .map_err(out_error)
    .and_then(|sink| write_setting(&tracing_on, "1").map(|()| sink));
    let sink = match made {
        Ok(sink) => sink,
        Err(e) => {
            let _ = std::fs::remove_file(&opts.out);
            return Err(e);
        }
    };
    Ok(Capture {
        restore,
        pipe,
        sink,
        tracefs: t,
        dev_number,
        bio_based,
        duration: opts.duration,
        out: opts.out.clone(),
        started: Instant::now(),
    })
}

impl Capture {
    /// Reads the kernel's records into the output until the duration has
    /// passed or `stop` is set, then switches tracing off and puts the
    /// settings back.
    pub fn run(self, stop: &AtomicBool) -> Result<CaptureSummary, CaptureError> {
        let Capture {
            restore,
            mut pipe,
            mut sink,
            tracefs: t,
            dev_number,
            bio_based,
            duration,
            out,
            started,
        } = self;
        let out_error = |e| CaptureError::Io {
            what: out.display().to_string(),
            source: e,
        };
        let tracing_on = t.join("tracing_on");
        let mut buf = vec![0u8; 1 << 20];
        let mut summary = CaptureSummary {
            bio_based,
            ..CaptureSummary::default()
        };
        let mut stopping = false;
        loop {
            if !stopping && (started.elapsed() >= duration || stop.load(Ordering::SeqCst)) {
                write_setting(&tracing_on, "0")?;
                summary.elapsed = started.elapsed();
                stopping = true;
            }
            match pipe.read(&mut buf) {
                Ok(0) if stopping => break,
                Ok(0) => std::thread::sleep(Duration::from_millis(10)),
                Ok(n) => sink.feed(&buf[..n], dev_number).map_err(out_error)?,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if stopping {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(CaptureError::Io {
                        what: t.join("trace_pipe").display().to_string(),
                        source: e,
                    })
                }
            }
        }
        summary.lost_events = overruns(&t);
        // The tracer cannot change while its pipe is open.
        drop(pipe);
        drop(restore);
        let (events, ios) = sink.finish().map_err(out_error)?;
        summary.events = events;
        summary.ios = ios;
        Ok(summary)
    }
}

/// Events the kernel lost since the buffer was cleared, summed over CPUs.
fn overruns(t: &Path) -> u64 {
    let Ok(cpus) = std::fs::read_dir(t.join("per_cpu")) else {
        return 0;
    };
    cpus.filter_map(Result::ok)
        .filter_map(|c| std::fs::read_to_string(c.path().join("stats")).ok())
        .flat_map(|s| {
            s.lines()
                .filter_map(|l| l.strip_prefix("overrun:"))
                .filter_map(|v| v.trim().parse::<u64>().ok())
                .collect::<Vec<_>>()
        })
        .sum()
}

trait NonBlock {
    fn custom_flags_nonblock(&mut self) -> &mut Self;
}

impl NonBlock for std::fs::OpenOptions {
    fn custom_flags_nonblock(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
    }
}

/// Where the kernel's bytes go: as they are, or paired into I/Os.
struct Sink {
    format: OutFormat,
    raw: Option<BufWriter<std::fs::File>>,
    own: Option<Writer<BufWriter<std::fs::File>>>,
    pairing: Pairing,
    /// Subtracted from every offset (a partition's start on its disk).
    offset_base: u64,
    /// Bytes of a record cut between two reads.
    carry: Vec<u8>,
    events: u64,
    ios: u64,
}

impl Sink {
    fn new(
        format: OutFormat,
        out: BufWriter<std::fs::File>,
        device: &Path,
        offset_base: u64,
    ) -> std::io::Result<Self> {
        let (raw, own) = match format {
            OutFormat::Blktrace => (Some(out), None),
            OutFormat::Iorig => (
                None,
                Some(Writer::new(out, &[device.display().to_string()])?),
            ),
        };
        Ok(Sink {
            format,
            raw,
            own,
            pairing: Pairing::default(),
            offset_base,
            carry: Vec::new(),
            events: 0,
            ios: 0,
        })
    }

    fn feed(&mut self, bytes: &[u8], dev: u32) -> std::io::Result<()> {
        if let Some(w) = self.raw.as_mut() {
            w.write_all(bytes)?;
        }
        self.carry.extend_from_slice(bytes);
        let mut at = 0;
        while self.carry.len() - at >= blk::RECORD_BYTES {
            let mut rec = [0u8; blk::RECORD_BYTES];
            rec.copy_from_slice(&self.carry[at..at + blk::RECORD_BYTES]);
            let (event, pdu) = blk::decode(&rec)
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
            let whole = blk::RECORD_BYTES + pdu as usize;
            if self.carry.len() - at < whole {
                break;
            }
            at += whole;
            self.events += 1;
            if event.device == dev {
                self.pairing.event(&event, self.events);
            }
        }
        self.carry.drain(..at);
        self.drain(false)
    }

    fn drain(&mut self, end: bool) -> std::io::Result<()> {
        while let Some(r) = self.pairing.pop(end) {
            let r = r.map_err(|(n, e)| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, format!("event {n}: {e}"))
            })?;
            self.ios += 1;
            if let Some(w) = self.own.as_mut() {
                w.write(&crate::Record {
                    device: 0,
                    offset_bytes: r.offset_bytes.saturating_sub(self.offset_base),
                    ..r
                })?;
            }
        }
        Ok(())
    }

    /// Flushes the file: (events, I/Os).
    fn finish(mut self) -> std::io::Result<(u64, u64)> {
        self.drain(true)?;
        match self.format {
            OutFormat::Blktrace => {
                if let Some(mut w) = self.raw.take() {
                    w.flush()?;
                }
            }
            OutFormat::Iorig => {
                if let Some(w) = self.own.take() {
                    w.finish()?;
                }
            }
        }
        Ok((self.events, self.ios))
    }
}
