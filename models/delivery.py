"""What a delivery is: one export version of one billing period, as a set of data files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SOURCE_FORMATS = (
    "aws-cur1",
    "aws-cur2",
    "aws-focus",
    "azure-focus",
    "focus",
    "azure-actual",
    "azure-amortized",
    "azure-cost-details",
    "azure-legacy",
    "gcp-bq",
    "gcp-focus",
)


@dataclass(frozen=True)
class Delivery:
    """Files that together form one complete export of a billing period (or a user's loose files)."""

    source_format: str
    """One of :data:`SOURCE_FORMATS`."""
    files: tuple[Path, ...]
    """Data files, in manifest order; only these count."""
    billing_period: str | None = None
    """``YYYY-MM`` named by the manifest; None for loose files (periods come from the rows)."""
    billing_account_id: str | None = None
    """Payer/billing account named by the manifest; None when the manifest has none."""
    version: str | None = None
    """Provider's version of the delivery (CUR assemblyId, Data Exports executionId)."""
    manifest: Path | None = None
    """Manifest that listed the files."""
    source_name: str | None = None
    """Configured source (report or export name) the delivery was found in."""

    def delivery_id(self, content_sha256: str) -> str:
        """Stable id: the provider's version (when a manifest names one) plus the content hash of the files.

        The hash makes a rewritten delivery (same version, new bytes) a new delivery, so it is staged
        beside the published one instead of over it.
        """
        if self.version:
            return (
                f"{self.source_format}:{self.billing_account_id or '-'}:{self.billing_period}:{self.version}"
                f":{content_sha256[:12]}"
            )
        return f"{self.source_format}:sha256:{content_sha256[:20]}"
