# The README's two commands: `make serve` and `make test`. Both set themselves up.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: serve test install clean

$(STAMP): requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $(STAMP)

install: $(STAMP)

# Embedded default: SQLite in ./data and the example definition (override with SERVICE_CONFIG).
serve: $(STAMP)
	SERVICE_CONFIG="$${SERVICE_CONFIG:-examples/Secretfile.yml}" $(BIN)/python manage.py serve

test: $(STAMP)
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) data .pytest_cache
