#!/usr/bin/env bash
# bench/pvm_floor_ab.sh - LiquidVM's direct route between two hosts against
# the TLS floor, interleaved, for one or more builds of bench/pvm_timing
# (issue 31, "between hosts"): one VM on two network-namespace hosts
# (bench/realpvm.sh), then ROUNDS rounds of: each BIN with PvmRouteDirect
# (the master on the first host, its slave on the second), then the bare
# TLS ping-pong (bench/pvm_timing_floor, 128 KB writes, 64 KB read-ahead,
# as bench/pvm_timing.sh runs it).  Prints, per size, each column's median
# over the rounds and the median of its per-round ratio to the floor of the
# same round (the load drifts between rounds, not within one).
#
#   bench/pvm_floor_ab.sh [-r REPS] [-k ROUNDS] [BIN...]
#
# BIN defaults to build/bench/pvm_timing.  To compare library builds, copy
# each build's bench/pvm_timing under its own name (the slave is spawned
# by that name) beside a lib/ holding its libpvm3.so.3:
#   mkdir -p /tmp/old/bench /tmp/old/lib
#   cp build/bench/pvm_timing /tmp/old/bench/pvm_timing_old
#   cp -L build/lib/libpvm3.so.3 /tmp/old/lib/
# Needs root (namespaces); exit status 77 without them, 1 on failure.
set -u
cd "$(dirname "$0")/.." || exit 2
reps=1000 rounds=5
while [ $# -gt 0 ]; do
    case $1 in
    -r) reps=${2:-}; shift 2 ;;
    -k) rounds=${2:-}; shift 2 ;;
    -*) echo "usage: bench/pvm_floor_ab.sh [-r REPS] [-k ROUNDS] [BIN...]" >&2; exit 2 ;;
    *) break ;;
    esac
done
[[ $reps =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]] ||
    { echo "pvm_floor_ab.sh: -r and -k need positive numbers" >&2; exit 2; }
B=$(pwd)/build
BINS=("$@")
[ ${#BINS[@]} -gt 0 ] || BINS=("$B/bench/pvm_timing")
VMCTL=$B/bin/vmctl PTF=$B/bench/pvm_timing_floor R=$(pwd)/bench/realpvm.sh
for f in "$VMCTL" "$PTF" "${BINS[@]}"; do
    [ -x "$f" ] || { echo "pvm_floor_ab.sh: $f is not built" >&2; exit 1; }
done
T=$(mktemp -d /tmp/lvm-floorab.XXXXXX)
export LIQUIDVM_HOME=$T/home REALPVM_PREFIX=lvfab$(($$ % 1000))
RES=$T/res
mkdir -p "$RES"
cleanup() {
    "$VMCTL" halt >/dev/null 2>&1
    "$R" down >/dev/null 2>&1
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
say() { echo "pvm_floor_ab: $*" >&2; }

"$R" up 2 >"$T/up.out" 2>&1
case $? in
0) ;;
77) say "no network namespaces: $(cat "$T/up.out")"; exit 77 ;;
*) cat "$T/up.out" >&2; exit 1 ;;
esac
H1=${REALPVM_PREFIX}1 H2=${REALPVM_PREFIX}2
path=
for b in "${BINS[@]}"; do path="$path\"$(cd "$(dirname "$b")" && pwd)\", "; done
printf 'spawn_path = [ %s"%s" ];\nhoststart = "REALPVM_PREFIX=%s %s exec %%h %%v";\n' \
    "$path" "$B/bench" "$REALPVM_PREFIX" "$R" >"$T/ns.conf"
"$R" exec "$H1" "$VMCTL" start --name "$H1" --listen "$("$R" ip "$H1")" -c "$T/ns.conf" \
    >"$T/start.out" 2>&1 && "$R" exec "$H1" "$VMCTL" add "$H2" >>"$T/start.out" 2>&1 ||
    { cat "$T/start.out" >&2; exit 1; }
C=$LIQUIDVM_HOME/certs port=$((30000 + $$ % 20000))
say "load before: $(cat /proc/loadavg)"
for ((k = 1; k <= rounds; k++)); do
    i=0
    for b in "${BINS[@]}"; do
        LIQUIDVM_HOST=$H1 "$R" exec "$H1" "$b" -H "$H2" -r "$reps" -d --json \
            >"$RES/r$k.v$i.json" || { say "$b failed"; exit 1; }
        i=$((i + 1))
    done
    timeout 600 "$R" exec "$H2" "$PTF" -s -t "$C/ca.pem" "$C/$H2.pem" "$C/$H2.key" \
        -W 131072 -A 65536 "$("$R" ip "$H2")" $port &
    srv=$!
    "$R" exec "$H1" "$PTF" -c -t "$C/ca.pem" "$C/$H1.pem" "$C/$H1.key" -W 131072 -A 65536 \
        -r "$reps" -C 20 --json "$("$R" ip "$H2")" $port >"$RES/r$k.floor.json" ||
        { say "floor failed"; exit 1; }
    wait $srv
    port=$((port + 1))
    say "round $k of $rounds, load $(cut -d' ' -f1 /proc/loadavg)"
done
say "load after: $(cat /proc/loadavg)"
perl - "$RES" "$rounds" "$reps" "${BINS[@]}" <<'PERL'
use strict; use warnings;
my ($dir, $rounds, $reps, @bins) = @ARGV;
my @cols = ((map { "v$_" } 0 .. $#bins), 'floor');
my %v;
for my $c (@cols) {
    for my $k (1 .. $rounds) {
        open my $fh, '<', "$dir/r$k.$c.json" or next;
        my $line = <$fh>;
        while ($line =~ /\{"bytes":(\d+),"median_us":([\d.]+)/g) { $v{$c}{$1}[$k - 1] = $2; }
    }
}
sub med { my @a = sort { $a <=> $b } grep { defined } @_; return undef unless @a; my $n = @a;
          return $n % 2 ? $a[$n / 2] : ($a[$n / 2 - 1] + $a[$n / 2]) / 2; }
print "Direct round trips between two namespace hosts (N bytes, 4-byte reply), microseconds:\n";
print "median over $rounds interleaved rounds of the median of $reps round trips;\n";
print "x: median of the per-round ratio to the TLS floor of the same round\n";
printf "  v%d = %s\n", $_, $bins[$_] for 0 .. $#bins;
printf "\n%-9s" . (" %16s" x @cols) . "\n", 'bytes', map { $_ eq 'floor' ? 'TLS floor' : "LVM $_" } @cols;
for my $n (4, 100, 1000, 10000, 100000, 1000000) {
    printf "%-9s", $n;
    for my $c (@cols) {
        my @r = map { $v{$c}{$n}[$_] && $v{floor}{$n}[$_] ? $v{$c}{$n}[$_] / $v{floor}{$n}[$_] : undef }
                0 .. $rounds - 1;
        my ($m, $x) = (med(@{ $v{$c}{$n} // [] }), med(@r));
        printf " %16s", defined $m ? sprintf('%.1f (%.2fx)', $m, $x // 0) : '-';
    }
    print "\n";
}
print "\nper round:\n";
for my $n (4, 1000000) {
    printf "%-9s %s\n", $n, join('  ', map { my $c = $_; "$c " . join(',', map { $_ // '-' } @{ $v{$c}{$n} // [] }) } @cols);
}
PERL
