# Everything a fresh machine needs comes from pyproject.toml into .venv.
PYTHON ?= python3
VENV ?= .venv
STAMP := $(VENV)/.installed-stamp

.PHONY: setup system-packages demo test soak bench screenshots docs-reference fuzz-api clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/xce demo

system-packages:
	tools/install-system-packages

test: $(STAMP) system-packages
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider

# schemathesis against a live controller for longer than the suite's short run (seconds per token role).
FUZZ_SECONDS ?= 600
fuzz-api: $(STAMP)
	XCE_FUZZ_SECONDS=$(FUZZ_SECONDS) $(VENV)/bin/python -m pytest -q -p no:cacheprovider tests/controller/test_controller_openapi.py

# The HA soak for as long as you like (the suite runs 15 s of it): SOAK_S seconds of killing the
# leader; it needs the PostgreSQL the tests use (127.0.0.1:5432, database test).
SOAK_S ?= 300
soak: $(STAMP)
	XCE_HA_SOAK_S=$(SOAK_S) $(VENV)/bin/python -m pytest -q -p no:cacheprovider -s --timeout=$$(( $(SOAK_S) + 600 )) tests/e2e/test_e2e_ha_soak.py

bench: $(STAMP)
	$(VENV)/bin/python -m bench

screenshots: $(STAMP) system-packages
	$(VENV)/bin/python -m bench.ui_screenshots docs/screenshots

docs-reference: $(STAMP)
	$(VENV)/bin/python -m xce.config.reference > docs/reference/configuration.md

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
