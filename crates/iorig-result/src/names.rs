//! Small closed sets of names that are part of result documents.

use serde::{Deserialize, Serialize};

names!(
    /// What a target is.
    TargetKind {
        /// A regular file (an iorig scratch file or another).
        File,
        /// A block device.
        Block,
        /// The null engine's virtual target: nothing is opened.
        Null,
        /// The anchor directory of a file-system workload's tree.
        Directory,
    }
);
