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
#   randread    after a journaled write pass: every read checked
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
    # Workload IOPS: the I/Os the workload asked for (iorig's own figures).
    # Device IOPS adds validation's pre-reads and read-backs, which iorig
    # counts apart in the validation summary.
    python3 - "$WORK/r.json" "$variant" "$round" >>"$RESULTS" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
v = s.get("validation") or {}
extra = v.get("pre_reads", 0) + v.get("after_reads", 0)
work = s["total"]["ops"] / s["duration_s"]
device = (s["total"]["ops"] + extra) / s["duration_s"]
print(f'{sys.argv[2]}\t{sys.argv[3]}\t{work:.0f}\t{device:.0f}\t{v.get("units_checked", "")}\t{v.get("errors", "")}')
PY
}

# A journaled sequential write pass gives every block a known key; the
# randread+verify runs continue that journal, so each of their reads is checked.
# They run first: any later write without this journal would (rightly) show up
# as a lost write to it.
log "write pass over zram0 (journaled)"
"$IORIG" run --target /dev/zram0 --allow-destroy --engine io_uring --direct --bs 4k --qd 32 \
    --read 0 --random 0 --time 15s --no-db --quiet --journal "$WORK/pass.journal" >/dev/null 2>"$WORK/err" || {
    log "write pass failed: $(head -3 "$WORK/err")"
    exit 1
}
for r in $(seq 1 "$ROUNDS"); do
    log "randread round $r/$ROUNDS"
    if ((r % 2)); then
        iops "randread" "$r" --read 100
        iops "randread+verify" "$r" --read 100 --journal "$WORK/pass.journal"
    else
        iops "randread+verify" "$r" --read 100 --journal "$WORK/pass.journal"
        iops "randread" "$r" --read 100
    fi
done

for r in $(seq 1 "$ROUNDS"); do
    log "round $r/$ROUNDS"
    # Each round: plain first in odd rounds, validated first in even ones.
    for pair in "randwrite|--read 0" "randrw|--read 70"; do
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
for name, _, work, dev, checked, _ in rows:
    by.setdefault(name, []).append((float(work), float(dev), int(checked or 0)))
med = {k: [statistics.median(x[i] for x in v) for i in range(3)] for k, v in by.items()}
print(f"verify-cost: /dev/zram0, io_uring, 4k, qd 32, 1 worker, {sys.argv[2]} per run, median of {sys.argv[3]} round(s)")
print("workload IOPS = the I/Os the workload asked for; device IOPS adds validation's pre-reads and read-backs")
print(f"{'workload':<24}{'workload IOPS':>14}{'vs plain':>10}{'device IOPS':>13}{'blocks checked':>16}")
for name in ["randwrite", "randwrite+verify", "randwrite+verify-after", "randwrite+journal",
             "randrw", "randrw+verify", "randread", "randread+verify"]:
    if name not in med:
        continue
    work, dev, checked = med[name]
    base = med[name.split("+")[0]][0]
    print(f"{name:<24}{work:>14.0f}{work / base:>10.2f}{dev:>13.0f}{checked:>16.0f}")
errors = [r for r in rows if r[5] not in ("", "0")]
print("validation errors:", "none" if not errors else errors)
PY
