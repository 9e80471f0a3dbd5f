# Everything a fresh machine needs comes from pyproject.toml into .venv.
PYTHON ?= python3
VENV ?= .venv
STAMP := $(VENV)/.installed-stamp

.PHONY: setup system-packages demo test soak faults bench fleet-bench screenshots docs-reference man fuzz-api clean client-suites tool-battery

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	$(VENV)/bin/pip install --quiet -e '.[compat-clients]'
	touch $(STAMP)

# The LSF/Slurm front-ends go into a directory of their own, off PATH (`xce compat path`).
setup: $(STAMP)
	$(VENV)/bin/xce compat install --only-me

demo: $(STAMP)
	$(VENV)/bin/xce demo

system-packages:
	tools/install-system-packages

# ruff first (seconds; its rules are in pyproject.toml), then pytest in two processes (the machines
# are 2-core), each taking whole files, so that a module's cluster is started once: about half the
# serial time (10 min against 20 on the CI machine).
test: $(STAMP) system-packages
	$(VENV)/bin/ruff check
	$(VENV)/bin/python -m pytest -q -p no:cacheprovider -n 2 --dist loadfile --durations=20

# The workflow clients' own live-scheduler tests against a live XCE site: dask-jobqueue -E slurm/lsf
# (also in `make test`), snakemake-executor-plugin-slurm's tests/tests.py (about 14 minutes; its sdist
# is downloaded at the pinned version) and the lsf plugin's (2 min). SUITES=name... for some of them.
SUITES ?=
client-suites: $(STAMP)
	$(VENV)/bin/python tests/compat/clients/suites/run_suites.py $(SUITES)

# The tool battery: workflow tools beyond the suite's three (Parsl, PSI/J, myqueue, DPDispatcher, pysqa,
# Maestro, IPython Parallel, Toil, simple_slurm), each pinned in tests/compat/battery/requirements/TOOL.txt
# and installed into a virtual environment of its own under $$XCE_BATTERY_DIR (default: the temporary
# directory), each running a small real workflow against a fresh live site, Slurm and LSF where it has
# both. One JSON line per pair (docs/compat.md). TOOLS=parsl psij-python:lsf ... for some of them.
TOOLS ?=
tool-battery: $(STAMP)
	$(VENV)/bin/python tests/compat/battery/run_battery.py $(TOOLS)

# schemathesis against a live controller for longer than the suite's short run (seconds per token role).
FUZZ_SECONDS ?= 600
fuzz-api: $(STAMP)
	XCE_FUZZ_SECONDS=$(FUZZ_SECONDS) $(VENV)/bin/python -m pytest -q -p no:cacheprovider tests/controller/test_controller_openapi.py

# The HA soak for as long as you like (the suite runs 15 s of it): SOAK_S seconds of killing the
# leader; it needs the PostgreSQL the tests use (127.0.0.1:5432, database test).
SOAK_S ?= 300
soak: $(STAMP)
	XCE_HA_SOAK_S=$(SOAK_S) $(VENV)/bin/python -m pytest -q -p no:cacheprovider -s --timeout=$$(( $(SOAK_S) + 600 )) tests/e2e/test_e2e_ha_soak.py

# The fault campaign (database sessions killed, a full disk on a tmpfs, 50 SIGSTOPs of the leader) at
# length; the suite runs a short version. Needs root (tmpfs) and the tests' PostgreSQL.
faults: $(STAMP)
	XCE_FAULTS=long $(VENV)/bin/python -m pytest -q -p no:cacheprovider -s --timeout=1800 tests/e2e/test_e2e_fault_campaign.py

bench: $(STAMP)
	$(VENV)/bin/python -m bench

fleet-bench: $(STAMP)
	$(VENV)/bin/python -m bench.fleet

screenshots: $(STAMP) system-packages
	$(VENV)/bin/python -m bench.ui_screenshots docs/screenshots

docs-reference: $(STAMP)
	$(VENV)/bin/python -m xce.config.reference > docs/reference/configuration.md

# xce.1, xceadmin.1 and a page per LSF/Slurm front-end, rendered from the declarations (build output: never
# committed; `make setup` installs them where man finds them, through `xce compat install`).
MAN_DIR ?= build/man
man: $(STAMP)
	$(VENV)/bin/python -m xce.cli.manpage $(MAN_DIR)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
