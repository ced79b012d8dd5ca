"""Rates and the procedures end to end on the veth test bed, on both backends: paced count
runs counted exactly by the receiving interface's own counter; RFC 2544 throughput found
through a device under test of known capacity (an XDP token bucket in a middle namespace,
whose own counters must add up to linerate's trials); sweeps with exact counts per row; the
latency, frame-loss and back-to-back procedures; profiles run by `check`, with JUnit output.
The timing (the paced rates as the receiver counted them, burst and poisson departures checked
statistically against the sender's timestamps) is test_timing.py's, on runs of rate_once."""
import json
import os
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

import lrtest
from lrtest import LINERATE, check
from testbed import DutBed, VethBed, unique

import jsonschema

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "report.schema.json")) as _f:
    SCHEMA = json.load(_f)

DUT = os.environ.get("DUT_POLICER", os.path.join(os.path.dirname(LINERATE), "..", "tests", "bpf", "dut_policer"))
SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DUT_RATE, DUT_BURST = 100_000, 256  # the device under test's capacity (pps) and bucket (frames)
# The generator must offer each trial's load within 0.1 % by default; on the shared 2-core CI
# host a preempted sender misses that now and then, so these tests allow 0.5 % (still well
# inside the 1-2 % goal widths) rather than let one noisy trial fail the suite.
TOL = ["--rate-tolerance", "0.5"]



def load(path):
    with open(path) as f:
        return json.load(f)


def backend_args(backend, bed, tx, rx=None):
    """linerate's port options for `backend`; DPDK reaches the veths through net_af_xdp."""
    if backend == "afxdp":
        return ["--backend", "afxdp", "--tx", tx] + (["--rx", rx] if rx else []), []
    eal = [f"--vdev=net_af_xdp0,iface={tx}"] + ([f"--vdev=net_af_xdp1,iface={rx}"] if rx else []) + ["--no-pci"]
    return ["--tx", "net_af_xdp0"] + (["--rx", "net_af_xdp1"] if rx else []), eal


def rate_once(bed, backend, rate):
    """One paced count run of 2 s: exact counts (asserted). Returns the receiving interface's
    rx_packets samples, (monotonic time, frames since the start), and linerate's report:
    test_timing.py measures the rate from them."""
    n = int(rate * 2)
    sampler = bed.start_rx_counter(bed.nsb, bed.ifb)
    time.sleep(0.3)  # its first sample is the base
    args, eal = backend_args(backend, bed, bed.ifa)
    with tempfile.TemporaryDirectory() as d:
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", *args, "--count", str(n), "--rate", str(rate),
                              "--json", f"{d}/r.json"] + (["--"] + eal if eal else []), timeout=60)
        check(r.returncode == 0, f"{backend} {rate}: exit {r.returncode}\n{r.stdout}{r.stderr}")
        rep = load(f"{d}/r.json")
    time.sleep(0.5)  # the last frames counted, then stop sampling (however long the run took)
    samples = bed.stop_rx_counter(sampler)
    base = samples[0][1]
    got = samples[-1][1] - base
    # Exactness is never retried: every attempt must send and deliver exactly N.
    check(got == n, f"{backend} {rate}: {bed.ifb} counted {got} frames, asked {n}")
    check(rep["totals"]["tx"]["packets"] == n, f"linerate says {rep['totals']['tx']['packets']}")
    return [(t, c - base) for t, c in samples], rep


def rate_exact(backend):
    """A count run at each rate sends exactly N, and the receiving interface (its own
    rx_packets, sampled in its namespace) counts exactly N."""
    with VethBed(unique("lpr")) as bed:
        for rate in (10_000, 100_000, 500_000):
            rate_once(bed, backend, rate)


def dut_run(bed, backend, procedure, extra, timeout=600):
    args, eal = backend_args(backend, bed, bed.ifa, bed.ifd)
    with tempfile.TemporaryDirectory() as d:
        r = bed.run(bed.nsa, [LINERATE, procedure, *args, *extra, "--json", f"{d}/r.json"] +
                    (["--"] + eal if eal else []), timeout=timeout)
        rep = load(f"{d}/r.json") if os.path.exists(f"{d}/r.json") else None
    if rep:
        jsonschema.validate(rep, SCHEMA)  # docs/report.schema.json, for every procedure
    return r, rep


def dut_accounts_for(bed, rep):
    """The DUT's own counters: everything linerate says it sent reached the DUT, and what
    it forwarded is what linerate says arrived."""
    dut = json.loads(bed.stop_dut())
    sent = sum(t["sent"] for t in rep["trials"])
    received = sum(t["received"] for t in rep["trials"])
    check(dut["forwarded"] + dut["dropped"] == sent, f"DUT saw {dut}, linerate sent {sent}")
    check(dut["forwarded"] == received, f"DUT forwarded {dut['forwarded']}, linerate received {received}")


def throughput_ndr(backend, search="mlr", width=1.0):
    """The NDR found through a DUT of capacity R is within the goal width of R (plus the
    bucket's burst over a trial: R + B / T is what the DUT really forwards loss-free)."""
    with DutBed(unique("lpd")) as bed:
        bed.start_dut(DUT, DUT_RATE, DUT_BURST)
        r, rep = dut_run(bed, backend, "throughput", ["-q", *TOL, "--search", search, "--max-rate", "200k",
                                                      "--trial-duration", "1s", "--initial-duration", "0.2s",
                                                      "--width", str(width)])
        check(r.returncode == 0 and rep, f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}")
        dut_accounts_for(bed, rep)
    goal = rep["rows"][0]["goals"][0]
    ndr = goal["throughput"]["pps"]
    slack = width / 100 * DUT_RATE + DUT_BURST / 1.0
    print(f"     {backend} {search}: NDR {ndr:,.0f} pps for a DUT of {DUT_RATE:,} pps, {len(rep['trials'])} trials, "
          f"{rep['rows'][0]['trial_seconds']:.1f} trial-s")
    check(abs(ndr - DUT_RATE) <= slack, f"NDR {ndr} pps, the DUT forwards {DUT_RATE} (+{DUT_BURST} burst)")
    check(goal["regular"] and goal["lower_bound"]["pps"] <= ndr <= goal["upper_bound"]["pps"], f"goal {goal}")
    check(all(t["why"] and "valid" in t for t in rep["trials"]), "every trial says why it was run")
    check(rep["trials"][-1]["duration_s"] == 1.0 or search == "binary", "the answer is confirmed at full length")
    check(rep["verdict"]["result"] == "pass", f"verdict {rep['verdict']}")


def rfc2544_others():
    """back-to-back: the DUT's bucket B at twice its rate passes 2B frames whole; frame-loss:
    the loss at each load above R is what the bucket lets through, the walk stops after two
    clean steps; latency: per size, at a given rate, every trial's frames."""
    with DutBed(unique("lpo")) as bed:
        bed.start_dut(DUT, DUT_RATE, DUT_BURST)
        r, rep = dut_run(bed, "afxdp", "back-to-back", ["-q", *TOL, "--max-rate", "200k", "--trial-duration", "0.5s",
                                                         "--repeat", "2"])
        check(r.returncode == 0 and rep, f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}")
        dut_accounts_for(bed, rep)
        row = rep["rows"][0]
        check(abs(row["mean"] - 2 * DUT_BURST) <= 0.05 * 2 * DUT_BURST, f"back-to-back {row}")

        bed.start_dut(DUT, DUT_RATE, DUT_BURST)
        r, rep = dut_run(bed, "afxdp", "frame-loss", ["-q", *TOL, "--max-rate", "150k", "--trial-duration", "0.5s",
                                                       "--step", "10"])
        check(r.returncode == 0 and rep, f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}")
        dut_accounts_for(bed, rep)
        steps = rep["rows"][0]["steps"]
        for s in steps:
            forwardable = DUT_RATE * 0.5 + DUT_BURST
            expect = max(0.0, 1 - forwardable / s["sent"]) * 100
            check(abs(s["frame_loss_pct"] - expect) < 1.0, f"at {s['load_pct']} %: {s['frame_loss_pct']} % lost, "
                                                            f"expected {expect:.2f}")
        check([s["frame_loss_pct"] for s in steps[-2:]] == [0, 0], f"ends after two clean steps: {steps}")

        bed.start_dut(DUT, DUT_RATE, DUT_BURST)
        r, rep = dut_run(bed, "afxdp", "latency", ["-q", *TOL, "--rate", "50k", "--sizes", "64,512", "--repeat", "3",
                                                    "--trial-duration", "0.3s", "--max-latency", "1s"])
        check(r.returncode == 0 and rep, f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}")
        dut_accounts_for(bed, rep)
        check([row["size"] for row in rep["rows"]] == [64, 512], f"rows {rep['rows']}")
        for row in rep["rows"]:
            check(len(row["per_trial"]) == 3 and row["latency"]["count"] == row["received"] == 3 * 15000,
                  f"latency row {row}")
        check(len(rep["checks"]) == 2 and all(c["pass"] for c in rep["checks"]), f"checks {rep['checks']}")


def sweep_exact(backend):
    with VethBed(unique("lps"), same_ns=True) as bed:
        args, eal = backend_args(backend, bed, bed.ifa, bed.ifb)
        with tempfile.TemporaryDirectory() as d:
            r = bed.run(bed.nsa, [LINERATE, "sweep", "-q", *args, "--sizes", "64,512,1500", "--count", "20000",
                                  "--rate", "100k", "--json", f"{d}/r.json"] + (["--"] + eal if eal else []),
                        timeout=120)
            check(r.returncode == 0, f"exit {r.returncode}\n{r.stdout}{r.stderr}")
            rep = load(f"{d}/r.json")
        check([row["size"] for row in rep["rows"]] == [64, 512, 1500], f"rows {rep['rows']}")
        for row in rep["rows"]:
            check(row["sent"] == row["received_frames"] == 20000 and row["loss_ratio"] == 0, f"row {row}")
        check("1500B" in r.stdout and "512B" in r.stdout, "a table row per size")


def check_profiles():
    """config/testbed.toml with its ports overridden on the command line: passes, then fails
    a threshold given on the command line; the JUnit file has a testcase per check."""
    with VethBed(unique("lpc"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        profile = os.path.join(SRC, "config", "testbed.toml")
        ports = ["--tx", bed.ifa, "--rx", bed.ifb]

        def junit(path):
            try:
                root = ET.parse(path).getroot()
            except ET.ParseError as e:
                with open(path, errors="replace") as f:
                    raise AssertionError(f"{path}: {e}\n{f.read()}") from e
            check(root.tag == "testsuites", root.tag)
            suites = root.findall("testsuite")
            check(len(suites) == 1, "one suite")
            s = suites[0]
            cases = s.findall("testcase")
            check(int(s.get("tests")) == len(cases) and int(root.get("tests")) == len(cases), "tests counts")
            fails = [c for c in cases if c.find("failure") is not None]
            check(int(s.get("failures")) == len(fails), "failure count")
            check(all(c.get("classname") == "linerate.sweep" and c.get("name") for c in cases), "names")
            props = {p.get("name"): p.get("value") for p in s.find("properties")}
            check(props["profile"] == profile and props["backend"] == "afxdp", f"properties {props}")
            return s, cases, fails

        r = bed.run(bed.nsa, [LINERATE, "check", profile, *ports, "--junit", f"{d}/ok.xml"], timeout=120)
        check(r.returncode == 0, f"exit {r.returncode}\n{r.stdout}{r.stderr}")
        check(r.stdout.count("PASS ") == 12 and "FAIL" not in r.stdout, r.stdout)
        s, cases, fails = junit(f"{d}/ok.xml")
        check(s.get("name") == "veth test bed acceptance" and len(cases) == 12 and not fails, "12 passing checks")

        r = bed.run(bed.nsa, [LINERATE, "check", profile, *ports, "--min-throughput", "40kpps",
                              "--junit", f"{d}/fail.xml"], timeout=120)
        check(r.returncode == 1, f"exit {r.returncode}, expected 1\n{r.stdout}{r.stderr}")
        check(r.stdout.count("FAIL  received rate") == 3, r.stdout)
        _, cases, fails = junit(f"{d}/fail.xml")
        check(len(fails) == 3, f"{len(fails)} failures")
        for c in fails:
            f = c.find("failure")
            check("measured" in f.get("message") and "40 kpps" in f.text and "kpps" in f.get("message"),
                  f"failure {f.attrib} {f.text}")

        bad = os.path.join(d, "bad.toml")
        with open(bad, "w") as f:
            f.write('procedure = "sweep"\n[run]\nrate = "20kpps"\nrate-limit = 5\n')
        r = bed.run(bed.nsa, [LINERATE, "check", bad, *ports], timeout=30)
        check(r.returncode == 2 and f"{bad}:4:1: unknown key \"rate-limit\"" in r.stderr, f"{r.returncode} {r.stderr}")
        # Ports that cannot be opened: the CI server still gets a JUnit file saying why.
        r = bed.run(bed.nsa, [LINERATE, "check", profile, "--tx", "nosuch0", "--rx", bed.ifb,
                              "--junit", f"{d}/setup.xml"], timeout=30)
        check(r.returncode == 2 and 'unknown interface "nosuch0"' in r.stderr, f"{r.returncode} {r.stderr}")
        err = ET.parse(f"{d}/setup.xml").getroot().find("testsuite/testcase/error")
        check(err is not None and err.get("type") == "setup" and "nosuch0" in err.get("message"), "setup error case")
        r = bed.run(bed.nsa, [LINERATE, "check", os.path.join(d, "none.toml")], timeout=30)
        check(r.returncode == 2 and "couldn't read the profile" in r.stderr, f"{r.returncode} {r.stderr}")


if __name__ == "__main__":
    if os.geteuid() != 0:
        lrtest.skip("needs root")
    if not os.path.exists(DUT):
        lrtest.skip(f"no DUT program at {DUT} (built with the AF_XDP backend)")
    lrtest.need_root_and_hugepages()
    r = lrtest.Results()
    r.case("paced counts 10k/100k/500k, afxdp, exact at the receiving veth", rate_exact, "afxdp")
    r.case("paced counts 10k/100k/500k, dpdk net_af_xdp, exact at the receiving veth", rate_exact, "dpdk")
    r.case("sweep: a row per size, exact, afxdp", sweep_exact, "afxdp")
    r.case("sweep: a row per size, exact, dpdk", sweep_exact, "dpdk")
    r.case("RFC 2544 NDR through a DUT of known capacity, MLRsearch, afxdp", throughput_ndr, "afxdp")
    r.case("RFC 2544 NDR through a DUT of known capacity, MLRsearch, dpdk", throughput_ndr, "dpdk")
    r.case("RFC 2544 NDR through a DUT of known capacity, binary search, afxdp", throughput_ndr, "afxdp", "binary", 2.0)
    r.case("RFC 2544 back-to-back, frame loss, latency through the DUT", rfc2544_others)
    r.case("check: a profile passes, fails, and bad files are refused; JUnit", check_profiles)
    r.finish()
