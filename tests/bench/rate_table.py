#!/usr/bin/env python3
"""Benchmark (not a test): requested against achieved rates on the veth test bed, both
backends, from 1 kpps to the bed's ceiling.

    sudo python3 tests/bench/rate_table.py [--seconds 2] [--rates 1k,10k,100k,...]

linerate sends 64-byte frames from lr0 (namespace a, --rate R, --count R x seconds); the rate
achieved is counted by lr1's own rx_packets in namespace b, sampled every 50 ms by a process
in that namespace (the steady part: between 10 % and 90 % of the frames). Printed beside it:
linerate's offered rate, the rate error, and the departure gaps' stddev and p99 (the sender's
own timestamps). `max` is the ceiling: as fast as it goes.
"""
import argparse
import json
import os
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from testbed import VethBed  # noqa: E402

LR = os.path.join(ROOT, "build", "src", "linerate")


def parse_rate(s):
    mult = {"k": 1e3, "M": 1e6}
    return s if s == "max" else float(s[:-1]) * mult[s[-1]] if s[-1] in mult else float(s)


def one(bed, backend, rate, seconds):
    n = int(rate * seconds) if rate != "max" else None
    args = ["--backend", "afxdp", "--tx", bed.ifa] if backend == "afxdp" else ["--tx", "net_af_xdp0"]
    eal = [] if backend == "afxdp" else ["--", f"--vdev=net_af_xdp0,iface={bed.ifa}", "--no-pci"]
    limit = ["--count", str(n), "--rate", str(int(rate))] if n else ["--duration", f"{seconds}s"]
    sampler = bed.start_rx_counter(bed.nsb, bed.ifb)
    time.sleep(0.3)  # its first sample is the base
    with tempfile.TemporaryDirectory() as d:
        r = bed.run(bed.nsa, [LR, "run", "-q", *args, *limit, "--json", f"{d}/r.json"] + eal, timeout=120)
        if r.returncode != 0:
            sampler.kill()
            raise RuntimeError(r.stdout + r.stderr)
        with open(f"{d}/r.json") as f:
            rep = json.load(f)
    time.sleep(0.5)
    samples = bed.stop_rx_counter(sampler)
    base = samples[0][1]
    total = samples[-1][1] - base
    mid = [(t, c - base) for t, c in samples if 0.1 * total <= c - base <= 0.9 * total]
    achieved = (mid[-1][1] - mid[0][1]) / (mid[-1][0] - mid[0][0]) if len(mid) > 2 else float("nan")
    dep = rep["rate"]["departures"] or {}
    return {"requested": rate, "achieved": achieved, "offered": rep["rate"]["offered_pps"],
            "sent": rep["totals"]["tx"]["packets"], "counted": total,
            "stddev_us": dep.get("stddev_ns", 0) / 1e3, "p99_us": dep.get("p99_ns", 0) / 1e3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--rates", default="1k,10k,100k,250k,500k,750k,1M,max")
    a = ap.parse_args()
    rates = [parse_rate(x) for x in a.rates.split(",")]
    print("| backend | requested | achieved (receiver) | error | offered (linerate) | sent = counted | "
          "departure stddev | departure p99 |")
    print("|---|---|---|---|---|---|---|---|")
    for backend in ("afxdp", "dpdk"):
        with VethBed("lrbench") as bed:
            for rate in rates:
                x = one(bed, backend, rate, a.seconds)
                req = "max" if rate == "max" else f"{rate:,.0f}"
                err = "-" if rate == "max" else f"{100 * (x['achieved'] - rate) / rate:+.3f} %"
                same = "yes" if x["sent"] == x["counted"] else f"{x['sent']} vs {x['counted']}"
                print(f"| {backend} | {req} | {x['achieved']:,.0f} | {err} | {x['offered']:,.0f} | {same} | "
                      f"{x['stddev_us']:.2f} us | {x['p99_us']:.2f} us |", flush=True)


if __name__ == "__main__":
    main()
