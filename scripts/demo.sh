#!/usr/bin/env bash
# The main job on the built-in default test bed: installs dependencies, builds, brings up the
# veth pair in two namespaces (198.18.0.1 <-> 198.18.0.2, hugepages reserved), then sends
# 64-byte UDP frames from namespace lr-a and counts them in namespace lr-b, prints the rates,
# compares them with the kernel's own counter, and tears the bed down.
#
#   scripts/demo.sh [--backend afxdp|dpdk] [SECONDS] [extra `linerate run` options for the sender]
#
# afxdp (default): AF_XDP sockets and linerate's own XDP program, no DPDK.
# dpdk: the same through DPDK's net_af_xdp PMD.
set -euo pipefail
cd "$(dirname "$0")/.."
backend=afxdp
if [[ ${1:-} == --backend ]]; then backend=$2; shift 2; fi
[[ $backend == afxdp || $backend == dpdk ]] || { echo "demo: --backend afxdp or dpdk" >&2; exit 2; }
secs=${1:-5}
shift || true
bash scripts/build.sh >/dev/null
bash scripts/testbed.sh up
trap 'bash scripts/testbed.sh down >/dev/null' EXIT
LR=$PWD/build/src/linerate
out=$(mktemp -d)

# Opposite CPUs: the receiver's worker on CPU 0, the sender's on CPU 1.
side() {  # side DIR IFACE CPU
    if [[ $backend == afxdp ]]; then
        echo "--backend afxdp --$1 $2 --cpus $3"
    else
        echo "--$1 net_af_xdp0 -- --vdev=net_af_xdp0,iface=$2 --no-pci --lcores=0@$((1 - $3)),1@$3"
    fi
}
read -r -a rx_args <<< "$(side rx lr1 0)"
read -r -a tx_args <<< "$(side tx lr0 1)"
nonce=$(( (RANDOM << 17 | RANDOM << 2 | RANDOM & 3) & 0xffffffff ))   # the run's 32-bit identity, shared by sender and receiver
rx_opts=(--duration $((secs + 30))s --stop-when-idle --drain 1s --nonce "$nonce" --json "$out/rx.json")
# net_af_xdp cannot report its socket's ring overflows: give the DPDK receiver the ring depth
# the afxdp backend uses by default, so a moment descheduled on two shared cores loses nothing.
[[ $backend == dpdk ]] && rx_opts+=(--descriptors 4096)
tx_opts=(--duration "${secs}s" --nonce "$nonce" --json "$out/tx.json" "$@")
if [[ $backend == dpdk ]]; then   # options must come before the EAL arguments after --
    rx_args=("${rx_args[@]:0:2}" "${rx_opts[@]}" "${rx_args[@]:2}")
    tx_args=("${tx_args[@]:0:2}" "${tx_opts[@]}" "${tx_args[@]:2}")
else
    rx_args+=("${rx_opts[@]}")
    tx_args+=("${tx_opts[@]}")
fi

rx_before=$(ip netns exec lr-b cat /sys/class/net/lr1/statistics/rx_packets)
bash scripts/testbed.sh exec b -- "$LR" run "${rx_args[@]}" > "$out/rx.log" 2>&1 &
rx_pid=$!
for _ in $(seq 150); do   # wait until the receiver's XDP program is attached to lr1
    ip -n lr-b link show lr1 | grep -q 'prog/xdp' && break
    kill -0 $rx_pid 2>/dev/null || { cat "$out/rx.log"; exit 3; }
    sleep 0.1
done
sleep 0.5

echo "== sender: lr-a, $backend on lr0 =="
bash scripts/testbed.sh exec a -- "$LR" run "${tx_args[@]}"
wait $rx_pid || true
echo
echo "== receiver: lr-b, $backend on lr1 =="
grep -v '^libbpf: \|^libxdp: ' "$out/rx.log"
rx_after=$(ip netns exec lr-b cat /sys/class/net/lr1/statistics/rx_packets)
python3 - "$out/tx.json" "$out/rx.json" $((rx_after - rx_before)) <<'PY'
import json, sys
tx = json.load(open(sys.argv[1]))["totals"]["tx"]["packets"]
r = json.load(open(sys.argv[2]))
rx = r["totals"]["rx_classes"]["distinct"]
kern = int(sys.argv[3])
print(f"\nsent {tx}, received {rx} distinct signed frames ({100.0 * (tx - rx) / tx if tx else 0:.3f}% lost); "
      f"the kernel counted {kern} frames arriving on lr1")
lat = r.get("latency")
if lat:
    print(f"one-way latency: p50 {lat['p50_ns'] / 1e3:.1f} us, p99 {lat['p99_ns'] / 1e3:.1f} us, "
          f"max {lat['max_ns'] / 1e3:.1f} us")
PY
echo "reports: $out/tx.json $out/rx.json"
