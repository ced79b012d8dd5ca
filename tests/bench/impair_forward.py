#!/usr/bin/env python3
"""Benchmark (not a test): the frames per second `linerate impair` forwards on one core with a
10 ms delay, beside the kernel's own forwarding (a Linux bridge) on the same core and bed.

    python3 tests/bench/impair_forward.py [--rates 100k,200k,...,0] [--seconds 3] [--delay 10ms] [--json FILE]

The bed (scripts/testbed.py DutBed): the generator sends on <p>0 and counts what arrives on <p>3
(both in <p>-a); the device under test in <p>-d joins <p>1 and <p>2. The device's work runs on
CPU 0, the generator on CPU 1:
  impair   linerate impair --direction a-to-b --delay D --cpus 0: its worker receives, holds
           and sends on CPU 0; the copy of each frame into its socket's memory runs in <p>1's
           receive path, which a veth runs on the sender's CPU (1)
  kernel   a bridge joining <p>1 and <p>2; RPS sends <p>1's receive work (the bridge) to CPU 0
The generator: one linerate run per load, AF_XDP sockets on <p>0 (CPU 1), plain 64-byte frames,
the XDP counting sink on <p>3 (--rx-mode xdp). Each device takes the loads in turn (0:
unpaced). Reported per load: offered, forwarded (what arrived at <p>3 over the sending time),
loss and CPU 0's busy share; per device the highest load forwarded with less than 0.1 % loss;
for impair the frames it held at most (the delay's memory) and its held time against the delay.
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


def generator(bed, seconds, rate=None):
    with tempfile.TemporaryDirectory() as d:
        pace = ["--rate", str(rate)] if rate else []
        r = bed.run(bed.nsa, [LR, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--tx-engine", "socket",
                              "--rx", bed.ifd, "--rx-mode", "xdp", "--no-signature", "--cpus", "1",
                              "--duration", f"{seconds}s", "--drain", "500ms", "--json", f"{d}/g.json", *pace],
                    timeout=seconds + 120)
        if r.returncode not in (0, 1):
            raise RuntimeError(f"generator exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        with open(f"{d}/g.json") as f:
            rep = json.load(f)
    t = rep["totals"]
    sent, received, secs = t["tx"]["packets"], t["rx"]["packets"], t["tx_seconds"]
    return {"offered_pps": sent / secs, "forwarded_pps": received / secs, "sent": sent, "received": received,
            "loss_pct": 100.0 * (sent - received) / sent if sent else 0.0}


def kernel_bridge(bed):
    """The kernel's forwarding: a bridge joining <p>1 and <p>2, <p>1's receive work sent to CPU 0
    by RPS (a veth receives on the sender's CPU otherwise)."""
    ns, br = bed.nsd, "br0"
    sh("ip", "-n", ns, "link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0")
    for ifc in (bed.ifb, bed.ifc):
        sh("ip", "-n", ns, "link", "set", ifc, "master", br)
    sh("ip", "-n", ns, "link", "set", br, "up")
    bed.wait_bridge_forwarding()
    sh("ip", "netns", "exec", ns, "sh", "-c", f"echo 1 > /sys/class/net/{bed.ifb}/queues/rx-0/rps_cpus")
    return None


def impair_between(bed, d, delay):
    """linerate impair on CPU 0, one direction, `delay`."""
    imp = bed.start(bed.nsd, [LR, "impair", "--backend", "afxdp", "--between", f"{bed.ifb},{bed.ifc}",
                              "--direction", "a-to-b", "--delay", delay, "--cpus", "0",
                              "--interval", "500ms", "--json", f"{d}/i.json"])
    bed.wait_xdp(bed.nsd, bed.ifb, imp)
    return imp


def impair_report(imp, d):
    imp.send_signal(signal.SIGINT)
    out, _ = imp.communicate(timeout=30)
    if imp.returncode != 0:
        raise RuntimeError(f"impair exit {imp.returncode}\n{out[-3000:]}")
    with open(f"{d}/i.json") as f:
        rep = json.load(f)
    held = [int(m) for m in re.findall(r"held (\d+)", out)]
    e = rep["impair"][0]
    return {"held_max": max(held) if held else 0, "held_time_p50_ms": e["held_time"]["p50_ns"] / 1e6,
            "held_time_p99_ms": e["held_time"]["p99_ns"] / 1e6, "counts": e["counts"],
            "ingress_host_dropped": e["ingress_host_dropped"]}


def ladder(name, rates, seconds, delay):
    """One device, the loads in `rates` (pps; 0: unpaced) in turn on one bed."""
    out = []
    with DutBed(unique("lb" + name[0])) as bed, tempfile.TemporaryDirectory() as d:
        imp = impair_between(bed, d, delay) if name == "impair" else kernel_bridge(bed)
        for rate in rates:
            before = cpu0_times()
            g = generator(bed, seconds, rate)
            g["cpu0_busy"] = busy_share(before, cpu0_times())
            g["asked_pps"] = rate
            out.append(g)
            print(f"{name:>6} at {'unpaced' if not rate else f'{rate / 1e3:.0f} kpps'}: offered "
                  f"{g['offered_pps'] / 1e6:.3f} Mpps, forwarded {g['forwarded_pps'] / 1e6:.3f} Mpps, loss "
                  f"{g['loss_pct']:.2f} %, CPU 0 busy {100 * g['cpu0_busy']:.0f} %", flush=True)
            time.sleep(1)
        extra = impair_report(imp, d) if imp else {}
    if extra:
        print(f"        impair held at most {extra['held_max']:,} frames ({extra['held_max'] * (1514 + 41) / 2**20:.0f} MiB "
              f"of 1514-byte slots and their bookkeeping); held time p50 {extra['held_time_p50_ms']:.3f} ms, p99 "
              f"{extra['held_time_p99_ms']:.3f} ms (asked {delay}); the host dropped {extra['ingress_host_dropped']:,} "
              f"before it received them; {extra['counts']}", flush=True)
    zero_loss = max((g["offered_pps"] for g in out if g["asked_pps"] and g["loss_pct"] < 0.1), default=0.0)
    return {"loads": out, "zero_loss_pps": zero_loss, "impair": extra}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="100k,200k,300k,400k,600k,800k,0",
                    help="loads in turn (pps, k or M; 0 unpaced)")
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--delay", default="10ms")
    ap.add_argument("--json")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("needs root (namespaces, XDP)")
    if not os.path.exists(LR):
        sys.exit(f"no binary at {LR}: build first (scripts/build.sh)")
    mult = {"k": 1e3, "M": 1e6}
    rates = [int(float(r[:-1]) * mult[r[-1]]) if r[-1] in mult else int(r) for r in a.rates.split(",")]
    res = {name: ladder(name, rates, a.seconds, a.delay) for name in ("kernel", "impair")}
    k, i = res["kernel"], res["impair"]
    print(f"\nhighest load forwarded with < 0.1 % loss: kernel bridge {k['zero_loss_pps'] / 1e6:.3f} Mpps, "
          f"linerate impair (delay {a.delay}) {i['zero_loss_pps'] / 1e6:.3f} Mpps")
    flood = {n: r["loads"][-1]["forwarded_pps"] for n, r in res.items() if not r["loads"][-1]["asked_pps"]}
    if len(flood) == 2:
        print(f"forwarded under an unpaced load: kernel bridge {flood['kernel'] / 1e6:.3f} Mpps, linerate impair "
              f"{flood['impair'] / 1e6:.3f} Mpps: impair/kernel {flood['impair'] / flood['kernel']:.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"delay": a.delay, "seconds": a.seconds, "results": res}, f, indent=1)


if __name__ == "__main__":
    main()
