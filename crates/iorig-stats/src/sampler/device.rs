//! Block-device counters from sysfs (`/sys/block/NAME/stat`,
//! `/sys/class/block/NAME/stat` for partitions), turned into the `iostat -x`
//! figures `%util`, `aqu-sz`, `r_await` and `w_await`.

use crate::StatsError;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One reading of a block device's `stat` file (see the kernel's
/// `Documentation/block/stat.rst`). Times are milliseconds. The discard
/// fields (kernel 4.18+) and flush fields (5.5+) are 0 when absent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskStat {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    /// I/Os in flight now (a gauge, not a counter).
    pub in_flight: u64,
    /// Time the device had I/O in flight.
    pub io_ticks_ms: u64,
    /// Sum over I/Os of their time in flight (weighted by queue depth).
    pub time_in_queue_ms: u64,
    pub discard_ios: u64,
    pub discard_merges: u64,
    pub discard_sectors: u64,
    pub discard_ticks_ms: u64,
    pub flush_ios: u64,
    pub flush_ticks_ms: u64,
}

impl DiskStat {
    /// Parses the text of a `stat` file: at least the 11 classic fields, then
    /// optionally 4 discard and 2 flush fields. Fields beyond the 17 known
    /// ones (future kernels) are ignored.
    pub fn parse(text: &str) -> Result<DiskStat, StatsError> {
        let mut v = [0u64; 17];
        let mut n = 0;
        for (slot, field) in v.iter_mut().zip(text.split_whitespace()) {
            *slot = field.parse().map_err(|e| StatsError::Parse {
                path: "block device stat".to_owned(),
                why: format!("field {} {field:?}: {e}", n + 1),
            })?;
            n += 1;
        }
        if n < 11 {
            return Err(StatsError::Parse {
                path: "block device stat".to_owned(),
                why: format!("{n} fields, need at least 11"),
            });
        }
        Ok(DiskStat {
            read_ios: v[0],
            read_merges: v[1],
            read_sectors: v[2],
            read_ticks_ms: v[3],
            write_ios: v[4],
            write_merges: v[5],
            write_sectors: v[6],
            write_ticks_ms: v[7],
            in_flight: v[8],
            io_ticks_ms: v[9],
            time_in_queue_ms: v[10],
            discard_ios: v[11],
            discard_merges: v[12],
            discard_sectors: v[13],
            discard_ticks_ms: v[14],
            flush_ios: v[15],
            flush_ticks_ms: v[16],
        })
    }

    /// Reads and parses a `stat` file.
    pub fn read(path: &Path) -> Result<DiskStat, StatsError> {
        let text = std::fs::read_to_string(path).map_err(|source| StatsError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Self::parse(&text).map_err(|e| match e {
            StatsError::Parse { why, .. } => StatsError::Parse {
                path: path.display().to_string(),
                why,
            },
            other => other,
        })
    }

    /// The counter increments from `self` (earlier) to `later`; `in_flight`
    /// is taken from `later`. See [`counter_delta`] for wrap and reset.
    pub fn delta(&self, later: &DiskStat) -> DiskStat {
        let d = counter_delta;
        DiskStat {
            read_ios: d(self.read_ios, later.read_ios),
            read_merges: d(self.read_merges, later.read_merges),
            read_sectors: d(self.read_sectors, later.read_sectors),
            read_ticks_ms: d(self.read_ticks_ms, later.read_ticks_ms),
            write_ios: d(self.write_ios, later.write_ios),
            write_merges: d(self.write_merges, later.write_merges),
            write_sectors: d(self.write_sectors, later.write_sectors),
            write_ticks_ms: d(self.write_ticks_ms, later.write_ticks_ms),
            in_flight: later.in_flight,
            io_ticks_ms: d(self.io_ticks_ms, later.io_ticks_ms),
            time_in_queue_ms: d(self.time_in_queue_ms, later.time_in_queue_ms),
            discard_ios: d(self.discard_ios, later.discard_ios),
            discard_merges: d(self.discard_merges, later.discard_merges),
            discard_sectors: d(self.discard_sectors, later.discard_sectors),
            discard_ticks_ms: d(self.discard_ticks_ms, later.discard_ticks_ms),
            flush_ios: d(self.flush_ios, later.flush_ios),
            flush_ticks_ms: d(self.flush_ticks_ms, later.flush_ticks_ms),
        }
    }
}

/// Increment of a kernel `unsigned long` counter from `old` to `new`.
///
/// On 32-bit kernels the counters wrap at 2^32: a value that went down but
/// whose 32-bit wrapping difference is small (under 2^31) is taken as such a
/// wrap. Any other backwards jump is a reset (device re-added, stats cleared)
/// and counts as 0 for that interval, so the result never underflows.
pub fn counter_delta(old: u64, new: u64) -> u64 {
    if new >= old {
        return new - old;
    }
    match (u32::try_from(old), u32::try_from(new)) {
        (Ok(o), Ok(n)) => {
            let wrapped = n.wrapping_sub(o);
            if wrapped < 1 << 31 {
                u64::from(wrapped)
            } else {
                0
            }
        }
        _ => 0,
    }
}

/// Block-device figures over one interval, like `iostat -x`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceUsage {
    /// Share of the interval with I/O in flight (`%util`), at most 100. With
    /// several devices, the busiest.
    pub util_pct: f64,
    /// Average number of I/Os in flight (`aqu-sz`); summed over devices.
    pub queue_depth: f64,
    /// Mean time of a completed read (`r_await`), 0 without reads; weighted by
    /// reads over devices.
    pub read_await_ns: u64,
    /// Mean time of a completed write (`w_await`), 0 without writes; weighted
    /// by writes over devices.
    pub write_await_ns: u64,
}

impl DeviceUsage {
    /// Figures from the counter deltas ([`DiskStat::delta`]) of one or more
    /// devices over `elapsed`. No devices or zero `elapsed` give 0 rates.
    pub fn from_deltas(deltas: &[DiskStat], elapsed: Duration) -> DeviceUsage {
        let elapsed_ms = elapsed.as_secs_f64() * 1e3;
        let per_ms = |v: u64| {
            if elapsed_ms > 0.0 {
                v as f64 / elapsed_ms
            } else {
                0.0
            }
        };
        let mut usage = DeviceUsage::default();
        let (mut r_ios, mut r_ticks, mut w_ios, mut w_ticks) = (0u64, 0u64, 0u64, 0u64);
        for d in deltas {
            let util = (100.0 * per_ms(d.io_ticks_ms)).min(100.0);
            usage.util_pct = usage.util_pct.max(util);
            usage.queue_depth += per_ms(d.time_in_queue_ms);
            r_ios = r_ios.saturating_add(d.read_ios);
            r_ticks = r_ticks.saturating_add(d.read_ticks_ms);
            w_ios = w_ios.saturating_add(d.write_ios);
            w_ticks = w_ticks.saturating_add(d.write_ticks_ms);
        }
        usage.read_await_ns = await_ns(r_ticks, r_ios);
        usage.write_await_ns = await_ns(w_ticks, w_ios);
        usage
    }
}

/// `ticks_ms / ios` in nanoseconds, rounded; 0 without I/O.
fn await_ns(ticks_ms: u64, ios: u64) -> u64 {
    if ios == 0 {
        return 0;
    }
    let ns = u128::from(ticks_ms) * 1_000_000;
    let ios = u128::from(ios);
    u64::try_from((ns + ios / 2) / ios).unwrap_or(u64::MAX)
}

#[derive(Debug)]
struct Device {
    name: String,
    stat_path: PathBuf,
    /// `None` after a failed read: the next good read is only a baseline.
    prev: Option<DiskStat>,
}

/// Samples a set of block devices between successive calls.
#[derive(Debug, Default)]
pub struct DeviceSampler {
    devices: Vec<Device>,
}

impl DeviceSampler {
    /// Takes the first snapshot of each named device (kernel names such as
    /// `sda`, `nvme0n1p2`, `dm-0`; a leading `/dev/` is accepted). Duplicates
    /// are ignored; names without a readable `stat` file are dropped without
    /// error, so files on overlay or tmpfs simply get no device figures.
    pub fn new(names: &[String]) -> Self {
        let mut devices: Vec<Device> = Vec::new();
        for raw in names {
            let Some(name) = iorig_blockdev::sysfs_name(raw) else {
                continue;
            };
            if devices.iter().any(|d| d.name == name) {
                continue;
            }
            let found = stat_paths(&name)
                .into_iter()
                .find_map(|p| DiskStat::read(&p).ok().map(|s| (p, s)));
            if let Some((stat_path, stat)) = found {
                devices.push(Device {
                    name,
                    stat_path,
                    prev: Some(stat),
                });
            }
        }
        Self { devices }
    }

    /// No device is being sampled.
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// The kernel names of the sampled devices.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.devices.iter().map(|d| d.name.as_str())
    }

    /// Usage since the previous sample, `elapsed` being the time since then.
    /// `None` when no device could be compared (none sampled, or none
    /// readable both times).
    pub fn sample(&mut self, elapsed: Duration) -> Option<DeviceUsage> {
        let mut deltas = Vec::with_capacity(self.devices.len());
        for dev in &mut self.devices {
            match DiskStat::read(&dev.stat_path) {
                Ok(now) => {
                    if let Some(prev) = dev.prev {
                        deltas.push(prev.delta(&now));
                    }
                    dev.prev = Some(now);
                }
                Err(_) => dev.prev = None,
            }
        }
        if deltas.is_empty() {
            None
        } else {
            Some(DeviceUsage::from_deltas(&deltas, elapsed))
        }
    }
}

fn stat_paths(name: &str) -> [PathBuf; 2] {
    [
        Path::new("/sys/block").join(name).join("stat"),
        Path::new("/sys/class/block").join(name).join("stat"),
    ]
}

pub use iorig_blockdev::device_for_path;

#[cfg(test)]
mod tests {
    use super::*;

    const FULL: &str = "   54512     8977  6446762    35365     9110    14719  2067296     4712        0    11752    40527     4380       26   238168      419      777       29\n";

    fn stat(
        read_ios: u64,
        read_ticks_ms: u64,
        write_ios: u64,
        write_ticks_ms: u64,
        io_ticks_ms: u64,
        time_in_queue_ms: u64,
    ) -> DiskStat {
        DiskStat {
            read_ios,
            read_ticks_ms,
            write_ios,
            write_ticks_ms,
            io_ticks_ms,
            time_in_queue_ms,
            ..DiskStat::default()
        }
    }

    #[test]
    fn parses_17_fields() {
        let s = DiskStat::parse(FULL).expect("parse");
        assert_eq!(
            s,
            DiskStat {
                read_ios: 54512,
                read_merges: 8977,
                read_sectors: 6446762,
                read_ticks_ms: 35365,
                write_ios: 9110,
                write_merges: 14719,
                write_sectors: 2067296,
                write_ticks_ms: 4712,
                in_flight: 0,
                io_ticks_ms: 11752,
                time_in_queue_ms: 40527,
                discard_ios: 4380,
                discard_merges: 26,
                discard_sectors: 238168,
                discard_ticks_ms: 419,
                flush_ios: 777,
                flush_ticks_ms: 29,
            }
        );
    }

    #[test]
    fn parses_11_and_15_fields_and_rejects_garbage() {
        let s11 = DiskStat::parse("1 2 3 4 5 6 7 8 9 10 11").expect("11 fields");
        assert_eq!(s11.time_in_queue_ms, 11);
        assert_eq!(s11.discard_ios, 0);
        assert_eq!(s11.flush_ios, 0);
        let s15 = DiskStat::parse("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n").expect("15 fields");
        assert_eq!(s15.discard_ticks_ms, 15);
        assert_eq!(s15.flush_ticks_ms, 0);
        let s18 = DiskStat::parse("1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18").expect("18");
        assert_eq!(s18.flush_ticks_ms, 17);
        assert!(DiskStat::parse("").is_err());
        assert!(DiskStat::parse("1 2 3 4 5 6 7 8 9 10").is_err());
        assert!(DiskStat::parse("1 2 3 4 5 6 7 8 9 10 x").is_err());
        assert!(DiskStat::parse("1 2 3 4 5 6 7 8 -9 10 11").is_err());
    }

    #[test]
    fn single_device_math_is_exact() {
        // Over 1 s: 500 ms busy, 2000 ms queue-time, 100 reads taking
        // 250 ms in total, 50 writes taking 1000 ms.
        let a = stat(1000, 4000, 2000, 8000, 10_000, 50_000);
        let b = stat(1100, 4250, 2050, 9000, 10_500, 52_000);
        let u = DeviceUsage::from_deltas(&[a.delta(&b)], Duration::from_secs(1));
        assert_eq!(
            u,
            DeviceUsage {
                util_pct: 50.0,
                queue_depth: 2.0,
                read_await_ns: 2_500_000,
                write_await_ns: 20_000_000,
            }
        );
    }

    #[test]
    fn util_is_clamped_and_idle_is_zero() {
        // io_ticks can run ahead of the wall clock a little.
        let a = stat(0, 0, 0, 0, 0, 0);
        let b = stat(0, 0, 0, 0, 1_100, 0);
        let u = DeviceUsage::from_deltas(&[a.delta(&b)], Duration::from_secs(1));
        assert_eq!(u.util_pct, 100.0);
        // Nothing happened: all zero, no NaN.
        let u = DeviceUsage::from_deltas(&[a.delta(&a)], Duration::from_secs(1));
        assert_eq!(u, DeviceUsage::default());
        // Zero elapsed: rates are 0, not NaN or infinite.
        let u = DeviceUsage::from_deltas(&[a.delta(&b)], Duration::ZERO);
        assert_eq!(u, DeviceUsage::default());
        assert_eq!(
            DeviceUsage::from_deltas(&[], Duration::from_secs(1)),
            DeviceUsage::default()
        );
    }

    #[test]
    fn several_devices_max_sum_and_weighted_await() {
        let elapsed = Duration::from_millis(2000);
        // dev1: 400 ms busy (20 %), queue 1000 ms (0.5), 10 reads in 100 ms.
        let d1 = stat(0, 0, 0, 0, 0, 0).delta(&stat(10, 100, 0, 0, 400, 1000));
        // dev2: 1500 ms busy (75 %), queue 3000 ms (1.5), 30 reads in 900 ms,
        // 4 writes in 6 ms.
        let d2 = stat(0, 0, 0, 0, 0, 0).delta(&stat(30, 900, 4, 6, 1500, 3000));
        let u = DeviceUsage::from_deltas(&[d1, d2], elapsed);
        assert_eq!(u.util_pct, 75.0);
        assert_eq!(u.queue_depth, 2.0);
        // (100 + 900) ms / 40 reads = 25 ms, not the mean of 10 and 30 ms.
        assert_eq!(u.read_await_ns, 25_000_000);
        assert_eq!(u.write_await_ns, 1_500_000);
    }

    #[test]
    fn await_rounds_to_nearest_ns() {
        assert_eq!(await_ns(1, 3), 333_333);
        assert_eq!(await_ns(2, 3), 666_667);
        assert_eq!(await_ns(5, 0), 0);
        assert_eq!(await_ns(u64::MAX, 1), u64::MAX);
    }

    #[test]
    fn counters_wrap_at_32_bits_and_reset_to_zero() {
        assert_eq!(counter_delta(10, 25), 15);
        // 32-bit wrap: 0xffff_fff0 -> 0x10 is 0x20 further.
        assert_eq!(counter_delta(0xffff_fff0, 0x10), 0x20);
        // Reset (device re-added): no underflow, no huge jump.
        assert_eq!(counter_delta(5_000, 10), 0);
        assert_eq!(counter_delta(u64::MAX, 0), 0);
        assert_eq!(counter_delta(1 << 40, 7), 0);

        let a = stat(0xffff_ff00, 0xffff_fc18, 7, 7, 0xffff_ffff, 500);
        let b = stat(0x0000_0064, 0x0000_0064, 7, 7, 0x0000_01f3, 2);
        let d = a.delta(&b);
        assert_eq!(d.read_ios, 0x164);
        assert_eq!(d.read_ticks_ms, 1100);
        assert_eq!(d.io_ticks_ms, 500);
        assert_eq!(d.time_in_queue_ms, 0); // went back a little: a reset
        assert_eq!(d.write_ios, 0);
    }

    #[test]
    fn missing_devices_are_dropped_silently() {
        let mut s = DeviceSampler::new(&[
            "iorig-no-such-device".to_owned(),
            String::new(),
            "..".to_owned(),
        ]);
        assert!(s.is_empty());
        assert_eq!(s.sample(Duration::from_secs(1)), None);
    }

    fn first_sys_block() -> Option<String> {
        let mut names: Vec<String> = std::fs::read_dir("/sys/block")
            .ok()?
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| Path::new("/sys/block").join(n).join("stat").exists())
            .collect();
        // Prefer a real disk over loop/ram devices, whose counters are often all 0.
        names.sort_by_key(|n| {
            let virt = ["loop", "ram", "zram"].iter().any(|p| n.starts_with(p));
            (virt, n.clone())
        });
        names.into_iter().next()
    }

    #[test]
    fn smoke_real_sys_block() {
        let name = first_sys_block().expect("this machine has block devices in /sys/block");
        let stat = DiskStat::read(&Path::new("/sys/block").join(&name).join("stat"))
            .expect("parse a real stat file");
        let mut s = DeviceSampler::new(&[name.clone(), name.clone(), format!("/dev/{name}")]);
        assert_eq!(s.names().collect::<Vec<_>>(), vec![name.as_str()]);
        let u = s
            .sample(Duration::from_millis(10))
            .expect("a readable device gives figures");
        assert!((0.0..=100.0).contains(&u.util_pct), "{u:?}");
        assert!(u.queue_depth >= 0.0, "{u:?}");
        eprintln!("{name}: {stat:?} -> {u:?}");
    }

    #[test]
    fn device_for_block_node_and_file() {
        // A block device node maps to its own name, when /dev has one.
        let name = first_sys_block().expect("this machine has block devices in /sys/block");
        let node = Path::new("/dev").join(&name);
        use std::os::unix::fs::FileTypeExt;
        let is_blk = std::fs::metadata(&node)
            .map(|m| m.file_type().is_block_device())
            .unwrap_or(false);
        assert!(is_blk, "{} is a block device node", node.display());
        assert_eq!(device_for_path(&node).as_deref(), Some(name.as_str()));
        // Regular files: whatever the filesystem, the answer (if any) must be
        // a device the sampler can read.
        for p in [
            "/",
            "/tmp",
            env!("CARGO_MANIFEST_DIR"),
            "/tmp/iorig-not-there/x",
        ] {
            let dev = device_for_path(Path::new(p));
            eprintln!("{p} -> {dev:?}");
            if let Some(dev) = dev {
                assert!(!DeviceSampler::new(&[dev]).is_empty(), "{p}");
            }
        }
        // tmpfs / proc have no block device.
        assert_eq!(device_for_path(Path::new("/proc/self")), None);
    }
}
