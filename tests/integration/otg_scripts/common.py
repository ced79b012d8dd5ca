"""What the snappi scripts share: the api (version check on, as otg-examples' RFC 2544 test
has it), the traffic and capture controls, metrics read as plain numbers, waits that poll the
server, and the one JSON line each script ends with (test_otg.py asserts on it)."""
import json
import time

import snappi


def api(url):
    return snappi.api(location=url, verify=False, version_check=True)


def eth_ipv4_udp(flow, src_port, dst_port, src_ip="198.18.0.1", dst_ip="198.18.0.2"):
    """The flow's headers: Ethernet (a fixed source MAC, dst auto), IPv4 in 198.18.0.0/15, UDP."""
    eth, ip, udp = flow.packet.ethernet().ipv4().udp()
    eth.src.value = "02:00:00:00:00:01"
    ip.src.value, ip.dst.value = src_ip, dst_ip
    udp.src_port.value, udp.dst_port.value = src_port, dst_port
    return eth, ip, udp


def transmit(a, state, *names):
    cs = a.control_state()
    cs.traffic.flow_transmit.state = state
    if names:
        cs.traffic.flow_transmit.flow_names = list(names)
    return list(a.set_control_state(cs).warnings or [])


def capture(a, state, *ports):
    cs = a.control_state()
    cs.port.capture.state = state
    cs.port.capture.port_names = list(ports)
    a.set_control_state(cs)


def link(a, state, *ports):
    cs = a.control_state()
    cs.port.link.state = state
    cs.port.link.port_names = list(ports)
    return list(a.set_control_state(cs).warnings or [])


def flow_numbers(m):
    d = {"name": m.name, "transmit": m.transmit, "frames_tx": m.frames_tx, "frames_rx": m.frames_rx,
         "bytes_tx": m.bytes_tx, "bytes_rx": m.bytes_rx, "loss": m.loss, "port_tx": m.port_tx, "port_rx": m.port_rx}
    if m._properties.get("latency") is not None:
        d["latency"] = {k: getattr(m.latency, k) for k in ("minimum_ns", "average_ns", "maximum_ns")}
    if m._properties.get("timestamps") is not None:
        d["timestamps"] = {k: getattr(m.timestamps, k) for k in ("first_timestamp_ns", "last_timestamp_ns")}
    return d


def flows(a, *names):
    """Flow metrics by name: {name: {transmit, frames_tx, ...}}."""
    req = a.metrics_request()
    req.flow.flow_names = list(names)
    return {m.name: flow_numbers(m) for m in a.get_metrics(req).flow_metrics}


def ports(a):
    """Port metrics by name."""
    req = a.metrics_request()
    req.port.port_names = []
    return {m.name: {"frames_tx": m.frames_tx, "frames_rx": m.frames_rx, "bytes_tx": m.bytes_tx,
                     "bytes_rx": m.bytes_rx, "link": m.link, "transmit": m.transmit, "capture": m.capture}
            for m in a.get_metrics(req).port_metrics}


def wait_for(what, cond, timeout=60.0, poll=0.05):
    """Polls cond() until it returns something true; returns it. Fails naming `what`."""
    end = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > end:
            raise SystemExit(f"waiting for {what}: not there after {timeout:g} s")
        time.sleep(poll)


def wait_stopped(a, *names, timeout=60.0):
    """Waits until every flow named (or every flow) says transmit "stopped"; their metrics."""
    return wait_for(f"flows {names or 'all'} stopped",
                    lambda: (lambda m: m if all(f["transmit"] == "stopped" for f in m.values()) else None)(
                        flows(a, *names)), timeout)


def done(result):
    print(json.dumps(result), flush=True)
