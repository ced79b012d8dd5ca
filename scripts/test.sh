#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds, reserves hugepages, runs every
# unit and integration test under `meson test`, and prints "N passed, N failed, N skipped".
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }

hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if [[ -w $hp ]] && (( $(cat $hp) < 1024 )); then echo 1024 > "$hp"; fi

meson test -C build --print-errorlogs --num-processes 1 "$@"
rc=$?
python3 - build/meson-logs/testlog.json <<'PY'
import json, sys
counts = {"OK": 0, "FAIL": 0, "SKIP": 0, "OTHER": 0}
for line in open(sys.argv[1]):
    r = json.loads(line).get("result", "")
    if r in ("OK", "EXPECTEDFAIL"): counts["OK"] += 1
    elif r == "SKIP": counts["SKIP"] += 1
    else: counts["FAIL"] += 1
print(f"{counts['OK']} passed, {counts['FAIL']} failed, {counts['SKIP']} skipped")
PY
exit $rc
