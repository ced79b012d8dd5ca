"""Round trip through linerate's XDP reflector on a veth pair: every frame comes back, the
round-trip latency is positive and no slower than ping's across the same pair, and the
request/response mode obeys Little's law (transactions/s x mean RTT <= outstanding) and
writes off unanswered requests as timeouts."""
import json
import re
import signal
import subprocess
import tempfile

import lrtest
from lrtest import LINERATE, check
from testbed import VethBed, unique


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


def round_trip_vs_ping():
    n = 50_000
    res = {}

    def body(bed, d):
        res["rep"] = sender(bed, d, ["--count", str(n), "--rate", "100k"])
        p = subprocess.run(bed.wrap(bed.nsa, ["ping", "-c", "20", "-i", "0.05", "198.18.0.2"]),
                           capture_output=True, text=True, timeout=60)
        res["ping"] = p.stdout

    refl = with_reflector(body)
    rep = res["rep"]
    check(refl["reflected"] == n, f"reflector reflected {refl['reflected']} of {n}")
    s = rep["streams"][0]
    check(s["sent"] == n and s["received"] == n and s["lost"] == 0, f"stream {s}")
    lat = rep["latency"]
    check(lat["kind"] == "round-trip", f"latency kind {lat['kind']}")
    m = re.search(r"= ([\d.]+)/([\d.]+)/([\d.]+)", res["ping"])
    check(m is not None, f"ping output: {res['ping']}")
    ping_avg_ns = float(m.group(2)) * 1e6
    check(0 < lat["min_ns"] <= lat["p50_ns"] <= lat["max_ns"], f"latency {lat}")
    # XDP_TX in the driver cannot be slower than ICMP echo through both kernel stacks.
    check(lat["p50_ns"] <= ping_avg_ns, f"RTT p50 {lat['p50_ns']} ns vs ping average {ping_avg_ns:.0f} ns")


def transactions(outstanding, backend="dpdk"):
    n = 20_000
    res = {}
    with_reflector(lambda bed, d: res.update(rep=sender(bed, d, ["--count", str(n), "--outstanding",
                                                                 str(outstanding)], backend)))
    rep = res["rep"]
    t = rep["transactions"]
    check(t["answered"] == n and t["timeouts"] == 0, f"transactions {t}")
    inflight = t["per_second"] * rep["latency"]["mean_ns"] * 1e-9  # Little's law
    check(0.2 * min(outstanding, 1) <= inflight <= outstanding * 1.05,
          f"transactions/s x mean RTT = {inflight:.2f}, outstanding {outstanding}")


def timeouts_without_reflector(backend="dpdk"):
    with VethBed(unique("lxt")) as bed, tempfile.TemporaryDirectory() as d:
        rep = sender(bed, d, ["--count", "50", "--outstanding", "1", "--response-timeout", "20ms"], backend)
        t = rep["transactions"]
        check(t["answered"] == 0 and t["timeouts"] == 50, f"transactions {t}")


def user_space_reflector(backend):
    n = 30_000
    with VethBed(unique("lxu")) as bed, tempfile.TemporaryDirectory() as d:
        cmd = [LINERATE, "reflect", "--backend", backend, "--duration", "120s", "-q", "--json", f"{d}/refl.json"]
        if backend == "afxdp":
            cmd += ["--port", bed.ifb, "--cpus", "0"]
        else:
            cmd += ["--port", "net_af_xdp1", "--", f"--vdev=net_af_xdp1,iface={bed.ifb},busy_budget=0", "--no-pci",
                    "--lcores=0@1,1@0"]
        refl = bed.start(bed.nsb, cmd)
        bed.wait_xdp(bed.nsb, bed.ifb, refl)
        # Both sender lcores on CPU 1: CPU 0 is the user-space reflector's (two shared cores).
        rep = sender(bed, d, ["--count", str(n), "--rate", "100k"], lcores="0@0,1@1,2@1")
        refl.send_signal(signal.SIGINT)
        out, _ = refl.communicate(timeout=30)
        check(refl.returncode == 0, f"reflector exit {refl.returncode}: {out}")
        with open(f"{d}/refl.json") as f:
            rr = json.load(f)
    s = rep["streams"][0]
    check(s["received"] == n and s["lost"] == 0,
          f"sender stream {s}; reflector rx {rr['totals']['rx']['packets']} tx {rr['totals']['tx']['packets']} "
          f"unsent {rr['totals']['tx_unsent']} ports {rr['port_counters']}")
    check(rep["latency"]["kind"] == "round-trip" and rep["latency"]["min_ns"] > 0, f"latency {rep['latency']}")
    check(rr["totals"]["rx"]["packets"] == n and rr["totals"]["tx"]["packets"] == n,
          f"reflector received {rr['totals']['rx']['packets']}, reflected {rr['totals']['tx']['packets']}")
    check(rr["spec"]["reflect"] is True and rr["verdict"]["result"] == "pass", f"{rr['verdict']}")


if __name__ == "__main__":
    lrtest.need_root_and_hugepages()
    r = lrtest.Results()
    r.case("XDP reflector: all back, RTT <= ping", round_trip_vs_ping)
    r.case("dpdk ping-pong (1 outstanding): Little's law", transactions, 1)
    r.case("dpdk 8 outstanding: Little's law", transactions, 8)
    r.case("no reflector: every request times out", timeouts_without_reflector)
    r.case("afxdp ping-pong: Little's law", transactions, 1, "afxdp")
    r.case("afxdp 16 outstanding: Little's law", transactions, 16, "afxdp")
    r.case("afxdp, no reflector: every request times out", timeouts_without_reflector, "afxdp")
    r.case("user-space reflector, afxdp", user_space_reflector, "afxdp")
    r.case("user-space reflector, dpdk", user_space_reflector, "dpdk")
    r.finish()
