# shellcheck shell=bash
# Packages: the node's .run files in the staging directory (uploaded beforehand, or fetched from the mirror),
# each checked against its SHA-256 before any installer runs.

staged_file() { printf '%s%s/%s' "$ROOT" "$ASCEND_STAGING" "$(kind_var "$1" FILE)"; }
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

# The mirror login as a curl config line; printf is a builtin, so the login is in no argument list.
mirror_login_config() {
  local login=$MIRROR_CREDENTIALS
  login=${login//\\/\\\\}
  login=${login//\"/\\\"}
  login=${login//$'\n'/\\n}
  printf 'user = "%s"\n' "$login"
}

# Download <mirror>/<file> into staging; a failed download leaves no partial file behind. A mirror login
# (MIRROR_CREDENTIALS, read from stdin and never exported) reaches curl as its config on a pipe.
fetch_package() {
  local path url rc=0 start=$SECONDS
  path=$(staged_file "$1")
  url="${ASCEND_MIRROR_URL%/}/$(kind_var "$1" FILE)"
  mkdir -p "${path%/*}"
  # packages.mirrorUrl carries no login (the stack refuses one), so the URL can be shown.
  say "$1: fetching $url"
  if [[ -n ${MIRROR_CREDENTIALS:-} ]]; then
    mirror_login_config | curl -K - -fsSL --retry 3 --connect-timeout 20 -o "$path.part" "$url" || rc=$?
  else
    curl -fsSL --retry 3 --connect-timeout 20 -o "$path.part" "$url" || rc=$?
  fi
  if ((rc != 0)); then
    rm -f "$path.part"
    problem "cannot fetch $url (curl exit $rc); check packages.mirrorUrl and that the node can reach it"
    return 1
  fi
  mv -f "$path.part" "$path"
  say "$1: fetched in $((SECONDS - start)) s ($(numfmt --to=iec-i --suffix=B "$(stat -c %s "$path")"))"
}

stage_package() {
  local kind=$1 file path want got
  file=$(kind_var "$kind" FILE)
  path=$(staged_file "$kind")
  want=$(kind_var "$kind" SHA256)
  got=""
  if [[ -f $path ]]; then got=$(sha256_of "$path"); fi
  if [[ $got != "$want" && $ASCEND_SOURCE == mirror ]]; then
    fetch_package "$kind" || return 0
    got=$(sha256_of "$path")
  fi
  if [[ -z $got ]]; then
    problem "$file is not in $ASCEND_STAGING; the upload step copies it there, rerun it"
    return 0
  fi
  [[ $got == "$want" ]] && return 0
  # A bad download is dropped so the next run fetches it again; an upload is replaced by the next upload.
  if [[ $ASCEND_SOURCE == mirror ]]; then rm -f "$path"; fi
  problem "$file has sha256 $got, but packages.files says $want; the file is damaged or not the one" \
    "the stack names"
}

# Installing needs room for the packages unpacked and installed: about three times their size.
check_free_space() {
  local kind path bytes=0 need_kb free_kb target=$ASCEND_HOME
  for kind in "$@"; do
    path=$(staged_file "$kind")
    if [[ -f $path ]]; then bytes=$((bytes + $(stat -c %s "$path"))); fi
  done
  need_kb=$(((bytes * 3 + 1023) / 1024))
  while [[ -n $target && ! -d $target ]]; do target=${target%/*}; done
  free_kb=$(df -Pk "${target:-/}" | awk 'NR == 2 { print $4 }')
  ((free_kb >= need_kb)) || problem "$(host_path "${target:-/}") has $((free_kb / 1024)) MiB free, installing" \
    "needs about $((need_kb / 1024)) MiB; free some space"
}

# stage_packages KIND...: every package present with the right checksum and room to install, or stop.
stage_packages() {
  local kind
  if (($# == 0)); then
    say "packages: nothing to install, nothing staged"
    return
  fi
  if [[ -n ${MIRROR_CREDENTIALS:-} && $MIRROR_CREDENTIALS != *:* ]]; then
    die "mirrorCredentials is not user:password; set it again with pulumi config set --secret mirrorCredentials"
  fi
  for kind in "$@"; do stage_package "$kind"; done
  check_free_space "$@"
  stop_on_problems "packages not ready (${#PROBLEMS[@]} problem(s)); no installer ran"
  say "packages: $# file(s) in $ASCEND_STAGING match their sha256 ($ASCEND_SOURCE)"
}
