"""Access to the project's .sql files (one file per model or check)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path

# Package data (the top-level `sql` package), found through the import system in a wheel and in a checkout alike.
SQL_DIR = Path(str(files("sql")))


@cache
def load_sql(relative_path: str) -> str:
    """Text of ``sql/<relative_path>``."""
    return (SQL_DIR / relative_path).read_text(encoding="utf-8")


def sql_files(folder: str) -> list[Path]:
    """The .sql files of ``sql/<folder>``, sorted by name."""
    return sorted((SQL_DIR / folder).glob("*.sql"))


def quote_ident(name: str) -> str:
    """Quote an identifier read from a file header (headers are data, never trusted as SQL)."""
    return '"' + name.replace('"', '""') + '"'


def quote_literal(value: str) -> str:
    """Quote a string literal for view bodies, which DuckDB cannot parameterize."""
    return "'" + value.replace("'", "''") + "'"
