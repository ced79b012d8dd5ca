"""Test beds for integration tests: network namespaces and veth pairs that each test creates
for itself and always removes (even on failure). Only 198.18.0.0/15 addresses are used."""
import os
import subprocess
import time


def sh(*args, check=True, **kw):
    return subprocess.run(list(args), check=check, capture_output=True, text=True, **kw)


class VethBed:
    """Two namespaces <name>a and <name>b joined by veth <name>0 (in a) <-> <name>1 (in b),
    198.18.0.1/15 and 198.18.0.2/15. With same_ns=True both ends live in namespace <name>a."""

    def __init__(self, name, same_ns=False, queues=1):
        self.name = name
        self.nsa, self.nsb = f"{name}a", (f"{name}a" if same_ns else f"{name}b")
        self.ifa, self.ifb = f"{name}0", f"{name}1"
        self.queues = queues
        self.procs = []

    def __enter__(self):
        self.cleanup()
        try:
            for ns in {self.nsa, self.nsb}:
                sh("ip", "netns", "add", ns)
            q = str(self.queues)
            sh("ip", "link", "add", self.ifa, "numtxqueues", q, "numrxqueues", q, "netns", self.nsa, "type", "veth",
               "peer", "name", self.ifb, "numtxqueues", q, "numrxqueues", q, "netns", self.nsb)
            for ns, ifc, addr in ((self.nsa, self.ifa, "198.18.0.1/15"), (self.nsb, self.ifb, "198.18.0.2/15")):
                sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1")
                sh("ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{ifc}.disable_ipv6=1")
                sh("ip", "-n", ns, "addr", "add", addr, "dev", ifc)
                sh("ip", "-n", ns, "link", "set", ifc, "up")
                sh("ip", "-n", ns, "link", "set", "lo", "up")
            self.wait_up()
        except Exception:
            self.cleanup()
            raise
        return self

    def __exit__(self, *exc):
        self.cleanup()

    def wait_up(self, timeout=5.0):
        end = time.time() + timeout
        while time.time() < end:
            if all(self.operstate(ns, i) == "up" for ns, i in ((self.nsa, self.ifa), (self.nsb, self.ifb))):
                return
            time.sleep(0.05)
        raise RuntimeError("veth did not come up")

    def operstate(self, ns, ifc):
        return sh("ip", "netns", "exec", ns, "cat", f"/sys/class/net/{ifc}/operstate").stdout.strip()

    def cleanup(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.procs = []
        for ns in {self.nsa, self.nsb}:
            r = sh("ip", "netns", "pids", ns, check=False)
            for pid in r.stdout.split():
                sh("kill", "-9", pid, check=False)
            sh("ip", "netns", "del", ns, check=False)

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

    def stat(self, ns, ifc, name):
        return int(sh("ip", "netns", "exec", ns, "cat", f"/sys/class/net/{ifc}/statistics/{name}").stdout)

    def xdp_attached(self, ns, ifc):
        return "prog/xdp" in sh("ip", "-n", ns, "link", "show", ifc).stdout

    def wait_xdp(self, ns, ifc, proc, timeout=15.0):
        end = time.time() + timeout
        while time.time() < end:
            if self.xdp_attached(ns, ifc):
                time.sleep(0.3)  # sockets are registered before attach; let the process settle
                return
            if proc.poll() is not None:
                raise AssertionError(f"receiver exited early ({proc.returncode}):\n{proc.stdout.read()}")
            time.sleep(0.05)
        raise AssertionError(f"no XDP program attached to {ifc} after {timeout}s")


def unique(prefix):
    return f"{prefix}{os.getpid() % 10000}"
