#!/usr/bin/env bash
# The main job on the built-in default test bed: installs dependencies, builds, brings up the
# veth pair in two namespaces (198.18.0.1 <-> 198.18.0.2) with hugepages, then sends 64-byte
# UDP frames from namespace lr-a and counts them in namespace lr-b, and prints the rates.
#
#   scripts/demo.sh [SECONDS] [extra linerate run options for the sender...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
shift || true
bash scripts/build.sh >/dev/null
bash scripts/testbed.sh up
trap 'bash scripts/testbed.sh down >/dev/null' EXIT
LR=$PWD/build/src/linerate
out=$(mktemp -d)

# Receiver in lr-b: main lcore on CPU 1, its worker on CPU 0 (the sender uses the opposite map).
bash scripts/testbed.sh exec b -- "$LR" run --rx net_af_xdp0 --duration $((secs + 20))s --stop-when-idle \
    --drain 1s --json "$out/rx.json" -- --vdev=net_af_xdp0,iface=lr1 --no-pci --lcores=0@1,1@0 \
    > "$out/rx.log" 2>&1 &
rx_pid=$!
# Wait until the receiver's XDP program is attached to lr1.
for _ in $(seq 100); do
    ip -n lr-b link show lr1 | grep -q 'prog/xdp' && break
    kill -0 $rx_pid 2>/dev/null || { cat "$out/rx.log"; exit 3; }
    sleep 0.1
done
sleep 0.5
rx_before=$(ip netns exec lr-b cat /sys/class/net/lr1/statistics/rx_packets)

echo "== sender (lr-a, net_af_xdp on lr0) =="
bash scripts/testbed.sh exec a -- "$LR" run --tx net_af_xdp0 --duration "${secs}s" --json "$out/tx.json" "$@" \
    -- --vdev=net_af_xdp0,iface=lr0 --no-pci --lcores=0@0,1@1
wait $rx_pid || true
echo
echo "== receiver (lr-b, net_af_xdp on lr1) =="
cat "$out/rx.log"
rx_after=$(ip netns exec lr-b cat /sys/class/net/lr1/statistics/rx_packets)
python3 - "$out/tx.json" "$out/rx.json" $((rx_after - rx_before)) <<'PY'
import json, sys
tx = json.load(open(sys.argv[1]))["totals"]["tx"]["packets"]
rx = json.load(open(sys.argv[2]))["totals"]["rx"]["packets"]
kern = int(sys.argv[3])
print(f"\nsent {tx}, received {rx} ({100.0 * (tx - rx) / tx if tx else 0:.3f}% not received); "
      f"kernel counted {kern} on lr1")
PY
echo "reports: $out/tx.json $out/rx.json"
