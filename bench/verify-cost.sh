#!/usr/bin/env bash
# verify-cost.sh — what data validation costs: IOPS of the same workloads on
# /dev/zram0 without and with --verify (and with --verify-after, and with a
# --journal), alternating over rounds; prints the medians and the ratios.
#
#   bench/verify-cost.sh                # 3 rounds of 5 s per variant
#   ROUNDS=5 TIME=10s bench/verify-cost.sh
#
# Workloads (io_uring, O_DIRECT, 4k, 1 worker, qd 32, 1 GiB zram0):
#   randwrite   100 % random writes: --verify adds header stamping and, once a
#               block holds known data, a read and check before each write
#   randrw      70/30 random mix: reads of written blocks are checked too
#   randread    after a write pass: every read checked
# plus randwrite with --verify-after (every write read back) and with
# --journal (two synced journal records per write batch).
#
# Needs root and the zram module; it resets /dev/zram0, sizes it to 1 GiB, and
# resets it again on exit. It writes to no other device. Exit 2 when a
# prerequisite is missing.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
TIME=${TIME:-5s}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
# shellcheck source=zram-lib.sh
source "$SCRIPT_DIR/zram-lib.sh"
log() { echo "verify-cost: $*" >&2; }

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { log "ROUNDS must be a positive integer"; exit 1; }
command -v python3 >/dev/null || { log "python3 is needed"; exit 2; }

TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
(cd "$REPO" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet)
IORIG=$TARGET_DIR/release/iorig

ZRAM_SET_UP=0
WORK=$(mktemp -d /var/tmp/verify-cost.XXXXXX)
cleanup() {
    local rc=$?
    if [[ $ZRAM_SET_UP -eq 1 ]]; then
        echo 1 >/sys/block/zram0/reset 2>/dev/null || log "warning: could not reset zram0"
    fi
    rm -rf -- "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT

if ! zram_setup; then
    log "skipped: $ZRAM_WHY"
    exit 2
fi
log "zram0: 1 GiB ready"

RESULTS=$WORK/results.tsv
: >"$RESULTS"
# iops VARIANT ROUND ARGS... — one run, its total IOPS appended to RESULTS.
iops() {
    local variant=$1 round=$2
    shift 2
    "$IORIG" run --target /dev/zram0 --allow-destroy --engine io_uring --direct \
        --bs 4k --qd 32 --threads 1 --time "$TIME" --no-db --quiet --json "$WORK/r.json" "$@" \
        >/dev/null 2>"$WORK/err" || {
        local rc=$?
        # Exit 3 would mean validation errors: a real finding, never expected here.
        log "$variant: iorig exited $rc: $(head -3 "$WORK/err")"
        exit 1
    }
    python3 - "$WORK/r.json" "$variant" "$round" >>"$RESULTS" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
v = d["summary"].get("validation") or {}
print(f'{sys.argv[2]}\t{sys.argv[3]}\t{d["summary"]["total"]["iops"]:.0f}\t{v.get("errors", "")}')
PY
}

for r in $(seq 1 "$ROUNDS"); do
    log "round $r/$ROUNDS"
    # Each round: plain first in odd rounds, validated first in even ones.
    for pair in "randwrite|--read 0" "randrw|--read 70" "randread|--read 100"; do
        name=${pair%%|*}
        args=${pair#*|}
        if ((r % 2)); then
            iops "$name" "$r" $args
            iops "$name+verify" "$r" $args --verify
        else
            iops "$name+verify" "$r" $args --verify
            iops "$name" "$r" $args
        fi
    done
    iops "randwrite+verify-after" "$r" --read 0 --verify-after
    rm -f "$WORK/j"
    iops "randwrite+journal" "$r" --read 0 --journal "$WORK/j"
done

python3 - "$RESULTS" "$TIME" "$ROUNDS" <<'PY'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
by = {}
for name, _, iops, _ in rows:
    by.setdefault(name, []).append(float(iops))
med = {k: statistics.median(v) for k, v in by.items()}
print(f"verify-cost: /dev/zram0, io_uring, 4k, qd 32, 1 worker, {sys.argv[2]} per run, median of {sys.argv[3]} round(s)")
print(f"{'workload':<24}{'IOPS':>12}{'vs plain':>10}")
for name in ["randwrite", "randwrite+verify", "randwrite+verify-after", "randwrite+journal",
             "randrw", "randrw+verify", "randread", "randread+verify"]:
    if name not in med:
        continue
    base = med[name.split("+")[0]]
    print(f"{name:<24}{med[name]:>12.0f}{med[name] / base:>10.2f}")
errors = [r for r in rows if r[3] not in ("", "0")]
print("validation errors:", "none" if not errors else errors)
PY
