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

# The shaper's rate: a quarter of what the bed carries, at most 10 kpps. The kernel DUT runs on
# the generator's own core: every frame it forwards costs the sender some 12-18 us, so the
# generator's peak through the DUT falls as the shaper's rate rises (measured as fast as it
# can: 312k at a 10k shaper, 214k at 20k, 82k at 40k, 63k at 64k, where it holds the shaper's
# own rate and the shaper drops nothing). At 20 kpps the ceiling came to 24-126 kpps quiet and
# once to just above the shaper beside a CPU-bound process.
MOST_PPS = 10_000
# The search can find the NDR only if the generator offers more than the most a 1 s trial
# carries without loss (the shaper's rate, bucket and queue); by this much at least.
HEADROOM = 1.25
BED_ATTEMPTS = 2

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
    its queue). The DUT's own counters account for every frame of every trial.

    A host too busy to offer HEADROOM times what a trial carries without loss cannot show the
    NDR: the honest answer is then "NDR >= the ceiling (generator-limited)". That outcome is
    checked for what it is and the case runs again with the shaper at half its rate or a quarter
    of the ceiling it measured, whichever is lower, at most BED_ATTEMPTS runs in all. An
    at-least NDR from a generator with the headroom fails at once."""
    shaped = paced_load(MOST_PPS)
    for attempt in range(1, BED_ATTEMPTS + 1):
        ceiling = csit_through_shaper(shaped)
        if ceiling is None:
            return
        print(f"  attempt {attempt} of {BED_ATTEMPTS}: the generator's ceiling through the DUT, {ceiling:,.0f} pps, "
              f"is not {HEADROOM} times what a trial at the shaper's {shaped:,} pps passes without loss", flush=True)
        shaped = int(min(shaped / 2, ceiling / 4) // 1000 * 1000)
        assert shaped >= 1000, f"the generator holds only {ceiling:,.0f} pps through the DUT: too little to test on"
    raise AssertionError(f"the generator lacked the headroom over the shaper in all {BED_ATTEMPTS} runs")


def csit_through_shaper(shaped):
    """One csit search through a shaper of `shaped` pps. Returns None when it found the NDR
    where the shaper puts it, or the generator's ceiling when that was too low to find it."""
    with DutBed(unique("lkn")) as bed:
        bed.start_kernel_dut(shaped)
        shaper = dict(bed.kernel_dut)
        before = bed.kernel_dut_counters()
        r, rep = linerate(bed, "throughput", ["-q", "--preset", "csit"], 1800)
        dut = delta(before, bed.kernel_dut_counters())
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert rep["verdict"]["result"] == "pass", rep["verdict"]
    sent = sum(t["sent"] for t in rep["trials"])
    received = sum(t["received"] for t in rep["trials"])
    assert dut["ingress"] == sent and dut["ingress_dropped"] == 0, (dut, sent)
    assert dut["shaped"] == received and dut["shaped"] + dut["dropped"] == sent, (dut, sent, received)
    assert dut["queued"] == 0, dut
    row = rep["rows"][0]
    ceiling = row["range"]["generator_ceiling_pps"]
    ndr = next(g for g in row["goals"] if g["name"] == "NDR")
    lossless = shaper["pps"] + (shaper["bucket"] + shaper["queue"]) / ndr["final_trial_s"]
    if ndr["at_least"] and ceiling < HEADROOM * lossless:
        assert row["range"]["generator_limited"], row["range"]
        return ceiling
    assert ceiling > shaped, row["range"]
    assert ndr["regular"] and not ndr["at_least"], ndr
    lower, upper = ndr["lower_bound"]["pps"], ndr["upper_bound"]["pps"]
    assert (upper - lower) / upper <= ndr["width"] * (1 + 1e-9), ndr
    assert shaped * (1 - ndr["width"]) <= lower and upper <= lossless * (1 + ndr["width"]), \
        f"NDR bounds [{lower}, {upper}] for a shaper of {shaped} pps passing at most {lossless:.0f} in 1 s"
    print(f"NDR [{lower:,.0f}, {upper:,.0f}] pps through a {shaped:,} pps shaper; {len(rep['trials'])} trials; "
          f"{rep['verdict']['reason']}")
    for t in rep["trials"]:  # where the invalid ones were, against the generator's ceiling
        if not t["valid"] and not t["probe"]:
            print(f"  invalid: {t['load_pps']:,.0f} pps ({100 * t['load_pps'] / ceiling:.0f} % of the ceiling "
                  f"{ceiling:,.0f}), {t['duration_s']} s, the sender off its CPU {1e3 * t['sender_cpu_wait_s']:.1f} ms "
                  f"in all: {t['invalid_reason']}")
    print_validity_by_load(rep["trials"], ceiling)
    return None


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
