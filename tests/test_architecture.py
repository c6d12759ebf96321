"""The layer order `make lint` enforces (docs/decisions/0012), shown failing on a deliberate upward import, and
the rule import-linter cannot state: no module imports another module's private name."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.fixtures.paths import REPO

PACKAGES = ("models", "connectors", "gpuledger", "gpuledger_demo", "pipelines")
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run(
        [LINT_IMPORTS, "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )


def test_the_layers_hold_on_the_tree() -> None:
    result = _lint_imports(REPO)
    assert result.returncode == 0, result.stdout


def test_an_upward_import_breaks_the_lint(tmp_path: Path) -> None:
    for package in PACKAGES:
        shutil.copytree(REPO / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__", "*.sql"))
    shutil.copy(REPO / "pyproject.toml", tmp_path)
    contract = tmp_path / "models" / "focus.py"
    contract.write_text(contract.read_text() + "\nfrom pipelines import runner  # noqa: E402, F401\n")
    stage = tmp_path / "gpuledger" / "normalize" / "files.py"
    stage.write_text(stage.read_text() + "\nfrom gpuledger.publish import snapshot  # noqa: E402, F401\n")
    result = _lint_imports(tmp_path)
    assert result.returncode == 1
    assert "models is not allowed to import pipelines" in result.stdout
    assert "gpuledger.normalize is not allowed to import gpuledger.publish" in result.stdout


def test_no_module_imports_a_private_name_of_another() -> None:
    found = []
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    found += [
                        f"{path.relative_to(REPO)}: {node.module}.{a.name}" for a in node.names if a.name[0] == "_"
                    ]
    assert found == []
