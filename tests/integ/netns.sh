# Sourced by tests/integ/lib.sh and the benchmarks that run hosts in
# network namespaces (bench/farm.sh, bench/vmrun.sh).
#
# netns_veth NS BRIDGE ADDR/LEN IFA IFB: a network namespace NS whose
# interface IFB (at ADDR) is one end of a veth pair; the other end, IFA,
# is a port of BRIDGE. Loopback is up in NS. Fails at the first step that
# fails.
netns_veth() {
    ip netns add "$1" &&
        ip link add "$4" type veth peer name "$5" &&
        ip link set "$5" netns "$1" &&
        ip link set "$4" master "$2" up &&
        ip -n "$1" addr add "$3" dev "$5" &&
        ip -n "$1" link set "$5" up &&
        ip -n "$1" link set lo up
}
