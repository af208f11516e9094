"""The end-to-end run's command provider is a parameter: the stand-in by default, any binary by
ASCEND_NPU_COMMAND_PROVIDER, registered in a plugin cache of its own and started by the real CLI from there."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from engine import command_provider as cp
from engine.cache import BIN, SET
from engine.pulumi_cli import cli_env, register, sdk_plugin_version

needs_cli = pytest.mark.skipif(not (BIN / "pulumi").exists(), reason="the CLI is not built (`make engine`)")


def fake_provider(folder: Path) -> tuple[Path, Path]:
    """A provider binary other than the stand-in: it records each start, then serves as the stand-in does."""
    record, binary = folder / "starts.log", folder / "pulumi-resource-command"
    binary.write_text(f'#!/bin/sh\necho "started $*" >> "{record}"\nexec "{cp.STANDIN}" "$@"\n')
    binary.chmod(0o755)
    return binary, record


def test_the_stand_in_is_the_default_in_the_sets_own_plugin_cache(tmp_path):
    for environ in ({}, {cp.VARIABLE: ""}, {cp.VARIABLE: str(cp.STANDIN)}):
        provider = cp.chosen(environ, tmp_path)
        assert provider.is_standin and provider.pulumi_home == tmp_path / "pulumi-home"
    assert cp.chosen({}).pulumi_home == SET / "pulumi-home"


def test_another_binary_gets_a_plugin_cache_keyed_by_its_sha256(tmp_path):
    binary, _ = fake_provider(tmp_path)
    provider = cp.chosen({cp.VARIABLE: str(binary)}, tmp_path)
    assert provider.binary == binary and not provider.is_standin
    assert provider.pulumi_home == tmp_path / "pulumi-homes" / f"command-{provider.sha256[:16]}"
    with binary.open("a") as f:
        f.write("# rebuilt\n")
    assert cp.chosen({cp.VARIABLE: str(binary)}, tmp_path).pulumi_home != provider.pulumi_home
    assert cli_env(tmp_path, "p", provider=provider)["PULUMI_HOME"] == str(provider.pulumi_home)


def test_a_variable_naming_no_runnable_binary_says_what_to_write(tmp_path):
    with pytest.raises(cp.ProviderChoiceError, match=rf"^{cp.VARIABLE}=nowhere/x: no such file .*write the path"):
        cp.chosen({cp.VARIABLE: "nowhere/x"}, tmp_path)
    plain = tmp_path / "pulumi-resource-command"
    plain.write_text("not executable")
    with pytest.raises(cp.ProviderChoiceError, match=r"is not executable; run `chmod \+x"):
        cp.chosen({cp.VARIABLE: str(plain)}, tmp_path)


def test_the_run_says_the_version_the_binary_answers_with(tmp_path):
    binary, record = fake_provider(tmp_path)
    assert cp.answered_version(binary) == "1.2.1"
    assert record.read_text().startswith(f"started {cp.NO_ENGINE}")
    provider = cp.chosen({cp.VARIABLE: str(binary)}, tmp_path)
    line = provider.describe("1.3.0", "1.2.1")
    assert f"from {cp.VARIABLE}): {binary} sha256 {provider.sha256}, answers version 1.3.0" in line
    assert "the SDK asks for 1.2.1" in line
    silent = tmp_path / "silent"
    silent.write_text("#!/bin/sh\necho 'cannot start: no engine' >&2\nexit 1\n")
    silent.chmod(0o755)
    assert cp.answered_version(silent) == "nothing: it printed 'cannot start: no engine' where a port was expected"


@needs_cli
def test_the_cli_starts_the_registered_binary_and_the_stand_ins_registration_stays(tmp_path):
    binary, record = fake_provider(tmp_path)
    provider = cp.chosen({cp.VARIABLE: str(binary)}, tmp_path)
    standin = cp.chosen({}, tmp_path)
    version = sdk_plugin_version("pulumi_command")
    env = cli_env(tmp_path / "state", "p", provider=provider)
    assert register(standin.pulumi_home, "command", version, cp.STANDIN, env) == f"registered from {cp.STANDIN}"
    assert register(provider.pulumi_home, "command", version, binary, env) == f"registered from {binary}"
    assert register(provider.pulumi_home, "command", version, binary, env) == "registered"
    plugin = Path("plugins") / f"resource-command-v{version}" / "pulumi-resource-command"
    assert (provider.pulumi_home / plugin).read_bytes() == binary.read_bytes()
    assert (standin.pulumi_home / plugin).read_bytes() == cp.STANDIN.read_bytes()
    # The CLI loads the plugin by the name and version the SDK asks for, from the plugin cache it is given.
    done = subprocess.run([str(BIN / "pulumi"), "package", "get-schema", f"command@{version}"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and '"name": "command"' in done.stdout, done.stderr
    assert record.read_text().count("started") == 1
