"""`linerate impair`, the network emulator (docs/impair.md), between the two middle ports of the
DUT test bed (testbed.DutBed): a signed `linerate run` sends on <p>0 and measures on <p>3 in
<p>-a, and the emulator in <p>-d joins <p>1 and <p>2. What the emulator says it did must be
what the run measured, frame for frame: every frame it lost is one the run lost, every copy a
duplicate, every frame it sent after a later one a reordered one, every corrupted frame one
the receiver refused; its counts add up; a seed loses the same frames again, and the other
direction's seed is the documented one; the loss ratio is within the model's 99.9 % interval;
no frame leaves before its delay; an impossible setting is refused (exit 2) before anything is
attached.

The timing (the delay and the jitter's distribution as the frames got them, the link's rate)
belongs to the `timing` suite: delay_accuracy, jitter_shape and link_rate below check it on
runs of delayed, jittered and shaped_link, whose counts are asserted here on every attempt."""
import math
import os
import signal
import tempfile

import jsonschema
import pytest

from lrtest import LINERATE, check, paced_load, read_json, timing_check
from testbed import DutBed, receiving, stream_lines, unique, wait_stream

pytestmark = pytest.mark.usefixtures("root")

SCHEMA = read_json(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                                "report.schema.json"))

# The most frames/s a case offers: sender, receiver and emulator share the two cores, so a
# quarter of what the bed carries (lrtest.paced_load) and at most this.
MOST_PPS = 20_000
# A 64-byte frame on the wire at L1: the frame and 20 bytes (preamble, SFD, gap), in bits.
L1_BITS_64 = (64 + 20) * 8
# Two-sided 99.9 %: the standard normal's quantile, and the Kolmogorov distribution's
# (sqrt(-ln(0.0005) / 2)): a KS distance above KS_999 / sqrt(n) has a 0.1 % chance.
Z_999 = 3.2905
KS_999 = math.sqrt(-math.log(0.0005) / 2)


def ns_of(t):
    """ns of "200us", "2ms", "1s" or "0"."""
    for unit, mult in (("us", 1_000), ("ms", 1_000_000), ("s", 1_000_000_000)):
        if t.endswith(unit):
            return int(float(t[:-len(unit)]) * mult)
    return int(t)


class Emulator:
    """`linerate impair` in the DUT namespace between <p>1 and <p>2. On entry it is started and
    waited for: linerate's XDP program on each port it receives on, and a first interval of
    its workers (--json-stream). On a clean exit it is stopped with SIGINT, must exit 0 with a
    report that passes the schema and whose every direction adds up (`report`, `output`)."""

    def __init__(self, bed, d, args, direction="a-to-b", name="impair", dpdk=False):
        self.bed, self.args, self.direction, self.dpdk = bed, list(args), direction, dpdk
        self.json, self.stream = f"{d}/{name}.json", f"{d}/{name}.jsonl"
        self.proc = self.report = self.output = None

    def __enter__(self):
        b = self.bed
        if self.dpdk:  # DPDK's net_af_xdp PMD on the same two interfaces, its ports named by it
            ports = ["--backend", "dpdk", "--between", "net_af_xdp0,net_af_xdp1"]
            eal = ["--", f"--vdev=net_af_xdp0,iface={b.ifb},busy_budget=0",
                   f"--vdev=net_af_xdp1,iface={b.ifc},busy_budget=0", "--no-pci", "--lcores=0@0,1@1,2@0"]
        else:
            ports, eal = ["--backend", "afxdp", "--between", f"{b.ifb},{b.ifc}"], []
        self.proc = b.start(b.nsd, [
            LINERATE, "impair", *ports, "--direction", self.direction, "-q", "--interval", "100ms",
            "--duration", "600s", "--json", self.json, "--json-stream", self.stream, *self.args, *eal])
        for ifc in {"a-to-b": [self.bed.ifb], "b-to-a": [self.bed.ifc],
                    "both": [self.bed.ifb, self.bed.ifc]}[self.direction]:
            self.bed.wait_xdp(self.bed.nsd, ifc, self.proc)
        wait_stream(self.stream, receiving, self.proc, what="the emulator's first interval")
        return self

    def __exit__(self, exc_type, *_):
        if exc_type is not None:
            return False  # the bed kills it
        self.proc.send_signal(signal.SIGINT)
        self.output, _ = self.proc.communicate(timeout=60)
        print(self.output[-3000:], flush=True)  # its start line and summary, for the log
        check(self.proc.returncode == 0, f"the emulator: exit {self.proc.returncode}")
        self.report = read_json(self.json)
        jsonschema.validate(self.report, SCHEMA)
        check(self.report["verdict"]["result"] == "pass", f"the emulator's verdict {self.report['verdict']}")
        for e in self.report["impair"]:
            adds_up(e)
        return False


def adds_up(e):
    """The emulator's invariant for one direction, and what its egress device took."""
    c = e["counts"]
    out = c["dropped"] + c["oversize"] + c["overflowed"] + c["forwarded"] + c["held"]
    check(c["received"] + c["duplicated"] == out, f"{e['from']} -> {e['to']}: the counts do not add up: {c}")
    check(c["forwarded"] == e["sent"] + e["unsent"], f"{e['from']} -> {e['to']}: forwarded {c['forwarded']}, "
                                                     f"the device confirmed {e['sent']} and left {e['unsent']}")
    # The tests' loads are ones the bed carries: the host dropped nothing before the emulator.
    check(e["ingress_host_dropped"] == 0, f"{e['from']} -> {e['to']}: the host dropped {e['ingress_host_dropped']} "
                                          f"frames before the emulator received them")


def direction(report, frm, to):
    es = [e for e in report["impair"] if e["from"] == frm and e["to"] == to]
    check(len(es) == 1, f"one entry {frm} -> {to} in {report['impair']}")
    return es[0]


def one_way(report, bed, dpdk=False):
    """The only direction of an a-to-b emulator: <p>1 -> <p>2 (DPDK: net_af_xdp0 -> net_af_xdp1),
    queue 0."""
    check(len(report["impair"]) == 1, f"one direction: {report['impair']}")
    e = direction(report, "net_af_xdp0" if dpdk else bed.ifb, "net_af_xdp1" if dpdk else bed.ifc)
    check(e["queue"] == 0, f"queue {e['queue']}")
    return e


def generate(bed, d, args, name="run", tx=None, rx=None):
    """A signed afxdp run from `tx` (default <p>0) to `rx` (default <p>3) in <p>-a; its report."""
    r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", tx or bed.ifa, "--rx", rx or bed.ifd,
                          "--json", f"{d}/{name}.json", *args], timeout=300)
    check(r.returncode == 0, f"the run: exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}")
    rep = read_json(f"{d}/{name}.json")
    jsonschema.validate(rep, SCHEMA)
    return rep


def paced(count, rate, drain="1s"):
    return ["--count", str(count), "--rate", str(rate), "--drain", drain]


def arrived_as_sent(rep, e, em):
    """Every frame the run sent reached the emulator, and every frame the emulator sent reached
    the run's receiver: no host dropped one on the way (else the counts below mean nothing)."""
    t, c = rep["totals"], e["counts"]
    check(c["received"] == t["tx"]["packets"],
          f"the run sent {t['tx']['packets']}, the emulator received {c['received']}; its ports "
          f"{em['port_counters']}")
    check(c["held"] == 0 and c["oversize"] == 0 and e["sent"] == c["forwarded"] and e["unsent"] == 0,
          f"after the run's drain the emulator holds nothing and its device took every frame: {e}")
    check(t["rx"]["packets"] == c["forwarded"],
          f"the emulator sent {c['forwarded']}, the run received {t['rx']['packets']}: {t['loss_account']}")


def passed_whole(rep, e, em, n):
    """A path that only delays: all n frames through, once each, nothing else."""
    t, k, c = rep["totals"], rep["totals"]["rx_classes"], e["counts"]
    check(t["tx"]["packets"] == n, f"sent {t['tx']['packets']} of {n}")
    arrived_as_sent(rep, e, em)
    check(c["forwarded"] == n and c["dropped"] == c["overflowed"] == c["duplicated"] == c["corrupted"] == 0, f"{c}")
    check(k["distinct"] == n and t["lost"] == 0 and k["duplicates"] == k["late"] == k["malformed"] == 0, f"{k}")


# ---- Every decision, counted as the receiver counts it ----

# case -> the emulator's options; the run sends COUNT frames through it.
DECISIONS = {
    "loss_duplicate_reorder": ["--delay", "1ms", "--loss", "1%", "--duplicate", "1%", "--reorder", "2%",
                               "--reorder-gap", "5", "--corrupt", "0", "--seed", "3"],
    "corruption": ["--corrupt", "2%", "--seed", "3"],
}
COUNT = 50_000


@pytest.mark.parametrize("case", DECISIONS)  # one case per key
def test_every_decision_is_what_the_receiver_counted(case):
    """Loss, duplicates and reordering (every 5th frame may skip a 1 ms delay): the emulator
    forwarded sent - dropped + duplicated; the receiver lost exactly the dropped frames, saw
    exactly the duplicated ones twice and exactly the reordered ones out of order, and nothing
    late. Corruption (one payload bit): every corrupted frame, and no other, failed the
    receiver's checks (malformed, or foreign when the flip hit the signature's magic or nonce)
    and is lost."""
    rate = paced_load(MOST_PPS)
    with DutBed(unique("lie")) as bed, tempfile.TemporaryDirectory() as d:
        with Emulator(bed, d, DECISIONS[case]) as em:
            rep = generate(bed, d, paced(COUNT, rate))
        e = one_way(em.report, bed)
    t, k, c = rep["totals"], rep["totals"]["rx_classes"], e["counts"]
    print(f"     {case}: emulator {c}; receiver {k}, lost {t['lost']}")
    check(t["tx"]["packets"] == COUNT, f"sent {t['tx']['packets']} of {COUNT}")
    arrived_as_sent(rep, e, em.report)
    check(c["overflowed"] == 0, f"overflowed {c['overflowed']} with the default --limit")
    check(c["forwarded"] == COUNT - c["dropped"] + c["duplicated"], f"{c}")
    if case == "corruption":
        check(c["corrupted"] > 0 and c["dropped"] == c["duplicated"] == c["early"] == c["reordered"] == 0, f"{c}")
        refused = k["malformed"] + k["foreign"]  # foreign_other_run is a part of foreign
        check(refused == c["corrupted"],
              f"the receiver refused {refused} frames ({k}), {c['corrupted']} were corrupted")
        check(k["distinct"] == COUNT - c["corrupted"] and t["lost"] == c["corrupted"], f"{k}, lost {t['lost']}")
        check(k["duplicates"] == k["reordered"] == k["late"] == 0, f"{k}")
        return
    check(c["dropped"] > 0 and c["duplicated"] > 0 and c["early"] > 0 and c["reordered"] > 0,
          f"each decision was taken at least once: {c}")
    check(c["early"] <= COUNT // 5, f"{c['early']} early, but only every 5th of {COUNT} frames may be")
    check(c["corrupted"] == 0, f"{c}")
    check(t["lost"] == c["dropped"] and k["distinct"] == COUNT - c["dropped"],
          f"the receiver lost {t['lost']}, the emulator dropped {c['dropped']}")
    check(k["duplicates"] == c["duplicated"], f"the receiver saw {k['duplicates']} duplicates, the emulator made "
                                              f"{c['duplicated']}")
    check(k["reordered"] == c["reordered"], f"the receiver counted {k['reordered']} reordered, the emulator sent "
                                            f"{c['reordered']} after a later frame")
    check(k["late"] == k["malformed"] == k["foreign"] == 0, f"{k}")


def test_the_dpdk_backend_forwards_and_counts_alike(hugepages):
    """The same emulator on DPDK (net_af_xdp ports on the same interfaces): 1 ms of delay and
    1 % loss, the receiver's loss exactly the emulator's drops, nothing else changed."""
    rate = paced_load(MOST_PPS)
    n = 20_000
    with DutBed(unique("lid")) as bed, tempfile.TemporaryDirectory() as d:
        with Emulator(bed, d, ["--delay", "1ms", "--loss", "1%", "--seed", "5"], dpdk=True) as em:
            rep = generate(bed, d, paced(n, rate))
        e = one_way(em.report, bed, dpdk=True)
    t, k, c = rep["totals"], rep["totals"]["rx_classes"], e["counts"]
    print(f"     dpdk: emulator {c}; receiver {k}, lost {t['lost']}")
    check(c["received"] == t["tx"]["packets"] == n, f"sent {t['tx']['packets']}, the emulator received {c['received']}")
    check(c["held"] == 0 and e["sent"] == c["forwarded"] == n - c["dropped"], f"{e}")
    check(c["dropped"] > 0 and t["lost"] == c["dropped"] and k["distinct"] == n - c["dropped"], f"{k}, {c}")
    check(k["duplicates"] == k["reordered"] == k["malformed"] == 0, f"{k}")
    check(e["held_time"]["min_ns"] >= 1_000_000, f"a frame left before its 1 ms: {e['held_time']}")


# ---- The loss models against their statistics ----

def binomial_interval(n, p, confidence=0.999):
    """The central interval [lo, hi] of a Binomial(n, p) count, exactly: P(X < lo) and P(X > hi)
    are each at most (1 - confidence) / 2."""
    tail = (1 - confidence) / 2
    const = math.lgamma(n + 1)
    cdf, lo = 0.0, None
    for x in range(n + 1):
        log_pmf = const - math.lgamma(x + 1) - math.lgamma(n - x + 1) + x * math.log(p) + (n - x) * math.log1p(-p)
        cdf += math.exp(log_pmf)
        if lo is None and cdf > tail:
            lo = x
        if cdf >= 1 - tail:
            return lo, x
    return lo, n


def gilbert_interval(n, p, r, h, k, z=Z_999):
    """99.9 % (z) interval of the frames a Gilbert-Elliott path loses of n, by the central limit
    theorem for a Markov chain: the states are a two-state chain (good -> bad with P, back with
    R; stationary share of bad pi = P / (P + R)), a frame is lost with H in the bad state and K
    in the good one. The mean is n (pi H + (1 - pi) K) (spec::ImpairPlan::mean_loss); the
    losses are correlated through the state, whose autocorrelation at lag j is lambda^j with
    lambda = 1 - P - R, so the variance is n [m (1 - m) + 2 (H - K)^2 pi (1 - pi) lambda /
    (1 - lambda)]: for 1 %/25 % that is 6.7 times a Bernoulli path's of the same mean (losses
    come in bursts). The path starts in the good state: that lowers the mean by less than a
    frame."""
    pi = p / (p + r)
    m = pi * h + (1 - pi) * k
    lam = 1 - p - r
    sd = math.sqrt(n * (m * (1 - m) + 2 * (h - k) ** 2 * pi * (1 - pi) * lam / (1 - lam)))
    return n * m - z * sd, n * m + z * sd


# case -> (the emulator's options, the model's parameters: Bernoulli p, or Gilbert P, R, H, K)
LOSS_MODELS = {
    "bernoulli": (["--loss", "0.5%"], [0.005]),
    "gilbert": (["--loss-model", "gilbert:1,25"], [0.01, 0.25, 1.0, 0.0]),
}
LOSS_FRAMES = 100_000


@pytest.mark.parametrize("case", LOSS_MODELS)  # one case per key
def test_loss_ratio_within_the_models_interval(case):
    """100,000 frames through --loss 0.5 %: the frames dropped within the binomial count's exact
    99.9 % interval (428 to 575); through --loss-model gilbert:1,25 (bursts of 4 frames on
    average, one every 100 frames): within the Markov chain's 99.9 % interval around its mean
    3.85 % (gilbert_interval: 3846 +- 518). The seed is fixed, so the answer is the same on
    every run. And the receiver lost exactly those frames."""
    args, params = LOSS_MODELS[case]
    rate = paced_load(MOST_PPS)
    with DutBed(unique("lil")) as bed, tempfile.TemporaryDirectory() as d:
        with Emulator(bed, d, args) as em:
            rep = generate(bed, d, paced(LOSS_FRAMES, rate))
        e = one_way(em.report, bed)
    c, t = e["counts"], rep["totals"]
    check(t["tx"]["packets"] == LOSS_FRAMES, f"sent {t['tx']['packets']}")
    arrived_as_sent(rep, e, em.report)
    n = c["received"]
    lo, hi = binomial_interval(n, params[0]) if case == "bernoulli" else gilbert_interval(n, *params)
    print(f"     {case}: dropped {c['dropped']} of {n} ({100 * c['dropped'] / n:.3f} %), 99.9 % interval "
          f"[{lo:.0f}, {hi:.0f}]")
    check(lo <= c["dropped"] <= hi, f"{case}: dropped {c['dropped']} of {n}, outside [{lo:.0f}, {hi:.0f}]")
    check(t["lost"] == c["dropped"] and c["forwarded"] == n - c["dropped"],
          f"the receiver lost {t['lost']}, the emulator dropped {c['dropped']}")


# ---- The seed ----

SEED = 11
# The b-to-a direction's seed is --seed plus this (spec: per direction and queue, seed +
# 1000003 for b-to-a + the queue).
B_TO_A_SEED = 1_000_003


def fnv1a(numbers):
    """FNV-1a (64 bits) over each number's 8 bytes, least significant first: drop_digest."""
    h = 0xcbf29ce484222325
    for x in numbers:
        for b in range(8):
            h = ((h ^ ((x >> (8 * b)) & 0xff)) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def test_the_seed_decides_which_frames_are_lost():
    """20,000 frames at 2 % loss, four times through one bed: the same --seed drops the same
    frames (the same drop_digest and count); seed + 1000003 drops others; and the b-to-a
    direction with --seed S drops what a-to-b drops with S + 1000003, its documented seed. Each
    time the receiver lost exactly the dropped frames."""
    n, rate = 20_000, paced_load(MOST_PPS)
    runs = {}
    with DutBed(unique("lis")) as bed, tempfile.TemporaryDirectory() as d:
        for name, seed, way in (("first", SEED, "a-to-b"), ("again", SEED, "a-to-b"),
                                ("other", SEED + B_TO_A_SEED, "a-to-b"), ("reverse", SEED, "b-to-a")):
            with Emulator(bed, d, ["--loss", "2%", "--seed", str(seed)], direction=way, name=name) as em:
                ports = (bed.ifa, bed.ifd) if way == "a-to-b" else (bed.ifd, bed.ifa)
                rep = generate(bed, d, paced(n, rate), name=f"{name}-run", tx=ports[0], rx=ports[1])
            check(len(em.report["impair"]) == 1, f"{name}: {em.report['impair']}")
            e = direction(em.report, *((bed.ifb, bed.ifc) if way == "a-to-b" else (bed.ifc, bed.ifb)))
            check(rep["totals"]["tx"]["packets"] == n, f"{name}: sent {rep['totals']['tx']['packets']}")
            arrived_as_sent(rep, e, em.report)
            check(rep["totals"]["lost"] == e["counts"]["dropped"] > 0,
                  f"{name}: the receiver lost {rep['totals']['lost']}, the emulator dropped {e['counts']['dropped']}")
            runs[name] = (e["counts"]["dropped"], e["counts"]["drop_digest"])
            print(f"     {name} (seed {seed}, {way}): dropped {runs[name][0]}, digest {runs[name][1]}")
    check(runs["again"] == runs["first"], f"the same seed, other frames: {runs}")
    check(runs["other"][1] != runs["first"][1], f"another seed, the same frames: {runs}")
    check(runs["reverse"] == runs["other"], f"b-to-a with seed {SEED} is not a-to-b with seed "
                                            f"{SEED + B_TO_A_SEED}: {runs}")


def test_drop_digest_is_fnv1a_of_the_lost_arrival_numbers():
    """--loss 100 %: every one of 1000 frames is dropped, so drop_digest is FNV-1a over the
    arrival numbers 0..999, computed here; nothing was forwarded and the receiver lost all."""
    n = 1000
    with DutBed(unique("lig")) as bed, tempfile.TemporaryDirectory() as d:
        with Emulator(bed, d, ["--loss", "100%"]) as em:
            rep = generate(bed, d, paced(n, 10_000, drain="300ms"))
        e = one_way(em.report, bed)
    c = e["counts"]
    check(c["received"] == n and c["dropped"] == n and c["forwarded"] == 0 and e["sent"] == 0, f"{c}")
    check(c["drop_digest"] == fnv1a(range(n)), f"drop_digest {c['drop_digest']}, FNV-1a of 0..{n - 1} is "
                                               f"{fnv1a(range(n))}")
    check(rep["totals"]["lost"] == n and rep["totals"]["rx_classes"]["distinct"] == 0, f"{rep['totals']}")


# ---- Both ways ----

def test_both_directions_forward_and_impair_each_on_its_own():
    """--direction both: a run from <p>0 to <p>3, then one from <p>3 to <p>0, through one
    emulator (0.5 ms, 1 % loss): two entries in "impair", each received exactly its run's
    frames and dropped exactly what that run lost, with seeds of their own (other frames);
    the JSON lines end with the same report."""
    n, rate = 20_000, paced_load(MOST_PPS)
    with DutBed(unique("lib")) as bed, tempfile.TemporaryDirectory() as d:
        with Emulator(bed, d, ["--delay", "500us", "--loss", "1%", "--seed", "5"], direction="both") as em:
            there = generate(bed, d, paced(n, rate), name="there")
            back = generate(bed, d, paced(n, rate), name="back", tx=bed.ifd, rx=bed.ifa)
        check(len(em.report["impair"]) == 2, f"{em.report['impair']}")
        ways = {"there": (there, direction(em.report, bed.ifb, bed.ifc)),
                "back": (back, direction(em.report, bed.ifc, bed.ifb))}
        end = stream_lines(em.stream)[-1]
    for name, (rep, e) in ways.items():
        c = e["counts"]
        print(f"     {name}: {e['from']} -> {e['to']}: {c}")
        check(rep["totals"]["tx"]["packets"] == n, f"{name}: sent {rep['totals']['tx']['packets']}")
        arrived_as_sent(rep, e, em.report)
        check(c["dropped"] > 0 and rep["totals"]["lost"] == c["dropped"],
              f"{name}: the receiver lost {rep['totals']['lost']}, the emulator dropped {c['dropped']}")
        check(e["held_time"]["min_ns"] >= 500_000, f"{name}: held {e['held_time']}")
    check(ways["there"][1]["counts"]["drop_digest"] != ways["back"][1]["counts"]["drop_digest"],
          "both directions dropped the same frames: one seed for both")
    check(end["type"] == "end" and end["report"]["impair"] == em.report["impair"], f"the last JSON line: {end}")


# ---- Refused before anything is attached ----

# case -> (the options, the message; {a}, {b}: the ports, {limit}, {frame}: computed)
REFUSALS = {
    "jitter_above_delay": (["--delay", "1ms", "--jitter", "2ms"],
                           "--jitter 2ms is larger than --delay 1ms: with frames kept in order the delays would not "
                           "have the asked distribution; give --jitter-reorder"),
    "loss_and_loss_model": (["--loss", "1%", "--loss-model", "gilbert:1,25"],
                            "--loss and --loss-model: give one of them"),
    "loss_above_100": (["--loss", "150%"], 'invalid --loss "150%": expected a percentage between 0 and 100'),
    "memory": (["--direction", "both", "--limit", "{limit}", "--max-frame", "{frame}"],
               "--limit {limit} frames of up to {frame} bytes, in each of 2 stores (a direction and queue each), "
               "need"),
    "rate_pps_above_limit": (["--delay", "100ms", "--rate", "20kpps", "--limit", "1000"],
                             "100ms of delay at --rate 20kpps holds 2000 frames of 64 bytes on average: more than "
                             "--limit 1000; raise --limit (each frame takes 1518 bytes of memory)"),
    "rate_bps_above_limit": (["--delay", "100ms", "--jitter", "10ms", "--rate", "10Mbps", "--limit", "1000"],
                             "100ms of delay and its jitter at --rate 10Mbps holds 1637 frames of 64 bytes on "
                             "average: more than --limit 1000"),
    "rate_percent": (["--rate", "50%"],
                     "invalid --rate \"50%\": the emulated link's rate in bits or frames per second, not a percentage"),
    "same_port_twice": (["--between", "{a},{a}"], 'invalid --between "{a},{a}": two different ports A,B'),
    "one_port": (["--between", "{a}"], 'invalid --between "{a}": two different ports A,B'),
}


def over_half_the_memory():
    """--limit and --max-frame whose frame memory, in the two stores of --direction both, is
    more than half of this host's RAM (what the emulator checks against: sysinfo's total,
    /proc/meminfo's MemTotal)."""
    with open("/proc/meminfo") as f:
        ram = next(int(line.split()[1]) * 1024 for line in f if line.startswith("MemTotal:"))
    for frame in (1518, 9018):
        limit = int(ram / 2 / (2 * frame)) + 1000
        if limit <= 1 << 24:  # --limit's largest
            return limit, frame
    pytest.skip(f"{ram / 2 ** 30:.0f} GiB of RAM: no --limit reaches half of it")


@pytest.mark.parametrize("case", REFUSALS)  # one case per key
def test_refused_before_anything_is_attached(case):
    """Each impossible setting: exit 2, the reason on stderr, the start line never printed, and
    no XDP program on either port."""
    args, message = REFUSALS[case]
    with DutBed(unique("lir")) as bed:
        limit, frame = over_half_the_memory() if case == "memory" else (0, 0)
        fill = {"a": bed.ifb, "b": bed.ifc, "limit": limit, "frame": frame}
        args = [x.format(**fill) for x in args]
        between = [] if "--between" in args else ["--between", f"{bed.ifb},{bed.ifc}"]
        r = bed.run(bed.nsd, [LINERATE, "impair", "--backend", "afxdp", *between, *args], timeout=60)
        attached = [i for i in (bed.ifb, bed.ifc) if bed.xdp_attached(bed.nsd, i)]
    want = "linerate: error: " + message.format(**fill)
    check(r.returncode == 2, f"{case}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    check(want in r.stderr, f"{case}: stderr does not say\n  {want}\nit says\n  {r.stderr}")
    if case == "memory":
        check("more than half of this host's" in r.stderr and "lower --limit or --max-frame" in r.stderr, r.stderr)
    check("linerate impair:" not in r.stdout, f"{case}: it started: {r.stdout}")
    check(not attached, f"{case}: an XDP program left on {attached}")


# ---- Delay, jitter and the link's rate: the exact parts (the timing suite checks the times) ----

DELAYS = ["200us", "2ms"]
DELAY_FRAMES = 20_000


def delayed(delay):
    """DELAY_FRAMES frames at up to 10 kpps through the emulator at --delay 0 (the baseline),
    then at `delay`, on one bed: every frame through once, none lost, and none held for less
    than its delay (exact: a frame leaves only once its time has come). Returns {"baseline",
    "delayed": (the run's report, the emulator's direction)}."""
    rate = paced_load(10_000)
    want = ns_of(delay)
    out = {}
    with DutBed(unique("lid")) as bed, tempfile.TemporaryDirectory() as d:
        for name, arg in (("baseline", "0"), ("delayed", delay)):
            with Emulator(bed, d, ["--delay", arg], name=name) as em:
                rep = generate(bed, d, paced(DELAY_FRAMES, rate), name=f"{name}-run")
            e = one_way(em.report, bed)
            check(em.report["spec"]["impair"]["delay_ns"] == ns_of(arg), f"spec {em.report['spec']['impair']}")
            passed_whole(rep, e, em.report, DELAY_FRAMES)
            held = e["held_time"]
            check(held["count"] == DELAY_FRAMES and rep["latency"]["count"] == DELAY_FRAMES,
                  f"{name}: held {held}, latency {rep['latency']}")
            check(held["min_ns"] >= ns_of(arg), f"{name}: a frame left after {held['min_ns']} ns, before its delay")
            out[name] = (rep, e)
    print(f"     delay {delay} ({want} ns): held {out['delayed'][1]['held_time']}")
    return out


@pytest.mark.parametrize("delay", DELAYS)
def test_no_frame_leaves_before_its_delay(delay):
    delayed(delay)


JITTER_DISTS = ["normal", "uniform", "pareto"]
JITTER_DELAY, JITTER = "1ms", "200us"
JITTER_DELAY_NS, JITTER_NS = ns_of(JITTER_DELAY), ns_of(JITTER)
JITTER_FRAMES = 20_000


def jittered(dist):
    """JITTER_FRAMES frames at up to 10 kpps through --delay 1ms --jitter 200us --jitter-dist
    DIST --jitter-reorder (each frame its own sample, as netem does: kept in order, a frame
    would wait for the one before and the delays would not have the distribution): all
    through, the receiver's reordered count the emulator's, and none held for less than the
    distribution allows (uniform: 1 ms - 200 us; pareto: 1 ms - (2^(1/3) - 1) x 200 us, its
    smallest value below the median). Returns the emulator's direction."""
    rate = paced_load(10_000)
    with DutBed(unique("lij")) as bed, tempfile.TemporaryDirectory() as d:
        with Emulator(bed, d, ["--delay", JITTER_DELAY, "--jitter", JITTER, "--jitter-dist", dist, "--jitter-reorder",
                               "--seed", "9"]) as em:
            rep = generate(bed, d, paced(JITTER_FRAMES, rate))
        e = one_way(em.report, bed)
    c, k = e["counts"], rep["totals"]["rx_classes"]
    passed_whole(rep, e, em.report, JITTER_FRAMES)
    check(c["reordered"] > 0 and k["reordered"] == c["reordered"],
          f"{dist}: the receiver counted {k['reordered']} reordered, the emulator {c['reordered']}")
    lowest = {"normal": 0, "uniform": JITTER_DELAY_NS - JITTER_NS,
              "pareto": JITTER_DELAY_NS - (2 ** (1 / 3) - 1) * JITTER_NS}[dist]
    check(e["held_time"]["min_ns"] >= int(lowest) - 1, f"{dist}: held {e['held_time']}, none can be below {lowest:.0f}")
    check(sum(b["count"] for b in e["held_time_buckets"]) == e["held_time"]["count"] == JITTER_FRAMES,
          f"{dist}: the buckets hold every frame once")
    return e


@pytest.mark.parametrize("dist", JITTER_DISTS)
def test_jitter_reorders_as_the_receiver_counts(dist):
    jittered(dist)


LINK_RATES = ["pps", "bps"]


def shaped_link(unit):
    """A link of R frames/s (pps: --rate R pps; bps: the L1 bit rate that carries R 64-byte
    frames/s, 10 Mbit/s at most) with a queue of 100 ms of it (--limit R/10), offered 1.5 R for
    2 s: frames waited for the link (shaped) and the queue overflowed, counted; the receiver
    got exactly what the emulator forwarded and lost exactly what overflowed. Returns the
    run's report, the emulator's direction and R."""
    pps = paced_load(MOST_PPS)
    if unit == "pps":
        rate_arg, link_pps = f"{pps}pps", float(pps)
    else:
        bits = min(10_000_000, pps * L1_BITS_64)
        rate_arg, link_pps = f"{bits}bps", bits / L1_BITS_64
    limit, offered = max(1, int(link_pps / 10)), int(1.5 * link_pps)
    n = 2 * offered
    with DutBed(unique("lik")) as bed, tempfile.TemporaryDirectory() as d:
        with Emulator(bed, d, ["--rate", rate_arg, "--limit", str(limit)]) as em:
            rep = generate(bed, d, paced(n, offered, drain="2s"))
        e = one_way(em.report, bed)
    c, t = e["counts"], rep["totals"]
    print(f"     --rate {rate_arg} ({link_pps:,.1f} frames/s), --limit {limit}, offered {offered:,} pps: {c}")
    check(t["tx"]["packets"] == n, f"sent {t['tx']['packets']} of {n}")
    arrived_as_sent(rep, e, em.report)
    check(c["shaped"] > 0 and c["overflowed"] > 0, f"at 1.5 times the link's rate: {c}")
    check(c["forwarded"] == n - c["overflowed"] and c["dropped"] == 0, f"{c}")
    check(t["rx_classes"]["distinct"] == c["forwarded"] and t["lost"] == c["overflowed"],
          f"received {t['rx_classes']['distinct']}, lost {t['lost']}: {c}")
    return rep, e, link_pps


@pytest.mark.parametrize("unit", LINK_RATES)
def test_a_link_too_slow_queues_then_overflows(unit):
    shaped_link(unit)


# ---- The timing checks (for the `timing` suite: each raises TimingMiss) ----

def median_bucket(buckets, count):
    """[lower_ns, upper_ns) of the bucket holding the median (rank ceil(count / 2), as linerate's
    percentile): the true median is in it, whatever the histogram's resolution there."""
    rank, seen = max(1, math.ceil(count / 2)), 0
    for b in buckets:
        seen += b["count"]
        if seen >= rank:
            return b["lower_ns"], b["upper_ns"]
    raise AssertionError(f"{count} values but the buckets hold {seen}")


def delay_accuracy(delay):
    """The delay as the frames got it. The emulator's own held time: its median within 2 us of
    the delay (to the histogram's resolution: 1 us buckets at 200 us, 8 us at 2 ms). The run's
    one-way median less the baseline's (the same path at --delay 0) within 2 us of the delay,
    to both histograms' resolution, plus a scheduling allowance measured on the same runs: how
    late the emulator let frames leave (its held median above the delay) and how long frames
    waited at delay 0 beyond the fastest one (the baseline's median above its minimum: the
    forwarder napping 15 us between polls, the receivers' pickup), which the two runs need
    not share."""
    out = delayed(delay)
    want = ns_of(delay)
    (base, _), (run, e) = out["baseline"], out["delayed"]
    held = e["held_time"]
    lo, hi = median_bucket(e["held_time_buckets"], held["count"])
    lateness = max(0, held["p50_ns"] - want)
    wait = base["latency"]["p50_ns"] - base["latency"]["min_ns"]
    blo, bhi = median_bucket(base["latency"]["buckets"], base["latency"]["count"])
    dlo, dhi = median_bucket(run["latency"]["buckets"], run["latency"]["count"])
    tol = 2_000 + lateness + wait
    diff_lo, diff_hi = dlo - bhi, dhi - blo  # the difference of the true medians lies in (diff_lo, diff_hi)
    print(f"     delay {want / 1e3:.1f} us: the emulator held p50 {held['p50_ns'] / 1e3:.3f} us (median in "
          f"[{lo / 1e3:.3f}, {hi / 1e3:.3f}) us), mean {held['mean_ns'] / 1e3:.3f}, p99 {held['p99_ns'] / 1e3:.3f}; "
          f"one-way p50 {run['latency']['p50_ns'] / 1e3:.3f} us against {base['latency']['p50_ns'] / 1e3:.3f} at "
          f"delay 0 (min {base['latency']['min_ns'] / 1e3:.3f}): the medians differ by {diff_lo / 1e3:.3f} to "
          f"{diff_hi / 1e3:.3f} us; allowed {want / 1e3:.1f} +- {tol / 1e3:.3f} us (2 us, lateness "
          f"{lateness / 1e3:.3f}, pickup wait {wait / 1e3:.3f})")
    timing_check(lo <= want + 2_000 and hi > want,
                 f"the emulator's held median in [{lo}, {hi}) ns, the delay {want} ns (+2 us)")
    timing_check(diff_lo <= want + tol and diff_hi >= want - tol,
                 f"one-way medians {diff_lo}..{diff_hi} ns apart, the delay {want} +- {tol} ns")


def normal_cdf(x, mean, sd):
    return 0.5 * (1 + math.erf((x - mean) / (sd * math.sqrt(2))))


def jitter_model(dist):
    """The CDF of the delay --delay 1ms --jitter 200us --jitter-dist DIST asks for (ns):
    normal with that standard deviation; uniform over +- the jitter; pareto: delay + jitter x
    (Y - 2^(1/3)), Y Pareto of scale 1 and shape 3 (P(Y <= y) = 1 - y^-3), so the delay is its
    median. The clamp at 100 jitters is left out (normal never reaches it, pareto once in a
    million)."""
    d, j = JITTER_DELAY_NS, JITTER_NS
    if dist == "normal":
        return lambda x: normal_cdf(x, d, j)
    if dist == "uniform":
        return lambda x: min(1.0, max(0.0, (x - (d - j)) / (2 * j)))

    def pareto(x):
        y = (x - d) / j + 2 ** (1 / 3)
        return 0.0 if y < 1 else 1 - y ** -3
    return pareto


def ks_distance(buckets, n, cdf, late_buckets):
    """Kolmogorov-Smirnov distance of a histogram of held times from a model of the delays
    asked for, read at the bucket edges, where the empirical CDF is exact (the share of values
    below the edge): the sup over the edges is at most the sup over all x, so the test is
    conservative. A held time is the sampled delay plus the emulator's lateness, which it
    measures (late_time_buckets: on a busy host a frame may leave tens of microseconds after
    its time). With a share p of the lateness in [lo, hi), the held times below x are between
    sum p cdf(x - hi) and sum p cdf(x - lo); the distance is how far the empirical share is
    outside that band. Returns (distance, the edge where it is largest)."""
    total = sum(b["count"] for b in late_buckets)
    late = [(b["lower_ns"], b["upper_ns"], b["count"] / total) for b in late_buckets]

    def band(x):
        return (sum(p * cdf(x - hi) for lo, hi, p in late), sum(p * cdf(x - lo) for lo, hi, p in late))

    worst, at, below = 0.0, None, 0
    for b in buckets:
        for edge, share in ((b["lower_ns"], below / n), (b["upper_ns"], (below + b["count"]) / n)):
            least, most = band(edge)
            dist = max(0.0, share - most, least - share)
            if dist > worst:
                worst, at = dist, edge
        below += b["count"]
    return worst, at


def jitter_shape(dist):
    """The held times against the requested distribution, given the emulator's measured
    lateness (ks_distance): the KS distance below the 99.9 % critical value for the sample,
    1.9495 / sqrt(n): 0.0138 for 20,000 frames."""
    e = jittered(dist)
    n = e["held_time"]["count"]
    check(e["late_time"]["count"] == n, f"{dist}: a lateness for every frame held: {e['late_time']}")
    dist_ks, at = ks_distance(e["held_time_buckets"], n, jitter_model(dist), e["late_time_buckets"])
    crit = KS_999 / math.sqrt(n)
    h, late = e["held_time"], e["late_time"]
    print(f"     {dist}: {n} frames held p50 {h['p50_ns'] / 1e3:.1f} us, mean {h['mean_ns'] / 1e3:.1f}, min "
          f"{h['min_ns'] / 1e3:.1f}, max {h['max_ns'] / 1e3:.1f}; late p50 {late['p50_ns'] / 1e3:.1f} us, p99 "
          f"{late['p99_ns'] / 1e3:.1f}, max {late['max_ns'] / 1e3:.1f}; KS distance {dist_ks:.4f} (at {at} ns), "
          f"99.9 % critical {crit:.4f}")
    timing_check(dist_ks < crit, f"{dist}: KS distance {dist_ks:.4f} at {at} ns, critical {crit:.4f} for {n} frames")


def link_rate(unit):
    """The rate the run received through the overloaded link, (distinct - 1) frames over the
    first to the last arrival (totals.rx_seconds), within 0.1 % of the link's."""
    rep, e, link_pps = shaped_link(unit)
    t = rep["totals"]
    got = (t["rx_classes"]["distinct"] - 1) / t["rx_seconds"]
    err = (got - link_pps) / link_pps
    print(f"     {unit}: received {got:,.2f} frames/s over {t['rx_seconds']:.4f} s, the link {link_pps:,.2f} "
          f"({100 * err:+.4f} %)")
    timing_check(abs(err) <= 0.001, f"{unit}: received {got:,.2f} frames/s, the link carries {link_pps:,.2f} "
                                    f"({100 * err:+.4f} %, tolerance 0.1 %)")
