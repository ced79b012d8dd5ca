"""Exact counts on DPDK virtual ports: a ring port pair (TX port -> RX port in one process), a
single net_ring vdev looping back onto itself, and
net_null (transmit only). Received must equal sent, per queue and in total, with no drops.
The paced rate and the run's wall-clock length are timing: test_timing.py checks them on runs
of null_tx_paced and null_tx_duration."""
import pytest

from lrtest import check, queues, run, RING_PAIR_ARGS, NO_PCI

pytestmark = pytest.mark.usefixtures("hugepages")

N = 1_000_000


@pytest.mark.parametrize("proto,ipv6,size,nq", [("udp", False, 64, 2), ("tcp", False, 64, 2), ("udp", True, 66, 2),
                                               ("tcp", True, 78, 2), ("udp", False, 64, 1)],
                         ids=["udp_ipv4_64B_2q", "tcp_ipv4_64B_2q", "udp_ipv6_66B_2q", "tcp_ipv6_78B_2q",
                              "udp_ipv4_64B_1q"])
def test_ring_exact(proto, ipv6, size, nq):
    args = RING_PAIR_ARGS + ["--tx", f"ring0,queues={nq}", "--rx", f"ring1,queues={nq}", "--count", str(N),
            "--proto", proto, "--size", str(size)]
    if ipv6:
        args.append("--ipv6")
    _, _, _, rep = run(args, NO_PCI)
    t = rep["totals"]
    check(t["tx"]["packets"] == N, f"sent {t['tx']['packets']}, expected {N}")
    check(t["rx"]["packets"] == N, f"received {t['rx']['packets']}, expected {N}")
    check(t["lost"] == 0, f"lost {t['lost']}")
    check(t["tx"]["bytes"] == N * size, f"tx bytes {t['tx']['bytes']} != {N * size}")
    check(t["rx"]["bytes"] == N * size, f"rx bytes {t['rx']['bytes']} != {N * size}")
    tx, rx = queues(rep, "tx"), queues(rep, "rx")
    check(len(tx) == nq and len(rx) == nq, "one worker per queue")
    for a, b in zip(tx, rx):
        # Ring queue i of the TX port is RX queue i of the attached port.
        check(a["packets"] == b["packets"], f"queue {a['queue']}: tx {a['packets']} != rx {b['packets']}")
        check(a["packets"] == N // nq, f"queue {a['queue']} sent {a['packets']}, expected {N // nq}")
    check(sum(q["packets"] for q in tx) == t["tx"]["packets"], "sum of TX queues == total")
    check(all(p["imissed"] == 0 and p["ierrors"] == 0 and p["rx_nombuf"] == 0 for p in rep["port_counters"]),
          f"port drop counters: {rep['port_counters']}")
    check(rep["verdict"]["result"] == "pass", f"verdict {rep['verdict']}")
    check(rep["environment"]["dpdk_version"].startswith("DPDK"), "environment names DPDK")
    check([p["driver"] for p in rep["environment"]["ports"]] == ["net_ring", "net_ring"], "PMDs reported")


def test_ring_streams_of_many_sizes_exact():
    """Streams whose frames change length from one to the next (IMIX, two sizes in turn) and a
    fixed one share a queue: each buffer is sized for the frame it carries now, whatever it
    carried before, so the receiving port counts exactly the bytes the periods give (with FCS)."""
    streams = [("imix", "size=imix,count=120000", 120000, 120000 // 12 * (7 * 64 + 4 * 570 + 1518)),
               ("pair", "size=64:1/1518:1,vlan=5,count=50000", 50000, 50000 // 2 * (64 + 1518)),
               ("fixed", "size=128,count=30000", 30000, 30000 * 128)]
    args = RING_PAIR_ARGS + ["--tx", "ring0", "--rx", "ring1"]
    for name, spec, _, _ in streams:
        args += ["--stream", f"name={name},{spec}"]
    _, _, _, rep = run(args, NO_PCI)
    t = rep["totals"]
    frames, total = sum(s[2] for s in streams), sum(s[3] for s in streams)
    check(t["tx"]["packets"] == t["rx"]["packets"] == frames, f"sent {t['tx']['packets']}, received "
                                                             f"{t['rx']['packets']}, expected {frames}")
    check(t["tx"]["bytes"] == t["rx"]["bytes"] == total, f"bytes sent {t['tx']['bytes']}, received "
                                                         f"{t['rx']['bytes']}, expected {total}")
    by_name = {s["name"]: s for s in rep["streams"]}
    for name, _, count, size_bytes in streams:
        s = by_name[name]
        check(s["sent"] == s["received"] == count and s["lost"] == 0, f"{name}: {s}")
        check(s["sent_bytes"] == size_bytes, f"{name}: {s['sent_bytes']} bytes sent, expected {size_bytes}")
    check(rep["verdict"]["result"] == "pass", f"verdict {rep['verdict']}")


def test_ring_vdev_loopback():
    _, _, _, rep = run(["--tx", "net_ring0,queues=2", "--rx", "net_ring0,queues=2", "--count", "300000"],
                       ["--vdev=net_ring0", "--no-pci"])
    for a, b in zip(queues(rep, "tx"), queues(rep, "rx")):
        check(a["packets"] == b["packets"] == 150000, f"queue {a['queue']}: tx {a['packets']} rx {b['packets']}")
    check(rep["totals"]["lost"] == 0 and rep["verdict"]["result"] == "pass", f"{rep['totals']} {rep['verdict']}")


def test_null_tx_count():
    _, out, _, rep = run(["--tx", "net_null0", "--count", "2500001"], ["--vdev=net_null0", "--no-pci"])
    check(rep["totals"]["tx"]["packets"] == 2500001, f"sent {rep['totals']['tx']['packets']}")
    check(rep["totals"]["lost"] is None, "no loss figure without an RX port")
    check("TX total: 2500001 packets" in out, "summary printed")


def null_tx_duration():
    """A 1.2 s run in 250 ms intervals: the intervals and their sums (asserted); returns the
    report (test_timing.py bounds its length)."""
    _, _, _, rep = run(["--tx", "net_null0", "--duration", "1200ms", "--interval", "250ms"],
                       ["--vdev=net_null0", "--no-pci"])
    iv = rep["intervals"]
    check(len(iv) >= 4, f"expected >= 4 intervals, got {len(iv)}")
    check(all(i["tx"]["packets"] > 0 for i in iv[:-1]), "every full interval sent packets")
    check(sum(i["tx"]["packets"] for i in iv) == rep["totals"]["tx"]["packets"], "intervals sum to the total")
    for i in iv:
        if i["tx"]["packets"]:
            check(abs(i["tx"]["l1_bps"] - i["tx"]["l2_bps"] - i["tx"]["pps"] * 160) < 1e-3 * i["tx"]["l1_bps"],
                  "L1 = L2 + 20 bytes per frame")
    # Never shorter than asked; how much longer a loaded host makes it is test_timing.py's.
    check(1.1 < rep["totals"]["tx_seconds"], f"tx_seconds {rep['totals']['tx_seconds']}")
    return rep


def test_null_tx_duration():
    null_tx_duration()


def null_tx_paced():
    """2 Mpps over two queues for 1 s: the request is reported as asked (asserted); returns the
    totals (test_timing.py checks the achieved and offered rates against it)."""
    _, _, _, rep = run(["--tx", "net_null0,queues=2", "--rate", "2M", "--duration", "1s"], ["--vdev=net_null0", "--no-pci"])
    t = rep["totals"]
    check(t["requested_pps"] == 2e6, f"{t}")
    return t


def test_null_tx_rate():
    null_tx_paced()
    # An impossible rate is reported as generator-limited, not hidden.
    _, _, _, rep = run(["--tx", "net_null0", "--rate", "1G", "--duration", "300ms"], ["--vdev=net_null0", "--no-pci"])
    check(rep["totals"]["generator_limited"] is True, "1 Gpps must be flagged generator-limited")
    check(any("generator-limited" in n for n in rep["notes"]), f"notes {rep['notes']}")


def test_stuck_device_is_invalid():
    # Nobody drains ring1: ring0's TX ring fills (1023 frames) and then accepts nothing.
    _, _, _, rep = run(RING_PAIR_ARGS + ["--tx", "ring0", "--count", "1M", "--stall-timeout", "1s"], NO_PCI,
                       expect_rc=4)
    check(rep["verdict"]["result"] == "invalid" and "accepted no packet" in rep["verdict"]["reason"],
          f"verdict {rep['verdict']}")
    q = rep["queues"][0]
    check(q["packets"] == 1023, f"counted {q['packets']} sent: only what the device accepted (ring of 1024)")
    # The last burst built was never accepted: one burst of frames is reported unsent.
    check(q["unsent"] == rep["spec"]["burst"] == 64 and q["backpressure"] > 0, f"queue {q}")


def test_live_latency_per_interval():
    # Two RX queues hand their latency histograms to the control thread every interval: each
    # full interval carries latency, and the intervals add up to the final count exactly.
    _, out, _, rep = run(RING_PAIR_ARGS + ["--tx", "ring0,queues=2", "--rx", "ring1,queues=2", "--duration", "2s",
                                           "--interval", "250ms", "--rate", "400k"], NO_PCI, quiet=False)
    iv = rep["intervals"]
    check(len(iv) >= 8, f"{len(iv)} intervals")
    lat = [i["latency"] for i in iv]
    check(all(x is not None for x in lat), f"intervals without latency: {lat}")
    full = [x for i, x in zip(iv, lat) if i["t1"] - i["t0"] > 0.2 and i["t1"] < 2.0]
    check(all(x["count"] > 0 and 0 < x["min_ns"] <= x["p50_ns"] <= x["p99_ns"] <= x["max_ns"] for x in full),
          f"interval latency: {full}")
    total = rep["latency"]["count"]
    check(sum(x["count"] for x in lat) == total == rep["totals"]["rx_classes"]["distinct"],
          f"intervals {sum(x['count'] for x in lat)}, total {total}, received {rep['totals']['rx_classes']}")
    check("p50 us" in out and "p99 us" in out, "live lines show latency columns")


def test_ring_jumbo():
    _, _, _, rep = run(RING_PAIR_ARGS + ["--tx", "ring0", "--rx", "ring1", "--count", "20000", "--size", "9000"],
                       NO_PCI)
    check(rep["totals"]["rx"]["packets"] == 20000 and rep["totals"]["rx"]["bytes"] == 20000 * 9000,
          f"jumbo totals {rep['totals']}")
