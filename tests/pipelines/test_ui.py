"""`make ui` (python -m pipelines.ui): starts without warnings, in the home's Dagster folder, and stops in seconds."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.fixtures.paths import REPO

pytestmark = pytest.mark.slow

STARTED = "Serving dagster-webserver"


def _answers(port: int) -> bool:
    """The webserver serves a page: its log line comes just before uvicorn's loop starts, too early to stop cleanly."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])  # what `kill -- -PGID` and Ctrl-C send
def test_the_ui_starts_quietly_and_its_process_group_stops_within_seconds(tmp_path: Path, stop: signal.Signals):
    env = {k: v for k, v in os.environ.items() if k != "DAGSTER_HOME"} | {"GPULEDGER_HOME": str(tmp_path)}
    log = tmp_path / "ui.log"
    port = _free_port()
    with log.open("wb") as out:
        ui = subprocess.Popen(
            [sys.executable, "-m", "pipelines.ui", "--port", str(port)],
            cwd=REPO,  # beside the project's dagster.yaml, as `make ui` runs
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own group, like make's in a terminal
        )
        try:
            deadline = time.monotonic() + 120
            while not (STARTED in log.read_text() and _answers(port)) and time.monotonic() < deadline:
                assert ui.poll() is None, log.read_text()
                time.sleep(0.5)
            assert STARTED in log.read_text() and _answers(port)
            asked = time.monotonic()
            os.killpg(ui.pid, stop)
            assert ui.wait(timeout=30) == 0
            assert time.monotonic() - asked < 20
        finally:
            if ui.poll() is None:
                os.killpg(ui.pid, signal.SIGKILL)
    output = log.read_text()
    assert not re.search(r"\w+Warning: ", output), output  # no Python warning (SupersessionWarning, ...)
    assert "Found a dagster instance configuration value (dagster.yaml) in the current folder" not in output
    assert (tmp_path / "dagster" / "dagster.yaml").read_bytes() == (REPO / "dagster.yaml").read_bytes()
