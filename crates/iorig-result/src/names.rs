//! Small closed sets of names that are part of result documents.

use serde::{Deserialize, Serialize};

/// What a target is.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TargetKind {
    /// A regular file (an iorig scratch file or another).
    File,
    /// A block device.
    Block,
    /// The null engine's virtual target: nothing is opened.
    Null,
}
