#!/usr/bin/env python3
"""Benchmark (not a test): transmit rate on the veth test bed, one TX core each, measured at
the receiving side by a counter that belongs to none of the tools.

    sudo python3 tests/bench/afxdp_vs_peers.py [--rounds 3] [--seconds 4]

Senders, each pinned to CPU 1 in namespace lr-a on lr0, 64-byte UDP frames:
  linerate   --backend afxdp (AF_XDP copy mode; veth has no zero-copy)
  testpmd    --forward-mode=txonly on DPDK's net_af_xdp vdev (main lcore CPU 0, TX lcore CPU 1)
  trafgen    netsniff-ng, PF_PACKET TX ring with qdisc bypass (its default), one process
Receiver: lr1 in namespace lr-b runs a plain XDP drop program (linerate's xdp_rx object,
attached by iproute2 with no sockets, so every test frame is dropped in the driver); the rate
is the delta of lr1's rx_packets over a window that starts after each tool's start-up.
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


def measure(argv, seconds, warmup=2.0):
    p = subprocess.Popen(in_ns_a(argv), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(warmup)
        if p.poll() is not None:
            sys.exit(f"{argv[0]} exited during warm-up ({p.returncode}): {' '.join(argv)}")
        c1, t1 = rx_packets(), time.monotonic()
        time.sleep(seconds)
        c2, t2 = rx_packets(), time.monotonic()
    finally:
        p.send_signal(2)
        try:
            p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return (c2 - c1) / (t2 - t1) / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=4)
    a = ap.parse_args()
    subprocess.run(["bash", TB, "up"], check=True, stdout=subprocess.DEVNULL)
    try:
        subprocess.run(["ip", "-n", "lr-b", "link", "set", "dev", "lr1", "xdp", "obj", BPF_OBJ, "sec", "xdp"],
                       check=True)
        with tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False) as f:
            f.write(TRAFGEN_CFG)
            cfg = f.name
        tools = {
            "linerate afxdp": [LR, "run", "-q", "--backend", "afxdp", "--tx", "lr0", "--cpus", "1",
                               "--duration", "1h"],
            "testpmd af_xdp": ["taskset", "-c", "0,1", "dpdk-testpmd", "--in-memory", "--no-telemetry",
                               "--vdev=net_af_xdp0,iface=lr0", "--no-pci", "--lcores=0@0,1@1", "--",
                               "--forward-mode=txonly", "--txpkts=60", "--nb-cores=1", "--stats-period=3600"],
            "trafgen": ["taskset", "-c", "1", "trafgen", "--dev", "lr0", "--conf", cfg, "--cpus", "1", "-Q", "-C"],
        }
        res = {k: [] for k in tools}
        for i in range(a.rounds):
            for name, argv in tools.items():
                res[name].append(measure(argv, a.seconds))
            print(f"round {i + 1}: " + "   ".join(f"{k} {v[-1]:.3f} Mpps" for k, v in res.items()), flush=True)
        med = {k: statistics.median(v) for k, v in res.items()}
        lr = med["linerate afxdp"]
        print("median: " + ", ".join(f"{k} {v:.3f} Mpps" for k, v in med.items()))
        print(f"ratios: linerate/testpmd {lr / med['testpmd af_xdp']:.2f}x, linerate/trafgen {lr / med['trafgen']:.2f}x")
    finally:
        subprocess.run(["ip", "-n", "lr-b", "link", "set", "dev", "lr1", "xdp", "off"], check=False)
        subprocess.run(["bash", TB, "down"], check=False, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
