"""FOCUS 1.0, 1.1 and 1.2 files of any provider -> the ``focus_passthrough_src`` view that
``sql/normalize/focus_passthrough.sql`` reads (formats ``focus``, ``aws-focus``, ``azure-focus``).

The reader exposes every FOCUS 1.2 column with its spec type (NULL where the source's version lacks it), the
provider's ``x_`` columns gpuledger keeps, and hints the model needs (provider's own names, account-type defaults,
the source version). A :class:`FocusProfile` holds what one provider's export adds; the generic profile reads any
provider's file. Before anything is written, one pass over the files checks every cell the model casts or
enumerates: a bad value is an :class:`InputError` naming file, row and column; a literal ``NULL`` or a timestamp
without a zone is read (as empty, as UTC) and logged once per file and column.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import duckdb

from gpuledger.normalize.files import (
    cast_expr,
    decimal_from_cell,
    file_kind,
    first_bad_row,
    read_raw,
    row_of_content,
)
from gpuledger.warehouse.sqlfiles import create_temp_view, quote_ident, quote_literal
from models.aws import AWS_FIRST_PARTY, AWS_PROVIDER_NAME
from models.azure import AZURE_FIRST_PARTY, AZURE_PROVIDER_NAME
from models.errors import InputError
from models.focus import FOCUS_BY_NAME, FOCUS_COLUMNS, FocusType, Level

log = logging.getLogger(__name__)

SOURCE_VIEW = "focus_passthrough_src"
_INPUT_VIEW = "focus_passthrough_input"
_CLEAN_VIEW = "focus_passthrough_clean"

# FOCUS 1.1 and 1.2 only added columns to Cost and Usage (no renames since 1.0); their presence tells the version.
ADDED_IN = {
    "1.1": (
        "CapacityReservationId",
        "CapacityReservationStatus",
        "CommitmentDiscountQuantity",
        "CommitmentDiscountUnit",
        "ServiceSubcategory",
        "SkuMeter",
        "SkuPriceDetails",
    ),
    "1.2": (
        "BillingAccountType",
        "SubAccountType",
        "InvoiceId",
        "PricingCurrency",
        "PricingCurrencyContractedUnitPrice",
        "PricingCurrencyEffectiveCost",
        "PricingCurrencyListUnitPrice",
    ),
}
REQUIRED = tuple(c.name for c in FOCUS_COLUMNS if c.level is Level.MANDATORY)
# Not null in gpuledger's table but derived by the model where the source leaves them out.
_DERIVED = ("ChargeFrequency", "ServiceSubcategory")
# Not null, but FOCUS lets an empty cell be derived (ListUnitPrice x PricingQuantity; ContractedCost defaults to
# ListCost): the model repairs it and flags the row (x_SourceChanges); an underivable one still fails the insert.
_DERIVABLE = ("ContractedCost", "ListCost")
# JSON columns whose cell, when it is no JSON object, is read as empty and flagged (never money).
JSON_REPAIRS = {"Tags": "InvalidTags", "SkuPriceDetails": "InvalidSkuPriceDetails"}
_JSON_EXTRAS = ("x_CostCategories",)
SKU_PRICE_DETAIL_KEYS = (
    "CoreCount",
    "DiskMaxIops",
    "DiskSpace",
    "DiskType",
    "GpuCount",
    "InstanceType",
    "InstanceSeries",
    "MemorySize",
    "NetworkMaxIops",
    "NetworkMaxThroughput",
    "OperatingSystem",
    "Redundancy",
    "StorageClass",
)
# gpuledger's own x_ columns, read from same-named source columns where present.
_OWN_EXTRAS = ("x_ServiceCode", "x_UsageType", "x_Operation", "x_AmortizationClass", "x_InstanceType")
_HAS_ZONE = r"\d{2}:\d{2}(:\d{2}(\.\d*)?)?\s*([zZ]|[+-]\d{2}(:?\d{2})?)$"
# Azure FocusCost 1.0 writes 2024-01-01T00:00Z (no seconds), which DuckDB's timestamp cast refuses.
_MINUTES_ONLY = r"^(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2})([^:\d].*)?$"


_EVERY_FIRST_PARTY = MappingProxyType({AWS_PROVIDER_NAME: AWS_FIRST_PARTY, AZURE_PROVIDER_NAME: AZURE_FIRST_PARTY})


def _same_named(names: Sequence[str]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({name: (name,) for name in names})


@dataclass(frozen=True)
class FocusProfile:
    """What one provider's FOCUS export adds to the generic reader. SQL held here is ours, never input."""

    extras: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _same_named(_OWN_EXTRAS))
    """gpuledger custom column -> the source columns it is read from (text), first present wins."""
    json_extras: tuple[str, ...] = _JSON_EXTRAS
    """Custom columns read as flat JSON objects under the same name."""
    aliases: Mapping[str, str] = field(default_factory=dict)
    """FOCUS column -> the provider's older x_ column read when the FOCUS column is absent."""
    first_party: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: MappingProxyType(
            {AWS_PROVIDER_NAME: AWS_FIRST_PARTY, AZURE_PROVIDER_NAME: AZURE_FIRST_PARTY}
        )
    )
    """Provider name -> LIKE patterns of its own names: as ProviderName they become that name, and so do the
    PublisherName and InvoiceIssuerName of its rows (its own charges, not a third party's). The generic profile
    knows every provider's; a provider's profile only its own."""
    billing_account_type: str = "'Billing Account'"
    """BillingAccountType where the source has none; may use {BillingAccountId}."""
    sub_account_type: str = "'Sub Account'"
    """SubAccountType where the source has none (only rows with a SubAccountId)."""
    instance_type: Callable[[SourceColumns], str] | None = None
    """SQL for x_InstanceType from the provider's columns; the model falls back to SkuPriceDetails.InstanceType."""
    pricing_rate: str | None = None
    """Source column: pricing-currency -> billing-currency rate, to derive PricingCurrency* prices."""

    def create_source_view(
        self, con: duckdb.DuckDBPyConnection, raw: duckdb.DuckDBPyRelation, files: Sequence[Path]
    ) -> dict[str, str]:
        """The format's source view builder (``gpuledger.normalize.formats.FormatModel``)."""
        return create_source_view(con, raw, files, self)

    def source_header(self, raw_columns: Sequence[str], focus_column: str) -> str | None:
        """The file's column a FOCUS column is read from: itself, or the provider's older name for it."""
        for name in (focus_column, self.aliases.get(focus_column)):
            if name in raw_columns:
                return name
        return None


GENERIC = FocusProfile()


@dataclass
class SourceColumns:
    """Which file column feeds each output column, and SQL reading it from the cleaned view."""

    header_types: dict[str, str]
    profile: FocusProfile
    focus: dict[str, str] = field(default_factory=dict)
    """FOCUS column -> file column (itself, or the profile's alias)."""
    extras: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for column in FOCUS_COLUMNS:
            if column.name in self.header_types:
                self.focus[column.name] = column.name
            elif self.profile.aliases.get(column.name) in self.header_types:
                self.focus[column.name] = self.profile.aliases[column.name]
        for name, sources in self.profile.extras.items():
            header = next((s for s in sources if s in self.header_types), None)
            if header is not None:
                self.extras[name] = header
        for name in self.profile.json_extras:
            if name in self.header_types:
                self.extras[name] = name

    @property
    def version(self) -> str:
        for version in ("1.2", "1.1"):
            if any(name in self.header_types for name in ADDED_IN[version]):
                return version
        return "1.0"

    def aliased(self, name: str) -> bool:
        return name in self.focus and self.focus[name] != name

    def text(self, header: str | None) -> str:
        """A file column as trimmed text, NULL when blank or absent."""
        if header is None or header not in self.header_types:
            return "CAST(NULL AS VARCHAR)"
        return cast_expr(header, self.header_types[header], "VARCHAR")

    def typed(self, name: str) -> str:
        """A FOCUS column with its spec type, NULL when the source lacks it."""
        column = FOCUS_BY_NAME[name]
        header = self.focus.get(name)
        if header is None:
            return f"CAST(NULL AS {column.type.sql})"
        if column.type is FocusType.JSON:
            keys = SKU_PRICE_DETAIL_KEYS if name == "SkuPriceDetails" else None
            return flat_json_object(header, self.header_types[header], keys, tolerant=True)
        return cast_expr(header, self.header_types[header], column.type.sql)

    def other_headers(self) -> list[str]:
        """File columns read besides the FOCUS ones: the profile's x_ columns and exchange rate."""
        others = {*self.extras.values(), self.profile.pricing_rate} - set(self.focus.values())
        return sorted(h for h in others if h in self.header_types)

    def cast_headers(self) -> dict[str, str]:
        """File columns cast to DECIMAL or TIMESTAMPTZ, with the type."""
        return {
            header: FOCUS_BY_NAME[name].type.sql
            for name, header in self.focus.items()
            if FOCUS_BY_NAME[name].type in (FocusType.DECIMAL, FocusType.DATETIME)
        }


def create_source_view(
    con: duckdb.DuckDBPyConnection,
    raw: duckdb.DuckDBPyRelation,
    files: Sequence[Path],
    profile: FocusProfile = GENERIC,
) -> dict[str, str]:
    """Expose ``raw`` as ``focus_passthrough_src``; returns the cast columns the loader may diagnose."""
    create_temp_view(con, _INPUT_VIEW, raw)
    header_types = {name: str(sql_type) for name, sql_type in zip(raw.columns, raw.types, strict=True)}
    source = SourceColumns(header_types, profile)
    for name in REQUIRED:
        if name not in source.focus:
            raise InputError(files[0], "required FOCUS column is missing", column=name)
    _note_ignored_columns(source, files)
    scan = _scan(con, source, files)
    replaced = _create_clean_view(con, source, scan.findings)
    selects = [f"{_output(source, column.name)} AS {quote_ident(column.name)}" for column in FOCUS_COLUMNS]
    selects += _custom_selects(source)
    selects += _hint_selects(source)
    body = "SELECT\n  " + ",\n  ".join(selects) + f"\nFROM {_CLEAN_VIEW}"
    if scan.duplicate_rows:
        # Rows repeated exactly share a content id: number the copies (a window over every row, so only then).
        body = (
            # wraps the generated body; its columns come from the file's header and models/focus.py, quoted
            "SELECT * EXCLUDE (src_copy) REPLACE ("  # noqa: S608
            "src_line_item_id || CASE WHEN src_copy > 1 THEN '-' || src_copy ELSE '' END AS src_line_item_id)"
            f" FROM (SELECT *, row_number() OVER (PARTITION BY src_line_item_id) AS src_copy FROM ({body}))"
        )
    con.execute(f"CREATE OR REPLACE TEMP VIEW {SOURCE_VIEW} AS {body}")
    # The loader's diagnostics read the files as they are: cells cleaned here would be blamed there.
    return {h: t for h, t in source.cast_headers().items() if h not in replaced}


def flat_json_object(header: str, raw_type: str, keys: tuple[str, ...] | None = None, *, tolerant: bool = False) -> str:
    """A map (Parquet) or JSON text as a flat JSON object string, keys sorted; empty -> NULL.

    Null values are dropped, nested objects and arrays become their JSON text. With ``keys``, other keys not
    starting with ``x_`` get that prefix (SkuPriceDetails). ``tolerant``: text that is no JSON object is NULL.
    """
    ident = quote_ident(header)
    if raw_type.startswith("MAP"):
        entries, value = f"map_entries({ident})", "to_json(e.value)"
    else:
        text = f"nullif(trim(CAST({ident} AS VARCHAR)), '')"
        entries = f"map_entries(CAST(CAST({text} AS JSON) AS MAP(VARCHAR, JSON)))"
        value = (
            "CASE WHEN json_type(e.value) IN ('OBJECT', 'ARRAY') THEN to_json(CAST(e.value AS VARCHAR))"
            " ELSE CAST(e.value AS VARCHAR) END"
        )
    key = "e.key"
    if keys is not None:
        allowed = ", ".join(quote_literal(k) for k in keys)
        key = f"CASE WHEN starts_with(e.key, 'x_') OR e.key IN ({allowed}) THEN e.key ELSE 'x_' || e.key END"
    pairs = f"list_transform(list_filter({entries}, e -> e.value IS NOT NULL), e -> to_json({key}) || ':' || {value})"
    expr = f"nullif('{{' || array_to_string(list_sort({pairs}), ',') || '}}', '{{}}')"
    if tolerant and not raw_type.startswith("MAP"):
        text = f"nullif(trim(CAST({ident} AS VARCHAR)), '')"
        return f"CASE WHEN json_valid({text}) AND json_type(CAST({text} AS JSON)) = 'OBJECT' THEN {expr} END"
    return expr


def _output(source: SourceColumns, name: str) -> str:
    expr = source.typed(name)
    # Values read from an older x_ column obey the 1.2 rule that they are null without their parent id.
    parent = {"SkuMeter": "SkuId", "SkuPriceDetails": "SkuPriceId"}.get(name)
    if parent and source.aliased(name):
        return f"CASE WHEN {source.typed(parent)} IS NOT NULL THEN {expr} END"
    if allowed := FOCUS_BY_NAME[name].allowed_values:
        # an allowed value in another case ("Usage-based") takes FOCUS's spelling (flagged NonstandardValue)
        spellings = " ".join(f"WHEN {quote_literal(v.lower())} THEN {quote_literal(v)}" for v in allowed)
        return f"coalesce(CASE lower({expr}) {spellings} END, {expr})"
    return expr


def _custom_selects(source: SourceColumns) -> list[str]:
    selects = []
    for name in source.profile.extras:
        if name != "x_InstanceType":
            selects.append(f"{source.text(source.extras.get(name))} AS {quote_ident(name)}")
    for name in source.profile.json_extras:
        header = source.extras.get(name)
        expr = flat_json_object(header, source.header_types[header]) if header else "CAST(NULL AS VARCHAR)"
        selects.append(f"{expr} AS {quote_ident(name)}")
    instance = source.text(source.extras.get("x_InstanceType"))
    if source.profile.instance_type is not None:
        instance = f"coalesce({instance}, {source.profile.instance_type(source)})"
    selects.append(f"{instance} AS x_InstanceType")
    selects.append(f"{quote_literal(source.version)} AS x_SourceVersion")
    selects.append(f"{source.text(source.focus.get('PricingUnit'))} AS x_PricingUnitDescription")
    return selects


def _hint_selects(source: SourceColumns) -> list[str]:
    """Columns the model reads and drops: names, defaults, the row's identity."""
    profile = source.profile
    selects = []
    for hint, name in (
        ("src_first_party_provider", "ProviderName"),
        ("src_first_party_publisher", "PublisherName"),
        ("src_first_party_issuer", "InvoiceIssuerName"),
    ):
        typed = source.typed(name)
        cases = " ".join(
            f"WHEN {' OR '.join(f'{typed} LIKE {quote_literal(p)}' for p in patterns)} THEN {quote_literal(provider)}"
            for provider, patterns in profile.first_party.items()
        )
        selects.append(f"CASE {cases} END AS {hint}" if cases else f"CAST(NULL AS VARCHAR) AS {hint}")
    account_type = profile.billing_account_type.format(BillingAccountId=source.typed("BillingAccountId"))
    selects.append(f"CAST({account_type} AS VARCHAR) AS src_billing_account_type")
    selects.append(f"CAST({profile.sub_account_type} AS VARCHAR) AS src_sub_account_type")
    # Only derived prices depend on the rate: an unreadable one leaves them NULL (and the checks name the rows).
    rate = f"TRY_CAST({source.text(profile.pricing_rate)} AS DECIMAL(38,10))"
    selects.append(f"{rate} AS src_pricing_to_billing_rate")
    selects.append("filename AS src_file")
    selects.append("src_line_item_id")
    selects += _repair_selects(source)
    return selects


def _repair_selects(source: SourceColumns) -> list[str]:
    """``src_changes`` / ``src_values``: JSON cells read as empty because they are no JSON object, with their text."""
    broken = {}
    for name, change in JSON_REPAIRS.items():
        header = source.focus.get(name)
        if header is not None and not source.header_types[header].startswith("MAP"):
            text = source.text(header)
            test = f"({text} IS NOT NULL AND NOT coalesce(json_type(TRY_CAST({text} AS JSON)) = 'OBJECT', false))"
            broken[header] = (change, test, text)
    for name in (n for n, header in source.focus.items() if FOCUS_BY_NAME[n].allowed_values):
        header, typed = source.focus[name], source.typed(name)
        allowed = ", ".join(quote_literal(v) for v in FOCUS_BY_NAME[name].allowed_values)
        broken[header] = ("NonstandardValue", f"({typed} IS NOT NULL AND {typed} NOT IN ({allowed}))", typed)
    changes = ", ".join(f"CASE WHEN {test} THEN {quote_literal(change)} END" for change, test, _ in broken.values())
    values = ", ".join(
        f"{{'key': {quote_literal(header)}, 'value': CASE WHEN {test} THEN {text} END}}"
        for header, (_, test, text) in broken.items()
    )
    return [
        f"CAST([{changes}] AS VARCHAR[]) AS src_changes",
        f"source_values([{values}]) AS src_values" if broken else "CAST(NULL AS VARCHAR) AS src_values",
    ]


_NULL_SPELLINGS = "('NULL', 'null', 'Null')"


@dataclass(frozen=True)
class _Check:
    """A kind of cell the scan looks for; ``sql`` is TRUE on such a cell ({v} = the raw cell)."""

    header: str
    kind: str
    """``bad`` (refused), ``null_literal`` or ``naive`` (read and logged), ``minutes`` (read)."""
    sql: str
    problem: str
    allowed: tuple[str, ...] = ()
    per_value: bool = False
    """Judged on the column's distinct values (few: periods, enumerations, tags), not on every cell."""

    def predicate(self, cell: str, allowed: str) -> str:
        # str.replace, not format: the SQL holds regular expressions with braces.
        return self.sql.replace("{v}", cell).replace("{allowed}", allowed)


def _text_sql(v: str) -> str:
    """A raw cell as text, NULL when blank or spelled NULL."""
    return f"CASE WHEN trim({v}) = '' OR {v} IN {_NULL_SPELLINGS} THEN NULL ELSE trim({v}) END"


def _checks(source: SourceColumns) -> list[_Check]:
    checks: list[_Check] = []
    literal = "{v} IN " + _NULL_SPELLINGS
    for header in source.other_headers():
        if source.header_types[header] == "VARCHAR":
            checks.append(_Check(header, "null_literal", literal, "the literal NULL, read as empty"))
        if header in source.profile.json_extras and source.header_types[header] == "VARCHAR":
            checks.append(_Check(header, "bad", _not_a_json_object(), "is not a JSON object", per_value=True))
    for name, header in source.focus.items():
        column = FOCUS_BY_NAME[name]
        if source.header_types[header] != "VARCHAR":
            if not column.nullable and name not in (*_DERIVED, *_DERIVABLE):
                checks.append(_Check(header, "bad", "{v} IS NULL", "is empty, but the column must not be null"))
            continue
        text = _text_sql("{v}")
        checks.append(_Check(header, "null_literal", literal, "the literal NULL, read as empty"))
        if not column.nullable and name not in (*_DERIVED, *_DERIVABLE):
            blank = "nullif(trim({v}), '') IS NULL OR " + literal
            checks.append(_Check(header, "bad", blank, "is empty, but the column must not be null"))
        if column.type is FocusType.DECIMAL:
            value = decimal_from_cell("{v}", text, strict=False)
            bad = f"CASE WHEN {value} IS NOT NULL THEN false ELSE ({text}) IS NOT NULL END"
            checks.append(_Check(header, "bad", bad, "is not a decimal number exact to 10 decimal places"))
        elif column.type is FocusType.DATETIME:
            fixed = f"regexp_replace({text}, '{_MINUTES_ONLY}', '\\1:00\\2')"
            bad = f"({text}) IS NOT NULL AND TRY_CAST({fixed} AS TIMESTAMPTZ) IS NULL"
            naive = f"({text}) IS NOT NULL AND NOT regexp_matches({text}, '{_HAS_ZONE}')"
            checks += [
                _Check(header, "bad", bad, "is not a timestamp", per_value=True),
                _Check(header, "naive", naive, "timestamps without a time zone, read as UTC", per_value=True),
                _Check(header, "minutes", f"regexp_matches({text}, '{_MINUTES_ONLY}')", "no seconds", per_value=True),
            ]
        if column.allowed_values:
            bad = (
                f"({text}) IS NOT NULL AND NOT list_contains(list_transform({{allowed}}, a -> lower(a)), lower({text}))"
            )
            checks.append(_Check(header, "bad", bad, "is not an allowed value", column.allowed_values, True))
    return checks


def _not_a_json_object() -> str:
    text = _text_sql("{v}")
    parsed = f"TRY_CAST({text} AS JSON)"
    return f"({text}) IS NOT NULL AND ({parsed} IS NULL OR json_type({parsed}) <> 'OBJECT')"


@dataclass(frozen=True)
class _Finding:
    file: str
    check: _Check
    count: int
    """Cells, or distinct values for a per-value check."""
    example: str | None = None


@dataclass
class _ScanResult:
    findings: list[_Finding]
    duplicate_rows: bool
    """Some file repeats a row exactly: line-item ids need numbering."""


def _scan(con: duckdb.DuckDBPyConnection, source: SourceColumns, files: Sequence[Path]) -> _ScanResult:
    """One pass over the files: per file, cells each check flags and distinct values of the per-value columns.

    Raises on the first refused cell (file order, then column order), naming its row; logs what it tolerates.
    """
    checks = _checks(source)
    cell_checks = [c for c in checks if not c.per_value]
    value_headers = sorted({c.header for c in checks if c.per_value})
    params: dict[str, object] = {}
    for i, check in enumerate(cell_checks):
        if check.allowed:
            params[f"allowed_{i}"] = list(check.allowed)
    selects = [f"count(*) - count(DISTINCT hash({_row_cells(source)}))"]
    selects += [f"count_if({c.predicate(quote_ident(c.header), f'$allowed_{i}')})" for i, c in enumerate(cell_checks)]
    selects += [f"list(DISTINCT {quote_ident(h)})" for h in value_headers]
    # header names, quoted; the allowed values are bound
    sql = f"SELECT filename, {', '.join(selects)} FROM {_INPUT_VIEW} GROUP BY filename"  # noqa: S608
    by_file = {str(row[0]): row[1:] for row in con.execute(sql, params).fetchall()}
    values = {
        h: {file: set(row[1 + len(cell_checks) + i] or ()) - {None} for file, row in by_file.items()}
        for i, h in enumerate(value_headers)
    }
    offending = _offending_values(con, [c for c in checks if c.per_value], values)
    findings: list[_Finding] = []
    for file in (str(f) for f in files if str(f) in by_file):
        counts = by_file[file][1 : 1 + len(cell_checks)]
        findings += [_Finding(file, c, int(n)) for c, n in zip(cell_checks, counts, strict=True) if n]
        for check, bad in offending:
            if hits := sorted(str(v) for v in values[check.header][file] & bad):
                findings.append(_Finding(file, check, len(hits), hits[0]))
    for finding in findings:
        if finding.check.kind == "bad":
            raise _located(con, finding)
    _log_tolerated(findings)
    _warn_naive_parquet_timestamps(con, source, files)
    return _ScanResult(findings, any(row[0] for row in by_file.values()))


def _offending_values(
    con: duckdb.DuckDBPyConnection, checks: Sequence[_Check], values: Mapping[str, Mapping[str, set[object]]]
) -> list[tuple[_Check, set[object]]]:
    """Each per-value check with the distinct values (of any file) it flags: one small query per column."""
    result = []
    for header, by_file in values.items():
        mine = [c for c in checks if c.header == header]
        params: dict[str, object] = {"values": sorted({v for vs in by_file.values() for v in vs})}
        selects = []
        for i, check in enumerate(mine):
            if check.allowed:
                params[f"allowed_{i}"] = list(check.allowed)
            selects.append(f"list(v) FILTER (WHERE {check.predicate('v', f'$allowed_{i}')})")
        # our checks' predicates over v; the values are bound
        query = f"SELECT {', '.join(selects)} FROM (SELECT unnest($values) AS v)"  # noqa: S608
        row = con.execute(query, params).fetchone()
        assert row is not None
        result += [(check, set(flagged or ())) for check, flagged in zip(mine, row, strict=True)]
    return result


def _log_tolerated(findings: Sequence[_Finding]) -> None:
    """One warning per file and kind of tolerated cell, naming its columns."""
    for file in dict.fromkeys(f.file for f in findings):
        nulls = [f for f in findings if f.file == file and f.check.kind == "null_literal"]
        if nulls:
            cells = ", ".join(f"{f.check.header!r} {f.count}" for f in nulls)
            log.warning("%s: cells holding the literal NULL, read as empty: %s", file, cells)
        naive = [f for f in findings if f.file == file and f.check.kind == "naive"]
        if naive:
            columns = ", ".join(f"{f.check.header!r} (e.g. {f.example!r})" for f in naive)
            log.warning("%s: timestamps without a time zone, read as UTC: %s", file, columns)


def _located(con: duckdb.DuckDBPyConnection, finding: _Finding) -> InputError:
    """The first offending row of a refused finding, in the file's own numbering."""
    check = finding.check
    params = {"allowed": list(check.allowed)} if check.allowed else None
    found = first_bad_row(con, Path(finding.file), check.header, check.predicate("v", "$allowed"), params)
    if found is None:
        return InputError(finding.file, f"{finding.count} cell(s) {check.problem}", column=check.header)
    return InputError(finding.file, f"{found[1]!r} {check.problem}", row=found[0], column=check.header)


def _warn_naive_parquet_timestamps(
    con: duckdb.DuckDBPyConnection, source: SourceColumns, files: Sequence[Path]
) -> None:
    timestamps = [h for h, t in source.cast_headers().items() if t == "TIMESTAMPTZ"]
    for file in files:
        if file_kind(file) != "parquet":
            continue
        schema = con.read_parquet(str(file), hive_partitioning=False)
        naive = [
            repr(header)
            for header, sql_type in zip(schema.columns, schema.types, strict=True)
            if header in timestamps and str(sql_type).startswith("TIMESTAMP") and "TIME ZONE" not in str(sql_type)
        ]
        if naive:
            log.warning("%s: timestamps without a time zone, read as UTC: %s", file, ", ".join(naive))


def _create_clean_view(con: duckdb.DuckDBPyConnection, source: SourceColumns, findings: Sequence[_Finding]) -> set[str]:
    """The input with literal NULLs emptied, minute-only timestamps given seconds and a line-item id.

    Returns the changed columns.
    """
    nulls = {f.check.header for f in findings if f.check.kind == "null_literal"}
    minutes = {f.check.header for f in findings if f.check.kind == "minutes"}
    replaces = []
    for header in sorted(nulls | minutes):
        ident = quote_ident(header)
        expr = f"CASE WHEN {ident} IN {_NULL_SPELLINGS} THEN NULL ELSE {ident} END" if header in nulls else ident
        if header in minutes:
            expr = f"regexp_replace(trim({expr}), '{_MINUTES_ONLY}', '\\1:00\\2')"
        replaces.append(f"{expr} AS {ident}")
    replace = f" REPLACE ({', '.join(replaces)})" if replaces else ""
    con.execute(
        # a view body takes no parameters: header names quoted, the patterns this module's constants
        f"CREATE OR REPLACE TEMP VIEW {_CLEAN_VIEW} AS SELECT *{replace},"  # noqa: S608
        f" format('{{:016x}}', hash(parse_filename(filename), {_row_cells(source)})) AS src_line_item_id"
        f" FROM {_INPUT_VIEW}"
    )
    return nulls | minutes


def _row_cells(source: SourceColumns) -> str:
    """Every cell of a row as read: FOCUS has no line-item id, so a row is its file's name and its content.

    Hashed in 64 bits (md5 would cost a sixth of the load): ids need only be unique within a delivery, and the
    scan numbers exact repeats.
    """
    return ", ".join(map(quote_ident, _content_cells(source.header_types)))


def _content_cells(headers: Iterable[str]) -> list[str]:
    return sorted(h for h in headers if h != "filename")


# <content hash>, -<n> on the n-th exact repeat of a row in its file
_LINE_ITEM_ID = re.compile(r"([0-9a-f]{16})(?:-([0-9]+))?")


def line_item_row(con: duckdb.DuckDBPyConnection, file: Path, line_item_id: str) -> int | None:
    """The row of ``file`` (1-based) a line-item id of this reader names; None when it names none."""
    match = _LINE_ITEM_ID.fullmatch(line_item_id)
    if match is None:
        return None
    cells = _content_cells(read_raw(con, [file]).columns)
    return row_of_content(con, file, cells, match[1], int(match[2] or 1))


def _note_ignored_columns(source: SourceColumns, files: Sequence[Path]) -> None:
    """A misspelt FOCUS column would silently become NULL: name the columns left out."""
    used = set(source.focus.values()) | set(source.extras.values()) | {"filename"}
    ignored = sorted(h for h in source.header_types if h not in used and not h.startswith("x_"))
    if ignored:
        log.warning("%s: columns not in FOCUS 1.2 are ignored: %s", files[0], ", ".join(ignored))
    for name in _DERIVED:
        # A 1.0 export cannot have ServiceSubcategory (1.1): only a newer one lacking it is worth a warning.
        if name not in source.focus and not (name in ADDED_IN["1.1"] and source.version == "1.0"):
            log.warning("%s: column %r is missing; the model derives it", files[0], name)
