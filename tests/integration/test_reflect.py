"""Round trip through linerate's XDP reflector on a veth pair: every frame comes back, the
round-trip latency is positive, every request of the request/response mode is answered, and
unanswered requests are written off as timeouts. The timing (RTT no slower than ping's across
the same pair; Little's law: transactions/s x mean RTT <= outstanding) is test_timing.py's,
on runs of round_trip and transactions."""
import json
import re
import signal
import subprocess
import tempfile

import pytest

from lrtest import LINERATE, check, paced_load
from testbed import CONSOLE_INTERVAL, OutputWatcher, VethBed, unique

pytestmark = pytest.mark.usefixtures("hugepages")


def sender(bed, d, extra, backend="dpdk", lcores="0@0,1@1,2@0"):
    if backend == "afxdp":
        argv = [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--rx", bed.ifa, "--cpus", "1",
                "--json", f"{d}/s.json"] + extra
    else:
        argv = [LINERATE, "run", "-q", "--tx", "net_af_xdp0", "--rx", "net_af_xdp0", "--descriptors", "4096",
                "--json", f"{d}/s.json"] + extra + ["--", f"--vdev=net_af_xdp0,iface={bed.ifa},busy_budget=0",
                                                    "--no-pci", f"--lcores={lcores}"]
    r = bed.run(bed.nsa, argv, timeout=120)
    check(r.returncode == 0, f"sender exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    with open(f"{d}/s.json") as f:
        return json.load(f)


def with_reflector(fn):
    with VethBed(unique("lxr")) as bed, tempfile.TemporaryDirectory() as d:
        refl = bed.start(bed.nsb, [LINERATE, "reflect", "--port", bed.ifb, "--duration", "120s", "-q",
                                   "--json", f"{d}/refl.json"])
        bed.wait_xdp(bed.nsb, bed.ifb, refl)
        fn(bed, d)
        refl.send_signal(signal.SIGINT)
        out, _ = refl.communicate(timeout=30)
        check(refl.returncode == 0, f"reflector exit {refl.returncode}: {out}")
        with open(f"{d}/refl.json") as f:
            return json.load(f)


def round_trip(ping=False):
    """50k frames at up to 100 kpps (lrtest.paced_load) through the XDP reflector: every one back, the latency's shape
    (asserted). Returns the report and, with ping=True, the minimum and the average of 20 pings
    across the same pair in ns (test_timing.py compares them)."""
    n = 50_000
    res = {}

    def body(bed, d):
        res["rep"] = sender(bed, d, ["--count", str(n), "--rate", str(paced_load(100_000))])
        if ping:
            p = subprocess.run(bed.wrap(bed.nsa, ["ping", "-c", "20", "-i", "0.05", "198.18.0.2"]),
                               capture_output=True, text=True, timeout=60)
            res["ping"] = p.stdout

    refl = with_reflector(body)
    rep = res["rep"]
    check(refl["reflected"] == n, f"reflector reflected {refl['reflected']} of {n}")
    s = rep["flows"][0]
    check(s["sent"] == n and s["received"] == n and s["lost"] == 0, f"stream {s}")
    lat = rep["latency"]
    check(lat["kind"] == "round-trip", f"latency kind {lat['kind']}")
    check(0 < lat["min_ns"] <= lat["p50_ns"] <= lat["max_ns"], f"latency {lat}")
    if not ping:
        return rep, None
    m = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)", res["ping"])
    check(m is not None, f"ping output: {res['ping']}")
    return rep, (float(m.group(1)) * 1e6, float(m.group(2)) * 1e6)


def test_round_trip():
    """XDP reflector: all back, latency positive."""
    round_trip()


def transactions(outstanding, backend="dpdk"):
    """20k request/response transactions with `outstanding` in flight: every one answered
    (asserted). Returns the report (test_timing.py checks Little's law on it)."""
    n = 20_000
    res = {}
    # A request the reflector answers is never lost on this bed, only late while a worker
    # waits for its core: 1 s, not the default 100 ms, before one is written off.
    with_reflector(lambda bed, d: res.update(rep=sender(bed, d, ["--count", str(n), "--outstanding",
                                                                 str(outstanding), "--response-timeout", "1s"],
                                                        backend)))
    rep = res["rep"]
    t = rep["transactions"]
    check(t["answered"] == n and t["timeouts"] == 0, f"transactions {t}")
    return rep


@pytest.mark.parametrize("backend,outstanding", [("dpdk", 1), ("dpdk", 8), ("afxdp", 1), ("afxdp", 16)],
                         ids=["dpdk_1", "dpdk_8", "afxdp_1", "afxdp_16"])
def test_transactions(backend, outstanding):
    """Request/response with `outstanding` in flight: every request answered."""
    transactions(outstanding, backend)


@pytest.mark.parametrize("backend", ["dpdk", "afxdp"])
def test_timeouts_without_reflector(backend):
    with VethBed(unique("lxt")) as bed, tempfile.TemporaryDirectory() as d:
        rep = sender(bed, d, ["--count", "50", "--outstanding", "1", "--response-timeout", "20ms"], backend)
        t = rep["transactions"]
        check(t["answered"] == 0 and t["timeouts"] == 50, f"transactions {t}")


@pytest.mark.parametrize("backend", ["afxdp", "dpdk"])
def test_user_space_reflector(backend):
    n = 30_000
    # Every frame must come back through a user-space process on CPU 0. The veth hands frames to
    # an XDP socket through a 256-frame ring: at 100 kpps a reflector kept off its core for 2.6 ms
    # (a busy host's other task's turn) loses frames there (counted, as the port's idropped). At
    # 20 kpps it takes 12.8 ms.
    rate = paced_load(20_000)
    with VethBed(unique("lxu")) as bed, tempfile.TemporaryDirectory() as d:
        cmd = [LINERATE, "reflect", "--backend", backend, "--duration", "120s", "--interval", "100ms",
               "--json", f"{d}/refl.json"]
        if backend == "afxdp":
            cmd += ["--port", bed.ifb, "--cpus", "0"]
        else:
            cmd += ["--port", "net_af_xdp1", "--", f"--vdev=net_af_xdp1,iface={bed.ifb},busy_budget=0", "--no-pci",
                    "--lcores=0@1,1@0"]
        refl = bed.start(bed.nsb, cmd)
        output = OutputWatcher(refl)
        # Its workers have run an interval (a live line): the port is set up and polled.
        output.wait_line(CONSOLE_INTERVAL, what="the reflector's first interval line")
        # Both sender lcores on CPU 1: CPU 0 is the user-space reflector's (two shared cores).
        rep = sender(bed, d, ["--count", str(n), "--rate", str(rate)], lcores="0@0,1@1,2@1")
        refl.send_signal(signal.SIGINT)
        refl.wait(timeout=30)
        out = output.text()
        check(refl.returncode == 0, f"reflector exit {refl.returncode}: {out[-3000:]}")
        with open(f"{d}/refl.json") as f:
            rr = json.load(f)
    s = rep["flows"][0]
    check(s["received"] == n and s["lost"] == 0,
          f"sender stream {s}; reflector rx {rr['totals']['rx']['packets']} tx {rr['totals']['tx']['packets']} "
          f"unsent {rr['totals']['tx_unsent']} ports {rr['port_counters']}")
    check(rep["latency"]["kind"] == "round-trip" and rep["latency"]["min_ns"] > 0, f"latency {rep['latency']}")
    check(rr["totals"]["rx"]["packets"] == n and rr["totals"]["tx"]["packets"] == n,
          f"reflector received {rr['totals']['rx']['packets']}, reflected {rr['totals']['tx']['packets']}")
    check(rr["spec"]["reflect"] is True and rr["verdict"]["result"] == "pass", f"{rr['verdict']}")
