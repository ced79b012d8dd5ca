"""Bad input gets a precise message and exit code 2 before anything is sent; --help explains."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile

import pytest

from lrtest import check, LINERATE
from testbed import VethBed, unique


def lr(*args, expect_rc):
    p = subprocess.run([LINERATE, *args], capture_output=True, text=True, timeout=60)
    check(p.returncode == expect_rc, f"linerate {' '.join(args)}: exit {p.returncode}, expected {expect_rc}\n"
                                     f"{p.stdout}\n{p.stderr}")
    return p.stdout + p.stderr


def bad(args, needle):
    out = lr("run", *args, expect_rc=2)
    check(needle in out, f"expected {needle!r} in: {out}")


@pytest.mark.usefixtures("hugepages")
def test_unknown_port():
    out = lr("run", "--tx", "net_nope0", "--count", "10", "--", "--vdev=net_null0", "--no-pci", expect_rc=2)
    check('unknown port "net_nope0"' in out and "net_null0 (id 0)" in out, out)


@pytest.mark.usefixtures("hugepages")
def test_too_many_queues():
    out = lr("run", "--ring-pair", "a,b", "--tx", "a,queues=20", "--count", "100", "--", "--no-pci", expect_rc=2)
    check("supports at most" in out, out)


@pytest.mark.usefixtures("hugepages")
def test_cpus_not_available():
    out = lr("run", "--ring-pair", "a,b", "--tx", "a", "--cpus", "99", "--count", "10", "--", "--no-pci", expect_rc=2)
    check("--cpus: CPU 99 is not available to this process (allowed: " in out, out)


@pytest.mark.usefixtures("hugepages")
def test_metrics_port_in_use():
    """Refused before anything is sent (the server starts once the capabilities are dropped)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = lr("run", "-q", "--ring-pair", "a,b", "--tx", "a", "--count", "1000", "--metrics", f"127.0.0.1:{port}",
                 "--json", "/dev/null", "--", "--no-pci", expect_rc=3)
        check(f"couldn't serve metrics on 127.0.0.1:{port}" in out, out)
        check("TX total" not in out, "nothing may be sent")


@pytest.mark.usefixtures("hugepages")
def test_default_route_refused():
    with VethBed(unique("ldr"), same_ns=True) as bed:
        subprocess.run(["ip", "-n", bed.nsa, "route", "add", "default", "via", "198.18.0.2", "dev", bed.ifa],
                       check=True)
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--count", "1000"],
                    timeout=60)
        check(r.returncode == 2 and f"{bed.ifa} carries the default route" in r.stderr and "--force" in r.stderr,
              f"exit {r.returncode}: {r.stderr}")
        check(not bed.xdp_attached(bed.nsa, bed.ifa), "nothing attached")
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--count", "1000",
                              "--force"], timeout=60)
        check(r.returncode == 0, f"with --force: exit {r.returncode}: {r.stderr}")


def test_outputs_checked_before_sending():
    """Every output a command will write is checked before anything is sent (here: before the
    EAL even starts): exit 2 naming the option, the whole path and why; nothing is created."""
    with tempfile.TemporaryDirectory() as d:
        missing = f"{d}/missing/out"
        eal = ["--", "--vdev=net_null0", "--no-pci"]
        for opt in ("--json", "--junit", "--csv", "--json-stream"):
            out = lr("run", "-q", "--tx", "net_null0", "--count", "10", opt, missing, *eal, expect_rc=2)
            check(f'{opt} "{missing}": cannot write there: the directory "{d}/missing" does not exist' in out, out)
        out = lr("run", "-q", "--tx", "net_null0", "--rx", "net_null0", "--count", "10", "--capture", d, *eal,
                 expect_rc=2)
        check(f'--capture "{d}": cannot write there: it is a directory' in out, out)
        with open(f"{d}/file", "w") as f:
            f.write("{}")
        out = lr("sweep", "-q", "--tx", "net_null0", "--count", "10", "--csv", f"{d}/file/s.csv", *eal, expect_rc=2)
        check(f'--csv "{d}/file/s.csv": cannot write there: "{d}/file" is not a directory' in out, out)
        out = lr("run", "-q", "--tx", "net_null0", "--count", "10", "--json", f"{d}/r.json", "--junit",
                 f"{d}/./r.json", *eal, expect_rc=2)
        check("are the same file" in out, out)
        out = lr("report", f"{d}/file", "-o", missing, expect_rc=2)
        check(f'--output "{missing}": cannot write there' in out, out)
        out = lr("reflect", "--port", "lo", "--json", missing, expect_rc=2)
        check(f'--json "{missing}": cannot write there' in out, out)
        out = lr("probe", "lo", "--json", missing, expect_rc=2)
        check(f'--json "{missing}": cannot write there' in out, out)
        check(sorted(os.listdir(d)) == ["file"], f"created: {os.listdir(d)}")


@pytest.mark.usefixtures("root")
def test_read_only_output_refused():
    """An output on a read-only file system (a tmpfs mounted ro in a mount namespace of its own)."""
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            f'mount -t tmpfs -o ro none {d} && exec "$@"', "sh", LINERATE, "run", "-q", "--tx",
                            "net_null0", "--count", "10", "--json", f"{d}/r.json", "--", "--vdev=net_null0",
                            "--no-pci"], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and f'--json "{d}/r.json": cannot write there: cannot create files in the directory '
              f'"{d}": Read-only file system' in p.stderr, f"exit {p.returncode}: {p.stderr}")


def test_help():
    out = lr("run", "--help", expect_rc=0)
    for word in ("--tx", "--rx", "queues=N", "--count", "--duration", "Exit codes", "--vdev"):
        check(word in out, f"--help lacks {word}")


# Refused before anything is sent: case -> (the options after `run`, what the message must say).
BAD_VALUES = {
    "size_below_64": (["--tx", "p", "--size", "63"], 'invalid --size "63": must be between 64 and 9000'),
    "size_over_9000": (["--tx", "p", "--size", "9001"], "must be between 64 and 9000"),
    "zero_queues": (["--tx", "p,queues=0"], "must be between 1 and 128"),
    "bad_address": (["--tx", "p", "--dst-ip", "198.18.0.256"], "--dst-ip"),
    "non_benchmark_address": (["--tx", "p", "--dst-ip", "192.0.2.1"], "outside the benchmarking ranges"),
    "no_port": (["--count", "5"], "no port given"),
    "unknown_option": (["--tx", "p", "--frobnicate"], "frobnicate"),
    "ipv6_tcp_too_small": (["--tx", "p", "--ipv6", "--proto", "tcp", "--size", "64"], "minimum is 78"),
    "bad_ring_pair": (["--ring-pair", "a", "--tx", "a"], 'invalid --ring-pair "a"'),
    "flows_walking_out_of_the_ranges": (["--tx", "p", "--flows", "200000", "--vary", "dst-ip", "--dst-ip",
                                         "198.19.255.0", "--no-signature"],
                                        "walk from 198.19.255.0 to 198.23.12.63, outside the benchmarking ranges"),
    "max_loss_over_100": (["--tx", "p", "--rx", "q", "--max-loss", "150"],
                          'invalid --max-loss "150": expected a percentage between 0 and 100'),
    "sizes_in_a_run": (["--tx", "p", "--sizes", "64,128"], "sizes"),
    "bad_rate_unit": (["--tx", "p", "--rate", "10 furlongs"], 'invalid --rate "10 furlongs"'),
    "rate_above_any_port": (["--tx", "p", "--rate", "1e30"],
                            "--rate 1e30 asks 1e+30 pps of 64-byte frames: 8.4e+22 % of 800 Gbit/s, the most a port "
                            "can carry"),
    "rate_above_line_rate": (["--tx", "p", "--line-rate", "10G", "--rate", "20Gbps"],
                             "--rate 20Gbps asks 29.762 Mpps of 64-byte frames: 200 % of the 10 Gbit/s line rate "
                             "given with --line-rate"),
    "part_of_a_value_quoted_whole": (["--tx", "p", "--rate", "1M", "--pattern", "burst:0"],
                                     'invalid --pattern "burst:0": the burst length "0": must be between 1 and'),
    # Streams: the --stream text quoted, then what is wrong with it.
    "stream_unknown_key": (["--tx", "p", "--stream", "size=imix,colour=red"],
                           '--stream size=imix,colour=red: unknown key "colour" (stream keys: count,'),
    "stream_size_out_of_range": (["--tx", "p", "--stream", "size=9001"],
                                 '--stream size=9001: invalid --size "9001": must be between 64 and 9000'),
    "stream_weight_zero": (["--tx", "p", "--stream", "size=64:0/1518:1"], "--stream size=64:0/1518:1: "),
    "stream_rate_above_line_rate": (["--tx", "p", "--line-rate", "10G", "--stream", "name=a,rate=20Gbps"],
                                    "--stream name=a,rate=20Gbps: rate 20Gbps asks"),
    "stream_rates_add_up_above_line_rate": (["--tx", "p", "--line-rate", "10G", "--stream", "rate=60%",
                                             "--stream", "size=imix,rate=50%"],
                                            "the streams' rates add up to 11 Gbit/s at L1, more than the 10 Gbit/s "
                                            "line rate given with --line-rate"),
    "stream_after_nobody": (["--tx", "p", "--stream", "name=a", "--stream", "name=b,after=zz"],
                            "--stream name=b,after=zz: after=zz: no stream has that name"),
}


@pytest.mark.parametrize("case", BAD_VALUES)  # one case per key
def test_bad_value(case):
    bad(*BAD_VALUES[case])


def test_stream_in_a_procedure_refused():
    out = lr("throughput", "--tx", "p", "--rx", "q", "--stream", "count=10", expect_rc=2)
    check("throughput runs each trial at a load it chooses and for as long as it says; count= has no place in it"
          in out, out)


def test_stream_profile_errors_say_where():
    """A [[stream]] table's bad key or value is named by the profile's file:line:col."""
    with tempfile.TemporaryDirectory() as d:
        path = f"{d}/p.toml"
        with open(path, "w") as f:
            f.write('procedure = "run"\ntx = ["p"]\nline-rate = "1G"\n[[stream]]\nsize = "imix"\n'
                    '[[stream]]\nsize = 128\nrate = "2Gbps"\n')
        out = lr("check", path, expect_rc=2)
        check(f"{path}:6:1 [[stream]]: rate 2Gbps asks" in out and "200 % of the 1 Gbit/s line rate" in out, out)
        with open(path, "w") as f:
            f.write('procedure = "run"\ntx = ["p"]\n[[stream]]\nsize = "imix"\nvlan = 5000\n')
        out = lr("check", path, expect_rc=2)
        check(f"{path}:5:8: " in out and "vlan" in out, out)


@pytest.mark.usefixtures("root")
def test_stream_larger_than_the_port_refused():
    """A stream's frame beyond the interface's MTU: refused naming the stream, nothing attached."""
    with VethBed(unique("lsm"), same_ns=True) as bed:
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--count", "100",
                              "--stream", "size=imix", "--stream", "name=big,size=2000"], timeout=60)
        check(r.returncode == 2 and "--stream name=big,size=2000: frame size 2000 needs MTU 1982 but "
              f"{bed.ifa} has MTU 1500" in r.stderr, f"exit {r.returncode}: {r.stderr}")
        check(bed.stat(bed.nsa, bed.ifa, "tx_packets") == 0, "nothing may be sent")
        check(not bed.xdp_attached(bed.nsa, bed.ifa), "nothing attached")
        # A VLAN-tagged 1518-byte frame carries 1500 bytes of IP: it fits.
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--count", "100",
                              "--stream", "size=1518,vlan=5"], timeout=60)
        check(r.returncode == 0, f"exit {r.returncode}: {r.stderr}")

def test_procedure_without_rx():
    check("throughput measures what comes back" in lr("throughput", "--tx", "p", expect_rc=2), "throughput needs --rx")


def test_percent_without_line_rate():
    check("line rate" in lr("run", "--tx", "net_null0", "--rate", "50%", "--count", "10", "--", "--vdev=net_null0",
                            "--no-pci", expect_rc=2), "% needs a line rate")


def test_range_step_quoted_whole():
    check('invalid --sizes "64:128:+0": the step "0"' in lr("sweep", "--tx", "p", "--sizes", "64:128:+0", expect_rc=2),
          "--sizes quoted whole")


@pytest.mark.usefixtures("root")
def test_testbed_without_sysctl_refuses_and_leaves_nothing():
    """Without `sysctl` (Debian's procps) the bed cannot turn IPv6 off its links: `testbed.sh up`
    says so in one line, exits 3 and leaves no namespace (it used to come up with IPv6 on, whose
    frames then met the test's)."""
    prefix = unique("ts")
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "testbed.sh")
    path = f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"  # ip, python3; not /usr/sbin's sysctl
    if shutil.which("sysctl", path=path) or not shutil.which("ip", path=path):
        pytest.skip(f"this host's PATH {path} has sysctl or lacks ip")
    p = subprocess.run(["bash", script, "up", prefix], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "LINERATE_HUGEPAGES": "0", "PATH": path})
    check(p.returncode == 3, f"exit {p.returncode}, expected 3\n{p.stdout}\n{p.stderr}")
    err = p.stderr.strip()
    check(len(err.splitlines()) == 1 and "sysctl is missing" in err and "procps" in err, err)
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    check(f"{prefix}-a" not in left and f"{prefix}-b" not in left, f"namespaces left behind: {left}")


@pytest.mark.usefixtures("root")
def test_testbed_dut_failures_exit_as_the_bed_does():
    """`testbed.sh dut up` ends as `up` does: a failed step (here: no `sysctl`) in one line with
    exit 3 and nothing left behind; a bad value in one line with exit 2, before anything is
    made (both used to exit 1)."""
    prefix = unique("td")
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "testbed.sh")
    path = f"{os.path.dirname(sys.executable)}:/usr/bin:/bin"  # ip, python3; not /usr/sbin's sysctl
    if shutil.which("sysctl", path=path) or not shutil.which("ip", path=path):
        pytest.skip(f"this host's PATH {path} has sysctl or lacks ip")
    p = subprocess.run(["bash", script, "dut", "up", prefix], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "PATH": path})
    check(p.returncode == 3, f"exit {p.returncode}, expected 3\n{p.stdout}\n{p.stderr}")
    err = p.stderr.strip()
    check(len(err.splitlines()) == 1 and err.startswith("testbed: the kernel DUT did not come up: sysctl is missing"),
          err)
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    check(not [n for n in left if n.startswith(prefix + "-")], f"namespaces left behind: {left}")
    for bad in (["--size", "63"], ["--pps", "fast"], ["--queue"]):
        p = subprocess.run(["bash", script, "dut", "up", prefix, *bad], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2, f"{bad}: exit {p.returncode}, expected 2\n{p.stdout}\n{p.stderr}")
        check(len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith("testbed: "), f"{bad}: {p.stderr}")
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
    check(not [n for n in left if n.startswith(prefix + "-")], f"namespaces left behind: {left}")


@pytest.mark.usefixtures("root")
def test_testbed_setup_failure_is_one_line_and_leaves_nothing():
    """A step of `testbed.sh up` that fails (here: half of the bed already made by someone else,
    the peer missing) ends in one line naming the command and what it said, exit 3, and no
    namespace left behind."""
    prefix = unique("tf")
    nsa, nsb = f"{prefix}-a", f"{prefix}-b"
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "testbed.sh")
    subprocess.run(["ip", "netns", "add", nsa], check=True)
    try:
        subprocess.run(["ip", "-n", nsa, "link", "add", f"{prefix}0", "type", "veth", "peer", "name", f"{prefix}x"],
                       check=True)
        p = subprocess.run(["bash", script, "up", prefix], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "LINERATE_HUGEPAGES": "0"})
        check(p.returncode == 3, f"exit {p.returncode}, expected 3\n{p.stdout}\n{p.stderr}")
        err = p.stderr.strip()
        check("Traceback" not in err and len(err.splitlines()) == 1, f"not one line:\n{err}")
        check(err.startswith("testbed: the veth pair did not come up: `ip -n " + nsb) and f'"{prefix}1"' in err, err)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
        check(nsa not in left and nsb not in left, f"namespaces left behind: {left}")
    finally:
        for ns in (nsa, nsb):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
