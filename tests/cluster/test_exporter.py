"""The exporter: one DaemonSet per engine with its mode and sockets; a Service; only Prometheus gets in."""
from __future__ import annotations

from components.cluster.common.node_labels import node_labels

from .stacks import of_kind, one, pod_spec

# Under /run, never /var/run: the exporter refuses socket paths through a symlink (and /var/run is one).
SOCKETS = {"containerd": {"/run/containerd"},
           "docker": {"/run/containerd", "/run/docker", "/run/cri-dockerd.sock"}}


def exporters(objs: list[dict]) -> dict[str, dict]:
    return {ds["metadata"]["labels"]["ascend-npu.io/container-runtime"]: ds for ds in of_kind(objs, "DaemonSet")
            if ds["metadata"]["labels"]["app.kubernetes.io/component"] == "exporter"}


def test_one_daemonset_per_engine_with_its_mode_and_sockets(objects, specs):
    spec = specs["prod"]
    found = exporters(objects["prod"])
    assert set(found) == {"containerd", "docker"}
    for engine, ds in found.items():
        container = pod_spec(ds)["containers"][0]
        modes = [a for a in container["args"] if a.startswith("-containerMode=")]
        assert modes == [f"-containerMode={engine}"]
        paths = {m["mountPath"] for m in container["volumeMounts"]}
        assert SOCKETS[engine] <= paths
        assert not (set().union(*SOCKETS.values()) - SOCKETS[engine]) & paths, "mounts another engine's sockets"
        assert f"-endpoint={'/run/cri-dockerd.sock' if engine == 'docker' else '/run/containerd/containerd.sock'}" \
            in container["args"]
        assert not [a for a in container["args"] if "/var/run/" in a]
        selector = pod_spec(ds)["nodeSelector"]
        on = {n.name for n in spec.nodes if selector.items() <= node_labels(n, spec.versions).items()}
        assert on == {n.name for n in spec.nodes if n.container_runtime.value == engine}
    assert set(exporters(objects["dev"])) == {"containerd"}


def test_exporter_pod_as_facts_describe(objects):
    ds = exporters(objects["prod-v6"])["containerd"]
    spec, container = pod_spec(ds), pod_spec(ds)["containers"][0]
    assert spec["automountServiceAccountToken"] is False
    assert spec["priorityClassName"] == "ascend-npu-node-agent"
    assert container["securityContext"] == {"privileged": True, "readOnlyRootFilesystem": True, "runAsUser": 0,
                                            "runAsGroup": 0}
    assert "-port=8082" in container["args"] and "-updateTime=5" in container["args"]
    assert container["resources"]["limits"] == {"cpu": "1000m", "memory": "1000Mi"}  # build/npu-exporter.yaml
    assert container["ports"] == [{"name": "http-metrics", "containerPort": 8082, "protocol": "TCP"}]
    # v6.0.0 has no healthz: the probe asks the index page its metrics listener serves.
    assert container["livenessProbe"]["httpGet"] == {"path": "/", "port": "http-metrics"}
    assert not [a for a in container["args"] if "healthz" in a]


def test_exporter_v26_probes_its_healthz_endpoint(objects):
    container = pod_spec(exporters(objects["dev-exporter-v26"])["containerd"])["containers"][0]
    assert "--enable-healthz=true" in container["args"] and "--healthz-address=11256" in container["args"]
    assert {"name": "healthz", "containerPort": 11256, "protocol": "TCP"} in container["ports"]
    assert container["livenessProbe"]["httpGet"] == {"path": "/", "port": "healthz"}
    mounts = {m["mountPath"]: m.get("readOnly", False) for m in container["volumeMounts"]}
    assert mounts["/usr/local/Ascend/driver"] and mounts["/usr/local/dcmi"]


def test_service_covers_every_engine(objects):
    service = one(objects["prod"], "Service")
    assert service["spec"]["type"] == "ClusterIP"
    for ds in exporters(objects["prod"]).values():
        labels = ds["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= labels.items()
        assert service["spec"]["ports"][0]["targetPort"] in {p["name"] for p in pod_spec(ds)["containers"][0]["ports"]}


def test_network_policy_admits_only_prometheus_to_the_metrics_port(objects):
    objs = objects["prod"]
    policy = one(objs, "NetworkPolicy")
    spec = policy["spec"]
    assert spec["policyTypes"] == ["Ingress"]
    assert spec["ingress"] == [{
        # One peer holding both selectors: pods matching the labels AND in that namespace, not either.
        "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}},
                  "podSelector": {"matchLabels": {"app.kubernetes.io/name": "prometheus"}}}],
        "ports": [{"protocol": "TCP", "port": 8082}]}]
    guarded = [ds["metadata"]["name"] for ds in of_kind(objs, "DaemonSet")
               if spec["podSelector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()]
    assert guarded == ["npu-exporter-containerd", "npu-exporter-docker"]


def test_exporter_off_removes_it_and_everything_that_reads_it(objects):
    kinds = {o["kind"] for o in objects["prod-exporter-off"]}
    assert not kinds & {"Service", "NetworkPolicy", "Secret", "PodMonitor", "PrometheusRule", "ConfigMap",
                        "PriorityClass"}
    assert [ds["metadata"]["name"] for ds in of_kind(objects["prod-exporter-off"], "DaemonSet")] == [
        "ascend-device-plugin-910b", "ascend-device-plugin-310p"]
