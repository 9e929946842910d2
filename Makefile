# nard: `make run` and `make test` do all the set-up on a fresh machine.
# `make run` serves the web app at http://127.0.0.1:8000 (SQLite in the user's
# data directory); `make play` starts the terminal game.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run play test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@# Compile the engine's kernels into numba's cache now, not on a first game.
	$(BIN)/python -c "from nard.engine._kernels import compile_all; compile_all()"
	@touch $(STAMP)

run: $(STAMP)
	$(BIN)/nard serve

play: $(STAMP)
	$(BIN)/nard play

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest -n 2 --dist loadfile

test: lint typecheck unit

bench: $(STAMP)
	bash bench/setup_peers.sh
	bench/.venv-peers/bin/python bench/movegen.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis
