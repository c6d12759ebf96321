"""Providers and source formats are registered once: models.formats says who bills and how deliveries are laid out,
gpuledger.normalize.formats how files become FOCUS rows; nothing else lists them."""

from __future__ import annotations

import ast
from typing import get_args

from gpuledger.normalize.formats import FORMAT_MODELS
from models.formats import FORMATS, PROVIDERS, Layout
from pipelines import deliveries
from tests.fixtures.paths import REPO, tracked_files

REGISTRIES = {"models/formats.py", "gpuledger/normalize/formats.py"}


def test_both_halves_of_the_registration_name_the_same_formats() -> None:
    assert set(FORMAT_MODELS) == set(FORMATS)
    for name, fmt in FORMATS.items():
        assert PROVIDERS[fmt.provider.key] is fmt.provider
        assert FORMAT_MODELS[name].provider_name == fmt.provider.name, name
        assert all(FORMATS[part].provider is fmt.provider for part in fmt.combines)


def test_every_layout_has_a_discovery() -> None:
    assert set(deliveries._DISCOVER) == set(get_args(Layout))
    multiple = {layout for fmt in FORMATS.values() for layout in fmt.layouts[:-1]}
    assert multiple <= set(deliveries._LAID_OUT)


def test_no_other_module_lists_the_formats() -> None:
    product = [
        p for p in tracked_files("*.py") if p.split("/")[0] in {"models", "connectors", "gpuledger", "pipelines"}
    ]
    listings = []
    for path in sorted(set(product) - REGISTRIES):
        for node in ast.walk(ast.parse((REPO / path).read_text(encoding="utf-8"))):
            items = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", [])
            named = [i.value for i in items if isinstance(i, ast.Constant) and i.value in FORMATS]
            if isinstance(node, ast.Dict | ast.Tuple | ast.List | ast.Set) and len(named) >= 3:
                listings.append(f"{path}:{node.lineno} {named}")
    assert listings == []
