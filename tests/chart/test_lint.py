"""`helm lint --strict` with the engine: no errors, no warnings, and every remaining message justified in the README."""
from __future__ import annotations

import helm_python
import pytest

from components.chart.writer import CHART_DIR

from ..cluster.test_schemas import K8S_VERSIONS
from .rendering import as_values_file

INFO, WARNING = 1, 2


@pytest.mark.parametrize("kube_version", K8S_VERSIONS)
@pytest.mark.parametrize("values", ["defaults", "dev", "prod", "prod-operator-off"])
def test_lint_reports_no_error_and_no_warning(stack_values, values, kube_version):
    report = helm_python.lint(CHART_DIR, as_values_file(stack_values[values]), strict=True,
                              kube_version=f"v{kube_version}.0")
    assert report["total_charts_linted"] == 1
    assert not report["errors"], report["errors"]
    assert [m for m in report["messages"] if m["severity"] >= WARNING] == []


def test_every_lint_message_left_is_explained_in_the_readme():
    report = helm_python.lint(CHART_DIR, strict=True)
    readme = (CHART_DIR / "README.md").read_text()
    assert report["messages"], "lint reports nothing at all: drop the README's lint note"
    for message in report["messages"]:
        assert message["severity"] == INFO and f"`{message['error']}`" in readme, message

