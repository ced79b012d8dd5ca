#!/usr/bin/env python3
"""The veth test bed, the one implementation used by the scripts, the tests and the benchmarks.

Two network namespaces joined by a veth pair, only in 198.18.0.0/15:

    <prefix>-a: <prefix>0 198.18.0.1/15  <->  <prefix>-b: <prefix>1 198.18.0.2/15

(with --same-ns both ends live in <prefix>-a). IPv6 autoconfiguration is off on the link, so
nothing but the test's own frames crosses it.

    scripts/testbed.py up     [PREFIX] [--queues N] [--same-ns]   create (default PREFIX lr); also
                                                                  reserves hugepages for DPDK
    scripts/testbed.py down   [PREFIX]                            remove it, restore hugepages
    scripts/testbed.py exec   a|b [PREFIX] -- CMD...              run CMD in a namespace, bpffs mounted
    scripts/testbed.py status [PREFIX]
    scripts/testbed.py dut up [PREFIX] [--pps N] [--size N] [--queue N]
                                         a kernel-path DUT (default PREFIX lrd): a Linux bridge in
                                         PREFIX-d with an HTB shaper of N frames/s (default 50k) of
                                         --size bytes (default 64) and a pfifo of --queue frames
                                         (default 1000) towards the receiving port; linerate sends
                                         on PREFIX0 and receives on PREFIX3, both in PREFIX-a
    scripts/testbed.py dut counters [PREFIX]   the DUT's counters (JSON): what its bridge received,
                                         what the shaper sent on, dropped and still holds
    scripts/testbed.py dut down [PREFIX]

`up` twice is fine, and `down` leaves nothing behind. Environment: LINERATE_HUGEPAGES (2 MiB
pages to reserve, default 1024), LINERATE_QUEUES (veth queues, default 1: a reflected frame then
always returns on queue 0). From Python: `with VethBed("lxa", same_ns=True) as bed: ...`.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HUGEPAGES = "/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
STATE = "/run/linerate-testbed"


def sh(*args, check=True, **kw):
    return subprocess.run(list(args), check=check, capture_output=True, text=True, **kw)


def setup_failure(e):
    """A failed setup step in one line: the command and what it said, or the error."""
    if isinstance(e, subprocess.CalledProcessError):
        said = (e.stderr or e.stdout or "").strip().replace("\n", "; ")
        return f"`{' '.join(map(str, e.cmd))}` failed (exit {e.returncode}){': ' + said if said else ''}"
    return str(e)


def disable_ipv6(ns, *confs):
    """No IPv6 autoconfiguration chatter (RS, MLD, DAD) on the test links: disable_ipv6 for each of
    `confs` (`all`, `default`, an interface) in namespace `ns`. Without sysctl the bed would come
    up with IPv6 on, whose frames meet the test's on the links: refused. A kernel without IPv6
    has nothing to turn off."""
    if not shutil.which("sysctl"):
        raise RuntimeError("sysctl is missing (Debian's procps, which scripts/deps.sh installs): "
                           "the bed needs it to keep IPv6 off its links")
    for c in confs:
        sh("ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{c}.disable_ipv6=1", check=False)


def ns_exists(ns):
    return any(line.split()[0] == ns for line in sh("ip", "netns", "list", check=False).stdout.splitlines() if line)


RX_SAMPLER = """
import sys, time
path = f"/sys/class/net/{sys.argv[1]}/statistics/rx_packets"
while True:
    with open(path) as f:
        print(time.monotonic(), f.read().strip(), flush=True)
    time.sleep(0.05)
"""


class VethBed:
    """A veth pair between two namespaces (or within one with same_ns=True). As a context
    manager it is created on entry and always removed on exit, even after a failure."""

    def __init__(self, prefix, same_ns=False, queues=1):
        if not re.fullmatch(r"[a-z][a-z0-9]{0,9}", prefix):
            raise ValueError("test bed prefix: 1-10 lowercase letters or digits, starting with a letter")
        self.prefix = prefix
        self.nsa, self.nsb = f"{prefix}-a", (f"{prefix}-a" if same_ns else f"{prefix}-b")
        self.ifa, self.ifb = f"{prefix}0", f"{prefix}1"
        self.queues = queues
        self.procs = []

    def __enter__(self):
        self.down()
        try:
            self.up()
        except Exception:
            self.down()
            raise
        return self

    def __exit__(self, *exc):
        self.down()

    def up(self):
        for ns in {self.nsa, self.nsb}:
            if not ns_exists(ns):
                sh("ip", "netns", "add", ns)
        if sh("ip", "-n", self.nsa, "link", "show", self.ifa, check=False).returncode != 0:
            q = str(self.queues)
            sh("ip", "link", "add", self.ifa, "numtxqueues", q, "numrxqueues", q, "netns", self.nsa, "type", "veth",
               "peer", "name", self.ifb, "numtxqueues", q, "numrxqueues", q, "netns", self.nsb)
        for ns, ifc, addr in ((self.nsa, self.ifa, "198.18.0.1/15"), (self.nsb, self.ifb, "198.18.0.2/15")):
            disable_ipv6(ns, "all", ifc)
            sh("ip", "-n", ns, "addr", "replace", addr, "dev", ifc)
            sh("ip", "-n", ns, "link", "set", ifc, "mtu", "1500", "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        self.wait_up()

    def down(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.procs = []
        for ns in {self.nsa, self.nsb}:
            if not ns_exists(ns):
                continue
            # Kill anything still running inside (a crashed run), then the namespace.
            for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
                sh("kill", "-9", pid, check=False)
            sh("ip", "netns", "del", ns, check=False)
        sh("ip", "link", "del", self.ifa, check=False)

    def wait_up(self, timeout=30.0):
        end = time.time() + timeout
        while time.time() < end:
            if all(self.operstate(ns, i) == "up" for ns, i in ((self.nsa, self.ifa), (self.nsb, self.ifb))):
                return
            time.sleep(0.05)
        raise RuntimeError("veth did not come up")

    def operstate(self, ns, ifc):
        return sh("ip", "netns", "exec", ns, "cat", f"/sys/class/net/{ifc}/operstate").stdout.strip()

    def wrap(self, ns, argv):
        """argv run inside namespace `ns` with bpffs mounted (ip netns exec remounts /sys)."""
        return ["ip", "netns", "exec", ns, "sh", "-c",
                'mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf; exec "$@"', "sh"] + list(argv)

    def run(self, ns, argv, **kw):
        return subprocess.run(self.wrap(ns, argv), capture_output=True, text=True, **kw)

    def start(self, ns, argv):
        p = subprocess.Popen(self.wrap(ns, argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.procs.append(p)
        return p

    def start_rx_counter(self, ns, ifc):
        """Samples `ifc`'s own rx_packets every 50 ms from inside `ns` (an RxCounter), until
        stop_rx_counter: a count that belongs to no tool under test. Returns once the first
        sample, the base, has been read."""
        counter = RxCounter(subprocess.Popen(self.wrap(ns, ["python3", "-c", RX_SAMPLER, ifc]),
                                             stdout=subprocess.PIPE, text=True), ifc)
        counter.wait_first()
        return counter

    @staticmethod
    def stop_rx_counter(counter):
        """Stops the sampler; returns its (monotonic time, rx_packets) samples."""
        return counter.stop()

    def stat(self, ns, ifc, name):
        return int(sh("ip", "netns", "exec", ns, "cat", f"/sys/class/net/{ifc}/statistics/{name}").stdout)

    def xdp_attached(self, ns, ifc):
        return "prog/xdp" in sh("ip", "-n", ns, "link", "show", ifc).stdout

    def wait_xdp(self, ns, ifc, proc, timeout=30.0):
        """Waits until an XDP program is attached to `ifc` (a receiver or reflector has set its
        port up); fails at once if `proc` exits first."""
        wait_until(lambda: self.xdp_attached(ns, ifc), timeout, f"an XDP program attached to {ifc}", proc)


class DutBed(VethBed):
    """A device under test between two ports of one namespace:

        <prefix>-a: <prefix>0  <->  <prefix>-d: <prefix>1 [DUT] <prefix>2  <->  <prefix>-a: <prefix>3

    linerate sends on <prefix>0 and measures on <prefix>3, both in <prefix>-a; whatever the
    test runs in <prefix>-d (start_dut: an XDP program of known capacity) forwards between them."""

    def __init__(self, prefix):
        super().__init__(prefix, same_ns=True)
        self.nsd = f"{prefix}-d"
        self.ifc, self.ifd = f"{prefix}2", f"{prefix}3"
        self.dut = None

    def up(self):
        for ns in (self.nsa, self.nsd):
            if not ns_exists(ns):
                sh("ip", "netns", "add", ns)
        for a, b in ((self.ifa, self.ifb), (self.ifd, self.ifc)):
            if sh("ip", "-n", self.nsa, "link", "show", a, check=False).returncode != 0:
                sh("ip", "link", "add", a, "netns", self.nsa, "type", "veth", "peer", "name", b, "netns", self.nsd)
        for ns in (self.nsa, self.nsd):
            disable_ipv6(ns, "all", "default")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        for ns, ifc in ((self.nsa, self.ifa), (self.nsd, self.ifb), (self.nsd, self.ifc), (self.nsa, self.ifd)):
            disable_ipv6(ns, ifc)
            sh("ip", "-n", ns, "link", "set", ifc, "mtu", "1500", "up")
        self.wait_up()

    def wait_up(self, timeout=30.0):
        end = time.time() + timeout
        pairs = ((self.nsa, self.ifa), (self.nsd, self.ifb), (self.nsd, self.ifc), (self.nsa, self.ifd))
        while time.time() < end:
            if all(self.operstate(ns, i) == "up" for ns, i in pairs):
                return
            time.sleep(0.05)
        raise RuntimeError("veth did not come up")

    def down(self):
        if self.dut and self.dut.poll() is None:
            self.dut.kill()
            self.dut.wait()
        self.dut = None
        super().down()
        if ns_exists(self.nsd):
            for pid in sh("ip", "netns", "pids", self.nsd, check=False).stdout.split():
                sh("kill", "-9", pid, check=False)
            sh("ip", "netns", "del", self.nsd, check=False)
        sh("ip", "link", "del", self.ifd, check=False)

    def start_dut(self, program, rate, burst=64):
        """Starts `program` IN OUT RATE BURST in the DUT namespace (tests/bpf/dut_policer)."""
        self.dut = subprocess.Popen(self.wrap(self.nsd, [program, self.ifb, self.ifc, str(rate), str(burst)]),
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.dut.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(f"DUT did not start: {line}{self.dut.stdout.read()}")

    def stop_dut(self):
        """Stops the DUT and returns what it printed last (its counters, JSON)."""
        self.dut.terminate()
        out, _ = self.dut.communicate(timeout=10)
        self.dut = None
        return out.strip().splitlines()[-1] if out.strip() else ""

    # ---- A DUT made of the kernel's own forwarding path: a software switch under test ----
    BRIDGE = "br0"

    def start_kernel_dut(self, pps, frame_size=64, queue=1000, bucket=None):
        """A Linux bridge joining <prefix>1 and <prefix>2 in the DUT namespace, with an HTB
        shaper on <prefix>2's egress (towards the receiving port) that passes `pps` frames of
        `frame_size` bytes per second and queues up to `queue` frames in a pfifo behind it (by
        default 1000, the kernel's own txqueuelen: room for a paced sender's catch-up burst).
        HTB counts the frame without its FCS. Its bucket holds `bucket` frames (default: 5 ms
        of the rate): a shaper whose timer fires late on a busy host loses no capacity as long
        as the bucket covers the delay. Over a trial of T s it forwards at most
        pps * T + bucket frames and holds `queue` more."""
        ns, br = self.nsd, self.BRIDGE
        sh("ip", "-n", ns, "link", "add", br, "type", "bridge", "stp_state", "0", "forward_delay", "0",
           "mcast_snooping", "0")
        sh("ip", "-n", ns, "link", "set", br, "multicast", "off")  # no IGMP reports of its own
        disable_ipv6(ns, br)
        for ifc in (self.ifb, self.ifc):
            sh("ip", "-n", ns, "link", "set", ifc, "master", br)
        sh("ip", "-n", ns, "link", "set", br, "up")
        wire = frame_size - 4
        bits = int(pps * wire * 8)
        self.kernel_dut = {"pps": pps, "queue": queue, "bucket": bucket or max(1, int(pps * 0.005))}
        sh("tc", "-n", ns, "qdisc", "add", "dev", self.ifc, "root", "handle", "1:", "htb", "default", "1")
        sh("tc", "-n", ns, "class", "add", "dev", self.ifc, "parent", "1:", "classid", "1:1", "htb", "rate",
           f"{bits}bit", "ceil", f"{bits}bit", "burst", str(wire * self.kernel_dut["bucket"]), "cburst",
           str(wire * self.kernel_dut["bucket"]))
        sh("tc", "-n", ns, "qdisc", "add", "dev", self.ifc, "parent", "1:1", "handle", "10:", "pfifo", "limit",
           str(queue))
        self.wait_bridge_forwarding()

    def wait_bridge_forwarding(self, timeout=30.0):
        end = time.time() + timeout
        while time.time() < end:
            out = sh("bridge", "-n", self.nsd, "link", "show", check=False).stdout
            if out.count("state forwarding") >= 2:
                return
            time.sleep(0.05)
        raise RuntimeError(f"bridge ports not forwarding:\n{out}")

    def kernel_dut_counters(self):
        """What the kernel DUT did: frames its bridge received on the ingress port, frames
        the shaper sent on and dropped, and what is still queued (tc and the ports' counters)."""
        qd = json.loads(sh("tc", "-n", self.nsd, "-s", "-j", "qdisc", "show", "dev", self.ifc).stdout)
        root = next(q for q in qd if q.get("kind") == "htb")
        return {"ingress": self.stat(self.nsd, self.ifb, "rx_packets"),
                "ingress_dropped": self.stat(self.nsd, self.ifb, "rx_dropped"),
                "shaped": root["packets"], "dropped": root["drops"], "queued": root.get("qlen", 0),
                "egress": self.stat(self.nsd, self.ifc, "tx_packets")}


def proc_output(proc):
    """What a finished process started with a pipe printed, for a failure message."""
    try:
        out = proc.stdout.read() if proc.stdout else ""
    except (OSError, ValueError):
        out = ""
    return out if isinstance(out, str) else out.decode(errors="replace")


def wait_until(cond, timeout, what, proc=None, poll=0.02):
    """Readiness: polls cond() until it returns something true, and returns that. Fails
    (AssertionError) naming `what` after `timeout` seconds, or at once when `proc`, the process
    that was to make it true, has exited."""
    end = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"waiting for {what}: the process exited ({proc.returncode}) first:\n"
                                 f"{proc_output(proc)[-3000:]}")
        if time.monotonic() > end:
            raise AssertionError(f"waiting for {what}: not there after {timeout:g} s")
        time.sleep(poll)


def stream_lines(path):
    """The complete lines of a JSON lines file (--json-stream) so far, parsed; a line still
    being written is left for the next read."""
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        return []
    return [json.loads(x) for x in text.split("\n")[:-1] if x.strip()]


def wait_stream(path, pred, proc=None, timeout=60.0, what=None):
    """Readiness from linerate's own --json-stream FILE: waits for the first line for which
    pred(line) is true and returns it. `trial_start` is written once the ports are set up, just
    before the workers start; an `interval` line once they have run for an interval."""
    def found():
        return next((x for x in stream_lines(path) if pred(x)), None)
    return wait_until(found, timeout, what or f"a matching line in {path}", proc)


def sending(line, trial=None):
    """pred for wait_stream: an interval line (of `trial`, if given) in which frames were sent."""
    return line.get("type") == "interval" and line["tx"]["packets"] > 0 and trial in (None, line.get("trial"))


def receiving(line):
    """pred for wait_stream: an interval line of a receiver that is running (any interval)."""
    return line.get("type") == "interval"


class _LineFollower:
    """Reads a started process's output line by line on a thread as it is printed, handing each
    line to _take under the condition `cv` and notifying its waiters (and once more at the end)."""

    def __init__(self, proc):
        self.proc = proc
        self.cv = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _take(self, line):
        raise NotImplementedError

    def _read(self):
        for line in self.proc.stdout:
            with self.cv:
                self._take(line)
                self.cv.notify_all()
        with self.cv:
            self.cv.notify_all()


class OutputWatcher(_LineFollower):
    """Collects what a started process (VethBed.start) prints, as it prints it (a reader
    thread), so a test can wait for a line, readiness from its console output, and still have
    everything it printed at the end (text())."""

    def __init__(self, proc):
        self.lines = []
        super().__init__(proc)

    def _take(self, line):
        self.lines.append(line)

    def wait_line(self, pattern, timeout=60.0, what=None):
        """Waits for a line matching the regular expression `pattern`; returns it. Fails naming
        `what` after `timeout` s, or when the process exits first."""
        rx = re.compile(pattern)
        found = lambda: next((x for x in self.lines if rx.search(x)), None)  # noqa: E731
        with self.cv:
            self.cv.wait_for(lambda: found() or self.proc.poll() is not None, timeout)
            line = found()
        if line is None and self.proc.poll() is not None:
            self.reader.join(timeout=5)  # what it printed before it exited
            with self.cv:
                line = found()
        if line is None:
            state = f"the process exited ({self.proc.returncode}) first" if self.proc.poll() is not None else \
                f"not there after {timeout:g} s"
            raise AssertionError(f"waiting for {what or pattern}: {state}:\n{self.text(wait=False)[-3000:]}")
        return line

    def text(self, wait=True):
        """Everything printed; with wait, once the process has ended and its output is read."""
        if wait:
            self.proc.wait()
            self.reader.join(timeout=30)
        with self.cv:
            return "".join(self.lines)


# A console interval line ("   0.10s | ..."): the workers have run an interval.
CONSOLE_INTERVAL = r"^\s*\d+\.\d+s \|"


class RxCounter(_LineFollower):
    """A running rx_packets sampler (VethBed.start_rx_counter): its samples are read as they
    come, so a test can wait for the count to reach a value rather than sleep."""

    def __init__(self, proc, ifc):
        self.ifc = ifc
        self.samples = []
        super().__init__(proc)

    def _take(self, line):
        t, c = line.split()
        self.samples.append((float(t), int(c)))

    def _wait(self, cond, timeout, what):
        with self.cv:
            if not self.cv.wait_for(lambda: cond() or self.proc.poll() is not None, timeout) or not cond():
                last = self.samples[-1] if self.samples else None
                raise AssertionError(f"rx_packets of {self.ifc}: waiting for {what} for {timeout:g} s; "
                                     f"last sample {last}, sampler exit {self.proc.poll()}")

    def wait_first(self, timeout=30.0):
        """Waits for the first sample (the base the counts are taken from)."""
        self._wait(lambda: self.samples, timeout, "the first sample")

    def wait_count(self, n, timeout=30.0):
        """Waits until `n` frames have been counted since the first sample, and for one sample
        more (anything beyond `n` arriving with them is counted too). Returns quietly after
        `timeout`: the caller's exact check then says what was counted."""
        try:
            self._wait(lambda: self.samples and self.samples[-1][1] - self.samples[0][1] >= n, timeout,
                       f"{n} frames")
            seen = len(self.samples)
            self._wait(lambda: len(self.samples) > seen, 5.0, "one sample more")
        except AssertionError:
            pass

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        """Stops the sampler; returns its (monotonic time, rx_packets) samples."""
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.reader.join(timeout=30)
        return list(self.samples)


def unique(prefix):
    """A prefix no other test run on this machine uses at the same time."""
    return f"{prefix}{os.getpid() % 10000}"


def reserve_hugepages(want):
    """Raises the 2 MiB hugepage reservation to `want` (never shrinks someone else's) and
    remembers the old value once, for restore_hugepages."""
    if not os.access(HUGEPAGES, os.W_OK):
        return
    os.makedirs(STATE, exist_ok=True)
    prev = os.path.join(STATE, "hugepages.prev")
    with open(HUGEPAGES) as f:
        cur = int(f.read())
    if not os.path.exists(prev):
        with open(prev, "w") as f:
            f.write(str(cur))
    if cur < want:
        with open(HUGEPAGES, "w") as f:
            f.write(str(want))
        with open(HUGEPAGES) as f:
            got = int(f.read())
        if got < want:
            print(f"testbed: warning: only {got} of {want} hugepages reserved", file=sys.stderr)


def restore_hugepages():
    """Restores the reservation once no test bed is up any more."""
    prev = os.path.join(STATE, "hugepages.prev")
    if not os.path.exists(prev):
        return
    if any(re.search(r"-(a|b)\b", line) for line in sh("ip", "netns", "list", check=False).stdout.splitlines()):
        return
    try:
        with open(prev) as f, open(HUGEPAGES, "w") as out:
            out.write(f.read())
    except OSError:
        pass
    os.remove(prev)


def refuse(message, code):
    """One line on stderr, then exit `code`: 2 for a bad argument, 3 for a setup failure."""
    print(message, file=sys.stderr)
    sys.exit(code)


def parse_count(s, what):
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([kM]?)", s)
    if not m or float(m.group(1)) <= 0:
        refuse(f'testbed: invalid {what} "{s}": expected a number above 0, with k or M allowed', 2)
    return int(float(m.group(1)) * {"": 1, "k": 1000, "M": 1000000}[m.group(2)])


def dut_command(args):
    """testbed.py dut up|down|counters [PREFIX] [--pps N] [--size N] [--queue N]"""
    if not args or args[0] not in ("up", "down", "counters"):
        refuse("testbed: dut up|down|counters [PREFIX] [--pps N] [--size N] [--queue N]", 2)
    action, rest = args[0], args[1:]
    opts = {"--pps": "50k", "--size": "64", "--queue": "1000"}
    positional = []
    while rest:
        a = rest.pop(0)
        if a in opts:
            if not rest:
                refuse(f"testbed: {a} needs a value", 2)
            opts[a] = rest.pop(0)
        else:
            positional.append(a)
    prefix = positional[0] if positional else "lrd"
    if os.geteuid() != 0:
        refuse("testbed: must run as root", 3)
    try:
        bed = DutBed(prefix)
    except ValueError as e:
        refuse(f"testbed: {e}", 2)
    if action == "up":
        pps, size, queue = parse_count(opts["--pps"], "--pps"), parse_count(opts["--size"], "--size"), \
            parse_count(opts["--queue"], "--queue")
        if not 64 <= size <= 1518:
            refuse(f'testbed: invalid --size "{opts["--size"]}": between 64 and 1518', 2)
        if ns_exists(bed.nsd):
            refuse(f"testbed: {bed.nsd} exists (testbed.sh dut down {prefix} first)", 3)
        try:
            bed.up()
            bed.start_kernel_dut(pps, frame_size=size, queue=queue)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            bed.down()  # nothing half made is left behind
            refuse(f"testbed: the kernel DUT did not come up: {setup_failure(e)}", 3)
        print(f"kernel DUT {prefix} up: linerate sends on {bed.nsa}/{bed.ifa}, receives on {bed.nsa}/{bed.ifd}; "
              f"{bed.nsd}: bridge {bed.BRIDGE} ({bed.ifb} + {bed.ifc}), HTB {pps} frames/s of {size} bytes "
              f"towards {bed.ifd}, bucket {bed.kernel_dut['bucket']} frames, pfifo {queue} frames")
    elif action == "counters":
        if not ns_exists(bed.nsd):
            refuse(f"testbed: {bed.nsd} does not exist (testbed.sh dut up {prefix})", 3)
        print(json.dumps(bed.kernel_dut_counters()))
    else:
        bed.down()
        print(f"kernel DUT {prefix} down")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["up", "down", "exec", "status", "dut"])
    ap.add_argument("args", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    args = list(a.args)
    cmd = args[args.index("--") + 1:] if "--" in args else []
    if "--" in args:
        args = args[:args.index("--")]
    if a.command == "dut":
        dut_command(args)
        return
    side = None
    if a.command == "exec":
        if not args or args[0] not in ("a", "b"):
            refuse("testbed: exec needs a or b", 2)
        side = args.pop(0)
    queues = int(os.environ.get("LINERATE_QUEUES", "1"))
    same_ns = False
    if "--queues" in args:
        i = args.index("--queues")
        queues = int(args[i + 1])
        del args[i:i + 2]
    if "--same-ns" in args:
        args.remove("--same-ns")
        same_ns = True
    prefix = args[0] if args else "lr"
    if os.geteuid() != 0:
        refuse("testbed: must run as root", 3)
    try:
        bed = VethBed(prefix, same_ns=same_ns, queues=queues)
    except ValueError as e:
        refuse(f"testbed: {e}", 2)
    if a.command == "up":
        reserve_hugepages(int(os.environ.get("LINERATE_HUGEPAGES", "1024")))
        try:
            bed.up()
        except (RuntimeError, subprocess.CalledProcessError) as e:
            bed.down()  # nothing half made is left behind
            refuse(f"testbed: the veth pair did not come up: {setup_failure(e)}", 3)
        with open(HUGEPAGES) as f:
            hp = f.read().strip()
        print(f"testbed {prefix} up: {bed.nsa}/{bed.ifa} 198.18.0.1 <-> {bed.nsb}/{bed.ifb} 198.18.0.2, "
              f"{queues} queue(s), hugepages {hp}")
    elif a.command == "down":
        bed.down()
        for f in os.listdir("/dev/hugepages") if os.path.isdir("/dev/hugepages") else []:
            if f.startswith("linerate"):  # hugepage files of a crashed run that was not --in-memory
                os.remove(os.path.join("/dev/hugepages", f))
        restore_hugepages()
        print(f"testbed {prefix} down")
    elif a.command == "exec":
        ns = bed.nsa if side == "a" else bed.nsb
        if not ns_exists(ns):
            refuse(f"testbed: namespace {ns} does not exist (run: {sys.argv[0]} up {prefix})", 3)
        if not cmd:
            refuse("testbed: exec needs a command after --", 2)
        os.execvp("ip", bed.wrap(ns, cmd))
    else:
        for ns in sorted({bed.nsa, bed.nsb}):
            print(f"{ns}: {'up' if ns_exists(ns) else 'absent'}")


if __name__ == "__main__":
    main()
