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


def kubeconfig_for(kube: Api, name: str, rules: list[dict], server: str, ca: Path, folder: Path,
                   context: str = "", role: tuple[str, list[dict]] | None = None) -> Path:
    """A ServiceAccount NAME with a ClusterRole of RULES (and a Role in ROLE's namespace) bound to it, and a
    kubeconfig holding a short-lived token (its context named CONTEXT, default NAME)."""
    if role is not None:
        namespace, role_rules = role
        rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
        kube.create(f"{rbac}/roles", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
                                      "metadata": {"name": name}, "rules": role_rules})
        kube.create(f"{rbac}/rolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}]})
    kube.create(f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts",
                {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
    kube.create("/apis/rbac.authorization.k8s.io/v1/clusterroles",
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
                 "rules": rules})
    kube.create("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                 "metadata": {"name": name},
                 "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                 "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}]})
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
