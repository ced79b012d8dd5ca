"""A link outage mid-run: the receiving veth is taken down for 1.5 s while linerate sends
through the pair at 100 kpps. Both ports' link events are recorded with their times, the
outage says what was handed to the device and dropped meanwhile, and the run fails (exit 1)
naming the link, unless --link-outage tolerate. DPDK over the same kernel interface
(net_af_xdp) sees the same outage through the kernel's carrier. How long the outage measured
and how little the receiver caught at its edges are timing: test_timing.py's, on runs of
same_ns_outage."""
import os
import tempfile
import time

import pytest

from lrtest import LINERATE, check, read_json
from testbed import VethBed, sending, stream_lines, unique, wait_stream

pytestmark = pytest.mark.usefixtures("hugepages")

OUTAGE_S = 1.5  # how long the link is held down


def run_with_outage(bed, d, argv, hold_until_dropped):
    """Runs argv (linerate) with --json and --json-stream; once it is sending, takes the
    receiving veth down for OUTAGE_S, and with hold_until_dropped at least until the stream shows
    the egress device dropping frames; then up again, with the run still going."""
    rep, stream = os.path.join(d, "r.json"), os.path.join(d, "r.jsonl")
    cut = argv.index("--") if "--" in argv else len(argv)
    p = bed.start(bed.nsa, argv[:cut] + ["--json", rep, "--interval", "100ms", "--json-stream", stream] + argv[cut:])
    first = wait_stream(stream, sending, p, what="the first interval with frames sent")
    bed_ip = ["ip", "-n", bed.nsb, "link", "set", bed.ifb]
    os.spawnvp(os.P_WAIT, "ip", bed_ip + ["down"])
    down_at = time.monotonic()
    if hold_until_dropped:
        wait_stream(stream, lambda x: x.get("type") == "interval" and x["drops"] > 0 and x["t0"] >= first["t1"], p,
                    timeout=4.0, what="frames dropped by the egress device while the link is down")
    # The outage itself: its length is the stimulus (test_timing.py bounds what linerate measured).
    time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - down_at)))
    os.spawnvp(os.P_WAIT, "ip", bed_ip + ["up"])
    check(p.poll() is None, f"linerate ended before the link came back (exit {p.returncode}); "
                            f"stream {stream_lines(stream)[-3:]}")
    out, _ = p.communicate(timeout=60)
    return p.returncode, out, read_json(rep)


def check_outage(rc, out, r, expect_rc, tx_port, rx_port):
    check(rc == expect_rc, f"exit {rc}, expected {expect_rc}\n{out[-3000:]}")
    ev = [(e["port"], e["link"]) for e in r["link_events"]]
    # The receiver went down and up; the sender lost its carrier with it and got it back.
    for port in (tx_port, rx_port):
        check([s for p, s in ev if p == port] == ["down", "up"], f"{port}: events {r['link_events']}")
    outages = {o["port"]: o for o in r["link_outages"]}
    check(set(outages) == {tx_port, rx_port}, f"outages {r['link_outages']}")
    for o in outages.values():
        # Closed (how long: test_timing.py's).
        check(o["to"] is not None, f"outage {o}")
    tx = outages[tx_port]
    check(tx["handed"] > 0 and tx["egress_dropped"] > 0, f"frames into the dead link not attributed: {tx}")
    t = r["totals"]
    check(t["lost"] > 0 and t["lost"] == t["loss_account"]["lost"], f"totals {t}")
    check(any(n.startswith(f"link {tx_port} down at") for n in r["notes"]), f"notes {r['notes']}")
    return outages


def same_ns_outage(policy, expect_rc):
    """An afxdp run through the pair with the receiving veth down for OUTAGE_S: the events,
    both ports' outages, what the egress device dropped (asserted). Returns the report, and the
    names of the sending and receiving ports."""
    with VethBed(unique("llk"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        argv = [LINERATE, "run", "-q", "--backend", "afxdp", "--tx-engine", "socket", "--tx", bed.ifa,
                "--rx", bed.ifb, "--duration", "6s", "--rate", "100k"]  # outlasts the wait for drops
        if policy:
            argv += ["--link-outage", policy]
        rc, out, r = run_with_outage(bed, d, argv, hold_until_dropped=True)
        check_outage(rc, out, r, expect_rc, bed.ifa, bed.ifb)
        return r, bed.ifa, bed.ifb


def test_outage_fails_by_default():
    r, _, _ = same_ns_outage(None, 1)
    check(r["verdict"]["result"] == "fail" and "link-outage" in r["verdict"]["reason"], f"{r['verdict']}")
    link_checks = [c for c in r["checks"] if c["option"] == "link-outage"]
    check(len(link_checks) == 1 and not link_checks[0]["pass"], f"checks {r['checks']}")


def test_outage_tolerated():
    r, _, _ = same_ns_outage("tolerate", 0)
    check(r["verdict"]["result"] == "pass", f"{r['verdict']}")
    check(not any(c["option"] == "link-outage" for c in r["checks"]), f"checks {r['checks']}")


def test_dpdk_sees_the_kernel_carrier():
    with VethBed(unique("llk"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        argv = [LINERATE, "run", "-q", "--tx", "net_af_xdp0", "--duration", "4s", "--rate", "100k", "--",
                f"--vdev=net_af_xdp0,iface={bed.ifa}", "--no-pci", "--in-memory", "--no-telemetry"]
        rc, out, r = run_with_outage(bed, d, argv, hold_until_dropped=False)
        check(rc == 1, f"exit {rc}\n{out[-3000:]}")
        ev = [(e["port"], e["link"]) for e in r["link_events"]]
        check(ev == [("net_af_xdp0", "down"), ("net_af_xdp0", "up")], f"events {r['link_events']}")
        check("link net_af_xdp0 down at" in r["verdict"]["reason"], f"{r['verdict']}")
