"""Fault injection with exact expected counts. This kernel has no netem, so a test-only tc
egress program (tests/bpf/tc_fault.bpf.c) on the sender's interface drops, duplicates,
reorders (swaps sequence numbers of adjacent pairs) or corrupts signed frames. The sender
is DPDK's net_af_packet (its frames pass tc egress); the receiver is the afxdp backend in
the other namespace, which knows only what arrived."""
import json
import os
import tempfile

import pytest

from lrtest import LINERATE, check, paced_load
from testbed import VethBed, receiving, unique, wait_stream

pytestmark = pytest.mark.usefixtures("hugepages")

N = 100_000
NONCE = "777"
BPF_DIR = os.path.join(os.path.dirname(LINERATE), "..", "tests", "bpf")  # build/tests/bpf


# Frames each fault lets reach the receiver's XDP program when the bed itself loses none.
ARRIVALS = {"drop": N - N // 10, "dup": N + N // 1000, "swap": N, "corrupt": N}
BED_ATTEMPTS = 3


def run_fault(fault, rx_mode="socket"):
    """One fault run whose receiver saw every frame the fault let through, as (stream,
    rx_classes). On a loaded host the bed itself can lose frames (the sender's veth drops
    when the receiving side's softirq falls behind); the counts are then exact but are not
    the fault's alone. Such a run is named with where the frames went and run again, at most
    BED_ATTEMPTS times in all; a wrong count in a clean run fails at once."""
    for attempt in range(1, BED_ATTEMPTS + 1):
        stream, classes, bed_loss = fault_run_once(fault, rx_mode)
        if not bed_loss:
            return stream, classes
        print(f"     attempt {attempt} of {BED_ATTEMPTS}: the bed lost frames outside the fault: {bed_loss}",
              flush=True)
    raise AssertionError(f"the bed lost frames outside the fault in all {BED_ATTEMPTS} attempts: {bed_loss}")


def fault_run_once(fault, rx_mode):
    # Counts stay exact at any rate; a modest one leaves the receiving side room.
    rate = paced_load(100_000)
    with VethBed(unique("lxf")) as bed, tempfile.TemporaryDirectory() as d:
        obj = os.path.abspath(os.path.join(BPF_DIR, f"tc_fault_{fault}.bpf.o"))
        for cmd in (["tc", "qdisc", "add", "dev", bed.ifa, "clsact"],
                    ["tc", "filter", "add", "dev", bed.ifa, "egress", "bpf", "direct-action", "obj", obj,
                     "sec", "tc"]):
            r = bed.run(bed.nsa, cmd)
            check(r.returncode == 0, f"{' '.join(cmd)}: {r.stderr}")
        rxp = bed.start(bed.nsb, [LINERATE, "run", "-q", "--backend", "afxdp", "--rx", bed.ifb, "--nonce", NONCE,
                                  "--duration", "60s", "--stop-when-idle", "--drain", "1s", "--descriptors", "4096",
                                  "--rx-mode", rx_mode, "--flows", "1",
                                  "--cpus", "0", "--json", f"{d}/rx.json", "--interval", "100ms",
                                  "--json-stream", f"{d}/rx.jsonl"])
        wait_stream(f"{d}/rx.jsonl", receiving, rxp, what="the receiver's first interval")
        tx = bed.run(bed.nsa, [LINERATE, "run", "-q", "--tx", "net_af_packet0", "--count", str(N), "--rate", str(rate),
                               "--nonce", NONCE, "--json", f"{d}/tx.json", "--",
                               f"--vdev=net_af_packet0,iface={bed.ifa},qdisc_bypass=0", "--no-pci", "--lcores=0@0,1@1"],
                     timeout=120)
        check(tx.returncode == 0, f"sender: {tx.stdout}{tx.stderr}")
        out, _ = rxp.communicate(timeout=90)
        check(rxp.returncode == 0, f"receiver: {out}")
        with open(f"{d}/tx.json") as f:
            check(json.load(f)["totals"]["tx"]["packets"] == N, "sender sent N")
        with open(f"{d}/rx.json") as f:
            rep = json.load(f)
        veth_dropped = bed.stat(bed.nsa, bed.ifa, "tx_dropped")
    streams, classes = rep["flows"], rep["totals"]["rx_classes"]
    check(len(streams) == 1, f"one stream expected: {streams}")
    port = rep["port_counters"][0]
    arrived = port["xdp"]["received"]
    host_dropped = port["xdp"]["redirect_failed"] + port["xsk"]["rx_ring_full"] + port["xsk"]["rx_dropped"]
    if arrived != ARRIVALS[fault] or host_dropped or veth_dropped:
        return None, None, (f"{arrived:,} of {ARRIVALS[fault]:,} frames reached the receiver's XDP program, "
                            f"the sender's veth dropped {veth_dropped:,}, the receiving host {host_dropped:,} "
                            f"(stream {streams[0]}, classes {classes})")
    # The live series' running loss must end where the final per-stream count does.
    if rx_mode == "socket":
        check(rep["intervals"][-1]["seq_gaps"] == streams[0]["lost"],
              f"last interval seq_gaps {rep['intervals'][-1]['seq_gaps']} vs lost {streams[0]['lost']}")
    return streams[0], classes, None


def test_drop_every_10th():
    s, c = run_fault("drop")
    check(s["lost"] == N // 10 and s["received"] == N - N // 10, f"stream {s}")
    check(s["reordered"] == 0 and s["duplicates"] == 0 and c["malformed"] == 0, f"stream {s} classes {c}")


def test_drop_seen_by_xdp_sink():
    s, c = run_fault("drop", rx_mode="xdp")
    check(s["lost"] == N // 10 and s["received"] == N - N // 10, f"stream {s}")
    check(s["lost_basis"] == "sequence gaps", f"basis {s['lost_basis']}")


def test_duplicate_every_1000th():
    s, c = run_fault("dup")
    check(s["duplicates"] == N // 1000, f"duplicates {s['duplicates']}, expected {N // 1000}")
    check(s["received"] == N and s["lost"] == 0 and s["reordered"] == 0, f"stream {s}")
    check(c["ours"] == N + N // 1000, f"classes {c}")


def test_swap_adjacent_pairs():
    s, c = run_fault("swap")
    check(s["reordered"] == N // 2, f"reordered {s['reordered']}, expected {N // 2}")
    check(s["lost"] == 0 and s["received"] == N and s["duplicates"] == 0, f"stream {s}")
    check(c["malformed"] == 0, f"checksums fixed by the program must verify: {c}")


def test_corrupt_one_byte():
    s, c = run_fault("corrupt")
    check(c["malformed"] == N // 500, f"malformed {c['malformed']}, expected {N // 500}")
    check(c["ours"] == N - N // 500, f"ours {c['ours']}: a corrupted frame must never count as ours")
    check(s["received"] == N - N // 500 and s["lost"] == N // 500, f"stream {s}")
