"""pytest set-up for the integration tests: the module search path (lrtest, scripts/testbed.py
and the test modules themselves), the fixtures every case that needs them asks for, and exit
status 77 (meson's skip) when every case that ran was skipped."""
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

import lrtest  # noqa: E402


@pytest.fixture
def root():
    """Namespaces, XDP programs and hugepages need root."""
    if os.geteuid() != 0:
        pytest.skip("needs root")


@pytest.fixture
def hugepages(root):
    """At least 512 reserved 2 MiB hugepages for DPDK (raised if fewer)."""
    try:
        with open(lrtest.HUGEPAGES) as f:
            have = int(f.read())
        if have < 512:
            with open(lrtest.HUGEPAGES, "w") as f:
                f.write("512")
    except OSError as e:
        pytest.skip(f"cannot reserve hugepages: {e}")


@pytest.fixture
def scapy():
    if not os.path.exists("/usr/bin/python3") or subprocess.run(["/usr/bin/python3", "-c", "import scapy"],
                                                                capture_output=True).returncode:
        pytest.skip("needs Debian's python3-scapy")


@pytest.fixture
def tshark():
    if not shutil.which("tshark"):
        pytest.skip("tshark not installed")


@pytest.fixture
def setpriv():
    if not os.path.exists("/usr/bin/setpriv"):
        pytest.skip("needs setpriv (util-linux)")


@pytest.fixture
def dut_program(root):
    """tests/bpf/dut_policer, built with the AF_XDP backend."""
    from test_procedures import DUT
    if not os.path.exists(DUT):
        pytest.skip(f"no DUT program at {DUT} (built with the AF_XDP backend)")
    return DUT


def pytest_sessionfinish(session, exitstatus):
    """meson counts exit status 77 as a skip: a run whose cases were all skipped says so."""
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or exitstatus != 0:
        return
    ran = sum(len(reporter.stats.get(k, [])) for k in ("passed", "failed", "error", "xpassed", "xfailed"))
    if ran == 0 and reporter.stats.get("skipped"):
        session.exitstatus = 77
