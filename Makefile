# Two commands a newcomer needs: `make run` and `make test`. Both create .venv on first use.
# `make run` installs what running needs; `make test` adds the test and benchmark tools.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip install --quiet --disable-pip-version-check
RUN_STAMP := $(VENV)/.run-stamp
DEV_STAMP := $(VENV)/.dev-stamp

.PHONY: run test lint clean

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) --upgrade pip

$(RUN_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PIP) -e .
	touch $(RUN_STAMP)

$(DEV_STAMP): pyproject.toml | $(VENV)/bin/python
	$(PIP) -e '.[dev]'
	touch $(DEV_STAMP) $(RUN_STAMP)

run: $(RUN_STAMP)
	$(VENV)/bin/agent-repl $(ARGS)

test: $(DEV_STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check agent_repl tools tests benchmarks
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache
