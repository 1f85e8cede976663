#!/usr/bin/env bash
# vs-fio-latency.sh — the most load that keeps a latency target, found by
# fio and by iorig from the same job file (fio's latency_target).
#
#   bench/vs-fio-latency.sh                 # target 200 µs at p99, 2 s windows
#   TARGET_US=100 PCT=99.9 WINDOW=3 bench/vs-fio-latency.sh
#
# fio searches the queue depth (1 up to iodepth) for the deepest one whose
# p-th percentile stays under the target, then exits; its JSON names the
# depth (latency_depth) but its IOPS average every depth it tried. So fio is
# run a second time at that depth, fixed, for one window: that IOPS and p99
# are fio's answer. iorig runs the same job file as a curve (max, then 10,
# 50, 70, 80, 90, 100 % of it, then five bisection rounds between the
# highest rate that held the target and the lowest that did not, each for
# one window) and answers with the best IOPS whose p-th percentile stays
# under the target (its "best with pN" line), latency counted from each
# I/O's scheduled start. Why the answers differ: docs/fio.md. Printed side by
# side with iorig/fio. On a CPU-bound target (zram on few CPUs) both answers
# mostly measure the load generators.
#
# Environment:
#   TARGET_US  the latency target in µs (default 200)
#   PCT        latency_percentile: 50, 90, 99, 99.9, 99.99 or 100 (default 99)
#   WINDOW     latency_window in seconds (default 2)
#   QD         iodepth, fio's upper bound and iorig's depth (default 32)
#   ENGINE     fio's ioengine in the job file (default libaio). iorig runs a
#              libaio job on io_uring; a device that cannot take I/O without
#              blocking (zram has no nowait support) makes io_uring hand every
#              I/O to a kernel worker thread, which libaio's inline submission
#              does not: ENGINE=io_uring compares the two tools on the same
#              engine.
#   IORIG      the iorig binary (default: built with cargo --release)
#   KEEP_TEXT  copy iorig's text output (every step, its issue lag) here
#
# Writes to no block device but /dev/zram0 (root; set up with 1 GiB of
# random data and reset here); without root a 1 GiB file in a temp dir.
# Never touches /dev/vda. Exit 0 when it ran, 2 when a prerequisite is
# missing.
set -euo pipefail

TARGET_US=${TARGET_US:-200}
PCT=${PCT:-99}
WINDOW=${WINDOW:-2}
QD=${QD:-32}
ENGINE=${ENGINE:-libaio}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
# shellcheck source=zram-lib.sh
source "$SCRIPT_DIR/zram-lib.sh"

log() { echo "vs-fio-latency: $*" >&2; }
need() { log "$*"; exit 2; }

[[ $TARGET_US =~ ^[1-9][0-9]*$ ]] || need "TARGET_US must be whole µs (got '$TARGET_US')"
[[ $WINDOW =~ ^[1-9][0-9]*$ ]] || need "WINDOW must be whole seconds (got '$WINDOW')"
[[ $QD =~ ^[1-9][0-9]*$ ]] || need "QD must be a positive integer (got '$QD')"
command -v fio >/dev/null || need "fio is not installed (apt-get install fio)"
command -v python3 >/dev/null || need "python3 is not installed"

if [[ -z ${IORIG:-} ]]; then
    (cd "$REPO" && cargo build --release -q -p iorig) || need "cargo build failed"
    IORIG="${CARGO_TARGET_DIR:-$REPO/target}/release/iorig"
fi

WORK=$(mktemp -d)
ZRAM_SET_UP=0
cleanup() {
    rm -rf "$WORK"
    if [[ $ZRAM_SET_UP = 1 ]]; then echo 1 >/sys/block/zram0/reset || true; fi
}
trap cleanup EXIT

if is_root && zram_setup; then
    FILENAME=/dev/zram0
else
    log "no zram (${ZRAM_WHY:-not root}); using a file"
    FILENAME=$WORK/data
    dd if=/dev/urandom of="$FILENAME" bs=1M count=1024 status=none
fi
log "target $FILENAME, ${TARGET_US} µs at p$PCT, windows of ${WINDOW}s, qd up to $QD, ioengine=$ENGINE"

global="[global]
filename=$FILENAME
size=1g
direct=1
ioengine=$ENGINE
rw=randread
bs=4k
norandommap
iodepth=$QD
"
printf '%s\n[lat]\nlatency_target=%s\nlatency_window=%ss\nlatency_percentile=%s\nruntime=600\n' \
    "$global" "$TARGET_US" "$WINDOW" "$PCT" >"$WORK/lat.fio"

fio --output-format=json "$WORK/lat.fio" >"$WORK/fio-search.json" 2>/dev/null || need "fio failed"
depth=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["latency_depth"])' "$WORK/fio-search.json")
# lat_percentiles: fio's percentiles from issue to completion, as iorig's
# (fio's default clat leaves out the submission, all of an I/O that
# completes inline).
printf '%s\n[at-depth]\niodepth=%s\nruntime=%s\ntime_based\nlat_percentiles=1\n' "$global" "$depth" "$WINDOW" >"$WORK/depth.fio"
fio --output-format=json "$WORK/depth.fio" >"$WORK/fio-depth.json" 2>/dev/null || need "fio failed"

"$IORIG" run "$WORK/lat.fio" --output-format fio-json --no-db --allow-destroy \
    >"$WORK/iorig.json" 2>"$WORK/iorig.txt" || need "iorig failed: $(tail -3 "$WORK/iorig.txt")"

if [[ -n ${KEEP_TEXT:-} ]]; then cp "$WORK/iorig.txt" "$KEEP_TEXT"; fi

python3 - "$WORK/fio-depth.json" "$WORK/iorig.txt" "$depth" "$PCT" "$TARGET_US" <<'EOF'
import json, re, sys
fio_path, iorig_txt, depth, pct, target = sys.argv[1:6]
r = json.load(open(fio_path))["jobs"][0]["read"]
key = f"{float(pct):.6f}"
lat = r["lat_ns"]
p = lat["max"] if float(pct) >= 100 else lat.get("percentile", {}).get(key)
which = "max latency" if float(pct) >= 100 else f"p{pct}"
text = open(iorig_txt).read()
m = re.search(rf"best with {re.escape(which)} <= [0-9.]+ ms: (\S+)( \(step (\d+)\))?", text)
mx = re.search(r"curve 1: max (\d+) IOPS", text)
best = m.group(1) if m else "?"
print(f"target {target} µs at {which}")
print(f"fio   : depth {depth} of the search, then fixed at it: {r['iops']:.0f} IOPS, {which} {p / 1000 if p else float('nan'):.0f} µs")
print(f"iorig : max {mx.group(1) if mx else '?'} IOPS; best under the target: {best} IOPS" + (f" (step {m.group(3)})" if m and m.group(3) else ""))
if best not in ("?", "none") and r["iops"] > 0:
    print(f"iorig/fio: {float(best) / r['iops']:.2f}")
EOF
