# Sourced by every integration test: a fresh LIQUIDVM_HOME in a temp
# directory, TAP-style results ("ok N - what", "not ok N - what",
# "# SKIP why"), and a cleanup that halts the VM and kills any daemon of
# this test that is left.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/netns.sh"
VMD=${VMD:-$(pwd)/build/bin/vmd}
VMCTL=${VMCTL:-$(pwd)/build/bin/vmctl}
VMRUN=${VMRUN:-$(pwd)/build/bin/vmrun}
# The example programs of liquid.h (examples/), built beside the binaries.
EXAMPLES=${EXAMPLES:-$(cd "$(dirname "$VMCTL")/.." 2>/dev/null && pwd)/examples}
T=$(mktemp -d /tmp/lvm-test.XXXXXX)
export LIQUIDVM_HOME=$T/home
unset LIQUIDVM_HOST
_n=0

ok() { _n=$((_n + 1)); echo "ok $_n - $*"; }
_failed=0
notok() { _n=$((_n + 1)); _failed=$((_failed + 1)); echo "not ok $_n - $*"; }

# check "what" command...: ok if the command succeeds; its output is shown if not.
check() {
    local what=$1; shift
    if "$@" >"$T/out" 2>&1; then ok "$what"; else notok "$what"; sed 's/^/#   /' "$T/out" | tail -25; return 1; fi
}

# Skip the whole script (missing root, ip netns, ...).
skip_all() { echo "# SKIP $(basename "$0"): $*"; exit 0; }
# sanitized BINARY: it is of the sanitizer build (make check's second pass).
sanitized() { nm "$1" 2>/dev/null | grep -q __asan_init; }

# Daemons of this test that are alive (zombies excluded), one pid a line.
vmd_pids() {
    ps -eo pid=,stat=,args= | awk -v h="--home $LIQUIDVM_HOME" \
        '$2 !~ /^Z/ && index($0, h) && $3 ~ /vmd$/ { print $1 }'
}
vmd_count() { vmd_pids | wc -l; }
# For wait_for, which must re-count on every try.
vmd_count_is() { [ "$(vmd_count)" = "$1" ]; }
# The pid of this test's daemon named $1.
vmd_pid_of() {
    ps -eo pid=,stat=,args= | awk -v h="--home $LIQUIDVM_HOME" -v n="$1" \
        '$2 !~ /^Z/ && $3 ~ /vmd$/ && index($0, h) {
             for (i = 4; i < NF; i++) if ($i == "--name" && $(i + 1) == n) print $1 }'
}

# wait_for SECONDS command...: poll every 50 ms until the command succeeds.
# (Microseconds: with whole SECONDS, "wait_for 1" could give up after 10 ms.)
wait_for() {
    local limit=$1; shift
    local end=$((${EPOCHREALTIME//[.,]/} + limit * 1000000))
    while ! "$@" >/dev/null 2>&1; do
        [ "${EPOCHREALTIME//[.,]/}" -lt $end ] || return 1
        sleep 0.05
    done
}

# The number of hosts `vmctl conf --json` lists.
host_count() { "$VMCTL" conf --json | grep -o '"name":' | wc -l; }
hosts_are() { [ "$(host_count)" = "$1" ]; }

# A test configuration with short timers, so failures show within seconds.
write_conf() {
    cat >"$T/test.conf" <<CONF
heartbeat = 0.2;
host_timeout = ${1:-1.5};
start_timeout = ${START_TIMEOUT:-10.0};
log = { level = "debug"; file = "logs/%h.log"; };
${2:-}
CONF
}

_cleanup() {
    # On a failure, show the daemons' last words and what is still running.
    if [ "$_failed" -gt 0 ]; then
        for f in "$LIQUIDVM_HOME"/logs/*.log; do
            [ -f "$f" ] || continue
            echo "# --- $(basename "$f") (warnings, then the last lines)"
            grep -E " (warn|error) " "$f" | tail -10 | sed 's/^/#   /'
            tail -30 "$f" | sed 's/^/#   /'
        done
        ps -eo pid=,stat=,args= | grep "[v]md.*$LIQUIDVM_HOME" | sed 's/^/#   running: /'
    fi
    "$VMCTL" halt >/dev/null 2>&1
    local pids
    pids=$(vmd_pids)
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null
    [ -n "${KEEP:-}" ] || rm -rf "$T"
    type cleanup_extra >/dev/null 2>&1 && cleanup_extra
    _netns_cleanup
    return 0
}
trap _cleanup EXIT

# netns_hosts NAME N: N network namespaces NAME$tag-1 .. NAME$tag-N (in the
# array hosts), each with a veth on a bridge ($br, address $net.1) and the
# address $net.1I, removed at exit; skips the test where root, ip netns or
# a bridge are missing.  $tag keeps runs of different tests apart.
tag=$(( $$ % 10000 ))
_nn_hosts=()
_nn_br=
_netns_cleanup() {
    local h
    for h in "${_nn_hosts[@]}"; do ip netns del "$h" 2>/dev/null; done
    [ -z "$_nn_br" ] || ip link del "$_nn_br" 2>/dev/null
    return 0
}
netns_hosts() {
    local name=$1 n=$2 i h
    [ "$(id -u)" = 0 ] || skip_all "needs root for ip netns"
    command -v ip >/dev/null || skip_all "needs ip (iproute2)"
    ip netns add "${name}probe$tag" 2>/dev/null || skip_all "ip netns add is not permitted here"
    ip netns del "${name}probe$tag"
    br=${name}br$tag
    _nn_br=$br
    hosts=()
    net=10.$(( 230 + $(printf '%s' "$name" | cksum | cut -c1) % 20 )).$(( $$ % 200 + 1 ))
    ip link add "$br" type bridge && ip addr add "$net.1/24" dev "$br" && ip link set "$br" up ||
        skip_all "cannot create a bridge"
    for i in $(seq "$n"); do
        h=$name$tag-$i
        hosts+=("$h")
        _nn_hosts+=("$h")
        netns_veth "$h" "$br" "$net.1$i/24" "${name}${tag}a$i" "${name}${tag}b$i"
    done
}
