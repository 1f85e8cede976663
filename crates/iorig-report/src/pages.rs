//! The pages `iorig report` and `iorig compare` write, read from the store:
//! a run's report (a test run's or a profile's), and a comparison of test
//! runs or of profiles. Which kind a run is decides the page; what the
//! user asked that cannot be drawn is [`ReportError::Usage`].

use crate::html::{
    render_compare, render_profile_compare, render_profile_report, render_report_with, Details,
    Rendered,
};
use crate::model::{ProfileReport, RunReport};
use crate::ReportError;
use iorig_store::{RunId, RunKind, Store};

/// The kind of stored run `id`.
fn kind_of(store: &Store, id: i64) -> Result<RunKind, ReportError> {
    Ok(store
        .get_run(RunId(id))?
        .ok_or(ReportError::NoSuchRun(id))?
        .run
        .kind)
}

/// `--steps 5,10-20`: step numbers (from 1), each one of the `count`.
pub fn parse_steps(text: &str, count: i64) -> Result<Vec<i64>, ReportError> {
    let bad = |why: String| {
        ReportError::Usage(format!(
            "bad --steps '{text}': {why}; give step numbers from 1 to {count}, e.g. 5,10-20"
        ))
    };
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let num = |t: &str| {
            t.trim()
                .parse::<i64>()
                .map_err(|_| bad(format!("'{part}' is not a number or a range")))
        };
        let (a, b) = (num(a)?, num(b)?);
        if a < 1 || b > count || a > b {
            return Err(bad(format!("'{part}' is outside the run's steps")));
        }
        out.extend(a..=b);
    }
    Ok(out)
}

/// Run `id`'s report; `steps` (`--steps`) picks the steps drawn in detail.
pub fn report(store: &Store, id: i64, steps: Option<&str>) -> Result<Rendered, ReportError> {
    if kind_of(store, id)? == RunKind::Profile {
        if steps.is_some() {
            return Err(ReportError::Usage(format!(
                "run {id} is a profile, which has no steps to draw; leave out --steps"
            )));
        }
        return Ok(render_profile_report(&ProfileReport::load(
            store,
            RunId(id),
        )?));
    }
    let run = RunReport::load(store, RunId(id))?;
    let details = match steps {
        Some(text) => Details::Steps(parse_steps(text, run.steps.len() as i64)?),
        None => Details::Auto,
    };
    Ok(render_report_with(&run, &details))
}

/// Refuses a run given twice to compare (checked before the store is
/// opened: it is wrong whatever the store holds).
pub fn distinct(ids: &[i64]) -> Result<(), ReportError> {
    match ids
        .iter()
        .find(|id| ids.iter().filter(|x| x == id).count() > 1)
    {
        Some(twice) => Err(ReportError::Usage(format!(
            "run {twice} is given twice; compare different runs, e.g. iorig compare {twice} OTHER"
        ))),
        None => Ok(()),
    }
}

/// The comparison of runs `ids` (the first is the baseline), all test runs
/// or all profiles, and its table as lines.
pub fn compare(store: &Store, ids: &[i64]) -> Result<(Rendered, Vec<String>), ReportError> {
    distinct(ids)?;
    let kinds = ids
        .iter()
        .map(|id| kind_of(store, *id))
        .collect::<Result<Vec<_>, _>>()?;
    let profiles: Vec<String> = ids
        .iter()
        .zip(&kinds)
        .filter(|(_, k)| **k == RunKind::Profile)
        .map(|(id, _)| id.to_string())
        .collect();
    if profiles.len() == ids.len() {
        let runs = ids
            .iter()
            .map(|id| ProfileReport::load(store, RunId(*id)))
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(render_profile_compare(&runs));
    }
    if !profiles.is_empty() {
        return Err(ReportError::Usage(format!(
            "run(s) {} are profiles and the others test runs: compare profiles with profiles, test runs with test runs",
            profiles.join(", ")
        )));
    }
    let runs = ids
        .iter()
        .map(|id| RunReport::load(store, RunId(*id)))
        .collect::<Result<Vec<_>, _>>()?;
    let (rendered, comparison) = render_compare(&runs);
    Ok((rendered, comparison.table_lines()))
}

/// Stored trace analysis `id`'s report.
pub fn trace_report(store: &Store, id: i64) -> Result<Rendered, ReportError> {
    let (row, json) = store.trace_analysis(id)?.ok_or_else(|| {
        ReportError::Usage(format!(
            "no trace analysis {id} in the result store; iorig trace list shows them"
        ))
    })?;
    let analysis = serde_json::from_str(&json).map_err(|e| {
        ReportError::Unreadable(format!("trace analysis {id}: stored JSON unreadable: {e}"))
    })?;
    Ok(crate::html::render_trace_report(
        &crate::html::TraceReport {
            id: row.id,
            created: row.created,
            host: row.host,
            file: row.file,
            command_line: row.command_line,
            labels: row.labels,
            analysis,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_numbers_and_ranges_within_the_run() {
        assert_eq!(parse_steps("5,7-9", 10).ok(), Some(vec![5, 7, 8, 9]));
        for bad in ["0", "11", "3-2", "x", "2-x"] {
            assert!(
                matches!(parse_steps(bad, 10), Err(ReportError::Usage(_))),
                "{bad}"
            );
        }
        assert!(distinct(&[1, 2]).is_ok());
        assert!(matches!(distinct(&[1, 2, 1]), Err(ReportError::Usage(_))));
    }
}
