"""How each source format's files become FOCUS rows: its reader, FOCUS model SQL, source-totals SQL and what
its errors name. The normalize stage's half of a format's registration (the other half, who bills and how
deliveries are laid out, is ``models.formats``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import duckdb

from connectors.gcp import exports as gcp_exports
from gpuledger.normalize import aws_cur, aws_focus, azure_cost_details, azure_focus, focus_passthrough, gcp_billing
from gpuledger.normalize.files import read_raw
from models.aws_cur import LINE_ITEM_TYPES
from models.azure import CHARGE_TYPES, PRICING_MODELS
from models.billing_month import BillingMonth
from models.errors import InputError
from models.formats import AWS, AZURE, GCP

SourceViewBuilder = Callable[[duckdb.DuckDBPyConnection, duckdb.DuckDBPyRelation, Sequence[Path]], dict[str, str]]
RowFinder = Callable[
    [duckdb.DuckDBPyConnection, Sequence[Path], str, str, dict[str, object]], tuple[Path, int, str] | None
]


@dataclass(frozen=True)
class FormatModel:
    """How one export format becomes FOCUS rows."""

    provider_name: str | None
    """ProviderName of the format's slices; None: several providers, named by the rows (generic FOCUS)."""
    create_source_view: SourceViewBuilder
    model_sql: str
    source_totals_sql: str
    enumerated_columns: dict[str, tuple[str, ...]]
    """Source columns with a closed set of values the model understands (checked in errors)."""
    source_header: Callable[[Sequence[str], str], str | None]
    """The file's own column (or record field) a FOCUS column is made from, so errors name what the user sees."""
    line_item_id_column: str | None = None
    """Canonical column holding the provider's line-item id, to find a failing row in its file."""
    line_item_row: Callable[[duckdb.DuckDBPyConnection, Path, str], int | None] | None = None
    """Finds the row of a line-item id in its file where the reader makes ids from rows' content (Azure, FOCUS)."""
    read_files: Callable[[duckdb.DuckDBPyConnection, Sequence[Path]], duckdb.DuckDBPyRelation] = read_raw
    """Reads the delivery's files into the relation ``create_source_view`` gets (GCP: JSON lines)."""
    billing_period_start: Callable[[str], dt.datetime] = lambda period: BillingMonth.parse(period).start
    """A manifest's ``YYYY-MM`` as the BillingPeriodStart of its slice (GCP: the US/Pacific month start)."""
    find_bad_value: Callable[[duckdb.DuckDBPyConnection, Path, Sequence[str]], InputError | None] | None = None
    """Format-specific search for a value its view rejects beyond plain casts (Azure: dates in several formats)."""
    find_row: RowFinder | None = None
    """Finds the first source row whose value of a column satisfies a predicate; default: scan the files."""
    extract_of: Callable[[Path], str] | None = None
    """The extract a file belongs to, where a delivery is the union of several (GCP) that may repeat each other."""
    read_whole: bool = False
    """Its files are read together (GCP's extracts repeat each other's records; Azure's combined actual and
    amortized files make one dataset): a delivery is staged as one part, whatever its size."""
    line_item_identity: tuple[str, ...] = ()
    """Canonical columns identifying a line item within a delivery (AWS: LineItemId + TimeInterval); a
    delivery listing one twice is refused. Empty: the format has no line-item id (rows are numbered by content)."""

    @property
    def twins_held(self) -> bool:
        """A row repeating another of its delivery is held (``sql/gates/holds/twin_rows.sql``): the format has no id
        to tell a second charge from a line listed twice."""
        return not self.line_item_identity


_AWS_CUR = FormatModel(
    provider_name=AWS.name,
    create_source_view=aws_cur.create_source_view,
    model_sql="normalize/aws_cur.sql",
    source_totals_sql="normalize/aws_cur_source_totals.sql",
    enumerated_columns={"line_item_line_item_type": LINE_ITEM_TYPES},
    line_item_id_column="identity_line_item_id",
    source_header=aws_cur.source_header,
    line_item_identity=("identity_line_item_id", "identity_time_interval"),
)


def _focus_passthrough(provider_name: str | None, profile: focus_passthrough.FocusProfile) -> FormatModel:
    # One model for every FOCUS export; the profile adds what one provider's export carries.
    return FormatModel(
        provider_name=provider_name,
        create_source_view=profile.create_source_view,
        model_sql="normalize/focus_passthrough.sql",
        source_totals_sql="normalize/focus_passthrough_source_totals.sql",
        enumerated_columns={},
        source_header=profile.source_header,
        line_item_row=focus_passthrough.line_item_row,
    )


_GCP_BQ = FormatModel(
    provider_name=GCP.name,
    create_source_view=gcp_billing.create_source_view,
    model_sql="normalize/gcp_billing_export.sql",
    source_totals_sql="normalize/gcp_billing_source_totals.sql",
    enumerated_columns={},
    read_files=gcp_billing.read_files,
    billing_period_start=gcp_billing.billing_period_start,
    source_header=gcp_billing.source_header,
    find_row=gcp_billing.find_record,
    extract_of=gcp_exports.extract_of,
    read_whole=True,
)

# Google's FOCUS view, mapped back to the export's fields and read by the same model (docs/decisions/0007).
_GCP_FOCUS = replace(
    _GCP_BQ,
    create_source_view=gcp_billing.create_focus_view_source_view,
    source_header=gcp_billing.focus_view_source_header,
)


def _azure_cost_details(create_source_view: SourceViewBuilder, *, read_whole: bool = False) -> FormatModel:
    # Azure spells headers EA-style or MCA-style (camelCase): both spellings are enumerated.
    enumerated = {"ChargeType": CHARGE_TYPES, "chargeType": CHARGE_TYPES}
    enumerated |= {"PricingModel": PRICING_MODELS, "pricingModel": PRICING_MODELS}
    return FormatModel(
        provider_name=AZURE.name,
        create_source_view=create_source_view,
        model_sql="normalize/azure_cost_details.sql",
        source_totals_sql="normalize/azure_cost_details_source_totals.sql",
        enumerated_columns=enumerated,
        find_bad_value=azure_cost_details.find_bad_value,
        source_header=azure_cost_details.source_header,
        line_item_row=azure_cost_details.line_item_row,
        read_whole=read_whole,
    )


# How each registered format (models.formats.FORMATS, same names) becomes FOCUS rows.
FORMAT_MODELS: dict[str, FormatModel] = {
    "aws-cur1": _AWS_CUR,
    "aws-cur2": _AWS_CUR,
    "aws-focus": _focus_passthrough(AWS.name, aws_focus.PROFILE),
    "azure-focus": _focus_passthrough(AZURE.name, azure_focus.PROFILE),
    "focus": _focus_passthrough(None, focus_passthrough.GENERIC),
    "gcp-bq": _GCP_BQ,
    "gcp-focus": _GCP_FOCUS,
    "azure-actual": _azure_cost_details(azure_cost_details.create_actual_view),
    "azure-amortized": _azure_cost_details(azure_cost_details.create_amortized_view),
    "azure-cost-details": _azure_cost_details(azure_cost_details.create_combined_view, read_whole=True),
    "azure-legacy": _azure_cost_details(azure_cost_details.create_legacy_view),
}
