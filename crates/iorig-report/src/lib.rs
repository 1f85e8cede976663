//! Reports of iorig results, read from the result store: a self-contained HTML
//! page with inline SVG charts (plus each chart as its own SVG and PNG), a
//! comparison page over several runs, and exports of a run as CSV, XLSX and
//! JSON. Nothing here runs I/O or prints; the CLI decides where files go.

pub mod charts;
mod error;
pub mod export;
pub mod html;
pub mod model;
pub mod pages;

pub use error::ReportError;
