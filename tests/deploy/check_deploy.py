#!/usr/bin/env python3
"""Checks the deployment files (deploy/, docs/grafana-dashboard.json), one part per meson test.

  check_deploy.py k8s       deploy/k8s: every manifest against the Kubernetes JSON schemas (strict:
                            unknown fields refused; kubernetes-validate, for two Kubernetes versions),
                            the kustomization's files, its rendering by `kubectl kustomize` when
                            kubectl is installed, and what the schemas cannot know (the engines'
                            host network, capabilities, probes, scrape annotations, hugepages; the
                            controller's location map; selectors against labels)
  check_deploy.py kne       deploy/kne: the topology's text format against the fields of KNE's
                            Topology message it uses, its links against its nodes, the interfaces
                            the nodes' arguments name, the controller's location map
  check_deploy.py image     deploy/Dockerfile: hadolint, its stages, what its build stage copies
                            against its ignore file, and the runtime stage's packages against the
                            libraries the built binary ($LINERATE) links
  check_deploy.py grafana   docs/grafana-dashboard.json: its queries' metric names against the ones
                            src/report/metrics.cpp registers, the host variable, the panels' layout

Each part also checks that broken copies (made in a temporary directory) are refused, so the
check itself can fail. It runs in build/deploy-venv ($DEPLOY_PYTHON, made by scripts/test.sh from
tests/deploy/validate-requirements.txt) and is skipped (77) when that venv is missing.
"""
import copy
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PARTS = ("k8s", "kne", "image", "grafana")


def bootstrap():
    """Re-runs this script with the venv's python, or exits 77 when there is none."""
    if os.environ.get("LR_DEPLOY_IN_VENV") == "1":
        return
    venv_python = os.environ.get("DEPLOY_PYTHON", os.path.join(ROOT, "build", "deploy-venv", "bin", "python"))
    if not os.access(venv_python, os.X_OK):
        print(f"SKIP: {venv_python} is missing: the deployment checks need their venv (kubernetes-validate, "
              "hadolint, PyYAML), which scripts/test.sh makes from tests/deploy/validate-requirements.txt")
        sys.exit(77)
    env = dict(os.environ, LR_DEPLOY_IN_VENV="1")
    os.execve(venv_python, [venv_python, os.path.abspath(__file__)] + sys.argv[1:], env)


class Report:
    def __init__(self):
        self.errors = []
        self.passed = 0

    def ok(self, what):
        self.passed += 1
        print(f"ok: {what}")

    def fail(self, what):
        self.errors.append(what)
        print(f"FAIL: {what}")

    def check(self, cond, what, why=""):
        if cond:
            self.ok(what)
        else:
            self.fail(what + (f": {why}" if why else ""))
        return cond


def expect_refused(rep, label, errors, needle):
    """A broken copy must be refused, for the reason it was broken for."""
    hit = [e for e in errors if needle in e]
    rep.check(bool(hit), f"broken copy refused: {label}",
              f"expected an error containing {needle!r}, got {errors[:3] if errors else 'none'}")
    if hit:
        print(f"     ({hit[0].strip()})")


# ---------------------------------------------------------------------------------------------
# Kubernetes

K8S_VERSIONS = ("1.30.0", None)  # None: the newest schemas kubernetes-validate ships
ENGINE_CAPS = {"NET_ADMIN", "NET_RAW", "BPF", "PERFMON", "IPC_LOCK", "SYS_RESOURCE", "SYS_ADMIN"}
OTG_PORT = 8443
PROBE_PATH = "/capabilities/version"
ENDPOINT_RX = re.compile(r"^[^\s;:]+:(\d+);\S+$")  # ENGINE-HOST:PORT;LOCAL-PORT


def yaml_docs(path):
    import yaml
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def schema_errors(doc, version):
    import kubernetes_validate as kv
    from kubernetes_validate.utils import major_minor
    v = version or kv.latest_version()
    try:
        kv.validate(doc, v, strict=True)
        return None
    except kv.ValidationError as e:
        where = ".".join(str(p) for p in e.path) or "(top)"
        return f"{where}: {e.message} (Kubernetes {major_minor(v)})"
    except (kv.SchemaNotFoundError, kv.InvalidSchemaError) as e:
        return f"no schema: {e}"


def kname(doc):
    return f"{doc.get('kind')}/{(doc.get('metadata') or {}).get('name')}"


def pod_spec(doc):
    return (((doc.get("spec") or {}).get("template") or {}).get("spec")) or {}


def arg_after(args, flag):
    return args[args.index(flag) + 1] if flag in args and args.index(flag) + 1 < len(args) else None


def check_location_map(text, where):
    """The location map file's format: location_map: [{location, endpoint}], names unique."""
    import yaml
    errors = []
    try:
        m = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return [f"{where}: not YAML: {e}"], []
    entries = (m or {}).get("location_map") if isinstance(m, dict) else None
    if not isinstance(entries, list) or not entries:
        return [f"{where}: no location_map list"], []
    seen = set()
    for i, e in enumerate(entries):
        if not isinstance(e, dict) or set(e) != {"location", "endpoint"}:
            errors.append(f"{where}: location_map[{i}] must have exactly location and endpoint, has {e}")
            continue
        if e["location"] in seen:
            errors.append(f"{where}: location {e['location']!r} given twice")
        seen.add(e["location"])
        if not ENDPOINT_RX.match(str(e["endpoint"])):
            errors.append(f"{where}: location_map[{i}].endpoint {e['endpoint']!r} is not ENGINE-HOST:PORT;LOCAL-PORT")
    return errors, entries


def engine_errors(doc):
    """What an engine DaemonSet must say that no schema knows."""
    n, errs = kname(doc), []
    tmpl = (doc["spec"].get("template") or {})
    ps = pod_spec(doc)
    if ps.get("hostNetwork") is not True:
        errs.append(f"{n}: hostNetwork must be true (the test ports are the node's interfaces)")
    if ps.get("dnsPolicy") != "ClusterFirstWithHostNet":
        errs.append(f"{n}: dnsPolicy must be ClusterFirstWithHostNet with hostNetwork")
    if "linerate.io/engine" not in (ps.get("nodeSelector") or {}):
        errs.append(f"{n}: nodeSelector must select on linerate.io/engine")
    ann = (tmpl.get("metadata") or {}).get("annotations") or {}
    want_ann = {"prometheus.io/scrape": "true", "prometheus.io/port": str(OTG_PORT), "prometheus.io/path": "/metrics"}
    for k, v in want_ann.items():
        if ann.get(k) != v:
            errs.append(f"{n}: pod annotation {k} must be {v!r}, is {ann.get(k)!r}")
    (c,) = ps["containers"][:1] or [{}]
    args = [str(a) for a in c.get("args") or []]
    if args[:1] != ["serve"] or arg_after(args, "--listen") != f"0.0.0.0:{OTG_PORT}":
        errs.append(f"{n}: args must be serve ... --listen 0.0.0.0:{OTG_PORT}, are {args}")
    if arg_after(args, "--backend") not in ("afxdp", "dpdk"):
        errs.append(f"{n}: --backend must be afxdp or dpdk")
    label = arg_after(args, "--host-label")
    env = {e["name"]: e for e in c.get("env") or []}
    m = re.fullmatch(r"\$\((\w+)\)", label or "")
    field = (((env.get(m.group(1)) or {}).get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath") if m else None
    if field != "spec.nodeName":
        errs.append(f"{n}: --host-label must be $(VAR) with VAR from the downward API's spec.nodeName, is {label!r}")
    ports = {p.get("containerPort") for p in c.get("ports") or []}
    if OTG_PORT not in ports:
        errs.append(f"{n}: containerPort {OTG_PORT} missing")
    for probe in ("readinessProbe", "livenessProbe"):
        g = (c.get(probe) or {}).get("httpGet") or {}
        if g.get("path") != PROBE_PATH or g.get("port") not in (OTG_PORT, "otg"):
            errs.append(f"{n}: {probe} must GET {PROBE_PATH} on port {OTG_PORT}, is {g}")
    sc = c.get("securityContext") or {}
    caps = set(((sc.get("capabilities") or {}).get("add")) or [])
    backend = arg_after(args, "--backend")
    if backend == "afxdp" and not sc.get("privileged") and not ENGINE_CAPS <= caps:
        errs.append(f"{n}: the afxdp engine needs capabilities {sorted(ENGINE_CAPS - caps)} (or privileged)")
    vols = {v["name"]: v for v in ps.get("volumes") or []}
    mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts") or []}
    host_paths = {mp: (vols.get(name) or {}).get("hostPath", {}).get("path") for mp, name in mounts.items()}
    if backend == "afxdp":
        for p in ("/sys", "/sys/fs/bpf"):
            if host_paths.get(p) != p:
                errs.append(f"{n}: the host's {p} must be mounted at {p}")
    if backend == "dpdk":
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        huge = [k for k in req if k.startswith("hugepages-")]
        if not huge:
            errs.append(f"{n}: the dpdk engine must request hugepages")
        for k in huge + [k for k in req if "/" in k]:
            if str(req.get(k)) != str(lim.get(k)):
                errs.append(f"{n}: {k} request and limit must be equal ({req.get(k)} vs {lim.get(k)})")
        if not [k for k in req if "/" in k]:
            errs.append(f"{n}: the dpdk engine must request its SR-IOV VFs (a device plugin's resource)")
        if not any((vols.get(name) or {}).get("emptyDir", {}).get("medium", "").startswith("HugePages")
                   for name in mounts.values()):
            errs.append(f"{n}: the dpdk engine must mount an emptyDir of medium HugePages")
    return errs


def controller_errors(doc, configmaps):
    n, errs = kname(doc), []
    ps = pod_spec(doc)
    (c,) = ps["containers"][:1] or [{}]
    args = [str(a) for a in c.get("args") or []]
    if args[:1] != ["serve"] or "--controller" not in args or arg_after(args, "--listen") != f"0.0.0.0:{OTG_PORT}":
        errs.append(f"{n}: args must be serve --controller ... --listen 0.0.0.0:{OTG_PORT}, are {args}")
    if ps.get("hostNetwork"):
        errs.append(f"{n}: the controller needs no host network")
    if not (ps.get("securityContext") or {}).get("runAsNonRoot"):
        errs.append(f"{n}: the controller runs as non-root")
    for probe in ("readinessProbe", "livenessProbe"):
        g = (c.get(probe) or {}).get("httpGet") or {}
        if g.get("path") != PROBE_PATH:
            errs.append(f"{n}: {probe} must GET {PROBE_PATH}")
    path = arg_after(args, "--location-map")
    if not path:
        return errs + [f"{n}: no --location-map"]
    vols = {v["name"]: v for v in ps.get("volumes") or []}
    d, base = os.path.dirname(path), os.path.basename(path)
    mount = next((m for m in c.get("volumeMounts") or [] if m["mountPath"].rstrip("/") == d), None)
    cm_name = ((vols.get(mount["name"]) or {}).get("configMap") or {}).get("name") if mount else None
    if not cm_name:
        return errs + [f"{n}: --location-map {path}: no ConfigMap volume mounted at {d}"]
    cm = configmaps.get(cm_name)
    if cm is None or base not in (cm.get("data") or {}):
        return errs + [f"{n}: --location-map {path}: ConfigMap {cm_name} with key {base} not among the manifests"]
    lm_errs, entries = check_location_map(cm["data"][base], f"ConfigMap/{cm_name}[{base}]")
    return errs + lm_errs


def check_k8s_dir(kdir, kubectl=True):
    """Every error found in a deploy/k8s directory (empty: all good), and notes of what was checked."""
    errors, notes = [], []
    kpath = os.path.join(kdir, "kustomization.yaml")
    try:
        (kust,) = yaml_docs(kpath)
    except Exception as e:  # noqa: BLE001 - any unreadable kustomization is an error to report
        return [f"kustomization.yaml: {e}"], notes
    resources = kust.get("resources") or []
    for r in resources:
        if not os.path.isfile(os.path.join(kdir, r)):
            errors.append(f"kustomization.yaml: resource {r} does not exist")
    listed = set(resources)
    for f in sorted(os.listdir(kdir)):
        if f.endswith((".yaml", ".yml")) and f != "kustomization.yaml" and f not in listed:
            errors.append(f"{f}: not listed in kustomization.yaml's resources")
    images = kust.get("images") or []
    if [i.get("name") for i in images] != ["linerate"]:
        errors.append(f"kustomization.yaml: images must set the one image, linerate, is {images}")
    docs = []
    for r in resources:
        p = os.path.join(kdir, r)
        if not os.path.isfile(p):
            continue
        try:
            docs += [(r, d) for d in yaml_docs(p)]
        except Exception as e:  # noqa: BLE001
            errors.append(f"{r}: not YAML: {e}")
    for r, d in docs:
        for v in K8S_VERSIONS:
            e = schema_errors(d, v)
            if e:
                errors.append(f"{r}: {kname(d)}: {e}")
        if d.get("kind") != "Namespace" and (d.get("metadata") or {}).get("namespace") != kust.get("namespace"):
            errors.append(f"{r}: {kname(d)} must be in namespace {kust.get('namespace')}")
        for c in pod_spec(d).get("containers") or []:
            if str(c.get("image", "")).split(":")[0] != "linerate":
                errors.append(f"{r}: {kname(d)}: image must be the placeholder linerate (kustomization's images)")
    notes.append(f"{len(docs)} resources in {len(resources)} files, each against the schemas of Kubernetes "
                 f"{' and '.join(v or 'newest' for v in K8S_VERSIONS)} (strict)")

    by_kind = {}
    for r, d in docs:
        by_kind.setdefault(d.get("kind"), []).append(d)
    # Selectors select their own pods (no schema knows).
    for d in by_kind.get("DaemonSet", []) + by_kind.get("Deployment", []):
        sel = ((d.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
        labels = (((d["spec"].get("template") or {}).get("metadata") or {}).get("labels")) or {}
        if not sel or any(labels.get(k) != v for k, v in sel.items()):
            errors.append(f"{kname(d)}: selector {sel} does not select its template's labels {labels}")
    engines = [d for d in by_kind.get("DaemonSet", [])
               if (d.get("metadata") or {}).get("labels", {}).get("app.kubernetes.io/component") == "engine"]
    if {arg_after([str(a) for a in pod_spec(d)["containers"][0].get("args", [])], "--backend") for d in engines} \
            != {"afxdp", "dpdk"}:
        errors.append("an afxdp and a dpdk engine DaemonSet are expected")
    for d in engines:
        errors += engine_errors(d)
    node_values = [pod_spec(d).get("nodeSelector", {}).get("linerate.io/engine") for d in engines]
    if len(set(node_values)) != len(node_values):
        errors.append(f"the engine DaemonSets select the same nodes ({node_values}): both would take port {OTG_PORT}")
    sels = [json.dumps(d["spec"].get("selector"), sort_keys=True) for d in engines]
    if len(set(sels)) != len(sels):
        errors.append("the engine DaemonSets have the same selector")
    configmaps = {d["metadata"]["name"]: d for d in by_kind.get("ConfigMap", [])}
    controllers = by_kind.get("Deployment", [])
    if len(controllers) != 1:
        errors.append(f"one controller Deployment expected, found {len(controllers)}")
    for d in controllers:
        errors += controller_errors(d, configmaps)
    for s in by_kind.get("Service", []):
        spec = s.get("spec") or {}
        targets = [d for d in controllers
                   if all(pod_spec(d) is not None and (d["spec"]["template"]["metadata"]["labels"].get(k) == v)
                          for k, v in (spec.get("selector") or {}).items())]
        if spec.get("type", "ClusterIP") != "ClusterIP" or [p.get("port") for p in spec.get("ports", [])] != [OTG_PORT]:
            errors.append(f"{kname(s)}: a ClusterIP service on port {OTG_PORT} expected")
        if not targets:
            errors.append(f"{kname(s)}: its selector {spec.get('selector')} selects no controller pod")
        for p in spec.get("ports", []):
            tp = p.get("targetPort")
            for d in targets:
                names = {cp.get("name") for c in pod_spec(d)["containers"] for cp in c.get("ports", [])}
                nums = {cp.get("containerPort") for c in pod_spec(d)["containers"] for cp in c.get("ports", [])}
                if tp not in names | nums:
                    errors.append(f"{kname(s)}: targetPort {tp} is no port of {kname(d)}")

    kubectl_bin = shutil.which("kubectl") if kubectl else None
    if kubectl_bin:
        import yaml
        r = subprocess.run([kubectl_bin, "kustomize", kdir], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            errors.append(f"kubectl kustomize: {r.stderr.strip()[:500]}")
        else:
            rendered = [d for d in yaml.safe_load_all(r.stdout) if d]
            want_image = f"{images[0].get('newName', 'linerate')}:{images[0].get('newTag', 'latest')}" if images else None
            for d in rendered:
                for v in K8S_VERSIONS:
                    e = schema_errors(d, v)
                    if e:
                        errors.append(f"rendered {kname(d)}: {e}")
                for c in pod_spec(d).get("containers") or []:
                    if c.get("image") != want_image:
                        errors.append(f"rendered {kname(d)}: image {c.get('image')}, not {want_image}")
            if len(rendered) != len(docs):
                errors.append(f"kubectl kustomize rendered {len(rendered)} resources, the files hold {len(docs)}")
            notes.append(f"kubectl kustomize rendered {len(rendered)} resources, each valid, image {want_image}")
    elif kubectl:
        notes.append("kubectl is not installed: the kustomize rendering is not checked (the files are)")
    return errors, notes


def part_k8s(rep):
    kdir = os.path.join(ROOT, "deploy", "k8s")
    errors, notes = check_k8s_dir(kdir)
    for e in errors:
        rep.fail(e)
    if not errors:
        for n in notes:
            rep.ok(n)
        rep.ok("engines: host network, node selector, capabilities, host label from spec.nodeName, probes, "
               "scrape annotations, DPDK hugepages and VFs; controller: location map ConfigMap; selectors")

    # Broken copies, each with one fault, must be refused (schema faults without kubectl: the same
    # validator; the others by the checks above).
    def broken(label, fname, old, new, needle, count=1):
        with tempfile.TemporaryDirectory() as tmp:
            t = os.path.join(tmp, "k8s")
            shutil.copytree(kdir, t)
            p = os.path.join(t, fname)
            text = open(p).read()
            if text.count(old) < count:
                rep.fail(f"broken copy {label}: {old!r} not in {fname}")
                return
            open(p, "w").write(text.replace(old, new, count))
            errs, _ = check_k8s_dir(t, kubectl=False)
            expect_refused(rep, label, errs, needle)

    broken("hostNetwork as a string", "engine-afxdp.yaml", "hostNetwork: true", 'hostNetwork: "yes"',
           "spec.template.spec.hostNetwork: 'yes' is not of type 'boolean'")
    broken("a misspelled field", "engine-afxdp.yaml", "dnsPolicy:", "dnsPolicyy:", "dnsPolicyy")
    broken("a container without a name", "controller.yaml", "- name: controller\n", "- \n", "'name' is a required property")
    broken("a Service port as a word", "controller.yaml", "port: 8443", "port: eighty", "'eighty' is not of type 'integer'")
    broken("a kustomization naming a missing file", "kustomization.yaml", "- controller.yaml", "- controler.yaml",
           "resource controler.yaml does not exist")
    broken("a selector that selects nothing", "engine-dpdk.yaml", "      linerate.io/backend: dpdk\n  updateStrategy",
           "      linerate.io/backend: dpdkk\n  updateStrategy", "does not select its template's labels")
    broken("an engine without CAP_BPF", "engine-afxdp.yaml", "- BPF ", "- CHOWN ", "capabilities ['BPF']")
    broken("a host label not from the node's name", "engine-afxdp.yaml", "fieldPath: spec.nodeName",
           "fieldPath: metadata.name", "--host-label must be $(VAR)")
    broken("hugepages requested below their limit", "engine-dpdk.yaml",
           'hugepages-2Mi: 2Gi\n              intel.com/intel_sriov_dpdk: "2"\n            limits',
           'hugepages-2Mi: 1Gi\n              intel.com/intel_sriov_dpdk: "2"\n            limits',
           "hugepages-2Mi request and limit must be equal")
    broken("a location map endpoint without its port", "location-map.yaml", '"192.0.2.11:8443;ens1f0"',
           '"192.0.2.11;ens1f0"', "is not ENGINE-HOST:PORT;LOCAL-PORT")
    broken("a location map name twice", "location-map.yaml", "location: p2", "location: p1", "given twice")
    controller_loads_the_map(rep, kdir)


def controller_loads_the_map(rep, kdir):
    """linerate's own reader takes the ConfigMap's map: `serve --controller --location-map` starts
    with it and stops on SIGINT; with a name listed twice it refuses to start (exit 2)."""
    binary = os.environ.get("LINERATE", os.path.join(ROOT, "build", "src", "linerate"))
    if not os.access(binary, os.X_OK):
        rep.fail(f"the controller's own reader: no linerate binary at {binary}")
        return
    cm = next(d for d in yaml_docs(os.path.join(kdir, "location-map.yaml")) if d and d.get("kind") == "ConfigMap")
    text = cm["data"]["location-map.yaml"]
    with tempfile.TemporaryDirectory() as tmp:
        good, bad = os.path.join(tmp, "good.yaml"), os.path.join(tmp, "bad.yaml")
        open(good, "w").write(text)
        open(bad, "w").write(text.replace("location: p2", "location: p1", 1))
        with socket.socket() as sk:
            sk.bind(("127.0.0.1", 0))
            port = sk.getsockname()[1]
        p = subprocess.Popen([binary, "serve", "--controller", "--quiet", "--location-map", good, "--listen",
                              f"127.0.0.1:{port}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        first = p.stdout.readline()
        p.send_signal(signal.SIGINT)
        try:
            rest, _ = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()  # a server that ignored its stop is a failure, not a process left behind
            rest = p.communicate()[0] + "\n(no exit 30 s after SIGINT: killed)"
        rep.check(first.startswith("linerate serve: OTG API") and p.returncode == 0,
                  "the controller starts with the ConfigMap's location map and stops on SIGINT",
                  f"exit {p.returncode}: {first}{rest}")
        r = subprocess.run([binary, "serve", "--controller", "--location-map", bad, "--listen", f"127.0.0.1:{port}"],
                           capture_output=True, text=True, timeout=30)
        rep.check(r.returncode == 2 and "listed twice" in r.stderr,
                  "the controller refuses a location map that lists a name twice (exit 2)",
                  f"exit {r.returncode}: {r.stderr}")


# ---------------------------------------------------------------------------------------------
# KNE topology: openconfig/kne's Topology message in protobuf text format. The fields this check
# knows are the ones of KNE's topo.proto a linerate topology may use; any other name is refused.

KNE_MSGS = {
    "Topology": {"name": "string", "nodes": "*Node", "links": "*Link"},
    "Node": {"name": "string", "vendor": "enum", "model": "string", "version": "string", "os": "string",
             "labels": "map:string:string", "config": "Config", "services": "map:uint32:Service",
             "constraints": "map:string:string"},
    "Config": {"command": "*string", "args": "*string", "image": "string", "env": "map:string:string",
               "entry_command": "string", "config_path": "string", "config_file": "string", "sleep": "uint32",
               "file": "string", "data": "string", "init_image": "string"},
    "Service": {"name": "string", "inside": "uint32", "outside": "uint32", "names": "*string", "node_port": "uint32"},
    "Link": {"a_node": "string", "a_int": "string", "z_node": "string", "z_int": "string"},
}
KNE_VENDORS = {"HOST", "ARISTA", "CISCO", "JUNIPER", "KEYSIGHT", "FRR", "GOBGP", "NOKIA", "OPENCONFIG",
               "ALPINE", "SONIC", "CIENA"}
TOKEN_RX = re.compile(r'\s+|#[^\n]*|(?P<str>"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\')|(?P<num>-?\d+(?:\.\d+)?)'
                      r'|(?P<id>[A-Za-z_][A-Za-z0-9_]*)|(?P<p>[{}:\[\],;<>])')


class TextprotoError(Exception):
    pass


def tokenize(text):
    out, pos, line = [], 0, 1
    while pos < len(text):
        m = TOKEN_RX.match(text, pos)
        if not m:
            raise TextprotoError(f"line {line}: cannot read {text[pos:pos + 20]!r}")
        for kind in ("str", "num", "id", "p"):
            if m.group(kind) is not None:
                v = m.group(kind)
                if kind == "str":
                    v = bytes(v[1:-1], "utf-8").decode("unicode_escape")
                out.append((kind, v, line))
        line += m.group(0).count("\n")
        pos = m.end()
    return out


def parse_message(toks, i, msg, end):
    """Parses fields until `end` ('}' or None: the end of input); returns (fields, next index)."""
    fields = {}
    schema = KNE_MSGS[msg]
    while i < len(toks) and not (end and toks[i][:2] == ("p", end)):
        kind, name, line = toks[i]
        if kind != "id":
            raise TextprotoError(f"line {line}: a field name expected, found {name!r}")
        if name not in schema:
            raise TextprotoError(f"line {line}: {msg} has no field {name!r} (known: {', '.join(schema)})")
        ftype = schema[name]
        i += 1
        colon = i < len(toks) and toks[i][:2] == ("p", ":")
        if colon:
            i += 1
        if i >= len(toks):
            raise TextprotoError(f"line {line}: {name}: a value expected")
        if toks[i][:2] in (("p", "{"), ("p", "<")):
            close = "}" if toks[i][1] == "{" else ">"
            sub = ftype.lstrip("*")
            if sub.startswith("map:"):
                _, ktype, vtype = sub.split(":")
                entry, i = parse_map_entry(toks, i + 1, ktype, vtype, close, line)
                value = entry
            elif sub in KNE_MSGS:
                value, i = parse_message(toks, i + 1, sub, close)
            else:
                raise TextprotoError(f"line {line}: {msg}.{name} is a {sub}, not a message")
            if i >= len(toks):
                raise TextprotoError(f"line {line}: {name}: unclosed {{")
            i += 1
        else:
            if not colon:
                raise TextprotoError(f"line {line}: {name}: ':' expected")
            value, i = parse_scalar(toks, i, ftype.lstrip("*"), f"{msg}.{name}", line)
        if ftype.startswith("map:"):
            fields.setdefault(name, {})
            k, v = value
            if k in fields[name]:
                raise TextprotoError(f"line {line}: {msg}.{name}: key {k!r} given twice")
            fields[name][k] = v
        elif ftype.startswith("*"):
            fields.setdefault(name, []).append(value)
        else:
            if name in fields:
                raise TextprotoError(f"line {line}: {msg}.{name} is not repeated but given twice")
            fields[name] = value
        if i < len(toks) and toks[i][:2] in (("p", ","), ("p", ";")):
            i += 1
    if end and i >= len(toks):
        raise TextprotoError(f"{msg}: unclosed message")
    return fields, i


def parse_scalar(toks, i, ftype, what, line):
    kind, v, _ = toks[i]
    if ftype == "string":
        if kind != "str":
            raise TextprotoError(f"line {line}: {what} is a string, found {v!r}")
        s = v
        i += 1
        while i < len(toks) and toks[i][0] == "str":  # adjacent strings concatenate
            s += toks[i][1]
            i += 1
        return s, i
    if ftype == "uint32":
        if kind != "num" or not re.fullmatch(r"\d+", v) or int(v) > 0xFFFFFFFF:
            raise TextprotoError(f"line {line}: {what} is a uint32, found {v!r}")
        return int(v), i + 1
    if ftype == "enum":
        if kind != "id" or v not in KNE_VENDORS:
            raise TextprotoError(f"line {line}: {what}: {v!r} is not a vendor ({', '.join(sorted(KNE_VENDORS))})")
        return v, i + 1
    raise TextprotoError(f"line {line}: {what}: type {ftype}")


def parse_map_entry(toks, i, ktype, vtype, close, line):
    key = value = None
    while i < len(toks) and toks[i][:2] != ("p", close):
        kind, name, l2 = toks[i]
        if name not in ("key", "value"):
            raise TextprotoError(f"line {l2}: a map entry has key and value, not {name!r}")
        i += 1
        if toks[i][:2] == ("p", ":"):
            i += 1
        if name == "key":
            key, i = parse_scalar(toks, i, ktype, "map key", l2)
        elif vtype in KNE_MSGS:
            if toks[i][:2] not in (("p", "{"), ("p", "<")):
                raise TextprotoError(f"line {l2}: a {vtype} expected")
            c2 = "}" if toks[i][1] == "{" else ">"
            value, i = parse_message(toks, i + 1, vtype, c2)
            i += 1
        else:
            value, i = parse_scalar(toks, i, vtype, "map value", l2)
    if key is None:
        raise TextprotoError(f"line {line}: a map entry without a key")
    return (key, value), i


def parse_topology(text):
    toks = tokenize(text)
    topo, i = parse_message(toks, 0, "Topology", None)
    return topo


def check_kne_dir(kdir, entrypoint):
    """Errors in a deploy/kne directory (empty: all good) and notes of what was checked."""
    errors, notes = [], []
    path = os.path.join(kdir, "linerate.pbtxt")
    try:
        topo = parse_topology(open(path).read())
    except TextprotoError as e:
        return [f"linerate.pbtxt: {e}"], notes
    nodes = topo.get("nodes", [])
    links = topo.get("links", [])
    if not topo.get("name"):
        errors.append("the topology has no name")
    names = [n.get("name") for n in nodes]
    if len(set(names)) != len(names) or not all(names):
        errors.append(f"node names must be unique and set: {names}")
    by_name = {n.get("name"): n for n in nodes}
    linked = {}  # node -> set of interfaces
    for k, l in enumerate(links):
        for end in ("a", "z"):
            node, iface = l.get(f"{end}_node"), l.get(f"{end}_int")
            if node not in by_name:
                errors.append(f"links[{k}].{end}_node {node!r} is not a node of the topology")
            if not re.fullmatch(r"eth[1-9]\d*", iface or ""):
                errors.append(f"links[{k}].{end}_int {iface!r}: data links are eth1, eth2... (eth0 is the cluster's)")
            if iface in linked.setdefault(node, set()):
                errors.append(f"links[{k}]: {node} {iface} is linked twice")
            linked[node].add(iface)
        if l.get("a_node") == l.get("z_node"):
            errors.append(f"links[{k}] links {l.get('a_node')} to itself")

    def args_of(n):
        return [str(a) for a in (n.get("config") or {}).get("args", [])]

    def command_of(n):
        return (n.get("config") or {}).get("command", [])

    for n in nodes:
        # Every interface the node's command line names is one of its links (and the other way for engines).
        named = set(re.findall(r"\beth\d+\b", " ".join(args_of(n))))
        for iface in sorted(named - {"eth0"} - linked.get(n.get("name"), set())):
            errors.append(f"node {n.get('name')}: its arguments name {iface}, which no link gives it")
        if not (n.get("config") or {}).get("image"):
            errors.append(f"node {n.get('name')}: no image")
    engines = [n for n in nodes if args_of(n)[:1] == ["serve"] and "--controller" not in args_of(n)]
    controllers = [n for n in nodes if "--controller" in args_of(n)]
    if len(engines) != 2 or len(controllers) != 1:
        errors.append(f"two engines and one controller expected, found {len(engines)} and {len(controllers)}")
    for n in engines + controllers:
        nm, cfg, args = n.get("name"), n.get("config") or {}, args_of(n)
        if command_of(n) != [entrypoint]:
            errors.append(f"node {nm}: command must be the image's binary {entrypoint}, is {command_of(n)}")
        if arg_after(args, "--listen") != f"0.0.0.0:{OTG_PORT}":
            errors.append(f"node {nm}: --listen 0.0.0.0:{OTG_PORT} expected")
        svc = (n.get("services") or {}).get(OTG_PORT)
        if not svc or svc.get("inside") != OTG_PORT:
            errors.append(f"node {nm}: a service {OTG_PORT} -> inside {OTG_PORT} expected (the OTG API)")
        if cfg.get("image") != "linerate:latest":
            errors.append(f"node {nm}: image linerate:latest expected")
    for n in engines:
        nm, args = n.get("name"), args_of(n)
        if arg_after(args, "--backend") != "afxdp":
            errors.append(f"engine {nm}: --backend afxdp expected (its ports are the pod's veth interfaces)")
        if arg_after(args, "--host-label") != nm:
            errors.append(f"engine {nm}: --host-label {nm} expected (its metrics' host label)")
        if linked.get(nm) != {"eth1", "eth2"}:
            errors.append(f"engine {nm}: its test ports are eth1 and eth2, linked: {sorted(linked.get(nm, []))}")
    for n in controllers:
        nm, cfg, args = n.get("name"), n.get("config") or {}, args_of(n)
        if linked.get(nm):
            errors.append(f"controller {nm}: has links {sorted(linked[nm])}; it has no test ports")
        path = arg_after(args, "--location-map")
        mounted = f"{cfg.get('config_path', '').rstrip('/')}/{cfg.get('config_file', '')}"
        if path != mounted:
            errors.append(f"controller {nm}: --location-map {path} is not where KNE mounts its config file ({mounted})")
        src = os.path.join(kdir, cfg.get("file", ""))
        if not cfg.get("file") or not os.path.isfile(src):
            errors.append(f"controller {nm}: config file {cfg.get('file')!r} missing beside the topology")
            continue
        lm_errs, entries = check_location_map(open(src).read(), cfg["file"])
        errors += lm_errs
        covered = set()
        for e in entries:
            m = re.fullmatch(r"service-(.+):(\d+);(.+)", str(e.get("endpoint", "")))
            if not m:
                errors.append(f"{cfg['file']}: {e.get('location')}: endpoint {e.get('endpoint')!r} is not "
                              f"service-ENGINE:{OTG_PORT};IFACE (KNE names a node's service service-NODE)")
                continue
            eng, port, iface = m.group(1), int(m.group(2)), m.group(3)
            if eng not in {x.get("name") for x in engines}:
                errors.append(f"{cfg['file']}: {e['location']}: {eng} is not an engine of the topology")
            elif port not in (by_name[eng].get("services") or {}):
                errors.append(f"{cfg['file']}: {e['location']}: {eng} has no service on port {port}")
            elif iface not in linked.get(eng, set()):
                errors.append(f"{cfg['file']}: {e['location']}: {eng} has no link {iface}")
            covered.add((eng, iface))
        for x in engines:
            for iface in sorted(linked.get(x.get("name"), [])):
                if (x.get("name"), iface) not in covered:
                    errors.append(f"{cfg['file']}: engine {x.get('name')} {iface} has no location name")
        notes.append(f"location map: {len(entries)} names, each an engine's service and linked interface")
    notes.append(f"topology {topo.get('name')!r}: {len(nodes)} nodes ({len(engines)} engines, "
                 f"{len(controllers)} controller), {len(links)} links, fields and values as KNE's Topology message")
    return errors, notes


def dockerfile_entrypoint():
    m = re.search(r'^ENTRYPOINT\s+\["([^"]+)"\]', open(os.path.join(ROOT, "deploy", "Dockerfile")).read(), re.M)
    return m.group(1) if m else None


def part_kne(rep):
    kdir = os.path.join(ROOT, "deploy", "kne")
    entry = dockerfile_entrypoint()
    errors, notes = check_kne_dir(kdir, entry)
    for e in errors:
        rep.fail(e)
    if not errors:
        for n in notes:
            rep.ok(n)
        rep.ok(f"engines' and controller's command is the image's entrypoint {entry}; every interface the "
               "nodes' arguments name is linked")

    def broken(label, fname, old, new, needle):
        with tempfile.TemporaryDirectory() as tmp:
            t = os.path.join(tmp, "kne")
            shutil.copytree(kdir, t)
            p = os.path.join(t, fname)
            text = open(p).read()
            if old not in text:
                rep.fail(f"broken copy {label}: {old!r} not in {fname}")
                return
            open(p, "w").write(text.replace(old, new, 1))
            errs, _ = check_kne_dir(t, entry)
            expect_refused(rep, label, errs, needle)

    broken("a link to an undeclared node", "linerate.pbtxt", 'a_node: "engine-b"', 'a_node: "engine-c"',
           "'engine-c' is not a node")
    broken("a misspelled field", "linerate.pbtxt", "z_int:", "z_intf:", "Link has no field 'z_intf'")
    broken("an unknown vendor", "linerate.pbtxt", "vendor: HOST", "vendor: LINUX", "'LINUX' is not a vendor")
    broken("an unclosed message", "linerate.pbtxt", 'z_int: "eth4"\n}', 'z_int: "eth4"\n', "unclosed")
    broken("the DUT naming an interface it has no link for", "linerate.pbtxt", "eth4 master br2",
           "eth5 master br2", "name eth5, which no link gives it")
    broken("a location map naming an unlinked interface", "location-map.yaml", "service-engine-b:8443;eth2",
           "service-engine-b:8443;eth3", "engine-b has no link eth3")
    broken("the location map mounted elsewhere", "linerate.pbtxt", 'config_path: "/etc/linerate"',
           'config_path: "/etc"', "is not where KNE mounts")


# ---------------------------------------------------------------------------------------------
# The image

BASE_PACKAGES = {"libc6", "libstdc++6", "libgcc-s1"}  # in every Debian image


def dockerfile_instructions(text):
    """(instruction, argument) pairs, continuation lines joined, comments and directives dropped."""
    out, cur = [], ""
    for line in text.splitlines():
        s = line.strip()
        if not cur and (not s or s.startswith("#")):
            continue
        if cur and s.startswith("#"):
            continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        cur += s
        word, _, rest = cur.partition(" ")
        out.append((word.upper(), rest.strip()))
        cur = ""
    return out


def stages(instrs):
    st = []
    for ins, arg in instrs:
        if ins == "FROM":
            m = re.fullmatch(r"(\S+)(?:\s+AS\s+(\S+))?", arg, re.I)
            st.append({"image": m.group(1), "name": m.group(2), "instrs": []})
        elif st:
            st[-1]["instrs"].append((ins, arg))
    return st


def apt_packages(run_arg):
    m = re.search(r"apt-get install ([^&;|]*)", run_arg)
    return [w for w in (m.group(1).split() if m else []) if not w.startswith("-")]


def ignored(path, patterns):
    """Docker's ignore rules, as far as this file uses them: the last matching pattern wins."""
    import fnmatch
    result = False
    for p in patterns:
        neg = p.startswith("!")
        pat = p[1:] if neg else p
        parts = path.split("/")
        if any(fnmatch.fnmatch("/".join(parts[:k]), pat) for k in range(1, len(parts) + 1)):
            result = not neg
    return result


def needed_packages(binary):
    """The Debian package of each library the binary links directly: {soname: package}."""
    dyn = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    sonames = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
    ldd = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    paths = dict(re.findall(r"^\s*(\S+) => (\S+)", ldd, re.M))
    paths.update({os.path.basename(p): p for p in re.findall(r"^\s*(/\S+) \(0x", ldd, re.M)})
    cands = {}
    for so in sonames:
        p = paths.get(so)
        if p:  # dpkg records /lib/... or /usr/lib/... (merged /usr): ask for both, and the file itself
            cands[so] = [p, p[4:] if p.startswith("/usr/") else "/usr" + p, os.path.realpath(p)]
    owners = {}
    every = sorted({c for cs in cands.values() for c in cs})
    r = subprocess.run(["dpkg", "-S"] + every, capture_output=True, text=True) if every else None
    for line in (r.stdout.splitlines() if r else []):
        pkg, _, path = line.partition(": ")
        owners[path.strip()] = pkg.split(":")[0].strip()  # libfoo1:amd64 -> libfoo1
    return {so: next((owners[c] for c in cands.get(so, []) if c in owners), None) for so in sonames}


def package_known(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    if r.returncode == 0 and "install ok installed" in r.stdout:
        return True
    r = subprocess.run(["apt-cache", "show", pkg], capture_output=True, text=True)
    return r.returncode == 0 and bool(r.stdout.strip())


def is_dpdk_plugin(pkg):
    r = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True)
    return r.returncode == 0 and "/dpdk/pmds-" in r.stdout


def check_dockerfile(dfile, ignore_file, needed):
    errors, notes = [], []
    st = stages(dockerfile_instructions(open(dfile).read()))
    if [(s["image"], s["name"]) for s in st] != [("debian:12", "build"), ("debian:12-slim", "runtime")]:
        return [f"stages must be debian:12 AS build, then debian:12-slim AS runtime: "
                f"{[(s['image'], s['name']) for s in st]}"], notes
    build, runtime = st
    runs = " && ".join(a for i, a in build["instrs"] if i == "RUN")
    if "scripts/deps.sh release" not in runs:
        errors.append("the build stage must install the build's packages with scripts/deps.sh release")
    if any(o not in runs for o in ("--buildtype=release", "-Ddpdk=enabled", "-Dotg=enabled", "-Dtests=false")):
        errors.append("the build stage must configure meson --buildtype=release -Ddpdk=enabled -Dotg=enabled "
                      "-Dtests=false")
    patterns = [l.strip() for l in open(ignore_file) if l.strip() and not l.startswith("#")]
    for i, a in build["instrs"]:
        if i != "COPY" or a.startswith("--from"):
            continue
        for src in a.split()[:-1]:
            if not os.path.exists(os.path.join(ROOT, src)):
                errors.append(f"COPY {src}: no such file in the repository")
            elif ignored(src, patterns):
                errors.append(f"COPY {src}: excluded by {os.path.basename(ignore_file)}")
    if not ignored("build/src/linerate", patterns) or not ignored(".git/config", patterns):
        errors.append(f"{os.path.basename(ignore_file)} must keep build/ and .git out of the context")
    entry = [a for i, a in runtime["instrs"] if i == "ENTRYPOINT"]
    if entry != ['["/usr/local/bin/linerate"]']:
        errors.append(f"the runtime's ENTRYPOINT must be [\"/usr/local/bin/linerate\"], is {entry}")
    copies = [a for i, a in runtime["instrs"] if i == "COPY"]
    if not any(a.startswith("--from=build") and a.endswith(" /usr/local/bin/linerate") for a in copies):
        errors.append("the runtime stage must copy the binary from the build stage to /usr/local/bin/linerate")
    if not any("/bpf" in a for a in copies):
        errors.append("the runtime stage must copy the XDP programs' objects")
    if any("deps.sh" in a or "meson" in a or "g++" in a for i, a in runtime["instrs"] if i == "RUN"):
        errors.append("the runtime stage builds nothing")
    pkgs = [p for i, a in runtime["instrs"] if i == "RUN" for p in apt_packages(a)]
    if not pkgs:
        return errors + ["the runtime stage installs no packages"], notes
    have = set(pkgs)
    for so, pkg in sorted(needed.items()):
        if pkg is None:
            errors.append(f"{so}: the binary links it but no Debian package holds it")
        elif pkg not in have | BASE_PACKAGES:
            errors.append(f"{so}: the binary links it, its package {pkg} is not in the runtime stage")
    needed_pkgs = set(needed.values())
    for p in pkgs:
        if p.startswith("lib") and not p.startswith("librte-") and p not in needed_pkgs:
            errors.append(f"runtime package {p}: the binary links no library of it (stale?)")
        if p.startswith("librte-") and p not in needed_pkgs and not is_dpdk_plugin(p):
            errors.append(f"runtime package {p}: neither linked nor a DPDK driver the EAL loads (pmds-*)")
        if not package_known(p):
            errors.append(f"runtime package {p}: not a Debian 12 package here (dpkg, apt-cache)")
    notes.append(f"runtime stage: {len(pkgs)} packages cover the {len(needed)} libraries the binary links "
                 f"({len([p for p in pkgs if p.startswith('librte-') and p not in needed_pkgs])} DPDK drivers "
                 "loaded at run time besides); each is a Debian 12 package")
    return errors, notes


def part_image(rep):
    dfile = os.path.join(ROOT, "deploy", "Dockerfile")
    ignore = os.path.join(ROOT, "deploy", "Dockerfile.dockerignore")
    hadolint = os.path.join(os.path.dirname(sys.executable), "hadolint")
    r = subprocess.run([hadolint, "--no-color", dfile], capture_output=True, text=True)
    rep.check(r.returncode == 0, "hadolint deploy/Dockerfile: no findings", (r.stdout + r.stderr).strip())
    binary = os.environ.get("LINERATE", os.path.join(ROOT, "build", "src", "linerate"))
    if not rep.check(os.access(binary, os.X_OK), f"the built binary {binary} is there"):
        return
    needed = needed_packages(binary)
    print(f"     linked: {', '.join(f'{s} ({p})' for s, p in sorted(needed.items()))}")
    errors, notes = check_dockerfile(dfile, ignore, needed)
    for e in errors:
        rep.fail(e)
    if not errors:
        for n in notes:
            rep.ok(n)
        rep.ok("stages debian:12 (scripts/deps.sh release, meson release) and debian:12-slim; ENTRYPOINT "
               "/usr/local/bin/linerate; what the build copies is in the context, build/ and .git are not")

    def broken(label, fname, old, new, needle, lint=False):
        with tempfile.TemporaryDirectory() as tmp:
            src = {"Dockerfile": dfile, "Dockerfile.dockerignore": ignore}
            paths = {}
            for k, v in src.items():
                paths[k] = os.path.join(tmp, k)
                shutil.copy(v, paths[k])
            text = open(paths[fname]).read()
            if old not in text:
                rep.fail(f"broken copy {label}: {old!r} not in {fname}")
                return
            open(paths[fname], "w").write(text.replace(old, new, 1))
            if lint:
                rr = subprocess.run([hadolint, "--no-color", paths["Dockerfile"]], capture_output=True, text=True)
                errs = [] if rr.returncode == 0 else [rr.stdout]
            else:
                errs, _ = check_dockerfile(paths["Dockerfile"], paths["Dockerfile.dockerignore"], needed)
            expect_refused(rep, label, errs, needle)

    broken("a linked library's package left out", "Dockerfile", "      libxdp1 \\\n", "",
           "libxdp.so.1: the binary links it, its package libxdp1 is not in the runtime stage")
    broken("a package the binary does not link", "Dockerfile", "      iproute2 \\\n",
           "      iproute2 \\\n      libgtest-dev \\\n", "libgtest-dev: the binary links no library")
    broken("another entrypoint", "Dockerfile", 'ENTRYPOINT ["/usr/local/bin/linerate"]',
           'ENTRYPOINT ["/bin/sh"]', "ENTRYPOINT must be")
    broken("the sources kept out of the context", "Dockerfile.dockerignore", "!src\n", "", "COPY src: excluded")
    broken("an unversioned base image (hadolint)", "Dockerfile", "FROM debian:12-slim AS runtime",
           "FROM debian AS runtime", "DL3006", lint=True)


# ---------------------------------------------------------------------------------------------
# Grafana

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


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in PARTS:
        print(f"usage: {sys.argv[0]} {'|'.join(PARTS)}", file=sys.stderr)
        return 2
    bootstrap()
    rep = Report()
    {"k8s": part_k8s, "kne": part_kne, "image": part_image, "grafana": part_grafana}[sys.argv[1]](rep)
    print(f"{sys.argv[1]}: {rep.passed} checks passed, {len(rep.errors)} failed")
    return 1 if rep.errors else 0


if __name__ == "__main__":
    sys.exit(main())
