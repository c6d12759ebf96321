"""Which home a command uses: --home, else $GPULEDGER_HOME, else ./.home with a configuration, else the default."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from gpuledger.warehouse.home import DEFAULT_HOME, locate_home
from tests.fixtures.paths import REPO


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A current folder with a ./.home holding a configuration, and no $GPULEDGER_HOME."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("GPULEDGER_HOME", raising=False)
    (tmp_path / ".home").mkdir()
    (tmp_path / ".home" / "gpuledger.toml").write_text("", encoding="utf-8")
    return tmp_path


def test_home_flag_comes_first(here, monkeypatch):
    monkeypatch.setenv("GPULEDGER_HOME", str(here / "env"))
    choice = locate_home("elsewhere")
    assert (choice.path, choice.chosen_by) == (here / "elsewhere", "from --home")


def test_then_the_environment(here, monkeypatch):
    monkeypatch.setenv("GPULEDGER_HOME", "~/env-home")
    choice = locate_home(None)
    assert (choice.path, choice.chosen_by) == ((Path.home() / "env-home").resolve(), "from $GPULEDGER_HOME")


def test_then_the_current_folders_home_with_a_configuration(here):
    choice = locate_home(None)
    assert (choice.path, choice.chosen_by) == (here / ".home", "./.home of the current folder")


def test_a_home_folder_without_configuration_is_not_taken(here):
    (here / ".home" / "gpuledger.toml").unlink()
    choice = locate_home(None)
    assert choice.path == DEFAULT_HOME.resolve() and choice.chosen_by.startswith("the default")


def test_make_demo_writes_the_home_the_cli_finds_in_the_checkout(monkeypatch):
    monkeypatch.delenv("GPULEDGER_HOME", raising=False)
    planned = subprocess.run(["make", "-n", "demo"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    assert f'.venv/bin/gpuledger demo --home "{REPO}/.home"' in planned
