//! The system's own signature probes: util-linux `wipefs` (every signature,
//! superblocks and partition tables alike), else `blkid -p`.
//!
//! iorig's built-in detection knows the common formats; libblkid knows every
//! one the system can create or mount (exFAT, minix, bfs, cramfs, squashfs,
//! bcache, ...). Both run through the descriptor the run will write to: the
//! probe reads `/proc/<our pid>/fd/<n>`, which is that very object even if
//! its path changed, and which it may open while iorig holds a block device
//! exclusively.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::process::Command;

/// One signature the system found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// libblkid's name for it (`ext4`, `exfat`, `gpt`, `LVM2_member`, ...).
    pub kind: String,
    /// Byte offset of the magic, when the tool says.
    pub offset: Option<u64>,
}

impl std::fmt::Display for Signature {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.offset {
            Some(o) => write!(f, "{} at offset {o:#x}", self.kind),
            None => write!(f, "{}", self.kind),
        }
    }
}

/// What the system's probe said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SystemProbe {
    Found {
        tool: &'static str,
        signatures: Vec<Signature>,
    },
    Nothing,
    /// Neither tool could be run; the built-in detection stands alone.
    Unavailable,
}

/// Where a tool may live: root's PATH has the sbin directories, a user's
/// often does not.
fn tool_path(name: &str) -> Option<String> {
    for dir in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
        let p = format!("{dir}/{name}");
        if std::path::Path::new(&p).exists() {
            return Some(p);
        }
    }
    None
}

/// Probes the object open as `f`.
pub fn system_signatures(f: &File) -> SystemProbe {
    let target = format!("/proc/{}/fd/{}", std::process::id(), f.as_raw_fd());
    if let Some(wipefs) = tool_path("wipefs") {
        if let Ok(out) = Command::new(wipefs)
            .args(["--no-act", "--parsable", "--noheadings", &target])
            .env("LC_ALL", "C")
            .output()
        {
            if out.status.success() {
                let sigs = parse_wipefs(&String::from_utf8_lossy(&out.stdout));
                return if sigs.is_empty() {
                    SystemProbe::Nothing
                } else {
                    SystemProbe::Found {
                        tool: "wipefs",
                        signatures: sigs,
                    }
                };
            }
        }
    }
    if let Some(blkid) = tool_path("blkid") {
        if let Ok(out) = Command::new(blkid)
            .args(["-p", "-o", "export", &target])
            .env("LC_ALL", "C")
            .output()
        {
            return match out.status.code() {
                Some(0) => {
                    let sigs = parse_blkid(&String::from_utf8_lossy(&out.stdout));
                    if sigs.is_empty() {
                        SystemProbe::Nothing
                    } else {
                        SystemProbe::Found {
                            tool: "blkid",
                            signatures: sigs,
                        }
                    }
                }
                Some(2) => SystemProbe::Nothing,
                // 8: "ambivalent" — more than one signature on the device.
                Some(8) => SystemProbe::Found {
                    tool: "blkid",
                    signatures: vec![Signature {
                        kind: "more than one signature (ambivalent probe)".into(),
                        offset: None,
                    }],
                },
                _ => SystemProbe::Unavailable,
            };
        }
    }
    SystemProbe::Unavailable
}

/// `wipefs --parsable --noheadings`: `offset,uuid,label,type` per line. The
/// label may hold commas, so the type is the last field.
fn parse_wipefs(text: &str) -> Vec<Signature> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let offset = l.split(',').next()?;
            let kind = l.rsplit(',').next()?.trim();
            if kind.is_empty() {
                return None;
            }
            let offset = offset
                .trim()
                .strip_prefix("0x")
                .and_then(|h| u64::from_str_radix(h, 16).ok());
            Some(Signature {
                kind: kind.to_string(),
                offset,
            })
        })
        .collect()
}

/// `blkid -p -o export`: `TYPE=` (superblocks) and `PTTYPE=` (partition tables).
fn parse_blkid(text: &str) -> Vec<Signature> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once('=')?;
            matches!(k, "TYPE" | "PTTYPE").then(|| Signature {
                kind: v.trim().to_string(),
                offset: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wipefs_lines() {
        let sigs = parse_wipefs("0x438,1a2b,,ext4\n0x1fe,,my,label,dos\n\n0x0,,,xfs\n");
        assert_eq!(
            sigs,
            vec![
                Signature {
                    kind: "ext4".into(),
                    offset: Some(0x438)
                },
                Signature {
                    kind: "dos".into(),
                    offset: Some(0x1fe)
                },
                Signature {
                    kind: "xfs".into(),
                    offset: Some(0)
                },
            ]
        );
        assert_eq!(sigs[0].to_string(), "ext4 at offset 0x438");
    }

    #[test]
    fn blkid_export() {
        let sigs =
            parse_blkid("DEVNAME=/proc/1/fd/3\nUUID=x\nTYPE=exfat\nUSAGE=filesystem\nPTTYPE=gpt\n");
        let kinds: Vec<&str> = sigs.iter().map(|s| s.kind.as_str()).collect();
        assert_eq!(kinds, ["exfat", "gpt"]);
    }

    #[test]
    fn a_blank_file_has_no_signature() {
        let d = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = d.path().join("blank");
        std::fs::write(&p, vec![0u8; 1 << 20]).unwrap_or_else(|e| panic!("{e}"));
        let f = File::open(&p).unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(
            system_signatures(&f),
            SystemProbe::Nothing | SystemProbe::Unavailable
        ));
    }
}
