#!/usr/bin/env bash
# doctor probe: reads what the doctor checks on a node and prints it in sections; changes nothing, writes nothing.
# It runs after lib.sh (the host steps' own, so versions are read as the verify step reads them) and the verify
# step's parameters; every path is under ASCEND_ROOT (empty on a real host), as in the host steps.
set -euo pipefail
STEP_LOGS="${RUN_LOG%/*}"
RUN_LOG=/dev/null # lib.sh logs every message of a step: the probe writes nothing on the node
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

# Each kind's installed version as the verify step reads it (lib.sh installed_version), whether it is the wanted one
# (lib.sh shows), and the version file it came from.
versions() {
  local kind kinds found paths
  read -ra kinds <<<"$ASCEND_KINDS"
  for kind in "${kinds[@]}"; do
    found=$(installed_version "$kind")
    if shows "$kind" "$found"; then section "version $kind yes"; else section "version $kind no"; fi
    printf 'found=%s\nwanted=%s\n' "$found" "$(wanted_record "$kind")"
    mapfile -t paths < <(version_files "$kind")
    show_file "$kind" "${paths[@]}"
  done
}

# What hccn_tool says of each NPU the stack gives a network (nodes[].npuNetwork): link, address, detection probe.
npu_network() {
  local entry npu what out rc tool="$ASCEND_HOME/driver/tools/hccn_tool"
  for entry in ${ASCEND_NPU_NETWORK:-}; do
    npu=${entry%%,*}
    for what in link ip net_health; do
      rc=0
      out=$(timeout 10 "$tool" -i "$npu" "-$what" -g 2>&1) || rc=$?
      section "hccn:$npu:$what $rc"
      printf '%s\n' "$out"
    done
  done
}

# For a support bundle: the steps' logs (run.log, each installer's <kind>.log), their last MiB each.
step_logs() {
  local path
  show_file install.info "$ROOT/etc/ascend_install.info"
  for path in "$STEP_LOGS"/*.log; do
    [[ -f $path ]] || continue
    section "log ${path##*/} ${path#"$ROOT"}"
    tail -c 1048576 "$path" || true
  done
}

main() {
  section "arch $(uname -m)"
  npu_smi
  versions
  show_file daemon.json "$ROOT/etc/docker/daemon.json"
  containerd_config
  devices
  npu_network
  if [[ ${DOCTOR_BUNDLE:-} == true ]]; then step_logs; fi
  section "end"
}

main </dev/null
