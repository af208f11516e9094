# shellcheck shell=bash
# catalog: the parameters of STEP_PARAMS the release catalog decides, looked up in the table rendered above this part
# (CATALOG_BY names what each is looked up by, CATALOG holds every catalogued value; components/host/catalog_facts.py)
# and exported like the command's own, so record_settings keeps them for the uninstall; and the parameters a command
# leaves out because they have their usual value (DEFAULTS, rendered there too).

# param_defaults: each parameter of this step that has a usual value and that the command does not name in
# ASCEND_GIVEN, set to that value, whatever the node's environment held under its name; one it names is kept.
param_defaults() {
  local name
  [[ -v ASCEND_GIVEN ]] || return 0
  for name in "${STEP_PARAMS[@]}"; do
    if [[ -v "DEFAULTS[$name]" && " $ASCEND_GIVEN " != *" $name "* ]]; then export "$name=${DEFAULTS[$name]}"; fi
  done
}

# catalog_facts: each catalog parameter of this step, from the node's own parameters (its versions, engine, chip and
# arch, lower case); the `*` entry for a value the catalog does not list. Run by require_params, before its check,
# which names a parameter the command lacks: one a fact is looked up by is declared before the fact, so it is named.
catalog_facts() {
  local name var part key
  for name in "${STEP_PARAMS[@]}"; do
    [[ -v "CATALOG_BY[$name]" ]] || continue
    key=$name
    for var in ${CATALOG_BY[$name]}; do
      [[ -v $var ]] || continue 2
      part=${!var}
      key+="|${part,,}"
    done
    if [[ -v "CATALOG[$key]" ]]; then
      export "$name=${CATALOG[$key]}"
    elif [[ -v "CATALOG[$name|*]" ]]; then
      export "$name=${CATALOG[$name|*]}"
    else
      die "the release catalog has no $name for ${key#"$name|"} (components/releases); nothing was changed"
    fi
  done
}
