#!/usr/bin/env python3
"""Benchmark (not a test): the classic experiment, throughput against delay and loss, through
`linerate impair` (docs/impair.md, "The classic experiment").

    sudo python3 tests/bench/impair_classic.py [--delays 0,10,50,100] [--losses 0,0.1,1]
        [--trial-duration 1s] [--iperf-seconds 10] [--json impair-classic.json]
        [--plot impair-classic.svg] [--limit 250000] [--skip-iperf3] [--congestion cubic,bbr]
        [--linerate-from EARLIER.json] [--plot-only EARLIER.json]

For each one-way delay (ms) and loss (%), the emulator runs between the two middle ports of
the DUT layout (testbed.DutBed: <p>1 and <p>2 in <p>-d), both directions with the same delay
and loss each way (TCP needs its ACKs back; the round trip is twice the delay), seed 1, and
--limit large enough for the delay at any rate the bed carries (the store's pages are touched
only as used). Two phases, each over every cell, the emulator started afresh per cell:

  1. linerate: `linerate throughput` (MLRsearch, CSIT's preset with one goal: a loss ratio of
     the emulated loss + 0.5 %, so the search finds what the path carries rather than the
     loss it adds; --trial-duration trials; --drain longer than the round trip) from <p>0 to
     <p>3, both in <p>-a, in one process (a search needs its sender and receiver together).
  2. iperf3: per congestion control in --congestion (iperf3 -C; Mathis' model describes the
     loss-based ones, cubic and reno; BBR paces by its own estimates and does not back off for
     random loss), a TCP bulk transfer of --iperf-seconds from <p>0 (198.18.0.1/15, in <p>-a) to
     <p>3 (198.18.0.2/15), which is moved for this phase into a namespace of its own, <p>-b:
     two ends of a TCP connection in one namespace would talk over the loopback, not through
     the emulator. TSO, GSO, GRO and checksum offload are off on both ends, so every frame on
     the wire is a whole, checksummed frame of at most 1518 bytes (the emulator's --max-frame,
     and what an XDP program takes on a veth). The round trip without the emulator's delay is
     measured first with ping through it at 0 ms.

Printed and written to --json: per cell linerate's throughput (pps and L1 Mbit/s of 64-byte
frames), iperf3's (received Mbit/s, retransmits, its mean RTT) and Mathis et al.'s model for
one TCP flow with random loss p, MSS / RTT x sqrt(3/2) / sqrt(p) (no figure for p = 0), with
RTT = 2 x delay + the measured base. --plot: drawn with matplotlib. iperf3 and matplotlib are
the benchmarks' packages (scripts/deps.sh installs them).
"""
import argparse
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from testbed import DutBed, ns_exists, receiving, sh, wait_stream, wait_until  # noqa: E402

LR = os.environ.get("LINERATE", os.path.join(ROOT, "build", "src", "linerate"))
A_IP, B_IP = "198.18.0.1", "198.18.0.2"
MARGIN_PCT = 0.5  # the throughput goal's loss ratio above the emulated loss
L1_64 = (64 + 20) * 8  # bits of a 64-byte frame on the wire at L1


def parse_list(s):
    return [float(x) for x in s.split(",") if x]


def num(x):
    return f"{x:g}"


class Emulator:
    """`linerate impair` both ways between <p>1 and <p>2 for one cell; ready on entry (its
    XDP program on both ports, a first interval run), stopped with SIGINT on exit."""

    def __init__(self, bed, d, delay_ms, loss_pct, limit):
        self.bed, self.d = bed, d
        self.argv = [LR, "impair", "--backend", "afxdp", "--between", f"{bed.ifb},{bed.ifc}", "--direction", "both",
                     "--delay", f"{num(delay_ms)}ms", "--limit", str(limit), "--seed", "1", "-q",
                     "--interval", "100ms", "--duration", "3600s", "--json", f"{d}/impair.json",
                     "--json-stream", f"{d}/impair.jsonl"]
        if loss_pct > 0:
            self.argv += ["--loss", f"{num(loss_pct)}%"]
        self.report = None

    def __enter__(self):
        for f in ("impair.json", "impair.jsonl"):
            if os.path.exists(f"{self.d}/{f}"):
                os.remove(f"{self.d}/{f}")
        self.proc = self.bed.start(self.bed.nsd, self.argv)
        for ifc in (self.bed.ifb, self.bed.ifc):
            self.bed.wait_xdp(self.bed.nsd, ifc, self.proc)
        wait_stream(f"{self.d}/impair.jsonl", receiving, self.proc, what="the emulator's first interval")
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        out, _ = self.proc.communicate(timeout=60)
        if self.proc.returncode != 0:
            raise RuntimeError(f"linerate impair: exit {self.proc.returncode}\n{out[-3000:]}")
        with open(f"{self.d}/impair.json") as f:
            self.report = json.load(f)
        return False

    def counts(self):
        return {f"{e['from']}->{e['to']}": e["counts"] for e in self.report["impair"]}


def linerate_cell(bed, d, delay_ms, loss_pct, args):
    """The RFC 2544 throughput through the path: MLRsearch, one goal (emulated loss + margin)."""
    goal = loss_pct + MARGIN_PCT
    drain = max(0.5, 4 * delay_ms / 1e3 + 0.2)  # well beyond a round trip
    with Emulator(bed, d, delay_ms, loss_pct, args.limit) as em:
        r = bed.run(bed.nsa, [LR, "throughput", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--rx", bed.ifd,
                              "--preset", "csit", "--goals", num(goal), "--trial-duration", args.trial_duration,
                              "--drain", f"{drain:.3f}s", "--json", f"{d}/tp.json"], timeout=7200)
    if r.returncode != 0:
        raise RuntimeError(f"linerate throughput: exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}")
    with open(f"{d}/tp.json") as f:
        rep = json.load(f)
    row = rep["rows"][0]
    g = row["goals"][0]
    tp = g["throughput"] or g["lower_bound"] or {"pps": 0.0, "l1_bps": 0.0}
    return {"goal_loss_pct": goal, "pps": tp["pps"], "l1_mbps": tp["l1_bps"] / 1e6, "at_least": g["at_least"],
            "generator_ceiling_pps": row["range"]["generator_ceiling_pps"], "trials": row["trials"],
            "emulator": em.counts()}


def remove_ns(ns):
    if ns_exists(ns):
        for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
            sh("kill", "-9", pid, check=False)
        sh("ip", "netns", "del", ns, check=False)


def split_for_tcp(bed):
    """<p>3 into a namespace of its own, <p>-b; addresses on both ends; no offloads."""
    sh("ip", "netns", "add", bed.nsb_tcp)
    sh("ip", "netns", "exec", bed.nsb_tcp, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", check=False)
    sh("ip", "netns", "exec", bed.nsb_tcp, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", check=False)
    sh("ip", "-n", bed.nsa, "link", "set", bed.ifd, "netns", bed.nsb_tcp)
    for ns, ifc, ip in ((bed.nsa, bed.ifa, A_IP), (bed.nsb_tcp, bed.ifd, B_IP)):
        sh("ip", "-n", ns, "addr", "replace", f"{ip}/15", "dev", ifc)
        sh("ip", "-n", ns, "link", "set", ifc, "mtu", "1500", "up")
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        r = sh("ip", "netns", "exec", ns, "ethtool", "-K", ifc, "tx", "off", "tso", "off", "gso", "off", "gro",
               "off", check=False)
        if r.returncode != 0:
            print(f"warning: ethtool -K {ifc} failed ({r.stderr.strip()}): large or partially checksummed frames "
                  f"may not cross the emulator", file=sys.stderr)
    wait_until(lambda: bed.operstate(bed.nsb_tcp, bed.ifd) == "up", 5, f"{bed.ifd} up in {bed.nsb_tcp}")


def base_rtt_ms(bed, d, limit):
    """The round trip through the emulator at 0 ms: ping's average over 20 echoes."""
    with Emulator(bed, d, 0, 0, limit):
        r = sh("ip", "netns", "exec", bed.nsa, "ping", "-c", "20", "-i", "0.05", "-W", "2", B_IP, check=False)
    m = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)", r.stdout)
    if not m:
        raise RuntimeError(f"ping through the emulator failed:\n{r.stdout}{r.stderr}")
    return float(m.group(2))


def iperf3_cell(bed, d, delay_ms, loss_pct, args, congestion):
    """One TCP bulk transfer of --iperf-seconds through the path, with `congestion` control."""
    with Emulator(bed, d, delay_ms, loss_pct, args.limit) as em:
        server = subprocess.Popen(bed.wrap(bed.nsb_tcp, ["iperf3", "-s", "-1", "-B", B_IP, "-J"]),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            listening = ["ip", "netns", "exec", bed.nsb_tcp, "ss", "-Hltn", "sport", "=", ":5201"]
            wait_until(lambda: sh(*listening).stdout.strip(), 10, "iperf3 listening", server)
            r = subprocess.run(bed.wrap(bed.nsa, ["iperf3", "-c", B_IP, "-t", str(args.iperf_seconds), "-C", congestion, "-J"]),
                               capture_output=True, text=True, timeout=args.iperf_seconds + 120)
        finally:
            if server.poll() is None:
                server.kill()
            server.communicate(timeout=30)
    try:
        rep = json.loads(r.stdout)
    except ValueError:
        raise RuntimeError(f"iperf3: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    if "error" in rep:
        raise RuntimeError(f"iperf3: {rep['error']}")
    end = rep["end"]
    sender = end["streams"][0]["sender"] if end.get("streams") else {}
    return {"mbps": end["sum_received"]["bits_per_second"] / 1e6, "retransmits": end["sum_sent"].get("retransmits"),
            "mean_rtt_ms": sender["mean_rtt"] / 1e3 if "mean_rtt" in sender else None,
            "mss": rep["start"].get("tcp_mss_default"), "emulator": em.counts()}


def mathis_mbps(mss, rtt_ms, loss_pct):
    """Mathis, Semke, Mahdavi, Ott (1997): MSS / RTT x sqrt(3/2) / sqrt(p)."""
    if loss_pct <= 0 or rtt_ms <= 0:
        return None
    return mss * 8 / (rtt_ms / 1e3) * math.sqrt(1.5) / math.sqrt(loss_pct / 100) / 1e6


# ---- The plot ----

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def plot(cells, path):
    """Throughput (Mbit/s, log) against the one-way delay: per loss linerate's, iperf3's and
    Mathis' model, drawn by matplotlib. Returns the path written."""
    losses = sorted({c["loss_pct"] for c in cells})
    series = []  # (label, colour, dash, marker, [(delay, mbps)])
    for i, loss in enumerate(losses):
        row = sorted((c for c in cells if c["loss_pct"] == loss), key=lambda c: c["delay_ms"])
        colour = COLOURS[i % len(COLOURS)]
        kinds = [("linerate", lambda c: c.get("linerate_l1_mbps"), "", "o")]
        kinds += [(f"iperf3 {cc}", lambda c, cc=cc: c.get("iperf3", {}).get(cc, {}).get("mbps"), ":" if k else "", "s^"[k % 2])
                  for k, cc in enumerate(sorted({cc for c in row for cc in c.get("iperf3", {})}))]
        kinds += [("Mathis", lambda c: c.get("mathis_mbps"), "6,4", "")]
        for label, value, dash, marker in kinds:
            pts = [(c["delay_ms"], value(c)) for c in row if value(c)]
            if pts:
                series.append((f"{label}, loss {num(loss)} %", colour, dash, marker, pts))
    import matplotlib  # python3-matplotlib (scripts/deps.sh)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(8, 5))
    for label, colour, dash, marker, pts in series:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], color=colour,
                linestyle={"": "-", ":": ":"}.get(dash, "--"),
                marker=marker or None, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("one-way delay (ms), each direction")
    ax.set_ylabel("throughput (Mbit/s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    return path


# ---- The run ----

def print_table(cells, base_rtt, congestions):
    print(f"\nbase round trip through the emulator at 0 ms: "
          f"{'-' if base_rtt is None else f'{base_rtt:.3f} ms'}")
    print(f"{'delay':>7} {'RTT':>9} {'loss':>6} {'goal':>6} {'linerate pps':>14} {'L1 Mbit/s':>10} "
          + "".join(f"{cc + ' Mbit/s':>14} {'retrans':>8} " for cc in congestions) + f"{'Mathis Mbit/s':>14}")
    def f(v, fmt):
        return "-" if v is None else format(v, fmt)
    for c in cells:
        tp = "-" if c.get("linerate_pps") is None else \
            (">=" if c.get("linerate_at_least") else "") + f"{c['linerate_pps']:,.0f}"
        print(f"{num(c['delay_ms']):>5}ms {f(c['rtt_ms'], '.3f'):>7}ms {num(c['loss_pct']):>5}% "
              f"{f(c.get('goal_loss_pct'), '.2f'):>5}% {tp:>14} {f(c.get('linerate_l1_mbps'), '.2f'):>10} "
              + "".join(f"{f(c.get('iperf3', {}).get(cc, {}).get('mbps'), '.3f'):>14} "
                        f"{f(c.get('iperf3', {}).get(cc, {}).get('retransmits'), 'd'):>8} " for cc in congestions)
              + f"{f(c.get('mathis_mbps'), '.3f'):>14}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--delays", default="0,10,50,100", help="one-way delays, ms")
    ap.add_argument("--losses", default="0,0.1,1", help="losses, %%")
    ap.add_argument("--trial-duration", default="1s", help="linerate throughput's final trial duration")
    ap.add_argument("--iperf-seconds", type=int, default=10)
    ap.add_argument("--limit", type=int, default=250_000, help="the emulator's --limit (frames held per direction)")
    ap.add_argument("--prefix", default="lrc", help="the test bed's prefix")
    ap.add_argument("--json", default="impair-classic.json")
    ap.add_argument("--plot", default="impair-classic.svg")
    ap.add_argument("--skip-iperf3", action="store_true", help="linerate's phase only")
    ap.add_argument("--congestion", default="cubic,bbr",
                    help="iperf3's TCP congestion control algorithms, one transfer each per cell (Mathis' model "
                         "describes loss-based ones: reno, cubic)")
    ap.add_argument("--linerate-from", metavar="JSON",
                    help="take linerate's figures from an earlier run's --json instead of measuring them again")
    ap.add_argument("--plot-only", metavar="JSON", help="draw --plot from an earlier run's --json, nothing else")
    a = ap.parse_args()
    congestions = [x for x in a.congestion.split(",") if x]
    if a.plot_only:
        with open(a.plot_only) as f:
            print(f"wrote {plot(json.load(f)['cells'], a.plot)}")
        return
    if os.geteuid() != 0:
        sys.exit("impair_classic: must run as root (namespaces, XDP)")
    if not os.access(LR, os.X_OK):
        sys.exit(f"impair_classic: no linerate at {LR} (scripts/build.sh binary)")
    if not a.skip_iperf3 and not shutil.which("iperf3"):
        print("impair_classic: iperf3 is not installed: apt-get install iperf3 (or --skip-iperf3 for linerate's "
              "phase alone)", file=sys.stderr)
        sys.exit(3)
    grid = [(dly, loss) for dly in parse_list(a.delays) for loss in parse_list(a.losses)]
    cells = {g: {"delay_ms": g[0], "loss_pct": g[1]} for g in grid}
    earlier = {}
    if a.linerate_from:
        with open(a.linerate_from) as f:
            for c in json.load(f)["cells"]:
                earlier[(c["delay_ms"], c["loss_pct"])] = {k: v for k, v in c.items() if k.startswith("linerate_") or
                                                           k in ("goal_loss_pct", "generator_ceiling_pps")}
    base = None
    bed = DutBed(a.prefix)
    bed.nsb_tcp = f"{a.prefix}-b"
    remove_ns(bed.nsb_tcp)  # a crashed run's
    try:
        with bed, tempfile.TemporaryDirectory() as d:
            for dly, loss in grid:
                if (dly, loss) in earlier:
                    cells[(dly, loss)].update(earlier[(dly, loss)])
                    continue
                print(f"linerate throughput, delay {num(dly)} ms, loss {num(loss)} % ...", flush=True)
                r = linerate_cell(bed, d, dly, loss, a)
                cells[(dly, loss)].update({"goal_loss_pct": r["goal_loss_pct"], "linerate_pps": r["pps"],
                                           "linerate_l1_mbps": r["l1_mbps"], "linerate_at_least": r["at_least"],
                                           "linerate_trials": r["trials"], "linerate_emulator": r["emulator"],
                                           "generator_ceiling_pps": r["generator_ceiling_pps"]})
                print(f"  {r['pps']:,.0f} pps ({r['l1_mbps']:.2f} Mbit/s at L1), {r['trials']} trials", flush=True)
            if not a.skip_iperf3:
                split_for_tcp(bed)
                base = base_rtt_ms(bed, d, a.limit)
                for dly, loss in grid:
                    for cc in congestions:
                        print(f"iperf3 ({cc}), delay {num(dly)} ms, loss {num(loss)} % ...", flush=True)
                        r = iperf3_cell(bed, d, dly, loss, a, cc)
                        cells[(dly, loss)]["mss"] = r.pop("mss")
                        cells[(dly, loss)].setdefault("iperf3", {})[cc] = r
                        print(f"  {r['mbps']:.3f} Mbit/s, {r['retransmits']} retransmits", flush=True)
    finally:
        remove_ns(bed.nsb_tcp)
    out = []
    for g in grid:
        c = cells[g]
        c["rtt_ms"] = 2 * c["delay_ms"] + (base or 0)
        c["mathis_mbps"] = mathis_mbps(c.get("mss") or 1448, c["rtt_ms"] if base is not None or c["delay_ms"] else 0,
                                       c["loss_pct"])
        out.append(c)
    print_table(out, base, congestions)
    with open(a.json, "w") as f:
        json.dump({"base_rtt_ms": base, "margin_pct": MARGIN_PCT, "frame_size": 64, "congestion": congestions,
                   "cells": out}, f, indent=2)
    print(f"\nwrote {a.json} and {plot(out, a.plot)}")


if __name__ == "__main__":
    main()
