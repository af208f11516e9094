"""Run the real program under Pulumi's mocks and record every registered resource."""
from __future__ import annotations

import asyncio
import logging
import runpy
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Coroutine

import pulumi
from google.protobuf import empty_pb2, json_format
from pulumi.runtime import mocks, rpc, settings
from pulumi.runtime.stack import run_in_stack

SECRET_SIG = rpc._special_secret_sig
SIG_KEY = rpc._special_sig_key
MASK, UNKNOWN_SHOWN = "[secret]", "[unknown]"


def mask(value: Any) -> Any:
    """A JSON value with every secret replaced by `[secret]` and every unknown by `[unknown]`."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SECRET_SIG:
            return MASK
        return {k: mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [mask(v) for v in value]
    return UNKNOWN_SHOWN if value == rpc.UNKNOWN else value


@dataclass
class Recorded:
    """One resource as the engine would see it."""

    urn: str
    type: str
    name: str
    parent: str
    custom: bool
    dependencies: list[str]
    property_dependencies: dict[str, list[str]]
    provider: str
    properties: dict  # wire form: secrets and unknowns keep their signatures, as analyzers receive them
    outputs: dict = field(default_factory=dict)

    def public(self) -> dict:
        """The JSON written to resources.json: secrets and unknowns masked."""
        return {"urn": self.urn, "type": self.type, "name": self.name, "parent": self.parent,
                "custom": self.custom, "dependencies": self.dependencies,
                "propertyDependencies": self.property_dependencies, "provider": self.provider,
                "inputs": mask(self.properties), **({"outputs": mask(self.outputs)} if self.outputs else {})}


class PlanMocks(pulumi.runtime.Mocks):
    """Providers echo their inputs back, as a preview shows them."""

    def new_resource(self, args: pulumi.runtime.MockResourceArgs):
        return f"{args.name}-id", dict(args.inputs)

    def call(self, args: pulumi.runtime.MockCallArgs):
        return {}


class RecordingMonitor(mocks.MockMonitor):
    """The SDK's mock monitor, keeping what each RegisterResource request carried."""

    def __init__(self, mocks_: pulumi.runtime.Mocks):
        super().__init__(mocks_)
        self.recorded: list[Recorded] = []
        self._by_urn: dict[str, Recorded] = {}

    def RegisterResource(self, request):
        response = super().RegisterResource(request)
        record = Recorded(
            urn=response.urn, type=request.type, name=request.name, parent=request.parent,
            custom=bool(request.custom), dependencies=sorted(set(request.dependencies)),
            property_dependencies={k: sorted(set(v.urns)) for k, v in sorted(request.propertyDependencies.items())},
            provider=request.provider, properties=json_format.MessageToDict(request.object))
        self.recorded.append(record)
        self._by_urn[record.urn] = record
        return response

    def RegisterResourceOutputs(self, request):
        if request.urn in self._by_urn:
            self._by_urn[request.urn].outputs = json_format.MessageToDict(request.outputs)
        return super().RegisterResourceOutputs(request)


def run_program(program: Path, project: str, stack: str, config: dict[str, str], secret_keys: list[str],
                preview: bool = True) -> list[Recorded]:
    """Execute `program` (a Pulumi `__main__.py`) as the language host does, against a recording monitor.

    Exceptions of the program (a SpecError, say) propagate unchanged once the runtime has settled.
    """
    pulumi.runtime.set_all_config(config, secret_keys)
    monitor = RecordingMonitor(PlanMocks())
    features = set(monitor.GetDeploymentInfo(empty_pb2.Empty()).supportedFeatures)
    settings.ROOT.set(None)
    settings.configure(mocks.MockSettings(
        monitor=monitor, monitor_features=features, engine=mocks.MockEngine(logging.getLogger("pulumi")),
        project=project, stack=stack, dry_run=preview, organization="organization", callbacks=None))
    run_closing_loops(run_in_stack(lambda: runpy.run_path(str(program), run_name="__main__")))
    # Registration order depends on how outputs resolve; URN order is the same on every run.
    return sorted(monitor.recorded, key=lambda r: r.urn)


def run_closing_loops(main: Coroutine) -> None:
    """Run `main` on an event loop of its own, then close that loop and every loop its worker threads used."""
    # The SDK makes each monitor call in the loop's default executor, and its mock monitor gives each worker thread an
    # event loop (mocks._ensure_event_loop) that nothing closes. Left to the garbage collector, such a loop may have
    # its self-pipe socket finalized first; its __del__ then prints `Exception ignored in BaseEventLoop.__del__ ...
    # Invalid file descriptor: -1`. So each worker gets its loop here, closed once the workers have stopped.
    worker_loops: list[asyncio.AbstractEventLoop] = []

    def give_worker_a_loop() -> None:
        loop = asyncio.new_event_loop()
        worker_loops.append(loop)
        asyncio.set_event_loop(loop)

    try:
        with asyncio.Runner() as runner:  # closing it stops the workers (shutdown_default_executor)
            runner.get_loop().set_default_executor(ThreadPoolExecutor(initializer=give_worker_a_loop))
            runner.run(main)
    finally:
        for loop in worker_loops:
            loop.close()
