"""check_deploy.py k8s: deploy/k8s against the Kubernetes JSON schemas and what the engines and
the controller need."""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile

from deploy_common import ROOT, refuse_broken_copy, report_outcome

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
    report_outcome(rep, errors, notes,
                   "engines: host network, node selector, capabilities, host label from spec.nodeName, probes, "
                   "scrape annotations, DPDK hugepages and VFs; controller: location map ConfigMap; selectors")

    # Broken copies, each with one fault, must be refused (schema faults without kubectl: the same
    # validator; the others by the checks above).
    def broken(label, fname, old, new, needle, count=1):
        refuse_broken_copy(rep, label, kdir, fname, old, new, needle, lambda t: check_k8s_dir(t, kubectl=False)[0], count)

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
