#!/usr/bin/env bash
# hosts.sh — one test on many agents at once, all on this machine: 1, 2, 4
# and 8 agents (each on its own loopback address) against the null engine
# and against small shared targets (a loop device over a file in /dev/shm,
# /dev/zram0), the same work through fio's client/server mode as the peer;
# then the controller with 64 agents, each paced at --rate-per-host.
#
#   IORIG=target/release/iorig bench/hosts.sh
#   AGENTS="2 8" TARGETS=null TIME=10s bench/hosts.sh
#
# Environment:
#   AGENTS         agent counts to run (default "1 2 4 8")
#   TARGETS        any of: null loop zram (default all; loop and zram need
#                  root, else they are skipped with a visible line)
#   TIME           measured time of each run (default 5s), intervals of 1s
#   QD             outstanding I/Os per agent (default 8; 4k random reads)
#   MANY           agents of the controller check (default 64; 0 skips it)
#   RATE_PER_HOST  each of those agents' IOPS (default 1000)
#   MANY_TIME      its measured time (default 20s)
#   IORIG          iorig binary; when unset, `cargo build --release` and
#                  target/release/iorig
#
# Per row: aggregate IOPS of iorig and of fio (client/server, group
# reporting), their ratio, the controller's CPU (user + system from its own
# rusage, /usr/bin/time) per agent as a share of one core over the run, and
# the interval payload each agent sends per interval (what the controller
# says it received: protobuf bytes, HDR histograms in V2 encoding; HTTP/2
# framing adds ~14 bytes a message). Both tools run the same work: 4k
# random reads, QD per agent, one worker per agent, direct I/O on the
# devices; every agent reads the same shared target, as hosts of a cluster
# read one array (reads only: nothing is written to the loop device or
# zram0, whose data was written by this script).
#
# The 64-agent check: 64 agents (null engine, each paced at RATE_PER_HOST
# so that the two cores are not saturated), the controller's CPU seconds
# over the run as a share of one core (target: <= 5 %), and how late each
# total interval was shown after its end (target: within 1 interval).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/zram-lib.sh"

AGENTS=${AGENTS:-"1 2 4 8"}
TARGETS=${TARGETS:-"null loop zram"}
TIME=${TIME:-5s}
QD=${QD:-8}
MANY=${MANY:-64}
RATE_PER_HOST=${RATE_PER_HOST:-1000}
MANY_TIME=${MANY_TIME:-20s}
if [[ -z ${IORIG:-} ]]; then
    (cd "$here/.." && cargo build --release --quiet -p iorig)
    IORIG="${CARGO_TARGET_DIR:-$here/../target}/release/iorig"
fi
[[ -x $IORIG ]] || { echo "hosts.sh: no iorig binary at $IORIG" >&2; exit 2; }
have_fio=1
command -v fio >/dev/null || { have_fio=0; echo "hosts.sh: fio not found: its column is empty (apt-get install fio)"; }

work=$(mktemp -d /tmp/iorig-hosts.XXXXXX)
pids=()
LOOP=""
ZRAM_SET_UP=0
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    [[ -n $LOOP ]] && losetup -d "$LOOP" 2>/dev/null || true
    if [[ $ZRAM_SET_UP == 1 ]]; then echo 1 > /sys/block/zram0/reset 2>/dev/null || true; fi
    rm -rf "$work" /dev/shm/iorig-hosts-loop.img 2>/dev/null || true
}
trap cleanup EXIT

# start_agents N: N agents on 127.0.0.2.. (kernel-chosen ports); fills ADDRS.
ADDRS=""
start_agents() {
    local n=$1 i ip port
    stop_agents
    local list=()
    for ((i = 0; i < n; i++)); do
        ip="127.0.$(( (i + 2) / 250 )).$(( (i + 2) % 250 + 1 ))"
        "$IORIG" agent --listen "$ip:0" > "$work/agent-$i.out" 2> "$work/agent-$i.err" &
        pids+=($!)
    done
    for ((i = 0; i < n; i++)); do
        for _ in $(seq 200); do
            grep -q "listening on" "$work/agent-$i.out" 2>/dev/null && break
            sleep 0.05
        done
        list+=("$(awk '{for (k = 1; k < NF; k++) if ($k == "on") print $(k + 1)}' "$work/agent-$i.out" | head -1)")
    done
    ADDRS=$(IFS=,; echo "${list[*]}")
}
stop_agents() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    pids=()
}

# fio servers for the peer: fio's own agents, one per loopback address.
FIO_CLIENTS=()
start_fio_servers() {
    local n=$1 i ip
    FIO_CLIENTS=()
    for ((i = 0; i < n; i++)); do
        ip="127.0.$(( (i + 2) / 250 )).$(( (i + 2) % 250 + 1 ))"
        fio --server="ip:$ip" > "$work/fio-server-$i.log" 2>&1 &
        pids+=($!)
        FIO_CLIENTS+=("--client=$ip")
    done
    sleep 1
}

secs() { # 5s -> 5
    local t=$1; t=${t%s}; echo "$t"
}

# iorig_row N TARGET: prints "iops cpu_pct_per_agent bytes_per_interval".
iorig_row() {
    local n=$1 target=$2 args=()
    case $target in
        null) args=(--engine null) ;;
        loop) args=(--target "$LOOP") ;;
        zram) args=(--target /dev/zram0) ;;
    esac
    start_agents "$n"
    /usr/bin/time -f "%e %U %S" -o "$work/time" \
        "$IORIG" run "${args[@]}" --bs 4k --read 100 --random 100 --qd "$QD" --time "$TIME" \
        --interval 1s --hosts "$ADDRS" --no-db --json "$work/out.json" -q \
        > /dev/null 2> "$work/controller.err"
    stop_agents
    python3 - "$work/out.json" "$work/time" "$work/controller.err" "$n" <<'EOF'
import json, re, sys
doc = json.load(open(sys.argv[1]))
wall, usr, sys_ = map(float, open(sys.argv[2]).read().split()[-3:])
err = open(sys.argv[3]).read()
m = re.search(r"([0-9.]+) bytes of interval data per host and interval", err)
n = int(sys.argv[4])
iops = doc["summary"]["total"]["iops"]
cpu_per_agent = (usr + sys_) / wall * 100 / n
print(f"{iops:.0f} {cpu_per_agent:.2f} {m.group(1) if m else '-'}")
EOF
}

# fio_row N TARGET: aggregate IOPS of fio's client/server on the same work.
fio_row() {
    local n=$1 target=$2 job="$work/job.fio"
    {
        echo "[global]"
        echo "rw=randread"
        echo "bs=4k"
        echo "iodepth=$QD"
        echo "time_based=1"
        echo "runtime=$(secs "$TIME")"
        echo "group_reporting=1"
        case $target in
            null) echo "ioengine=null"; echo "size=1g" ;;
            loop) echo "ioengine=io_uring"; echo "direct=1"; echo "filename=$LOOP" ;;
            zram) echo "ioengine=io_uring"; echo "direct=1"; echo "filename=/dev/zram0" ;;
        esac
        echo "[r]"
    } > "$job"
    start_fio_servers "$n"
    fio "${FIO_CLIENTS[@]}" --output-format=json --output="$work/fio.json" "$job" > /dev/null 2>&1 || true
    stop_agents
    python3 - "$work/fio.json" <<'EOF'
import json, sys
try:
    text = open(sys.argv[1]).read()
    doc = json.loads(text[text.index("{"):])
    # With clients, the "All clients" entry holds the sum; else add them up.
    jobs = doc.get("client_stats", doc.get("jobs", []))
    allc = [j for j in jobs if j.get("jobname") == "All clients"]
    rows = allc or jobs
    print(f"{sum(j['read']['iops'] for j in rows):.0f}")
except Exception:
    print("-")
EOF
}

printf '%-6s %6s %12s %12s %7s %16s %18s\n' target agents "iorig IOPS" "fio IOPS" ratio "ctl CPU/agent %" "bytes/agent/int"
for target in $TARGETS; do
    case $target in
        null) ;;
        loop)
            if ! is_root; then echo "loop: skipped (not root)"; continue; fi
            dd if=/dev/urandom of=/dev/shm/iorig-hosts-loop.img bs=1M count=256 status=none
            LOOP=$(losetup --find --show --direct-io=on /dev/shm/iorig-hosts-loop.img 2>/dev/null \
                || losetup --find --show /dev/shm/iorig-hosts-loop.img)
            ;;
        zram)
            if ! zram_setup; then echo "zram: skipped ($ZRAM_WHY)"; continue; fi
            ;;
        *) echo "hosts.sh: unknown target $target" >&2; exit 2 ;;
    esac
    for n in $AGENTS; do
        read -r iops cpu bytes < <(iorig_row "$n" "$target")
        fpeer="-"
        [[ $have_fio == 1 ]] && fpeer=$(fio_row "$n" "$target")
        ratio="-"
        [[ $fpeer != "-" && $fpeer != 0 ]] && ratio=$(python3 -c "print(f'{$iops/$fpeer:.2f}x')")
        printf '%-6s %6s %12s %12s %7s %16s %18s\n' "$target" "$n" "$iops" "$fpeer" "$ratio" "$cpu" "$bytes"
    done
done

if [[ $MANY -gt 0 ]]; then
    start_agents "$MANY"
    /usr/bin/time -f "%e %U %S" -o "$work/time" \
        "$IORIG" run --engine null --time "$MANY_TIME" --interval 1s --rate-per-host "$RATE_PER_HOST" \
        --hosts "$ADDRS" --no-db --json "$work/many.json" -q > /dev/null 2> "$work/many.err"
    stop_agents
    python3 - "$work/many.json" "$work/time" "$work/many.err" "$MANY" "$RATE_PER_HOST" <<'EOF'
import json, re, sys
doc = json.load(open(sys.argv[1]))
wall, usr, sys_ = map(float, open(sys.argv[2]).read().split()[-3:])
err = open(sys.argv[3]).read()
n, rate = int(sys.argv[4]), float(sys.argv[5])
lag = re.search(r"([0-9.]+) ms after its interval ended on average \(([0-9.]+) ms at most\)", err)
ok = sum(1 for h in doc["hosts"] if h["status"] == "ok")
cpu = (usr + sys_) / wall * 100
print(f"{n} agents at {rate:.0f} IOPS each: {ok} ok, total {doc['summary']['total']['iops']:.0f} IOPS "
      f"(asked {n * rate:.0f}); controller CPU {usr + sys_:.2f} s over {wall:.1f} s = {cpu:.2f} % of one core "
      f"(target <= 5 %); totals shown {lag.group(1)} ms after their interval on average, "
      f"{lag.group(2)} ms at most (target: within one interval, 1000 ms)" if lag else "no lag line: " + err[-300:])
EOF
fi
