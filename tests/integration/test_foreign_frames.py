"""Frames that must never count as ours: a replay of an earlier run (another nonce), and
hostile frames that carry the magic (and even this run's nonce) but are otherwise wrong.
The receiver reads them from a pcap through DPDK's net_pcap PMD, so the input is exact."""
import os
import subprocess
import tempfile

import pytest

from lrtest import check, run

pytestmark = pytest.mark.usefixtures("hugepages", "scapy")

HOSTILE = r'''
import random, sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
random.seed(7)
nonce = int(sys.argv[2])
def base():
    return Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="198.18.0.1", dst="198.18.0.2", ttl=1, flags="DF", id=nonce >> 16) / UDP(sport=1024, dport=1024)
# The nonce's low half in the signature, its high half in the IPv4 identification.
sig = lambda n, stream=0, seq=1: b"LR" + seq.to_bytes(6, "big") + bytes(6) + (n & 0xffff).to_bytes(2, "big") + stream.to_bytes(2, "big")
frames = []
frames += [Ether(bytes(base() / Raw(sig(nonce, seq=i)))[:-2] + b"\xde\xad") for i in range(10)]       # bad checksum
bad = [base() / Raw(sig(nonce, seq=i)) for i in range(10)]
for f in bad: f[UDP].chksum = 0x1234                                                              # wrong checksum
frames += bad
frames += [base() / Raw(sig(nonce, stream=999, seq=i)) for i in range(10)]                          # unknown stream
frames += [base() / Raw(b"LR" + bytes(6) + (nonce & 0xffff).to_bytes(2, "big") + bytes(1)) for _ in range(10)]  # 11 bytes: no room
nochk = [base() / Raw(sig(nonce, seq=i)) for i in range(10)]
for f in nochk: f[UDP].chksum = 0                                                                  # no checksum
frames += nochk
frames += [base() / Raw(b"LR" + bytes(random.getrandbits(8) for _ in range(16))) for _ in range(50)]  # magic + junk
wrpcap(sys.argv[1], frames)
print(len(frames))
'''
MALFORMED = 40  # the frames above with room for a signature that carry this run's nonce
HOSTILE_TOTAL = 100


def test_replay_of_earlier_run():
    """An earlier run's frames are foreign, also when its nonce shares the 16 bits the signature
    carries (the other 16 are in the IP header)."""
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "earlier.pcap")
        run(["--tx", "net_pcap0", "--count", "1000", "--nonce", "100"],
            [f"--vdev=net_pcap0,tx_pcap={pcap}", "--no-pci"])
        _, _, _, rep = run(["--rx", "net_pcap0", "--nonce", "3000200", "--flows", "1", "--duration", "20s",
                            "--stop-when-idle", "--drain", "500ms"], [f"--vdev=net_pcap0,rx_pcap={pcap}", "--no-pci"])
        c = rep["totals"]["rx_classes"]
        check(rep["totals"]["rx"]["packets"] == 1000, f"read {rep['totals']['rx']['packets']} frames")
        check(c["ours"] == 0 and c["foreign_other_run"] == 1000 and c["foreign"] == 1000, f"classes {c}")
        # The same capture with the original run's nonce is ours: the test is not vacuous.
        _, _, _, rep = run(["--rx", "net_pcap0", "--nonce", "100", "--flows", "1", "--duration", "20s",
                            "--stop-when-idle", "--drain", "500ms"], [f"--vdev=net_pcap0,rx_pcap={pcap}", "--no-pci"])
        check(rep["totals"]["rx_classes"]["ours"] == 1000, f"own nonce: {rep['totals']['rx_classes']}")
        check(rep["flows"][0]["received"] == 1000 and rep["flows"][0]["lost"] == 0, f"{rep['flows']}")
        # A run whose nonce differs only in the IP header's half (100 + 7 x 65536).
        _, _, _, rep = run(["--rx", "net_pcap0", "--nonce", str(100 + 7 * 65536), "--flows", "1", "--duration", "20s",
                            "--stop-when-idle", "--drain", "500ms"], [f"--vdev=net_pcap0,rx_pcap={pcap}", "--no-pci"])
        c = rep["totals"]["rx_classes"]
        check(c["ours"] == 0 and c["foreign_other_run"] == 1000, f"same signature half, another run: {c}")


FAR_OFF = r'''
import sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
nonce = int(sys.argv[2])
def frame(seq):
    sig = b"LR" + seq.to_bytes(6, "big") + bytes(6) + (nonce & 0xffff).to_bytes(2, "big") + bytes(2)
    return Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="198.18.0.1", dst="198.18.0.2", ttl=1, id=nonce >> 16) / \
        UDP(sport=1024, dport=1024) / Raw(sig)
wrpcap(sys.argv[1], [frame(i) for i in range(1000)] + [frame(10**12)])
'''


def test_far_off_sequence_is_an_anomaly():
    """One valid frame with this run's nonce and a sequence 10^12 ahead must not add 10^12
    lost to a receive-only run: it is reported as an anomaly."""
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "faroff.pcap")
        r = subprocess.run(["/usr/bin/python3", "-c", FAR_OFF, pcap, "3000300"], capture_output=True, text=True)
        check(r.returncode == 0, f"scapy: {r.stderr}")
        _, _, _, rep = run(["--rx", "net_pcap0", "--nonce", "3000300", "--flows", "1", "--duration", "20s",
                            "--stop-when-idle", "--drain", "500ms"], [f"--vdev=net_pcap0,rx_pcap={pcap}", "--no-pci"])
        st = rep["flows"][0]
        check(st["received"] == 1001 and st["lost"] == 0 and st["implausible"], f"stream {st}")
        check(any("anomaly: stream 0" in n for n in rep["notes"]), f"notes {rep['notes']}")
        check(rep["verdict"]["result"] == "pass", f"{rep['verdict']}")


def test_hostile_frames():
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "hostile.pcap")
        r = subprocess.run(["/usr/bin/python3", "-c", HOSTILE, pcap, "3000200"], capture_output=True, text=True)
        check(r.returncode == 0 and int(r.stdout) == HOSTILE_TOTAL, f"scapy: {r.stdout}{r.stderr}")
        _, _, _, rep = run(["--rx", "net_pcap0", "--nonce", "3000200", "--flows", "1", "--duration", "20s",
                            "--stop-when-idle", "--drain", "500ms"], [f"--vdev=net_pcap0,rx_pcap={pcap}", "--no-pci"])
        c = rep["totals"]["rx_classes"]
        check(rep["totals"]["rx"]["packets"] == HOSTILE_TOTAL, f"read {rep['totals']['rx']['packets']}")
        check(c["ours"] == 0, f"hostile frames counted as ours: {c}")
        check(c["malformed"] == MALFORMED, f"malformed {c['malformed']}, expected {MALFORMED}: {c}")
        check(c["foreign"] == HOSTILE_TOTAL - MALFORMED, f"classes {c}")
        # The ones to look at, and only those, in a capture.
        cap = os.path.join(d, "malformed.pcap")
        run(["--rx", "net_pcap0", "--nonce", "3000200", "--flows", "1", "--duration", "20s", "--stop-when-idle",
             "--drain", "500ms", "--capture", cap, "--capture-filter", "malformed", "--capture-count", "1000"],
            [f"--vdev=net_pcap0,rx_pcap={pcap}", "--no-pci"])
        n = subprocess.run(["tshark", "-r", cap], capture_output=True, text=True).stdout.count("\n")
        check(n == MALFORMED, f"{n} frames captured, {MALFORMED} malformed")
