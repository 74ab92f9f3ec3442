# Two commands set everything up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/mlp_digits.py

test: $(STAMP)
	$(VENV)/bin/ruff check yax tests benchmarks examples
	$(PY) -m pytest -n 2 --dist loadfile tests

bench: $(STAMP)
	$(PY) benchmarks/run.py

lint: $(STAMP)
	$(VENV)/bin/ruff check yax tests benchmarks examples

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
