# shellcheck shell=bash
# What a node must offer before anything is installed (docs/before-you-start.md): an OS its chip's lists name (a
# warning only), curl when packages come from a mirror, and the tools the driver's installer runs.

# install_hint PACKAGE: the commands that install PACKAGE on either family (both name these packages alike).
install_hint() {
  printf 'apt-get install %s (Debian, Ubuntu) or dnf install %s (openEuler, CentOS)' "$1" "$1"
}

# os_release_file: the os-release file systemd's os-release(5) says to read, /etc first, then /usr/lib.
os_release_file() {
  local file
  for file in "$ROOT/etc/os-release" "$ROOT/usr/lib/os-release"; do
    if [[ -r $file ]]; then
      printf '%s' "$file"
      return 0
    fi
  done
  return 1
}

# os_release_field FILE KEY: KEY's value in FILE, its quotes dropped (the file is read, never sourced).
os_release_field() {
  local value
  value=$(grep -m 1 "^$2=" "$1" 2>/dev/null) || return 0
  value=${value#*=}
  value=${value#[\"\']}
  printf '%s' "${value%[\"\']}"
}

# os_listed ID VERSION_ID VERSION: whether one ID/VERSION_ID[/CODENAME] of ASCEND_OS_LISTED is this host's, the
# codename read from VERSION's parentheses as ascend-deployer reads it ("2.0 (SP8)", "V10 (Tercel)").
os_listed() {
  local id=${1,,} version_id=${2,,} codename="" token want_id want_version want_codename
  if [[ $3 =~ \(([^\)]*)\) ]]; then codename=${BASH_REMATCH[1],,}; fi
  for token in $ASCEND_OS_LISTED; do
    IFS=/ read -r want_id want_version want_codename <<<"$token"
    [[ $want_id == "$id" && $want_version == "$version_id" ]] || continue
    [[ -z $want_codename || $codename == *"$want_codename"* ]] && return 0
  done
  return 1
}

# The lists a warning names, and what it advises (from the command's parameters).
# shellcheck disable=SC2153 # a parameter of the command (components/host/parameters.py), not a misspelling
os_lists_read() {
  printf 'the OS lists read for %s (%s; components/releases/os-support.yaml)' "$ASCEND_CHIP" "$ASCEND_OS_LISTS"
}
os_advice() {
  printf "those lists are incomplete, so the install goes on: check Huawei's compatibility checker for driver %s" \
    "$ASCEND_DRIVER_VERSION"
  printf ' and CANN %s, or use an OS image on the list' "$ASCEND_TOOLKIT_VERSION"
}

# A warning, not a problem: the lists are incomplete, and Huawei's compatibility checker decides for a release.
check_os_support() {
  local file id version_id shown
  [[ -n $ASCEND_OS_LISTED ]] || return 0
  if ! file=$(os_release_file); then
    say "WARNING: no /etc/os-release, so this host's OS cannot be compared with $(os_lists_read); $(os_advice)"
    return 0
  fi
  id=$(os_release_field "$file" ID)
  version_id=$(os_release_field "$file" VERSION_ID)
  os_listed "$id" "$version_id" "$(os_release_field "$file" VERSION)" && return 0
  shown=$(os_release_field "$file" PRETTY_NAME)
  say "WARNING: this host runs ${shown:-$id $version_id} (ID=$id VERSION_ID=$version_id), which is not on" \
    "$(os_lists_read); $(os_advice)"
}

# check_mirror_tools KIND...: packages from a mirror are fetched with curl (packages.sh), when any is to be installed.
check_mirror_tools() {
  if [[ $ASCEND_SOURCE != mirror ]] || (($# == 0)) || command -v curl >/dev/null; then return 0; fi
  problem "curl not found, and packages.source is mirror: the node fetches its packages from packages.mirrorUrl" \
    "with curl; install it with $(install_hint curl), then rerun"
}

# The driver installer's own tools, only those a source says it needs: net-tools (ifconfig), which ascend-deployer
# installs as a system requirement of the driver (packages/resources/6.0.1/ascend_driver/meta_info.json at
# 0fbb89f), and kmod (modinfo), with which the driver's install script reads its prebuilt modules' vermagic
# (run_driver_install.sh, drv_vermagic_check: without it the check fails and so does the install).
DRIVER_TOOLS=("ifconfig net-tools ascend-deployer installs net-tools for the driver"
  "modinfo kmod the driver's install script reads its kernel modules' vermagic with it")

check_driver_tools() {
  local entry tool package why
  for entry in "${DRIVER_TOOLS[@]}"; do
    read -r tool package why <<<"$entry"
    command -v "$tool" >/dev/null ||
      problem "$tool not found, and the driver installer needs it ($why): install $package with" \
        "$(install_hint "$package"), then rerun"
  done
}
