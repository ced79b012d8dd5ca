"""A port's link taken down and brought up through the API (control_state port.link), as the
port metrics and the interface itself see it, and traffic across it once it is up again.

    link.py URL TX_LOCATION RX_LOCATION PACKETS PPS"""
import sys

import common

url, tx, rx, packets, pps = sys.argv[1:6]


def operstate(ifc):
    with open(f"/sys/class/net/{ifc}/operstate") as f:
        return f.read().strip()


def links():
    return {"metrics": {name: p["link"] for name, p in common.ports(api).items()}, "tx_operstate": operstate(tx)}


api = common.api(url)
cfg = api.config()
p1, p2 = cfg.ports.port(name="p1", location=tx).port(name="p2", location=rx)
f = cfg.flows.flow(name="f1")[-1]
f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = p1.name, [p2.name]
f.rate.pps = int(pps)
f.duration.fixed_packets.packets = int(packets)
f.metrics.enable = True
common.eth_ipv4_udp(f, 5000, 6000)
api.set_config(cfg)
seen = {"configured": links()}
for state in ("down", "up"):
    seen[state + "_warnings"] = common.link(api, state, "p1")
    # The kernel's word first (readiness), then the metrics', given a few seconds to agree.
    common.wait_for(f"{tx} {state}", lambda: operstate(tx) == state, timeout=10)
    try:
        common.wait_for(f"p1's link {state} in the metrics", lambda: links()["metrics"]["p1"] == state, timeout=5)
    except SystemExit:
        pass
    seen[state] = links()
common.transmit(api, "start")
seen["flow"] = common.wait_stopped(api, "f1")["f1"]
common.done(seen)
