# ascend-npu: `make plan` (offline plan of a stack), `make test` (runs `make lint` first: ruff and mypy),
# `make bench`, `make docs`, `make chart`,
# `make template STACK=<stack>` (the chart rendered offline with the stack's values);
# `make doctor STACK=<stack>` (read-only checks of a running stack, over SSH and the API);
# `make bundle STACK=<stack>` (what an air-gapped site carries in; OUT=<dir>), `make bundle STACK=<stack> CHECK=<dir>`
# (proves a directory holds all of it);
# the real engine: `make engine` (build it into the machine's cache), `make cluster` / `make cluster-stop` (a local
# control plane), `make e2e` (every scenario; `make e2e K=drain`: the scenarios whose names match, as pytest -k;
# ASCEND_NPU_COMMAND_PROVIDER=<pulumi-resource-command binary>: against it instead of the command stand-in).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STACK ?= dev
K ?=
JSON ?=
EXTRA_RESOURCES ?=
PLACEHOLDER_SECRETS ?=
OUT ?=
CHECK ?=
STAMP := $(VENV)/.requirements-installed
# The virtualenv policies/PulumiPolicy.yaml names, which the CLI runs the pack with: .venv holds its requirements.
PACK_VENV := policies/venv

.PHONY: plan test lint bench docs chart chart-package template venv clean engine cluster cluster-stop e2e doctor actionlint \
	bundle

$(STAMP): requirements.txt requirements-dev.txt policies/requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $@

$(PACK_VENV): | $(STAMP)
	@ln -sfn ../.venv $(PACK_VENV)

venv: $(STAMP) $(PACK_VENV)

plan: $(STAMP) $(PACK_VENV)
	@$(PY) -m components.plan --stack $(STACK) $(if $(EXTRA_RESOURCES),--extra-resources $(EXTRA_RESOURCES)) \
		$(if $(PLACEHOLDER_SECRETS),--placeholder-secrets $(PLACEHOLDER_SECRETS))

doctor: $(STAMP)
	@$(PY) -m components.doctor --stack $(STACK) $(if $(JSON),--json) $(if $(BUNDLE),--bundle $(BUNDLE)) \
		$(if $(RESTART_WINDOW),--restart-window $(RESTART_WINDOW))

bundle: $(STAMP)
	@$(PY) -m components.bundle --stack $(STACK) $(if $(OUT),--out $(OUT)) $(if $(CHECK),--check $(CHECK)) \
		$(if $(PLACEHOLDER_SECRETS),--placeholder-secrets $(PLACEHOLDER_SECRETS))

# One worker per core; TEST_WORKERS=0 runs the suite in this process, one test at a time.
TEST_WORKERS ?= auto

test: lint
	$(PY) -m pytest -q -n $(TEST_WORKERS) tests --ignore=tests/e2e

lint: $(STAMP) $(PACK_VENV)
	$(PY) -m ruff check .
	$(PY) -m mypy

engine: $(STAMP)
	@bash engine/build.sh
	@$(PY) -m engine.pulumi_cli

# The workflows checked by actionlint (built by make engine), which runs shellcheck on their run: scripts.
actionlint: engine
	@"$$($(PY) -c 'from engine.cache import BIN; print(BIN)')/actionlint" -no-color -oneline
	@echo "actionlint: .github/workflows/*.yml: no problem"

cluster: engine
	@$(PY) -m engine.cluster start --stack $(STACK)

cluster-stop:
	@$(PY) -m engine.cluster stop

e2e: engine
	ASCEND_E2E_REQUIRED=1 $(PY) -m pytest -v -p no:cacheprovider -s tests/e2e $(if $(K),-k "$(K)")

bench: $(STAMP)
	@$(PY) -m bench

docs: $(STAMP)
	@$(PY) -m components.config.reference
	@$(PY) policies/readme.py

chart: $(STAMP)
	@$(PY) -m components.chart

chart-package: $(STAMP)
	@$(PY) -m components.chart package

template: $(STAMP)
	@$(PY) -m components.chart template --stack $(STACK) $(if $(PLACEHOLDER_SECRETS),--placeholder-secrets $(PLACEHOLDER_SECRETS))

clean:
	rm -rf build dist
