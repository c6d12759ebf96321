# gpuledger: `make demo` runs the nightly pipeline on generated sample exports; `make test` runs the tests.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
# The home every target uses, as the CLI finds it when run here: ./.home (docs/decisions/0013-one-home.md).
GPULEDGER_HOME ?= $(CURDIR)/.home
export GPULEDGER_HOME

.PHONY: install demo ui test lint lock clean install-validator validate-focus lock-validator install-prometheus install-azurite install-pdf install-duckdb-1.4 install-postgres
VALIDATOR_VENV := .venv-validator

install: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	@echo "Installing gpuledger and its pinned dependencies into $(VENV)/ (the first time takes a few minutes)"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --disable-pip-version-check --progress-bar off --require-hashes -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

demo: install install-pdf
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

# Then the suites that must hold on both warehouse backends again, every test home on a DuckLake of its own
# (tests/conftest.py --warehouse=lake): crash safety, the analyst never blocked, reconciliation, publish, reports.
LAKE_SUITES := tests/end_to_end/test_crash_safety.py tests/end_to_end/test_demo.py tests/gpuledger/publish \
	tests/gpuledger/reports tests/gpuledger/chargeback tests/gpuledger/gates/test_load.py tests/gpuledger/gates/test_vacuum.py
test: install install-validator install-prometheus install-azurite install-pdf install-duckdb-1.4 install-postgres lint
	$(BIN)/pytest
	$(BIN)/pytest --warehouse=lake $(LAKE_SUITES)

# A DuckDB 1.4 client, pinned and hashed, for the test that analysts' 1.4 clients open the published file
# (docs/decisions/0018); its own venv, the project runs DuckDB 1.5.
DUCKDB_1_4_VENV := .venv-duckdb-1.4
install-duckdb-1.4: $(DUCKDB_1_4_VENV)/.installed

$(DUCKDB_1_4_VENV)/.installed: tools/requirements-duckdb-1.4.lock
	$(PYTHON) -m venv $(DUCKDB_1_4_VENV)
	$(DUCKDB_1_4_VENV)/bin/pip install --quiet --disable-pip-version-check --require-hashes -r tools/requirements-duckdb-1.4.lock
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

# Re-resolve pinned versions after editing pyproject.toml (needs only PyPI).
lock:
	$(PYTHON) -m venv /tmp/gpuledger-lock && /tmp/gpuledger-lock/bin/pip install --quiet uv==0.13.8
	/tmp/gpuledger-lock/bin/uv pip compile pyproject.toml --extra dev --extra lake --python-version 3.11 \
	  --generate-hashes --no-strip-extras --no-header -o requirements.lock
	echo 'duckdb==1.4.5' | /tmp/gpuledger-lock/bin/uv pip compile - --python-version 3.11 --universal \
	  --generate-hashes --custom-compile-command 'make lock' -o tools/requirements-duckdb-1.4.lock

# CPython 3.12 venv for focus-validator 2.2.1 (found on PATH/pyenv, or FOCUS_VALIDATOR_PYTHON=...).
install-validator: $(VALIDATOR_VENV)/.installed

$(VALIDATOR_VENV)/.installed: tools/requirements-validator.lock
	scripts/validate-focus --install
	@touch $@

# make validate-focus FILE=focus.parquet [CRITERIA=ALL|NONE|LIST] [JUNIT=out.xml]
validate-focus: install-validator
	@test -n "$(FILE)" || { echo "usage: make validate-focus FILE=focus.parquet [CRITERIA=ALL|LIST] [JUNIT=out.xml]" >&2; exit 2; }
	scripts/validate-focus "$(FILE)" --criteria "$(or $(CRITERIA),ALL)" $(if $(JUNIT),--junit "$(JUNIT)")

# Re-resolve the validator's pinned, hashed requirements (needs only PyPI).
lock-validator:
	$(PYTHON) -m venv /tmp/gpuledger-lock && /tmp/gpuledger-lock/bin/pip install --quiet uv==0.13.8
	printf 'focus-validator==2.2.1\npyarrow<26\nsetuptools\npoetry-core\n' \
	  | /tmp/gpuledger-lock/bin/uv pip compile - --python-version 3.12 --universal --generate-hashes \
	    --custom-compile-command 'make lock-validator' -o tools/requirements-validator.lock

clean:
	rm -rf $(VENV) $(VALIDATOR_VENV) .pytest_cache .ruff_cache
