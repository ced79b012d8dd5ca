"""A device under test made of the kernel's own forwarding path, as in many labs: a Linux
bridge in its own namespace with an HTB shaper on its egress port, between linerate's two
ports (testbed.DutBed.start_kernel_dut). Its own counters (the bridge port's, the shaper's) must
add up to linerate's, frame for frame, and the RFC 2544 throughput search with CSIT's preset and
every option at its default must find the rate it shapes to."""
import json
import os
import tempfile

import pytest

from lrtest import LINERATE, paced_load
from testbed import DutBed, unique

import jsonschema

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "report.schema.json")) as _f:
    SCHEMA = json.load(_f)

# The shaper's rate: a quarter of what the bed carries, at most 20 kpps, so that a generator
# sharing two cores with the receiver, the bridge and the shaper holds it with room to spare.
MOST_PPS = 20_000

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (namespaces, XDP)")


def linerate(bed, command, args, timeout):
    with tempfile.TemporaryDirectory() as d:
        r = bed.run(bed.nsa, [LINERATE, command, "--backend", "afxdp", "--tx", bed.ifa, "--rx", bed.ifd, *args,
                              "--json", f"{d}/r.json"], timeout=timeout)
        rep = None
        if os.path.exists(f"{d}/r.json"):
            with open(f"{d}/r.json") as f:
                rep = json.load(f)
    assert rep is not None, f"{command}: exit {r.returncode}\n{r.stdout[-4000:]}\n{r.stderr[-2000:]}"
    jsonschema.validate(rep, SCHEMA)
    return r, rep


def delta(before, after):
    return {k: after[k] - before[k] for k in ("ingress", "ingress_dropped", "shaped", "dropped", "egress")} | {
        "queued": after["queued"]}


def test_the_shapers_counters_are_linerates():
    """Half again the shaped rate for 2 s: every frame linerate sent reached the bridge; the
    shaper sent on or dropped each; what it sent on is what linerate received; linerate puts
    the loss on the path under test, none on this host."""
    shaped = paced_load(MOST_PPS)
    with DutBed(unique("lkc")) as bed:
        bed.start_kernel_dut(shaped)
        before = bed.kernel_dut_counters()
        load = shaped * 3 // 2
        r, rep = linerate(bed, "run", ["-q", "--rate", str(load), "--count", str(2 * load)], 60)
        dut = delta(before, bed.kernel_dut_counters())
    assert r.returncode == 0, r.stdout + r.stderr
    sent, received = rep["totals"]["tx"]["packets"], rep["totals"]["rx_classes"]["distinct"]
    assert sent == 2 * load
    assert dut["ingress"] == sent and dut["ingress_dropped"] == 0, dut
    assert dut["shaped"] + dut["dropped"] == sent and dut["queued"] == 0, dut
    assert dut["shaped"] == dut["egress"] == received, (dut, received)
    assert dut["dropped"] > 0, "the shaper had to drop at 150 % of its rate"
    account = rep["totals"]["loss_account"]
    assert account["lost"] == dut["dropped"] == account["unaccounted"], account
    assert account["host_rx_dropped"] == 0 and account["egress_dropped"] == 0, account


def test_csit_finds_the_shaped_rate_with_default_options():
    """`linerate throughput --preset csit` and nothing else: the generator's ceiling is measured
    first, the search runs CSIT's goals (NDR and 0.5 % PDR, 1 s trials) and the NDR it reports
    is regular, within the goal width, and where the shaper puts it: at least its rate (less
    the width), at most what a 1 s trial can pass without loss (the rate plus its bucket and
    its queue). The DUT's own counters account for every frame of every trial."""
    shaped = paced_load(MOST_PPS)
    with DutBed(unique("lkn")) as bed:
        bed.start_kernel_dut(shaped)
        shaper = dict(bed.kernel_dut)
        before = bed.kernel_dut_counters()
        r, rep = linerate(bed, "throughput", ["-q", "--preset", "csit"], 1800)
        dut = delta(before, bed.kernel_dut_counters())
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert rep["verdict"]["result"] == "pass", rep["verdict"]
    row = rep["rows"][0]
    assert row["range"]["generator_ceiling_pps"] > shaped, row["range"]
    ndr = next(g for g in row["goals"] if g["name"] == "NDR")
    assert ndr["regular"] and not ndr["at_least"], ndr
    lower, upper = ndr["lower_bound"]["pps"], ndr["upper_bound"]["pps"]
    assert (upper - lower) / upper <= ndr["width"] * (1 + 1e-9), ndr
    lossless = shaper["pps"] + (shaper["bucket"] + shaper["queue"]) / ndr["final_trial_s"]
    assert shaped * (1 - ndr["width"]) <= lower and upper <= lossless * (1 + ndr["width"]), \
        f"NDR bounds [{lower}, {upper}] for a shaper of {shaped} pps passing at most {lossless:.0f} in 1 s"
    sent = sum(t["sent"] for t in rep["trials"])
    received = sum(t["received"] for t in rep["trials"])
    assert dut["ingress"] == sent and dut["ingress_dropped"] == 0, (dut, sent)
    assert dut["shaped"] == received and dut["shaped"] + dut["dropped"] == sent, (dut, sent, received)
    assert dut["queued"] == 0, dut
    print(f"NDR [{lower:,.0f}, {upper:,.0f}] pps through a {shaped:,} pps shaper; {len(rep['trials'])} trials; "
          f"{rep['verdict']['reason']}")
    ceiling = row["range"]["generator_ceiling_pps"]
    for t in rep["trials"]:  # where the invalid ones were, against the generator's ceiling
        if not t["valid"] and not t["probe"]:
            print(f"  invalid: {t['load_pps']:,.0f} pps ({100 * t['load_pps'] / ceiling:.0f} % of the ceiling "
                  f"{ceiling:,.0f}), {t['duration_s']} s, the sender off its CPU {1e3 * t['sender_cpu_wait_s']:.1f} ms "
                  f"in all: {t['invalid_reason']}")
    print_validity_by_load(rep["trials"], ceiling)


def print_validity_by_load(trials, ceiling):
    """The share of valid trials in bands of the load against the generator's ceiling, with the
    longest stall and the longest time a sender waited for its CPU in each band."""
    print("  load (% of ceiling)  trials  valid  valid %  longest stall  longest CPU wait")
    for low, high in ((0, 30), (30, 50), (50, 70), (70, 90), (90, 101)):
        band = [t for t in trials if not t["probe"] and t["load_pps"]
                and low <= 100 * t["load_pps"] / ceiling < high]
        if band:
            valid = sum(t["valid"] for t in band)
            print(f"  {low:>3}-{min(high, 100):<3} %            {len(band):>6}  {valid:>5}  {100 * valid / len(band):6.1f}  "
                  f"{1e3 * max(t['longest_stall_s'] for t in band):10.1f} ms  "
                  f"{1e3 * max(t['sender_cpu_wait_s'] for t in band):12.1f} ms")
