# Two commands do everything: `make demo` and `make test`.
# Both create .venv when missing and install torch==2.13.0 (CPU) first, then
# the project (editable) with its test and [mlir] extras. Re-running is fast:
# the install step re-runs only when pyproject.toml changes.

PYTHON ?= $(shell command -v python3.11 2>/dev/null || command -v python3)
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: install demo test lint lint-imports clean

$(PY):
	$(PYTHON) -m venv $(VENV)

$(STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(PY) -m pip install --quiet --disable-pip-version-check -e '.[test,mlir,dfx]'
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(PY) examples/demo.py

# Browser tests drive Debian's chromium through Playwright.
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(CHROMIUM):
	$(SUDO) apt-get update -qq
	$(SUDO) apt-get install -y -qq chromium

# deps_viewer's HTML view lays its graph out with Debian's Graphviz.
DOT := /usr/bin/dot

$(DOT):
	$(SUDO) apt-get update -qq
	$(SUDO) apt-get install -y -qq graphviz

test: install $(CHROMIUM) $(DOT)
	$(PY) -m pytest -q
	$(VENV)/bin/lit -q test
	$(MAKE) lint-imports

# The import layers of pyproject's [tool.importlinter]. grimp reads packages
# from one folder each, so it gets a mirror of the installed layout: pypto/'s
# entries plus dialects/, ptoas/ and tools/ as pypto.dialects/.ptoas/.tools
# (pyproject's package-dir), all symlinks. lint-imports puts its working
# directory first on sys.path, so it runs in the mirror.
IMPORT_LAYOUT := $(VENV)/import-layout
lint-imports: install
	rm -rf $(IMPORT_LAYOUT)
	mkdir -p $(IMPORT_LAYOUT)/pypto
	for entry in pypto/*; do ln -s "$(CURDIR)/$$entry" $(IMPORT_LAYOUT)/pypto/; done
	for folder in dialects ptoas tools; do ln -s "$(CURDIR)/$$folder" $(IMPORT_LAYOUT)/pypto/$$folder; done
	cd $(IMPORT_LAYOUT) && PYTHONPATH=. $(abspath $(VENV))/bin/lint-imports $(CURDIR)/pyproject.toml --no-cache

lint: install
	$(VENV)/bin/ruff check .

clean:
	rm -rf build_output .pytest_cache
