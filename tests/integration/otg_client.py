"""`linerate serve` in the integration tests (test_otg.py): the server's life (started in a test
bed's namespace or on DPDK rings, ready once it says where it listens, stopped by SIGINT), plain
HTTP to it (urllib; from threads that joined its network namespace, since it listens on that
namespace's loopback), and the snappi scripts of otg_scripts/, run by the OTG venv's python
(scripts/test.sh makes it: build/otg-venv), each printing what it saw as one JSON line."""
import concurrent.futures
import ctypes
import json
import os
import re
import signal
import socket
import subprocess
import urllib.error
import urllib.request

from lrtest import LINERATE
from testbed import OutputWatcher

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.join(HERE, "otg_scripts")
OTG_PYTHON = os.environ.get("OTG_PYTHON",
                            os.path.join(os.path.dirname(LINERATE), "..", "otg-venv", "bin", "python"))
# DPDK on two in-memory ring ports wired to each other: a port that sends and receives at once.
RING_SERVER = ["--backend", "dpdk", "--ring-pair", "ring0,ring1", "--", "--no-pci", "--in-memory"]
READY = r"^linerate serve: OTG API (\S+) at (\S+) "
CLONE_NEWNET = 0x40000000


def free_port():
    """A TCP port nothing listens on in this namespace now (for a server in it)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def join_netns(ns):
    """Moves the calling thread (only it) into network namespace `ns`: its sockets are then
    that namespace's."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open(f"/run/netns/{ns}", os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), f"setns into {ns}")
    finally:
        os.close(fd)


class Reply:
    def __init__(self, status, ctype, body):
        self.status, self.ctype, self.body = status, ctype, body

    def json(self):
        return json.loads(self.body)

    def __repr__(self):
        return f"HTTP {self.status} {self.ctype}: {self.body[:600]!r}"


def http(url, method, path, body=None, timeout=60):
    """One request with urllib; `body` a dict (sent as JSON), bytes or str. Returns a Reply,
    whatever the status."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    req = urllib.request.Request(url + path, data=body, method=method,
                                 headers={"Content-Type": "application/json"} if body is not None else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return Reply(r.status, r.headers.get("Content-Type"), r.read())
    except urllib.error.HTTPError as e:
        return Reply(e.code, e.headers.get("Content-Type"), e.read())


class OtgServer:
    """`linerate serve ARGS` on 127.0.0.1: in `ns` of `bed` (port 8443, the namespace's own), or
    in this namespace on a free port. A context manager: started and ready on entry; on exit
    killed if still running (stop() is the clean end the tests check)."""

    def __init__(self, args, bed=None, ns=None, threads=8):
        self.args, self.bed, self.ns, self.threads = list(args), bed, ns, threads
        self.port = 8443 if ns else free_port()
        self.proc = self.out = self.url = None
        self.pool = None

    def command(self):
        args = self.args
        eal = []
        if "--" in args:
            i = args.index("--")
            args, eal = args[:i], args[i:]
        return [LINERATE, "serve", "--listen", f"127.0.0.1:{self.port}", *args, *eal]

    def __enter__(self):
        if self.ns:
            self.proc = self.bed.start(self.ns, self.command())
            self.pool = concurrent.futures.ThreadPoolExecutor(self.threads, initializer=join_netns,
                                                              initargs=(self.ns,))
        else:
            self.proc = subprocess.Popen(self.command(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            self.pool = concurrent.futures.ThreadPoolExecutor(self.threads)
        self.out = OutputWatcher(self.proc)
        try:
            self.url = re.search(READY, self.out.wait_line(READY, timeout=60, what="the server's first line")).group(2)
        except BaseException:
            self.kill()
            raise
        return self

    def __exit__(self, *exc):
        self.kill()

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.pool:
            self.pool.shutdown(wait=False)

    def in_ns(self, fn, *a):
        """fn(*a) on a thread in the server's namespace; its result."""
        return self.pool.submit(fn, *a).result()

    def request(self, method, path, body=None, timeout=60):
        return self.in_ns(http, self.url, method, path, body, timeout)

    def ok(self, method, path, body=None):
        """A request that must answer 200 with JSON; the JSON."""
        r = self.request(method, path, body)
        assert r.status == 200 and r.ctype.startswith("application/json"), f"{method} {path}: {r}\n{self.tail()}"
        return r.json()

    def flow_metrics(self, *names):
        m = self.ok("POST", "/monitor/metrics", {"choice": "flow", "flow": {"flow_names": list(names)}})
        return {f["name"]: f for f in m["flow_metrics"]}

    def port_metrics(self):
        m = self.ok("POST", "/monitor/metrics", {"choice": "port", "port": {}})
        return {p["name"]: p for p in m["port_metrics"]}

    def traffic(self, state, *flows):
        body = {"choice": "traffic", "traffic": {"choice": "flow_transmit", "flow_transmit": {"state": state}}}
        if flows:
            body["traffic"]["flow_transmit"]["flow_names"] = list(flows)
        return self.ok("POST", "/control/state", body)

    def snappi(self, script, *args, timeout=120):
        """otg_scripts/SCRIPT URL ARGS... with the OTG venv's python, in the server's namespace;
        what it printed last (one JSON line)."""
        argv = [OTG_PYTHON, os.path.join(SCRIPTS, script), self.url, *map(str, args)]
        if self.ns:
            r = self.bed.run(self.ns, argv, timeout=timeout)
        else:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        lines = r.stdout.strip().splitlines()
        assert r.returncode == 0 and lines, (f"{script}: exit {r.returncode}\nstdout:\n{r.stdout[-3000:]}\n"
                                             f"stderr:\n{r.stderr[-3000:]}\nthe server:\n{self.tail()}")
        return json.loads(lines[-1])

    def tail(self, n=3000):
        return self.out.text(wait=False)[-n:] if self.out else ""

    def stop(self, timeout=60):
        """SIGINT: the server stops its traffic, closes its ports and exits 0 saying so."""
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the server did not stop {timeout} s after SIGINT:\n{self.tail()}")
        text = self.out.text()
        assert self.proc.returncode == 0 and "linerate serve: stopped" in text, \
            f"after SIGINT: exit {self.proc.returncode}\n{text[-3000:]}"
        return text
