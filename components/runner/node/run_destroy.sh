# shellcheck shell=bash
# run_destroy NODE: the delete command of a node's on-destroy step, the same text for every stack and setting, so
# the state's copy of it is never stale: it does what on_destroy.sh recorded at the last `pulumi up`, with the
# parameters of the last install, unless the record is another node name's (a node renamed without
# previousNames: the new name's steps ran first and own the host now).
set -euo pipefail
state=${ASCEND_ROOT:-}/var/lib/ascend-npu
say() { printf '[on-destroy] %s\n' "$*"; }
fail() { printf '[on-destroy] %s\n' "$*" >&2; exit 3; }
[[ -f $state/on-destroy.env ]] || { say "no record of this project on the node: nothing to uninstall"; exit 0; }
owner=$(sed -n 's/^ASCEND_NODE=//p' "$state/on-destroy.env")
if [[ $owner != "$1" ]]; then
  say "this host is now the stack's node $owner, not $1: nothing done"
  exit 0
fi
if ! grep -qx 'ASCEND_ON_DESTROY=uninstall' "$state/on-destroy.env"; then
  rm -f "$state/on-destroy.env"
  say "software kept: rollout.uninstallOnDestroy was off at the last pulumi up"
  exit 0
fi
settings=()
for record in "$state/install.env" "$state/on-destroy.env"; do
  [[ -f $record ]] || fail "${record#"${ASCEND_ROOT:-}"} is missing; nothing done"
  mapfile -t -O "${#settings[@]}" settings <"$record"
done
for line in "${settings[@]}"; do
  [[ $line =~ ^ASCEND_[A-Z0-9_]+= ]] || fail "a record under ${state#"${ASCEND_ROOT:-}"} has a line that is no setting; nothing done"
done
sha=$(sed -n 's/^ASCEND_UNINSTALL_SHA256=//p' "$state/on-destroy.env")
script="$state/scripts/uninstall.${sha:0:16}.sh"
[[ -f $script && $(sha256sum "$script" | cut -d' ' -f1) == "$sha" ]] ||
  fail "the uninstall script the record names (sha256 $sha) is missing or changed; nothing done"
env "${settings[@]}" bash "$script" </dev/null
rm -f "$state/on-destroy.env" "$state/install.env"
