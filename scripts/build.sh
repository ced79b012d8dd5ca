#!/usr/bin/env bash
# Installs the packages (scripts/deps.sh) and builds linerate into build/ with meson + ninja.
#
#   scripts/build.sh                  everything: the binary with DPDK, the unit, BPF and fuzz
#                                     tests and the benchmarks (scripts/test.sh, scripts/fuzz.sh)
#   scripts/build.sh binary [--dpdk]  only build/src/linerate and its XDP programs, without the OTG
#                                     server and without the DPDK backend unless --dpdk
#                                     (scripts/demo.sh)
#   --no-deps                         leave the packages alone (scripts/deps.sh installs them)
#
# One build directory serves both: a build for the binary configures build/ with the tests, the
# OTG server and DPDK off and its control code at -Og; a full build turns them on and the control
# code back to -Os (the data path, -O3, is not compiled again). A binary build never turns off
# what build/ already has. Prints one line per step; the compiler's output goes to
# build/build.log, shown when the build fails.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=all dpdk=enabled deps=yes
if [[ ${1:-} == binary ]]; then mode=binary dpdk=disabled; shift; fi
while (($#)); do
    case $1 in
        --dpdk) [[ $mode == binary ]] || { echo "build: --dpdk goes with binary" >&2; exit 2; }; dpdk=enabled ;;
        --no-deps) deps=no ;;
        *) echo "usage: scripts/build.sh [binary [--dpdk]] [--no-deps]" >&2; exit 2 ;;
    esac
    shift
done

if [[ $deps == yes ]]; then
    if [[ $mode == all ]]; then bash scripts/deps.sh all
    elif [[ $dpdk == enabled ]]; then bash scripts/deps.sh dpdk
    else bash scripts/deps.sh binary; fi
fi

# The options build/ has now (none: not configured yet).
current() {  # current OPTION
    python3 - "$1" <<'PY' 2>/dev/null || true
import json, sys
for o in json.load(open("build/meson-info/intro-buildoptions.json")):
    if o["name"] == sys.argv[1]:
        print(str(o["value"]).lower())
PY
}
tests=$([[ $mode == all ]] && echo true || echo false)
otg=$([[ $mode == all ]] && echo enabled || echo disabled)
# The binary alone compiles its control code at -Og (a fifth less time, the data path the same
# -O3 code); the full build, which the tests and benchmarks measure, at -Os.
control_opt=$([[ $mode == all ]] && echo s || echo g)
if [[ $mode == binary ]]; then
    printf 'building build/src/linerate and its XDP programs%s (about %s on 2 cores)… ' \
        "$([[ $dpdk == enabled ]] && echo ", with DPDK,")" "$([[ $dpdk == enabled ]] && echo "a minute and a half" || echo "a minute")"
    targets=(src/linerate)
else
    printf 'building linerate, its tests, fuzzers and benchmarks (a few minutes on 2 cores)… '
    targets=()
fi
start=$SECONDS
mkdir -p build
log=build/build.log
: > "$log"
fail() {  # fail WHAT
    echo "failed"
    { grep -A 30 -m 1 '^FAILED' "$log" || tail -n 30 "$log"; } >&2
    echo "build: $1 failed; its whole output is in build/build.log" >&2
    exit 1
}
if [[ ! -f build/build.ninja ]]; then
    meson setup build --buildtype=release -Dtests=$tests -Ddpdk=$dpdk -Dotg=$otg -Dcontrol_opt=$control_opt \
        >> "$log" 2>&1 || fail "meson setup"
else
    set_opts=()
    [[ $tests == true && $(current tests) != true ]] && set_opts+=(-Dtests=true)
    [[ $otg == enabled && $(current otg) != enabled ]] && set_opts+=(-Dotg=enabled)
    [[ $dpdk == enabled && $(current dpdk) != enabled ]] && set_opts+=(-Ddpdk=enabled)
    [[ $mode == all && $(current control_opt) != s ]] && set_opts+=(-Dcontrol_opt=s)
    if ((${#set_opts[@]})); then
        meson configure build "${set_opts[@]}" >> "$log" 2>&1 || fail "meson configure"
    fi
fi
# One job per CPU: ninja's default (CPUs + 2) runs four compilers on two cores, each ~1 GB of
# memory, and the binary's build then took 106-131 s where one per core took 96-101 s.
ninja -C build -j "$(nproc)" "${targets[@]}" >> "$log" 2>&1 || fail ninja
if grep -q '^ninja: no work to do' "$log"; then echo "up to date"
else echo "done in $((SECONDS - start)) s"; fi
