"""How long each installer and an engine restart may run on a node before the step stops it and fails."""
from __future__ import annotations

from pydantic import Field, field_validator

from components.config.base import SpecModel

# The vendor's own deployer asks for SSH sessions of 30 minutes because one deployment task can take that long
# (github.com/Ascend/ascend-deployer, README.en.rst, FAQ 5, at 0fbb89f): each installer gets that bound, the
# firmware (it flashes every NPU in turn) and the toolkit (the largest package, ~2 GB unpacked) twice it.
DEFAULTS = {"firmware": 3600, "driver": 1800, "toolkit": 3600, "kernels": 1800, "docker_runtime": 600,
            "engine_restart": 300, "npu_network": 120}
LONGEST = 24 * 3600


def bounded_seconds(value: int, who: str) -> int:
    """VALUE when it is a time limit WHO can keep (1 s to a day), else the error saying what to write."""
    if not 1 <= value <= LONGEST:
        raise ValueError(f"{value} s is no time limit {who} can keep; write seconds from 1 to {LONGEST}")
    return value


class StepTimeouts(SpecModel):
    """Seconds each installer (per kind) and each container-engine restart may take on one node."""

    firmware: int = Field(DEFAULTS["firmware"], description="Seconds the firmware installer may run.")
    driver: int = Field(DEFAULTS["driver"], description="Seconds the driver installer may run (it may build "
                                                         "kernel modules with DKMS).")
    toolkit: int = Field(DEFAULTS["toolkit"], description="Seconds the CANN toolkit installer may run.")
    kernels: int = Field(DEFAULTS["kernels"], description="Seconds the CANN kernels installer may run.")
    docker_runtime: int = Field(DEFAULTS["docker_runtime"],
                                description="Seconds the Ascend Docker Runtime installer may run.")
    engine_restart: int = Field(DEFAULTS["engine_restart"],
                                description="Seconds `systemctl restart` of containerd or docker may take.")
    npu_network: int = Field(DEFAULTS["npu_network"],
                             description="Seconds the NPUs' links and detection addresses have to come up once "
                                         "their addresses are written (nodes[].npuNetwork).")

    @field_validator("*")
    @classmethod
    def _bounded(cls, value: int) -> int:
        return bounded_seconds(value, "a step")
