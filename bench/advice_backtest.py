"""Backtest of the right-sizing estimate: recipes that completed on two GPU models, estimated vs actual.

    python bench/advice_backtest.py /path/to/warehouse.duckdb [--pairs]

The warehouse is copied to a temporary file first (never opened for writing), the advice stage is run on the
copy with the default ``[advice]`` settings, and ``advice.right_sizing_backtest`` is printed: per recipe and
direction (source GPU model -> the model it actually also ran on), the mean estimated and actual GPU-hours and
cost to finish and the mean absolute error; ``--pairs`` prints every ordered pair of runs as well. The estimate
is priced at the actual run's own effective GPU rate, so the error is the method's (speed ratio, busy/idle
split), plus the spread between runs of one recipe. The last line is machine-readable:

    bench advice_backtest recipes=R pairs=P mae_cost_pct=X mae_gpu_hours_pct=Y
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from gpuledger.advice.advise import advise  # noqa: E402  (the repository on the path first)
from models.advice import AdviceConfig  # noqa: E402

SUMMARY_SQL = """
SELECT
    recipe,
    source_gpu_model || ' -> ' || actual_gpu_model AS direction,
    count(*) AS pairs,
    avg(estimated_gpu_hours) AS estimated_gpu_hours,
    avg(actual_gpu_hours) AS actual_gpu_hours,
    avg(abs(gpu_hours_error_share)) * 100 AS gpu_hours_mae_pct,
    avg(CAST(estimated_cost_to_finish AS DOUBLE)) AS estimated_cost,
    avg(CAST(actual_cost_to_finish AS DOUBLE)) AS actual_cost,
    avg(cost_error_share) * 100 AS cost_bias_pct,
    avg(abs(cost_error_share)) * 100 AS cost_mae_pct,
    any_value(currency) AS currency
FROM advice.right_sizing_backtest
GROUP BY ALL
ORDER BY recipe, direction
"""

PAIRS_SQL = """
SELECT
    recipe,
    source_run_group || ' (' || source_gpu_model || ') -> ' || actual_run_group || ' (' || actual_gpu_model || ')',
    estimated_gpu_hours,
    actual_gpu_hours,
    gpu_hours_error_share * 100,
    CAST(estimated_cost_to_finish AS DOUBLE),
    CAST(actual_cost_to_finish AS DOUBLE),
    cost_error_share * 100
FROM advice.right_sizing_backtest
ORDER BY ALL
"""

TOTAL_SQL = """
SELECT
    count(DISTINCT (team, recipe)),
    count(*),
    avg(abs(cost_error_share)) * 100,
    avg(abs(gpu_hours_error_share)) * 100
FROM advice.right_sizing_backtest
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("warehouse", type=Path, help="a gpuledger warehouse.duckdb (copied, never written)")
    parser.add_argument("--pairs", action="store_true", help="print every ordered pair of runs too")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "warehouse.duckdb"
        shutil.copyfile(args.warehouse, copy)
        con = duckdb.connect(str(copy))
        try:
            advise(con, AdviceConfig())
            summary = con.execute(SUMMARY_SQL).fetchall()
            pairs = con.execute(PAIRS_SQL).fetchall() if args.pairs else []
            total = con.execute(TOTAL_SQL).fetchone()
        finally:
            con.close()
    header = (
        f"{'recipe':<24}{'source -> actual':<22}{'pairs':>5}{'est GPU-h':>11}{'act GPU-h':>11}{'MAE h %':>9}"
        f"{'est cost':>11}{'act cost':>11}{'bias %':>8}{'MAE %':>8}"
    )
    print(header)
    print("-" * len(header))
    for recipe, direction, n, est_h, act_h, mae_h, est_c, act_c, bias, mae, currency in summary:
        print(
            f"{recipe:<24}{direction:<22}{n:>5}{est_h:>11.1f}{act_h:>11.1f}{mae_h:>9.1f}"
            f"{est_c:>11.2f}{act_c:>11.2f}{bias:>8.1f}{mae:>8.1f}  {currency}"
        )
    if pairs:
        print()
        columns = f"{'est h':>8}{'act h':>8}{'err %':>8}{'est':>10}{'act':>10}{'err %':>8}"
        print(f"{'recipe':<24}{'source run -> actual run':<64}{columns}")
        for recipe, pair, est_h, act_h, err_h, est_c, act_c, err in pairs:
            print(
                f"{recipe:<24}{pair:<64}{est_h:>8.1f}{act_h:>8.1f}{err_h:>8.1f}{est_c:>10.2f}{act_c:>10.2f}{err:>8.1f}"
            )
    recipes, n_pairs, mae_cost, mae_hours = total if total else (0, 0, None, None)
    print()
    if not n_pairs:
        print("no recipe completed on two GPU models: nothing to backtest")
    else:
        print(
            f"mean absolute error over {n_pairs} pairs of {recipes} recipes: cost to finish {mae_cost:.1f} %, "
            f"GPU-hours {mae_hours:.1f} %"
        )
    mae_cost_text = f"{mae_cost:.1f}" if mae_cost is not None else "nan"
    mae_hours_text = f"{mae_hours:.1f}" if mae_hours is not None else "nan"
    print(
        f"bench advice_backtest recipes={recipes} pairs={n_pairs} mae_cost_pct={mae_cost_text}"
        f" mae_gpu_hours_pct={mae_hours_text}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
