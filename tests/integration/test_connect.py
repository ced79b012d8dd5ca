"""`linerate connect` against a real TCP stack: the kernel of the far namespace, a listener on
a port (tests/integration/stack_peers.py). Every handshake linerate counts is one the kernel
counts too: its own counters (nstat: TcpPassiveOpens, TcpAttemptFails, TcpEstabResets,
TcpExtListenOverflows, TcpOutRsts), read before and after, must match linerate's, whatever
the close mode. Also request/response against the kernel's own UDP echo service
(--responder stack), every request answered and counted by the echo service too."""
import json
import os
import signal
import tempfile

import jsonschema
import pytest

from lrtest import LINERATE, check
from testbed import VethBed, unique

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "report.schema.json")) as _f:
    SCHEMA = json.load(_f)

PEERS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stack_peers.py")
LISTEN_PORT = 8080

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, XDP)")


def mac(bed, ns, ifc):
    return json.loads(bed.run(ns, ["ip", "-j", "link", "show", ifc]).stdout)[0]["address"]


def nstat(bed, ns):
    """The namespace's TCP counters, absolute (nstat -a), its history file untouched (-s)."""
    out = json.loads(bed.run(ns, ["nstat", "-asz", "--json"]).stdout)
    return out.get("kernel", out)


def delta(before, after, *names):
    return {n: after.get(n, 0) - before.get(n, 0) for n in names}


COUNTERS = ("TcpPassiveOpens", "TcpAttemptFails", "TcpEstabResets", "TcpExtListenOverflows", "TcpExtListenDrops",
            "TcpOutRsts")


def far_stack(bed):
    """The far namespace's kernel as a real host's: it computes the checksums of what it sends.
    A veth leaves them to an offload that never happens (CHECKSUM_PARTIAL), so linerate's XDP
    program would see every answer with a wrong checksum; a NIC would have computed them."""
    r = bed.run(bed.nsb, ["ethtool", "-K", bed.ifb, "tx", "off"])
    check(r.returncode == 0, f"ethtool -K {bed.ifb} tx off: {r.stderr}")


def start_peer(bed, *args):
    p = bed.start(bed.nsb, ["python3", PEERS, *args])
    line = p.stdout.readline().strip()
    check(line == "ready", f"stack_peers.py {' '.join(args)}: {line}{p.stdout.read() if line != 'ready' else ''}")
    return p


def stop_peer(p):
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=10)
    return json.loads(out.strip().splitlines()[-1])


def connect(bed, *extra, expect_rc=0, port=LISTEN_PORT):
    with tempfile.TemporaryDirectory() as d:
        argv = [LINERATE, "connect", "-q", "--backend", "afxdp", "--port", bed.ifa, "--src-ip", "198.18.0.1",
                "--dst-ip", "198.18.0.2", "--src-mac", mac(bed, bed.nsa, bed.ifa),
                "--dst-mac", mac(bed, bed.nsb, bed.ifb), "--dst-port", str(port), "--json", f"{d}/r.json", *extra]
        r = bed.run(bed.nsa, argv, timeout=300)
        check(r.returncode == expect_rc, f"{' '.join(argv)}\nexit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
        with open(f"{d}/r.json") as f:
            rep = json.load(f)
    jsonschema.validate(rep, SCHEMA)
    return rep


def through_listener(*extra, port=LISTEN_PORT, listener_args=()):
    """linerate connect with `extra` against a listener on LISTEN_PORT in the far namespace;
    returns its report's "connect" section, the far kernel's counter deltas and the listener's
    own count."""
    with VethBed(unique("lcn")) as bed:
        far_stack(bed)
        listener = start_peer(bed, "tcp-listen", str(LISTEN_PORT), *listener_args)
        before = nstat(bed, bed.nsb)
        rep = connect(bed, *extra, port=port)
        after = nstat(bed, bed.nsb)
        accepted = stop_peer(listener)["accepted"]
    d = delta(before, after, *COUNTERS)
    c = rep["connect"]
    print(f"linerate: {c['total']}, {c['connections_per_s']:.0f} connections/s; the far kernel: {d}; "
          f"the listener accepted {accepted}")
    check(rep["verdict"]["result"] == "pass", rep["verdict"])
    t = c["total"]
    check(t["syns"] == t["answered"] + t["refused"] + t["timeouts"] + t["in_flight"], t)
    return c, d, accepted


def test_rst_opens_every_connection_on_the_listener_then_resets_it():
    """4,000 connections at 2,000/s, each ACKed then reset: linerate's answered handshakes are
    exactly the far kernel's passive opens, and each was reset there while established. The
    listener keeps what it accepts open: one that closed a connection between linerate's ACK
    and its RST would have taken it out of ESTABLISHED (1 in 4,000 did), and the far kernel
    would not count that reset as one of an established connection."""
    n = 4000
    c, d, accepted = through_listener("--rate", "2k", "--count", str(n), "--close", "rst",
                                      listener_args=("--no-close",))
    t = c["total"]
    assert t["syns"] == n and t["answered"] == n, t
    assert t["timeouts"] == t["refused"] == t["late"] == t["in_flight"] == t["malformed"] == 0, t
    assert t["replies"] == 2 * n, t
    assert d["TcpPassiveOpens"] == n, d
    assert d["TcpEstabResets"] == n, d
    assert d["TcpExtListenOverflows"] == d["TcpExtListenDrops"] == 0, d
    assert d["TcpOutRsts"] == 0, f"the far kernel answered something with a RST: {d}"
    assert accepted <= n
    q = c["queues"][0]
    assert q["handshake_ns"]["count"] == n and 0 < q["handshake_ns"]["p50_ns"] < 1e9, q["handshake_ns"]
    assert c["connections_per_s"] > 0


def test_fin_closes_each_connection_both_ways():
    """2,000 connections at 1,000/s closed with FIN: the listener accepts and closes each, its
    FIN is acknowledged, and nothing is reset on either side."""
    n = 2000
    c, d, accepted = through_listener("--rate", "1k", "--count", str(n), "--close", "fin")
    t = c["total"]
    assert t["answered"] == n and t["closed"] == n, t
    assert t["unclosed"] == t["resets"] == t["open"] == t["timeouts"] == 0, t
    assert d["TcpPassiveOpens"] == n and accepted == n, (d, accepted)
    assert d["TcpEstabResets"] == d["TcpOutRsts"] == d["TcpAttemptFails"] == 0, d


def test_fin_waits_for_a_slow_listener_to_close():
    """500 connections closed with FIN by a listener that closes each 0.4 s after accepting it
    (a slow server; the wire is silent meanwhile): the run waits for every close, up to
    --timeout, instead of ending on the silence, so each is closed, none written off."""
    n = 500
    c, d, accepted = through_listener("--rate", "2k", "--count", str(n), "--close", "fin", "--timeout", "3s",
                                      listener_args=("--close-after", "0.4"))
    t = c["total"]
    assert t["answered"] == n and t["closed"] == n, t
    assert t["unclosed"] == t["resets"] == t["open"] == t["timeouts"] == 0, t
    assert d["TcpPassiveOpens"] == n and accepted == n, (d, accepted)
    assert d["TcpEstabResets"] == d["TcpOutRsts"] == 0, d


def test_abort_measures_the_handshake_without_opening_a_connection():
    """3,000 handshakes answered with a RST: the far kernel opens no connection and counts
    each as a failed attempt."""
    n = 3000
    c, d, accepted = through_listener("--rate", "3k", "--count", str(n), "--close", "abort")
    t = c["total"]
    assert t["answered"] == n and t["replies"] == n, t
    assert d["TcpPassiveOpens"] == 0 and accepted == 0, (d, accepted)
    assert d["TcpAttemptFails"] == n, d


def test_a_port_nobody_listens_on_refuses_every_syn():
    n = 500
    c, d, _ = through_listener("--rate", "1k", "--count", str(n), port=LISTEN_PORT + 1)
    t = c["total"]
    assert t["refused"] == n and t["answered"] == 0 and t["timeouts"] == 0, t
    assert d["TcpOutRsts"] == n and d["TcpPassiveOpens"] == 0, d


def test_as_fast_as_the_listener_answers():
    """--rate max with 32 handshakes in flight for 2 s: whatever rate the far kernel sustains,
    every answered handshake either opened a connection there, or had its ACK dropped because
    the listener's accept queue was full and was then reset half-open (a failed attempt). A
    full accept queue also drops SYNs, which time out here: the kernel's overflows are exactly
    those two (on a loaded host the listener falls behind, and these happen)."""
    c, d, _ = through_listener("--duration", "2s", "--outstanding", "32", "--close", "rst")
    t = c["total"]
    assert t["answered"] > 1000, t
    assert t["timeouts"] + t["in_flight"] <= t["syns"] - t["answered"], t
    assert d["TcpPassiveOpens"] + d["TcpAttemptFails"] == t["answered"], (d, t)
    assert d["TcpExtListenOverflows"] == d["TcpAttemptFails"] + t["timeouts"], (d, t)
    print(f"as fast as answered: {c['connections_per_s']:,.0f} connections/s, handshake p50 "
          f"{c['queues'][0]['handshake_ns']['p50_ns'] / 1e3:.1f} us")


def test_impossible_settings_are_refused_before_anything_is_sent():
    with VethBed(unique("lcr")) as bed:
        cases = [
            ([], "--port"),
            (["--port", bed.ifa, "--dst-ip", "192.0.2.1"], "outside the benchmarking ranges"),
            (["--port", bed.ifa, "--rate", "1Gbps"], "connections per second"),
            (["--port", bed.ifa, "--src-ports", "2000-2099", "--outstanding", "128"], "source ports"),
            (["--port", bed.ifa, "--close", "sometimes"], "--close"),
        ]
        for args, words in cases:
            r = bed.run(bed.nsa, [LINERATE, "connect", "--backend", "afxdp", *args], timeout=60)
            assert r.returncode == 2, (args, r.returncode, r.stderr)
            assert words in r.stderr, (args, r.stderr)
            assert "prog/xdp" not in bed.run(bed.nsa, ["ip", "link", "show", bed.ifa]).stdout, args


def rr_through_echo(bed, d, n, responder, timeout):
    argv = [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--rx", bed.ifa, "--outstanding", "8",
            "--response-timeout", timeout, "--count", str(n), "--src-ip", "198.18.0.1", "--dst-ip", "198.18.0.2",
            "--src-mac", mac(bed, bed.nsa, bed.ifa), "--dst-mac", mac(bed, bed.nsb, bed.ifb), "--dst-port", "7",
            "--json", f"{d}/rr.json"] + (["--responder", "stack"] if responder else [])
    r = bed.run(bed.nsa, argv, timeout=300)
    with open(f"{d}/rr.json") as f:
        return r, json.load(f)


def test_request_response_against_the_kernels_udp_echo():
    """Requests to the far kernel's UDP echo service, 8 in flight: with --responder stack every
    one is answered (the echo service counts the same number); read as linerate's reflector's
    answers would be, the echo's IP header makes them another run's frames."""
    n = 5000
    with VethBed(unique("lce")) as bed, tempfile.TemporaryDirectory() as d:
        far_stack(bed)
        echo = start_peer(bed, "udp-echo", "7")
        # The echo is a Python process on a shared core: an answer may wait for its CPU, so
        # the deadline is generous (a timeout would be a request written off, not a slow one).
        r, rep = rr_through_echo(bed, d, n, True, "2s")
        echoed = stop_peer(echo)["echoed"]
        check(r.returncode == 0, r.stdout + r.stderr)
        tr = rep["transactions"]
        print(f"transactions {tr}; the echo service echoed {echoed}; latency {rep['latency']}")
        assert tr["answered"] == n and tr["timeouts"] == 0, tr
        assert echoed == n
        assert rep["latency"]["count"] == n and rep["latency"]["p50_ns"] > 0, rep["latency"]
        echo = start_peer(bed, "udp-echo", "7")
        _, rep = rr_through_echo(bed, d, 50, False, "50ms")
        stop_peer(echo)
        tr = rep["transactions"]
        assert tr["answered"] == 0 and tr["timeouts"] == 50, tr
        assert rep["totals"]["rx_classes"]["foreign_other_run"] == 50, rep["totals"]["rx_classes"]
