# `make run` and `make test` set everything up on a fresh machine (only python3 needed).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
PKG_STAMP := $(VENV)/.installed-package
# The archive is named after assistant.__version__ and the machine, e.g. Assistant-0.1.0-linux-x86_64.
VERSION = $(shell sed -n 's/^__version__ = "\(.*\)"$$/\1/p' assistant/__init__.py)
ARCHIVE = dist/Assistant-$(VERSION)-linux-$(shell uname -m).tar.gz

.PHONY: run test lint pytest bench test-stress test-reliability test-servers package package-test clean

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

# `make test` 10 times on a fresh clone with both cores busy, each run in a new random order.
test-stress:
	tests/stress.sh 10

# The long reliability suite: a crash at every failpoint of every store (tests/reliability/crashes.py),
# 200 SIGKILLs over every writer, hostile imports, and the reliability cases that `make test` also
# runs (KILLS_PER_WRITER=40 by default).
test-reliability: $(DEV_STAMP)
	ASSISTANT_RELIABILITY=1 $(BIN)/pytest -q -s tests/reliability tests/test_reliability.py \
		tests/test_memory_is_data.py tests/test_memory_edit_lines.py tests/test_failpoints.py \
		tests/test_crash_consistency.py tests/test_unreadable_kept.py tests/test_load_bounds.py

bench: $(DEV_STAMP)
	$(BIN)/python -m tests.bench.memory_bench
	$(BIN)/python -m tests.bench.ui_bench
	$(BIN)/python -m tests.bench.import_bench
	$(BIN)/python -m tests.bench.knowledge_bench
	$(BIN)/python -m tests.bench.mcp_bench
	$(BIN)/python -m tests.bench.mcp_server_bench
	$(BIN)/python -m tests.bench.recall_bench --ablation --scale 100000
	$(BIN)/python -m tests.bench.tombstone_bench
	$(BIN)/python -m tests.bench.quick_search_bench

# The app core against real llama-cpp-python servers (slow the first time: it compiles). Not in `test`.
test-servers: $(DEV_STAMP)
	tests/servers/run.sh

# The one-folder bundle dist/Assistant/ (PyInstaller, packaging/assistant.spec) and its archive.
package: $(PKG_STAMP)
	rm -rf build/pyinstaller dist/Assistant $(ARCHIVE)
	$(BIN)/pyinstaller --noconfirm --clean --log-level WARN \
		--distpath dist --workpath build/pyinstaller packaging/assistant.spec
	tar -C dist --owner=0 --group=0 --numeric-owner -czf $(ARCHIVE) Assistant
	@echo "dist/Assistant: $$(du -sh dist/Assistant | cut -f1) unpacked; $(ARCHIVE): $$(du -h $(ARCHIVE) | cut -f1)"

# Build the bundle, then run it off-screen, under Xvfb, with a Secret Service, and installed.
package-test: package
	packaging/smoke_test.sh dist/Assistant

clean:
	rm -rf build dist .mypy_cache .pytest_cache .ruff_cache
