"""Drive a policy pack the way the Pulumi CLI does: start it, read its port, speak the analyzer protocol."""
from __future__ import annotations

import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Optional

import grpc
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from components.plan.recorder import Recorded

LEVELS = {0: "advisory", 1: "mandatory", 2: "disabled", 3: "remediate"}


class PolicyPackError(Exception):
    """The pack did not start or answer; the message carries what it printed."""


@dataclass(frozen=True)
class Diagnostic:
    """One violation as the engine reports it."""

    policy: str
    pack: str
    message: str
    urn: str
    level: str

    def as_dict(self) -> dict:
        return {"policy": self.policy, "pack": self.pack, "enforcementLevel": self.level, "urn": self.urn,
                "message": self.message}


def _struct(value: dict) -> struct_pb2.Struct:
    out = struct_pb2.Struct()
    json_format.ParseDict(value, out)
    return out


class PolicyPackProcess:
    """A running policy pack (`python -u .` in its folder), closed on exit."""

    def __init__(self, pack_dir: Path, python: str = sys.executable, start_timeout: float = 60.0):
        self.pack_dir, self.python, self.start_timeout = pack_dir, python, start_timeout
        self.process: Optional[subprocess.Popen] = None
        self.channel: Optional[grpc.Channel] = None

    def __enter__(self) -> "PolicyPackProcess":
        self.process = subprocess.Popen([self.python, "-u", "."], cwd=self.pack_dir, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        port_line: list[bytes] = []
        reader = threading.Thread(target=lambda: port_line.append(self.process.stdout.readline()), daemon=True)
        reader.start()
        reader.join(self.start_timeout)
        text = port_line[0].decode().strip() if port_line else ""
        if not text.isdigit():
            self._stop()
            err = self.process.stderr.read().decode(errors="replace")[-2000:] if self.process.stderr else ""
            self.close()
            raise PolicyPackError(f"policy pack in {self.pack_dir} did not print its port: {text!r} {err}")
        self.channel = grpc.insecure_channel(f"127.0.0.1:{text}",
                                             options=[("grpc.max_receive_message_length", 400 * 1024 * 1024),
                                                      ("grpc.max_send_message_length", 400 * 1024 * 1024)])
        self.stub = analyzer_pb2_grpc.AnalyzerStub(self.channel)
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def _stop(self) -> None:
        """The pack's process ended (killed if it still runs); its pipes stay readable."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def close(self) -> None:
        if self.channel is not None:
            self.channel.close()
        self._stop()
        for stream in (self.process.stdout, self.process.stderr) if self.process else ():
            if stream:
                stream.close()

    def info(self) -> analyzer_pb2.AnalyzerInfo:
        return self.stub.GetAnalyzerInfo(empty_pb2.Empty())

    def configure(self, policy_config: dict[str, dict | str]) -> None:
        """Per-policy config as `--policy-pack-config` takes it: `{policy: level}` or `{policy: {enforcementLevel,
        ...properties}}`; a policy keeps the level it ships with unless the config names one."""
        shipped = {p.name: p.enforcementLevel for p in self.info().policies}
        codes = {v: k for k, v in LEVELS.items()}
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, conf in policy_config.items():
            conf = {"enforcementLevel": conf} if isinstance(conf, str) else dict(conf)
            level = conf.pop("enforcementLevel", None)
            request.policyConfig[name].CopyFrom(analyzer_pb2.PolicyConfig(
                enforcementLevel=codes[level] if level else shipped.get(name, 1), properties=_struct(conf)))
        self.stub.Configure(request)

    def analyze(self, resource: Recorded, providers: dict[str, Recorded]) -> list[Diagnostic]:
        """One Analyze call, as the engine makes for each resource it is about to register."""
        request = analyzer_pb2.AnalyzeRequest(type=resource.type, properties=_struct(resource.properties),
                                              urn=resource.urn, name=resource.name,
                                              options=analyzer_pb2.AnalyzerResourceOptions(parent=resource.parent),
                                              provider=self._provider(resource, providers))
        # The engine files each diagnostic under the resource it analyzed, whatever URN the pack wrote (pulumi
        # v3.274.0 pkg/resource/deploy/analyze_snapshot.go L86): the SDK writes none for a preview's unknown value.
        return self._diagnostics(self.stub.Analyze(request), lambda _urn: resource.urn)

    def analyze_stack(self, resources: Iterable[Recorded], providers: dict[str, Recorded]) -> list[Diagnostic]:
        """One AnalyzeStack call with the whole stack, as the engine makes at the end of a preview."""
        request = analyzer_pb2.AnalyzeStackRequest()
        for r in resources:
            item = request.resources.add()
            item.type, item.urn, item.name, item.parent = r.type, r.urn, r.name, r.parent
            # The engine judges the stack on each resource's outputs (deploy/step_generator.go AnalyzeResources):
            # a component's are what it registered, none when it registered none; a custom resource's in a preview
            # are its inputs.
            item.properties.CopyFrom(_struct(r.properties if r.custom else r.outputs))
            item.dependencies.extend(r.dependencies)
            item.options.CopyFrom(analyzer_pb2.AnalyzerResourceOptions(parent=r.parent))
            item.provider.CopyFrom(self._provider(r, providers))
            for prop, urns in r.property_dependencies.items():
                item.propertyDependencies[prop].urns.extend(urns)
        # A URN not of the stack is filed under the root stack (analyze_snapshot.go L124-132, step_generator.go L3751).
        urns = {r.urn for r in request.resources}
        root = next((r.urn for r in request.resources if r.type == "pulumi:pulumi:Stack"), "")
        return self._diagnostics(self.stub.AnalyzeStack(request), lambda urn: urn if urn in urns else root)

    @staticmethod
    def _provider(resource: Recorded, providers: dict[str, Recorded]) -> analyzer_pb2.AnalyzerProviderResource:
        urn = resource.provider.split("::", 4)
        provider = providers.get("::".join(urn[:4])) if resource.provider else None
        if provider is None:
            return analyzer_pb2.AnalyzerProviderResource()
        return analyzer_pb2.AnalyzerProviderResource(type=provider.type, urn=provider.urn, name=provider.name,
                                                     properties=_struct(provider.properties))

    @staticmethod
    def _diagnostics(response, filed: Callable[[str], str]) -> list[Diagnostic]:
        return [Diagnostic(d.policyName, d.policyPackName, d.message, filed(d.urn), LEVELS.get(d.enforcementLevel, "?"))
                for d in response.diagnostics]
