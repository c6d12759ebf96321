"""Inline SVG charts for the reports, drawn here (no library, no script, no external reference): horizontal
bars and the 7 x 24 hour-of-week heatmap. Every text is escaped; coordinates are rounded to 0.1 so the output
is the same on every machine."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from markupsafe import Markup, escape

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
BAR = "#3b6ea5"
NEGATIVE = "#c0504d"
_FONT = ' font-family="DejaVu Sans, Verdana, sans-serif" font-size="9" fill="#1d2430"'


def _n(value: float) -> str:
    return f"{value:.1f}"


CHARACTER_WIDTH = 6
"""Pixels a character of the 9 px label font takes at most, on average: labels longer than their area holds are
shortened with an ellipsis (the bar's tooltip has the whole label)."""


def bars(items: Sequence[tuple[str, Decimal, str]], *, title: str, width: int = 660, label_w: int = 260) -> Markup:
    """One horizontal bar per (label, value, value shown); negative values (credits) are drawn in red."""
    row, value_w = 18, 100
    fits = (label_w - 6) // CHARACTER_WIDTH
    height = row * len(items) + 24
    scale = max((abs(v) for _, v, _ in items), default=Decimal(0))
    area = width - label_w - value_w
    parts = [
        f'<svg class="chart" role="img" width="{width}" height="{height}" viewBox="0 0 {width} {height}"{_FONT}>',
        f"<title>{escape(title)}</title>",
        f'<text x="0" y="11" font-weight="bold" class="caption">{escape(title)}</text>',
    ]
    for i, (label, value, shown) in enumerate(items):
        y = 20 + i * row
        length = float(abs(value) / scale * area) if scale else 0.0
        color = NEGATIVE if value < 0 else BAR
        short = label if len(label) <= fits else label[: fits - 1] + "…"
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 12}" text-anchor="end" class="label">{escape(short)}</text>'
            f'<rect x="{label_w}" y="{y + 2}" width="{_n(length)}" height="{row - 5}" fill="{color}">'
            f"<title>{escape(label)}: {escape(shown)}</title></rect>"
            f'<text x="{_n(label_w + length + 4)}" y="{y + 12}" class="value">{escape(shown)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - every text above went through escape()


def heatmap(matrix: Sequence[Sequence[str]], *, title: str, unit: str = "idle GPU-h") -> Markup:
    """Weekday (rows, Monday first) x UTC hour (columns), darker where more idle GPU-hours were spent."""
    cell_w, cell_h, left, top = 22, 18, 40, 22
    width, height = left + 24 * cell_w + 10, top + 7 * cell_h + 30
    values = [[Decimal(v) for v in day] for day in matrix]
    peak = max((v for day in values for v in day), default=Decimal(0))
    parts = [
        f'<svg class="chart heatmap" role="img" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}"{_FONT}>',
        f"<title>{escape(title)}</title>",
    ]
    for hour in range(0, 24, 3):
        parts.append(f'<text x="{left + hour * cell_w + 2}" y="{top - 6}" class="axis">{hour:02d}h</text>')
    for day, row in enumerate(values):
        y = top + day * cell_h
        parts.append(f'<text x="{left - 6}" y="{y + 13}" text-anchor="end" class="axis">{WEEKDAYS[day]}</text>')
        for hour, value in enumerate(row):
            shade = float(value / peak) if peak > 0 else 0.0
            parts.append(
                f'<rect x="{left + hour * cell_w}" y="{y}" width="{cell_w - 1}" height="{cell_h - 1}"'
                f' fill="{_color(shade)}" data-cell="heat:{day + 1}:{hour}">'
                f"<title>{WEEKDAYS[day]} {hour:02d}:00 UTC: {value.quantize(Decimal('0.1'))} {escape(unit)}</title>"
                "</rect>"
            )
    legend_y = top + 7 * cell_h + 18
    parts.append(
        f'<text x="{left}" y="{legend_y}" class="axis">lightest 0, darkest {peak.quantize(Decimal("0.1"))}'
        f" {escape(unit)} per hour of the week (UTC), summed over the month</text>"
    )
    parts.append("</svg>")
    return Markup("".join(parts))  # noqa: S704 - every text above went through escape()


def _color(shade: float) -> str:
    """From near white (#f4f7fb) to dark blue (#0b3a6e)."""
    low, high = (0xF4, 0xF7, 0xFB), (0x0B, 0x3A, 0x6E)
    return "#" + "".join(f"{round(a + (b - a) * shade):02x}" for a, b in zip(low, high, strict=True))
