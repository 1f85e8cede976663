//! What every trace reader shares: whole reads from a stream, the bad
//! record a reader reports, and the cap on device names. Its own module:
//! the format readers (`blk`, `own`) and the front reader (`read`) use it.

use std::io::Read;

/// Most bytes of device names a trace holds, all together: each name is a
/// line's worth at most, and a file of many long names must not make
/// memory follow it either.
pub const MAX_DEVICE_NAME_BYTES: usize = 16 << 20;

/// Reads into all of `b` unless the stream ends first: the bytes read (a
/// binary record cut off at the end of the file reads short).
pub(crate) fn read_full(r: &mut dyn Read, b: &mut [u8]) -> std::io::Result<usize> {
    let mut got = 0;
    while got < b.len() {
        match r.read(&mut b[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// A record that cannot be taken: its number, why, and whether the stream
/// can go on after it (a binary stream that lost its record boundaries
/// cannot, so `--skip-bad` does not pass over it).
pub(crate) struct Bad {
    pub(crate) record: u64,
    pub(crate) why: String,
    pub(crate) fatal: bool,
}
