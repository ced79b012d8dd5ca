#!/usr/bin/env python3
"""Reliability measurement (not a test): the README's test command, run again and again in clean
clones of one commit, and how many of the runs passed.

    python3 tests/bench/suite_runs.py [--runs 10] [--commit HEAD] [--hog] [--out DIR]

Each run clones the repository at the commit into a fresh directory, runs `.ci/run` there (which
installs, builds and runs the whole suite) and records its exit code, its time and the tests that
failed (from meson's testlog.json). --hog keeps one core busy with a CPU-bound process for the
whole run, as a shared host would. The clone is removed after a passing run and kept after a
failing one (its build/meson-logs hold the failure). A line per run, then a summary; the same in
DIR/summary.json.
"""
import argparse
import json
import multiprocessing
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def hog():
    while True:
        pass


def failed_tests(clone):
    log = os.path.join(clone, "build", "meson-logs", "testlog.json")
    if not os.path.exists(log):
        return ["(no testlog: the build or the setup failed)"]
    out = []
    with open(log) as f:
        for line in f:
            t = json.loads(line)
            if t.get("result") not in ("OK", "SKIP", "EXPECTEDFAIL"):
                out.append(t["name"])
    return out


def counts(clone):
    log = os.path.join(clone, "build", "meson-logs", "testlog.json")
    c = {"OK": 0, "SKIP": 0, "FAIL": 0}
    if os.path.exists(log):
        with open(log) as f:
            for line in f:
                r = json.loads(line).get("result")
                c["OK" if r in ("OK", "EXPECTEDFAIL") else "SKIP" if r == "SKIP" else "FAIL"] += 1
    return c


def one_run(i, commit, out, use_hog):
    clone = os.path.join(out, f"run{i}")
    shutil.rmtree(clone, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
    subprocess.run(["git", "-C", clone, "checkout", "-q", commit], check=True)
    proc = None
    if use_hog:
        proc = multiprocessing.Process(target=hog, daemon=True)
        proc.start()
    t0 = time.monotonic()
    with open(os.path.join(out, f"run{i}.log"), "w") as log:
        rc = subprocess.run(["bash", ".ci/run"], cwd=clone, stdout=log, stderr=subprocess.STDOUT).returncode
    took = time.monotonic() - t0
    if proc:
        proc.terminate()
        proc.join()
    res = {"run": i, "rc": rc, "seconds": round(took), "counts": counts(clone), "failed": failed_tests(clone) if rc else []}
    if rc == 0:
        shutil.rmtree(clone, ignore_errors=True)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--commit", default="HEAD")
    ap.add_argument("--hog", action="store_true", help="keep one core busy with a CPU-bound process")
    ap.add_argument("--out", default="/tmp/linerate-suite-runs")
    a = ap.parse_args()
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", a.commit], check=True, capture_output=True,
                            text=True).stdout.strip()
    os.makedirs(a.out, exist_ok=True)
    results = []
    for i in range(1, a.runs + 1):
        r = one_run(i, commit, a.out, a.hog)
        results.append(r)
        c = r["counts"]
        print(f"run {i}/{a.runs} at {commit[:7]}{' with a CPU hog' if a.hog else ''}: "
              f"{'pass' if r['rc'] == 0 else 'FAIL'} in {r['seconds']} s ({c['OK']} passed, {c['FAIL']} failed, "
              f"{c['SKIP']} skipped){': ' + ', '.join(r['failed']) if r['failed'] else ''}", flush=True)
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump({"commit": commit, "hog": a.hog, "runs": results}, f, indent=1)
    passed = sum(r["rc"] == 0 for r in results)
    print(f"{passed} of {len(results)} runs passed at {commit[:7]}{' with a CPU hog' if a.hog else ''}")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
