//! The one loader of a stored run, for every reader (the HTML report, the
//! exports, `iorig serve`): the run's head — its record, system and target
//! facts, steps with their hosts, jobs and findings — read at once, and the
//! intervals left in the store until a reader asks for them, whole or a
//! page at a time. A week-long soak at 1 s holds 604,800 intervals per
//! step; a reader that pages over them holds one page.

use crate::{
    AnalysisRow, IntervalRow, RunDetail, RunId, StepId, StepRow, Store, StoreError, TargetFactsRow,
};
use iorig_result::{HostResult, JobResult};
use iorig_stats::sampler::system::SystemFacts;
use std::collections::BTreeMap;

/// Intervals a page holds by default: a few MB of rows with their
/// histograms, whatever the run's length.
pub const INTERVAL_PAGE: u64 = 4096;

/// Everything stored about a run but its intervals.
#[derive(Clone, Debug)]
pub struct StoredRun {
    pub detail: RunDetail,
    pub system: Option<SystemFacts>,
    pub targets: Vec<TargetFactsRow>,
    /// In the plan's order.
    pub steps: Vec<StoredStep>,
    /// Findings about the run as a whole (curves, plan verdicts), in the
    /// order they were stored.
    pub plan_analysis: Vec<AnalysisRow>,
}

/// A stored step with its hosts, jobs and findings.
#[derive(Clone, Debug)]
pub struct StoredStep {
    pub row: StepRow,
    /// The step's findings, in the order they were stored.
    pub analysis: Vec<AnalysisRow>,
    /// A multi-host step's hosts, in their order.
    pub hosts: Vec<HostResult>,
    /// A step of several jobs: each job's result, in their order.
    pub jobs: Vec<JobResult>,
}

impl StoredRun {
    /// Reads the head of `run`; `None` when the store has no such run.
    pub fn load(store: &Store, run: RunId) -> Result<Option<StoredRun>, StoreError> {
        let Some(detail) = store.get_run(run)? else {
            return Ok(None);
        };
        // Each step's findings grouped once, in stored order; the rest are
        // the run's own.
        let mut by_step: BTreeMap<StepId, Vec<AnalysisRow>> = BTreeMap::new();
        let mut plan_analysis = Vec::new();
        for a in store.analysis(run)? {
            match a.step_id {
                Some(step) => by_step.entry(step).or_default().push(a),
                None => plan_analysis.push(a),
            }
        }
        let steps = store
            .steps(run)?
            .into_iter()
            .map(|row| {
                Ok(StoredStep {
                    hosts: store.step_hosts(row.id)?,
                    jobs: store.step_jobs(row.id)?,
                    analysis: by_step.remove(&row.id).unwrap_or_default(),
                    row,
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        Ok(Some(StoredRun {
            system: store.system_facts(run)?,
            targets: store.target_facts(run)?,
            detail,
            steps,
            plan_analysis,
        }))
    }

    /// Every finding, the run's and its steps', as one list (the order a
    /// reader that wants them all, such as a quick run's figures, takes).
    pub fn all_analysis(&self) -> Vec<AnalysisRow> {
        let mut all: Vec<AnalysisRow> = self
            .steps
            .iter()
            .flat_map(|s| s.analysis.iter().cloned())
            .chain(self.plan_analysis.iter().cloned())
            .collect();
        all.sort_by_key(|a| a.id);
        all
    }
}

impl StoredStep {
    /// All of the step's own intervals (its totals over hosts), in order.
    /// For a run of any length prefer [`StoredStep::interval_pages`].
    pub fn intervals(&self, store: &Store) -> Result<Vec<IntervalRow>, StoreError> {
        store.intervals(self.row.id)
    }

    /// The step's own intervals a page of at most `per_page` intervals at a
    /// time, in order; each interval's rows (read, write, total) stay on
    /// one page.
    pub fn interval_pages<'s>(&self, store: &'s Store, per_page: u64) -> IntervalPages<'s> {
        IntervalPages::of(store, self.row.id, per_page)
    }
}

/// Pages of a step's intervals ([`StoredStep::interval_pages`]).
pub struct IntervalPages<'s> {
    store: &'s Store,
    step: crate::StepId,
    next: u64,
    /// One past the last position stored, read with the first page.
    end: Option<u64>,
    per_page: u64,
    /// Read each row's histogram too ([`IntervalPages::figures_only`]).
    with_hist: bool,
}

impl<'s> IntervalPages<'s> {
    /// The own intervals of `step`, `per_page` intervals a page, each row
    /// with its histogram.
    pub fn of(store: &'s Store, step: crate::StepId, per_page: u64) -> IntervalPages<'s> {
        IntervalPages {
            store,
            step,
            next: 0,
            end: None,
            per_page: per_page.max(1),
            with_hist: true,
        }
    }

    /// The same pages without the rows' histograms
    /// ([`Store::interval_range_figures`]), for readers of the figures.
    pub fn figures_only(mut self) -> IntervalPages<'s> {
        self.with_hist = false;
        self
    }
}

impl Iterator for IntervalPages<'_> {
    type Item = Result<Vec<IntervalRow>, StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        let end = match self.end {
            Some(e) => e,
            None => match self.store.interval_end(self.step) {
                Ok(e) => *self.end.insert(e),
                Err(e) => {
                    self.end = Some(0);
                    return Some(Err(e));
                }
            },
        };
        // Positions may have gaps (an interval lost to a fault): skip empty
        // ranges rather than end early.
        while self.next < end {
            let to = self.next.saturating_add(self.per_page).min(end);
            let page = if self.with_hist {
                self.store.interval_range(self.step, "", self.next..to)
            } else {
                self.store
                    .interval_range_figures(self.step, "", self.next..to)
            };
            self.next = to;
            match page {
                Ok(rows) if rows.is_empty() => continue,
                other => return Some(other),
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewRun, NewStep, Op, RunKind, StepRole};
    use iorig_stats::OpSummary;

    fn row(seq: u64) -> IntervalRow {
        let figures = OpSummary {
            ops: 10 * (seq + 1),
            ..OpSummary::default()
        };
        IntervalRow::from_op(seq, seq as f64 + 1.0, 1.0, false, Op::Total, &figures)
    }

    fn run(store: &Store) -> Result<(RunId, crate::StepId), StoreError> {
        let run = store.create_run(&NewRun {
            kind: RunKind::Run,
            plan_json: None,
            host: "h".into(),
            tool_version: "0.1.0".into(),
            command_line: "iorig run".into(),
            labels: Default::default(),
            started: "2026-01-01T00:00:00Z".into(),
        })?;
        let step = store.upsert_step(
            run,
            &NewStep {
                index: 0,
                name: "s",
                role: StepRole::Run,
                params: None,
            },
        )?;
        Ok((run, step))
    }

    #[test]
    fn pages_cover_every_interval_once_in_order() -> Result<(), StoreError> {
        let store = Store::open_in_memory()?;
        let (run, step) = run(&store)?;
        // 10 intervals with a gap at 4: pages of 3 give 0..3, 3..6 (3, 5),
        // 6..9, 9..10.
        let rows: Vec<IntervalRow> = (0..11).filter(|s| *s != 4).map(row).collect();
        store.add_intervals(step, &rows)?;
        let loaded = StoredRun::load(&store, run)?.ok_or(StoreError::NoSuchRun(run.0))?;
        let s = &loaded.steps[0];
        let pages: Vec<Vec<IntervalRow>> = s.interval_pages(&store, 3).collect::<Result<_, _>>()?;
        assert!(pages.iter().all(|p| !p.is_empty() && p.len() <= 3));
        let seqs: Vec<u64> = pages.iter().flatten().map(|r| r.seq).collect();
        let want: Vec<u64> = rows.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, want);
        assert_eq!(
            pages.into_iter().flatten().collect::<Vec<_>>(),
            s.intervals(&store)?
        );
        Ok(())
    }

    #[test]
    fn figure_pages_leave_the_histograms_out() -> Result<(), StoreError> {
        let store = Store::open_in_memory()?;
        let (_, step) = run(&store)?;
        let mut h = iorig_stats::LatencyHistogram::new();
        h.record(1000);
        let rows: Vec<IntervalRow> = (0..5).map(|s| row(s).with_histogram(&h)).collect();
        store.add_intervals(step, &rows)?;
        let full: Vec<IntervalRow> = IntervalPages::of(&store, step, 2)
            .collect::<Result<Vec<_>, _>>()?
            .concat();
        let lean: Vec<IntervalRow> = IntervalPages::of(&store, step, 2)
            .figures_only()
            .collect::<Result<Vec<_>, _>>()?
            .concat();
        assert!(full.iter().all(|r| r.lat_hist.is_some()));
        assert!(lean.iter().all(|r| r.lat_hist.is_none()));
        let stripped: Vec<IntervalRow> = full
            .into_iter()
            .map(|mut r| {
                r.lat_hist = None;
                r
            })
            .collect();
        assert_eq!(lean, stripped);
        assert_eq!(store.interval_row_count(step)?, 5);
        assert_eq!(store.interval_end(step)?, 5);
        Ok(())
    }

    #[test]
    fn no_such_run_is_none() -> Result<(), StoreError> {
        let store = Store::open_in_memory()?;
        assert!(StoredRun::load(&store, RunId(42))?.is_none());
        Ok(())
    }
}
