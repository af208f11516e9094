# shellcheck shell=bash
# The Node this host's kubelet registered as, against the stack's name for it (kubelet_identity.py says where the
# name comes from). A host that runs no kubelet yet, or one whose kubelet keeps no rotated client certificate, is
# noted, not refused: the cluster layer then finds the Node by name.
KUBELET_CLIENT_CERT="$ROOT/var/lib/kubelet/pki/kubelet-client-current.pem"

check_node_identity() {
  local registered
  if [[ ! -e $KUBELET_CLIENT_CERT ]]; then
    say "note: no kubelet client certificate at $(host_path "$KUBELET_CLIENT_CERT"), so which Node this host is" \
      "cannot be told here; it must already be Node $ASCEND_NODE (kubectl get node $ASCEND_NODE) before its labels" \
      "are set"
    return 0
  fi
  registered=$(py kubelet_identity "$KUBELET_CLIENT_CERT") || registered=""
  if [[ -z $registered ]]; then
    say "note: $(host_path "$KUBELET_CLIENT_CERT") holds no kubelet client certificate; Node $ASCEND_NODE not checked"
  elif [[ $registered != "$ASCEND_NODE" ]]; then
    problem "this host's kubelet is Node $registered, but the stack names it $ASCEND_NODE: write name:" \
      "$registered for this node, or check its address"
  fi
}
