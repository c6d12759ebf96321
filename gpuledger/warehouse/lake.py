"""The DuckLake warehouse (docs/decisions/0020): the same schemas and tables as the DuckDB file, kept as Parquet data
files (a folder or S3) under a catalog in Postgres (or a DuckDB file), written by many processes at once.

A connection is an in-memory DuckDB session with the lake attached as ``warehouse`` and made the default
catalog, so every query of the pipeline runs on it unchanged. The extensions it needs load from the pinned
``duckdb-extension-*`` packages (hashed in the lock, their signatures checked by DuckDB) and, where one is not
installed, from DuckDB's own extension repository.
"""

from __future__ import annotations

import importlib
import os
import uuid
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from gpuledger.warehouse.sqlfiles import quote_ident, quote_literal
from models.config import WarehouseConfig
from models.errors import GpuledgerError

LAKE_CATALOG = "warehouse"
"""The name the lake is attached under: the warehouse's catalog name, as ``current_database()`` returns it."""
_PACKAGE_NAMES = {"postgres_scanner": "duckdb_extension_postgres_scanner"}


def connect_lake(lake: WarehouseConfig, scratch: Path, config: dict[str, str], *, read_only: bool = False) -> (
    duckdb.DuckDBPyConnection
):  # fmt: skip
    """An in-memory session with the lake attached and in use, spilling to a folder of its own under ``scratch``:
    DuckDB names its spill files alike in every process, and workers of one home would remove each other's. DuckDB
    creates that folder and removes it when the session closes."""
    assert lake.catalog is not None and lake.data_path is not None  # a lake has both (models.config)
    scratch.mkdir(parents=True, exist_ok=True)
    _make_local_folders(lake)
    spill = scratch / f"lake-session-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    extensions = required_extensions(lake)
    checked = all(_checked_in_this_process(name) for name in extensions)
    session = {
        "temp_directory": str(spill),
        # nothing loads but what required_extensions names: no download, no file from DuckDB's extension folder
        "autoinstall_known_extensions": "false",
        "autoload_known_extensions": "false",
        "allow_unsigned_extensions": "true" if checked else "false",
    }
    con = duckdb.connect(config={**config, **session})
    for extension in extensions:
        load_extension(con, extension)
    if _on_s3(lake):
        _create_s3_secret(con, lake)
    options = [
        f"DATA_PATH {quote_literal(lake.data_path)}",
        # small inserts stay out of the catalog: deletes of inlined rows are where DuckLake has open defects
        "DATA_INLINING_ROW_LIMIT 0",
        # a folder moves with its home (the catalog stores the path it was made with); a bucket never does
        *(["OVERRIDE_DATA_PATH true"] if lake.data_folder else []),
        *(["READ_ONLY"] if read_only else []),
    ]
    # ATTACH takes no parameters: the catalog and path go through the quoting helper
    con.execute(f"ATTACH {quote_literal(lake.catalog)} AS {LAKE_CATALOG} ({', '.join(options)})")
    con.execute(f"USE {LAKE_CATALOG}")
    return con


def is_lake(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``con``'s default catalog is a DuckLake."""
    row = con.execute("SELECT type FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    return bool(row and row[0] == "ducklake")


def read_snapshot(con: duckdb.DuckDBPyConnection) -> int | None:
    """The lake snapshot ``con`` reads: inside a transaction, the one it began on, whatever commits meanwhile
    (None on a DuckDB file)."""
    if not is_lake(con):
        return None
    # table functions take constants: the catalog name is this module's
    row = con.execute(f"SELECT id FROM ducklake_current_snapshot({quote_literal(LAKE_CATALOG)})").fetchone()  # noqa: S608
    return int(row[0]) if row else None


def attach_statements(lake: WarehouseConfig, snapshot: int, alias: str = "gpuledger") -> list[str]:
    """The SQL an analyst runs (DuckDB 1.5, which loads the ducklake extension itself) to read the lake read-only
    as it was at ``snapshot``: the credentials of a bucket from the AWS chain, then the catalog (which carries no
    password, models.config, and knows its data path)."""
    assert lake.catalog is not None  # only a lake publishes snapshots
    secret = [f"CREATE SECRET gpuledger_lake ({', '.join(_s3_secret_options(lake))})"] if _on_s3(lake) else []
    attach = f"ATTACH {quote_literal(lake.catalog)} AS {quote_ident(alias)} (READ_ONLY, SNAPSHOT_VERSION {snapshot})"
    return [*secret, attach]


def _make_local_folders(lake: WarehouseConfig) -> None:
    """A DuckDB-file catalog's folder and a local data path exist before the first attach."""
    if lake.catalog_file:
        lake.catalog_file.parent.mkdir(parents=True, exist_ok=True)
    if lake.data_folder:
        lake.data_folder.mkdir(parents=True, exist_ok=True)


def required_extensions(lake: WarehouseConfig) -> list[str]:
    """The DuckDB extensions a lake's catalog and data path need, in load order."""
    needed = ["ducklake"]
    if (lake.catalog or "").startswith("ducklake:postgres:"):
        needed.append("postgres_scanner")
    if _on_s3(lake):
        needed += ["httpfs", "aws"]
    return needed


def load_extension(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Load ``name`` from its pinned package when installed, else from DuckDB's repository."""
    path = _packaged_extension(name)
    if path is None:
        con.execute(f"INSTALL {name}")  # names are this module's constants
        con.execute(f"LOAD {name}")
        return
    con.execute(f"LOAD {quote_literal(str(path))}")
    unsigned = con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone()
    if unsigned == (False,):  # DuckDB checked its signature: later sessions of this process need not
        _SIGNATURE_CHECKED[path] = _identity(path)


_SIGNATURE_CHECKED: dict[Path, tuple[int, ...]] = {}
"""Packaged extension files whose signature DuckDB checked in this process, with their identity then. DuckDB checks
a file at every load (0.13 s for ducklake's 36 MB, in each of the ~17 sessions of a run): a file checked here and
unchanged since (same device, inode, size and modification time) loads in a session that allows unsigned files, and
that session loads nothing else (docs/decisions/0020)."""


def _checked_in_this_process(name: str) -> bool:
    path = _packaged_extension(name)
    return path is not None and _SIGNATURE_CHECKED.get(path) == _identity(path)


def _identity(path: Path) -> tuple[int, ...]:
    stat = path.stat()
    return stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def _packaged_extension(name: str) -> Path | None:
    """The extension file of ``name``'s pinned package (hashed in the lock), None when the package is not installed."""
    package = _PACKAGE_NAMES.get(name, f"duckdb_extension_{name}")
    try:
        module = importlib.import_module(package)
    except ImportError:
        return None
    path = Path(module.__file__ or "").parent / "extensions" / f"v{duckdb.__version__}" / f"{name}.duckdb_extension"
    if not path.is_file():
        raise duckdb.IOException(f"{package} is not built for DuckDB {duckdb.__version__}: {path} is missing")
    return path


def _on_s3(lake: WarehouseConfig) -> bool:
    return (lake.data_path or "").startswith("s3://")


def _s3_secret_options(lake: WarehouseConfig) -> list[str]:
    """A DuckDB S3 secret for the data path from the AWS chain (environment, profile, instance role): none in files."""
    options = ["TYPE s3", "PROVIDER credential_chain", f"SCOPE {quote_literal(str(lake.data_path))}"]
    region = lake.s3_region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        options.append(f"REGION {quote_literal(region)}")
    if lake.s3_endpoint_url:
        endpoint = urlsplit(lake.s3_endpoint_url)
        options += [
            f"ENDPOINT {quote_literal(endpoint.netloc)}",
            "URL_STYLE 'path'",
            f"USE_SSL {str(endpoint.scheme == 'https').lower()}",
        ]
    return options


def _create_s3_secret(con: duckdb.DuckDBPyConnection, lake: WarehouseConfig) -> None:
    try:
        con.execute(f"CREATE OR REPLACE SECRET gpuledger_lake ({', '.join(_s3_secret_options(lake))})")
    except duckdb.Error as exc:
        raise GpuledgerError(
            f"no AWS credentials for the lake's data path {lake.data_path} (environment, profile or instance role):"
            f" {str(exc).splitlines()[0]}"
        ) from None
