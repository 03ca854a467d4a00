#!/usr/bin/env bash
# Adding workstations over a real ssh (issue 33): each host is a network
# namespace running its own sshd, with its own user and home (nothing
# shared with the master, which runs as root with the test's home).  The
# default-style hoststart "ssh %h %v" starts vmd there; `vmctl add` alone
# hands each host its certificate, key and the CA through the ssh session.
# Then a PVM program and a stencil job across the hosts, delete and re-add,
# and every failure of the way as its message.  Needs root, ip netns and
# sshd (make deps installs openssh-server); installs nothing itself.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || skip_all "needs root for ip netns and useradd"
command -v ip >/dev/null || skip_all "needs ip (iproute2)"
[ -x /usr/sbin/sshd ] || skip_all "needs sshd (openssh-server; make deps installs it)"
command -v ssh >/dev/null && command -v ssh-keygen >/dev/null || skip_all "needs ssh and ssh-keygen"
command -v useradd >/dev/null || skip_all "needs useradd"
BUILD=$(cd "$(dirname "$VMCTL")/.." && pwd)
[ -x "$BUILD/tests/integ/pvm_hostload" ] || skip_all "pvm_hostload is not built"

tag=$(( $$ % 10000 ))
br=lvsb$tag
net=10.232.$(( $$ % 200 + 1 ))
hosts=() users=() sshd_pids=()
cleanup_extra() {
    for p in "${sshd_pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    # The daemons the hosts' users run (found by their owner: users of this test).
    for u in "${users[@]}"; do
        for p in $(ps -u "$u" -o pid= 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    done
    for h in "${hosts[@]}"; do ip netns del "lvs$tag-$h" 2>/dev/null; done
    ip link del "$br" 2>/dev/null
    ip route del blackhole "$net.22/32" 2>/dev/null
    for u in "${users[@]}"; do userdel "$u" 2>/dev/null; done
    [ -n "${KEEP:-}" ] || rm -rf "$S"
}
ip netns add "lvsprobe$tag" 2>/dev/null || skip_all "ip netns add is not permitted here"
ip netns del "lvsprobe$tag"

# Everything the hosts' users run or read lives in $S, readable by all:
# the binaries at one path on every "host", as on real workstations.
S=$(mktemp -d /tmp/lvm-ssh.XXXXXX)
chmod 755 "$S"
mkdir -p "$S/b/bin" "$S/b/lib" "$S/b/tests/integ" "$S/u"
cp "$VMD" "$VMCTL" "$VMRUN" "$S/b/bin/"
cp -P "$BUILD"/lib/libpvm3.so* "$S/b/lib/"
cp "$BUILD/tests/integ/pvm_hostload" "$S/b/tests/integ/"
chmod -R a+rX "$S/b"
V=$S/b/bin/vmd
# An older vmd, as it answers options it does not know.
printf '#!/bin/sh\necho "vmd: unrecognized option '"'"'--master-version'"'"'" >&2\nexit 2\n' >"$S/b/bin/vmd-old"
chmod 755 "$S/b/bin/vmd-old"

ssh-keygen -q -t ed25519 -N "" -f "$S/id" || skip_all "ssh-keygen failed"
: >"$S/known_hosts"
: >"$S/ssh_config"
mkdir -p /run/sshd
ip link add "$br" type bridge && ip addr add "$net.1/24" dev "$br" && ip link set "$br" up ||
    skip_all "cannot create a bridge"

# ssh_host NAME IP USER: how the master's ssh reaches NAME; its host key is
# looked up under NAME.
ssh_host() {
    cat >>"$S/ssh_config" <<EOF
Host $1
    HostName $2
    HostKeyAlias $1
    User $3
    IdentityFile $S/id
    IdentitiesOnly yes
    UserKnownHostsFile $S/known_hosts
    GlobalKnownHostsFile /dev/null
    StrictHostKeyChecking yes
    BatchMode yes
    ConnectTimeout 5
EOF
}

# add_host NAME I [nosshd]: a namespace at $net.1I, a user with its own home, sshd.
add_host() {
    local h=$1 i=$2 ns=lvs$tag-$1 u=lvs${tag}u$2 ip=$net.1$2
    hosts+=("$h"); users+=("$u")
    netns_veth "$ns" "$br" "$ip/24" "lvs${tag}a$i" "lvs${tag}b$i"
    useradd -M -d "$S/u/$h" -s /bin/sh "$u" && usermod -p "*" "$u" || return 1
    mkdir -p "$S/u/$h/.ssh"
    cp "$S/id.pub" "$S/u/$h/.ssh/authorized_keys"
    chown -R "$u:" "$S/u/$h"; chmod 700 "$S/u/$h" "$S/u/$h/.ssh"
    ssh-keygen -q -t ed25519 -N "" -f "$S/hostkey_$h"
    echo "$h $(cut -d' ' -f1,2 "$S/hostkey_$h.pub")" >>"$S/known_hosts"
    ssh_host "$h" "$ip" "$u"
    [ "${3:-}" = nosshd ] && return 0
    cat >"$S/sshd_$h" <<EOF
ListenAddress $ip
HostKey $S/hostkey_$h
PidFile $S/sshd_$h.pid
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
UsePAM no
AllowUsers $u
EOF
    # In the foreground (-D) as our child, so its processes are reaped.
    ip netns exec "$ns" /usr/sbin/sshd -D -f "$S/sshd_$h" -E "$S/sshd_$h.log" &
    sshd_pids+=($!)
    wait_for 5 test -s "$S/sshd_$h.pid"
}
add_host ws1 1 && add_host ws2 2 && add_host ws3 3 nosshd || skip_all "cannot set up the ssh hosts"
# ws1-unknownkey reaches ws1's sshd, but its key is filed under ws1 only.
ssh_host ws1-unknownkey "$net.11" "lvs${tag}u1"

hostsconf() {
    echo "hosts = ("
    local sep=""
    for h in ws1 ws2 ws3 ws1-unknownkey; do
        printf '%s { name = "%s"; vmd = "%s"; home = "%s/u/%s/.liquidvm"; }\n' \
            "$sep" "$h" "$V" "$S" "${h%-unknownkey}"
        sep=","
    done
    echo ");"
}
# start_timeout 6 s: the adds that fail below wait it out (a daemon that is
# never reached, on both sides); ssh starts a daemon here in under a
# second.  The hosts' users may read the file (their daemons are given it;
# one they cannot read means the defaults, start_timeout 30 s).
START_TIMEOUT=6.0 write_conf 3.0 "hoststart = \"ssh -F $S/ssh_config %h %v\";
$(hostsconf)"
chmod 711 "$T" && chmod 644 "$T/test.conf"
check "vmctl ca init" "$VMCTL" ca init
check "start the master on the bridge address" \
    "$VMCTL" start --name lvsmaster$tag --listen "$net.1" -c "$T/test.conf"
check "vmctl add ws1 ws2 over ssh, nothing copied by hand" "$VMCTL" add ws1 ws2
check "conf lists 3 hosts" hosts_are 3
for i in 1 2; do
    check "ws$i listens on its own address $net.1$i" \
        bash -c '"$0" conf --json | grep -q "\"name\":\"$1\"[^}]*\"address\":\"$2:"' \
        "$VMCTL" "ws$i" "$net.1$i"
    check "ws$i's key came through ssh: its own user's, mode 600" bash -c \
        '[ "$(stat -c "%U %a" "$0/u/$1/.liquidvm/certs/$1.key")" = "$2 600" ] &&
         [ -s "$0/u/$1/.liquidvm/certs/ca.pem" ] && [ -s "$0/u/$1/.liquidvm/certs/$1.pem" ]' \
        "$S" "ws$i" "lvs${tag}u$i"
done
check "the daemons run as the hosts' own users" bash -c \
    'ps -u "$0" -o args= | grep -q "[v]md.*--name ws1" && ps -u "$1" -o args= | grep -q "[v]md.*--name ws2"' \
    "lvs${tag}u1" "lvs${tag}u2"
check "a PVM program sees every host's load (pvm_hostload)" "$S/b/tests/integ/pvm_hostload"
check "vmrun stencil --grid 32 --iters 10 --verify across the ssh hosts" bash -c '
    "$0" stencil --hosts lvsmaster$1,ws1,ws2 --grid 32 --iters 10 --verify --quiet \
        --probe-seconds 0.1 >"$2" 2>&1 && grep -q bit-identical "$2" || { cat "$2"; exit 1; }' \
    "$S/b/bin/vmrun" "$tag" "$T/stencil.out"
check "vmctl delete ws2" "$VMCTL" delete ws2
check "conf lists 2 hosts" hosts_are 2
check "re-add ws2 (its certificates are there now)" "$VMCTL" add ws2
check "conf lists 3 hosts again" hosts_are 3
check "vmctl delete ws2 again" "$VMCTL" delete ws2

no_daemon_named() { ! ps -eo args= | grep -q "^[^ ]*vmd .*--name '\\?$1'\\? "; }
# fails "what" "pattern" add-arguments...: the add fails, naming the host and step.
fails() {
    local what=$1 pat=$2; shift 2
    if "$VMCTL" add "$@" >"$T/add.out" 2>&1; then
        notok "$what: the add succeeded"; return
    fi
    # A daemon the master could not reach leaves within start_timeout; then
    # the same add again, for --json.
    wait_for 45 no_daemon_named "$1"
    if grep -q -- "$pat" "$T/add.out" && "$VMCTL" add --json "$@" 2>/dev/null |
        grep -q "\"error\":\"[^\"]*$pat"; then
        ok "$what: $(grep -m1 "vmctl: " "$T/add.out")"
    else
        notok "$what"; sed 's/^/#   /' "$T/add.out"
    fi
}
fails "ssh refused" "ssh to ws3: connection refused" ws3
fails "host key unknown" "ssh to ws1-unknownkey: the host key of ws1-unknownkey is unknown" \
    ws1-unknownkey
fails "vmd not found on the host" "start vmd on ws2: vmd not found at $S/b/bin/nowhere/vmd" \
    ws2 --vmd "$S/b/bin/nowhere/vmd"
# ssh joins its arguments and ws2's shell parses them again: a path with a
# character that shell would read is refused here, and nothing runs there.
rm -f /tmp/lvm-ssh-injected
fails "a spawn path the remote shell would read again" "holds a character the other host's shell" \
    ws2 --spawn-path '/opt/bin;touch /tmp/lvm-ssh-injected;'
check "... and nothing ran on ws2 (no injected file)" test ! -e /tmp/lvm-ssh-injected
fails "a different LiquidVM version" "start vmd on ws2: a different LiquidVM version there" \
    ws2 --vmd "$S/b/bin/vmd-old"

# The host's clock far off: by its clock, its certificate is not valid yet.
# (A certificate dated 2099 stands for a clock that is decades behind.)
C=$LIQUIDVM_HOME/certs
W=$S/u/ws2/.liquidvm/certs
mkdir -p "$S/ca/new" && : >"$S/ca/index" && echo 01 >"$S/ca/serial"
cat >"$S/ca/conf" <<EOF
[ca]
default_ca = c
[c]
database = $S/ca/index
new_certs_dir = $S/ca/new
serial = $S/ca/serial
default_md = sha256
policy = p
x509_extensions = e
[p]
commonName = supplied
[e]
subjectAltName = DNS:ws2
basicConstraints = CA:FALSE
extendedKeyUsage = serverAuth, clientAuth
EOF
mv "$W/ws2.pem" "$S/ws2.pem.good"
if openssl req -new -key "$W/ws2.key" -subj /CN=ws2 -out "$S/ws2.csr" 2>"$T/ssl.err" &&
    openssl ca -batch -config "$S/ca/conf" -cert "$C/ca.pem" -keyfile "$C/ca.key" \
        -startdate 20990101000000Z -enddate 20991231000000Z -in "$S/ws2.csr" \
        -out "$W/ws2.pem" >>"$T/ssl.err" 2>&1; then
    chown "lvs${tag}u2:" "$W/ws2.pem"
    fails "the host's clock far off" "start vmd on ws2: its clock is far off" ws2
else
    notok "make a certificate not yet valid"; sed 's/^/#   /' "$T/ssl.err"
fi
mv -f "$S/ws2.pem.good" "$W/ws2.pem"

# A port blocked: ws2's daemon listens on a second address, port 7411, and
# packets from the master to it vanish (as a dropping firewall does; a
# blackhole route, since this kernel may lack netfilter and tc actions).
ip -n "lvs$tag-ws2" addr add "$net.22/24" dev "lvs${tag}b2"
ip route add blackhole "$net.22/32"
fails "a port blocked" "connect to ws2: its daemon listens on $net.22:7411, but the master cannot reach that port" \
    ws2 --address "$net.22" --port 7411
ip route del blackhole "$net.22/32"
ws2_gone() { ! ps -u "lvs${tag}u2" -o args= | grep -q "[v]md"; }
check "the daemon the master never reached leaves ws2 within its start_timeout" wait_for 45 ws2_gone
check "after all that, ws2 is added again" "$VMCTL" add ws2
check "conf lists 3 hosts" hosts_are 3
check "halt" "$VMCTL" halt
check "no vmd of the hosts' users is left" wait_for 15 bash -c \
    '! ps -u "$0" -o args= | grep -q "[v]md" && ! ps -u "$1" -o args= | grep -q "[v]md"' \
    "lvs${tag}u1" "lvs${tag}u2"
