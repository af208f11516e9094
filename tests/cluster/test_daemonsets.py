"""Every NPU DaemonSet: placement on ready nodes, tolerations, priority, Guaranteed resources, probes."""
from __future__ import annotations

import pytest

from components.cluster.common.node_labels import NPU_TAINT_KEYS, node_labels, node_taints, resource_name
from tests.kube_schemas import K8S_VERSIONS, builtin_failures

from .stacks import VARIANTS, of_kind, one, pod_spec


def tolerated(tolerations: list[dict], taint: dict) -> bool:
    """Whether a pod with these tolerations may run on a node with this taint (the scheduler's rule)."""
    for t in tolerations:
        if t.get("effect") not in (None, taint["effect"]) or t.get("key") not in (None, taint["key"]):
            continue
        if t.get("operator") == "Exists" or t.get("value") == taint.get("value"):
            return True
    return False


def selected(daemonset: dict, spec) -> set[str]:
    """Names of the spec's nodes the DaemonSet runs on, once every node carries its labels."""
    selector = pod_spec(daemonset)["nodeSelector"]
    return {n.name for n in spec.nodes if selector.items() <= node_labels(n, spec.versions).items()}


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_daemonset_is_a_well_behaved_node_agent(objects, variant):
    objs = objects[variant]
    priority_classes = {o["metadata"]["name"] for o in of_kind(objs, "PriorityClass")} | {"system-node-critical"}
    for ds in of_kind(objs, "DaemonSet"):
        name, spec = ds["metadata"]["name"], pod_spec(ds)
        assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}}
        assert spec["priorityClassName"] in priority_classes, name
        assert {"key": "CriticalAddonsOnly", "operator": "Exists"} in spec["tolerations"]
        for key in NPU_TAINT_KEYS:
            assert tolerated(spec["tolerations"], {"key": key, "value": "present", "effect": "NoSchedule"}), key
        assert spec["nodeSelector"]["ascend-npu.io/ready"] == "true"
        assert ds["spec"]["selector"]["matchLabels"].items() <= ds["spec"]["template"]["metadata"]["labels"].items()
        for container in spec["containers"]:
            resources = container["resources"]
            assert resources["requests"] == resources["limits"] and {"cpu", "memory"} <= set(resources["limits"])
            ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
            if "livenessProbe" in container:
                probe_port = container["livenessProbe"]["httpGet"]["port"]
                assert probe_port in ports, f"{name}: liveness probe on a port the container does not open"
            assert container["securityContext"]["readOnlyRootFilesystem"] is True
            assert "@sha256:" in container["image"] or ":" in container["image"].rsplit("/", 1)[1]


def test_device_plugin_per_chip_on_exactly_that_chips_nodes(objects, specs):
    plugins = [ds for ds in of_kind(objects["prod-v6"], "DaemonSet")
               if ds["metadata"]["labels"]["app.kubernetes.io/component"] == "device-plugin"]
    spec = specs["prod-v6"]
    by_chip = {ds["metadata"]["labels"]["ascend-npu.io/chip"]: ds for ds in plugins}
    assert set(by_chip) == {"910B", "310P"}
    for chip, ds in by_chip.items():
        assert selected(ds, spec) == {n.name for n in spec.nodes if n.chip.value == chip}
    assert pod_spec(by_chip["910B"])["nodeSelector"]["accelerator"] == "huawei-Ascend910"
    assert pod_spec(by_chip["310P"])["nodeSelector"]["accelerator"] == "huawei-Ascend310P"


def test_device_plugin_v6_as_the_official_manifest_runs_it(objects, values):
    """v6.0.0 defines no healthz flag and serves no HTTP endpoint: no such flag, no port, no probe."""
    ds = one(objects["prod-v6"], "DaemonSet", "ascend-device-plugin-910b")
    spec, container = pod_spec(ds), pod_spec(ds)["containers"][0]
    assert spec["priorityClassName"] == "system-node-critical" and "hostPID" not in spec
    assert container["securityContext"]["privileged"] is True
    assert container["resources"]["limits"] == {"cpu": "500m", "memory": "500Mi"}
    assert container["args"] == ["-useAscendDocker=true", "-logFile=/var/log/mindx-dl/devicePlugin/devicePlugin.log",
                                 "-logLevel=0"]
    assert "ports" not in container and "livenessProbe" not in container
    assert {"name": "ASCEND_DOCKER_RUNTIME", "value": "True"} in container["env"]
    mounts = {m["mountPath"]: m.get("readOnly", False) for m in container["volumeMounts"]}
    assert mounts["/usr/local/Ascend/driver"] is True
    assert {"/var/lib/kubelet/device-plugins", "/var/lib/kubelet/pod-resources", "/tmp"} <= set(mounts)
    hosts = {v["name"]: v["hostPath"]["path"] for v in spec["volumes"]}
    assert {m["name"] for m in container["volumeMounts"]} == set(hosts)
    image, site = values["prod"]["devicePlugin"]["image"], values["prod"]["images"]["registry"]
    path = image["repository"].split("/", 1)[1]  # pulled from the stack's site registry, path and digest kept
    prod = pod_spec(one(objects["prod"], "DaemonSet", "ascend-device-plugin-910b"))["containers"][0]
    assert prod["image"] == f"{site}/{path}:v26.1.0@{image['digest']}"


def test_device_plugin_v26_serves_healthz_on_slash(objects):
    """v26.1.0: its healthz flags, a probe on `/` at 11251, no -useAscendDocker, HOST_IP for the kubelet."""
    ds = one(objects["dev-plugin-v26"], "DaemonSet", "ascend-device-plugin-910b")
    spec, container = pod_spec(ds), pod_spec(ds)["containers"][0]
    assert "--enable-healthz=true" in container["args"] and "--healthz-address=11251" in container["args"]
    assert not any(arg.startswith("-useAscendDocker") for arg in container["args"])
    assert container["ports"] == [{"name": "healthz", "containerPort": 11251, "protocol": "TCP"}]
    assert container["livenessProbe"]["httpGet"] == {"path": "/", "port": "healthz"}
    assert {"name": "ASCEND_DOCKER_RUNTIME", "value": "True"} in container["env"]
    assert any(e["name"] == "HOST_IP" for e in container["env"]) and spec["hostPID"] is True


def test_volcano_mode_args(objects):
    plain = pod_spec(one(objects["prod"], "DaemonSet", "ascend-device-plugin-910b"))["containers"][0]["args"]
    volcano = pod_spec(one(objects["prod-volcano-digest"], "DaemonSet",
                           "ascend-device-plugin-910b"))["containers"][0]["args"]
    assert "-volcanoType=true" not in plain and "-presetVirtualDevice=true" not in plain
    assert "-volcanoType=true" in volcano and "-presetVirtualDevice=true" in volcano


def test_digest_with_the_release_tag(objects):
    ds = one(objects["prod-volcano-digest"], "DaemonSet", "ascend-device-plugin-310p")
    container = pod_spec(ds)["containers"][0]
    assert container["image"] == ("registry.prod.corp.example/ascendhub/ascend-k8sdeviceplugin:v6.0.0@sha256:"
                                  + "4e" * 32)  # prod pulls from its site registry
    assert ds["metadata"]["labels"]["app.kubernetes.io/version"] == "v6.0.0"


def test_override_renders_the_named_release(objects):
    plugin = pod_spec(one(objects["dev-plugin-override"], "DaemonSet", "ascend-device-plugin-910b"))
    reference = pod_spec(one(objects["dev"], "DaemonSet", "ascend-device-plugin-910b"))
    assert plugin["containers"][0]["image"] == "registry.example.com/ascend/ascend-k8sdeviceplugin:v6.0.0-corp.2"
    assert plugin["containers"][0]["args"] == reference["containers"][0]["args"]


def test_selectors_do_not_overlap(objects):
    daemonsets = of_kind(objects["prod"], "DaemonSet")
    for ds in daemonsets:
        pods = ds["spec"]["template"]["metadata"]["labels"]
        owners = [o["metadata"]["name"] for o in daemonsets
                  if o["spec"]["selector"]["matchLabels"].items() <= pods.items()]
        assert owners == [ds["metadata"]["name"]]


def test_node_taints_are_tolerated_by_the_agents_and_name_the_resource(objects, specs):
    spec = specs["prod"]
    for node in (spec.node("train-01.prod.corp.example"), spec.node("infer-01.prod.corp.example")):
        taints = node_taints(node)
        assert taints == [{"key": resource_name(node.chip.value), "value": "present", "effect": "NoSchedule"}]
        for ds in of_kind(objects["prod"], "DaemonSet"):
            if node.name in selected(ds, spec):
                assert all(tolerated(pod_spec(ds)["tolerations"], t) for t in taints)


def test_extra_node_selector_and_tolerations_from_values(values):
    from components.cluster.device_plugin.daemonsets import build_device_plugin_daemonsets

    extra = {**values["dev"], "nodeSelector": {"pool": "npu"},
             "tolerations": [{"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}]}
    spec = pod_spec(build_device_plugin_daemonsets(extra)[0])
    assert spec["nodeSelector"]["pool"] == "npu" and spec["nodeSelector"]["ascend-npu.io/chip"] == "910B"
    assert spec["tolerations"][-1] == {"key": "maintenance", "operator": "Exists", "effect": "NoExecute"}


def device_plugins(objs: list[dict]) -> dict[str, dict]:
    return {ds["metadata"]["name"]: ds for ds in of_kind(objs, "DaemonSet")
            if ds["metadata"]["labels"]["app.kubernetes.io/component"] == "device-plugin"}


def host_mounts(ds: dict) -> dict[str, tuple[str, str, bool]]:
    """Container path -> (host path, hostPath type, read-only) of the plugin container."""
    spec = pod_spec(ds)
    volumes = {v["name"]: v["hostPath"] for v in spec["volumes"]}
    return {m["mountPath"]: (volumes[m["name"]]["path"], volumes[m["name"]].get("type", ""), m.get("readOnly", False))
            for m in spec["containers"][0]["volumeMounts"]}


DOCKER_SOCKET = ("/run/docker.sock", "Socket", True)


def test_device_plugin_v26_mounts_dockers_socket_on_docker_nodes_only(objects, specs):
    """prod (910B on containerd, 310P on Docker) at v26.1.0: the detector dials /run/docker.sock on Docker nodes."""
    plugins, spec = device_plugins(objects["prod-plugin-v26"]), specs["prod-plugin-v26"]
    assert list(plugins) == ["ascend-device-plugin-910b", "ascend-device-plugin-910b-docker",
                             "ascend-device-plugin-310p", "ascend-device-plugin-310p-docker"]
    for node in spec.nodes:  # each node runs exactly one plugin: that of its chip and engine
        docker = node.container_runtime.value == "docker"
        wanted = f"ascend-device-plugin-{node.chip.value.lower()}" + ("-docker" if docker else "")
        assert [name for name, ds in plugins.items() if node.name in selected(ds, spec)] == [wanted], node.name
    # containerd nodes: the mounts a containerd-only stack gives them, Docker's socket not among them
    reference = host_mounts(one(objects["dev-plugin-v26"], "DaemonSet", "ascend-device-plugin-910b"))
    assert reference["/run/containerd"] == ("/run/containerd", "DirectoryOrCreate", True)
    for chip in ("910b", "310p"):
        on_containerd = plugins[f"ascend-device-plugin-{chip}"]
        on_docker = plugins[f"ascend-device-plugin-{chip}-docker"]
        assert host_mounts(on_containerd) == reference
        assert host_mounts(on_docker) == {**reference, "/run/docker.sock": DOCKER_SOCKET}
        assert pod_spec(on_containerd)["nodeSelector"]["ascend-npu.io/container-runtime"] == "containerd"
        assert pod_spec(on_docker)["nodeSelector"]["ascend-npu.io/container-runtime"] == "docker"
        assert on_docker["metadata"]["labels"]["ascend-npu.io/container-runtime"] == "docker"
        # no flag and no variable picks the engine: the plugin reads it from its Node object
        first, second = pod_spec(on_containerd)["containers"][0], pod_spec(on_docker)["containers"][0]
        assert {k: v for k, v in first.items() if k != "volumeMounts"} == \
               {k: v for k, v in second.items() if k != "volumeMounts"}
    for version in K8S_VERSIONS:
        failures = builtin_failures({"prod-plugin-v26": list(plugins.values())}, version)
        assert not failures, "\n".join(failures)


def test_device_plugin_v6_is_one_daemonset_per_chip_on_either_engine(objects, specs):
    """v6.0.0 has no duplicate-NPU detector: no engine split, no engine socket, Docker nodes included."""
    plugins, spec = device_plugins(objects["prod-v6"]), specs["prod-v6"]
    assert list(plugins) == ["ascend-device-plugin-910b", "ascend-device-plugin-310p"]
    assert selected(plugins["ascend-device-plugin-310p"], spec) == {
        n.name for n in spec.nodes if n.container_runtime.value == "docker"}
    for ds in plugins.values():
        assert "ascend-npu.io/container-runtime" not in pod_spec(ds)["nodeSelector"]
        assert "ascend-npu.io/container-runtime" not in ds["metadata"]["labels"]
        assert [v["name"] for v in pod_spec(ds)["volumes"]] == [
            "device-plugin", "pod-resource", "hiai-driver", "log-path", "tmp", "localtime"]
    for version in K8S_VERSIONS:
        failures = builtin_failures({"prod": list(plugins.values())}, version)
        assert not failures, "\n".join(failures)
