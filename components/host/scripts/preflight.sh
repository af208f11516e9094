# shellcheck shell=bash
# Preflight: what an installer would trip over, checked before any of them runs; every problem is listed at once.

# The kinds whose version file does not show the wanted version yet, in install order (ASCEND_KINDS).
needed_kinds() {
  local kind kinds
  read -ra kinds <<<"$ASCEND_KINDS"
  for kind in "${kinds[@]}"; do
    is_wanted "$kind" || echo "$kind"
  done
}

check_root() {
  ((EUID == 0)) || problem "running as uid $EUID, not root; log in as root or give the SSH user passwordless sudo"
}

check_arch() {
  [[ $MACHINE == "$ASCEND_ARCH" ]] || problem "this host is $MACHINE but its packages are built for $ASCEND_ARCH;" \
    "set arch: $MACHINE on the node and add $MACHINE packages, or check the node's address"
}

check_npus_on_pci() {
  local count
  if ! command -v lspci >/dev/null; then
    problem "lspci not found, so the NPUs cannot be checked; install pciutils"
    return
  fi
  # Huawei is vendor 19e5; its NICs and controllers share it, the NPUs are the dxxx devices.
  count=$(lspci -n | grep -ci ' 19e5:d[0-9a-f]\{3\}' || true)
  ((count > 0)) || problem "no Ascend NPU on PCI (lspci -n lists no 19e5:dxxx device); check the cards are" \
    "seated and enabled in the BIOS"
  if ((count > 0)); then check_product "$count"; fi
}

# Atlas A3's NPUs are 19e5:d803, A2's d802 (the driver's own scripts tell them apart so: github.com/hicann/driver
# ef377e9, scripts/package/custom/driver/common/scripts/common.sh L361-362); its packages are its own.
check_product() {
  local a3
  a3=$(lspci -n | grep -ci ' 19e5:d803' || true)
  if [[ $ASCEND_CHIP == 910C ]] && ((a3 == 0)); then
    problem "the node's chip is 910C (Atlas A3) but no NPU here is one (lspci -n lists no 19e5:d803); write its chip"
  elif [[ $ASCEND_CHIP != 910C ]] && ((a3 == $1)); then
    problem "this server's NPUs are Atlas A3 (lspci -n: 19e5:d803) but its chip is $ASCEND_CHIP; write chip: 910C" \
      "and give it the Atlas-A3 packages"
  fi
}

check_engine() {
  local binary=containerd
  # k3s and RKE2 bring their own containerd (often with no containerd on PATH): known before anything else.
  if [[ $ASCEND_ENGINE == containerd ]] && check_engine_owner; then return; fi
  if [[ $ASCEND_ENGINE == docker ]]; then binary=dockerd; fi
  if ! command -v "$binary" >/dev/null; then
    problem "$binary not found, but the node's containerRuntime is $ASCEND_ENGINE; install it first"
    return
  fi
  if [[ $ASCEND_ENGINE == docker ]]; then
    check_daemon_json
    check_cri_dockerd
  else
    check_containerd_config
  fi
}

# The driver's modules: built against the running kernel's headers, or by dkms and gcc (ascend-deployer accepts
# either; see components/releases/npu-driver.yaml).
check_driver_modules() {
  local release=$KERNEL dir
  for dir in lib/modules/"$release"/build usr/src/linux-headers-"$release" usr/src/kernels/"$release"; do
    [[ -d $ROOT/$dir ]] && return 0
  done
  command -v dkms >/dev/null && command -v gcc >/dev/null && return 0
  problem "kernel headers for the running kernel $release are missing (no /lib/modules/$release/build) and" \
    "dkms and gcc are not both installed, so the driver cannot build its modules: install linux-headers-$release" \
    "(Debian, Ubuntu) or kernel-devel-$release (openEuler, CentOS), or dkms and gcc, then rerun"
}

# The driver runs as HwHiAiUser: the user, the group, and the user in the group (ascend-deployer checks all three).
check_driver_user() {
  local user group add_group=""
  user=$(getent passwd HwHiAiUser) || user=""
  group=$(getent group HwHiAiUser) || group=""
  if [[ -z $group ]]; then add_group="groupadd HwHiAiUser && "; fi
  if [[ -z $user ]]; then
    problem "user HwHiAiUser does not exist and the driver installer needs it:" \
      "${add_group}useradd -g HwHiAiUser -d /home/HwHiAiUser -m HwHiAiUser -s /bin/bash"
  elif [[ -z $group ]]; then
    problem "group HwHiAiUser does not exist and the driver installer needs it: ${add_group}usermod -a -G" \
      "HwHiAiUser HwHiAiUser"
  elif [[ $(cut -d: -f4 <<<"$user") != "$(cut -d: -f3 <<<"$group")" &&
    ",$(cut -d: -f4 <<<"$group")," != *",HwHiAiUser,"* ]]; then
    problem "user HwHiAiUser is not in group HwHiAiUser, which the driver installer needs: usermod -a -G" \
      "HwHiAiUser HwHiAiUser"
  fi
}

# A RuntimeClass on a Docker node reaches the runtime through cri-dockerd, which takes a runtime handler only from
# 0.4.0 (ASCEND_CRI_DOCKERD_MIN is not empty when workloads opt in through the ascend RuntimeClass).
check_cri_dockerd() {
  local want=$ASCEND_CRI_DOCKERD_MIN found
  [[ -n $want ]] || return 0
  if ! command -v cri-dockerd >/dev/null; then
    problem "cri-dockerd not found: a Docker node needs cri-dockerd $want or newer for the ascend RuntimeClass;" \
      "install it, or set cluster.ascendDefaultRuntime: true"
    return
  fi
  found=$(cri-dockerd --version 2>&1 | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1 || true)
  [[ -n $found && $(printf '%s\n' "$want" "$found" | sort -V | head -n 1) == "$want" ]] ||
    problem "cri-dockerd ${found:-of unknown version} is older than $want, which pods of the ascend RuntimeClass" \
      "need (older releases refuse a runtime handler); upgrade cri-dockerd, or set cluster.ascendDefaultRuntime: true"
}

# Traces of an older or interrupted install: reported, not fatal (the installers run over them).
report_leftovers() {
  local kind dir status latest name cann
  for kind in driver firmware; do
    dir="$ASCEND_HOME/$kind"
    if [[ -d $dir && ! -f $dir/version.info ]]; then
      say "note: $(host_path "$dir") exists without version.info (an interrupted install?); $kind installs over it"
    fi
  done
  status=$(file_value "$ROOT/etc/ascend_install.info" Driver_Install_Status)
  if [[ -n $status && $status != complete ]]; then
    say "note: /etc/ascend_install.info says Driver_Install_Status=$status"
  fi
  cann=$(wanted_version toolkit)
  latest=$(readlink "$ASCEND_HOME/ascend-toolkit/latest" 2>/dev/null || true)
  for dir in "$ASCEND_HOME"/ascend-toolkit/*/; do
    name=$(basename "$dir")
    [[ -d $dir && $name != latest && $name != "${latest##*/}" && ${name,,} != "${cann,,}" ]] || continue
    say "note: CANN $name is still in /usr/local/Ascend/ascend-toolkit; remove it with its --uninstall once unused"
  done
}

# preflight KIND...: the host checks, plus modules, the driver user and its installer's tools when the driver is
# among KINDS.
preflight() {
  MACHINE=$(uname -m)
  KERNEL=$(uname -r)
  check_root
  check_arch
  check_os_support
  check_node_identity
  check_npus_on_pci
  check_engine
  check_mirror_tools "$@"
  if [[ " $* " == *" driver "* ]]; then
    check_driver_modules
    check_driver_user
    check_driver_tools
  fi
  check_no_downgrade "$@"
  # Replacing the driver or firmware, or restarting docker, under running jobs kills them (ascend-deployer refuses
  # as well).
  check_disruption "$@"
  report_leftovers
  stop_on_problems "preflight found ${#PROBLEMS[@]} problem(s); no installer ran"
  say "preflight ok: $MACHINE, kernel $KERNEL, NPUs on PCI, $ASCEND_ENGINE present;" \
    "to install: ${*:-nothing}"
}
