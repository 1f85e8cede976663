//! `iorig agent`: serves controllers until Ctrl-C or SIGTERM.

use crate::output::Printer;
use crate::output::Screen as _;
use crate::{exit, Failure};
use iorig_agent::server::AgentConfig;
use iorig_cli::AgentArgs;

pub fn agent(a: AgentArgs) -> Result<u8, Failure> {
    let token = match &a.token_file {
        Some(p) => Some(iorig_agent::read_token(p).map_err(|e| Failure::usage(e.to_string()))?),
        None => None,
    };
    let served = crate::metrics::start(&a.metrics, &std::collections::BTreeMap::new())?;
    let config = AgentConfig {
        listen: a.listen,
        token,
        allow_destroy: a.allow_destroy,
        results_dir: a.results_dir.clone(),
        db: a.db.clone(),
        metrics: served.as_ref().map(|s| s.metrics.clone()),
        tls: crate::tls_files(&a.tls)?,
    };
    config.check().map_err(|e| Failure::usage(e.to_string()))?;
    match &a.db {
        Some(iorig_store::Location::File(path)) => crate::store::check_output("--db", path)?,
        // A database the agent cannot reach is bad input now, not at its
        // first run.
        Some(db) => crate::store::check_store(Some(db))?,
        None => {}
    }
    let printer = Printer::new(false, a.quiet);
    // The process's one signal handler sets `stop`; the server shuts down
    // (stopping a run in progress) when it does.
    let stop = crate::signals::install();
    let banner = config.clone();
    iorig_agent::server::serve_blocking(
        config,
        move || stop.interrupted(),
        |bound| {
            printer.line(&banner.banner(bound));
            if let Some(s) = &served {
                printer.line(&s.where_line());
            }
        },
    )
    .map_err(iorig_run::RunError::from)?;
    Ok(exit::OK)
}
