"""Three hosts in network namespaces, for `linerate serve --controller` (test_multihost.py):

    <p>-c  the controller      <p>ca 198.19.0.1 <-> <p>ac 198.19.0.2  <p>-a  engine A
                               <p>cb 198.19.0.5 <-> <p>bc 198.19.0.6  <p>-b  engine B
    data:  <p>-a: <p>a0  <->  <p>-s: bridge [<p>sa0 <p>sb0 <p>sb1]  <->  <p>-b: <p>b0, <p>b1

The switch between the engines' data ports is a Linux bridge whose forwarding table is set
(each port's address on its bridge port) and which floods nothing: a frame reaches the one
port it is addressed to, so every count is exact. The engines listen on their control
address, the controller on its namespace's loopback."""
import re
import os
import subprocess
import time

from testbed import ns_exists, sh

ENGINE_PORT = 8443


class MultiHostBed:
    def __init__(self, prefix):
        if not re.fullmatch(r"[a-z][a-z0-9]{0,7}", prefix):
            raise ValueError("multi-host bed prefix: 1-8 lowercase letters or digits, starting with a letter")
        p = prefix
        self.ns = {"c": f"{p}-c", "a": f"{p}-a", "b": f"{p}-b", "s": f"{p}-s"}
        self.control = [(f"{p}ca", "198.19.0.1/30", f"{p}ac", "198.19.0.2/30", "a"),
                        (f"{p}cb", "198.19.0.5/30", f"{p}bc", "198.19.0.6/30", "b")]
        self.data = [(f"{p}a0", "a", f"{p}sa0"), (f"{p}b0", "b", f"{p}sb0"), (f"{p}b1", "b", f"{p}sb1")]
        self.engine_addr = {"a": "198.19.0.2", "b": "198.19.0.6"}
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

    def endpoint(self, engine, ifc):
        """A port's OTG location: ENGINE:PORT;LOCAL-PORT."""
        return f"{self.engine_addr[engine]}:{ENGINE_PORT};{ifc}"

    def up(self):
        for ns in self.ns.values():
            sh("ip", "netns", "add", ns)
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", check=False)
            sh("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1", check=False)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        for c_if, c_addr, e_if, e_addr, e in self.control:
            sh("ip", "link", "add", c_if, "netns", self.ns["c"], "type", "veth", "peer", "name", e_if, "netns", self.ns[e])
            for ns, ifc, addr in ((self.ns["c"], c_if, c_addr), (self.ns[e], e_if, e_addr)):
                sh("ip", "-n", ns, "addr", "add", addr, "dev", ifc)
                sh("ip", "-n", ns, "link", "set", ifc, "up")
        s = self.ns["s"]
        sh("ip", "-n", s, "link", "add", "br0", "type", "bridge", "stp_state", "0", "forward_delay", "0",
           "mcast_snooping", "0")
        sh("ip", "-n", s, "link", "set", "br0", "multicast", "off")
        for ifc, e, sw in self.data:
            sh("ip", "link", "add", ifc, "netns", self.ns[e], "type", "veth", "peer", "name", sw, "netns", s)
            sh("ip", "-n", self.ns[e], "link", "set", ifc, "mtu", "1500", "up")
            sh("ip", "-n", s, "link", "set", sw, "master", "br0", "up")
            sh("bridge", "-n", s, "link", "set", "dev", sw, "flood", "off", "mcast_flood", "off", "learning", "off")
            sh("bridge", "-n", s, "fdb", "add", self.mac(e, ifc), "dev", sw, "master", "static")
        sh("ip", "-n", s, "link", "set", "br0", "up")
        end = time.time() + 30
        while time.time() < end:
            if sh("bridge", "-n", s, "link", "show", check=False).stdout.count("state forwarding") >= 3:
                return
            time.sleep(0.05)
        raise RuntimeError("the bed's bridge ports are not forwarding")

    def mac(self, engine, ifc):
        return sh("ip", "-n", self.ns[engine], "-br", "link", "show", ifc).stdout.split()[2]

    def down(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        self.procs = []
        for ns in self.ns.values():
            if ns_exists(ns):
                for pid in sh("ip", "netns", "pids", ns, check=False).stdout.split():
                    sh("kill", "-9", pid, check=False)
                sh("ip", "netns", "del", ns, check=False)

    def wrap(self, key, argv):
        """argv run in one of the bed's namespaces, with bpffs mounted there (ip netns exec
        remounts /sys)."""
        return ["ip", "netns", "exec", self.ns[key], "sh", "-c",
                'mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf; exec "$@"', "sh", *argv]

    def start(self, key, argv, env=None):
        p = subprocess.Popen(self.wrap(key, argv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=None if env is None else {**os.environ, **env})
        self.procs.append(p)
        return p

    def run(self, key, argv, **kw):
        return subprocess.run(self.wrap(key, argv), capture_output=True, text=True, **kw)
