"""What a delivery is: one export version of one billing period, as a set of data files."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Delivery:
    """Files that together form one complete export of a billing period (or a user's loose files)."""

    source_format: str
    """A name registered in ``models.formats.FORMATS``."""
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
    """Source the delivery comes from: the configured source, else the report or export name. A slice belongs to
    the source that first delivered it (docs/decisions/0011)."""
    version_time: dt.datetime | None = None
    """When the provider made this version, which orders deliveries of a slice (an older one never replaces a
    newer one): Azure runInfo.submittedTime, GCP's newest export_time, the manifest's modification time for AWS
    (whose manifests carry no time; the sync keeps S3's LastModified), the newest file for a folder of FOCUS files.
    None: unknown, never blocks."""
    origin: str | None = None
    """Where the manifest says the files were delivered (``s3://<bucket>``); a slice keeps one origin."""
    root: Path | None = None
    """The export folder the delivery was found in: no file may lie outside it (a symbolic link leading out is
    refused). None for files a user named one by one."""

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
        if self.billing_period:  # a month folder's: the same files in another month's folder are another delivery
            return f"{self.source_format}:{self.billing_period}:sha256:{content_sha256[:20]}"
        return f"{self.source_format}:sha256:{content_sha256[:20]}"
