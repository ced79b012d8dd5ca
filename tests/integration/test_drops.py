"""Who dropped it: every frame linerate counted as sent is reconciled with the egress
device's own counters, and every lost frame is attributed to this host (its egress device, its
receive path) or to the path under test. Exact counts, no timing:
- frames steered to a receive queue with no socket are counted as this host's drops;
- an unpaced run into a receiver that cannot keep up: sent = device transmitted + dropped,
  lost = dropped by this host, nothing unaccounted;
- the far end going down mid-run: the frames the egress device dropped are never claimed as
  sent, and the run is invalid (exit 4)."""
import os
import subprocess
import tempfile

import pytest

from lrtest import LINERATE, check, paced_load, read_json as load
from testbed import VethBed, sending, unique, wait_stream

pytestmark = pytest.mark.usefixtures("root")


def test_unbound_queue_counted():
    rate = paced_load(100_000)  # the socket that is bound must take its half without dropping
    with VethBed(unique("ldq"), same_ns=True, queues=2) as bed, tempfile.TemporaryDirectory() as d:
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", f"{bed.ifa},queues=2",
                              "--rx", bed.ifb, "--count", "20000", "--rate", str(rate), "--json", f"{d}/r.json"],
                    timeout=60)
        check(r.returncode == 0, f"exit {r.returncode}\n{r.stdout}{r.stderr}")
        rep = load(f"{d}/r.json")
        acc = rep["totals"]["loss_account"]
        lost = rep["totals"]["lost"]
        # Half the flows land on queue 1 of the receiver, where no socket is bound: each of those
        # is the host's drop, exactly. The bound queue loses nothing unless its socket's ring
        # overflowed while the receiver waited for its core, and that too is the host's, counted.
        check(rep["port_counters"][1]["xdp"]["redirect_failed"] == 10000, f"{rep['port_counters'][1]['xdp']}")
        check(lost >= 10000 and acc["host_rx_dropped"] + acc["egress_dropped"] == lost and acc["unaccounted"] == 0,
              f"lost {lost}: {acc}")
        check(any(f"receive path dropped {acc['host_rx_dropped']}" in n for n in rep["notes"]), f"notes {rep['notes']}")
        check(f"{acc['host_rx_dropped']} dropped by this host's receive path, {acc['egress_dropped']} by its egress "
              f"device, 0 unaccounted" in r.stdout, r.stdout[-1500:])


def test_unpaced_reconciles():
    with VethBed(unique("ldu"), same_ns=True, queues=2) as bed, tempfile.TemporaryDirectory() as d:
        n = 2_000_000
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", f"{bed.ifa},queues=2",
                              "--rx", f"{bed.ifb},queues=2", "--count", str(n), "--json", f"{d}/r.json"], timeout=120)
        check(r.returncode == 0, f"exit {r.returncode}\n{r.stdout}{r.stderr}")
        rep = load(f"{d}/r.json")
        t = rep["totals"]
        rec = rep["tx_reconciliation"]
        check(len(rec) == 1 and rec[0]["handed"] == n == t["tx"]["packets"], f"reconciliation {rec}")
        check(rec[0]["device_transmitted"] + rec[0]["device_dropped"] == n and rec[0]["agrees"], f"{rec}")
        acc = t["loss_account"]
        check(t["lost"] == acc["host_rx_dropped"] + acc["egress_dropped"] and acc["unaccounted"] == 0,
              f"lost {t['lost']}: {acc}")
        check(t["rx_classes"]["distinct"] + t["lost"] == n, "received + lost = sent")
        print(f"     sent {n}, received {t['rx_classes']['distinct']}, this host's receive path dropped "
              f"{acc['host_rx_dropped']}, its egress device {acc['egress_dropped']}")


def test_refused_live_frames_are_counted_once():
    """Live frames (XDP redirects) into a veth whose receive work runs on the other core, in a
    kernel thread slower than the sender (1518-byte frames to copy): its ring refuses frames.
    The kernel counts each refused frame twice, in the sender's tx_dropped and the receiver's
    rx_dropped; linerate counts it once, as the egress device's drop, so the loss account adds
    up exactly: lost = egress dropped + host receive path dropped, nothing unaccounted."""
    n = 500_000
    with VethBed(unique("ldl"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        for cmd in (["ethtool", "-K", bed.ifb, "gro", "on"],  # a NAPI of its own, which may be threaded
                    ["sh", "-c", f"echo 1 > /sys/class/net/{bed.ifb}/threaded"]):
            r = bed.run(bed.nsa, cmd)
            check(r.returncode == 0, f"{' '.join(cmd)}: {r.stderr}")
        threads = subprocess.run(["pgrep", f"napi/{bed.ifb}"], capture_output=True, text=True).stdout.split()
        check(threads, f"no NAPI thread for {bed.ifb}")
        for pid in threads:
            subprocess.run(["taskset", "-pc", "0", pid], check=True, capture_output=True)
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx-engine", "live", "--tx", bed.ifa,
                              "--rx", bed.ifb, "--cpus", "1", "--size", "1518", "--count", str(n),
                              "--json", f"{d}/r.json"], timeout=120)
        check(os.path.exists(f"{d}/r.json"), f"exit {r.returncode}, no report\n{r.stdout}{r.stderr}")
        rep = load(f"{d}/r.json")
    t, acc, rec = rep["totals"], rep["totals"]["loss_account"], rep["tx_reconciliation"]
    print(f"     sent {n}, lost {t['lost']}: the egress device dropped {acc['egress_dropped']}, this host's receive "
          f"path {acc['host_rx_dropped']}")
    check(acc["egress_dropped"] > 0, f"the receiver kept up, nothing was refused: {acc}")
    check(rec[0]["device_dropped"] == acc["egress_dropped"], f"reconciliation {rec}")
    check(t["lost"] == acc["egress_dropped"] + acc["host_rx_dropped"] and acc["unaccounted"] == 0,
          f"lost {t['lost']}: {acc}")
    check(t["rx_classes"]["distinct"] + t["lost"] == n, "received + lost = sent")


def test_far_end_down_is_invalid():
    with VethBed(unique("ldf")) as bed, tempfile.TemporaryDirectory() as d:
        p = bed.start(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--rate", "100k",
                                "--duration", "3s", "--interval", "100ms", "--json", f"{d}/r.json",
                                "--json-stream", f"{d}/r.jsonl"])
        # Sending (an interval with frames sent), with most of the 3 s still to go.
        wait_stream(f"{d}/r.jsonl", sending, p, what="the first interval with frames sent")
        subprocess.run(["ip", "-n", bed.nsb, "link", "set", bed.ifb, "down"], check=True)
        out = p.communicate(timeout=60)[0]
        check(p.returncode == 4, f"exit {p.returncode}, expected 4 (invalid)\n{out}")
        rep = load(f"{d}/r.json")
        rec = rep["tx_reconciliation"][0]
        check(rec["device_dropped"] > 0 and rec["agrees"], f"{rec}")
        check("egress device dropped" in rep["verdict"]["reason"], f"{rep['verdict']}")
        check(rec["device_transmitted"] + rec["device_dropped"] == rep["totals"]["tx"]["packets"], f"{rec}")
