#!/usr/bin/env python3
"""Benchmark (not a test): the share of valid procedure trials against the offered load, on the
two-core veth bed through a kernel-path DUT (a Linux bridge with an HTB shaper, set well above
the loads so that it forwards everything: its cost to the shared cores is the point).

    python3 tests/bench/trial_validity.py [--trials 100] [--loads 10,30,50,70,90,100] [--hog]

First linerate measures the generator's ceiling through the DUT, as every procedure does (the
highest load it holds paced: `rows[0].range.generator_ceiling_pps` of a frame-loss run). Then,
at each load (in % of that ceiling), `linerate latency --rate LOAD --repeat N` runs N paced
1 s trials and judges each one by the procedures' own rules (offered within --rate-tolerance,
0.1 % by default; nothing dropped by this host; no link outage): the table gives how many were
valid, and the stalls the senders made up for. --hog keeps one core busy with a CPU-bound
process for the whole run, as a shared host would.
"""
import argparse
import collections
import json
import multiprocessing
import os
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from testbed import DutBed  # noqa: E402

LR = os.path.join(ROOT, "build", "src", "linerate")


def procedure(bed, name, args, timeout):
    with tempfile.TemporaryDirectory() as d:
        r = bed.run(bed.nsa, [LR, name, "-q", "--backend", "afxdp", "--tx", bed.ifa, "--rx", bed.ifd, *args,
                              "--json", f"{d}/r.json"], timeout=timeout)
        if not os.path.exists(f"{d}/r.json"):
            raise RuntimeError(f"{name}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        with open(f"{d}/r.json") as f:
            return json.load(f)


def ceiling(bed):
    rep = procedure(bed, "frame-loss", ["--step", "100", "--trial-duration", "1s"], 120)
    rng = rep["rows"][0]["range"]
    return rng["generator_ceiling_pps"], rng["generator_peak_pps"]


def trials_at(bed, load, n):
    """n paced 1 s trials at `load` (a procedure ends after five invalid in a row: then fewer)."""
    rep = procedure(bed, "latency", ["--rate", str(int(load)), "--repeat", str(n), "--trial-duration", "1s"],
                    60 + 3 * n)
    trials = [t for t in rep["trials"] if not t["probe"]]
    why = collections.Counter(t["invalid_reason"].split(" (")[0] for t in trials if not t["valid"])
    return trials, why


def hog():
    while True:
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=100)
    ap.add_argument("--loads", default="10,30,50,70,90,100", help="in %% of the generator's ceiling")
    ap.add_argument("--hog", action="store_true", help="a CPU-bound process on one core throughout")
    a = ap.parse_args()
    busy = None
    if a.hog:
        busy = multiprocessing.Process(target=hog, daemon=True)
        busy.start()
    try:
        with DutBed("lbv") as bed:
            top, peak = ceiling(bed)
            bed.start_kernel_dut(int(4 * peak) + 1000)
            top, peak = ceiling(bed)  # again, with the DUT forwarding
            print(f"generator through the kernel DUT: ceiling {top:,.0f} pps held paced (peak {peak:,.0f}); "
                  f"{a.trials} trials of 1 s per load{', one core hogged' if a.hog else ''}")
            print(f"{'load':>6}  {'pps':>9}  {'trials':>6}  {'valid':>6}  {'valid %':>8}  {'stalls/trial':>12}  "
                  f"{'longest':>9}  invalid because")
            for pct in (float(x) for x in a.loads.split(",")):
                load = top * pct / 100
                trials, why = trials_at(bed, load, a.trials)
                valid = sum(t["valid"] for t in trials)
                stalls = sum(t["stalls"] for t in trials) / len(trials)
                longest = max(t["longest_stall_s"] for t in trials) * 1e3
                print(f"{pct:>5.0f}%  {load:>9,.0f}  {len(trials):>6}  {valid:>6}  {100 * valid / len(trials):>7.1f}%  "
                      f"{stalls:>12.1f}  {longest:>6.1f} ms  {dict(why) if why else ''}", flush=True)
    finally:
        if busy:
            busy.terminate()


if __name__ == "__main__":
    main()
