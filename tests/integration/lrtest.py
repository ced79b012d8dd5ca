"""Shared helpers for the integration tests (pytest modules, one meson test per case): run the real
linerate binary, read its JSON report, the load the test bed can hold, the timing retry policy.
The fixtures (root, hugepages) and the skips are in conftest.py; readiness waits in
scripts/testbed.py."""
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time

# The test bed (scripts/testbed.py) is the one the demo and the benchmarks use.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))

LINERATE = os.environ.get("LINERATE", os.path.join(os.path.dirname(__file__), "../../build/src/linerate"))
HUGEPAGES = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"

# Two in-memory ring ports wired to each other: ring0's TX queue i is ring1's RX queue i.
RING_PAIR_ARGS = ["--ring-pair", "ring0,ring1"]
NO_PCI = ["--no-pci"]


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


def read_json(path):
    with open(path) as f:
        return json.load(f)


# What the veth test bed can hold, measured once per test run (scripts/test.sh removes the
# file first; a plain `meson test` reuses a measurement younger than CAPACITY_MAX_AGE).
CAPACITY_FILE = os.environ.get("LINERATE_BED_CAPACITY",
                               os.path.join(os.path.dirname(LINERATE), "..", "tests", "integration",
                                            "bed_capacity.json"))
CAPACITY_MAX_AGE = 3600.0


def measure_bed_capacity():
    """Frames per second a veth pair carries here and now: a short unpaced run with the afxdp
    backend's socket engine (the engine every paced run uses), sender and receiver in one
    process and one namespace, whatever else the host is running. The received frames over the
    sending time, so what the receiving side dropped does not count."""
    from testbed import VethBed, unique
    with VethBed(unique("lcap"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx-engine", "socket", "--tx", bed.ifa,
                              "--rx", bed.ifb, "--duration", "1s", "--json", f"{d}/r.json"], timeout=120)
        check(r.returncode == 0, f"measuring the test bed: exit {r.returncode}\n{r.stdout}{r.stderr}")
        t = read_json(f"{d}/r.json")["totals"]
    pps = t["rx_classes"]["distinct"] / t["tx_seconds"]
    check(pps > 0, f"measuring the test bed: nothing arrived: {t}")
    return pps


def bed_capacity():
    """The test bed's capacity in frames/s, measured by the first test that asks (under a file
    lock, so one measurement serves the run) and cached in CAPACITY_FILE."""
    import fcntl
    os.makedirs(os.path.dirname(CAPACITY_FILE), exist_ok=True)
    with open(CAPACITY_FILE + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            cached = read_json(CAPACITY_FILE)
            if time.time() - cached["measured_at"] < CAPACITY_MAX_AGE:
                return cached["pps"]
        except (OSError, ValueError, KeyError):
            pass
        pps = measure_bed_capacity()
        tmp = CAPACITY_FILE + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"pps": pps, "measured_at": time.time()}, f)
        os.replace(tmp, CAPACITY_FILE)
        print(f"     the veth test bed carried {pps:,.0f} frames/s unpaced (cached in {CAPACITY_FILE})", flush=True)
        return pps


AUTOGROUP = "/proc/self/autogroup"


def autogroups_enabled():
    """Whether the kernel groups tasks by session for scheduling (kernel.sched_autogroup_enabled)."""
    try:
        with open("/proc/sys/kernel/sched_autogroup_enabled") as f:
            return f.read().strip() == "1"
    except OSError:
        return False


def session_group_nice_now():
    """This session's scheduling group's nice value ("/autogroup-25 nice 0"), or None."""
    try:
        with open(AUTOGROUP) as f:
            m = re.match(r"/autogroup-\d+ nice (-?\d+)", f.read())
    except OSError:
        return None
    return int(m.group(1)) if m else None


def set_session_group_nice(nice):
    with open(AUTOGROUP, "w") as f:
        f.write(str(nice))


@contextlib.contextmanager
def session_group_nice(nice):
    """Runs the block with this session's scheduling group at `nice`, and puts it back after.
    With session groups a paced sender's --sender-nice weighs only within its session: a
    CPU-bound process of another session shares the core with the whole group (docs/
    measurement.md, "Pacing and stalls"). A test runs in a session of its own under meson.
    Without groups, or without the right to raise one (root or CAP_SYS_NICE), nothing changes."""
    before = session_group_nice_now() if autogroups_enabled() else None
    try:
        if before is not None:
            set_session_group_nice(nice)
    except PermissionError:
        before = None
    try:
        yield before
    finally:
        if before is not None:
            set_session_group_nice(before)


def forget_bed_capacity():
    """The next bed_capacity() measures the bed again: a timing retry paces from what the bed
    holds now, not from a measurement taken before the host slowed."""
    import fcntl
    os.makedirs(os.path.dirname(CAPACITY_FILE), exist_ok=True)
    with open(CAPACITY_FILE + ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            os.unlink(CAPACITY_FILE)
        except FileNotFoundError:
            pass


def paced_load(at_most, share=4):
    """The rate (frames/s) for a paced veth run whose point is not the rate: a quarter (or
    1/`share`) of what the bed holds, at most `at_most`, in whole thousands. Counts stay exact
    at any rate; a quarter leaves the receiving side room on a host whose other core is busy."""
    pps = int(min(at_most, bed_capacity() / share) // 1000 * 1000)
    check(pps >= 1000, f"the test bed holds {bed_capacity():,.0f} frames/s: too little to test on")
    print(f"     paced at {pps:,} frames/s (bed capacity {bed_capacity():,.0f}, at most {at_most:,})", flush=True)
    return pps


# A run in which the veth bed itself dropped frames is run again, at most this many times in all.
BED_ATTEMPTS = 3


class BedLoss(Exception):
    """The veth bed itself dropped frames (a ring full while the receiving side waited for its
    core), and said so in its own counters: the counts are then exact but not the case's
    alone. with_bed_attempts runs such a case again; a wrong count without them fails at once."""


def bed_dropped(bed, before=(0, 0)):
    """(<a>'s tx_dropped, <b>'s rx_dropped) since `before` (what this returned earlier): what
    the bed's own veth pair dropped. A veth's drops when its peer's backlog or ring is full show
    on the sending side's tx_dropped or the receiving side's rx_dropped."""
    now = (bed.stat(bed.nsa, bed.ifa, "tx_dropped"), bed.stat(bed.nsb, bed.ifb, "rx_dropped"))
    return tuple(n - b for n, b in zip(now, before))


def with_bed_attempts(fn, *a, **kw):
    """fn(*a, **kw), run again when it raises BedLoss, at most BED_ATTEMPTS times in all; each
    such attempt is printed with where the frames went."""
    for attempt in range(1, BED_ATTEMPTS + 1):
        try:
            return fn(*a, **kw)
        except BedLoss as e:
            print(f"     attempt {attempt} of {BED_ATTEMPTS}: {e}", flush=True)
    raise AssertionError(f"the bed dropped frames in all {BED_ATTEMPTS} attempts")


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
    before the next, so a burst of load on the host can pass, and has the bed measured again
    (paced_load then follows what the bed holds now). A check() that fails inside fn is raised
    at once, never retried: counts must be exact on every attempt. Returns what fn returned."""
    misses = []
    for attempt in range(1, attempts + 1):
        try:
            result = fn(*a, **kw)
        except TimingMiss as e:
            misses.append(str(e))
            print(f"     timing miss, attempt {attempt} of {attempts}: {e}", flush=True)
            if attempt < attempts:
                time.sleep(pause * 2 ** (attempt - 1))
                forget_bed_capacity()
            continue
        if misses:
            print(f"     within tolerance on attempt {attempt} of {attempts}", flush=True)
        return result
    raise AssertionError(f"all {attempts} attempts missed the tolerance: " + " | ".join(misses))
