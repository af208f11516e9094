{{/*
Helpers of the ascend-npu chart. Each one decides exactly as the function of components/cluster that
names it with @template_function; the chart tests render both and compare them object by object.
*/}}

{{/* Chart name and version, as the helm.sh/chart label writes them. */}}
{{- define "ascend-npu.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{/*
labels.object_labels: the recommended labels plus the object's own, which win; Helm writes its own
managed-by (.Release.Service) and helm.sh/chart.
Takes (dict "context" $ "component" .. "name" .. "version" .. "extra" (dict ..)).
*/}}
{{- define "ascend-npu.labels" -}}
{{- $labels := dict
      "app.kubernetes.io/name" .name
      "app.kubernetes.io/component" .component
      "app.kubernetes.io/part-of" "ascend-npu"
      "app.kubernetes.io/managed-by" .context.Release.Service
      "helm.sh/chart" (include "ascend-npu.chart" .context) -}}
{{- with .version }}{{ $_ := set $labels "app.kubernetes.io/version" . }}{{ end -}}
{{- range $key, $value := .extra }}{{ $_ := set $labels $key $value }}{{ end -}}
{{- toYaml $labels -}}
{{- end }}

{{/*
metadata.image_repository: the repository pulled, its registry part (a first part holding "." or ":", or
localhost; none means Docker Hub) replaced by the image's own registry, else images.registry (host[:port] and any
project path), path kept; a repository already under that registry as written.
Takes (dict "image" .. "registry" ..).
*/}}
{{- define "ascend-npu.repository" -}}
{{- $registry := .image.registry | default .registry -}}
{{- if and $registry (not (hasPrefix (printf "%s/" $registry) .image.repository)) }}
{{- $registry }}/{{ regexReplaceAll "^(localhost|[^/]*[.:][^/]*)/" .image.repository "" }}
{{- else }}{{ .image.repository }}{{ end -}}
{{- end }}

{{/* metadata.image_reference: repository:tag@digest, repository@digest or repository:tag, as pulled. */}}
{{- define "ascend-npu.image" -}}
{{- include "ascend-npu.repository" . -}}
{{- with .image.tag }}:{{ . }}{{ end -}}
{{- with .image.digest }}@{{ . }}{{ end -}}
{{- end }}

{{/* metadata.pull_secrets: imagePullSecrets naming images.pullSecret; nothing when it is unset. */}}
{{- define "ascend-npu.pullSecrets" -}}
{{- with .pullSecret }}{{ dict "imagePullSecrets" (list (dict "name" .)) | toYaml }}{{ end -}}
{{- end }}

{{/* labels.image_version: the tag, else sha256- and the first 12 hex digits of the digest. */}}
{{- define "ascend-npu.imageVersion" -}}
{{- if .tag }}{{ .tag }}{{ else }}sha256-{{ .digest | trimPrefix "sha256:" | trunc 12 }}{{ end -}}
{{- end }}

{{/* node_labels.resource_name: the extended resource one NPU of a chip type is requested by. */}}
{{- define "ascend-npu.resourceName" -}}
{{- get (dict "910" "huawei.com/Ascend910" "910B" "huawei.com/Ascend910" "910C" "huawei.com/Ascend910" "310" "huawei.com/Ascend310" "310P" "huawei.com/Ascend310P") . -}}
{{- end }}

{{/*
validation.version_hash: 8 hex digits of sha256 over compact key-sorted JSON (toJson) of what one chip's
Job proves; images spelled out as pulled, so that a missing digest or tag is null, as in the values.
Takes (dict "context" $ "chip" "<chip>").
*/}}
{{- define "ascend-npu.validationHash" -}}
{{- $values := .context.Values -}}
{{- $plugin := $values.devicePlugin.image -}}
{{- $job := index $values.validation.jobs .chip -}}
{{- $image := $job.image -}}
{{- $registry := $values.images.registry -}}
{{- $proved := dict
      "versions" $values.versions
      "chip" .chip
      "node" $job.node
      "devicePlugin" (dict "repository" (include "ascend-npu.repository" (dict "image" $plugin "registry" $registry))
                           "tag" $plugin.tag "digest" $plugin.digest "pullPolicy" $plugin.pullPolicy)
      "image" (dict "repository" (include "ascend-npu.repository" (dict "image" $image "registry" $registry))
                    "tag" $image.tag "digest" $image.digest "pullPolicy" $image.pullPolicy)
-}}
{{- toJson $proved | sha256sum | trunc 8 -}}
{{- end }}

{{/* exporter.update_time_args: the configured interval, else the release manifest's; none when neither. */}}
{{- define "ascend-npu.updateTimeArgs" -}}
{{- $chosen := .manifest -}}
{{- if not (kindIs "invalid" .updateTime) }}{{ $chosen = .updateTime }}{{ end -}}
{{- if kindIs "invalid" $chosen }}[]{{ else }}{{ list (printf "-updateTime=%v" $chosen) | toYaml }}{{ end -}}
{{- end }}

{{/* dashboard_access.subjects: the group and/or the Dashboard's ServiceAccount. */}}
{{- define "ascend-npu.dashboardSubjects" -}}
{{- $subjects := list -}}
{{- with .group }}
{{- $subjects = append $subjects (dict "kind" "Group" "apiGroup" "rbac.authorization.k8s.io" "name" .) }}
{{- end -}}
{{- if .serviceAccount }}
{{- $account := dict "kind" "ServiceAccount" "name" .serviceAccount "namespace" .dashboardNamespace }}
{{- $subjects = append $subjects $account }}
{{- end -}}
{{- toYaml $subjects -}}
{{- end }}

{{/*
A DNS-label value inside a document the builders write with yaml.safe_dump: quoted where PyYAML would
read it as another type (true, 123, 2024-01-02), plain otherwise.
*/}}
{{- define "ascend-npu.yamlString" -}}
{{- if regexMatch "^(yes|no|true|false|on|off|null|0b[0-1_]+|0[0-7_]+|0|[1-9][0-9_]*|0x[0-9a-fA-F_]+|[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9])$" . }}'{{ . }}'{{ else }}{{ . }}{{ end -}}
{{- end }}
