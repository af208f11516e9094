"""The chart's prose and metadata: Chart.yaml, NOTES.txt, README.md, .helmignore."""
from __future__ import annotations

import json

from components.chart.values_yaml import parameter_tables
from components.cluster.common.node_labels import ACCELERATORS, CHIP, CONTAINER_RUNTIME, READY, RESOURCE_NAMES
from components.cluster.validation.job import APP as VALIDATION_APP
from components.cluster.values_contract import chart_only_values
from components.config.cluster import DevicePlugin

CHART_NAME = "ascend-npu"
CHART_VERSION = "0.1.0"
KUBE_VERSION = ">=1.28.0-0"
DESCRIPTION = ("Ascend NPU device plugin, NPU exporter, alerts, dashboard and validation Job for Kubernetes, "
               "generated from the ascend-npu model")
ADVERTISED = ",".join(f"{n.split('/')[1].upper()}:.status.allocatable.{n.replace('.', chr(92) + '.')}"
                       for n in dict.fromkeys(RESOURCE_NAMES.values()))


def chart_yaml() -> str:
    """Chart metadata; appVersion follows the default device plugin (MindCluster) release."""
    app_version = DevicePlugin().image.tag
    keywords = "".join(f"  - {k}\n" for k in ("ascend", "npu", "huawei", "device-plugin", "mindcluster"))
    return (f"apiVersion: v2\nname: {CHART_NAME}\ndescription: {DESCRIPTION}\ntype: application\n"
            f"version: {CHART_VERSION}\nappVersion: {json.dumps(app_version)}\n"
            f"kubeVersion: {json.dumps(KUBE_VERSION)}\nkeywords:\n{keywords}")


def host_layer(chip: str, engine: str, accelerator: str) -> str:
    """What a node needs before this chart does anything on it, in the words of both NOTES and README."""
    return f"""\
This chart runs the Kubernetes side only. The host layer cannot live in a chart, and the NPU
DaemonSets select only nodes that have it and say so with labels. Each NPU node needs FIRST:
  - the NPU driver and firmware, with `npu-smi info` healthy;
  - the CANN toolkit;
  - the Ascend Docker Runtime, configured for the node's container engine (handler `ascend`);
  - the labels {READY}=true, {CHIP}=<chip>, accelerator=<huawei-Ascend910|huawei-Ascend310|huawei-Ascend310P>
    and {CONTAINER_RUNTIME}=<containerd|docker>;
  - optionally a NoSchedule taint keyed by its resource name (huawei.com/Ascend910, ...), which the
    NPU DaemonSets and the validation Job tolerate.
ascend-npu's Pulumi program provides all of it: `pulumi up` with the host layer installs and checks
each node and labels it when it is ready. If you install the host stack yourself, label each node by
hand once `npu-smi info` is healthy, for example:
  kubectl label node <node> {READY}=true {CHIP}={chip} accelerator={accelerator} {CONTAINER_RUNTIME}={engine}"""


def notes_txt() -> str:
    """Rendered after install: what the nodes need first, and how to see the NPUs advertised."""
    accelerators = "(dict " + " ".join(f'"{c}" "{a}"' for c, a in ACCELERATORS.items()) + ")"
    return f"""\
{{{{- $chip := first .Values.devicePlugin.chips }}}}
{{{{- $namespace := .Values.namespace }}}}
{{{{ .Chart.Name }}}} {{{{ .Chart.Version }}}} is installed as release {{{{ .Release.Name }}}}.

{host_layer('{{ $chip }}', '{{ first .Values.exporter.containerRuntimes }}',
            '{{ get ' + accelerators + ' $chip }}')}

The nodes must run the versions these values name:
  driver {{{{ .Values.versions.driver }}}}, firmware {{{{ .Values.versions.firmware }}}},
  CANN {{{{ .Values.versions.cann }}}}, Ascend Docker Runtime {{{{ .Values.versions.dockerRuntime }}}}.

Check that the NPUs are advertised (allocatable per node):
  kubectl get nodes -o custom-columns='NAME:.metadata.name,{ADVERTISED}'
  kubectl -n {{{{ $namespace }}}} get daemonsets,pods -l app.kubernetes.io/part-of=ascend-npu -o wide
{{{{- if .Values.validation.enabled }}}}

A validation Job per chip type runs `npu-smi info` with one NPU of that chip:
{{{{- range $chip := .Values.devicePlugin.chips }}}}
{{{{- $job := printf "{VALIDATION_APP}-%s-%s" (lower $chip) (include "{CHART_NAME}.validationHash" (dict "context" $ "chip" $chip)) }}}}
  on {{{{ (index $.Values.validation.jobs $chip).node }}}} ({{{{ $chip }}}}):
  kubectl -n {{{{ $namespace }}}} wait --for=condition=complete job/{{{{ $job }}}} \\
    --timeout={{{{ $.Values.validation.timeoutSeconds }}}}s
  kubectl -n {{{{ $namespace }}}} logs job/{{{{ $job }}}}
{{{{- end }}}}
{{{{- else }}}}

The validation Jobs are off. To prove the chain end to end on one ready node of each chip type:
  --set validation.enabled=true --set validation.jobs.<chip>.node=<node>
  --set validation.jobs.<chip>.image.repository=<repository> --set validation.jobs.<chip>.image.tag=<tag>
{{{{- end }}}}
"""


def readme(values_text: str) -> str:
    """The chart's README; its parameter tables come from the `## @param` lines of `values_text`."""
    return f"""\
# {CHART_NAME}

{DESCRIPTION}.

The same Python builders produce these templates and the objects the Pulumi program registers;
tests render this chart with the real Helm engine and compare every object with the Pulumi
program's for the same values (only Helm's `helm.sh/chart` label and the value of
`app.kubernetes.io/managed-by` differ).

This chart is generated by `python -m components.chart` (`make chart`); do not edit it by hand.

## Before you install: the nodes

```text
{host_layer('910B', 'containerd', ACCELERATORS['910B'])}
```

## Install

The chart creates the agents' namespace (`namespace`, default `ascend-system`) with its Pod Security
labels, so install the release into another, existing namespace:

```sh
helm install ascend-npu charts/{CHART_NAME} --namespace kube-system -f my-values.yaml
```

Objects go where the values say: the agents in `namespace`, the device plugin's ConfigMap Role in
`kube-system`, the scrape Secret, rules ConfigMap and dashboard in `monitoring.prometheusNamespace`.
`values.schema.json` checks every value before anything renders (types, chip types and engines,
pinned images, bounds); a `latest`-style image tag is reported as `'not' failed` at the tag's path.

## Check the NPUs

```sh
kubectl get nodes -o custom-columns='NAME:.metadata.name,{ADVERTISED}'
kubectl -n ascend-system logs -l app.kubernetes.io/component=validation
```

## Lint

`helm lint --strict` reports no errors and no warnings. It reports one INFO, `icon is recommended`:
the project publishes no icon.

## Values the Pulumi stack leaves at their default

Every other value has a stack-config counterpart with the same meaning (`ascend-npu:<section>`, see
docs/stack-config.md in the project); these keep the chart's default under `pulumi up`, and why:

{chart_only_table()}

## Parameters

{parameter_tables(values_text)}"""


def chart_only_table() -> str:
    """The chart-only values as a Markdown table."""
    rows = [f"| `{path}` | `{json.dumps(value.value)}` | {value.why} |" for path, value in chart_only_values()]
    return "\n".join(["| Value | Default | Why not in the stack config |", "|---|---|---|", *rows])


def helmignore() -> str:
    """Files `helm package` leaves out."""
    return ".DS_Store\n.git/\n.gitignore\n*.swp\n*.bak\n*.tmp\n*.orig\n*~\n.idea/\n.vscode/\n"
