# `make run` and `make test` set everything up on a fresh machine (only python3 needed).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
PKG_STAMP := $(VENV)/.installed-package

.PHONY: run test lint pytest bench package clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e .
	touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $@ $(RUN_STAMP)

$(PKG_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[package]'
	touch $@

run: $(RUN_STAMP)
	$(BIN)/assistant

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

pytest: $(DEV_STAMP)
	$(BIN)/pytest

test: lint pytest

bench: $(DEV_STAMP)
	$(BIN)/python -m tests.bench.memory_bench
	$(BIN)/python -m tests.bench.ui_bench

clean:
	rm -rf build dist .mypy_cache .pytest_cache .ruff_cache
