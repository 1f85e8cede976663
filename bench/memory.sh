#!/usr/bin/env bash
# memory.sh — iorig's peak resident memory against workers × queue depth,
# and the ratio to the I/O buffers it must hold (workers × qd × bs).
#
#   bench/memory.sh                      # default grid, 4 s per run
#   TIME=10s GRID="64x16 256x64" bench/memory.sh
#
# Each run is a 4k random read on a scratch file in a temp directory
# (io_uring, O_DIRECT), so latencies — and the histograms that hold them —
# are real; FILE_ONLY=0 adds the same grid on the null engine. The target
# for 256 × 64: peak RSS at most the buffers + 32 MiB. Writes only to its own
# temp directory.
set -euo pipefail

TIME=${TIME:-4s}
GRID=${GRID:-"1x1 16x16 64x16 128x32 256x64"}
FILE_ONLY=${FILE_ONLY:-1}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
(cd "$REPO" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet)
IORIG=$TARGET_DIR/release/iorig
WORK=$(mktemp -d "${TMPDIR_FOR_BENCH:-/var/tmp}/iorig-memory.XXXXXX")
trap 'rm -rf -- "$WORK"' EXIT
trap 'exit 130' INT

# The scratch file is made once; every run reads it.
"$IORIG" run --target "$WORK/scratch.dat" --size 1g --time 1s --no-db --quiet >/dev/null

# peak ENGINE THREADS QD — prints one row.
peak() {
    local engine=$1 threads=$2 qd=$3
    local args=(run --threads "$threads" --qd "$qd" --time "$TIME" --no-db --quiet)
    if [[ $engine == null ]]; then
        args+=(--engine null)
    else
        args+=(--target "$WORK/scratch.dat")
    fi
    "$IORIG" "${args[@]}" >"$WORK/out.txt" 2>&1 &
    local pid=$! hwm=0 v
    while kill -0 "$pid" 2>/dev/null; do
        v=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        [[ -n ${v:-} ]] && hwm=$v
        sleep 0.2
    done
    wait "$pid" || { echo "memory: run failed: $(cat "$WORK/out.txt")" >&2; return 1; }
    local buffers_kib=$((threads * qd * 4))
    awk -v e="$engine" -v t="$threads" -v q="$qd" -v h="$hwm" -v b="$buffers_kib" 'BEGIN {
        printf "%-8s %8d %5d %12.1f %12.1f %12.1f %8.2f\n", e, t, q, b/1024, h/1024, (h-b)/1024, h/b }'
}

printf "%-8s %8s %5s %12s %12s %12s %8s\n" engine workers qd "buffers MiB" "peak RSS MiB" "RSS-buf MiB" ratio
engines=(file)
[[ $FILE_ONLY == 0 ]] && engines+=(null)
for engine in "${engines[@]}"; do
    for cell in $GRID; do
        peak "$engine" "${cell%x*}" "${cell#*x}"
    done
done
