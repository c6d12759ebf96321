"""Lay out a demo home: generated sample exports plus the configuration that points at them."""

from __future__ import annotations

from pathlib import Path

from gpuledger.demo.aws_exports import write_demo_exports
from models.config import CONFIG_FILE

EXPORTS_FOLDER = "exports"


def write_demo_home(home: Path) -> Path:
    """(Re)generate the sample exports under ``<home>/exports`` and write ``<home>/gpuledger.toml``."""
    home.mkdir(parents=True, exist_ok=True)
    sources = write_demo_exports(home / EXPORTS_FOLDER)
    lines = ["# Written by `gpuledger demo`: the generated sample exports of the fictional Helios Labs.\n"]
    for source in sources:
        relative = source.path.resolve().relative_to(home.resolve()).as_posix()
        # Names and paths come from our own generator; json-style quoting is valid TOML for them.
        lines.append(f'\n[[sources]]\nname = "{source.name}"\nformat = "{source.format}"\npath = "{relative}"\n')
    config = home / CONFIG_FILE
    config.write_text("".join(lines), encoding="utf-8")
    return config
