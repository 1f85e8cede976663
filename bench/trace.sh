#!/usr/bin/env bash
# trace.sh — how fast `iorig trace analyse` reads and analyses a block trace,
# and its peak memory: a generated MSR-format trace of RECORDS records (a hot
# tenth of the blocks taking 90 % of the I/Os, 4k–64k, 70 % reads), plain,
# zstd-compressed, and plain with the LRU curves sampled at 1 %; prints
# records/s and peak RSS of each.
#
#   bench/trace.sh                   # 10 M records
#   RECORDS=1000000 bench/trace.sh
#
# Environment:
#   RECORDS   records to generate (default 10000000)
#   BLOCKS    distinct 4k blocks of the address space (default 2500000, 10 GiB)
#   IORIG     the iorig binary (default: built with cargo --release)
#
# Writes only to a temp dir, which it removes. Exit 0 when it ran, 2 when a
# prerequisite is missing.
set -euo pipefail

RECORDS=${RECORDS:-10000000}
BLOCKS=${BLOCKS:-2500000}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)

log() { echo "trace: $*" >&2; }
need() { log "$*"; exit 2; }

[[ $RECORDS =~ ^[1-9][0-9]*$ ]] || need "RECORDS must be a positive integer (got '$RECORDS')"
[[ $BLOCKS =~ ^[1-9][0-9]*$ ]] || need "BLOCKS must be a positive integer (got '$BLOCKS')"
command -v python3 >/dev/null || need "python3 is not installed"
[[ -x /usr/bin/time ]] || need "/usr/bin/time is not installed (apt-get install time)"
command -v zstd >/dev/null || need "zstd is not installed (apt-get install zstd)"

if [[ -z ${IORIG:-} ]]; then
    (cd "$REPO" && cargo build --release -q -p iorig) || need "cargo build failed"
    IORIG="${CARGO_TARGET_DIR:-$REPO/target}/release/iorig"
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

log "generating $RECORDS records over $BLOCKS blocks"
python3 - "$RECORDS" "$BLOCKS" >"$WORK/t.csv" <<'EOF'
import random, sys
n, blocks = int(sys.argv[1]), int(sys.argv[2])
rnd = random.Random(19)
hot = max(1, blocks // 10)
ts = 128166372003061629
sizes = [4096] * 6 + [8192] * 2 + [16384, 65536]
out = sys.stdout
buf = []
for i in range(n):
    b = rnd.randrange(hot) if rnd.random() < 0.9 else rnd.randrange(hot, blocks)
    op = "Read" if rnd.random() < 0.7 else "Write"
    ts += rnd.randrange(1, 200)
    buf.append(f"{ts},bench,0,{op},{b * 4096},{rnd.choice(sizes)},{rnd.randrange(50, 5000)}\n")
    if len(buf) == 100000:
        out.write("".join(buf))
        buf.clear()
out.write("".join(buf))
EOF
zstd -q -3 "$WORK/t.csv" -o "$WORK/t.csv.zst"
log "$(du -h "$WORK/t.csv" | cut -f1) plain, $(du -h "$WORK/t.csv.zst" | cut -f1) zstd"

measure() { # label file [args...]
    local label=$1 file=$2
    shift 2
    /usr/bin/time -f '%e %M' -o "$WORK/time" "$IORIG" trace analyse "$file" --hit 0.8 "$@" >"$WORK/out.txt"
    read -r secs rss_kb <"$WORK/time"
    python3 - "$label" "$RECORDS" "$secs" "$rss_kb" <<'EOF'
import sys
label, n, secs, rss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
print(f"{label:<10} {n:>11} records  {secs:>7.2f} s  {n / secs / 1e6:>6.2f} M records/s  peak RSS {rss / 1024:>7.0f} MiB")
EOF
}
measure "msr csv" "$WORK/t.csv"
measure "msr zstd" "$WORK/t.csv.zst"
measure "msr 1%" "$WORK/t.csv" --sample 0.01
log "analysis of the last run:"
sed 's/^/  /' "$WORK/out.txt" >&2
