"""Several hosts as one test: `linerate serve --controller` driving two engines, each a
`linerate serve --backend afxdp` in its own network namespace (a host of its own), the
controller in a third, and a switch (a Linux bridge) between the engines' data ports
(multihost_bed.py). snappi scripts and plain HTTP drive the controller as any OTG server.

Every count is exact: frames sent and received per flow summed across engines, the ports'
counters, the Prometheus series summed over the `host` label, the bridge's own counters under
an RFC 2544 search. An engine killed mid-run is named by every answer after it and the other
engine stops. The synchronised start's skew is measured and the first frame arrives after the
set time."""
import concurrent.futures
import os
import signal
import tempfile
import time

import pytest

from lrtest import LINERATE, check
from multihost_bed import ENGINE_PORT, MultiHostBed
from otg_client import OTG_PYTHON, READY, SCRIPTS, http, join_netns
from testbed import OutputWatcher, sh, unique, wait_until

PPS = 2000          # per flow: the receiving engine's worker shares its core with three others
PACKETS = 6000
CONTROLLER = "http://127.0.0.1:8443"


class Deployment:
    """Engines A and B and the controller on a MultiHostBed; requests to the controller (and
    to the engines, as the controller reaches them) from threads in the controller's namespace."""

    def __init__(self, bed, controller_args=(), engine_env=None, engine_args=None):
        self.bed, self.controller_args = bed, list(controller_args)
        self.engine_env, self.engine_args = engine_env or {}, engine_args or {}
        self.engines, self.out = {}, {}
        self.pool = None

    def __enter__(self):
        try:
            for k in ("a", "b"):
                self.engines[k] = self.bed.start(k, [LINERATE, "serve", "--backend", "afxdp", "--listen",
                                                     f"{self.bed.engine_addr[k]}:{ENGINE_PORT}", "--host-label",
                                                     f"engine-{k}", *self.engine_args.get(k, [])],
                                               env=self.engine_env.get(k))
                self.out[k] = OutputWatcher(self.engines[k])
            self.controller = self.bed.start("c", [LINERATE, "serve", "--controller", "--listen", "127.0.0.1:8443",
                                                   *self.controller_args])
            self.out["c"] = OutputWatcher(self.controller)
            for k in ("a", "b", "c"):
                self.out[k].wait_line(READY, timeout=60, what=f"{k}'s first line")
            self.pool = concurrent.futures.ThreadPoolExecutor(4, initializer=join_netns, initargs=(self.bed.ns["c"],))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        for p in list(self.engines.values()) + [getattr(self, "controller", None)]:
            if p and p.poll() is None:
                p.kill()
                p.wait()
        if self.pool:
            self.pool.shutdown(wait=False)

    def request(self, method, path, body=None, url=CONTROLLER, timeout=60):
        return self.pool.submit(http, url, method, path, body, timeout).result()

    def ok(self, method, path, body=None, url=CONTROLLER):
        r = self.request(method, path, body, url)
        check(r.status == 200, f"{method} {path}: {r}\n{self.tails()}")
        return r.json() if r.ctype.startswith("application/json") else r.body.decode()

    def engine_url(self, k):
        return f"http://{self.bed.engine_addr[k]}:{ENGINE_PORT}"

    def snappi(self, script, *args, timeout=180):
        argv = [OTG_PYTHON, os.path.join(SCRIPTS, script), CONTROLLER, *map(str, args)]
        r = self.bed.run("c", argv, timeout=timeout)
        lines = r.stdout.strip().splitlines()
        check(r.returncode == 0 and lines, f"{script}: exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}\n"
                                           f"{self.tails()}")
        import json
        return json.loads(lines[-1])

    def tails(self):
        return "\n".join(f"--- {k}:\n{w.text(wait=False)[-1500:]}" for k, w in self.out.items())


@pytest.fixture
def bed(root):
    with MultiHostBed(unique("mh")[:8]) as b:
        yield b


@pytest.fixture
def otg_python():
    if not os.access(OTG_PYTHON, os.X_OK):
        pytest.skip(f"no OTG venv at {OTG_PYTHON}: scripts/test.sh makes it")


def location_map(bed, path):
    """The bed's three ports under names, as a location map file gives them."""
    with open(path, "w") as f:
        f.write("location_map:\n")
        for name, k, ifc in (("a0", "a", bed.data[0][0]), ("b0", "b", bed.data[1][0]), ("b1", "b", bed.data[2][0])):
            f.write(f"  - location: {name}\n    endpoint: \"{bed.endpoint(k, ifc)}\"\n")


def flow(name, tx, rx, src_port, pps=PPS, packets=None):
    value = lambda v: {"choice": "value", "value": v}  # noqa: E731
    return {"name": name, "tx_rx": {"choice": "port", "port": {"tx_name": tx, "rx_names": [rx]}},
            "packet": [{"choice": "ethernet", "ethernet": {"src": value("02:00:00:00:00:01")}},
                       {"choice": "ipv4", "ipv4": {"src": value("198.18.0.1"), "dst": value("198.18.0.2")}},
                       {"choice": "udp", "udp": {"src_port": value(src_port), "dst_port": value(6000)}}],
            "size": {"choice": "fixed", "fixed": 128}, "rate": {"choice": "pps", "pps": str(pps)},
            "duration": ({"choice": "fixed_packets", "fixed_packets": {"packets": packets}} if packets
                         else {"choice": "continuous", "continuous": {}}),
            "metrics": {"enable": True, "latency": {"enable": True}}}


def prometheus_samples(text):
    """(name, labels, value) of every sample in an exposition (prometheus_client's parser)."""
    from prometheus_client.parser import text_string_to_metric_families
    return [(s.name, s.labels, s.value) for fam in text_string_to_metric_families(text) for s in fam.samples]


def test_snappi_drives_two_engines_exactly(bed, otg_python, tmp_path):
    """Three flows of 6,000 frames: one from each engine into engine B's b0 and one from B back
    to A's a0, the ports named through a location map. Every flow's frames are counted exactly
    where they arrive; the start is synchronised and its skew reported; the controller's
    Prometheus exposition sums to the same counts over its host label."""
    location_map(bed, tmp_path / "map.yaml")
    with Deployment(bed, ["--location-map", str(tmp_path / "map.yaml")]) as d:
        out = d.snappi("multihost.py", "a0", "b0", "b1", PACKETS, PPS)
        for name, f in out["flows"].items():
            check(f["frames_tx"] == PACKETS and f["frames_rx"] == PACKETS and f["loss"] == 0,
                  f"{name}: {f}\n{d.tails()}")
            check(f["bytes_rx"] == f["bytes_tx"] == PACKETS * 128, f"{name}: bytes {f}")
            lat = f["latency"]
            check(0 < lat["minimum_ns"] <= lat["average_ns"] <= lat["maximum_ns"], f"{name}: latency {lat}")
        ports = out["ports"]
        check(ports["a0"]["frames_tx"] == PACKETS and ports["a0"]["frames_rx"] == PACKETS, f"a0: {ports['a0']}")
        check(ports["b0"]["frames_rx"] == 2 * PACKETS and ports["b0"]["frames_tx"] == 0, f"b0: {ports['b0']}")
        check(ports["b1"]["frames_tx"] == 2 * PACKETS and ports["b1"]["frames_rx"] == 0, f"b1: {ports['b1']}")

        ext = d.ok("GET", "/linerate/flows")
        start = ext["start"]
        opened = [e["opened_at_ns"] for e in start["engines"]]
        check(len(opened) == 2 and all(e["late_ns"] >= 0 for e in start["engines"]), f"start: {start}")
        check(start["skew_ns"] == max(opened) - min(opened) and start["skew_ns"] < 1_000_000_000, f"start: {start}")
        print(f"     start skew {start['skew_ns'] / 1e3:.0f} us, "
              f"late {[e['late_ns'] // 1000 for e in start['engines']]} us", flush=True)
        for f in out["flows"].values():
            check(f["timestamps"]["first_timestamp_ns"] >= start["at_ns"] - 1e4,
                  f"{f['name']} arrived before the set start time: {f['timestamps']}, {start}")
        for f in ext["flows"]:
            check(f["frames_rx"] == PACKETS and f["lost"] == 0 and f["latency_frames"] == PACKETS, f"ext: {f}")
            check(f["latency_min_ns"] <= f["latency_p50_ns"] <= f["latency_p99_ns"] <= f["latency_max_ns"] * 1.07,
                  f"percentiles from the merged histogram: {f}")
            check(f["latency_basis"] == "one_clock" and "latency_bound_ns" not in f, f"one host, one clock: {f}")
        check({e["clock"]["boot_id"] for e in ext["engines"]} == {open("/proc/sys/kernel/random/boot_id").read().strip()},
              f"engines' clocks: {ext['engines']}")

        samples = prometheus_samples(d.ok("GET", "/metrics"))
        hosts = {lab["host"] for _, lab, _ in samples if "host" in lab}
        check(hosts == {f"{bed.engine_addr[k]}:{ENGINE_PORT}" for k in "ab"}, f"host labels {hosts}")
        for name in out["flows"]:
            for direction in ("tx", "rx"):
                total = sum(v for n, lab, v in samples if n == "linerate_stream_packets_total"
                            and lab.get("flow") == name and lab.get("direction") == direction)
                check(total == PACKETS, f"{name} {direction} summed over hosts: {total}")
        up = {lab["host"]: v for n, lab, v in samples if n == "linerate_controller_engine_up"}
        check(sorted(up.values()) == [1, 1], f"engine_up {up}")


def fake_chronyc(directory, offset_s, delay_s, dispersion_s):
    """A `chronyc` that answers `-c tracking` as a synchronised chrony would (leap status
    Normal); its bound is |offset| + dispersion + delay / 2."""
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "chronyc")
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f"echo 'C0A80001,198.18.0.254,2,1764150000.0,{offset_s:.9f},0,0,0,0,0,{delay_s:.9f},{dispersion_s:.9f},"
                "64.0,Normal'\n")
    os.chmod(path, 0o755)
    return directory


def test_one_way_latency_across_hosts_reads_through_both_clocks(bed, tmp_path):
    """Engines A and B stand for two hosts (boot ids of their own) whose system clocks chrony
    keeps synchronised within 5 us and 11 us; B's system clock reads 2 ms ahead of A's. A flow
    from A to B is timed by B through both clocks: its one-way latency carries that 2 ms (what
    a real clock error would add), is given as synchronised, with the bound 16 us. A flow
    within B is timed by one clock and does not."""
    error_ns = 2_000_000
    path = os.environ["PATH"]
    env = {"a": {"LINERATE_TEST_BOOT_ID": "host-a",
                 "PATH": fake_chronyc(str(tmp_path / "a"), 0.000001, 0.000002, 0.000003) + ":" + path},
           "b": {"LINERATE_TEST_BOOT_ID": "host-b", "LINERATE_TEST_CLOCK_ERROR_NS": str(error_ns),
                 "PATH": fake_chronyc(str(tmp_path / "b"), 0.000010, 0, 0.000001) + ":" + path}}
    cfg = {"ports": [{"name": "a0", "location": bed.endpoint("a", bed.data[0][0])},
                     {"name": "b0", "location": bed.endpoint("b", bed.data[1][0])},
                     {"name": "b1", "location": bed.endpoint("b", bed.data[2][0])}],
           "flows": [flow("a_to_b", "a0", "b0", 5000, packets=PACKETS),
                     flow("b_to_b", "b1", "b0", 5001, packets=PACKETS)]}
    with Deployment(bed, engine_env=env) as d:
        d.ok("POST", "/config", cfg)
        d.ok("POST", "/control/state", {"choice": "traffic", "traffic": {"choice": "flow_transmit",
                                                                         "flow_transmit": {"state": "start"}}})
        ext = wait_until(lambda: (lambda x: x if all(f["transmit"] == "stopped" for f in x["flows"]) else None)(
            d.ok("GET", "/linerate/flows")), 60, "both flows ending")
        clocks = {e["engine"]: e["clock"] for e in ext["engines"]}
        check({c["boot_id"] for c in clocks.values()} == {"host-a", "host-b"}, f"clocks: {clocks}")
        check(all(c["sync"]["source"] == "chrony" and c["sync"]["synchronised"] for c in clocks.values()),
              f"clocks: {clocks}")
        flows = {f["name"]: f for f in ext["flows"]}
        for name, f in flows.items():
            check(f["frames_tx"] == PACKETS and f["frames_rx"] == PACKETS and f["latency_frames"] == PACKETS,
                  f"{name}: {f}\n{d.tails()}")
        ab, bb = flows["a_to_b"], flows["b_to_b"]
        check(ab["latency_basis"] == "synchronised" and abs(ab["latency_bound_ns"] - 16_000) < 1, f"a_to_b: {ab}")
        check(error_ns <= ab["latency_min_ns"] < error_ns + 1_000_000_000, f"a_to_b read through both clocks: {ab}")
        check(bb["latency_basis"] == "one_clock" and "latency_bound_ns" not in bb, f"b_to_b: {bb}")
        check(0 < bb["latency_min_ns"] < error_ns, f"b_to_b on one clock: {bb}")
        print(f"     min one-way latency: a_to_b {ab['latency_min_ns'] / 1e3:.1f} us (2 ms clock error), "
              f"b_to_b {bb['latency_min_ns'] / 1e3:.1f} us", flush=True)


def test_an_engine_killed_mid_run_is_named_and_the_other_stops(bed):
    """Continuous flows both ways; engine B is killed while they run. Every answer after that
    names B (its address and ports), the controller stopped A (its flows read stopped, it still
    answers), and the controller's own metrics say B is down."""
    cfg = {"ports": [{"name": "a0", "location": bed.endpoint("a", bed.data[0][0])},
                     {"name": "b0", "location": bed.endpoint("b", bed.data[1][0])},
                     {"name": "b1", "location": bed.endpoint("b", bed.data[2][0])}],
           "flows": [flow("a_to_b", "a0", "b0", 5000), flow("b_to_a", "b1", "a0", 5001)]}
    with Deployment(bed) as d:
        d.ok("POST", "/config", cfg)
        d.ok("POST", "/control/state", {"choice": "traffic", "traffic": {"choice": "flow_transmit",
                                                                         "flow_transmit": {"state": "start"}}})
        wait_until(lambda: all(int(f["frames_rx"]) > 500 for f in d.ok("POST", "/monitor/metrics", {"choice": "flow"})
                               ["flow_metrics"]), 20, "both flows received")
        d.engines["b"].send_signal(signal.SIGKILL)
        d.engines["b"].wait()
        named = f"{bed.engine_addr['b']}:{ENGINE_PORT} (ports b0, b1)"

        def failed():
            r = d.request("POST", "/monitor/metrics", {"choice": "flow"})
            return r if r.status != 200 else None
        r = wait_until(failed, 10, "the controller noticing engine B is gone")
        check(r.status == 500 and any(named in e for e in r.json()["errors"]), f"metrics after the kill: {r}")
        check("stopped" in r.json()["errors"][0], f"says the others were stopped: {r}")
        ext = d.ok("GET", "/linerate/flows")
        check(named in ext.get("failure", ""), f"/linerate/flows: {ext}")
        # Engine A: stopped by the controller, its run drained, still serving.
        view = wait_until(lambda: (lambda v: v if not v["running"] else None)(
            d.ok("GET", "/linerate/engine/view", url=d.engine_url("a"))), 15, "engine A's run ending")
        check(all(f["transmit"] == "stopped" for f in view["flows"]), f"engine A's flows: {view['flows']}")
        check(view["flows"][0]["n"]["frames_tx"] > 500, f"engine A had sent: {view['flows'][0]}")
        check(d.engines["a"].poll() is None, "engine A is still running")
        up = {lab["host"]: v for n, lab, v in prometheus_samples(d.ok("GET", "/metrics"))
              if n == "linerate_controller_engine_up"}
        check(up == {f"{bed.engine_addr['a']}:{ENGINE_PORT}": 1, f"{bed.engine_addr['b']}:{ENGINE_PORT}": 0},
              f"engine_up {up}")


def test_refusals_name_the_location_or_the_engine(bed):
    """A location that is neither ENGINE:PORT;LOCAL-PORT nor mapped is refused at its path; an
    engine nobody answers for, and an engine's own refusal, are named with the engine's address
    and ports; --controller refuses an engine's options."""
    with Deployment(bed) as d:
        bad = {"ports": [{"name": "a0", "location": bed.endpoint("a", bed.data[0][0])},
                         {"name": "x", "location": "no-such-thing"}],
               "flows": [flow("f", "a0", "x", 5000, packets=10)]}
        r = d.request("POST", "/config", bad)
        check(r.status == 400 and r.json()["errors"][0].startswith("ports[1].location: \"no-such-thing\""), f"{r}")
        nobody = dict(bad, ports=[bad["ports"][0], {"name": "x", "location": f"{bed.engine_addr['a']}:9;ifc"}])
        r = d.request("POST", "/config", nobody)
        check(r.status == 500 and any(f"{bed.engine_addr['a']}:9 (ports x) did not answer" in e
                                      for e in r.json()["errors"]), f"{r}")
        missing = dict(bad, ports=[bad["ports"][0], {"name": "x", "location": bed.endpoint("b", "nosuch0")}])
        r = d.request("POST", "/config", missing)
        check(r.status >= 400 and any(f"{bed.engine_addr['b']}:{ENGINE_PORT} (ports x) refused" in e and "nosuch0" in e
                                      for e in r.json()["errors"]), f"{r}")
        # linerate's procedures across engines: a port no configuration or map names, no procedure.
        r = d.request("POST", "/linerate/procedure", {"procedure": "throughput", "tx": ["nosuch"], "rx": ["b0"]})
        check(r.status == 400 and r.json()["errors"][0].startswith('tx: "nosuch": neither a port of the configuration'),
              f"{r}")
        r = d.request("POST", "/linerate/procedure", {"procedure": "run", "tx": ["a0"], "rx": ["b0"]})
        check(r.status == 400 and r.json()["errors"][0].startswith("procedure: name a procedure"), f"{r}")
    r = sh(LINERATE, "serve", "--controller", "--backend", "afxdp", check=False)
    check(r.returncode == 2 and "--backend: an engine's option" in r.stderr, f"exit {r.returncode}: {r.stderr}")


def test_rfc2544_search_in_snappi_across_hosts(bed, otg_python):
    """otg-examples' RFC 2544 throughput search in snappi, through the controller, from engine A
    to engine B across the switch, whose port towards B is shaped by HTB at 8,000 frames/s.
    Every 1 s trial sends exactly its rate; the bridge's own counters account for every frame
    the trials sent and received."""
    s, sw_a, sw_b = bed.ns["s"], bed.data[0][2], bed.data[1][2]
    bits = 8000 * 124 * 8
    sh("tc", "-n", s, "qdisc", "add", "dev", sw_b, "root", "handle", "1:", "htb", "default", "1")
    sh("tc", "-n", s, "class", "add", "dev", sw_b, "parent", "1:", "classid", "1:1", "htb", "rate", f"{bits}bit",
       "ceil", f"{bits}bit", "burst", str(124 * 40), "cburst", str(124 * 40))
    sh("tc", "-n", s, "qdisc", "add", "dev", sw_b, "parent", "1:1", "handle", "10:", "pfifo", "limit", "100")
    stat = lambda ifc, what: int(sh("ip", "netns", "exec", s, "cat", f"/sys/class/net/{ifc}/statistics/{what}")  # noqa
                                 .stdout)
    before = stat(sw_a, "rx_packets"), stat(sw_b, "tx_packets")
    with Deployment(bed) as d:
        out = d.snappi("rfc2544.py", bed.endpoint("a", bed.data[0][0]), bed.endpoint("b", bed.data[1][0]),
                       2000, 16000, 1000, 128, timeout=300)
    trials = out["trials"]
    for t in trials:
        check(t["frames_tx"] == t["pps"] and t["frames_rx"] <= t["frames_tx"], f"a 1 s trial at its rate: {t}")
    check(out["ndr"] is not None, f"no rate without loss: {trials}")
    sent, received = sum(t["frames_tx"] for t in trials), sum(t["frames_rx"] for t in trials)
    check(stat(sw_a, "rx_packets") - before[0] == sent, f"the switch got {stat(sw_a, 'rx_packets') - before[0]}, "
                                                        f"the trials sent {sent}")
    check(stat(sw_b, "tx_packets") - before[1] == received, f"the switch passed {stat(sw_b, 'tx_packets') - before[1]}"
                                                            f", the trials received {received}")
    print(f"     NDR across hosts {out['ndr']} pps through an 8,000 pps shaper; {len(trials)} trials", flush=True)


def test_a_rate_in_percent_is_of_the_sending_engines_port(bed):
    """A flow's rate in percent of its port's layer 1 speed is resolved by the engine that sends
    it: 0.01 % of 10 Gbit/s is 1 Mbit/s at layer 1, 1,488 frames of 64 bytes in 1 s
    (llround(1,488.1); at a 1 Gbit/s stand-in speed it would be 149), every one counted by the
    other engine."""
    value = lambda v: {"choice": "value", "value": v}  # noqa: E731
    f = flow("pct", "a0", "b0", 5000)
    f.update({"size": {"choice": "fixed", "fixed": 64}, "rate": {"choice": "percentage", "percentage": 0.01},
              "duration": {"choice": "fixed_seconds", "fixed_seconds": {"seconds": 1}}})
    f["packet"][1]["ipv4"]["dst"] = value("198.18.0.3")
    cfg = {"ports": [{"name": "a0", "location": bed.endpoint("a", bed.data[0][0])},
                     {"name": "b0", "location": bed.endpoint("b", bed.data[1][0])}],
           "layer1": [{"name": "l1", "port_names": ["a0", "b0"], "speed": "speed_10_gbps"}],
           "flows": [f]}
    with Deployment(bed) as d:
        d.ok("POST", "/config", cfg)
        d.ok("POST", "/control/state", {"choice": "traffic", "traffic": {"choice": "flow_transmit",
                                                                         "flow_transmit": {"state": "start"}}})
        m = wait_until(lambda: (lambda x: x if x["transmit"] == "stopped" else None)(
            d.ok("POST", "/monitor/metrics", {"choice": "flow"})["flow_metrics"][0]), 30, "the flow stopping")
        check(int(m["frames_tx"]) == 1488 and int(m["frames_rx"]) == 1488, f"{m}\n{d.tails()}")


def shape_towards_b(bed, fps, size=128, queue=100):
    """HTB on the switch's port towards engine B at `fps` frames of `size` bytes (HTB counts
    them without their FCS), its burst 40 frames, then a FIFO of `queue` frames. Returns a
    function reading the switch's counters (the port from A's rx_packets, the port towards B's
    tx_packets)."""
    s, sw_a, sw_b = bed.ns["s"], bed.data[0][2], bed.data[1][2]
    bits, frame = fps * (size - 4) * 8, size - 4
    sh("tc", "-n", s, "qdisc", "add", "dev", sw_b, "root", "handle", "1:", "htb", "default", "1")
    sh("tc", "-n", s, "class", "add", "dev", sw_b, "parent", "1:", "classid", "1:1", "htb", "rate", f"{bits}bit",
       "ceil", f"{bits}bit", "burst", str(frame * 40), "cburst", str(frame * 40))
    sh("tc", "-n", s, "qdisc", "add", "dev", sw_b, "parent", "1:1", "handle", "10:", "pfifo", "limit", str(queue))

    def counters():
        stat = lambda ifc, what: int(sh("ip", "netns", "exec", s, "cat",  # noqa: E731
                                        f"/sys/class/net/{ifc}/statistics/{what}").stdout)
        return stat(sw_a, "rx_packets"), stat(sw_b, "tx_packets")
    return counters


def procedure(d, profile):
    """POST /linerate/procedure on the controller; its JSON report."""
    r = d.request("POST", "/linerate/procedure", profile, timeout=600)
    check(r.status == 200, f"{profile['procedure']}: {r}\n{d.tails()}")
    return r.json()


def switch_accounts_for(counters, before, rep):
    """The switch's own counters add up to the report's trials: every frame the trials sent
    reached it from A, and every frame they received left it towards B."""
    sent, received = sum(t["sent"] for t in rep["trials"]), sum(t["received"] for t in rep["trials"])
    now = counters()
    check(now[0] - before[0] == sent, f"the switch got {now[0] - before[0]} frames from A, the trials sent {sent}")
    check(now[1] - before[1] == received, f"the switch passed {now[1] - before[1]} to B, the trials received {received}")


def test_linerate_throughput_search_across_hosts(bed, tmp_path):
    """linerate's own RFC 2544 throughput (binary search) from engine A's port to engine B's,
    through a switch port shaped at 8,000 frames/s, driven by the controller: the NDR is within
    what the shaper forwards, the goal is regular, every trial valid or saying why not, and the
    switch's counters account for every frame of every trial."""
    location_map(bed, tmp_path / "map.yaml")
    counters = shape_towards_b(bed, 8000)
    before = counters()
    # The engines rate their ports (veths report no speed) at 1 Gbit/s: the procedure's line rate.
    line = ["--line-rate", "1G"]
    with Deployment(bed, ["--location-map", str(tmp_path / "map.yaml")], engine_args={"a": line, "b": line}) as d:
        rep = procedure(d, {"procedure": "throughput", "tx": ["a0"], "rx": ["b0"], "sizes": "128",
                            "search": "binary", "max-rate": "16000", "trial-duration": "1s", "width": "3"})
        ext = d.ok("GET", "/linerate/flows")
    switch_accounts_for(counters, before, rep)
    goal = rep["rows"][0]["goals"][0]
    ndr = goal["throughput"]["pps"]
    print(f"     NDR {ndr:,.0f} pps through an 8,000 frames/s shaper, {len(rep['trials'])} trials", flush=True)
    check(goal["regular"] and 4000 <= ndr <= 8000 * 1.03 + 40, f"NDR {ndr} for a shaper of 8,000 frames/s: {goal}")
    check(rep["verdict"]["result"] == "pass", f"verdict {rep['verdict']}")
    check(abs(rep["rows"][0]["range"]["line_rate_pps"] - 1e9 / (148 * 8)) < 1, f"range {rep['rows'][0]['range']}")
    for t in rep["trials"]:
        check(t["why"] and (t["valid"] or t["invalid_reason"]), f"trial {t}")
        if t["valid"] and t["count"]:
            check(t["sent"] == t["count"], f"a paced trial sends its count: {t}")
    check({e["engine"] for e in rep["environment"]["engines"]} ==
          {f"{bed.engine_addr[k]}:{ENGINE_PORT}" for k in "ab"}, f"environment {rep['environment']}")
    check(ext["flows"][0]["tx_engine"] == f"{bed.engine_addr['a']}:{ENGINE_PORT}", f"last trial's flow {ext['flows']}")


def test_linerate_latency_frame_loss_back_to_back_across_hosts(bed, tmp_path):
    """RFC 2544 latency, frame loss and back-to-back from engine A to engine B through the
    shaped switch port (8,000 frames/s, a 40-frame burst, a 100-frame queue): latency at 4,000
    frames/s with every frame timed and none lost; frame loss from 12,000 frames/s down, losing
    about what the shaper drops and ending with two clean steps; back-to-back bursts at 16,000
    frames/s, the longest whole one within what the shaper's burst and queue hold. The
    switch's counters account for every frame of each."""
    location_map(bed, tmp_path / "map.yaml")
    counters = shape_towards_b(bed, 8000)
    # Each engine's worker on a core of its own (on one host, both would take the second).
    with Deployment(bed, ["--location-map", str(tmp_path / "map.yaml")], engine_args={"b": ["--cpus", "0"]}) as d:
        before = counters()
        lat = procedure(d, {"procedure": "latency", "tx": ["a0"], "rx": ["b0"], "sizes": "128", "rate": "4000",
                            "trial-duration": "0.5s", "repeat": "2", "max-latency": "1s"})
        switch_accounts_for(counters, before, lat)
        row = lat["rows"][0]
        check(lat["verdict"]["result"] == "pass" and row["sent"] == row["received"] == 4000,
              f"latency: {lat['verdict']} {row}")
        check(row["latency"]["count"] == 4000 and 0 < row["latency"]["min_ns"] <= row["latency"]["p99_ns"] <=
              row["latency"]["max_ns"] * 1.07 < 1e9, f"latency {row}")

        before = counters()
        loss = procedure(d, {"procedure": "frame-loss", "tx": ["a0"], "rx": ["b0"], "sizes": "128",
                             "max-rate": "12000", "step": "25", "trial-duration": "0.5s"})
        switch_accounts_for(counters, before, loss)
        steps = loss["rows"][0]["steps"]
        check(steps[0]["load"]["pps"] == 12000 and 20 <= steps[0]["frame_loss_pct"] <= 40,
              f"at 12,000 frames/s the shaper drops about a third: {steps[0]}")
        check(len(steps) >= 3 and steps[-1]["frame_loss_pct"] == steps[-2]["frame_loss_pct"] == 0, f"two clean steps end it: {steps}")

        before = counters()
        b2b = procedure(d, {"procedure": "back-to-back", "tx": ["a0"], "rx": ["b0"], "sizes": "128",
                            "max-rate": "16000", "trial-duration": "0.5s", "repeat": "1"})
        switch_accounts_for(counters, before, b2b)
        if b2b["verdict"]["result"] == "invalid":  # a sender that shares its core stalls inside the bursts
            check("the sender stalled" in b2b["verdict"]["reason"], f"back-to-back: {b2b['verdict']}")
            print(f"     no back-to-back result: {b2b['verdict']['reason']}", flush=True)
            return
        burst = b2b["rows"][0]
        # 40 frames of burst and 100 queued, filling at 16,000 - 8,000 frames/s: about 280 frames.
        check(100 <= burst["min"] <= burst["max"] <= 600, f"back-to-back {burst}")
        print(f"     latency min {row['latency']['min_ns'] / 1e3:.0f} us, frame loss at 12,000/s "
              f"{steps[0]['frame_loss_pct']:.1f} %, back-to-back {burst['max']} frames", flush=True)
