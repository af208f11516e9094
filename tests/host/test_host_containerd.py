"""containerd nodes: the ascend runtime added with every existing setting kept, checked with the real
`containerd config dump` (Debian's containerd 1.6); containerd 2.x through the stand-in in fakenode/containerd2.py."""
from __future__ import annotations

import subprocess
import tomllib

import pytest

from testkit.fakenode.packages import NEW

CRI = "io.containerd.grpc.v1.cri"
BINARY = "/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime"
CUSTOM_1X = f"""version = 2
root = "/var/lib/containerd"

[plugins]
  [plugins."{CRI}"]
    sandbox_image = "registry.internal/pause:3.9"
    [plugins."{CRI}".registry]
      config_path = "/etc/containerd/certs.d"
    [plugins."{CRI}".containerd]
      default_runtime_name = "runc"
      [plugins."{CRI}".containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins."{CRI}".containerd.runtimes.runc.options]
          SystemdCgroup = true
      [plugins."{CRI}".containerd.runtimes.nvidia]
        runtime_type = "io.containerd.runc.v2"
        [plugins."{CRI}".containerd.runtimes.nvidia.options]
          BinaryName = "/usr/bin/nvidia-container-runtime"
          SystemdCgroup = true
"""


@pytest.fixture
def config(node):
    """Write /etc/containerd/config.toml on the node (ready installed, so only the engine part runs)."""
    node.preinstall(NEW)

    def write(text: str, name: str = "config.toml"):
        path = node.path(f"/etc/containerd/{name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path
    return write


def effective(path) -> dict:
    """What the real containerd makes of a config file."""
    dump = subprocess.run(["containerd", "--config", str(path), "config", "dump"], capture_output=True, text=True,
                          check=True)
    config = tomllib.loads(dump.stdout)
    config["imports"].sort()  # containerd prints the loaded files in no fixed order
    return config


def without_ascend(config: dict, default_runtime: str = "runc") -> dict:
    containerd = config["plugins"][CRI]["containerd"]
    del containerd["runtimes"]["ascend"]
    containerd["default_runtime_name"] = default_runtime
    return config


@pytest.mark.parametrize("make_default", [False, True])
def test_1x_merge_changes_nothing_but_the_ascend_runtime(node, config, make_default):
    path = config(CUSTOM_1X)
    before = effective(path)
    result = node.run_step(node.spec(default_runtime=make_default), "install")
    assert result.returncode == 0, result.stderr
    after = effective(path)
    containerd = after["plugins"][CRI]["containerd"]
    assert containerd["default_runtime_name"] == ("ascend" if make_default else "runc")
    ascend = containerd["runtimes"]["ascend"]
    assert ascend["runtime_type"] == "io.containerd.runc.v2"
    assert ascend["options"] == {"BinaryName": BINARY, "SystemdCgroup": True}
    assert without_ascend(after) == before
    assert before["plugins"][CRI]["sandbox_image"] == "registry.internal/pause:3.9"  # the file really set it
    assert node.systemctl_calls() == ["restart containerd"]
    assert list(path.parent.glob("config.toml.bak.*"))[0].read_text() == CUSTOM_1X


def test_1x_existing_imports_are_kept(node, config):
    path = config('version = 2\nimports = ["conf.d/10-opt.toml"]\n\n' + CUSTOM_1X.split("\n", 1)[1])
    config('version = 2\n[plugins."io.containerd.internal.v1.opt"]\n  path = "/opt/containerd-custom"\n',
           "conf.d/10-opt.toml")
    before = effective(path)
    assert node.run_step(node.spec(), "install").returncode == 0
    assert 'imports = ["conf.d/10-opt.toml"]' in path.read_text()
    after = effective(path)
    assert after["plugins"]["io.containerd.internal.v1.opt"]["path"] == "/opt/containerd-custom"
    assert without_ascend(after) == before


def test_1x_import_that_would_hide_the_runtime_is_refused(node, config):
    """containerd issue #5837: an imported CRI section replaces config.toml's whole CRI section."""
    original = 'version = 2\nimports = ["conf.d/20-cri.toml"]\n'
    path = config(original)
    config(f'version = 2\n[plugins."{CRI}"]\n  sandbox_image = "registry.internal/pause:3.9"\n', "conf.d/20-cri.toml")
    result = node.run_step(node.spec(), "install")
    assert result.returncode != 0 and "issue #5837" in result.stderr
    assert path.read_text() == original and node.systemctl_calls() == []


def test_unparseable_config_is_left_untouched_before_any_installer(node, config):
    node.path("/usr/local/Ascend").rename(node.root / "not-installed")  # a fresh host: installers would run
    broken = f'version = 2\n[plugins."{CRI}"\n  sandbox_image = "x"\n'
    path = config(broken)
    result = node.run_step(node.spec(), "install")
    assert result.returncode != 0
    assert "containerd cannot load /etc/containerd/config.toml (" in result.stderr
    assert "it was left untouched" in result.stderr and "no installer ran" in result.stderr
    assert path.read_text() == broken and node.installer_calls() == []
    assert sorted(p.name for p in path.parent.iterdir()) == ["config.toml"]


@pytest.mark.parametrize("k3s_file", ["/etc/containerd/config.toml.tmpl",
                                      "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl"])
def test_k3s_managed_config_is_refused(node, config, k3s_file):
    path = config(CUSTOM_1X)
    node.path(k3s_file).parent.mkdir(parents=True, exist_ok=True)
    node.path(k3s_file).write_text("{{ template \"base\" . }}\n")
    result = node.run_step(node.spec(), "install")
    assert result.returncode != 0 and "k3s manages this node's containerd config" in result.stderr
    assert path.read_text() == CUSTOM_1X and node.systemctl_calls() == []


def test_containerd_is_not_restarted_when_nothing_changed(node, config):
    config(CUSTOM_1X)
    spec = node.spec()
    assert node.run_step(spec, "install").returncode == 0
    node.clear_logs()
    again = node.run_step(spec, "install")
    assert again.returncode == 0 and node.systemctl_calls() == []
    assert "containerd not restarted" in again.stdout


def test_runtime_follows_runc_cgroup_driver(node, config):
    path = config(CUSTOM_1X.replace("SystemdCgroup = true", "SystemdCgroup = false"))
    assert node.run_step(node.spec(), "install").returncode == 0
    assert effective(path)["plugins"][CRI]["containerd"]["runtimes"]["ascend"]["options"]["SystemdCgroup"] is False


V3 = """version = 3
imports = ["/etc/containerd/certs.toml"]

[plugins."io.containerd.cri.v1.images".pinned_images]
  sandbox = "registry.internal/pause:3.10"
"""


def test_2x_drop_in_is_imported_next_to_the_existing_imports(node, config):
    node.knob("containerd-major", "2")
    path = config(V3)
    config('version = 3\n[plugins."io.containerd.cri.v1.images".registry]\n  config_path = "/etc/containerd/certs.d"\n',
           "certs.toml")
    spec = node.spec(default_runtime=True)
    result = node.run_step(spec, "install")
    assert result.returncode == 0, result.stderr
    assert path.read_text() == V3.replace('imports = ["/etc/containerd/certs.toml"]',
                                          'imports = ["/etc/containerd/certs.toml", '
                                          '"/etc/containerd/conf.d/99-ascend-runtime.toml"]')
    drop_in = tomllib.loads(node.path("/etc/containerd/conf.d/99-ascend-runtime.toml").read_text())
    runtime = drop_in["plugins"]["io.containerd.cri.v1.runtime"]["containerd"]
    assert runtime["default_runtime_name"] == "ascend"
    # runc declares no SystemdCgroup in this config (the 2.x stand-in adds no defaults): neither does ascend.
    assert runtime["runtimes"]["ascend"] == {"runtime_type": "io.containerd.runc.v2",
                                             "options": {"BinaryName": BINARY}}
    assert node.systemctl_calls() == ["restart containerd"]
    node.clear_logs()
    assert node.run_step(spec, "install").returncode == 0 and node.systemctl_calls() == []
    assert node.run_step(node.spec(default_runtime=False), "install").returncode == 0
    assert "default_runtime_name" not in node.path("/etc/containerd/conf.d/99-ascend-runtime.toml").read_text()
    assert node.systemctl_calls() == ["restart containerd"]


def test_2x_uninstall_removes_the_drop_in_and_its_import(node, config):
    node.knob("containerd-major", "2")
    path = config(V3)
    config("version = 3\n", "certs.toml")
    spec = node.spec(uninstall=True)
    assert node.run_step(spec, "install").returncode == 0
    node.clear_logs()
    result = node.destroy(spec)
    assert result.returncode == 0, result.stderr
    assert path.read_text() == V3
    assert not node.path("/etc/containerd/conf.d/99-ascend-runtime.toml").exists()
    assert node.systemctl_calls() == ["restart containerd"]
