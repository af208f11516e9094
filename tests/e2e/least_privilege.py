"""A kubeconfig for a ServiceAccount bound to exactly the rules a docs page names, for running a tool as it."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from components.kubeapi.client import Api
from engine.cache import REPO

NAMESPACE = "kube-system"
# Where each tool's rules are written for users: (page under docs/, the heading its `rules:` block follows).
DRAIN_RULES = ("host-layer.md", "## Upgrades that drain")
DOCTOR_RULES = ("day-2.md", "## Doctor: what is wrong with a running stack")


def docs_rules(where: tuple[str, str]) -> list[dict]:
    """The `rules:` YAML block that follows the heading on the docs page WHERE names (what a user copies)."""
    page, heading = where
    text = (REPO / "docs" / page).read_text()
    section = text[text.index(heading + "\n"):]
    block = re.search(r"```yaml\n(rules:.*?)```", section, re.DOTALL)
    return yaml.safe_load(block.group(1))["rules"]


def docs_role(where: tuple[str, str]) -> tuple[str, list[dict]]:
    """The namespace and rules of the first namespaced block (`namespace:` then `rules:`) after the heading."""
    page, heading = where
    text = (REPO / "docs" / page).read_text()
    section = text[text.index(heading + "\n"):]
    block = yaml.safe_load(re.search(r"```yaml\n(namespace:.*?)```", section, re.DOTALL).group(1))
    return block["namespace"], block["rules"]


RBAC = "rbac.authorization.k8s.io/v1"


def bind(kube: Api, name: str, subject: dict, rules: list[dict], role: tuple[str, list[dict]] | None = None) -> None:
    """A ClusterRole NAME of RULES (and a Role NAME of ROLE's rules in its namespace), each bound to SUBJECT."""
    scopes = [("/apis/" + RBAC, "ClusterRole", rules)]
    if role is not None:
        scopes.append((f"/apis/{RBAC}/namespaces/{role[0]}", "Role", role[1]))
    for base, kind, granted in scopes:
        kube.create(f"{base}/{kind.lower()}s", {"apiVersion": RBAC, "kind": kind, "metadata": {"name": name},
                                                "rules": granted})
        kube.create(f"{base}/{kind.lower()}bindings", {
            "apiVersion": RBAC, "kind": f"{kind}Binding", "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": name},
            "subjects": [subject]})


def kubeconfig_for(kube: Api, name: str, rules: list[dict], server: str, ca: Path, folder: Path,
                   context: str = "", role: tuple[str, list[dict]] | None = None) -> Path:
    """A ServiceAccount NAME with a ClusterRole of RULES (and a Role in ROLE's namespace) bound to it, and a
    kubeconfig holding a short-lived token (its context named CONTEXT, default NAME)."""
    kube.create(f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts",
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
    bind(kube, name, {"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}, rules, role)
    token = kube.request("POST", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{name}/token",
                         {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                          "spec": {"expirationSeconds": 600}})["status"]["token"]
    path = folder / f"{name}.kubeconfig"
    context = context or name
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "local", "cluster": {"server": server, "certificate-authority": str(ca)}}],
        "users": [{"name": name, "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": "local", "user": name}}]}))
    return path
