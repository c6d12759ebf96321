"""Failpoints: named places where a run can be made to die, so tests prove a crash there loses nothing.

``GPULEDGER_FAILPOINT=<name>`` kills the process with SIGKILL (no cleanup, no ``finally``) when it reaches
that place, exactly as ``kill -9`` or a lost machine would; ``<name>@<subject>`` only where it is reached for that
subject (a load: the source's name), so one of several parallel workers dies. Unset, a failpoint costs one
environment lookup.
"""

from __future__ import annotations

import os
import signal

FAILPOINT_ENV = "GPULEDGER_FAILPOINT"

FAILPOINTS = (
    "load:part-staged",
    "load:before-commit",
    "allocate:before-commit",
    "months:before-commit",
    "publish:before-swap",
    "publish:after-swap",
)
"""Every failpoint in the code, in the order a nightly run reaches them."""


def failpoint(name: str, subject: str = "") -> None:
    """Die here, like ``kill -9``, when ``$GPULEDGER_FAILPOINT`` names this place (and ``subject``, if it names one)."""
    if name not in FAILPOINTS:
        raise ValueError(f"unknown failpoint {name!r}")
    if os.environ.get(FAILPOINT_ENV) in (name, f"{name}@{subject}"):
        os.kill(os.getpid(), signal.SIGKILL)
