#!/usr/bin/env bash
# Errors that say what happened (issue 30, item 5): a failed connect() to
# the local socket says which of no socket, connection refused (a socket a
# dead daemon left) or permission denied it was, in words, from vmctl and
# from libpvm3; vmctl status still calls a stale socket "not running";
# --host naming no daemon of a running VM says that; a daemon socket of
# another user (SO_PEERCRED) is refused before anything is sent to it.
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

# A "daemon" of another user listening where ours should be (a home it
# made first): vmctl and a PVM program refuse it and send it nothing.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    F=$T/fakehome
    mkdir -p "$F/run" && chown -R 65534:65534 "$F" && chmod 711 "$T"
    printf 'host0\n4242\n' >"$F/run/master" && chown 65534:65534 "$F/run/master"
    setpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8)
c = open(sys.argv[2], "wb")
s.settimeout(20)
try:
    while True:
        a, _ = s.accept(); a.settimeout(1)
        try:
            while True:
                d = a.recv(65536)
                if not d: break
                c.write(d); c.flush()
        except Exception: pass
except Exception: pass' "$F/run/host0.sock" "$F/stranger.got" &
    FAKE=$!
    wait_for 5 test -S "$F/run/host0.sock"
    check "another user's daemon socket: vmctl says so and sends nothing" bash -c '
        ! LIQUIDVM_HOME="$1" "$0" put secret_name "a secret" 2>"$2" &&
        grep -q "runs as another user" "$2" && [ ! -s "$3" ]' "$VMCTL" "$F" "$T/err" "$F/stranger.got"
    check "... and a PVM program too" bash -c '
        ! LIQUIDVM_HOME="$1" "$0" 2>"$2"; grep -q "runs as another user" "$2" && [ ! -s "$3" ]' \
        "$B/tests/integ/pvm_hostload" "$F" "$T/err" "$F/stranger.got"
    kill "$FAKE" 2>/dev/null
    chmod 700 "$T"
else
    echo "# SKIP a stranger's daemon socket: needs root and setpriv"
fi

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
