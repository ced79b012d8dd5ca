#!/usr/bin/env python3
"""Benchmark (not a test): linerate vs dpdk-testpmd --forward-mode=txonly, one TX core each,
64-byte frames into net_null, alternating A/B several rounds in the same run.

    sudo python3 tests/bench/txonly_vs_testpmd.py [--rounds 3] [--seconds 5] [--linerate build/src/linerate]
        [--compare OTHER_LINERATE]

Both tools get the same EAL core map (main lcore on CPU 0, the TX lcore on CPU 1) and the same
burst size (--burst, 64 by default: linerate's DPDK default). testpmd's txonly packet is 60
bytes of data (64 on the wire with FCS), like linerate's default.
linerate runs twice per round: plain frames (--no-signature, like testpmd's) and signed frames
(its default: sequence and timestamp written per packet). Prints Mpps per round, the medians and
the ratios linerate/testpmd. With --compare, a second linerate binary (the build before a change,
say) runs in every round too, so both ratios come from the same run conditions. With --streams,
each round also runs the stream scheduler: one IMIX stream (--size imix) and 16 IMIX streams
(--stream size=imix x 16) on the one queue, signed; it prints 16 streams against one, and against
the single 64-byte stream.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EAL = ["--vdev=net_null0", "--no-pci", "--lcores=0@0,1@1", "--in-memory", "--no-telemetry"]


def linerate(binary, seconds, signed, burst, extra=()):
    with tempfile.TemporaryDirectory() as d:
        rep = os.path.join(d, "r.json")
        subprocess.run([binary, "run", "-q", "--tx", "net_null0", "--duration", f"{seconds}s", "--json", rep,
                        "--burst", str(burst)] + list(extra) +
                       ([] if signed else ["--no-signature"]) + ["--"] + EAL,
                       check=True, capture_output=True, timeout=seconds + 60)
        with open(rep) as f:
            return json.load(f)["totals"]["tx"]["pps"] / 1e6


def testpmd(seconds, burst):
    cmd = ["timeout", "-s", "INT", str(seconds + 2), "dpdk-testpmd"] + EAL + [
        "--", "--forward-mode=txonly", "--txpkts=60", "--nb-cores=1", "--txq=1", "--rxq=1", f"--burst={burst}",
        "--stats-period=1"]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 60)
    pps = [int(x) for x in re.findall(r"Tx-pps:\s+(\d+)", p.stdout)]
    steady = [x for x in pps[1:] if x > 0]  # drop the first, partial period
    if not steady:
        sys.exit(f"could not read testpmd's rate:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return statistics.median(steady) / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--linerate", default=os.path.join(HERE, "../../build/src/linerate"))
    ap.add_argument("--burst", type=int, default=64)
    ap.add_argument("--compare", help="a second linerate binary to run in every round")
    ap.add_argument("--streams", action="store_true", help="also one and 16 IMIX streams (this build only)")
    a = ap.parse_args()
    bins = [("linerate", a.linerate)] + ([("compare", a.compare)] if a.compare else [])
    plain = {n: [] for n, _ in bins}
    signed = {n: [] for n, _ in bins}
    tp = []
    imix1, imix16 = [], []
    sixteen = [x for _ in range(16) for x in ("--stream", "size=imix")]
    for i in range(a.rounds):
        line = []
        for name, b in bins:
            plain[name].append(linerate(b, a.seconds, False, a.burst))
            signed[name].append(linerate(b, a.seconds, True, a.burst))
            line.append(f"{name} plain {plain[name][-1]:.2f} Mpps, signed {signed[name][-1]:.2f} Mpps")
        if a.streams:
            imix1.append(linerate(a.linerate, a.seconds, True, a.burst, ["--size", "imix"]))
            imix16.append(linerate(a.linerate, a.seconds, True, a.burst, sixteen))
            line.append(f"IMIX 1 stream {imix1[-1]:.2f} Mpps, 16 streams {imix16[-1]:.2f} Mpps")
        tp.append(testpmd(a.seconds, a.burst))
        print(f"round {i + 1}: " + "; ".join(line) + f"; testpmd txonly {tp[-1]:.2f} Mpps", flush=True)
    mt = statistics.median(tp)
    for name, _ in bins:
        ml, ms = statistics.median(plain[name]), statistics.median(signed[name])
        print(f"median {name}: plain {ml:.2f}, signed {ms:.2f}, testpmd txonly {mt:.2f} Mpps; "
              f"ratios plain {ml / mt:.2f}x, signed {ms / mt:.2f}x")
    if a.streams:
        m1, m16, ms = statistics.median(imix1), statistics.median(imix16), statistics.median(signed["linerate"])
        print(f"median streams: IMIX 1 stream {m1:.2f}, 16 streams {m16:.2f} Mpps; 16 against 1: {m16 / m1:.2f}x, "
              f"against the single signed 64-byte stream: {m16 / ms:.2f}x")


if __name__ == "__main__":
    main()
