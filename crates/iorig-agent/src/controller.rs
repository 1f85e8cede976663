//! The controller: one workload on many agents at once, merged into exact
//! totals.
//!
//! The order is fixed so that bad input stops everything before any host
//! does I/O: connect and greet every agent (versions, token, duplicates),
//! measure every clock, have every agent check its own targets; then every
//! agent prepares (opens, fills, formats) and says it is ready, and only
//! then does each get the common start time, in its own clock. Interval
//! `k` of every host covers the same wall-clock span, so the total's
//! interval `k` is their merge: ops and bytes summed, HDR histograms
//! merged (percentiles from the merged histogram, never averaged).
//!
//! Every call has a deadline. A host silent for longer than the lease, or
//! whose stream breaks, is marked lost at the interval it did not deliver;
//! the others go on and the run is told degraded. Each agent stops its own
//! I/O when the controller's lease renewals stop.

use crate::clock::{self, ClockEstimate, Exchange};
use crate::hosts::HostSpec;
use crate::proto::agent_client::AgentClient;
use crate::proto::{self, run_message::Msg};
use crate::{wire, AgentError, AUTH_KEY, PROTOCOL_MAJOR, PROTOCOL_MINOR};
use iorig_result::live::{IntervalSample, RunOutcome, TargetInfo};
use iorig_result::{Finding, HostResult, HostStatus, Interval, ResultDoc};
use iorig_run::merge::{merge_interval, summary_of_samples};
use iorig_run::results::{interval_of, target_entry};
use iorig_run::sizing::SizedStep;
use iorig_run::{Event, Out, RunError, StepCall, StepExecutor, StepHooks, StepOutput, Stop};
use iorig_spec::{OneOrMany, StrOrNum, Workload, WorkloadFile};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Status};

/// How `--rate` is shared among the hosts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RateShare {
    /// The workload's own `--rate` is the total, split evenly.
    Total,
    /// Every host runs this many IOPS (`--rate-per-host`).
    PerHost(f64),
}

/// What a multi-host run needs beyond the workload.
#[derive(Debug, Clone)]
pub struct ControllerOptions {
    pub hosts: Vec<HostSpec>,
    /// The run's token (`--token-file`), for hosts without their own.
    pub token: Option<String>,
    pub rate: RateShare,
    /// An agent stops its I/O when the controller has not renewed for
    /// this long; a host silent this long is lost.
    pub lease: Duration,
    /// A host whose I/O starts further than this from the common start is
    /// flagged.
    pub skew_limit: Duration,
    /// How long to wait for a connection.
    pub connect_timeout: Duration,
    /// Mutual TLS to every agent: this controller's certificate and key,
    /// and the CA the agents' certificates are signed by.
    pub tls: Option<crate::TlsFiles>,
}

impl ControllerOptions {
    pub fn new(hosts: Vec<HostSpec>) -> Self {
        ControllerOptions {
            hosts,
            token: None,
            rate: RateShare::Total,
            lease: Duration::from_secs(10),
            skew_limit: Duration::from_millis(5),
            connect_timeout: Duration::from_secs(3),
            tls: None,
        }
    }
}

/// Clock samples per host; the one with the shortest round trip is kept.
const CLOCK_SAMPLES: usize = 8;
/// Deadline of a short call (hello, clock, renew, stop, start).
const CALL_TIMEOUT: Duration = Duration::from_secs(5);
/// Deadline of a host's target check (it may probe devices).
const CHECK_TIMEOUT: Duration = Duration::from_secs(60);
/// Time between every host's start call and the common start.
const START_MARGIN: Duration = Duration::from_millis(200);

/// Adds `authorization: Bearer TOKEN` to every call.
#[derive(Clone)]
struct Bearer(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert(AUTH_KEY, v.clone());
        }
        Ok(req)
    }
}

type Client = AgentClient<InterceptedService<Channel, Bearer>>;

/// A greeted agent.
struct Host {
    spec: HostSpec,
    client: Client,
    hello: proto::HelloReply,
    clock: ClockEstimate,
    /// The workload keys this host runs.
    workload_json: String,
}

fn ns_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn request<T>(msg: T, timeout: Duration) -> Request<T> {
    let mut r = Request::new(msg);
    r.set_timeout(timeout);
    r
}

/// A call with a deadline on our side too (a stalled connection).
async fn bounded<T>(
    timeout: Duration,
    fut: impl std::future::Future<Output = Result<tonic::Response<T>, Status>>,
) -> Result<T, Status> {
    match tokio::time::timeout(timeout, fut).await {
        Ok(r) => r.map(tonic::Response::into_inner),
        Err(_) => Err(Status::deadline_exceeded(format!(
            "no answer within {} s",
            timeout.as_secs_f64()
        ))),
    }
}

/// The message for a call that failed before any I/O.
fn refusal(host: &HostSpec, what: &str, s: &Status) -> AgentError {
    let fix = match s.code() {
        tonic::Code::Unauthenticated => {
            " (give the agent's token with --token-file, or token_file in the hosts file)"
        }
        tonic::Code::Unavailable => {
            " (is `iorig agent` running there and reachable? check the address and port)"
        }
        tonic::Code::DeadlineExceeded => " (the agent did not answer in time)",
        _ => "",
    };
    AgentError::Usage(format!("host {}: {what}: {}{fix}", host.name, s.message()))
}

/// The workload keys host `i` of `n` runs: its targets, its own seed (so
/// the hosts do not replay one another's offsets) and its rate share.
pub fn host_layer(
    layer: &WorkloadFile,
    w: &Workload,
    spec: &HostSpec,
    i: usize,
    n: usize,
    rate: RateShare,
) -> WorkloadFile {
    let mut l = layer.clone();
    if let Some(t) = &spec.targets {
        l.target = Some(OneOrMany::Many(t.clone()));
        l.anchor = None;
    }
    l.seed = Some(w.seed.wrapping_add(i as u64));
    let share = match (rate, w.rate) {
        (RateShare::PerHost(r), _) => Some(r),
        (RateShare::Total, iorig_spec::Rate::Iops(total)) => Some(total / n as f64),
        (RateShare::Total, iorig_spec::Rate::Max) => None,
    };
    if let Some(r) = share {
        l.rate = Some(StrOrNum::Float(r));
    }
    let mut labels = l.labels.take().unwrap_or_default();
    labels.extend(spec.labels.clone());
    l.labels = (!labels.is_empty()).then_some(labels);
    l
}

async fn connect(
    spec: &HostSpec,
    token: Option<&str>,
    tls: Option<&crate::TlsFiles>,
    timeout: Duration,
) -> Result<Client, AgentError> {
    let scheme = if tls.is_some() { "https" } else { "http" };
    let mut endpoint = Endpoint::from_shared(format!("{scheme}://{}", spec.address))
        .map_err(|e| AgentError::Usage(format!("host {}: bad address: {e}", spec.name)))?;
    if let Some(t) = tls {
        // The agent's certificate must name the host as it is addressed.
        let host = spec
            .address
            .rsplit_once(':')
            .map_or(spec.address.as_str(), |(h, _)| h)
            .trim_start_matches('[')
            .trim_end_matches(']');
        let config = tonic::transport::ClientTlsConfig::new()
            .ca_certificate(tonic::transport::Certificate::from_pem(&t.ca_pem))
            .identity(tonic::transport::Identity::from_pem(
                &t.cert_pem,
                &t.key_pem,
            ))
            .domain_name(host);
        endpoint = endpoint
            .tls_config(config)
            .map_err(|e| AgentError::Usage(format!("--tls-cert/--tls-key/--tls-ca: {e}")))?;
    }
    let endpoint = endpoint
        .connect_timeout(timeout)
        .tcp_nodelay(true)
        .http2_keep_alive_interval(Duration::from_secs(5))
        .keep_alive_timeout(Duration::from_secs(10))
        .keep_alive_while_idle(true);
    let channel = match tokio::time::timeout(timeout, endpoint.connect()).await {
        Ok(Ok(c)) => c,
        Ok(Err(e)) => {
            return Err(AgentError::Usage(format!(
                "host {}: cannot connect to {}: {}; is `iorig agent` running there? check the address and port",
                spec.name,
                spec.address,
                source_chain(&e)
            )))
        }
        Err(_) => {
            return Err(AgentError::Usage(format!(
                "host {}: no connection to {} within {} s; is the address right and the port open?",
                spec.name,
                spec.address,
                timeout.as_secs_f64()
            )))
        }
    };
    let bearer = match spec.token.as_deref().or(token) {
        Some(t) => Some(format!("Bearer {t}").parse().map_err(|_| {
            AgentError::Usage(
                "the token has characters a header cannot carry; use letters, digits and +/="
                    .into(),
            )
        })?),
        None => None,
    };
    Ok(AgentClient::with_interceptor(channel, Bearer(bearer)))
}

fn source_chain(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut cur = e.source();
    while let Some(s) = cur {
        parts.push(s.to_string());
        cur = s.source();
    }
    parts.dedup();
    parts.join(": ")
}

/// Connects, greets and times one host.
async fn greet(
    spec: HostSpec,
    token: Option<String>,
    tls: Option<crate::TlsFiles>,
    timeout: Duration,
) -> Result<Host, AgentError> {
    let mut client = connect(&spec, token.as_deref(), tls.as_ref(), timeout).await?;
    let hello = bounded(
        CALL_TIMEOUT,
        client.hello(request(
            proto::HelloRequest {
                tool_version: crate::tool_version().into(),
                protocol_major: PROTOCOL_MAJOR,
                protocol_minor: PROTOCOL_MINOR,
            },
            CALL_TIMEOUT,
        )),
    )
    .await
    .map_err(|s| refusal(&spec, "hello", &s))?;
    if hello.protocol_major != PROTOCOL_MAJOR {
        return Err(AgentError::Usage(format!(
            "host {}: its agent is iorig {} speaking protocol {}.{}, this controller is iorig {} speaking {}.{}; run the same major protocol on both (install iorig {} on the host, or run the controller of the agent's version)",
            spec.name,
            hello.tool_version,
            hello.protocol_major,
            hello.protocol_minor,
            crate::tool_version(),
            PROTOCOL_MAJOR,
            PROTOCOL_MINOR,
            crate::tool_version()
        )));
    }
    let mut samples = Vec::with_capacity(CLOCK_SAMPLES);
    for _ in 0..CLOCK_SAMPLES {
        let t0 = ns_now();
        let r = bounded(
            CALL_TIMEOUT,
            client.clock(request(proto::ClockRequest {}, CALL_TIMEOUT)),
        )
        .await
        .map_err(|s| refusal(&spec, "clock", &s))?;
        let t3 = ns_now();
        samples.push(Exchange {
            t0_ns: t0,
            agent_ns: r.agent_unix_ns,
            t3_ns: t3,
        });
    }
    let clock = clock::best(&samples).unwrap_or(ClockEstimate {
        offset_ns: 0,
        rtt_ns: 0,
    });
    Ok(Host {
        spec,
        client,
        hello,
        clock,
        workload_json: String::new(),
    })
}

/// Where a host stands during the step.
#[derive(Debug, Clone, PartialEq)]
enum State {
    Preparing,
    Ready,
    Running,
    Ended,
    Lost { at_index: usize, why: String },
}

struct HostRun {
    state: State,
    last_heard: Instant,
    engine: String,
    targets: Vec<TargetInfo>,
    start_skew_ns: Option<i64>,
    samples: Vec<IntervalSample>,
    doc: Option<ResultDoc>,
    io_errors: u64,
    findings: Vec<Finding>,
    /// A precondition's bytes on this host.
    byte_limit: Option<u64>,
    /// Encoded bytes of the interval messages it sent.
    interval_bytes: u64,
}

impl HostRun {
    fn live(&self) -> bool {
        matches!(self.state, State::Preparing | State::Ready | State::Running)
    }
}

/// What a host's stream task reports.
enum Report {
    Msg(usize, Box<Msg>),
    /// The stream failed (the agent refused, or the connection broke).
    Failed(usize, Status),
    /// The stream ended.
    Closed(usize),
}

/// The hosts of a run, greeted and timed: runs steps on all of them at
/// once ([`StepExecutor`]), for `iorig run` and for plans.
pub struct Cluster {
    rt: tokio::runtime::Runtime,
    hosts: Vec<Host>,
    opts: ControllerOptions,
    /// What the greeting found worth telling (version differences).
    pub notices: Vec<String>,
    /// What every host sized each checked step to (`--dry-run` lists it).
    pub sized: Vec<SizedStep>,
    /// Steps run so far (each has its own run id on the agents).
    steps: usize,
    run_id: String,
    /// The checks of the workload just checked by [`Cluster::check_hosts`],
    /// which the next step of the same workload uses instead of asking
    /// every host again.
    prechecked: Option<(String, Vec<proto::CheckReply>)>,
    /// When the clocks were last measured.
    timed_at: Instant,
}

impl Cluster {
    /// Connects to every host at once, checks versions, token and
    /// duplicates, and measures every clock. Any refusal is bad input:
    /// nothing has run anywhere.
    pub fn connect(opts: ControllerOptions) -> Result<Cluster, RunError> {
        if opts.hosts.is_empty() {
            return Err(RunError::usage(
                "no hosts given; give --hosts HOST:PORT,... or --hosts-file FILE",
            ));
        }
        // One thread: the controller mostly waits, and one thread spares
        // the wake-ups between threads that each message would cost.
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| RunError::runtime(format!("starting the controller's runtime: {e}")))?;
        let (hosts, notices) = rt.block_on(greet_all(&opts))?;
        let started = iorig_run::now_rfc3339();
        Ok(Cluster {
            rt,
            hosts,
            opts,
            notices,
            sized: Vec::new(),
            steps: 0,
            prechecked: None,
            timed_at: Instant::now(),
            run_id: format!(
                "{}-{:x}",
                started.replace([':', '-'], ""),
                ns_now() as u64 & 0xff_ffff
            ),
        })
    }

    pub fn options(&self) -> &ControllerOptions {
        &self.opts
    }

    /// Every host checks its share of `call`'s workload, writing nothing.
    pub fn check_hosts(&mut self, call: &StepCall<'_>) -> Result<Vec<HostCheck>, RunError> {
        let Cluster {
            rt, hosts, opts, ..
        } = self;
        let (checked, notices, sized) = rt.block_on(check_all(hosts, opts, call))?;
        self.notices.extend(notices);
        self.sized.extend(sized);
        self.prechecked = Some((workloads_key(&self.hosts), checked.clone()));
        Ok(self
            .hosts
            .iter()
            .zip(checked)
            .map(|(h, c)| HostCheck {
                name: h.spec.name.clone(),
                hostname: h.hello.hostname.clone(),
                tool_version: h.hello.tool_version.clone(),
                engine: c.engine.clone(),
                targets: c
                    .targets
                    .iter()
                    .filter_map(|t| wire::target_of(t).ok())
                    .collect(),
                clock_offset_ns: h.clock.offset_ns,
                clock_rtt_ns: h.clock.rtt_ns,
            })
            .collect())
    }
}

impl StepExecutor for Cluster {
    fn check(&mut self, call: &StepCall<'_>) -> Result<(), RunError> {
        refuse_jobs(call)?;
        self.check_hosts(call).map(drop)
    }

    fn run_step(
        &mut self,
        call: &StepCall<'_>,
        out: &mut Out<'_>,
        stop: &Stop,
        hooks: &mut dyn StepHooks,
    ) -> Result<StepOutput, RunError> {
        refuse_jobs(call)?;
        self.steps += 1;
        let run_id = format!("{}-s{}", self.run_id, self.steps);
        let prechecked = self.prechecked.take();
        // Clocks drift: a step starting long after the last measurement
        // measures them again.
        let retime = self.timed_at.elapsed() > RETIME_AFTER;
        if retime {
            self.timed_at = Instant::now();
        }
        let Cluster {
            rt,
            hosts,
            opts,
            notices,
            ..
        } = self;
        for n in notices.drain(..) {
            out.notice(&n);
        }
        rt.block_on(step_async(
            hosts, opts, &run_id, call, prechecked, retime, out, stop, hooks,
        ))
    }
}

/// Clocks are measured again before a step when older than this.
const RETIME_AFTER: Duration = Duration::from_secs(60);

/// Every host's workload keys, to know a check is of the same workload.
fn workloads_key(hosts: &[Host]) -> String {
    hosts
        .iter()
        .map(|h| h.workload_json.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a host said when asked to check its share (`--dry-run`).
#[derive(Debug, Clone)]
pub struct HostCheck {
    pub name: String,
    pub hostname: String,
    pub tool_version: String,
    pub engine: String,
    pub targets: Vec<TargetInfo>,
    pub clock_offset_ns: i64,
    pub clock_rtt_ns: u64,
}

/// What `iorig run --hosts --dry-run` says: each host's check, then the
/// rate and the time.
pub fn dry_run_lines(checks: &[HostCheck], rate: &str, w: &Workload) -> Vec<String> {
    let mut out: Vec<String> = checks.iter().map(HostCheck::dry_run_line).collect();
    out.push(format!(
        "{rate}; estimated time: {:.0} s; every host checked its targets: ok (nothing was run or written)",
        (w.warmup + w.time).as_secs_f64()
    ));
    out
}

impl HostCheck {
    /// What a dry run says of the host: its tool, engine and targets, and
    /// its clock against the controller's.
    pub fn dry_run_line(&self) -> String {
        let targets: Vec<&str> = self.targets.iter().map(|t| t.path.as_str()).collect();
        format!(
            "host {} ({}, iorig {}): would run {} on {}; clock offset {:+.3} ms (round trip {:.3} ms)",
            self.name,
            self.hostname,
            self.tool_version,
            self.engine,
            targets.join(", "),
            self.clock_offset_ns as f64 / 1e6,
            self.clock_rtt_ns as f64 / 1e6
        )
    }
}

/// Phase 1: greet and time every host at once.
async fn greet_all(opts: &ControllerOptions) -> Result<(Vec<Host>, Vec<String>), RunError> {
    let n = opts.hosts.len();
    let mut notices = Vec::new();
    let mut tasks = tokio::task::JoinSet::new();
    for (i, spec) in opts.hosts.iter().cloned().enumerate() {
        let token = opts.token.clone();
        let tls = opts.tls.clone();
        let timeout = opts.connect_timeout;
        tasks.spawn(async move { (i, greet(spec, token, tls, timeout).await) });
    }
    let mut greeted: Vec<Option<Host>> = (0..n).map(|_| None).collect();
    let mut errors = Vec::new();
    while let Some(r) = tasks.join_next().await {
        match r {
            Ok((i, Ok(h))) => greeted[i] = Some(h),
            Ok((i, Err(e))) => errors.push((i, e.to_string())),
            Err(e) => errors.push((usize::MAX, e.to_string())),
        }
    }
    if let Some(e) = first_error(errors) {
        return Err(RunError::usage(e));
    }
    let hosts: Vec<Host> = greeted.into_iter().flatten().collect();
    // Two addresses that reach one agent would run it twice.
    for (i, a) in hosts.iter().enumerate() {
        if let Some(b) = hosts[..i]
            .iter()
            .find(|b| b.hello.instance_id == a.hello.instance_id)
        {
            return Err(RunError::usage(format!(
                "hosts {} and {} are the same agent; give each agent once",
                b.spec.name, a.spec.name
            )));
        }
    }
    for h in &hosts {
        if h.hello.protocol_minor != PROTOCOL_MINOR || h.hello.tool_version != crate::tool_version()
        {
            notices.push(format!(
                "host {}: agent iorig {} (protocol {}.{}), controller iorig {} ({}.{}): compatible, but results are best compared from one version",
                h.spec.name,
                h.hello.tool_version,
                h.hello.protocol_major,
                h.hello.protocol_minor,
                crate::tool_version(),
                PROTOCOL_MAJOR,
                PROTOCOL_MINOR
            ));
        }
    }
    Ok((hosts, notices))
}

/// Phase 2 for one step: every host gets its share of the workload and
/// checks it, writing nothing; every host must run the same engine.
async fn check_all(
    hosts: &mut [Host],
    opts: &ControllerOptions,
    call: &StepCall<'_>,
) -> Result<(Vec<proto::CheckReply>, Vec<String>, Vec<SizedStep>), RunError> {
    if call.w.verify {
        return Err(RunError::usage(
            "--verify is not available on several hosts yet (each host would keep its own key map); run it on one host",
        ));
    }
    let n = hosts.len();
    for (i, h) in hosts.iter_mut().enumerate() {
        let l = host_layer(call.layer, call.w, &h.spec, i, n, opts.rate);
        h.workload_json = serde_json::to_string(&l)
            .map_err(|e| RunError::runtime(format!("workload JSON: {e}")))?;
    }
    let mut checks = tokio::task::JoinSet::new();
    for (i, h) in hosts.iter().enumerate() {
        let mut client = h.client.clone();
        let req = step_request(h, opts, call, None);
        checks.spawn(async move {
            (
                i,
                bounded(CHECK_TIMEOUT, client.check(request(req, CHECK_TIMEOUT))).await,
            )
        });
    }
    let mut checked: Vec<Option<proto::CheckReply>> = (0..n).map(|_| None).collect();
    let mut errors = Vec::new();
    while let Some(r) = checks.join_next().await {
        match r {
            Ok((i, Ok(c))) => checked[i] = Some(c),
            Ok((i, Err(s))) => errors.push((
                i,
                refusal(&hosts[i].spec, "it refuses the run", &s).to_string(),
            )),
            Err(e) => errors.push((usize::MAX, e.to_string())),
        }
    }
    if let Some(e) = first_error(errors) {
        return Err(RunError::usage(e));
    }
    let checked: Vec<proto::CheckReply> = checked.into_iter().flatten().collect();
    if let Some((i, c)) = checked
        .iter()
        .enumerate()
        .find(|(_, c)| c.engine != checked[0].engine)
    {
        let fix = if c.engine == "psync" || checked[0].engine == "psync" {
            "give --engine psync, or make io_uring usable on every host"
        } else {
            "give --engine to choose one"
        };
        return Err(RunError::usage(format!(
            "host {} would run {} but host {} {}: every host must run the same engine; {fix}",
            hosts[i].spec.name, c.engine, hosts[0].spec.name, checked[0].engine,
        )));
    }
    let mut notices = Vec::new();
    let mut sized = Vec::new();
    for (h, c) in hosts.iter().zip(&checked) {
        for note in &c.notices {
            notices.push(format!("host {}: {note}", h.spec.name));
        }
        if !c.sizing.is_empty() {
            let s = SizedStep {
                step: call.index + 1,
                host: Some(h.spec.name.clone()),
                text: c.sizing.clone(),
            };
            notices.push(s.notice());
            sized.push(s);
        }
    }
    Ok((checked, notices, sized))
}

fn step_request(
    h: &Host,
    opts: &ControllerOptions,
    call: &StepCall<'_>,
    hooks: Option<&dyn StepHooks>,
) -> proto::StepRequest {
    proto::StepRequest {
        run_id: String::new(),
        workload_json: h.workload_json.clone(),
        lease_ms: opts.lease.as_millis() as u64,
        allow_destroy: call.allow_destroy,
        byte_passes: hooks.and_then(|k| k.byte_passes()).unwrap_or(0),
        trim_first: hooks.is_some_and(|k| k.trim_first()),
        hot_size_bytes: call.hot_size_bytes.unwrap_or(0),
        cache_pct: call.sizing.cache_pct.unwrap_or(0.0),
        cache_bytes: call.sizing.cache_bytes.unwrap_or(0),
        threads_per_target: call.sizing.threads_per_target.unwrap_or(0),
    }
}

/// Measures every host's clock again (a long plan's clocks drift).
async fn retime(hosts: &mut [Host]) {
    for h in hosts.iter_mut() {
        let mut samples = Vec::with_capacity(CLOCK_SAMPLES);
        for _ in 0..CLOCK_SAMPLES {
            let t0 = ns_now();
            let Ok(r) = bounded(
                CALL_TIMEOUT,
                h.client
                    .clock(request(proto::ClockRequest {}, CALL_TIMEOUT)),
            )
            .await
            else {
                break;
            };
            samples.push(Exchange {
                t0_ns: t0,
                agent_ns: r.agent_unix_ns,
                t3_ns: ns_now(),
            });
        }
        if let Some(c) = clock::best(&samples) {
            h.clock = c;
        }
    }
}

/// One step on every host: check, prepare, start together, merge.
#[allow(clippy::too_many_arguments)]
async fn step_async(
    hosts: &mut [Host],
    opts: &ControllerOptions,
    run_id: &str,
    call: &StepCall<'_>,
    prechecked: Option<(String, Vec<proto::CheckReply>)>,
    retime_clocks: bool,
    out: &mut Out<'_>,
    stop: &Stop,
    hooks: &mut dyn StepHooks,
) -> Result<StepOutput, RunError> {
    let checked = checked_hosts(hosts, opts, call, prechecked, out).await?;
    if retime_clocks {
        retime(hosts).await;
    }
    let hosts: &[Host] = hosts;
    let (mut rx, runs) = open_streams(hosts, opts, run_id, call, &*hooks, &checked);
    let renewing = renew_leases(hosts, run_id, opts.lease);
    let mut p = Progress::new(hosts, run_id, runs);
    let (mut interrupt_sent, mut end_sent) = (false, false);
    let mut tick = tokio::time::interval(Duration::from_millis(100));
    let ended = loop {
        // Ctrl-C: every agent stops; their last intervals still come.
        if stop.interrupted() && !interrupt_sent {
            interrupt_sent = true;
            p.stop_hosts(true).await;
        }
        // An early end of the step (steady state reached): every agent
        // ends its step, not interrupted.
        if stop.step.load(Ordering::SeqCst) && !end_sent && !interrupt_sent {
            end_sent = true;
            p.stop_hosts(false).await;
        }
        let report = tokio::select! {
            r = rx.recv() => r,
            _ = tick.tick() => None,
        };
        if let Err(e) = p.take(report, opts, call.index, out, stop) {
            break Err(e);
        }
        if let Err(e) = p.watch_leases(opts, out) {
            break Err(e);
        }
        // Every host ready: the step begins; each is given the start time.
        if !p.begun && p.runs.iter().all(|r| r.state == State::Ready) {
            if let Err(e) = p.begin(call.index, out, hooks).await {
                break Err(e);
            }
        }
        if p.begun {
            p.emit(call.index, out, hooks, stop);
            if p.runs.iter().all(|r| !r.live()) {
                break Ok(());
            }
        }
    };
    renewing.store(true, Ordering::Relaxed);
    match ended {
        Ok(()) => Ok(p.finish(opts, call.index, out, stop)),
        // Ends every host before an error: nothing is left running anywhere.
        Err(e) => {
            p.stop_hosts(true).await;
            Err(e)
        }
    }
}

/// Every host's share of the step, checked: the check `iorig run` made
/// just before (it checks before it stores anything) stands for the same
/// workloads; otherwise every host checks now.
async fn checked_hosts(
    hosts: &mut [Host],
    opts: &ControllerOptions,
    call: &StepCall<'_>,
    prechecked: Option<(String, Vec<proto::CheckReply>)>,
    out: &mut Out<'_>,
) -> Result<Vec<proto::CheckReply>, RunError> {
    let n_hosts = hosts.len();
    for (i, h) in hosts.iter_mut().enumerate() {
        let l = host_layer(call.layer, call.w, &h.spec, i, n_hosts, opts.rate);
        h.workload_json = serde_json::to_string(&l)
            .map_err(|e| RunError::runtime(format!("workload JSON: {e}")))?;
    }
    Ok(match prechecked {
        Some((key, checked)) if key == workloads_key(hosts) && !call.w.verify => checked,
        _ => {
            let (checked, notices, _) = check_all(hosts, opts, call).await?;
            for note in &notices {
                out.notice(note);
            }
            checked
        }
    })
}

/// Asks every host to run the step: each prepares (opens, fills, formats)
/// and says when it is ready; what its stream says comes on the channel.
fn open_streams(
    hosts: &[Host],
    opts: &ControllerOptions,
    run_id: &str,
    call: &StepCall<'_>,
    hooks: &dyn StepHooks,
    checked: &[proto::CheckReply],
) -> (mpsc::Receiver<Report>, Vec<HostRun>) {
    let (tx, rx) = mpsc::channel::<Report>(1024);
    let mut runs: Vec<HostRun> = Vec::with_capacity(hosts.len());
    for (i, h) in hosts.iter().enumerate() {
        let mut client = h.client.clone();
        let mut req = step_request(h, opts, call, Some(hooks));
        req.run_id = run_id.to_string();
        let tx = tx.clone();
        tokio::spawn(async move {
            // The stream has no overall deadline (a step runs for as long
            // as it runs); silence is caught by the lease.
            match bounded(CALL_TIMEOUT, client.run(Request::new(req))).await {
                Err(s) => {
                    let _ = tx.send(Report::Failed(i, s)).await;
                }
                Ok(mut stream) => loop {
                    let report = match stream.message().await {
                        Ok(Some(m)) => match m.msg {
                            Some(msg) => Report::Msg(i, Box::new(msg)),
                            None => continue,
                        },
                        Ok(None) => Report::Closed(i),
                        Err(s) => Report::Failed(i, s),
                    };
                    let last = !matches!(report, Report::Msg(..));
                    if tx.send(report).await.is_err() || last {
                        break;
                    }
                },
            }
        });
        runs.push(HostRun {
            state: State::Preparing,
            last_heard: Instant::now(),
            engine: checked[i].engine.clone(),
            targets: Vec::new(),
            byte_limit: None,
            start_skew_ns: None,
            samples: Vec::new(),
            doc: None,
            io_errors: 0,
            findings: Vec::new(),
            interval_bytes: 0,
        });
    }
    (rx, runs)
}

/// Renews every host's lease every quarter lease until the flag returned
/// is set (the step's end).
fn renew_leases(hosts: &[Host], run_id: &str, lease: Duration) -> Arc<AtomicBool> {
    let renewing = Arc::new(AtomicBool::new(false));
    for h in hosts {
        let mut client = h.client.clone();
        let run_id = run_id.to_string();
        let every = lease / 4;
        let done = renewing.clone();
        tokio::spawn(async move {
            while !done.load(Ordering::Relaxed) {
                let run = proto::RunRef {
                    run_id: run_id.clone(),
                };
                let renew = client.renew(request(run, every));
                let _ = bounded(every.max(Duration::from_millis(100)), renew).await;
                tokio::time::sleep(every).await;
            }
        });
    }
    renewing
}

/// A step in progress on every host: what each has said, and the totals
/// merged so far.
struct Progress<'h> {
    hosts: &'h [Host],
    run_id: &'h str,
    runs: Vec<HostRun>,
    /// Every host was ready and was given the start time.
    begun: bool,
    start_at_ns: i64,
    /// How long after its end (on the common time base) each total
    /// interval could be shown.
    lags_ns: Vec<i64>,
    all_targets: Vec<TargetInfo>,
    emitted: Vec<Interval>,
    emitted_samples: Vec<IntervalSample>,
}

impl<'h> Progress<'h> {
    fn new(hosts: &'h [Host], run_id: &'h str, runs: Vec<HostRun>) -> Self {
        Progress {
            hosts,
            run_id,
            runs,
            begun: false,
            start_at_ns: 0,
            lags_ns: Vec::new(),
            all_targets: Vec::new(),
            emitted: Vec::new(),
            emitted_samples: Vec::new(),
        }
    }

    /// Tells every host still running to stop (`interrupt`: as Ctrl-C
    /// does; else its step ends early) and waits for their answers.
    async fn stop_hosts(&self, interrupt: bool) {
        let mut calls = Vec::new();
        for (h, r) in self.hosts.iter().zip(&self.runs) {
            if r.live() {
                let mut client = h.client.clone();
                let run_id = self.run_id.to_string();
                calls.push(tokio::spawn(async move {
                    let req = request(proto::StopRequest { run_id, interrupt }, CALL_TIMEOUT);
                    let _ = bounded(CALL_TIMEOUT, client.stop(req)).await;
                }));
            }
        }
        for c in calls {
            let _ = c.await;
        }
    }

    /// Takes what a host's stream said; an error ends the step (a host
    /// refused or ended before the start, when nothing has run anywhere).
    fn take(
        &mut self,
        report: Option<Report>,
        opts: &ControllerOptions,
        index: usize,
        out: &mut Out<'_>,
        stop: &Stop,
    ) -> Result<(), RunError> {
        let hosts = self.hosts;
        match report {
            Some(Report::Msg(i, msg)) => {
                take_message(&mut self.runs[i], &hosts[i], *msg, opts, index, out, stop)
            }
            Some(Report::Failed(i, s)) if self.runs[i].live() && !self.begun => {
                // Refused while preparing: nothing has started anywhere;
                // every other host is told to stop.
                self.runs[i].state = State::Ended;
                let e = refusal(&hosts[i].spec, "preparing", &s);
                return Err(match s.code() {
                    tonic::Code::InvalidArgument
                    | tonic::Code::PermissionDenied
                    | tonic::Code::FailedPrecondition
                    | tonic::Code::Unauthenticated => e.into(),
                    _ => RunError::runtime(e.to_string()),
                });
            }
            Some(Report::Failed(i, s)) if self.runs[i].live() => {
                lose(&mut self.runs[i], &hosts[i].spec, &why_failed(&s), out);
            }
            Some(Report::Closed(i)) if self.runs[i].live() && !self.begun => {
                self.runs[i].state = State::Ended;
                return Err(RunError::runtime(format!(
                    "host {}: its run ended before it started",
                    hosts[i].spec.name
                )));
            }
            Some(Report::Closed(i)) if self.runs[i].live() => {
                let why = "its stream ended without a result";
                lose(&mut self.runs[i], &hosts[i].spec, why, out);
            }
            Some(_) | None => {}
        }
        Ok(())
    }

    /// A host silent for a lease is lost (before the start: the step
    /// cannot begin without it).
    fn watch_leases(
        &mut self,
        opts: &ControllerOptions,
        out: &mut Out<'_>,
    ) -> Result<(), RunError> {
        for (h, r) in self.hosts.iter().zip(self.runs.iter_mut()) {
            if r.live() && r.last_heard.elapsed() > opts.lease {
                let lease_s = opts.lease.as_secs();
                if !self.begun {
                    return Err(RunError::runtime(format!(
                        "host {}: silent for {lease_s} s while preparing; nothing was run",
                        h.spec.name,
                    )));
                }
                let why = format!("silent for more than the lease ({lease_s} s)");
                lose(r, &h.spec, &why, out);
            }
        }
        Ok(())
    }

    /// Every host is ready: the targets are told, and every host is given
    /// the common start time.
    async fn begin(
        &mut self,
        index: usize,
        out: &mut Out<'_>,
        hooks: &mut dyn StepHooks,
    ) -> Result<(), RunError> {
        self.begun = true;
        let hosts = self.hosts;
        self.all_targets = hosts
            .iter()
            .zip(&self.runs)
            .flat_map(|(h, r)| {
                r.targets.iter().map(|t| TargetInfo {
                    path: format!("{}:{}", h.spec.name, t.path),
                    ..t.clone()
                })
            })
            .collect();
        hooks.opened(out, &self.all_targets)?;
        // The agents label their metrics as the controller's own do.
        let metrics_run = out.store.run().map(|r| r.to_string()).unwrap_or_default();
        // A precondition's bytes: every host's own limit, summed.
        let limits: Vec<u64> = self.runs.iter().filter_map(|r| r.byte_limit).collect();
        let byte_limit = match (hooks.byte_passes(), limits.is_empty()) {
            (Some(p), false) => {
                let total: u64 = limits.iter().sum();
                hooks.byte_limit(total / u64::from(p.max(1)));
                Some(total)
            }
            _ => None,
        };
        out.send(Event::TargetsOpen {
            index,
            targets: &self.all_targets,
            engine: &self.runs[0].engine,
            byte_limit,
        });
        let max_rtt = hosts.iter().map(|h| h.clock.rtt_ns).max().unwrap_or(0);
        self.start_at_ns = ns_now() + START_MARGIN.as_nanos() as i64 + 2 * max_rtt as i64;
        let mut calls = Vec::new();
        for h in hosts {
            let mut client = h.client.clone();
            let req = proto::StartRequest {
                run_id: self.run_id.to_string(),
                start_unix_ns: self.start_at_ns + h.clock.offset_ns,
                metrics_run: metrics_run.clone(),
                metrics_host: h.spec.name.clone(),
            };
            calls.push(tokio::spawn(async move {
                bounded(CALL_TIMEOUT, client.start(request(req, CALL_TIMEOUT))).await
            }));
        }
        for (i, c) in calls.into_iter().enumerate() {
            if !matches!(c.await, Ok(Ok(proto::StartReply { running: true }))) {
                let why = "it did not take the start time";
                lose(&mut self.runs[i], &hosts[i].spec, why, out);
            }
        }
        Ok(())
    }

    /// Merges and shows every interval all live hosts have delivered.
    fn emit(&mut self, index: usize, out: &mut Out<'_>, hooks: &mut dyn StepHooks, stop: &Stop) {
        let before = self.emitted.len();
        emit_ready(
            &self.runs,
            index,
            &mut self.emitted,
            &mut self.emitted_samples,
            out,
            hooks,
            stop,
        );
        let now = ns_now();
        for s in &self.emitted_samples[before..] {
            let end = self.start_at_ns + (s.t_s * 1e9) as i64;
            self.lags_ns.push((now - end).max(0));
        }
    }

    /// The step's totals and each host's part, once every host has ended
    /// or is lost.
    fn finish(
        self,
        opts: &ControllerOptions,
        index: usize,
        out: &mut Out<'_>,
        stop: &Stop,
    ) -> StepOutput {
        let n = self.hosts.len();
        let lost = self
            .runs
            .iter()
            .filter(|r| matches!(r.state, State::Lost { .. }))
            .count();
        let outcome = self.outcome(lost, stop);
        let mut host_results = Vec::with_capacity(n);
        let mut host_stats = Vec::with_capacity(n);
        for (h, r) in self.hosts.iter().zip(&self.runs) {
            host_stats.push(summary_of_samples(&r.samples, &[]).1);
            host_results.push(host_result(h, r, opts));
        }
        for (position, h) in host_results.iter().enumerate() {
            out.send(Event::HostEnded {
                index,
                position,
                host: h,
            });
        }
        if !self.emitted.is_empty() {
            out.notice(&self.merge_line());
        }
        if lost > 0 {
            out.notice(&format!(
                "degraded: {lost} of {n} hosts were lost mid-step; the totals after their loss count the other hosts only"
            ));
        }
        StepOutput {
            engine_name: self
                .runs
                .first()
                .map_or_else(String::new, |r| r.engine.clone()),
            targets: self.all_targets,
            outcome,
            intervals: self.emitted,
            verify: None,
            extents_bytes: Vec::new(),
            trim_pass: None,
            format: None,
            hosts: host_results,
            host_stats,
            jobs: Vec::new(),
        }
    }

    /// The totals of every host, as one run's outcome.
    fn outcome(&self, lost: usize, stop: &Stop) -> RunOutcome {
        let io_errors: u64 = self.runs.iter().map(|r| r.io_errors).sum();
        let mut messages: Vec<String> = Vec::new();
        for (h, r) in self.hosts.iter().zip(&self.runs) {
            if let State::Lost { at_index, why } = &r.state {
                messages.push(format!(
                    "host {} lost at interval {} ({why})",
                    h.spec.name,
                    at_index + 1
                ));
            }
            if let Some(d) = &r.doc {
                for m in &d.summary.error_messages {
                    messages.push(format!("host {}: {m}", h.spec.name));
                }
            }
        }
        let (_, stats, measured_s, cpu) = summary_of_samples(&self.emitted_samples, &messages);
        // The hosts' workers together, as each agent measured its own.
        let mut thread_usage = iorig_stats::ThreadUsage::default();
        for r in &self.runs {
            if let Some(u) = r.doc.as_ref().and_then(|d| d.summary.workers_cpu) {
                thread_usage.add(&u);
            }
        }
        RunOutcome {
            summary: stats,
            measured_s,
            cpu,
            // A lost host fails the step as an I/O error does.
            errors: io_errors + lost as u64,
            error_messages: messages,
            ended_early: stop.interrupted() || lost > 0,
            intervals: self.emitted.len(),
            validation: None,
            worker_busy_pct: Vec::new(),
            thread_usage,
            longest_gap_ns: self
                .emitted_samples
                .iter()
                .filter(|s| !s.warmup)
                .map(|s| s.longest_gap_ns)
                .max()
                .unwrap_or(0),
            longest_gap_start_s: 0.0,
            limited_bytes: None,
            journal_ns: 0,
            journal_batches: 0,
            notices: Vec::new(),
        }
    }

    /// How the merge kept up: the lag of the totals and the data per host.
    fn merge_line(&self) -> String {
        let lags = &self.lags_ns;
        let max_lag = lags.iter().copied().max().unwrap_or(0) as f64 / 1e6;
        let mean_lag = lags.iter().sum::<i64>() as f64 / lags.len().max(1) as f64 / 1e6;
        let per_host_interval = self.runs.iter().map(|r| r.interval_bytes).sum::<u64>() as f64
            / self
                .runs
                .iter()
                .map(|r| r.samples.len())
                .sum::<usize>()
                .max(1) as f64;
        format!(
            "controller: {} intervals of {} hosts merged; each total shown {mean_lag:.1} ms after its interval ended on average ({max_lag:.1} ms at most); {per_host_interval:.0} bytes of interval data per host and interval",
            self.emitted.len(),
            self.hosts.len()
        )
    }
}

/// One message of a host's stream, taken into its run.
fn take_message(
    r: &mut HostRun,
    h: &Host,
    msg: Msg,
    opts: &ControllerOptions,
    index: usize,
    out: &mut Out<'_>,
    stop: &Stop,
) {
    let name = &h.spec.name;
    r.last_heard = Instant::now();
    if let Msg::Interval(m) = &msg {
        r.interval_bytes += prost::Message::encoded_len(m) as u64;
    }
    match msg {
        Msg::Notice(t) => out.notice(&format!("host {name}: {t}")),
        Msg::Opened(o) => {
            r.engine = o.engine;
            r.byte_limit = (o.byte_limit > 0).then_some(o.byte_limit);
            r.targets = o
                .targets
                .iter()
                .filter_map(|t| wire::target_of(t).ok())
                .collect();
            if r.state == State::Preparing {
                r.state = State::Ready;
            }
        }
        Msg::Started(s) => {
            r.start_skew_ns = Some(s.start_skew_ns);
            if r.state == State::Ready {
                r.state = State::Running;
            }
            if s.start_skew_ns.unsigned_abs() > opts.skew_limit.as_nanos() as u64 {
                out.notice(&format!(
                    "host {name}: its I/O started {:.1} ms from the common start (limit {:.1} ms); its intervals are that far off the others'",
                    s.start_skew_ns as f64 / 1e6,
                    opts.skew_limit.as_secs_f64() * 1e3
                ));
            }
        }
        Msg::Interval(m) => match wire::interval_of(&m) {
            Ok(s) => {
                out.send(Event::HostInterval {
                    index,
                    host: name,
                    sample: &s,
                });
                r.samples.push(s);
            }
            Err(e) => out.notice(&format!("host {name}: {e}")),
        },
        Msg::WorkerError(t) => out.notice(&format!("host {name}: {t}")),
        Msg::FindingJson(j) => {
            if let Ok(f) = serde_json::from_str::<Finding>(&j) {
                if let Finding::GeneratorBound(v) = &f {
                    if let (true, Some(m)) = (v.generator_bound, &v.message) {
                        out.notice(&format!("host {name}: {m}"));
                    }
                }
                r.findings.push(f);
            }
        }
        Msg::Ended(e) => {
            r.io_errors = e.io_errors;
            r.doc = serde_json::from_str(&e.result_json).ok();
            r.state = State::Ended;
            // Interrupted there (its operator, its shutdown) while this run
            // went on: the host is gone from the rest of the step.
            if e.status == "interrupted" && !stop.interrupted() {
                lose(r, &h.spec, "its agent interrupted the run there", out);
            }
        }
        Msg::Heartbeat(_) => {}
    }
}

/// A host's part of the step, as the run stores it.
fn host_result(h: &Host, r: &HostRun, opts: &ControllerOptions) -> HostResult {
    // The agent's own document has the same intervals, computed there; a
    // lost host's are computed here from what it delivered.
    let intervals: Vec<Interval> = match &r.doc {
        Some(d) if d.intervals.len() == r.samples.len() => d.intervals.clone(),
        _ => r.samples.iter().map(interval_of).collect(),
    };
    let summary = match &r.doc {
        Some(d) => d.summary.clone(),
        None => summary_of_samples(&r.samples, &[]).0,
    };
    let (status, lost_at_interval, lost_at_s, lost_reason) = match &r.state {
        State::Lost { at_index, why } => (
            HostStatus::Lost,
            Some(*at_index),
            Some(r.samples.last().map_or(0.0, |s| s.t_s)),
            Some(why.clone()),
        ),
        _ => (HostStatus::Ok, None, None, None),
    };
    HostResult {
        name: h.spec.name.clone(),
        address: h.spec.address.clone(),
        hostname: h.hello.hostname.clone(),
        tool_version: h.hello.tool_version.clone(),
        // An agent before protocol 1.1 sends none.
        system: serde_json::from_str(&h.hello.system_json).ok(),
        status,
        lost_at_interval,
        lost_at_s,
        lost_reason,
        clock_offset_ns: h.clock.offset_ns,
        clock_rtt_ns: h.clock.rtt_ns,
        start_skew_ns: r.start_skew_ns,
        start_skew_flagged: r
            .start_skew_ns
            .is_some_and(|s| s.unsigned_abs() > opts.skew_limit.as_nanos() as u64),
        engine: r.engine.clone(),
        targets: r.targets.iter().map(target_entry).collect(),
        summary,
        intervals,
        findings: r.findings.clone(),
    }
}

/// Steps of several jobs run on this machine only (for now).
fn refuse_jobs(call: &StepCall<'_>) -> Result<(), RunError> {
    if !call.jobs.is_empty() {
        return Err(RunError::usage(
            "a step with [[steps.jobs]] (several jobs, or a fio job) runs on this machine only; run it without --hosts, or give each workload its own step without jobs",
        ));
    }
    if call.w.min_iops.is_some() {
        return Err(RunError::usage(
            "min_iops is checked on this machine only; run it without --hosts, or drop min_iops",
        ));
    }
    Ok(())
}

/// Emits every total interval that no live host still owes, asking the
/// runner's hooks after each (a steady state ends the step early).
fn emit_ready(
    runs: &[HostRun],
    index: usize,
    emitted: &mut Vec<Interval>,
    emitted_samples: &mut Vec<IntervalSample>,
    out: &mut Out<'_>,
    hooks: &mut dyn StepHooks,
    stop: &Stop,
) {
    loop {
        let k = emitted.len();
        if runs.iter().any(|r| r.samples.len() <= k && r.live()) {
            return;
        }
        let parts: Vec<&IntervalSample> = runs.iter().filter_map(|r| r.samples.get(k)).collect();
        let Some(total) = merge_interval(&parts) else {
            return;
        };
        emitted.push(iorig_run::step::deliver_interval(
            &total, index, out, stop, hooks,
        ));
        emitted_samples.push(total);
    }
}

/// What the rate means on many hosts, said once.
pub fn rate_line(w: &Workload, o: &ControllerOptions) -> String {
    let n = o.hosts.len().max(1) as f64;
    match (o.rate, w.rate) {
        (RateShare::PerHost(r), _) => format!(
            "rate: {r:.0} IOPS on each host (--rate-per-host), {:.0} in total",
            r * n
        ),
        (RateShare::Total, iorig_spec::Rate::Iops(t)) => format!(
            "rate: {t:.0} IOPS in total (--rate), {:.1} on each host",
            t / n
        ),
        (RateShare::Total, iorig_spec::Rate::Max) => "rate: unpaced on every host".to_string(),
    }
}

/// Why a host's stream failed, in words about the host: a broken
/// connection reads "h2 protocol error: ..." from the HTTP/2 layer, which
/// looks like a host named h2.
fn why_failed(s: &tonic::Status) -> String {
    let msg = s.message();
    // The HTTP/2 layer's own words, not an agent's report that happens to
    // name a connection (its target's iSCSI session, say).
    let transport = ["h2 protocol error", "transport error"]
        .iter()
        .any(|w| msg.starts_with(w));
    if transport || matches!(s.code(), tonic::Code::Unavailable) {
        let detail = msg
            .trim_start_matches("h2 protocol error: ")
            .trim_start_matches("transport error: ");
        let detail = if detail.is_empty() {
            "no detail"
        } else {
            detail
        };
        format!("connection to the agent broke (HTTP/2: {detail})")
    } else if msg.is_empty() {
        format!("the agent ended its stream with {:?}", s.code())
    } else {
        format!("the agent reported: {msg}")
    }
}

/// Marks a host lost at the first interval it did not deliver.
fn lose(r: &mut HostRun, spec: &HostSpec, why: &str, out: &mut Out<'_>) {
    let at_index = r.samples.len();
    r.state = State::Lost {
        at_index,
        why: why.to_string(),
    };
    out.notice(&format!(
        "host {} lost at interval {} ({}): the step goes on with the other hosts",
        spec.name,
        at_index + 1,
        why
    ));
}

/// The first error by host order, with the count of the others.
fn first_error(mut errors: Vec<(usize, String)>) -> Option<String> {
    errors.sort_by_key(|(i, _)| *i);
    let more = errors.len().saturating_sub(1);
    errors.into_iter().next().map(|(_, e)| {
        if more > 0 {
            format!("{e} (and {more} more host(s) refused)")
        } else {
            e
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iorig_stats::{CpuUsage, IntervalStats, OpStats};

    #[test]
    fn a_broken_connection_is_said_as_one_not_as_a_host_named_h2() {
        let s = tonic::Status::unknown("h2 protocol error: error reading a body from connection");
        assert_eq!(
            why_failed(&s),
            "connection to the agent broke (HTTP/2: error reading a body from connection)"
        );
        let s = tonic::Status::internal("target /dev/sdb vanished");
        assert_eq!(
            why_failed(&s),
            "the agent reported: target /dev/sdb vanished"
        );
    }

    fn sample(index: usize, lats: &[u64], gap: u64) -> IntervalSample {
        let mut stats = IntervalStats::default();
        let mut op = OpStats::default();
        for &l in lats {
            op.ops += 1;
            op.bytes += 4096;
            op.lat.record(l);
        }
        stats.read = op;
        IntervalSample {
            index,
            t_s: (index + 1) as f64,
            duration_s: 1.0,
            warmup: false,
            stats,
            cpu: CpuUsage {
                usr_pct: 10.0,
                sys_pct: 20.0,
                steal_pct: 0.0,
            },
            device: None,
            longest_gap_ns: gap,
            gap_start_ns: 0,
            worker_busy_max_pct: 5.0,
        }
    }

    #[test]
    fn a_total_interval_merges_histograms_and_sums_counts() {
        // Host a: 100 fast I/Os; host b: 100 slow ones. The merged p99 is
        // the slow host's, not the mean of the two p99s.
        let a = sample(0, &vec![100_000; 100], 5);
        let b = sample(0, &vec![10_000_000; 100], 9);
        let t = merge_interval(&[&a, &b]).expect("merged");
        assert_eq!(t.stats.read.ops, 200);
        assert_eq!(t.stats.read.bytes, 200 * 4096);
        let p99 = t.stats.read.lat.value_at_quantile(0.99);
        let mut union = iorig_stats::LatencyHistogram::new();
        union.merge(&a.stats.read.lat);
        union.merge(&b.stats.read.lat);
        assert_eq!(p99, union.value_at_quantile(0.99));
        assert!(p99 >= 9_990_000, "{p99}");
        assert_eq!(t.longest_gap_ns, 5);
        assert!((t.cpu.sys_pct - 20.0).abs() < 1e-9);
        assert!(merge_interval(&[]).is_none());
    }

    #[test]
    fn the_rate_is_a_total_unless_given_per_host() {
        let layer = WorkloadFile {
            rate: Some(StrOrNum::Str("1000".into())),
            engine: Some(iorig_spec::EngineKind::Null),
            ..WorkloadFile::default()
        };
        let w = layer.resolve(7).expect("resolves");
        let spec = crate::hosts::parse_list("a").expect("host").remove(0);
        let l = host_layer(&layer, &w, &spec, 1, 4, RateShare::Total);
        assert_eq!(l.rate, Some(StrOrNum::Float(250.0)));
        assert_eq!(l.seed, Some(8));
        let l = host_layer(&layer, &w, &spec, 0, 4, RateShare::PerHost(1000.0));
        assert_eq!(l.rate, Some(StrOrNum::Float(1000.0)));
    }
}
