"""The XDP live-frames TX engine (--backend afxdp --tx-engine live) on the veth test bed:
exact counts for UDP and TCP, IPv4 and IPv6, minimum and larger frames, signed frames measured
by a linerate receiver (loss, latency) and counted by the receiving veth's XDP program; several
flows per queue; a stop on SIGINT with every loss accounted to this host and nothing left
behind (how soon: test_timing.py's, on runs of stop_on_sigint); jumbo frames refused clearly.
Paced at a quarter of what the test bed holds, at most 200 kpps."""
import os
import signal
import tempfile
import time

import pytest

from lrtest import LINERATE, check, paced_load, read_json as load
from testbed import VethBed, sending, unique, wait_stream

pytestmark = pytest.mark.usefixtures("root")

N = 100_000


def exact(bed, d, extra, n=N, streams=1):
    rate = paced_load(200_000)
    r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx-engine", "live", "--tx", bed.ifa,
                          "--rx", bed.ifb, "--count", str(n), "--rate", str(rate), "--json", f"{d}/r.json", *extra],
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
        check(len(rep["flows"]) == streams and sum(s["sent"] for s in rep["flows"]) == n,
              f"{extra}: {rep['flows']}")
    check(rep["environment"]["ports"][0]["tx_engine"].startswith("live frames"), "the report records what ran")
    if "--no-signature" not in extra and "--proto" not in extra:
        check(rep["latency"] and rep["latency"]["count"] > 0 and rep["latency"]["min_ns"] > 0, f"latency {rep['latency']}")
    return rep


# case -> (options, streams expected)
EXACT = {
    "udp_ipv4_64": ([], 1),
    "tcp_ipv4_64": (["--proto", "tcp"], 1),
    "udp_ipv6_1024": (["--ipv6", "--size", "1024"], 1),
    "tcp_ipv6_1500": (["--ipv6", "--proto", "tcp", "--size", "1500"], 1),
    "no_signature": (["--no-signature"], 0),
    "flows_4": (["--flows", "4"], 4),
}


@pytest.mark.parametrize("case", EXACT)  # one case per key
def test_exact_counts(case):
    extra, streams = EXACT[case]
    with VethBed(unique("lvx"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        exact(bed, d, extra, streams=streams)


def stop_on_sigint():
    """SIGINT once sending: the report is written with what was sent, nothing lost, nothing
    attached (asserted). Returns the seconds from the signal to the exit."""
    with VethBed(unique("lvs"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        p = bed.start(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx-engine", "live", "--tx", bed.ifa,
                                "--rx", bed.ifb, "--rx-mode", "xdp", "--duration", "60s", "--drain", "100ms",
                                "--json", f"{d}/r.json", "--interval", "100ms", "--json-stream", f"{d}/r.jsonl"])
        wait_stream(f"{d}/r.jsonl", sending, p, what="the first interval with frames sent")
        t0 = time.monotonic()
        # ip netns exec: signal linerate itself, not the wrapper.
        pids = [int(x) for x in os.popen(f"ip netns pids {bed.nsa}").read().split()]
        for pid in pids:
            if "linerate" in open(f"/proc/{pid}/cmdline").read():
                os.kill(pid, signal.SIGINT)
        p.communicate(timeout=30)
        took = time.monotonic() - t0
        rep = load(f"{d}/r.json")
        t = rep["totals"]
        acc = t["loss_account"]
        # Nothing lost on the path: a batch the receiving veth's ring refused (a busy host) is
        # counted as this host's egress drop, and the account must say so exactly.
        check(t["tx"]["packets"] > 0 and acc["unaccounted"] == 0
              and t["lost"] == acc["egress_dropped"] + acc["host_rx_dropped"], f"totals {t}")
        check(not bed.xdp_attached(bed.nsa, bed.ifb), "XDP program left attached")
        print(f"     stopped {took * 1000:.0f} ms after SIGINT (report written, ports closed)")
        return took


def test_stop_on_sigint():
    stop_on_sigint()


def test_jumbo_refused():
    """The afxdp socket engine carries up to 3844 bytes; a live frame must fit a page."""
    with VethBed(unique("lvj"), same_ns=True) as bed:
        bed.run(bed.nsa, ["ip", "link", "set", bed.ifa, "mtu", "9000"])
        bed.run(bed.nsa, ["ip", "link", "set", bed.ifb, "mtu", "9000"])
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx-engine", "live", "--tx", bed.ifa,
                              "--rx", bed.ifb, "--count", "10", "--size", "3800"], timeout=60)
        check(r.returncode == 2 and "no jumbo frames" in r.stderr, f"exit {r.returncode}: {r.stderr}")


def test_auto_selection():
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
