# The README's two commands: `make serve` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test key test-postgres lint bench install clean

# The project itself is installed in editable mode (no dependencies: requirements.txt pins them)
# for its command line, $(BIN)/secretsctl.
$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# Embedded default: SQLite in ./data and the example definition (override with SERVICE_CONFIG).
# The API, a job worker and the scheduler together (Procfile); Ctrl-C stops them all.
serve: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" SERVICE_CONFIG="$${SERVICE_CONFIG:-examples/Secretfile.yml}" \
		$(BIN)/python -m honcho start -f Procfile

# A new API key, alone on stdout: `export SERVICE_API_KEY=$$(make -s key)` (README's curl session).
# Sets up the venv first like serve and test; that step's output (and make's) goes to stderr.
key:
	@$(MAKE) --no-print-directory $(STAMP) >&2
	@$(BIN)/python manage.py generate_api_key

# The whole suite on SQLite, plus the PostgreSQL tests when TEST_DATABASE_URL names a server
# (they skip otherwise; README "Tests on PostgreSQL"). .ci/run provides one.
test: $(STAMP)
	$(BIN)/python -m pytest

# ruff (lint, import order, security checks) and mypy (strict on the engine), as pyproject.toml
# configures them; .ci/run runs this before the tests and fails on any finding.
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# Only the PostgreSQL tests (multi-instance locking, migrations on start); needs TEST_DATABASE_URL.
test-postgres: $(STAMP)
	TEST_REQUIRE_POSTGRES=1 $(BIN)/python -m pytest -m postgres

# Benchmarks (bench/README.md): never part of `make test`. Installs wrk from Debian when missing
# (falls back to a Python load loop if it cannot); about 5 minutes on 2 cores.
bench: $(STAMP)
	command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk) || echo "wrk unavailable: using the Python load loop"
	$(BIN)/python bench/bench_run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) data .pytest_cache
