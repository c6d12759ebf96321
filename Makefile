# gpuledger: `make demo` runs the nightly pipeline on generated sample exports; `make test` runs the tests.
PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
GPULEDGER_HOME ?= $(CURDIR)/.home
export GPULEDGER_HOME

.PHONY: install demo test lint lock clean

install: $(VENV)/.installed

$(VENV)/.installed: requirements.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

demo: install
	$(BIN)/gpuledger demo --home "$(GPULEDGER_HOME)"

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

test: install lint
	$(BIN)/pytest

# Re-resolve pinned versions after editing pyproject.toml (needs only PyPI).
lock:
	$(PYTHON) -m venv /tmp/gpuledger-lock && /tmp/gpuledger-lock/bin/pip install --quiet uv==0.13.8
	/tmp/gpuledger-lock/bin/uv pip compile pyproject.toml --extra dev --python-version 3.11 \
	  --generate-hashes --no-header -o requirements.lock

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
