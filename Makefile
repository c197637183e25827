# Every target installs what it needs first: a virtualenv with the project and its dev
# tools (from pyproject.toml), and redis-server from Debian's packages when it is missing.
VENV ?= .venv
BIN := $(VENV)/bin
PYTHON ?= python3

.PHONY: run test lint bench redis-server system-deps clean

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

# What the browser and archive tests need besides Redis: Debian's Chromium (Playwright
# drives it; no browser download) and PostgreSQL (the tests initdb their own).
system-deps: redis-server
	@missing=""; \
	  command -v chromium >/dev/null || [ -x /usr/bin/chromium ] || missing="$$missing chromium"; \
	  command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing="$$missing postgresql"; \
	  if [ -n "$$missing" ]; then \
	    echo "installing$$missing from Debian's packages"; \
	    SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	    $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	  fi

run: $(BIN)/.installed
	$(BIN)/mighty demo --tables 4 --hands 3

test: $(BIN)/.installed system-deps
	$(BIN)/pytest

lint: $(BIN)/.installed
	$(BIN)/ruff check .
	$(BIN)/mypy domain projections services bench clients

bench: $(BIN)/.installed redis-server
	$(BIN)/mighty bench domain --json
	$(BIN)/mighty bench store --json
	$(BIN)/mighty bench projections --json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
