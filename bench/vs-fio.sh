#!/usr/bin/env bash
# vs-fio.sh — run the same workloads in iorig and fio, alternating over several
# rounds, and print the median iorig/fio ratios next to the raw medians.
#
#   bench/vs-fio.sh                 # 5 rounds of 5 s per tool and case
#   ROUNDS=3 TIME=3s bench/vs-fio.sh
#
# Environment:
#   ROUNDS            rounds per case (default 5); each round runs both tools,
#                     in alternating order (iorig first in odd rounds, fio first
#                     in even ones) so slow drift of the machine cancels out
#   TIME              measured time of every single run (default 5s)
#   CARGO_TARGET_DIR  where cargo builds iorig (default <repo>/target)
#   CASES             space-separated subset of: null zram file tmpfs (default: all)
#   THREADS           worker counts the tmpfs case runs at, e.g. "1 4 16"
#                     (default: 1 and nproc): iorig --threads N against fio
#                     --numjobs=N --group_reporting on one shared file
#   KEEP_RESULTS      copy the per-round measurements (TSV: case, metric, round,
#                     tool, value) to this file before the temp dir is removed
#   IORIG_B           a second iorig binary (say, an older commit's release
#                     build) run in every round beside this tree's, the three
#                     runs of a round in each of the six orders in turn; the
#                     report then prints both binaries' median ratios to fio
#                     and the per-round quotient b/a with its median, so a
#                     change's cost is read off the same rounds
#
# Cases:
#   null  the null engine, 4k randread, 1 worker, qd 1 and 32 — per-I/O overhead
#         of the tools themselves.                       target: IOPS ratio >= 1.0
#   zram  /dev/zram0 (root only; set up here, 1 GiB of random data), O_DIRECT 4k
#         randread, io_uring, qd 32, 1 worker.  target: IOPS ratio >= 1.0 and
#         iorig's user CPU % <= fio's (each process's own rusage, /usr/bin/time)
#   file  a 1 GiB plain file on the root filesystem, O_DIRECT 4k randread,
#         io_uring, qd 1 and 32.       target: IOPS and p50 latency within +-5 %
#   tmpfs a 1 GiB file on /dev/shm (page-cache speed, no device), buffered 4k
#         randread, psync qd 1 and io_uring qd 32, at each of THREADS workers
#         on the one file: how the tools scale on many cores.
#                                                        target: IOPS ratio >= 1.0
#
# The script writes to no block device except /dev/zram0, which it resets and
# sizes itself (and resets again on exit). It never touches /dev/vda or any
# other disk directly; the file case writes one regular file in a temp dir.
#
# Exit status: 0 when it ran (whatever the verdicts), 2 when a prerequisite is
# missing and cannot be installed, 1 on errors.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
TIME=${TIME:-5s}
CASES=${CASES:-"null zram file tmpfs"}
THREADS=${THREADS:-"1 $(nproc)"}

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
# is_root, zram_in_use, zram_setup: shared with the other bench scripts.
# shellcheck source=zram-lib.sh
source "$SCRIPT_DIR/zram-lib.sh"

die() { echo "vs-fio: $*" >&2; exit 1; }
need() { echo "vs-fio: $*" >&2; exit 2; }
log() { echo "vs-fio: $*" >&2; }

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer (got '$ROUNDS')"
[[ $TIME =~ ^[0-9]+(ms|s|m)?$ ]] || die "TIME must look like 5s, 500ms or 1m (got '$TIME')"
for t in $THREADS; do
    [[ $t =~ ^[1-9][0-9]*$ ]] || die "THREADS must list positive worker counts, e.g. \"1 4 16\" (got '$THREADS')"
done

KEEP_RESULTS=${KEEP_RESULTS:-}
[[ -z $KEEP_RESULTS || $KEEP_RESULTS = /* ]] || KEEP_RESULTS=$PWD/$KEEP_RESULTS


# ---------------------------------------------------------------- prerequisites
APT_UPDATED=0
apt_install() { # package...
    if ! is_root; then
        need "missing: $*; install it (e.g. 'sudo apt-get install -y $*') and run again"
    fi
    command -v apt-get >/dev/null || need "missing: $*; no apt-get here, install it by other means"
    log "installing $* with apt-get"
    if [[ $APT_UPDATED -eq 0 ]]; then
        DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null || true
        APT_UPDATED=1
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null \
        || need "apt-get install -y $* failed; install it and run again"
}

command -v fio >/dev/null || apt_install fio
command -v fio >/dev/null || need "fio is still not on PATH"
[[ -x /usr/bin/time ]] || apt_install time
command -v python3 >/dev/null || apt_install python3
command -v cargo >/dev/null || need "cargo is not on PATH; install a Rust toolchain (rustup)"

# ---------------------------------------------------------------- build iorig
TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
[[ $TARGET_DIR = /* ]] || TARGET_DIR=$PWD/$TARGET_DIR
log "building iorig (release, target dir $TARGET_DIR)"
(cd "$REPO" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet) \
    || die "cargo build --release failed"
IORIG=$TARGET_DIR/release/iorig
[[ -x $IORIG ]] || die "no binary at $IORIG after the build"
if [[ -n ${IORIG_B:-} ]]; then
    [[ -x $IORIG_B ]] || die "IORIG_B=$IORIG_B is not an executable"
    IORIG_B=$(cd "$(dirname "$IORIG_B")" && pwd)/$(basename "$IORIG_B")
fi

# ---------------------------------------------------------------- temp dir + cleanup
# Scratch space on a real filesystem (the file case must not land on tmpfs):
# under the cargo target dir, else /var/tmp.
fs_type() { stat -f -c %T "$1" 2>/dev/null || echo unknown; }
WORK=""
for base in "$TARGET_DIR" /var/tmp; do
    if [[ -d $base && -w $base ]] && [[ $(fs_type "$base") != tmpfs && $(fs_type "$base") != ramfs ]]; then
        WORK=$(mktemp -d "$base/vs-fio.XXXXXX") && break
    fi
done
[[ -n $WORK ]] || die "no writable non-tmpfs directory for scratch files (tried $TARGET_DIR, /var/tmp)"
RESULTS=$WORK/results.tsv
: >"$RESULTS"
ZRAM_SET_UP=0

cleanup() {
    local rc=$?
    if [[ -n ${KEEP_RESULTS:-} && -s ${RESULTS:-} ]]; then
        cp -- "$RESULTS" "$KEEP_RESULTS" || log "warning: could not copy the results to $KEEP_RESULTS"
    fi
    if [[ $ZRAM_SET_UP -eq 1 ]]; then
        # Frees the memory; fails only if someone opened it meanwhile.
        echo 1 >/sys/block/zram0/reset 2>/dev/null || log "warning: could not reset zram0"
    fi
    [[ -n ${TFILE:-} ]] && rm -f -- "$TFILE"
    [[ -n $WORK && -d $WORK ]] && rm -rf -- "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
cd "$WORK"

# ---------------------------------------------------------------- helpers
# Results: one line per measurement: case<TAB>metric<TAB>round<TAB>tool<TAB>value
record() { printf '%s\t%s\t%s\t%s\t%s\n' "$@" >>"$RESULTS"; }
SKIPPED=()

# json_get FILE EXPR — EXPR is Python over `d` (the document).
json_get() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
# fio may print notes before its JSON document.
d = json.loads(text[text.index('{'):])
print(eval(sys.argv[2], {"d": d}))
EOF
}

# run_timed OUT_TIMEFILE cmd... — the command's own rusage: "user sys elapsed".
run_timed() {
    local tf=$1
    shift
    /usr/bin/time -o "$tf" -f "%U %S %e" "$@" >/dev/null 2>"$WORK/last.err" || {
        cat "$WORK/last.err" >&2
        die "failed: $*"
    }
}

# iorig_run CASE ROUND ARGS... ; fio_run CASE ROUND ARGS...
# Both record IOPS and p50 latency; the CPU split goes to *.time.
# TOOL and BIN (iorig and $IORIG unless set) name the binary that runs.
iorig_run() {
    local c=$1 r=$2 tool=${TOOL:-iorig} bin=${BIN:-$IORIG}
    shift 2
    run_timed "$WORK/iorig.time" "$bin" run "$@" --bs 4k --read 100 --random 100 \
        --threads "${WORKERS:-1}" --time "$TIME" --json "$WORK/iorig.json" --quiet --no-db
    local st
    st=$(json_get "$WORK/iorig.json" 'd["run"]["status"] + " " + str(d["summary"]["errors"])')
    [[ $st == "ok 0" ]] || die "$tool run ($c) ended with status/errors: $st"
    record "$c" iops "$r" "$tool" "$(json_get "$WORK/iorig.json" 'd["summary"]["total"]["iops"]')"
    record "$c" p50 "$r" "$tool" "$(json_get "$WORK/iorig.json" 'd["summary"]["total"]["lat_ns"]["p50"]')"
    cpu_record "$c" "$r" "$tool" "$WORK/iorig.time"
}

# iorig_b_run CASE ROUND ARGS... — the same run with $IORIG_B, when given.
iorig_b_run() {
    [[ -n ${IORIG_B:-} ]] || return 0
    TOOL=iorig-b BIN=$IORIG_B iorig_run "$@"
}

fio_run() {
    local c=$1 r=$2
    shift 2
    run_timed "$WORK/fio.time" fio --name=vsfio --rw=randread --bs=4k --numjobs="${WORKERS:-1}" \
        --group_reporting --time_based --runtime="$TIME" --output-format=json \
        --output="$WORK/fio.json" "$@"
    local err
    err=$(json_get "$WORK/fio.json" 'd["jobs"][0]["error"]')
    [[ $err == 0 ]] || die "fio ($c) reported error $err"
    record "$c" iops "$r" fio "$(json_get "$WORK/fio.json" 'd["jobs"][0]["read"]["iops"]')"
    record "$c" p50 "$r" fio "$(json_get "$WORK/fio.json" 'd["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"]')"
    if [[ " $* " == *" --lat_percentiles=1 "* ]]; then
        record "$c" p50lat "$r" fio "$(json_get "$WORK/fio.json" 'd["jobs"][0]["read"]["lat_ns"]["percentile"]["50.000000"]')"
    fi
    cpu_record "$c" "$r" fio "$WORK/fio.time"
}

# User CPU % of the tool's own process tree (user seconds / wall seconds, from
# /usr/bin/time, which includes reaped children such as fio's job process).
cpu_record() {
    local c=$1 r=$2 tool=$3 tf=$4 u s e
    read -r u s e <"$tf"
    record "$c" usr "$r" "$tool" "$(python3 -c "print(100*$u/max($e,0.001))")"
    record "$c" sys "$r" "$tool" "$(python3 -c "print(100*$s/max($e,0.001))")"
}

# alternate CASE IORIG_ARGS FIO_ARGS — ROUNDS rounds, order flipping each round.
alternate() {
    local c=$1 iargs=$2 fargs=$3 r
    for ((r = 1; r <= ROUNDS; r++)); do
        log "$c: round $r/$ROUNDS"
        # shellcheck disable=SC2086  # the argument strings are word-split on purpose
        if [[ -n ${IORIG_B:-} ]]; then
            # With a second binary, every order of the three in turn, so no
            # tool keeps the first, middle or last place.
            local orders=("a b f" "b f a" "f a b" "a f b" "f b a" "b a f") t
            for t in ${orders[$(((r - 1) % 6))]}; do
                case $t in
                    a) iorig_run "$c" "$r" $iargs ;;
                    b) iorig_b_run "$c" "$r" $iargs ;;
                    f) fio_run "$c" "$r" $fargs ;;
                esac
            done
        elif ((r % 2)); then
            iorig_run "$c" "$r" $iargs
            fio_run "$c" "$r" $fargs
        else
            fio_run "$c" "$r" $fargs
            iorig_run "$c" "$r" $iargs
        fi
    done
}

wants() { [[ " $CASES " == *" $1 "* ]]; }

# ---------------------------------------------------------------- case 1: null
# fio's null engine (engines/null.c): at iodepth 1 it is synchronous (queue()
# completes the I/O at once). At iodepth > 1 it queues, and commit() makes the
# queued I/Os "complete"; but queue() answers FIO_Q_BUSY while a committed batch
# is unreaped, and fio's default iodepth_batch_submit=1 commits after every
# single I/O. So with defaults fio's null engine really runs at depth 1 (its
# JSON shows iodepth_level "1": 100 %) while paying the queued-engine overhead.
# iorig's worker fills all free slots, then submits and reaps the whole batch at
# once. The same behaviour in fio is --iodepth_batch_submit=QD (queue QD, one
# commit, reap all: iodepth_batch_complete_min stays at its default 1, and
# getevents returns the whole batch anyway), which is what we use for qd > 1.
if wants null; then
    for qd in 1 32; do
        fbatch=""
        ((qd > 1)) && fbatch="--iodepth_batch_submit=$qd"
        alternate "null qd$qd" \
            "--engine null --qd $qd" \
            "--ioengine=null --size=1g --iodepth=$qd $fbatch"
    done
fi

# ---------------------------------------------------------------- case 2: zram
if wants zram; then
    if zram_setup; then
        log "zram0: 1 GiB filled with random data"
        # Read-only workload on a block device: iorig needs no --allow-destroy.
        # Both tools with their default io_uring setup. Both rings are
        # SINGLE_ISSUER|DEFER_TASKRUN (fio 3.33 adds COOP_TASKRUN, iorig
        # TASKRUN_FLAG); iorig registers its buffers and files, fio does not
        # unless asked (fixedbufs, registerfiles). zram has no NOWAIT support,
        # so io_uring hands every read of either tool to an io-wq worker thread
        # of that process: its CPU time shows up as the tool's sys time.
        alternate "zram qd32" \
            "--target /dev/zram0 --engine io_uring --direct --qd 32" \
            "--ioengine=io_uring --direct=1 --iodepth=32 --filename=/dev/zram0"
    else
        SKIPPED+=("zram qd32: skipped: $ZRAM_WHY")
        log "zram: skipped: $ZRAM_WHY"
    fi
fi

# ---------------------------------------------------------------- case 3: file
# Latency: iorig's clock for an uncontrolled I/O starts when the worker issues
# it (refills its slot after a reap) and stops after the reap of its completion,
# so its own submission syscall counts. fio's clat starts only after the submit
# syscall returned (fio_ioring_commit sets issue_time then) and with io_uring
# that syscall issues the I/O inline (for ext4 O_DIRECT reads: iomap, bio,
# virtio kick), so clat leaves out most of the work at qd 1. fio's lat
# (start_time taken when the io_u is set up) spans what iorig measures: we judge
# on it and print the clat ratio for reference. --lat_percentiles=1 makes fio
# keep percentiles of lat as well as of clat.
# Here both tools take the same kernel path: fio with --fixedbufs and
# --registerfiles, as iorig always does (without them fio pins user pages on
# every I/O, which on this VM costs it ~5 % at qd 1 — a difference of kernel
# work, not of measurement, which is what this case checks). Both submit each
# I/O as soon as it is queued (fio iodepth_batch_submit=1, iorig --submit-batch 1).
if wants file; then
    FILE=$WORK/vs-fio.dat
    avail=$(df -P -k "$WORK" | awk 'NR == 2 { print $4 }')
    if ((avail < 2 * 1024 * 1024)); then
        SKIPPED+=("file: skipped: less than 2 GiB free under $WORK")
    else
        log "file: creating a 1 GiB file of random data on $(fs_type "$WORK") ($FILE)"
        # A plain (foreign) file: iorig reads it from offset 0 like fio does;
        # reads need no --allow-destroy.
        dd if=/dev/urandom of="$FILE" bs=1M count=1024 oflag=direct conv=fsync status=none
        for qd in 1 32; do
            alternate "file qd$qd" \
                "--target $FILE --engine io_uring --direct --qd $qd" \
                "--ioengine=io_uring --direct=1 --iodepth=$qd --filename=$FILE --size=1g --lat_percentiles=1 --fixedbufs --registerfiles"
        done
        rm -f -- "$FILE"
    fi
fi

# ---------------------------------------------------------------- case 4: tmpfs
# Many workers on one file at page-cache speed: what the tools themselves
# cost per I/O as the cores fill up (fio's jobs each open the file; iorig's
# workers each get a descriptor of their own). Buffered: tmpfs takes no
# O_DIRECT.
if wants tmpfs; then
    SHM=/dev/shm
    avail=$(df -P -k "$SHM" 2>/dev/null | awk 'NR == 2 { print $4 }')
    if [[ $(fs_type "$SHM") != tmpfs ]]; then
        SKIPPED+=("tmpfs: skipped: $SHM is not a tmpfs")
    elif ((${avail:-0} < 2 * 1024 * 1024)); then
        SKIPPED+=("tmpfs: skipped: less than 2 GiB free in $SHM")
    else
        TFILE=$(mktemp "$SHM/vs-fio.XXXXXX")
        log "tmpfs: a 1 GiB file of random data ($TFILE)"
        dd if=/dev/urandom of="$TFILE" bs=1M count=1024 status=none
        for WORKERS in $THREADS; do
            export WORKERS
            alternate "tmpfs psync x$WORKERS" \
                "--target $TFILE --engine psync --buffered --qd 1" \
                "--ioengine=psync --filename=$TFILE --size=1g"
            alternate "tmpfs io_uring qd32 x$WORKERS" \
                "--target $TFILE --engine io_uring --buffered --qd 32" \
                "--ioengine=io_uring --iodepth=32 --iodepth_batch_submit=32 --filename=$TFILE --size=1g"
        done
        unset WORKERS
        rm -f -- "$TFILE"
    fi
fi

# ---------------------------------------------------------------- report
echo
echo "iorig $("$IORIG" --version | awk '{ print $2 }') vs $(fio --version); $(nproc) CPUs; kernel $(uname -r)"
echo "rounds $ROUNDS, $TIME per run; medians over rounds; ratio = median of per-round iorig/fio"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$RESULTS" "${SKIPPED[@]+"${SKIPPED[@]}"}" <<'EOF'
import sys, statistics
from collections import defaultdict

rows = defaultdict(dict)  # (case, metric) -> round -> tool -> value
order = []
for line in open(sys.argv[1]):
    c, m, r, tool, v = line.rstrip("\n").split("\t")
    if c not in order:
        order.append(c)
    rows[(c, m)].setdefault(int(r), {})[tool] = float(v)

def med(xs):
    return statistics.median(xs) if xs else float("nan")

def paired(c, mi, mf, tool="iorig"):
    """per-round (tool, fio) for metric mi of tool against metric mf of fio"""
    ri, rf = rows.get((c, mi), {}), rows.get((c, mf), {})
    return [(ri[r][tool], rf[r]["fio"]) for r in sorted(ri)
            if tool in ri[r] and r in rf and "fio" in rf[r]]

def fmt_iops(v):
    return f"{v/1e6:.2f}M" if v >= 1e6 else f"{v/1e3:.1f}k"

def fmt_us(v):
    return f"{v/1e3:.1f}us" if v >= 1e3 else f"{v:.0f}ns"

# (metric label, iorig metric, fio metric, formatter, target, check(ratio) -> verdict)
def at_least(x):
    return (f">= {x}", lambda q: "PASS" if q >= x else "BELOW")

def at_most(x):
    return (f"<= {x}", lambda q: "PASS" if q <= x else "BELOW")

def within_iops(p):   # higher IOPS than fio by more than p: not a failure, but odd
    return (f"1 +-{p:g}%", lambda q: "BELOW" if q < 1 - p / 100 else ("PASS" if q <= 1 + p / 100 else "ABOVE"))

def within_lat(p):    # latency: a higher ratio is the worse side
    return (f"1 +-{p:g}%", lambda q: "BELOW" if q > 1 + p / 100 else ("PASS" if q >= 1 - p / 100 else "ABOVE"))

def no_target():
    return ("-", None)

lines = []   # table rows
finals = []
ab = []      # with IORIG_B: both binaries' ratios
for c in order:
    kind = c.split()[0]
    spec = [("IOPS", "iops", "iops", fmt_iops, *(at_least(1.0) if kind != "file" else within_iops(5)))]
    if kind == "zram":
        spec.append(("usr CPU %", "usr", "usr", lambda v: f"{v:.1f}%", *at_most(1.0)))
        spec.append(("sys CPU %", "sys", "sys", lambda v: f"{v:.1f}%", *no_target()))
    if kind == "file":
        spec.append(("p50 vs fio lat", "p50", "p50lat", fmt_us, *within_lat(5)))
        spec.append(("p50 vs fio clat", "p50", "p50", fmt_us, *no_target()))
    for label, mi, mf, f, target, check in spec:
        pairs = paired(c, mi, mf)
        if not pairs:
            continue
        ratio = med([i / f_ if f_ else float("inf") for i, f_ in pairs])
        mi_, mf_ = med([p[0] for p in pairs]), med([p[1] for p in pairs])
        verdict = check(ratio) if check else "info"
        lines.append((c, label, f(mi_), f(mf_), f"{ratio:.2f}", target, verdict))
        if check:
            finals.append(f"{c}: iorig/fio {label} = {ratio:.2f} (target {target}) {verdict}")
        pairs_b = paired(c, mi, mf, "iorig-b")
        if pairs_b:
            ratio_b = med([i / f_ if f_ else float("inf") for i, f_ in pairs_b])
            rm = rows.get((c, mi), {})
            per_round = [rm[r]["iorig-b"] / rm[r]["iorig"] for r in sorted(rm)
                         if "iorig" in rm[r] and "iorig-b" in rm[r] and rm[r]["iorig"]]
            ab.append(f"{c}: {label}: iorig/fio {ratio:.3f}, iorig-b/fio {ratio_b:.3f}; "
                      f"b/a per round {' '.join(f'{q:.3f}' for q in per_round)}, median {med(per_round):.3f}")

hdr = ("case", "metric", "iorig", "fio", "ratio", "target", "result")
w = [max(len(str(r[i])) for r in [hdr] + lines) for i in range(len(hdr))]
right = {2, 3, 4}
def show(r):
    return "  ".join(str(x).rjust(w[i]) if i in right else str(x).ljust(w[i]) for i, x in enumerate(r)).rstrip()
print()
if lines:
    print(show(hdr))
    print(show(tuple("-" * x for x in w)))
    for r in lines:
        print(show(r))
    print()
for f in finals:
    print(f)
if ab:
    print()
    print("IORIG_B (same rounds): median ratios to fio of this tree's binary (a) and IORIG_B (b)")
    for f in ab:
        print(f)
for s in sys.argv[2:]:
    print(s)
EOF
