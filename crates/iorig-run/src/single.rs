//! One workload as one run (`iorig run`): the run enters the store once its
//! targets passed every check, its step runs with an optional journal, and
//! the result document is returned.

use crate::analyse::analyse_step;
use crate::event::{Event, PlanProgress, Sink};
use crate::results::target_entry;
use crate::step::{Control, Out, StepHooks};
use crate::store::StoreWriter;
use crate::{host_name, journal, RunError, Stop};
use iorig_engine::run::{IntervalSample, Prepared, TargetInfo};
use iorig_engine::verify::VerifySetup;
use iorig_result::{
    ResultDoc, RunInfo, RunKind, RunStatus, StepRole, StepStatus, ToolInfo, SCHEMA,
};
use iorig_spec::Workload;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Options of a single run.
#[derive(Debug, Clone, Default)]
pub struct SingleOptions {
    pub allow_destroy: bool,
    /// Journal the validation state to this file (`verify` workloads).
    pub journal: Option<PathBuf>,
    /// Write every counted I/O to this CSV file ([`crate::iolog`]).
    pub lat_log: Option<PathBuf>,
    /// Write every counted I/O to this iorig block trace ([`crate::iolog`]).
    pub trace_out: Option<PathBuf>,
    /// Replay this trace instead of drawing I/Os ([`crate::replay`]).
    pub replay: Option<crate::replay::ReplaySetup>,
    /// Start the I/O when this gate opens (an agent waits for its
    /// controller's start time); None starts at once.
    pub start: Option<crate::StartGate>,
    /// A plan step run by an agent for its controller: a precondition's
    /// passes over the working set (the byte limit), its trim pass, and a
    /// hot-data step's working set (the range, from this host's target).
    pub byte_passes: Option<u32>,
    pub trim_first: bool,
    pub hot_size_bytes: Option<u64>,
    /// A plan step handed to an agent: what it sizes from this host's
    /// targets and cache ([`crate::sizing`]).
    pub sizing: iorig_spec::HostSizing,
    /// Storage-side sources asked at every interval (`--collect`).
    pub collect: Vec<crate::collect::CollectSource>,
}

/// How a single run ended.
#[derive(Debug)]
pub struct SingleOutcome {
    pub doc: ResultDoc,
    pub status: StepStatus,
    /// I/O errors, warmup included.
    pub io_errors: u64,
    pub validation_errors: u64,
    pub interrupted: bool,
    /// The measured intervals merged (histograms whole), for exporters
    /// that want percentiles of their own choosing (fio's JSON).
    pub stats: iorig_stats::IntervalStats,
    /// On several hosts: each host's, in the order of `doc.hosts`.
    pub host_stats: Vec<iorig_stats::IntervalStats>,
}

/// A run id for a run outside the store: time and a mix of clock and pid.
fn local_id(now: SystemTime) -> String {
    let ts = humantime::format_rfc3339_seconds(now).to_string();
    let compact: String = ts.chars().filter(|c| c.is_ascii_digit()).take(14).collect();
    let nanos = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mix =
        (nanos as u64 ^ (std::process::id() as u64) << 20).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    format!(
        "{}-{}-{:06x}",
        &compact[..8.min(compact.len())],
        &compact[8.min(compact.len())..],
        mix >> 40
    )
}

struct SingleHooks<'a> {
    w: &'a Workload,
    journal: Option<&'a std::path::Path>,
    io_paths: crate::iolog::IoLogPaths,
    /// The targets' paths, once opened (the trace names them).
    targets: Vec<String>,
    /// The per-I/O outputs' writer, once started.
    io_log: Option<crate::iolog::IoLogWriter>,
    replay: Option<&'a crate::replay::ReplaySetup>,
    /// A replay's feed, once started.
    feed: Option<crate::replay::Feed>,
    id: String,
    start: Option<&'a crate::StartGate>,
    byte_passes: Option<u32>,
    trim_first: bool,
}

impl StepHooks for SingleHooks<'_> {
    fn verify_setup(&mut self, prepared: &Prepared) -> Result<Option<Arc<VerifySetup>>, RunError> {
        match self.journal {
            Some(path) => journal::attach(path, self.w, prepared).map(Some),
            None => Ok(None),
        }
    }

    fn opened(&mut self, out: &mut Out<'_>, targets: &[TargetInfo]) -> Result<(), RunError> {
        self.targets = targets.iter().map(|t| t.path.clone()).collect();
        // The run enters the store only once its targets passed every check.
        if let Some(run) = out.store.begin_run(RunKind::Run, None, &self.w.labels)? {
            self.id = run.to_string();
        }
        out.send(Event::RunBegun { id: &self.id });
        out.send(Event::StepBegun {
            index: 0,
            label: "run",
            role: StepRole::Run,
            workload: Some(self.w),
            plan_step: None,
        });
        Ok(())
    }

    fn io_records(&mut self) -> Result<Option<iorig_engine::iolog::IoRecordSender>, RunError> {
        if !self.io_paths.any() {
            return Ok(None);
        }
        let warmup_ns = u64::try_from(self.w.warmup.as_nanos()).unwrap_or(u64::MAX);
        let (tx, writer) = crate::iolog::start(&self.io_paths, warmup_ns, self.targets.clone())?;
        self.io_log = Some(writer);
        Ok(Some(tx))
    }

    fn replay(
        &mut self,
        prepared: &Prepared,
    ) -> Result<Option<iorig_engine::replay::ReplayFeed>, RunError> {
        let Some(setup) = self.replay else {
            return Ok(None);
        };
        let segments = prepared.space.segments().to_vec();
        crate::replay::check_fit(setup, &segments)?;
        let (rx, feed) = crate::replay::start_feed(setup, segments)?;
        self.feed = Some(feed);
        Ok(Some(iorig_engine::replay::ReplayFeed {
            rx,
            async_submit: setup.async_submit,
        }))
    }

    fn byte_limit(&mut self, working_set_bytes: u64) -> Option<u64> {
        self.byte_passes
            .map(|p| working_set_bytes.saturating_mul(u64::from(p)))
    }

    fn trim_first(&self) -> bool {
        self.trim_first
    }

    fn before_io(&mut self, out: &mut Out<'_>, index: usize, stop: &Stop) -> bool {
        let Some(gate) = self.start else {
            return true;
        };
        let Some(at) = gate.wait(stop) else {
            return false;
        };
        let now = SystemTime::now();
        let late_ns = match now.duration_since(at) {
            Ok(d) => i64::try_from(d.as_nanos()).unwrap_or(i64::MAX),
            Err(e) => -i64::try_from(e.duration().as_nanos()).unwrap_or(i64::MAX),
        };
        out.send(Event::Started { index, late_ns });
        true
    }

    fn interval(&mut self, _sample: &IntervalSample) -> (Control, Option<PlanProgress>) {
        (Control::Continue, None)
    }
}

/// Puts the per-I/O outputs in place (the run's records are all in: the
/// step ended and dropped its senders) and says what they hold; a replay's
/// issue timing is handed back.
fn finish_io_log(
    hooks: &mut SingleHooks<'_>,
    out: &mut Out<'_>,
) -> Option<crate::iolog::IssueTiming> {
    let writer = hooks.io_log.take()?;
    match writer.finish() {
        Ok(t) => {
            if let Some(path) = &hooks.io_paths.csv {
                out.notice(&format!(
                    "--lat-log: {} I/O records ({}) in {}",
                    t.records,
                    iorig_spec::format_bytes(t.bytes),
                    path.display()
                ));
            }
            if let Some(path) = &hooks.io_paths.trace {
                out.notice(&format!(
                    "--trace-out: {} I/Os in {p} (iorig trace analyse {p} reads it)",
                    t.records,
                    p = path.display()
                ));
            }
            t.timing
        }
        Err(e) => {
            out.notice(&e.to_string());
            None
        }
    }
}

/// Runs `w` to its end or an interrupt, on this machine.
pub fn run(
    w: &Workload,
    opts: &SingleOptions,
    store: &mut StoreWriter,
    sink: &mut dyn Sink,
    stop: &Stop,
) -> Result<SingleOutcome, RunError> {
    let layer = iorig_spec::WorkloadFile::default();
    run_with(&mut crate::Local, &layer, w, opts, store, sink, stop)
}

/// Runs `w` (resolved from `layer`) to its end or an interrupt, its step on
/// `executor`: this machine, or many hosts.
pub fn run_with(
    executor: &mut dyn crate::StepExecutor,
    layer: &iorig_spec::WorkloadFile,
    w: &Workload,
    opts: &SingleOptions,
    store: &mut StoreWriter,
    sink: &mut dyn Sink,
    stop: &Stop,
) -> Result<SingleOutcome, RunError> {
    if let Some(j) = &opts.journal {
        journal::precheck(j, w)?;
    }
    let now = SystemTime::now();
    let started = humantime::format_rfc3339_seconds(now).to_string();
    // A plan step handed to an agent: its hot range from this host's target.
    let hot;
    let w = match opts.hot_size_bytes {
        Some(bytes) => {
            hot = crate::plan::with_hot_range(w.clone(), bytes, opts.allow_destroy)?;
            &hot
        }
        None => w,
    };
    let sized;
    let w = if opts.sizing.is_empty() {
        w
    } else {
        sized = crate::sizing::apply(w.clone(), &opts.sizing, opts.allow_destroy)?.0;
        &sized
    };
    let mut collector =
        (!opts.collect.is_empty()).then(|| crate::collect::Collector::start(&opts.collect));
    let mut out = Out::new(store, sink);
    out.collect = collector.as_mut();
    let mut hooks = SingleHooks {
        w,
        journal: opts.journal.as_deref(),
        io_paths: crate::iolog::IoLogPaths {
            csv: opts.lat_log.clone(),
            trace: opts.trace_out.clone(),
            timing: opts.replay.is_some(),
        },
        targets: Vec::new(),
        io_log: None,
        replay: opts.replay.as_ref(),
        feed: None,
        id: local_id(now),
        start: opts.start.as_ref(),
        byte_passes: opts.byte_passes,
        trim_first: opts.trim_first,
    };
    let call = crate::StepCall::single(w, layer, opts.allow_destroy);
    let step = executor.run_step(&call, &mut out, stop, &mut hooks);
    let issue_timing = finish_io_log(&mut hooks, &mut out);
    let step = match step {
        Ok(s) => s,
        Err(e) => {
            // Begun in the store (targets passed their checks) but failed
            // before it ran: it must not stay `running` there.
            out.send(Event::StepAborted { index: 0 });
            out.send(Event::RunEnded {
                status: RunStatus::Failed,
            });
            return Err(e);
        }
    };
    let outcome = &step.outcome;
    let interrupted = stop.interrupted();
    let (status, validation_errors) = step.status(interrupted);
    let summary = step.summary();
    out.send(Event::StepEnded {
        index: 0,
        status,
        outcome,
        summary: &summary,
    });
    if let Some(setup) = &step.verify {
        journal::close(setup, outcome.errors, &mut out);
    }
    if outcome.errors > 0 {
        out.notice(&format!(
            "{} I/O error(s); first: {}",
            outcome.errors,
            outcome
                .error_messages
                .first()
                .map(String::as_str)
                .unwrap_or("?")
        ));
    }
    if interrupted {
        out.notice("interrupted: results of the completed intervals are kept");
    }
    let trace_paced = hooks.replay.is_some_and(|r| r.speed.is_some());
    for f in &analyse_step(w, &step, trace_paced) {
        out.send(Event::Finding {
            index: Some(0),
            finding: f,
        });
    }
    out.send(Event::Closing);
    out.send(Event::RunEnded {
        status: RunStatus::from(status),
    });
    let replay = match (hooks.replay, hooks.feed.take(), issue_timing) {
        (Some(setup), Some(feed), Some(timing)) => match feed.finish() {
            Ok(feed) => Some(crate::replay::report(
                setup,
                w.qd,
                feed,
                summary.total.ops,
                &timing,
            )),
            Err(e) => {
                out.notice(&e.to_string());
                None
            }
        },
        _ => None,
    };
    if let Some(r) = &replay {
        out.send(Event::Finding {
            index: Some(0),
            finding: &iorig_result::Finding::Replay(r.clone()),
        });
    }
    let stats = step.outcome.summary.clone();
    let doc = ResultDoc {
        schema: SCHEMA.to_owned(),
        tool: ToolInfo::this(),
        run: RunInfo {
            id: hooks.id,
            started,
            host: host_name(),
            labels: w.labels.clone(),
            engine: step.engine_name.clone(),
            status: RunStatus::from(status),
        },
        workload: w.record(),
        targets: step.targets.iter().map(target_entry).collect(),
        intervals: step.intervals,
        summary,
        hosts: step.hosts,
        jobs: step.jobs.into_iter().map(|j| j.result).collect(),
        replay,
    };
    let host_stats = step.host_stats;
    Ok(SingleOutcome {
        doc,
        status,
        io_errors: step.outcome.errors,
        validation_errors,
        interrupted,
        stats,
        host_stats,
    })
}
