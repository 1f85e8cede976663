//! Sizes and durations as users write them.
//!
//! Lower-case suffixes and a bare `K`/`M`/... are binary (4k = 4096); a suffix spelled
//! with a capital `B` after a capital letter (`4KB`, `1MB`) is decimal, as on drive
//! labels. `KiB`/`MiB` are accepted as explicit binary spellings.

use crate::SpecError;
use std::time::Duration;

/// Parses a size such as `4k`, `64m`, `10g`, `1t`, `4KB` or `512` into bytes.
pub fn parse_size(text: &str) -> Result<u64, SpecError> {
    let bad = |why: &str| SpecError::BadSize {
        value: text.to_string(),
        why: why.to_string(),
    };
    let s = text.trim();
    if s.is_empty() {
        return Err(bad("empty"));
    }
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(digits_end);
    if num.is_empty() {
        return Err(bad("no number"));
    }
    let multiplier: u64 = match suffix {
        "" | "b" | "B" => 1,
        "k" | "K" | "kb" | "KiB" | "kib" => 1 << 10,
        "m" | "M" | "mb" | "MiB" | "mib" => 1 << 20,
        "g" | "G" | "gb" | "GiB" | "gib" => 1 << 30,
        "t" | "T" | "tb" | "TiB" | "tib" => 1 << 40,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        _ => return Err(bad("unknown unit")),
    };
    let value = if num.contains('.') {
        let f: f64 = num.parse().map_err(|_| bad("not a number"))?;
        let bytes = f * multiplier as f64;
        if !bytes.is_finite() || bytes > u64::MAX as f64 {
            return Err(bad("too large"));
        }
        if bytes.fract() != 0.0 {
            return Err(bad("not a whole number of bytes"));
        }
        bytes as u64
    } else {
        let n: u64 = num.parse().map_err(|_| bad("not a number"))?;
        n.checked_mul(multiplier).ok_or_else(|| bad("too large"))?
    };
    Ok(value)
}

/// Parses a duration such as `500ms`, `30s`, `5m`, `2h` (a bare number is seconds).
pub fn parse_duration(text: &str) -> Result<Duration, SpecError> {
    let bad = |why: &str| SpecError::BadDuration {
        value: text.to_string(),
        why: why.to_string(),
    };
    let s = text.trim();
    let digits_end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(digits_end);
    if num.is_empty() {
        return Err(bad("no number"));
    }
    let n: f64 = num.parse().map_err(|_| bad("not a number"))?;
    let secs = match suffix {
        "" | "s" | "sec" => n,
        "ms" => n / 1e3,
        "us" => n / 1e6,
        "m" | "min" => n * 60.0,
        "h" => n * 3600.0,
        "d" => n * 86400.0,
        _ => return Err(bad("unknown unit")),
    };
    if !secs.is_finite() || secs > 1e9 {
        return Err(bad("too large"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Formats bytes with the largest binary unit that divides them (4096 -> "4k").
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (1 << 40, "t"),
        (1 << 30, "g"),
        (1 << 20, "m"),
        (1 << 10, "k"),
    ];
    for (unit, suffix) in UNITS {
        if bytes >= unit && bytes.is_multiple_of(unit) {
            return format!("{}{}", bytes / unit, suffix);
        }
    }
    bytes.to_string()
}

/// A number with three significant digits (`0.123`, `1.23`, `12.3`, `123`).
pub fn sig3(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A byte count for people: binary units, three significant digits
/// (`512 B`, `4.00 KiB`, `1.50 GiB`). [`format_size`] gives exact sizes.
pub fn format_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < UNITS.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{} {}", sig3(v), UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_for_people() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(4096), "4.00 KiB");
        assert_eq!(format_bytes(1536 << 20), "1.50 GiB");
        assert_eq!(format_bytes(123 << 20), "123 MiB");
        assert_eq!(sig3(0.0), "0");
        assert_eq!(sig3(0.1234), "0.123");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512"), Ok(512));
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("4K"), Ok(4096));
        assert_eq!(parse_size("64m"), Ok(64 << 20));
        assert_eq!(parse_size("10g"), Ok(10 << 30));
        assert_eq!(parse_size("1t"), Ok(1 << 40));
        assert_eq!(parse_size("4KB"), Ok(4000));
        assert_eq!(parse_size("1MB"), Ok(1_000_000));
        assert_eq!(parse_size("4KiB"), Ok(4096));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert!(parse_size("4x").is_err());
        assert!(parse_size("").is_err());
        assert!(parse_size("k").is_err());
        assert!(parse_size("-4k").is_err());
        assert!(parse_size("99999999999t").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn size_format_round_trips() {
        for s in ["4k", "64m", "10g", "1t", "512", "1536"] {
            let bytes = parse_size(s).unwrap_or(0);
            assert_eq!(format_size(bytes), s);
        }
    }
}
