# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs
BENCH_STAMP := $(VENV)/.installed-bench

.PHONY: demo test bench docs lint clean ecosystem

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,examples,ecosystem]"
	touch $(STAMP)

$(DOCS_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[test,examples,docs]"
	touch $(DOCS_STAMP)

$(BENCH_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e ".[test,examples,bench]"
	touch $(BENCH_STAMP)

demo: $(STAMP)
	$(PY) examples/mlp_digits.py

test: $(STAMP)
	$(VENV)/bin/ruff check yax tests benchmarks examples
	$(PY) -m pytest -n 2 --dist loadfile --no-loadscope-reorder tests

# Benchmarks: a table on stdout, docs/_static/bench/results.json and PNG charts beside it.
bench: $(BENCH_STAMP)
	$(PY) benchmarks/run.py --json docs/_static/bench/results.json
	$(PY) benchmarks/plot.py docs/_static/bench/results.json docs/_static/bench

# optax's own test files (shipped in its wheel) under the real jax and under yax's alias mode
# (`python -m yax -m pytest`), pass/fail counts side by side; logs in ecosystem-reports/.
# Long (tens of minutes on 2 cores): not part of `make test`. ECOSYSTEM_ARGS=--all: every file.
ecosystem: $(STAMP)
	$(PY) scripts/optax_own_tests.py --out ecosystem-reports $(ECOSYSTEM_ARGS)

# The documentation site (Sphinx + MyST-NB, code cells executed): docs/_build/html/index.html.
# -W turns every warning (a broken reference, a cell that raises unexpectedly) into a failure.
docs: $(DOCS_STAMP)
	$(VENV)/bin/sphinx-build -W --keep-going -b html docs docs/_build/html

lint: $(STAMP)
	$(VENV)/bin/ruff check yax tests benchmarks examples

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis docs/_build docs/jupyter_execute
