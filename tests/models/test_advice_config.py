"""[advice] of gpuledger.toml: the rate card (seeded example, a CSV or inline), owned hardware and the method
settings; a bad price names its file, row and column and is never read through a float."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from models.advice import EXAMPLE_RATE_CARD, RATE_CARD_COLUMNS, AdviceConfig, RateCardEntry
from models.config import load_config
from models.errors import InputError
from models.gpu_catalog import GPU_MODELS


def _advice(home: Path, text: str) -> AdviceConfig:
    (home / "gpuledger.toml").write_text(text, encoding="utf-8")
    return load_config(home).advice


def test_without_advice_the_example_rate_card_is_used_and_says_so(home):
    config = _advice(home, "")
    assert config.rates == EXAMPLE_RATE_CARD and config.rates_are_example and config.owned_are_example
    assert all(r.gpu_model in GPU_MODELS and r.as_of == date(2026, 11, 1) for r in config.rates)
    assert all("example" in r.source for r in config.rates)


def test_a_rate_card_csv_replaces_the_example_with_exact_prices(home):
    (home / "rates.csv").write_text(
        ",".join(RATE_CARD_COLUMNS) + "\n"
        "Lambda,H100,on-demand,2.49,usd,2026-12-01,contract 42\n"
        "AWS,H100,spot,3.0000000001,USD,2026-12-01,spot history\n",
        encoding="utf-8",
    )
    config = _advice(home, '[advice]\nrate_card = "rates.csv"\nautostop_idle_minutes = 45\n')
    assert config.rates == (
        RateCardEntry("Lambda", "H100", "on-demand", Decimal("2.49"), "USD", date(2026, 12, 1), "contract 42"),
        RateCardEntry("AWS", "H100", "spot", Decimal("3.0000000001"), "USD", date(2026, 12, 1), "spot history"),
    )
    assert not config.rates_are_example and config.autostop_idle_minutes == 45


@pytest.mark.parametrize(
    ("row", "column"),
    [
        ("Lambda,H100,on-demand,2.4.9,USD,2026-12-01,x", "price_per_gpu_hour"),
        ("Lambda,H100,reserved,2.49,USD,2026-12-01,x", "pricing_category"),
        ("Lambda,H1000,on-demand,2.49,USD,2026-12-01,x", "gpu_model"),
        ("Lambda,H100,on-demand,-1,USD,2026-12-01,x", "price_per_gpu_hour"),
        ("Lambda,H100,on-demand,2.49,USD,yesterday,x", "as_of"),
        ("Lambda,H100,on-demand,2.49,USDX,2026-12-01,x", "currency"),
        ("Lambda,H100,on-demand,0,USD,2026-12-01,x", "price_per_gpu_hour"),  # a free GPU-hour "saves" everything
        ("AWS,L4,on-demand,0.80,USD,2026-12-01,same price again", None),  # not a conflict: accepted
        ("AWS,L4,on-demand,0.9,USD,2026-12-01,x", "price_per_gpu_hour"),  # which of 0.8 and 0.9?
    ],
)
def test_a_bad_rate_card_row_names_file_row_and_column(home, row, column):
    (home / "rates.csv").write_text(",".join(RATE_CARD_COLUMNS) + "\nAWS,L4,on-demand,0.8,USD,2026-12-01,x\n" + row)
    if column is None:
        assert len(_advice(home, '[advice]\nrate_card = "rates.csv"\n').rates) == 2
        return
    with pytest.raises(InputError) as error:
        _advice(home, '[advice]\nrate_card = "rates.csv"\n')
    assert (error.value.file, error.value.row, error.value.column) == (str(home / "rates.csv"), 3, column)


def _inline_rate(price: str, as_of: str = "2026-12-01") -> str:
    return (
        f'[[advice.rates]]\nprovider = "AWS"\ngpu_model = "H100"\npricing_category = "on-demand"\n'
        f'price_per_gpu_hour = "{price}"\nas_of = "{as_of}"\nsource = "contract"\n'
    )


def test_a_rate_card_of_zero_or_conflicting_prices_is_refused_in_one_line(home):
    with pytest.raises(InputError) as error:
        _advice(home, _inline_rate("0") + _inline_rate("0.00"))
    assert str(error.value) == (
        f"{home / 'gpuledger.toml'}, column 'advice.rates.price_per_gpu_hour': [[advice.rates]] #1:"
        " price_per_gpu_hour is 0; give the price paid, or leave the row out"
    )
    with pytest.raises(InputError) as error:
        _advice(home, _inline_rate("6.88") + _inline_rate("4.10"))
    assert str(error.value) == (
        f"{home / 'gpuledger.toml'}, column 'advice.rates.price_per_gpu_hour': [[advice.rates]] #2: AWS H100"
        " on-demand USD as of 2026-12-01 is priced 4.10 here and 6.88 at [[advice.rates]] #1; give one price"
    )
    # a price read again on another day is the card's history, not a conflict
    assert len(_advice(home, _inline_rate("6.88") + _inline_rate("4.10", as_of="2027-01-01")).rates) == 2


def test_inline_rates_and_owned_hardware(home):
    config = _advice(
        home,
        '[[advice.rates]]\nprovider = "CoreWeave"\ngpu_model = "H200"\npricing_category = "committed"\n'
        'price_per_gpu_hour = "4.10"\nas_of = "2026-12-01"\nsource = "reserved 1y"\n'
        '[[advice.owned]]\ngpu_model = "H100"\ncapex_per_gpu = "30000"\ndepreciation_years = 5\n'
        'watts_per_gpu = 1100\nprice_per_kwh = "0.09"\npue = 1.2\ncolocation_per_gpu_month = "120"\n',
    )
    assert config.rates[0].price_per_gpu_hour == Decimal("4.10") and config.rates[0].currency == "USD"
    (owned,) = config.owned
    assert (owned.capex_per_gpu, owned.depreciation_years, owned.price_per_kwh) == (
        Decimal(30000),
        5.0,
        Decimal("0.09"),
    )
    assert not config.owned_are_example


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("[advice]\nmemory_headroom = 1.5\n", "advice.memory_headroom"),
        ("[advice]\nkeep_checkpoints = 0\n", "advice.keep_checkpoints"),
        ("[advice]\nauto_stop = 30\n", "advice.auto_stop"),
        ('[advice]\nrate_card = "r.csv"\n[[advice.rates]]\nprovider = "AWS"\n', "advice.rates"),
    ],
)
def test_advice_mistakes_name_the_key(home, text, column):
    with pytest.raises(InputError) as error:
        _advice(home, text)
    assert error.value.column == column
