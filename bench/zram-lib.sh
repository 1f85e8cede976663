# Shared by the bench scripts: owning /dev/zram0 for a benchmark.
# Source it; it defines is_root, zram_in_use and zram_setup (which sets
# ZRAM_SET_UP=1 once zram0 is ours, so the caller's EXIT trap resets it).

is_root() { [[ $(id -u) -eq 0 ]]; }

zram_in_use() { # prints a reason and succeeds when zram0 is in use
    local dev=/dev/zram0 majmin
    majmin=$(cat /sys/block/zram0/dev 2>/dev/null || true)
    if grep -q '^/dev/zram0[[:space:]]' /proc/swaps 2>/dev/null; then
        echo "zram0 is in use as swap"; return 0
    fi
    if awk -v d="$dev" '$1 == d { f = 1 } END { exit !f }' /proc/mounts 2>/dev/null \
        || { [[ -n $majmin ]] && awk -v m="$majmin" '$3 == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }; then
        echo "zram0 is mounted"; return 0
    fi
    if [[ -n $(ls -A /sys/block/zram0/holders 2>/dev/null) ]]; then
        echo "zram0 has holders ($(ls /sys/block/zram0/holders | tr '\n' ' '))"; return 0
    fi
    local fd
    for fd in /proc/[0-9]*/fd/*; do
        if [[ $(readlink "$fd" 2>/dev/null) == "$dev" ]]; then
            local pid=${fd#/proc/}
            pid=${pid%%/*}
            echo "zram0 is open in process $pid ($(cat "/proc/$pid/comm" 2>/dev/null))"; return 0
        fi
    done
    return 1
}

# zram_setup — succeeds when zram0 is ready with 1 GiB of random data; else
# leaves the reason in ZRAM_WHY. Not run in a subshell: ZRAM_SET_UP must stick.
ZRAM_WHY=""
zram_setup() {
    if ! is_root; then ZRAM_WHY="not root"; return 1; fi
    if [[ ! -d /sys/block/zram0 ]]; then ZRAM_WHY="no /sys/block/zram0 (zram module not loaded?)"; return 1; fi
    if [[ ! -b /dev/zram0 ]]; then ZRAM_WHY="no block device node /dev/zram0"; return 1; fi
    local size why avail_kb
    size=$(cat /sys/block/zram0/disksize)
    if why=$(zram_in_use); then
        ZRAM_WHY="$why (disksize $size); not resetting it"; return 1
    fi
    avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
    if ((avail_kb < 3 * 1024 * 1024)); then
        ZRAM_WHY="only $((avail_kb / 1024)) MiB of memory available; 1 GiB of incompressible zram data needs more"
        return 1
    fi
    echo 1 >/sys/block/zram0/reset || { ZRAM_WHY="resetting zram0 failed (busy?)"; return 1; }
    ZRAM_SET_UP=1 # ours now: the EXIT trap resets it again
    echo 1G >/sys/block/zram0/disksize || { ZRAM_WHY="setting the zram0 disksize failed"; return 1; }
    # Real (incompressible) pages, so reads copy data instead of hitting zram's
    # zero-page shortcut.
    dd if=/dev/urandom of=/dev/zram0 bs=1M count=1024 oflag=direct status=none \
        || { ZRAM_WHY="filling zram0 failed"; return 1; }
    return 0
}

