"""`linerate serve`, the OTG API server, driven as its users drive it: by snappi 1.62.0 scripts
(otg_scripts/, run by the OTG venv's python: scripts/test.sh makes it) and by plain HTTP
(urllib). Ports are a veth pair (afxdp: a port sends or receives) or two DPDK ring ports wired
to each other (a port does both). Every count is exact: frames and bytes per flow and per port,
a capture's records, the frames a DUT's own counters saw. The server listens on loopback in the
namespace of its ports; the clients run there too (otg_client.py).

The RFC 2544 search written in snappi is measured here (rfc2544_in_snappi_and_linerate) and
its rate band checked in test_timing.py."""
import os
import socket
import struct
import subprocess
import tempfile
import threading

import pytest

from lrtest import LINERATE, check, paced_load
from otg_client import OTG_PYTHON, RING_SERVER, OtgServer, http
from testbed import DutBed, VethBed, unique, wait_until

import test_kernel_dut

AFXDP_SERVER = ["--backend", "afxdp"]
IMIX_PERIOD = (7 * 64 + 4 * 570 + 1518, 12)  # bytes and frames of one IMIX period (7:4:1)
API_VERSION = "1.62.0"


@pytest.fixture
def otg_python():
    """The OTG venv (snappi): without it the snappi cases are skipped, and say why."""
    need_otg_python()


def need_otg_python():
    if not os.access(OTG_PYTHON, os.X_OK):
        pytest.skip(f"no OTG venv at {OTG_PYTHON}: scripts/test.sh makes it (pip, tests/integration/"
                    f"otg-requirements.txt)")


# ---- Bodies for plain HTTP -----------------------------------------------------------------

def flow_body(name, tx="p1", rx="p2", pps=1000, packets=None, size=128, src_port=5000):
    """An OTG Flow as JSON: eth/ipv4/udp in 198.18.0.0/15, `packets` frames (None: continuous)."""
    value = lambda v: {"choice": "value", "value": v}  # noqa: E731
    return {"name": name, "tx_rx": {"choice": "port", "port": {"tx_name": tx, "rx_names": [rx]}},
            "packet": [{"choice": "ethernet", "ethernet": {"src": value("02:00:00:00:00:01")}},
                       {"choice": "ipv4", "ipv4": {"src": value("198.18.0.1"), "dst": value("198.18.0.2")}},
                       {"choice": "udp", "udp": {"src_port": value(src_port), "dst_port": value(6000)}}],
            "size": {"choice": "fixed", "fixed": size}, "rate": {"choice": "pps", "pps": str(pps)},
            "duration": ({"choice": "fixed_packets", "fixed_packets": {"packets": packets, "gap": 12}} if packets
                         else {"choice": "continuous", "continuous": {"gap": 12}}),
            "metrics": {"enable": True, "loss": False, "timestamps": False}}


def ring_config(*flows, captures=()):
    """A Config on the two ring ports: p1 ring0, p2 ring1."""
    return {"ports": [{"name": "p1", "location": "ring0"}, {"name": "p2", "location": "ring1"}],
            "captures": [{"name": f"c{i}", "port_names": [p], "format": "pcap", "overwrite": True}
                         for i, p in enumerate(captures)],
            "flows": list(flows)}


def wait_flows_stopped(server, *names, timeout=60):
    def stopped():
        m = server.flow_metrics(*names)
        return m if all(f["transmit"] == "stopped" for f in m.values()) else None
    return wait_until(stopped, timeout, f"flows {names} stopped")


def frames(m):
    """A flow's or port's (frames_tx, frames_rx) as integers (uint64s come as strings or numbers)."""
    return int(m["frames_tx"]), int(m["frames_rx"])


def is_otg_error(reply, status):
    """An OTG Error with this status: JSON {code, kind, errors}."""
    check(reply.status == status and reply.ctype.startswith("application/json"), f"expected {status}: {reply}")
    e = reply.json()
    check(e["code"] == status and e["kind"] in ("validation", "internal") and e["errors"]
          and all(isinstance(x, str) and x for x in e["errors"]), f"not an OTG Error: {e}")
    return e


# ---- snappi on the veth bed --------------------------------------------------------------------

@pytest.mark.usefixtures("root", "otg_python")
def test_quickstart_exact_counts():
    """The OTG quickstart (afxdp, one flow tx -> rx, a fixed count at a paced rate, metrics,
    latency and timestamps, snappi's version check on), polled until the flow says "stopped":
    every frame sent arrived, bytes are frames x size, no loss, the latency and the timestamps
    are there and ordered, and the ports count what the flow did."""
    n, size = 3000, 128
    pps = paced_load(10_000)
    with VethBed(unique("loq"), same_ns=True) as bed, OtgServer(AFXDP_SERVER, bed=bed, ns=bed.nsa) as server:
        r = server.snappi("quickstart.py", bed.ifa, bed.ifb, n, pps, size)
        server.stop()
    f, ports = r["flow"], r["ports"]
    assert r["warnings"] == [], r["warnings"]
    assert f["transmit"] == "stopped" and f["port_tx"] == "p1" and f["port_rx"] == "p2", f
    assert (f["frames_tx"], f["frames_rx"]) == (n, n), f
    assert (f["bytes_tx"], f["bytes_rx"]) == (n * size, n * size), f
    assert f["loss"] == 0, f
    lat = f["latency"]
    assert 0 < lat["minimum_ns"] <= lat["average_ns"] <= lat["maximum_ns"], lat
    ts = f["timestamps"]
    assert 0 < ts["first_timestamp_ns"] < ts["last_timestamp_ns"], ts
    assert (ports["p1"]["frames_tx"], ports["p2"]["frames_rx"]) == (n, n), ports
    assert (ports["p1"]["bytes_tx"], ports["p2"]["bytes_rx"]) == (n * size, n * size), ports
    assert ports["p1"]["frames_rx"] == 0 and ports["p2"]["frames_tx"] == 0, ports


@pytest.mark.usefixtures("root", "otg_python")
def test_flows_with_own_rates_and_imix():
    """Three flows from one port at rates of their own (64 bytes, 1000 bytes, IMIX), each a
    fixed count (IMIX a whole number of its 12-frame periods): each flow's frames and bytes
    exact, IMIX's bytes those of its periods (7 x 64 + 4 x 570 + 1518 each)."""
    load = paced_load(12_000)
    small = (load // 2, load // 2)  # (pps, packets): about a second each
    large = (load // 4, load // 4)
    imix = (load // 4, load // 4 // 12 * 12)
    with VethBed(unique("loi"), same_ns=True) as bed, OtgServer(AFXDP_SERVER, bed=bed, ns=bed.nsa) as server:
        r = server.snappi("rates_and_imix.py", bed.ifa, bed.ifb, *small, *large, *imix)
        server.stop()
    flows = r["flows"]
    expected = {"small": (small[1], small[1] * 64), "large": (large[1], large[1] * 1000),
                "imix": (imix[1], imix[1] // IMIX_PERIOD[1] * IMIX_PERIOD[0])}
    for name, (count, size_bytes) in expected.items():
        f = flows[name]
        assert f["transmit"] == "stopped", f
        assert (f["frames_tx"], f["frames_rx"]) == (count, count), f
        assert (f["bytes_tx"], f["bytes_rx"]) == (size_bytes, size_bytes), f
    total = sum(c for c, _ in expected.values()), sum(b for _, b in expected.values())
    p1, p2 = r["ports"]["p1"], r["ports"]["p2"]
    assert (p1["frames_tx"], p1["bytes_tx"]) == total and (p2["frames_rx"], p2["bytes_rx"]) == total, r["ports"]


@pytest.mark.usefixtures("root", "otg_python")
def test_flows_started_paused_and_stopped_one_by_one():
    """Two continuous flows controlled by name: the one not started stays "stopped" at 0; a
    paused flow's counters stand still while the other sends; a flow stopped alone is final as
    soon as the stop returns (all it sent arrived) and stays so while the other runs; stopping
    everything ends both with nothing lost; starting one again clears its counters only."""
    pps = paced_load(4_000) // 2
    step = max(100, pps // 4)  # frames the other flow sends between two readings
    with VethBed(unique("lof"), same_ns=True) as bed, OtgServer(AFXDP_SERVER, bed=bed, ns=bed.nsa) as server:
        s = server.snappi("flow_control.py", bed.ifa, bed.ifb, pps, step)
        server.stop()
    assert s["warnings"] == [], s["warnings"]

    def tx_rx(m):
        return m["frames_tx"], m["frames_rx"]

    f1, f2 = s["f1_started"]["f1"], s["f1_started"]["f2"]
    assert f1["transmit"] == "started" and f1["frames_tx"] >= step, f1
    assert f2["transmit"] == "stopped" and tx_rx(f2) == (0, 0), f2
    assert s["f2_started"]["f2"]["transmit"] == "started", s["f2_started"]
    paused, still = s["f1_paused"]["f1"], s["f1_still_paused"]["f1"]
    assert paused["transmit"] == still["transmit"] == "paused", (paused, still)
    assert tx_rx(paused) == tx_rx(still) and paused["frames_tx"] == paused["frames_rx"], (paused, still)
    assert s["f1_still_paused"]["f2"]["frames_tx"] >= s["f1_paused"]["f2"]["frames_tx"] + step
    assert s["f1_resumed"]["f1"]["transmit"] == "started", s["f1_resumed"]
    assert s["f1_resumed"]["f1"]["frames_tx"] > still["frames_tx"], s["f1_resumed"]
    stopped, later = s["f1_stopped"], s["f1_still_stopped"]
    assert stopped["f1"]["transmit"] == "stopped" and stopped["f2"]["transmit"] == "started", stopped
    assert stopped["f1"]["frames_tx"] == stopped["f1"]["frames_rx"], f"f1 not final right after its stop: {stopped}"
    assert tx_rx(later["f1"]) == tx_rx(stopped["f1"]) and later["f1"]["transmit"] == "stopped", (stopped, later)
    assert later["f2"]["transmit"] == "started", later
    ended = s["all_stopped"]
    assert tx_rx(ended["f1"]) == tx_rx(stopped["f1"]), ended
    assert ended["f2"]["transmit"] == "stopped" and ended["f2"]["frames_tx"] == ended["f2"]["frames_rx"], ended
    again = s["f1_restarted"]
    assert again["f1"]["transmit"] == "started" and again["f1"]["frames_tx"] < ended["f1"]["frames_tx"], again
    assert again["f2"] == ended["f2"], f"f2 changed by f1's start: {ended['f2']} -> {again['f2']}"
    end = s["end"]
    assert end["f1"]["transmit"] == "stopped" and end["f1"]["frames_tx"] == end["f1"]["frames_rx"], end
    assert end["f2"] == ended["f2"], end


# ---- snappi on DPDK rings ----------------------------------------------------------------------

@pytest.mark.usefixtures("hugepages", "otg_python")
def test_bidirectional_on_dpdk_rings():
    """otg-examples' two flows, p1 -> p2 and p2 -> p1 (names with spaces and '>'), UDP source
    ports incrementing and destination ports from a list: every frame of each flow arrives, and
    each port sent one flow's frames and received the other's, frames and bytes."""
    n, pps = 1000, 2000
    with OtgServer(RING_SERVER) as server:
        r = server.snappi("bidirectional.py", "ring0", "ring1", n, pps)
        server.stop()
    flows, ports = r["flows"], r["ports"]
    for name, size in (("flow p1->p2", 128), ("flow p2->p1", 256)):
        f = flows[name]
        assert (f["frames_tx"], f["frames_rx"], f["bytes_tx"], f["bytes_rx"]) == (n, n, n * size, n * size), f
    assert (ports["p1"]["frames_tx"], ports["p1"]["frames_rx"]) == (n, n), ports
    assert (ports["p2"]["frames_tx"], ports["p2"]["frames_rx"]) == (n, n), ports
    assert (ports["p1"]["bytes_tx"], ports["p1"]["bytes_rx"]) == (n * 128, n * 256), ports
    assert (ports["p2"]["bytes_tx"], ports["p2"]["bytes_rx"]) == (n * 256, n * 128), ports


# ---- RFC 2544 in snappi against `linerate throughput` (the band: test_timing.py) -------------

RFC2544_MOST_PPS = 10_000  # the shaper's rate at most: test_kernel_dut.py's reasoning


def rfc2544_in_snappi_and_linerate():
    """Through the kernel-path DUT (a bridge with an HTB shaper of R pps, test_kernel_dut.py):
    the NDR a binary search written in snappi finds over [R/4, 3R] to R/100, with the server's
    1 s fixed_seconds trials, and the NDR of `linerate throughput --search binary` (zero loss,
    1 s trials, the same range, a 1 % width) on the same bed. Exact here: each snappi trial sent
    its rate's frames, and the DUT's own counters saw every frame both searches sent and passed
    every frame they received. Returns both NDRs and the shaper (test_timing checks the band)."""
    need_otg_python()
    shaped = paced_load(RFC2544_MOST_PPS)
    low, high, resolution, width = shaped // 4, 3 * shaped, shaped // 100, 1.0
    with DutBed(unique("lor")) as bed:
        bed.start_kernel_dut(shaped)
        shaper = dict(bed.kernel_dut)
        before = bed.kernel_dut_counters()
        with OtgServer(AFXDP_SERVER, bed=bed, ns=bed.nsa) as server:
            s = server.snappi("rfc2544.py", bed.ifa, bed.ifd, low, high, resolution, 64, timeout=900)
            server.stop()
        dut = test_kernel_dut.delta(before, bed.kernel_dut_counters())
        for t in s["trials"]:
            check(t["frames_tx"] == t["pps"] and t["frames_rx"] <= t["frames_tx"], f"a 1 s trial at its rate: {t}")
        sent, received = sum(t["frames_tx"] for t in s["trials"]), sum(t["frames_rx"] for t in s["trials"])
        check(dut["ingress"] == sent and dut["ingress_dropped"] == 0, f"the DUT saw {dut}, snappi's trials sent {sent}")
        check(dut["shaped"] == dut["egress"] == received and dut["queued"] == 0,
              f"the DUT passed {dut}, snappi's trials received {received} (final after each stop)")
        check(s["ndr"] is not None, f"no rate without loss from {low} pps: {s['trials']}")
        before = bed.kernel_dut_counters()
        r, rep = test_kernel_dut.linerate(bed, "throughput", [
            "-q", "--search", "binary", "--goals", "0", "--trial-duration", "1s", "--max-rate", str(high),
            "--min-rate", str(low), "--width", str(width)], 900)
        dut = test_kernel_dut.delta(before, bed.kernel_dut_counters())
    check(r.returncode == 0 and rep["verdict"]["result"] == "pass", f"exit {r.returncode}: {rep['verdict']}")
    trials = rep["trials"]
    check(dut["ingress"] == sum(t["sent"] for t in trials) and dut["shaped"] == sum(t["received"] for t in trials),
          f"the DUT saw {dut}; linerate's trials sent {sum(t['sent'] for t in trials)}, "
          f"received {sum(t['received'] for t in trials)}")
    goal = rep["rows"][0]["goals"][0]
    check(goal["regular"] and not goal["at_least"], f"NDR goal {goal}, range {rep['rows'][0]['range']}")
    out = {"shaped": shaped, "bucket": shaper["bucket"], "queue": shaper["queue"], "resolution": resolution,
           "width": width / 100, "snappi_ndr": s["ndr"], "snappi_lossy": s["lossy"],
           "linerate_ndr": goal["throughput"]["pps"], "snappi_trials": len(s["trials"]), "linerate_trials": len(trials)}
    print(f"     shaper {shaped:,} pps (+{shaper['bucket']} bucket, {shaper['queue']} queue): snappi NDR "
          f"{s['ndr']:,} pps ({len(s['trials'])} trials), linerate throughput NDR {out['linerate_ndr']:,.0f} pps "
          f"({len(trials)} trials)", flush=True)
    return out


# ---- The version check and refusals ------------------------------------------------------------

@pytest.mark.usefixtures("otg_python")
def test_version_check():
    """snappi with version_check=True gets through its check (two GETs of the version before
    its first call), and the version the server gives is exactly the API snappi 1.62.0 speaks."""
    with OtgServer(AFXDP_SERVER) as server:
        r = server.snappi("version_check.py")
        raw = server.ok("GET", "/capabilities/version")
        log = server.stop()
    assert r["api_spec_version"] == API_VERSION and r["config"] == {}, r
    assert raw["api_spec_version"] == API_VERSION, raw
    requests = [x.split()[3:5] for x in log.splitlines() if x.startswith("linerate serve: GET ")
                or x.startswith("linerate serve: POST ")]
    assert requests[:3] == [["/capabilities/version", "200"]] * 2 + [["/config", "200"]], requests


@pytest.mark.usefixtures("otg_python")
@pytest.mark.parametrize("what,path", [("gre_header", "flows[0].packet[1]"),
                                       ("tcp_seq_num", "flows[0].packet[2].tcp.seq_num"),
                                       ("gap_13", "flows[0].duration.fixed_packets.gap"),
                                       ("unknown_rx_port", "flows[0].tx_rx.port.rx_names[0]")],
                         ids=["gre_header", "tcp_seq_num", "gap_13", "unknown_rx_port"])
def test_refused_field_is_a_snappi_exception_at_its_path(what, path):
    """A field linerate cannot honour: snappi's set_config raises, and api.from_exception gives
    an OTG Error with code 400, kind validation and one line starting with the field's path."""
    with OtgServer(AFXDP_SERVER) as server:
        r = server.snappi("refused_field.py", what)
        server.stop()
    assert r["raised"] and r["code"] == 400 and r["kind"] == "validation", r
    assert len(r["errors"]) == 1 and r["errors"][0].startswith(path + ": "), r


# ---- Plain HTTP (urllib) on DPDK rings ----------------------------------------------------------

@pytest.mark.usefixtures("hugepages")
def test_http_content_types_and_otg_errors():
    """Every 200 is JSON but a capture (application/octet-stream) and /metrics (text/plain); an
    unknown path and the OTG operations linerate does not implement answer 501, a body that is
    not JSON 400, each an OTG Error {code, kind, errors}; neither changes the configuration."""
    n = 200
    config = ring_config(flow_body("f1", packets=n, pps=2000), captures=["p2"])
    with OtgServer(RING_SERVER) as server:
        json_200 = [("GET", "/capabilities/version", None), ("POST", "/config", config), ("GET", "/config", None),
                    ("POST", "/control/state", {"choice": "port", "port": {"choice": "capture", "capture": {
                        "port_names": ["p2"], "state": "start"}}}),
                    ("POST", "/control/state", {"choice": "traffic", "traffic": {
                        "choice": "flow_transmit", "flow_transmit": {"state": "start"}}}),
                    ("POST", "/monitor/metrics", {"choice": "port", "port": {}}),
                    ("GET", "/linerate/flows", None)]
        for method, path, body in json_200:
            r = server.request(method, path, body)
            assert r.status == 200 and r.ctype.startswith("application/json"), f"{method} {path}: {r}"
            r.json()
        wait_flows_stopped(server, "f1")
        cap = server.request("POST", "/monitor/capture", {"port_name": "p2"})
        assert cap.status == 200 and cap.ctype == "application/octet-stream", cap
        assert cap.body[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1"), f"not a pcap: {cap.body[:24]!r}"
        prom = server.request("GET", "/metrics")
        assert prom.status == 200 and prom.ctype.startswith("text/plain"), prom
        for method, path, body in (("GET", "/no/such/path", None), ("PATCH", "/config", {"choice": "flows"}),
                                   ("POST", "/control/action", {"choice": "port"}),
                                   ("POST", "/monitor/states", {"choice": "ipv4_neighbors"})):
            e = is_otg_error(server.request(method, path, body), 501)
            assert path in e["errors"][0], e
        is_otg_error(server.request("POST", "/config", '{"ports": [{"name": "p1",'), 400)
        is_otg_error(server.request("POST", "/control/state", "not json"), 400)
        assert server.ok("GET", "/config") == config
        server.stop()


def test_http_body_over_64_mib_is_413():
    """A body of 64 MiB is read (a config padded with spaces); one byte more is refused with
    413 and an OTG Error, and the server answers the next request."""
    limit = 64 << 20
    body = b'{"ports": []}'
    with OtgServer(AFXDP_SERVER) as server:
        r = server.request("POST", "/config", body + b" " * (limit - len(body)))
        assert r.status == 200, r
        e = is_otg_error(server.request("POST", "/config", body + b" " * (limit + 1 - len(body))), 413)
        assert "64 MiB" in e["errors"][0], e
        assert server.ok("GET", "/capabilities/version")["api_spec_version"] == API_VERSION
        server.stop()


@pytest.mark.usefixtures("hugepages")
def test_http_pps_as_string_or_number_and_config_echoed():
    """rate.pps, a 64-bit integer, as snappi sends it (a string) and as a number: both flows run
    at their rates to the exact count; GET /config gives back the body as it was set."""
    n = 1000
    as_string = flow_body("pps_string", pps=2000, packets=n)
    as_number = flow_body("pps_number", packets=n, src_port=5001)
    as_number["rate"]["pps"] = 2000
    config = ring_config(as_string, as_number)
    with OtgServer(RING_SERVER) as server:
        assert server.ok("POST", "/config", config) == {"warnings": []}
        assert server.ok("GET", "/config") == config
        server.traffic("start")
        m = wait_flows_stopped(server)
        server.stop()
    for name in ("pps_string", "pps_number"):
        assert frames(m[name]) == (n, n), m[name]


@pytest.mark.usefixtures("hugepages")
def test_http_concurrent_metrics_polling():
    """Eight clients poll the metrics while a flow runs: every answer 200, every client's counts
    never going back, and the last answers the flow's exact count."""
    n = 4000
    with OtgServer(RING_SERVER, threads=8) as server:
        server.ok("POST", "/config", ring_config(flow_body("f1", pps=4000, packets=n)))
        server.traffic("start")
        seen = [[] for _ in range(8)]
        barrier = threading.Barrier(8)

        def poll(mine):
            barrier.wait()
            while True:
                # On a thread of the server's pool already (in its namespace): the request from here.
                r = http(server.url, "POST", "/monitor/metrics", {"choice": "flow", "flow": {"flow_names": ["f1"]}})
                if r.status != 200:
                    mine.append(r)
                    return
                f = r.json()["flow_metrics"][0]
                mine.append(frames(f))
                if f["transmit"] == "stopped":
                    return

        futures = [server.pool.submit(poll, s) for s in seen]
        for fut in futures:
            fut.result(timeout=120)
        server.stop()
    for mine in seen:
        assert all(isinstance(x, tuple) for x in mine), [x for x in mine if not isinstance(x, tuple)]
        assert all(a[0] <= b[0] and a[1] <= b[1] for a, b in zip(mine, mine[1:])), f"counts went back: {mine}"
        assert mine[-1] == (n, n), mine[-1]
    assert any(x[0] < n for mine in seen for x in mine), "no client polled while the flow ran"


@pytest.mark.usefixtures("hugepages")
def test_http_client_dropping_mid_request():
    """Clients that go away halfway (half the headers; the headers and half the body) while a
    flow runs: the server answers the next request and the flow ends with its exact count."""
    n = 2000
    with OtgServer(RING_SERVER) as server:
        server.ok("POST", "/config", ring_config(flow_body("f1", pps=2000, packets=n)))
        server.traffic("start")
        host, port = "127.0.0.1", server.port
        body = b'{"choice": "flow", "flow": {"flow_names": ["f1"]}}'
        for part in (b"POST /monitor/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty",
                     b"POST /monitor/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body[:len(body) // 2]):
            with socket.create_connection((host, port), timeout=10) as s:
                s.sendall(part)
            assert server.ok("GET", "/capabilities/version")["api_spec_version"] == API_VERSION
        m = wait_flows_stopped(server, "f1")
        server.stop()
    assert frames(m["f1"]) == (n, n), m


@pytest.mark.usefixtures("hugepages")
def test_http_config_refused_while_traffic_runs():
    """A config while a flow runs: 409 with an OTG Error, the configuration as it was, the flow
    going on to its exact count; once it stopped, the same config is taken."""
    n, pps = 3000, 2000
    config = ring_config(flow_body("f1", pps=pps, packets=n))
    other = ring_config(flow_body("f2", pps=pps, packets=10))
    with OtgServer(RING_SERVER) as server:
        server.ok("POST", "/config", config)
        server.traffic("start")
        wait_until(lambda: frames(server.flow_metrics("f1")["f1"])[1] > 0, 30, "f1's first frames in")
        e = is_otg_error(server.request("POST", "/config", other), 409)
        assert "stop" in e["errors"][0], e
        assert server.flow_metrics("f1")["f1"]["transmit"] == "started"
        assert server.ok("GET", "/config") == config
        m = wait_flows_stopped(server, "f1")
        assert frames(m["f1"]) == (n, n), m
        assert server.ok("POST", "/config", other) == {"warnings": []}
        server.stop()


@pytest.mark.usefixtures("hugepages")
def test_http_prometheus_and_linerate_flows():
    """After a fixed flow: GET /metrics counts its frames by its name (linerate_stream_packets_total,
    sent and received), GET /linerate/flows gives its reordered, duplicate and late frames (none)."""
    from prometheus_client.parser import text_string_to_metric_families
    n, name = 1500, "flow p1->p2"
    with OtgServer(RING_SERVER) as server:
        server.ok("POST", "/config", ring_config(flow_body(name, pps=3000, packets=n)))
        server.traffic("start")
        wait_flows_stopped(server, name)
        server.traffic("stop")  # returns once the trial has ended: every sink has its final counts
        prom = server.request("GET", "/metrics")
        ext = server.ok("GET", "/linerate/flows")
        server.stop()
    samples = [s for fam in text_string_to_metric_families(prom.body.decode())
               for s in fam.samples if s.name == "linerate_stream_packets_total" and s.labels.get("stream") == name]
    by_dir = {s.labels.get("direction"): s.value for s in samples}
    assert by_dir == {"tx": n, "rx": n}, f"linerate_stream_packets_total for {name}: {samples}\n{prom.body[-2000:]}"
    f = {x["name"]: x for x in ext["flows"]}[name]
    assert (f["frames_tx"], f["frames_rx"], f["lost"]) == (n, n, 0), f
    assert (f["reordered"], f["duplicates"], f["late"]) == (0, 0, 0), f


@pytest.mark.usefixtures("hugepages")
def test_ring_buffers_carry_each_configs_sizes():
    """Two IMIX flows, then two of 1518-byte frames (all frames alike: their buffers are sized
    when the trial starts, not per frame), then IMIX again, on the same ring ports: each flow's
    frames and bytes exact, sent and received."""
    n = 1200
    imix = [flow_body(f"imix{i}", pps=20000, packets=n, src_port=5000 + i) for i in range(2)]
    for f in imix:
        f["size"] = {"choice": "weight_pairs", "weight_pairs": {"choice": "predefined", "predefined": "imix"}}
    large = [flow_body(f"large{i}", pps=20000, packets=n, size=1518, src_port=5002 + i) for i in range(2)]
    imix_bytes = n // 12 * (7 * 64 + 4 * 570 + 1518)
    with OtgServer(RING_SERVER) as server:
        for flows, size_bytes in ((imix, imix_bytes), (large, n * 1518), (imix, imix_bytes)):
            server.ok("POST", "/config", ring_config(*flows))
            server.traffic("start")
            m = wait_flows_stopped(server)
            server.traffic("stop")
            for flow in flows:
                f = m[flow["name"]]
                assert frames(f) == (n, n), f
                assert (int(f["bytes_tx"]), int(f["bytes_rx"])) == (size_bytes, size_bytes), f
        server.stop()


@pytest.mark.usefixtures("hugepages")
def test_procedure_endpoint_answers_with_the_report():
    """POST /linerate/procedure with a JSON profile (a sweep of two sizes on the server's DPDK
    rings): the answer is the procedure's JSON report, every row exact; a profile that names no
    procedure is refused (400); afterwards the OTG traffic runs on the same ports again."""
    profile = {"procedure": "sweep", "tx": ["ring0"], "rx": ["ring1"], "sizes": "64,512", "count": "5000",
               "rate": "20k"}
    with OtgServer(RING_SERVER) as server:
        server.ok("POST", "/config", ring_config(flow_body("f1", pps=5000, packets=1000)))
        rep = server.ok("POST", "/linerate/procedure", profile)
        rows = rep["rows"]
        assert [r["size"] for r in rows] == [64, 512], rows
        assert all(t["sent"] == 5000 and t["received"] == 5000 for t in rep["trials"]), rep["trials"]
        bad = server.request("POST", "/linerate/procedure", {"procedure": "run", "tx": ["ring0"]})
        is_otg_error(bad, 400)
        server.traffic("start")  # the configuration's ports, opened again
        wait_flows_stopped(server, "f1")
        assert frames(server.flow_metrics("f1")["f1"]) == (1000, 1000)
        server.stop()


# ---- Capture and link on the veth bed -------------------------------------------------------------

def pcap_records(data):
    """The records of a classic pcap file: (captured length, frame bytes)."""
    magic = struct.unpack("<I", data[:4])[0]
    check(magic in (0xA1B2C3D4, 0xA1B23C4D), f"not a little-endian pcap: {data[:24]!r}")
    out, at = [], 24
    while at < len(data):
        _, _, incl, _ = struct.unpack("<IIII", data[at:at + 16])
        out.append(data[at + 16:at + 16 + incl])
        at += 16 + incl
    check(at == len(data), f"a record runs past the end of the file ({at} > {len(data)})")
    return out


@pytest.mark.usefixtures("root", "otg_python")
def test_capture_holds_exactly_the_frames_sent():
    """A capture on the receiving port, started before a fixed flow and fetched by get_capture:
    a pcap with one record per frame sent, each the flow's eth/ipv4/udp frame (its size less the
    FCS, its UDP ports); the port's capture state started, then stopped by the fetch."""
    n, size = 500, 100
    pps = paced_load(5_000)
    with VethBed(unique("loc"), same_ns=True) as bed, OtgServer(AFXDP_SERVER, bed=bed, ns=bed.nsa) as server, \
            tempfile.TemporaryDirectory() as d:
        r = server.snappi("capture.py", bed.ifa, bed.ifb, n, pps, size, f"{d}/p2.pcap")
        server.stop()
        with open(f"{d}/p2.pcap", "rb") as f:
            records = pcap_records(f.read())
    assert (r["capture_before"], r["capture_after"]) == ("started", "stopped"), r
    assert (r["flow"]["frames_tx"], r["flow"]["frames_rx"]) == (n, n), r["flow"]
    assert len(records) == n, f"{len(records)} records for {n} frames"
    for rec in records:
        assert len(rec) == size - 4, len(rec)
        ether_type, proto = struct.unpack("!H", rec[12:14])[0], rec[23]
        src_port, dst_port = struct.unpack("!HH", rec[34:38])
        assert (ether_type, proto, src_port, dst_port) == (0x0800, 17, 5000, 6000), rec[:40].hex()


@pytest.mark.usefixtures("root", "otg_python")
def test_link_down_and_up():
    """control_state port.link down on the sending port: the interface goes down and the port
    metrics say "down"; up again: "up", and a fixed flow then crosses it to the exact count."""
    n = 500
    pps = paced_load(5_000)
    with VethBed(unique("lol"), same_ns=True) as bed, OtgServer(AFXDP_SERVER, bed=bed, ns=bed.nsa) as server:
        r = server.snappi("link.py", bed.ifa, bed.ifb, n, pps)
        server.stop()
    assert r["configured"]["metrics"]["p1"] == "up", r
    assert r["down_warnings"] == [] and r["down"]["tx_operstate"] == "down", r
    assert r["down"]["metrics"]["p1"] == "down", f"the interface is down, the metrics say {r['down']['metrics']}"
    assert r["up"]["tx_operstate"] == "up" and r["up"]["metrics"]["p1"] == "up", r
    assert (r["flow"]["frames_tx"], r["flow"]["frames_rx"]) == (n, n), r["flow"]


# ---- The server's own errors ---------------------------------------------------------------------

def test_second_server_on_the_same_port_exits_3():
    """A second server on the address the first listens on exits 3 naming the address; the
    first goes on answering."""
    with OtgServer(AFXDP_SERVER) as first:
        p = subprocess.run([LINERATE, "serve", "--listen", f"127.0.0.1:{first.port}", *AFXDP_SERVER],
                           capture_output=True, text=True, timeout=60)
        assert p.returncode == 3, f"exit {p.returncode}\n{p.stdout}{p.stderr}"
        assert f"127.0.0.1:{first.port}" in p.stderr and "listen" in p.stderr, p.stderr
        assert first.ok("GET", "/capabilities/version")["api_spec_version"] == API_VERSION
        first.stop()


def test_listen_nonsense_exits_2():
    p = subprocess.run([LINERATE, "serve", "--listen", "nonsense"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, f"exit {p.returncode}\n{p.stdout}{p.stderr}"
    assert "--listen" in p.stderr and "nonsense" in p.stderr, p.stderr


@pytest.mark.usefixtures("root")
def test_sigint_during_traffic_exits_0_and_detaches_xdp():
    """SIGINT while a continuous flow runs (over plain HTTP): the server stops it, closes its
    ports and exits 0, leaving no XDP program on either end of the veth pair."""
    pps = paced_load(5_000)
    with VethBed(unique("los"), same_ns=True) as bed, OtgServer(AFXDP_SERVER, bed=bed, ns=bed.nsa) as server:
        flow = flow_body("f1", pps=pps)
        config = {"ports": [{"name": "p1", "location": bed.ifa}, {"name": "p2", "location": bed.ifb}],
                  "flows": [flow]}
        server.ok("POST", "/config", config)
        server.traffic("start")
        wait_until(lambda: frames(server.flow_metrics("f1")["f1"])[1] > 0, 30, "f1's first frames in")
        assert bed.xdp_attached(bed.nsb, bed.ifb), "the receiving port has linerate's XDP program while it runs"
        server.stop()
        attached = [ifc for ns, ifc in ((bed.nsa, bed.ifa), (bed.nsb, bed.ifb)) if bed.xdp_attached(ns, ifc)]
    assert attached == [], f"XDP programs left on {attached} after SIGINT"
