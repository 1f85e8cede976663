//! The text forms of iorig's results, for terminals and logs: the
//! vdbench-style interval table and summary block ([`table`]), the lines a
//! step, a finding or a plan deserves ([`run`]), and the profile tables
//! ([`profile`]). Pure functions from typed results to lines: the CLI prints
//! them, an agent may log them, the web UI may show them; nothing here
//! prints.

pub mod hosts;
pub mod profile;
pub mod run;
pub mod runs;
pub mod safe;
pub mod table;
pub mod term;
pub mod trace;

pub use table::human_bytes;
