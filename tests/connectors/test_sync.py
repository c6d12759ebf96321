"""gpuledger sync's dispatch: which sources it pulls, and one sync per source at a time."""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from connectors.sync import LOCK_FILE, remote_sources, sync_source
from models.config import SourceConfig, load_config
from models.errors import RemoteError


def _config(home: Path, text: str) -> tuple[SourceConfig, ...]:
    (home / "gpuledger.toml").write_text(text, encoding="utf-8")
    return load_config(home).sources


def test_sync_picks_remote_sources_or_names_the_missing_one(home):
    sources = _config(
        home,
        '[[sources]]\nname = "local"\nformat = "aws-cur2"\npath = "exports"\n'
        '[[sources]]\nname = "cur2"\nformat = "aws-cur2"\n[sources.s3]\nbucket = "b"\n',
    )
    assert [s.name for s in remote_sources(sources)] == ["cur2"]
    with pytest.raises(ValueError, match="remote sources: cur2"):
        remote_sources(sources, "local")


def test_a_second_sync_of_a_source_is_refused_while_one_runs(home):
    (source,) = _config(home, '[[sources]]\nname = "cur2"\nformat = "aws-cur2"\n[sources.s3]\nbucket = "b"\n')
    assert source.remote is not None
    source.remote.landing.mkdir(parents=True)
    with open(source.remote.landing / LOCK_FILE, "a+b") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # what a running sync holds
        with pytest.raises(RemoteError, match="another sync of it is running"):
            sync_source(source)
