"""The outputs users look at, from the same counters: --json (validated against
docs/report.schema.json for every command), --json-stream (one object per interval, flushed,
then per trial and a final one equal to the report; on stdout with the console on stderr),
--csv (the interval series adds up to the totals; procedures add per-trial and per-size
tables), and --metrics (scraped while running, parsed by Prometheus' own Python parser,
consistent with the final report)."""
import csv
import json
import os
import re
import subprocess
import tempfile
import urllib.request

import jsonschema
import pytest
from prometheus_client.parser import text_string_to_metric_families

from lrtest import LINERATE, NO_PCI, RING_PAIR_ARGS, check
from testbed import VethBed, sending, unique, wait_stream, wait_until

pytestmark = pytest.mark.usefixtures("hugepages")

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "report.schema.json")
with open(SCHEMA_PATH) as f:
    SCHEMA = json.load(f)


def valid(doc, what):
    try:
        jsonschema.validate(doc, SCHEMA)
    except jsonschema.ValidationError as e:
        raise AssertionError(f"{what} does not match docs/report.schema.json: {e.message} at {list(e.absolute_path)}")


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    out = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


def listening(port):
    """Local addresses listening on TCP `port` (IPv4 and IPv6), from /proc/net/tcp{,6}."""
    out = []
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(path) as f:
            for line in list(f)[1:]:
                local, state = line.split()[1], line.split()[3]
                addr, p = local.split(":")
                if state == "0A" and int(p, 16) == port:
                    out.append(addr)
    return out


def tx_total(m):
    return sum(v for (name, labels), v in m.items()
               if name == "linerate_packets_total" and dict(labels).get("direction") == "tx")


def scrape_when(port, ready, proc, what):
    """Scrapes until ready(metrics) (the exporter serves what the stream already showed)."""
    got = {}

    def once():
        try:
            got["m"] = scrape(port)
        except OSError:  # not serving yet
            return False
        return ready(got["m"])
    wait_until(once, 10, what, proc, poll=0.05)
    return got["m"]


def test_run_outputs():
    port = 9460 + os.getpid() % 30
    with tempfile.TemporaryDirectory() as d:
        stream = f"{d}/r.jsonl"
        cmd = [LINERATE, "run", "-q", *RING_PAIR_ARGS, "--tx", "ring0", "--rx", "ring1", "--rate", "200k",
               "--duration", "1500ms", "--trials", "2", "--interval", "250ms", "--json", f"{d}/r.json",
               "--json-stream", stream, "--csv", f"{d}/r.csv", "--metrics", str(port), "--", *NO_PCI]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        # The first trial is sending: its interval went to the stream, and to the exporter.
        wait_stream(stream, lambda x: sending(x, trial=0), p, what="the first trial's first interval")
        m1 = scrape_when(port, lambda m: tx_total(m) > 0, p, "the first trial's frames in the metrics")
        # --metrics PORT without an address: loopback only, nothing on the other interfaces.
        check(listening(port) == ["0100007F"], f"listening on {listening(port)} (hex), expected only 127.0.0.1")
        # Into the second trial (the first one's latency histogram is there once it ended) and
        # its first interval with frames sent.
        wait_stream(stream, lambda x: sending(x, trial=1), p, what="the second trial's first interval")
        m2 = scrape_when(port, lambda m: m.get(("linerate_rate_packets_per_second", (("direction", "tx"),)), 0) > 0,
                         p, "the second trial's rate in the metrics")
        out, err = p.communicate(timeout=60)
        check(p.returncode == 0, f"exit {p.returncode}\n{out}{err}")
        with open(f"{d}/r.json") as f:
            rep = json.load(f)
        valid(rep, "run report")
        sent = sum(t["totals"]["tx"]["packets"] for t in rep["trials"])
        first = rep["trials"][0]
        # Prometheus: counters grow, never past the final count; the rate gauge saw the traffic.
        check(0 < tx_total(m1) < tx_total(m2) <= sent, f"tx counters {tx_total(m1)}, {tx_total(m2)}, final {sent}")
        rate = m2[("linerate_rate_packets_per_second", (("direction", "tx"),))]
        # Saw the traffic and never more than the pace (how close to 200 kpps a loaded host
        # gets is timing, not this test's).
        check(0 < rate < 250e3, f"tx rate gauge {rate}")
        check(("linerate_port_drops_total", (("cause", "no_socket"), ("port", "ring1"))) in m2, "drops by cause")
        check(any(n == "linerate_latency_seconds" for n, _ in m2), "latency gauges")
        # The first trial's latency as a histogram: every timed frame in it, the buckets cumulative.
        hist_count = m2[("linerate_frame_latency_seconds_count", (("kind", "one-way"),))]
        inf = m2[("linerate_frame_latency_seconds_bucket", (("kind", "one-way"), ("le", "+Inf")))]
        check(hist_count == first["latency"]["count"] == inf, f"histogram {hist_count}, trial 1 timed {first['latency']}")
        # JSON lines: every line valid, intervals flushed, the last one the report itself.
        with open(f"{d}/r.jsonl") as f:
            lines = [json.loads(x) for x in f]
        for i, x in enumerate(lines):
            valid(x, f"JSON line {i}")
        kinds = [x["type"] for x in lines]
        # Each trial: its start, its intervals, its result, then a line per stream (one here).
        check(kinds[0] == "trial_start" and kinds[-3:] == ["trial", "stream", "end"] and kinds.count("interval") >= 10,
              f"line types {kinds}")
        stream_lines = [x for x in lines if x["type"] == "stream"]
        check(len(stream_lines) == 2 and all(x["sent"] == t["totals"]["tx"]["packets"]
                                              for x, t in zip(stream_lines, rep["trials"])),
              f"a stream line per trial with the trial's count: {stream_lines}")
        check(lines[-1]["report"]["totals"] == rep["totals"], "the last line is the report")
        check(sum(x["tx"]["packets"] for x in lines if x["type"] == "interval") == sent, "intervals add up")
        check(kinds.count("trial") == 2, "a line per trial")
        # CSV: one row per interval, adding up to the totals.
        with open(f"{d}/r.csv") as f:
            rows = list(csv.DictReader(f))
        nint = sum(len(t["intervals"]) for t in rep["trials"])
        check(len(rows) == nint, f"{len(rows)} CSV rows, {nint} intervals")
        check(sum(int(r["tx.packets"]) for r in rows) == sent, "CSV TX adds up")
        check(sum(int(r["rx_ours"]) for r in rows) == sum(t["totals"]["rx_classes"]["ours"] for t in rep["trials"]),
              "CSV RX adds up")


def test_json_lines_on_stdout():
    with tempfile.TemporaryDirectory():
        p = subprocess.run([LINERATE, "run", *RING_PAIR_ARGS, "--tx", "ring0", "--rx", "ring1", "--count", "100k",
                            "--interval", "100ms", "--json-stream", "-", "--", *NO_PCI],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, f"exit {p.returncode}\n{p.stderr}")
        lines = [json.loads(x) for x in p.stdout.splitlines()]  # nothing but JSON on stdout
        check(lines[-1]["type"] == "end" and lines[-1]["report"]["totals"]["tx"]["packets"] == 100000, "final line")
        check("TX total" in p.stderr, "the console went to stderr")


def test_procedure_outputs():
    with tempfile.TemporaryDirectory() as d:
        p = subprocess.run([LINERATE, "sweep", "-q", *RING_PAIR_ARGS, "--tx", "ring0", "--rx", "ring1", "--sizes",
                            "64,1518", "--count", "20k", "--json", f"{d}/s.json", "--json-stream", f"{d}/s.jsonl",
                            "--csv", f"{d}/s.csv", "--", *NO_PCI], capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, f"exit {p.returncode}\n{p.stdout}{p.stderr}")
        with open(f"{d}/s.json") as f:
            rep = json.load(f)
        valid(rep, "sweep report")
        with open(f"{d}/s.jsonl") as f:
            lines = [json.loads(x) for x in f]
        for i, x in enumerate(lines):
            valid(x, f"sweep JSON line {i}")
        check([x["type"] for x in lines].count("trial") == 2 and lines[-1]["report"]["rows"] == rep["rows"], "lines")
        with open(f"{d}/s-sizes.csv") as f:
            sizes = list(csv.DictReader(f))
        check([r["size"] for r in sizes] == ["64", "1518"] and all(r["sent"] == "20000" for r in sizes), f"{sizes}")
        with open(f"{d}/s-trials.csv") as f:
            trials = list(csv.DictReader(f))
        check(len(trials) == 2 and all(t["received"] == "20000" for t in trials), f"{trials}")


def chromium():
    for c in ("chromium", "chromium-browser"):
        for d in os.environ.get("PATH", "").split(":") + ["/usr/bin"]:
            if os.access(os.path.join(d, c), os.X_OK):
                return os.path.join(d, c)
    return None


def test_html_report_renders():
    """`linerate report` on a run and on a sweep: a real browser (headless Chromium) loads the
    page from a file; every chart drew, no script error, the settings are rows of option and
    value (no raw JSON in a cell), the latency is drawn from the report's histogram, and a
    screenshot is taken."""
    browser = chromium()
    check(browser is not None, "chromium is not installed (scripts/deps.sh installs it)")
    with tempfile.TemporaryDirectory() as d:
        reports = {}
        p = subprocess.run([LINERATE, "run", "-q", *RING_PAIR_ARGS, "--tx", "ring0", "--rx", "ring1", "--rate", "200k",
                            "--duration", "1s", "--interval", "100ms", "--json", f"{d}/run.json", "--", *NO_PCI],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, p.stderr)
        reports["run"] = (f"{d}/run.json", 6)  # rate, queues, timeline, latency histogram and CDF, who dropped it
        p = subprocess.run([LINERATE, "sweep", "-q", *RING_PAIR_ARGS, "--tx", "ring0", "--rx", "ring1", "--sizes",
                            "64,512,1518", "--count", "20k", "--max-loss", "0", "--json", f"{d}/sweep.json", "--",
                            *NO_PCI], capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, p.stderr)
        reports["sweep"] = (f"{d}/sweep.json", 3)  # rate and latency against size, the trial trace
        for name, (path, charts) in reports.items():
            html = f"{d}/{name}.html"
            p = subprocess.run([LINERATE, "report", path, "-o", html], capture_output=True, text=True, timeout=30)
            check(p.returncode == 0, f"report {name}: {p.stderr}")
            page = open(html).read()
            check("<script src=" not in page and "<link" not in page, f"{name}: the page loads nothing")
            args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000"]
            dom = subprocess.run(args + ["--dump-dom", f"file://{html}"], capture_output=True, text=True,
                                 timeout=120).stdout
            m = re.search(r'id="render-status" data-charts="(\d+)" data-drawn="(\d+)" data-errors="(\d+)">([^<]*)', dom)
            check(m is not None, f"{name}: the page's script did not run\n{dom[-500:]}")
            made, drawn, errors, text = int(m[1]), int(m[2]), int(m[3]), m[4]
            check(made == charts and drawn == made, f"{name}: {made} charts made, {drawn} drew, expected {charts}")
            check(errors == 0, f"{name}: script errors: {text}")
            # Every setting as a row: the option as typed, its value as text.
            check(re.search(r'<td class="option">--rate</td><td>[^<{]+</td>', dom) is not None, f"{name}: no --rate row")
            check(re.search(r'<td[^>]*>\s*[\[{]+"', dom) is None, f"{name}: raw JSON in a table cell")
            if name == "run":
                rep = json.load(open(path))
                check(len(rep["latency"]["buckets"]) > 0, "the run report carries the latency histogram")
                check('id="latency_hist"' in dom and 'id="latency_cdf"' in dom, f"{name}: latency histogram and CDF")
            shot = f"{d}/{name}.png"
            subprocess.run(args + ["--hide-scrollbars", "--window-size=1000,2400", f"--screenshot={shot}",
                                   f"file://{html}"], capture_output=True, timeout=120)
            check(os.path.getsize(shot) > 20000, f"{name}: screenshot {os.path.getsize(shot)} bytes")
        p = subprocess.run([LINERATE, "report", SCHEMA_PATH, "-o", f"{d}/x.html"], capture_output=True, text=True)
        check(p.returncode == 2 and "not a linerate JSON report" in p.stderr, f"{p.returncode} {p.stderr}")


def on_terminal(args, env=None, exit_codes=(0,)):
    """Runs linerate with its stdout on a pseudo-terminal; returns what it wrote there."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([LINERATE, *args], stdout=slave, stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, **(env or {})))
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait(timeout=60)
    os.close(master)
    text = out.decode(errors="replace")
    check(p.returncode in exit_codes, f"exit {p.returncode}: {p.stderr.read()}\n{text[-2000:]}")
    return text


def test_live_table_on_a_terminal():
    """On a terminal the live table redraws in place (cursor up, clear line), per queue, with the
    drops by cause and a progress line; colours unless NO_COLOR; piped, plain lines as before."""
    args = ["run", *RING_PAIR_ARGS, "--tx", "ring0,queues=2", "--rx", "ring1,queues=2", "--rate", "200k",
            "--duration", "1500ms", "--interval", "250ms", "--", *NO_PCI]
    tty = on_terminal(args)
    check("\x1b[2K" in tty and re.search(r"\x1b\[\d+F", tty), "redraws in place")
    check(tty.count("ring1") >= 2 and "drops: device back-pressure" in tty and "trial 1 of 1" in tty, tty[-1500:])
    check("s left" in tty, "a progress line with the time left")
    check("\x1b[1m" in tty, "bold headers on a terminal")
    check("TX total" in tty, "the summary follows the table")
    plain = on_terminal(args, {"NO_COLOR": "1"})
    check("\x1b[1m" not in plain and "\x1b[2K" in plain, "NO_COLOR: no colours, still redrawn")
    piped = subprocess.run([LINERATE, *args], capture_output=True, text=True, timeout=60).stdout
    check("\x1b" not in piped and "TX Mpps" in piped, "piped: plain interval lines")
    # A procedure's table says which trial runs and why: the generator's probes first, then the
    # search's trials with their bounds and phase.
    proc = on_terminal(["throughput", *RING_PAIR_ARGS, "--tx", "ring0", "--rx", "ring1", "--max-rate", "100k",
                        "--trial-duration", "500ms", "--initial-duration", "200ms", "--width", "5",
                        "--interval", "100ms", "--", *NO_PCI])
    check("procedure: the generator's peak: as fast as it can" in proc and "trial 1, 64 B, " in proc, proc[-2000:])
    check("procedure: the maximum load first" in proc, proc[-2000:])


def test_capture_matches_and_changes_nothing():
    """--capture writes a pcap tshark reads, with the frames that were sent, and the counts
    are the same with and without it."""
    with tempfile.TemporaryDirectory() as d:
        base = [LINERATE, "run", "-q", *RING_PAIR_ARGS, "--tx", "ring0", "--rx", "ring1", "--count", "20000",
                "--nonce", "4321"]
        counts = []
        for extra in ([], ["--capture", f"{d}/c.pcap", "--capture-count", "50"]):
            p = subprocess.run(base + ["--json", f"{d}/r.json", *extra, "--", *NO_PCI], capture_output=True,
                               text=True, timeout=60)
            check(p.returncode == 0, p.stderr)
            with open(f"{d}/r.json") as f:
                counts.append(json.load(f)["totals"]["rx_classes"])
        check(counts[0] == counts[1] and counts[1]["distinct"] == 20000, f"counts {counts}")
        t = subprocess.run(["tshark", "-r", f"{d}/c.pcap", "-T", "fields", "-e", "ip.src", "-e", "ip.dst",
                            "-e", "udp.dstport", "-e", "frame.len", "-e", "udp.payload"],
                           capture_output=True, text=True, timeout=60)
        check(t.returncode == 0, t.stderr)
        rows = [line.split("\t") for line in t.stdout.splitlines()]
        check(len(rows) == 50, f"{len(rows)} frames in the capture")
        seqs = []
        for src, dst, dport, flen, payload in rows:
            payload = payload.replace(":", "")
            check(src == "198.18.0.1" and dst == "198.18.0.2" and dport == "1024" and flen == "60", f"{rows[0]}")
            check(payload.startswith("4c52") and payload[28:32] == f"{4321:04x}", f"signature {payload}")
            seqs.append(int(payload[4:16], 16))
        check(seqs == list(range(50)), f"the first 50 frames sent, in order: {seqs[:10]}...")
        # The frames as they left: --capture-filter sent, on both queues of a 2-queue sender.
        p = subprocess.run([LINERATE, "run", "-q", "--tx", "net_null0,queues=2", "--count", "10000",
                            "--nonce", "4321", "--capture", f"{d}/tx.pcap", "--capture-filter", "sent",
                            "--capture-count", "20", "--json", f"{d}/t.json", "--", "--vdev=net_null0", *NO_PCI],
                           capture_output=True, text=True, timeout=60)
        check(p.returncode == 0, p.stderr)
        t = subprocess.run(["tshark", "-r", f"{d}/tx.pcap", "-T", "fields", "-e", "udp.payload"],
                           capture_output=True, text=True, timeout=60)
        pl = [x.replace(":", "") for x in t.stdout.split()]
        check(len(pl) == 20 and all(x.startswith("4c52") for x in pl), f"{len(pl)} sent frames captured")
        with open(f"{d}/t.json") as f:
            check(json.load(f)["totals"]["tx"]["packets"] == 10000, "the count is unchanged")


def test_afxdp_report_valid():
    with VethBed(unique("lxo"), same_ns=True) as bed, tempfile.TemporaryDirectory() as d:
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--rx", bed.ifb,
                              "--count", "50k", "--rate", "100k", "--json", f"{d}/r.json"], timeout=60)
        check(r.returncode == 0, f"exit {r.returncode}\n{r.stderr}")
        with open(f"{d}/r.json") as f:
            valid(json.load(f), "afxdp run report")


def test_probe_and_reflector_json_valid():
    """probe --json and the in-driver reflector's --json match their own schemas (docs/probe.schema.json,
    docs/reflect.schema.json), the reflector's after it sent a sender's frames back."""
    import signal
    docs = os.path.dirname(SCHEMA_PATH)
    schemas = {}
    for name in ("probe", "reflect"):
        with open(os.path.join(docs, f"{name}.schema.json")) as f:
            schemas[name] = json.load(f)
    with VethBed(unique("lxj")) as bed, tempfile.TemporaryDirectory() as d:
        r = bed.run(bed.nsa, [LINERATE, "probe", bed.ifa, "--json", f"{d}/p.json"], timeout=120)
        check(r.returncode in (0, 3), f"probe exit {r.returncode}: {r.stderr}")
        with open(f"{d}/p.json") as f:
            jsonschema.validate(json.load(f), schemas["probe"])
        refl = bed.start(bed.nsb, [LINERATE, "reflect", "--port", bed.ifb, "--duration", "120s", "-q",
                                   "--json", f"{d}/refl.json"])
        bed.wait_xdp(bed.nsb, bed.ifb, refl)
        r = bed.run(bed.nsa, [LINERATE, "run", "-q", "--backend", "afxdp", "--tx", bed.ifa, "--rx", bed.ifa,
                              "--cpus", "1", "--outstanding", "4", "--count", "1000"], timeout=120)
        refl.send_signal(signal.SIGINT)
        out, _ = refl.communicate(timeout=30)
        check(r.returncode == 0 and refl.returncode == 0,
              f"sender {r.returncode}: {r.stderr}\nreflector {refl.returncode}: {out}")
        with open(f"{d}/refl.json") as f:
            rep = json.load(f)
        jsonschema.validate(rep, schemas["reflect"])
        check(rep["reflected"] == 1000, f"reflected {rep['reflected']}")


@pytest.mark.usefixtures("root")
def test_failed_writes_named_per_output():
    """A full disk (a 16 KiB tmpfs filled up, in a mount namespace of its own) and /dev/full:
    every output names its file and the reason, no temporary file is left, exit 3."""
    with tempfile.TemporaryDirectory() as d:
        outs = ["--json", f"{d}/r.json", "--junit", f"{d}/j.xml", "--csv", f"{d}/r.csv", "--json-stream",
                f"{d}/r.jsonl", "--capture", f"{d}/c.pcap"]
        sweep = [LINERATE, "sweep", "-q", *RING_PAIR_ARGS, "--tx", "ring0", "--rx", "ring1", "--sizes", "64",
                 "--count", "10k", *outs, "--", *NO_PCI]
        script = (f'mount -t tmpfs -o size=16k none {d} && dd if=/dev/zero of={d}/fill bs=1k count=64 2>/dev/null; '
                  f'"$@"; rc=$?; echo "files: $(ls -A {d})"; exit $rc')
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", *sweep],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 3, f"exit {p.returncode}\n{p.stdout}{p.stderr}")
        nospace = "No space left on device"
        for what in (f"the JSON report to {d}/r.json", f"the JUnit file to {d}/j.xml", f"the CSV file {d}/r.csv",
                     f"the CSV table to {d}/r-trials.csv", f"the CSV table to {d}/r-sizes.csv",
                     f"the JSON lines file {d}/r.jsonl", f"the capture file {d}/c.pcap"):
            check(p.stderr.count(f"linerate: error: couldn't write {what}: {nospace}") == 1, f"{what}:\n{p.stderr}")
        files = p.stdout.split("files: ")[-1].split()
        check(not [f for f in files if ".tmp" in f], f"temporary files left: {files}")
        check("64" in p.stdout, "the results were still printed")
        # Streams on /dev/full: named once each, after a run that otherwise passed.
        p = subprocess.run([LINERATE, "run", "-q", *RING_PAIR_ARGS, "--tx", "ring0", "--rx", "ring1", "--count",
                            "10k", "--csv", "/dev/full", "--json-stream", "/dev/full", "--capture", "/dev/full",
                            "--", *NO_PCI], capture_output=True, text=True, timeout=60)
        check(p.returncode == 3, f"exit {p.returncode}\n{p.stdout}{p.stderr}")
        for what in ("CSV", "JSON lines", "capture"):
            check(p.stderr.count(f"couldn't write the {what} file /dev/full: {nospace}") == 1, f"{what}:\n{p.stderr}")
