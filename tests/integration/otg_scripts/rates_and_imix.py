"""Three flows from one port, each with its own size and rate and a fixed number of frames:
two fixed sizes and one IMIX (weight_pairs predefined imix); started together, each stops by
itself; their metrics once all say "stopped".

    rates_and_imix.py URL TX_LOCATION RX_LOCATION SMALL_PPS SMALL_PACKETS LARGE_PPS LARGE_PACKETS IMIX_PPS IMIX_PACKETS"""
import sys

import common

url, tx, rx = sys.argv[1:4]
small_pps, small_packets, large_pps, large_packets, imix_pps, imix_packets = map(int, sys.argv[4:10])
api = common.api(url)
cfg = api.config()
p1, p2 = cfg.ports.port(name="p1", location=tx).port(name="p2", location=rx)
for i, (name, pps, packets) in enumerate((("small", small_pps, small_packets), ("large", large_pps, large_packets),
                                          ("imix", imix_pps, imix_packets))):
    f = cfg.flows.flow(name=name)[-1]
    f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = p1.name, [p2.name]
    if name == "small":
        f.size.fixed = 64
    elif name == "large":
        f.size.fixed = 1000
    else:
        f.size.weight_pairs.predefined = f.size.weight_pairs.IMIX
    f.rate.pps = pps
    f.duration.fixed_packets.packets = packets
    f.metrics.enable = True
    common.eth_ipv4_udp(f, 5000 + i, 6000 + i)
warnings = list(api.set_config(cfg).warnings or [])
common.transmit(api, "start")
flows = common.wait_stopped(api)
common.done({"warnings": warnings, "flows": flows, "ports": common.ports(api)})
