"""meson runs one test per pytest case, from the list collect_cases.py reads out of the modules'
ASTs at configure time. That list must be pytest's own: the same cases, none missing."""
import glob
import os
import subprocess
import sys

from lrtest import check

HERE = os.path.dirname(os.path.abspath(__file__))


def test_meson_list_is_pytests():
    modules = sorted(glob.glob(os.path.join(HERE, "test_*.py")))
    listed = subprocess.run([sys.executable, os.path.join(HERE, "collect_cases.py"), *modules],
                            capture_output=True, text=True, timeout=60)
    check(listed.returncode == 0, f"collect_cases.py: {listed.stderr}")
    ours = {node for suite, name, node in (line.split("\t") for line in listed.stdout.splitlines())}
    collected = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                                *modules], capture_output=True, text=True, timeout=120, cwd=HERE)
    check(collected.returncode == 0, f"pytest --collect-only: exit {collected.returncode}\n{collected.stdout}"
                                     f"{collected.stderr}")
    theirs = {line.strip() for line in collected.stdout.splitlines() if "::" in line}
    check(ours == theirs, f"only in collect_cases.py: {sorted(ours - theirs)}; only pytest's: {sorted(theirs - ours)}")
    print(f"     {len(ours)} cases")
