# shellcheck shell=bash
# run_step: every host step's command runs this with `bash -c`, then STEP SHA256 pairs: each step's script is taken
# from the staged copy (/var/tmp/ascend-npu-scripts, node_step.py) into a root-only directory only when its SHA-256
# is the one the command names, then the first one runs. The state holds the hashes, never the scripts.
set -euo pipefail
home=${ASCEND_ROOT:-}/var/lib/ascend-npu/scripts
staged=${ASCEND_ROOT:-}/var/tmp/ascend-npu-scripts
sum() { sha256sum "$1" | cut -d' ' -f1; }
fail() { local step=$1; shift; printf '[%s] %s\n' "$step" "$*" >&2; exit 3; }
take() {
  local step=$1 want=$2 file tmp
  file="$home/$step.${want:0:16}.sh"
  [[ -f $file ]] && return 0
  [[ -f $staged/$step.sh && $(sum "$staged/$step.sh") == "$want" ]] ||
    fail "$step" "its script (sha256 $want) is not staged in ${staged#"${ASCEND_ROOT:-}"}: run \`pulumi up\`" \
      "again, which stages it before the step runs"
  mkdir -p "$home" && chmod 0700 "$home"
  tmp=$(mktemp "$home/.$step.XXXXXX")
  cat "$staged/$step.sh" >"$tmp"
  [[ $(sum "$tmp") == "$want" ]] || { rm -f "$tmp"; fail "$step" "its staged script changed while it was read; run again"; }
  mv -f "$tmp" "$file"
  find "$home" -maxdepth 1 -name "$step.*.sh" ! -name "${file##*/}" -delete
}
run="$home/$1.${2:0:16}.sh"
while (($# >= 2)); do take "$1" "$2"; shift 2; done
exec bash "$run"
