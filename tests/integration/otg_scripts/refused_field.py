"""A config with one field linerate refuses (WHAT: gre_header, tcp_seq_num, gap_13,
unknown_rx_port): set_config raises, and api.from_exception gives the OTG Error (code, kind,
errors) as otg-examples' assert_errors reads it. Prints it.

    refused_field.py URL WHAT"""
import sys

import common

url, what = sys.argv[1:3]
api = common.api(url)
cfg = api.config()
p1, p2 = cfg.ports.port(name="p1", location="lr0").port(name="p2", location="lr1")
f = cfg.flows.flow(name="f1")[-1]
f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = p1.name, [p2.name]
f.duration.fixed_packets.packets = 100
if what == "gre_header":
    eth, _, ip, _ = f.packet.ethernet().gre().ipv4().udp()
elif what == "tcp_seq_num":
    eth, ip, tcp = f.packet.ethernet().ipv4().tcp()
    tcp.seq_num.value = 1000
else:
    eth, ip, _ = f.packet.ethernet().ipv4().udp()
eth.src.value = "02:00:00:00:00:01"
ip.src.value, ip.dst.value = "198.18.0.1", "198.18.0.2"
if what == "gap_13":
    f.duration.fixed_packets.gap = 13
elif what == "unknown_rx_port":
    f.tx_rx.port.rx_names = ["p3"]
elif what not in ("gre_header", "tcp_seq_num"):
    raise SystemExit(f"refused_field.py: no case {what}")
try:
    api.set_config(cfg)
except Exception as e:  # snappi raises a plain Exception carrying the OTG Error
    err = api.from_exception(e)
    common.done({"raised": True, "code": err.code, "kind": err.kind, "errors": list(err.errors), "str": str(e)})
else:
    common.done({"raised": False})
