#!/usr/bin/env bash
# A wrong configuration file: every error as "file:line: key: ...", exit 2,
# from vmd and from vmctl start; nothing is left running.
. "$(dirname "$0")/lib.sh"
printf 'heartbeat = "fast";\nlisten = { port = 70000; };\ncolour = 1;\n' >"$T/bad.conf"

"$VMD" --home "$LIQUIDVM_HOME" -c "$T/bad.conf" >"$T/vmd.out" 2>&1
check "vmd -c bad.conf exits 2" test $? = 2
check "it names file, line and key of the bad number" grep -q "bad.conf:1: heartbeat: expected a number" "$T/vmd.out"
check "it reports the port out of range" grep -q "bad.conf:2: listen.port: expected an integer 0..65535" "$T/vmd.out"
check "it reports the unknown key" grep -q "bad.conf:3: colour: unknown key" "$T/vmd.out"
"$VMCTL" start -c "$T/bad.conf" >"$T/vmctl.out" 2>&1
check "vmctl start -c bad.conf exits 2" test $? = 2
check "vmctl prints the same lines" grep -q "bad.conf:3: colour: unknown key" "$T/vmctl.out"
"$VMCTL" start -c "$T/missing.conf" >"$T/missing.out" 2>&1
check "a missing configuration file is an error, not a crash" test $? -ne 0 -a $? -lt 128
check "no daemon was left running" test "$(vmd_count)" = 0
# A file someone else could have written says what the daemon runs: refused.
printf 'heartbeat = 1.0;\n' >"$T/shared.conf" && chmod 666 "$T/shared.conf"
"$VMD" --home "$LIQUIDVM_HOME" -c "$T/shared.conf" >"$T/vmd.out" 2>&1
check "vmd -c of a file writable by every user exits 2, saying so" bash -c \
    '[ "$0" = 2 ] && grep -q "shared.conf: writable by every user; refusing" "$1"' \
    $? "$T/vmd.out"
if [ "$(id -u)" = 0 ]; then
    chmod 644 "$T/shared.conf" && chown 65534 "$T/shared.conf"
    "$VMD" --home "$LIQUIDVM_HOME" -c "$T/shared.conf" >"$T/vmd.out" 2>&1
    check "vmd -c of another user's file exits 2, saying so" bash -c \
        '[ "$0" = 2 ] && grep -q "shared.conf: owned by another user; refusing" "$1"' \
        $? "$T/vmd.out"
else
    echo "# SKIP another user's configuration file: needs root to make one"
fi
"$VMD" --home "$LIQUIDVM_HOME" --listen 1.2.3:99999 >/dev/null 2>&1
check "vmd --listen with a bad address exits 2" test $? = 2
"$VMCTL" start --local 0 >/dev/null 2>&1
check "vmctl start --local 0 exits 2" test $? = 2
"$VMCTL" add 'bad;name' >/dev/null 2>&1
check "vmctl add with a bad host name exits 2" test $? = 2
