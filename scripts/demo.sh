#!/usr/bin/env bash
# The main job on the built-in test bed, from a fresh Debian 12 machine, in under 2 minutes:
# installs what the binary needs (nothing for the tests), builds only the binary and its XDP
# programs (without the OTG server, which the runs do not use), brings up the veth pair between
# two namespaces (lr-a/lr0 198.18.0.1 <-> lr-b/lr1 198.18.0.2), runs linerate twice, each run's
# meaning in one line, and tears the bed down.
#
#   scripts/demo.sh [--backend afxdp|dpdk] [SECONDS]      (each run lasts SECONDS, default 5)
#
# afxdp (default): 1. XDP live frames into the receiver's XDP counting sink: the highest rate
#   the bed carries, every frame counted; 2. a signed measuring run, AF_XDP sockets at both
#   ends, paced: loss, reordering and one-way latency per frame, beside the kernel's own count.
# dpdk: the same two runs through DPDK's net_af_xdp PMD (sockets only: as fast as it goes, then
#   paced); installs and builds DPDK first.
set -euo pipefail
cd "$(dirname "$0")/.."
backend=afxdp
if [[ ${1:-} == --backend ]]; then backend=${2:-}; shift 2 || true; fi
[[ $backend == afxdp || $backend == dpdk ]] || { echo "demo: --backend afxdp or dpdk" >&2; exit 2; }
secs=${1:-5}
[[ $secs =~ ^[1-9][0-9]*$ ]] || { echo "demo: SECONDS is a whole number of seconds, not \"$secs\"" >&2; exit 2; }
[[ $(id -u) == 0 ]] || { echo "demo: run it as root (it installs packages and creates namespaces)" >&2; exit 3; }
RATE=200k   # the measuring run's pace: well below what a socket receiver takes on 2 shared cores

start=$SECONDS
echo "linerate demo: the $backend backend on a veth pair between two network namespaces, 2 runs of ${secs} s"
printf '[1/5] '
if [[ $backend == dpdk ]]; then bash scripts/deps.sh dpdk; else bash scripts/deps.sh binary; fi
printf '[2/5] '
if [[ $backend == dpdk ]]; then bash scripts/build.sh binary --dpdk --no-deps; else bash scripts/build.sh binary --no-deps; fi

# Hugepages only for DPDK; the afxdp backend needs none.
export LINERATE_HUGEPAGES=$([[ $backend == dpdk ]] && echo 1024 || echo 0)
printf '[3/5] '
bash scripts/testbed.sh up
trap 'bash scripts/testbed.sh down > /dev/null' EXIT
LR=$PWD/build/src/linerate
out=$(mktemp -d /tmp/linerate-demo.XXXXXX)

# run_pair NAME "RECEIVER OPTIONS" "SENDER OPTIONS": the receiver on lr1 (lr-b, CPU 0), then the
# sender on lr0 (lr-a, CPU 1), one nonce shared by both; reports and logs in $out/NAME-{rx,tx}.*;
# lr1's own rx_packets before and after in $out/NAME.kernel.
run_pair() {
    local name=$1 nonce rx tx
    nonce=$(( (RANDOM << 17 | RANDOM << 2 | RANDOM & 3) & 0xffffffff ))  # the run's 32-bit identity
    read -r -a rx <<< "$2"
    read -r -a tx <<< "$3"
    rx+=(--duration $((secs + 30))s --stop-when-idle --drain 500ms --nonce "$nonce" --json "$out/$name-rx.json")
    tx+=(--duration "${secs}s" --nonce "$nonce" --json "$out/$name-tx.json")
    if [[ $backend == dpdk ]]; then  # linerate's options before the EAL arguments
        rx+=(--descriptors 4096 -- --vdev=net_af_xdp0,iface=lr1 --no-pci --lcores=0@1,1@0)
        tx+=(-- --vdev=net_af_xdp0,iface=lr0 --no-pci --lcores=0@0,1@1)
    fi
    # The commands as typed (without the shared --nonce and the --json report).
    echo "      lr-b\$ linerate run ${rx[*]}" | sed "s| --json [^ ]*||; s| --nonce [0-9]*||"
    echo "      lr-a\$ linerate run ${tx[*]}" | sed "s| --json [^ ]*||; s| --nonce [0-9]*||"
    ip netns exec lr-b cat /sys/class/net/lr1/statistics/rx_packets > "$out/$name.kernel"
    bash scripts/testbed.sh exec b -- "$LR" run "${rx[@]}" > "$out/$name-rx.log" 2>&1 &
    local rx_pid=$!
    for _ in $(seq 150); do  # until the receiver's XDP program is attached to lr1
        ip -n lr-b link show lr1 | grep -q 'prog/xdp' && break
        kill -0 $rx_pid 2> /dev/null || { cat "$out/$name-rx.log"; exit 3; }
        sleep 0.1
    done
    # A run that ends with a verdict other than pass exits non-zero: the summary gives it. Without
    # a report the sender failed outright: its output says why.
    if ! bash scripts/testbed.sh exec a -- "$LR" run "${tx[@]}" > "$out/$name-tx.log" 2>&1 &&
        [[ ! -s $out/$name-tx.json ]]; then
        cat "$out/$name-tx.log"; echo "demo: the sender failed (above)" >&2
        kill "$rx_pid" 2> /dev/null; wait "$rx_pid" || true
        exit 3
    fi
    wait $rx_pid || true
    ip netns exec lr-b cat /sys/class/net/lr1/statistics/rx_packets >> "$out/$name.kernel"
    python3 scripts/demo_summary.py "$out" "$name"
}

if [[ $backend == afxdp ]]; then
    echo "[4/5] live frames into the receiver's XDP counting sink, ${secs} s: the kernel signs and sends copies"
    echo "      of one 64-byte frame out of lr0 (XDP live frames); lr1's XDP program checks and counts each one"
    run_pair live "--backend afxdp --rx lr1 --rx-mode xdp --cpus 0" "--backend afxdp --tx lr0 --tx-engine live --cpus 1"
    echo "[5/5] a signed measuring run, ${secs} s at $RATE pps: AF_XDP sockets at both ends; the receiver checks"
    echo "      each frame's signature in user space (stream, sequence, send time)"
    run_pair measure "--backend afxdp --rx lr1 --cpus 0" "--backend afxdp --tx lr0 --tx-engine socket --rate $RATE --cpus 1"
else
    echo "[4/5] DPDK's net_af_xdp PMD at both ends, as fast as the sender goes, ${secs} s"
    run_pair fast "--rx net_af_xdp0" "--tx net_af_xdp0"
    echo "[5/5] a signed measuring run through net_af_xdp, ${secs} s at $RATE pps"
    run_pair measure "--rx net_af_xdp0" "--tx net_af_xdp0 --rate $RATE"
fi
echo "done in $((SECONDS - start)) s; the test bed is torn down. Reports and console output: $out"
