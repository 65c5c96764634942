# kleene: set-up, demo and tests. Two commands: `make demo` and `make test`.
#
# `make setup` creates .venv with Python 3.11+ when it is missing and installs kleene
# editable with its extras (spark, dev, bench); it reinstalls when pyproject.toml changes.

PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.kleene-installed

EVENTS   ?= 100000
SYMBOLS  ?= 2
PROB     ?= 0.7
SEED     ?= 1
DATA     := data
OUT      := out
QUERY    ?= examples/stock_rising.sase
STREAM   := $(DATA)/stock-$(EVENTS)-$(SYMBOLS)-$(PROB)-$(SEED).parquet
PYTEST_ARGS ?= -n 2

.PHONY: setup demo demo-local test lint clean

setup: $(STAMP)

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "no python3 found: install Python 3.11" >&2; exit 1; }
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "$(PYTHON) is older than 3.11" >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -e '.[spark,dev,bench]'
	@touch $@

$(STREAM): | $(STAMP)
	$(BIN)/kleene generate stock --events $(EVENTS) --symbols $(SYMBOLS) \
		--increase-prob $(PROB) --seed $(SEED) -o $@

# The demo: a stock stream (SIGMOD 2008, section 6) and a rising-price query run
# through the Spark pipeline in local mode; matches go to out/ as Parquet.
demo: $(STAMP) $(STREAM)
	$(BIN)/kleene run $(QUERY) --input $(STREAM) --output $(OUT)/stock_rising.parquet \
		--engine spark --master 'local[*]'

# The same query on the local (single-process) engine.
demo-local: $(STAMP) $(STREAM)
	$(BIN)/kleene run $(QUERY) --input $(STREAM) --output $(OUT)/stock_rising.local.parquet

# The whole test suite; pytest's exit code (5 when no test ran) is make's.
test: $(STAMP)
	$(BIN)/pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check kleene tests
	$(BIN)/mypy

clean:
	rm -rf $(OUT) $(DATA) .pytest_cache .mypy_cache .ruff_cache
