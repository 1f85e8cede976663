//! The agent: a long-running gRPC server on a load host. It runs one step
//! at a time for a controller with the same runner `iorig run` uses, so it
//! keeps every target safety rule of the CLI: foreign data is refused as
//! on the command line, and `--allow-destroy` takes effect only when the
//! agent itself was started with it.

use crate::proto::agent_server::{Agent, AgentServer};
use crate::proto::{self, run_message::Msg, RunMessage};
use crate::{wire, AgentError, AUTH_KEY, PROTOCOL_MAJOR, PROTOCOL_MINOR};
use iorig_run::single::SingleOptions;
use iorig_run::{Event, RunError, Sink, StartGate, Stop, StoreWriter};
use iorig_spec::{Workload, WorkloadFile};
use iorig_stats::sampler::system::SystemFacts;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

/// How an agent is configured (its command line).
#[derive(Debug, Clone)]
pub struct AgentConfig {
    pub listen: SocketAddr,
    /// Every request must carry this token; required off loopback.
    pub token: Option<String>,
    /// This agent allows a controller's `--allow-destroy`.
    pub allow_destroy: bool,
    /// Each run's own result document is written here as `RUN_ID.json`.
    pub results_dir: Option<PathBuf>,
    /// Each run is also recorded in this store.
    pub db: Option<iorig_store::Location>,
    /// Each run's figures also go to these Prometheus metrics.
    pub metrics: Option<iorig_run::metrics::Metrics>,
    /// Mutual TLS: only controllers with a certificate of this CA connect.
    pub tls: Option<crate::TlsFiles>,
}

impl AgentConfig {
    /// Refuses a configuration that would let anyone on a network run I/O
    /// here, and makes a missing `--results-dir`.
    pub fn check(&self) -> Result<(), AgentError> {
        if !self.listen.ip().is_loopback() && self.token.is_none() && self.tls.is_none() {
            return Err(AgentError::Usage(format!(
                "--listen {}: an agent off the loopback address needs authentication; give --token-file FILE (the controller uses the same file) or --tls-cert/--tls-key/--tls-ca",
                self.listen
            )));
        }
        if let Some(d) = &self.results_dir {
            if !d.is_dir() {
                // Made as every output directory is (report --out): one
                // new directory in one that exists, never over a file or a
                // link; a missing parent is refused.
                iorig_outfile::create_dir("--results-dir", d)
                    .map_err(|e| AgentError::Usage(e.to_string()))?;
            }
            // Proven writable now, not after a controller's run filled
            // its targets.
            iorig_outfile::check_dir_writable("--results-dir", d)
                .map_err(|e| AgentError::Usage(e.to_string()))?;
        }
        Ok(())
    }
}

/// The run an agent is doing.
struct Active {
    run_id: String,
    stop: Stop,
    gate: StartGate,
    renewed: Arc<Mutex<Instant>>,
}

struct Service {
    config: AgentConfig,
    active: Arc<Mutex<Option<Active>>>,
    instance_id: String,
    /// Test builds: a clock this far off (IORIG_TEST_CLOCK_OFFSET_NS).
    clock_offset_ns: i64,
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A test build's agent may be told to run with its clock off, so the
/// tests can show the controller measures and corrects it.
#[cfg(debug_assertions)]
fn test_env_i64(name: &str) -> Option<i64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}
#[cfg(not(debug_assertions))]
fn test_env_i64(_name: &str) -> Option<i64> {
    None
}

fn status_of(e: RunError) -> Status {
    match e {
        RunError::Usage(m) => Status::invalid_argument(m),
        RunError::Interrupted(m) => Status::cancelled(m),
        other => Status::internal(other.to_string()),
    }
}

impl Service {
    /// Applies `f` to run `run_id` if it is the one running; whether it was.
    fn with_run(&self, run_id: &str, f: impl FnOnce(&Active)) -> Result<bool, Status> {
        let active = self
            .active
            .lock()
            .map_err(|_| Status::internal("agent state poisoned"))?;
        Ok(match active.as_ref() {
            Some(a) if a.run_id == run_id => {
                f(a);
                true
            }
            _ => false,
        })
    }

    fn protocol_major(&self) -> u32 {
        test_env_i64("IORIG_TEST_PROTOCOL_MAJOR")
            .and_then(|v| u32::try_from(v).ok())
            .unwrap_or(PROTOCOL_MAJOR)
    }

    /// The workload of a request, resolved here (directory targets are
    /// looked up on this host).
    fn workload(&self, req: &proto::StepRequest) -> Result<Workload, Status> {
        let mut layer: WorkloadFile = serde_json::from_str(&req.workload_json).map_err(|e| {
            Status::invalid_argument(format!(
                "the controller sent a workload this agent cannot read: {e}"
            ))
        })?;
        layer.take_directory_target(|t| Path::new(t).is_dir());
        let seed = layer.seed.unwrap_or(1);
        layer
            .resolve(seed)
            .map_err(|e| Status::invalid_argument(e.to_string()))
    }

    fn allow_destroy(&self, req: &proto::StepRequest) -> Result<bool, Status> {
        if req.allow_destroy && !self.config.allow_destroy {
            return Err(Status::permission_denied(format!(
                "this agent ({}) does not allow --allow-destroy; start it with `iorig agent --allow-destroy` if its targets may be overwritten",
                iorig_run::host_name()
            )));
        }
        Ok(req.allow_destroy)
    }
}

#[tonic::async_trait]
impl Agent for Service {
    async fn hello(
        &self,
        _req: Request<proto::HelloRequest>,
    ) -> Result<Response<proto::HelloReply>, Status> {
        let mut capabilities = vec![
            "engine:psync".to_string(),
            "engine:null".to_string(),
            "fs".to_string(),
        ];
        if iorig_engine::engine::UringEngine::probe().is_ok() {
            capabilities.push("engine:io_uring".into());
        }
        Ok(Response::new(proto::HelloReply {
            tool_version: crate::tool_version().into(),
            protocol_major: self.protocol_major(),
            protocol_minor: PROTOCOL_MINOR,
            hostname: iorig_run::host_name(),
            capabilities,
            allow_destroy: self.config.allow_destroy,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            instance_id: self.instance_id.clone(),
            system_json: serde_json::to_string(&SystemFacts::gather()).unwrap_or_default(),
        }))
    }

    async fn clock(
        &self,
        _req: Request<proto::ClockRequest>,
    ) -> Result<Response<proto::ClockReply>, Status> {
        Ok(Response::new(proto::ClockReply {
            agent_unix_ns: now_ns() + self.clock_offset_ns,
        }))
    }

    async fn check(
        &self,
        req: Request<proto::StepRequest>,
    ) -> Result<Response<proto::CheckReply>, Status> {
        let req = req.into_inner();
        let w = self.workload(&req)?;
        let allow = self.allow_destroy(&req)?;
        let sizing = sizing_of(&req);
        let (planned, sized) = tokio::task::spawn_blocking(move || {
            // Sized as the run will be, from this host's targets and cache.
            let (w, sized) = iorig_run::sizing::apply(w, &sizing, allow)?;
            let planned = iorig_engine::run::plan(&w, allow).map_err(RunError::from)?;
            let line = sized.map(|s| s.line(sizing.cache_pct, sizing.threads_per_target));
            Ok::<_, RunError>((planned, line))
        })
        .await
        .map_err(|e| Status::internal(e.to_string()))?
        .map_err(status_of)?;
        Ok(Response::new(proto::CheckReply {
            engine: planned.engine.name().to_string(),
            notices: planned.notices.clone(),
            sizing: sized.unwrap_or_default(),
            targets: planned
                .target_infos()
                .iter()
                .map(wire::target_msg)
                .collect(),
        }))
    }

    type RunStream = ReceiverStream<Result<RunMessage, Status>>;

    async fn run(
        &self,
        req: Request<proto::StepRequest>,
    ) -> Result<Response<Self::RunStream>, Status> {
        let req = req.into_inner();
        let w = self.workload(&req)?;
        let allow_destroy = self.allow_destroy(&req)?;
        let lease = Duration::from_millis(req.lease_ms.clamp(500, 3_600_000));
        let stop = Stop::new();
        let gate = StartGate::new();
        let renewed = Arc::new(Mutex::new(Instant::now()));
        // The run before may still be ending: one told to stop (its
        // controller gone) writing its result, or one whose controller has
        // its result and sends the next step while the run's thread closes
        // its files (a loaded host made a plan's next step find the agent
        // busy with the step before). Give it up to 3 s to finish (the
        // controller's call allows 5 s); a run still going after that is
        // another controller's.
        for _ in 0..60 {
            let busy = self
                .active
                .lock()
                .map_err(|_| Status::internal("agent state poisoned"))?
                .is_some();
            if !busy {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        {
            let mut active = self
                .active
                .lock()
                .map_err(|_| Status::internal("agent state poisoned"))?;
            if let Some(a) = active.as_ref() {
                return Err(Status::failed_precondition(format!(
                    "this agent is busy with run {}; wait for it to end or stop it",
                    a.run_id
                )));
            }
            // Until the controller says at Start what it calls this run,
            // the series carry the agent's own id.
            if let Some(m) = &self.config.metrics {
                m.set_origin(None, None);
            }
            *active = Some(Active {
                run_id: req.run_id.clone(),
                stop: stop.clone(),
                gate: gate.clone(),
                renewed: renewed.clone(),
            });
        }
        // The run's events (from its own thread) and the stream to the
        // controller, joined by a task that adds heartbeats, watches the
        // lease and stops the run when the controller is gone.
        let (ev_tx, mut ev_rx) = mpsc::channel::<Result<RunMessage, Status>>(1024);
        let (out_tx, out_rx) = mpsc::channel::<Result<RunMessage, Status>>(64);
        let config = self.config.clone();
        let run_id = req.run_id.clone();
        let active = self.active.clone();
        let thread_stop = stop.clone();
        std::thread::Builder::new()
            .name("iorig-agent-run".into())
            .spawn(move || {
                let result = run_one(
                    &w,
                    &req,
                    allow_destroy,
                    gate,
                    &config,
                    &run_id,
                    &ev_tx,
                    &thread_stop,
                );
                if let Err(e) = result {
                    let _ = ev_tx.blocking_send(Err(status_of(e)));
                }
                if let Ok(mut a) = active.lock() {
                    *a = None;
                }
            })
            .map_err(|e| Status::internal(format!("starting the run thread: {e}")))?;
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let mut quiet = false;
            loop {
                tokio::select! {
                    ev = ev_rx.recv() => match ev {
                        Some(m) => {
                            quiet = false;
                            // A controller that is gone, or that stopped
                            // reading for a whole lease, ends the I/O.
                            match tokio::time::timeout(lease, out_tx.send(m)).await {
                                Ok(Ok(())) => {}
                                Ok(Err(_)) | Err(_) => stop.interrupt(),
                            }
                        }
                        None => break,
                    },
                    _ = tick.tick() => {
                        let since = renewed.lock().map(|r| r.elapsed()).unwrap_or_default();
                        if since > lease {
                            stop.interrupt();
                        }
                        if quiet {
                            let hb = RunMessage { msg: Some(Msg::Heartbeat(proto::Heartbeat {})) };
                            if out_tx.send(Ok(hb)).await.is_err() {
                                stop.interrupt();
                            }
                        }
                        quiet = true;
                    }
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(out_rx)))
    }

    async fn start(
        &self,
        req: Request<proto::StartRequest>,
    ) -> Result<Response<proto::StartReply>, Status> {
        let req = req.into_inner();
        // The controller's time is in this agent's clock; the gate takes
        // this machine's real one.
        let real_ns = req.start_unix_ns - self.clock_offset_ns;
        let at = UNIX_EPOCH + Duration::from_nanos(u64::try_from(real_ns).unwrap_or(0));
        let running = self.with_run(&req.run_id, |a| a.gate.set(at))?;
        if let (true, Some(m)) = (running, &self.config.metrics) {
            m.set_origin(
                (!req.metrics_run.is_empty()).then_some(req.metrics_run),
                (!req.metrics_host.is_empty()).then_some(req.metrics_host),
            );
        }
        Ok(Response::new(proto::StartReply { running }))
    }

    async fn renew(
        &self,
        req: Request<proto::RunRef>,
    ) -> Result<Response<proto::RenewReply>, Status> {
        let req = req.into_inner();
        let running = self.with_run(&req.run_id, |a| {
            if let Ok(mut r) = a.renewed.lock() {
                *r = Instant::now();
            }
        })?;
        Ok(Response::new(proto::RenewReply { running }))
    }

    async fn stop(
        &self,
        req: Request<proto::StopRequest>,
    ) -> Result<Response<proto::StopReply>, Status> {
        let req = req.into_inner();
        let running = self.with_run(&req.run_id, |a| {
            if req.interrupt {
                a.stop.interrupt();
            } else {
                a.stop.stop_step();
            }
        })?;
        Ok(Response::new(proto::StopReply { running }))
    }
}

/// Turns the runner's events into stream messages.
struct StreamSink<'a> {
    tx: &'a mpsc::Sender<Result<RunMessage, Status>>,
    stop: &'a Stop,
    offset_ns: i64,
}

impl StreamSink<'_> {
    fn send(&self, msg: Msg) {
        if self
            .tx
            .blocking_send(Ok(RunMessage { msg: Some(msg) }))
            .is_err()
        {
            self.stop.interrupt();
        }
    }
}

impl Sink for StreamSink<'_> {
    fn event(&mut self, ev: &Event<'_>) {
        match *ev {
            Event::Notice(n) => self.send(Msg::Notice(n.to_string())),
            Event::TargetsOpen {
                targets,
                engine,
                byte_limit,
                ..
            } => self.send(Msg::Opened(proto::Opened {
                engine: engine.to_string(),
                targets: targets.iter().map(wire::target_msg).collect(),
                byte_limit: byte_limit.unwrap_or(0),
            })),
            Event::Started { late_ns, .. } => self.send(Msg::Started(proto::Started {
                started_unix_ns: now_ns() + self.offset_ns,
                start_skew_ns: late_ns,
            })),
            Event::Interval { sample, .. } => self.send(Msg::Interval(wire::interval_msg(sample))),
            Event::WorkerError { worker, message } => {
                self.send(Msg::WorkerError(format!("worker {worker}: {message}")))
            }
            Event::Finding { finding, .. } => {
                if let Ok(j) = serde_json::to_string(finding) {
                    self.send(Msg::FindingJson(j));
                }
            }
            _ => {}
        }
    }
}

/// What a step sizes from this host's targets and cache, as the
/// controller asked (zeros: nothing).
fn sizing_of(req: &proto::StepRequest) -> iorig_spec::HostSizing {
    iorig_spec::HostSizing {
        cache_pct: (req.cache_pct > 0.0).then_some(req.cache_pct),
        cache_bytes: (req.cache_bytes > 0).then_some(req.cache_bytes),
        threads_per_target: (req.threads_per_target > 0).then_some(req.threads_per_target),
    }
}

/// One step on this host, to its end; its own result written locally.
#[allow(clippy::too_many_arguments)]
fn run_one(
    w: &Workload,
    req: &proto::StepRequest,
    allow_destroy: bool,
    gate: StartGate,
    config: &AgentConfig,
    run_id: &str,
    tx: &mpsc::Sender<Result<RunMessage, Status>>,
    stop: &Stop,
) -> Result<(), RunError> {
    let mut store = match &config.db {
        Some(p) => StoreWriter::at(
            p,
            iorig_run::store::Origin {
                command_line: format!("iorig agent (run {run_id})"),
                tool_version: crate::tool_version().into(),
            },
        )?,
        None => StoreWriter::none(),
    };
    let opts = SingleOptions {
        allow_destroy,
        start: Some(gate),
        byte_passes: (req.byte_passes > 0).then_some(req.byte_passes),
        trim_first: req.trim_first,
        hot_size_bytes: (req.hot_size_bytes > 0).then_some(req.hot_size_bytes),
        sizing: sizing_of(req),
        ..SingleOptions::default()
    };
    let mut sink = StreamSink {
        tx,
        stop,
        offset_ns: test_env_i64("IORIG_TEST_CLOCK_OFFSET_NS").unwrap_or(0),
    };
    let mut metrics = config.metrics.as_ref().map(|m| m.sink());
    let outcome = match metrics.as_mut() {
        Some(m) => {
            let mut both = iorig_run::event::Fanout(vec![&mut sink, m]);
            iorig_run::single::run(w, &opts, &mut store, &mut both, stop)?
        }
        None => iorig_run::single::run(w, &opts, &mut store, &mut sink, stop)?,
    };
    let json = serde_json::to_string_pretty(&outcome.doc)
        .map_err(|e| RunError::runtime(format!("result JSON: {e}")))?;
    if let Some(dir) = &config.results_dir {
        if let Err(e) = write_result(dir, run_id, &json) {
            sink.send(Msg::Notice(e));
        }
    }
    sink.send(Msg::Ended(proto::Ended {
        status: outcome.status.as_str().to_string(),
        result_json: json,
        io_errors: outcome.io_errors,
    }));
    Ok(())
}

/// Writes a run's result document into the results directory as
/// `RUN_ID.json`, the id reduced to letters, digits and `-`. Through a temp
/// file beside it, renamed over the name: a link planted at the name is
/// replaced, never followed to a file outside the directory.
fn write_result(dir: &std::path::Path, run_id: &str, json: &str) -> Result<PathBuf, String> {
    let name: String = run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!("{name}.json"));
    iorig_outfile::write_atomic("--results-dir", &path, json.as_bytes())
        .map_err(|e| format!("writing {}: {e}", path.display()))?;
    Ok(path)
}

/// Checks every request's token (none configured: loopback only, open).
#[derive(Clone)]
struct Auth {
    token: Option<Arc<str>>,
}

impl tonic::service::Interceptor for Auth {
    fn call(&mut self, req: Request<()>) -> Result<Request<()>, Status> {
        let Some(token) = &self.token else {
            return Ok(req);
        };
        let given = req
            .metadata()
            .get(AUTH_KEY)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match given {
            Some(g) if same_bytes(g.as_bytes(), token.as_bytes()) => Ok(req),
            Some(_) => Err(Status::unauthenticated(
                "wrong token: give the controller the agent's token file (--token-file)",
            )),
            None => Err(Status::unauthenticated(
                "this agent needs a token: give the controller --token-file with the agent's token",
            )),
        }
    }
}

/// Whether two secrets are equal, compared in constant time so the time
/// taken says nothing about how much of a guess was right.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    bool::from(subtle::ConstantTimeEq::ct_eq(a, b))
}

impl AgentConfig {
    /// The line an agent starts with: where it listens and what it asks of
    /// a controller.
    pub fn banner(&self, bound: SocketAddr) -> String {
        format!(
            "iorig agent {} listening on {bound} ({}{}); Ctrl-C ends it",
            env!("CARGO_PKG_VERSION"),
            match (self.token.is_some(), self.tls.is_some()) {
                (true, true) => "mutual TLS and token required",
                (false, true) => "mutual TLS required",
                (true, false) => "token required",
                (false, false) => "loopback, no token",
            },
            if self.allow_destroy {
                ", --allow-destroy allowed"
            } else {
                ""
            }
        )
    }
}

/// Serves on a runtime of its own until `stopped()` says so (polled every
/// 100 ms; a run in progress is stopped first), after telling `listening`
/// where it listens. A port it cannot listen on is bad input.
pub fn serve_blocking(
    config: AgentConfig,
    stopped: impl Fn() -> bool + Send + 'static,
    listening: impl FnOnce(SocketAddr),
) -> Result<(), AgentError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| AgentError::Runtime(format!("starting the agent's runtime: {e}")))?;
    rt.block_on(async move {
        let listen = config.listen;
        let listener = tokio::net::TcpListener::bind(listen).await.map_err(|e| {
            AgentError::Usage(format!(
                "--listen {listen}: cannot listen there ({e}); choose a free port or an address of this machine"
            ))
        })?;
        listening(listener.local_addr().unwrap_or(listen));
        let shutdown = async move {
            while !stopped() {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
        };
        serve(config, listener, shutdown).await
    })
}

/// Serves until `shutdown` completes; a run in progress is stopped first.
pub async fn serve(
    config: AgentConfig,
    listener: tokio::net::TcpListener,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), AgentError> {
    config.check()?;
    let active = Arc::new(Mutex::new(None::<Active>));
    let nanos = now_ns();
    let service = Service {
        instance_id: format!("{:x}-{:x}", std::process::id(), nanos),
        clock_offset_ns: test_env_i64("IORIG_TEST_CLOCK_OFFSET_NS").unwrap_or(0),
        active: active.clone(),
        config: config.clone(),
    };
    let auth = Auth {
        token: config.token.as_deref().map(Arc::from),
    };
    let stopper = active.clone();
    let shutdown = async move {
        shutdown.await;
        if let Ok(a) = stopper.lock() {
            if let Some(a) = a.as_ref() {
                a.stop.interrupt();
            }
        }
    };
    let mut builder = tonic::transport::Server::builder();
    if let Some(t) = &config.tls {
        let tls = tonic::transport::ServerTlsConfig::new()
            .identity(tonic::transport::Identity::from_pem(
                &t.cert_pem,
                &t.key_pem,
            ))
            .client_ca_root(tonic::transport::Certificate::from_pem(&t.ca_pem));
        builder = builder
            .tls_config(tls)
            .map_err(|e| AgentError::Usage(format!("--tls-cert/--tls-key/--tls-ca: {e}")))?;
    }
    builder
        .http2_keepalive_interval(Some(Duration::from_secs(5)))
        .http2_keepalive_timeout(Some(Duration::from_secs(10)))
        .add_service(AgentServer::with_interceptor(service, auth))
        .serve_with_incoming_shutdown(
            tokio_stream::wrappers::TcpListenerStream::new(listener),
            shutdown,
        )
        .await
        .map_err(|e| AgentError::Runtime(format!("agent server: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A link planted at a result's name (by anyone who can write the
    /// results directory) must not make the agent write through it.
    #[test]
    fn a_result_is_never_written_through_a_planted_link() {
        let Ok(d) = tempfile::tempdir() else {
            panic!("no temp dir")
        };
        let outside = d.path().join("outside.txt");
        let results = d.path().join("results");
        std::fs::create_dir(&results).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&outside, "precious").unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::symlink(&outside, results.join("r-1_x.json"))
            .unwrap_or_else(|e| panic!("{e}"));
        let path = write_result(&results, "r-1/x", "{}").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(path, results.join("r-1_x.json"));
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap_or_default(),
            "precious",
            "the file outside the results directory was written"
        );
        let md = std::fs::symlink_metadata(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            md.file_type().is_file(),
            "the link was replaced by the result"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap_or_default(), "{}");
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(same_bytes(b"abcdefgh", b"abcdefgh"));
        assert!(!same_bytes(b"abcdefgh", b"abcdefgx"));
        assert!(!same_bytes(b"abc", b"abcd"));
    }

    #[test]
    fn an_agent_off_loopback_needs_a_token() {
        let mut c = AgentConfig {
            listen: "0.0.0.0:7420".parse().expect("addr"),
            token: None,
            allow_destroy: false,
            results_dir: None,
            db: None,
            metrics: None,
            tls: None,
        };
        let e = c.check().expect_err("refused");
        assert!(e.to_string().contains("--token-file"), "{e}");
        c.token = Some("x".repeat(32));
        assert!(c.check().is_ok());
        c.listen = "127.0.0.1:7420".parse().expect("addr");
        c.token = None;
        assert!(c.check().is_ok());
    }
}
