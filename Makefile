# Two commands do all set-up on a fresh machine (Python ≥ 3.11 with pip):
#   make demo   — a throwaway brain: init, add, edge, recall, get, list, stats
#   make test   — the test suite
PYTHON ?= python3
UV := $(PYTHON) -m uv
VENV := .venv
CEREBRO := $(VENV)/bin/cerebro
# The real agent clients the end-to-end tests drive (Claude Code, Codex CLI), pinned by
# tests/e2e/node/package-lock.json and installed project-locally (skipped without npm: those tests then
# skip, or fail under CI=true).
E2E_NODE := tests/e2e/node
E2E_STAMP := $(E2E_NODE)/node_modules/.installed-from-lock

.PHONY: setup demo test lock lint typecheck check clean plugin bench-peers bench-models mutate soak

setup:
	@$(UV) --version >/dev/null 2>&1 || $(PYTHON) -m pip install --quiet --disable-pip-version-check "uv>=0.5"
	@$(UV) sync --locked --quiet --compile-bytecode

# Reinstalled only when the lock (or package.json) is newer than the last install.
$(E2E_STAMP): $(E2E_NODE)/package-lock.json $(E2E_NODE)/package.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix $(E2E_NODE) --no-audit --no-fund --loglevel=error && touch $@; \
	fi

demo: setup
	@set -e; \
	export CEREBRO_HOME="$$(mktemp -d)"; project="$$(mktemp -d)"; \
	trap 'rm -rf "$$CEREBRO_HOME" "$$project"' EXIT; \
	echo "\$$ cerebro init"; $(CEREBRO) init -p "$$project"; echo; \
	echo '$$ cerebro add --type concept --importance 0.8 "JWT auth: 15 min access tokens, 7 day refresh tokens"'; \
	id=$$($(CEREBRO) add -p "$$project" --type concept --importance 0.8 "JWT auth: 15 min access tokens, 7 day refresh tokens"); echo "$$id"; \
	echo '$$ cerebro add --subtype decision "Chose SQLite + sqlite-vec: one file per project, no server"'; \
	id2=$$($(CEREBRO) add -p "$$project" --subtype decision "Chose SQLite + sqlite-vec: one file per project, no server"); echo "$$id2"; \
	echo "\$$ cerebro edge $${id2%%-*} $${id%%-*} supports"; $(CEREBRO) edge -p "$$project" "$${id2%%-*}" "$${id%%-*}" supports; echo; \
	echo '$$ cerebro recall "how long do access tokens last"'; $(CEREBRO) recall -p "$$project" "how long do access tokens last"; echo; \
	echo "\$$ cerebro get $${id%%-*}"; $(CEREBRO) get -p "$$project" "$${id%%-*}"; echo; \
	echo "\$$ cerebro list"; $(CEREBRO) list -p "$$project"; echo; \
	echo "\$$ cerebro stats"; $(CEREBRO) stats -p "$$project"

# Random order (pytest-randomly): a new seed each run, printed first; SEED=N replays an order.
ifndef SEED
SEED := $(shell od -An -N4 -tu4 /dev/urandom | tr -d ' ')
endif

test: setup $(E2E_STAMP)
	@echo "test order seed: $(SEED) (make test SEED=$(SEED) replays it)"
	$(VENV)/bin/python -m pytest -n 2 -q -p randomly --randomly-seed=$(SEED)

lock:
	$(UV) lock

# Fault injection and property tests at length (docs/reliability.md): every writing step killed with SIGKILL at
# TRIALS random points (default 20; `make test` runs 2), hypothesis at 2,000 examples a property.
soak: setup
	@echo "soak seed: $(SEED)"
	CEREBRO_SOAK_TRIALS=$(or $(TRIALS),20) CEREBRO_SOAK_SEED=$(SEED) HYPOTHESIS_PROFILE=soak \
		$(VENV)/bin/python -m pytest -q -p no:randomly tests/reliability tests/cli/test_properties.py

typecheck: setup
	$(VENV)/bin/mypy

# ruff: the rule sets in pyproject.toml (lint) and the layout (format, line length 120).
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

check: setup $(E2E_STAMP)
	$(VENV)/bin/python -m pytest -q -m "not slow"

clean:
	rm -rf $(VENV) dist build .pytest_cache

# Regenerate the Claude Code plugin and marketplace files from cerebro's templates (a test checks they match).
plugin: setup
	@$(VENV)/bin/python -m cerebro.integration.claude_code.plugin .

# Peer MCP servers that bench/mcp_peers_bench.py measures cerebro against — the MCP reference memory server
# (pinned by bench/peers/package-lock.json) and mcp-memory-service-lite (bench/peers/requirements-lite.txt, in a
# virtual environment of its own, bench/peers/lite) — into that scratch folder only: never part of the product,
# never installed by setup or test.
# basic-memory needs Python >= 3.12: a pyenv 3.12 when there is one (pyenv's shims hide it from uv), else uv's.
BASIC_MEMORY_PYTHON ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.12*/bin/python3.12) 3.12)

bench-peers:
	npm ci --prefix bench/peers --no-audit --no-fund --loglevel=error
	$(UV) venv --quiet --allow-existing --python 3.11 bench/peers/lite
	$(UV) pip install --quiet --python bench/peers/lite/bin/python -r bench/peers/requirements-lite.txt
	$(UV) venv --quiet --allow-existing --python $(BASIC_MEMORY_PYTHON) bench/peers/basic-memory
	$(UV) pip install --quiet --python bench/peers/basic-memory/bin/python -r bench/peers/requirements-basic-memory.txt
	$(UV) pip uninstall --quiet --python bench/peers/basic-memory/bin/python sqlite-vec

# The local provider's two models side by side (bench/local_models.py, ADR 0041): fidelity, CPU, writes, LoCoMo.
bench-models: setup
	$(VENV)/bin/python bench/local_models.py $(if $(LOCOMO),--locomo "$(LOCOMO)")

# Mutation testing (docs/testing.md): each group of core modules against its own tests (bench/mutate.py);
# GROUPS="db store" runs some of them. Slow (hours for all on 2 cores); not part of make test. Installs the
# mutate dependency group (make setup removes it again).
mutate: setup
	@$(UV) sync --locked --quiet --compile-bytecode --group mutate
	$(VENV)/bin/python bench/mutate.py $(GROUPS)
