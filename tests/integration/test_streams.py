"""Streams on the veth bed, checked by counters that are not linerate's: an XDP program on the
receiving interface (tests/bpf/xdp_counter.bpf.c) counts every frame by VLAN and by length,
so each stream (one VLAN each) is counted, sized and timed on the wire; pcap replay is
compared byte for byte with the file by tshark, and signed replays get checksums tshark
accepts. Counts are exact at any load; the rates each stream kept are timing (retried)."""
import json
import os
import signal
import subprocess
import tempfile
import time

import pytest

from lrtest import LINERATE, BedLoss, bed_dropped, check, paced_load, read_json, timing_check, with_bed_attempts
from testbed import VethBed, sh, unique, wait_until

pytestmark = pytest.mark.usefixtures("hugepages")

BPF_DIR = os.path.join(os.path.dirname(LINERATE), "..", "tests", "bpf")
COUNTER = os.path.abspath(os.path.join(BPF_DIR, "xdp_counter.bpf.o"))
SRC_MAC = "02:00:00:00:00:01"
DST_MAC = "02:00:00:00:00:02"


class XdpCounter:
    """tests/bpf/xdp_counter.bpf.o attached to `ifc` in `ns`; reads its maps with bpftool."""

    def __init__(self, bed, ns, ifc):
        self.bed, self.ns, self.ifc = bed, ns, ifc
        r = bed.run(ns, ["ip", "link", "set", "dev", ifc, "xdp", "obj", COUNTER, "sec", "xdp"])
        check(r.returncode == 0, f"attaching the XDP counter to {ifc}: {r.stderr}")
        link = json.loads(sh("ip", "-n", ns, "-j", "-d", "link", "show", ifc).stdout)[0]
        prog = link["xdp"]["prog"]["id"]
        maps = json.loads(sh("bpftool", "-j", "prog", "show", "id", str(prog)).stdout)["map_ids"]
        self.maps = {}
        for m in maps:
            info = json.loads(sh("bpftool", "-j", "map", "show", "id", str(m)).stdout)
            self.maps[info["name"]] = m

    def _lookup(self, name, key):
        out = sh("bpftool", "-j", "map", "lookup", "id", str(self.maps[name]), "key",
                 *[str(b) for b in key.to_bytes(4, "little")]).stdout
        return json.loads(out)["formatted"]["value"]

    def vlan(self, vid):
        return self._lookup("by_vlan", vid)

    def length(self, n):
        return self._lookup("by_len", n)


def stream(rep, name):
    for s in rep["streams"]:
        if s["name"] == name:
            return s
    raise AssertionError(f"no stream {name} in {[s['name'] for s in rep['streams']]}")


# name, VLAN, what linerate is told, frames, bytes per period (without FCS), frames per period
IMIX_PERIOD = 7 * 60 + 4 * 566 + 1514
STREAMS = [
    ("voice", 10, "size=128,rate={voice},count=4000", 4000, 124, 1),
    ("bulk", 20, "size=imix,rate={bulk},count=39996", 39996, IMIX_PERIOD, 12),
    ("burst", 30, "size=256,rate={burst},bursts=5,burst-frames=200,burst-gap=50ms", 1000, 252, 1),
    ("tail", 40, "size=64,rate={tail},after=burst,count=1000", 1000, 60, 1),
]


def mixed_streams_once(d):
    # Paced loads the shared bed holds beside the XDP program: the bulk stream takes a tenth
    # of what the bed carries (at most 20 kpps), the others a fraction of that.
    bulk = paced_load(20_000, share=10)
    rates = {"voice": bulk / 10, "bulk": bulk, "burst": bulk / 2, "tail": bulk / 4}
    with VethBed(unique("lst")) as bed:
        counter = XdpCounter(bed, bed.nsb, bed.ifb)
        before = bed_dropped(bed)
        args = [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--src-mac", SRC_MAC,
                "--dst-mac", DST_MAC, "--json", f"{d}/r.json"]
        for name, vid, text, *_ in STREAMS:
            args += ["--stream", f"name={name},vlan={vid}," + text.format(**{k: int(v) for k, v in rates.items()})]
        r = bed.run(bed.nsa, args, timeout=180)
        check(r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        rep = read_json(f"{d}/r.json")
        # A TX-only run ends once its frames are handed over: the last may still be on their
        # way through the peer's XDP program. Until they are all counted, or the bed says it
        # dropped some.
        total = sum(frames for _, _, _, frames, *_ in STREAMS)
        wait_until(lambda: sum(counter.vlan(vid)["packets"] for _, vid, *_ in STREAMS) >= total or any(bed_dropped(bed, before)),
                   30, "the XDP counter to count every frame sent")
        seen = {vid: counter.vlan(vid) for _, vid, *_ in STREAMS}
        lengths = {n: counter.length(n) for n in (60, 124, 252, 566, 1514)}
        dropped = bed_dropped(bed, before)
    if any(dropped):
        raise BedLoss(f"the bed dropped {dropped[0]} frames on {bed.ifa}'s egress and {dropped[1]} on "
                      f"{bed.ifb}'s ingress")
    # Every stream's frames and bytes: exact, by linerate and by the XDP counter alike.
    for name, vid, _, frames, period_bytes, period in STREAMS:
        s, x = stream(rep, name), seen[vid]
        check(s["sent"] == frames, f"{name}: linerate sent {s['sent']}, asked {frames}")
        check(x["packets"] == frames, f"{name} (VLAN {vid}): the XDP counter saw {x['packets']} of {frames}")
        expect_bytes = frames // period * period_bytes
        check(x["bytes"] == expect_bytes, f"{name}: {x['bytes']} bytes on the wire, expected {expect_bytes}")
        check(s["sent_bytes"] == expect_bytes + 4 * frames,
              f"{name}: linerate counted {s['sent_bytes']} bytes, the wire {expect_bytes} (+ FCS)")
    # IMIX exact over every period: 7, 4 and 1 frames of every 12.
    periods = 39996 // 12
    check(lengths[566] == 4 * periods and lengths[1514] == periods,
          f"IMIX sizes on the wire: {lengths}, expected {4 * periods} x 566 B and {periods} x 1514 B")
    check(lengths[60] == 7 * periods + 1000 and lengths[124] == 4000 and lengths[252] == 1000,
          f"sizes on the wire: {lengths}")
    # The chained stream started only once the bursts were done.
    check(seen[40]["first_ns"] >= seen[30]["last_ns"],
          f"tail started {seen[30]['last_ns'] - seen[40]['first_ns']} ns before burst ended")
    return rates, seen


def test_each_stream_counted_sized_and_ordered_by_an_xdp_counter():
    with tempfile.TemporaryDirectory() as d:
        with_bed_attempts(mixed_streams_once, d)


def rates_kept_once():
    with tempfile.TemporaryDirectory() as d:
        rates, seen = with_bed_attempts(mixed_streams_once, d)
    for name, vid in (("voice", 10), ("bulk", 20)):
        x = seen[vid]
        span = (x["last_ns"] - x["first_ns"]) / 1e9
        got = (x["packets"] - 1) / span if span > 0 else 0
        err = abs(got / rates[name] - 1)
        timing_check(err < 0.02, f"{name}: {got:.0f} pps on the wire, asked {rates[name]:.0f} ({100 * err:.2f} % off)")
    # Five bursts of 200 at the burst stream's rate, 50 ms apart: the span on the wire.
    x = seen[30]
    span = (x["last_ns"] - x["first_ns"]) / 1e9
    expect = 5 * 199 / rates["burst"] + 4 * (0.05 + 1 / rates["burst"])
    timing_check(abs(span / expect - 1) < 0.1, f"burst: the five bursts took {span * 1e3:.1f} ms, "
                                               f"expected {expect * 1e3:.1f} ms")


# --- pcap replay -------------------------------------------------------------------------------


def write_capture(path):
    """A capture of varied frames, 1 ms apart: IPv4 UDP of several sizes, VLAN-tagged, IPv6,
    TCP, a non-IP ethertype, and a 42-byte frame (captured before the NIC padded it)."""
    from scapy.all import IP, TCP, UDP, Dot1Q, Ether, IPv6, Raw, wrpcap
    e = Ether(src=SRC_MAC, dst=DST_MAC)
    v4 = IP(src="198.18.0.1", dst="198.18.0.2")
    frames = [
        e / v4 / UDP(sport=1000, dport=2000) / Raw(bytes(range(18))),
        e / v4 / UDP(sport=1001, dport=2000) / Raw(b"x" * 400),
        e / Dot1Q(vlan=7, prio=3) / v4 / UDP(sport=1002, dport=2000) / Raw(b"y" * 100),
        e / IPv6(src="2001:2::1", dst="2001:2::2") / UDP(sport=1003, dport=2000) / Raw(b"z" * 60),
        e / v4 / TCP(sport=1004, dport=80, flags="S") / Raw(b"t" * 30),
        Ether(src=SRC_MAC, dst=DST_MAC, type=0x88B5) / Raw(b"local experimental ethertype" + bytes(40)),
        e / v4 / UDP(sport=1005, dport=2000) / Raw(b"q" * 1400),
        e / v4 / UDP(sport=1006, dport=2000),  # 42 bytes
    ]
    for i, f in enumerate(frames):
        f.time = 1_700_000_000 + i * 0.001
    wrpcap(path, frames)
    return frames


def tshark_frames(path, *opts):
    """The frames of a pcap file as tshark reads them: their bytes in hex, in order."""
    out = subprocess.run(["tshark", "-r", path, "-T", "json", "-x", *opts], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    return [p["_source"]["layers"]["frame_raw"][0] for p in json.loads(out)]


def capture_on(bed, ns, ifc, path):
    """tshark capturing the replayed frames (by their source MAC) on `ifc`; returns the process
    once it is capturing."""
    p = bed.start(ns, ["tshark", "-i", ifc, "-w", path, "-f", f"ether src {SRC_MAC}", "-q"])
    wait_until(lambda: os.path.exists(path) and os.path.getsize(path) > 0, 30, f"tshark capturing on {ifc}", p)
    time.sleep(0.5)
    return p


def stop_capture(p):
    time.sleep(0.5)
    p.send_signal(signal.SIGINT)
    p.wait(timeout=30)


def replay_once(d, signed):
    cap, got = f"{d}/in.pcap", f"{d}/out-{int(signed)}.pcap"
    frames = write_capture(cap)
    loops = 3
    with VethBed(unique("lrp")) as bed:
        before = bed_dropped(bed)
        tsh = capture_on(bed, bed.nsb, bed.ifb, got)
        args = [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--json", f"{d}/r.json",
                "--stream", f"pcap={cap},rate=2k,loops={loops}"]
        r = bed.run(bed.nsa, args + ([] if signed else ["--no-signature"]), timeout=120)
        stop_capture(tsh)
        check(r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        dropped = bed_dropped(bed, before)
    if any(dropped):
        raise BedLoss(f"the bed dropped {dropped} frames")
    rep = read_json(f"{d}/r.json")
    check(rep["streams"][0]["sent"] == loops * len(frames), f"sent {rep['streams'][0]}")
    sent = tshark_frames(got, "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
                         "-o", "tcp.check_checksum:TRUE")
    recorded = tshark_frames(cap)
    # The short record leaves padded with zeros to 60 bytes, as a NIC pads it.
    recorded = [h + "00" * max(0, 60 - len(h) // 2) for h in recorded]
    check(len(sent) == loops * len(recorded), f"tshark saw {len(sent)} frames, expected {loops * len(recorded)}")
    return sent, recorded, got


def test_pcap_replay_is_byte_exact():
    """--no-signature: every frame on the wire equals its record, in order, loop after loop."""
    with tempfile.TemporaryDirectory() as d:
        sent, recorded, _ = with_bed_attempts(replay_once, d, False)
    for i, h in enumerate(sent):
        check(h == recorded[i % len(recorded)],
              f"frame {i + 1} differs from record {i % len(recorded) + 1}:\n{h}\n{recorded[i % len(recorded)]}")


def test_signed_replay_has_good_checksums():
    """Signed: the frames linerate can sign (UDP over IPv4 or IPv6 with 12 payload bytes or more)
    carry a signature and checksums tshark validates; the others are sent as recorded."""
    with tempfile.TemporaryDirectory() as d:
        sent, recorded, got = with_bed_attempts(replay_once, d, True)
        out = subprocess.run(["tshark", "-r", got, "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
                              "-o", "tcp.check_checksum:TRUE", "-T", "fields", "-e", "frame.number", "-e",
                              "ip.checksum.status", "-e", "udp.checksum.status", "-e", "tcp.checksum.status"],
                             capture_output=True, text=True, timeout=120, check=True).stdout
    changed = sum(1 for i, h in enumerate(sent) if h != recorded[i % len(recorded)])
    check(changed > 0, "no frame was signed")
    for line in out.splitlines():
        num, *status = line.split("\t")
        for s in status:
            # Wireshark's checksum status: 0 bad, 1 good, 2 unverified; empty: no such header
            check(s in ("", "1"), f"frame {num}: checksum status {status} (ip, udp, tcp; 1: good)")
        # Every IPv4 record's header checksum verified (records 4 and 6: IPv6, not IP).
        check(status[0] == "1" or (int(num) - 1) % len(recorded) in (3, 5),
              f"frame {num}: IPv4 checksum not verified: {status}")
    # The frames that cannot carry a signature leave as recorded: TCP, non-IP, the 42-byte one.
    for i, h in enumerate(sent):
        k = i % len(recorded)
        if k in (4, 5, 7):
            check(h == recorded[k], f"frame {i + 1} (record {k + 1}) should leave as recorded")


def test_signed_replay_is_measured():
    """Received by linerate itself: the signed records arrive, each counted once, none lost,
    every one timed; the records with no room are sent and counted as unsigned, never as lost."""
    loops = 5
    with tempfile.TemporaryDirectory() as d, VethBed(unique("lrm"), same_ns=True) as bed:
        frames = write_capture(f"{d}/in.pcap")
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--rx", bed.ifb,
                              "--json", f"{d}/r.json", "--stream", f"name=trace,pcap={d}/in.pcap,rate=2k,loops={loops}"],
                    timeout=120)
        check(r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        rep = read_json(f"{d}/r.json")
    s = rep["streams"][0]
    unsigned = 3 * loops  # the TCP record (its header fields are the conversation's), the non-IP one, 42-byte UDP
    check(s["sent"] == loops * len(frames) and s["unsigned_sent"] == unsigned, f"stream {s}")
    check(s["measured"] and s["received"] == s["sent"] - unsigned and s["lost"] == 0 and s["duplicates"] == 0,
          f"stream {s}")
    check(s["latency"]["count"] == s["received"], f"every signed frame timed: {s['latency']}")
    check(any("cannot carry a signature" in n for n in rep["notes"]), f"notes {rep['notes']}")


def test_json_profile_streams_exact():
    """A JSON profile's "stream" list runs as [[stream]] tables do: each stream sends its count,
    every frame arrives in order and is timed in its stream's latency, and the report names the
    streams as the profile does."""
    with tempfile.TemporaryDirectory() as d, VethBed(unique("lrj"), same_ns=True) as bed:
        profile = f"{d}/mix.json"
        with open(profile, "w") as f:
            json.dump({"name": "json mix", "procedure": "run",
                       "ports": {"backend": "afxdp"},
                       "stream": [{"name": "bulk", "size": "imix", "rate": "2kpps", "count": 1200},
                                  {"name": "voice", "size": 128, "vlan": 10, "rate": "1kpps", "count": 500}],
                       "thresholds": {"max-loss": 0}}, f)
        r = bed.run(bed.nsa, [LINERATE, "check", profile, "-q", "--tx", bed.ifa, "--rx", bed.ifb,
                              "--json", f"{d}/r.json"], timeout=120)
        check(r.returncode == 0, f"exit {r.returncode}\n{r.stdout}\n{r.stderr}")
        rep = read_json(f"{d}/r.json")
    by_name = {s["name"]: s for s in rep["streams"]}
    check(set(by_name) == {"bulk", "voice"}, f"streams {list(by_name)}")
    for name, count in (("bulk", 1200), ("voice", 500)):
        s = by_name[name]
        check(s["sent"] == count and s["received"] == count and s["lost"] == 0 and s["reordered"] == 0,
              f"{name}: {s}")
        # Each stream's own latency: every frame timed, its extremes and mean in order.
        lat = s["latency"]
        check(lat["count"] == count and 0 < lat["min_ns"] <= lat["mean_ns"] <= lat["max_ns"], f"{name}: latency {lat}")
