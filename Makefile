# gpuledger: `make demo` runs the nightly pipeline on generated sample exports; `make test` runs the tests.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# The home every target uses, as the CLI finds it when run here: ./.home (docs/decisions/0013-one-home.md).
GPULEDGER_HOME ?= $(CURDIR)/.home
export GPULEDGER_HOME

.PHONY: check-install install demo ui test test-needs test-fast lint lock clean install-validator validate-focus lock-validator install-prometheus install-azurite install-pdf install-duckdb-1.4 install-postgres
VALIDATOR_VENV := .venv-validator

install: $(VENV)/.installed

# The installer is bootstrapped first, hash-pinned (tools/requirements-uv.lock), by the interpreter's own pip; every
# venv is then installed by it from a hashed lock, so a new upstream release can change no install (docs/decisions/0023).
INSTALLER_VENV := .venv-uv
UV := $(INSTALLER_VENV)/bin/uv
# uv uses the interpreter it is given, never one it would download.
export UV_PYTHON_DOWNLOADS := never

$(UV): tools/requirements-uv.lock
	$(PYTHON) -m venv $(INSTALLER_VENV)
	$(INSTALLER_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps --require-hashes -r tools/requirements-uv.lock
	touch $@

# `pip` stays in .venv (from the interpreter's venv module) for users and the packaging test; the build backend of the
# editable install comes hashed from tools/requirements-build.lock. Bytecode is compiled at install, as pip does, the
# project's own packages too: where PYTHONDONTWRITEBYTECODE is set, every process would otherwise compile the ~1,700
# modules it imports (4 s).
$(VENV)/.installed: requirements.lock tools/requirements-build.lock pyproject.toml $(UV)
	@echo "Installing gpuledger and its pinned dependencies into $(VENV)/"
	$(PYTHON) -m venv $(VENV)
	$(UV) pip sync --quiet --compile-bytecode --python $(BIN)/python --require-hashes requirements.lock
	$(UV) pip install --quiet --python $(BIN)/python --no-deps --build-constraints tools/requirements-build.lock -e .
	$(BIN)/python -m compileall -q connectors gpuledger gpuledger_demo models pipelines
	touch $@

# The install cannot drift: no lock line names an extra (pip < 23.3 reads `name[extra]==` as not pinning `name`), the
# locks are what `make lock` makes of pyproject.toml today, and a clean venv with no cache, offered a newer release of a
# locked package, installs exactly the lock (scripts/check-install).
check-install: $(UV)
	scripts/check-install

demo: install
	$(BIN)/gpuledger demo --home "$(GPULEDGER_HOME)"

# The Dagster UI on the project (asset graph, partitions, checks, schedule, sensors) at http://127.0.0.1:3000,
# with the instance `gpuledger run` uses ($DAGSTER_HOME, else $(GPULEDGER_HOME)/dagster); run `make demo` first for a
# home with data. Ctrl-C (or SIGTERM to make's process group) stops it within seconds (pipelines/ui.py).
ui: install
	$(BIN)/python -m pipelines.ui --host 127.0.0.1 --port 3000

# ruff, then the layer order and stage independence (import-linter contracts in pyproject.toml).
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

# One pytest run on both cores (pytest-xdist): modules marked `serial` stay on one worker each, tests marked
# `both_warehouses` (crash safety, the analyst never blocked, reconciliation, publish, reports) run on the DuckDB file
# and on a DuckLake of their own in the same run, so the scheduler balances them (tests/conftest.py); the 30 slowest
# tests are printed. Three workers: tests wait on subprocesses, servers and sensors, and with two the cores were idle
# 9% of the run (docs/decisions/0023).
PYTEST_ON_BOTH_CORES := -n 3 --dist loadgroup
# What the suites need, installed side by side (make -j: each waits only on what it names; on a fresh machine the
# venvs, npm and apt-get mostly wait on the network); the apt-get ones one after the other, since dpkg takes one.
TEST_NEEDS := install install-validator install-prometheus install-azurite install-pdf install-duckdb-1.4 install-postgres
test-needs:
	@$(MAKE) --no-print-directory -j4 $(TEST_NEEDS)
install-postgres: install-pdf
install-prometheus: install-postgres
install-azurite: install-prometheus

test: test-needs
	@$(MAKE) --no-print-directory lint
	$(BIN)/pytest $(PYTEST_ON_BOTH_CORES) --durations=30

# The development loop, a few minutes: no test marked `slow`, the DuckDB file backend only.
test-fast: test-needs
	$(BIN)/pytest $(PYTEST_ON_BOTH_CORES) -m "not slow" --warehouse=file

# A DuckDB 1.4 client, pinned and hashed, for the test that analysts' 1.4 clients open the published file
# (docs/decisions/0018); its own venv, the project runs DuckDB 1.5.
DUCKDB_1_4_VENV := .venv-duckdb-1.4
install-duckdb-1.4: $(DUCKDB_1_4_VENV)/.installed

$(DUCKDB_1_4_VENV)/.installed: tools/requirements-duckdb-1.4.lock $(UV)
	$(PYTHON) -m venv --without-pip $(DUCKDB_1_4_VENV)
	$(UV) pip sync --quiet --compile-bytecode --python $(DUCKDB_1_4_VENV)/bin/python --require-hashes tools/requirements-duckdb-1.4.lock
	touch $@

# The chargeback PDF is rendered by WeasyPrint, which needs pango and a font (Debian packages; root to install).
install-pdf:
	@ldconfig -p | grep -q libpangoft2-1.0 && fc-list 2>/dev/null | grep -qi dejavu || { \
	  echo "Installing pango and a font for the PDF reports (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core fontconfig; }

# The DuckLake warehouse test runs a private Postgres catalog (Debian package; its binaries stay in
# /usr/lib/postgresql/<version>/bin, no cluster is started by the package's own service).
install-postgres:
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && command -v psql >/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    postgresql postgresql-client; }

# The Prometheus connector's tests run a real Prometheus (Debian package; needs root to install).
install-prometheus:
	@command -v promtool >/dev/null && command -v prometheus >/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus; }

# The Azure sync tests run a real Azurite blob server (npm package, pinned; installed under .azurite/).
AZURITE_VERSION := 3.37.0
install-azurite:
	@command -v npm >/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm; }
	@test -x .azurite/node_modules/.bin/azurite-blob \
	  && grep -q '"version": "$(AZURITE_VERSION)"' .azurite/node_modules/azurite/package.json \
	  || npm install --prefix .azurite --no-audit --no-fund azurite@$(AZURITE_VERSION)

# Re-resolve pinned versions after editing pyproject.toml (needs only PyPI). Versions already locked are kept while
# they satisfy pyproject.toml (uv prefers the output file's pins), so re-running it changes nothing.
LOCK_DIR ?= .
lock: $(UV)
	$(UV) pip compile --quiet pyproject.toml --extra dev --extra lake --python-version 3.11 \
	  --generate-hashes --no-header -o $(LOCK_DIR)/requirements.lock
	echo 'duckdb==1.4.5' | $(UV) pip compile --quiet - --python-version 3.11 --universal \
	  --generate-hashes --custom-compile-command 'make lock' -o $(LOCK_DIR)/tools/requirements-duckdb-1.4.lock
	echo 'setuptools==84.2.1' | $(UV) pip compile --quiet - --universal \
	  --generate-hashes --custom-compile-command 'make lock' -o $(LOCK_DIR)/tools/requirements-build.lock
	echo 'uv==0.13.9' | $(UV) pip compile --quiet - --universal \
	  --generate-hashes --custom-compile-command 'make lock' -o $(LOCK_DIR)/tools/requirements-uv.lock

# CPython 3.12 venv for focus-validator 2.2.1 (found on PATH/pyenv, or FOCUS_VALIDATOR_PYTHON=...).
install-validator: $(VALIDATOR_VENV)/.installed

$(VALIDATOR_VENV)/.installed: tools/requirements-validator.lock $(UV)
	scripts/validate-focus --install
	@touch $@

# make validate-focus FILE=focus.parquet [CRITERIA=ALL|NONE|LIST] [JUNIT=out.xml]
validate-focus: install-validator
	@test -n "$(FILE)" || { echo "usage: make validate-focus FILE=focus.parquet [CRITERIA=ALL|LIST] [JUNIT=out.xml]" >&2; exit 2; }
	scripts/validate-focus "$(FILE)" --criteria "$(or $(CRITERIA),ALL)" $(if $(JUNIT),--junit "$(JUNIT)")

# Re-resolve the validator's pinned, hashed requirements (needs only PyPI).
lock-validator: $(UV)
	printf 'focus-validator==2.2.1\npyarrow<26\nsetuptools\npoetry-core\n' \
	  | $(UV) pip compile --quiet - --python-version 3.12 --universal --generate-hashes \
	    --custom-compile-command 'make lock-validator' -o $(LOCK_DIR)/tools/requirements-validator.lock

clean:
	rm -rf $(VENV) $(VALIDATOR_VENV) $(DUCKDB_1_4_VENV) $(INSTALLER_VENV) .pytest_cache .ruff_cache
