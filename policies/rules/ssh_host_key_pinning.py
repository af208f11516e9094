"""Remote connections pin the host's key (and the bastion's), and no private key travels in clear."""
from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from model.host_step_resources import REMOTE_TYPES
from model.kube_objects import mapping

KEY_MARK = "PRIVATE KEY-----"
CLEAR_FIELDS = ("create", "update", "delete", "stdin", "environment", "triggers")


def _contains_key(value) -> bool:
    if isinstance(value, str):
        return KEY_MARK in value
    if isinstance(value, (list, tuple)):
        return any(_contains_key(v) for v in value)
    if hasattr(value, "values"):
        return any(_contains_key(v) for v in value.values())
    return False


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if args.resource_type not in REMOTE_TYPES:
        return
    connection = mapping(args.props.get("connection"))
    host = connection.get("host", "?")
    if not connection.get("hostKey"):
        report_violation(f"connection to {host} does not pin the host key; set connection.hostKey "
                         "(`ssh-keyscan -t ed25519 <host>`)", None)
    proxy = mapping(connection.get("proxy"))
    if proxy and not proxy.get("hostKey"):
        report_violation(f"bastion {proxy.get('host', '?')} does not pin its host key; set proxy.hostKey", None)
    for field in CLEAR_FIELDS:
        if _contains_key(args.props.get(field)):
            report_violation(f"`{field}` carries a private key in clear; pass keys only as "
                             "connection.privateKey from a Pulumi secret", None)


POLICY = ResourceValidationPolicy(
    name="ssh-host-key-pinning",
    description="Every remote connection pins its host key and bastion key; private keys never appear in commands.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_validate,
    remediation_steps="Set `hostKey` on each connection and proxy (ascend-npu: nodes[].hostKey, ssh.bastion.hostKey); "
                      "keep the private key in `pulumi config set --secret` and pass it as connection.privateKey.",
)
