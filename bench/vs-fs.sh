#!/usr/bin/env bash
# vs-fs.sh — run the same file-system work (create, stat, delete, read, write
# of many small files) in iorig and fio on tmpfs and on ext4, alternating over
# several rounds, and print the median ops/s and p50 latencies with the
# iorig/fio ratios.
#
#   IORIG=target/release/iorig bench/vs-fs.sh     # 3 rounds, 20000 files, 4 workers
#   ROUNDS=5 FILES=40000 THREADS=2 FSTYPES=tmpfs bench/vs-fs.sh
#
# Environment:
#   ROUNDS            rounds (default 3); each round runs every operation in
#                     both tools, iorig first in odd rounds and fio first in
#                     even ones, so slow drift of the machine cancels out
#   FILES             files in total (default 20000), split evenly over the
#                     workers (rounded down to a multiple of THREADS)
#   THREADS           workers (default 4): iorig threads, fio jobs (numjobs)
#   TIME              measured time of the time-based runs: stat, read, write
#                     (default 5s); create and delete run until every file is done
#   FSTYPES           file systems to test, any of: tmpfs ext4 (default both).
#                     tmpfs: a temp dir in /dev/shm (if that is not a tmpfs and
#                     we are root, a private tmpfs mounted in the temp dir).
#                     ext4 (root only, else skipped with a visible line): a new
#                     ext4 (mkfs.ext4 -q, no lazy inode-table init, so nothing
#                     zeroes in the background) on a loop device over a sparse
#                     file in the temp dir; unmounted and detached on exit
#   IORIG             iorig binary to use; when unset, iorig is built with
#                     `cargo build --release --quiet` (CARGO_TARGET_DIR, default
#                     <repo>/target) and target/release/iorig is used
#   KEEP_RESULTS      copy the per-round measurements (TSV: case, metric, round,
#                     tool, value) to this file before the temp dir is removed
#
# Layout: both tools work side by side in the same directory of the file
# system under test, iorig in DIR/iorig, fio in DIR/fio. iorig: --depth 1
# --width THREADS --files FILES/THREADS --fileselect sequential, so worker i
# works on exactly leaf directory DIR/iorig/d<i> (files f0000…). fio: numjobs
# THREADS, nrfiles FILES/THREADS, filename_format d$jobnum/f$filenum (the
# directories made beforehand), so job i works on DIR/fio/d<i> (files f0…).
# fio always with openfiles=1 and file_service_type=sequential (with the
# default roundrobin fio rescans all its files after each one), iodepth 1,
# group_reporting (ops/s = all jobs' ops / the longest job's runtime).
# Both tools buffered (iorig --buffered, fio direct=0), also on ext4; no fsync
# anywhere. fio with invalidate=0 and fadvise_hint=0 (iorig drops no cache and
# gives no hints). Before every measured run the file system is synced (sync -f)
# so that no run pays for the writeback of the run before it.
#
# Operations (p50 = median latency of one operation; ratio = iorig/fio):
#   create       empty files, every file once. iorig: --format dirs --ops create
#                --file-size 0 (ends when every slot holds a file); fio:
#                ioengine=filecreate, bs=filesize=4k (one op per file; the files
#                stay empty), create_on_open=1. Timed op in both: the one open()
#                with O_CREAT (iorig O_WRONLY|O_CREAT|O_EXCL 0644, fio
#                O_RDWR|O_CREAT 0600); the close is outside the latency (iorig
#                counts it as its own op) but inside the ops/s time window.
#                fio's setup stat()s each name first (untimed): iorig's names
#                get the same untimed stat (warm_names), so both creates find
#                their names missing from the dentry cache alike.
#                                                        target: ops/s >= 1.0x
#   create+data  64k files, every file once: open(O_CREAT) + one 64k pwrite +
#                close per file, zeros (iorig --data zero, fio zero_buffers=1).
#                iorig: --ops create --file-size 64k --bs 64k; fio: psync
#                rw=write bs=filesize=64k create_on_open=1 fallocate=none. ops/s
#                = files/s in both. p50: iorig's `write` (the pwrite alone)
#                against fio's write lat (the pwrite alone); iorig's own create
#                latency (open + write) has no fio counterpart. Not identical:
#                fio times only the write, its open is untimed; iorig opens with
#                O_EXCL. No ops/s target (info).
#   stat         stat() of every file in turn, time-based (TIME), on the empty
#                files left by create. iorig: --ops stat --fileselect sequential;
#                fio: ioengine=filestat stat_type=stat create_on_open=1 (no
#                layout of the empty files), time_based. fio's metadata engines
#                are otherwise never run time_based (a second pass of filecreate
#                or filedelete is other work or fails), but a second pass of
#                filestat is the same work: checked with strace, its job
#                processes make exactly one stat() per op, over all files in
#                turn. One pass of 20000 files would last ~50 ms.
#                                                        target: ops/s >= 1.0x
#   delete       unlink() of every file once (iorig unlinkat(AT_FDCWD, …, 0),
#                fio unlink()). iorig: --ops delete (ends when every file is
#                gone); fio: ioengine=filedelete create_on_open=1. fio stat()s
#                each file during its setup (untimed), which warms the dentries;
#                iorig checks the tree before the run (--format no).
#                                                        target: ops/s >= 1.0x
#   read, write  4k sequential pread/pwrite over the 64k files left by
#                create+data, a whole file per open (open, 16 transfers,
#                close), psync, files in turn, time-based (TIME); writes
#                overwrite in place (no truncate) with zeros. iorig: --ops
#                read|write --fileio sequential --fileselect sequential --bs 4k;
#                fio: psync rw=read|write bs=4k filesize=64k time_based. ops/s =
#                4k transfers/s in both; open and close are untimed in fio and
#                timed as their own ops in iorig, inside the time window in
#                both. p50: iorig's read/write against fio's lat (issue to
#                completion, lat_percentiles=1; fio's clat starts a little
#                later). iorig opens O_RDONLY/O_WRONLY, fio O_RDONLY/O_RDWR.
#                                                 target: ops/s within +-5 %
#   all          p50 latency within +-10 % (the faster side outside the band
#                is shown as ABOVE, the slower as BELOW)
#
# Also not identical: iorig's workers are threads of one process, fio's jobs
# are processes. iorig's ops/s is ops over its measured time (summary
# .duration_s); fio's is ops over the longest job's runtime, counted from that
# job's start and kept in whole milliseconds (create and delete runs of 20000
# files last ~0.1 s: ~1 % rounding). In create and delete, a worker done with
# its directory ends in fio (the job process exits), while iorig's keeps
# looking for work until the last one is done (stderr: "create found no empty
# file slot to work on N times"). Each tool reads its own files, which
# it wrote itself (same sizes, same directory structure, names of other
# lengths). Everything runs on one machine: with more workers than CPUs both
# tools time preemption too.
#
# The script writes only to its temp dirs (one under /var/tmp or /tmp, one in
# /dev/shm) and, for ext4, to the loop device it set up itself; never to
# /dev/vda or any other disk directly.
#
# Exit status: 0 when it ran (whatever the verdicts), 2 when a prerequisite is
# missing and cannot be installed, 1 on errors.
set -euo pipefail

ROUNDS=${ROUNDS:-3}
FILES=${FILES:-20000}
THREADS=${THREADS:-4}
TIME=${TIME:-5s}
FSTYPES=${FSTYPES:-"tmpfs ext4"}
IORIG=${IORIG:-}

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
# is_root: shared with the other bench scripts.
# shellcheck source=zram-lib.sh
source "$SCRIPT_DIR/zram-lib.sh"

die() { echo "vs-fs: $*" >&2; exit 1; }
need() { echo "vs-fs: $*" >&2; exit 2; }
log() { echo "vs-fs: $*" >&2; }

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer (got '$ROUNDS')"
[[ $FILES =~ ^[1-9][0-9]*$ ]] || die "FILES must be a positive integer (got '$FILES')"
[[ $THREADS =~ ^[1-9][0-9]*$ ]] || die "THREADS must be a positive integer (got '$THREADS')"
[[ $TIME =~ ^[0-9]+(ms|s|m)?$ ]] || die "TIME must look like 5s, 500ms or 1m (got '$TIME')"
((FILES >= THREADS)) || die "FILES ($FILES) must be at least THREADS ($THREADS)"
for fs in $FSTYPES; do
    [[ $fs == tmpfs || $fs == ext4 ]] || die "FSTYPES: unknown file system '$fs' (tmpfs, ext4)"
done

PER=$((FILES / THREADS)) # files per worker (leaf directory, fio job)
NFILES=$((PER * THREADS))
((NFILES == FILES)) || log "FILES rounded down to $NFILES ($THREADS workers x $PER files)"

KEEP_RESULTS=${KEEP_RESULTS:-}
[[ -z $KEEP_RESULTS || $KEEP_RESULTS = /* ]] || KEEP_RESULTS=$PWD/$KEEP_RESULTS
[[ -z $IORIG || $IORIG = */* ]] || IORIG=$(command -v "$IORIG" || echo "$IORIG")
[[ -z $IORIG || $IORIG = /* ]] || IORIG=$PWD/$IORIG

wants() { [[ " $FSTYPES " == *" $1 "* ]]; }

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
command -v python3 >/dev/null || apt_install python3
if wants ext4 && is_root; then
    command -v mkfs.ext4 >/dev/null || apt_install e2fsprogs
    command -v losetup >/dev/null || apt_install mount
    command -v mountpoint >/dev/null || apt_install util-linux
fi

# ---------------------------------------------------------------- iorig binary
if [[ -n $IORIG ]]; then
    [[ -x $IORIG ]] || die "IORIG=$IORIG is not an executable file"
    log "using iorig at $IORIG (not building)"
else
    command -v cargo >/dev/null || need "cargo is not on PATH; install a Rust toolchain (rustup) or set IORIG"
    TARGET_DIR=${CARGO_TARGET_DIR:-$REPO/target}
    [[ $TARGET_DIR = /* ]] || TARGET_DIR=$PWD/$TARGET_DIR
    log "building iorig (release, target dir $TARGET_DIR)"
    (cd "$REPO" && CARGO_TARGET_DIR="$TARGET_DIR" cargo build --release --quiet) \
        || die "cargo build --release failed"
    IORIG=$TARGET_DIR/release/iorig
    [[ -x $IORIG ]] || die "no binary at $IORIG after the build"
fi

# ---------------------------------------------------------------- temp dirs + cleanup
fs_type() { stat -f -c %T "$1" 2>/dev/null || echo unknown; }
WORK=""
for base in /var/tmp /tmp; do
    if [[ -d $base && -w $base ]]; then
        WORK=$(mktemp -d "$base/vs-fs.XXXXXX") && break
    fi
done
[[ -n $WORK ]] || die "no writable temp directory (tried /var/tmp, /tmp)"
RESULTS=$WORK/results.tsv
: >"$RESULTS"
SHM_DIR=""       # our temp dir in /dev/shm
TMPFS_MNT=""     # our own tmpfs mount (only when /dev/shm is no tmpfs)
EXT4_IMG=""      # sparse backing file of the loop device
EXT4_MNT=""      # mount point of our ext4
CHILD=""         # the iorig or fio process running now

# unmount DIR — a few tries (a killed tool may still hold files), then lazily.
unmount() {
    local d=$1 i
    for i in 1 2 3 4 5; do
        mountpoint -q "$d" || return 0
        umount "$d" 2>/dev/null && return 0
        sleep 1
    done
    log "warning: $d is busy; detaching it lazily (umount -l)"
    umount -l "$d" || { log "warning: could not unmount $d"; return 1; }
}

cleanup() {
    local rc=$? ok=1 dev
    trap '' INT TERM
    if [[ -n $CHILD ]]; then
        kill -TERM "$CHILD" 2>/dev/null || true
        wait "$CHILD" 2>/dev/null || true
    fi
    if [[ -n ${KEEP_RESULTS:-} && -s ${RESULTS:-} ]]; then
        cp -- "$RESULTS" "$KEEP_RESULTS" || log "warning: could not copy the results to $KEEP_RESULTS"
    fi
    if [[ -n $EXT4_MNT ]]; then
        unmount "$EXT4_MNT" || ok=0
    fi
    if [[ -n $EXT4_IMG ]]; then
        # Every loop device backed by our image (normally the one we set up).
        while read -r dev; do
            [[ -n $dev ]] || continue
            losetup -d "$dev" || { log "warning: could not detach $dev"; ok=0; }
        done < <(losetup -j "$EXT4_IMG" 2>/dev/null | cut -d: -f1)
    fi
    if [[ -n $TMPFS_MNT ]]; then
        unmount "$TMPFS_MNT" || ok=0
    fi
    [[ -n $SHM_DIR && -d $SHM_DIR ]] && rm -rf -- "$SHM_DIR"
    if [[ $ok -eq 1 ]]; then
        [[ -n $WORK && -d $WORK ]] && rm -rf -- "$WORK"
    else
        log "warning: left $WORK in place (something is still mounted or attached there)"
    fi
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

# json_get FILE EXPR... — one line per EXPR, Python over `d` (the document).
json_get() {
    python3 - "$@" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
# fio may print notes before its JSON document.
d = json.loads(text[text.index('{'):])
for e in sys.argv[2:]:
    print(eval(e, {"d": d}))
EOF
}

# run_child LOG cmd... — in the background, so that a signal reaches our trap at
# once (and the trap ends the child by its pid) instead of after the run.
run_child() {
    local logf=$1 rc=0
    shift
    "$@" >"$logf" 2>&1 &
    CHILD=$!
    wait "$CHILD" || rc=$?
    CHILD=""
    return "$rc"
}

# files_in DIR — regular files in DIR's subdirectories (the workers' dirs).
files_in() { find "$1" -mindepth 2 -maxdepth 2 -type f | wc -l; }

# iorig_fs ROOT ARGS... — one iorig run on ROOT/iorig; JSON in $WORK/iorig.json.
iorig_fs() {
    local root=$1 st
    shift
    sync -f "$root"
    run_child "$WORK/iorig.log" "$IORIG" run --anchor "$root/iorig" --depth 1 \
        --width "$THREADS" --files "$PER" --threads "$THREADS" --fileselect sequential \
        --buffered --no-db --quiet --json "$WORK/iorig.json" "$@" \
        || { cat "$WORK/iorig.log" >&2; die "iorig failed: $*"; }
    st=$(json_get "$WORK/iorig.json" 'd["run"]["status"] + " " + str(d["summary"]["errors"])')
    [[ $st == "ok 0" ]] || { cat "$WORK/iorig.log" >&2; die "iorig run ($*) ended with status/errors: $st"; }
}

# fio_fs ROOT ARGS... — one fio run on ROOT/fio; JSON in $WORK/fio.json.
fio_fs() {
    local root=$1 err
    shift
    sync -f "$root"
    # shellcheck disable=SC2016  # $jobnum and $filenum are fio's, not ours
    run_child "$WORK/fio.log" fio --directory="$root/fio" --filename_format='d$jobnum/f$filenum' \
        --numjobs="$THREADS" --nrfiles="$PER" --openfiles=1 --file_service_type=sequential \
        --iodepth=1 --group_reporting=1 --output-format=json --output="$WORK/fio.json" "$@" \
        || { cat "$WORK/fio.log" >&2; [[ -s $WORK/fio.json ]] && cat "$WORK/fio.json" >&2; die "fio failed: $*"; }
    err=$(json_get "$WORK/fio.json" 'd["jobs"][0]["error"]')
    [[ $err == 0 ]] || die "fio ($*) reported error $err"
}

# iorig_rec CASE ROUND OPS_KIND P50_KIND [EXPECT] — record ops/s and p50 of the
# last iorig run; EXPECT: the number of OPS_KIND ops it must have done.
iorig_rec() {
    local c=$1 r=$2 k=$3 l=$4 expect=${5:-} v
    mapfile -t v < <(json_get "$WORK/iorig.json" \
        "d['summary']['fs_ops'].get('$k', {}).get('ops', 0)" \
        "d['summary']['fs_ops']['$k']['iops']" \
        "d['summary']['fs_ops']['$l']['lat_ns']['p50']")
    [[ ${#v[@]} -eq 3 ]] || die "$c: could not read iorig's JSON ($WORK/iorig.json)"
    if [[ -n $expect && ${v[0]} != "$expect" ]]; then
        cat "$WORK/iorig.log" >&2
        die "$c: iorig did ${v[0]} $k ops, not $expect"
    fi
    record "$c" iops "$r" iorig "${v[1]}"
    record "$c" p50 "$r" iorig "${v[2]}"
}

# fio_rec CASE ROUND DIR CLAT|LAT [EXPECT] — the same for the last fio run; DIR
# is the JSON section (read or write), CLAT or LAT the latency to take.
fio_rec() {
    local c=$1 r=$2 dir=$3 lat=$4 expect=${5:-} v
    mapfile -t v < <(json_get "$WORK/fio.json" \
        "d['jobs'][0]['$dir']['total_ios']" \
        "d['jobs'][0]['$dir']['iops']" \
        "d['jobs'][0]['$dir']['${lat}_ns']['percentile']['50.000000']")
    [[ ${#v[@]} -eq 3 ]] || die "$c: could not read fio's JSON ($WORK/fio.json)"
    [[ -z $expect || ${v[0]} == "$expect" ]] || die "$c: fio did ${v[0]} ops, not $expect"
    record "$c" iops "$r" fio "${v[1]}"
    record "$c" p50 "$r" fio "${v[2]}"
}

# The operations: <op>_iorig ROOT CASE ROUND / <op>_fio ROOT CASE ROUND.
META_FIO=(--create_on_open=1 --filesize=4k --bs=4k)
DATA_FIO=(--ioengine=psync --filesize=64k --invalidate=0 --fadvise_hint=0 --zero_buffers=1 --lat_percentiles=1)

# warm_names ROOT — fio's setup stat()s every file of a job before its timed
# creates (untimed; strace shows one failing newfstatat per file): the ENOENT
# leaves a negative dentry, so fio's timed open(O_CREAT) finds the name
# missing without searching the directory on disk (on ext4 ~5 us of ~22 us).
# The same untimed stat of every name iorig is about to create, so both
# tools' creates start from the same cache state. iorig's tree directories
# are made first (a run of its format alone; its stat finds no file and ends).
warm_names() {
    local root=$1
    "$IORIG" run --anchor "$root/iorig" --depth 1 --width "$THREADS" --files "$PER" \
        --threads 1 --format dirs --ops stat --file-size 0 --buffered --time 1s \
        --no-db --quiet >"$WORK/warm.log" 2>&1 || { cat "$WORK/warm.log" >&2; die "iorig could not make its tree's directories"; }
    python3 - "$root/iorig" "$THREADS" "$PER" <<'PY'
import os, sys
root, width, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# iorig's names: d<j>, f<n>, zero-padded to the digits of width-1, files-1.
dw, fw = len(str(max(width - 1, 1))), len(str(max(files - 1, 1)))
for j in range(width):
    for n in range(files):
        try:
            os.stat(f"{root}/d{j:0{dw}}/f{n:0{fw}}")
        except FileNotFoundError:
            pass
PY
}

create_iorig() {
    warm_names "$1"
    iorig_fs "$1" --format dirs --ops create --file-size 0 --time 600s
    iorig_rec "$2" "$3" create create "$NFILES"
}
create_fio() {
    fio_fs "$1" --name=create --ioengine=filecreate --fallocate=none "${META_FIO[@]}"
    fio_rec "$2" "$3" read clat "$NFILES"
}
stat_iorig() {
    iorig_fs "$1" --format no --ops stat --file-size 0 --time "$TIME"
    iorig_rec "$2" "$3" stat stat
}
stat_fio() {
    fio_fs "$1" --name=stat --ioengine=filestat --stat_type=stat "${META_FIO[@]}" \
        --time_based --runtime="$TIME"
    fio_rec "$2" "$3" read clat
}
delete_iorig() {
    iorig_fs "$1" --format no --ops delete --file-size 0 --time 600s
    iorig_rec "$2" "$3" delete delete "$NFILES"
    [[ $(files_in "$1/iorig") == 0 ]] || die "$2: files left in $1/iorig after iorig's delete"
}
delete_fio() {
    fio_fs "$1" --name=delete --ioengine=filedelete --unlink=0 "${META_FIO[@]}"
    fio_rec "$2" "$3" read clat "$NFILES"
    [[ $(files_in "$1/fio") == 0 ]] || die "$2: files left in $1/fio after fio's delete"
}
cdata_iorig() {
    warm_names "$1"
    iorig_fs "$1" --format dirs --ops create --file-size 64k --bs 64k --data zero --time 600s
    iorig_rec "$2" "$3" create write "$NFILES"
}
cdata_fio() {
    fio_fs "$1" --name=cdata "${DATA_FIO[@]}" --rw=write --bs=64k --create_on_open=1 --fallocate=none
    fio_rec "$2" "$3" write lat "$NFILES"
}
read_iorig() {
    iorig_fs "$1" --format no --ops read --file-size 64k --fileio sequential --bs 4k --time "$TIME"
    iorig_rec "$2" "$3" read read
}
read_fio() {
    fio_fs "$1" --name=read "${DATA_FIO[@]}" --rw=read --bs=4k --time_based --runtime="$TIME"
    fio_rec "$2" "$3" read lat
}
write_iorig() {
    iorig_fs "$1" --format no --ops write --file-size 64k --fileio sequential --bs 4k \
        --data zero --time "$TIME"
    iorig_rec "$2" "$3" write write
}
write_fio() {
    fio_fs "$1" --name=write "${DATA_FIO[@]}" --rw=write --bs=4k --time_based --runtime="$TIME"
    fio_rec "$2" "$3" write lat
}

# empty_trees ROOT — no files left from the round before: iorig's tree keeps
# its directories and marker (the next create formats it with --format dirs),
# fio gets fresh job directories. Synced, so the next run pays for none of it.
empty_trees() {
    local root=$1 i
    mkdir -p "$root/iorig"
    find "$root/iorig" -mindepth 2 -maxdepth 2 -type f -name 'f*' -delete
    rm -rf -- "$root/fio"
    for ((i = 0; i < THREADS; i++)); do
        mkdir -p "$root/fio/d$i"
    done
    sync -f "$root"
}

# run_fs FS ROOT — all rounds of every operation on ROOT.
run_fs() {
    local fs=$1 root=$2 r op c
    local ops=(create:create stat:stat delete:delete create+data:cdata read:read write:write)
    for ((r = 1; r <= ROUNDS; r++)); do
        empty_trees "$root"
        for op in "${ops[@]}"; do
            c="$fs ${op%%:*}"
            log "$c: round $r/$ROUNDS"
            if ((r % 2)); then
                "${op#*:}_iorig" "$root" "$c" "$r"
                "${op#*:}_fio" "$root" "$c" "$r"
            else
                "${op#*:}_fio" "$root" "$c" "$r"
                "${op#*:}_iorig" "$root" "$c" "$r"
            fi
        done
    done
    empty_trees "$root"
}

# Both trees hold FILES files of 64 KiB at the same time.
DATA_BYTES=$((2 * NFILES * 65536))

# ---------------------------------------------------------------- tmpfs
if wants tmpfs; then
    avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
    if ((avail_kb * 1024 < DATA_BYTES + 512 * 1024 * 1024)); then
        why="only $((avail_kb / 1024)) MiB of memory available, the files need $((DATA_BYTES >> 20)) MiB + 512 MiB"
        SKIPPED+=("tmpfs: skipped: $why")
        log "tmpfs: skipped: $why"
    else
        TMPFS_ROOT=""
        if [[ -d /dev/shm && -w /dev/shm && $(fs_type /dev/shm) == tmpfs ]]; then
            SHM_DIR=$(mktemp -d /dev/shm/vs-fs.XXXXXX)
            TMPFS_ROOT=$SHM_DIR
        elif is_root; then
            mkdir "$WORK/tmpfs"
            mount -t tmpfs -o "size=$((DATA_BYTES / 1048576 + 256))m" vs-fs "$WORK/tmpfs"
            TMPFS_MNT=$WORK/tmpfs
            TMPFS_ROOT=$TMPFS_MNT
        fi
        if [[ -n $TMPFS_ROOT ]]; then
            log "tmpfs: in $TMPFS_ROOT"
            run_fs tmpfs "$TMPFS_ROOT"
            rm -rf -- "${TMPFS_ROOT:?}/iorig" "${TMPFS_ROOT:?}/fio"
        else
            SKIPPED+=("tmpfs: skipped: /dev/shm is no writable tmpfs and mounting one needs root")
            log "tmpfs: skipped: /dev/shm is no writable tmpfs and mounting one needs root"
        fi
    fi
fi

# ---------------------------------------------------------------- ext4
EXT4_WHY=""
# Room for both trees' data, plus metadata and journal (MiB).
EXT4_MIB=$(((DATA_BYTES * 5 / 4 + 512 * 1024 * 1024) >> 20))
ext4_setup() { # succeeds with our ext4 mounted on $EXT4_MNT; else EXT4_WHY says why
    if ! is_root; then EXT4_WHY="not root (needs a loop device and mount)"; return 1; fi
    local size=$EXT4_MIB avail_kb dev
    avail_kb=$(df -P -k "$WORK" | awk 'NR == 2 { print $4 }')
    if ((avail_kb / 1024 < size + 256)); then
        EXT4_WHY="only $((avail_kb / 1024)) MiB free under $WORK for a ${size} MiB backing file"
        return 1
    fi
    EXT4_IMG=$WORK/ext4.img
    truncate -s "${size}M" "$EXT4_IMG"
    dev=$(losetup --find --show "$EXT4_IMG") || { EXT4_WHY="losetup --find --show failed"; return 1; }
    [[ $dev =~ ^/dev/loop[0-9]+$ ]] || { EXT4_WHY="losetup gave '$dev', not a loop device"; return 1; }
    # Check that it really is ours before writing a file system on it.
    [[ $(losetup -n -O BACK-FILE "$dev" 2>/dev/null) == "$EXT4_IMG"* ]] \
        || { EXT4_WHY="$dev is not backed by $EXT4_IMG"; return 1; }
    LOOP_DEV=$dev
    mkfs.ext4 -q -E lazy_itable_init=0,lazy_journal_init=0 "$LOOP_DEV" >"$WORK/mkfs.log" 2>&1 \
        || { cat "$WORK/mkfs.log" >&2; EXT4_WHY="mkfs.ext4 on $LOOP_DEV failed"; return 1; }
    mkdir "$WORK/ext4"
    EXT4_MNT=$WORK/ext4
    mount -t ext4 "$LOOP_DEV" "$EXT4_MNT" || { EXT4_WHY="mounting $LOOP_DEV failed"; return 1; }
    return 0
}

if wants ext4; then
    LOOP_DEV=""
    if ext4_setup; then
        log "ext4: $EXT4_MIB MiB on $LOOP_DEV (sparse file on $(fs_type "$WORK")), mounted on $EXT4_MNT"
        run_fs ext4 "$EXT4_MNT"
        rm -rf -- "${EXT4_MNT:?}/iorig" "${EXT4_MNT:?}/fio"
    else
        SKIPPED+=("ext4: skipped: $EXT4_WHY")
        log "ext4: skipped: $EXT4_WHY"
    fi
fi

# ---------------------------------------------------------------- report
echo
echo "iorig $("$IORIG" --version | awk '{ print $2 }') ($IORIG) vs $(fio --version); $(nproc) CPUs; kernel $(uname -r)"
echo "rounds $ROUNDS; $NFILES files, $THREADS workers x $PER; stat/read/write runs $TIME; buffered I/O on every file system"
echo "values: medians over rounds; ratio = median of per-round iorig/fio"
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

def paired(c, m):
    rr = rows.get((c, m), {})
    return [(rr[r]["iorig"], rr[r]["fio"]) for r in sorted(rr) if "iorig" in rr[r] and "fio" in rr[r]]

def summary(c, m):
    pairs = paired(c, m)
    if not pairs:
        return None
    ratio = med([i / f if f else float("inf") for i, f in pairs])
    return med([p[0] for p in pairs]), med([p[1] for p in pairs]), ratio

def at_least(x):
    return (f">= {x:.2f}x", lambda q: "PASS" if q >= x else "BELOW")

def within_iops(p):   # more ops/s than fio by more than p: not a failure, but odd
    return (f"1 +-{p:g}%", lambda q: "BELOW" if q < 1 - p / 100 else ("PASS" if q <= 1 + p / 100 else "ABOVE"))

def within_lat(p):    # latency: a higher ratio is the worse side
    return (f"1 +-{p:g}%", lambda q: "BELOW" if q > 1 + p / 100 else ("PASS" if q >= 1 - p / 100 else "ABOVE"))

IOPS_TARGET = {"create": at_least(1.0), "stat": at_least(1.0), "delete": at_least(1.0),
               "read": within_iops(5), "write": within_iops(5)}
LAT_TARGET = within_lat(10)

print()
finals = []
for c in order:
    fs, op = c.split(" ", 1)
    s_ops, s_lat = summary(c, "iops"), summary(c, "p50")
    if not s_ops or not s_lat:
        continue
    (oi, of, oq), (li, lf, lq) = s_ops, s_lat
    print(f"{fs:<5} {op:<11}  iorig {oi:>9.0f} ops/s  fio {of:>9.0f} ops/s  {oq:5.2f}x"
          f"   p50 iorig {li / 1e3:6.1f} us  fio {lf / 1e3:6.1f} us  {lq:5.2f}x")
    if op in IOPS_TARGET:
        target, check = IOPS_TARGET[op]
        finals.append(f"{c}: ops/s iorig/fio = {oq:.2f}x (target {target}) {check(oq)}")
    else:
        finals.append(f"{c}: ops/s iorig/fio = {oq:.2f}x (no target) info")
    target, check = LAT_TARGET
    finals.append(f"{c}: p50 iorig/fio = {lq:.2f}x (target {target}) {check(lq)}")
print()
for f in finals:
    print(f)
for s in sys.argv[2:]:
    print(s)
EOF
