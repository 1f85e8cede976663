//! `iorig quick`: the built-in five-params plan with short defaults, closing
//! with the five figures a storage engineer asks for first.

use crate::cli::parse_labels;
use crate::cli::QuickArgs;
use crate::output::Printer;
use crate::plan_cmd::{run_plan, RunOptions};
use crate::Failure;
use iorig_run::plan::{Invocation, StepResult};
use iorig_spec::DEFAULT_TARGET;
use iorig_store::RunKind;

const QUICK_STEP_TIME: &str = "10s";
const QUICK_SIZE: &str = "1g";

/// The five figures: (step name in five-params, what it measures, bandwidth
/// (true) or IOPS (false) is the headline).
const FIGURES: [(&str, &str, bool); 5] = [
    ("seq-write", "sequential write", true),
    ("seq-read", "sequential read", true),
    ("rand-write", "random write", false),
    ("rand-read-cold", "random read, cold (whole target)", false),
    ("rand-read-hot", "random read, hot (working set)", false),
];

pub fn quick(a: QuickArgs) -> Result<u8, Failure> {
    let mut inv = Invocation::from_builtin("five-params")?;
    inv.targets = Some(vec![a
        .target
        .clone()
        .unwrap_or_else(|| DEFAULT_TARGET.to_string())]);
    inv.size = Some(a.size.clone().unwrap_or_else(|| QUICK_SIZE.to_string()));
    inv.step_time = Some(
        a.step_time
            .clone()
            .unwrap_or_else(|| QUICK_STEP_TIME.to_string()),
    );
    inv.hot_size = a.hot_size.clone();
    inv.allow_destroy = a.allow_destroy;
    let (code, results) = run_plan(
        inv,
        RunOptions {
            kind: RunKind::Quick,
            db: a.record.db.clone(),
            no_db: a.record.no_db,
            labels: parse_labels(&a.record.labels)?,
            dry_run: a.dry_run,
            yes: false,
            quiet: a.quiet,
        },
    )?;
    if !results.is_empty() {
        print_figures(&Printer::new(false, false), &results);
    }
    Ok(code)
}

fn print_figures(printer: &Printer, results: &[StepResult]) {
    printer.line("");
    printer.line("five parameters:");
    for (name, what, bandwidth) in FIGURES {
        let Some(r) = results
            .iter()
            .find(|r| r.step.name.as_deref() == Some(name))
        else {
            continue;
        };
        let Some(s) = &r.summary else {
            printer.line(&format!("  {what:<34} {}", r.status.as_str()));
            continue;
        };
        let t = &s.total;
        let iops = t.iops;
        let mbs = t.bw_bytes_per_s / 1e6;
        let mean_ms = t.lat_ns.mean as f64 / 1e6;
        let p99_ms = t.lat_ns.p99 as f64 / 1e6;
        let headline = if bandwidth {
            format!("{mbs:>9.1} MB/s ({iops:.0} IOPS)")
        } else {
            format!("{iops:>9.0} IOPS ({mbs:.1} MB/s)")
        };
        let mut line =
            format!("  {what:<34} {headline:<28} latency mean {mean_ms:.3} ms, p99 {p99_ms:.3} ms");
        let steady = r.analysis.iter().find_map(|f| match f {
            iorig_result::Finding::SteadyState(v) => Some(v),
            _ => None,
        });
        if let Some(v) = steady {
            if v.reached {
                line.push_str(&format!(
                    "; steady after {} round(s), {:.0} s",
                    v.rounds,
                    v.time_needed_s.unwrap_or(0.0)
                ));
            } else {
                line.push_str(&format!("; not steady after {} round(s)", v.rounds));
            }
        }
        if r.status != iorig_store::StepStatus::Ok {
            line.push_str(&format!(" [{}]", r.status.as_str()));
        }
        printer.line(&line);
    }
}
