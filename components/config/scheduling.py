"""Tolerations of the NPU agents beyond the ones they always carry."""
from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, model_validator

from components.config.base import SpecModel, label_key_problem


class Toleration(SpecModel):
    """One toleration added to the device plugin, exporter and validation pods, for a taint of your own."""

    key: str = Field(min_length=1, max_length=316, description="Key of the taint tolerated, e.g. `dedicated`.")
    operator: Literal["Equal", "Exists"] = Field("Equal", description="`Equal` (to `value`) or `Exists` (any value).")
    value: Optional[str] = Field(None, max_length=63, description="Value of the taint (with `Equal`).")
    effect: Optional[Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]] = Field(
        None, description="Effect tolerated; unset: every effect of that key.")
    toleration_seconds: Optional[int] = Field(None, ge=0, description="With `NoExecute`: how long the pod stays "
                                                                        "after the taint appears; unset: for ever.")

    @model_validator(mode="after")
    def _coherent(self) -> "Toleration":
        problem = label_key_problem(self.key)
        if problem:
            raise ValueError(f"key: {problem}")
        if self.operator == "Exists" and self.value is not None:
            raise ValueError("operator Exists tolerates any value; drop `value`, or write operator: Equal")
        if self.toleration_seconds is not None and self.effect != "NoExecute":
            raise ValueError("tolerationSeconds applies only to effect NoExecute; drop it, or write "
                             "effect: NoExecute")
        return self

    def as_kubernetes(self) -> dict[str, object]:
        """The toleration as a pod spec writes it."""
        return self.model_dump(by_alias=True, exclude_none=True)
