# Everything a fresh machine needs comes from pyproject.toml into .venv.
PYTHON ?= python3
VENV ?= .venv
STAMP := $(VENV)/.installed-stamp

.PHONY: setup system-packages demo test bench docs-reference fuzz-api clean

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

bench: $(STAMP)
	$(VENV)/bin/python -m bench

docs-reference: $(STAMP)
	$(VENV)/bin/python -m xce.config.reference > docs/reference/configuration.md

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
