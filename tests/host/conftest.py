"""Fixtures of the host tests: the fake packages and a fresh fake Ascend node per test."""
from __future__ import annotations

from pathlib import Path

import pytest

from testkit.fakenode.node import FakeNode, missing_requirements
from testkit.fakenode.packages import PackageSet, build_packages


@pytest.fixture(scope="session")
def packages(tmp_path_factory) -> PackageSet:
    return build_packages(tmp_path_factory.mktemp("packages"))


@pytest.fixture
def node(tmp_path: Path, packages: PackageSet):
    reason = missing_requirements()
    if reason:
        pytest.skip(reason)
    with FakeNode(tmp_path / "node", packages) as fake:
        yield fake

