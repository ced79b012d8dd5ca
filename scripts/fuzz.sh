#!/usr/bin/env bash
# Long fuzzing runs (the test suite runs each target for 20 s): the receive-side parsers
# (fuzz_classify) and everything a user types (fuzz_input: profiles, rates, durations, counts,
# sizes, addresses, ports). Prints each target's executions and any crash it found.
#     scripts/fuzz.sh [SECONDS per target, default 600] [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(fuzz_classify fuzz_input)
bash scripts/build.sh >/dev/null
for t in "${targets[@]}"; do
  corpus=$(mktemp -d)
  [[ -d tests/fuzz/corpus_${t#fuzz_} ]] && cp tests/fuzz/corpus_${t#fuzz_}/* "$corpus"/
  log=$(mktemp)
  set +e
  "build/tests/fuzz/$t" -max_total_time="$secs" -max_len=4096 -print_final_stats=1 -artifact_prefix="$corpus/" \
      "$corpus" >"$log" 2>&1
  rc=$?
  set -e
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || echo "?")
  crashes=$(ls "$corpus" | grep -cE '^(crash|leak|timeout|oom)-' || true)
  if ((crashes)); then
    echo "$t: ${secs}s, $execs executions, $crashes crashes (exit $rc); artifacts in $corpus"
  else
    echo "$t: ${secs}s, $execs executions, no crash (exit $rc)"
    rm -rf "$corpus"
  fi
  rm -f "$log"
done
