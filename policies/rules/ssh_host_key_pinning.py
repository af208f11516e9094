"""Every resource that dials a host over SSH pins its host key (and its bastion's), and no private key travels in
clear."""
from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy

from model.preview import environment, judged_at_up
from model.ssh_dials import LOCAL_TYPE, REMOTE_TYPES, dials

KEY_MARK = "PRIVATE KEY-----"
CLEAR_FIELDS = ("create", "update", "delete", "stdin", "environment", "triggers")
# A local command's stdin is where a secret goes (ascend-npu's destroy step keeps the key there, a Pulumi secret), and
# the engine hands a policy every secret unwrapped, so the pack cannot tell a secret stdin from a clear one there:
# tests/test_host_graph.py checks that the program's is a secret. Its command lines and environment are never secret.
LOCAL_CLEAR_FIELDS = ("create", "update", "delete", "environment", "triggers")


def _contains_key(value) -> bool:
    if isinstance(value, str):
        return KEY_MARK in value
    if isinstance(value, (list, tuple)):
        return any(_contains_key(v) for v in value)
    if hasattr(value, "values"):
        return any(_contains_key(v) for v in value.values())
    return False


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    for dial in dials(args.resource_type, args.props):
        if not dial.pinned:
            report_violation(f"{dial.what} dials {dial.host} without pinning its host key: {dial.fix}", None)
    if args.resource_type not in (*REMOTE_TYPES, LOCAL_TYPE):
        return
    for field in CLEAR_FIELDS if args.resource_type in REMOTE_TYPES else LOCAL_CLEAR_FIELDS:
        if _contains_key(environment(args.props) if field == "environment" else args.props.get(field)):
            report_violation(f"`{field}` carries a private key in clear; keep the key a Pulumi secret "
                             "(`pulumi config set --secret sshPrivateKey`), passed as a secret input", None)


POLICY = ResourceValidationPolicy(
    name="ssh-host-key-pinning",
    description="Every resource that dials a host over SSH, whatever its type, pins the host's key and its "
                "bastion's; private keys never appear in clear in commands.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    remediation_steps="Pin each host's key: ascend-npu's nodes[].hostKey and ssh.bastion.hostKey; a remote command's "
                      "connection.hostKey and proxy.hostKey; for ssh, scp, sftp or rsync in a local command "
                      "`-o StrictHostKeyChecking=yes` with a known_hosts file holding the key. Keep private keys "
                      "in `pulumi config set --secret`.",
)
