"""check_deploy.py kne: deploy/kne's topology, its links against its nodes and the interfaces they name."""
import os
import re

from deploy_common import ROOT, refuse_broken_copy, report_outcome
from deploy_k8s import OTG_PORT, arg_after, check_location_map

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
    report_outcome(rep, errors, notes,
                   f"engines' and controller's command is the image's entrypoint {entry}; every interface the "
                   "nodes' arguments name is linked")

    def broken(label, fname, old, new, needle):
        refuse_broken_copy(rep, label, kdir, fname, old, new, needle, lambda t: check_kne_dir(t, entry)[0])

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
