"""An RFC 2544 throughput (NDR) search written in snappi, as otg-examples' test_rfc2544.py
does it: every trial sets the config again with the flow's rate and a fixed duration of 1 s,
starts the traffic, waits for the flow to say "stopped", stops the traffic (the counters are
then final) and reads frames_tx and frames_rx; a binary search on the rate for the highest one
without loss, until the bounds are RESOLUTION pps apart. Prints every trial and the bounds.

    rfc2544.py URL TX_LOCATION RX_LOCATION LOW_PPS HIGH_PPS RESOLUTION_PPS SIZE"""
import sys

import common

url, tx, rx = sys.argv[1:4]
low, high, resolution, size = map(int, sys.argv[4:8])
api = common.api(url)
cfg = api.config()
p1, p2 = cfg.ports.port(name="p1", location=tx).port(name="p2", location=rx)
f = cfg.flows.flow(name="f1")[-1]
f.tx_rx.port.tx_name, f.tx_rx.port.rx_names = p1.name, [p2.name]
f.size.fixed = size
f.metrics.enable = True
common.eth_ipv4_udp(f, 5000, 6000)


def trial(pps):
    f.rate.pps = pps
    f.duration.fixed_seconds.seconds = 1
    api.set_config(cfg)
    warnings = common.transmit(api, "start")
    common.wait_stopped(api, "f1", timeout=30)
    warnings += common.transmit(api, "stop")
    m = common.flows(api, "f1")["f1"]
    t = {"pps": pps, "frames_tx": m["frames_tx"], "frames_rx": m["frames_rx"], "warnings": warnings}
    print(f"trial at {pps} pps: sent {t['frames_tx']}, received {t['frames_rx']}", file=sys.stderr, flush=True)
    return t


trials = []
lossless, lossy = None, None  # the highest rate without loss, the lowest with
left, right = low, high
while right - left > resolution:
    mid = (left + right) // 2
    t = trial(mid)
    trials.append(t)
    if t["frames_rx"] >= t["frames_tx"]:
        left = lossless = mid
    else:
        right = lossy = mid
common.done({"ndr": lossless, "lossy": lossy, "low": low, "high": high, "trials": trials})
