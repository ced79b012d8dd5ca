"""Two continuous flows from one port, started, paused, resumed and stopped one by one with
flow_names, the flow metrics read at each step (the waits poll the other flow's progress, so
every step has seen some of its traffic): f1 alone, then f2 too; f1 paused and read twice,
f2 having sent STEP frames between the readings; f1 resumed; f1 stopped (read at once, and
again once f2 has sent STEP more); everything stopped; f1 started again alone and read at once;
everything stopped.

    flow_control.py URL TX_LOCATION RX_LOCATION PPS STEP"""
import sys

import common

url, tx, rx = sys.argv[1:4]
pps, step = int(sys.argv[4]), int(sys.argv[5])
api = common.api(url)
cfg = api.config()
p1, p2 = cfg.ports.port(name="p1", location=tx).port(name="p2", location=rx)
for i, name in enumerate(("f1", "f2")):
    f = cfg.flows.flow(name=name)[-1]
    f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = p1.name, [p2.name]
    f.rate.pps = pps
    f.duration.continuous.gap = 12
    f.metrics.enable = True
    common.eth_ipv4_udp(f, 5000 + i, 6000 + i)
api.set_config(cfg)
seen = {}
warnings = []


def progressed(name, frames, since=None):
    """Waits until flow `name` has sent `frames` more than in `since` (or than 0); the metrics."""
    base = since[name]["frames_tx"] if since else 0
    return common.wait_for(f"{name} sending {frames} frames more",
                           lambda: (lambda m: m if m[name]["frames_tx"] >= base + frames else None)(common.flows(api)))


warnings += common.transmit(api, "start", "f1")
seen["f1_started"] = progressed("f1", step)
warnings += common.transmit(api, "start", "f2")
seen["f2_started"] = progressed("f2", step)
warnings += common.transmit(api, "pause", "f1")
seen["f1_paused"] = progressed("f2", step, common.flows(api))
seen["f1_still_paused"] = progressed("f2", step, seen["f1_paused"])
warnings += common.transmit(api, "resume", "f1")
seen["f1_resumed"] = progressed("f1", step, seen["f1_still_paused"])
warnings += common.transmit(api, "stop", "f1")
seen["f1_stopped"] = common.flows(api)
seen["f1_still_stopped"] = progressed("f2", step, seen["f1_stopped"])
warnings += common.transmit(api, "stop")
seen["all_stopped"] = common.flows(api)
warnings += common.transmit(api, "start", "f1")
seen["f1_restarted"] = common.flows(api)
warnings += common.transmit(api, "stop")
seen["end"] = common.flows(api)
seen["warnings"] = warnings
common.done(seen)
