#!/usr/bin/env python3
"""Benchmark (not a test): transmit rate on the veth test bed, one TX core each, measured at
the receiving side by a counter that belongs to none of the tools.

    sudo python3 tests/bench/afxdp_vs_peers.py [--rounds 3] [--seconds 4]

Senders, each pinned to CPU 1 in namespace lr-a on lr0, 64-byte UDP frames:
  linerate   --backend afxdp --tx-engine live (XDP live frames: BPF_PROG_RUN, signed in the kernel)
  linerate   --backend afxdp (AF_XDP copy mode; veth has no zero-copy), signed
  testpmd    --forward-mode=txonly on DPDK's net_af_xdp vdev (main lcore CPU 0, TX lcore CPU 1)
  trafgen    netsniff-ng, PF_PACKET TX ring with qdisc bypass, one process. It exits on the first
             EAGAIN, which a threaded receiver's back-pressure causes: it is then reported as n/a
Receiver: lr1 in namespace lr-b runs a plain XDP drop program (linerate's xdp_rx object,
attached by iproute2 with no sockets, so every test frame is dropped in the driver); the rate
is the delta of lr1's rx_packets over a window that starts after each tool's start-up. The
receiver's NAPI runs threaded, pinned to CPU 0, so the sender's core does only the sender's work.
On two cores the receiver is the ceiling, so the sender's CPU time per packet (its processes'
user + system time over the window / packets counted) is reported too.

    --xdp-trafficgen BIN   also run xdp-trafficgen built from xdp-tools' source (Debian's
                           package fails on this kernel): BIN udp -i lr0 ...
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
LR = os.path.join(ROOT, "build", "src", "linerate")
BPF_OBJ = os.path.join(ROOT, "build", "bpf", "xdp_rx.bpf.o")
TB = os.path.join(ROOT, "scripts", "testbed.sh")
TRAFGEN_CFG = """{
  eth(da=02:00:00:00:00:02, sa=02:00:00:00:00:01),
  ipv4(saddr=198.18.0.1, daddr=198.18.0.2, ttl=1, df),
  udp(sp=1024, dp=1024),
  fill(0x00, 18)
}
"""


def rx_packets():
    out = subprocess.run(["ip", "netns", "exec", "lr-b", "cat", "/sys/class/net/lr1/statistics/rx_packets"],
                         capture_output=True, text=True, check=True).stdout
    return int(out)


def in_ns_a(argv):
    return ["bash", TB, "exec", "a", "--"] + argv


def descendants(pid):
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return out


def cpu_seconds(pid):
    """User + system time of `pid` and every process below it."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for p in descendants(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total / tick


def measure(argv, seconds, warmup=2.0):
    err = tempfile.TemporaryFile("w+")
    p = subprocess.Popen(in_ns_a(argv), stdout=subprocess.DEVNULL, stderr=err)
    try:
        time.sleep(warmup)
        if p.poll() is not None:
            err.seek(0)
            print(f"{' '.join(argv)} exited during warm-up ({p.returncode}): {err.read()[-300:].strip()}")
            return None, None
        c1, t1, u1 = rx_packets(), time.monotonic(), cpu_seconds(p.pid)
        time.sleep(seconds)
        c2, t2, u2 = rx_packets(), time.monotonic(), cpu_seconds(p.pid)
    finally:
        p.send_signal(2)
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return (c2 - c1) / (t2 - t1) / 1e6, (u2 - u1) / max(c2 - c1, 1) * 1e9


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4)
    ap.add_argument("--xdp-trafficgen", help="an xdp-trafficgen binary built from xdp-tools' source")
    a = ap.parse_args()
    subprocess.run(["bash", TB, "up"], check=True, stdout=subprocess.DEVNULL)
    try:
        subprocess.run(["ip", "-n", "lr-b", "link", "set", "dev", "lr1", "xdp", "obj", BPF_OBJ, "sec", "xdp"],
                       check=True)
        # The receiver's NAPI in its own kernel thread on CPU 0: the sender keeps CPU 1.
        subprocess.run(["ip", "netns", "exec", "lr-b", "sh", "-c", "echo 1 > /sys/class/net/lr1/threaded"],
                       check=False)
        for pid in subprocess.run(["pgrep", "napi/lr1"], capture_output=True, text=True).stdout.split():
            subprocess.run(["taskset", "-pc", "0", pid], check=False, stdout=subprocess.DEVNULL)
        with tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False) as f:
            f.write(TRAFGEN_CFG)
            cfg = f.name
        tools = {
            "linerate live": [LR, "run", "-q", "--backend", "afxdp", "--tx-engine", "live", "--tx", "lr0",
                              "--cpus", "1", "--duration", "1h"],
            "linerate afxdp": [LR, "run", "-q", "--backend", "afxdp", "--tx", "lr0", "--cpus", "1",
                               "--duration", "1h"],
            "testpmd af_xdp": ["taskset", "-c", "0,1", "dpdk-testpmd", "--in-memory", "--no-telemetry",
                               "--vdev=net_af_xdp0,iface=lr0", "--no-pci", "--lcores=0@0,1@1", "--",
                               "--forward-mode=txonly", "--txpkts=60", "--nb-cores=1", "--stats-period=3600"],
            "trafgen": ["taskset", "-c", "1", "trafgen", "--dev", "lr0", "--conf", cfg, "--cpus", "1", "-Q", "-C"],
        }
        if a.xdp_trafficgen:
            tools["xdp-trafficgen"] = ["taskset", "-c", "1", a.xdp_trafficgen, "udp", "-t", "1", "lr0"]
        res = {k: [] for k in tools}
        cpu = {k: [] for k in tools}
        for i in range(a.rounds):
            for name, argv in tools.items():
                mpps, ns = measure(argv, a.seconds)
                if mpps is not None:
                    res[name].append(mpps)
                    cpu[name].append(ns)
            print(f"round {i + 1}: " + "   ".join(f"{k} {v[-1]:.3f} Mpps ({cpu[k][-1]:.0f} ns/pkt)"
                                               for k, v in res.items() if v), flush=True)
        med = {k: statistics.median(v) for k, v in res.items() if v}
        mcpu = {k: statistics.median(v) for k, v in cpu.items() if v}
        print("median: " + ", ".join(f"{k} {v:.3f} Mpps, {mcpu[k]:.0f} ns CPU/pkt" for k, v in med.items()))
        for lr in ("linerate live", "linerate afxdp"):
            others = [k for k in med if not k.startswith("linerate")]
            print(f"{lr}: " + ", ".join(f"{med[lr] / med[k]:.2f}x {k}'s rate, {mcpu[lr] / mcpu[k]:.2f}x its CPU/pkt"
                                        for k in others))
    finally:
        subprocess.run(["ip", "-n", "lr-b", "link", "set", "dev", "lr1", "xdp", "off"], check=False)
        subprocess.run(["bash", TB, "down"], check=False, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
