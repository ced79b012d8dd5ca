"""What every part of check_deploy.py shares: the repository's root and the report of checks."""
import os

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
