#!/usr/bin/env python3
"""Benchmark (not a test): what the OTG API costs, in instructions counted by callgrind
(deterministic, unlike this host's wall-clock rates).

    sudo python3 tests/bench/otg_callgrind.py [--frames 2000000] [--polls 1000] [--linerate build/src/linerate]

1. The same 64-byte flow into DPDK's net_null, `--frames` frames at 100 % of a 100 Gbit/s line
   (more than the sender carries: it sends as fast as it can), from the command line
   (`linerate run --stream size=64,count=N,rate=100% --line-rate 100G`) and through the API
   (`linerate serve`, a flow of N fixed packets, started, polled until stopped): the TX loop's
   instructions (tx_streams_loop, inclusive) per frame in each.
2. A metrics request: `--polls` POST /monitor/metrics for one flow after a short run; the
   server's instructions per request (httplib's process_request, inclusive). They run on the
   server's own CPU, which `serve` keeps apart from the workers' (docs/otg.md).
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
EAL = ["--vdev=net_null0", "--no-pci", "--no-huge", "-m", "512", "--no-telemetry", "--lcores=0@0,1@1",
       "--file-prefix", "lrcg"]
VALUE = lambda v: {"choice": "value", "value": v}  # noqa: E731


def config(frames):
    return {"ports": [{"name": "p1", "location": "net_null0"}],
            "layer1": [{"name": "l1", "port_names": ["p1"], "speed": "speed_100_gbps"}],
            "flows": [{"name": "f1", "tx_rx": {"choice": "port", "port": {"tx_name": "p1"}},
                       "packet": [{"choice": "ethernet", "ethernet": {"src": VALUE("02:00:00:00:00:01"),
                                                                      "dst": VALUE("02:00:00:00:00:02")}},
                                  {"choice": "ipv4", "ipv4": {"src": VALUE("198.18.0.1"), "dst": VALUE("198.18.0.2"),
                                                              "time_to_live": VALUE(1)}},
                                  {"choice": "udp", "udp": {"src_port": VALUE(1024), "dst_port": VALUE(1024)}}],
                       "size": {"choice": "fixed", "fixed": 64}, "rate": {"choice": "percentage", "percentage": 100},
                       "duration": {"choice": "fixed_packets", "fixed_packets": {"packets": frames, "gap": 12}}}]}


def inclusive(out, pattern):
    """The inclusive instructions of the first function matching `pattern` in a callgrind file."""
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], capture_output=True, text=True).stdout
    for line in text.splitlines():
        if re.search(pattern, line):
            return int(line.split()[0].replace(",", ""))
    raise RuntimeError(f"no {pattern} in {out}")


def call(url, method, path, body=None):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode() if body is not None else None,
                                 method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=600) as r:
        return json.loads(r.read())


def served(binary, d, name, frames, polls):
    """The flow through `linerate serve` under callgrind; the callgrind file."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    out = os.path.join(d, name)
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary, "serve",
                             "--quiet", "--listen", f"127.0.0.1:{port}", "--"] + EAL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):
            try:
                call(url, "GET", "/capabilities/version")
                break
            except OSError:
                time.sleep(0.1)
        call(url, "POST", "/config", config(frames))
        call(url, "POST", "/control/state",
             {"choice": "traffic", "traffic": {"choice": "flow_transmit", "flow_transmit": {"state": "start"}}})
        req = {"choice": "flow", "flow": {"flow_names": ["f1"]}}
        while call(url, "POST", "/monitor/metrics", req)["flow_metrics"][0]["transmit"] != "stopped":
            time.sleep(0.2)
        for _ in range(polls):
            call(url, "POST", "/monitor/metrics", req)
        sent = int(call(url, "POST", "/monitor/metrics", req)["flow_metrics"][0]["frames_tx"])
        assert sent == frames, f"the API flow sent {sent} of {frames}"
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=300)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--frames", type=int, default=2_000_000)
    ap.add_argument("--polls", type=int, default=1000)
    ap.add_argument("--linerate", default=os.path.join(HERE, "../../build/src/linerate"))
    a = ap.parse_args()
    loop = r"tx_streams_loop"
    with tempfile.TemporaryDirectory() as d:
        cli_out = os.path.join(d, "cli")
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={cli_out}", a.linerate, "run", "-q",
                        "--tx", "net_null0", "--stream", f"size=64,count={a.frames},rate=100%", "--line-rate", "100G",
                        "--"] + EAL, check=True, capture_output=True)
        api_out = served(a.linerate, d, "api", a.frames, 0)
        cli, api = inclusive(cli_out, loop), inclusive(api_out, loop)
        print(f"TX loop, {a.frames} frames: command line {cli / a.frames:.1f} instructions a frame, "
              f"API {api / a.frames:.1f}: API/CLI {api / cli:.4f}")
        short = 200_000
        base = served(a.linerate, d, "base", short, 0)
        polled = served(a.linerate, d, "polled", short, a.polls)
        per = (inclusive(polled, r"httplib::Server::process_request") -
               inclusive(base, r"httplib::Server::process_request")) / a.polls
        print(f"a metrics request: {per:,.0f} instructions on the server's CPU; 10 a second: {10 * per / 1e6:.1f} M "
              f"instructions/s, against the worker's {api / a.frames:.0f} a frame")


if __name__ == "__main__":
    main()
