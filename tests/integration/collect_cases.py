#!/usr/bin/env python3
"""Lists the pytest cases of integration test modules without importing them, for meson: one
line per case, `SUITE<TAB>NAME<TAB>NODE`, where NODE is the pytest node id that
`python3 -m pytest DIR/NODE` runs (`test_procedures.py::test_throughput_ndr[mlr_afxdp]`) and NAME is the meson test's (`procedures/throughput_ndr_mlr_afxdp`: the module
and the function without their `test_` prefixes, the parametrize id after an underscore, every
character other than a letter, a digit or `_` made `_`). Suite: `timing` for test_timing.py,
`integration` for the others.

It reads each module's AST: every top-level `def test_*`, and its `@pytest.mark.parametrize`
decorators (stacked ones too), whose argument values must be literals, module-level literal
lists, or `pytest.param(..., id=...)`, unless `ids=[...]` gives the ids. Anything else is an
error here rather than a case meson silently misses; test_collection.py checks the list against
pytest's own collection.

    collect_cases.py test_afxdp.py test_live.py ...
"""
import ast
import itertools
import os
import re
import sys


class Unsupported(Exception):
    pass


def literal(node, consts):
    """The value of a literal node, or of a module-level constant it names (NAME, or
    module.NAME for a module beside it)."""
    if isinstance(node, ast.Name) and node.id in consts:
        return consts[node.id]
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        other = consts.get(("module", node.value.id))
        if other is not None and node.attr in other:
            return other[node.attr]
    try:
        return ast.literal_eval(node)
    except ValueError as e:
        raise Unsupported(f"line {node.lineno}: not a literal: {ast.unparse(node)}") from e


def is_parametrize(dec):
    return (isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr == "parametrize"
            and ast.unparse(dec.func.value) in ("pytest.mark", "mark"))


def value_id(v, argname, index):
    """pytest's id for one argument value (_idval): strings as they are, numbers, booleans and
    None by str(); anything else falls back to the argument's name and the value's index."""
    if isinstance(v, str):
        return v.encode("unicode_escape").decode("ascii")
    if v is None or isinstance(v, (bool, int, float)):
        return str(v)
    return f"{argname}{index}"


def parametrize_ids(dec, consts):
    """The ids one parametrize decorator gives, in order."""
    if len(dec.args) < 2:
        raise Unsupported(f"line {dec.lineno}: parametrize needs argnames and argvalues as positional arguments")
    names = literal(dec.args[0], consts)
    names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    values = dec.args[1]
    given = {}  # index -> the id of a pytest.param(..., id=...)
    if isinstance(values, (ast.Name, ast.Attribute)):
        vals = list(literal(values, consts))
    elif isinstance(values, (ast.List, ast.Tuple)):
        vals = []
        for i, it in enumerate(values.elts):
            if isinstance(it, ast.Call) and ast.unparse(it.func) == "pytest.param":
                pid = {k.arg: k.value for k in it.keywords}.get("id")
                if pid is None:
                    raise Unsupported(f"line {it.lineno}: pytest.param without id=")
                given[i] = literal(pid, consts)
                vals.append(None)
            else:
                vals.append(literal(it, consts))
    else:
        raise Unsupported(f"line {dec.lineno}: argvalues must be a list: {ast.unparse(values)}")
    kw = {k.arg: k.value for k in dec.keywords}
    ids = literal(kw["ids"], consts) if "ids" in kw else None
    if ids is not None:
        if not isinstance(ids, (list, tuple)) or len(ids) != len(vals) or not all(isinstance(i, str) for i in ids):
            raise Unsupported(f"line {dec.lineno}: ids must be a literal list of {len(vals)} strings")
        return list(ids)
    ids = []
    for i, v in enumerate(vals):
        if i in given:
            ids.append(given[i])
        elif len(names) == 1:
            ids.append(value_id(v, names[0], i))
        elif isinstance(v, (tuple, list)) and len(v) == len(names):
            ids.append("-".join(value_id(x, n, i) for x, n in zip(v, names)))
        else:
            raise Unsupported(f"line {dec.lineno}: value {i} does not match the names {names}")
    return ids


def module_constants(tree, here=None):
    """Module-level names bound to literals; with `here` (the module's directory), also the
    constants of the modules beside it that it imports, under ("module", name)."""
    consts = {}
    for node in tree.body:
        if here and isinstance(node, ast.Import):
            for a in node.names:
                path = os.path.join(here, a.name + ".py")
                if os.path.exists(path):
                    with open(path) as f:
                        consts[("module", a.asname or a.name)] = module_constants(ast.parse(f.read(), path))
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                consts[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return consts


def cases(path):
    """(node id, meson name) of every case in the module at `path`, in file order."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    consts = module_constants(tree, os.path.dirname(os.path.abspath(path)))
    module = os.path.splitext(os.path.basename(path))[0]
    short = module[len("test_"):] if module.startswith("test_") else module
    out = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
            continue
        decs = [d for d in node.decorator_list if is_parametrize(d)]
        base = node.name[len("test_"):]
        if not decs:
            out.append((node.name, f"{short}/{base}"))
            continue
        # pytest joins stacked decorators' ids bottom first, and varies the top one fastest.
        per = [parametrize_ids(d, consts) for d in reversed(decs)]
        for combo in itertools.product(*per):
            pid = "-".join(combo)
            out.append((f"{node.name}[{pid}]", f"{short}/{base}_" + re.sub(r"[^A-Za-z0-9_]", "_", pid)))
    return out


def main(paths):
    seen = {}
    lines = []
    for path in paths:
        suite = "timing" if os.path.basename(path) == "test_timing.py" else "integration"
        try:
            found = cases(path)
        except (Unsupported, SyntaxError) as e:
            sys.exit(f"collect_cases.py: {path}: {e}")
        for node, name in found:
            if name in seen:
                sys.exit(f"collect_cases.py: {path}: the test name {name} is also {seen[name]}")
            seen[name] = f"{path}::{node}"
            lines.append(f"{suite}\t{name}\t{os.path.basename(path)}::{node}")
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
