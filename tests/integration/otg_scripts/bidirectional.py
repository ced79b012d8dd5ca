"""otg-examples' two flows (snappi/otg-flows.py): "flow p1->p2" and "flow p2->p1" between two
ports, each a fixed number of eth/ipv4/udp frames with UDP source ports that increment and
destination ports from a list; done, as that script decides, when the ports' frames_tx and
frames_rx both add up to every frame of both flows. Prints the flow and port metrics.

    bidirectional.py URL P1_LOCATION P2_LOCATION PACKETS PPS"""
import sys

import common

url, loc1, loc2 = sys.argv[1:4]
packets, pps = int(sys.argv[4]), int(sys.argv[5])
api = common.api(url)
cfg = api.config()
p1, p2 = cfg.ports.port(name="p1", location=loc1).port(name="p2", location=loc2)
shapes = (("flow p1->p2", p1, p2, 128, "198.18.0.1", "198.18.0.2", (5000, 2, 10), [4000, 4044, 4060, 4074]),
          ("flow p2->p1", p2, p1, 256, "198.18.0.2", "198.18.0.1", (6000, 4, 10), [6000, 6044, 6060, 6074, 6080, 6090]))
for name, tx, rx, size, src, dst, (start, step, count), dst_ports in shapes:
    f = cfg.flows.flow(name=name)[-1]
    f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = tx.name, [rx.name]
    f.size.fixed = size
    f.rate.pps = pps
    f.duration.fixed_packets.packets = packets
    f.metrics.enable = True
    eth, ip, udp = f.packet.ethernet().ipv4().udp()
    eth.src.value = "02:00:00:00:00:01" if tx is p1 else "02:00:00:00:00:02"
    eth.dst.value = "02:00:00:00:00:02" if tx is p1 else "02:00:00:00:00:01"
    ip.src.value, ip.dst.value = src, dst
    udp.src_port.increment.start, udp.src_port.increment.step, udp.src_port.increment.count = start, step, count
    udp.dst_port.values = dst_ports
api.set_config(cfg)
common.transmit(api, "start")
expected = 2 * packets


def all_in():
    ports = common.ports(api)
    return ports if (sum(p["frames_tx"] for p in ports.values()) == expected
                     and sum(p["frames_rx"] for p in ports.values()) == expected) else None


common.wait_for("every frame sent and received by the ports", all_in, timeout=60)
common.done({"flows": common.wait_stopped(api), "ports": common.ports(api)})
