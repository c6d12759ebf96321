"""Provider units -> FOCUS UnitFormat: one reviewed table for every source (docs/decisions/0011).

Every provider spells units its own way (AWS ``Hrs``, Azure ``10K`` blocks, GCP ``gibibyte hour``, Oracle
``GB Hours``). :data:`UNIT_MAPPINGS` gives each spelling its FOCUS UnitFormat name and, for Azure, the pricing
block size; a row keeps the source's own spelling in ``x_PricingUnitDescription``. A unit the table lacks and
that does not follow UnitFormat is kept as the source spells it and flagged ``UnmappedUnit`` (x_SourceChanges):
extend the table rather than guessing in SQL. ``ref.units`` is made from this table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from models.aws import AWS_PROVIDER_NAME
from models.azure import AZURE_PROVIDER_NAME
from models.gcp import GCP_PROVIDER_NAME

ANY_PROVIDER = "*"
"""Spellings found in FOCUS files of any provider (OCI, GPU clouds): they apply to every FOCUS source."""


@dataclass(frozen=True)
class UnitMapping:
    provider: str
    """ProviderName whose exports spell the unit so, or :data:`ANY_PROVIDER`."""
    source_unit: str
    """The unit exactly as the source writes it."""
    focus_unit: str
    """Its FOCUS UnitFormat name (for one unit: the block size is apart)."""
    block_size: int = 1
    """Units one priced quantity stands for (Azure prices per block: ``10K`` is 10000 Units)."""


def _provider(provider: str, units: dict[str, str | tuple[str, int]]) -> tuple[UnitMapping, ...]:
    return tuple(
        UnitMapping(provider, source, *(target if isinstance(target, tuple) else (target,)))
        for source, target in units.items()
    )


# CUR pricing/unit (CUR 1, CUR 2.0) and the units AWS's own FOCUS exports write.
_AWS: dict[str, str | tuple[str, int]] = {
    "Hrs": "Hours",
    "hours": "Hours",
    "Hours": "Hours",
    "Hr": "Hours",
    "GB-Mo": "GB-Months",
    "GB-Month": "GB-Months",
    "GB": "GB",
    "GB-Hrs": "GB-Hours",
    "GB-Hours": "GB-Hours",
    "GiB-Hrs": "GiB-Hours",
    "TB-Mo": "TB-Months",
    "Requests": "Requests",
    "Requests-Tier1": "Requests",
    "Requests-Tier2": "Requests",
    "API Requests": "Requests",
    "Quantity": "Units",
    "Count": "Count",
    "vCPU-Hours": "vCPU-Hours",
    "vCPU-Hrs": "vCPU-Hours",
    "IOPS-Mo": "IOPS-Months",
    "IOPS-Months": "IOPS-Months",
    "GiBps-mo": "GiBps-Months",
    "GiB/Second-Months": "GiBps-Months",
    "MBps-Mo": "MBps-Months",
    "Obj-Month": "Object-Months",
    "Objects": "Objects",
    "Lambda-GB-Second": "GB-Seconds",
    "Lambda-GB-Seconds": "GB-Seconds",
    "LCU-Hrs": "LCU-Hours",
    "ACU-Hr": "ACU-Hours",
    "ACU-Hrs": "ACU-Hours",
    "DPU-Hour": "DPU-Hours",
    "Dollar": "Dollars",
    "Dollars": "Dollars",
    "Events": "Events",
    "Keys": "Keys",
    "Metrics": "Metrics",
    "Alarms": "Alarms",
    "IOs": "IOs",
}

# Azure UnitOfMeasure -> (FOCUS unit of one consumed unit, pricing block size). Azure's Quantity counts blocks
# and its prices are per block (docs/decisions/0006); ConsumedQuantity = Quantity x block.
_AZURE: dict[str, str | tuple[str, int]] = {
    "1": ("Units", 1),
    "10": ("Units", 10),
    "100": ("Units", 100),
    "1000": ("Units", 1000),
    "10000": ("Units", 10000),
    "1K": ("Units", 1000),
    "10K": ("Units", 10000),
    "100K": ("Units", 100000),
    "1M": ("Units", 1000000),
    "10M": ("Units", 10000000),
    "1 Unit": ("Units", 1),
    "1 Count": ("Count", 1),
    "1 Hour": ("Hours", 1),
    "1 Hours": ("Hours", 1),
    "10 Hours": ("Hours", 10),
    "100 Hours": ("Hours", 100),
    "1000 Hours": ("Hours", 1000),
    "1 Minute": ("Minutes", 1),
    "1 Second": ("Seconds", 1),
    "1 Day": ("Days", 1),
    "1 Month": ("Months", 1),
    "1/Hour": ("Units/Hour", 1),
    "1/Day": ("Units/Day", 1),
    "1/Month": ("Units/Month", 1),
    "1/Year": ("Units/Year", 1),
    "1 Year": ("Years", 1),
    "1 GB": ("GB", 1),
    "10 GB": ("GB", 10),
    "100 GB": ("GB", 100),
    "1 TB": ("TB", 1),
    "1 GiB": ("GiB", 1),
    "1 GB/Month": ("GB-Months", 1),
    "100 GB/Month": ("GB-Months", 100),
    "1 GiB/Month": ("GiB-Months", 1),
    "1 TB/Month": ("TB-Months", 1),
    "1 GB Hour": ("GB-Hours", 1),
    "1 GiB Hour": ("GiB-Hours", 1),
    "1 GB Second": ("GB-Seconds", 1),
    "1 GB/Hour": ("GB/Hour", 1),
    "1 API Calls": ("Requests", 1),
    "10K Transactions": ("Transactions", 10000),
    "1 User": ("Users", 1),
}

# GCP usage.unit / usage.pricing_unit / price.unit.
_GCP: dict[str, str | tuple[str, int]] = {
    "seconds": "Seconds",
    "second": "Seconds",
    "minute": "Minutes",
    "hour": "Hours",
    "day": "Days",
    "month": "Months",
    "bytes": "Bytes",
    "byte": "Bytes",
    "byte-seconds": "Byte-Seconds",
    "mebibyte": "MiB",
    "gibibyte": "GiB",
    "tebibyte": "TiB",
    "gibibyte second": "GiB-Seconds",
    "gibibyte hour": "GiB-Hours",
    "gibibyte month": "GiB-Months",
    "requests": "Requests",
    "request": "Requests",
    "count": "Count",
}

# Spellings of FOCUS files from providers with their own habits (OCI writes "GB Hours", "OCPU Per Hour" for
# OCPU-hours priced per hour; Microsoft's FocusCost "GB/Month" for GB-months).
_ANY: dict[str, str | tuple[str, int]] = {
    "GB Hours": "GB-Hours",
    "GB Months": "GB-Months",
    "GB/Month": "GB-Months",
    "OCPU Hours": "OCPU-Hours",
    "OCPU Per Hour": "OCPU-Hours",
    "Gigabyte Per Hour": "GB-Hours",
    "Gigabyte Hours": "GB-Hours",
    "GPU Hours": "GPU-Hours",
    "Hrs": "Hours",
    "GB-Mo": "GB-Months",
}

UNIT_MAPPINGS: tuple[UnitMapping, ...] = (
    *_provider(AWS_PROVIDER_NAME, _AWS),
    *_provider(AZURE_PROVIDER_NAME, _AZURE),
    *_provider(GCP_PROVIDER_NAME, _GCP),
    *_provider(ANY_PROVIDER, _ANY),
)

# FOCUS UnitFormat as the official validator (focus-validator 2.2.1, FormatUnit) tests it: a simple unit, a
# compound <unit>-<plural time>, a ratio <unit>/<singular time>, an optional leading quantity, or
# <unit>/<n> <plural time>. Count-based units are any capitalized words.
_DATA_SIZES = "b|Kb|Mb|Gb|Tb|Pb|Eb|B|KB|MB|GB|TB|PB|EB|Kib|Mib|Gib|Tib|Pib|Eib|KiB|MiB|GiB|TiB|PiB|EiB"
_TIME_SINGULAR = "Year|Month|Day|Hour|Minute|Second"
_TIME_PLURAL = "Years|Months|Days|Hours|Minutes|Seconds"
_COUNT = r"[A-Za-z][A-Za-z0-9]*(?:\s+[A-Za-z][A-Za-z0-9]*)*"
UNIT_FORMAT_PATTERN = "|".join(
    f"({pattern})"
    for pattern in (
        f"^({_DATA_SIZES}|{_TIME_SINGULAR}|{_TIME_PLURAL}|{_COUNT})$",
        f"^({_DATA_SIZES}|{_COUNT})-({_TIME_PLURAL})$",
        f"^({_DATA_SIZES}|{_COUNT}|{_TIME_PLURAL})/({_TIME_SINGULAR})$",
        f"^[0-9]+ ({_DATA_SIZES}|{_TIME_SINGULAR}|{_TIME_PLURAL}|{_COUNT})$",
        f"^({_DATA_SIZES}|{_COUNT}|{_TIME_PLURAL})/[0-9]+ ({_TIME_PLURAL})$",
    )
)
"""A regular expression a FOCUS unit matches (RE2 and Python agree on it)."""


def follows_unit_format(unit: str) -> bool:
    return re.search(UNIT_FORMAT_PATTERN, unit) is not None
