//! The built-in plans: the methods of METHODS.md as plan files compiled into
//! the binary, so each is one command (`iorig plan run --builtin NAME`).

use super::Plan;

/// (name, one-line description, plan text). The descriptions repeat the files'
/// `description` so that listing needs no parsing; a test keeps them equal.
const BUILTINS: &[(&str, &str, &str)] = &[
    (
        "five-params",
        "Five I/O parameters: seq write, seq read, random write, random read cold, random read hot until steady",
        include_str!("../../builtins/five-params.toml"),
    ),
    (
        "matrix",
        "Read % 0-100 step 10 × bs 4k,8k,16k × threads 2,4,8,16, random, 60 s each (132 steps)",
        include_str!("../../builtins/matrix.toml"),
    ),
    (
        "curve",
        "IOPS-latency curve: 8k random 70 % read at max, then 10,50,70,80,90,100 % of max",
        include_str!("../../builtins/curve.toml"),
    ),
    (
        "qd-cycle",
        "4k random read, one worker, queue depth 1, 2, 4 ... 512 (10 steps)",
        include_str!("../../builtins/qd-cycle.toml"),
    ),
    (
        "flash-cliff",
        "Precondition 2× 16k random, then random writes per bs 4k-1m for 40 min and 50/70 % read mixes for 20 min (write cliff)",
        include_str!("../../builtins/flash-cliff.toml"),
    ),
    (
        "flash-matrix",
        "Profile (randwrite, 70 % read, randread) × bs 1k-1m × sync/async (qd 32, 64) × jobs 1-256, 1 min each, GC pause",
        include_str!("../../builtins/flash-matrix.toml"),
    ),
    (
        "cluster",
        "Cluster sizing from each host's cache: fill, then 4k random 70/30 and read, 256k sequential write and read, on a working set of 75 % of the cache and of 400 %",
        include_str!("../../builtins/cluster.toml"),
    ),
    (
        "fs-metadata",
        "Metadata rates: create, stat, delete of 10 000 empty files at 1, 2, 4, 8 threads (12 steps)",
        include_str!("../../builtins/fs-metadata.toml"),
    ),
    (
        "fs-smallfile",
        "Small files: create 8 000 files of 4k-64k with data, then read them whole (2 steps)",
        include_str!("../../builtins/fs-smallfile.toml"),
    ),
    (
        "fs-stream",
        "Streaming: 4 files of 512 MiB, sequential 1m writes then reads, 4 threads (2 steps)",
        include_str!("../../builtins/fs-stream.toml"),
    ),
];

/// The built-in plan `name`, or `None` if there is none by that name.
pub fn builtin(name: &str) -> Option<Plan> {
    let (_, _, text) = BUILTINS.iter().find(|(n, _, _)| *n == name)?;
    // Every built-in parses (tested), so an error here cannot happen; `None`
    // keeps the signature honest without a panic path.
    Plan::from_toml(&format!("builtin:{name}"), text).ok()
}

/// Every built-in plan as (name, one-line description), in a stable order.
pub fn builtins() -> Vec<(&'static str, &'static str)> {
    BUILTINS.iter().map(|(n, d, _)| (*n, *d)).collect()
}

/// The TOML text of a built-in, for `iorig plan builtins --show` or to copy and edit.
pub fn builtin_text(name: &str) -> Option<&'static str> {
    BUILTINS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, _, t)| *t)
}
