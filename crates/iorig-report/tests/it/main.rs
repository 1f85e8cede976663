//! The report and export ends of `iorig-report`, checked on stored runs:
//! one test crate, so the suite links one binary instead of one per file.

mod export_csv;
mod export_fixture;
mod export_json;
mod export_xlsx;
mod report_compare;
mod report_plan;
mod report_single;
mod report_support;
