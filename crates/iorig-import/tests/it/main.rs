//! fio and vdbench files in (a corpus and hostile input): one test crate,
//! so the suite links one binary instead of one per file.

mod corpus;
mod hostile_input;
