#!/usr/bin/env bash
# vs-fio-jobs.sh — run the same fio job files with fio and with iorig
# (`iorig run JOB.fio --output-format fio-json`), alternating over rounds,
# and print each job's median IOPS from both and their ratio. Both tools
# write fio's JSON, so one parser reads both.
#
#   bench/vs-fio-jobs.sh                # 3 rounds of 5 s per job file and tool
#   ROUNDS=5 TIME=10 bench/vs-fio-jobs.sh
#
# Environment:
#   ROUNDS   rounds (default 3); odd rounds run iorig first, even ones fio
#   TIME     runtime of every job in seconds (default 5)
#   TARGET   zram (default when root: /dev/zram0, set up and reset here, 1 GiB
#            of random data) or file (a 1 GiB file in a temp dir on the root
#            file system)
#   IORIG    the iorig binary (default: built with cargo --release)
#
# The job files (written to a temp dir): 4k random reads at qd 32, 4k random
# writes at qd 32, a 70/30 8k mix at qd 16, 128k sequential reads at qd 8,
# and a 4k reader and a 64k writer running at once (two jobs, one group).
# The ratio is iorig/fio; about 1.0 means the same work at the same speed.
#
# Writes to no block device but /dev/zram0, which it sizes and resets; never
# touches /dev/vda. Exit 0 when it ran, 2 when a prerequisite is missing.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
TIME=${TIME:-5}
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
# shellcheck source=zram-lib.sh
source "$SCRIPT_DIR/zram-lib.sh"

log() { echo "vs-fio-jobs: $*" >&2; }
need() { log "$*"; exit 2; }

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || need "ROUNDS must be a positive integer (got '$ROUNDS')"
[[ $TIME =~ ^[1-9][0-9]*$ ]] || need "TIME must be whole seconds (got '$TIME')"
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

TARGET=${TARGET:-$(is_root && echo zram || echo file)}
case $TARGET in
zram)
    zram_setup || need "zram: $ZRAM_WHY (use TARGET=file)"
    FILENAME=/dev/zram0
    ;;
file)
    FILENAME=$WORK/data
    # A plain file both tools may write: fio made it, so iorig needs
    # --allow-destroy for it, as for the zram device.
    dd if=/dev/urandom of="$FILENAME" bs=1M count=1024 status=none
    ;;
*) need "TARGET must be zram or file (got '$TARGET')" ;;
esac
log "target $FILENAME, $ROUNDS rounds of ${TIME}s, iorig $IORIG"

global="[global]
filename=$FILENAME
size=1g
direct=1
ioengine=libaio
runtime=$TIME
time_based
norandommap
"
mkdir -p "$WORK/jobs"
printf '%s\n[randread-4k-qd32]\nrw=randread\nbs=4k\niodepth=32\n' "$global" >"$WORK/jobs/1-randread.fio"
printf '%s\n[randwrite-4k-qd32]\nrw=randwrite\nbs=4k\niodepth=32\n' "$global" >"$WORK/jobs/2-randwrite.fio"
printf '%s\n[randrw-70-8k-qd16]\nrw=randrw\nrwmixread=70\nbs=8k\niodepth=16\n' "$global" >"$WORK/jobs/3-randrw.fio"
printf '%s\n[seqread-128k-qd8]\nrw=read\nbs=128k\niodepth=8\n' "$global" >"$WORK/jobs/4-seqread.fio"
printf '%s\n[reader-4k]\nrw=randread\nbs=4k\niodepth=16\n[writer-64k]\nrw=randwrite\nbs=64k\niodepth=4\n' "$global" >"$WORK/jobs/5-two-jobs.fio"

results=$WORK/results.tsv
: >"$results"
run_fio() { fio --output-format=json "$1" 2>/dev/null; }
run_iorig() { "$IORIG" run "$1" --output-format fio-json --no-db -q --allow-destroy 2>/dev/null; }
record() { # tool round json
    python3 - "$1" "$2" "$3" >>"$results" <<'EOF'
import json, sys
tool, rnd, path = sys.argv[1:4]
d = json.load(open(path))
for j in d["jobs"]:
    iops = j["read"]["iops"] + j["write"]["iops"]
    print(f"{j['jobname']}\t{tool}\t{rnd}\t{iops}")
EOF
}
for ((r = 1; r <= ROUNDS; r++)); do
    for job in "$WORK"/jobs/*.fio; do
        order="iorig fio"
        ((r % 2 == 0)) && order="fio iorig"
        for tool in $order; do
            out=$WORK/out.json
            "run_$tool" "$job" >"$out" || need "$tool failed on $(basename "$job")"
            record "$tool" "$r" "$out"
        done
    done
    log "round $r done"
done

python3 - "$results" <<'EOF'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
jobs = []
for name, *_ in rows:
    if name not in jobs:
        jobs.append(name)
print(f"{'job':<22} {'iorig IOPS':>12} {'fio IOPS':>12} {'iorig/fio':>10}")
for name in jobs:
    med = lambda tool: statistics.median(float(v) for n, t, _, v in rows if n == name and t == tool)
    a, b = med("iorig"), med("fio")
    print(f"{name:<22} {a:>12.0f} {b:>12.0f} {a / b if b else float('nan'):>9.2f}x")
EOF
