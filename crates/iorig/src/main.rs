//! The `iorig` binary: parses the command line, runs the command, maps failures
//! to exit codes. Everything that prints lives in `output`.

mod agent_cmd;
mod foreign_cmd;
mod metrics;
mod output;
mod plan_cmd;
mod profile_cmd;
mod quick_cmd;
mod report_cmd;
mod run_cmd;
mod runs_cmd;
mod serve_cmd;
mod signals;
mod store;
mod trace_cmd;
mod verify_cmd;

use iorig_cli as cli;
use std::collections::BTreeMap;
use std::process::ExitCode;

/// Exit codes, a fixed interface users script against (README.md, the
/// "Exit codes" line of the usage section).
pub mod exit {
    pub const OK: u8 = 0;
    pub const RUNTIME: u8 = 1;
    pub const USAGE: u8 = 2;
    /// Data validation found errors.
    pub const VALIDATION: u8 = 3;
    pub const INTERRUPTED: u8 = 130;
}

/// A command's failure: the runner's error, whose kind is the exit code
/// (bad input 2, interrupted 130, a fault 1).
pub use iorig_run::RunError as Failure;

/// The exit code of a failure.
fn exit_code_of(f: &Failure) -> u8 {
    match f {
        Failure::Usage(_) => exit::USAGE,
        Failure::Interrupted(_) => exit::INTERRUPTED,
        _ => exit::RUNTIME,
    }
}

/// `--label KEY=VALUE` values as a map, or the one line that refuses them.
pub fn labels(given: &[String]) -> Result<BTreeMap<String, String>, Failure> {
    cli::parse_labels(given).map_err(Failure::usage)
}

/// The three mutual-TLS files read, or None when none is given.
pub fn tls_files(t: &cli::TlsArgs) -> Result<Option<iorig_agent::TlsFiles>, Failure> {
    let (cert, key, ca) = (
        t.tls_cert.as_deref(),
        t.tls_key.as_deref(),
        t.tls_ca.as_deref(),
    );
    Ok(iorig_agent::TlsFiles::given(cert, key, ca)?)
}

/// The multi-host flags for the controller, with the TLS files read.
pub fn host_flags(h: &cli::HostArgs) -> Result<iorig_agent::options::Flags, Failure> {
    Ok(iorig_agent::options::Flags {
        hosts: h.hosts.clone(),
        hosts_file: h.hosts_file.clone(),
        token_file: h.token_file.clone(),
        rate_per_host: None,
        lease: h.lease.clone(),
        skew_limit: h.skew_limit.clone(),
        tls: tls_files(&h.tls)?,
    })
}

/// A finished run's exit code: 130 interrupted, 3 validation errors, 1 I/O
/// errors (or a host lost), 0 otherwise.
pub fn exit_code(outcome: &iorig_run::single::SingleOutcome) -> u8 {
    if outcome.interrupted {
        exit::INTERRUPTED
    } else if outcome.validation_errors > 0 {
        exit::VALIDATION
    } else if outcome.io_errors > 0 {
        exit::RUNTIME
    } else {
        exit::OK
    }
}

fn plan_run(a: cli::PlanRunArgs) -> Result<plan_cmd::PlanDone, Failure> {
    let inv = a.invocation()?;
    plan_cmd::run_plan(
        inv,
        plan_cmd::RunOptions {
            kind: iorig_store::RunKind::Plan,
            db: a.record.db.clone(),
            no_db: a.record.no_db,
            labels: labels(&a.record.labels)?,
            dry_run: a.dry_run,
            yes: a.yes,
            quiet: a.quiet,
            hosts: a.hosts,
            text_to_stderr: a.json.as_deref() == Some("-"),
            json: a.json.clone(),
            metrics: a.metrics,
            collect: a.collect.collect,
        },
    )
}

fn main() -> ExitCode {
    let cli = match cli::Cli::parse_args() {
        Ok(cli) => cli,
        Err(e) => return output::clap_error(e),
    };
    let result = match cli.command {
        cli::Command::Run(args) => run_cmd::run(*args),
        cli::Command::Quick(args) => quick_cmd::quick(args),
        cli::Command::Import {
            file,
            format,
            ignore_unsupported,
            set,
        } => foreign_cmd::import(
            &file,
            &cli::ForeignArgs {
                input_format: format,
                ignore_unsupported,
                set,
                vdbench_out: None,
            },
        ),
        cli::Command::Plan(cli::PlanCommand::Run(a)) => plan_run(*a).map(|(code, _, _)| code),
        cli::Command::Plan(cli::PlanCommand::Resume {
            id,
            store,
            quiet,
            allow_destroy,
        }) => {
            plan_cmd::resume(id, store.db.as_ref(), quiet, allow_destroy).map(|(code, _, _)| code)
        }
        cli::Command::Plan(cli::PlanCommand::Builtins) => {
            plan_cmd::list_builtins(&output::Printer::new(false, false));
            Ok(exit::OK)
        }
        cli::Command::Runs(cmd) => runs_cmd::runs(cmd),
        cli::Command::Verify(args) => verify_cmd::verify(args),
        cli::Command::Trace(cli::TraceCommand::Analyse(a)) => trace_cmd::analyse(&a),
        cli::Command::Trace(cli::TraceCommand::Record(a)) => trace_cmd::record(&a),
        cli::Command::Trace(cli::TraceCommand::Replay(a)) => trace_cmd::replay(&a),
        cli::Command::Trace(cli::TraceCommand::Fit(a)) => trace_cmd::fit(&a),
        cli::Command::Trace(cli::TraceCommand::List(a)) => trace_cmd::list(&a),
        cli::Command::Trace(cli::TraceCommand::Report(a)) => trace_cmd::report(&a),
        cli::Command::Profile(args) => profile_cmd::profile(args),
        cli::Command::Report {
            id,
            out,
            steps,
            store,
        } => report_cmd::report(id, out, steps.as_deref(), store.db.as_ref()),
        cli::Command::Export {
            id,
            format,
            out,
            store,
        } => report_cmd::export(id, format, &out, store.db.as_ref()),
        cli::Command::Compare { ids, out, store } => {
            report_cmd::compare(&ids, out, store.db.as_ref())
        }
        cli::Command::Agent(args) => agent_cmd::agent(args),
        cli::Command::Serve(args) => serve_cmd::serve(args),
        cli::Command::Completions { shell } => {
            output::completions(&cli::generate::completion_script(shell));
            Ok(exit::OK)
        }
        cli::Command::Man { command, install } => output::man(&command, install.as_deref()),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            output::error_line(&f.to_string());
            ExitCode::from(exit_code_of(&f))
        }
    }
}
