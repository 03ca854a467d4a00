#!/usr/bin/env bash
# bench/start_cost.sh - what starting a process costs: vmrun and
# examples/heat3d (every worker of a job is one of them) beside three
# floors built here from the same few lines of C, which print their own
# resident memory: linked with nothing, with what a worker needs (libssl,
# libcrypto, libuv, libconfig, libm), and with that plus HDF5 and libpng
# (what a worker loaded while libliquid linked them).  For each: the
# median wall time of `--help` (or of the floor's run) over R runs in
# turn, and the resident memory at main (the floors) or after --help
# (VmHWM of vmrun and heat3d, read by running them under a wrapper).
#
#   bench/start_cost.sh [--build DIR] [--runs R]
#
# Exit: 0, 2 on bad options or a missing build.
set -u
build=build
runs=50
while [ $# -gt 0 ]; do
    case $1 in
    --build) build=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --help) sed -n 2,15p "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bench/start_cost.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case $runs in '' | *[!0-9]* | 0) echo "bench/start_cost.sh: --runs wants a count" >&2; exit 2 ;; esac
cd "$(dirname "$0")/.." || exit 2
for b in "$build/bin/vmrun" "$build/examples/heat3d"; do
    [ -x "$b" ] || { echo "bench/start_cost.sh: $b is missing; run make" >&2; exit 2; }
done
T=$(mktemp -d /tmp/lvm-start.XXXXXX)
trap 'rm -rf "$T"' EXIT

# The floor: its resident memory at main, as the kernel counts it.
cat >"$T/floor.c" <<'C'
#include <stdio.h>
#include <string.h>
int main(void)
{
    char l[256];
    FILE *f = fopen("/proc/self/status", "r");

    while (f != NULL && fgets(l, sizeof(l), f) != NULL)
        if (strncmp(l, "VmRSS:", 6) == 0)
            fputs(l + 6, stdout);
    return 0;
}
C
H5LIBS=$(pkg-config --libs hdf5 libpng 2>/dev/null ||
         echo "-L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5_serial -lpng")
cc -O2 -o "$T/bare" "$T/floor.c" || exit 2
cc -O2 -o "$T/tls" "$T/floor.c" -Wl,--no-as-needed -lssl -lcrypto -luv -lconfig -lm || exit 2
cc -O2 -o "$T/tls_h5" "$T/floor.c" -Wl,--no-as-needed -lssl -lcrypto -luv -lconfig -lm \
    $H5LIBS || exit 2

# rss_of CMD...: VmHWM (kB) of CMD run to its end (GNU time's %M).
rss_of() {
    if command -v /usr/bin/time >/dev/null; then
        /usr/bin/time -f %M -o "$T/m" "$@" >/dev/null 2>&1
        cat "$T/m"
    else
        echo "-"
    fi
}
names=("floor: libc only" "floor: + libssl, libcrypto, libuv, libconfig" \
       "floor: + HDF5 and libpng" "vmrun --help" "heat3d --help")
cmds=("$T/bare" "$T/tls" "$T/tls_h5" "$build/bin/vmrun --help" "$build/examples/heat3d --help")
for i in "${!cmds[@]}"; do : >"$T/t.$i"; done
echo "   ... $runs runs of each, in turn" >&2
for r in $(seq 1 "$runs"); do
    for i in "${!cmds[@]}"; do
        t0=$EPOCHREALTIME
        ${cmds[$i]} >/dev/null 2>&1
        t1=$EPOCHREALTIME
        echo "$t0 $t1" >>"$T/t.$i"
    done
done
printf '%-46s %14s %12s %10s\n' program "median start" "spread" "rss MB"
for i in "${!cmds[@]}"; do
    kb=$(rss_of ${cmds[$i]})
    python3 - "$T/t.$i" "${names[$i]}" "$kb" <<'EOF'
import statistics, sys
t = sorted((float(b) - float(a)) * 1e3 for a, b in (l.split() for l in open(sys.argv[1])))
kb = sys.argv[3]
rss = "-" if not kb.isdigit() else "%.1f" % (int(kb) / 1024)
print("%-46s %11.2f ms %6.2f-%.2f %10s" % (sys.argv[2], statistics.median(t), t[len(t) // 10],
                                           t[len(t) * 9 // 10], rss))
EOF
done
echo "(spread: 10th-90th percentile, ms; rss: peak resident memory, GNU time's %M)"
