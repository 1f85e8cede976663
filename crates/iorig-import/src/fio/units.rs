//! Numbers as fio reads them: sizes with fio's suffixes (by default `k`,
//! `kb` and `KB` are 1024 and `kib` is 1000, the reverse of the standards,
//! as fio keeps for old job files; `kb_base=1000` swaps them), times with
//! a default unit (seconds, or microseconds for `thinktime`), and
//! percentages of a size.

/// A size in bytes; `kb_base` is 1024 (fio's default) or 1000.
pub fn size(text: &str, kb_base: u64) -> Result<u64, String> {
    let t = text.trim();
    let (num, suffix) = split_number(t)?;
    let s = suffix.to_ascii_lowercase();
    // fio reads a suffix by its first letter (`1Mi`, `1MB` and `1m` are all
    // one mebibyte under kb_base=1024), except the IEC spellings `kib` ...
    // `pib`, which it reads whole.
    let iec = ["kib", "mib", "gib", "tib", "pib"]
        .iter()
        .any(|p| s.starts_with(p));
    let power = match s.chars().next() {
        None | Some('b') if s.len() <= 1 => 0,
        Some('k') => 1,
        Some('m') => 2,
        Some('g') => 3,
        Some('t') => 4,
        Some('p') => 5,
        _ => {
            return Err(format!(
                "'{text}' is not a size; write e.g. 4k, 1m, 10g (fio's suffixes)"
            ))
        }
    };
    // fio: with kb_base=1024, the SI-looking suffixes are binary and the
    // IEC ones decimal; with kb_base=1000 the other way round.
    let base: u64 = match (kb_base, iec) {
        (1000, false) => 1000,
        (1000, true) => 1024,
        (_, false) => 1024,
        (_, true) => 1000,
    };
    let mult = base
        .checked_pow(power)
        .ok_or_else(|| format!("'{text}' is too large"))?;
    let v = num * mult as f64;
    if !(v.is_finite() && v >= 0.0 && v < u64::MAX as f64) {
        return Err(format!("'{text}' is out of range"));
    }
    Ok(v.round() as u64)
}

/// A size, or a percentage (`10%`) of something the caller knows.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SizeOrPct {
    Bytes(u64),
    Pct(f64),
}

pub fn size_or_pct(text: &str, kb_base: u64) -> Result<SizeOrPct, String> {
    let t = text.trim();
    if let Some(p) = t.strip_suffix('%') {
        let v: f64 = p
            .trim()
            .parse()
            .map_err(|_| format!("'{text}' is not a percentage"))?;
        if !(v > 0.0 && v <= 100.0) {
            return Err(format!(
                "'{text}': a percentage lies above 0 and at most 100"
            ));
        }
        return Ok(SizeOrPct::Pct(v));
    }
    size(t, kb_base).map(SizeOrPct::Bytes)
}

/// A duration in nanoseconds; a bare number is in `default_unit_ns`.
pub fn time_ns(text: &str, default_unit_ns: u64) -> Result<u64, String> {
    let t = text.trim();
    let (num, suffix) = split_number(t)?;
    let unit: u64 = match suffix.to_ascii_lowercase().as_str() {
        "" => default_unit_ns,
        "ns" | "nsec" => 1,
        "us" | "usec" => 1_000,
        "ms" | "msec" => 1_000_000,
        "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" | "hour" => 3_600_000_000_000,
        "d" | "day" => 86_400_000_000_000,
        _ => {
            return Err(format!(
                "'{text}' is not a time; write e.g. 60, 60s, 5m, 500ms"
            ))
        }
    };
    let v = num * unit as f64;
    if !(v.is_finite() && v >= 0.0 && v < u64::MAX as f64) {
        return Err(format!("'{text}' is out of range"));
    }
    Ok(v.round() as u64)
}

/// A whole number (fio's `int`: `0x` hex, and size suffixes allowed).
pub fn int(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).map_err(|_| format!("'{text}' is not a number"));
    }
    size(t, 1024)
}

/// A boolean flag: a bare key, `1`/`0`, `true`/`false`, `yes`/`no`.
pub fn flag(value: Option<&str>) -> Result<bool, String> {
    match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
        None | Some("1") | Some("true") | Some("yes") | Some("on") => Ok(true),
        Some("0") | Some("false") | Some("no") | Some("off") => Ok(false),
        Some(other) => Err(format!("'{other}' is not a boolean; write 1 or 0")),
    }
}

fn split_number(t: &str) -> Result<(f64, &str), String> {
    let end = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
        .map_or(t.len(), |(i, _)| i);
    let (n, rest) = t.split_at(end);
    if n.is_empty() {
        return Err(format!("'{t}' does not start with a number"));
    }
    let v: f64 = n.parse().map_err(|_| format!("'{t}' is not a number"))?;
    Ok((v, rest.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_as_fio_reads_them() {
        // Checked against fio-3.33 (size=1001k etc. with the null engine).
        assert_eq!(size("4k", 1024), Ok(4096));
        assert_eq!(size("4KB", 1024), Ok(4096));
        assert_eq!(size("1kib", 1024), Ok(1000));
        assert_eq!(size("1KiB", 1024), Ok(1000));
        assert_eq!(size("1m", 1024), Ok(1 << 20));
        assert_eq!(size("1g", 1024), Ok(1 << 30));
        assert_eq!(size("1.5k", 1024), Ok(1536));
        assert_eq!(size("512", 1024), Ok(512));
        assert_eq!(size("1k", 1000), Ok(1000));
        assert_eq!(size("1kib", 1000), Ok(1024));
        assert!(size("4q", 1024).is_err());
        // fio reads a suffix by its first letter: 1Mi is 1048576 bytes to
        // fio-3.33 (size=1Mi, 1Mx and 1MB all did 1048576 bytes of I/O).
        assert_eq!(size("1Mi", 1024), Ok(1 << 20));
        assert_eq!(size("4Ki", 1024), Ok(4096));
        assert_eq!(size("1MB", 1024), Ok(1 << 20));
        assert_eq!(size("1mib", 1024), Ok(1_000_000));
        assert!(size("k", 1024).is_err());
        assert_eq!(size_or_pct("10%", 1024), Ok(SizeOrPct::Pct(10.0)));
        assert!(size_or_pct("0%", 1024).is_err());
    }

    #[test]
    fn times_with_their_default_unit() {
        assert_eq!(time_ns("60", 1_000_000_000), Ok(60_000_000_000));
        assert_eq!(time_ns("5m", 1_000_000_000), Ok(300_000_000_000));
        assert_eq!(time_ns("500ms", 1_000_000_000), Ok(500_000_000));
        assert_eq!(time_ns("100", 1_000), Ok(100_000));
        assert!(time_ns("5x", 1).is_err());
        assert_eq!(int("0x10"), Ok(16));
        assert_eq!(flag(None), Ok(true));
        assert_eq!(flag(Some("0")), Ok(false));
        assert!(flag(Some("maybe")).is_err());
    }
}
