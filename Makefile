# sira: set-up, demo, tests and benchmarks.
#
#   make demo   create .venv, install sira (editable) and run the demo
#   make test   same plus the test, spark, io, plot and duckdb extras, then run pytest
#   make bench  run benchmarks/run_all.py if it exists
#   make clean  remove the venv and build/test leftovers

SHELL := /bin/bash

PYTHON_BOOT := $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null)
VENV := .venv
PY := $(VENV)/bin/python
PIP := PIP_DISABLE_PIP_VERSION_CHECK=1 $(PY) -m pip

# Stamps are keyed on the packaging files, so editing them triggers a reinstall
# and an unchanged checkout re-runs in well under a second.
SETUP_HASH := $(shell cat setup.cfg pyproject.toml 2>/dev/null | sha256sum | cut -c1-16)
STAMP_BASE := $(VENV)/.installed-$(SETUP_HASH)
STAMP_TEST := $(VENV)/.installed-test-$(SETUP_HASH)

export PIP_DISABLE_PIP_VERSION_CHECK := 1

# Spark: run Python workers with the venv's interpreter (pyspark otherwise
# starts plain `python3` from PATH, which lacks sira and its dependencies) and
# keep the driver on loopback (this host's name resolves to 127.0.0.1, which
# makes Spark warn and bind to another interface).
export PYSPARK_PYTHON ?= $(CURDIR)/$(PY)
export PYSPARK_DRIVER_PYTHON ?= $(CURDIR)/$(PY)
export SPARK_LOCAL_IP ?= 127.0.0.1

.PHONY: venv venv-test demo test bench clean

venv: $(STAMP_BASE)

venv-test: $(STAMP_TEST)

$(PY):
	@test -n "$(PYTHON_BOOT)" || { echo "error: neither python3.11 nor python3 found" >&2; exit 1; }
	$(PYTHON_BOOT) -m venv $(VENV)
	$(PIP) install --quiet --progress-bar off --upgrade pip || { rm -rf $(VENV); exit 1; }

$(STAMP_BASE): setup.cfg pyproject.toml | $(PY)
	rm -f $(VENV)/.installed-*
	$(PIP) install --quiet --progress-bar off -e .
	touch $@

$(STAMP_TEST): setup.cfg pyproject.toml | $(PY)
	rm -f $(VENV)/.installed-*
	$(PIP) install --quiet --progress-bar off -e '.[test,spark,io,plot,duckdb]'
	touch $@ $(STAMP_BASE)

demo: venv
	$(PY) -m sira demo

test: venv-test
	$(PY) -m pytest -q -n 2 --durations=25

bench: venv
	@if [ -f benchmarks/run_all.py ]; then \
		$(PY) benchmarks/run_all.py; \
	else \
		echo "benchmarks/run_all.py not found; nothing to run"; \
	fi

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis \
		spark-warehouse metastore_db derby.log benchmarks/out
	find . -name __pycache__ -type d -prune -not -path './.git/*' -exec rm -rf {} +
