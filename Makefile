# ascend-npu: `make plan` (offline plan of a stack), `make test`, `make bench`, `make docs`, `make chart`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STACK ?= dev
EXTRA_RESOURCES ?=
STAMP := $(VENV)/.requirements-installed

.PHONY: plan test bench docs chart chart-package venv clean

$(STAMP): requirements.txt requirements-dev.txt policies/requirements.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $@

venv: $(STAMP)

plan: $(STAMP)
	@$(PY) -m components.plan --stack $(STACK) $(if $(EXTRA_RESOURCES),--extra-resources $(EXTRA_RESOURCES))

test: $(STAMP)
	$(PY) -m pytest -q tests

bench: $(STAMP)
	@$(PY) -m bench

docs: $(STAMP)
	@$(PY) -m components.config.reference

chart: $(STAMP)
	@$(PY) -m components.chart

chart-package: $(STAMP)
	@$(PY) -m components.chart package

clean:
	rm -rf build dist
