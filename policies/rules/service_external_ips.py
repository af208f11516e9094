"""No Service claims `externalIPs` outside the site's allow-list (CVE-2020-8554: traffic to any IP intercepted)."""
from __future__ import annotations

import ipaddress

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from model.kube_objects import describe, group_kind, mapping, sequence
from model.preview import judged_at_up


def _networks(entries) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    networks = []
    for entry in entries:
        try:
            networks.append(ipaddress.ip_network(str(entry).strip(), strict=False))
        except ValueError:
            continue  # the config schema's pattern keeps these out; a bad entry allows nothing
    return networks


def _allowed(address: str, networks) -> bool:
    try:
        ip = ipaddress.ip_address(address.strip())
    except ValueError:
        return False
    return any(ip in network for network in networks)


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    if group_kind(args.resource_type) != ("", "Service"):
        return
    addresses = [str(a) for a in sequence(mapping(mapping(args.props).get("spec")).get("externalIPs"))]
    networks = _networks(args.get_config().get("allowedExternalIPs", []))
    denied = [a for a in addresses if not _allowed(a, networks)]
    if denied:
        report_violation(f"{describe(args.resource_type, args.props, args.name)} claims externalIPs "
                         f"{', '.join(denied)}: any Service may claim any address this way and receive the "
                         "cluster's traffic to it (CVE-2020-8554); use a LoadBalancer or an Ingress, or list "
                         "addresses the site owns in `allowedExternalIPs`", None)


POLICY = ResourceValidationPolicy(
    name="service-external-ips",
    description="No Service sets `externalIPs` outside `allowedExternalIPs`: Kubernetes does not check who owns "
                "an external IP, so a Service can take over cluster traffic to any address (CVE-2020-8554).",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        "allowedExternalIPs": {"type": "array", "items": {"type": "string"}, "default": [],
                               "description": "Addresses or CIDRs the site owns and routes to its nodes "
                                              "(e.g. `203.0.113.10/32`)."},
    }),
    remediation_steps="Remove `spec.externalIPs` and expose the Service through a LoadBalancer, an Ingress or a "
                      "Gateway. A site that routes its own addresses to the nodes lists them in "
                      "`allowedExternalIPs`; also enable the API server's `DenyServiceExternalIPs` admission "
                      "plugin where nothing needs them.",
)
