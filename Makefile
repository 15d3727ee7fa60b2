# Two commands a newcomer needs: `make run` and `make test` (`make test-fast` while working). Both create .venv on first use.
# `make run` installs what running needs (with the emulator, for the offline demo model without a
# key); `make test` adds the test and benchmark tools.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
RUN_STAMP := $(VENV)/.run-stamp
DEV_STAMP := $(VENV)/.dev-stamp

# The suite runs on up to two processes (never more than the machine has cores), whole files per
# process, so a file's fixtures and its tmux server stay together. `make test JOBS=1`: one process.
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 1); [ $$n -gt 2 ] && n=2; echo $$n)
UNIT_DIRS := tests/core tests/context tests/tools tests/commands tests/transcript tests/test_import_cycles.py tests/test_import_hygiene.py

.PHONY: run test test-fast lint clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PIP) -e '.[emulator]'
	touch $(RUN_STAMP)

$(DEV_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PIP) -e '.[dev]'
	touch $(DEV_STAMP) $(RUN_STAMP)

run: $(RUN_STAMP)
	$(VENV)/bin/agent-repl $(ARGS)

# Tiers: -m unit, -m e2e, -m tmux, -m slow (tests/conftest.py sets them by folder).
test: $(DEV_STAMP)
	$(PY) -m pytest -q -n $(JOBS) --dist loadfile $(PYTEST_ARGS)

# The unit folders without the slow fuzzing: the check to run while working.
test-fast: $(DEV_STAMP)
	$(PY) -m pytest -q -m "unit and not slow" $(UNIT_DIRS) $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check agent_repl tools tests benchmarks
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) .pytest_cache
