#!/usr/bin/env bash
# Installs the Debian 12 packages linerate needs, for one purpose:
#
#   scripts/deps.sh binary   the linerate binary and its XDP programs (the afxdp backend): what
#                            scripts/demo.sh needs
#   scripts/deps.sh dpdk     the same and the DPDK backend (scripts/demo.sh --backend dpdk)
#   scripts/deps.sh release  the binary with DPDK and the OTG server (deploy/Dockerfile)
#   scripts/deps.sh [all]    everything: DPDK, the OTG server, the test suite (gtest, scapy, tshark, chromium...),
#                            the fuzzers and the benchmarks (scripts/test.sh)
#
# Idempotent: apt is not touched when everything is installed. Prints one line; apt's own output
# goes to a log, shown when apt fails.
set -euo pipefail

# The binary: compilers, meson/ninja, clang and bpftool for the XDP programs and their skeletons,
# the libraries it links, Chart.js (inlined into the HTML report), ip, sysctl and python3 for the
# test bed.
BINARY=(
  g++ pkg-config meson ninja-build clang bpftool libbpf-dev libxdp-dev libelf-dev zlib1g-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libpcap-dev libtomlplusplus-dev prometheus-cpp-dev libcap-ng-dev
  libjs-chart.js iproute2 procps python3
)
# The DPDK backend (about 215 packages with their dependencies: one per PMD and library).
DPDK=(libdpdk-dev libnuma-dev)
# The OTG server (linerate serve: HTTP(S) and the controller's YAML location map), which the
# demo's build leaves out.
OTG=(libcpp-httplib-dev libssl-dev libyaml-cpp-dev)
# The test suite, the fuzzers and the benchmarks.
TEST=(
  build-essential git llvm libclang-rt-14-dev xdp-tools dpdk dpdk-dev chromium
  libgtest-dev googletest libgmock-dev libbenchmark-dev python3-jsonschema python3-prometheus-client python3-pytest
  ethtool tshark python3-scapy netsniff-ng iputils-ping util-linux python3-venv iperf3 python3-matplotlib
)

case ${1:-all} in
  binary) want=("${BINARY[@]}"); what="the binary" ;;
  dpdk) want=("${BINARY[@]}" "${DPDK[@]}"); what="the binary with DPDK" ;;
  release) want=("${BINARY[@]}" "${DPDK[@]}" "${OTG[@]}"); what="the binary with DPDK and the OTG server" ;;
  all) want=("${BINARY[@]}" "${DPDK[@]}" "${OTG[@]}" "${TEST[@]}"); what="the binary, DPDK, the OTG server and the test suite" ;;
  *) echo "usage: scripts/deps.sh [binary|dpdk|release|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "packages: all ${#want[@]} for $what present"
  exit 0
fi

log=${TMPDIR:-/tmp}/linerate-deps.log
printf 'installing %d packages for %s, with their dependencies (about %s)… ' "${#missing[@]}" "$what" \
  "$(case ${1:-all} in binary) echo "30 s" ;; all) echo "3 minutes on a fresh machine" ;; *) echo "a minute" ;; esac)"
start=$SECONDS
export DEBIAN_FRONTEND=noninteractive
{
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections || true
  apt-get update -q &&
    apt-get install -y -q --no-install-recommends "${missing[@]}"
} > "$log" 2>&1 || {
  echo "failed"
  tail -n 20 "$log" >&2
  echo "deps: apt-get failed; its whole output is in $log" >&2
  exit 3
}
n=$(grep -c '^Setting up ' "$log" || true)
echo "done: $n packages in $((SECONDS - start)) s"
