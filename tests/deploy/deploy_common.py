"""What every part of check_deploy.py shares: the repository's root and the report of checks."""
import os
import shutil
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


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


def report_outcome(rep, errors, notes, summary):
    """A part's findings: each error a failure; with none, each note and the summary a pass."""
    for e in errors:
        rep.fail(e)
    if not errors:
        for n in notes:
            rep.ok(n)
        rep.ok(summary)


def refuse_broken_copy(rep, label, src_dir, fname, old, new, needle, check, count=1):
    """A copy of src_dir whose fname has `old` replaced by `new` (count times) must be refused by
    check(copy's directory), which returns its errors, for the reason it was broken for."""
    with tempfile.TemporaryDirectory() as tmp:
        t = os.path.join(tmp, os.path.basename(src_dir))
        shutil.copytree(src_dir, t)
        p = os.path.join(t, fname)
        text = open(p).read()
        if text.count(old) < count:
            rep.fail(f"broken copy {label}: {old!r} not in {fname}")
            return
        open(p, "w").write(text.replace(old, new, count))
        expect_refused(rep, label, check(t), needle)
