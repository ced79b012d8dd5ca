#!/usr/bin/env bash
# Install every Debian 12 package linerate needs to build, test and benchmark.
# Idempotent: skips apt entirely when everything is already installed.
set -euo pipefail

PKGS=(
  build-essential pkg-config meson ninja-build git
  clang llvm libclang-rt-14-dev bpftool libbpf-dev libxdp-dev xdp-tools libelf-dev zlib1g-dev
  dpdk dpdk-dev libdpdk-dev libnuma-dev libjs-chart.js chromium
  libgtest-dev googletest libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev libpcap-dev libtomlplusplus-dev prometheus-cpp-dev
  libcap-ng-dev python3-jsonschema python3-prometheus-client python3-pytest
  iproute2 ethtool tshark python3 python3-scapy netsniff-ng iputils-ping procps util-linux
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections || true
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "deps: all packages present"
fi
