#!/usr/bin/env python3
"""Rebuild the vendored, patched focus-validator 1.2 rule model.

Reads ``focus_validator/rules/model-1.2.0.1.json`` as shipped in the PyPI package
``focus-validator==2.2.1``, checks that it is byte-identical to the file this patch was written
against (sha256 below), applies the fixes for defects 1-3 and 7 of the bundled model (see README.md in
this directory and docs reference ``focus-1.2.md`` section 5.6), and writes
``model-1.2.0.1.json`` next to this script, formatted exactly like the original
(``json.dumps(indent=2)``, ASCII escapes, no trailing newline) so that a diff against the
upstream file shows only the patched rules.

Usage::

    python tools/focus_validator_model/patch_model.py            # write the vendored model
    python tools/focus_validator_model/patch_model.py --check    # verify it is up to date
    python tools/focus_validator_model/patch_model.py --source /path/to/model-1.2.0.1.json

Without ``--source`` the original is looked up in the running interpreter's ``focus_validator``
package, then in ``.venv-validator`` at the repository root. Standard library only; runs on
Python 3.11+.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
MODEL_NAME = "model-1.2.0.1.json"
VENDORED = HERE / MODEL_NAME

PACKAGE = "focus-validator==2.2.1"
# sha256 of focus_validator/rules/model-1.2.0.1.json in the focus-validator 2.2.1 wheel
# (matches the wheel's RECORD entry sha256=Y5swKs6e3QWSLj0V_O32JyPJLnzyXgp6ZoTdT9QHb-w).
ORIGINAL_SHA256 = "639b302ace9edd05922e3d15fcedf62723c92e7cf25e0a7a6684dd4fd4076fec"
# sha256 of the file this script writes; --check fails if the output ever differs.
PATCHED_SHA256 = "9814d79888b20a46b4eaaacef751e7893f2a27e3b27c5fe19ad5426d870ebef4"

Json = dict[str, Any]


def _not_null(column: str) -> Json:
    return {"CheckFunction": "CheckNotValue", "ColumnName": column, "Value": None}


def _is_null(column: str) -> Json:
    return {"CheckFunction": "CheckValue", "ColumnName": column, "Value": None}


def _id_set_and_usage(column: str) -> Json:
    """Condition '<column> IS NOT NULL AND ChargeCategory = Usage' in the model's own grammar."""
    return {
        "CheckFunction": "AND",
        "Items": [
            _not_null(column),
            {"CheckFunction": "CheckValue", "ColumnName": "ChargeCategory", "Value": "Usage"},
        ],
    }


# Each patch: rule id -> (JSON path inside the rule, expected original value, new value).
# The expected original value is asserted so that a different upstream file is never patched
# blindly.
PATCHES: list[tuple[str, tuple[str, ...], Any, Any]] = [
    # Defect 1: empty Condition, so the MUST-be-null / MUST-NOT-be-null pair always has one
    # failing member whatever InvoiceId holds. The condition ("associated with an invoice")
    # cannot be decided from the data: mark both Dynamic, which the engine skips.
    ("InvoiceId-C-004-C", ("Type",), "Static", "Dynamic"),
    ("InvoiceId-C-005-C", ("Type",), "Static", "Dynamic"),
    # Defect 2: conditions written as {"AND": ...} instead of {"CheckFunction": "AND", ...};
    # the engine drops a condition without CheckFunction, so the rule applies to every row.
    (
        "CapacityReservationStatus-C-003-C",
        ("ValidationCriteria", "Condition"),
        {"AND": _is_null("CapacityReservationId")},
        _is_null("CapacityReservationId"),
    ),
    (
        "CapacityReservationStatus-C-004-C",
        ("ValidationCriteria", "Condition"),
        {"AND": _id_set_and_usage("CapacityReservationId")["Items"]},
        _id_set_and_usage("CapacityReservationId"),
    ),
    # Defect 3: inverted condition (CommitmentDiscountId IS NULL); the spec sentence is
    # "MUST NOT be null when CommitmentDiscountId is not null and ChargeCategory is Usage".
    (
        "CommitmentDiscountStatus-C-004-C",
        ("ValidationCriteria", "Condition"),
        _is_null("CommitmentDiscountId"),
        _id_set_and_usage("CommitmentDiscountId"),
    ),
    # Defect 7: "MUST be 0 when ChargeCategory is Purchase and the purchase is intended to cover
    # future eligible charges" lost its second clause, so every Purchase must have EffectiveCost 0,
    # including marketplace subscriptions that cover no other charge (Microsoft's own exports keep
    # their cost). A commitment discount purchase is the one the data marks as covering future charges.
    (
        "EffectiveCost-C-005-C",
        ("ValidationCriteria", "Condition"),
        {"CheckFunction": "CheckValue", "ColumnName": "ChargeCategory", "Value": "Purchase"},
        {
            "CheckFunction": "AND",
            "Items": [
                {"CheckFunction": "CheckValue", "ColumnName": "ChargeCategory", "Value": "Purchase"},
                _not_null("CommitmentDiscountId"),
            ],
        },
    ),
]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def dump(model: Json) -> bytes:
    """Serialize exactly like the upstream file (verified: round-trips it byte for byte)."""
    return json.dumps(model, indent=2, ensure_ascii=True).encode("ascii")


def find_source() -> Path:
    candidates: list[Path] = []
    spec = importlib.util.find_spec("focus_validator")
    if spec is not None and spec.origin is not None:
        candidates.append(Path(spec.origin).parent / "rules" / MODEL_NAME)
    venv = REPO_ROOT / ".venv-validator"
    candidates.extend(sorted(venv.glob(f"lib/python3*/site-packages/focus_validator/rules/{MODEL_NAME}")))
    for path in candidates:
        if path.is_file():
            return path
    sys.exit(
        f"patch_model: cannot find focus_validator/rules/{MODEL_NAME}; install {PACKAGE} "
        "(make install-validator) or pass --source PATH"
    )


def _get(rule: Json, path: tuple[str, ...]) -> Any:
    node: Any = rule
    for key in path:
        node = node[key]
    return node


def _set(rule: Json, path: tuple[str, ...], value: Any) -> None:
    node: Any = rule
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value


def patch(original: bytes) -> bytes:
    digest = sha256(original)
    if digest != ORIGINAL_SHA256:
        sys.exit(
            f"patch_model: source sha256 {digest} is not the {PACKAGE} model "
            f"({ORIGINAL_SHA256}); review the patches before changing ORIGINAL_SHA256"
        )
    model: Json = json.loads(original)
    if dump(model) != original:
        sys.exit("patch_model: upstream file no longer round-trips through json.dumps(indent=2)")
    rules: Json = model["ModelRules"]
    for rule_id, path, expected, new in PATCHES:
        current = _get(rules[rule_id], path)
        if current != expected:
            sys.exit(f"patch_model: {rule_id} {'.'.join(path)} is {current!r}, expected {expected!r}")
        _set(rules[rule_id], path, copy.deepcopy(new))
    return dump(model)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, help=f"upstream {MODEL_NAME} (default: installed package)")
    parser.add_argument("--check", action="store_true", help="verify the vendored file, write nothing")
    args = parser.parse_args(argv)

    source: Path = args.source or find_source()
    patched = patch(source.read_bytes())
    print(f"source   {source}  sha256={ORIGINAL_SHA256}")
    print(f"patched  {VENDORED.relative_to(REPO_ROOT)}  sha256={sha256(patched)}")
    if sha256(patched) != PATCHED_SHA256:
        print(f"patch_model: output sha256 differs from PATCHED_SHA256 {PATCHED_SHA256}", file=sys.stderr)
        return 1
    if args.check:
        if not VENDORED.is_file() or VENDORED.read_bytes() != patched:
            print(f"patch_model: {VENDORED} is missing or stale; rerun without --check", file=sys.stderr)
            return 1
        print("patch_model: vendored model is up to date")
        return 0
    VENDORED.write_bytes(patched)
    return 0


if __name__ == "__main__":
    sys.exit(main())
