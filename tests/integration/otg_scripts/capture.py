"""A capture as otg-examples' ixia-c-b2b script takes one: the receiving port in the config's
captures, its capture started before the traffic, a fixed flow, and get_capture's pcap bytes
(written to PCAP_PATH for the test to read); the port's capture state on the way.

    capture.py URL TX_LOCATION RX_LOCATION PACKETS PPS SIZE PCAP_PATH"""
import sys

import common

url, tx, rx, packets, pps, size, path = sys.argv[1:8]
api = common.api(url)
cfg = api.config()
p1, p2 = cfg.ports.port(name="p1", location=tx).port(name="p2", location=rx)
cfg.captures.capture(name="c1", port_names=[p2.name])
f = cfg.flows.flow(name="f1")[-1]
f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = p1.name, [p2.name]
f.size.fixed = int(size)
f.rate.pps = int(pps)
f.duration.fixed_packets.packets = int(packets)
f.metrics.enable = True
common.eth_ipv4_udp(f, 5000, 6000)
api.set_config(cfg)
common.capture(api, "start", "p2")
seen = {"capture_before": common.ports(api)["p2"]["capture"]}
common.transmit(api, "start")
seen["flow"] = common.wait_stopped(api, "f1")["f1"]
req = api.capture_request()
req.port_name = "p2"
pcap = api.get_capture(req).read()
with open(path, "wb") as out:
    out.write(pcap)
seen["capture_after"] = common.ports(api)["p2"]["capture"]
seen["pcap_bytes"] = len(pcap)
common.done(seen)
