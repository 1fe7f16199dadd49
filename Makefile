# The two commands of the README: `make demo` and `make test`.
VENV := .venv
PY := $(VENV)/bin/python
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)

.PHONY: demo demo-scale test lint typecheck unit bench mutation setup setup-system clean

setup:
	@scripts/setup.sh

setup-system:
	@scripts/setup.sh --system

demo: setup-system
	@scripts/demo.sh

# The same demo on PostgreSQL + S3: a throwaway PostgreSQL cluster and SeaweedFS server on loopback.
demo-scale: setup-system
	@$(PY) scripts/with_servers.py scripts/demo.sh

lint: setup
	$(VENV)/bin/ruff check src tests bench
	$(VENV)/bin/ruff format --check src tests bench
	$(VENV)/bin/lint-imports --no-logo

typecheck: setup
	$(VENV)/bin/mypy

unit: setup-system
	$(PY) -m pytest -q $(PYTEST_ARGS)

test: setup-system lint typecheck
	$(PY) -m pytest -q $(PYTEST_ARGS)

bench: setup-system
	$(PY) bench/run.py $(BENCH_ARGS)

mutation: setup
	@scripts/mutation.sh $(MUTATION_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build src/*.egg-info
