#!/usr/bin/env bash
# Refusals at the TLS port (issue 2 acceptance): a client without a
# certificate, one from another CA, one whose certificate names a host not
# in the table, one naming a member but with another key of the same CA,
# plain bytes, and malformed or oversized frames from an authenticated peer.  Each is refused or closed, and the daemon goes on
# serving its peers.
. "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || skip_all "the openssl command is missing"
write_conf 1.5
C=$LIQUIDVM_HOME/certs

check "start a local VM of 3 hosts" "$VMCTL" start --local 3 -c "$T/test.conf"
port=$("$VMCTL" conf --json | sed -n 's/.*"name":"host0"[^}]*"address":"127.0.0.1:\([0-9]*\)".*/\1/p')
check "the master's port is known" test -n "$port"
LOG=$LIQUIDVM_HOME/logs/host0.log

# poke OUTFILE [s_client args...] < bytes: a TLS client that sends stdin.
poke() {
    local out=$1; shift
    timeout 10 openssl s_client -connect "127.0.0.1:$port" -tls1_3 -quiet -CAfile "$C/ca.pem" \
        "$@" >"$out" 2>&1
}
log_has() { grep -q "$1" "$LOG"; }
still_serving() { hosts_are 3 && "$VMCTL" --host host1 status >/dev/null; }

printf 'hello\n' | poke "$T/nocert.out"
check "a client without a certificate is refused" wait_for 3 log_has "sent no certificate"
check "the daemon still serves after it" still_serving

"$VMCTL" --home "$T/other" ca init >/dev/null && "$VMCTL" --home "$T/other" cert issue host2 >/dev/null
printf 'hello\n' | poke "$T/otherca.out" -cert "$T/other/certs/host2.pem" -key "$T/other/certs/host2.key"
check "a certificate from another CA is refused" wait_for 3 log_has "not issued by the cluster CA"
check "the daemon still serves after it" still_serving

"$VMCTL" cert issue intruder >/dev/null
printf 'hello\n' | poke "$T/intruder.out" -cert "$C/intruder.pem" -key "$C/intruder.key"
check "a certificate naming a host not in the table is refused" \
    wait_for 3 log_has "certificate name intruder is not in the host table"
check "the daemon still serves after it" still_serving

# The cluster's own CA and a member's name, but another key (the CA issued
# the name again): not the certificate host2 announced.
mkdir -p "$T/dup" && cp -r "$C" "$T/dup/certs" && chmod 700 "$T/dup" &&
    "$VMCTL" --home "$T/dup" cert issue host2 --force >/dev/null
printf 'hello\n' | poke "$T/dupkey.out" -cert "$T/dup/certs/host2.pem" -key "$T/dup/certs/host2.key"
check "a member's name with another key from the same CA is refused" \
    wait_for 3 log_has "peer host2 .*its certificate is not the one that host announced"
check "the daemon still serves after it" still_serving

exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET / HTTP/1.0\r\n\r\n' >&3
timeout 5 cat <&3 >/dev/null
exec 3<&-
check "plain bytes that are not TLS are refused" wait_for 3 log_has "does not speak TLS\|TLS refused"
check "the daemon still serves after it" still_serving

# Authenticated as host2 (a real member), then bad frames before any HELLO.
frame() { # magic version type len(hex8) -> a 32-byte header
    printf "$1$2$3"
    printf "\\x${4:0:2}\\x${4:2:2}\\x${4:4:2}\\x${4:6:2}"
    head -c 24 /dev/zero
}
auth=(-cert "$C/host2.pem" -key "$C/host2.key")
frame '\x4c\x56' '\x01' '\x01' 'fffffff0' | poke "$T/big.out" "${auth[@]}"
check "an oversized frame from an authenticated peer closes that link" \
    wait_for 3 log_has "announced a frame above max_message"
frame '\x00\x00' '\x01' '\x01' '00000000' | poke "$T/magic.out" "${auth[@]}"
check "a frame with a bad magic closes that link" wait_for 3 log_has "sent a malformed frame header"
{ frame '\x4c\x56' '\x01' '\x01' '00000008'; printf '\x00\x00\x00\x01\xff\xff\xff\xff'; } |
    poke "$T/hello.out" "${auth[@]}"
check "a malformed HELLO closes that link" wait_for 3 log_has "sent a bad frame"
{ frame '\x4c\x56' '\x07' '\x01' '00000000'; } | poke "$T/version.out" "${auth[@]}"
check "another protocol version closes that link" wait_for 3 log_has "protocol version mismatch"
check "host2's own link was not disturbed: 3 hosts, still after host_timeout" \
    bash -c 'sleep 2; [ "$("$0" conf --json | grep -o "\"state\":\"up\"" | wc -l)" = 3 ]' "$VMCTL"
check "the VM still works: add host3" "$VMCTL" add host3
check "halt" "$VMCTL" halt
check "no vmd process is left" wait_for 5 vmd_count_is 0

# A joining daemon told another certificate for its master (hoststart's
# --master-fingerprint) refuses the master's link; the add fails, naming
# the link, and the master lives on (it once freed the host twice).
zero=$(printf '0%.0s' $(seq 64))
"$VMD" --home "$LIQUIDVM_HOME" --name host0 --listen 127.0.0.1 -c "$T/test.conf" \
    --hoststart "%v --listen 127.0.0.1 --master-fingerprint $zero" --daemon >/dev/null
check "a master whose hoststart names another master certificate: the add fails" bash -c \
    '! "$0" add host1 2>"$1" && grep -q "host1: .*the link to its daemon failed" "$1"' \
    "$VMCTL" "$T/pin.err"
check "... the joiner refused the master's certificate" \
    wait_for 3 grep -q "peer host0 .*its certificate is not the one that host announced" \
    "$LIQUIDVM_HOME/logs/host1.log"
check "... and the master lives on" bash -c \
    '"$0" status | grep -q "master host0, 1 host"' "$VMCTL"
check "halt" "$VMCTL" halt
# The joiner the master never reached leaves within its start_timeout (10 s).
check "no vmd process is left" wait_for 15 vmd_count_is 0
