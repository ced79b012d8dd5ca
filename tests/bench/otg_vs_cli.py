#!/usr/bin/env python3
"""Benchmark (not a test): a flow started through the OTG API (`linerate serve`) against the same
traffic from the command line, and what polling the metrics costs it, alternating in the same run.

    sudo python3 tests/bench/otg_vs_cli.py [--rounds 3] [--seconds 5] [--linerate build/src/linerate]

One TX worker on CPU 1 sends 64-byte signed frames into DPDK's net_null as fast as it can: the
rate asked is 100 % of a 100 Gbit/s line (148.8 Mpps), more than one core sends, so each
figure is the sender's ceiling under that control path. Per round:
- cli: `linerate run --tx net_null0 --stream size=64,rate=100% --line-rate 100G --duration S`;
- api: the same flow in an OTG configuration (layer1 speed_100_gbps, rate percentage 100,
  continuous) on a `linerate serve` with the same EAL arguments: start, S seconds, stop, then
  frames_tx over the time between the start's reply and the stop's request;
- api+poll: the same while a client asks for the flow's metrics 10 times a second.
Prints each round, the medians, and the ratios api/cli (the OTG server's goal: >= 0.98) and
api+poll/api (polling at 10 Hz: >= 0.99) per round (the three run back to back, so a round's
ratios share its host conditions) with their median and range. The order of the three rotates
from round to round.
"""
import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
EAL = ["--vdev=net_null0", "--no-pci", "--lcores=0@0,1@1", "--in-memory", "--no-telemetry"]
LINE = "100G"


def cli(binary, seconds):
    with tempfile.TemporaryDirectory() as d:
        rep = os.path.join(d, "r.json")
        subprocess.run([binary, "run", "-q", "--tx", "net_null0", "--stream", "size=64,rate=100%", "--line-rate", LINE,
                        "--duration", f"{seconds}s", "--json", rep, "--"] + EAL,
                       check=True, capture_output=True, timeout=seconds + 60)
        with open(rep) as f:
            return json.load(f)["totals"]["tx"]["pps"] / 1e6


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, binary):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc = subprocess.Popen([binary, "serve", "--quiet", "--listen", f"127.0.0.1:{self.port}", "--"] + EAL,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                self.call("GET", "/capabilities/version")
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("linerate serve did not answer")

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    def stop(self):
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=30)


CONFIG = {
    "ports": [{"name": "p1", "location": "net_null0"}],
    "layer1": [{"name": "l1", "port_names": ["p1"], "speed": "speed_100_gbps"}],
    "flows": [{"name": "f1", "tx_rx": {"choice": "port", "port": {"tx_name": "p1"}},
               "packet": [{"choice": "ethernet", "ethernet": {"src": {"choice": "value", "value": "02:00:00:00:00:01"}}},
                          {"choice": "ipv4", "ipv4": {"src": {"choice": "value", "value": "198.18.0.1"},
                                                      "dst": {"choice": "value", "value": "198.18.0.2"}}},
                          {"choice": "udp", "udp": {}}],
               "size": {"choice": "fixed", "fixed": 64},
               "rate": {"choice": "percentage", "percentage": 100},
               "duration": {"choice": "continuous", "continuous": {"gap": 12}}}],
}


def transmit(state):
    return {"choice": "traffic", "traffic": {"choice": "flow_transmit", "flow_transmit": {"state": state}}}


def api(server, seconds, poll):
    server.call("POST", "/config", CONFIG)
    stop_polling = threading.Event()
    polls = []

    def poller():
        while not stop_polling.wait(0.1):
            m = server.call("POST", "/monitor/metrics", {"choice": "flow", "flow": {"flow_names": ["f1"]}})
            polls.append(int(m["flow_metrics"][0]["frames_tx"]))

    server.call("POST", "/control/state", transmit("start"))
    t0 = time.monotonic()
    t = threading.Thread(target=poller) if poll else None
    if t:
        t.start()
    time.sleep(seconds)
    t1 = time.monotonic()
    server.call("POST", "/control/state", transmit("stop"))
    stop_polling.set()
    if t:
        t.join()
    m = server.call("POST", "/monitor/metrics", {"choice": "flow", "flow": {"flow_names": ["f1"]}})
    assert not poll or len(polls) >= seconds * 8, f"polled {len(polls)} times"
    return int(m["flow_metrics"][0]["frames_tx"]) / (t1 - t0) / 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=5)
    ap.add_argument("--linerate", default=os.path.join(HERE, "../../build/src/linerate"))
    a = ap.parse_args()
    res = {"cli": [], "api": [], "api+poll": []}
    order = list(res)
    for i in range(a.rounds):
        server = Server(a.linerate)
        try:
            for mode in order[i % 3:] + order[:i % 3]:
                res[mode].append(cli(a.linerate, a.seconds) if mode == "cli" else api(server, a.seconds, mode != "api"))
        finally:
            server.stop()
        print(f"round {i + 1}: " + ", ".join(f"{k} {v[-1]:.2f} Mpps" for k, v in res.items()), flush=True)
    med = {k: statistics.median(v) for k, v in res.items()}
    print("medians: " + ", ".join(f"{k} {v:.2f} Mpps" for k, v in med.items()))
    for name, num, den, goal in (("api/cli", "api", "cli", 0.98), ("api+poll/api", "api+poll", "api", 0.99)):
        r = [x / y for x, y in zip(res[num], res[den])]
        print(f"{name} per round: median {statistics.median(r):.3f} (range {min(r):.3f}-{max(r):.3f}; "
              f"goal >= {goal})")


if __name__ == "__main__":
    main()
