# shellcheck shell=bash
# Docker: the ascend runtime merged into /etc/docker/daemon.json (daemon_json.py), every other key and value kept,
# the file read as dockerd reads it, the user's own default runtime given back when ascend stops being the default.

DAEMON_JSON="$ROOT/etc/docker/daemon.json"
DOCKER_DEFAULT_RECORD="$STATE_DIR/default-runtime.docker"

# daemon_json MODE: daemon_json.py on the host's file with the stack's settings.
daemon_json() {
  py daemon_json "$1" "$DAEMON_JSON" "$ASCEND_DEFAULT_RUNTIME" "$RUNTIME_BINARY" "$DOCKER_DEFAULT_RECORD"
}

# Preflight: the file parses as dockerd parses it and can be written; DOCKER_CHANGE and DOCKER_LIVE_RESTORE (yes|no)
# tell whether adding the runtime restarts docker and whether its containers outlive that restart.
check_daemon_json() {
  local facts why word
  # shellcheck disable=SC2034 # read by check_disruption (guards.sh)
  DOCKER_CHANGE=no DOCKER_LIVE_RESTORE=no
  if ! facts=$(daemon_json check 2>&1); then
    problem "docker: $facts"
    return
  fi
  for word in $facts; do
    # shellcheck disable=SC2034 # read by check_disruption (guards.sh)
    case $word in
      change=*) DOCKER_CHANGE=${word#*=} ;;
      live-restore=*) DOCKER_LIVE_RESTORE=${word#*=} ;;
    esac
  done
  why=$(py config_files writable "$DAEMON_JSON" 2>&1) || problem "docker: $why"
}

# apply_daemon_json MODE (add|remove): write the merge atomically with a checked backup, restart docker only on a
# change.
apply_daemon_json() {
  local result verb=added backup
  if [[ $1 == remove ]]; then verb=removed; fi
  result=$(daemon_json "$1" 2>&1) || die "docker: $result"
  if [[ $result == same ]]; then
    say "docker: /etc/docker/daemon.json already as wanted (ascend runtime $verb), docker not restarted"
    return
  fi
  backup=${result#changed backup=}
  say "docker: ascend runtime $verb in /etc/docker/daemon.json (default runtime ascend:" \
    "$ASCEND_DEFAULT_RUNTIME)${backup:+, backup $backup}"
  restart_engine docker
}
