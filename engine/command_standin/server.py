"""Stand-in for the pulumi-command provider plugin v1.2.1 (not the real one): a pulumirpc.ResourceProvider server."""
from __future__ import annotations

import functools
import json
import sys
from concurrent import futures

import grpc
from google.protobuf import empty_pb2
from pulumi.runtime.proto import engine_pb2, engine_pb2_grpc, plugin_pb2, provider_pb2, provider_pb2_grpc

from . import processes, resources
from .props import decode, encode

NAME, VERSION = "command", "1.2.1"
MAX_MESSAGE = 400 * 1024 * 1024  # the engine's own gRPC message limit
KIND = {k: provider_pb2.PropertyDiff.Kind.Value(k) for k in provider_pb2.PropertyDiff.Kind.keys()}


def schema() -> str:
    """A minimal schema: the two resource types this stand-in serves, their inputs and outputs."""
    types = {}
    for token, names in resources.INPUTS.items():
        inputs = {name: {"$ref": "pulumi.json#/Any"} for name in names}
        inputs["triggers"] = {"type": "array", "items": {"$ref": "pulumi.json#/Any"}, "replaceOnChanges": True}
        outputs = {**inputs, **({"stdout": {"type": "string"}, "stderr": {"type": "string"}}
                                if token in resources.COMMANDS else {})}
        types[token] = {"description": f"{token} (stand-in reproducing pulumi-command v{VERSION})",
                        "inputProperties": inputs, "requiredInputs": list(resources.REQUIRED[token]),
                        "properties": outputs, "required": sorted(outputs)}
    return json.dumps({"name": NAME, "version": VERSION, "resources": types,
                       "description": f"Stand-in for the pulumi-command provider v{VERSION}, not the real one."})


class EngineLog:
    """Messages to the engine's Log service (ephemeral ones are status lines, as v1.2.1's InfoStatus)."""

    # pulumi/pulumi-command v1.2.1 (7f3eb6f) provider/pkg/provider/util/util.go LogOutput calls InfoStatus for each
    # output line; pulumi/pulumi-go-provider v1.3.0 logging.go sends it through HostClient.LogStatus
    # (pulumi/pulumi pkg/resource/provider/host.go): one Engine.Log, INFO, the resource's URN, ephemeral. The CLI shows
    # such a message in the resource's row while it is the latest one and leaves it out of the final diagnostics.

    def __init__(self, address: str | None):
        self.stub = engine_pb2_grpc.EngineStub(grpc.insecure_channel(address)) if address else None

    def __call__(self, urn: str, message: str, ephemeral: bool = True) -> None:
        if self.stub is None:
            return
        try:
            self.stub.Log(engine_pb2.LogRequest(severity=engine_pb2.INFO, message=message, urn=urn,
                                                ephemeral=ephemeral))
        except grpc.RpcError:
            pass


def _type_and_name(request) -> tuple[str, str]:
    parts = request.urn.split("::")
    token = request.type or (parts[2].split("$")[-1] if len(parts) > 3 else "")
    return token, request.name or (parts[3] if len(parts) > 3 else "")


def operation(method):
    """Checks the type, and turns a failed operation into the gRPC error the engine reports."""
    @functools.wraps(method)
    def wrapper(self, request, context):
        token, _ = _type_and_name(request)
        if token not in resources.INPUTS:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, f"the command stand-in does not serve type {token!r}")
        try:
            return method(self, request, context, token)
        except resources.CommandError as err:
            context.abort(grpc.StatusCode.UNKNOWN, str(err))
    return wrapper


class Provider(provider_pb2_grpc.ResourceProviderServicer):
    """The calls the engine makes for command:local:Command, command:remote:Command and command:remote:CopyToRemote."""

    def __init__(self, engine: EngineLog):
        self.engine, self.sends_old_inputs = engine, False

    def GetPluginInfo(self, request, context):
        return plugin_pb2.PluginInfo(version=VERSION)

    def GetSchema(self, request, context):
        return provider_pb2.GetSchemaResponse(schema=schema())

    def CheckConfig(self, request, context):
        return provider_pb2.CheckResponse(inputs=request.news)

    def DiffConfig(self, request, context):
        return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_NONE)

    def Configure(self, request, context):
        # pulumi-go-provider provider.go Configure: old inputs are used only when the engine sends both kinds.
        self.sends_old_inputs = request.sends_old_inputs and request.sends_old_inputs_to_delete
        return provider_pb2.ConfigureResponse(acceptSecrets=True, supportsPreview=True)

    def _log(self, urn: str):
        """The command's output lines reach the engine as the resource's status lines."""
        return functools.partial(self.engine, urn)

    @operation
    def Check(self, request, context, token):
        inputs, failures = resources.check(token, decode(request.news))
        return provider_pb2.CheckResponse(inputs=encode(inputs), failures=[
            provider_pb2.CheckFailure(property=prop, reason=reason) for prop, reason in failures])

    @operation
    def Diff(self, request, context, token):
        old_inputs = decode(request.old_inputs) if self.sends_old_inputs else None
        found = resources.diff(token, decode(request.olds), decode(request.news), old_inputs,
                               list(request.ignoreChanges))
        return provider_pb2.DiffResponse(
            changes=provider_pb2.DiffResponse.DIFF_SOME if found["changes"] else provider_pb2.DiffResponse.DIFF_NONE,
            replaces=found["replaces"], diffs=found["diffs"], hasDetailedDiff=True,
            detailedDiff={k: provider_pb2.PropertyDiff(kind=KIND[v]) for k, v in found["detailed"].items()})

    @operation
    def Create(self, request, context, token):
        _, name = _type_and_name(request)
        resource_id, outputs = resources.create(token, name, decode(request.properties), request.preview,
                                                self._log(request.urn))
        return provider_pb2.CreateResponse(id=resource_id, properties=encode(outputs))

    @operation
    def Read(self, request, context, token):
        return provider_pb2.ReadResponse(id=request.id, properties=request.properties, inputs=request.inputs)

    @operation
    def Update(self, request, context, token):
        news, state = decode(request.news), decode(request.olds)
        for key in request.ignoreChanges:
            if key in state:
                news[key] = state[key]
        outputs = resources.update(token, state, news, request.preview, self._log(request.urn))
        return provider_pb2.UpdateResponse(properties=encode(outputs))

    @operation
    def Delete(self, request, context, token):
        resources.delete(token, decode(request.properties), self._log(request.urn))
        return empty_pb2.Empty()

    def Cancel(self, request, context):
        processes.cancel_all()
        return empty_pb2.Empty()


def serve(engine_address: str | None = None) -> tuple[grpc.Server, int]:
    """Start the server on a free loopback port; returns it and the port."""
    processes.uncancel()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64),
                         options=[("grpc.max_receive_message_length", MAX_MESSAGE),
                                  ("grpc.max_send_message_length", MAX_MESSAGE)])
    provider_pb2_grpc.add_ResourceProviderServicer_to_server(Provider(EngineLog(engine_address)), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port


def engine_address(argv: list[str]) -> str | None:
    """The engine's address: the last argument that is not a flag (the CLI may pass --tracing URL before it)."""
    address, skip = None, False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--tracing":
            skip = True
        elif not arg.startswith("-"):
            address = arg
    return address


def main(argv: list[str]) -> None:
    server, port = serve(engine_address(argv))
    print(port, flush=True)
    print(f"pulumi-resource-command stand-in (pulumi-command v{VERSION} behaviour, not the real provider) "
          f"on 127.0.0.1:{port}", file=sys.stderr, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main(sys.argv[1:])
