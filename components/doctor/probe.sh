#!/usr/bin/env bash
# doctor probe: reads what the doctor checks on a node and prints it in sections; changes nothing, writes nothing.
# Every path is under ASCEND_ROOT (empty on a real host), as in the host steps.
set -euo pipefail
ROOT="${ASCEND_ROOT:-}"
ASCEND="$ROOT/usr/local/Ascend"
# The device plugin listens on <kubelet>/device-plugins/<Ascend910|Ascend310P|Ascend310>.sock (MindCluster
# component/ascend-device-plugin/pkg/server/server.go createNetListener, v6.0.0 and v26.1.0).
PLUGIN_DIR="$ROOT/var/lib/kubelet/device-plugins"

section() { printf '\n==ascend-npu-doctor== %s\n' "$*"; }

# show_file NAME PATH...: the first PATH that exists, whole (version files and engine configs are small).
show_file() {
  local name=$1 path
  shift
  for path in "$@"; do
    if [[ -f $path ]]; then
      section "file $name ${path#"$ROOT"}"
      head -c 262144 "$path" || true
      return 0
    fi
  done
  section "file $name -"
}

npu_smi() {
  local out rc=0
  out=$(timeout 30 npu-smi info 2>&1) || rc=$?
  section "npu-smi $rc"
  printf '%s\n' "$out"
}

containerd_config() {
  local file
  for file in "$ROOT/var/lib/rancher/rke2/agent/etc/containerd/config.toml" \
    "$ROOT/var/lib/rancher/k3s/agent/etc/containerd/config.toml" "$ROOT/etc/containerd/config.toml"; do
    [[ -f $file ]] || continue
    # `config dump` gives the config with its imports merged, as the daemon reads it; without the binary, the file.
    if command -v containerd >/dev/null && out=$(timeout 20 containerd --config "$file" config dump 2>/dev/null); then
      section "containerd ${file#"$ROOT"} dump"
      printf '%s\n' "$out"
    else
      section "containerd ${file#"$ROOT"} file"
      head -c 262144 "$file"
    fi
    return 0
  done
  section "containerd - none"
}

devices() {
  section "devices"
  local path
  for path in "$ROOT"/dev/davinci* "$ROOT/dev/devmm_svm" "$ROOT/dev/hisi_hdc" "$PLUGIN_DIR"/*.sock; do
    [[ -e $path ]] || continue
    if [[ -S $path ]]; then echo "socket ${path#"$ROOT"}"; else echo "node ${path#"$ROOT"}"; fi
  done
}

main() {
  local arch
  arch=$(uname -m)
  section "arch $arch"
  npu_smi
  show_file driver "$ASCEND/driver/version.info"
  show_file firmware "$ASCEND/firmware/version.info"
  show_file toolkit "$ASCEND/ascend-toolkit/latest/$arch-linux/ascend_toolkit_install.info" \
    "$ASCEND/cann/$arch-linux/ascend_toolkit_install.info"
  show_file kernels "$ASCEND/ascend-toolkit/latest/opp_kernel/version.info" "$ASCEND/cann/opp_kernel/version.info"
  show_file dockerRuntime "$ASCEND/Ascend-Docker-Runtime/ascend_docker_runtime_install.info"
  show_file daemon.json "$ROOT/etc/docker/daemon.json"
  containerd_config
  devices
  section "end"
}

main </dev/null
