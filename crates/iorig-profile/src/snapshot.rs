//! `/proc/diskstats` snapshots: parsing, reading them live, and recordings
//! (a directory of verbatim copies named by capture time).
//!
//! A recording lets a profile be taken on a production host, where nothing
//! but a copy loop may run, and analysed elsewhere: `1700000000000.diskstats`
//! holds the file as it was at that millisecond since the UNIX epoch.

use crate::ProfileError;
use iorig_stats::DiskStat;
use std::path::Path;

/// Where the live counters are.
pub const PROC_DISKSTATS: &str = "/proc/diskstats";

/// The extension of a recorded snapshot.
pub const SNAPSHOT_EXT: &str = "diskstats";

/// One device's line of `/proc/diskstats`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeviceCounters {
    pub name: String,
    pub stat: DiskStat,
    /// Counter fields after the name: 11 (old kernels), 15 (with discards,
    /// 4.18+), 17 (with flushes, 5.5+) or more.
    pub fields: usize,
}

impl DeviceCounters {
    /// Whether this kernel reports discards for the device.
    pub fn has_discard(&self) -> bool {
        self.fields >= 15
    }

    /// Whether this kernel reports flushes for the device.
    pub fn has_flush(&self) -> bool {
        self.fields >= 17
    }
}

/// All devices' counters at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// Capture time, milliseconds (since the UNIX epoch for recordings; any
    /// monotonic origin will do for intervals).
    pub t_ms: u64,
    pub devices: Vec<DeviceCounters>,
}

/// Parses the text of `/proc/diskstats`: `major minor name` and then the
/// counters. `origin` names the source in error messages.
pub fn parse_diskstats(origin: &str, text: &str) -> Result<Vec<DeviceCounters>, ProfileError> {
    let mut devices = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let bad = |why: String| ProfileError::Snapshot {
            path: origin.to_owned(),
            why: format!("line {}: {why}", i + 1),
        };
        let mut words = line.split_whitespace();
        let (Some(major), Some(minor), Some(name)) = (words.next(), words.next(), words.next())
        else {
            return Err(bad("expected `major minor name counters...`".to_owned()));
        };
        if major.parse::<u64>().is_err() || minor.parse::<u64>().is_err() {
            return Err(bad(format!(
                "`{major} {minor}` are not device numbers; is this a copy of /proc/diskstats?"
            )));
        }
        let rest: Vec<&str> = words.collect();
        let stat = DiskStat::parse(&rest.join(" ")).map_err(|e| bad(format!("{name}: {e}")))?;
        devices.push(DeviceCounters {
            name: name.to_owned(),
            stat,
            fields: rest.len(),
        });
    }
    Ok(devices)
}

/// Reads the live `/proc/diskstats` (its text, and the parsed devices).
pub fn read_live() -> Result<(String, Vec<DeviceCounters>), ProfileError> {
    let text = std::fs::read_to_string(PROC_DISKSTATS).map_err(|source| ProfileError::Io {
        path: PROC_DISKSTATS.to_owned(),
        source,
    })?;
    let devices = parse_diskstats(PROC_DISKSTATS, &text)?;
    Ok((text, devices))
}

/// Reads a recording: every `<ms>.diskstats` file in `dir`, ordered by time.
/// Other files are ignored; a `.diskstats` file whose name is not a time is
/// an error, as is a recording of fewer than two snapshots.
pub fn read_recording(dir: &Path) -> Result<Vec<Snapshot>, ProfileError> {
    let io = |source| ProfileError::Io {
        path: dir.display().to_string(),
        source,
    };
    let mut snaps = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if path.extension().and_then(|e| e.to_str()) != Some(SNAPSHOT_EXT) {
            continue;
        }
        let shown = path.display().to_string();
        let t_ms = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(|s| s.parse::<u64>().ok())
            .ok_or_else(|| ProfileError::Snapshot {
                path: shown.clone(),
                why: "the name must be the capture time in ms since the epoch, e.g. 1700000000000.diskstats".to_owned(),
            })?;
        let text = std::fs::read_to_string(&path).map_err(|source| ProfileError::Io {
            path: shown.clone(),
            source,
        })?;
        snaps.push(Snapshot {
            t_ms,
            devices: parse_diskstats(&shown, &text)?,
        });
    }
    snaps.sort_by_key(|s| s.t_ms);
    if snaps.len() < 2 {
        return Err(ProfileError::Usage(format!(
            "{} holds {} snapshot(s); a profile needs at least two `<ms>.diskstats` files (iorig profile --record DIR writes them)",
            dir.display(),
            snaps.len()
        )));
    }
    Ok(snaps)
}

/// Writes one snapshot of a recording (`DIR/<t_ms>.diskstats`), atomically:
/// a reader never sees half a file.
pub fn write_snapshot(dir: &Path, t_ms: u64, text: &str) -> Result<(), ProfileError> {
    let path = dir.join(format!("{t_ms}.{SNAPSHOT_EXT}"));
    iorig_outfile::write_atomic("--record", &path, text.as_bytes()).map_err(|e| match e {
        iorig_outfile::OutputError::Io { source, .. } => ProfileError::Io {
            path: path.display().to_string(),
            source,
        },
        other => ProfileError::Io {
            path: path.display().to_string(),
            source: std::io::Error::other(other.to_string()),
        },
    })
}

/// Whether `dir` already holds snapshots (a recording must not mix two).
pub fn has_snapshots(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries
            .flatten()
            .any(|e| e.path().extension().and_then(|x| x.to_str()) == Some(SNAPSHOT_EXT))
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    const TEXT: &str = "\
   8       0 sda 100 1 800 50 200 2 1600 70 0 90 120 0 0 0 0 0 0
   8       1 sda1 10 0 80 5 20 0 160 7 0 9 12 0 0 0 0 0 0
 252       0 dm-0 1 0 8 1 2 0 16 1 0 2 2
";

    #[test]
    fn parses_lines_of_every_length() {
        let d = parse_diskstats("t", TEXT).unwrap();
        assert_eq!(d.len(), 3);
        assert_eq!(d[0].name, "sda");
        assert_eq!(d[0].stat.write_sectors, 1600);
        assert_eq!(d[0].fields, 17);
        assert!(d[0].has_discard() && d[0].has_flush());
        assert_eq!(d[2].fields, 11);
        assert!(!d[2].has_discard());
    }

    #[test]
    fn garbage_is_an_error_naming_the_line() {
        let e = parse_diskstats("x", "8 0 sda 1 2 3\n").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        let e = parse_diskstats("x", "hello world\n").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
    }

    #[test]
    fn recordings_round_trip_in_time_order() {
        let dir = tempfile::tempdir().unwrap();
        write_snapshot(dir.path(), 2000, TEXT).unwrap();
        write_snapshot(dir.path(), 1000, TEXT).unwrap();
        std::fs::write(dir.path().join("README"), "ignored").unwrap();
        assert!(has_snapshots(dir.path()));
        let snaps = read_recording(dir.path()).unwrap();
        assert_eq!(
            snaps.iter().map(|s| s.t_ms).collect::<Vec<_>>(),
            [1000, 2000]
        );
        std::fs::write(dir.path().join("noon.diskstats"), TEXT).unwrap();
        assert!(read_recording(dir.path()).is_err());
    }

    #[test]
    fn one_snapshot_is_not_a_profile() {
        let dir = tempfile::tempdir().unwrap();
        write_snapshot(dir.path(), 1000, TEXT).unwrap();
        let e = read_recording(dir.path()).unwrap_err();
        assert!(e.to_string().contains("at least two"), "{e}");
    }
}
