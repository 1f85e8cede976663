//! Value parsers for flags whose value must be read and checked before any
//! command runs: a bad value is refused by clap in one line that names the
//! flag, the value and what to give ("--align 1000: give a power of two from
//! 512, e.g. 4k"), exit 2, before anything is opened or written.

use std::time::Duration;

/// A flag value read by a function that says what to give when it refuses.
#[derive(Clone, Copy)]
pub struct Checked<T>(pub fn(&str) -> Result<T, String>);

impl<T: Clone + Send + Sync + 'static> clap::builder::TypedValueParser for Checked<T> {
    type Value = T;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let flag = arg
            .and_then(|a| a.get_long())
            .map(|l| format!("--{l} "))
            .unwrap_or_default();
        let text = value.to_string_lossy();
        (self.0)(&text).map_err(|why| {
            let shown = iorig_spec::shown_label(&text, 40);
            clap::Error::raw(
                clap::error::ErrorKind::ValueValidation,
                format!("{flag}{shown}: {why}\n"),
            )
        })
    }
}

fn size_where(text: &str, ok: impl Fn(u64) -> bool, hint: &str) -> Result<u64, String> {
    iorig_spec::parse_size(text)
        .ok()
        .filter(|b| ok(*b))
        .ok_or_else(|| hint.to_string())
}

/// A size above 0 (`4k`, `1m`), in bytes.
pub fn size(text: &str) -> Result<u64, String> {
    size_where(text, |b| b > 0, "give a size such as 4k or 1m")
}

/// A block of at least a sector, in bytes.
pub fn block(text: &str) -> Result<u64, String> {
    size_where(text, |b| b >= 512, "give a size from 512 bytes, such as 4k")
}

/// An alignment: a power of two from 512, in bytes.
pub fn align(text: &str) -> Result<u64, String> {
    size_where(
        text,
        |b| b >= 512 && b.is_power_of_two(),
        "give a power of two from 512, e.g. 4k",
    )
}

/// The kernel's trace buffer per CPU, from 64 KiB to 4 GiB, in KiB.
pub fn buffer_kib(text: &str) -> Result<u64, String> {
    size_where(
        text,
        |b| (64 << 10..=4 << 30).contains(&b),
        "give a size per CPU from 64k to 4g, e.g. 16m",
    )
    .map(|b| b / 1024)
}

/// A duration above 0 (`30s`, `10m`).
pub fn duration(text: &str) -> Result<Duration, String> {
    iorig_spec::parse_duration(text)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| "give a duration such as 30s or 10m".to_string())
}

/// A block trace's format (`--format` of the trace commands).
pub fn trace_format(text: &str) -> Result<iorig_trace::Format, String> {
    iorig_trace::Format::parse(text)
        .map_err(|_| "unknown; give blktrace, fio, msr or iorig".to_string())
}

/// How a replay places trace offsets in its targets.
pub fn offset_map(text: &str) -> Result<iorig_run::replay::OffsetMap, String> {
    iorig_run::replay::OffsetMap::parse(text).map_err(|_| "give modulo, scale or exact".into())
}

/// What `iorig trace record` writes.
pub fn capture_format(text: &str) -> Result<iorig_trace::capture::OutFormat, String> {
    use iorig_trace::capture::OutFormat;
    match text {
        "iorig" => Ok(OutFormat::Iorig),
        "blktrace" => Ok(OutFormat::Blktrace),
        _ => Err("give iorig (I/Os with times and latency) or blktrace (the kernel's records, for blkparse)".into()),
    }
}

/// The shape of `--json` (`--output-format`).
pub fn output_format(text: &str) -> Result<iorig_run::fio_out::OutputFormat, String> {
    iorig_run::fio_out::OutputFormat::parse(Some(text))
        .map_err(|_| "unknown; give iorig, fio-json or fio-json+".into())
}

fn above_zero(text: &str, hint: &str) -> Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite() && *x > 0.0)
        .ok_or_else(|| hint.to_string())
}

/// A replay's speed factor.
pub fn speed(text: &str) -> Result<f64, String> {
    above_zero(text, "give a factor above 0, e.g. 2 for twice as fast")
}

/// The backend's random reads per second, for a cache's warm-up time.
pub fn backend_iops(text: &str) -> Result<f64, String> {
    above_zero(
        text,
        "give the backend's random reads per second, above 0, e.g. 450",
    )
}

/// How many accesses a fit's model draws: enough to have a curve.
pub fn accesses(text: &str) -> Result<u64, String> {
    text.parse::<u64>()
        .ok()
        .filter(|n| *n >= 1000)
        .ok_or_else(|| {
            "give at least 1000 (a model of fewer accesses has no curve to speak of)".into()
        })
}

/// The address an agent listens on.
pub fn agent_listen(text: &str) -> Result<std::net::SocketAddr, String> {
    text.parse().map_err(|_| {
        "give an address and port, e.g. 127.0.0.1:7420 or 0.0.0.0:7420 (with --token-file)".into()
    })
}

/// The rate of a profile's emitted workload.
pub fn emit_rate(text: &str) -> Result<iorig_profile::emit::EmitRate, String> {
    iorig_profile::emit::EmitRate::parse(text).ok_or_else(|| "use mean or peak".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_are_checked_where_read() {
        assert_eq!(size("4k"), Ok(4096));
        assert!(size("0").is_err());
        assert_eq!(block("512"), Ok(512));
        assert!(block("256").is_err());
        assert_eq!(align("8k"), Ok(8192));
        assert!(align("1000").is_err());
        assert_eq!(buffer_kib("16m"), Ok(16384));
        assert!(buffer_kib("32k").is_err());
        assert!(buffer_kib("5g").is_err());
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert!(duration("0s").is_err());
    }
}
