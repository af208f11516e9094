"""The AI frameworks a stack's workloads use, checked against its CANN before anything is touched."""
from __future__ import annotations

import re
from enum import Enum
from typing import Optional

from pydantic import Field, field_validator

from components.config.base import SpecModel, require_pinned
from components.config.compatibility import load_matrix
from components.config.problems import Problem
from components.config.redact import preview
from components.config.versions import VERSION

PYTHON = re.compile(r"^3\.[0-9]{1,2}$")


class FrameworkName(str, Enum):
    TORCH_NPU = "torch_npu"
    MINDSPORE = "mindspore"


class Framework(SpecModel):
    """One framework release the workloads import (the pip package's version)."""

    name: FrameworkName = Field(description="`torch_npu` (Ascend Extension for PyTorch) or `mindspore`.")
    version: str = Field(description="The exact package version, e.g. `2.1.0.post8` (torch_npu) or `2.4.0`.")
    python: Optional[str] = Field(None, description="The workloads' Python, major.minor (e.g. `3.10`); checked "
                                                    "against what that release supports.")

    @field_validator("version")
    @classmethod
    def _version(cls, value: str) -> str:
        require_pinned(value, "framework version", "2.1.0.post8")
        if VERSION.match(value) is None:
            raise ValueError(f"{preview(value)} is not a version; write the package's exact version, e.g. "
                             "2.1.0.post8 (`pip show torch_npu`)")
        return value

    @field_validator("python", mode="before")
    @classmethod
    def _python(cls, value: object) -> object:
        if isinstance(value, float):
            raise ValueError(f"{value} reads as a number (3.10 becomes 3.1); quote it: python: \"3.10\"")
        if isinstance(value, str) and PYTHON.match(value.strip()) is None:
            raise ValueError(f"{preview(value)} is not a Python version; write major.minor in quotes, e.g. \"3.10\"")
        return value


def check_frameworks(frameworks: list[Optional[Framework]], versions) -> list[Problem]:
    """Each framework release is paired with the stack's CANN (and its Python) by the framework's own table."""
    matrix, problems = load_matrix(), []
    for i, framework in enumerate(frameworks):
        if framework is None:
            continue
        problem = matrix.framework_problem(framework.name.value, framework.version, versions.cann, framework.python)
        if problem:
            problems.append(Problem(f"frameworks[{i}]", f"{problem}; change versions.cann or the framework version "
                                                        "(the framework decides the CANN, the CANN the driver)"))
    return problems
