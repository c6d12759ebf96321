"""``make ui``: the Dagster UI on a gpuledger home, started so that it starts quietly and stops in seconds.

``dagster dev`` runs in the home's Dagster folder (the instance ``gpuledger run`` records into), so the project's
``dagster.yaml`` in the working folder is never mistaken for the instance's, and in its own process group: Ctrl-C
or SIGTERM to this process (or to its process group, as ``make`` passes them on) becomes one SIGINT to that group,
the signal ``dagster dev`` shuts its webserver, daemon and code server down on; a group still running
:data:`SHUTDOWN_SECONDS` later is killed. (SIGTERM sent to every Dagster process at once hangs for a minute.)
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from gpuledger.warehouse.home import resolve_home
from pipelines.runner import dagster_home

SHUTDOWN_SECONDS = 30
# `dagster dev` says `dg dev` supersedes it; the project does not use the dg CLI (one warning, its exact text).
QUIET_STARTUP = "ignore:Function `dev_command` is superseded:FutureWarning"


def main(argv: Sequence[str] | None = None) -> int:
    """Serve the UI until interrupted; the exit status of ``dagster dev``."""
    parser = argparse.ArgumentParser(prog="python -m pipelines.ui", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", default="3000")
    args = parser.parse_args(argv)
    home = resolve_home(None)
    instance = dagster_home(home)
    env = os.environ | {"GPULEDGER_HOME": str(home), "DAGSTER_HOME": str(instance), "PYTHONWARNINGS": QUIET_STARTUP}
    dagster = Path(sys.executable).parent / "dagster"
    command = [str(dagster), "dev", "-m", "pipelines.definitions", "-h", args.host, "-p", args.port]
    child = subprocess.Popen(command, cwd=instance, env=env, start_new_session=True)
    stop_requested: list[float] = []

    def stop(signum: int, frame: FrameType | None) -> None:
        if not stop_requested:
            stop_requested.append(time.monotonic())
            with contextlib.suppress(ProcessLookupError):  # it ended on its own meanwhile
                os.killpg(child.pid, signal.SIGINT)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    while True:
        try:
            return child.wait(timeout=1)
        except subprocess.TimeoutExpired:
            if stop_requested and time.monotonic() - stop_requested[0] > SHUTDOWN_SECONDS:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)


if __name__ == "__main__":
    sys.exit(main())
