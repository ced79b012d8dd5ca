"""Shared helpers for integration tests: run the real linerate binary, read its JSON report."""
import json
import os
import subprocess
import sys
import tempfile
import time

# The test bed (scripts/testbed.py) is the one the demo and the benchmarks use.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))

SKIP = 77
LINERATE = os.environ.get("LINERATE", os.path.join(os.path.dirname(__file__), "../../build/src/linerate"))
HUGEPAGES = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"

# Two in-memory ring ports wired to each other: ring0's TX queue i is ring1's RX queue i.
RING_PAIR_ARGS = ["--ring-pair", "ring0,ring1"]
NO_PCI = ["--no-pci"]


def skip(why):
    print(f"SKIP: {why}")
    sys.exit(SKIP)


def need_root_and_hugepages(pages=512):
    if os.geteuid() != 0:
        skip("needs root")
    try:
        with open(HUGEPAGES) as f:
            have = int(f.read())
        if have < pages:
            with open(HUGEPAGES, "w") as f:
                f.write(str(pages))
    except OSError as e:
        skip(f"cannot reserve hugepages: {e}")


def run(args, eal=(), timeout=300, expect_rc=0, prefix=(), quiet=True):
    """Runs linerate with `args` and EAL args; returns (rc, stdout, stderr, report-or-None).
    quiet=False keeps the live lines in stdout."""
    with tempfile.TemporaryDirectory() as d:
        report = os.path.join(d, "report.json")
        cmd = list(prefix) + [LINERATE, "run"] + (["-q"] if quiet else []) + ["--json", report] + list(args)
        if eal:
            cmd += ["--"] + list(eal)
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        rep = None
        if os.path.exists(report):
            with open(report) as f:
                rep = json.load(f)
    if expect_rc is not None and p.returncode != expect_rc:
        raise AssertionError(f"{' '.join(cmd)}\nexit {p.returncode} (expected {expect_rc})\n"
                             f"stdout:\n{p.stdout}\nstderr:\n{p.stderr}")
    return p.returncode, p.stdout, p.stderr, rep


def queues(rep, direction):
    return sorted((q for q in rep["queues"] if q["dir"] == direction), key=lambda q: (q["port"], q["queue"]))


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


class Results:
    """Counts sub-cases; prints a summary and exits non-zero on any failure."""

    def __init__(self):
        self.passed = 0
        self.failed = []

    def case(self, name, fn, *a, **kw):
        try:
            fn(*a, **kw)
            self.passed += 1
            print(f"ok   {name}")
        except Exception as e:  # noqa: BLE001 - report every failure, keep going
            self.failed.append(name)
            print(f"FAIL {name}: {e}")

    def finish(self):
        print(f"{self.passed} passed, {len(self.failed)} failed")
        sys.exit(1 if self.failed else 0)


class TimingMiss(Exception):
    """A measured time, rate or latency outside its tolerance (timing_check). Not an
    AssertionError: retry_timing runs the measurement again, while a failed check() (a wrong
    count) ends the case at once."""


def timing_check(cond, msg):
    """check() for a timing tolerance: `msg` should carry the measured value."""
    if not cond:
        raise TimingMiss(msg)


def retry_timing(fn, *a, attempts=3, pause=5.0, **kw):
    """Runs one whole measurement, fn(*a, **kw), until no timing_check in it misses, at most
    `attempts` times in all; prints each miss with its measured value and fails (AssertionError)
    only if every attempt missed. Before each retry it waits `pause` seconds, twice as long
    before the next, so a burst of load on the host can pass. A check() that fails inside fn is
    raised at once, never retried: counts must be exact on every attempt. Returns what fn
    returned."""
    misses = []
    for attempt in range(1, attempts + 1):
        try:
            result = fn(*a, **kw)
        except TimingMiss as e:
            misses.append(str(e))
            print(f"     timing miss, attempt {attempt} of {attempts}: {e}", flush=True)
            if attempt < attempts:
                time.sleep(pause * 2 ** (attempt - 1))
            continue
        if misses:
            print(f"     within tolerance on attempt {attempt} of {attempts}", flush=True)
        return result
    raise AssertionError(f"all {attempts} attempts missed the tolerance: " + " | ".join(misses))
