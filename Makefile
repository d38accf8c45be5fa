# The README's two commands: `make serve` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime-installed
# What `make test` installs on top (tests, lint, every cloud SDK); the README test checks for it.
DEV := $(VENV)/.installed
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check

.PHONY: serve test check tools key test-postgres lint bench install cloud lock lock-secretzero clean bytecode

# Runtime dependencies only, every version locked with its hashes (requirements.txt). The
# project itself is installed in editable mode (no dependencies) for its command line,
# $(BIN)/secretsctl.
$(RUNTIME): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(PIP) --require-hashes -r requirements.txt
	$(PIP) --no-deps -e .
	touch $(RUNTIME)

# The runtime, every cloud SDK and the test and lint tools (requirements-dev.txt, locked too).
$(DEV): $(RUNTIME) requirements-dev.txt
	$(PIP) --require-hashes -r requirements-dev.txt
	touch $(DEV)

install: $(RUNTIME)

# The project's modules compiled to bytecode (pip compiles the virtualenv's, not an editable
# project's): where Python may not write bytecode itself (PYTHONDONTWRITEBYTECODE), every
# process would compile each module it imports again, 0.1-0.2 s of every command's, worker's
# and test process's start. Only what changed since is compiled again.
bytecode: $(RUNTIME)
	$(BIN)/python -m compileall -q -j0 manage.py secretsapi project audit apikeys adminusers jobs metrics webhooks deployment projects

# The SDKs of the remote target kinds (AWS, Vault, Kubernetes, Azure, GitHub, ansible-vault);
# without one, that kind's targets fail naming the package. `make test` installs them all.
cloud: $(RUNTIME)
	$(PIP) --require-hashes -r requirements-cloud.txt

# Regenerate the three lock files from requirements*.in (after changing a version there).
lock: $(DEV)
	$(BIN)/pip-compile -q --generate-hashes --allow-unsafe --strip-extras --no-header --no-emit-index-url \
		--no-emit-find-links -o requirements.txt requirements.in
	$(BIN)/pip-compile -q --generate-hashes --allow-unsafe --strip-extras --no-header --no-emit-index-url \
		--no-emit-find-links -o requirements-cloud.txt requirements-cloud.in
	$(BIN)/pip-compile -q --generate-hashes --allow-unsafe --strip-extras --no-header --no-emit-index-url \
		--no-emit-find-links -o requirements-dev.txt requirements-dev.in

# SecretZero's lock (tests/secretzero_venv.py: the parity tests' reference), compiled with Python 3.12,
# which SecretZero needs, in a scratch virtualenv.
lock-secretzero:
	rm -rf $(VENV)/lock312
	"$$(python3 tests/secretzero_venv.py python312)" -m venv $(VENV)/lock312
	$(VENV)/lock312/bin/python -m pip install --quiet --disable-pip-version-check pip-tools
	$(VENV)/lock312/bin/pip-compile -q --generate-hashes --allow-unsafe --strip-extras --no-header \
		--no-emit-index-url --no-emit-find-links -o requirements-secretzero.txt requirements-secretzero.in
	rm -rf $(VENV)/lock312

# Embedded default: SQLite in ./data and the example definition (override with SERVICE_CONFIG).
# The API, a job worker and the scheduler together (Procfile); Ctrl-C stops them all.
serve: $(RUNTIME) bytecode
	PATH="$(CURDIR)/$(BIN):$$PATH" SERVICE_CONFIG="$${SERVICE_CONFIG:-examples/Secretfile.yml}" \
		$(BIN)/python -m honcho start -f Procfile

# A new API key, alone on stdout: `export SERVICE_API_KEY=$$(make -s key)` (README's curl session).
# Sets up the venv first like serve and test; that step's output (and make's) goes to stderr.
key:
	@$(MAKE) --no-print-directory $(RUNTIME) >&2
	@$(BIN)/python manage.py generate_api_key

# The whole suite on SQLite, plus the PostgreSQL tests when TEST_DATABASE_URL names a server
# (they skip otherwise; docs/operations.md, "Tests on PostgreSQL"). .ci/run provides one. The system tools the
# tests use come first (`make tools`). Bytecode is written even where the environment says not to
# (PYTHONDONTWRITEBYTECODE): pytest keeps each test module's rewritten assertions there, and
# without it every xdist worker rewrites all of them (5 s of each one's collection), as every
# process the tests start compiles what it imports (pytest.ini: every skip says why).
test: $(DEV) bytecode tools
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest

# The unit tier in seconds (tests/tiers.py): every module imported, every test that starts no
# process or server and needs no PostgreSQL; two workers, in collection order (no shuffling).
# Its tables come from the models (the migrations are `make test`'s, marked `migrations`), and
# the pytest plugins of schemathesis, hypothesis and anyio, which only the fuzz tests use, are not
# loaded: 2-3 s of each worker's start together, and hypothesis' import at the summary.
check: $(DEV) bytecode
	PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest --unit -n 2 -p no:randomly -p no:schemathesis \
		-p no:hypothesispytest -p no:anyio --no-migrations

# The system tools the tests use (tests/tools.py, one list, standard library only): installed with
# apt-get when run as root on Debian (TEST_TOOLS=check only checks), else one line for each one
# missing, whose tests then skip saying so. Then SecretZero itself, which the parity tests run
# beside us, in a Python 3.12 virtualenv of its own (tests/secretzero_venv.py; once, ~35 s).
tools:
	@python3 tests/tools.py prepare
	@python3 tests/secretzero_venv.py prepare

# ruff (lint, import order, security checks) and mypy (strict on the engine), as pyproject.toml
# configures them; .ci/run runs this before the tests and fails on any finding.
lint: $(DEV)
	$(BIN)/ruff check .
	$(BIN)/mypy

# Only the PostgreSQL tests (multi-instance locking, migrations on start); needs TEST_DATABASE_URL.
test-postgres: $(DEV)
	TEST_REQUIRE_POSTGRES=1 $(BIN)/python -m pytest -m postgres

# Benchmarks (bench/README.md): never part of `make test`. Installs wrk from Debian when missing
# (falls back to a Python load loop if it cannot); about 5 minutes on 2 cores.
bench: $(DEV)
	command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk) || echo "wrk unavailable: using the Python load loop"
	$(BIN)/python bench/bench_run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) data .pytest_cache
