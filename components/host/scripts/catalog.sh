# shellcheck shell=bash
# catalog: the parameters of STEP_PARAMS the release catalog decides, looked up in the table rendered above this part
# (CATALOG_BY names what each is looked up by, CATALOG holds every catalogued value; components/host/catalog_facts.py)
# and exported like the command's own, so record_settings keeps them for the uninstall.

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
