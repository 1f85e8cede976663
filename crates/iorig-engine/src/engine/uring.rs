//! The io_uring engine: fixed (registered) buffers and files, many I/Os in
//! flight, one `io_uring_enter` per [`IoEngine::submit_and_wait`].
//!
//! # Buffer ownership
//!
//! From [`IoEngine::queue`] until its completion is reaped, a slot's buffer
//! belongs to the engine and then to the kernel, which may write into it at any
//! moment. The engine enforces this: a slot is marked busy when it is queued,
//! [`IoEngine::buffer_mut`] returns an empty slice for a busy slot, and queueing
//! a busy slot again is an error. The buffers must also outlive every operation
//! that uses them; see [`UringEngine`]'s `Drop`.

use super::psync::bad_request;
use super::{Completion, IoEngine, IoRequest, OpKind};
use crate::buffers::AlignedBuffers;
use crate::EngineError;
use io_uring::{opcode, register::Probe, squeue, types, IoUring};
use std::io;
use std::mem::ManuallyDrop;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

const NAME: &str = "io_uring";

/// Most slots: the kernel's limit on registered buffers (IORING_MAX_REG_BUFFERS).
pub const MAX_SLOTS: u32 = 1 << 14;

/// How long `Drop` waits for in-flight operations before giving up on them.
const DROP_WAIT: Duration = Duration::from_secs(5);

/// io_uring engine.
///
/// Like the other engines it does not own the file descriptors; they must stay
/// open while the engine lives (the ring holds its own references to registered
/// files, but the fallback without registered files does not).
pub struct UringEngine {
    // Drop order: `Drop::drop` runs first and waits for in-flight operations;
    // then the fields drop in declaration order, the ring (its fd is closed)
    // before anything else. The buffers are in a ManuallyDrop and are freed by
    // `Drop::drop` itself, and only when no operation is in flight.
    ring: IoUring,
    buffers: ManuallyDrop<AlignedBuffers>,
    fds: Vec<RawFd>,
    queued: Vec<IoRequest>,
    /// Per slot: queued or in flight, so its buffer is not ours to hand out.
    busy: Vec<bool>,
    /// Entries pushed to the submission queue whose completion has not been
    /// reaped yet.
    outstanding: u32,
    fixed_buffers: bool,
    fixed_files: bool,
    /// IOSQE_ASYNC on every entry ([`UringEngine::with_async_submit`]).
    async_submit: bool,
    /// The ring was created disabled (for single-issuer mode) and must be
    /// enabled from the thread that submits.
    needs_enable: bool,
    mode: &'static str,
    /// How long Drop waits for in-flight operations ([`DROP_WAIT`]).
    drop_wait: Duration,
    /// Trims queued, done at the next submit, and their completions.
    trims: Vec<IoRequest>,
    trims_done: Vec<Completion>,
}

impl std::fmt::Debug for UringEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UringEngine")
            .field("slots", &self.buffers.slots())
            .field("slot_bytes", &self.buffers.slot_bytes())
            .field("targets", &self.fds.len())
            .field("outstanding", &self.outstanding)
            .field("fixed_buffers", &self.fixed_buffers)
            .field("fixed_files", &self.fixed_files)
            .field("mode", &self.mode)
            .finish()
    }
}

fn engine_err(why: String) -> EngineError {
    EngineError::Engine { engine: NAME, why }
}

/// Errors from `io_uring_enter` that mean "returned early", not failure: the
/// timeout passed, a signal arrived, the completion queue is busy, or the
/// kernel could not take the submissions right now (they stay queued).
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY) | Some(libc::EAGAIN)
    )
}

/// Explains why io_uring cannot be set up.
fn describe_setup_error(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENOSYS) => "io_uring is not available in this kernel (ENOSYS)".to_string(),
        Some(libc::EPERM) | Some(libc::EACCES) => format!(
            "io_uring is not permitted here ({e}; kernel.io_uring_disabled, seccomp or a container policy)"
        ),
        Some(libc::ENOMEM) => {
            format!("io_uring_setup failed: {e} (locked-memory limit, see ulimit -l)")
        }
        _ => format!("io_uring_setup failed: {e}"),
    }
}

/// Builds a ring, trying the cheapest setup first and falling back on kernels
/// that reject a flag (EINVAL). Returns the ring, whether it starts disabled, and
/// a name for the setup chosen.
fn build_ring(entries: u32, cq_entries: u32) -> io::Result<(IoUring, bool, &'static str)> {
    // 6.1+: one submitting thread, completions run only when we ask for them.
    let attempt = IoUring::builder()
        .setup_cqsize(cq_entries)
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_taskrun_flag()
        .setup_submit_all()
        .setup_r_disabled()
        .build(entries);
    let first_err = match attempt {
        Ok(ring) => return Ok((ring, true, "single-issuer+defer-taskrun")),
        Err(e) => e,
    };
    if first_err.raw_os_error() != Some(libc::EINVAL) {
        return Err(first_err);
    }
    // 5.19+.
    if let Ok(ring) = IoUring::builder()
        .setup_cqsize(cq_entries)
        .setup_coop_taskrun()
        .setup_taskrun_flag()
        .setup_submit_all()
        .build(entries)
    {
        return Ok((ring, false, "coop-taskrun"));
    }
    let ring = IoUring::builder().setup_cqsize(cq_entries).build(entries)?;
    Ok((ring, false, "plain"))
}

impl UringEngine {
    /// Checks that io_uring can be used here: a ring can be created, the kernel
    /// has `IORING_FEAT_EXT_ARG` (waits with a timeout, Linux 5.11+) and
    /// supports `READ_FIXED`/`WRITE_FIXED`. `Err` carries a one-line reason.
    pub fn probe() -> Result<(), String> {
        // Test builds: a host without io_uring, for the multi-host tests.
        #[cfg(debug_assertions)]
        if std::env::var_os("IORIG_TEST_NO_IO_URING").is_some() {
            return Err("disabled for a test (IORIG_TEST_NO_IO_URING)".into());
        }
        let ring = IoUring::new(4).map_err(|e| describe_setup_error(&e))?;
        if !ring.params().is_feature_ext_arg() {
            return Err(
                "io_uring lacks IORING_FEAT_EXT_ARG (waits with a timeout need Linux 5.11+)"
                    .to_string(),
            );
        }
        let mut probe = Probe::new();
        ring.submitter()
            .register_probe(&mut probe)
            .map_err(|e| format!("io_uring opcode probe failed: {e}"))?;
        for (code, name) in [
            (opcode::ReadFixed::CODE, "READ_FIXED"),
            (opcode::WriteFixed::CODE, "WRITE_FIXED"),
        ] {
            if !probe.is_supported(code) {
                return Err(format!("io_uring does not support {name} on this kernel"));
            }
        }
        Ok(())
    }

    /// A ring with room for `slots` I/Os in flight over `fds` (indexed by
    /// [`IoRequest::target`]), with `slots` buffers of at least `slot_bytes`.
    pub fn new(fds: &[RawFd], slots: u32, slot_bytes: usize) -> Result<Self, EngineError> {
        if slots > MAX_SLOTS {
            return Err(EngineError::Usage(format!(
                "io_uring supports at most {MAX_SLOTS} I/Os in flight per worker (asked for {slots})"
            )));
        }
        let buffers = AlignedBuffers::new(slots, slot_bytes)?;
        if buffers.slot_bytes() > 1 << 30 {
            return Err(EngineError::Usage(
                "io_uring buffers are limited to 1 GiB per I/O".to_string(),
            ));
        }
        let entries = slots.next_power_of_two();
        let (ring, needs_enable, mode) = build_ring(entries, entries.saturating_mul(2))
            .map_err(|e| engine_err(describe_setup_error(&e)))?;
        if !ring.params().is_feature_ext_arg() {
            return Err(engine_err(
                "kernel lacks IORING_FEAT_EXT_ARG (needs Linux 5.11+)".to_string(),
            ));
        }

        let iovecs = buffers.as_iovecs();
        // SAFETY: every iovec describes one slot of `buffers`, which stays
        // allocated for as long as the ring can use it: it is freed in Drop only
        // after every in-flight operation completed, and leaked otherwise.
        // Registration pins the pages, so the kernel never touches freed memory.
        let fixed_buffers = unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        let fixed_files = fds.is_empty() || ring.submitter().register_files(fds).is_ok();

        Ok(UringEngine {
            ring,
            busy: vec![false; slots as usize],
            buffers: ManuallyDrop::new(buffers),
            fds: fds.to_vec(),
            queued: Vec::with_capacity(slots as usize),
            outstanding: 0,
            fixed_buffers,
            fixed_files,
            async_submit: false,
            needs_enable,
            mode,
            drop_wait: DROP_WAIT,
            trims: Vec::new(),
            trims_done: Vec::new(),
        })
    }

    /// True when the buffers are registered (READ_FIXED/WRITE_FIXED are used);
    /// false when registration failed (e.g. a low locked-memory limit) and plain
    /// READ/WRITE are used instead.
    pub fn uses_fixed_buffers(&self) -> bool {
        self.fixed_buffers
    }

    /// True when the files are registered with the ring.
    pub fn uses_fixed_files(&self) -> bool {
        self.fixed_files
    }

    /// The ring setup in use: `single-issuer+defer-taskrun`, `coop-taskrun` or
    /// `plain`.
    pub fn setup_mode(&self) -> &'static str {
        self.mode
    }

    /// Operations submitted (or pushed) whose completion is not reaped yet.
    pub fn in_flight(&self) -> u32 {
        self.outstanding
    }

    fn enable(&mut self) -> Result<(), EngineError> {
        if self.needs_enable {
            self.ring
                .submitter()
                .register_enable_rings()
                .map_err(|e| engine_err(format!("enabling the ring: {e}")))?;
            self.needs_enable = false;
        }
        Ok(())
    }

    /// Builds the submission entry for a checked request.
    fn entry(&self, req: &IoRequest) -> io_uring::squeue::Entry {
        // SAFETY: `queue` checked that [buf_offset, buf_offset + len) lies inside
        // the slot, so the pointer stays inside the allocation.
        let buf = unsafe { self.buffers.slot_ptr(req.slot).add(req.buf_offset as usize) };
        let fd_raw = self.fds.get(req.target as usize).copied().unwrap_or(-1);
        macro_rules! build {
            ($fd:expr) => {
                match (req.op, self.fixed_buffers) {
                    (OpKind::Read, true) => {
                        opcode::ReadFixed::new($fd, buf, req.len, req.slot as u16)
                            .offset(req.offset)
                            .build()
                    }
                    (OpKind::Write, true) => {
                        opcode::WriteFixed::new($fd, buf, req.len, req.slot as u16)
                            .offset(req.offset)
                            .build()
                    }
                    (OpKind::Read, false) => opcode::Read::new($fd, buf, req.len)
                        .offset(req.offset)
                        .build(),
                    (OpKind::Write, false) => opcode::Write::new($fd, buf, req.len)
                        .offset(req.offset)
                        .build(),
                    // `queue` does trims itself and never makes an entry of
                    // one; a no-op keeps this total.
                    (OpKind::Trim, _) => opcode::Nop::new().build(),
                }
            };
        }
        let entry = if self.fixed_files {
            build!(types::Fixed(req.target))
        } else {
            build!(types::Fd(fd_raw))
        };
        let entry = entry.user_data(req.slot as u64);
        if self.async_submit {
            entry.flags(squeue::Flags::ASYNC)
        } else {
            entry
        }
    }

    /// Every I/O to the kernel's async workers (IOSQE_ASYNC): submission
    /// returns at once even on a device that completes in the submitting
    /// call.
    pub fn with_async_submit(mut self, on: bool) -> Self {
        self.async_submit = on;
        self
    }

    /// Pushes every queued request to the submission queue, submitting first
    /// when it is full.
    fn push_queued(&mut self) -> Result<(), EngineError> {
        let mut done = 0;
        let mut result = Ok(());
        while done < self.queued.len() {
            let req = self.queued[done];
            let entry = self.entry(&req);
            // SAFETY: the entry points into slot `req.slot` of `self.buffers`
            // (checked in `queue`), and `user_data` is the slot. That slot is
            // busy from `queue` until its completion is reaped, so no Rust code
            // reads or writes it meanwhile, and the buffers outlive the
            // operation (see Drop). Registered files/buffers stay registered for
            // the ring's whole life.
            let pushed = unsafe { self.ring.submission().push(&entry) };
            if pushed.is_ok() {
                self.outstanding += 1;
                done += 1;
                continue;
            }
            // Full: hand what is there to the kernel, then retry once.
            if let Err(e) = self.ring.submit() {
                if !is_transient(&e) {
                    result = Err(engine_err(format!("submit: {e}")));
                    break;
                }
            }
            if self.ring.submission().is_full() {
                result = Err(engine_err(
                    "submission queue stays full; the kernel is not taking entries".to_string(),
                ));
                break;
            }
        }
        self.queued.drain(..done);
        result
    }

    /// Completes whatever the kernel finished, if it signalled pending work
    /// (deferred/cooperative task work only runs when we enter the kernel).
    fn flush_task_work(&mut self) -> Result<(), EngineError> {
        if self.outstanding > 0 && !self.needs_enable && self.ring.submission().taskrun() {
            if let Err(e) = self.ring.submit() {
                if !is_transient(&e) {
                    return Err(engine_err(format!("running completions: {e}")));
                }
            }
        }
        Ok(())
    }
}

impl IoEngine for UringEngine {
    fn name(&self) -> &'static str {
        NAME
    }

    /// The slot's buffer, or an empty slice while the slot is queued or in
    /// flight (the kernel may be writing it).
    #[inline]
    fn buffer_mut(&mut self, slot: u32) -> &mut [u8] {
        match self.busy.get(slot as usize) {
            Some(false) => self.buffers.slot_mut(slot),
            _ => &mut [],
        }
    }

    #[inline]
    fn queue(&mut self, req: IoRequest) -> Result<(), EngineError> {
        if (req.target as usize) >= self.fds.len()
            || !self.buffers.contains(req.slot, req.buf_offset, req.len)
        {
            return Err(bad_request(NAME, &req, &self.buffers, self.fds.len()));
        }
        if req.op == OpKind::Trim {
            // Done synchronously at the next submit (see `OpKind::Trim`).
            self.trims.push(req);
            return Ok(());
        }
        match self.busy.get_mut(req.slot as usize) {
            Some(b) if !*b => *b = true,
            _ => {
                return Err(engine_err(format!(
                    "slot {} queued while already in flight",
                    req.slot
                )))
            }
        }
        self.queued.push(req);
        Ok(())
    }

    fn submit_and_wait(
        &mut self,
        min_complete: u32,
        timeout: Option<Duration>,
    ) -> Result<(), EngineError> {
        self.enable()?;
        self.push_queued()?;
        for req in std::mem::take(&mut self.trims) {
            let fd = self.fds.get(req.target as usize).copied().unwrap_or(-1);
            self.trims_done.push(Completion {
                slot: req.slot,
                result: super::psync::trim_range(fd, req.offset, u64::from(req.len)),
            });
        }
        // Never wait for more completions than can come; trims done here
        // count as come.
        let ready = u32::try_from(self.trims_done.len()).unwrap_or(u32::MAX);
        let want = min_complete.saturating_sub(ready).min(self.outstanding) as usize;
        if want == 0 && self.ring.submission().is_empty() {
            return Ok(());
        }
        // A prep failure can make the kernel stop before the end of the
        // submission queue (without IORING_SETUP_SUBMIT_ALL); enter again then.
        for _ in 0..4 {
            let submitter = self.ring.submitter();
            let r = match timeout {
                Some(t) if want > 0 => {
                    let ts = types::Timespec::from(t);
                    let args = types::SubmitArgs::new().timespec(&ts);
                    submitter.submit_with_args(want, &args)
                }
                _ => submitter.submit_and_wait(want),
            };
            match r {
                Ok(_) => {}
                Err(e) if is_transient(&e) => return Ok(()),
                Err(e) => return Err(engine_err(format!("io_uring_enter: {e}"))),
            }
            if self.ring.submission().is_empty() {
                break;
            }
        }
        Ok(())
    }

    fn reap(&mut self, out: &mut Vec<Completion>) -> Result<(), EngineError> {
        out.append(&mut self.trims_done);
        self.flush_task_work()?;
        let busy = &mut self.busy;
        let mut reaped = 0u32;
        for cqe in self.ring.completion() {
            let slot = cqe.user_data() as u32;
            if let Some(b) = busy.get_mut(slot as usize) {
                *b = false;
            }
            reaped += 1;
            out.push(Completion {
                slot,
                result: cqe.result() as i64,
            });
        }
        self.outstanding = self.outstanding.saturating_sub(reaped);
        Ok(())
    }
}

impl Drop for UringEngine {
    fn drop(&mut self) {
        // Requests still in `queued` never reached the kernel. For the rest, wait
        // (bounded) until the kernel is done with their buffers. Closing the ring
        // is not enough: teardown cancels and reaps requests asynchronously, in
        // a kernel worker, after close returns.
        let deadline = Instant::now() + self.drop_wait;
        while self.outstanding > 0 && !self.needs_enable {
            let reaped = self.ring.completion().count() as u32;
            self.outstanding = self.outstanding.saturating_sub(reaped);
            if self.outstanding == 0 {
                break;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            let ts = types::Timespec::from(deadline - now);
            let args = types::SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e) if is_transient(&e) => {}
                // E.g. EEXIST: dropped on a thread that may not wait on a
                // single-issuer ring. Give up and leak the buffers below.
                Err(_) => break,
            }
        }
        if self.outstanding == 0 {
            // Registered files are otherwise released by the ring's teardown,
            // which runs in a kernel worker after the process has gone: a block
            // device opened O_EXCL would stay claimed for a moment, and the next
            // run on it would find it busy. Unregistering drops them now. An
            // error (no files registered, or a foreign thread on a
            // single-issuer ring) leaves them to the teardown, as before.
            let _ = self.ring.submitter().unregister_files();
            // SAFETY: no operation is in flight, so the kernel holds no pointer
            // into the buffers that it could still use (registered pages stay
            // pinned by the ring until it is torn down, but nothing does I/O on
            // them any more); `buffers` is not used after this.
            unsafe { ManuallyDrop::drop(&mut self.buffers) }
        }
        // Otherwise the buffers are leaked on purpose: the kernel may still write
        // into them, and freeing them would let that write land in memory that
        // has been handed out again.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::psync::tests::{one, pattern, req, temp_target};
    use std::os::fd::AsRawFd;

    /// io_uring works on every machine these tests run on (CI's kind
    /// included); a kernel without it fails them rather than passing them
    /// silently.
    fn require_uring() {
        if let Err(why) = UringEngine::probe() {
            panic!("io_uring is not available here ({why}); these tests need it");
        }
    }

    #[test]
    fn write_then_read_back_qd1() {
        require_uring();
        let (_dir, f, direct) = temp_target(1 << 20);
        let mut e = UringEngine::new(&[f.as_raw_fd()], 2, 4096).unwrap();
        eprintln!(
            "O_DIRECT: {direct}, mode {}, fixed buffers {}, fixed files {}",
            e.setup_mode(),
            e.uses_fixed_buffers(),
            e.uses_fixed_files()
        );
        for b in 0..16u64 {
            e.buffer_mut(0).copy_from_slice(&pattern(b, 4096));
            assert_eq!(one(&mut e, req(0, OpKind::Write, b * 4096, 4096)), 4096);
        }
        for b in 0..16u64 {
            e.buffer_mut(1).fill(0);
            assert_eq!(one(&mut e, req(1, OpKind::Read, b * 4096, 4096)), 4096);
            assert_eq!(e.buffer_mut(1), &pattern(b, 4096)[..]);
        }
        assert_eq!(e.in_flight(), 0);
    }

    fn run_qd(e: &mut UringEngine, op: OpKind, slots: u32, blocks: u64, timeout: Option<Duration>) {
        let mut next = 0u64;
        let mut slot_block = vec![0u64; slots as usize];
        let mut out = Vec::new();
        let mut done = 0u64;
        let mut free: Vec<u32> = (0..slots).collect();
        let mut max_in_flight = 0;
        while done < blocks {
            while let Some(s) = free.pop() {
                if next == blocks {
                    free.push(s);
                    break;
                }
                if op == OpKind::Write {
                    e.buffer_mut(s).copy_from_slice(&pattern(next, 4096));
                } else {
                    e.buffer_mut(s).fill(0);
                }
                slot_block[s as usize] = next;
                e.queue(IoRequest {
                    slot: s,
                    target: 0,
                    op,
                    offset: next * 4096,
                    len: 4096,
                    buf_offset: 0,
                })
                .unwrap();
                // A queued slot's buffer is not handed out.
                assert!(e.buffer_mut(s).is_empty());
                next += 1;
            }
            e.submit_and_wait(1, timeout).unwrap();
            max_in_flight = max_in_flight.max(e.in_flight());
            out.clear();
            e.reap(&mut out).unwrap();
            for c in &out {
                assert_eq!(c.result, 4096, "slot {}", c.slot);
                if op == OpKind::Read {
                    let b = slot_block[c.slot as usize];
                    assert_eq!(e.buffer_mut(c.slot), &pattern(b, 4096)[..], "block {b}");
                }
                free.push(c.slot);
                done += 1;
            }
        }
        assert_eq!(max_in_flight, slots);
        assert_eq!(e.in_flight(), 0);
    }

    #[test]
    fn qd32_in_flight_write_and_read_back() {
        require_uring();
        let (_dir, f, _) = temp_target(4 << 20);
        let mut e = UringEngine::new(&[f.as_raw_fd()], 32, 4096).unwrap();
        run_qd(&mut e, OpKind::Write, 32, 1024, None);
        run_qd(&mut e, OpKind::Read, 32, 1024, Some(Duration::from_secs(5)));
        // A fresh engine on the same file sees the data too.
        drop(e);
        let mut e = UringEngine::new(&[f.as_raw_fd()], 32, 4096).unwrap();
        run_qd(
            &mut e,
            OpKind::Read,
            32,
            1024,
            Some(Duration::from_millis(1)),
        );
    }

    #[test]
    fn created_on_one_thread_used_on_another() {
        require_uring();
        let (_dir, f, _) = temp_target(1 << 20);
        let fd = f.as_raw_fd();
        let e = UringEngine::new(&[fd], 8, 4096).unwrap();
        let e = std::thread::spawn(move || {
            let mut e = e;
            run_qd(&mut e, OpKind::Write, 8, 64, None);
            run_qd(&mut e, OpKind::Read, 8, 64, Some(Duration::from_secs(1)));
            e
        })
        .join()
        .unwrap();
        // Dropped here, on the creating thread, with nothing in flight.
        drop(e);
    }

    #[test]
    fn errors_come_back_as_negative_errno() {
        require_uring();
        let (dir, f, _) = temp_target(1 << 20);
        let ro = std::fs::File::open(dir.path().join("t.dat")).unwrap();
        let mut e = UringEngine::new(&[f.as_raw_fd(), ro.as_raw_fd()], 2, 8192).unwrap();
        // Past the end of the file: a zero-length read.
        assert_eq!(one(&mut e, req(0, OpKind::Read, 1 << 20, 4096)), 0);
        // Writing to a read-only target fails with EBADF.
        let mut w = req(1, OpKind::Write, 0, 4096);
        w.target = 1;
        assert_eq!(one(&mut e, w), -(libc::EBADF as i64));
        // Bad requests are refused before they reach the kernel.
        assert!(e.queue(req(2, OpKind::Read, 0, 4096)).is_err());
        let mut r = req(0, OpKind::Read, 0, 4096);
        r.target = 2;
        assert!(e.queue(r).is_err());
        e.queue(req(0, OpKind::Read, 0, 4096)).unwrap();
        assert!(e.queue(req(0, OpKind::Read, 0, 4096)).is_err());
        e.submit_and_wait(1, None).unwrap();
        let mut out = Vec::new();
        e.reap(&mut out).unwrap();
        assert_eq!(
            out,
            vec![Completion {
                slot: 0,
                result: 4096
            }]
        );
    }

    fn fill_pipe(fd: RawFd, byte: u8) {
        let data = [byte; 16];
        // SAFETY: writes 16 bytes from a valid 16-byte array to an open fd.
        let n = unsafe { libc::write(fd, data.as_ptr().cast(), 16) };
        assert_eq!(n, 16);
    }

    #[test]
    fn timeout_returns_without_completions_and_drop_waits() {
        require_uring();
        // A pipe read never completes until written: the wait times out, and
        // dropping the engine with the read in flight must not hang for long or
        // free the buffer early.
        let mut fds = [0; 2];
        // SAFETY: `fds` is a valid array of two ints for pipe(2) to fill.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let mut e = UringEngine::new(&[fds[0]], 1, 4096).unwrap();
        e.queue(req(0, OpKind::Read, 0, 16)).unwrap();
        let t = Instant::now();
        e.submit_and_wait(1, Some(Duration::from_millis(50)))
            .unwrap();
        assert!(t.elapsed() >= Duration::from_millis(40));
        let mut out = Vec::new();
        e.reap(&mut out).unwrap();
        assert!(out.is_empty());
        assert_eq!(e.in_flight(), 1);
        fill_pipe(fds[1], 7);
        e.submit_and_wait(1, Some(Duration::from_secs(5))).unwrap();
        e.reap(&mut out).unwrap();
        assert_eq!(
            out,
            vec![Completion {
                slot: 0,
                result: 16
            }]
        );
        assert_eq!(&e.buffer_mut(0)[..16], &[7u8; 16]);
        // Leave one in flight and drop: Drop reaps it before freeing the buffers.
        e.queue(req(0, OpKind::Read, 0, 16)).unwrap();
        e.submit_and_wait(0, None).unwrap();
        fill_pipe(fds[1], 9);
        drop(e);
        // SAFETY: closing the pipe fds this test opened.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }

    #[test]
    fn drop_leaks_buffers_of_ops_that_never_complete() {
        require_uring();
        let mut fds = [0; 2];
        // SAFETY: `fds` is a valid array of two ints for pipe(2) to fill.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        let mut e = UringEngine::new(&[fds[0]], 2, 4096).unwrap();
        e.drop_wait = Duration::from_millis(100);
        e.queue(req(0, OpKind::Read, 0, 16)).unwrap();
        e.queue(req(1, OpKind::Read, 0, 16)).unwrap();
        e.submit_and_wait(0, None).unwrap();
        assert_eq!(e.in_flight(), 2);
        let t = Instant::now();
        drop(e);
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(90), "{took:?}");
        assert!(took < Duration::from_secs(3), "{took:?}");
        // SAFETY: closing the pipe fds this test opened.
        unsafe {
            libc::close(fds[0]);
            libc::close(fds[1]);
        }
    }

    #[test]
    fn probe_reports() {
        match UringEngine::probe() {
            Ok(()) => {}
            Err(why) => {
                assert!(!why.is_empty());
                eprintln!("io_uring unavailable: {why}");
            }
        }
    }
}
