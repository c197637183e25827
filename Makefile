# Every target installs what it needs first: a virtualenv with the project and its dev
# tools (from pyproject.toml), and redis-server and PostgreSQL (the archive's tests) from
# Debian's packages when they are missing.
VENV ?= .venv
BIN := $(VENV)/bin
PYTHON ?= python3

.PHONY: run test test-cluster lint bench redis-server postgres system-deps clean

$(BIN)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

redis-server:
	@command -v redis-server >/dev/null || { \
	  echo "installing redis-server from Debian's packages"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq redis-server >/dev/null; }

postgres:
	@bash deploy/install-postgres.sh

# What the browser and archive tests need besides Redis: Debian's Chromium (Playwright
# drives it; no browser download), a CJK font (the table in Korean and Japanese, and its
# screenshots: docs/i18n.md) and PostgreSQL (the tests initdb their own).
system-deps: redis-server postgres
	@command -v chromium >/dev/null || [ -x /usr/bin/chromium ] || { \
	  echo "installing chromium from Debian's packages"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }
	@[ -d /usr/share/fonts/opentype/noto ] && ls /usr/share/fonts/opentype/noto | grep -q CJK || { \
	  echo "installing fonts-noto-cjk from Debian's packages"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq fonts-noto-cjk >/dev/null; }

# make run PORT=8001 HOST=0.0.0.0: where the gateway listens (else $MIGHTY_PORT, $MIGHTY_HOST, 8000 on 127.0.0.1)
run: $(BIN)/.installed
	$(BIN)/mighty serve $(if $(PORT),--port $(PORT)) $(if $(HOST),--host $(HOST))

# Every tier that starts whole processes (drills, the browser and terminal clients, the
# hostile clients, the integration tier) one test at a time: each bounds what its
# processes take, and a neighbour's would eat into it on two cores. The unit tier, in
# one process each, runs on every core (pytest-xdist).
test: $(BIN)/.installed system-deps
	$(BIN)/pytest tests/drills tests/e2e tests/hostile tests/integration
	$(BIN)/pytest -n auto tests/unit

# The integration tier (the store contract suite with it) on a local Redis Cluster: three
# primaries and three replicas the fixtures start once (MIGHTY_TEST_CLUSTER=1,
# tests/integration/conftest.py; services/redis_cluster.py). docs/store.md, "Redis Cluster".
# A test that meets no cluster is not run again here (tests/integration/conftest.py).
test-cluster: $(BIN)/.installed system-deps
	MIGHTY_TEST_CLUSTER=1 $(BIN)/pytest tests/integration

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/mypy domain projections services bench clients

bench: $(BIN)/.installed redis-server
	$(BIN)/mighty bench domain --json
	$(BIN)/mighty bench store --json
	$(BIN)/mighty bench projections --json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
