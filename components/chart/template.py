"""`make template STACK=<stack>`: the chart rendered offline with a stack's values, as `helm template` prints it."""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

from components.chart.writer import CHART_DIR

RELEASE, RELEASE_NAMESPACE = "ascend-npu", "kube-system"
# The order Helm installs kinds in (helm pkg/releaseutil/kind_sorter.go `InstallOrder`, v3.18.6); other kinds
# (RuntimeClass, PodMonitor, ...) after them, as Helm does, so `kubectl apply -f` meets the Namespace first.
INSTALL_ORDER = ("PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
                 "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
                 "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole",
                 "ClusterRoleList", "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList",
                 "RoleBinding", "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController",
                 "ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob",
                 "IngressClass", "Ingress", "APIService")


def _rank(item: tuple[str, str]) -> tuple[int, str]:
    kind = (yaml.safe_load(item[1]) or {}).get("kind", "")
    return (INSTALL_ORDER.index(kind) if kind in INSTALL_ORDER else len(INSTALL_ORDER)), item[0]


def manifests(rendered: dict[str, str]) -> str:
    """Rendered objects in Helm's install order, each headed `# Source:` as `helm template` writes them; no NOTES."""
    texts = [(name, text.strip("\n")) for name, text in rendered.items()
             if not name.endswith("NOTES.txt") and text.strip()]
    return "".join(f"---\n# Source: {name}\n{text}\n" for name, text in sorted(texts, key=_rank))


def render_stack(stack: str, out: Path, stack_file: Path | None = None, placeholders: tuple[str, ...] = (),
                 chart_dir: Path = CHART_DIR) -> int:
    """Write the stack's values and the rendered chart under `out`; 2 with the problems when the config is refused."""
    from components.config.invocation import running
    with running("make template", stack):
        return _render(stack, out, stack_file, placeholders, chart_dir)


def _render(stack: str, out: Path, stack_file: Path | None, placeholders: tuple[str, ...], chart_dir: Path) -> int:
    import helm_python

    from components.config import SpecError
    from components.config.invocation import relative
    from components.plan.stack_files import StackFileError
    from components.plan.stack_plan import (
        EXIT_CONFIG,
        EXIT_OK,
        chart_values_text,
        config_problems,
        load_config,
        stack_chart_values,
    )
    try:
        config = load_config(stack, stack_file, placeholders)
        values = stack_chart_values(config)
    except StackFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except SpecError as exc:
        print(f"error: {config_problems(exc, config)}", file=sys.stderr)
        return EXIT_CONFIG
    out.mkdir(parents=True, exist_ok=True)
    values_file = out / "chart-values.yaml"
    values_file.write_text(chart_values_text(stack, values))
    with helm_python.Chart.load(str(chart_dir)) as chart:
        rendered = chart.render(helm_python.values_from_yaml(values_file.read_text()), name=RELEASE,
                                namespace=RELEASE_NAMESPACE)
    text = manifests(rendered)
    target = out / "manifests.yaml"
    target.write_text(text)
    print(f"rendered {chart_dir.name} for stack {stack} with the Helm engine: {text.count('# Source: ')} objects in "
          f"{relative(target)}")
    print(f"apply or commit it for GitOps; `helm install {RELEASE} {relative(chart_dir)} -n {RELEASE_NAMESPACE} "
          f"-f {relative(values_file)}` installs the same")
    return EXIT_OK
