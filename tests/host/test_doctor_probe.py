"""The doctor's probe over the fake node's real sshd, and what the host checks make of it, finding by finding.

Simulated: the NPUs, the installers and the driver's device files (the fake node); the device plugin's socket is
made here as the plugin would make it.
"""
from __future__ import annotations

import pytest

from components.config import parse_stack
from components.doctor import remote
from components.doctor.host_checks import host_findings, installed
from testkit.fakenode import ascend_files
from testkit.fakenode.node import step_report
from testkit.fakenode.packages import NEW, OLD, stack_config
from testkit.fakenode.sandbox import unix_socket

BEGIN, END = "# ascend-npu: ascend runtime (begin)", "# ascend-npu: ascend runtime (end)"
# A well-formed ed25519 key that no sshd here holds.
OTHER_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOiQ9hs+a1eANLk/CrC5WBLnQM/KP6qx/EIDhhUqiAFi"


def doctor_spec(node, **options):
    raw = stack_config(node.packages, node.host_key, **options)
    raw["ssh"] = {"user": "root", "port": node.port, "useAgent": True}  # the probe gets the key as --identity
    raw["nodes"][0]["address"] = node.address
    return parse_stack(raw)


def seen(node, spec, ready: bool = True) -> list[str]:
    report = remote.probe(spec, spec.nodes[0], str(node.ssh_dir / "client_key"), 60)
    return sorted(f.id for f in host_findings(spec, spec.nodes[0], report, ready))


def plugin_socket(node) -> None:
    unix_socket(node.path("/var/lib/kubelet/device-plugins/Ascend910.sock"))


@pytest.fixture
def installed_node(node):
    spec = doctor_spec(node)
    done = node.run_step(node.spec(), "install")
    assert done.returncode == 0, done.stderr
    return node, spec


def test_an_installed_node_lacks_only_the_plugin_socket_until_the_plugin_listens(installed_node):
    node, spec = installed_node
    assert seen(node, spec) == ["plugin-socket-missing"]
    plugin_socket(node)
    assert seen(node, spec) == []
    report = remote.probe(spec, spec.nodes[0], str(node.ssh_dir / "client_key"), 60)
    assert installed(report) == {"driver": NEW["driver"], "firmware": NEW["firmware"], "toolkit": NEW["cann"],
                                 "kernels": NEW["cann"], "dockerRuntime": f"v{NEW['dockerRuntime']}"}


def test_each_broken_part_is_found_once(installed_node):
    node, spec = installed_node
    plugin_socket(node)
    ascend_files.write(node.root, "driver", OLD["driver"], "aarch64")
    assert seen(node, spec) == ["host-versions"]
    ascend_files.write(node.root, "driver", NEW["driver"], "aarch64")
    config = node.path("/etc/containerd/config.toml")
    text = config.read_text()
    head, rest = text.split(BEGIN, 1)
    config.write_text(head + rest.split(END, 1)[1])
    assert seen(node, spec) == ["engine-runtime-missing"]
    config.write_text(text)
    ascend_files.remove_devices(node.root)
    assert seen(node, spec) == ["devices-missing"]
    ascend_files.write_devices(node.root)
    node.knob("npu-smi-health", "5 Warning")
    assert seen(node, spec) == ["chip-unhealthy"]
    node.knob("npu-smi-health", None)
    node.knob("npu-smi-drop", "7")
    assert seen(node, spec) == ["chip-count"]  # a chip gone from the list: 7 of npuCount 8
    node.knob("npu-smi-drop", None)
    node.knob("npu-smi-fail", "1")
    assert "npu-smi-fails" in seen(node, spec)


def test_an_unreachable_node_is_one_finding_in_bounded_time(node):
    spec = doctor_spec(node)
    node.stop()
    assert seen(node, spec) == ["node-unreachable"]


def snapshot(root) -> dict:
    """Every file of the sandbox (the fake's own knobs and logs aside) with its size and modification time."""
    return {str(p.relative_to(root)): (p.lstat().st_size, p.lstat().st_mtime_ns) for p in root.rglob("*")
            if not p.relative_to(root).parts[0] == "fake"}


def test_the_probe_changes_nothing_on_the_node(installed_node):
    node, spec = installed_node
    before = snapshot(node.root)
    report = remote.probe(spec, spec.nodes[0], str(node.ssh_dir / "client_key"), 60)
    assert report.error is None and snapshot(node.root) == before


def test_through_a_bastion_with_its_own_pinned_key(installed_node, second_sshd):
    """The node's own sshd on a second port stands in for the bastion: the probe jumps through it."""
    node, _ = installed_node
    raw = stack_config(node.packages, node.host_key)
    raw["ssh"] = {"user": "root", "port": node.port, "useAgent": True,
                  "bastion": {"host": "127.0.0.1", "port": second_sshd, "hostKey": node.host_key}}
    raw["nodes"][0]["address"] = node.address
    spec = parse_stack(raw)
    assert seen(node, spec) == ["plugin-socket-missing"]
    other = dict(raw, ssh={**raw["ssh"], "bastion": {**raw["ssh"]["bastion"], "hostKey": OTHER_KEY}})
    assert seen(node, parse_stack(other)) == ["node-unreachable"]  # a bastion whose key is not the pinned one


def toolkit_file(node, version: str, where: str) -> None:
    path = node.path(f"/usr/local/Ascend/{where}/aarch64-linux/ascend_toolkit_install.info")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"package_name=Ascend-cann-toolkit\nversion={version}\narch=aarch64\n")


# The version files as a node may hold them: each case changes the files a clean install of NEW leaves.
LAYOUTS = {
    "as installed": lambda node: None,
    "an older toolkit first, the wanted one under cann/": lambda node: (
        toolkit_file(node, OLD["cann"], "ascend-toolkit/latest"), toolkit_file(node, NEW["cann"], "cann")),
    "a quoted driver version": lambda node: node.path("/usr/local/Ascend/driver/version.info").write_text(
        f'Version="{NEW["driver"]}"\n'),
    "the driver with a numeric patch": lambda node: ascend_files.write(node.root, "driver", NEW["driver"] + ".1",
                                                                       "aarch64"),
    "no runtime record": lambda node: node.path(
        "/usr/local/Ascend/Ascend-Docker-Runtime/ascend_docker_runtime_install.info").unlink(),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_the_doctor_reads_versions_as_verify_does(node, layout):
    node.preinstall(NEW)
    plugin_socket(node)
    LAYOUTS[layout](node)
    verify = node.run_step(node.spec(), "verify")
    verified = step_report(verify.stdout)["versions"]
    spec = doctor_spec(node)
    report = remote.probe(spec, spec.nodes[0], str(node.ssh_dir / "client_key"), 60)
    found = installed(report)
    assert {key: found[kind] or None for key, kind in (("driver", "driver"), ("firmware", "firmware"),
                                                       ("cann", "toolkit"), ("dockerRuntime", "dockerRuntime"))} \
        == verified
    assert ("host-versions" in seen(node, spec)) == (verify.returncode != 0), verify.stderr


NETWORK = {"addresses": [f"192.168.100.{11 + i}" for i in range(8)], "netmask": "255.255.255.0",
           "gateway": "192.168.100.1", "detectAddress": "192.168.100.1"}


def test_the_npu_network_is_read_with_hccn_tool_and_each_broken_port_named(installed_node):
    """Simulated too: the NPUs' network ports (testkit/fakenode/hccn_tool.py)."""
    node, _ = installed_node
    plugin_socket(node)
    spec = doctor_spec(node, npu_network=NETWORK, rollout={"timeouts": {"npuNetwork": 2}})
    assert node.run_step(node.spec(npu_network=NETWORK), "npu_network").returncode == 0
    assert seen(node, spec) == []
    node.knob("hccn-link-down", "1")
    node.knob("hccn-unreachable", "4")
    node.run(f"{ascend_files.ascend(node.root)}/driver/tools/hccn_tool -i 6 -ip -s address 192.168.100.99 "
             "netmask 255.255.255.0")
    report = remote.probe(spec, spec.nodes[0], str(node.ssh_dir / "client_key"), 60)
    found = {(f.id, f.what.split(":")[0].split(" shows")[0]) for f in host_findings(spec, spec.nodes[0], report, True)}
    assert found == {("npu-link-down", "NPU 1"), ("npu-probe-fails", "NPU 4"), ("npu-address-wrong", "NPU 6")}
