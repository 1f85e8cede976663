//! The binary end to end: every integration test of `iorig` in one test
//! crate, so the suite links one binary instead of one per file (each module
//! still opens with what it protects; `common` holds the shared helpers).

mod afternoon_cli;
mod architecture;
mod collect_cli;
mod common;
mod docs_commands;
mod fio_cli;
mod fs_cli;
mod help_cli;
mod hostile_import_cli;
mod hosts_cli;
mod latency_export_cli;
mod loop_device;
mod metrics_cli;
mod numbers_cli;
mod outputs_cli;
mod pacing_cli;
mod plan_cli;
mod profile_cli;
mod report_browser;
mod run_cli;
mod safety_cli;
mod serve_browser;
mod serve_cli;
mod team_store_cli;
mod trace_cli;
mod trim_cli;
mod vdbench_cli;
mod verify_cli;
