#!/usr/bin/env python3
"""Benchmark (not a test): the cost of signing every packet (sequence + timestamp, with an
incremental checksum update) against plain frames, alternating in the same run.

    sudo python3 tests/bench/signature_cost.py [--rounds 3] [--seconds 3]

1. net_null, one DPDK TX core (CPU 1): linerate's own TX rate.
2. veth test bed, afxdp TX on lr0 (CPU 1), rate counted at lr1 by its rx_packets under an XDP
   drop program (a counter that is not linerate's).
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


def null_rate(signed, seconds):
    with tempfile.TemporaryDirectory() as d:
        cmd = [LR, "run", "-q", "--tx", "net_null0", "--duration", f"{seconds}s", "--json", f"{d}/r.json"]
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
    on, off = [], []
    for i in range(rounds):
        off.append(fn(False, seconds))
        on.append(fn(True, seconds))
        print(f"{name} round {i + 1}: plain {off[-1]:.3f} Mpps, signed {on[-1]:.3f} Mpps", flush=True)
    a, b = statistics.median(off), statistics.median(on)
    print(f"{name} median: plain {a:.3f}, signed {b:.3f} Mpps, cost {100 * (a - b) / a:.1f} %")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=3)
    a = ap.parse_args()
    compare("net_null dpdk", null_rate, a.rounds, a.seconds)
    subprocess.run(["bash", TB, "up"], check=True, stdout=subprocess.DEVNULL)
    try:
        subprocess.run(["ip", "-n", "lr-b", "link", "set", "dev", "lr1", "xdp", "obj", BPF_OBJ, "sec", "xdp"],
                       check=True)
        compare("veth afxdp", veth_rate, a.rounds, a.seconds)
    finally:
        subprocess.run(["ip", "-n", "lr-b", "link", "set", "dev", "lr1", "xdp", "off"], check=False)
        subprocess.run(["bash", TB, "down"], check=False, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
