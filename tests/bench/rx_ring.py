#!/usr/bin/env python3
"""Benchmark (not a test): linerate's receive rate per core on a net_ring pair, signed and
plain, optionally against a second linerate binary in the same run (before/after a change).

    sudo python3 tests/bench/rx_ring.py [--rounds 3] [--seconds 4] [--compare OTHER_BINARY] [--streams N]

One TX worker on CPU 1 sends 64-byte frames into ring0 as fast as it can; one RX worker on
CPU 0 (beside the mostly sleeping main lcore) receives them from ring1 and measures every
frame (classification, sequence tracking, latency histogram) or, with --no-signature, only
counts them. When the receiver is slower than the sender the ring fills and the sender sees
back-pressure: the RX rate is then the receiver's ceiling on one core. When the sender met
back-pressure on fewer than 5 % of its frames (counting each burst the ring refused in part),
the receiver mostly waited for it and the figure is only a lower bound ("sender-bound", marked
* in the round's line). This host's transfers between its cores slow down at times, and the
sender, which writes every frame, is then the slow side: such a run falls to a fraction of
the others (docs/benchmarks.md, "what the collapsed rounds are").
Each round runs every binary and mode once, alternating; medians are printed, with the ratio
signed/plain, each ratio both of the medians and as the median of every round's own ratio,
over every round and over the rounds where both figures were the receiver's.

--streams N adds two signed modes: N flows of one stream (`--flows N`: N sequence-tracked
signature ids) and N streams of their own (a profile of N [[stream]] tables, one flow each:
N sequence trackers and N latency histograms per RX queue), each against one signed stream.
Their sender is slower than one stream's (N streams go through the stream scheduler and
compose each frame), so each round also runs it alone, on the same CPU, into net_null: a
receiver's figure at 90 % of that or more is marked sender-bound too, whatever the
back-pressure.
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EAL = ["--no-pci", "--lcores=0@0,1@1,2@0", "--in-memory", "--no-telemetry"]


MODES = {"signed": [], "plain": ["--no-signature"]}


def streams_profile(d, n):
    path = os.path.join(d, "streams.toml")
    with open(path, "w") as f:
        f.write('procedure = "run"\n')
        for i in range(n):
            f.write(f'[[stream]]\nname = "s{i}"\nsrc-port = {1024 + i}\n')
    return path


def report(binary, seconds, mode, ports, eal):
    with tempfile.TemporaryDirectory() as d:
        rep = os.path.join(d, "r.json")
        command = ["run"]
        extra = MODES.get(mode, [])
        if mode.startswith("streams"):  # a profile of streams: `check PROFILE` runs it
            command = ["check", streams_profile(d, int(mode.split()[1]))]
        cmd = [binary, *command, "-q", *ports, "--duration", f"{seconds}s", "--json", rep] + extra + ["--"] + eal
        subprocess.run(cmd, check=True, capture_output=True, timeout=seconds + 60)
        with open(rep) as f:
            return json.load(f)["totals"]


def run(binary, seconds, mode):
    t = report(binary, seconds, mode, ["--ring-pair", "ring0,ring1", "--tx", "ring0", "--rx", "ring1"], EAL)
    return t["rx"]["pps"] / 1e6, t["tx_backpressure"] >= SENDER_BOUND_BELOW * t["tx"]["packets"]


# The sender alone, on the same CPU, into net_null (which takes every frame): the most the
# pair's receiver can be offered in that mode.
SENDER_ALONE_EAL = ["--vdev=net_null0", "--no-pci", "--lcores=0@0,1@1", "--in-memory", "--no-telemetry"]


def sender_alone(binary, seconds, mode):
    return report(binary, seconds, mode, ["--tx", "net_null0"], SENDER_ALONE_EAL)["tx"]["pps"] / 1e6


# A receiver's figure at this share of what its sender sends alone or more was bound by the
# sender, whatever the back-pressure.
SENDER_BOUND_AT = 0.9


# A run whose sender met back-pressure on fewer bursts than this share of its frames was
# bound by the sender, not the receiver.
SENDER_BOUND_BELOW = 0.05


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--linerate", default=os.path.join(HERE, "../../build/src/linerate"))
    ap.add_argument("--compare", help="a second linerate binary, run alternately (e.g. the build before a change)")
    ap.add_argument("--streams", type=int, default=0, help="also N flows and N streams, signed (e.g. 4096)")
    a = ap.parse_args()
    modes = ["signed", "plain"]
    if a.streams:
        MODES[f"flows {a.streams}"] = ["--flows", str(a.streams)]
        modes += [f"flows {a.streams}", f"streams {a.streams}"]
    bins = [("this", a.linerate)] + ([("compare", a.compare)] if a.compare else [])
    res = {(n, m): [] for n, _ in bins for m in modes}
    rx_bound = {k: [] for k in res}  # per round: the receiver's figure (not sender-bound)
    alone = {k: [] for k in res if k[1] in modes[2:]}  # the many-flow modes' sender, alone
    for i in range(a.rounds):
        line = []
        for name, b in bins:
            for mode in modes:
                pps, rx_limited = run(b, a.seconds, mode)
                note = ""
                if (name, mode) in alone:
                    ceiling = sender_alone(b, a.seconds, mode)
                    alone[(name, mode)].append(ceiling)
                    rx_limited = rx_limited and pps < SENDER_BOUND_AT * ceiling
                    note = f" (sender alone {ceiling:.2f})"
                res[(name, mode)].append(pps)
                rx_bound[(name, mode)].append(rx_limited)
                line.append(f"{name} {mode} {pps:.2f}{'' if rx_limited else '*'}{note}")
        print(f"round {i + 1}: " + ", ".join(line) + " Mpps", flush=True)
    med = {k: statistics.median(v) for k, v in res.items()}
    for (name, mode), v in med.items():
        n = rx_bound[(name, mode)].count(False)
        note = f" ({n} of {a.rounds} rounds sender-bound: lower bounds)" if n else ""
        if (name, mode) in alone:
            note += f"; its sender alone: {statistics.median(alone[(name, mode)]):.2f} Mpps"
        print(f"median {name} {mode:<14}: {v:.2f} Mpps RX{note}")
    # A ratio of the medians, and the median of each round's own ratio: runs a few seconds
    # apart share more of the host's state than runs minutes apart. Then the same over the
    # rounds where both figures were the receiver's.
    def ratio(label, num, den):
        per_round = [x / y for x, y in zip(res[num], res[den])]
        print(f"ratio {label}: {med[num] / med[den]:.2f}x (each round's: median {statistics.median(per_round):.2f}x, "
              f"range {min(per_round):.2f}-{max(per_round):.2f}x)", end="")
        both = [r for r, u, v in zip(per_round, rx_bound[num], rx_bound[den]) if u and v]
        if len(both) == len(per_round):
            print()
        elif both:
            print(f"; in the {len(both)} rounds both were the receiver's: median {statistics.median(both):.2f}x, "
                  f"range {min(both):.2f}-{max(both):.2f}x")
        else:
            print("; no round had both from the receiver")
    for name, _ in bins:
        ratio(f"{name} signed/plain", (name, "signed"), (name, "plain"))
        for mode in modes[2:]:
            ratio(f"{name} {mode}/signed", (name, mode), (name, "signed"))
    if a.compare:
        for mode in modes:
            ratio(f"this/compare {mode}", ("this", mode), ("compare", mode))


if __name__ == "__main__":
    main()
