"""What the advice stage estimates with: the rate card, owned hardware, and the assumptions of each method.

``[advice]`` of ``gpuledger.toml`` is parsed into :class:`AdviceConfig` here; ``gpuledger/advice`` writes it
into ``advice.*`` configuration tables that ``sql/advice/`` joins. Every figure the stage computes is an
ESTIMATE, stored apart from billed money (docs/decisions/0015).

The seeded rate card is a set of EXAMPLE list prices, dated and sourced by name, because list prices change:
replace it with your own (``rate_card = "rates.csv"`` or ``[[advice.rates]]``) before acting on an estimate.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from models.aws import AWS_PROVIDER_NAME as AWS
from models.azure import AZURE_PROVIDER_NAME as AZURE
from models.currencies import ISO_4217_CODES
from models.errors import InputError
from models.gcp import GCP_PROVIDER_NAME as GOOGLE_CLOUD
from models.gpu_catalog import COREWEAVE, GPU_MODELS, LAMBDA, ORACLE

PRICING_CATEGORIES = ("on-demand", "spot", "committed")
"""Rate card pricing categories: FOCUS PricingCategory Standard, Dynamic and Committed."""
RATE_CARD_COLUMNS = ("provider", "gpu_model", "pricing_category", "price_per_gpu_hour", "currency", "as_of", "source")
"""Columns of a rate card CSV, in this order (a header row names them)."""

_EXAMPLE_DATE = date(2026, 11, 1)
_EXAMPLE_SOURCE = "example list price (provider pricing page, per GPU = instance price / GPUs); verify before use"


def _example(provider: str, gpu_model: str, category: str, price: str) -> RateCardEntry:
    return RateCardEntry(provider, gpu_model, category, Decimal(price), "USD", _EXAMPLE_DATE, _EXAMPLE_SOURCE)


@dataclass(frozen=True)
class RateCardEntry:
    """One price of one GPU for one hour at one provider."""

    provider: str
    """FOCUS ProviderName (AWS, Microsoft, Google Cloud, CoreWeave, Lambda, Oracle, ...)."""
    gpu_model: str
    """GPU model as the catalog names it (models/gpu_catalog.py)."""
    pricing_category: str
    """One of PRICING_CATEGORIES."""
    price_per_gpu_hour: Decimal
    """Price of one GPU for one hour (the instance price divided by its GPUs)."""
    currency: str
    """ISO 4217 code; an estimate only compares with charges in the same currency."""
    as_of: date
    """When the price was read: list prices change."""
    source: str
    """Where the price comes from (a pricing page, a contract)."""


EXAMPLE_RATE_CARD: tuple[RateCardEntry, ...] = (
    _example(AWS, "H100", "on-demand", "6.88"),
    _example(AWS, "H100", "spot", "3.10"),
    _example(AWS, "H100", "committed", "4.40"),
    _example(AWS, "H200", "on-demand", "7.91"),
    _example(AWS, "H200", "spot", "3.60"),
    _example(AWS, "B200", "on-demand", "14.24"),
    _example(AWS, "A100-80GB", "on-demand", "3.43"),
    _example(AWS, "A100-80GB", "spot", "1.60"),
    _example(AWS, "A100-40GB", "on-demand", "2.75"),
    _example(AWS, "A100-40GB", "spot", "1.25"),
    _example(AWS, "L40S", "on-demand", "1.86"),
    _example(AWS, "L40S", "spot", "0.80"),
    _example(AWS, "A10G", "on-demand", "1.01"),
    _example(AWS, "L4", "on-demand", "0.80"),
    _example(AZURE, "H100", "on-demand", "12.29"),
    _example(AZURE, "A100-80GB", "on-demand", "4.10"),
    _example(GOOGLE_CLOUD, "H100", "on-demand", "11.06"),
    _example(GOOGLE_CLOUD, "H100", "spot", "3.72"),
    _example(GOOGLE_CLOUD, "A100-80GB", "on-demand", "5.07"),
    _example(GOOGLE_CLOUD, "A100-40GB", "on-demand", "3.67"),
    _example(GOOGLE_CLOUD, "L4", "on-demand", "0.71"),
    _example(COREWEAVE, "H100", "on-demand", "6.16"),
    _example(COREWEAVE, "H200", "on-demand", "6.31"),
    _example(COREWEAVE, "B200", "on-demand", "8.60"),
    _example(COREWEAVE, "L40S", "on-demand", "2.25"),
    _example(LAMBDA, "H100", "on-demand", "2.99"),
    _example(LAMBDA, "A100-80GB", "on-demand", "1.79"),
    _example(ORACLE, "H100", "on-demand", "10.00"),
    _example(ORACLE, "A100-80GB", "on-demand", "4.00"),
    _example(ORACLE, "MI300X", "on-demand", "6.00"),
)
"""Seeded EXAMPLE prices (USD, dated 2026-11-01): a starting point to replace, never a quote."""


@dataclass(frozen=True)
class OwnedHardware:
    """What one owned GPU of a model costs, for the owned-vs-rented comparison."""

    gpu_model: str
    capex_per_gpu: Decimal
    """Purchase price per GPU, its share of the server and network included."""
    depreciation_years: float
    """Years over which the capex is written off (straight line)."""
    watts_per_gpu: float
    """Nominal power per GPU, its share of the server included, used when telemetry has no energy reading."""
    price_per_kwh: Decimal
    pue: float
    """Power usage effectiveness of the data centre (1.0 = no cooling overhead)."""
    colocation_per_gpu_month: Decimal
    """Rack space, network and operations per GPU and month."""
    currency: str = "USD"


EXAMPLE_OWNED_HARDWARE: tuple[OwnedHardware, ...] = (
    OwnedHardware("H100", Decimal("45000"), 4, 1275, Decimal("0.12"), 1.3, Decimal("250")),
    OwnedHardware("A100-80GB", Decimal("20000"), 4, 800, Decimal("0.12"), 1.3, Decimal("180")),
    OwnedHardware("L40S", Decimal("12000"), 4, 550, Decimal("0.12"), 1.3, Decimal("120")),
)
"""Seeded EXAMPLE owned-hardware costs (USD; an 8-GPU server with its network share, its power, and rack space
with operations staff, per GPU)."""


@dataclass(frozen=True)
class AdviceConfig:
    """The ``[advice]`` section: prices and the assumptions each estimate states beside it."""

    rates: tuple[RateCardEntry, ...] = EXAMPLE_RATE_CARD
    """The rate card; the seeded example unless ``rate_card`` or ``[[advice.rates]]`` give one."""
    rates_are_example: bool = True
    """True while the seeded example card is used: every estimate priced from it says so."""
    owned: tuple[OwnedHardware, ...] = EXAMPLE_OWNED_HARDWARE
    """Owned-hardware cost per GPU model (``[[advice.owned]]``); the seeded example unless given."""
    owned_are_example: bool = True
    """True while the seeded example owned-hardware costs are used."""
    memory_headroom: float = 0.10
    """Share of a GPU's memory kept free when deciding whether a run fits (fragmentation, activations spikes)."""
    memory_bound_dram_activity: float = 0.5
    """A run whose mean DRAM activity is at least this and above its tensor activity is memory-bound."""
    fp8_tensor_activity: float = 0.5
    """A run on an FP8-capable GPU whose tensor activity never reached this in any hour never used FP8-class
    throughput (16-bit work at full speed keeps the tensor pipes about half busy at FP8 rates)."""
    checkpoint_write_minutes: float = 5.0
    """Time to write one checkpoint, for the Young/Daly interval (sqrt(2 x write time x MTBF))."""
    restart_minutes: float = 10.0
    """Time a restarted attempt spends before doing new work (scheduling, loading the checkpoint)."""
    keep_checkpoints: int = 3
    """Checkpoints of a finished run worth keeping; the retention saving prices deleting the rest."""
    autostop_idle_minutes: int = 30
    """Auto-stop an interactive session after this many idle minutes (the replayed policy)."""
    top: int = 5
    """Opportunities per team shown in the report."""


_KEYS = {
    "rate_card",
    "rates",
    "owned",
    "memory_headroom",
    "memory_bound_dram_activity",
    "fp8_tensor_activity",
    "checkpoint_write_minutes",
    "restart_minutes",
    "keep_checkpoints",
    "autostop_idle_minutes",
    "top",
}
_SHARES = ("memory_headroom", "memory_bound_dram_activity", "fp8_tensor_activity")
_MINUTES = ("checkpoint_write_minutes", "restart_minutes")
_COUNTS = ("keep_checkpoints", "autostop_idle_minutes", "top")
_OWNED_KEYS = {
    "gpu_model",
    "capex_per_gpu",
    "depreciation_years",
    "watts_per_gpu",
    "price_per_kwh",
    "pue",
    "colocation_per_gpu_month",
    "currency",
}


def parse_advice(path: Path, home: Path, table: object) -> AdviceConfig:
    """Validate ``[advice]`` of a parsed ``gpuledger.toml``; errors name the key."""
    if not isinstance(table, dict):
        raise InputError(path, "[advice] must be a table", column="advice")
    unknown = sorted(set(table) - _KEYS)
    if unknown:
        raise InputError(path, f"[advice]: unknown key(s) {unknown}", column=f"advice.{unknown[0]}")
    values: dict[str, Any] = {}
    for key in _SHARES:
        if key in table:
            values[key] = _number(path, table[key], f"advice.{key}", lambda v: 0 <= v < 1, "[0, 1)")
    for key in _MINUTES:
        if key in table:
            values[key] = _number(path, table[key], f"advice.{key}", lambda v: v >= 0, "[0, inf)")
    for key in _COUNTS:
        if key in table:
            value = table[key]
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(path, f"{key} must be a whole number >= 1", column=f"advice.{key}")
            values[key] = value
    if "rate_card" in table and "rates" in table:
        raise InputError(path, "[advice]: give rate_card (a CSV) or [[advice.rates]], not both", column="advice.rates")
    if "rate_card" in table:
        if not isinstance(table["rate_card"], str) or not table["rate_card"]:
            raise InputError(path, "rate_card must be a CSV file path", column="advice.rate_card")
        values["rates"] = read_rate_card(home / table["rate_card"])
        values["rates_are_example"] = False
    elif "rates" in table:
        entries = table["rates"]
        if not isinstance(entries, list):
            raise InputError(path, "[[advice.rates]] must be an array of tables", column="advice.rates")
        rates = [
            _rate(path, entry, f"[[advice.rates]] #{i}", "advice.rates") for i, entry in enumerate(entries, start=1)
        ]
        _one_price_per_key(
            path, rates, lambda i: (f"[[advice.rates]] #{i + 1}", None), "advice.rates.price_per_gpu_hour"
        )
        values["rates"] = tuple(rates)
        values["rates_are_example"] = False
    if "owned" in table:
        entries = table["owned"]
        if not isinstance(entries, list):
            raise InputError(path, "[[advice.owned]] must be an array of tables", column="advice.owned")
        values["owned"] = tuple(_owned(path, entry, i) for i, entry in enumerate(entries, start=1))
        values["owned_are_example"] = False
    return AdviceConfig(**values)


def read_rate_card(path: Path) -> tuple[RateCardEntry, ...]:
    """A rate card CSV (header ``RATE_CARD_COLUMNS``); an error names the file, row and column."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(path, f"unreadable rate card: {exc}") from exc
    if not rows:
        raise InputError(path, f"rate card has no rows (columns: {', '.join(RATE_CARD_COLUMNS)})")
    missing = [c for c in RATE_CARD_COLUMNS if c not in rows[0]]
    if missing:
        raise InputError(path, f"rate card lacks column(s) {', '.join(missing)}", row=1, column=missing[0])
    rates = [_rate(path, row, f"row {i}", None, row=i) for i, row in enumerate(rows, start=2)]
    _one_price_per_key(path, rates, lambda i: (f"row {i + 2}", i + 2), "price_per_gpu_hour")
    return tuple(rates)


def _one_price_per_key(
    path: Path, rates: list[RateCardEntry], name: Callable[[int], tuple[str, int | None]], column: str
) -> None:
    """Refuse a price contradicting an earlier one for the same provider, GPU, category, currency and date (``name``:
    an entry's index -> where it is, its row): the estimates would take either, so the card is never guessed at."""
    first: dict[tuple[object, ...], tuple[int, Decimal]] = {}
    for index, rate in enumerate(rates):
        key = (rate.provider, rate.gpu_model, rate.pricing_category, rate.currency, rate.as_of)
        seen_at, price = first.setdefault(key, (index, rate.price_per_gpu_hour))
        if price != rate.price_per_gpu_hour:
            where, row = name(index)
            what = f"{rate.provider} {rate.gpu_model} {rate.pricing_category} {rate.currency} as of {rate.as_of}"
            message = f"{where}: {what} is priced {rate.price_per_gpu_hour} here and {price} at {name(seen_at)[0]}"
            raise InputError(path, f"{message}; give one price", row=row, column=column)


def _rate(path: Path, entry: object, where: str, section: str | None, row: int | None = None) -> RateCardEntry:
    if not isinstance(entry, dict):
        raise InputError(path, f"{where} is not a table", column=section)

    def column(key: str) -> str:
        return f"{section}.{key}" if section else key

    def text(key: str) -> str:
        value = entry.get(key)
        if not isinstance(value, str) or not value.strip():
            raise InputError(path, f"{where}: {key} must be a non-empty string", row=row, column=column(key))
        return value.strip()

    category = text("pricing_category")
    if category not in PRICING_CATEGORIES:
        message = f"{where}: pricing_category must be one of {', '.join(PRICING_CATEGORIES)}"
        raise InputError(path, message, row=row, column=column("pricing_category"))
    model = text("gpu_model")
    if model not in GPU_MODELS:
        message = f"{where}: unknown gpu_model {model!r} (known: {', '.join(sorted(GPU_MODELS))})"
        raise InputError(path, message, row=row, column=column("gpu_model"))
    price = _decimal(path, entry, "price_per_gpu_hour", where, row, column("price_per_gpu_hour"))
    if price == 0:  # a free GPU-hour would make every move to it "save" the whole cost
        message = f"{where}: price_per_gpu_hour is 0; give the price paid, or leave the row out"
        raise InputError(path, message, row=row, column=column("price_per_gpu_hour"))
    try:
        as_of = date.fromisoformat(str(entry.get("as_of", "")).strip())
    except ValueError as exc:
        raise InputError(path, f"{where}: as_of must be a date YYYY-MM-DD", row=row, column=column("as_of")) from exc
    currency = text("currency").upper() if "currency" in entry else "USD"
    if currency not in ISO_4217_CODES:
        message = f"{where}: {currency!r} is not an ISO 4217 currency code"
        raise InputError(path, message, row=row, column=column("currency"))
    return RateCardEntry(text("provider"), model, category, price, currency, as_of, text("source"))


def _owned(path: Path, entry: object, index: int) -> OwnedHardware:
    where = f"[[advice.owned]] #{index}"
    if not isinstance(entry, dict) or not set(entry) <= _OWNED_KEYS:
        raise InputError(path, f"{where} takes the keys {', '.join(sorted(_OWNED_KEYS))}", column="advice.owned")
    model = entry.get("gpu_model")
    if model not in GPU_MODELS:
        raise InputError(path, f"{where}: unknown gpu_model {model!r}", column="advice.owned.gpu_model")

    def column(key: str) -> str:
        return f"advice.owned.{key}"

    currency = str(entry.get("currency", "USD")).upper()
    if currency not in ISO_4217_CODES:
        raise InputError(path, f"{where}: {currency!r} is not an ISO 4217 currency code", column=column("currency"))

    return OwnedHardware(
        gpu_model=str(model),
        capex_per_gpu=_decimal(path, entry, "capex_per_gpu", where, None, column("capex_per_gpu")),
        depreciation_years=_number(
            path, entry.get("depreciation_years"), column("depreciation_years"), _positive, "> 0"
        ),
        watts_per_gpu=_number(path, entry.get("watts_per_gpu"), column("watts_per_gpu"), _positive, "> 0"),
        price_per_kwh=_decimal(path, entry, "price_per_kwh", where, None, column("price_per_kwh")),
        pue=_number(path, entry.get("pue", 1.0), column("pue"), lambda v: v >= 1, ">= 1"),
        colocation_per_gpu_month=_decimal(
            path, entry, "colocation_per_gpu_month", where, None, column("colocation_per_gpu_month"), default="0"
        ),
        currency=currency,
    )


def _positive(value: float) -> bool:
    return value > 0


def _number(path: Path, value: object, column: str, valid: Any, bounds: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not valid(value):
        raise InputError(path, f"{column.rsplit('.', 1)[-1]} must be a number {bounds}", column=column)
    return float(value)


def _decimal(
    path: Path, entry: dict[str, Any], key: str, where: str, row: int | None, column: str, default: str | None = None
) -> Decimal:
    """Money is read from its text (TOML strings or numbers, CSV cells), never through a float."""
    value = entry.get(key, default)
    try:
        amount = Decimal(str(value).strip()) if isinstance(value, str | int | float) else None
    except InvalidOperation:
        amount = None
    if amount is None or not amount.is_finite() or amount < 0:
        raise InputError(path, f"{where}: {key} must be a non-negative amount", row=row, column=column)
    return amount
