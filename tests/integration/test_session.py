"""One session, many trials: `run --trials 100` opens its ports once and runs 100 trials back to
back in one process, on a net_ring pair (DPDK) and on a veth pair (AF_XDP). Every trial must count
exactly, and the process must not grow: its open descriptors and threads stay the same from trial
to trial, and its memory grows by no more than the results it keeps for the report. The veth
pair's trials are paced at a quarter of what the test bed holds, at most 500 kpps."""
import json
import os
import subprocess
import tempfile
import threading
import time

import pytest

from lrtest import LINERATE, RING_PAIR_ARGS, NO_PCI, check, paced_load
from testbed import VethBed, unique

pytestmark = pytest.mark.usefixtures("hugepages")

TRIALS = 100


def watch(pid, samples, stop, trial):
    """Samples the process's descriptors, threads and resident memory every 20 ms, tagged with
    the trial the process said it was running."""
    while not stop.is_set():
        try:
            fds = len(os.listdir(f"/proc/{pid}/fd"))
            threads = len(os.listdir(f"/proc/{pid}/task"))
            with open(f"/proc/{pid}/status") as f:
                rss = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
            samples.append((trial[0], fds, threads, rss))
        except (OSError, StopIteration):
            pass
        time.sleep(0.02)


def run_watched(cmd, timeout=600):
    """Runs linerate (live output on: it prints "Trial N of M" as each trial starts) and samples
    it from outside. The process watched is linerate itself, also under `ip netns exec` (which
    execs, as does the shell it runs)."""
    samples, stop, trial = [], threading.Event(), [0]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    t = threading.Thread(target=watch, args=(p.pid, samples, stop, trial))
    t.start()
    out = []
    try:
        for line in p.stdout:
            out.append(line)
            if line.startswith("Trial "):
                trial[0] = int(line.split()[1])
            elif line.startswith("Verdict:") and trial[0] == TRIALS:
                trial[0] = TRIALS + 1  # the last trial is over: the process is closing down
        p.wait(timeout=timeout)
    finally:
        stop.set()
        t.join()
    text = "".join(out)
    check(p.returncode == 0, f"exit {p.returncode}:\n{text[-3000:]}")
    return text, samples


def check_trials(rep, count, streams, host_may_drop=False):
    """Every trial counts exactly. host_may_drop: on veth, a receiver descheduled on the shared
    core may let its socket ring overflow; such frames must then be attributed to this host
    exactly (received + dropped by this host = sent), never to the path."""
    trials = rep["trials"]
    check(len(trials) == TRIALS, f"{len(trials)} trials reported")
    for i, t in enumerate(trials):
        where = f"trial {i}"
        check(t["index"] == i, f"{where}: index {t['index']}")
        check(t["verdict"]["result"] == "pass", f"{where}: {t['verdict']}")
        tot = t["totals"]
        check(tot["tx"]["packets"] == count, f"{where}: sent {tot['tx']['packets']}")
        acc = tot["loss_account"]
        host = acc["host_rx_dropped"] + acc["egress_dropped"] if host_may_drop else 0
        check(tot["rx_classes"]["distinct"] + host == count,
              f"{where}: received {tot['rx_classes']['distinct']}, this host dropped {host}: {acc}")
        check(tot["lost"] == host and acc["unaccounted"] == 0, f"{where}: lost {tot['lost']}, {acc}")
        check(tot["rx_classes"]["duplicates"] == 0 and tot["rx_classes"]["foreign"] == 0, f"{where}: {tot}")
        check(len(t["flows"]) == streams, f"{where}: {len(t['flows'])} streams")
        for s in t["flows"]:
            check(s["sent"] == count // streams and (host or s["received"] == s["sent"]), f"{where}: stream {s}")
        check(not t["violations"], f"{where}: {t['violations']}")


def check_no_growth(samples, trials_kept_kib):
    """From the second trial to the last (ports open, a first trial done), the descriptors never
    change and memory grows only by the results kept for the report. Workers start and end with
    each trial; between trials only the process's own threads remain."""
    steady = [s for s in samples if 2 <= s[0] <= TRIALS]
    check(len(steady) >= 20, f"only {len(steady)} samples of the trials")
    # The control thread opens and closes counter files (/sys/class/net/...) as it reads them, and
    # each worker reads its run delay (/proc/thread-self/schedstat) when it starts and ends, so a
    # sample may catch one open; a short trial has a single sample. A leak stays: the fewest open
    # descriptors over each run of 10 trials must be the same from the first run to the last.
    least = {}
    for s in steady:
        least[s[0] // 10] = min(least.get(s[0] // 10, s[1]), s[1])
    check(len(set(least.values())) == 1, f"open descriptors changed over the trials (the fewest per 10 trials): {least}")
    base = min(s[2] for s in steady)
    check(max(s[2] for s in steady) - base <= 4, f"threads: {sorted({s[2] for s in steady})}")
    growth = steady[-1][3] - steady[0][3]
    check(growth <= trials_kept_kib, f"resident memory grew by {growth} KiB over the trials")


def test_ring_pair():
    """100 trials on a net_ring pair: exact, nothing grows."""
    count = 200000
    with tempfile.TemporaryDirectory() as d:
        rep_path = os.path.join(d, "r.json")
        out, samples = run_watched([LINERATE, "run", "--interval", "10s", *RING_PAIR_ARGS, "--tx", "ring0,queues=2", "--rx",
                                    "ring1,queues=2", "--count", str(count), "--trials", str(TRIALS),
                                    "--json", rep_path, "--", *NO_PCI])
        with open(rep_path) as f:
            rep = json.load(f)
    check_trials(rep, count, 2)
    check_no_growth(samples, 16 * 1024)


def test_afxdp_veth():
    """100 trials on a veth pair (afxdp): exact, nothing grows."""
    count = 20000
    rate = paced_load(500_000)
    with VethBed(unique("lxn"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        rep_path = os.path.join(d, "r.json")
        out, samples = run_watched(bed.wrap(bed.nsa, [LINERATE, "run", "--interval", "10s", "--backend", "afxdp", "--tx", bed.ifa,
                                                      "--rx", bed.ifb, "--count", str(count), "--rate", str(rate),
                                                      "--trials", str(TRIALS), "--json", rep_path]))
        with open(rep_path) as f:
            rep = json.load(f)
        check(not bed.xdp_attached(bed.nsa, bed.ifb), "XDP program left attached")
    check_trials(rep, count, 1, host_may_drop=True)
    check_no_growth(samples, 16 * 1024)
