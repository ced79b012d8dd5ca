#!/usr/bin/env python3
"""Benchmark (not a test): `linerate serve --controller` with two engines.

    sudo python3 tests/bench/multihost_bench.py [--seconds 20] [--rounds 5] [--linerate build/src/linerate]

fanout: the three-namespace bed of the integration tests (tests/integration/multihost_bed.py),
two AF_XDP engines sending 5,000 frames/s each way while a client asks the controller for its
metrics 10 times a second: flow metrics (POST /monitor/metrics), port metrics, and the merged
Prometheus exposition (GET /metrics), each request timed from the client (the issue's goal:
every answer under 50 ms). Prints p50, p99 and the largest per kind.

aggregate: two DPDK engines on this host, each sending 64-byte signed frames into its own
net_null port as fast as one core sends (the rate asked is 100 % of a 100 Gbit/s line), engine
A's worker on CPU 1 and engine B's on CPU 0. Per round, through the controller: A alone, B
alone, then both started together; each flow's rate is the engine's own (frames_tx_rate, the
last second of its live views), the median of samples taken every second after the first.
Prints per round sum(A alone, B alone), both together, and their ratio (the goal: within 2 %),
and the median ratio over the rounds.
"""
import argparse
import concurrent.futures
import json
import os
import re
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

from multihost_bed import ENGINE_PORT, MultiHostBed  # noqa: E402
from otg_client import join_netns  # noqa: E402

READY = re.compile(r"^linerate serve: OTG API \S+ at (\S+) ")


def request(url, method, path, body=None, timeout=30):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"} if data else {})
    try:
        r = urllib.request.urlopen(req, timeout=timeout)
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"{method} {path}: HTTP {e.code}: {e.read().decode()[:2000]}") from None
    with r:
        payload = r.read()
        return json.loads(payload) if r.headers.get("Content-Type", "").startswith("application/json") else payload


def wait_ready(proc):
    for line in proc.stdout:
        if READY.search(line):
            return
    raise RuntimeError(f"a server did not start (exit {proc.wait()})")


def flow(name, tx, pps=None, rx=None, size=64):
    value = lambda v: {"choice": "value", "value": v}  # noqa: E731
    return {"name": name, "tx_rx": {"choice": "port", "port": {"tx_name": tx, "rx_names": [rx] if rx else []}},
            "packet": [{"choice": "ethernet", "ethernet": {"src": value("02:00:00:00:00:01")}},
                       {"choice": "ipv4", "ipv4": {"src": value("198.18.0.1"), "dst": value("198.18.0.2")}},
                       {"choice": "udp", "udp": {"src_port": value(5000), "dst_port": value(6000)}}],
            "size": {"choice": "fixed", "fixed": size},
            "rate": {"choice": "pps", "pps": str(pps)} if pps else {"choice": "percentage", "percentage": 100},
            "duration": {"choice": "continuous", "continuous": {}}, "metrics": {"enable": True}}


def traffic(state, names=None):
    ft = {"state": state}
    if names:
        ft["flow_names"] = names
    return {"choice": "traffic", "traffic": {"choice": "flow_transmit", "flow_transmit": ft}}


def percentiles(xs):
    xs = sorted(xs)
    return {"n": len(xs), "p50_ms": xs[len(xs) // 2] * 1e3, "p99_ms": xs[min(len(xs) - 1, int(len(xs) * 0.99))] * 1e3,
            "max_ms": xs[-1] * 1e3}


def fanout(binary, seconds):
    with MultiHostBed("mhbench") as bed:
        procs = []
        try:
            for k in "ab":
                procs.append(subprocess.Popen(
                    bed.wrap(k, [binary, "serve", "-q", "--backend", "afxdp", "--listen",
                                 f"{bed.engine_addr[k]}:{ENGINE_PORT}", "--host-label", f"engine-{k}"]),
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
            procs.append(subprocess.Popen(bed.wrap("c", [binary, "serve", "-q", "--controller", "--listen",
                                                         "127.0.0.1:8443"]),
                                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
            for p in procs:
                wait_ready(p)
            pool = concurrent.futures.ThreadPoolExecutor(1, initializer=join_netns, initargs=(bed.ns["c"],))
            url = "http://127.0.0.1:8443"
            call = lambda *a: pool.submit(request, url, *a).result()  # noqa: E731
            cfg = {"ports": [{"name": "a0", "location": bed.endpoint("a", bed.data[0][0])},
                             {"name": "b0", "location": bed.endpoint("b", bed.data[1][0])},
                             {"name": "b1", "location": bed.endpoint("b", bed.data[2][0])}],
                   "flows": [flow("a_to_b", "a0", 5000, "b0", 128), flow("b_to_a", "b1", 5000, "a0", 128)]}
            call("POST", "/config", cfg)
            call("POST", "/control/state", traffic("start"))
            kinds = {"flow metrics": ("POST", "/monitor/metrics", {"choice": "flow"}),
                     "port metrics": ("POST", "/monitor/metrics", {"choice": "port"}),
                     "prometheus": ("GET", "/metrics", None)}
            times = {k: [] for k in kinds}
            end = time.monotonic() + seconds
            tick = time.monotonic()
            while time.monotonic() < end:
                for k, (m, path, body) in kinds.items():
                    t0 = time.monotonic()
                    call(m, path, body)
                    times[k].append(time.monotonic() - t0)
                tick += 0.1
                time.sleep(max(0.0, tick - time.monotonic()))
            m = call("POST", "/monitor/metrics", {"choice": "flow"})
            call("POST", "/control/state", traffic("stop"))
            pool.shutdown()
            return {k: percentiles(v) for k, v in times.items()}, {f["name"]: f["frames_tx"] for f in m["flow_metrics"]}
        finally:
            for p in procs:
                p.kill()
                p.wait()


def aggregate(binary, seconds, rounds):
    engines, ports = [], {"a": 18443, "b": 18444}
    cpus = {"a": "1", "b": "0"}
    try:
        for k in "ab":
            eal = ["--vdev=net_null0", "--no-pci", "--in-memory", "--no-telemetry", f"--file-prefix=lrbench{k}"]
            engines.append(subprocess.Popen([binary, "serve", "-q", "--backend", "dpdk", "--cpus", cpus[k],
                                             "--listen", f"127.0.0.1:{ports[k]}", "--host-label", f"engine-{k}",
                                             "--", *eal], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        controller = subprocess.Popen([binary, "serve", "-q", "--controller", "--listen", "127.0.0.1:18445"],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        engines.append(controller)
        for p in engines:
            wait_ready(p)
        url = "http://127.0.0.1:18445"
        cfg = {"ports": [{"name": "a", "location": f"127.0.0.1:{ports['a']};net_null0"},
                         {"name": "b", "location": f"127.0.0.1:{ports['b']};net_null0"}],
               "layer1": [{"name": "l1", "port_names": ["a", "b"], "speed": "speed_100_gbps"}],
               "flows": [flow("fa", "a"), flow("fb", "b")]}
        request(url, "POST", "/config", cfg)

        def rates(names):
            request(url, "POST", "/control/state", traffic("start", names))
            samples = {n: [] for n in names}
            time.sleep(1.5)
            for _ in range(seconds):
                for f in request(url, "POST", "/monitor/metrics", {"choice": "flow", "flow": {"flow_names": names}})[
                        "flow_metrics"]:
                    samples[f["name"]].append(f["frames_tx_rate"])
                time.sleep(1)
            request(url, "POST", "/control/state", traffic("stop", names))
            return {n: statistics.median(v) / 1e6 for n, v in samples.items()}

        out = []
        for r in range(rounds):
            a, b = rates(["fa"])["fa"], rates(["fb"])["fb"]
            both = rates(["fa", "fb"])
            row = {"a_alone_mpps": a, "b_alone_mpps": b, "sum_alone_mpps": a + b, "a_together_mpps": both["fa"],
                   "b_together_mpps": both["fb"], "together_mpps": both["fa"] + both["fb"],
                   "ratio": (both["fa"] + both["fb"]) / (a + b)}
            print(f"round {r + 1}: A {a:.2f} + B {b:.2f} = {a + b:.2f} Mpps alone; together "
                  f"{both['fa']:.2f} + {both['fb']:.2f} = {row['together_mpps']:.2f} Mpps; ratio {row['ratio']:.4f}",
                  flush=True)
            out.append(row)
        return out
    finally:
        for p in engines:
            p.kill()
            p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--linerate", default=os.path.join(HERE, "..", "..", "build", "src", "linerate"))
    ap.add_argument("--only", choices=["fanout", "aggregate"])
    args = ap.parse_args()
    binary = os.path.abspath(args.linerate)
    result = {}
    if args.only != "aggregate":
        lat, sent = fanout(binary, args.seconds)
        for k, v in lat.items():
            print(f"{k:13s} {v['n']} requests at 10 Hz: p50 {v['p50_ms']:.2f} ms, p99 {v['p99_ms']:.2f} ms, "
                  f"max {v['max_ms']:.2f} ms", flush=True)
        result["fanout"] = {"latency": lat, "frames_tx": sent}
    if args.only != "fanout":
        rows = aggregate(binary, max(3, args.seconds // 4), args.rounds)
        ratios = [r["ratio"] for r in rows]
        print(f"aggregate/sum of singles: median {statistics.median(ratios):.4f} (range {min(ratios):.4f}-"
              f"{max(ratios):.4f}) over {len(rows)} rounds", flush=True)
        result["aggregate"] = rows
    print(json.dumps(result))


if __name__ == "__main__":
    main()
