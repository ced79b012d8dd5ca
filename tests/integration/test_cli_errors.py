"""Bad input gets a precise message and exit code 2 before anything is sent; --help explains."""
import os
import socket
import subprocess
import tempfile

import lrtest
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


def unknown_port():
    out = lr("run", "--tx", "net_nope0", "--count", "10", "--", "--vdev=net_null0", "--no-pci", expect_rc=2)
    check('unknown port "net_nope0"' in out and "net_null0 (id 0)" in out, out)


def too_many_queues():
    out = lr("run", "--ring-pair", "a,b", "--tx", "a,queues=20", "--count", "100", "--", "--no-pci", expect_rc=2)
    check("supports at most" in out, out)


def cpus_not_available():
    out = lr("run", "--ring-pair", "a,b", "--tx", "a", "--cpus", "99", "--count", "10", "--", "--no-pci", expect_rc=2)
    check("--cpus: CPU 99 is not available to this process (allowed: " in out, out)


def metrics_port_in_use():
    """Refused before anything is sent (the server starts once the capabilities are dropped)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        out = lr("run", "-q", "--ring-pair", "a,b", "--tx", "a", "--count", "1000", "--metrics", f"127.0.0.1:{port}",
                 "--json", "/dev/null", "--", "--no-pci", expect_rc=3)
        check(f"couldn't serve metrics on 127.0.0.1:{port}" in out, out)
        check("TX total" not in out, "nothing may be sent")


def default_route_refused():
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


def outputs_checked_before_sending():
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


def read_only_output_refused():
    """An output on a read-only file system (a tmpfs mounted ro in a mount namespace of its own)."""
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                            f'mount -t tmpfs -o ro none {d} && exec "$@"', "sh", LINERATE, "run", "-q", "--tx",
                            "net_null0", "--count", "10", "--json", f"{d}/r.json", "--", "--vdev=net_null0",
                            "--no-pci"], capture_output=True, text=True, timeout=60)
        check(p.returncode == 2 and f'--json "{d}/r.json": cannot write there: cannot create files in the directory '
              f'"{d}": Read-only file system' in p.stderr, f"exit {p.returncode}: {p.stderr}")


def help_text():
    out = lr("run", "--help", expect_rc=0)
    for word in ("--tx", "--rx", "queues=N", "--count", "--duration", "Exit codes", "--vdev"):
        check(word in out, f"--help lacks {word}")


if __name__ == "__main__":
    r = lrtest.Results()
    r.case("size below 64", bad, ["--tx", "p", "--size", "63"], 'invalid --size "63": must be between 64 and 9000')
    r.case("size over 9000", bad, ["--tx", "p", "--size", "9001"], "must be between 64 and 9000")
    r.case("zero queues", bad, ["--tx", "p,queues=0"], "must be between 1 and 128")
    r.case("bad address", bad, ["--tx", "p", "--dst-ip", "198.18.0.256"], "--dst-ip")
    r.case("non-benchmark address", bad, ["--tx", "p", "--dst-ip", "192.0.2.1"], "outside the benchmarking ranges")
    r.case("no port", bad, ["--count", "5"], "no port given")
    r.case("unknown option", bad, ["--tx", "p", "--frobnicate"], "frobnicate")
    r.case("ipv6 tcp too small", bad, ["--tx", "p", "--ipv6", "--proto", "tcp", "--size", "64"], "minimum is 78")
    r.case("bad ring pair", bad, ["--ring-pair", "a", "--tx", "a"], 'invalid --ring-pair "a"')
    r.case("flows walking out of the ranges", bad, ["--tx", "p", "--flows", "200000", "--vary", "dst-ip",
                                                    "--dst-ip", "198.19.255.0", "--no-signature"],
           "walk from 198.19.255.0 to 198.23.12.63, outside the benchmarking ranges")
    r.case("max-loss over 100", bad, ["--tx", "p", "--rx", "q", "--max-loss", "150"],
           'invalid --max-loss "150": expected a percentage between 0 and 100')
    r.case("sizes in a run", bad, ["--tx", "p", "--sizes", "64,128"], "sizes")
    r.case("procedure without rx", lambda: check("throughput measures what comes back" in
                                                 lr("throughput", "--tx", "p", expect_rc=2), "throughput needs --rx"))
    r.case("bad rate unit", bad, ["--tx", "p", "--rate", "10 furlongs"], 'invalid --rate "10 furlongs"')
    r.case("percent without line rate", lambda: check("line rate" in lr("run", "--tx", "net_null0", "--rate", "50%",
                                                                        "--count", "10", "--", "--vdev=net_null0",
                                                                        "--no-pci", expect_rc=2), "% needs a line rate"))
    r.case("a rate above what any port carries", bad, ["--tx", "p", "--rate", "1e30"],
           "--rate 1e30 asks 1e+30 pps of 64-byte frames: 8.4e+22 % of 800 Gbit/s, the most a port can carry")
    r.case("a rate above --line-rate", bad, ["--tx", "p", "--line-rate", "10G", "--rate", "20Gbps"],
           "--rate 20Gbps asks 29.762 Mpps of 64-byte frames: 200 % of the 10 Gbit/s line rate given with --line-rate")
    r.case("a part of a value quoted whole", bad, ["--tx", "p", "--rate", "1M", "--pattern", "burst:0"],
           'invalid --pattern "burst:0": the burst length "0": must be between 1 and')
    r.case("a range step quoted whole", lambda: check('invalid --sizes "64:128:+0": the step "0"' in
                                                      lr("sweep", "--tx", "p", "--sizes", "64:128:+0", expect_rc=2),
                                                      "--sizes quoted whole"))
    r.case("every output path checked before sending", outputs_checked_before_sending)
    r.case("help", help_text)
    lrtest.need_root_and_hugepages()
    r.case("unknown port", unknown_port)
    r.case("too many queues", too_many_queues)
    r.case("CPUs that do not exist", cpus_not_available)
    r.case("a metrics port in use", metrics_port_in_use)
    r.case("an interface carrying the default route", default_route_refused)
    r.case("an output on a read-only file system", read_only_output_refused)
    r.finish()
