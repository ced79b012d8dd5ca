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
tests/deploy/validate-requirements.txt) and is skipped (77) when that venv is missing. Each part's
checks are in a module of their own beside this one (deploy_k8s.py, deploy_kne.py, deploy_image.py,
deploy_grafana.py; deploy_common.py holds the report they share).
"""
import os
import sys

from deploy_common import ROOT, Report
from deploy_grafana import part_grafana
from deploy_image import part_image
from deploy_k8s import part_k8s
from deploy_kne import part_kne

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
