"""The statement's HTML as a PDF (WeasyPrint), byte for byte the same for the same stored data: the creation and
modification dates are the issue time (the HTML's dcterms metadata), the file identifier is derived from the
HTML's hash, the embedded font subsets are stamped with the issue time, and nothing is fetched (a URL fetcher
that refuses everything)."""

from __future__ import annotations

import hashlib
import logging
import os
from datetime import datetime
from typing import Any

from models.errors import GpuledgerError

_EPOCH = "SOURCE_DATE_EPOCH"


def render_pdf(html: str, data: dict[str, Any]) -> bytes:
    """The PDF of ``html`` (rendered from statement ``data``)."""
    from weasyprint import HTML  # heavy import (pango): only where PDFs are made

    identifier = hashlib.sha256(html.encode("utf-8")).hexdigest()[:32].encode("ascii")
    issued = int(datetime.fromisoformat(data["issued_at"]).timestamp())
    # The embedded font subsets carry a "modified" time: fontTools takes it from SOURCE_DATE_EPOCH when set.
    saved = os.environ.get(_EPOCH)
    os.environ[_EPOCH] = str(issued)
    logger = logging.getLogger("weasyprint")
    level = logger.level
    logger.setLevel(logging.ERROR)  # its notes on the installed font subsetter are not the user's concern
    try:
        document = HTML(string=html, url_fetcher=_refuse, base_url=None).render()
        pdf = document.write_pdf(pdf_identifier=identifier)
    finally:
        logger.setLevel(level)
        if saved is None:
            del os.environ[_EPOCH]
        else:
            os.environ[_EPOCH] = saved
    if pdf is None:  # only when a target is given
        raise GpuledgerError("WeasyPrint returned no PDF")
    return pdf


def _refuse(url: str, timeout: int = 10, ssl_context: object = None) -> dict[str, Any]:
    """The report is self-contained: any reference it makes is a bug, never a network request."""
    raise GpuledgerError(f"the report references {url!r}: reports must be self-contained")
