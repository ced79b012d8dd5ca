"""The XDP live-frames TX engine (--backend afxdp --tx-engine live) on the veth test bed:
exact counts for UDP and TCP, IPv4 and IPv6, minimum and larger frames, signed frames measured
by a linerate receiver (loss, latency) and counted by the receiving veth's XDP program; several
flows per queue; a stop within a bounded time with nothing left behind; jumbo frames refused
clearly."""
import json
import os
import signal
import tempfile
import time

import lrtest
from lrtest import LINERATE, check
from testbed import VethBed, unique

N = 100_000


def load(path):
    with open(path) as f:
        return json.load(f)


def exact(bed, d, extra, n=N, streams=1):
    r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx-engine", "live", "--tx", bed.ifa,
                          "--rx", bed.ifb, "--count", str(n), "--rate", "200k", "--json", f"{d}/r.json", *extra],
                timeout=120)
    check(r.returncode == 0, f"{extra}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    rep = load(f"{d}/r.json")
    t = rep["totals"]
    acc = t["loss_account"]
    check(t["tx"]["packets"] == n, f"{extra}: sent {t['tx']['packets']}")
    check(t["rx_classes"]["distinct"] + acc["host_rx_dropped"] + acc["egress_dropped"] == n and acc["unaccounted"] == 0,
          f"{extra}: received {t['rx_classes']['distinct']}, {acc}")
    check(t["rx_classes"]["malformed"] == 0 and t["rx_classes"]["duplicates"] == 0, f"{extra}: {t['rx_classes']}")
    xdp = rep["port_counters"][1]["xdp"]
    check(xdp["redirected"] + xdp["redirect_failed"] == n, f"{extra}: the receiving veth's program saw {xdp}")
    rec = rep["tx_reconciliation"][0]
    check(rec["handed"] == n and rec["agrees"], f"{extra}: {rec}")
    if streams:
        check(len(rep["streams"]) == streams and sum(s["sent"] for s in rep["streams"]) == n,
              f"{extra}: {rep['streams']}")
    check(rep["environment"]["ports"][0]["tx_engine"].startswith("live frames"), "the report records what ran")
    if "--no-signature" not in extra and "--proto" not in extra:
        check(rep["latency"] and rep["latency"]["count"] > 0 and rep["latency"]["min_ns"] > 0, f"latency {rep['latency']}")
    return rep


def exact_counts():
    with VethBed(unique("lvx"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        for extra in ([], ["--proto", "tcp"], ["--ipv6", "--size", "1024"], ["--ipv6", "--proto", "tcp", "--size", "1500"],
                      ):
            exact(bed, d, extra)
        exact(bed, d, ["--no-signature"], streams=0)
        exact(bed, d, ["--flows", "4"], streams=4)


def stops_promptly():
    with VethBed(unique("lvs"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        p = bed.start(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx-engine", "live", "--tx", bed.ifa,
                                "--rx", bed.ifb, "--rx-mode", "xdp", "--duration", "60s", "--drain", "100ms",
                                "--json", f"{d}/r.json"])
        time.sleep(2)
        t0 = time.monotonic()
        # ip netns exec: signal linerate itself, not the wrapper.
        pids = [int(x) for x in os.popen(f"ip netns pids {bed.nsa}").read().split()]
        for pid in pids:
            if "linerate" in open(f"/proc/{pid}/cmdline").read():
                os.kill(pid, signal.SIGINT)
        out = p.communicate(timeout=30)[0]
        took = time.monotonic() - t0
        check(took < 2.0, f"exit {took:.2f} s after SIGINT\n{out}")
        rep = load(f"{d}/r.json")
        t = rep["totals"]
        check(t["tx"]["packets"] > 0 and t["lost"] == 0, f"totals {t}")
        check(not bed.xdp_attached(bed.nsa, bed.ifb), "XDP program left attached")
        print(f"     stopped {took * 1000:.0f} ms after SIGINT (report written, ports closed)")


def jumbo_refused():
    """The afxdp socket engine carries up to 3844 bytes; a live frame must fit a page."""
    with VethBed(unique("lvj"), same_ns=True) as bed:
        bed.run(bed.nsa, ["ip", "link", "set", bed.ifa, "mtu", "9000"])
        bed.run(bed.nsa, ["ip", "link", "set", bed.ifb, "mtu", "9000"])
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx-engine", "live", "--tx", bed.ifa,
                              "--rx", bed.ifb, "--count", "10", "--size", "3800"], timeout=60)
        check(r.returncode == 2 and "no jumbo frames" in r.stderr, f"exit {r.returncode}: {r.stderr}")


def auto_selection():
    """--tx-engine auto: live frames for unpaced sending into a veth whose peer runs XDP here;
    sockets for paced runs and for a peer it cannot check; the report says which and why."""
    def engine(bed, d, args):
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx-engine", "auto", "--tx", bed.ifa,
                              "--count", "50000", "--json", f"{d}/r.json", *args], timeout=60)
        check(r.returncode == 0, f"exit {r.returncode}\n{r.stdout}{r.stderr}")
        port = load(f"{d}/r.json")["environment"]["ports"][0]
        return port["tx_engine"], port["tx_engine_why"]
    with VethBed(unique("lva"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        e, why = engine(bed, d, ["--rx", bed.ifb])
        check(e.startswith("live") and "runs an XDP program" in why, f"{e}: {why}")
        e, why = engine(bed, d, ["--rx", bed.ifb, "--rate", "100k"])
        check(e == "socket" and "pace per packet" in why, f"{e}: {why}")
    with VethBed(unique("lvb")) as bed, tempfile.TemporaryDirectory() as d:
        e, why = engine(bed, d, [])
        check(e == "socket" and "another namespace" in why, f"{e}: {why}")


if __name__ == "__main__":
    if os.geteuid() != 0:
        lrtest.skip("needs root")
    r = lrtest.Results()
    r.case("live frames: exact counts, UDP/TCP, IPv4/IPv6, 64..1500 B, plain, 4 flows", exact_counts)
    r.case("live frames: SIGINT stops within 2 s, nothing attached", stops_promptly)
    r.case("live frames: jumbo frames refused clearly", jumbo_refused)
    r.case("--tx-engine auto: live where delivery can be checked, else sockets, and why", auto_selection)
    r.finish()
