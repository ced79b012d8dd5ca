#!/usr/bin/env bash
# The built-in test bed; the implementation is scripts/testbed.py (also used by the tests and
# the benchmarks). Usage: scripts/testbed.sh up|down|exec a|b|status [PREFIX] [-- CMD...]
exec python3 "$(dirname "$0")/testbed.py" "$@"
