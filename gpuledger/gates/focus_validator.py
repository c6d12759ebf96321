"""Run the official FOCUS validator (PyPI ``focus-validator`` 2.2.1) on a FOCUS 1.2 Parquet file.

The validator lives in its own virtual environment, ``.venv-validator/`` at the repository root,
installed with ``--require-hashes`` from ``tools/requirements-validator.lock``. It needs CPython
3.12 exactly: 2.2.1 declares ``Requires-Python >=3.12`` (on 3.11 pip silently picks 1.0.0), its
code does not even import on 3.11 (PEP 701 f-strings in ``focus_to_duckdb_converter.py``), and its
``numpy<2`` pin has no wheels for 3.13+. The pipeline itself stays on 3.11; this module is
standard-library only and only shells out to the validator venv.

Each run uses the patched rule model vendored in ``tools/focus_validator_model`` (see its
README), ``--block-download``, ``--validate-version 1.2`` and JUnit output, from a temporary
directory holding ``focus_validator/rules/currency_codes.csv`` (the validator opens that path
relative to the working directory). The result is read from the JUnit XML, never from the exit
code (which is 0 even when rules fail):

* a failed or errored *leaf* rule is a failure;
* a failed composite rule (``Function: Composite`` in the model: the ``-000-`` parents and the
  other rules that only aggregate ``CheckModelRule`` children) is ignored when one of its
  descendants failed too, and counted otherwise, so that nothing fails silently.

``scripts/validate-focus`` is a thin wrapper around ``python -m gpuledger.gates.focus_validator``.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

FOCUS_VERSION = "1.2"
VALIDATOR_PACKAGE = "focus-validator==2.2.1"
REQUIRED_PYTHON = (3, 12)
MODEL_FILE_NAME = "model-1.2.0.1.json"
# The BillingCurrency check opens this path relative to the working directory.
CURRENCY_CODES_RELPATH = Path("focus_validator") / "rules" / "currency_codes.csv"
DEFAULT_TIMEOUT_S = 1800.0
MAX_MESSAGE = 240
CRITERIA_ALL = "ALL"
CRITERIA_NONE = "NONE"
PYTHON_ENV_VAR = "FOCUS_VALIDATOR_PYTHON"
# uv uses the interpreter it is given, never one it would download.
_UV_ENVIRONMENT = {"UV_PYTHON_DOWNLOADS": "never"}


def _repo_root() -> Path:
    """The checkout this module belongs to (editable install), else the working directory."""
    here = Path(__file__).resolve().parents[2]
    if (here / "tools" / "focus_validator_model").is_dir():
        return here
    return Path.cwd()


REPO_ROOT = _repo_root()
VENV_DIR = REPO_ROOT / ".venv-validator"
LOCK_FILE = REPO_ROOT / "tools" / "requirements-validator.lock"
MODEL_DIR = REPO_ROOT / "tools" / "focus_validator_model"
MODEL_FILE = MODEL_DIR / MODEL_FILE_NAME
STAMP_FILE = VENV_DIR / ".installed"
INSTALLER = REPO_ROOT / ".venv-uv" / "bin" / "uv"


class ValidatorError(RuntimeError):
    """The validator could not be installed or did not complete (crash, timeout, no report)."""


@dataclass(frozen=True)
class ValidatorResult:
    """Outcome of one validator run, gated on leaf rules."""

    total: int
    failed: dict[str, str]
    skipped: int
    passed: int = 0
    # Composite parents that failed only because a descendant failed (reported, not gated).
    failed_composites: tuple[str, ...] = ()
    criteria: str = CRITERIA_ALL
    seconds: float = 0.0
    junit_path: Path | None = field(default=None, compare=False)
    passed_rules: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary_line(self) -> str:
        return f"focus-validator: rules={self.total} failed={len(self.failed)} skipped={self.skipped}"

    def report(self) -> str:
        lines = [self.summary_line()]
        lines.extend(f"  FAILED {rule_id}: {message}" for rule_id, message in sorted(self.failed.items()))
        return "\n".join(lines)


# --------------------------------------------------------------------------- installation


def _python_version(executable: str | Path) -> tuple[int, int] | None:
    """(major, minor) of an interpreter, or None when it does not run (e.g. an inactive pyenv shim)."""
    try:
        proc = subprocess.run(
            [str(executable), "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    parts = proc.stdout.split()
    if proc.returncode != 0 or len(parts) != 2:
        return None
    return int(parts[0]), int(parts[1])


def _python_candidates() -> Iterator[Path]:
    name = "python{}.{}".format(*REQUIRED_PYTHON)
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry:
            yield Path(entry) / name
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    for version_dir in sorted((pyenv_root / "versions").glob("{}.{}.*".format(*REQUIRED_PYTHON)), reverse=True):
        yield version_dir / "bin" / name
    for prefix in ("/usr/local/bin", "/usr/bin", "/opt/homebrew/bin"):
        yield Path(prefix) / name


def find_validator_python() -> Path:
    """Locate a CPython 3.12 for the validator venv, or raise ValidatorError saying how to get one."""
    wanted = "{}.{}".format(*REQUIRED_PYTHON)
    explicit = os.environ.get(PYTHON_ENV_VAR)
    if explicit:
        if _python_version(explicit) == REQUIRED_PYTHON:
            return Path(explicit)
        raise ValidatorError(f"{PYTHON_ENV_VAR}={explicit} is not a working Python {wanted} interpreter")
    seen: set[Path] = set()
    for candidate in _python_candidates():
        if candidate in seen or not candidate.is_file() or not os.access(candidate, os.X_OK):
            continue
        seen.add(candidate)
        if _python_version(candidate) == REQUIRED_PYTHON:
            return candidate
    raise ValidatorError(
        f"{VALIDATOR_PACKAGE} needs CPython {wanted} and none was found "
        f"(looked at ${PYTHON_ENV_VAR}, python{wanted} on PATH, pyenv versions {wanted}.*, /usr/bin, "
        "/usr/local/bin). It cannot use the pipeline's Python 3.11: 2.x requires Python >=3.12 "
        "(pip on 3.11 silently installs 1.0.0, which has no FOCUS 1.2 rules) and its code fails to "
        "import on 3.11 (SyntaxError, PEP 701 f-strings); 3.13+ has no wheels for its numpy<2 pin. "
        f"Install Python {wanted} (e.g. `pyenv install {wanted}`, or the distribution's python{wanted} "
        f"package) or set {PYTHON_ENV_VAR}=/path/to/python{wanted}."
    )


def _lock_sha256() -> str:
    return hashlib.sha256(LOCK_FILE.read_bytes()).hexdigest()


def _venv_python() -> Path:
    return VENV_DIR / "bin" / "python"


def _expected_stamp() -> str:
    return f"lock-sha256={_lock_sha256()}\n"


def validator_venv_is_current() -> bool:
    """True when .venv-validator was installed from the current lock file and still runs."""
    try:
        stamp = STAMP_FILE.read_text()
    except OSError:
        return False
    return stamp.startswith(_expected_stamp()) and _venv_python().exists()


def _uv(*args: str) -> None:
    """Run the hash-pinned installer (`make` bootstraps it into .venv-uv from tools/requirements-uv.lock)."""
    if not INSTALLER.exists():
        raise ValidatorError(f"the installer {INSTALLER} is missing: run `make install-validator`")
    cmd = [str(INSTALLER), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env={**os.environ, **_UV_ENVIRONMENT})
    if proc.returncode != 0:
        raise ValidatorError(f"`{' '.join(cmd)}` failed:\n{proc.stdout}{proc.stderr}")


@contextlib.contextmanager
def _install_lock() -> Iterator[None]:
    """Serialize concurrent installers (parallel test workers, make -j) on the lock file itself."""
    with LOCK_FILE.open("rb") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def ensure_validator_venv(*, force: bool = False, log: bool = True) -> Path:
    """Create or refresh .venv-validator from the hashed lock; return its python.

    The stamp file records the lock's sha256, so an edited lock triggers a clean reinstall.
    focus-validator (poetry-core) and pandasql (setuptools) are sdist-only on PyPI: the lock is also
    their build constraints, so the build backends uv fetches are pinned and hash-checked too.
    """
    with _install_lock():
        if not force and validator_venv_is_current():
            return _venv_python()
        python = find_validator_python()
        if log:
            print(f"validate-focus: installing {VALIDATOR_PACKAGE} into {VENV_DIR} ({python})", file=sys.stderr)
        if VENV_DIR.exists():
            shutil.rmtree(VENV_DIR)
        venv = subprocess.run(
            [str(python), "-m", "venv", "--without-pip", str(VENV_DIR)], capture_output=True, text=True, check=False
        )
        if venv.returncode != 0:
            raise ValidatorError(f"`{python} -m venv {VENV_DIR}` failed:\n{venv.stdout}{venv.stderr}")
        lock = str(LOCK_FILE)
        _uv(
            "pip",
            "sync",
            "--quiet",
            "--compile-bytecode",
            "--python",
            str(_venv_python()),
            "--require-hashes",
            "--build-constraints",
            lock,
            lock,
        )
        version = ".".join(map(str, _python_version(_venv_python()) or ("?",)))
        STAMP_FILE.write_text(f"{_expected_stamp()}python={version}\npackage={VALIDATOR_PACKAGE}\n")
        return _venv_python()


# --------------------------------------------------------------------------- model and report


@dataclass(frozen=True)
class _ModelRule:
    function: str
    must_satisfy: str
    children: tuple[str, ...]
    keyword: str = "MUST"
    """MUST, MUST NOT, SHOULD, SHOULD NOT, RECOMMENDED or MAY, as the spec sentence says."""
    static: bool = True
    """False for the model's Dynamic rules, which the engine never executes."""


def _model_rule_refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if node.get("CheckFunction") == "CheckModelRule" and "ModelRuleId" in node:
            yield str(node["ModelRuleId"])
        for value in node.values():
            yield from _model_rule_refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _model_rule_refs(value)


@cache
def _load_model(path: Path = MODEL_FILE) -> tuple[dict[str, _ModelRule], frozenset[str]]:
    """Rules (function, spec sentence, child and dependency rules) and the applicability criteria."""
    model = json.loads(path.read_text())
    rules: dict[str, _ModelRule] = {}
    for rule_id, rule in model["ModelRules"].items():
        criteria = rule.get("ValidationCriteria") or {}
        rules[rule_id] = _ModelRule(
            function=str(rule.get("Function", "")),
            must_satisfy=str(criteria.get("MustSatisfy", "")),
            # Rules a composite aggregates (Items) or is forced to fail with (Dependencies).
            children=tuple(
                dict.fromkeys([*_model_rule_refs(criteria.get("Requirement") or {}), *criteria.get("Dependencies", [])])
            ),
            keyword=str(criteria.get("Keyword", "MUST")),
            static=rule.get("Type") != "Dynamic",
        )
    return rules, frozenset(model.get("ApplicabilityCriteria", {}))


def should_rules() -> frozenset[str]:
    """The model's rules the engine executes whose sentence says SHOULD, SHOULD NOT or RECOMMENDED (a composite of
    Dynamic rules only is skipped with them)."""
    rules, _ = _load_model()
    return frozenset(
        rule_id
        for rule_id, rule in rules.items()
        if rule.static
        and rule.keyword in ("SHOULD", "SHOULD NOT", "RECOMMENDED")
        and (rule.function != "Composite" or any(rules[c].static for c in rule.children if c in rules))
    )


def _descendants(rule_id: str, rules: dict[str, _ModelRule]) -> set[str]:
    found: set[str] = set()
    stack = list(rules[rule_id].children) if rule_id in rules else []
    while stack:
        child = stack.pop()
        if child not in found:
            found.add(child)
            stack.extend(rules[child].children if child in rules else ())
    return found


def parse_junit(xml_path: Path, *, criteria: str = CRITERIA_ALL, seconds: float = 0.0) -> ValidatorResult:
    """Gate a focus-validator JUnit report on its leaf rules."""
    try:
        root = ET.parse(xml_path).getroot()  # noqa: S314 - the validator's own report, not untrusted input
    except (OSError, ET.ParseError) as exc:
        raise ValidatorError(f"unreadable JUnit report {xml_path}: {exc}") from exc
    rules, _ = _load_model()
    status: dict[str, str] = {}
    detail: dict[str, str] = {}
    for case in root.iter("testcase"):
        rule_id = case.get("name", "").split(" :: ")[0].strip()
        if not rule_id:
            continue
        if (node := case.find("failure")) is not None:
            status[rule_id] = "failed"
        elif (node := case.find("error")) is not None:
            status[rule_id] = "errored"
        elif (node := case.find("skipped")) is not None:
            status[rule_id] = "skipped"
        else:
            status[rule_id] = "passed"
        detail[rule_id] = (node.get("message") or "") if node is not None else ""
    if not status:
        raise ValidatorError(f"JUnit report {xml_path} lists no rules")

    bad = {rule_id for rule_id, state in status.items() if state in ("failed", "errored")}
    failed: dict[str, str] = {}
    composites: list[str] = []
    for rule_id in sorted(bad):
        rule = rules.get(rule_id)
        if rule is not None and rule.function == "Composite" and _descendants(rule_id, rules) & bad:
            composites.append(rule_id)
            continue
        sentence = rule.must_satisfy if rule is not None else ""
        if status[rule_id] == "errored":
            error = detail[rule_id] or "validator reported an error"
            error = error if len(error) <= MAX_MESSAGE else error[: MAX_MESSAGE - 3] + "..."
            failed[rule_id] = f"error: {error}" + (f" ({sentence})" if sentence else "")
        elif rule is not None and rule.function == "Composite":
            failed[rule_id] = f"composite failed with no failing child rule: {sentence}"
        else:
            failed[rule_id] = sentence or detail[rule_id]
    values = list(status.values())
    return ValidatorResult(
        total=len(status),
        failed=failed,
        skipped=values.count("skipped"),
        passed=values.count("passed"),
        passed_rules=frozenset(rule_id for rule_id, state in status.items() if state == "passed"),
        failed_composites=tuple(composites),
        criteria=criteria,
        seconds=seconds,
        junit_path=xml_path,
    )


# --------------------------------------------------------------------------- running


def normalize_criteria(criteria: str) -> str:
    """Validate ``ALL``, ``NONE`` or a comma-separated list against the model's criteria."""
    value = criteria.strip()
    if value.upper() in (CRITERIA_ALL, CRITERIA_NONE):
        return value.upper()
    _, known = _load_model()
    items = [item.strip() for item in value.split(",") if item.strip()]
    unknown = sorted(set(items) - known)
    if not items or unknown:
        raise ValueError(
            f"unknown applicability criteria {unknown or [value]}; use ALL, NONE or a comma-separated "
            f"list of: {', '.join(sorted(known))}"
        )
    return ",".join(items)


_QUIET_LOGGING = """\
version: 1
disable_existing_loggers: false
handlers:
  stderr: {class: logging.StreamHandler, stream: ext://sys.stderr, level: WARNING}
root: {level: WARNING, handlers: [stderr]}
"""


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def run_focus_validator(
    parquet_path: Path,
    criteria: str = CRITERIA_ALL,
    *,
    junit_path: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT_S,
    install: bool = True,
) -> ValidatorResult:
    """Validate one FOCUS 1.2 Parquet file against the patched 1.2 model and gate on leaf rules.

    Raises ValidatorError when the validator cannot be installed or does not complete; a
    completed run with failing rules returns a result whose ``failed`` is non-empty.
    """
    criteria = normalize_criteria(criteria)
    data = Path(parquet_path).resolve()
    if not data.is_file():
        raise ValidatorError(f"no such file: {data}")
    if data.suffix.lower() != ".parquet":
        # CSV input is type-inferred by the validator (false type failures); only Parquet is gated.
        raise ValidatorError(f"expected a .parquet file, got {data.name}")
    if install:
        ensure_validator_venv()
    elif not validator_venv_is_current():
        raise ValidatorError(f"{VENV_DIR} is missing or stale; run `make install-validator`")
    executable = VENV_DIR / "bin" / "focus-validator"
    site_packages = sorted(VENV_DIR.glob(f"lib/python*/site-packages/{CURRENCY_CODES_RELPATH}"))
    if not site_packages:
        raise ValidatorError(f"{CURRENCY_CODES_RELPATH} not found in {VENV_DIR}")

    with tempfile.TemporaryDirectory(prefix="focus-validator-") as tmp:
        workdir = Path(tmp)
        (workdir / CURRENCY_CODES_RELPATH).parent.mkdir(parents=True)
        shutil.copyfile(site_packages[0], workdir / CURRENCY_CODES_RELPATH)
        (workdir / "logging.yaml").write_text(_QUIET_LOGGING)
        report = workdir / "focus-validator.xml"
        cmd = [
            str(executable),
            "--data-file",
            str(data),
            "--validate-version",
            FOCUS_VERSION,
            "--block-download",
            "--rule-set-path",
            str(MODEL_DIR),
            "--output-type",
            "unittest",
            "--output-destination",
            str(report),
        ]
        if criteria != CRITERIA_NONE:
            cmd += ["--applicability-criteria", criteria]
        env = {**os.environ, "LOGGING_CONFIG": str(workdir / "logging.yaml")}
        env.pop("PYTHONPATH", None)  # keep the pipeline's packages out of the validator's interpreter
        started = time.monotonic()
        try:
            proc = subprocess.run(
                cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout, check=False
            )
        except subprocess.TimeoutExpired as exc:
            raise ValidatorError(f"focus-validator timed out after {timeout:.0f}s on {data}") from exc
        seconds = time.monotonic() - started
        output = _tail(proc.stderr + proc.stdout)
        if proc.returncode != 0:
            raise ValidatorError(f"focus-validator crashed (exit {proc.returncode}) on {data}:\n{output}")
        if not report.is_file():
            raise ValidatorError(f"focus-validator wrote no report for {data}:\n{output}")
        if junit_path is not None:
            junit_path = Path(junit_path).resolve()
            junit_path.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(report, junit_path)
        result = parse_junit(junit_path or report, criteria=criteria, seconds=seconds)
        # Without --junit the report lives in the temporary directory removed on return.
        return result if junit_path is not None else replace(result, junit_path=None)


# --------------------------------------------------------------------------- command line


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="validate-focus",
        description=f"Run {VALIDATOR_PACKAGE} (patched FOCUS {FOCUS_VERSION} model) on a Parquet "
        "file and fail on any failed leaf rule.",
    )
    parser.add_argument("file", nargs="?", type=Path, help="FOCUS 1.2 Parquet file")
    parser.add_argument(
        "--criteria",
        default=CRITERIA_ALL,
        help="applicability criteria: ALL (default), NONE, or a comma-separated list",
    )
    parser.add_argument("--junit", type=Path, help="also write the validator's JUnit XML here")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT_S, help="seconds (default %(default)s)")
    parser.add_argument(
        "--install",
        action="store_true",
        help="only create or refresh .venv-validator from the lock (no FILE needed)",
    )
    args = parser.parse_args(argv)
    if args.install:
        try:
            python = ensure_validator_venv()
        except ValidatorError as exc:
            print(f"validate-focus: {exc}", file=sys.stderr)
            return 1
        print(f"validate-focus: {VENV_DIR} is ready ({python})")
        if args.file is None:
            return 0
    if args.file is None:
        parser.error("FILE is required unless --install is given")
    try:
        result = run_focus_validator(args.file, args.criteria, junit_path=args.junit, timeout=args.timeout)
    except ValueError as exc:
        parser.error(str(exc))
    except ValidatorError as exc:
        # Not installable, crashed, timed out or wrote no report: never a pass.
        print(f"validate-focus: {exc}", file=sys.stderr)
        print("focus-validator: did not complete", file=sys.stderr)
        return 1
    print(result.report())
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
