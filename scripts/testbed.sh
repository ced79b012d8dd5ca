#!/usr/bin/env bash
# The built-in test bed: two network namespaces joined by a veth pair,
#   <prefix>-a: <prefix>0 198.18.0.1/15  <->  <prefix>-b: <prefix>1 198.18.0.2/15
# plus reserved hugepages. Idempotent: `up` twice is fine, `down` leaves nothing behind.
#
#   scripts/testbed.sh up   [PREFIX]      create (default PREFIX=lr)
#   scripts/testbed.sh down [PREFIX]      remove namespaces, links, restore hugepages
#   scripts/testbed.sh exec a|b [PREFIX] -- CMD...   run CMD in a namespace with bpffs mounted
#   scripts/testbed.sh status [PREFIX]
#
# Environment: LINERATE_HUGEPAGES (2 MiB pages to reserve, default 1024), LINERATE_QUEUES
# (veth queues, default 1: a reflected frame then always returns on queue 0).
set -euo pipefail

cmd=${1:-}
shift || true
side=
if [[ $cmd == exec ]]; then side=${1:-}; shift || true; fi
prefix=lr
if [[ $# -gt 0 && $1 != "--" ]]; then prefix=$1; shift; fi
[[ $prefix =~ ^[a-z][a-z0-9]{0,5}$ ]] || { echo "testbed: prefix must be 1-6 lowercase letters/digits" >&2; exit 2; }
nsa=$prefix-a nsb=$prefix-b ifa=${prefix}0 ifb=${prefix}1
state=/run/linerate-testbed
hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
want_hp=${LINERATE_HUGEPAGES:-1024}
queues=${LINERATE_QUEUES:-1}

need_root() { [[ $(id -u) -eq 0 ]] || { echo "testbed: must run as root" >&2; exit 3; }; }

ns_exists() { ip netns list 2>/dev/null | awk '{print $1}' | grep -qx "$1"; }

up() {
    need_root
    mkdir -p "$state"
    # Hugepages: remember the old reservation once, never shrink someone else's.
    if [[ -w $hp ]]; then
        [[ -f $state/hugepages.prev ]] || cat "$hp" > "$state/hugepages.prev"
        cur=$(cat "$hp")
        if (( cur < want_hp )); then echo "$want_hp" > "$hp"; fi
        got=$(cat "$hp")
        (( got >= want_hp )) || echo "testbed: warning: only $got of $want_hp hugepages reserved" >&2
    fi
    for ns in "$nsa" "$nsb"; do ns_exists "$ns" || ip netns add "$ns"; done
    if ! ip -n "$nsa" link show "$ifa" >/dev/null 2>&1; then
        ip link add "$ifa" numtxqueues "$queues" numrxqueues "$queues" netns "$nsa" type veth \
            peer name "$ifb" numtxqueues "$queues" numrxqueues "$queues" netns "$nsb"
    fi
    for side in a b; do
        if [[ $side == a ]]; then ns=$nsa ifc=$ifa addr=198.18.0.1/15; else ns=$nsb ifc=$ifb addr=198.18.0.2/15; fi
        # No IPv6 autoconfiguration chatter (RS, MLD, DAD) on the test link.
        ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$ifc.disable_ipv6=1" || true
        ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1 || true
        ip -n "$ns" addr replace "$addr" dev "$ifc"
        ip -n "$ns" link set "$ifc" mtu 1500 up
        ip -n "$ns" link set lo up
    done
    echo "testbed $prefix up: $nsa/$ifa 198.18.0.1 <-> $nsb/$ifb 198.18.0.2, hugepages $(cat $hp 2>/dev/null || echo '?')"
}

down() {
    need_root
    for ns in "$nsa" "$nsb"; do
        if ns_exists "$ns"; then
            # Kill anything still running inside (a crashed run), then the namespace.
            pids=$(ip netns pids "$ns" 2>/dev/null || true)
            [[ -n $pids ]] && kill -9 $pids 2>/dev/null || true
            ip netns del "$ns"
        fi
    done
    ip link del "$ifa" 2>/dev/null || true
    # Hugepage files of crashed non-in-memory runs with our prefix.
    rm -f /dev/hugepages/linerate* 2>/dev/null || true
    # Restore the reservation only when no other test bed is still up.
    if [[ -f $state/hugepages.prev ]] && ! ip netns list | grep -q -- '-a\b\|-b\b'; then
        echo "$(cat "$state/hugepages.prev")" > "$hp" 2>/dev/null || true
        rm -f "$state/hugepages.prev"
    fi
    echo "testbed $prefix down"
}

run_in() {
    local side=$1; shift
    [[ ${1:-} == "--" ]] && shift
    local ns; if [[ $side == a ]]; then ns=$nsa; else ns=$nsb; fi
    ns_exists "$ns" || { echo "testbed: namespace $ns does not exist (run: $0 up $prefix)" >&2; exit 3; }
    exec ip netns exec "$ns" sh -c 'mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf; exec "$@"' sh "$@"
}

case $cmd in
    up) up ;;
    down) down ;;
    exec) [[ $side == a || $side == b ]] || { echo "testbed: exec needs a or b" >&2; exit 2; }
          run_in "$side" "$@" ;;
    status) ip netns list | grep -E "^$prefix-(a|b)\b" || echo "no namespaces"; cat "$hp" ;;
    *) echo "usage: $0 up|down|exec a|b|status [PREFIX] [-- CMD...]" >&2; exit 2 ;;
esac
