#!/usr/bin/env bash
# Errors that say what happened (issue 30, item 5): a failed connect() to
# the local socket says which of no socket, connection refused (a socket a
# dead daemon left) or permission denied it was, in words, from vmctl and
# from libpvm3; vmctl status still calls a stale socket "not running";
# --host naming no daemon of a running VM says that.
. "$(dirname "$0")/lib.sh"
B=$(cd "$(dirname "$VMCTL")/.." && pwd)
command -v python3 >/dev/null || skip_all "python3 is missing"

check "no home: conf says no virtual machine is running" bash -c \
    '! "$0" conf 2>"$1" && grep -q "no virtual machine is running in" "$1"' "$VMCTL" "$T/err"

# A socket file with nobody listening, named by run/master, as a daemon
# killed with -9 leaves them.
mkdir -p "$LIQUIDVM_HOME/run" && chmod 700 "$LIQUIDVM_HOME" "$LIQUIDVM_HOME/run"
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' \
    "$LIQUIDVM_HOME/run/host0.sock"
printf 'host0\n4242\n' >"$LIQUIDVM_HOME/run/master"
check "stale socket: conf says connection refused, in words" bash -c \
    '! "$0" conf 2>"$1" && grep -q "connection refused: a socket is there but no daemon listens" "$1"' \
    "$VMCTL" "$T/err"
check "stale socket: --host names it, and it says the same" bash -c \
    '! "$0" --host host0 conf 2>"$1" && grep -q "connection refused" "$1"' "$VMCTL" "$T/err"
check "stale socket: status says not running, exit 1" bash -c \
    '"$0" status >"$1" 2>&1; [ $? = 1 ] && grep -q "no virtual machine is running" "$1"' \
    "$VMCTL" "$T/err"
check "stale socket: a PVM program says connection refused" bash -c \
    '! "$0" 2>"$1"; grep -q "cannot reach the daemon: connection refused" "$1"' \
    "$B/tests/integ/pvm_hostload" "$T/err"
rm -f "$LIQUIDVM_HOME/run/master" "$LIQUIDVM_HOME/run/host0.sock"

write_conf
check "start a local VM" "$VMCTL" start --local 1 -c "$T/test.conf"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    chmod 711 "$T"      # nobody may pass through to the home, not into run/
else
    as_nobody() { "$@"; }
    chmod 000 "$LIQUIDVM_HOME/run"
fi
export -f as_nobody
check "another user: conf says permission denied, in words" bash -c \
    '! as_nobody env LIQUIDVM_HOME="$1" "$0" conf 2>"$2"; grep -q "permission denied on the daemon.s socket" "$2"' \
    "$VMCTL" "$LIQUIDVM_HOME" "$T/err"
check "another user: a PVM program says permission denied" bash -c \
    '! as_nobody env LIQUIDVM_HOME="$1" "$0" 2>"$2"; grep -q "cannot reach the daemon: permission denied" "$2"' \
    "$B/tests/integ/pvm_hostload" "$LIQUIDVM_HOME" "$T/err"
chmod 700 "$T" "$LIQUIDVM_HOME/run" 2>/dev/null
check "the owner still reaches it" "$VMCTL" conf
check "--host with no such daemon: says so (not that no VM runs), in text and JSON, exit 1" bash -c \
    '"$0" --host host9 ps 2>"$1"; [ $? = 1 ] &&
     grep -q "host9 is not a daemon of this virtual machine on this machine" "$1" &&
     ! grep -q "no virtual machine is running" "$1" &&
     "$0" --json --host host9 conf >"$1"; [ $? = 1 ] &&
     grep -q "\"code\":\"WIRE_ENOHOST\"" "$1" && grep -q "host9 is not a daemon" "$1"' \
    "$VMCTL" "$T/err"
check "LIQUIDVM_HOST likewise" bash -c \
    '! LIQUIDVM_HOST=host9 "$0" groups 2>"$1" && grep -q "host9 is not a daemon" "$1"' "$VMCTL" "$T/err"
check "halt" "$VMCTL" halt
[ "$_failed" = 0 ]
