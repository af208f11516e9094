"""The cluster a preview gates, reached before anything is planned: its kube context exists and its API server answers
with the kubeconfig's credentials, as the kubernetes provider and every drain and label step will need them."""
from __future__ import annotations

import os
from typing import Callable, Mapping, Optional

from components.config.problems import Problem
from components.config.stack import StackSpec
from components.kubeapi.client import Api, ApiError
from components.kubeapi.kubeconfig import Endpoint, KubeconfigError, kubeconfig_files, load_endpoint

FIELD = "cluster.kubeContext"
ANSWER_TIMEOUT = 10  # seconds for the API server's answer; a preview that waits minutes on a dead address helps nobody
PROBE = "/version"  # served to every authenticated user (system:public-info-viewer); a refused credential gets 401


def where(environ: Mapping[str, str]) -> str:
    """The kubeconfig files as the provider reads them, for the message."""
    files = kubeconfig_files(dict(environ))
    listed = ", ".join(map(str, files))
    return f"KUBECONFIG={listed}" if environ.get("KUBECONFIG") else listed or "~/.kube/config"


def answer(endpoint: Endpoint) -> None:
    """One authenticated GET of PROBE; ApiError when the server does not answer or refuses the credentials."""
    Api(endpoint, timeout=ANSWER_TIMEOUT).call("GET", PROBE)


def refusal(err: ApiError, server: str) -> str:
    """What the API server did instead of answering, after its address."""
    if err.status == 401:
        return ("refused the kubeconfig's credentials (HTTP 401): renew them (a token, a certificate, the exec "
                "plugin's login)")
    if err.status:
        return f"answered HTTP {err.status}: {err.message}"
    reason = err.message.removeprefix(f"the API server {server} did not answer: ")
    return f"did not answer ({reason}; waited at most {ANSWER_TIMEOUT} s)"


def cluster_problems(spec: StackSpec, environ: Optional[Mapping[str, str]] = None,
                     probe: Callable[[Endpoint], None] = answer) -> list[Problem]:
    """One line when the stack's context is missing or its API server does not answer; nothing when it does."""
    environ = os.environ if environ is None else environ
    try:
        endpoint = load_endpoint(spec.cluster.kube_context, dict(environ))
    except KubeconfigError as err:
        return [Problem(FIELD, f"{err}; a preview without its cluster would judge nothing of the cluster it gates "
                               "(a pull-request check: give the job the cluster's KUBECONFIG, "
                               "docs/pull-request-checks.md)")]
    try:
        probe(endpoint)
    except ApiError as err:
        return [Problem(FIELD, f"context {endpoint.context!r} of {where(environ)}: the API server {endpoint.server} "
                               f"{refusal(err, endpoint.server)}")]
    except KubeconfigError as err:
        return [Problem(FIELD, f"{err} ({where(environ)})")]
    return []
