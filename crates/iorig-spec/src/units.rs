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

#[cfg(test)]
mod tests {
    use super::*;

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
