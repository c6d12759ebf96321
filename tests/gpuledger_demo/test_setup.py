"""The two-provider home (the DuckLake end-to-end test's): what it configures, and the AWS restatement it makes."""

from __future__ import annotations

import csv
import gzip
import json
import tomllib
from pathlib import Path

import pytest

from gpuledger_demo.setup import EXPORTS_FOLDER, restate_last_aws_month, write_two_provider_home
from models.config import CONFIG_FILE

pytestmark = pytest.mark.serial

MONTHS = ("2026-08", "2026-09", "2026-10")
RANGES = ("20260801-20260901", "20260901-20261001", "20261001-20261101")
CUR1 = f"{EXPORTS_FOLDER}/helios-legacy-billing/cur1/helios-legacy-cur"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("two-providers")
    write_two_provider_home(home, MONTHS)
    return home


def _manifest(home: Path, month_range: str) -> dict[str, object]:
    return json.loads((home / CUR1 / month_range / "helios-legacy-cur-Manifest.json").read_text(encoding="utf-8"))


def _rows(home: Path, manifest: dict[str, object]) -> list[dict[str, str]]:
    """Every row of the files an assembly's manifest names."""
    rows: list[dict[str, str]] = []
    for key in manifest["reportKeys"]:  # type: ignore[attr-defined]
        with gzip.open(home / EXPORTS_FOLDER / "helios-legacy-billing" / key, "rt", encoding="utf-8") as handle:
            rows += csv.DictReader(handle)
    return rows


def _usage_starts(home: Path, manifest: dict[str, object]) -> set[str]:
    """The distinct usage start dates of an assembly's files."""
    return {row["lineItem/UsageStartDate"][:10] for row in _rows(home, manifest)}


def test_two_sources_over_the_months_each(home: Path) -> None:
    config = tomllib.loads((home / CONFIG_FILE).read_text(encoding="utf-8"))
    assert [(s["name"], s["format"]) for s in config["sources"]] == [
        ("helios-legacy-cur", "aws-cur1"),
        ("helios-coreweave-focus", "focus"),
    ]
    assert sorted(p.name for p in (home / EXPORTS_FOLDER / "coreweave").iterdir()) == list(MONTHS)
    for month_range in RANGES:
        manifest = _manifest(home, month_range)
        assert len(manifest["reportKeys"]) == 2  # type: ignore[arg-type]


def test_the_reservation_is_bought_in_the_first_month(home: Path) -> None:
    fees = {
        month_range: {
            (row["reservation/StartTime"], row["reservation/EndTime"])
            for row in _rows(home, _manifest(home, month_range))
            if row["lineItem/LineItemType"] == "Fee" and row["reservation/ReservationARN"]
        }
        for month_range in RANGES
    }
    term = ("2026-08-01T00:00:00.000Z", "2027-08-01T00:00:00.000Z")  # one year from the first month
    assert fees == {RANGES[0]: {term}, RANGES[1]: set(), RANGES[2]: set()}  # the upfront fee, once


def test_the_last_aws_month_is_a_first_version_until_restated(home: Path) -> None:
    first = _manifest(home, RANGES[-1])
    closed = _manifest(home, RANGES[0])
    assert max(_usage_starts(home, first)) == "2026-10-28" and max(_usage_starts(home, closed)) == "2026-08-31"
    restate_last_aws_month(home, MONTHS)
    final = _manifest(home, RANGES[-1])
    assert final["assemblyId"] != first["assemblyId"] and max(_usage_starts(home, final)) == "2026-10-31"
    assert _manifest(home, RANGES[0]) == closed  # the other months are untouched
