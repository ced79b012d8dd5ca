#!/usr/bin/env python3
"""Benchmark (not a test): linerate's receive rate per core on a net_ring pair, signed and
plain, optionally against a second linerate binary in the same run (before/after a change).

    sudo python3 tests/bench/rx_ring.py [--rounds 3] [--seconds 4] [--compare OTHER_BINARY]

One TX worker on CPU 1 sends 64-byte frames into ring0 as fast as it can; one RX worker on
CPU 0 (beside the mostly sleeping main lcore) receives them from ring1 and measures every
frame (classification, sequence tracking, latency histogram) or, with --no-signature, only
counts them. When the receiver is slower than the sender the ring fills and the sender sees
back-pressure: the RX rate is then the receiver's ceiling on one core. When the sender shows
no back-pressure, the receiver kept up and the figure is only a lower bound ("sender-bound").
Each round runs every binary and mode once, alternating; medians are printed.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EAL = ["--no-pci", "--lcores=0@0,1@1,2@0", "--in-memory", "--no-telemetry"]


def run(binary, seconds, signed):
    with tempfile.TemporaryDirectory() as d:
        rep = os.path.join(d, "r.json")
        cmd = [binary, "run", "-q", "--ring-pair", "ring0,ring1", "--tx", "ring0", "--rx", "ring1",
               "--duration", f"{seconds}s", "--json", rep] + ([] if signed else ["--no-signature"]) + ["--"] + EAL
        subprocess.run(cmd, check=True, capture_output=True, timeout=seconds + 60)
        with open(rep) as f:
            r = json.load(f)
    t = r["totals"]
    return t["rx"]["pps"] / 1e6, t["tx_backpressure"] > 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--linerate", default=os.path.join(HERE, "../../build/src/linerate"))
    ap.add_argument("--compare", help="a second linerate binary, run alternately (e.g. the build before a change)")
    a = ap.parse_args()
    bins = [("this", a.linerate)] + ([("compare", a.compare)] if a.compare else [])
    res = {(n, s): [] for n, _ in bins for s in (True, False)}
    bound = {k: False for k in res}
    for i in range(a.rounds):
        line = []
        for name, b in bins:
            for signed in (True, False):
                pps, rx_limited = run(b, a.seconds, signed)
                res[(name, signed)].append(pps)
                bound[(name, signed)] |= not rx_limited
                line.append(f"{name} {'signed' if signed else 'plain'} {pps:.2f}")
        print(f"round {i + 1}: " + ", ".join(line) + " Mpps", flush=True)
    for (name, signed), v in res.items():
        note = " (sender-bound: a lower bound)" if bound[(name, signed)] else ""
        print(f"median {name} {'signed' if signed else 'plain '}: {statistics.median(v):.2f} Mpps RX{note}")
    if a.compare:
        for signed in (True, False):
            r = statistics.median(res[("this", signed)]) / statistics.median(res[("compare", signed)])
            print(f"ratio this/compare {'signed' if signed else 'plain'}: {r:.2f}x")


if __name__ == "__main__":
    main()
