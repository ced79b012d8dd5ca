"""Exhaustion: resources smaller than a run needs give a clear error naming the setting to
change, or counted back-pressure; never a crash, a hang or a leftover.
- no free hugepages (DPDK): exit 3 naming nr_hugepages and --no-huge;
- an mbuf pool smaller than the rings need: exit 2 naming --mbufs and the minimum;
- an mbuf pool at that minimum under an unpaced load: back-pressure counted, counts exact;
- the AF_XDP UMEM is sized from the rings (max(4096, 4 x descriptors) frames), so it cannot be
  smaller than they need; a UMEM above RLIMIT_MEMLOCK is test_privileges.py's case."""
import json
import os
import subprocess
import tempfile

import pytest

from lrtest import HUGEPAGES, LINERATE, RING_PAIR_ARGS, check

pytestmark = pytest.mark.usefixtures("hugepages")

EAL = ["--no-pci", "--in-memory", "--no-telemetry"]


def test_no_hugepages():
    with open(HUGEPAGES) as f:
        before = f.read().strip()
    try:
        with open(HUGEPAGES, "w") as f:
            f.write("0")
        p = subprocess.run([LINERATE, "run", "-q", *RING_PAIR_ARGS, "--tx", "ring0", "--count", "1000", "--", *EAL],
                           capture_output=True, text=True, timeout=60)
    finally:
        with open(HUGEPAGES, "w") as f:
            f.write(before)
    check(p.returncode == 3, f"exit {p.returncode}\n{p.stdout}{p.stderr}")
    check("no free hugepages" in p.stderr and "nr_hugepages" in p.stderr and "--no-huge" in p.stderr, p.stderr)


def test_pool_below_the_rings():
    p = subprocess.run([LINERATE, "run", "-q", *RING_PAIR_ARGS, "--tx", "ring0", "--rx", "ring1", "--count", "1000",
                        "--mbufs", "100", "--descriptors", "1024", "--", *EAL], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 2, f"exit {p.returncode}\n{p.stdout}{p.stderr}")
    check("--mbufs 100 is too small: need at least 2 x descriptors + 4 x burst = 2304" in p.stderr, p.stderr)


def test_pool_at_the_minimum_counts_backpressure():
    with tempfile.TemporaryDirectory() as d:
        rep = os.path.join(d, "r.json")
        p = subprocess.run([LINERATE, "run", "-q", *RING_PAIR_ARGS, "--tx", "ring0", "--rx", "ring1", "--count", "2M",
                            "--mbufs", "2304", "--descriptors", "1024", "--json", rep, "--", *EAL,
                            "--lcores=0@0,1@1,2@1"], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"exit {p.returncode}\n{p.stdout}{p.stderr}")
        with open(rep) as f:
            t = json.load(f)["totals"]
        check(t["tx"]["packets"] == 2_000_000 and t["rx_classes"]["distinct"] == 2_000_000 and t["lost"] == 0, f"{t}")
