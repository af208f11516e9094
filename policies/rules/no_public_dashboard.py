"""A Kubernetes Dashboard is never reachable from outside the cluster without authentication and an allow-list."""
from __future__ import annotations

from typing import Any, Iterator, Mapping

from pulumi_policy import (
    EnforcementLevel,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
)

from model.dashboards import CONFIG_PROPERTIES, DashboardMatcher
from model.kube_objects import (
    BINDING_KINDS,
    RBAC_GROUP,
    annotations,
    binds_cluster_admin,
    describe,
    group_kind,
    labels,
    mapping,
    metadata,
    sequence,
    subject_id,
)
from model.preview import judged_at_up

PUBLIC_SERVICE_TYPES = ("LoadBalancer", "NodePort")
INGRESS_GROUPS = ("networking.k8s.io", "extensions")
GATEWAY_GROUP, ROUTE_KINDS = "gateway.networking.k8s.io", ("HTTPRoute", "TLSRoute")
HELM_GROUP = "helm.sh"
# Where the Dashboard charts put the type of the Service in front of the UI: 7.x (Kong proxy), then 6.x.
CHART_SERVICE_VALUES = (("kong", "proxy"), ("service",))
INGRESS_AUTH = ["nginx.ingress.kubernetes.io/auth-url", "nginx.ingress.kubernetes.io/auth-type",
                "nginx.ingress.kubernetes.io/auth-tls-secret"]
INGRESS_ALLOW = ["nginx.ingress.kubernetes.io/whitelist-source-range",
                 "nginx.ingress.kubernetes.io/allowlist-source-range"]
# Gateway API has no standard annotation for either; the route states what enforces them (a SecurityPolicy,
# an AuthorizationPolicy, the gateway's listener) so a reviewer can check it.
ROUTE_AUTH = ["ascend-npu.io/authenticated-by"]
ROUTE_ALLOW = ["ascend-npu.io/allowed-source-ranges"]
WORLD = ("0.0.0.0/0", "::/0")


def _what(args: ResourceValidationArgs) -> str:
    return describe(args.resource_type, args.props, args.name)


def _service(args: ResourceValidationArgs, match: DashboardMatcher, report: ReportViolation) -> None:
    props = args.props
    meta, spec = metadata(props), mapping(props.get("spec"))
    ports = sequence(spec.get("ports"))
    numbers = [mapping(p).get(field) for p in ports for field in ("port", "targetPort")]
    if not (match.by_labels(labels(props)) or match.by_labels(mapping(spec.get("selector")))
            or match.by_name(meta.get("name"), meta.get("namespace")) or match.by_port(numbers)):
        return
    exposed = [f"type {spec.get('type')}"] if spec.get("type") in PUBLIC_SERVICE_TYPES else []
    if sequence(spec.get("externalIPs")):
        exposed.append("externalIPs")
    if exposed:
        report(f"{_what(args)} exposes a Kubernetes Dashboard outside the cluster ({', '.join(exposed)}); make it "
               "type ClusterIP without externalIPs and reach it through an authenticated, allow-listed Ingress "
               "or `kubectl port-forward`", None)


def _ingress_backends(spec: Mapping[str, Any]) -> Iterator[tuple[Any, Any]]:
    """(service name, port) of the default backend and every path, in the v1 and v1beta1 shapes."""
    backends = [spec.get("defaultBackend"), spec.get("backend")]
    for rule in sequence(spec.get("rules")):
        backends += [mapping(path).get("backend") for path in sequence(mapping(mapping(rule).get("http")).get("paths"))]
    for backend in map(mapping, backends):
        service = mapping(backend.get("service"))
        if service:
            port = mapping(service.get("port"))
            yield service.get("name"), port.get("number") or port.get("name")
        elif backend.get("serviceName"):
            yield backend.get("serviceName"), backend.get("servicePort")


def _route_backends(spec: Mapping[str, Any], namespace: Any) -> Iterator[tuple[Any, Any, Any]]:
    """(name, namespace, port) of every backendRef of every rule."""
    for rule in sequence(spec.get("rules")):
        for ref in map(mapping, sequence(mapping(rule).get("backendRefs"))):
            yield ref.get("name"), ref.get("namespace") or namespace, ref.get("port")


def _missing_controls(props: Any, auth_keys: list[str], allow_keys: list[str]) -> list[str]:
    notes = annotations(props)
    missing = []
    if not any(notes.get(key) for key in auth_keys):
        missing.append(f"an authentication annotation ({' or '.join(auth_keys)})")
    ranges = [str(notes.get(key)) for key in allow_keys if notes.get(key)]
    if not ranges or any(world in r for r in ranges for world in WORLD):
        missing.append(f"a source allow-list annotation ({' or '.join(allow_keys)}) that does not admit 0.0.0.0/0")
    return missing


def _route(args: ResourceValidationArgs, backends: list[tuple[Any, ...]], match: DashboardMatcher,
           auth_keys: list[str], allow_keys: list[str], report: ReportViolation) -> None:
    props, meta = args.props, metadata(args.props)
    if not (match.by_labels(labels(props)) or match.by_name(meta.get("namespace"))
            or any(match.by_name(*backend[:-1]) or match.by_port([backend[-1]]) for backend in backends)):
        return
    missing = _missing_controls(props, auth_keys, allow_keys)
    if missing:
        report(f"{_what(args)} routes to a Kubernetes Dashboard but lacks {' and '.join(missing)}; add "
               f"{'them' if len(missing) > 1 else 'it'}, or keep the Dashboard internal and use "
               "`kubectl port-forward`", None)


def _binding(args: ResourceValidationArgs, match: DashboardMatcher, report: ReportViolation) -> None:
    props = args.props
    if not binds_cluster_admin(props):
        return
    namespace = metadata(props).get("namespace")
    accounts = [s for s in map(mapping, sequence(mapping(props).get("subjects")))
                if match.by_name(s.get("name"), s.get("namespace") or namespace)]
    if accounts:
        names = ", ".join(subject_id(s, namespace) for s in accounts)
        report(f"{_what(args)} makes the Kubernetes Dashboard's account ({names}) cluster-admin; bind it to a Role or "
               "ClusterRole that only reads what its users need, and let users log in with their own token", None)


def _helm(args: ResourceValidationArgs, match: DashboardMatcher, report: ReportViolation) -> None:
    if not match.by_name(args.props.get("chart")):
        return
    for path in CHART_SERVICE_VALUES:
        service = args.props.get("values")
        for key in path:
            service = mapping(mapping(service).get(key))
        if service.get("type") in PUBLIC_SERVICE_TYPES or sequence(service.get("externalIPs")):
            where = ".".join(path)
            report(f"{_what(args)} installs a Kubernetes Dashboard with `{where}` exposed outside the cluster; "
                   f"set `{where}.type: ClusterIP` without externalIPs", None)


def _validate(args: ResourceValidationArgs, report_violation: ReportViolation) -> None:
    config = args.get_config()
    match = DashboardMatcher.from_config(config)
    group, kind = group_kind(args.resource_type)
    namespace = metadata(args.props).get("namespace") if group in (*INGRESS_GROUPS, GATEWAY_GROUP) else None
    if (group, kind) == ("", "Service"):
        _service(args, match, report_violation)
    elif group in INGRESS_GROUPS and kind == "Ingress":
        backends = [(name, namespace, port) for name, port in _ingress_backends(mapping(args.props.get("spec")))]
        _route(args, backends, match, list(config.get("ingressAuthAnnotations", INGRESS_AUTH)),
               list(config.get("ingressAllowListAnnotations", INGRESS_ALLOW)), report_violation)
    elif group == GATEWAY_GROUP and kind in ROUTE_KINDS:
        backends = list(_route_backends(mapping(args.props.get("spec")), namespace))
        _route(args, backends, match, list(config.get("routeAuthAnnotations", ROUTE_AUTH)),
               list(config.get("routeAllowListAnnotations", ROUTE_ALLOW)), report_violation)
    elif group == RBAC_GROUP and kind in BINDING_KINDS:
        _binding(args, match, report_violation)
    elif group == HELM_GROUP:
        _helm(args, match, report_violation)


def _strings(default: list[str], description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string"}, "default": default, "description": description}


POLICY = ResourceValidationPolicy(
    name="no-public-dashboard",
    description="No Kubernetes Dashboard behind a LoadBalancer, NodePort or external IP, no Ingress or route to it "
                "without authentication and a source allow-list, and no cluster-admin Dashboard account.",
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=judged_at_up(_validate),
    config_schema=PolicyConfigSchema(properties={
        **CONFIG_PROPERTIES,
        "ingressAuthAnnotations": _strings(INGRESS_AUTH, "Ingress annotations that enable authentication."),
        "ingressAllowListAnnotations": _strings(INGRESS_ALLOW, "Ingress annotations that restrict source ranges."),
        "routeAuthAnnotations": _strings(ROUTE_AUTH, "HTTPRoute/TLSRoute annotations naming what authenticates."),
        "routeAllowListAnnotations": _strings(ROUTE_ALLOW, "HTTPRoute/TLSRoute annotations listing allowed CIDRs."),
    }),
    remediation_steps="Keep Dashboard Services ClusterIP without externalIPs; put an Ingress with an authentication "
                      "annotation (e.g. nginx `auth-url`) and a source allow-list (`whitelist-source-range`) in "
                      "front, or annotate a Gateway route with `ascend-npu.io/authenticated-by` and "
                      "`ascend-npu.io/allowed-source-ranges`; never bind the Dashboard account to cluster-admin.",
)
