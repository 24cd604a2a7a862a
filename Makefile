# A newcomer needs two targets: `make run` and `make test`. Everything else is a guessable extra.
PYTHON ?= python3.11
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
HOST   ?= 127.0.0.1
PORT   ?= 7432

.PHONY: run test setup lint synth bench eval clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -e '.[dev]'
	@touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/memlane serve --host $(HOST) --port $(PORT)

test: $(STAMP)
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check memlane functions infra tests
	$(BIN)/mypy memlane

synth: $(STAMP)
	$(BIN)/python app.py

bench: $(STAMP)
	$(BIN)/python -m memlane.bench

clean:
	rm -rf $(VENV) cdk.out .pytest_cache
