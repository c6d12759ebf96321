"""The advice stage: rebuild every ``advice.*`` estimate table from showback, all or nothing.

Reads the billed tables (``allocation.cost_split``, ``showback.*``, ``focus.costs``) and telemetry, writes only
the ``advice`` schema: no billed, showback or chargeback figure is ever changed by it (a test sums them before
and after). Runs after the split of every month, since runs span months.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from gpuledger.warehouse.database import transaction
from gpuledger.warehouse.sqlfiles import load_sql
from models.advice import AdviceConfig
from models.errors import ReconciliationError
from models.gpu_catalog import GPU_INSTANCE_TYPES, GPU_MODELS

ADVICE_MODELS = (
    "run_profiles",
    "right_sizing",
    "right_sizing_backtest",
    "checkpoint_intervals",
    "spot_what_if",
    "checkpoint_retention",
    "session_idle_by_hour",
    "autostop_replay",
    "owned_vs_rented",
    "owned_focus_rows",
    "opportunities",
)
"""Built in this order, each ``CREATE OR REPLACE TABLE advice.<model> AS sql/advice/<model>.sql``."""


ADVICE_CONFIG_TABLES = ("rate_card", "owned_hardware", "settings")
"""The configuration the estimates were made with, published beside them (the GPU levers are ref.gpu_models)."""


@dataclass(frozen=True)
class AdviceResult:
    rows: dict[str, int]
    """Rows per advice table, by model name."""
    example_rates: bool
    """The estimates were priced from the seeded EXAMPLE rate card."""


def advise(con: duckdb.DuckDBPyConnection, config: AdviceConfig) -> AdviceResult:
    """Rebuild the advice tables from today's showback and telemetry, in one transaction; refuse (and keep
    nothing) if a billed, showback or chargeback figure moved while it ran."""
    with transaction(con):
        before = con.execute(load_sql("advice/billed_totals.sql")).fetchall()
        write_advice_config(con, config)
        con.execute(load_sql("allocation/macros.sql"))  # the split's rules the estimates share (a charge's hours)
        con.execute(load_sql("advice/macros.sql"))
        for model in ADVICE_MODELS:
            # Model names are this module's constants; the bodies are the project's SQL files.
            con.execute(f"CREATE OR REPLACE TABLE advice.{model} AS " + load_sql(f"advice/{model}.sql"))
        after = con.execute(load_sql("advice/billed_totals.sql")).fetchall()
        if after != before:
            moved = sorted(set(after) ^ set(before))
            raise ReconciliationError(f"the advice stage moved billed figures, nothing kept: {moved[:4]}")
        rows = {model: _count(con, model) for model in ADVICE_MODELS}
    return AdviceResult(rows, config.rates_are_example)


def published_advice_tables() -> tuple[str, ...]:
    """The advice tables copied into the analyst file: the configuration, then every model."""
    return tuple(f"advice.{name}" for name in (*ADVICE_CONFIG_TABLES, *ADVICE_MODELS))


def write_advice_config(con: duckdb.DuckDBPyConnection, config: AdviceConfig) -> None:
    """The catalog's levers, the rate card, owned hardware and the settings as typed ``advice.*`` tables."""
    con.execute(load_sql("advice/tables.sql"))
    per_node: dict[str, int] = {}
    for instance in GPU_INSTANCE_TYPES.values():
        per_node[instance.gpu_model] = max(per_node.get(instance.gpu_model, 0), instance.gpu_count)
    con.executemany(
        "INSERT INTO advice.gpu_levers VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        [
            [
                m.name,
                m.vendor,
                m.architecture,
                m.memory_gib,
                m.memory_bandwidth_tbps,
                m.dense_tflops,
                m.fp8,
                m.fp4,
                m.interconnect,
                per_node.get(m.name, 1),
            ]
            for m in GPU_MODELS.values()
        ],
    )
    if config.rates:
        con.executemany(
            "INSERT INTO advice.rate_card VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            [
                [
                    r.provider,
                    r.gpu_model,
                    r.pricing_category,
                    r.price_per_gpu_hour,
                    r.currency,
                    r.as_of,
                    r.source,
                    config.rates_are_example,
                ]
                for r in config.rates
            ],
        )
    if config.owned:
        con.executemany(
            "INSERT INTO advice.owned_hardware VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            [
                [
                    o.gpu_model,
                    o.capex_per_gpu,
                    o.depreciation_years,
                    o.watts_per_gpu,
                    o.price_per_kwh,
                    o.pue,
                    o.colocation_per_gpu_month,
                    o.currency,
                    config.owned_are_example,
                ]
                for o in config.owned
            ],
        )
    con.execute(
        "INSERT INTO advice.settings VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        [
            config.memory_headroom,
            config.memory_bound_dram_activity,
            config.fp8_tensor_activity,
            config.checkpoint_write_minutes,
            config.restart_minutes,
            config.keep_checkpoints,
            config.autostop_idle_minutes,
            config.top,
        ],
    )


def _count(con: duckdb.DuckDBPyConnection, model: str) -> int:
    row = con.execute(f"SELECT count(*) FROM advice.{model}").fetchone()  # noqa: S608 -- a constant of this module
    return row[0] if row else 0
