//! Command-line definitions (clap derive). Values stay text here: iorig-spec
//! parses and validates them, so a flag and a workload-file key behave the same.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

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
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Workload TOML file (keys as the long flags; flags override it).
    pub file: Option<PathBuf>,
    /// File or block device to test (repeatable) [default: ./iorig-scratch.dat].
    #[arg(long = "target", value_name = "PATH")]
    pub targets: Vec<String>,
    /// Size of a scratch file iorig creates [default: 1g, or an existing file's size].
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Block size, fixed (4k) or weighted (4k:50,8k:30,64k:20) [default: 4k].
    #[arg(long, value_name = "SIZE|SIZE:W,...")]
    pub bs: Option<String>,
    /// Percentage of I/Os that are reads [default: 100].
    #[arg(long, value_name = "PCT")]
    pub read: Option<String>,
    /// Percentage of I/Os at random offsets; 0 = sequential [default: 100].
    #[arg(long, value_name = "PCT")]
    pub random: Option<String>,
    /// Outstanding I/Os per worker [default: 1].
    #[arg(long, value_name = "N")]
    pub qd: Option<String>,
    /// Queued I/Os per submission call, 1..=qd; 1 submits each I/O at once,
    /// as fio does [default: 1].
    #[arg(long, value_name = "N")]
    pub submit_batch: Option<String>,
    /// Total workers [default: 1].
    #[arg(long, value_name = "N")]
    pub threads: Option<String>,
    /// I/O engine: io_uring, psync or null [default: io_uring].
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Open targets with O_DIRECT (the default).
    #[arg(long, conflicts_with = "buffered")]
    pub direct: bool,
    /// Go through the page cache (no O_DIRECT).
    #[arg(long)]
    pub buffered: bool,
    /// Open for writing with O_SYNC.
    #[arg(long, conflicts_with = "dsync")]
    pub sync: bool,
    /// Open for writing with O_DSYNC.
    #[arg(long)]
    pub dsync: bool,
    /// Total IOPS, paced on a schedule, or max [default: max].
    #[arg(long, value_name = "IOPS|max")]
    pub rate: Option<String>,
    /// Measured time [default: 30s].
    #[arg(long, value_name = "DUR")]
    pub time: Option<String>,
    /// Time run before measuring, excluded from the summary [default: 0s].
    #[arg(long, value_name = "DUR")]
    pub warmup: Option<String>,
    /// Reporting interval [default: 1s].
    #[arg(long, value_name = "DUR")]
    pub interval: Option<String>,
    /// Working set as a share of each target, e.g. 0%-50% [default: 0%-100%].
    #[arg(long, value_name = "START%-END%")]
    pub range: Option<String>,
    /// Offset distribution: uniform, zipf:THETA, pareto:H or hot:IOPCT/SPACEPCT.
    #[arg(long, value_name = "DIST")]
    pub dist: Option<String>,
    /// Write data: random, zero, compress:RATIO or dedup:RATIO [default: random].
    #[arg(long, value_name = "PATTERN")]
    pub data: Option<String>,
    /// Seed of the offset, size and op sequences (printed with every result).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Write the result as JSON (schema iorig.result/1) to FILE, or to stdout with -.
    #[arg(long, value_name = "FILE|-")]
    pub json: Option<String>,
    /// Write one CSV row per interval to FILE.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Result store path (the store arrives with plans; rejected for now).
    #[arg(long, value_name = "PATH", conflicts_with = "no_db")]
    pub db: Option<PathBuf>,
    /// Do not record the run in the result store.
    #[arg(long)]
    pub no_db: bool,
    /// Label the run (repeatable).
    #[arg(long = "label", value_name = "KEY=VALUE")]
    pub labels: Vec<String>,
    /// Allow writing to block devices or files that look in use or hold data.
    #[arg(long)]
    pub allow_destroy: bool,
    /// Print only the summary.
    #[arg(long, short)]
    pub quiet: bool,
    /// Fault-injection rule for --engine fault (tests), e.g. eio:after=1000.
    #[arg(long = "fault", value_name = "RULE", hide = true)]
    pub faults: Vec<String>,
}
