"""Independent decode: frames linerate sends through DPDK's net_pcap PMD decode in tshark as
valid Ethernet/IP/UDP or TCP with checksum validation on, with the configured flows."""
import os
import subprocess
import tempfile

import pytest

from lrtest import check, run

pytestmark = pytest.mark.usefixtures("hugepages", "tshark")

COUNT = 200
PI_WARN = 0x00600000  # epan/proto.h: PI_NOTE 0x00400000 < PI_WARN < PI_ERROR
FIELDS = ["frame.len", "vlan.id", "ip.checksum.status", "udp.checksum.status", "tcp.checksum.status",
          "udp.srcport", "tcp.srcport", "ip.src", "ipv6.src", "ip.ttl", "ipv6.hlim", "tcp.flags.syn",
          "_ws.expert.severity"]


# case -> (options, frame size, flows, the L4 protocol tshark must find, IPv6, VLAN id)
CASES = {
    "udp_ipv4_64": ([], 64, 4, "udp", False, None),
    "tcp_ipv4_64": (["--proto", "tcp"], 64, 4, "tcp", False, None),
    "udp_ipv6_66": (["--ipv6"], 66, 4, "udp", True, None),
    "tcp_ipv6_78": (["--ipv6", "--proto", "tcp"], 78, 4, "tcp", True, None),
    "udp_ipv4_vlan100_64": (["--vlan", "100"], 64, 8, "udp", False, 100),
    "udp_ipv4_1518": ([], 1518, 3, "udp", False, None),
}


@pytest.mark.parametrize("case", CASES)  # one case per key
def test_decode(case):
    decode(*CASES[case])


def decode(extra, size, flows, expect_l4, ipv6=False, vlan=None):
    with tempfile.TemporaryDirectory() as d:
        pcap = os.path.join(d, "tx.pcap")
        args = ["--tx", "net_pcap0", "--count", str(COUNT), "--size", str(size), "--flows", str(flows),
                "--vary", "src-ip,src-port", "--nonce", "4660"] + extra
        run(args, [f"--vdev=net_pcap0,tx_pcap={pcap}", "--no-pci"])
        # The signature payload is data: keep tshark's heuristics from calling it (broken) DNS.
        cmd = ["tshark", "-n", "-r", pcap, "-d", "udp.port==1024,data", "-d", "tcp.port==1024,data",
               "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
               "-o", "tcp.check_checksum:TRUE", "-T", "fields", "-E", "separator=|", "-E", "occurrence=f"]
        for f in FIELDS:
            cmd += ["-e", f]
        out = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=120).stdout
        # Any frame with a warning or error (of any field, not only the first) or malformed.
        bad = subprocess.run(cmd[:14] + ["-Y", f"_ws.expert.severity >= {PI_WARN} || _ws.malformed"],
                             capture_output=True, text=True, check=True, timeout=120).stdout
        check(bad.strip() == "", f"tshark flags frames:\n{bad[:500]}")
    rows = [dict(zip(FIELDS, line.split("|"))) for line in out.splitlines()]
    check(len(rows) == COUNT, f"decoded {len(rows)} frames, expected {COUNT}")
    good = "1"  # tshark checksum status: 0 bad, 1 good, 2 unverified
    for r in rows:
        check(r["frame.len"] == str(size - 4), f"frame length {r['frame.len']} != {size - 4} (no FCS in pcap)")
        # Notes are fine (tshark notes "TTL only 1", and a SYN); warnings and errors are not.
        sev = int(r["_ws.expert.severity"] or 0)
        check(sev < PI_WARN, f"tshark expert warning/error on a frame: severity {sev:#x}")
        if not ipv6:
            check(r["ip.checksum.status"] == good, f"IPv4 checksum status {r['ip.checksum.status']}")
            check(r["ip.ttl"] == "1", "TTL 1")
        else:
            check(r["ipv6.hlim"] == "1", "hop limit 1")
        check(r[f"{expect_l4}.checksum.status"] == good, f"{expect_l4} checksum status {r[f'{expect_l4}.checksum.status']}")
        if expect_l4 == "tcp":
            check(r["tcp.flags.syn"] in ("1", "True"), "TCP SYN flag set")
        if vlan is not None:
            check(r["vlan.id"] == str(vlan), f"VLAN id {r['vlan.id']}")
    ports = {r[f"{expect_l4}.srcport"] for r in rows}
    srcs = {r["ipv6.src" if ipv6 else "ip.src"] for r in rows}
    check(len(ports) == flows and len(srcs) == flows, f"{len(ports)} ports / {len(srcs)} sources, expected {flows}")
