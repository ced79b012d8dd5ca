"""Least privilege: a real measurement as a non-root user (uid 65534) holding only the
capabilities the afxdp backend needs (setpriv, ambient capabilities); after setup every
thread of the process, the metrics server's included, holds only what the run still needs.
Without a needed capability, or with RLIMIT_MEMLOCK below the UMEM and no CAP_IPC_LOCK, the
run is refused (exit 3) naming what to grant or raise. `probe` lists what is held and missing."""
import glob
import json
import os
import random
import tempfile

import pytest

from lrtest import LINERATE, autogroups_enabled, check, paced_load, session_group_nice_now
from testbed import VethBed, sending, unique, wait_stream

pytestmark = pytest.mark.usefixtures("hugepages", "setpriv")

NEEDED = ["net_admin", "net_raw", "bpf", "perfmon", "ipc_lock"]
# What a run keeps after setup: nothing with AF_XDP sockets; with live frames, what loading
# their program per trial needs.
KEPT = {"socket": set(), "live": {"CAP_NET_ADMIN", "CAP_BPF", "CAP_PERFMON"}}
CAP_BITS = {"CAP_NET_ADMIN": 12, "CAP_BPF": 39, "CAP_PERFMON": 38}
NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups"]


def as_nobody(caps, argv, memlock=None):
    c = ",".join("+" + x for x in caps) if caps else "-all"
    pre = ["prlimit", f"--memlock={memlock}:{memlock}"] if memlock else []
    return pre + ["setpriv", *NOBODY, f"--inh-caps={c}", f"--ambient-caps={c}", LINERATE]


def thread_caps(pid):
    """CapEff of every thread of `pid`, as sets of bit numbers."""
    out = []
    for st in glob.glob(f"/proc/{pid}/task/*/status"):
        try:
            for line in open(st):
                if line.startswith("CapEff:"):
                    v = int(line.split()[1], 16)
                    out.append({b for b in range(64) if v >> b & 1})
        except OSError:
            pass  # the thread ended
    return out


@pytest.mark.parametrize("engine", ["socket", "live"])
def test_measurement_as_nobody(engine):
    """As uid 65534 with only the needed capabilities: AF_XDP sockets keep none after setup;
    live frames keep CAP_NET_ADMIN, CAP_BPF and CAP_PERFMON."""
    with VethBed(unique("lpv"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)
        port = random.randint(20000, 40000)
        # Paced, so the run lasts a while (live frames: per 50 ms call; an unpaced call lasts
        # until the count is sent, longer than --stall-timeout on a busy host).
        rate = 100_000 if engine == "socket" else paced_load(200_000)
        # --sender-nice -20 without CAP_SYS_NICE: refused, run at the process's nice, and said so.
        pace = ["--rate", str(rate), "--sender-nice", "-20"]
        count = "300000" if engine == "socket" else str(2 * rate)
        argv = as_nobody(NEEDED, None) + ["run", "-q", "--backend", "afxdp", "--tx-engine", engine, "--tx", bed.ifa,
                                          "--rx", bed.ifb, "--count", count, *pace,
                                          "--metrics", f"127.0.0.1:{port}", "--json", f"{d}/r.json",
                                          "--interval", "100ms", "--json-stream", f"{d}/r.jsonl"]
        p = bed.start(bed.nsa, argv)
        # Set up and sending: every thread there is (workers, the metrics server's) exists.
        wait_stream(f"{d}/r.jsonl", sending, p, what="the first interval with frames sent")
        caps = thread_caps(p.pid)  # ip netns exec, sh and setpriv exec: the pid is linerate's
        uid = [line.split()[1] for line in open(f"/proc/{p.pid}/status") if line.startswith("Uid:")]
        out, _ = p.communicate(timeout=60)
        check(p.returncode == 0, f"exit {p.returncode}\n{out[-3000:]}")
        check(uid == ["65534"], f"uid {uid}")
        allowed = {CAP_BITS[c] for c in KEPT[engine]}
        check(len(caps) >= 3 and all(c <= allowed for c in caps),
              f"{len(caps)} threads, capabilities {caps}, allowed {allowed}")
        with open(f"{d}/r.json") as f:
            r = json.load(f)
        t = r["totals"]
        n = int(count.rstrip("M")) * (10**6 if count.endswith("M") else 1)
        acc = t["loss_account"]
        # Unpaced live frames may outrun the receiving socket: what it dropped is counted.
        check(t["tx"]["packets"] == n and t["rx_classes"]["distinct"] + acc["host_rx_dropped"] == n and
              acc["unaccounted"] == 0, f"{t}")
        got = r["environment"]["capabilities"]
        check(set(got["after_setup"]) == KEPT[engine], f"after setup: {got}")
        refused = [n for n in r["notes"] if n.startswith("couldn't raise the paced senders to nice -20")]
        check(r["rate"]["sender_nice"] == 0 and len(refused) == 1, f"sender_nice {r['rate']['sender_nice']}, "
                                                                     f"notes {r['notes']}")
        check(set(got["before_setup_done"]) == {"CAP_" + c.upper() for c in NEEDED}, f"at start: {got}")
        check(not bed.xdp_attached(bed.nsa, bed.ifa) and not bed.xdp_attached(bed.nsa, bed.ifb), "XDP left attached")


def test_missing_capability_named():
    with VethBed(unique("lpv"), same_ns=True) as bed:
        for cap in ("bpf", "net_raw", "net_admin", "perfmon"):
            caps = [c for c in NEEDED if c != cap]
            r = bed.run(bed.nsa, as_nobody(caps, None) + ["run", "-q", "--backend", "afxdp", "--tx", bed.ifa,
                                                          "--count", "1000"], timeout=60)
            check(r.returncode == 3, f"without {cap}: exit {r.returncode}\n{r.stdout}{r.stderr}")
            check(f"CAP_{cap.upper()} (" in r.stderr and "setpriv" in r.stderr, f"without {cap}: {r.stderr}")
            check(not bed.xdp_attached(bed.nsa, bed.ifa), "XDP left attached")


def test_memlock_too_low_named():
    with VethBed(unique("lpv"), same_ns=True) as bed:
        caps = [c for c in NEEDED if c != "ipc_lock"]
        r = bed.run(bed.nsa, as_nobody(caps, None, memlock=65536) + ["run", "-q", "--backend", "afxdp", "--tx",
                                                                      bed.ifa, "--count", "1000"], timeout=60)
        check(r.returncode == 3, f"exit {r.returncode}\n{r.stdout}{r.stderr}")
        check("RLIMIT_MEMLOCK is 64 KiB" in r.stderr and "CAP_IPC_LOCK" in r.stderr and "--descriptors" in r.stderr,
              r.stderr)
        check(not bed.xdp_attached(bed.nsa, bed.ifa), "XDP left attached")
        # The same limit with CAP_IPC_LOCK: the UMEM is not charged against it.
        r = bed.run(bed.nsa, as_nobody(NEEDED, None, memlock=65536) + ["run", "-q", "--backend", "afxdp", "--tx",
                                                                        bed.ifa, "--count", "1000"], timeout=60)
        check(r.returncode == 0, f"with CAP_IPC_LOCK: exit {r.returncode}\n{r.stdout}{r.stderr}")


def test_probe_lists_held_and_missing():
    with VethBed(unique("lpv"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o777)
        caps = [c for c in NEEDED if c not in ("bpf", "ipc_lock")]
        r = bed.run(bed.nsa, as_nobody(caps, None) + ["probe", bed.ifa, "--json", f"{d}/p.json"], timeout=60)
        check("missing CAP_BPF (" in r.stdout, r.stdout)
        with open(f"{d}/p.json") as f:
            c = json.load(f)["capabilities"]
        check(set(c["missing"]) == {"CAP_BPF", "CAP_IPC_LOCK"}, f"{c}")
        check(set(c["held"]) == {"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_PERFMON"}, f"{c}")


def test_sender_nice_within_a_session_group_noted():
    """--sender-nice -20 started in a session of its own, whose scheduling group is at nice 0:
    the senders ran at -20 (reported), and a note says that processes of other sessions can
    still delay departures, and how to raise the group; the group left as it was."""
    if not autogroups_enabled():
        pytest.skip("the kernel does not group tasks by session (kernel.sched_autogroup_enabled=0)")
    before = session_group_nice_now()
    with VethBed(unique("lpg")) as bed, tempfile.TemporaryDirectory() as d:
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--count", "2000",
                              "--rate", "10k", "--sender-nice", "-20", "--json", f"{d}/r.json"],
                    timeout=60, start_new_session=True)
        check(r.returncode == 0, f"exit {r.returncode}\n{r.stderr}")
        with open(f"{d}/r.json") as f:
            rep = json.load(f)
    check(rep["totals"]["tx"]["packets"] == 2000 and rep["rate"]["sender_nice"] == -20, f"{rep['rate']}")
    noted = [n for n in rep["notes"] if "scheduling group, which runs at nice 0" in n]
    check(len(noted) == 1 and "echo -20 > /proc/self/autogroup" in noted[0], f"notes {rep['notes']}")
    check(session_group_nice_now() == before, f"this session's group went from nice {before} "
                                              f"to {session_group_nice_now()}")
