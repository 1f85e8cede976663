//! Sizes and durations as users write them.
//!
//! Every size suffix is binary, as fio reads them by default (`kb_base=1024`):
//! `4k`, `4K`, `4KB`, `4kb` and `4KiB` are all 4096. A decimal size is written
//! as a plain number (`4000`). Durations may be compound (`1m30s`).

use crate::SpecError;
use std::time::Duration;

/// Parses a size such as `4k`, `64m`, `10g`, `1t`, `4KB` or `512` into bytes
/// (every suffix binary).
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
        "k" | "K" | "kb" | "kB" | "Kb" | "KB" | "KiB" | "kib" | "Kib" => 1 << 10,
        "m" | "M" | "mb" | "mB" | "Mb" | "MB" | "MiB" | "mib" | "Mib" => 1 << 20,
        "g" | "G" | "gb" | "gB" | "Gb" | "GB" | "GiB" | "gib" | "Gib" => 1 << 30,
        "t" | "T" | "tb" | "tB" | "Tb" | "TB" | "TiB" | "tib" | "Tib" => 1 << 40,
        _ => {
            return Err(bad(
                "unknown unit; use k, m, g or t (binary, as fio), or a plain number of bytes",
            ))
        }
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

/// Parses a duration such as `500ms`, `30s`, `5m`, `2h` or `1m30s` (a bare
/// number is seconds; a compound one lists its parts largest first).
pub fn parse_duration(text: &str) -> Result<Duration, SpecError> {
    let bad = |why: &str| SpecError::BadDuration {
        value: text.to_string(),
        why: why.to_string(),
    };
    let mut rest = text.trim();
    if rest.is_empty() {
        return Err(bad("no number"));
    }
    let mut secs = 0.0;
    let mut last_scale = f64::INFINITY;
    while !rest.is_empty() {
        let digits_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let (num, after) = rest.split_at(digits_end);
        if num.is_empty() {
            return Err(bad("no number"));
        }
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        let n: f64 = num.parse().map_err(|_| bad("not a number"))?;
        let scale = match unit {
            "" if secs == 0.0 && next.is_empty() => 1.0,
            "s" | "sec" => 1.0,
            "ms" => 1e-3,
            "us" => 1e-6,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "d" => 86400.0,
            "" => {
                return Err(bad(
                    "every part of a compound duration needs a unit, e.g. 1m30s",
                ))
            }
            _ => return Err(bad("unknown unit; use us, ms, s, m, h or d")),
        };
        if scale >= last_scale {
            return Err(bad(
                "write the parts largest first, each unit once, e.g. 1h2m3s",
            ));
        }
        last_scale = scale;
        secs += n * scale;
        rest = next;
    }
    if !secs.is_finite() || secs > 1e9 {
        return Err(bad("too large"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a count such as `5000`, `5k` or `1.5m` (decimal: k = 1000, m =
/// 10^6, g = 10^9), as IOPS are written.
pub fn parse_count(text: &str) -> Option<f64> {
    let t = text.trim();
    let (num, factor) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'm' | 'M')) => (&t[..i], 1e6),
        Some((i, 'g' | 'G')) => (&t[..i], 1e9),
        _ => (t, 1.0),
    };
    let v: f64 = num.trim().parse().ok()?;
    Some(v * factor)
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

/// A duration for people, the one way every iorig output writes one:
/// under a minute in seconds with three significant digits (`12.5 s`),
/// longer to the whole second as `humantime` writes it (`4m 5s`,
/// `1h 2m 3s`).
pub fn format_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 59.5 {
        format!("{} s", sig3(s))
    } else {
        humantime::format_duration(Duration::from_secs(s.round() as u64)).to_string()
    }
}

/// The exact text of `d` that [`parse_duration`] reads back (to the
/// microsecond): what a plan writes into the workloads it expands.
pub fn format_duration_exact(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}us", ns / 1_000)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_for_people() {
        let f = |s: f64| format_duration(Duration::from_secs_f64(s));
        assert_eq!(f(0.25), "0.250 s");
        assert_eq!(f(12.5), "12.5 s");
        assert_eq!(f(59.4), "59.4 s");
        assert_eq!(f(59.6), "1m");
        assert_eq!(f(245.0), "4m 5s");
        assert_eq!(f(3723.4), "1h 2m 3s");
    }

    proptest::proptest! {
        #[test]
        fn exact_duration_text_reads_back(us in 0u64..10_000_000_000_000) {
            // The parser adds in f64: back to within a microsecond.
            let d = Duration::from_micros(us);
            let back = parse_duration(&format_duration_exact(d));
            proptest::prop_assert!(back.is_ok());
            let back = back.unwrap_or_default();
            proptest::prop_assert!(back.abs_diff(d) < Duration::from_micros(1), "{back:?} != {d:?}");
        }
    }

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
        for fio_spelling in ["4KB", "4kB", "4KiB", "4kb", "4Kb"] {
            assert_eq!(parse_size(fio_spelling), Ok(4096), "{fio_spelling}");
        }
        assert_eq!(parse_size("1MB"), Ok(1 << 20));
        assert_eq!(parse_size("4000"), Ok(4000));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1h2m3s"), Ok(Duration::from_secs(3723)));
        assert_eq!(parse_duration("2s500ms"), Ok(Duration::from_millis(2500)));
        assert!(parse_duration("30s1m").is_err());
        assert!(parse_duration("1m30").is_err());
        assert_eq!(parse_count("5k"), Some(5000.0));
        assert_eq!(parse_count("1.5m"), Some(1.5e6));
        assert_eq!(parse_count("250"), Some(250.0));
        assert_eq!(parse_size("64m"), Ok(64 << 20));
        assert_eq!(parse_size("10g"), Ok(10 << 30));
        assert_eq!(parse_size("1t"), Ok(1 << 40));
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
