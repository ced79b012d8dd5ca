"""check_deploy.py grafana: docs/grafana-dashboard.json against the metrics linerate registers."""
import copy
import json
import os
import re

from deploy_common import ROOT, expect_refused


def check_dashboard(d, metrics):
    errors = []
    templ = {v.get("name"): v for v in (d.get("templating") or {}).get("list", [])}
    host = templ.get("host")
    if not host:
        errors.append("no host template variable")
    else:
        q = host.get("query")
        q = q.get("query") if isinstance(q, dict) else q
        if not re.fullmatch(r"label_values\(\s*linerate_packets_total\s*,\s*host\s*\)", str(q)):
            errors.append(f"host variable's query must be label_values(linerate_packets_total, host), is {q!r}")
        if not host.get("multi") or not host.get("includeAll"):
            errors.append("host variable must allow several values and All")
    panels = []
    for p in d.get("panels", []):
        panels.append(p)
        panels += p.get("panels", [])  # panels inside a collapsed row
    ids = [p.get("id") for p in panels]
    if len(set(ids)) != len(ids):
        errors.append(f"panel ids repeat: {ids}")
    boxes = []
    for p in panels:
        g = p.get("gridPos") or {}
        if p.get("type") != "row":
            if g.get("x", 0) + g.get("w", 0) > 24:
                errors.append(f"panel {p.get('title')!r} is wider than the dashboard")
            for q in boxes:
                h = q.get("gridPos") or {}
                if (g["x"] < h["x"] + h["w"] and h["x"] < g["x"] + g["w"] and
                        g["y"] < h["y"] + h["h"] and h["y"] < g["y"] + g["h"]):
                    errors.append(f"panels {q.get('title')!r} and {p.get('title')!r} overlap")
            boxes.append(p)
        for t in p.get("targets", []):
            expr = t.get("expr", "")
            for name in re.findall(r"\blinerate_[a-z0-9_]+", expr):
                base = re.sub(r"_(bucket|sum|count)$", "", name)
                if name not in metrics and base not in metrics:
                    errors.append(f"panel {p.get('title')!r}: {name} is no metric linerate exports")
            if "linerate_" in expr and 'host=~"$host"' not in expr:
                errors.append(f"panel {p.get('title')!r}: {expr!r} does not follow the host variable")
    per_host = [p for p in panels for t in p.get("targets", []) if re.search(r"by \(host\)", t.get("expr", ""))]
    per_flow = [p for p in panels for t in p.get("targets", [])
                if re.search(r"by \(flow\)", t.get("expr", "")) and "linerate_stream_packets_total" in t.get("expr", "")]
    if not per_host:
        errors.append("no panel sums by host")
    if not per_flow:
        errors.append("no panel sums linerate_stream_packets_total by flow")
    return errors, len(panels)


def part_grafana(rep):
    src = open(os.path.join(ROOT, "src", "report", "metrics.cpp")).read()
    metrics = set(re.findall(r'Name\("(linerate_[a-z0-9_]+)"\)', src))
    rep.check(len(metrics) > 5, f"{len(metrics)} metric names read from src/report/metrics.cpp")
    path = os.path.join(ROOT, "docs", "grafana-dashboard.json")
    try:
        d = json.load(open(path))
    except ValueError as e:
        rep.fail(f"docs/grafana-dashboard.json is not JSON: {e}")
        return
    errors, n = check_dashboard(d, metrics)
    for e in errors:
        rep.fail(e)
    if not errors:
        rep.ok(f"docs/grafana-dashboard.json: {n} panels, every query's metric exported and filtered by $host, "
               "no two panels overlap, a host variable, per-host and per-flow sums")

    def broken(label, mutate, needle):
        b = copy.deepcopy(d)
        mutate(b)
        errs, _ = check_dashboard(b, metrics)
        expect_refused(rep, label, errs, needle)

    def misspell(b):
        b["panels"][0]["targets"][0]["expr"] = b["panels"][0]["targets"][0]["expr"].replace(
            "linerate_rate_packets_per_second", "linerate_rate_packet_per_second")
    broken("a misspelled metric", misspell, "linerate_rate_packet_per_second is no metric")
    broken("two panels on one spot", lambda b: b["panels"][1].__setitem__("gridPos", dict(b["panels"][0]["gridPos"])),
           "overlap")
    broken("no host variable", lambda b: b["templating"]["list"].pop(
        [v["name"] for v in b["templating"]["list"]].index("host")), "no host template variable")
