"""Access to the project's .sql files (one file per model or check)."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from pathlib import Path

import duckdb

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


def create_temp_view(con: duckdb.DuckDBPyConnection, name: str, relation: duckdb.DuckDBPyRelation) -> None:
    """``relation`` as the temporary view ``name``. ``DuckDBPyRelation.create_view`` would store it in the warehouse
    (on a lake, a catalog change that loads staging at once conflict on)."""
    # the relation's own SQL, as DuckDB writes it: the files it reads are quoted by DuckDB, never by us
    con.execute(f"CREATE OR REPLACE TEMP VIEW {quote_ident(name)} AS {relation.sql_query()}")
