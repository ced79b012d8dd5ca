#!/usr/bin/env python3
"""One demo run in a few lines (scripts/demo.sh): what the sender handed to lr0, what the receiver
on lr1 counted, what the kernel counted on lr1, and what that means.

    demo_summary.py DIR NAME    reads DIR/NAME-tx.json, DIR/NAME-rx.json (linerate's reports) and
                                DIR/NAME.kernel (lr1's rx_packets before and after the run)
"""
import json
import os
import sys

out, name = sys.argv[1], sys.argv[2]
pad = "      "


def load(side):
    path = os.path.join(out, f"{name}-{side}.json")
    if not os.path.exists(path):
        log = os.path.join(out, f"{name}-{side}.log")
        print(f"{pad}no report from the {'sender' if side == 'tx' else 'receiver'}; its output:")
        with open(log) as f:
            print("".join(pad + line for line in f.readlines()[-15:]), end="")
        sys.exit(0)
    with open(path) as f:
        return json.load(f)


def n(v):
    return f"{v:,}"


def mpps(pps):
    return f"{pps / 1e6:.2f} Mpps" if pps >= 1e6 else f"{pps / 1e3:.0f} kpps"


def us(ns):
    return f"{ns / 1e3:.0f} us" if ns < 1e6 else f"{ns / 1e6:.1f} ms"


tx, rx = load("tx"), load("rx")
with open(os.path.join(out, f"{name}.kernel")) as f:
    before, after = (int(x) for x in f.read().split())
kernel = after - before

port_tx, port_rx = tx["environment"]["ports"][0], rx["environment"]["ports"][0]
sent = tx["totals"]["tx"]["packets"]
tx_pps = tx["totals"]["tx"]["pps"]
size = tx["spec"]["frame"]["size"]
egress_dropped = tx["port_counters"][0].get("odropped", 0)
classes = rx["totals"]["rx_classes"]
got = classes["distinct"]
rx_pps = rx["totals"]["rx"]["pps"]
lost = sent - got
pc = rx["port_counters"][0]
host_drops = (pc.get("xsk", {}).get("rx_ring_full", 0) + pc.get("xsk", {}).get("rx_dropped", 0) +
              pc.get("xdp", {}).get("redirect_failed", 0) + pc.get("imissed", 0) + pc.get("rx_nombuf", 0))
sink = port_rx.get("rx_mode") == "xdp counting sink"

asked = tx["rate"].get("requested_pps") if isinstance(tx.get("rate"), dict) else None
asked_txt = f" of {mpps(asked)} asked" if asked else ""
dropped_txt = ("none dropped by lr0" if not egress_dropped else
               f"{n(egress_dropped)} dropped by lr0 (lr1's receive queue was full: the receiving side fell behind)")
print(f"{pad}sent {n(sent)} frames in {tx['totals']['tx']['seconds']:.2f} s ({mpps(tx_pps)}{asked_txt}), {dropped_txt}")
agree = "" if kernel == got else f" ({n(kernel - got)} more than counted: frames that were not this run's)"
if sink:
    print(f"{pad}lr1 counted {n(got)} of this run's frames ({mpps(rx_pps)}): {n(lost)} lost, "
          f"{n(classes['malformed'])} malformed; the kernel counted {n(kernel)} on lr1{agree}")
else:
    print(f"{pad}received {n(got)} ({mpps(rx_pps)}): {n(lost)} lost, {n(classes['reordered'])} reordered, "
          f"{n(classes['duplicates'])} duplicates, {n(classes['malformed'])} malformed; "
          f"the kernel counted {n(kernel)} on lr1{agree}")
if host_drops:
    print(f"{pad}of the lost, {n(host_drops)} were dropped by lr1's own receive path (the receiver fell behind, "
          "not the link)")
lat = rx.get("latency")
if lat and lat.get("count"):
    print(f"{pad}one-way latency lr0 -> lr1: p50 {us(lat['p50_ns'])}, p99 {us(lat['p99_ns'])}, "
          f"max {us(lat['max_ns'])}")
for side, r in (("sender", tx), ("receiver", rx)):
    v = r["verdict"]
    if v["result"] != "pass":
        print(f"{pad}the {side}'s verdict: {v['result']} ({v['reason']})")
if sink:
    print(f"{pad}=> {mpps(rx_pps)} of signed {size}-byte frames through the veth pair, every frame accounted for")
    print(f"{pad}   (checked and counted in lr1's driver: no latency measured)")
else:
    print(f"{pad}=> exact loss and one-way latency, frame by frame in user space, matching the kernel's count"
          if kernel == got and lost == 0 else f"{pad}=> loss and one-way latency, frame by frame in user space")
