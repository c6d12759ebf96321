"""The statement's HTML as a PDF (WeasyPrint), byte for byte the same for the same stored data: the creation and
modification dates are the issue time (the HTML's dcterms metadata), the file identifier is derived from the
HTML's hash, the embedded font subsets are stamped with the issue time, and nothing is fetched (a URL fetcher
that refuses everything). WeasyPrint needs pango, a system library: without it there is no PDF, and
:func:`pdf_unavailable` says in one line what to install."""

from __future__ import annotations

import functools
import hashlib
import io
import logging
import os
import re
from contextlib import redirect_stdout
from datetime import datetime
from typing import Any

from models.errors import GpuledgerError

_EPOCH = "SOURCE_DATE_EPOCH"
PDF_INSTALL = (
    "sudo apt-get install libpango-1.0-0 libpangoft2-1.0-0 fonts-dejavu-core (Debian/Ubuntu) or brew install pango"
    " (macOS); see https://doc.courtbouillon.org/weasyprint/stable/first_steps.html#installation"
)
"""How to add what WeasyPrint needs to render the PDF."""


@functools.cache  # once per process: a library missing stays missing, and a failed import is not cheap
def pdf_unavailable() -> str | None:
    """Why no PDF can be rendered here, as one line saying what to install; None when WeasyPrint loads."""
    try:
        with redirect_stdout(io.StringIO()):  # WeasyPrint prints a banner of its own before raising
            import weasyprint  # noqa: F401
    except OSError as exc:  # cffi's dlopen: "cannot load library 'libpango-1.0-0': ..."
        found = re.search(r"cannot load library '([^']+)'", str(exc))
        library = found.group(1) if found else str(exc).partition("\n")[0]
        return f"no PDF: WeasyPrint cannot load the system library {library}; to add the PDF: {PDF_INSTALL}"
    return None


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
