#!/usr/bin/env bash
# pacing-lag.sh — how late a paced iorig issues its I/Os: the issue lag
# (actual submission − scheduled time) of every I/O, from the per-I/O log,
# on the null engine (no device: the lag is the tool's own), at several
# rates and worker counts.
#
#   bench/pacing-lag.sh
#   RATES="2000 20000 100000" THREADS="1 2" TIME=3s bench/pacing-lag.sh
#
# Environment:
#   RATES     total IOPS to pace at (default "2000 20000 100000")
#   THREADS   worker counts (default "1 nproc")
#   TIME      measured time of every run (default 3s)
#   IORIG_B   a second iorig binary (say, an older commit's release build)
#             run beside this tree's on the same cases, for its lag too
#   CARGO_TARGET_DIR  where cargo builds iorig (default <repo>/target)
#
# Under a rate iorig counts latency from the scheduled time (no coordinated
# omission), so any lag here would be reported as the storage's latency.
# Target (issue 37): lag p99 <= 5 us at up to 100 k IOPS per worker on an
# otherwise idle core. The script writes only to a temp dir it removes.
set -euo pipefail

RATES=${RATES:-"2000 20000 100000"}
THREADS=${THREADS:-"1 $(nproc)"}
TIME=${TIME:-3s}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
die() { echo "pacing-lag: $*" >&2; exit 1; }
for v in $RATES $THREADS; do
    [[ $v =~ ^[1-9][0-9]*$ ]] || die "RATES and THREADS take positive whole numbers (got '$v')"
done
[[ $TIME =~ ^[0-9]+(ms|s|m)?$ ]] || die "TIME must look like 3s, 500ms or 1m (got '$TIME')"
command -v python3 >/dev/null || die "python3 is needed to read the per-I/O log"

TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
echo "pacing-lag: building iorig (release)" >&2
(cd "$REPO" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet) || die "build failed"
IORIG=$TARGET_DIR/release/iorig
if [[ -n ${IORIG_B:-} ]]; then
    [[ -x $IORIG_B ]] || die "IORIG_B=$IORIG_B is not an executable"
fi

WORK=$(mktemp -d)
trap 'rm -rf -- "$WORK"' EXIT

lag() { # BIN RATE THREADS -> one line of quantiles
    "$1" run --engine null --rate "$2" --threads "$3" --time "$TIME" --no-db --quiet \
        --lat-log "$WORK/l.csv" >/dev/null 2>"$WORK/err" || { cat "$WORK/err" >&2; die "run failed"; }
    python3 - "$WORK/l.csv" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["warmup"] == "0"]
lag = sorted(int(r["submit_ns"]) - int(r["start_ns"]) for r in rows)
q = lambda p: lag[min(len(lag) - 1, int(p * len(lag)))] / 1e3
print(f"{len(lag):>8} {q(.5):>9.1f} {q(.99):>9.1f} {lag[-1] / 1e3:>9.1f}")
PY
}

echo "iorig $("$IORIG" --version | awk '{ print $2 }'); $(nproc) CPUs; $TIME per run; issue lag in us"
printf '%-8s %8s %8s %8s %9s %9s %9s\n' binary rate workers ios p50 p99 max
for t in $THREADS; do
    for r in $RATES; do
        for b in a b; do
            bin=$IORIG
            if [[ $b == b ]]; then
                [[ -n ${IORIG_B:-} ]] || continue
                bin=$IORIG_B
            fi
            printf '%-8s %8s %8s ' "$b" "$r" "$t"
            lag "$bin" "$r" "$t"
        done
    done
done
