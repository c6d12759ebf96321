"""Cheap fingerprints of what a step reads: file sizes and modification times, the product's code, hashed. Paths
are taken relative to a root, so a home moved, copied or restored elsewhere keeps its fingerprints."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Iterable
from functools import cache
from pathlib import Path

import duckdb

# The packages whose code decides what a run writes.
_CODE_PACKAGES = ("connectors", "gpuledger", "models", "pipelines", "sql")


@cache
def code_version() -> str:
    """The text of every module and SQL file of the product and the DuckDB release running them, hashed: new code or
    a new engine makes every fingerprint new."""
    digest = hashlib.sha256(duckdb.__version__.encode())
    for package in _CODE_PACKAGES:
        spec = importlib.util.find_spec(package)  # located, not imported: this layer imports no layer above it
        folder = Path(spec.origin if spec and spec.origin else "").parent
        for path in sorted(p for p in folder.rglob("*") if p.suffix in (".py", ".sql")):
            digest.update(str(path.relative_to(folder)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def files_under(path: Path) -> list[Path]:
    """A file, or every file below a folder, sorted; nothing for a missing path."""
    if path.is_file():
        return [path]
    return sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []


def file_stats(root: Path, files: Iterable[Path]) -> list[tuple[str, int, int]]:
    """Path (:func:`relative_path` to ``root``), size and modification time of each file, in the order given: what
    changes when a file is rewritten."""
    return [(relative_path(root, path), (stat := path.stat()).st_size, stat.st_mtime_ns) for path in files]


def relative_path(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` when it lies below it, else absolute: a home (or source folder) moved, copied or
    restored elsewhere keeps its fingerprints, while a folder outside it (an absolute path in the configuration) did
    not move."""
    full, below = os.path.abspath(path), os.path.join(os.path.abspath(root), "")
    return full.removeprefix(below) if full.startswith(below) else full


def fingerprint(*parts: object) -> str:
    """``parts`` (their ``repr``), hashed."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()
