//! iorig's command line, declared once (clap derive): every subcommand and
//! flag with its help, the value parsers that refuse a bad value in one line,
//! and nothing that runs. The binary parses with [`Cli`] and wires each
//! command to the libraries; completions and the man page come from the same
//! tree. Workload values stay text here: iorig-spec parses and validates them,
//! so a flag and a workload-file key behave the same.

pub mod generate;
pub mod value;

use clap::{Args, Parser, Subcommand};
use iorig_store::Location;
use std::collections::BTreeMap;
use std::path::PathBuf;

use iorig_store::NOT_UTF8_URL;

/// Reads `--db` and `--to` without clap's "invalid value '…'", which
/// repeats the value: a URL the client could not read may hold a
/// password, and the message must not show it.
#[derive(Clone, Copy, Debug)]
pub struct LocationParser;

impl clap::builder::TypedValueParser for LocationParser {
    type Value = Location;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Location, clap::Error> {
        let refuse =
            |e: String| iorig_spec::flag_error(arg, clap::error::ErrorKind::ValueValidation, e);
        let Some(text) = value.to_str() else {
            use std::os::unix::ffi::OsStrExt;
            if iorig_store::looks_like_pg_url(value.as_bytes()) {
                return Err(refuse(NOT_UTF8_URL.into()));
            }
            // Not UTF-8 and no URL: a path as it is.
            return Ok(Location::File(PathBuf::from(value)));
        };
        text.parse().map_err(refuse)
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "iorig",
    version,
    about = "iorig: a storage performance test rig",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one workload against files or block devices and report IOPS,
    /// bandwidth and latency per interval.
    Run(Box<RunArgs>),
    /// The five-parameter characterisation (sequential write and read, random
    /// write, random read cold and hot) on a scratch file or TARGET.
    Quick(QuickArgs),
    /// Print a fio job file or a vdbench parameter file as the equivalent
    /// iorig plan (TOML); exit 2 with the file, line and reason when something
    /// cannot be translated.
    Import {
        /// The fio job file or vdbench parameter file.
        file: PathBuf,
        /// What FILE is: fio or vdbench [default: told from its content].
        #[arg(long, value_name = "FORMAT")]
        format: Option<String>,
        /// Leave out the options iorig does not support (listed on stderr and
        /// in the plan's labels) instead of refusing the file.
        #[arg(long)]
        ignore_unsupported: bool,
        /// Set a vdbench parameter file's $NAME to VALUE (repeatable).
        #[arg(long = "set", value_name = "NAME=VALUE")]
        set: Vec<String>,
    },
    /// Test plans: sweeps, curves, preconditioning, steady state.
    #[command(subcommand)]
    Plan(PlanCommand),
    /// The result store: list, show, label, delete and push runs.
    #[command(subcommand)]
    Runs(RunsCommand),
    /// Re-read every block a journaled run wrote and check it (after a crash,
    /// a power loss, or just later). Exits 0 when clean, 3 on errors.
    Verify(VerifyArgs),
    /// Block traces: what a host's I/O was, its hot spot and the cache it
    /// needs.
    #[command(subcommand)]
    Trace(TraceCommand),
    /// Characterise a live system's I/O from /proc/diskstats (or a recording):
    /// per device and in total, mean, p95 and peak; verdicts from rule sets; a
    /// workload that replays the mix. Ends after --time or at Ctrl-C.
    Profile(ProfileArgs),
    /// Write a self-contained HTML report of a run (DIR/index.html, plus each
    /// chart as SVG and PNG).
    Report {
        /// The run id (iorig runs list).
        id: i64,
        /// Output directory [default: ./iorig-report-ID].
        #[arg(long, short, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Steps to draw in detail, by number, e.g. 5,10-20 [default: all up
        /// to 40; beyond, those with warnings first, then in order].
        #[arg(long, value_name = "LIST")]
        steps: Option<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Export a run as CSV (steps, plus the intervals beside them), XLSX, JSON or HdrHistogram log.
    Export {
        /// The run id (iorig runs list).
        id: i64,
        /// csv: steps to FILE and intervals to FILE.intervals.csv; xlsx: one
        /// workbook; json: the whole run (schema iorig.run/1); hlog: latency
        /// histograms per interval to FILE (HdrHistogram interval log) and
        /// each step's percentiles to FILE.percentiles.csv.
        #[arg(long, value_name = "csv|xlsx|json|hlog")]
        format: ExportFormat,
        /// Output file.
        #[arg(long, short, value_name = "FILE")]
        out: PathBuf,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Compare runs step by step: a terminal table with % change against the
    /// first run, and an HTML page overlaying their curves and scaling charts.
    Compare {
        /// Two or more run ids; the first is the baseline.
        #[arg(required = true, num_args = 2.., value_name = "ID")]
        ids: Vec<i64>,
        /// Output directory [default: ./iorig-compare-ID-ID...].
        #[arg(long, short, value_name = "DIR")]
        out: Option<PathBuf>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Serve the result store as web pages and a JSON API: the runs, a
    /// run's report, comparisons, runs in progress and their live view
    /// (docs/serve.md).
    Serve(ServeArgs),
    /// Serve as a load host for controllers on other machines (`iorig run
    /// --hosts`): runs one step at a time, streams its intervals, stops its
    /// I/O when the controller is gone. Ends at Ctrl-C or SIGTERM.
    Agent(AgentArgs),
    /// Print a shell completion script (see README: install it where your
    /// shell looks, e.g. ~/.local/share/bash-completion/completions/iorig).
    Completions {
        /// The shell to complete in.
        shell: clap_complete::Shell,
    },
    /// Print a manual page (roff): iorig(1), or a command's, e.g. `iorig man
    /// plan run`; or install every page into a directory with --install.
    Man {
        /// The command whose page to print, e.g. run, or plan run [default:
        /// iorig(1) itself].
        #[arg(value_name = "COMMAND")]
        command: Vec<String>,
        /// Write every page (iorig.1, iorig-run.1, iorig-plan-run.1, ...)
        /// into DIR, e.g. ~/.local/share/man/man1, instead of printing one.
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        install: Option<PathBuf>,
    },
}

impl Cli {
    /// The command line parsed with the examples and hints of
    /// [`generate::command`] (what `--help` shows).
    pub fn parse_args() -> Result<Cli, clap::Error> {
        use clap::FromArgMatches;
        let matches = generate::command().try_get_matches()?;
        Cli::from_arg_matches(&matches)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    Csv,
    Xlsx,
    Json,
    Hlog,
}

#[derive(Debug, Args)]
pub struct StoreArgs {
    /// Result store: a file, or a postgres:// URL [default: $IORIG_DB or
    /// ./iorig.db].
    #[arg(long, value_name = "PATH|URL", value_parser = LocationParser)]
    pub db: Option<Location>,
}

/// Serving a run's figures to Prometheus as it runs.
#[derive(Debug, Args, Default, Clone)]
pub struct MetricsArgs {
    /// Serve Prometheus metrics of the run at http://ADDR:PORT/metrics while
    /// it runs; an address off loopback needs --metrics-token-file.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// File whose first line is the token /metrics requires
    /// (Authorization: Bearer TOKEN); needed off loopback.
    #[arg(long, value_name = "FILE", requires = "metrics_listen")]
    pub metrics_token_file: Option<PathBuf>,
}

/// Storage-side figures asked for at every interval.
#[derive(Debug, Args, Default, Clone)]
pub struct CollectArgs {
    /// Collect the storage's own figures at every interval, stored beside
    /// iorig's: prometheus=http://HOST:PORT/metrics[,match=GLOB|GLOB] or
    /// cmd=COMMAND (prints NAME VALUE lines); repeatable (docs/collect.md).
    #[arg(long = "collect", value_name = "SOURCE")]
    pub collect: Vec<iorig_run::collect::CollectSource>,
}

/// Where a plan or quick run is recorded, and its labels.
#[derive(Debug, Args)]
pub struct RecordArgs {
    /// Result store: a file, or a postgres:// URL [default: $IORIG_DB or
    /// ./iorig.db].
    #[arg(long, value_name = "PATH|URL", value_parser = LocationParser)]
    pub db: Option<Location>,
    /// Do not record the run in the result store.
    #[arg(long, conflicts_with = "db")]
    pub no_db: bool,
    /// Label the run (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
}

#[derive(Debug, Args)]
pub struct QuickArgs {
    /// File or block device [default: ./iorig-scratch.dat].
    pub target: Option<String>,
    /// Size of a new scratch file's test data (needed for any name but ./iorig-scratch.dat, which is 1g by default; the file is 1 MiB larger: the header that marks it as iorig's); an existing iorig file is grown or shrunk to it; a device or foreign file has its first SIZE bytes tested.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Measured time of each step (and of each steady-state round) [default: 10s].
    #[arg(long, value_name = "DUR")]
    pub step_time: Option<String>,
    /// Working set of the hot random-read test, a size or a % of the target
    /// [default: 10%].
    #[arg(long, value_name = "SIZE|PCT%")]
    pub hot_size: Option<String>,
    #[command(flatten)]
    pub record: RecordArgs,
    /// Write the run as JSON (schema iorig.run/1, as `iorig export --format
    /// json` writes it) to FILE, or to stdout with - (the text then goes to
    /// stderr); needs the store (not with --no-db).
    #[arg(long, value_name = "FILE|-", conflicts_with = "no_db")]
    pub json: Option<String>,
    #[command(flatten)]
    pub hosts: HostArgs,
    /// Print the steps and the estimated time, run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Allow writing to block devices or files that are in use or hold data
    /// iorig did not write.
    #[arg(long)]
    pub allow_destroy: bool,
    /// Print only step summaries and the result.
    #[arg(long, short)]
    pub quiet: bool,
}

impl QuickArgs {
    /// The built-in five-params plan on the target (the scratch file by
    /// default) with short steps unless --step-time says otherwise.
    pub fn invocation(&self) -> Result<iorig_run::plan::Invocation, iorig_run::RunError> {
        let mut inv = iorig_run::plan::Invocation::from_builtin("five-params")?;
        let target = self.target.clone();
        inv.targets = Some(vec![
            target.unwrap_or_else(|| iorig_spec::DEFAULT_TARGET.into())
        ]);
        // No default size: the default scratch file is made 1 GiB when
        // missing, another missing file needs --size (a mistyped path is
        // refused), and an existing file or device is tested whole unless
        // --size says otherwise.
        inv.size = self.size.clone();
        inv.step_time = Some(self.step_time.clone().unwrap_or_else(|| "10s".into()));
        inv.hot_size = self.hot_size.clone();
        inv.allow_destroy = self.allow_destroy;
        Ok(inv)
    }
}

// Parsed once per process: the size of the biggest variant costs nothing.
#[derive(Debug, Subcommand)]
pub enum PlanCommand {
    /// Run a plan file or a built-in plan.
    Run(Box<PlanRunArgs>),
    /// Continue an interrupted plan at its first incomplete step.
    Resume {
        /// The run id (iorig runs list).
        id: i64,
        #[command(flatten)]
        store: StoreArgs,
        /// Print only step summaries.
        #[arg(long, short)]
        quiet: bool,
        /// Allow writing over targets that hold data iorig did not write.
        /// Never taken from the stored run: a resume must be given it again.
        #[arg(long)]
        allow_destroy: bool,
    },
    /// List the built-in plans.
    Builtins,
}

#[derive(Debug, Args)]
pub struct PlanRunArgs {
    /// Plan TOML file (see docs/plans.md).
    #[arg(required_unless_present = "builtin", conflicts_with = "builtin")]
    pub file: Option<PathBuf>,
    /// Run a built-in plan instead of a file (iorig plan builtins).
    #[arg(long, value_name = "NAME")]
    pub builtin: Option<String>,
    /// Replace the plan's targets (repeatable).
    #[arg(long = "target", value_name = "PATH")]
    pub targets: Vec<String>,
    /// Size of a new scratch file's test data (needed for any name but ./iorig-scratch.dat, which is 1g by default; the file is 1 MiB larger: the header that marks it as iorig's); an existing iorig file is grown or shrunk to it; a device or foreign file has its first SIZE bytes tested.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Set every step's measured time (and each steady-state round), scaling warmups
    /// and pauses, to try a long plan in minutes.
    #[arg(long, value_name = "DUR")]
    pub step_time: Option<String>,
    /// Working set of hot-data steps, a size or a % of the target.
    #[arg(long, value_name = "SIZE|PCT%")]
    pub hot_size: Option<String>,
    /// Each host's cache tier, for working sets sized as a share of it (the
    /// cluster plan); without it the cache is found (bcache) or assumed to be a
    /// third of the targets.
    #[arg(long, value_name = "SIZE")]
    pub cache_size: Option<String>,
    /// File slots per leaf directory of every file-system step (steps whose target is a directory).
    #[arg(long, value_name = "N")]
    pub files: Option<String>,
    /// File sizes of every file-system step, e.g. 4k or 4k:70,64k:30.
    #[arg(long, value_name = "SIZE|SIZE:W,...")]
    pub file_size: Option<String>,
    /// Journal the validated writes of every validating step (all on the
    /// same targets) so `iorig verify --journal FILE` checks them later.
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Print the expanded steps, their count and the estimated time; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Run even a plan estimated to take over 24 hours (refused without it).
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub record: RecordArgs,
    /// Write the run as JSON (schema iorig.run/1, as `iorig export --format
    /// json` writes it) to FILE, or to stdout with - (the text then goes to
    /// stderr); needs the store (not with --no-db).
    #[arg(long, value_name = "FILE|-", conflicts_with = "no_db")]
    pub json: Option<String>,
    #[command(flatten)]
    pub metrics: MetricsArgs,
    #[command(flatten)]
    pub collect: CollectArgs,
    #[command(flatten)]
    pub hosts: HostArgs,
    /// Allow writing to block devices or files that are in use or hold data
    /// iorig did not write.
    #[arg(long)]
    pub allow_destroy: bool,
    /// Print only step summaries.
    #[arg(long, short)]
    pub quiet: bool,
}

impl TraceAnalyseArgs {
    /// The analysis as the flags ask for it.
    pub fn options(&self) -> iorig_trace::analyse::Options {
        iorig_trace::analyse::Options {
            block_bytes: self.block_bytes,
            extent_bytes: self.extent_bytes,
            hit: self.hit,
            sample: self.sample,
            window_ns: self.window.as_nanos() as u64,
            lru: !self.no_lru,
            ..Default::default()
        }
    }
}

impl TraceReplayArgs {
    /// The replay as the flags ask for it (timed at --speed, 1 by default,
    /// unless --afap).
    pub fn replay(&self, labels: BTreeMap<String, String>) -> iorig_run::replay::Replay {
        use iorig_run::replay::{Replay, ReplaySetup};
        Replay {
            setup: ReplaySetup {
                file: self.file.clone(),
                format: self.format,
                bad: iorig_trace::BadRecords::skipped_if(self.skip_bad),
                speed: (!self.afap).then(|| self.speed.unwrap_or(1.0)),
                map: self.map,
                align_bytes: self.align_bytes,
                async_submit: self.async_submit,
                facts: Default::default(),
            },
            qd: self.qd,
            time: self.time.clone(),
            targets: self.targets.clone(),
            size: self.size.clone(),
            engine: self.engine,
            interval: self.interval.clone(),
            labels,
        }
    }
}

impl PlanRunArgs {
    /// The plan to run: the file or the built-in, with the flags that
    /// override its targets, sizes, times and journal.
    pub fn invocation(&self) -> Result<iorig_run::plan::Invocation, iorig_run::RunError> {
        use iorig_run::plan::Invocation;
        let mut inv = match (&self.file, &self.builtin) {
            (_, Some(name)) => Invocation::from_builtin(name)?,
            (Some(path), None) => Invocation::from_file(path)?,
            (None, None) => {
                return Err(iorig_run::RunError::usage(
                    "give a plan file or --builtin NAME (iorig plan builtins lists them)",
                ))
            }
        };
        if !self.targets.is_empty() {
            inv.targets = Some(self.targets.clone());
        }
        inv.size = self.size.clone();
        inv.hot_size = self.hot_size.clone();
        inv.cache_size = self.cache_size.clone();
        inv.step_time = self.step_time.clone();
        inv.files = self.files.clone();
        inv.file_size = self.file_size.clone();
        inv.journal = self.journal.clone();
        inv.allow_destroy = self.allow_destroy;
        Ok(inv)
    }
}

#[derive(Debug, Subcommand)]
pub enum RunsCommand {
    /// List the runs, oldest first.
    List {
        #[command(flatten)]
        store: StoreArgs,
        /// As a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Show a run and its steps.
    Show {
        /// The run id (iorig runs list).
        id: i64,
        #[command(flatten)]
        store: StoreArgs,
        /// As JSON: {"run": {...}, "steps": [...]}.
        #[arg(long)]
        json: bool,
    },
    /// Set labels on a run.
    Label {
        /// The run id (iorig runs list).
        id: i64,
        /// KEY=VALUE (one or more).
        #[arg(required = true, value_name = "KEY=VALUE")]
        labels: Vec<String>,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Delete a run and everything recorded for it.
    Delete {
        /// The run id (iorig runs list).
        id: i64,
        #[command(flatten)]
        store: StoreArgs,
    },
    /// Copy runs into another store (a team's postgres:// database, or a
    /// file), with new ids there; a run the other store has is not copied
    /// again.
    Push {
        /// The run ids (iorig runs list).
        #[arg(required_unless_present = "all", value_name = "RUN_ID")]
        ids: Vec<i64>,
        /// Push every run of --db.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
        /// The store to copy into: a postgres:// URL or a file.
        #[arg(long, value_name = "PATH|URL", value_parser = LocationParser)]
        to: Location,
        #[command(flatten)]
        store: StoreArgs,
    },
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Result store: a file, or a postgres:// URL [default: $IORIG_DB or
    /// ./iorig.db].
    #[arg(long, value_name = "PATH|URL", value_parser = LocationParser)]
    pub db: Option<Location>,
    /// Address and port to listen on; off loopback a token is required.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    pub listen: std::net::SocketAddr,
    /// File whose first line is the token every page and API call needs
    /// (Authorization: Bearer TOKEN, or the sign-in page's cookie).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Also serve Prometheus metrics of the store's runs in progress at
    /// http://ADDR:PORT/metrics; off loopback it needs --token-file, whose
    /// token /metrics then asks for.
    #[arg(long, value_name = "ADDR:PORT")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// Address and port to listen on; off loopback, --token-file or the
    /// three --tls-* files are required.
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:7420", value_parser = value::Checked(value::agent_listen))]
    pub listen: std::net::SocketAddr,
    /// File whose first line is the token every request must carry (the
    /// controller gives the same file).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Allow controllers' --allow-destroy on this host (without it, a
    /// controller cannot make this agent overwrite data it did not write).
    #[arg(long)]
    pub allow_destroy: bool,
    /// Write each run's own result (schema iorig.result/1) to
    /// DIR/RUN_ID.json (DIR is made if missing, in a directory that exists).
    #[arg(long, value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
    /// Also record each run in this result store, a file or a postgres://
    /// URL [default: none].
    #[arg(long, value_name = "PATH|URL", value_parser = LocationParser)]
    pub db: Option<Location>,
    #[command(flatten)]
    pub metrics: MetricsArgs,
    #[command(flatten)]
    pub tls: TlsArgs,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Mutual TLS between a controller and its agents (all three or none).
#[derive(Debug, Default, Clone, Args)]
pub struct TlsArgs {
    /// This side's certificate (PEM); with --tls-key and --tls-ca, mutual
    /// TLS: each side must show a certificate the CA signed.
    #[arg(long, value_name = "FILE")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "FILE")]
    pub tls_key: Option<PathBuf>,
    /// The CA (PEM) the other side's certificate must be signed by.
    #[arg(long, value_name = "FILE")]
    pub tls_ca: Option<PathBuf>,
}

/// Running on many hosts at once (`iorig agent` on each).
#[derive(Debug, Default, Clone, Args)]
pub struct HostArgs {
    /// Run on these agents at once: HOST[:PORT],... (port 7420 by default),
    /// or k8s:SERVICE.NAMESPACE for every pod behind a headless service.
    #[arg(long, value_name = "LIST", conflicts_with = "hosts_file")]
    pub hosts: Option<String>,
    /// Hosts from a TOML file: [[host]] tables with address and optional
    /// name, targets, labels, token_file (docs/hosts.md).
    #[arg(long, value_name = "FILE")]
    pub hosts_file: Option<PathBuf>,
    /// The agents' token (a file whose first line is the token).
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// An agent stops its I/O when the controller is silent this long, and
    /// a host silent this long is lost [default: 10s].
    #[arg(long, value_name = "DUR")]
    pub lease: Option<String>,
    /// Flag a host whose I/O started further than this from the common
    /// start [default: 5ms].
    #[arg(long, value_name = "DUR")]
    pub skew_limit: Option<String>,
    #[command(flatten)]
    pub tls: TlsArgs,
}

impl HostArgs {
    /// A multi-host flag given without any hosts.
    pub fn given_without_hosts(&self) -> Option<&'static str> {
        [
            (self.token_file.is_some(), "--token-file"),
            (self.lease.is_some(), "--lease"),
            (self.skew_limit.is_some(), "--skew-limit"),
            (self.tls.tls_cert.is_some(), "--tls-cert"),
            (self.tls.tls_key.is_some(), "--tls-key"),
            (self.tls.tls_ca.is_some(), "--tls-ca"),
        ]
        .into_iter()
        .find_map(|(given, flag)| given.then_some(flag))
    }
}

/// Reading other tools' files (`iorig run FILE`, `iorig import FILE`).
#[derive(Debug, Default, Args)]
pub struct ForeignArgs {
    /// What FILE is: fio, vdbench or iorig [default: told from its content]
    /// (`--format` is a file-system workload's format mode).
    #[arg(long, value_name = "FORMAT")]
    pub input_format: Option<String>,
    /// Leave out the job file's options iorig does not support (listed in the
    /// output and stored with the run) instead of refusing the file.
    #[arg(long)]
    pub ignore_unsupported: bool,
    /// A vdbench parameter file's $NAME (repeatable), as vdbench's NAME=VALUE.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Write vdbench's flatfile.html and summary.html of the run into DIR.
    #[arg(long, value_name = "DIR")]
    pub vdbench_out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workload TOML file (keys as the long flags; flags override it), a fio
    /// job file (docs/fio.md) or a vdbench parameter file (docs/vdbench.md),
    /// told apart by content.
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub foreign: ForeignArgs,
    /// Shape of the machine-readable result: iorig (iorig.result/1), fio-json
    /// or fio-json+ (fio's --output-format=json[+]); to --json FILE|-, or to
    /// stdout with the text on stderr [default: iorig].
    #[arg(long, value_name = "FORMAT", value_parser = value::Checked(value::output_format))]
    pub output_format: Option<iorig_run::fio_out::OutputFormat>,
    /// File or block device to test (repeatable), or the directory of a file-system workload [default: ./iorig-scratch.dat].
    #[arg(long = "target", value_name = "PATH", visible_alias = "filename")]
    pub targets: Vec<String>,
    #[command(flatten)]
    pub workload: iorig_spec::WorkloadFile,
    /// Journal every write (synced before and after) so `iorig verify --journal FILE`
    /// can check the targets later, e.g. after a crash; continues an existing
    /// journal's key map (implies --verify).
    #[arg(long, value_name = "FILE")]
    pub journal: Option<PathBuf>,
    /// Write the result as JSON (schema iorig.result/1) to FILE, or to stdout with -.
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Write one CSV row per interval to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write one CSV row per I/O to FILE (times, op, offset, size, latency); ~64 bytes an I/O, for short runs.
    #[arg(long, value_name = "FILE")]
    pub lat_log: Option<PathBuf>,
    /// Write every counted I/O to FILE as an iorig block trace (issue time,
    /// latency, offset, size, op, target; 32 bytes an I/O), for `iorig trace
    /// analyse`.
    #[arg(long, value_name = "FILE")]
    pub trace_out: Option<PathBuf>,
    #[command(flatten)]
    pub record: RecordArgs,
    #[command(flatten)]
    pub metrics: MetricsArgs,
    #[command(flatten)]
    pub collect: CollectArgs,
    #[command(flatten)]
    pub hosts: HostArgs,
    /// IOPS of each host (the total is this times the hosts); without it,
    /// --rate is the total, split evenly among the hosts.
    #[arg(long, value_name = "IOPS")]
    pub rate_per_host: Option<String>,
    /// Allow writing to block devices or files that are in use or hold data
    /// iorig did not write.
    #[arg(long)]
    pub allow_destroy: bool,
    /// Resolve and check everything (workload, targets, outputs), print what
    /// would run, and stop: no I/O, nothing written.
    #[arg(long)]
    pub dry_run: bool,
    /// Print only the summary.
    #[arg(long, short)]
    pub quiet: bool,
}

impl RunArgs {
    /// The command line as a workload layer (targets, labels, and
    /// `--journal`'s validation on top of the workload flags).
    pub fn layer(&self) -> Result<iorig_spec::WorkloadFile, String> {
        let mut layer = self.workload.clone();
        if !self.targets.is_empty() {
            layer.target = Some(iorig_spec::OneOrMany::Many(self.targets.clone()));
        }
        let labels = parse_labels(&self.record.labels)?;
        layer.labels = (!labels.is_empty()).then_some(labels);
        if self.journal.is_some() {
            layer.verify = Some(true);
        }
        Ok(layer)
    }

    /// The workload's outputs go where: fio's JSON without `--json` goes to
    /// stdout (the text then to stderr), as fio does.
    pub fn json_to_stdout(&self) -> bool {
        self.json.as_deref() == Some("-")
            || (self.output_format.is_some_and(|f| f.is_fio()) && self.json.is_none())
    }

    /// Whether `--hosts` or `--hosts-file` is given.
    pub fn on_hosts(&self) -> bool {
        self.hosts.hosts.is_some() || self.hosts.hosts_file.is_some()
    }

    /// Why these flags cannot go together for a FILE of `file`'s format
    /// (`None`: no FILE), as the one line that refuses them; `None` when they
    /// can.
    pub fn refusal(&self, file: Option<iorig_import::Format>) -> Option<String> {
        use iorig_import::Format;
        let f = &self.foreign;
        let foreign_flags = f.input_format.is_some()
            || f.ignore_unsupported
            || !f.set.is_empty()
            || f.vdbench_out.is_some();
        match file {
            None if foreign_flags => return Some("--input-format, --ignore-unsupported, --set and --vdbench-out are for a job or parameter file given as FILE; give one".into()),
            Some(Format::Iorig) if !f.set.is_empty() || f.vdbench_out.is_some() => return Some("--set and --vdbench-out are for a vdbench parameter file (or a fio job file for --vdbench-out); FILE is an iorig workload".into()),
            Some(format @ (Format::Fio | Format::Vdbench)) => return self.job_file_refusal(format),
            _ => {}
        }
        if self.on_hosts() {
            let local_only = [
                (
                    self.journal.is_some(),
                    "--journal",
                    "each host would need a journal of its own",
                ),
                (
                    self.lat_log.is_some(),
                    "--lat-log",
                    "the per-I/O log is written on the host that does the I/O",
                ),
                (
                    self.trace_out.is_some(),
                    "--trace-out",
                    "the trace is written on the host that does the I/O",
                ),
            ];
            return local_only
                .iter()
                .find(|(given, ..)| *given)
                .map(|(_, flag, why)| {
                    format!("{flag} is not available with --hosts ({why}); run without it")
                });
        }
        let rate_per_host = self.rate_per_host.is_some().then_some("--rate-per-host");
        rate_per_host
            .or(self.hosts.given_without_hosts())
            .map(|flag| {
                format!("{flag} is for runs on several hosts: give --hosts or --hosts-file too")
            })
    }

    /// Flags that describe a workload or its outputs belong to iorig's own
    /// workloads; a job file says all of that itself. `--verify` and
    /// `--journal` are vdbench's `-v` and `-j` for a parameter file.
    fn job_file_refusal(&self, format: iorig_import::Format) -> Option<String> {
        use iorig_import::Format;
        let vdbench = format == Format::Vdbench;
        let mut w = self.workload.clone();
        if vdbench {
            w.verify = None;
        }
        let given = [
            (!self.targets.is_empty(), "--target"),
            (
                w != iorig_spec::WorkloadFile::default(),
                "workload flags (--bs, --read, ...)",
            ),
            (self.journal.is_some() && !vdbench, "--journal"),
            (self.csv.is_some(), "--csv"),
            (self.lat_log.is_some(), "--lat-log"),
            (self.trace_out.is_some(), "--trace-out"),
            // A parameter file's runs go to hosts as a plan's do
            // (docs/hosts.md); a fio job file runs here.
            (self.on_hosts() && !vdbench, "--hosts"),
        ];
        if let Some((_, flag)) = given.iter().find(|(g, _)| *g) {
            return Some(format!("{flag} does not apply to a job or parameter file, which sets its own targets and options; edit the file, or run iorig import FILE > plan.toml and change the plan"));
        }
        if self.rate_per_host.is_some() {
            return Some("--rate-per-host is for iorig's own workloads: a job file's rates are in its jobs (each the total of all hosts)".into());
        }
        if !vdbench && !self.foreign.set.is_empty() {
            return Some("--set gives a vdbench parameter file's $variables; a fio job file takes ${VAR} from the environment".into());
        }
        let out = self
            .output_format
            .unwrap_or(iorig_run::fio_out::OutputFormat::Iorig);
        if out.is_fio() && vdbench {
            return Some("--output-format fio-json is written for fio job files and iorig workloads; drop it (--vdbench-out DIR writes vdbench's own files)".into());
        }
        if (!out.is_fio() && self.json.is_some() || self.foreign.vdbench_out.is_some())
            && self.record.no_db
        {
            return Some("--json (iorig's shape) and --vdbench-out of a job file's run are made from the stored run; drop --no-db".into());
        }
        None
    }
}

#[derive(Debug, Args)]
pub struct ProfileArgs {
    /// Device to cover, as in /proc/diskstats (sda, nvme0n1, sda2, dm-0, md0);
    /// repeatable [default: every whole disk].
    #[arg(long = "device", value_name = "NAME")]
    pub devices: Vec<String>,
    /// Sampling interval (not with --diskstats) [default: 5s].
    #[arg(long, value_name = "DUR")]
    pub interval: Option<String>,
    /// How long to sample (not with --diskstats); Ctrl-C ends earlier and keeps everything [default: 10m].
    #[arg(long, value_name = "DUR")]
    pub time: Option<String>,
    /// Analyse a recording (DIR/<ms since epoch>.diskstats files) instead of sampling.
    #[arg(long, value_name = "DIR", conflicts_with = "record")]
    pub diskstats: Option<PathBuf>,
    /// Also write every snapshot to DIR as <ms since epoch>.diskstats, for
    /// analysis elsewhere with --diskstats DIR.
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Rule set to judge the profile with: a built-in name (replication-link,
    /// storage-sizing) or a TOML file; repeatable [default: both built-ins].
    #[arg(long = "rules", value_name = "NAME|FILE")]
    pub rules: Vec<String>,
    /// Write a workload TOML that replays the measured mix (iorig run FILE --target ...).
    #[arg(long, value_name = "FILE")]
    pub emit_workload: Option<PathBuf>,
    /// The rate of the emitted workload: the mean or the peak total IOPS.
    #[arg(long, value_name = "mean|peak", default_value = "mean", value_parser = value::Checked(value::emit_rate))]
    pub emit_rate: iorig_profile::emit::EmitRate,
    /// Write the profile as JSON (schema iorig.profile/1) to FILE, or to stdout with -.
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Write one CSV row per interval and device (and the total) to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    #[command(flatten)]
    pub record_store: RecordArgs,
    /// Print only the summary.
    #[arg(long, short)]
    pub quiet: bool,
}

impl ProfileArgs {
    /// Flags that do not go together, as the line that refuses them.
    pub fn refusal(&self) -> Option<String> {
        let timing = [("--interval", &self.interval), ("--time", &self.time)];
        let (flag, _) = timing
            .iter()
            .find(|(_, g)| g.is_some() && self.diskstats.is_some())?;
        Some(format!(
            "{flag} does not apply to --diskstats: a recording's intervals are the times between its snapshots; drop {flag}"
        ))
    }
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The journal kept by `iorig run --journal FILE` or `iorig plan run
    /// --journal FILE`.
    #[arg(long, value_name = "FILE")]
    pub journal: PathBuf,
    /// Stop after this many errors.
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub max_errors: u64,
    /// Read the targets through the page cache (no O_DIRECT).
    #[arg(long)]
    pub buffered: bool,
    /// Write the result as JSON to FILE, or to stdout with -.
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Print only the summary.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `--label KEY=VALUE` values as a map.
pub fn parse_labels(labels: &[String]) -> Result<BTreeMap<String, String>, String> {
    let mut out = BTreeMap::new();
    for l in labels {
        // The label shortened and without control characters: the line
        // must stay one line, readable.
        let shown = iorig_spec::shown_label(l, 60);
        let (k, v) = l.split_once('=').ok_or_else(|| {
            format!("bad --label '{shown}': write KEY=VALUE, e.g. --label array=A")
        })?;
        let k = k.trim();
        if let Err(why) = iorig_store::check_label(k, v) {
            return Err(format!("bad --label '{shown}': {why}"));
        }
        out.insert(k.to_string(), v.to_string());
    }
    Ok(out)
}

/// clap's own rendering of an error (the problem, what is missing, the
/// nearest flag, the usage) folded into the one line bad input gets.
pub fn one_line(rendered: &str) -> String {
    let mut problem = String::new();
    let mut items = Vec::new();
    let mut tips = Vec::new();
    let mut usage = None;
    for line in rendered.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(p) = line.strip_prefix("error: ") {
            problem = p.trim_end_matches(':').to_owned();
        } else if let Some(t) = line.strip_prefix("tip: ") {
            tips.push(t.to_owned());
        } else if let Some(u) = line.strip_prefix("Usage: ") {
            usage = Some(u.to_owned());
        } else if !line.starts_with("For more information") {
            items.push(line.to_owned());
        }
    }
    let mut out = problem;
    if !items.is_empty() {
        out.push_str(": ");
        out.push_str(&items.join(", "));
    }
    for t in tips {
        out.push_str("; ");
        out.push_str(&t);
    }
    if let Some(u) = usage {
        out.push_str(&format!(" (usage: {u})"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::Cli;
    use clap::CommandFactory;

    /// Every argument of every subcommand says what it is for in one line,
    /// and no help text repeats the default clap already shows.
    #[test]
    fn a_clap_error_is_one_line() {
        let rendered = "error: unexpected argument '--bsz' found\n\n  tip: a similar argument exists: '--bs'\n\nUsage: iorig run [OPTIONS]\n\nFor more information, try '--help'.\n";
        assert_eq!(
            super::one_line(rendered),
            "unexpected argument '--bsz' found; a similar argument exists: '--bs' (usage: iorig run [OPTIONS])"
        );
    }

    #[test]
    fn every_argument_has_a_description() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let id = a.get_id().as_str();
                if matches!(id, "help" | "version") {
                    continue;
                }
                match a.get_help().map(|h| h.to_string()) {
                    None => missing.push(format!("{path} {id}: no description")),
                    Some(h) if h.contains("[default:") && !a.get_default_values().is_empty() => {
                        missing.push(format!("{path} {id}: the default is shown twice"))
                    }
                    Some(_) => {}
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "iorig", &mut missing);
        assert!(missing.is_empty(), "{}", missing.join("\n"));
    }
}

/// `iorig trace ...`.
#[derive(Debug, Subcommand)]
pub enum TraceCommand {
    /// Analyse a block trace (blktrace, iorig, fio iolog v2/v3 or MSR
    /// Cambridge CSV; plain, gzip or zstd): counts and sizes, the hot spot,
    /// the exact LRU hit-ratio curve and the cache a hit ratio needs.
    Analyse(TraceAnalyseArgs),
    /// Capture a block device's I/Os with the kernel's block tracing (the
    /// ftrace blk tracer through tracefs; needs root). The device is not
    /// opened.
    Record(TraceRecordArgs),
    /// List the trace analyses in the result store.
    List(TraceListArgs),
    /// An HTML report of a stored trace analysis: hot spot, LRU curve,
    /// warm-up and the trace over time, with charts.
    Report(TraceReportArgs),
    /// Fit a synthetic workload to a trace: its mix and rate, and the access
    /// distribution whose LRU hit-ratio curve (from iorig's own offset
    /// generator) is closest to the trace's. Writes the workload TOML.
    Fit(TraceFitArgs),
    /// Issue a trace's I/Os against targets at their original times (or
    /// --speed X, or --afap), latency from each I/O's scheduled time, and
    /// report how close to its time each I/O was issued.
    Replay(TraceReplayArgs),
}

#[derive(Debug, Args)]
pub struct TraceFitArgs {
    /// The trace file (any format trace analyse reads).
    pub file: PathBuf,
    /// What FILE is: blktrace, iorig, fio or msr [default: told from its
    /// content].
    #[arg(long, value_name = "FORMAT", value_parser = value::Checked(value::trace_format))]
    pub format: Option<iorig_trace::Format>,
    /// The cache block the curves are compared in.
    #[arg(long = "block", value_name = "SIZE", default_value = "4k", value_parser = value::Checked(value::block))]
    pub block_bytes: u64,
    /// Compute the trace's curve from this share of its blocks (SHARDS
    /// sampling, e.g. 0.01) [default: exact].
    #[arg(long, value_name = "RATE")]
    pub sample: Option<f64>,
    /// Most accesses drawn per candidate model; a longer trace is compared
    /// scaled down by a power of two.
    #[arg(long, value_name = "N", default_value = "1000000", value_parser = value::Checked(value::accesses))]
    pub accesses: u64,
    /// Skip records that cannot be read, and count them, instead of
    /// stopping at the first bad one.
    #[arg(long)]
    pub skip_bad: bool,
    /// Write the workload TOML to FILE [default: stdout].
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Also write it as a plan whose one step runs in rounds until its rate
    /// is steady (a cache in front of the target warming up to the hot set).
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,
    /// Write the fit (every candidate's error, both curves) as JSON to
    /// FILE, or to stdout with -.
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
}

#[derive(Debug, Args)]
pub struct TraceReplayArgs {
    /// The trace file (any format trace analyse reads).
    pub file: PathBuf,
    /// What FILE is: blktrace, iorig, fio or msr [default: told from its
    /// content].
    #[arg(long, value_name = "FORMAT", value_parser = value::Checked(value::trace_format))]
    pub format: Option<iorig_trace::Format>,
    /// File or block device to replay onto (repeatable: with N targets, the
    /// trace's device number d goes to target d mod N) [default:
    /// ./iorig-scratch.dat].
    #[arg(long = "target", value_name = "PATH")]
    pub targets: Vec<String>,
    /// Size of a new scratch file's test data (the file is 1 MiB larger: iorig's header); of a device, the first SIZE bytes.
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Replay this many times faster than the trace (0.5: at half speed).
    #[arg(long, value_name = "X", conflicts_with = "afap", value_parser = value::Checked(value::speed))]
    pub speed: Option<f64>,
    /// As fast as possible: each I/O as soon as one of --qd slots is free.
    #[arg(long)]
    pub afap: bool,
    /// I/Os in flight at most [default: 256 when timed; with --afap, the
    /// trace's mean queue depth (from its latencies), or 1 if it has none].
    #[arg(long, value_name = "N")]
    pub qd: Option<u32>,
    /// Where trace offsets go in a target: modulo (folded into it), scale
    /// (squeezed or stretched to it) or exact (as they are; refused if the
    /// trace does not fit).
    #[arg(long, value_name = "MAP", default_value = "modulo", value_parser = value::Checked(value::offset_map))]
    pub map: iorig_run::replay::OffsetMap,
    /// Offsets and sizes are moved to multiples of this (direct I/O needs
    /// the device's logical block size).
    #[arg(long = "align", value_name = "SIZE", default_value = "4k", value_parser = value::Checked(value::align))]
    pub align_bytes: u64,
    /// I/O engine [default: io_uring].
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<iorig_spec::EngineKind>,
    /// io_uring: hand every I/O to the kernel's async workers, so a device
    /// that works in the submitting call (zram, brd) does not make the next
    /// I/O late (its latency then includes the hand-over).
    #[arg(long)]
    pub async_submit: bool,
    /// Reporting interval.
    #[arg(long, value_name = "DUR", default_value = "1s")]
    pub interval: String,
    /// Stop after this long even if the trace goes on [default: the
    /// trace's length at --speed, plus a minute; 1 day with --afap].
    #[arg(long, value_name = "DUR")]
    pub time: Option<String>,
    /// Skip records that cannot be read, and count them, instead of
    /// stopping at the first bad one.
    #[arg(long)]
    pub skip_bad: bool,
    /// Write the result as JSON (schema iorig.result/1, with `replay`) to
    /// FILE, or to stdout with -.
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    #[command(flatten)]
    pub record: RecordArgs,
    /// Allow writing to block devices or files that are in use or hold data
    /// iorig did not write.
    #[arg(long)]
    pub allow_destroy: bool,
    /// Only the summary, no interval table.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Debug, Args)]
pub struct TraceRecordArgs {
    /// The block device to trace, e.g. /dev/sdb.
    pub device: PathBuf,
    /// How long to capture; Ctrl-C ends it sooner.
    #[arg(long, value_name = "DUR", value_parser = value::Checked(value::duration))]
    pub time: std::time::Duration,
    /// Where the trace goes.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// What --out holds: iorig (I/Os with issue time and latency) or blktrace
    /// (the kernel's records as they came, for blkparse).
    #[arg(long, value_name = "FORMAT", default_value = "iorig", value_parser = value::Checked(value::capture_format))]
    pub format: iorig_trace::capture::OutFormat,
    /// The kernel's trace buffer per CPU while capturing; events beyond it
    /// are lost (and counted).
    #[arg(long = "buffer", value_name = "SIZE", default_value = "16m", value_parser = value::Checked(value::buffer_kib))]
    pub buffer_kib: u64,
}

#[derive(Debug, Args)]
pub struct TraceAnalyseArgs {
    /// The trace file.
    pub file: PathBuf,
    /// What FILE is: blktrace, iorig, fio or msr [default: told from its
    /// content].
    #[arg(long, value_name = "FORMAT", value_parser = value::Checked(value::trace_format))]
    pub format: Option<iorig_trace::Format>,
    /// Cache and hot-spot block size.
    #[arg(long = "block", value_name = "SIZE", default_value = "4k", value_parser = value::Checked(value::size))]
    pub block_bytes: u64,
    /// The coarser hot-spot granularity.
    #[arg(long = "extent", value_name = "SIZE", default_value = "1m", value_parser = value::Checked(value::size))]
    pub extent_bytes: u64,
    /// Also give the LRU cache size that reaches this hit ratio, e.g. 0.9.
    #[arg(long, value_name = "RATIO")]
    pub hit: Option<f64>,
    /// Compute the LRU curves from this share of the blocks (SHARDS spatial
    /// sampling, e.g. 0.01), for traces too large to follow every block
    /// [default: exact].
    #[arg(long, value_name = "RATE")]
    pub sample: Option<f64>,
    /// Skip the LRU curves (counts, hot spot and windows only): for the
    /// fastest first look at a large trace.
    #[arg(long, conflicts_with_all = ["hit", "sample"])]
    pub no_lru: bool,
    /// Follow a timed trace over windows of this length: each one's load,
    /// hot set and how much of it the window before held.
    #[arg(long, value_name = "DUR", default_value = "60s", value_parser = value::Checked(value::duration))]
    pub window: std::time::Duration,
    /// Leave out records that cannot be taken (counted) instead of stopping
    /// at the first with its record number.
    #[arg(long)]
    pub skip_bad: bool,
    /// Estimate how long a cache takes to fill with the hot sets at this
    /// many random reads per second from its backend (one --block each).
    #[arg(long, value_name = "IOPS", conflicts_with = "backend_run", value_parser = value::Checked(value::backend_iops))]
    pub backend_iops: Option<f64>,
    /// As --backend-iops, with the read IOPS a stored run measured on the
    /// backing device (its step with the most read IOPS).
    #[arg(long, value_name = "RUN")]
    pub backend_run: Option<i64>,
    /// Write the analysis as JSON (schema iorig.trace/1) to FILE, or - for
    /// stdout.
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Where the analysis is stored (and --backend-run is read), --no-db to
    /// store nothing, --label to label it.
    #[command(flatten)]
    pub record: RecordArgs,
}

#[derive(Debug, Args)]
pub struct TraceListArgs {
    /// Result store: a file, or a postgres:// URL [default: $IORIG_DB or
    /// ./iorig.db].
    #[arg(long, value_name = "PATH|URL", value_parser = LocationParser)]
    pub db: Option<Location>,
    /// As a JSON array on stdout.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TraceReportArgs {
    /// The stored analysis (`iorig trace list` shows them).
    pub id: i64,
    /// Directory for index.html and the charts (SVG and PNG) [default:
    /// ./iorig-trace-report-ID].
    #[arg(long, short, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Result store: a file, or a postgres:// URL [default: $IORIG_DB or
    /// ./iorig.db].
    #[arg(long, value_name = "PATH|URL", value_parser = LocationParser)]
    pub db: Option<Location>,
}
