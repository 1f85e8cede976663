#!/usr/bin/env bash
# trace.sh — how fast `iorig trace analyse` reads and analyses a block trace,
# and its peak memory, and how close to their times `iorig trace replay`
# issues a trace's I/Os.
#
# Analysis: a generated trace of RECORDS records (a hot tenth of the blocks
# taking 90 % of the I/Os, 4k–64k, 70 % reads), as MSR CSV (plain, zstd, and
# with the LRU curves sampled at 1 %) and in iorig's binary format (without
# the LRU curves: basics and hot spot; exact; sampled at 1 %); prints
# records/s and peak RSS of each. BIG=N also analyses an N-record iorig
# trace sampled at 1 % (the bounded-memory case: 100000000 for 100 M).
#
# Replay: a trace of REPLAY_IOS 4k I/Os evenly spaced at REPLAY_IOPS, replayed
# on the null engine and (as root, when /dev/zram0 is free) on a zram device
# this script sets up and resets, with and without --async-submit; prints
# the timing error's p50/p99/p99.9/max.
#
#   bench/trace.sh                   # 10 M records
#   RECORDS=1000000 bench/trace.sh
#   BIG=100000000 bench/trace.sh
#
# Environment:
#   RECORDS      records to generate (default 10000000)
#   BLOCKS       distinct 4k blocks of the address space (default 2500000, 10 GiB)
#   BIG          records of the large sampled iorig-format run (default: none)
#   REPLAY_IOPS  the replayed trace's rate (default 20000)
#   REPLAY_IOS   its I/Os (default 200000)
#   IORIG        the iorig binary (default: built with cargo --release)
#
# Writes only to a temp dir, which it removes (and /dev/zram0 when free,
# which it resets). Exit 0 when it ran, 2 when a prerequisite is missing.
set -euo pipefail

RECORDS=${RECORDS:-10000000}
BLOCKS=${BLOCKS:-2500000}
BIG=${BIG:-}
REPLAY_IOPS=${REPLAY_IOPS:-20000}
REPLAY_IOS=${REPLAY_IOS:-200000}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)

log() { echo "trace: $*" >&2; }
need() { log "$*"; exit 2; }

[[ $RECORDS =~ ^[1-9][0-9]*$ ]] || need "RECORDS must be a positive integer (got '$RECORDS')"
[[ $BLOCKS =~ ^[1-9][0-9]*$ ]] || need "BLOCKS must be a positive integer (got '$BLOCKS')"
[[ -z $BIG || $BIG =~ ^[1-9][0-9]*$ ]] || need "BIG must be a positive integer (got '$BIG')"
[[ $REPLAY_IOPS =~ ^[1-9][0-9]*$ ]] || need "REPLAY_IOPS must be a positive integer (got '$REPLAY_IOPS')"
[[ $REPLAY_IOS =~ ^[1-9][0-9]*$ ]] || need "REPLAY_IOS must be a positive integer (got '$REPLAY_IOS')"
command -v python3 >/dev/null || need "python3 is not installed"
[[ -x /usr/bin/time ]] || need "/usr/bin/time is not installed (apt-get install time)"
command -v zstd >/dev/null || need "zstd is not installed (apt-get install zstd)"

if [[ -z ${IORIG:-} ]]; then
    (cd "$REPO" && cargo build --release -q -p iorig) || need "cargo build failed"
    IORIG="${CARGO_TARGET_DIR:-$REPO/target}/release/iorig"
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

# The same records as MSR CSV (FILETIME, 100 ns units) or as iorig's binary
# trace (docs/trace.md: a header, then 32-byte records).
generate() { # records blocks csv|iorig
    python3 - "$1" "$2" "$3" <<'EOF'
import random, struct, sys
n, blocks, kind = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rnd = random.Random(19)
hot = max(1, blocks // 10)
ts = t0 = 128166372003061629
sizes = [4096] * 6 + [8192] * 2 + [16384, 65536]
out = sys.stdout.buffer
if kind == "iorig":
    name = b"bench:0"
    out.write(b"IORIGTRC" + struct.pack("<HHH", 1, 1, len(name)) + name)
rec = struct.Struct("<QQQIHBB")
buf = []
for i in range(n):
    b = rnd.randrange(hot) if rnd.random() < 0.9 else rnd.randrange(hot, blocks)
    read = rnd.random() < 0.7
    ts += rnd.randrange(1, 200)
    size = rnd.choice(sizes)
    lat = rnd.randrange(50, 5000)
    if kind == "iorig":
        buf.append(rec.pack((ts - t0) * 100, lat * 100, b * 4096, size, 0, 0 if read else 1, 0))
    else:
        op = "Read" if read else "Write"
        buf.append(f"{ts},bench,0,{op},{b * 4096},{size},{lat}\n".encode())
    if len(buf) == 100000:
        out.write(b"".join(buf))
        buf.clear()
out.write(b"".join(buf))
EOF
}

log "generating $RECORDS records over $BLOCKS blocks"
generate "$RECORDS" "$BLOCKS" csv >"$WORK/t.csv"
generate "$RECORDS" "$BLOCKS" iorig >"$WORK/t.iotrace"
zstd -q -3 "$WORK/t.csv" -o "$WORK/t.csv.zst"
log "$(du -h "$WORK/t.csv" | cut -f1) plain, $(du -h "$WORK/t.csv.zst" | cut -f1) zstd, $(du -h "$WORK/t.iotrace" | cut -f1) iorig"

measure() { # label records file [args...]
    local label=$1 n=$2 file=$3
    shift 3
    /usr/bin/time -f '%e %M' -o "$WORK/time" "$IORIG" trace analyse "$file" --no-db "$@" >"$WORK/out.txt"
    read -r secs rss_kb <"$WORK/time"
    python3 - "$label" "$n" "$secs" "$rss_kb" <<'EOF'
import sys
label, n, secs, rss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
print(f"{label:<16} {n:>11} records  {secs:>7.2f} s  {n / secs / 1e6:>6.2f} M records/s  peak RSS {rss / 1024:>7.0f} MiB")
EOF
}
measure "msr csv" "$RECORDS" "$WORK/t.csv" --hit 0.8
measure "msr zstd" "$RECORDS" "$WORK/t.csv.zst" --hit 0.8
measure "msr 1%" "$RECORDS" "$WORK/t.csv" --hit 0.8 --sample 0.01
measure "iorig no-lru" "$RECORDS" "$WORK/t.iotrace" --no-lru
measure "iorig exact" "$RECORDS" "$WORK/t.iotrace" --hit 0.8
measure "iorig 1%" "$RECORDS" "$WORK/t.iotrace" --hit 0.8 --sample 0.01
log "analysis of the last run:"
sed 's/^/  /' "$WORK/out.txt" >&2
rm -f "$WORK/t.csv" "$WORK/t.csv.zst" "$WORK/t.iotrace"
if [[ -n $BIG ]]; then
    log "generating $BIG records in iorig's format"
    generate "$BIG" "$BLOCKS" iorig >"$WORK/big.iotrace"
    measure "iorig 1% big" "$BIG" "$WORK/big.iotrace" --hit 0.8 --sample 0.01
    rm -f "$WORK/big.iotrace"
fi

# Replay: evenly spaced 4k I/Os, every third a write, over 1 GiB.
python3 - "$REPLAY_IOS" "$REPLAY_IOPS" >"$WORK/r.csv" <<'EOF'
import sys
n, iops = int(sys.argv[1]), float(sys.argv[2])
ts0 = 128166372003061629
step = 1e7 / iops  # 100 ns units
out = []
for i in range(n):
    op = "Write" if i % 3 == 2 else "Read"
    out.append(f"{ts0 + round(i * step)},bench,0,{op},{(i * 7340032) % (1 << 30)},4096,40\n")
sys.stdout.write("".join(out))
EOF
replay() { # label args...
    local label=$1
    shift
    if ! "$IORIG" trace replay "$WORK/r.csv" --no-db --quiet --json "$WORK/r.json" "$@" >/dev/null 2>"$WORK/r.err"; then
        log "$label: replay failed: $(tail -1 "$WORK/r.err")"
        return
    fi
    python3 - "$label" "$WORK/r.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[2]))["replay"]
t = r["timing_error_ns"]
us = lambda ns: f"{ns / 1000:.1f}"
print(f"replay {sys.argv[1]:<22} {r['issued']:>8} I/Os  timing error µs: p50 {us(t['p50'])}  p99 {us(t['p99'])}  p99.9 {us(t['p99_9'])}  max {us(t['max'])}  (over 20 µs: {r['late_over_20us']})")
EOF
}
log "replaying $REPLAY_IOS I/Os at $REPLAY_IOPS IOPS"
replay "null" --target null0 --engine null
if [[ $(id -u) = 0 && -e /sys/block/zram0/disksize && $(cat /sys/block/zram0/disksize) = 0 ]]; then
    echo 2G >/sys/block/zram0/disksize
    replay "zram --async-submit" --target /dev/zram0 --async-submit
    replay "zram" --target /dev/zram0
    echo 1 >/sys/block/zram0/reset
else
    log "zram replay not run: needs root and an unused /dev/zram0"
fi
