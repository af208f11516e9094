"""A newcomer's first day as the docs walk it: a copied stack planned before its secrets exist, with monitoring
the Prometheus Operator picks up, and its chart rendered offline for GitOps.

tests/fixtures/first-day/Pulumi.lab.yaml: two Atlas 800T A2 (910B) and one Atlas 300I Duo (310P) on containerd,
through a bastion, packages from a mirror with a login, kube-prometheus-stack's operator.
"""
from __future__ import annotations

import json

import yaml

from components.chart.template import render_stack
from components.plan.stack_plan import plan
from tests.stacks import ROOT

LAB = ROOT / "tests" / "fixtures" / "first-day" / "Pulumi.lab.yaml"
SECRETS = ("sshPrivateKey", "mirrorCredentials")


def test_the_copy_holds_nothing_of_the_stack_it_came_from():
    stack = yaml.safe_load(LAB.read_text())
    assert "encryptionsalt" not in stack and "secure:" not in json.dumps(stack)
    assert "prod" not in json.dumps(stack)


def test_it_plans_before_its_secrets_exist_and_not_without_saying_how(tmp_path, capsys):
    assert plan("lab", tmp_path, LAB, quiet=True) == 2
    # The hint names this stack: copied as it is, it plans this stack, not the dev one.
    assert "make plan STACK=lab PLACEHOLDER_SECRETS=sshPrivateKey" in capsys.readouterr().err
    assert plan("lab", tmp_path, LAB, quiet=True, placeholders=SECRETS) == 0


def test_the_operator_picks_the_monitoring_up_and_nothing_is_scraped_twice(tmp_path):
    assert plan("lab", tmp_path, LAB, quiet=True, placeholders=SECRETS) == 0
    resources = json.loads((tmp_path / "resources.json").read_text())
    kinds = {r["type"].rsplit(":", 1)[-1]: r for r in resources if r["type"].startswith("kubernetes:")}
    assert "Secret" not in kinds, "the additionalScrapeConfigs Secret beside a PodMonitor scrapes every series twice"
    for kind in ("PodMonitor", "PrometheusRule"):
        assert kinds[kind]["inputs"]["metadata"]["labels"]["release"] == "kube-prometheus-stack"


def test_the_gitops_path_renders_the_same_stack_offline(tmp_path):
    assert render_stack("lab", tmp_path, LAB, placeholders=SECRETS) == 0
    docs = [d for d in yaml.safe_load_all((tmp_path / "manifests.yaml").read_text()) if d]
    monitor = next(d for d in docs if d["kind"] == "PodMonitor")
    assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    daemonsets = {d["metadata"]["name"] for d in docs if d["kind"] == "DaemonSet"}
    assert len([n for n in daemonsets if "device-plugin" in n]) == 2  # 910B and 310P
