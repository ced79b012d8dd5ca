#!/usr/bin/env python3
"""A host's own network stack as the far end of a test: run inside a namespace by the tests.

    stack_peers.py tcp-listen PORT [--backlog N] [--no-close | --close-after SECONDS]
        A TCP listener: accepts connections and closes each at once (or, with --no-close,
        keeps them open; with --close-after, closes each that long after accepting it, as a
        slow server would), as a server that answers and hangs up would.
    stack_peers.py udp-echo PORT
        A UDP echo service (RFC 862): every datagram goes back to its sender unchanged.

Prints "ready" once listening; on SIGTERM or SIGINT prints its counts as one JSON line
({"accepted": N} or {"echoed": N}) and exits 0."""
import argparse
import json
import resource
import signal
import socket
import sys
import time

counts = {}


def finish(*_):
    print(json.dumps(counts), flush=True)
    sys.exit(0)


def tcp_listen(port, backlog, close, close_after):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port))
    s.listen(backlog)
    counts["accepted"] = 0
    kept = []
    if not close or close_after:  # every connection it keeps is a descriptor: as many as the hard limit allows
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if close_after:
        s.settimeout(close_after / 10)
    print("ready", flush=True)
    while True:
        if close_after:
            now = time.monotonic()
            while kept and now - kept[0][1] >= close_after:
                kept.pop(0)[0].close()
        try:
            c, _ = s.accept()
        except OSError:  # socket.timeout included: time to look at what is due to close
            continue
        counts["accepted"] += 1
        if close_after:
            kept.append((c, time.monotonic()))
        elif close:
            c.close()
        else:
            kept.append(c)


def udp_echo(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", port))
    counts["echoed"] = 0
    print("ready", flush=True)
    while True:
        data, addr = s.recvfrom(65535)
        s.sendto(data, addr)
        counts["echoed"] += 1


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="what", required=True)
    t = sub.add_parser("tcp-listen")
    t.add_argument("port", type=int)
    t.add_argument("--backlog", type=int, default=4096)
    t.add_argument("--no-close", action="store_true")
    t.add_argument("--close-after", type=float, default=0)
    u = sub.add_parser("udp-echo")
    u.add_argument("port", type=int)
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    if a.what == "tcp-listen":
        tcp_listen(a.port, a.backlog, not a.no_close, a.close_after)
    else:
        udp_echo(a.port)


if __name__ == "__main__":
    main()
