# nard: `make run` and `make test` do all the set-up on a fresh machine.
# `make run` serves the web app at http://127.0.0.1:8000 (SQLite in the user's
# data directory); `make play` starts the terminal game.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run-stamp
STAMP := $(VENV)/.installed-stamp

.PHONY: run play test lint typecheck unit bench clean

# What running nard needs: its own dependencies, not the test tools (PyTorch,
# Playwright...), which only `make test` and the other targets below install.
# nard/__init__.py holds the version the installed metadata (the server's /healthz) repeats.
$(RUN_STAMP): pyproject.toml nard/__init__.py
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	@# Compile the engine's kernels into numba's cache now, not on a first game.
	$(BIN)/python -c "from nard.engine._kernels import compile_all; compile_all()"
	@touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP) pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

run: $(RUN_STAMP)
	$(BIN)/nard serve

play: $(RUN_STAMP)
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
