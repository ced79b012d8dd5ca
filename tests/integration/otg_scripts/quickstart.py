"""The OTG quickstart as a snappi script writes it: two ports, one flow of a fixed number of
eth/ipv4/udp frames at a rate, metrics, latency and timestamps on; start it, poll until it says
"stopped", read its and the ports' metrics.

    quickstart.py URL TX_LOCATION RX_LOCATION PACKETS PPS SIZE"""
import sys

import common

url, tx, rx, packets, pps, size = sys.argv[1:7]
api = common.api(url)
cfg = api.config()
p1, p2 = cfg.ports.port(name="p1", location=tx).port(name="p2", location=rx)
f = cfg.flows.flow(name="f1")[-1]
f.tx_rx.port.tx_name = p1.name
f.tx_rx.port.rx_names = [p2.name]
f.size.fixed = int(size)
f.rate.pps = int(pps)
f.duration.fixed_packets.packets = int(packets)
f.metrics.enable = True
f.metrics.loss = True
f.metrics.latency.enable = True
f.metrics.timestamps = True
common.eth_ipv4_udp(f, 5000, 6000)
warnings = list(api.set_config(cfg).warnings or [])
common.transmit(api, "start")
flows = common.wait_stopped(api, "f1")
common.done({"warnings": warnings, "flow": flows["f1"], "ports": common.ports(api)})
