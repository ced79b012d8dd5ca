#!/usr/bin/env python3
"""Benchmark (not a test): the cost of signing every packet (sequence, timestamp, checksum)
against plain frames, alternating signed and plain runs in the same script.

    sudo python3 tests/bench/signature_cost.py [--rounds 10] [--seconds 1] [--bursts 64,32]

1. net_null, one DPDK TX core (CPU 1): linerate's own TX rate, at each burst size given
   (64 is the DPDK default).
2. veth test bed, afxdp TX on lr0 (CPU 1), rate counted at lr1 by its rx_packets under an XDP
   drop program (a counter that is not linerate's).

Two shared vCPUs make single rates swing (a neighbour on the host can move a run by 30 %), so
each round is a signed run next to a plain one and the cost is the median of the per-round
ratios, not a ratio of medians.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LR = os.path.join(ROOT, "build", "src", "linerate")
TB = os.path.join(ROOT, "scripts", "testbed.sh")
BPF_OBJ = os.path.join(ROOT, "build", "bpf", "xdp_rx.bpf.o")


def null_rate(signed, seconds, burst):
    with tempfile.TemporaryDirectory() as d:
        cmd = [LR, "run", "-q", "--tx", "net_null0", "--duration", f"{seconds}s", "--json", f"{d}/r.json",
               "--burst", str(burst)]
        if not signed:
            cmd.append("--no-signature")
        subprocess.run(cmd + ["--", "--vdev=net_null0", "--no-pci", "--lcores=0@0,1@1"], check=True,
                       capture_output=True)
        with open(f"{d}/r.json") as f:
            return json.load(f)["totals"]["tx"]["pps"] / 1e6


def rx_packets():
    return int(subprocess.run(["ip", "netns", "exec", "lr-b", "cat", "/sys/class/net/lr1/statistics/rx_packets"],
                              capture_output=True, text=True, check=True).stdout)


def veth_rate(signed, seconds):
    cmd = ["bash", TB, "exec", "a", "--", LR, "run", "-q", "--backend", "afxdp", "--tx", "lr0", "--cpus", "1",
           "--duration", "1h"] + ([] if signed else ["--no-signature"])
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)
        c1, t1 = rx_packets(), time.monotonic()
        time.sleep(seconds)
        c2, t2 = rx_packets(), time.monotonic()
    finally:
        p.send_signal(2)
        p.wait(timeout=15)
    return (c2 - c1) / (t2 - t1) / 1e6


def compare(name, fn, rounds, seconds):
    on, off, ratio = [], [], []
    for i in range(rounds):
        off.append(fn(False, seconds))
        on.append(fn(True, seconds))
        ratio.append(on[-1] / off[-1])
        print(f"{name} round {i + 1}: plain {off[-1]:.3f} Mpps, signed {on[-1]:.3f} Mpps, "
              f"ratio {ratio[-1]:.3f}", flush=True)
    a, b, r = statistics.median(off), statistics.median(on), statistics.median(ratio)
    q = statistics.quantiles(ratio, n=4) if len(ratio) >= 2 else [r, r, r]
    # The spread says how far to trust the median: when the host moves the vCPU between a slow
    # and a fast state mid-round, single ratios land far from 1 on both sides.
    print(f"{name}: median plain {a:.3f}, signed {b:.3f} Mpps; cost (median of the per-round ratios) "
          f"{100 * (1 - r):.1f} %, ratio quartiles {q[0]:.3f}..{q[2]:.3f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--seconds", type=float, default=1)
    ap.add_argument("--bursts", default="64,32", help="net_null burst sizes (comma-separated)")
    ap.add_argument("--no-veth", action="store_true", help="net_null only")
    a = ap.parse_args()
    for b in [int(x) for x in a.bursts.split(",")]:
        compare(f"net_null dpdk burst {b}", lambda signed, sec, b=b: null_rate(signed, sec, b), a.rounds,
                a.seconds)
    if a.no_veth:
        return
    subprocess.run(["bash", TB, "up"], check=True, stdout=subprocess.DEVNULL)
    try:
        subprocess.run(["ip", "-n", "lr-b", "link", "set", "dev", "lr1", "xdp", "obj", BPF_OBJ, "sec", "xdp"],
                       check=True)
        compare("veth afxdp", veth_rate, a.rounds, max(a.seconds, 2))
    finally:
        subprocess.run(["ip", "-n", "lr-b", "link", "set", "dev", "lr1", "xdp", "off"], check=False)
        subprocess.run(["bash", TB, "down"], check=False, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
