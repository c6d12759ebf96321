"""Every provider and source format gpuledger reads, registered once.

A format's registration says who bills through it, how its deliveries are laid out (which connector finds them)
and which remote connectors can land it. How its files become FOCUS rows (reader, model SQL, source totals) is
registered by the normalize stage under the same name (``gpuledger.normalize.formats``); a test holds the two
to the same names. Adding a format: one entry here, one there, its reader module and its SQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from models.aws import AWS_PROVIDER_NAME
from models.azure import AZURE_PROVIDER_NAME
from models.gcp import GCP_PROVIDER_NAME


@dataclass(frozen=True)
class Provider:
    """Who bills: the key of partitions, landing folders and ``--provider``, and the FOCUS ProviderName."""

    key: str
    name: str | None
    """ProviderName of its slices; None: several providers, named by each row (generic FOCUS files)."""
    lists_identical_rows: bool = False
    """It bills several identical charges as identical rows (Azure, docs/decisions/0006): its rows repeating each
    other are no sign of a line listed twice."""


AWS = Provider("aws", AWS_PROVIDER_NAME)
AZURE = Provider("azure", AZURE_PROVIDER_NAME, lists_identical_rows=True)
GCP = Provider("gcp", GCP_PROVIDER_NAME)
ANY_FOCUS = Provider("focus", None)
PROVIDERS: dict[str, Provider] = {p.key: p for p in (AWS, AZURE, GCP, ANY_FOCUS)}

Layout = Literal["cur1", "data-export", "azure-cost-export", "azure-focus-export", "bigquery", "month-folders"]
"""How a delivery is laid out in an export folder: a CUR 1 report (assembly manifests), an AWS Data Export
(execution manifests), an Azure Cost Management export (run manifests; FocusCost exports are read per run),
BigQuery extracts (export_time folders), or plain files in month folders."""

RemoteKind = Literal["s3", "azure_blob", "azure_cost_details", "bigquery"]


@dataclass(frozen=True)
class SourceFormat:
    name: str
    provider: Provider
    layouts: tuple[Layout, ...]
    """Layouts its deliveries may come in, tried in order; the last is taken when none before it matches."""
    remotes: tuple[RemoteKind, ...] = ()
    """Connectors that can land it (``[sources.<kind>]`` in gpuledger.toml)."""
    newline_json: bool = False
    """Its files may be newline-delimited JSON (BigQuery extracts) besides CSV and Parquet."""
    combines: tuple[str, ...] = ()
    """Formats whose deliveries it reads side by side, as one (Azure actual + amortized)."""
    cost_metric: Literal["ActualCost", "AmortizedCost"] | None = None
    """The Azure cost metric of its export (an export definition's ``type``; a Cost Details report's metric)."""


_AZURE_REMOTES: tuple[RemoteKind, ...] = ("azure_blob", "azure_cost_details")

FORMATS: dict[str, SourceFormat] = {
    f.name: f
    for f in (
        SourceFormat("aws-cur1", AWS, ("cur1",), ("s3",)),
        SourceFormat("aws-cur2", AWS, ("data-export",), ("s3",)),
        SourceFormat("aws-focus", AWS, ("data-export", "month-folders"), ("s3",)),
        SourceFormat("azure-focus", AZURE, ("azure-focus-export", "month-folders"), ("azure_blob",)),
        SourceFormat("focus", ANY_FOCUS, ("data-export", "month-folders")),
        SourceFormat(
            "azure-actual",
            AZURE,
            ("azure-cost-export",),
            ("azure_blob", "azure_cost_details"),
            cost_metric="ActualCost",
        ),
        SourceFormat(
            "azure-amortized",
            AZURE,
            ("azure-cost-export",),
            ("azure_blob", "azure_cost_details"),
            cost_metric="AmortizedCost",
        ),
        SourceFormat(
            "azure-cost-details",
            AZURE,
            ("azure-cost-export",),
            ("azure_blob", "azure_cost_details"),
            combines=("azure-actual", "azure-amortized"),
        ),
        SourceFormat("azure-legacy", AZURE, ("azure-cost-export",), ("azure_blob",), cost_metric="ActualCost"),
        SourceFormat("gcp-bq", GCP, ("bigquery",), ("bigquery",), newline_json=True),
        SourceFormat("gcp-focus", GCP, ("bigquery",), ("bigquery",), newline_json=True),
    )
}
