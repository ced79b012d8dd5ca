#!/usr/bin/env python3
"""Benchmark (not a test): how many frames per second `linerate impair` forwards on one core with
a 10 ms delay, beside the kernel's own forwarding (a Linux bridge) on the same core and bed.

    python3 tests/bench/impair_forward.py [--rounds 3] [--seconds 5] [--delay 10ms] [--json FILE]

The bed (scripts/testbed.py DutBed): the generator sends on <p>0 and counts what arrives on <p>3
(both in <p>-a); the device under test in <p>-d joins <p>1 and <p>2. Everything the device
does runs on CPU 0, the generator on CPU 1:
  impair   linerate impair --direction a-to-b --delay D --cpus 0; <p>1's NAPI (where its XDP
           program hands frames to the emulator's socket) runs threaded, pinned to CPU 0
  kernel   a bridge joining <p>1 and <p>2; RPS sends <p>1's receive work to CPU 0
The generator: one linerate run, AF_XDP sockets on <p>0 (CPU 1), unpaced, plain 64-byte frames,
the XDP counting sink on <p>3 (--rx-mode xdp). Reported per device: the rate offered, the
rate forwarded (what arrived at <p>3 over the sending time), the loss, CPU 0's busy share
over the run, and for impair the frames it held at most (the delay's memory) and its decisions.
The rounds alternate the two devices; the median of each is printed, and every round.
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
from testbed import DutBed, sh, unique, wait_until  # noqa: E402

LR = os.path.join(ROOT, "build", "src", "linerate")


def cpu0_times():
    with open("/proc/stat") as f:
        for line in f:
            if line.startswith("cpu0 "):
                v = [int(x) for x in line.split()[1:]]
                return sum(v), v[3] + v[4]  # total, idle + iowait
    raise RuntimeError("no cpu0 in /proc/stat")


def busy_share(before, after):
    total, idle = after[0] - before[0], after[1] - before[1]
    return 1 - idle / total if total else 0.0


def pin_napi_thread(ifc):
    """Pins the threaded NAPI kthread of `ifc` (napi/<ifc>-N) to CPU 0."""
    def find():
        out = sh("ps", "-eo", "pid,comm", check=False).stdout
        return [line.split()[0] for line in out.splitlines() if f"napi/{ifc}-" in line]
    pids = wait_until(find, 10, f"the NAPI thread of {ifc}")
    for pid in pids:
        sh("taskset", "-pc", "0", pid)


def generator(bed, seconds):
    with tempfile.TemporaryDirectory() as d:
        r = bed.run(bed.nsa, [LR, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--tx-engine", "socket",
                              "--rx", bed.ifd, "--rx-mode", "xdp", "--no-signature", "--cpus", "1",
                              "--duration", f"{seconds}s", "--drain", "500ms", "--json", f"{d}/g.json"],
                    timeout=seconds + 120)
        if r.returncode not in (0, 1):
            raise RuntimeError(f"generator exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        with open(f"{d}/g.json") as f:
            rep = json.load(f)
    t = rep["totals"]
    sent, received, secs = t["tx"]["packets"], t["rx"]["packets"], t["tx_seconds"]
    return {"offered_pps": sent / secs, "forwarded_pps": received / secs, "sent": sent, "received": received,
            "loss_pct": 100.0 * (sent - received) / sent if sent else 0.0}


def through_kernel(seconds):
    with DutBed(unique("lbk")) as bed:
        ns, br = bed.nsd, "br0"
        sh("ip", "-n", ns, "link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0")
        for ifc in (bed.ifb, bed.ifc):
            sh("ip", "-n", ns, "link", "set", ifc, "master", br)
        sh("ip", "-n", ns, "link", "set", br, "up")
        bed.wait_bridge_forwarding()
        sh("ip", "netns", "exec", ns, "sh", "-c", f"echo 1 > /sys/class/net/{bed.ifb}/queues/rx-0/rps_cpus")
        before = cpu0_times()
        g = generator(bed, seconds)
        g["cpu0_busy"] = busy_share(before, cpu0_times())
    return g


def through_impair(seconds, delay):
    with DutBed(unique("lbi")) as bed, tempfile.TemporaryDirectory() as d:
        sh("ip", "netns", "exec", bed.nsd, "sh", "-c", f"echo 1 > /sys/class/net/{bed.ifb}/threaded")
        imp = bed.start(bed.nsd, [LR, "impair", "--backend", "afxdp", "--between", f"{bed.ifb},{bed.ifc}",
                                  "--direction", "a-to-b", "--delay", delay, "--limit", "1000000", "--cpus", "0",
                                  "--interval", "500ms", "--json", f"{d}/i.json"])
        bed.wait_xdp(bed.nsd, bed.ifb, imp)
        pin_napi_thread(bed.ifb)
        before = cpu0_times()
        g = generator(bed, seconds)
        g["cpu0_busy"] = busy_share(before, cpu0_times())
        imp.send_signal(signal.SIGINT)
        out, _ = imp.communicate(timeout=30)
        if imp.returncode != 0:
            raise RuntimeError(f"impair exit {imp.returncode}\n{out[-3000:]}")
        with open(f"{d}/i.json") as f:
            rep = json.load(f)
    held = [int(m) for m in re.findall(r"held (\d+)", out)]
    c = rep["impair"][0]["counts"]
    g["held_max"] = max(held) if held else 0
    g["held_time_p50_ms"] = rep["impair"][0]["held_time"]["p50_ns"] / 1e6
    g["decisions"] = {k: c[k] for k in ("received", "forwarded", "overflowed", "held")}
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--delay", default="10ms")
    ap.add_argument("--json")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (namespaces, XDP)")
    if not os.path.exists(LR):
        sys.exit(f"no binary at {LR}: build first (scripts/build.sh)")
    rounds = {"kernel": [], "impair": []}
    for i in range(a.rounds):
        for name in (("kernel", "impair") if i % 2 == 0 else ("impair", "kernel")):
            r = through_kernel(a.seconds) if name == "kernel" else through_impair(a.seconds, a.delay)
            rounds[name].append(r)
            extra = (f", held at most {r['held_max']:,} frames ({r['held_max'] * 1514 / 2**20:.0f} MiB of 1514-byte slots), "
                     f"held p50 {r['held_time_p50_ms']:.3f} ms, {r['decisions']}" if name == "impair" else "")
            print(f"round {i + 1} {name:>6}: offered {r['offered_pps'] / 1e6:.3f} Mpps, forwarded "
                  f"{r['forwarded_pps'] / 1e6:.3f} Mpps, loss {r['loss_pct']:.2f} %, CPU 0 busy "
                  f"{100 * r['cpu0_busy']:.0f} %{extra}", flush=True)
            time.sleep(2)
    med = {n: statistics.median(x["forwarded_pps"] for x in v) for n, v in rounds.items()}
    print(f"\nmedian forwarded on one core: kernel bridge {med['kernel'] / 1e6:.3f} Mpps, linerate impair "
          f"(delay {a.delay}) {med['impair'] / 1e6:.3f} Mpps: impair/kernel {med['impair'] / med['kernel']:.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"delay": a.delay, "seconds": a.seconds, "rounds": rounds, "median_forwarded_pps": med}, f,
                      indent=1)


if __name__ == "__main__":
    main()
