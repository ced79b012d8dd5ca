"""Several engines as one test, driven through `linerate serve --controller` as any OTG server:
three flows of a fixed number of frames, two into one receiving port (one from each engine) and
one across the other way; start, poll until every flow says "stopped", read flow and port
metrics.

    multihost.py URL A0 B0 B1 PACKETS PPS"""
import sys

import common

url, a0, b0, b1, packets, pps = sys.argv[1:7]
api = common.api(url)
cfg = api.config()
cfg.ports.port(name="a0", location=a0).port(name="b0", location=b0).port(name="b1", location=b1)
for i, (name, tx, rx) in enumerate((("a_to_b", "a0", "b0"), ("b_to_b", "b1", "b0"), ("b_to_a", "b1", "a0"))):
    f = cfg.flows.flow(name=name)[-1]
    f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = tx, [rx]
    f.size.fixed = 128
    f.rate.pps = int(pps)
    f.duration.fixed_packets.packets = int(packets)
    f.metrics.enable = True
    f.metrics.loss = True
    f.metrics.latency.enable = True
    f.metrics.timestamps = True
    common.eth_ipv4_udp(f, 5000 + i, 6000)
warnings = list(api.set_config(cfg).warnings or [])
common.transmit(api, "start")
flows = common.wait_stopped(api, "a_to_b", "b_to_b", "b_to_a")
common.done({"warnings": warnings, "flows": flows, "ports": common.ports(api)})
