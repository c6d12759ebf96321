"""gpuledger.toml: remote sources ([sources.s3], [sources.azure_blob]) land in <home>/landing/<name>/."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from models.config import (
    BigQueryRemote,
    S3Remote,
    SourceConfig,
    WarehouseConfig,
    load_config,
    load_warehouse_config,
)
from models.errors import InputError
from pipelines.deliveries import discover


def _config(home: Path, text: str) -> tuple[SourceConfig, ...]:
    (home / "gpuledger.toml").write_text(text, encoding="utf-8")
    return load_config(home).sources


def test_an_s3_source_lands_in_its_mirror_and_names_its_export_folder(home):
    (source,) = _config(
        home, '[[sources]]\nname = "cur2"\nformat = "aws-cur2"\n[sources.s3]\nbucket = "b"\nprefix = "billing/cur"\n'
    )
    landing = home / "landing" / "cur2"
    remote = S3Remote(landing=landing, bucket="b", prefix="billing/cur", export="cur2")  # export: the source's name
    assert source == SourceConfig("cur2", "aws-cur2", landing / "billing/cur/cur2", remote)
    assert discover(source) == []  # nothing synced yet: no delivery, no error


def test_an_azure_pair_lands_both_exports_in_one_directory(home):
    (source,) = _config(
        home,
        '[[sources]]\nname = "mca"\nformat = "azure-cost-details"\n[sources.azure_blob]\ncontainer = "exports"\n'
        'directory = "helios"\nexports = ["actual", "amortized"]\nconnection_string_env = "AZ_CONN"\nmax_files = 9\n',
    )
    assert source.path == home / "landing" / "mca" / "exports" / "helios"
    assert source.remote is not None and source.remote.exports == ("actual", "amortized")
    assert source.remote.max_files == 9


@pytest.mark.parametrize(
    ("table", "column"),
    [
        ('format = "aws-cur2"\npath = "x"\n[sources.s3]\nbucket = "b"\n', "s3"),  # a path beside a remote
        ('format = "azure-actual"\n[sources.s3]\nbucket = "b"\n', "format"),  # S3 delivers AWS formats only
        ('format = "aws-cur2"\n[sources.s3]\nprefix = "p"\n', "s3.bucket"),
        ('format = "aws-cur2"\n[sources.s3]\nbucket = "b"\nsecret_access_key = "k"\n', "s3.secret_access_key"),
        ('format = "aws-cur2"\n[sources.s3]\nbucket = "b"\nmax_files = 0\n', "s3.max_files"),
        (
            'format = "azure-cost-details"\n[sources.azure_blob]\ncontainer = "c"\ndirectory = "d"\nexport = "e"\n'
            'account_url = "https://a.blob.core.windows.net"\n',
            "azure_blob.exports",
        ),
        (
            'format = "azure-actual"\n[sources.azure_blob]\ncontainer = "c"\ndirectory = "d"\nexport = "e"\n',
            "azure_blob.account_url",
        ),
    ],
)
def test_remote_mistakes_name_the_key(home, table, column):
    with pytest.raises(InputError) as error:
        _config(home, f'[[sources]]\nname = "s"\n{table}')
    assert error.value.column == column


def test_an_azure_account_url_carrying_a_sas_token_is_refused_without_echoing_it(home):
    secret = "sv=2022-11-02&ss=b&srt=co&sp=rl&se=2027-01-01T00:00:00Z&sig=c2VjcmV0LXNpZ25hdHVyZQ%3D"
    with pytest.raises(InputError) as error:
        _config(
            home,
            '[[sources]]\nname = "mca"\nformat = "azure-actual"\n[sources.azure_blob]\ncontainer = "c"\n'
            f'directory = "d"\nexport = "e"\naccount_url = "https://a.blob.core.windows.net/?{secret}"\n',
        )
    assert error.value.column == "azure_blob.account_url"
    assert "SAS token" in str(error.value) and "\n" not in str(error.value)
    assert "sig=" not in str(error.value) and "c2VjcmV0" not in str(error.value)


def test_a_bigquery_source_lands_its_dataset_and_takes_integer_options(home):
    (source,) = _config(
        home,
        '[[sources]]\nname = "gcp"\nformat = "gcp-bq"\n[sources.bigquery]\nproject = "p"\ndataset = "billing"\n'
        "months_back = 2\n",
    )
    assert source.path == home / "landing" / "gcp" / "billing"
    assert source.remote == BigQueryRemote(
        landing=home / "landing" / "gcp", project="p", dataset="billing", months_back=2
    )
    with pytest.raises(InputError) as error:  # a limit of another kind is no option here
        _config(
            home,
            '[[sources]]\nname = "g"\nformat = "gcp-bq"\n[sources.bigquery]\nproject = "p"\ndataset = "d"\n'
            "max_files = 3\n",
        )
    assert error.value.column == "bigquery.max_files"


def test_the_warehouse_is_the_file_unless_a_lake_catalog_is_configured(home):
    assert load_warehouse_config(home) == WarehouseConfig()  # no gpuledger.toml at all
    (home / "gpuledger.toml").write_text(
        '[warehouse]\ncatalog = "ducklake:postgres:dbname=lake host=pg"\ndata_path = "s3://b/lake/"\nworkers = 3\n'
        's3_endpoint_url = "http://127.0.0.1:9000"\npart_size_mb = 256\n',
        encoding="utf-8",
    )
    lake = load_warehouse_config(home)
    assert lake == load_config(home).warehouse
    assert lake == WarehouseConfig(
        catalog="ducklake:postgres:dbname=lake host=pg", data_path="s3://b/lake/",
        s3_endpoint_url="http://127.0.0.1:9000", workers=3, part_size_mb=256,
    )  # fmt: skip
    assert lake.is_lake and not WarehouseConfig().is_lake


def test_the_file_warehouse_takes_a_part_size_too(home):
    (home / "gpuledger.toml").write_text("[warehouse]\npart_size_mb = 0\n", encoding="utf-8")
    assert load_warehouse_config(home) == WarehouseConfig(part_size_mb=0)  # a part per file, one writer


def test_a_file_catalog_and_a_local_data_path_are_relative_to_the_home(home):
    (home / "gpuledger.toml").write_text(
        '[warehouse]\ncatalog = "ducklake:lake/catalog.ducklake"\ndata_path = "lake/files"\n', encoding="utf-8"
    )
    lake = load_warehouse_config(home)
    assert (lake.catalog, lake.data_path) == (f"ducklake:{home}/lake/catalog.ducklake", f"{home}/lake/files")


@pytest.mark.parametrize(
    ("table", "column"),
    [
        ('catalog = "postgres:dbname=x"\ndata_path = "s3://b/"\n', "warehouse.catalog"),  # not a DuckLake
        ('catalog = "ducklake:x.ducklake"\n', "warehouse.data_path"),
        ('catalog = "ducklake:x"\ndata_path = "d"\npassword = "p"\n', "warehouse.password"),  # never in the file
        ('catalog = "ducklake:x"\ndata_path = "d"\nworkers = 0\n', "warehouse.workers"),
        ('catalog = "ducklake:x"\ndata_path = "d"\ns3_endpoint_url = "127.0.0.1:9000"\n', "warehouse.s3_endpoint_url"),
        ("workers = 2\n", "warehouse.workers"),  # one DuckDB file takes one writing process
        ("part_size_mb = -1\n", "warehouse.part_size_mb"),
        ('part_size_mb = "1GB"\n', "warehouse.part_size_mb"),
    ],
)
def test_warehouse_mistakes_name_the_key(home, table, column):
    (home / "gpuledger.toml").write_text(f"[warehouse]\n{table}", encoding="utf-8")
    with pytest.raises(InputError) as error:
        load_warehouse_config(home)
    assert error.value.column == column


def test_several_workers_on_a_duckdb_file_catalog_are_refused_in_one_line(home):
    # a DuckDB-file catalog takes one writing process: parallel loads would fail on its lock at the first run
    (home / "gpuledger.toml").write_text(
        '[warehouse]\ncatalog = "ducklake:lake/catalog.ducklake"\ndata_path = "lake/data"\nworkers = 2\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as error:
        load_warehouse_config(home)
    assert error.value.column == "warehouse.workers"
    assert "set workers = 1 or use a Postgres catalog" in str(error.value) and "\n" not in str(error.value)
    (home / "gpuledger.toml").write_text(
        '[warehouse]\ncatalog = "ducklake:lake/catalog.ducklake"\ndata_path = "lake/data"\nworkers = 1\n',
        encoding="utf-8",
    )
    assert load_warehouse_config(home).workers == 1


def test_the_environment_names_the_lake_where_the_file_does_not(home, monkeypatch):
    monkeypatch.setenv("GPULEDGER_WAREHOUSE_CATALOG", "ducklake:lake/catalog.ducklake")
    monkeypatch.setenv("GPULEDGER_WAREHOUSE_DATA_PATH", "s3://env-bucket/lake/")
    assert load_warehouse_config(home) == WarehouseConfig(
        catalog=f"ducklake:{home}/lake/catalog.ducklake", data_path="s3://env-bucket/lake/"
    )
    (home / "gpuledger.toml").write_text('[warehouse]\ndata_path = "files"\n', encoding="utf-8")  # the file wins
    assert load_warehouse_config(home).data_path == f"{home}/files"


@pytest.mark.parametrize(
    ("table", "column"),
    [
        ("hold_open_month_change = 1\n", "ingest.hold_open_month_change"),  # its complement divides
        ("hold_open_month_change = -0.1\n", "ingest.hold_open_month_change"),
        ('hold_closed_month_change = "5%"\n', "ingest.hold_closed_month_change"),
        ("hold_open_month = 0.5\n", "ingest.hold_open_month"),
    ],
)
def test_ingest_mistakes_name_the_key(home, table, column):
    (home / "gpuledger.toml").write_text(f"[ingest]\n{table}", encoding="utf-8")
    with pytest.raises(InputError) as error:
        load_config(home)
    assert error.value.column == column


def test_ingest_shares_read_as_decimals(home):
    (home / "gpuledger.toml").write_text("[ingest]\nhold_open_month_change = 0.25\n", encoding="utf-8")
    rules = load_config(home).ingest
    assert (rules.hold_open_month_change, rules.hold_closed_month_change) == (Decimal("0.25"), Decimal("0.05"))
